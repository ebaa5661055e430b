/*
 * The store handle's layout, which every store module reads and writes:
 * the statement ids, the open transaction's state. Functions live in the
 * narrow header of the file that defines them (conn.h, ledger.h, ...).
 */
#ifndef FDX_STORE_INTERNAL_H
#define FDX_STORE_INTERNAL_H

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cell/agg.h"
#include "cell/spill.h"
#include "common/buf.h"
#include "common/message.h"
#include "common/sha256.h"
#include "fdx.h"

typedef enum fdx_stmt_id {
    FDX_STMT_BEGIN_WRITE,
    FDX_STMT_BEGIN_EXCLUSIVE,
    FDX_STMT_BEGIN_READ,
    FDX_STMT_COMMIT,
    FDX_STMT_ROLLBACK,
    FDX_STMT_SAVEPOINT,
    FDX_STMT_RELEASE,
    FDX_STMT_ROLLBACK_TO,
    FDX_STMT_MISS_UPSERT,
    FDX_STMT_DISPATCH_UPSERT,
    FDX_STMT_MISS_INSERT_ROWS,
    FDX_STMT_DISPATCH_INSERT_ROWS,
    FDX_STMT_MISS_CELL_ID,
    FDX_STMT_DISPATCH_CELL_ID,
    FDX_STMT_MISS_EXPORT,
    FDX_STMT_DISPATCH_EXPORT,
    FDX_STMT_CELL_COUNTS,
    FDX_STMT_LEDGER_INSERT,
    FDX_STMT_LEDGER_UPDATE,
    FDX_STMT_LEDGER_DELETE,
    FDX_STMT_LEDGER_SOURCE_INSERT,
    FDX_STMT_LEDGER_FIND_RUN,
    FDX_STMT_LEDGER_FIND_SOURCE,
    FDX_STMT_MERGE_READ_MISSES,
    FDX_STMT_MERGE_READ_DISPATCHES,
    FDX_STMT_STORE_ID,
    FDX_STMT_MERGED_LIST,
    FDX_STMT_MERGED_FIND,
    FDX_STMT_MERGED_INSERT,
    FDX_STMT_TOP_DEMAND,
    FDX_STMT_LEDGER_DIGEST,
    FDX_STMT_IDENTITY_MARK,
    FDX_STMT_HAS_CELLS,
    FDX_STMT_FILTER_VALUES,
    FDX_STMT_STORE_UNUSED,
    FDX_STMT_TOP_WINDOW,
    FDX_STMT_TOP_GROWTH,
    FDX_STMT_DIFF_ATTACH,
    FDX_STMT_DIFF_DETACH,
    FDX_STMT_DIFF_CELLS,
    FDX_STMT_DIFF_OTHER_MISSES,
    FDX_STMT_DIFF_OTHER_DISPATCHES,
    FDX_STMT_PRUNE_MISSES,
    FDX_STMT_PRUNE_DISPATCHES,
    FDX_STMT_PRUNE_HISTORY,
    FDX_STMT_PRUNE_LOG_INSERT,
    FDX_STMT_HISTORY_CONFIG_READ,
    FDX_STMT_HISTORY_CONFIG_WRITE,
    FDX_STMT_HISTORY_ADD,
    FDX_STMT_HISTORY_ADD_ROWS,
    FDX_STMT_HISTORY_ORIGIN_ID,
    FDX_STMT_MERGE_READ_ORIGINS,
    FDX_STMT_MERGE_READ_LEDGER,
    FDX_STMT_HISTORY_ROLLUP,
    FDX_STMT_HISTORY_ROLLUP_CLEAR,
    FDX_STMT_REPORT_LEDGER,
    FDX_STMT_REPORT_HEATMAP,
    FDX_STMT_REPORT_DAILY,
    FDX_STMT_REPORT_REGRET,
    FDX_STMT_HISTORY_CHECKED,
    FDX_STMT_IDENTITY_RELABEL,
    FDX_STMT_IDENTITY_RELABEL_PRUNED,
    FDX_STMT_PRUNE_TOMB_MISS,
    FDX_STMT_PRUNE_TOMB_DISPATCH,
    FDX_STMT_PRUNE_TOMB_HISTORY,
    FDX_STMT_MERGE_READ_HISTORY,
    FDX_STMT_MERGE_READ_PRUNED,
    FDX_STMT_MERGE_READ_CONFIG,
    FDX_STMT_MERGE_STAGE_MISS,
    FDX_STMT_MERGE_STAGE_DISPATCH,
    FDX_STMT_MERGE_STAGE_HISTORY,
    FDX_STMT_MERGE_STAGE_PRUNED,
    FDX_STMT_MERGE_STAGE_LEDGER,
    FDX_STMT_MERGE_STAGE_STORE,
    FDX_STMT_MERGE_APPLY_ORIGINS,
    FDX_STMT_MERGE_APPLY_TARGETS,
    FDX_STMT_MERGE_APPLY_SRC,
    FDX_STMT_MERGE_APPLY_TGT,
    FDX_STMT_MERGE_GAINS_SRC,
    FDX_STMT_MERGE_GAINS_TGT,
    FDX_STMT_MERGE_GAINS_DELTA,
    FDX_STMT_MERGE_GAINS_CELL,
    FDX_STMT_MERGE_GAINS_KNOWN,
    FDX_STMT_MERGE_APPLY_MISSES,
    FDX_STMT_MERGE_APPLY_DISPATCHES,
    FDX_STMT_MERGE_APPLY_LISTS,
    FDX_STMT_MERGE_ORIGIN_HIGH,
    FDX_STMT_MERGE_TGT_NEEDED,
    FDX_STMT_MERGE_STRAY_ORIGINS,
    FDX_STMT_MERGE_APPLY_HISTORY,
    FDX_STMT_MERGE_APPLY_LEDGER,
    FDX_STMT_MERGE_APPLY_STORES,
    FDX_STMT_COUNT
} fdx_stmt_id;

/* Pending cells are spilled, sorted, to a temporary file once they hold
 * about this many bytes (store_flush.c), which bounds memory whatever the
 * input holds; the transaction writes every cell once, when it ends. Below
 * it, cells recorded again by later runs of the same ingest are merged in
 * memory. 16 MiB, not 20: with compact keys and no undo log an
 * all-or-nothing ingest fits about 72,000 cells of the benchmark's
 * flush-shaped feed in it (about 60,000 fitted in 20 MiB before), and feeds
 * past it peak 5 to 8 MiB lower at the same speed; 14 MiB slowed a
 * 5,000,000-cell ingest by 9%. */
#define FDX_SPILL_BYTES ((size_t)16 << 20)
/* txn_broken when an all-or-nothing ingest had a path fail (no status is this). */
#define FDX_TXN_BROKEN_PATH (-1)
/* How an ingest under way began (fdx_store_begin_path). */
#define FDX_PATH_UNDOABLE       1
#define FDX_PATH_ALL_OR_NOTHING 2

/* What the ledger row of the open transaction will say. */
typedef struct fdx_txn_ledger {
    int64_t id; /* 0 until the row exists */
    char *run_id;
    fdx_sha256 content; /* over the digests of the sources, in order */
    uint64_t sources;
    uint64_t bytes;
    uint64_t lines;
    uint64_t records;
    uint64_t recorded; /* of them, given through the record calls or a sink's drain */
    uint64_t skipped;
    uint64_t merged; /* stores folded in by fdx_store_merge */
    uint64_t pruned; /* fdx_store_prune calls */
} fdx_txn_ledger;

/* history_config as the open transaction sees it (history.c). */
typedef struct fdx_history_config {
    int loaded;
    int dirty;
    int daily_set;        /* this transaction set daily_days (fdx_store_set_daily_days) */
    int daily_changed;    /* to another value than the store's */
    int64_t daily_stored; /* the store's, when this transaction first set it */
    int64_t daily_days;
    int64_t rolled_before; /* first day kept daily; earlier rows are months */
    int64_t latest_day;    /* INT64_MIN: no history yet */
    int64_t next_cell_id;
    int strays_known; /* this transaction looked for history above the origins given */
    int64_t strays;   /* and found some (merge_stray_origins.sql) */
} fdx_history_config;

struct fdx_backend_ops;

struct fdx_store {
    sqlite3 *db;
    unsigned forks; /* fdx_forks_seen() when it was opened */
    char *path;     /* as shown in messages (a URI without its password) */
    /* Where the store lives when s->db is only its working copy (backend.h);
     * NULL for an SQLite store. */
    const struct fdx_backend_ops *backend;
    void *backend_data;
    char errmsg[FDX_MESSAGE_SIZE];
    char notice[1024]; /* see fdx_store_notice */
    int notice_kind;   /* FDX_NOTICE_* */
    int in_txn;
    int txn_broken; /* a write failed partway (the status saying why, or 1), or an
                       all-or-nothing ingest failed (FDX_TXN_BROKEN_PATH): only a
                       rollback may follow */
    int readonly;
    int created;       /* this handle created the file */
    int filled;        /* this handle made the store in a file that was there, 0 bytes */
    int found_store;   /* its last open found the file holding objects already */
    int open_flags;    /* as it was opened with, for opening it anew (fdx_store_begin) */
    int open_failed;   /* fdx_store_open returned an error */
    int began;         /* a write transaction was begun */
    int committed;     /* a write transaction was committed */
    int pushed;        /* the backend committed the open transaction's change */
    int copy_behind;   /* the working copy could not follow a change the backend took */
    int wal_pending;   /* a new or older store, not yet WAL: tried after each commit (use_wal) */
    int views_pending; /* older views, made current in the next write's transaction */
    int on_disk;       /* dev and ino are those of the file opened (not :memory:) */
    dev_t dev;         /* to tell whether path still names the file opened */
    ino_t ino;
    int immutable;         /* read with immutable=1, without locks (store.c) */
    int immutable_fd;      /* then: the file SQLite reads, held to watch it */
    struct stat opened_as; /* and the file as it was opened (fdx_store_read_verdict) */
    int busy_ms;
    fdx_agg *pending;   /* recorded in this transaction, not yet written */
    fdx_agg *saved;     /* pending before the ingest under way first spilled */
    fdx_spill *spill;   /* pending of this transaction spilled, oldest first */
    size_t path_runs;   /* runs spilled before the ingest under way */
    int path_open;      /* 0, or how the ingest under way began (FDX_PATH_*); an
                           undoable one marked pending where it began */
    size_t spill_bytes; /* FDX_SPILL_BYTES (tests lower it) */
    size_t spill_lent;  /* of those, lent to an ingest's line memos (at most half) */
    uint64_t spills;    /* spills forced by spill_bytes */
    int ungrouped;      /* tests: each new cell in a statement of its own */
    fdx_buf dtypes;     /* scratch for recording */
    fdx_buf cands;
    fdx_commit_stats txn_stats;
    fdx_txn_ledger ledger;
    int64_t txn_time_ms; /* its capture time in Unix ms: when it began, or as set */
    int64_t txn_at;      /* the capture time, Unix seconds (history.c) */
    fdx_history_config hist;
    fdx_prune_stats pruned; /* see fdx_store_pruned */
    sqlite3_stmt *stmts[FDX_STMT_COUNT];
    fdx_progress_fn progress;
    void *progress_ctx;
    int in_callback; /* a caller's callback is running: calls are refused */
};

/* Reports progress (fdx_store_set_progress) at the first unit and every
 * 1024th. */
static inline void fdx_store_progress(fdx_store *s, const char *what, uint64_t done)
{
    if (s->progress && (done == 1 || (done & 1023) == 0)) {
        s->in_callback++;
        s->progress(s->progress_ctx, what, done);
        s->in_callback--;
    }
}

#endif
