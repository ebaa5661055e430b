/*
 * fdx: a persistent store for kernel-dispatch telemetry.
 *
 * A store is one SQLite database file holding aggregated miss cells and
 * dispatch cells (the records and feeds are described in docs/FORMAT.md).
 * The API follows SQLite's conventions: opaque handles, int status codes,
 * out-parameters, and one errmsg accessor per handle. No function aborts or
 * exits the process.
 *
 * Options structs carry a version as their first field, so that fields can
 * be added without breaking callers: start from the struct's *_INIT macro
 * (or its *_init function), then set the fields wanted. A version this build
 * does not know is refused with FDX_EMISUSE.
 *
 * A store handle is not thread-safe: use one handle per thread (several
 * handles, threads or processes may open the same file at once). Nor does it
 * cross fork(): in a child every call on its parent's handle fails with
 * FDX_EMISUSE, and fdx_store_close there frees only the child's own memory
 * (a rejects handle likewise: the parent's temporary file stays the parent's,
 * and its stream's writes fail in the child, exit() flushing it included).
 * A child forked while its parent's handle held a transaction cannot write
 * that store: a writer's open of it there fails with FDX_EMISUSE (SQLite's
 * record of the parent's write lock came with the fork), and so does
 * fdx_store_begin on a handle opened before (a fork made by another thread
 * while the parent's fdx_store_begin, commit or rollback is running may not
 * be told).
 * A handle whose open failed only answers fdx_store_errmsg and closes: every
 * other call on it fails with FDX_EMISUSE. So does every call on a handle
 * made from inside a callback of a call still running on it (progress,
 * diagnostics, demand, growth, diff and filter-value callbacks): such a call
 * would reset the rows being read, or commit part of an all-or-nothing
 * ingest.
 */
#ifndef FDX_H
#define FDX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FDX_VERSION "0.1.0"
/* The wire schema (the "schema" field of every record) this build reads. */
#define FDX_WIRE_SCHEMA 2

/* Status codes. */
enum {
    FDX_OK = 0,
    FDX_ERROR = 1,      /* internal or SQLite error without a better code */
    FDX_EDATA = 2,      /* bad input record or line */
    FDX_EIO = 3,        /* reading or writing a file failed */
    FDX_ENOMEM = 4,     /* out of memory */
    FDX_EBUSY = 5,      /* the store stayed locked past the busy timeout, or changed
                           under a read that could take no lock (a read-only directory):
                           open it again */
    FDX_ESCHEMA = 6,    /* store written by a newer fdx */
    FDX_ENOTSTORE = 7,  /* file is not an fdx store, or is corrupt */
    FDX_EMISUSE = 8,    /* call not valid in the handle's current state */
    FDX_ENOENT = 9,     /* a path that must exist does not */
    FDX_EREADONLY = 10, /* the store cannot be written */
    FDX_ECONFLICT = 11  /* kept for compatibility; no call returns it now */
};

/* Short English name of a status code ("bad data", "I/O error", ...). */
const char *fdx_strerror(int status);

/*
 * Removes the working copies that the PostgreSQL store handles open in this
 * process keep under $TMPDIR (otherwise removed at their close), and the
 * temporary files an export, a report or a rejects file is being written
 * to beside its output, for a program's handler of a signal that ends it
 * (SIGTERM, SIGINT, SIGHUP): async-signal-safe, it only unlinks. No handle
 * may be used after it. A process forked from the one that opened them
 * removes none. (Sixteen are noted at a time; one past those is removed by
 * the next writer of its output.)
 */
void fdx_remove_temporary_files(void);

/*
 * Makes decoding faster by giving cJSON per-thread arenas instead of a
 * malloc and a free per JSON value. cJSON's allocation hooks are global to
 * the process, so only a program should call this, once, before any thread
 * uses fdx or cJSON; cJSON calls elsewhere in the process keep working (they
 * fall through to malloc and free) as long as nothing else sets the hooks.
 */
void fdx_use_fast_json_allocator(void);

/* ---- Records (docs/FORMAT.md, "Records") ------------------------------
 * Strings are NUL-terminated UTF-8 and are only borrowed for the duration of
 * a call. Optional values carry a has_* flag. */

typedef struct fdx_impl {
    const char *backend;
    const char *op;
    const char *const *dtypes;
    size_t n_dtypes;
    const char *kernel_source;
    uint64_t kernel_revision_hash;
} fdx_impl;

typedef struct fdx_hw {
    int has_compute_capability; /* 0 for a CPU / non-CUDA device */
    uint32_t cc_major;
    uint32_t cc_minor;
    const char *hardware_sku;
    const char *driver_version;
} fdx_hw;

typedef struct fdx_candidate {
    fdx_impl impl_id;
    int has_latency; /* 0: unmeasured (distinct from a latency of 0) */
    uint64_t latency_ns;
} fdx_candidate;

typedef struct fdx_miss {
    const char *wanted;
    fdx_impl fallback;
    uint64_t count; /* 0 counts as one observation */
    fdx_hw hw;
} fdx_miss;

typedef struct fdx_dispatch {
    const char *structure_key; /* NULL: unkeyed */
    fdx_impl chosen;
    const fdx_candidate *candidates;
    size_t n_candidates;
    uint64_t count; /* 0 counts as one observation */
    fdx_hw hw;
} fdx_dispatch;

/* ---- Store ------------------------------------------------------------ */

typedef struct fdx_store fdx_store;

/* fdx_store_open flags. */
#define FDX_OPEN_CREATE   0x1 /* create the file when it does not exist */
#define FDX_OPEN_READONLY 0x2 /* never write (read-only media or directory); no migration */
/* For readers: the same as FDX_OPEN_READONLY (a reader never creates,
 * migrates or converts the store it reads). */
#define FDX_OPEN_FOR_READING 0x4
/* Writes (in transactions rolled back: a dry run) to the store only as it
 * is: an empty file or an older schema is refused as a reader refuses it,
 * and a store in rollback-journal mode stays in it. No effect on a
 * PostgreSQL store. */
/* Readers (and FDX_OPEN_AS_IS) read a store of an older schema version whose
 * tables are the current ones, as it is: from version 6 on, versions differ
 * in their views alone (version 7 made dispatch_regret take each cell by its
 * id), and no reader uses the store's views. An older store still needs a
 * writer's open to be migrated before it is read. */
#define FDX_OPEN_AS_IS 0x8

/*
 * Opens (and with FDX_OPEN_CREATE, creates) the store at path, migrating an
 * older schema unless read-only (one whose views alone are older, schema 6
 * on, in the first committed transaction instead: a rolled-back one leaves
 * it as it was). A path that is a postgresql:// or
 * postgres:// URI opens a store kept in PostgreSQL (docs/FLEET.md): a
 * read-only handle works on one snapshot of it, and a writer's commit is
 * applied to it in one PostgreSQL transaction (fdx_store_merge's sources and
 * fdx_store_prune too). A writer's handle holds only what its own
 * transactions write, so reading cells through it (exports, rankings,
 * reports, fdx_store_cell_counts, fdx_store_filter_values) is FDX_EMISUSE:
 * read through a read-only handle. ":memory:" is a store in memory, gone
 * at close. Any other path names a regular file, even one SQLite would take
 * for a URI ("file:..."); a directory, FIFO or device is FDX_ENOTSTORE.
 * The store's schema must be exactly the one
 * fdx creates (FDX_ENOTSTORE otherwise, naming what differs); an empty file
 * is not a store for a read-only open. Like sqlite3_open_v2, *out is set even
 * on failure (to NULL only when memory ran out) so fdx_store_errmsg can
 * explain; close it either way. A handle that created the file and then
 * failed to open it, or rolled back a transaction before committing any,
 * removes the file at close if nothing else has written to it meanwhile;
 * one that made the store in a file that was there and held nothing (0
 * bytes) leaves it so.
 */
int fdx_store_open(const char *path, int flags, fdx_store **out);
/* 1 when the file open as fd is the store at path (links resolved) or its
 * -wal, -shm or -journal file, compared by device and inode; else 0. A
 * program whose standard output is such a file (DB >> DB) would write its
 * output into the store. */
int fdx_fd_is_store_file(int fd, const char *path);

/* Closes the store, rolling back an uncommitted transaction. NULL is a no-op.
 * From a callback of a call still running on the handle: FDX_EMISUSE, and
 * the handle stays open. */
int fdx_store_close(fdx_store *store);

/* The message of the last failed call on this handle ("" if none has
 * failed). A successful call never writes it: what a successful call has to
 * say is in its out-parameters, or in fdx_store_notice. For a NULL handle,
 * "out of memory", as SQLite says: an open leaves *out NULL only when it
 * could not allocate the handle (or out itself was NULL). */
const char *fdx_store_errmsg(const fdx_store *store);

/* What the last call that leaves notices (fdx_store_merge, fdx_store_commit)
 * found worth saying without failing, such as "already merged, nothing to
 * do", or for a PostgreSQL store that another writer committed the same run
 * id meanwhile (the commit then adds and updates nothing, and its
 * fdx_commit_stats say so), or that its local working copy could not follow
 * a change PostgreSQL committed (the commit took effect; the handle takes no
 * more writes); "" when it had nothing to say. Such a call clears the notice
 * first. */
const char *fdx_store_notice(const fdx_store *store);

/* Which of those the notice is, for a program that acts on it. */
enum {
    FDX_NOTICE_NONE = 0,         /* no notice */
    FDX_NOTICE_NOTHING_DONE = 1, /* the call changed nothing (already merged; the run id
                                    committed by another writer) */
    FDX_NOTICE_COPY_BEHIND = 2   /* the commit took effect; the working copy could not follow */
};
int fdx_store_notice_kind(const fdx_store *store);

/* The store's name as messages show it: its path, or for a PostgreSQL URI
 * the URI with its password replaced by ***. */
const char *fdx_store_name(const fdx_store *store);

/* Milliseconds to wait for another writer before FDX_EBUSY (default 10000). */
int fdx_store_set_busy_timeout(fdx_store *store, int ms);
/* fdx_store_open with the busy timeout already applied to the open itself
 * (reading the header, configuring, migrating); 0 fails at once. */
int fdx_store_open_v2(const char *path, int flags, int busy_ms, fdx_store **out);

/*
 * Write transactions. Records and ingests are only accepted inside one;
 * nothing is visible to other connections until fdx_store_commit returns
 * FDX_OK. A failed commit leaves the store as it was before begin. An ingest,
 * merge or prune first writes the cells recorded before it; when that write,
 * or a prune's own, fails partway (out of memory, a full disk), the
 * transaction takes nothing more (FDX_EMISUSE) and can only be rolled back.
 * An ingest's or merge's own writes are undone when they fail, unless SQLite
 * rolled the whole transaction back on the failure (a full disk can): then
 * too the transaction takes nothing more.
 */
/* What a transaction changed: each distinct cell counts once, however many
 * times the transaction writes it (cells past the memory budget, or recorded
 * before an ingest, merge or prune, are written before the commit). */
typedef struct fdx_commit_stats {
    uint64_t cells_added;   /* cells that did not exist before */
    uint64_t cells_updated; /* existing cells the transaction recorded again (a count
                               already at 2^63-1 stays there) */
} fdx_commit_stats;

/* Opens a write transaction, and with it takes the store's write lock until
 * the commit or rollback: other writers (another handle, fdx-ingest, a sink's
 * drain) wait up to their busy timeout and then fail with FDX_EBUSY, while
 * readers go on. Keep a transaction as short as the writing: a runtime
 * records a run in a sink (fdx_sink_*) and drains it, or begins when the
 * run's records are ready, rather than holding one open for the whole run. */
int fdx_store_begin(fdx_store *store);
int fdx_store_commit(fdx_store *store, fdx_commit_stats *stats);
int fdx_store_rollback(fdx_store *store);

/*
 * Capture time. Every write transaction has one (default: when
 * fdx_store_begin ran); the cells it changes gain its observations on that
 * UTC day in the store's history (the miss_daily and dispatch_daily views),
 * and a candidates list it brings replaces a cell's when the cell's was
 * captured earlier (at the same time, by another transaction: when its text
 * is greater, as a merge decides, so that the order of the commits does not
 * matter; within one transaction the later list wins). A backfill sets it
 * right after fdx_store_begin, before
 * anything is recorded (FDX_EMISUSE otherwise). Unix seconds, 1970-01-01 to
 * 9999-12-31.
 */
int fdx_store_set_time(fdx_store *store, int64_t unix_seconds);
/* Parses a capture time as users write it: YYYY-MM-DD (midnight UTC), an
 * RFC 3339 UTC time such as 2026-10-01T12:00:00Z (Z or +00:00; fractions of
 * a second are dropped, a leap second counts as :59), or @UNIX_SECONDS.
 * FDX_OK, or FDX_EDATA for anything else. */
int fdx_parse_time(const char *text, int64_t *unix_seconds);
/* How many days before the latest one keep daily history (default 90, kept
 * in the store; 1 to FDX_MAX_DAILY_DAYS); older days are rolled into months
 * at commit. Inside a transaction. */
int fdx_store_set_daily_days(fdx_store *store, int days);
#define FDX_MAX_DAILY_DAYS (1 << 20) /* about 2,870 years */

/*
 * Adds one record to the open transaction. Returns FDX_EDATA (and leaves the
 * transaction untouched) when a string is not valid UTF-8. Cells are
 * aggregated in memory and written at commit; reads see them after commit.
 */
int fdx_store_record_miss(fdx_store *store, const fdx_miss *miss);
int fdx_store_record_dispatch(fdx_store *store, const fdx_dispatch *dispatch);

/* Cells of each kind in the store (records pending in an open transaction are
 * not counted until commit). */
int fdx_store_cell_counts(fdx_store *store, uint64_t *misses, uint64_t *dispatches);

/* ---- Ingest ------------------------------------------------------------ */

/* Called once per bad line: "where" is "file:line", reason says what is wrong. */
typedef void (*fdx_diag_fn)(void *ctx, const char *where, const char *reason);

#define FDX_INGEST_OPTS_VERSION 2

typedef struct fdx_ingest_opts {
    unsigned int version;  /* FDX_INGEST_OPTS_VERSION */
    fdx_diag_fn on_error;  /* NULL: only the first error reaches errmsg */
    void *ctx;             /* passed to on_error and on_warning */
    size_t max_line_bytes; /* 0: FDX_DEFAULT_MAX_LINE (at most FDX_MAX_LINE_LIMIT) */
    int max_depth;         /* 0: FDX_DEFAULT_MAX_DEPTH (at most FDX_MAX_DEPTH_LIMIT) */
    int skip_invalid;      /* 1: ingest the good lines; report and skip the bad ones */
    FILE *rejects;         /* with skip_invalid: every skipped line, verbatim, one per line */
    /* Notices that are not errors, such as content already ingested before:
     * "where" is the path. */
    fdx_diag_fn on_warning;
    /* Decoding threads: 0 one per CPU, 1 none (decode on the calling thread),
     * at most FDX_MAX_THREADS.
     * The result is the same either way. On Linux they take SCHED_BATCH,
     * unless they start in another policy than the default. Whatever it
     * is, a transaction whose cells outgrow the memory budget sorts each
     * spill on one helper thread too, and merges its spilled runs on another
     * at the commit. Work whose thread cannot start runs on the calling
     * thread, decoding included. */
    int threads;
    /* Since version 2. 1: the caller rolls the transaction back whenever the
     * ingest fails, as fdx-ingest does: a path with bad lines (without
     * skip_invalid) is not taken back out, it fails the transaction, which
     * can then only be rolled back. Nothing is kept to undo a path, so the
     * same memory holds up to a third more cells. 0: each path is applied or
     * left out on its own (the default). */
    int all_or_nothing;
} fdx_ingest_opts;

/* Every option at its default. */
#define FDX_INGEST_OPTS_INIT                                                                       \
    {                                                                                              \
        .version = FDX_INGEST_OPTS_VERSION                                                         \
    }
/* The same for callers that cannot use the macro (C++ before C++20): sets
 * *opts to the defaults of that version, writing only the fields that version
 * has (a program built against version 1 passes its smaller struct);
 * FDX_EMISUSE for an unknown one. */
int fdx_ingest_opts_init(fdx_ingest_opts *opts, unsigned int version);

#define FDX_DEFAULT_MAX_LINE  ((size_t)1 << 20)
#define FDX_MAX_LINE_LIMIT    ((size_t)1 << 30)
#define FDX_MAX_THREADS       64 /* fdx_ingest_opts.threads at most */
#define FDX_DEFAULT_MAX_DEPTH 5
#define FDX_MAX_DEPTH_LIMIT   64

typedef struct fdx_ingest_stats {
    uint64_t files;
    uint64_t lines;     /* lines read, blank ones included */
    uint64_t records;   /* lines that held a valid record */
    uint64_t bad_lines; /* reported; skipped when skip_invalid */
    uint64_t bytes;
} fdx_ingest_stats;

/*
 * Ingests path into the open transaction: a JSONL file (kinds mixed or not),
 * a run directory holding misses.jsonl and/or dispatches.jsonl, or "-" for
 * standard input. Every bad line is reported through opts->on_error; if there
 * was any, FDX_EDATA is returned and nothing from path is applied (the rest
 * of the transaction stays). opts NULL means every option at its default.
 * stats (optional) is added to, not reset.
 */
int fdx_store_ingest_path(fdx_store *store, const char *path, const fdx_ingest_opts *opts,
                          fdx_ingest_stats *stats);

/*
 * The same for several paths, decoded in parallel across them. Each path is
 * still applied all or nothing: FDX_EDATA means some paths had bad lines and
 * were left out, the others are in the transaction. Any other failure stops
 * at the path it names.
 */
int fdx_store_ingest_paths(fdx_store *store, const char *const *paths, size_t n,
                           const fdx_ingest_opts *opts, fdx_ingest_stats *stats);

/* The same for JSONL held in memory; name is what messages and the ledger call it. */
int fdx_store_ingest_buffer(fdx_store *store, const char *name, const char *data, size_t len,
                            const fdx_ingest_opts *opts, fdx_ingest_stats *stats);

/* ---- Rejects file -------------------------------------------------------
 * Where an ingest with skip_invalid copies its skipped lines, written so that
 * the file named is replaced only when the ingest commits: the lines go to a
 * temporary file beside it, fdx_rejects_sync makes them durable (call it
 * before fdx_store_commit, and do not commit when it fails), and
 * fdx_rejects_commit renames the temporary file over the path (call it after
 * the commit). Closing an uncommitted handle removes the temporary file and
 * leaves the path as it was. */
typedef struct fdx_rejects fdx_rejects;

/*
 * Checks path, creating nothing. Refuses, with FDX_EMISUSE, a path that
 * exists and is not a regular file, and a path that is (by device and inode,
 * or by directory and name when it does not exist yet) the store at
 * store_path, its -wal, -shm or -journal file, or a file one of the n ingest
 * paths names (standard input for "-"). *out is set even on failure (to NULL
 * only when memory ran out), for fdx_rejects_errmsg; close it either way.
 */
int fdx_rejects_open(const char *path, const char *store_path, const char *const *inputs, size_t n,
                     fdx_rejects **out);
/* Creates the temporary file; *stream is for fdx_ingest_opts.rejects and
 * belongs to the handle. */
int fdx_rejects_start(fdx_rejects *rejects, FILE **stream);
/* Flushes and syncs the temporary file (starting it, empty, if need be);
 * FDX_EIO when any write to it failed. */
int fdx_rejects_sync(fdx_rejects *rejects);
/* Renames the synced temporary file over the path and syncs the directory. */
int fdx_rejects_commit(fdx_rejects *rejects);
/* Closes the handle; an uncommitted temporary file is removed. NULL is a no-op. */
void fdx_rejects_close(fdx_rejects *rejects);
const char *fdx_rejects_errmsg(const fdx_rejects *rejects);

/* ---- Ingest ledger ------------------------------------------------------
 * Every committed transaction that changed the store leaves a row in the
 * ingest_ledger table (and one ingest_source row per file it read), written
 * in that same transaction. A run id makes an ingest exactly-once. */

typedef struct fdx_ledger_entry {
    int64_t id;
    char content_hash[65]; /* "" when the transaction read no files */
    char committed_at[40]; /* UTC, ISO 8601 */
} fdx_ledger_entry;

/* Tags the open transaction with run_id (unique across the store; a second
 * call replaces it). At commit, a run id the ledger already holds makes the
 * commit a no-op when the transaction read files and did nothing else, and
 * they are the same files (their content hash): it returns FDX_OK having
 * written nothing, with FDX_NOTICE_NOTHING_DONE. Anything else under such an
 * id fails with FDX_EDATA and writes nothing: other files, and records given
 * through the record calls, merges, prunes and a changed daily window, whose
 * sameness no hash tells (look the id up first with fdx_store_find_run to
 * skip such a retry). A transaction that read no file (its paths all left
 * out as bad) and did nothing else commits nothing under its run id, with
 * FDX_NOTICE_NOTHING_DONE: the id stays free for the run's data. */
int fdx_store_set_run_id(fdx_store *store, const char *run_id);
/* Looks run_id up in the ledger; *found tells whether it was there. */
int fdx_store_find_run(fdx_store *store, const char *run_id, fdx_ledger_entry *entry, int *found);
/* The content hash the ledger would record for ingesting these paths. */
int fdx_store_hash_paths(fdx_store *store, const char *const *paths, size_t n, char hex[65]);

/* ---- Export ------------------------------------------------------------ */

typedef struct fdx_export_stats {
    uint64_t miss_lines;
    uint64_t dispatch_lines;
} fdx_export_stats;

/*
 * Writes outdir/misses.jsonl and outdir/dispatches.jsonl (docs/FORMAT.md, "The
 * export") from one consistent read. Both are written to temporary files and fsynced
 * before either is renamed, so a failure leaves both previous files; only a
 * crash between the two renames leaves the new misses beside the previous
 * dispatches. Files get mode 0666 less the umask. Creates outdir (and its
 * parents) when missing (FDX_EMISUSE for ""). The rename would replace what
 * a file's name there is: an SQLite database (this store's or another's)
 * or its -wal, -shm or -journal file is refused with FDX_EMISUSE, a
 * directory, symbolic link, device or FIFO with FDX_EIO. Not allowed while a write
 * transaction is open. Every cell is checked as strictly as a feed line:
 * FDX_EDATA (naming the table, the cell and the column) for one fdx would
 * not have written, or (naming the table and the cell) for one that does not
 * come after the cell before it in export order, as in a file edited in place.
 * The store is read on a thread the call starts and joins before it returns
 * (on the calling thread when none can be started), a megabyte or so ahead of
 * the checking and writing; the progress callback runs on the calling thread.
 */
int fdx_store_export(fdx_store *store, const char *outdir, fdx_export_stats *stats);

/*
 * Writes one feed, "misses" or "dispatches" (FDX_EMISUSE for another kind),
 * to out, as fdx_store_export writes that file, from one read; *lines
 * (optional) is the number of lines written. FDX_EIO when out fails.
 */
int fdx_store_export_kind(fdx_store *store, const char *kind, FILE *out, uint64_t *lines);

/* ---- Progress ------------------------------------------------------------
 * Long calls report how far they are through fn: the ingest calls ("ingest",
 * lines read so far), fdx_store_merge ("merge", cells read so far) and the
 * exports ("export", lines written so far). fn runs on the calling thread,
 * often (it should rate-limit what it shows), never after the call returns.
 * NULL turns it off. */
typedef void (*fdx_progress_fn)(void *ctx, const char *what, uint64_t done);
void fdx_store_set_progress(fdx_store *store, fdx_progress_fn fn, void *ctx);

/* ---- Demand ------------------------------------------------------------
 * The miss demand ranking: which structure keys most want a specialised
 * kernel, over the miss cells that pass the filters (NULL: no filter). */
#define FDX_DEMAND_FILTER_VERSION 1

typedef struct fdx_demand_filter {
    unsigned int version;           /* FDX_DEMAND_FILTER_VERSION */
    const char *compute_capability; /* "8.9", or "cpu" for stamps without one */
    const char *hardware_sku;
    const char *op;
    const char *kernel_source; /* of the fallback */
    int64_t limit;             /* rows at most; <= 0: all */
    /* A window of capture days (Unix seconds, each standing for its UTC day):
     * misses of the days from since's up to, not including, until's. 0: open
     * (both 0: the cells' totals). */
    int64_t since;
    int64_t until;
} fdx_demand_filter;

/* FDX_OK, or FDX_EMISUSE with the reason written to why (at most why_size
 * bytes, NUL included; why may be NULL, and then why_size is ignored) for a
 * filter the rankings refuse: an unknown version,
 * window times outside 1970 .. 9999, or a compute capability neither "cpu"
 * nor MAJOR.MINOR (it would match nothing). Without a store, so that a
 * program can refuse a mistyped filter before it opens one. */
int fdx_demand_filter_check(const fdx_demand_filter *filter, char *why, size_t why_size);
/* No filter, every row. */
#define FDX_DEMAND_FILTER_INIT                                                                     \
    {                                                                                              \
        .version = FDX_DEMAND_FILTER_VERSION                                                       \
    }
/* The same as a function; FDX_EMISUSE for an unknown version. */
int fdx_demand_filter_init(fdx_demand_filter *filter, unsigned int version);

typedef struct fdx_demand_row {
    const char *wanted;
    uint64_t misses;    /* summed counts (exact, saturating at 2^63-1) */
    uint64_t fallbacks; /* distinct fallback implementations */
    uint64_t devices;   /* distinct hardware stamps */
    const char *ops;    /* the ops involved, comma-separated; their JSON array
                         * when one is empty, holds a comma or begins with [ */
} fdx_demand_row;

/* Called per row, most demanded first; a non-zero return stops the query.
 * fdx_store_demand first checks every miss cell as fdx_store_export does. */
typedef int (*fdx_demand_fn)(void *ctx, const fdx_demand_row *row);

/* filter NULL: no filter, every row. */
int fdx_store_demand(fdx_store *store, const fdx_demand_filter *filter, fdx_demand_fn fn,
                     void *ctx);
/* The values the demand filters can match in the store, each filter's in
 * order: filter is "cc" (as "8.9" or "cpu"), "sku", "op" or "source". For
 * saying which values exist when a filter matches nothing. A non-zero return
 * from fn stops the query. */
typedef int (*fdx_filter_value_fn)(void *ctx, const char *filter, const char *value);
int fdx_store_filter_values(fdx_store *store, fdx_filter_value_fn fn, void *ctx);
/* The SQL fdx_store_demand runs, with named parameters :cc, :sku, :op,
 * :source and :top, for taking a question further in sqlite3; with a window,
 * fdx_demand_window_sql, with :since and :until too ('YYYY-MM-DD' or NULL). */
const char *fdx_demand_sql(void);
const char *fdx_demand_window_sql(void);

/* The growth ranking: misses per wanted key in the `days` days before the
 * filter's until (0: up to and including the latest day in the history)
 * against the `days` days before those; the filter's since is ignored. */
typedef struct fdx_growth_row {
    const char *wanted;
    uint64_t misses;   /* in the window */
    uint64_t previous; /* in the window before it */
    int64_t growth;    /* misses - previous */
    int is_new;        /* no misses at all before the window */
    const char *ops;   /* as fdx_demand_row's */
} fdx_growth_row;

typedef int (*fdx_growth_fn)(void *ctx, const fdx_growth_row *row);

int fdx_store_growth(fdx_store *store, const fdx_demand_filter *filter, int days, fdx_growth_fn fn,
                     void *ctx);
/* Its SQL: the parameters of fdx_demand_sql, :until and :days. */
const char *fdx_growth_sql(void);

/* ---- Report -------------------------------------------------------------
 * One self-contained HTML page for deciding which kernel to write next: the
 * ledger summary, the demand ranking, misses by op and compute capability,
 * per-key trends over the daily history, and the dispatch regret list. */
#define FDX_REPORT_OPTS_VERSION 1

typedef struct fdx_report_opts {
    unsigned int version; /* FDX_REPORT_OPTS_VERSION */
    int top;              /* rows per ranking; <= 0: 20 */
} fdx_report_opts;

#define FDX_REPORT_OPTS_INIT                                                                       \
    {                                                                                              \
        .version = FDX_REPORT_OPTS_VERSION                                                         \
    }
/* The same as a function; FDX_EMISUSE for an unknown version. */
int fdx_report_opts_init(fdx_report_opts *opts, unsigned int version);

/*
 * Writes the page to path from one read snapshot, after checking every cell
 * as fdx_store_export does (FDX_EDATA naming the cell otherwise). The page
 * fetches nothing (inline CSS and SVG) and every value from the store is
 * HTML-escaped. path is replaced atomically: a failure leaves its previous
 * content; it is refused as fdx_store_export's files are. opts NULL means
 * every option at its default.
 */
int fdx_store_report(fdx_store *store, const char *path, const fdx_report_opts *opts);

/* ---- JSON text ---------------------------------------------------------- */

/* s as a JSON string literal, quotes included, escaped as the feeds are;
 * malloc'd (NULL when memory runs out, s is NULL, or s is not UTF-8, which
 * no JSON string can hold). */
char *fdx_json_string(const char *s);
/* 1 when the programs' tables, their JSON and fdx-report show the code point
 * cp as an escape rather than as itself: C0 and C1 controls, line and
 * paragraph separators, bidirectional controls and Unicode's
 * default-ignorable code points (zero-width spaces and joiners, BOM, soft
 * hyphen, fillers, variation selectors, tags, every other format character),
 * which act on a terminal or a page, or show nothing; every blank but the
 * space (no-break, ideographic and the other Unicode spaces, the blank
 * Braille pattern), which shows as one; and private-use code points and
 * noncharacters, which have no glyph of their own: two values would look the
 * same; else 0. */
int fdx_code_point_escaped(uint32_t cp);

/* ---- Comparing stores ---------------------------------------------------
 * Per-cell count changes from store (before) to the store at other_path
 * (after): before and after a release, or two hosts. Cells whose counts are
 * equal are left out; a cell missing from a store counts 0 there. Most
 * changed first. Strings as the views show them (revision as 16 hex digits,
 * dtypes as "F16,F16", compute capability as "8.9" or "cpu"), but for dtypes
 * of which one is empty, holds a comma or begins with [: their JSON array, as
 * stored, which the joined text would not give back. */
typedef struct fdx_diff_row {
    const char *kind; /* "miss" or "dispatch" */
    const char *key;  /* wanted or structure key; NULL for an unkeyed dispatch */
    const char *backend;
    const char *op;
    const char *dtypes;
    const char *kernel_source;
    const char *kernel_revision;
    const char *compute_capability;
    const char *hardware_sku;
    const char *driver_version;
    uint64_t before;
    uint64_t after;
    int64_t change; /* after - before */
} fdx_diff_row;

typedef int (*fdx_diff_fn)(void *ctx, const fdx_diff_row *row);

int fdx_store_diff(fdx_store *store, const char *other_path, fdx_diff_fn fn, void *ctx);

/* ---- Pruning ------------------------------------------------------------
 * Removes from the open transaction the cells (and their history) that pass
 * every filter given (NULL / 0: does not filter; at least one is needed; an
 * empty string matches the empty string), and
 * records it in the ledger (kind 'prune', details in prune_log): the ledger
 * moving on is what keeps a pruned copy of a store from being taken for the
 * full one by fdx_store_merge, and a store merged before the prune is still
 * recognised when merged again, so its cells are neither brought back nor
 * counted twice. */
typedef struct fdx_prune_filter {
    const char *driver_version;
    const char *kernel_revision; /* 16 hex digits, as the views show it */
    const char *kernel_source;
    const char *op;
    const char *compute_capability; /* "8.9", or "cpu" */
    const char *hardware_sku;
    int64_t before; /* Unix seconds: cells with no observation on that UTC day or later
                     * (a rolled-up month counts as observed through its last day) */
} fdx_prune_filter;

typedef struct fdx_prune_stats {
    uint64_t miss_cells;
    uint64_t dispatch_cells;
    uint64_t observations; /* their counts summed, saturating at 2^63-1 */
} fdx_prune_stats;

/* stats (NULL: not wanted) is what the prune removes (zeroed when it
 * fails). A revision that is not 16 hex digits, a compute capability
 * neither "cpu" nor MAJOR.MINOR, a text filter that is not UTF-8, or a
 * before outside 0 (none) .. 9999-12-31T23:59:59Z is FDX_EMISUSE. One prune
 * per transaction (FDX_EMISUSE for a second: its ledger row records one
 * filter). For a PostgreSQL store
 * the prune runs when fdx_store_commit pushes the transaction: stats is then
 * counted now, in a transaction rolled back (what a dry run reports), and
 * what the commit removes can differ when another writer commits in between;
 * with NULL stats nothing is counted before the commit. */
int fdx_store_prune(fdx_store *store, const fdx_prune_filter *filter, fdx_prune_stats *stats);
/* The same check of a filter, without a store, so that a program can refuse
 * a mistyped filter before it opens one (and waits for another writer):
 * FDX_OK, or FDX_EMISUSE with the reason written to why (at most why_size
 * bytes, NUL included; why may be NULL, and then why_size is ignored). */
int fdx_prune_filter_check(const fdx_prune_filter *filter, char *why, size_t why_size);
/* What the handle's last fdx_store_prune removed, as its prune_log row
 * records it: once fdx_store_commit has returned FDX_OK, what the committed
 * transaction removed (for a PostgreSQL store, counted in the commit's own
 * transaction); all 0 before any prune. */
int fdx_store_pruned(fdx_store *store, fdx_prune_stats *stats);

/* ---- Merging stores ----------------------------------------------------
 * Folds the store at src_path into the open transaction, incrementally:
 * every cell's history counts, per day (or month bucket) and per store that
 * observed them, are grow-only counters, and the merge keeps the larger of
 * this store's and the source's for each, the cell's total growing by what
 * that adds. So merging a store again brings only what it observed since, a
 * repeat changes nothing, and the order, grouping and timing of merges do
 * not matter (copies of a store, trees of merges and cycles included); for
 * each dispatch cell the candidates list set last wins (ties go to the list
 * that sorts last). Cells this store pruned stay pruned: only what a source
 * observed beyond what was pruned comes in. Every store has a random
 * identity, tied to its file (a copy gets a new one on its first write, and
 * hands the history it had to the original's); the store keeps the
 * identities, latest ledger positions and ledger digests of the stores read
 * into it, and a source whose ledger is unchanged since (same position, same
 * digest) is skipped without reading its cells (stats->stores_skipped, and
 * fdx_store_notice says so), as is this store itself. A failed merge undoes
 * only itself. The source is opened read-only and checked: its schema, its
 * cells as fdx_store_export checks them, its history (in range, adding up to
 * each cell's count) and its ledger. stats (optional) is added to, not reset,
 * so that one struct sums the merges of a transaction (zero it before the
 * first); a failed merge leaves it as it was.
 */
typedef struct fdx_merge_stats {
    uint64_t stores_merged;
    uint64_t stores_skipped;
    uint64_t cells_read;
} fdx_merge_stats;

int fdx_store_merge(fdx_store *dst, const char *src_path, fdx_merge_stats *stats);

/* ---- In-process sink ----------------------------------------------------
 * The reference sink in C, for a runtime's hot path: record calls aggregate
 * in memory (no I/O, amortised O(1), no allocation for a cell already seen);
 * the run's end flushes to JSONL files or drains into a store.
 *
 * The rule for failures: every call that can fail returns a status (FDX_OK
 * or FDX_E*) and leaves its explanation in fdx_sink_errmsg. A record call
 * that fails has also counted the record in fdx_sink_dropped, so a runtime
 * may ignore the status on its hot path and check fdx_sink_dropped once at
 * the run's end. Calls that cannot fail (freeing, counting, reading the
 * message) return their value, or nothing. A NULL sink, path, directory,
 * store or fdx_sink_records out-parameter is FDX_EMISUSE (with no message
 * or count when the sink itself is NULL; a NULL sink counts as empty); a
 * NULL count or handle out-parameter is not wanted.
 *
 * Thread safety: a sink has no lock. Use one sink per thread; each thread
 * drains its own sink into the store (through its own fdx_store handle),
 * which serialises the writers. Sinks on different threads share nothing.
 */

typedef struct fdx_sink fdx_sink;

/* NULL when memory runs out. */
fdx_sink *fdx_sink_new(void);
void fdx_sink_free(fdx_sink *sink);

/*
 * Aggregate one record into its cell. Returns FDX_OK, FDX_EDATA for a record
 * that is not valid (a string missing or not valid UTF-8), FDX_ENOMEM, or
 * FDX_EMISUSE for NULL; a record that is not kept is counted by
 * fdx_sink_dropped.
 */
int fdx_sink_record_miss(fdx_sink *sink, const fdx_miss *miss);
int fdx_sink_record_dispatch(fdx_sink *sink, const fdx_dispatch *dispatch);

/*
 * Recording through a cell handle, for a runtime that observes the same
 * cells again and again (a record per kernel dispatch) and keeps a handle
 * with its own dispatch decision: a record call reads and checks every
 * string of the record, an add through the handle reads none.
 *
 * The _cell calls record exactly as above and also return the cell's handle
 * (set only on FDX_OK). fdx_sink_add(sink, cell, count) then
 * counts count more observations (0 counts as one) of that cell, as
 * recording the same record again without candidates would. A handle
 * belongs to the sink that gave it until the sink is drained; any other
 * handle is refused with FDX_EMISUSE (and counted as dropped).
 */
typedef uint64_t fdx_sink_cell;

int fdx_sink_record_miss_cell(fdx_sink *sink, const fdx_miss *miss, fdx_sink_cell *cell);
int fdx_sink_record_dispatch_cell(fdx_sink *sink, const fdx_dispatch *dispatch,
                                  fdx_sink_cell *cell);
int fdx_sink_add(fdx_sink *sink, fdx_sink_cell cell, uint64_t count);

size_t fdx_sink_miss_cell_count(const fdx_sink *sink);
size_t fdx_sink_dispatch_cell_count(const fdx_sink *sink);
int fdx_sink_is_empty(const fdx_sink *sink);
/* Records not kept (each refused record call, and each refused add). */
uint64_t fdx_sink_dropped(const fdx_sink *sink);
/* The message of the last failed call on this sink ("" if none has failed);
 * for a NULL sink, "out of memory" (fdx_sink_new could not allocate one). */
const char *fdx_sink_errmsg(const fdx_sink *sink);

/* The aggregated records in export order; free with fdx_records_free. */
typedef struct fdx_records {
    const fdx_miss *misses;
    size_t n_misses;
    const fdx_dispatch *dispatches;
    size_t n_dispatches;
} fdx_records;

int fdx_sink_records(fdx_sink *sink, fdx_records **out);
void fdx_records_free(fdx_records *records);

/* Write the misses, the dispatches, or both (dir/misses.jsonl and
 * dir/dispatches.jsonl, dir created when missing) exactly as fdx-export
 * would, each file replaced atomically. The sink keeps its cells. A path
 * that is an SQLite database, or its -wal, -shm or -journal file, is
 * refused (FDX_EMISUSE): the replacement would destroy a store. */
int fdx_sink_flush_misses(fdx_sink *sink, const char *path, size_t *lines);
int fdx_sink_flush_dispatches(fdx_sink *sink, const char *path, size_t *lines);
int fdx_sink_flush_all(fdx_sink *sink, const char *dir, size_t *miss_lines, size_t *dispatch_lines);

/*
 * Adds every cell to the store in one transaction of its own (the store must
 * have none open), leaving what flushing to JSONL and running fdx-ingest
 * would (given a max_line as long as the longest line flushed: a record's
 * strings may make a line longer than the default 1 MiB). On success the
 * sink is emptied, so draining twice never counts a record twice; on failure
 * the sink and the store are unchanged.
 */
int fdx_sink_drain_to_store(fdx_sink *sink, fdx_store *store, fdx_commit_stats *stats);
/* The same, with the capture time of the transaction (Unix seconds; see
 * fdx_store_set_time). */
int fdx_sink_drain_to_store_at(fdx_sink *sink, fdx_store *store, int64_t unix_seconds,
                               fdx_commit_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* FDX_H */
