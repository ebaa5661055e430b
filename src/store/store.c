/*
 * Opening a store (creation, identity and schema migration), write
 * transactions, the statement cache and error reporting.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cell/cell.h"
#include "common/fsutil.h"
#include "sql_text.h"
#include "store/store_internal.h"

/* PRAGMA application_id of every fdx store: "fdx1". */
#define FDX_APPLICATION_ID  0x66647831
#define FDX_DEFAULT_BUSY_MS 10000

/* migrations[v] upgrades a store from schema version v to v + 1. */
static const char *const migrations[][2] = {
    {fdx_sql_schema_1, NULL},
    {fdx_sql_schema_2, NULL},
    {fdx_sql_views, fdx_sql_schema_3},
    {fdx_sql_schema_4, NULL},
};
#define FDX_SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

static const char *const stmt_text[FDX_STMT_COUNT] = {
    [FDX_STMT_BEGIN_WRITE] = fdx_sql_begin_write,
    [FDX_STMT_BEGIN_READ] = fdx_sql_begin_read,
    [FDX_STMT_COMMIT] = fdx_sql_commit,
    [FDX_STMT_ROLLBACK] = fdx_sql_rollback,
    [FDX_STMT_SAVEPOINT] = fdx_sql_savepoint,
    [FDX_STMT_RELEASE] = fdx_sql_release,
    [FDX_STMT_ROLLBACK_TO] = fdx_sql_rollback_to,
    [FDX_STMT_MISS_UPSERT] = fdx_sql_miss_upsert,
    [FDX_STMT_DISPATCH_UPSERT] = fdx_sql_dispatch_upsert,
    [FDX_STMT_MISS_EXISTS] = fdx_sql_miss_exists,
    [FDX_STMT_DISPATCH_EXISTS] = fdx_sql_dispatch_exists,
    [FDX_STMT_MISS_EXPORT] = fdx_sql_miss_export,
    [FDX_STMT_DISPATCH_EXPORT] = fdx_sql_dispatch_export,
    [FDX_STMT_CELL_COUNTS] = fdx_sql_cell_counts,
    [FDX_STMT_LEDGER_INSERT] = fdx_sql_ledger_insert,
    [FDX_STMT_LEDGER_UPDATE] = fdx_sql_ledger_update,
    [FDX_STMT_LEDGER_DELETE] = fdx_sql_ledger_delete,
    [FDX_STMT_LEDGER_SOURCE_INSERT] = fdx_sql_ledger_source_insert,
    [FDX_STMT_LEDGER_FIND_RUN] = fdx_sql_ledger_find_run,
    [FDX_STMT_LEDGER_FIND_SOURCE] = fdx_sql_ledger_find_source,
    [FDX_STMT_MERGE_DISPATCH_UPSERT] = fdx_sql_merge_dispatch_upsert,
    [FDX_STMT_MERGE_READ_MISSES] = fdx_sql_merge_read_misses,
    [FDX_STMT_MERGE_READ_DISPATCHES] = fdx_sql_merge_read_dispatches,
    [FDX_STMT_STORE_ID] = fdx_sql_store_id,
    [FDX_STMT_MERGED_LIST] = fdx_sql_merged_list,
    [FDX_STMT_MERGED_FIND] = fdx_sql_merged_find,
    [FDX_STMT_MERGED_INSERT] = fdx_sql_merged_insert,
    [FDX_STMT_TOP_DEMAND] = fdx_sql_top_demand,
    [FDX_STMT_FILTER_VALUES] = fdx_sql_filter_values,
    [FDX_STMT_LEDGER_DIGEST] = fdx_sql_ledger_digest,
    [FDX_STMT_IDENTITY_MARK] = fdx_sql_identity_mark,
    [FDX_STMT_HAS_CELLS] = fdx_sql_has_cells,
};

const char *fdx_strerror(int status)
{
    static const char *const names[] = {
        "ok",
        "error",
        "bad data",
        "I/O error",
        "out of memory",
        "store is busy",
        "newer schema",
        "not an fdx store",
        "misuse",
        "no such file",
        "read-only store",
        "merge conflict",
    };
    if (status < 0 || (size_t)status >= sizeof names / sizeof names[0])
        return "unknown status";
    return names[status];
}

int fdx_store_fail(fdx_store *s, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

static int code_of_sqlite(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return FDX_EBUSY;
    case SQLITE_NOMEM: return FDX_ENOMEM;
    case SQLITE_READONLY: return FDX_EREADONLY;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT: return FDX_ENOTSTORE;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN: return FDX_EIO;
    default: return FDX_ERROR;
    }
}

int fdx_store_fail_sqlite(fdx_store *s, int rc, const char *what)
{
    int code = code_of_sqlite(rc);
    const char *msg = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    if (code == FDX_EBUSY)
        return fdx_store_fail(s, code, "%s: %s: locked by another process for more than %d ms",
                              s->path, what, s->busy_ms);
    if (code == FDX_ENOTSTORE)
        return fdx_store_fail(s, code, "%s: %s: %s (the store is corrupt or not a database)",
                              s->path, what, msg);
    return fdx_store_fail(s, code, "%s: %s: %s", s->path, what, msg);
}

int fdx_store_stmt(fdx_store *s, fdx_stmt_id id, sqlite3_stmt **out)
{
    sqlite3_stmt *st = s->stmts[id];
    if (!st) {
        int rc = sqlite3_prepare_v3(s->db, stmt_text[id], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
        if (rc != SQLITE_OK)
            return fdx_store_fail_sqlite(s, rc, "preparing a statement");
        s->stmts[id] = st;
    } else {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    *out = st;
    return FDX_OK;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * SQLite's busy handler covers ordinary lock waits, but some SQLITE_BUSY
 * results (WAL recovery by another connection, for one) bypass it. Those are
 * retried here with a growing pause until the busy timeout has passed.
 */
static int step_retrying(fdx_store *s, sqlite3_stmt *st)
{
    int64_t deadline = now_ms() + s->busy_ms;
    int pause_ms = 1;
    for (;;) {
        int rc = sqlite3_step(st);
        if ((rc & 0xff) != SQLITE_BUSY || now_ms() >= deadline)
            return rc;
        sqlite3_reset(st);
        struct timespec ts = {0, (long)pause_ms * 1000000L};
        nanosleep(&ts, NULL);
        pause_ms = pause_ms < 64 ? pause_ms * 2 : 64;
    }
}

int fdx_store_exec(fdx_store *s, fdx_stmt_id id)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, id, &st);
    if (rc != FDX_OK)
        return rc;
    rc = step_retrying(s, st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(s, rc, "running a statement");
    return FDX_OK;
}

/* Runs a one-off query returning one integer (PRAGMA reads, counts). */
typedef struct identity {
    int64_t app_id;
    int64_t version;
    int64_t objects;
} identity;

static int read_identity(fdx_store *s, identity *id)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, fdx_sql_identity, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = step_retrying(s, st);
    if (rc == SQLITE_ROW) {
        id->app_id = sqlite3_column_int64(st, 0);
        id->version = sqlite3_column_int64(st, 1);
        id->objects = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return FDX_OK;
    int code = fdx_store_fail_sqlite(s, rc, "reading the store header");
    if (code == FDX_ENOTSTORE)
        return fdx_store_fail(s, code, "%s: not an fdx store (not an SQLite database, or corrupt)",
                              s->path);
    return code;
}

static int check_identity(fdx_store *s, const identity *id)
{
    int fresh = id->app_id == 0 && id->version == 0 && id->objects == 0;
    if (!fresh && id->app_id != FDX_APPLICATION_ID)
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: not an fdx store (an SQLite database of another kind)", s->path);
    if (id->version > FDX_SCHEMA_VERSION)
        return fdx_store_fail(s, FDX_ESCHEMA,
                              "%s: written by a newer fdx (store schema version %lld; this "
                              "build reads up to %d): upgrade fdx",
                              s->path, (long long)id->version, FDX_SCHEMA_VERSION);
    return FDX_OK;
}

/* Brings the schema up to date in one transaction (another process may race). */
static int migrate(fdx_store *s)
{
    identity id;
    int rc = fdx_store_exec(s, FDX_STMT_BEGIN_WRITE);
    if (rc != FDX_OK)
        return rc;
    rc = read_identity(s, &id);
    if (rc == FDX_OK)
        rc = check_identity(s, &id);
    for (int64_t v = id.version; rc == FDX_OK && v < FDX_SCHEMA_VERSION; v++)
        for (int k = 0; rc == FDX_OK && k < 2 && migrations[v][k]; k++) {
            char *msg = NULL;
            int src = sqlite3_exec(s->db, migrations[v][k], NULL, NULL, &msg);
            if (src != SQLITE_OK)
                rc = fdx_store_fail(s, code_of_sqlite(src), "%s: migrating to schema %lld: %s",
                                    s->path, (long long)v + 1, msg ? msg : sqlite3_errstr(src));
            sqlite3_free(msg);
        }
    if (rc == FDX_OK)
        rc = fdx_identity_check_file(s, 0); /* a new store: its identity is this file's */
    if (rc != FDX_OK) {
        sqlite3_exec(s->db, fdx_sql_rollback, NULL, NULL, NULL);
        return rc;
    }
    return fdx_store_exec(s, FDX_STMT_COMMIT);
}

/* sqlite3_exec with the same retrying as step_retrying. */
static int exec_retrying(fdx_store *s, const char *sql, char **msg)
{
    int64_t deadline = now_ms() + s->busy_ms;
    for (;;) {
        int rc = sqlite3_exec(s->db, sql, NULL, NULL, msg);
        if ((rc & 0xff) != SQLITE_BUSY || now_ms() >= deadline)
            return rc;
        sqlite3_free(*msg);
        *msg = NULL;
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
}

static int configure(fdx_store *s, int flags)
{
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, s->busy_ms);
    identity id;
    int rc = read_identity(s, &id);
    if (rc == FDX_OK)
        rc = check_identity(s, &id);
    if (rc != FDX_OK)
        return rc;
    if (flags & FDX_OPEN_READONLY) {
        if (id.version < FDX_SCHEMA_VERSION)
            return fdx_store_fail(s, FDX_EREADONLY,
                                  "%s: store schema version %lld needs migrating to %d, which a "
                                  "read-only open cannot do: open it writable once",
                                  s->path, (long long)id.version, FDX_SCHEMA_VERSION);
        return FDX_OK;
    }
    char *msg = NULL;
    int src = exec_retrying(s, fdx_sql_connection, &msg);
    if (src != SQLITE_OK) {
        rc = fdx_store_fail(s, code_of_sqlite(src), "%s: configuring the connection: %s", s->path,
                            msg ? msg : sqlite3_errstr(src));
        sqlite3_free(msg);
        return rc;
    }
    return id.version < FDX_SCHEMA_VERSION ? migrate(s) : FDX_OK;
}

/* "file:" URI of path with immutable=1: how SQLite reads a WAL store on
 * read-only media, where the shared-memory file cannot be created. */
static char *immutable_uri(const char *path)
{
    size_t n = strlen(path);
    char *uri = malloc(n * 3 + 32);
    if (!uri)
        return NULL;
    char *p = uri + sprintf(uri, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if (*c == '%' || *c == '?' || *c == '#' || *c < 0x20)
            p += sprintf(p, "%%%02X", *c);
        else
            *p++ = (char)*c;
    }
    strcpy(p, "?immutable=1");
    return uri;
}

static int close_db(fdx_store *s);

static int reopen_immutable(fdx_store *s, const char *path)
{
    char *uri = immutable_uri(path);
    if (!uri)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    close_db(s);
    int rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc != SQLITE_OK)
        return fdx_store_fail_sqlite(s, rc, "opening");
    return configure(s, FDX_OPEN_READONLY);
}

static int open_db(fdx_store *s, const char *path, int flags)
{
    struct stat st;
    if ((flags & (FDX_OPEN_CREATE | FDX_OPEN_READONLY)) == (FDX_OPEN_CREATE | FDX_OPEN_READONLY))
        return fdx_store_fail(s, FDX_EMISUSE, "FDX_OPEN_CREATE and FDX_OPEN_READONLY conflict");
    if (!(flags & FDX_OPEN_CREATE) && stat(path, &st) != 0)
        return fdx_store_fail(s, errno == ENOENT ? FDX_ENOENT : FDX_EIO, "%s: %s", path,
                              errno == ENOENT ? "no such store" : strerror(errno));
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return fdx_store_fail(s, FDX_ENOTSTORE, "%s: is a directory, not an fdx store", path);
    char dir[512];
    if ((flags & FDX_OPEN_CREATE) && stat(path, &st) != 0 &&
        fdx_parent_missing(path, dir, sizeof dir))
        return fdx_store_fail(s, FDX_EIO, "%s: cannot create the store: no such directory '%s'",
                              path, dir);
    int oflags = SQLITE_OPEN_NOMUTEX;
    s->readonly = (flags & FDX_OPEN_READONLY) != 0;
    if (flags & FDX_OPEN_READONLY)
        oflags |= SQLITE_OPEN_READONLY;
    else
        oflags |= SQLITE_OPEN_READWRITE | (flags & FDX_OPEN_CREATE ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &s->db, oflags, NULL);
    if (rc != SQLITE_OK)
        return fdx_store_fail_sqlite(s, rc, "opening");
    rc = configure(s, flags);
    if (rc == FDX_EIO && s->readonly && (sqlite3_extended_errcode(s->db) & 0xff) == SQLITE_CANTOPEN)
        return reopen_immutable(s, path);
    return rc;
}

int fdx_store_open(const char *path, int flags, fdx_store **out)
{
    return fdx_store_open_v2(path, flags, FDX_DEFAULT_BUSY_MS, out);
}

int fdx_store_open_v2(const char *path, int flags, int busy_ms, fdx_store **out)
{
    fdx_store *s = calloc(1, sizeof *s);
    *out = s;
    if (!s)
        return FDX_ENOMEM;
    s->busy_ms = busy_ms;
    s->path = strdup(path ? path : "");
    s->pending = fdx_agg_new();
    s->path_agg = fdx_agg_new();
    s->saved = fdx_agg_new();
    if (!s->path || !s->pending || !s->path_agg || !s->saved)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    if (!path || !*path)
        return fdx_store_fail(s, FDX_EMISUSE, "no store path given");
    if (busy_ms < 0)
        return fdx_store_fail(s, FDX_EMISUSE, "busy timeout must not be negative");
    int rc = open_db(s, path, flags & ~FDX_OPEN_FOR_READING);
    if ((flags & FDX_OPEN_FOR_READING) && (rc == FDX_EREADONLY || rc == FDX_EIO)) {
        close_db(s);
        rc = open_db(s, path, FDX_OPEN_READONLY);
    }
    return rc;
}

/* Closes the connection and forgets its statements; the handle stays. */
static int close_db(fdx_store *s)
{
    for (int i = 0; i < FDX_STMT_COUNT; i++) {
        sqlite3_finalize(s->stmts[i]);
        s->stmts[i] = NULL;
    }
    int rc = sqlite3_close(s->db) == SQLITE_OK ? FDX_OK : FDX_ERROR;
    s->db = NULL;
    return rc;
}

int fdx_store_close(fdx_store *s)
{
    if (!s)
        return FDX_OK;
    if (s->in_txn)
        fdx_store_rollback(s);
    int rc = close_db(s);
    fdx_agg_free(s->pending);
    fdx_agg_free(s->path_agg);
    fdx_agg_free(s->saved);
    fdx_ledger_reset(s);
    fdx_buf_free(&s->dtypes);
    fdx_buf_free(&s->cands);
    free(s->path);
    free(s);
    return rc;
}

const char *fdx_store_errmsg(const fdx_store *s)
{
    return s ? s->errmsg : "out of memory";
}

int fdx_store_set_busy_timeout(fdx_store *s, int ms)
{
    if (ms < 0)
        return fdx_store_fail(s, FDX_EMISUSE, "busy timeout must not be negative");
    s->busy_ms = ms;
    if (s->db)
        sqlite3_busy_timeout(s->db, ms);
    return FDX_OK;
}

/* ---- write transactions ---- */

static int need_db(fdx_store *s)
{
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
    return FDX_OK;
}

int fdx_store_begin(fdx_store *s)
{
    int rc = need_db(s);
    if (rc != FDX_OK)
        return rc;
    if (s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "a transaction is already open");
    if (s->readonly)
        return fdx_store_fail(s, FDX_EREADONLY, "%s: opened read-only", s->path);
    if ((rc = fdx_store_exec(s, FDX_STMT_BEGIN_WRITE)) != FDX_OK)
        return rc;
    if ((rc = fdx_identity_check_file(s, 1)) != FDX_OK) {
        char saved[sizeof s->errmsg];
        memcpy(saved, s->errmsg, sizeof saved);
        fdx_store_exec(s, FDX_STMT_ROLLBACK);
        memcpy(s->errmsg, saved, sizeof saved);
        return rc;
    }
    s->in_txn = 1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    s->txn_time_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    memset(&s->txn_stats, 0, sizeof s->txn_stats);
    fdx_agg_clear(s->pending);
    fdx_ledger_reset(s);
    return FDX_OK;
}

int fdx_store_rollback(fdx_store *s)
{
    if (!s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "no transaction is open");
    s->in_txn = 0;
    s->in_path = 0;
    fdx_agg_clear(s->pending);
    fdx_agg_clear(s->path_agg);
    fdx_agg_clear(s->saved);
    fdx_ledger_reset(s);
    if (sqlite3_get_autocommit(s->db))
        return FDX_OK;
    return fdx_store_exec(s, FDX_STMT_ROLLBACK);
}

int fdx_store_commit(fdx_store *s, fdx_commit_stats *stats)
{
    if (!s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "no transaction is open");
    int rc = fdx_store_flush_pending(s);
    if (rc == FDX_OK)
        rc = fdx_ledger_finish(s);
    if (rc == FDX_OK)
        rc = fdx_store_exec(s, FDX_STMT_COMMIT);
    if (rc != FDX_OK) {
        char saved[sizeof s->errmsg];
        memcpy(saved, s->errmsg, sizeof saved);
        fdx_store_rollback(s);
        memcpy(s->errmsg, saved, sizeof saved);
        return rc;
    }
    s->in_txn = 0;
    fdx_ledger_reset(s);
    if (stats)
        *stats = s->txn_stats;
    return FDX_OK;
}

static int need_txn(fdx_store *s)
{
    if (!s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "no transaction is open (call fdx_store_begin)");
    return FDX_OK;
}

int fdx_store_add_cell(fdx_store *s, const fdx_cell *cell, uint64_t count, fdx_str cands)
{
    fdx_agg *agg = s->in_path ? s->path_agg : s->pending;
    if (fdx_agg_add(agg, cell, count, cands) != FDX_OK)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    s->ledger.records++;
    if (fdx_agg_cells(agg) < FDX_SPILL_CELLS)
        return FDX_OK;
    return s->in_path ? fdx_store_flush_path(s) : fdx_store_flush_pending(s);
}

int fdx_store_record_checked(fdx_store *s, const fdx_miss *m, const fdx_dispatch *d, int trusted)
{
    fdx_cell cell;
    fdx_str cands = FDX_NO_CANDS;
    uint64_t count;
    int rc = need_txn(s);
    if (rc != FDX_OK)
        return rc;
    if (m) {
        rc = fdx_cell_from_miss(&cell, m, trusted, &s->dtypes, s->errmsg, sizeof s->errmsg);
        count = m->count;
    } else if (d) {
        rc = fdx_cell_from_dispatch(&cell, d, trusted, &s->dtypes, &s->cands, s->errmsg,
                                    sizeof s->errmsg);
        cands.p = s->cands.data;
        cands.n = s->cands.len;
        count = d->count;
    } else {
        return fdx_store_fail(s, FDX_EMISUSE, "no record given");
    }
    return rc == FDX_OK ? fdx_store_add_cell(s, &cell, count, cands) : rc;
}

int fdx_store_record_miss(fdx_store *s, const fdx_miss *m)
{
    if (!m)
        return fdx_store_fail(s, FDX_EMISUSE, "no record given");
    return fdx_store_record_checked(s, m, NULL, 0);
}

int fdx_store_record_dispatch(fdx_store *s, const fdx_dispatch *d)
{
    if (!d)
        return fdx_store_fail(s, FDX_EMISUSE, "no record given");
    return fdx_store_record_checked(s, NULL, d, 0);
}

int fdx_store_cell_counts(fdx_store *s, uint64_t *misses, uint64_t *dispatches)
{
    sqlite3_stmt *st;
    int rc = need_db(s);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_CELL_COUNTS, &st);
    if (rc != FDX_OK)
        return rc;
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        *misses = (uint64_t)sqlite3_column_int64(st, 0);
        *dispatches = (uint64_t)sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return src == SQLITE_ROW ? FDX_OK : fdx_store_fail_sqlite(s, src, "counting cells");
}

void fdx_store_set_progress(fdx_store *s, fdx_progress_fn fn, void *ctx)
{
    s->progress = fn;
    s->progress_ctx = ctx;
}
