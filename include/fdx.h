/*
 * fdx: a persistent store for kernel-dispatch telemetry.
 *
 * A store is one SQLite database file holding aggregated miss cells and
 * dispatch cells (see WIRE.md). The API follows SQLite's conventions: opaque
 * handles, int status codes, out-parameters, and one errmsg accessor per
 * handle. No function aborts or exits the process.
 *
 * A store handle is not thread-safe: use one handle per thread (several
 * handles, threads or processes may open the same file at once).
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
    FDX_EBUSY = 5,      /* the store stayed locked past the busy timeout */
    FDX_ESCHEMA = 6,    /* store written by a newer fdx */
    FDX_ENOTSTORE = 7,  /* file is not an fdx store, or is corrupt */
    FDX_EMISUSE = 8,    /* call not valid in the handle's current state */
    FDX_ENOENT = 9,     /* a path that must exist does not */
    FDX_EREADONLY = 10, /* the store cannot be written */
    FDX_ECONFLICT = 11  /* a merge would count a store's cells twice */
};

/* Short English name of a status code ("bad data", "I/O error", ...). */
const char *fdx_strerror(int status);

/*
 * Makes decoding faster by giving cJSON per-thread arenas instead of a
 * malloc and a free per JSON value. cJSON's allocation hooks are global to
 * the process, so only a program should call this, once, before any thread
 * uses fdx or cJSON; cJSON calls elsewhere in the process keep working (they
 * fall through to malloc and free) as long as nothing else sets the hooks.
 */
void fdx_use_fast_json_allocator(void);

/* ---- Records (WIRE.md section 1) --------------------------------------
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
#define FDX_OPEN_READONLY 0x2 /* never write (a store on read-only media); no migration */
/* For readers: writable when the store can be written (so an older schema is
 * migrated), read-only otherwise. */
#define FDX_OPEN_FOR_READING 0x4

/*
 * Opens (and with FDX_OPEN_CREATE, creates) the store at path, migrating an
 * older schema. Like sqlite3_open_v2, *out is set even on failure (to NULL
 * only when memory ran out) so fdx_store_errmsg can explain; close it either
 * way.
 */
int fdx_store_open(const char *path, int flags, fdx_store **out);

/* Closes the store, rolling back an uncommitted transaction. NULL is a no-op. */
int fdx_store_close(fdx_store *store);

/* The message of the last failed call on this handle ("" if none). */
const char *fdx_store_errmsg(const fdx_store *store);

/* Milliseconds to wait for another writer before FDX_EBUSY (default 10000). */
int fdx_store_set_busy_timeout(fdx_store *store, int ms);
/* fdx_store_open with the busy timeout already applied to the open itself
 * (reading the header, configuring, migrating); 0 fails at once. */
int fdx_store_open_v2(const char *path, int flags, int busy_ms, fdx_store **out);

/*
 * Write transactions. Records and ingests are only accepted inside one;
 * nothing is visible to other connections until fdx_store_commit returns
 * FDX_OK. A failed commit leaves the store as it was before begin.
 */
/* What a transaction changed. A transaction holding more than 65,536 distinct
 * cells writes them in rounds; a cell written in two rounds counts as added
 * once and updated once. */
typedef struct fdx_commit_stats {
    uint64_t cells_added;   /* cells that did not exist before */
    uint64_t cells_updated; /* existing cells whose count grew */
} fdx_commit_stats;

int fdx_store_begin(fdx_store *store);
int fdx_store_commit(fdx_store *store, fdx_commit_stats *stats);
int fdx_store_rollback(fdx_store *store);

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

typedef struct fdx_ingest_opts {
    fdx_diag_fn on_error;  /* NULL: only the first error reaches errmsg */
    void *ctx;             /* passed to on_error and on_warning */
    size_t max_line_bytes; /* 0: FDX_DEFAULT_MAX_LINE (at most FDX_MAX_LINE_LIMIT) */
    int max_depth;         /* 0: FDX_DEFAULT_MAX_DEPTH (at most FDX_MAX_DEPTH_LIMIT) */
    int skip_invalid;      /* 1: ingest the good lines; report and skip the bad ones */
    FILE *rejects;         /* with skip_invalid: every skipped line, verbatim, one per line */
    /* Notices that are not errors, such as content already ingested before:
     * "where" is the path. */
    fdx_diag_fn on_warning;
    /* Decoding threads: 0 one per CPU, 1 none (decode on the calling thread).
     * The result is the same either way. */
    int threads;
} fdx_ingest_opts;

#define FDX_DEFAULT_MAX_LINE  ((size_t)1 << 20)
#define FDX_MAX_LINE_LIMIT    ((size_t)1 << 30)
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
 * of the transaction stays). stats (optional) is added to, not reset.
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

/* Tags the open transaction with run_id (unique across the store). */
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
 * Writes outdir/misses.jsonl and outdir/dispatches.jsonl (WIRE.md section 3)
 * from one consistent read. Both are written to temporary files and fsynced
 * before either is renamed, so a failure leaves both previous files; only a
 * crash between the two renames leaves the new misses beside the previous
 * dispatches. Files get mode 0666 less the umask. Creates outdir (and its
 * parents) when missing (FDX_EMISUSE for ""). Not allowed while a write
 * transaction is open.
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
typedef struct fdx_demand_filter {
    const char *compute_capability; /* "8.9", or "cpu" for stamps without one */
    const char *hardware_sku;
    const char *op;
    const char *kernel_source; /* of the fallback */
    int64_t limit;             /* rows at most; <= 0: all */
} fdx_demand_filter;

typedef struct fdx_demand_row {
    const char *wanted;
    uint64_t misses;    /* summed counts (exact up to 2^53) */
    uint64_t fallbacks; /* distinct fallback implementations */
    uint64_t devices;   /* distinct hardware stamps */
    const char *ops;    /* the ops involved, comma-separated */
} fdx_demand_row;

/* Called per row, most demanded first; a non-zero return stops the query. */
typedef int (*fdx_demand_fn)(void *ctx, const fdx_demand_row *row);

int fdx_store_demand(fdx_store *store, const fdx_demand_filter *filter, fdx_demand_fn fn,
                     void *ctx);
/* The values the demand filters can match in the store, each filter's in
 * order: filter is "cc" (as "8.9" or "cpu"), "sku", "op" or "source". For
 * saying which values exist when a filter matches nothing. A non-zero return
 * from fn stops the query. */
typedef int (*fdx_filter_value_fn)(void *ctx, const char *filter, const char *value);
int fdx_store_filter_values(fdx_store *store, fdx_filter_value_fn fn, void *ctx);
/* The SQL fdx_store_demand runs, with named parameters :cc, :sku, :op,
 * :source and :top, for taking a question further in sqlite3. */
const char *fdx_demand_sql(void);
/* s as a JSON string literal, quotes included, escaped as the feeds are;
 * malloc'd (NULL when memory runs out). */
char *fdx_json_string(const char *s);

/* ---- Merging stores ----------------------------------------------------
 * Folds the cells of the store at src_path into the open transaction: counts
 * add, and for each dispatch cell the candidates list set last wins (ties go
 * to the list that sorts last), so the result does not depend on the order
 * or grouping of merges. Every store has a random identity, tied to its file
 * (a copy gets a new one on its first write); the store keeps the identities,
 * ledger positions and ledger digests of all stores folded into it, and the
 * identities other stores said they held. Merging a store again whose ledger
 * is unchanged (same position, same digest) is a no-op (stats->stores_skipped,
 * and errmsg says so); merging one that changed since, a copy of one merged
 * with other runs, or one that holds or says it holds a store already merged,
 * fails with FDX_ECONFLICT and an explanation. What a source says it holds
 * never makes a merge be skipped. A failed merge undoes only itself.
 */
typedef struct fdx_merge_stats {
    uint64_t stores_merged;
    uint64_t stores_skipped;
    uint64_t cells_read;
} fdx_merge_stats;

int fdx_store_merge(fdx_store *dst, const char *src_path, fdx_merge_stats *stats);

/* ---- In-process sink ----------------------------------------------------
 * The reference sink in C, for a runtime's hot path: record calls aggregate
 * in memory (no I/O, amortised O(1), no allocation for a cell already seen)
 * and never fail; the run's end flushes to JSONL files or drains into a store.
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
 * Aggregate one record into its cell. Never fails: a record that cannot be
 * kept (a string that is not valid UTF-8, or no memory) is counted by
 * fdx_sink_dropped and explained by fdx_sink_errmsg instead.
 */
void fdx_sink_record_miss(fdx_sink *sink, const fdx_miss *miss);
void fdx_sink_record_dispatch(fdx_sink *sink, const fdx_dispatch *dispatch);

/*
 * Recording through a cell handle, for a runtime that observes the same
 * cells again and again (a record per kernel dispatch) and keeps a handle
 * with its own dispatch decision: a record call reads and checks every
 * string of the record, an add through the handle reads none.
 *
 * The _cell calls record exactly as above and also return the cell's handle;
 * unlike them they return a status (FDX_OK, FDX_EDATA for a record that is
 * not valid, FDX_ENOMEM, FDX_EMISUSE for NULL), and a record they cannot keep
 * is still counted by fdx_sink_dropped. fdx_sink_add(sink, cell, count) then
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
uint64_t fdx_sink_dropped(const fdx_sink *sink);
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
 * would, each file replaced atomically and both as fdx_store_export replaces
 * its pair. The sink keeps its cells. */
int fdx_sink_flush(fdx_sink *sink, const char *path, size_t *lines);
int fdx_sink_flush_dispatches(fdx_sink *sink, const char *path, size_t *lines);
int fdx_sink_flush_all(fdx_sink *sink, const char *dir, size_t *miss_lines, size_t *dispatch_lines);

/*
 * Adds every cell to the store in one transaction of its own (the store must
 * have none open), leaving what flushing to JSONL and running fdx-ingest
 * would. On success the sink is emptied, so draining twice never counts a
 * record twice; on failure the sink and the store are unchanged.
 */
int fdx_sink_drain_to_store(fdx_sink *sink, fdx_store *store, fdx_commit_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* FDX_H */
