/*
 * What the store's modules (open and transactions, flush, ingest, export)
 * share: the handle's layout, the prepared-statement cache and error helpers.
 */
#ifndef FDX_STORE_INTERNAL_H
#define FDX_STORE_INTERNAL_H

#include <sqlite3.h>
#include <sys/types.h>

#include "cell/agg.h"
#include "common/buf.h"
#include "common/sha256.h"
#include "fdx.h"

typedef enum fdx_stmt_id {
    FDX_STMT_BEGIN_WRITE,
    FDX_STMT_BEGIN_READ,
    FDX_STMT_COMMIT,
    FDX_STMT_ROLLBACK,
    FDX_STMT_SAVEPOINT,
    FDX_STMT_RELEASE,
    FDX_STMT_ROLLBACK_TO,
    FDX_STMT_MISS_UPSERT,
    FDX_STMT_DISPATCH_UPSERT,
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
    FDX_STMT_MERGE_DISPATCH_UPSERT,
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
    FDX_STMT_STORE_UNUSED,
    FDX_STMT_TOP_WINDOW,
    FDX_STMT_TOP_GROWTH,
    FDX_STMT_DIFF_ATTACH,
    FDX_STMT_DIFF_DETACH,
    FDX_STMT_DIFF_CELLS,
    FDX_STMT_PRUNE_MISSES,
    FDX_STMT_PRUNE_DISPATCHES,
    FDX_STMT_PRUNE_HISTORY,
    FDX_STMT_PRUNE_LOG_INSERT,
    FDX_STMT_HISTORY_CONFIG_READ,
    FDX_STMT_HISTORY_CONFIG_WRITE,
    FDX_STMT_HISTORY_ADD,
    FDX_STMT_HISTORY_ORIGIN_ID,
    FDX_STMT_MERGE_READ_MISS_HISTORY,
    FDX_STMT_MERGE_READ_DISPATCH_HISTORY,
    FDX_STMT_MERGE_READ_ORIGINS,
    FDX_STMT_MERGE_READ_LEDGER,
    FDX_STMT_MERGED_LEDGER_INSERT,
    FDX_STMT_HISTORY_ROLLUP,
    FDX_STMT_HISTORY_ROLLUP_CLEAR,
    FDX_STMT_REPORT_LEDGER,
    FDX_STMT_REPORT_HEATMAP,
    FDX_STMT_REPORT_DAILY,
    FDX_STMT_REPORT_REGRET,
    FDX_STMT_COUNT
} fdx_stmt_id;

/* Pending cells are written to SQLite (inside the open transaction) once
 * there are this many, which bounds memory whatever the input holds. */
#define FDX_SPILL_CELLS 65536

/* What the ledger row of the open transaction will say. */
typedef struct fdx_txn_ledger {
    int64_t id; /* 0 until the row exists */
    char *run_id;
    fdx_sha256 content; /* over the digests of the sources, in order */
    uint64_t sources;
    uint64_t bytes;
    uint64_t lines;
    uint64_t records;
    uint64_t skipped;
    uint64_t merged; /* stores folded in by fdx_store_merge */
    uint64_t pruned; /* fdx_store_prune calls */
} fdx_txn_ledger;

/* history_config as the open transaction sees it (history.c). */
typedef struct fdx_history_config {
    int loaded;
    int dirty;
    int64_t daily_days;
    int64_t rolled_before; /* first day kept daily; earlier rows are months */
    int64_t latest_day;    /* INT64_MIN: no history yet */
    int64_t next_cell_id;
} fdx_history_config;

struct fdx_store {
    sqlite3 *db;
    char *path;
    char errmsg[1024];
    char notice[1024]; /* see fdx_store_notice */
    int in_txn;
    int readonly;
    int created;     /* this handle created the file */
    int open_failed; /* fdx_store_open returned an error */
    int began;       /* a write transaction was begun */
    int committed;   /* a write transaction was committed */
    int on_disk;     /* dev and ino are those of the file opened (not :memory:) */
    dev_t dev;       /* to tell whether path still names the file opened */
    ino_t ino;
    int busy_ms;
    fdx_agg *pending;  /* recorded in this transaction, not yet written */
    fdx_agg *path_agg; /* recorded by the ingest under way (newer than pending) */
    fdx_agg *saved;    /* pending as written inside the ingest's savepoint */
    int in_path;       /* records go to path_agg */
    fdx_buf dtypes;    /* scratch for recording */
    fdx_buf cands;
    fdx_commit_stats txn_stats;
    fdx_txn_ledger ledger;
    int64_t txn_time_ms; /* when the transaction began, Unix ms */
    int64_t txn_at;      /* the capture time, Unix seconds (history.c) */
    fdx_history_config hist;
    sqlite3_stmt *stmts[FDX_STMT_COUNT];
};

/* Sets notice from a printf format (a call that succeeds with something to say). */
void fdx_store_note(fdx_store *s, const char *fmt, ...);
/* Sets errmsg from a printf format; returns code. */
int fdx_store_fail(fdx_store *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets errmsg to "what: <SQLite's message>"; returns the matching fdx code. */
int fdx_store_fail_sqlite(fdx_store *s, int rc, const char *what);

/* The schema (schema.c): its current version, the migrations from version
 * `from` run on db (an SQLite status, the reason in err), and the check that
 * the open store's schema is exactly the one fdx creates. */
int fdx_schema_version(void);
int fdx_schema_migrate(sqlite3 *db, int64_t from, char *err, size_t errsz);
int fdx_schema_check(fdx_store *s);

/* The cached statement, reset and with bindings cleared. */
int fdx_store_stmt(fdx_store *s, fdx_stmt_id id, sqlite3_stmt **out);
/* Runs a statement that returns no rows (BEGIN, COMMIT, ...). */
int fdx_store_exec(fdx_store *s, fdx_stmt_id id);

/* Records a miss (m) or a dispatch (d); trusted skips the UTF-8 checks for
 * strings the decoder has already validated. */
int fdx_store_record_checked(fdx_store *s, const fdx_miss *m, const fdx_dispatch *d, int trusted);

/* Adds an already-built cell to the open transaction (ingest, sinks). */
int fdx_store_add_cell(fdx_store *s, const fdx_cell *cell, uint64_t count, fdx_str cands);

/* Writes the pending cells into the open transaction (store_flush.c). */
int fdx_store_flush_pending(fdx_store *s);
/*
 * Writes the ingest's cells too (pending first: it is older). Pending is
 * then written inside the ingest's savepoint, so it is kept in `saved` until
 * the ingest ends: fdx_store_end_path puts it back if the ingest failed.
 */
int fdx_store_flush_path(fdx_store *s);
/* Ends an ingest: on success its cells join pending, in arrival order. */
int fdx_store_end_path(fdx_store *s, int ok);
/*
 * One upsert with statement id (a *_UPSERT statement), counted in the commit
 * statistics. set_at is when a dispatch cell's candidates were set (NULL:
 * unknown).
 */
int fdx_store_upsert(fdx_store *s, fdx_stmt_id id, const fdx_cell *c, uint64_t count, fdx_str cands,
                     const int64_t *set_at, int64_t *cell_id);
/* Binds a cell's key columns from ?1 in the order the .sql files number them;
 * returns the next parameter index. */
int fdx_bind_key(sqlite3_stmt *st, const fdx_cell *c);

/*
 * Reading cells from a store, each checked as strictly as a feed line (row.c).
 * The rows are those of the export and merge-read queries.
 */
struct fdx_decoder;
typedef struct fdx_row_reader {
    fdx_store *s;
    fdx_kind kind;
    struct fdx_decoder *dec;
    fdx_buf line, dtypes, cands; /* scratch */
    uint64_t rows;
#define FDX_ROW_MEMO 256
    fdx_buf memo[FDX_ROW_MEMO]; /* dtypes lists already checked */
} fdx_row_reader;
typedef struct fdx_row {
    fdx_cell cell;
    fdx_str cands;
    uint64_t count;
    int has_set_at; /* merge reads: candidates_set_at is not NULL */
    int64_t set_at;
    fdx_str line; /* the export line, '\n' included */
} fdx_row;
int fdx_row_reader_init(fdx_row_reader *r, fdx_store *s, fdx_kind kind);
void fdx_row_reader_free(fdx_row_reader *r);
/* The current row of st, valid until the next call; FDX_EDATA (with the
 * file, the table, the cell and what is wrong) for a row fdx would not write. */
int fdx_row_read(fdx_row_reader *r, sqlite3_stmt *st, fdx_row *row);
/* A row's key columns (as the export queries order them) into a cell, unchecked
 * (for lookups only); returns the index of the next column. */
int fdx_row_key(sqlite3_stmt *st, fdx_kind kind, fdx_cell *c);
/* Checks every cell of one kind (the merge-read query). */
int fdx_row_check_all(fdx_store *s, fdx_kind kind);

/* Runs body in one read snapshot (its own, unless a transaction is open),
 * keeping body's error message when it fails. */
int fdx_store_in_read(fdx_store *s, int (*body)(fdx_store *s, void *ctx), void *ctx);

/* History (history.c). */
/* Reads history_config into s->hist once per transaction. */
int fdx_history_load(fdx_store *s);
/* Adds count observations of a cell on day (a day number) from origin. */
int fdx_history_add(fdx_store *s, int64_t cell_id, int64_t day, int64_t origin, uint64_t count);
/* The history key of a day: the day itself, or its month once rolled up. */
int64_t fdx_history_bucket(const fdx_store *s, int64_t day);
/* The day a transaction's own observations go to. */
int64_t fdx_history_txn_day(const fdx_store *s);
/* Before COMMIT: rolls up what left the daily window, stores the counters. */
int fdx_history_finish(fdx_store *s);
/* Starts a transaction's capture time at now. */
void fdx_history_begin(fdx_store *s);

/* Carries src's history and ledger into dst's open transaction after its
 * cells (merge_history.c). */
int fdx_merge_history(fdx_store *dst, fdx_store *src);

/* Ledger (ledger.c). */
void fdx_ledger_reset(fdx_store *s);
/* Creates the transaction's ledger row if it does not exist yet. */
int fdx_ledger_open_row(fdx_store *s);
typedef struct fdx_source_info {
    const char *path;
    unsigned char digest[32];
    uint64_t bytes;
    uint64_t lines;
    uint64_t records;
    uint64_t skipped;
} fdx_source_info;
int fdx_ledger_add_source(fdx_store *s, const fdx_source_info *src);
/* Completes (or, when nothing changed, removes) the row before COMMIT. */
int fdx_ledger_finish(fdx_store *s);
/* The latest earlier ingest that read content with this digest. */
int fdx_ledger_find_source(fdx_store *s, const char *hex, char *path, size_t pathsz,
                           fdx_ledger_entry *entry, int *found);

/* Store identity (identity.c). */
#define FDX_STORE_ID_HEX 33 /* 32 lowercase hex digits and a NUL */
/* Whether id is a store identity as fdx makes them. */
int fdx_store_id_valid(const unsigned char *id);
/* The store's identity, checked. */
int fdx_identity_read(fdx_store *s, char id[FDX_STORE_ID_HEX]);
/* The digest over the store's whole ledger, and its last row id (0: empty). */
int fdx_identity_ledger_digest(fdx_store *s, int64_t *high, char hex[FDX_SHA256_HEX]);
/*
 * Inside a write transaction: ties an identity not yet tied to a file to this
 * one; with may_fork, gives a store whose file is a copy a new identity and
 * records the one it was copied from.
 */
int fdx_identity_check_file(fdx_store *s, int may_fork);

#endif
