/*
 * The handle's connection: the prepared-statement cache, stepping through
 * SQLITE_BUSY, the error and notice messages every store module reports
 * through, and the check that a read taken without locks still holds. It
 * calls nothing else in store/, so every module can build on it.
 */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/file_id.h"
#include "common/forks.h"
#include "common/fsutil.h"
#include "common/message.h"
#include "sql_text.h"
#include "store/conn.h"

static const char *const stmt_text[FDX_STMT_COUNT] = {
    [FDX_STMT_BEGIN_WRITE] = fdx_sql_begin_write,
    [FDX_STMT_BEGIN_EXCLUSIVE] = fdx_sql_begin_exclusive,
    [FDX_STMT_BEGIN_READ] = fdx_sql_begin_read,
    [FDX_STMT_COMMIT] = fdx_sql_commit,
    [FDX_STMT_ROLLBACK] = fdx_sql_rollback,
    [FDX_STMT_SAVEPOINT] = fdx_sql_savepoint,
    [FDX_STMT_RELEASE] = fdx_sql_release,
    [FDX_STMT_ROLLBACK_TO] = fdx_sql_rollback_to,
    [FDX_STMT_MISS_UPSERT] = fdx_sql_miss_upsert,
    [FDX_STMT_DISPATCH_UPSERT] = fdx_sql_dispatch_upsert,
    [FDX_STMT_MISS_INSERT_ROWS] = fdx_sql_miss_insert_rows,
    [FDX_STMT_DISPATCH_INSERT_ROWS] = fdx_sql_dispatch_insert_rows,
    [FDX_STMT_MISS_CELL_ID] = fdx_sql_miss_cell_id,
    [FDX_STMT_DISPATCH_CELL_ID] = fdx_sql_dispatch_cell_id,
    [FDX_STMT_MISS_EXPORT] = fdx_sql_miss_export,
    [FDX_STMT_DISPATCH_EXPORT] = fdx_sql_dispatch_export,
    [FDX_STMT_CELL_COUNTS] = fdx_sql_cell_counts,
    [FDX_STMT_LEDGER_INSERT] = fdx_sql_ledger_insert,
    [FDX_STMT_LEDGER_UPDATE] = fdx_sql_ledger_update,
    [FDX_STMT_LEDGER_DELETE] = fdx_sql_ledger_delete,
    [FDX_STMT_LEDGER_SOURCE_INSERT] = fdx_sql_ledger_source_insert,
    [FDX_STMT_LEDGER_FIND_RUN] = fdx_sql_ledger_find_run,
    [FDX_STMT_LEDGER_FIND_SOURCE] = fdx_sql_ledger_find_source,
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
    [FDX_STMT_STORE_UNUSED] = fdx_sql_store_unused,
    [FDX_STMT_TOP_WINDOW] = fdx_sql_top_window,
    [FDX_STMT_TOP_GROWTH] = fdx_sql_top_growth,
    [FDX_STMT_DIFF_ATTACH] = fdx_sql_diff_attach,
    [FDX_STMT_DIFF_DETACH] = fdx_sql_diff_detach,
    [FDX_STMT_DIFF_CELLS] = fdx_sql_diff_cells,
    [FDX_STMT_DIFF_OTHER_MISSES] = fdx_sql_diff_other_misses,
    [FDX_STMT_DIFF_OTHER_DISPATCHES] = fdx_sql_diff_other_dispatches,
    [FDX_STMT_PRUNE_MISSES] = fdx_sql_prune_misses,
    [FDX_STMT_PRUNE_DISPATCHES] = fdx_sql_prune_dispatches,
    [FDX_STMT_PRUNE_HISTORY] = fdx_sql_prune_history,
    [FDX_STMT_PRUNE_LOG_INSERT] = fdx_sql_prune_log_insert,
    [FDX_STMT_HISTORY_CONFIG_READ] = fdx_sql_history_config_read,
    [FDX_STMT_HISTORY_CONFIG_WRITE] = fdx_sql_history_config_write,
    [FDX_STMT_HISTORY_ADD] = fdx_sql_history_add,
    [FDX_STMT_HISTORY_ADD_ROWS] = fdx_sql_history_add_rows,
    [FDX_STMT_HISTORY_ORIGIN_ID] = fdx_sql_history_origin_id,
    [FDX_STMT_MERGE_READ_ORIGINS] = fdx_sql_merge_read_origins,
    [FDX_STMT_MERGE_READ_LEDGER] = fdx_sql_merge_read_ledger,
    [FDX_STMT_HISTORY_ROLLUP] = fdx_sql_history_rollup,
    [FDX_STMT_HISTORY_ROLLUP_CLEAR] = fdx_sql_history_rollup_clear,
    [FDX_STMT_REPORT_LEDGER] = fdx_sql_report_ledger,
    [FDX_STMT_REPORT_HEATMAP] = fdx_sql_report_heatmap,
    [FDX_STMT_REPORT_DAILY] = fdx_sql_report_daily,
    [FDX_STMT_REPORT_REGRET] = fdx_sql_report_regret,
    [FDX_STMT_HISTORY_CHECKED] = fdx_sql_history_checked,
    [FDX_STMT_IDENTITY_RELABEL] = fdx_sql_identity_relabel,
    [FDX_STMT_IDENTITY_RELABEL_PRUNED] = fdx_sql_identity_relabel_pruned,
    [FDX_STMT_PRUNE_TOMB_MISS] = fdx_sql_prune_tomb_miss,
    [FDX_STMT_PRUNE_TOMB_DISPATCH] = fdx_sql_prune_tomb_dispatch,
    [FDX_STMT_PRUNE_TOMB_HISTORY] = fdx_sql_prune_tomb_history,
    [FDX_STMT_MERGE_READ_HISTORY] = fdx_sql_merge_read_history,
    [FDX_STMT_MERGE_READ_PRUNED] = fdx_sql_merge_read_pruned,
    [FDX_STMT_MERGE_READ_CONFIG] = fdx_sql_merge_read_config,
    [FDX_STMT_MERGE_STAGE_MISS] = fdx_sql_merge_stage_miss,
    [FDX_STMT_MERGE_STAGE_DISPATCH] = fdx_sql_merge_stage_dispatch,
    [FDX_STMT_MERGE_STAGE_HISTORY] = fdx_sql_merge_stage_history,
    [FDX_STMT_MERGE_STAGE_PRUNED] = fdx_sql_merge_stage_pruned,
    [FDX_STMT_MERGE_STAGE_LEDGER] = fdx_sql_merge_stage_ledger,
    [FDX_STMT_MERGE_STAGE_STORE] = fdx_sql_merge_stage_store,
    [FDX_STMT_MERGE_APPLY_ORIGINS] = fdx_sql_merge_apply_origins,
    [FDX_STMT_MERGE_APPLY_TARGETS] = fdx_sql_merge_apply_targets,
    [FDX_STMT_MERGE_APPLY_SRC] = fdx_sql_merge_apply_src,
    [FDX_STMT_MERGE_APPLY_TGT] = fdx_sql_merge_apply_tgt,
    [FDX_STMT_MERGE_GAINS_SRC] = fdx_sql_merge_gains_src,
    [FDX_STMT_MERGE_GAINS_TGT] = fdx_sql_merge_gains_tgt,
    [FDX_STMT_MERGE_GAINS_DELTA] = fdx_sql_merge_gains_delta,
    [FDX_STMT_MERGE_GAINS_CELL] = fdx_sql_merge_gains_cell,
    [FDX_STMT_MERGE_GAINS_KNOWN] = fdx_sql_merge_gains_known,
    [FDX_STMT_MERGE_APPLY_MISSES] = fdx_sql_merge_apply_misses,
    [FDX_STMT_MERGE_APPLY_DISPATCHES] = fdx_sql_merge_apply_dispatches,
    [FDX_STMT_MERGE_APPLY_LISTS] = fdx_sql_merge_apply_lists,
    [FDX_STMT_MERGE_ORIGIN_HIGH] = fdx_sql_merge_origin_high,
    [FDX_STMT_MERGE_TGT_NEEDED] = fdx_sql_merge_tgt_needed,
    [FDX_STMT_MERGE_STRAY_ORIGINS] = fdx_sql_merge_stray_origins,
    [FDX_STMT_MERGE_APPLY_HISTORY] = fdx_sql_merge_apply_history,
    [FDX_STMT_MERGE_APPLY_LEDGER] = fdx_sql_merge_apply_ledger,
    [FDX_STMT_MERGE_APPLY_STORES] = fdx_sql_merge_apply_stores,
};

void fdx_store_note(fdx_store *s, int kind, const char *fmt, ...)
{
    va_list ap;
    s->notice_kind = kind;
    va_start(ap, fmt);
    vsnprintf(s->notice, sizeof s->notice, fmt, ap);
    va_end(ap);
}

int fdx_store_fail(fdx_store *s, int code, const char *fmt, ...)
{
    if (!s) /* a NULL handle given to the API: nowhere to say why */
        return code;
    va_list ap;
    va_start(ap, fmt);
    fdx_vformat_message(s->errmsg, sizeof s->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

int fdx_store_code_of_sqlite(int rc)
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

/*
 * An SQLite built with SQLITE_USE_URI (Debian's is) takes a name that starts
 * with "file:" for a URI even when opened without SQLITE_OPEN_URI:
 * "file:s.db" named s.db, and "file:s.db?mode=memory" a database in memory,
 * so an ingest into it reported its cells added and kept none. A store's path
 * is a path: a relative one is given as "./" and the path. ":memory:" alone
 * keeps its meaning, a store in memory (fdx.h).
 */
char *fdx_store_file_name(const char *path)
{
    int relative = path[0] != '/' && strcmp(path, ":memory:") != 0;
    size_t n = strlen(path);
    char *name = malloc(n + 3);
    if (!name)
        return NULL;
    if (relative)
        memcpy(name, "./", 2);
    memcpy(name + (relative ? 2 : 0), path, n + 1);
    return name;
}

char *fdx_store_companion(const char *path, const char *suffix)
{
    char *real = fdx_real_path(path);
    const char *file = real ? real : path;
    size_t n = strlen(file) + strlen(suffix) + 1;
    char *name = malloc(n);
    if (name)
        snprintf(name, n, "%s%s", file, suffix);
    free(real);
    return name;
}

/* Which of the store's files id is ("" the database, or a suffix), or NULL:
 * none, a store in memory, or a file that could not be looked at (id NULL;
 * its use says why then). */
static const char *own_part(fdx_store *s, const fdx_file_id *id, const char **db)
{
    *db = sqlite3_db_filename(s->db, "main");
    return id && *db && **db ? fdx_file_db_part(id, *db) : NULL;
}

/* The file path names, or NULL when it cannot be looked at. */
static const fdx_file_id *named(const char *path, fdx_file_id *id)
{
    return fdx_file_identify(path, id) == 0 ? id : NULL;
}

int fdx_store_may_replace(fdx_store *s, const char *path)
{
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
    fdx_file_id id;
    const char *db, *part = own_part(s, named(path, &id), &db);
    if (!part)
        return FDX_OK;
    return fdx_store_fail(s, FDX_EMISUSE,
                          "%s: is the store%s %s%s; it would be replaced: write elsewhere", path,
                          *part ? "'s file" : "", db, part);
}

/* The file fd has open, or NULL when it cannot be looked at. */
static const fdx_file_id *opened(int fd, fdx_file_id *id)
{
    return fd >= 0 && fdx_file_identify_fd(fd, id) == 0 ? id : NULL;
}

int fdx_store_may_stream_to(fdx_store *s, FILE *out)
{
    fdx_file_id id;
    const char *db, *part = own_part(s, opened(fileno(out), &id), &db);
    if (!part)
        return FDX_OK;
    return fdx_store_fail(s, FDX_EMISUSE,
                          "the output is the store%s %s%s, which it would corrupt: write elsewhere",
                          *part ? "'s file" : "", db, part);
}

int fdx_store_may_read(fdx_store *s, int fd, const char *name)
{
    fdx_file_id id;
    const char *db, *part = own_part(s, opened(fd, &id), &db);
    if (!part)
        return FDX_OK;
    return fdx_store_fail(s, FDX_EMISUSE, "%s: is the store%s %s%s, not a feed to ingest", name,
                          *part ? "'s file" : "", db, part);
}

/*
 * immutable=1 is how SQLite reads a WAL store where its shared-memory file
 * cannot be created (read-only media or directory). An absolute path gets an empty authority
 * ("file://" + path), so that a path starting with "//" is not taken for one.
 */
char *fdx_store_immutable_uri(const char *path)
{
    size_t n = strlen(path);
    char *uri = malloc(n * 3 + 32);
    if (!uri)
        return NULL;
    char *p = uri + sprintf(uri, path[0] == '/' ? "file://" : "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if (*c == '%' || *c == '?' || *c == '#' || *c < 0x20)
            p += sprintf(p, "%%%02X", *c);
        else
            *p++ = (char)*c;
    }
    strcpy(p, "?immutable=1");
    return uri;
}

static int same_time(struct timespec a, struct timespec b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

int fdx_store_read_verdict(fdx_store *s, int rc)
{
    struct stat st;
    const struct stat *was = &s->opened_as;
    if (!s->immutable ||
        (fstat(s->immutable_fd, &st) == 0 && st.st_size == was->st_size &&
         same_time(st.st_mtim, was->st_mtim) && same_time(st.st_ctim, was->st_ctim)))
        return rc;
    return fdx_store_fail(s, FDX_EBUSY,
                          "%s: changed while it was read: where it lies no lock file can be "
                          "made, so it is read without locks, and a writer wrote to it "
                          "meanwhile; open it again",
                          s->path);
}

int fdx_store_other_verdict(fdx_store *s, fdx_store *other, int rc)
{
    if (other && fdx_store_read_verdict(other, FDX_OK) != FDX_OK)
        return fdx_store_fail(s, FDX_EBUSY, "%s", other->errmsg);
    return rc;
}

int fdx_store_shm_refused(int rc)
{
    return rc == SQLITE_READONLY_DIRECTORY || rc == SQLITE_READONLY_CANTINIT;
}

/* Why a writer's store cannot be written (errno of the check), or 0: SQLite
 * opens read-only a file it cannot open for writing (a read-only file
 * system, a file this user may not write), and then fails on what a writer
 * needs, such as the -shm it cannot make, saying little. */
static int file_unwritable(fdx_store *s)
{
    const char *file = s->db ? sqlite3_db_filename(s->db, "main") : NULL;
    if (s->readonly || !file || !*file || sqlite3_db_readonly(s->db, "main") != 1)
        return 0;
    return access(file, W_OK) == 0 ? 0 : errno;
}

/* Whether the directory of the store's file refuses this process a new file. */
static int dir_unwritable(fdx_store *s)
{
    const char *file = s->db ? sqlite3_db_filename(s->db, "main") : NULL;
    char *dir = file && *file ? strdup(file) : NULL;
    int unwritable = dir && access(dirname(dir), W_OK | X_OK) != 0;
    free(dir);
    return unwritable;
}

/* A hot journal, which only a writable connection rolls back. SQLite opens a
 * file it cannot write read-only: a writer gets this too where the store
 * cannot be written, and then cannot be the fix. */
static int left_journal(fdx_store *s, int code, const char *what)
{
    char *journal = fdx_store_companion(s->path, "-journal");
    const char *j = journal ? journal : "its -journal";
    /* a writable connection meets it only in an open as it is, which looks
     * before its first read (hot_journal_refused) */
    if (s->readonly || (s->db && sqlite3_db_readonly(s->db, "main") == 0))
        fdx_store_fail(s, code,
                       "%s: %s: a writer was stopped during its commit and left %s behind, "
                       "which %s does not roll back; the next writer to open the store does "
                       "(fdx-ingest %s /dev/null). SQLite cannot tell whose journal it is: "
                       "one copied from another store would be played into this one, so move "
                       "such a file away instead",
                       s->path, what, j,
                       s->readonly ? "a read-only open" : "an open as it is (a dry run)", s->path);
    else
        fdx_store_fail(s, code,
                       "%s: %s: a writer was stopped during its commit and left %s behind, "
                       "which must be rolled back, and the store cannot be written here (a "
                       "read-only file or location): copy the store with its -journal to "
                       "writable storage and open the copy there once (fdx-ingest COPY "
                       "/dev/null); a -journal copied from another store would be played into "
                       "this one, so move such a file away instead",
                       s->path, what, j);
    free(journal);
    return code;
}

int fdx_store_fail_sqlite(fdx_store *s, int rc, const char *what)
{
    /* a read without locks that failed because a writer changed the file */
    if (fdx_store_read_verdict(s, FDX_OK) != FDX_OK)
        return FDX_EBUSY;
    /* a store read as it was when opened, which a writer turned to WAL mode
     * meanwhile: where this reader can make no -shm, only a new open (which
     * reads it without locks) can follow */
    if (s->readonly && !s->immutable && fdx_store_shm_refused(rc))
        return fdx_store_fail(s, FDX_EBUSY,
                              "%s: %s: changed while it was read: a writer turned it to WAL "
                              "mode, which where it lies this reader can follow only by opening "
                              "it again; open it again",
                              s->path, what);
    int code = fdx_store_code_of_sqlite(rc);
    /* Calls such as sqlite3_db_cacheflush return a failure without
     * setting the connection's message. */
    const char *msg =
        s->db && sqlite3_errcode(s->db) != SQLITE_OK ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    if (code == FDX_EBUSY)
        return fdx_store_fail(s, code,
                              "%s: %s: locked by another process or handle for more than %d ms",
                              s->path, what, s->busy_ms);
    if (rc == SQLITE_READONLY_ROLLBACK)
        return left_journal(s, code, what);
    int unwritable = file_unwritable(s);
    if (unwritable)
        return fdx_store_fail(s, code, "%s: %s: %s (the store cannot be written here: %s)", s->path,
                              what, msg, strerror(unwritable));
    if ((rc & 0xff) == SQLITE_READONLY && !s->readonly && dir_unwritable(s))
        return fdx_store_fail(s, code,
                              "%s: %s: %s (its directory cannot be written, where a writer keeps "
                              "the store's -wal and -shm, or its -journal)",
                              s->path, what, msg);
    if (code == FDX_ENOTSTORE)
        return fdx_store_fail(s, code, "%s: %s: %s (the store is corrupt or not a database)",
                              s->path, what, msg);
    if (rc == SQLITE_CONSTRAINT_NOTNULL && strstr(msg, "_cell.count")) /* the upserts' NULL arm */
        return fdx_store_fail(s, FDX_EDATA,
                              "%s: %s: a stored cell's count is below 1, which fdx never writes "
                              "(the store was edited): nothing written",
                              s->path, what);
    /* "disk I/O error" or "unable to open database file" alone hides the
     * cause (a full disk where a reader makes its -shm, a quota, a vanished
     * device, a file its user may not read): the system's says it */
    int os = s->db ? sqlite3_system_errno(s->db) : 0;
    int sys = (rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_CANTOPEN;
    /* a short read failed no system call: errno is an earlier call's */
    if (sys && rc != SQLITE_IOERR_SHORT_READ && os)
        return fdx_store_fail(s, code, "%s: %s: %s (%s)", s->path, what, msg, strerror(os));
    return fdx_store_fail(s, code, "%s: %s: %s", s->path, what, msg);
}

int fdx_store_usable(fdx_store *s)
{
    if (!s)
        return FDX_EMISUSE;
    if (s->open_failed)
        return fdx_store_fail(s, FDX_EMISUSE,
                              "%s: this handle's open failed, so it holds no store: close it",
                              s->path);
    if (s->in_callback) /* it would reset the statement being stepped, or commit half a call */
        return fdx_store_fail(s, FDX_EMISUSE,
                              "%s: called from a callback of a call still running on this handle",
                              s->path);
    if (s->forks != fdx_forks_seen())
        return fdx_store_fail(s, FDX_EMISUSE,
                              "%s: this handle was opened in the process this one was forked "
                              "from, whose connection it shares: open the store again in this "
                              "process",
                              s->path);
    return FDX_OK;
}

int fdx_store_stmt(fdx_store *s, fdx_stmt_id id, sqlite3_stmt **out)
{
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
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

int fdx_store_is_own_file(const fdx_store *s, const char *path)
{
    struct stat st;
    return s->on_disk && stat(path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino;
}

int64_t fdx_store_now_ms(void)
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
int fdx_store_step_retrying(fdx_store *s, sqlite3_stmt *st)
{
    int64_t deadline = fdx_store_now_ms() + s->busy_ms;
    int pause_ms = 1;
    for (;;) {
        int rc = sqlite3_step(st);
        if ((rc & 0xff) != SQLITE_BUSY || fdx_store_now_ms() >= deadline)
            return rc;
        sqlite3_reset(st);
        struct timespec ts = {0, (long)pause_ms * 1000000L};
        nanosleep(&ts, NULL);
        pause_ms = pause_ms < 64 ? pause_ms * 2 : 64;
    }
}

int fdx_store_exec(fdx_store *s, fdx_stmt_id id)
{
    sqlite3_stmt *st = NULL;
    int rc = fdx_store_stmt(s, id, &st);
    if (rc != FDX_OK)
        return rc;
    rc = fdx_store_step_retrying(s, st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(s, rc, "running a statement");
    return FDX_OK;
}

int fdx_store_step_done(fdx_store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(s, rc, what);
}

int fdx_store_has_cells(fdx_store *s, int *has)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_HAS_CELLS, &st);
    if (rc != FDX_OK)
        return rc;
    rc = sqlite3_step(st);
    *has = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? FDX_OK : fdx_store_fail_sqlite(s, rc, "counting cells");
}

int fdx_store_need_txn(fdx_store *s)
{
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (!s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "no transaction is open (call fdx_store_begin)");
    if (s->txn_broken == FDX_TXN_BROKEN_PATH)
        return fdx_store_fail(s, FDX_EMISUSE,
                              "%s: an all-or-nothing ingest failed in this transaction, which "
                              "can only be rolled back (fdx_store_rollback)",
                              s->path);
    if (s->txn_broken)
        return fdx_store_fail(s, FDX_EMISUSE,
                              "%s: a write failed partway through this transaction, which can "
                              "only be rolled back (fdx_store_rollback)",
                              s->path);
    if (sqlite3_get_autocommit(s->db)) { /* a failed statement made SQLite roll it all back */
        s->txn_broken = 1;
        return fdx_store_fail(s, FDX_EMISUSE,
                              "%s: a write failed and SQLite rolled this transaction back; it "
                              "can only be rolled back (fdx_store_rollback)",
                              s->path);
    }
    return FDX_OK;
}

int fdx_store_script(fdx_store *s, const char *sql, const char *what)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        return FDX_OK;
    rc = fdx_store_fail(s, fdx_store_code_of_sqlite(rc), "%s: %s: %s", s->path, what,
                        msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return rc;
}

int fdx_store_reads_cells(fdx_store *s)
{
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
    if (!s->backend || s->readonly)
        return FDX_OK;
    return fdx_store_fail(s, FDX_EMISUSE,
                          "%s: a writer's handle holds only what it writes: read the store "
                          "through a read-only handle (FDX_OPEN_READONLY)",
                          s->path);
}

int fdx_store_in_read(fdx_store *s, int (*body)(fdx_store *s, void *ctx), void *ctx)
{
    int rc = fdx_store_reads_cells(s);
    if (rc != FDX_OK)
        return rc;
    int own = sqlite3_get_autocommit(s->db);
    rc = own ? fdx_store_exec(s, FDX_STMT_BEGIN_READ) : FDX_OK;
    if (rc != FDX_OK)
        return rc;
    rc = body(s, ctx);
    if (own) {
        char saved[sizeof s->errmsg];
        memcpy(saved, s->errmsg, sizeof saved);
        int end = fdx_store_exec(s, rc == FDX_OK ? FDX_STMT_COMMIT : FDX_STMT_ROLLBACK);
        if (rc != FDX_OK)
            memcpy(s->errmsg, saved, sizeof saved);
        rc = rc != FDX_OK ? rc : end;
    }
    return fdx_store_read_verdict(s, rc);
}

void fdx_store_bind_named_int64(sqlite3_stmt *st, const char *name, int64_t v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0)
        sqlite3_bind_int64(st, i, v);
}

void fdx_store_bind_named_text(sqlite3_stmt *st, const char *name, const char *text)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0 && text)
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
}
