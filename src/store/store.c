/*
 * Opening a store (creation, identity and schema migration), closing it, and
 * write transactions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "codec/record_cell.h"
#include "common/forks.h"
#include "common/fsutil.h"
#include "common/open_stores.h"
#include "sql_text.h"
#include "store/backend.h"
#include "store/conn.h"
#include "store/history.h"
#include "store/identity.h"
#include "store/ledger.h"
#include "store/schema.h"
#include "store/store.h"
#include "store/store_check.h"
#include "store/store_flush.h"
#include "store/vfs_guard.h"

/* PRAGMA application_id of every fdx store: "fdx1". */
#define FDX_APPLICATION_ID  0x66647831
#define FDX_DEFAULT_BUSY_MS 10000

#define FDX_SCHEMA_VERSION fdx_schema_version()

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
        rc = fdx_store_step_retrying(s, st);
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

/* A file that holds nothing yet: a store about to be created in it. */
static int is_empty(const identity *id)
{
    return id->app_id == 0 && id->version == 0 && id->objects == 0;
}

static int check_identity(fdx_store *s, const identity *id)
{
    if (!is_empty(id) && id->app_id != FDX_APPLICATION_ID)
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: not an fdx store (an SQLite database of another kind)", s->path);
    if (id->version < 0)
        return fdx_store_fail(s, FDX_ENOTSTORE, "%s: not an fdx store (store schema version %lld)",
                              s->path, (long long)id->version);
    if (id->version > FDX_SCHEMA_VERSION)
        return fdx_store_fail(s, FDX_ESCHEMA,
                              "%s: written by a newer fdx (store schema version %lld; this "
                              "build reads up to %d): upgrade fdx",
                              s->path, (long long)id->version, FDX_SCHEMA_VERSION);
    return FDX_OK;
}

/* What a migration made of an older store's rows is what the readers will
 * check (the ledger first: the history is made from it): a store they would
 * refuse is left as it was, and the refusal says it was the migration's. */
static int check_migrated(fdx_store *s, int64_t from)
{
    int rc = fdx_check_ledger(s);
    if (rc == FDX_OK)
        rc = fdx_check_history(s);
    if (rc == FDX_OK)
        return rc;
    char why[sizeof s->errmsg];
    snprintf(why, sizeof why, "%s", s->errmsg);
    return fdx_store_fail(s, rc,
                          "%s (what migrating it from schema %lld to %d makes of it; it is "
                          "left at schema %lld)",
                          why, (long long)from, FDX_SCHEMA_VERSION, (long long)from);
}

/* Brings the schema up to date inside the open transaction (another process
 * may have done it meanwhile), checking the result. */
static int migrate_in_txn(fdx_store *s)
{
    identity id;
    char err[512];
    int rc = read_identity(s, &id);
    if (rc == FDX_OK)
        rc = check_identity(s, &id);
    if (rc == FDX_OK && id.version == FDX_SCHEMA_VERSION)
        return FDX_OK;
    /* What the migrations change must be what they made: a trigger or a
     * foreign key of the store's own would run with them. */
    if (rc == FDX_OK && id.objects && id.version == 0)
        rc = fdx_store_fail(s, FDX_ENOTSTORE,
                            "%s: not an fdx store (it holds objects but no fdx schema)", s->path);
    else if (rc == FDX_OK && id.objects)
        rc = fdx_schema_check_older(s, id.version);
    if (rc == FDX_OK) {
        struct stat st;
        s->filled = is_empty(&id) && !s->created && s->on_disk && stat(s->path, &st) == 0 &&
                    st.st_size == 0;
        int src = is_empty(&id) ? fdx_schema_create(s->db, err, sizeof err)
                                : fdx_schema_migrate(s->db, id.version, err, sizeof err);
        if (src != SQLITE_OK)
            rc = fdx_store_fail(s, fdx_store_code_of_sqlite(src), "%s: %s", s->path, err);
    }
    /* A file that held nothing now holds exactly the image, made in this
     * transaction: only a store that had objects needs comparing with it. */
    if (rc == FDX_OK && id.objects)
        rc = fdx_schema_check(s);
    if (rc == FDX_OK && id.objects)
        rc = check_migrated(s, id.version);
    if (rc == FDX_OK)
        rc = fdx_identity_check_file(s, 0); /* a new store: its identity is this file's */
    return rc;
}

/* The same in a transaction of its own. */
static int migrate(fdx_store *s)
{
    int rc = fdx_store_exec(s, FDX_STMT_BEGIN_WRITE);
    if (rc == FDX_OK)
        rc = migrate_in_txn(s);
    if (rc != FDX_OK) {
        sqlite3_exec(s->db, fdx_sql_rollback, NULL, NULL, NULL);
        return rc;
    }
    return fdx_store_exec(s, FDX_STMT_COMMIT);
}

/* sqlite3_exec with the same retrying as step_retrying; sqlite3_errmsg
 * tells why it failed. */
static int exec_retrying(fdx_store *s, const char *sql)
{
    int64_t deadline = fdx_store_now_ms() + s->busy_ms;
    for (;;) {
        int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
        if ((rc & 0xff) != SQLITE_BUSY || fdx_store_now_ms() >= deadline)
            return rc;
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
}

/* A store opened as it is: neither made from an empty file nor migrated. */
static int as_found(fdx_store *s, const identity *id, int older_code, const char *open)
{
    if (is_empty(id))
        return fdx_store_fail(s, FDX_ENOTSTORE, "%s: not an fdx store (it is empty)", s->path);
    if (id->version < FDX_SCHEMA_VERSION)
        return fdx_store_fail(s, older_code,
                              "%s: store schema version %lld needs migrating to %d, which %s "
                              "cannot do: open it writable once (fdx-ingest %s /dev/null "
                              "migrates it)",
                              s->path, (long long)id->version, FDX_SCHEMA_VERSION, open, s->path);
    return FDX_OK;
}

/* A store of an older version whose tables are the current ones: only its
 * views are older, and the readers read the tables. */
static int views_behind(const identity *id)
{
    return !is_empty(id) && id->version >= fdx_schema_tables_since() &&
           id->version < FDX_SCHEMA_VERSION;
}

static int configure(fdx_store *s, int flags)
{
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, s->busy_ms);
    /* A store may come from another host: its schema may not be changed
     * through SQL, and its views and triggers may call no function with side
     * effects. */
    if (sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL) != SQLITE_OK ||
        sqlite3_db_config(s->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL) != SQLITE_OK)
        return fdx_store_fail(s, FDX_ERROR, "%s: configuring the connection: %s", s->path,
                              sqlite3_errmsg(s->db));
    identity id;
    int rc = read_identity(s, &id);
    s->found_store = rc == FDX_OK && !is_empty(&id);
    if (rc == FDX_OK)
        rc = check_identity(s, &id);
    if (rc == FDX_OK) /* a header's, even of a file that holds nothing yet */
        rc = fdx_schema_check_encoding(s);
    if (rc != FDX_OK)
        return rc;
    if (flags & FDX_OPEN_READONLY) {
        if (views_behind(&id)) /* an older fdx's store, the same tables */
            return fdx_schema_check_older(s, id.version);
        rc = as_found(s, &id, FDX_EREADONLY, "a read-only open");
        return rc == FDX_OK ? fdx_schema_check(s) : rc;
    }
    int as_is = (flags & FDX_OPEN_AS_IS) != 0;
    /* Nor does its close move the store's -wal into the file, as the last
     * connection's close would: a dry run leaves the store's files as they
     * were, as a reader does. */
    if (as_is &&
        sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL) != SQLITE_OK)
        return fdx_store_fail(s, FDX_ERROR, "%s: configuring the connection: %s", s->path,
                              sqlite3_errmsg(s->db));
    if (as_is && views_behind(&id) && (rc = fdx_schema_check_older(s, id.version)) != FDX_OK)
        return rc;
    if (as_is && !views_behind(&id) &&
        (rc = as_found(s, &id, FDX_ERROR, "an open as it is (a dry run)")) != FDX_OK)
        return rc;
    if (id.version == FDX_SCHEMA_VERSION && (rc = fdx_schema_check(s)) != FDX_OK)
        return rc;
    /* A new store's first commit writes every page it will hold: through
     * a rollback journal each is written once, through WAL twice (the log,
     * then the checkpoint). No reader can have waited for data it held. An
     * older store becomes WAL after its first commit too: switching marks
     * the file, and one its check refuses must be left as it was. A store
     * opened as it is keeps its journal mode, an older one's included. */
    s->wal_pending = !as_is && (is_empty(&id) || id.version < FDX_SCHEMA_VERSION);
    int src = is_empty(&id) ? exec_retrying(s, fdx_sql_page_size) : SQLITE_OK;
    if (src == SQLITE_OK && !s->wal_pending && !as_is)
        src = exec_retrying(s, fdx_sql_journal_wal);
    if (src == SQLITE_OK)
        src = exec_retrying(s, fdx_sql_connection);
    if (src != SQLITE_OK)
        return fdx_store_fail_sqlite(s, src, "configuring the connection");
    /* A store whose views alone are older is made current in the first
     * write's transaction (fdx_store_begin): a command that fails, or has
     * nothing to do, leaves it as it was, readable by the fdx that made it. */
    if (!as_is && views_behind(&id)) {
        s->views_pending = 1;
        return fdx_schema_check_older(s, id.version);
    }
    return id.version < FDX_SCHEMA_VERSION && !as_is ? migrate(s) : FDX_OK;
}

static int close_db(fdx_store *s);

/* The file's state for fdx_store_read_verdict, once no change can share its
 * times: a file changed within the clock's last tick could change again
 * without its times moving, so such a file is looked at again a tick later
 * (a few times at most: a writer busy with it is caught by the verdict). */
static int settled_stat(int fd, struct stat *st)
{
    const long tick_ns = 20 * 1000 * 1000;
    for (int tries = 0;; tries++) {
        struct timespec now, sleep = {0, tick_ns};
        if (fstat(fd, st) != 0 || clock_gettime(CLOCK_REALTIME, &now) != 0)
            return -1;
        /* ctime moves with every change of the file */
        long long age_ns = (long long)(now.tv_sec - st->st_ctim.tv_sec) * 1000000000LL +
                           (now.tv_nsec - st->st_ctim.tv_nsec);
        if (age_ns > tick_ns || tries == 5)
            return 0;
        nanosleep(&sleep, NULL);
    }
}

/* Whether the open failed because the -shm file of a WAL store cannot be
 * made or used where the store lies: read-only media (CANTOPEN), or a
 * directory this reader cannot write. */
static int no_shm_here(sqlite3 *db)
{
    int rc = sqlite3_extended_errcode(db);
    return (rc & 0xff) == SQLITE_CANTOPEN || fdx_store_shm_refused(rc);
}

/*
 * Read-only media, or a directory the reader cannot write: SQLite cannot
 * create the -shm file a WAL store needs. Without a -wal (or with an empty
 * one) everything is in the main file, which immutable=1 reads. A -wal with
 * commits in it cannot be read without a -shm, and reading the main file
 * alone would give stale data: refused. immutable=1 takes no locks, so a
 * writer that may still come along (the directory's owner) is caught by
 * the file's change (fdx_store_read_verdict), not kept out.
 */
static int reopen_immutable(fdx_store *s, const char *path)
{
    struct stat st;
    char *wal = fdx_store_companion(path, "-wal");
    if (!wal)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    if (stat(wal, &st) == 0 && st.st_size > 0) {
        fdx_store_fail(s, FDX_EIO,
                       "%s: cannot be read here: its last commits are in %s, which SQLite "
                       "reads only through a -shm file beside it that it can write, and "
                       "none can be made or written here (a read-only location, or "
                       "another user's files); copy the store with its -wal to writable "
                       "storage, or open it once where it can be written",
                       path, wal);
        free(wal);
        return FDX_EIO;
    }
    free(wal);
    char *uri = fdx_store_immutable_uri(path);
    if (!uri)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || settled_stat(fd, &s->opened_as) != 0) {
        int e = errno;
        free(uri);
        if (fd >= 0)
            close(fd);
        return fdx_store_fail(s, FDX_EIO, "%s: %s", path, strerror(e));
    }
    close_db(s);
    s->immutable = 1; /* close_db closes the file watched from here on */
    s->immutable_fd = fd;
    s->on_disk = 1; /* the file opened is the one watched */
    s->dev = s->opened_as.st_dev;
    s->ino = s->opened_as.st_ino;
    int rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc != SQLITE_OK)
        return fdx_store_fail_sqlite(s, rc, "opening");
    rc = configure(s, FDX_OPEN_READONLY);
    if (rc == FDX_OK && !fdx_store_is_own_file(s, path))
        return fdx_store_fail(s, FDX_EBUSY, "%s: was replaced while it was opened; open it again",
                              path);
    return rc;
}

/* The files SQLite keeps beside a store. */
static const char *const companion_suffixes[] = {"-wal", "-shm", "-journal"};
enum { N_COMPANIONS = sizeof companion_suffixes / sizeof companion_suffixes[0] };

/* SQLite opens a store's companions itself: a FIFO among them made every
 * open wait for a writer that never comes (a reader's look for a hot
 * journal opens it), and one that is a directory or a symlink (which SQLite
 * refuses to follow) failed with a message that named another cause. */
static int companions_usable(fdx_store *s, const char *path)
{
    int rc = FDX_OK;
    for (size_t i = 0; rc == FDX_OK && i < N_COMPANIONS; i++) {
        struct stat st;
        char *name = fdx_store_companion(path, companion_suffixes[i]);
        if (!name)
            rc = fdx_store_fail(s, FDX_ENOMEM, "out of memory");
        else if (lstat(name, &st) == 0 && !S_ISREG(st.st_mode))
            rc = fdx_store_fail(s, FDX_EIO,
                                "%s: is %s, where SQLite keeps a file of the store's own; remove "
                                "it",
                                name,
                                S_ISDIR(st.st_mode)   ? "a directory"
                                : S_ISLNK(st.st_mode) ? "a symbolic link"
                                                      : "not a regular file (a FIFO, socket or "
                                                        "device)");
        free(name);
    }
    return rc;
}

/* Whether path can be opened as flags ask: FDX_OK, with *exists, or the
 * failure, explained. */
static int look_at(fdx_store *s, const char *path, int flags, int *exists)
{
    struct stat st;
    *exists = stat(path, &st) == 0;
    if (*exists && S_ISDIR(st.st_mode))
        return fdx_store_fail(s, FDX_ENOTSTORE, "%s: is a directory, not an fdx store", path);
    /* SQLite would wait in open(2) on a FIFO for a writer that never comes. */
    if (*exists && !S_ISREG(st.st_mode))
        return fdx_store_fail(s, FDX_ENOTSTORE, "%s: is not a regular file, not an fdx store",
                              path);
    if (*exists)
        return companions_usable(s, path);
    if (errno != ENOENT || !(flags & FDX_OPEN_CREATE))
        return fdx_store_fail(s, errno == ENOENT ? FDX_ENOENT : FDX_EIO, "%s: %s", path,
                              errno == ENOENT ? "no such store" : strerror(errno));
    char dir[512];
    if (fdx_parent_missing(path, dir, sizeof dir))
        return fdx_store_fail(s, FDX_ENOENT, "%s: cannot create the store: no such directory '%s'",
                              path, dir);
    return companions_usable(s, path);
}

/* SQLite refuses a database whose full path (from /, links resolved) leaves
 * no room for "-journal" within its unix VFS's 512 bytes (MAX_PATHNAME),
 * saying only "unable to open database file". */
#define FDX_SQLITE_PATH_LIMIT (512 - 8)

static int too_long_for_sqlite(fdx_store *s, const char *path)
{
    if (strcmp(path, ":memory:") == 0)
        return 0;
    char *full = fdx_real_path(path); /* NULL: the open says why */
    size_t n = full ? strlen(full) : 0;
    free(full);
    if (n <= FDX_SQLITE_PATH_LIMIT)
        return 0;
    fdx_store_fail(s, FDX_EIO,
                   "%s: SQLite opens files whose full path (links resolved) is at most %d "
                   "bytes, and this one's is longer: use a shorter path",
                   path, FDX_SQLITE_PATH_LIMIT);
    return 1;
}

/*
 * SQLite opens read-only a file it cannot open for writing. A writer whose
 * file was removed between its look at the path and its open, and made again
 * there since by another writer, got such a connection to a file it can
 * write: it took the other's new store, still empty, for one of its own to
 * make, failed to, and emptied it at close (its BEGIN EXCLUSIVE, on a
 * read-only connection, takes no write lock), with the other's journal, in
 * the middle of its commit. Such an open is made again.
 */
static int opened_read_only_by_race(fdx_store *s, const char *path, int flags)
{
    return !(flags & FDX_OPEN_READONLY) && sqlite3_db_readonly(s->db, "main") == 1 &&
           access(path, W_OK) == 0;
}

/* Opens the file, and creates it only when it was not there: a file that was
 * there is opened without SQLITE_OPEN_CREATE, so that when it goes before
 * the open (the writer that created it removed it, unused), the open fails
 * and the path is looked at again, and the handle that makes the file knows
 * it made it (and removes it if it fails before its first commit). name is
 * path as SQLite is to be given it. */
static int open_named(fdx_store *s, const char *path, const char *name, int flags)
{
    int how = SQLITE_OPEN_NOMUTEX |
              (flags & FDX_OPEN_READONLY ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE);
    for (int look = 0;; look++) {
        int exists, rc = look_at(s, path, flags, &exists);
        if (rc != FDX_OK)
            return rc;
        s->created = !exists;
        rc =
            sqlite3_open_v2(name, &s->db, how | (exists ? 0 : SQLITE_OPEN_CREATE), fdx_vfs_guard());
        if (rc == SQLITE_OK && (look == 2 || !opened_read_only_by_race(s, path, flags)))
            return FDX_OK;
        if (rc == SQLITE_OK) {
            sqlite3_close(s->db);
            s->db = NULL;
            continue;
        }
        if (!exists || (rc & 0xff) != SQLITE_CANTOPEN || look == 2 || access(path, F_OK) == 0)
            return fdx_store_fail_sqlite(s, rc, "opening");
        sqlite3_close(s->db);
        s->db = NULL;
    }
}

static int open_file(fdx_store *s, const char *path, int flags)
{
    char *name = fdx_store_file_name(path);
    if (!name)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    int rc = open_named(s, path, name, flags);
    free(name);
    return rc;
}

/* A writable connection rolls back a hot journal (a writer stopped during
 * its commit) on its first read, before anything can refuse the store: an
 * open as it is (a dry run changes nothing) refuses it first, as a reader
 * does, by reading the header through a read-only connection. Where the
 * store cannot be written, the connection is read-only already, and its
 * first read refuses it. */
static int hot_journal_refused(fdx_store *s, const char *path)
{
    struct stat st;
    char *journal = fdx_store_companion(path, "-journal");
    int hot = journal && stat(journal, &st) == 0 && st.st_size > 0 &&
              sqlite3_db_readonly(s->db, "main") == 0;
    free(journal);
    sqlite3 *probe = NULL;
    const char *name = sqlite3_db_filename(s->db, "main"); /* the file opened */
    hot = hot && name &&
          sqlite3_open_v2(name, &probe, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) ==
              SQLITE_OK &&
          sqlite3_exec(probe, fdx_sql_identity, NULL, NULL, NULL) != SQLITE_OK &&
          sqlite3_extended_errcode(probe) == SQLITE_READONLY_ROLLBACK;
    sqlite3_close(probe);
    return hot ? fdx_store_fail_sqlite(s, SQLITE_READONLY_ROLLBACK, "reading the store header")
               : FDX_OK;
}

/* A file of no bytes beside a -wal that holds some: SQLite deletes such a
 * -wal on the first read of the file (through any connection, a reader's
 * too), and whatever commits it held with it; a writer creating the file
 * does the same. It is refused untouched: a store copied without the pages
 * its -wal held, or a -wal left by another file of that name. */
static int wal_of_an_empty_file(fdx_store *s, const char *path, int flags)
{
    struct stat st, wst;
    char *real = fdx_real_path(path); /* SQLite keeps the -wal beside the file it resolved */
    char *wal = fdx_store_companion(real ? real : path, "-wal");
    int there = stat(path, &st) == 0, missing = !there && errno == ENOENT;
    int refused = wal &&
                  ((there && S_ISREG(st.st_mode) && st.st_size == 0) ||
                   (missing && (flags & FDX_OPEN_CREATE))) &&
                  stat(wal, &wst) == 0 && S_ISREG(wst.st_mode) && wst.st_size > 0;
    long long wal_bytes = refused ? (long long)wst.st_size : 0;
    free(wal);
    free(real);
    if (!refused)
        return FDX_OK;
    return fdx_store_fail(s, FDX_ENOTSTORE,
                          "%s: the file is %s but its -wal holds %lld bytes, which opening it "
                          "would delete: copy the store's file with its -wal, or move the -wal "
                          "away",
                          path, there ? "empty" : "missing", wal_bytes);
}

/* A file of no bytes at path: what a writer that made its store in a file
 * holding nothing and failed leaves there (undo_file). */
static int holds_no_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size == 0;
}

/* The file the connection reads holds no object (no bytes, or pages and no
 * object: what SQLite leaves of a database that holds nothing). */
static int holds_no_object(fdx_store *s)
{
    identity id;
    return read_identity(s, &id) == FDX_OK && is_empty(&id);
}

/* Whether a writer that may create the store failed to set up its
 * connection because the file it opened is gone from its path, or holds
 * nothing again: another writer created the store too (or made it in the
 * file while it held nothing), failed, and removed (or emptied) it as unused
 * (remove_if_unused), before this one wrote anything. Emptied, it may hold a
 * page and no object by then (a third writer switched it to WAL): this one
 * found the store, then checked its schema against a file that no longer
 * held it ("the table cell_history is missing"). Opening again makes it
 * anew. */
static int removed_under_open(fdx_store *s, const char *path, int flags)
{
    return (flags & FDX_OPEN_CREATE) && !s->readonly &&
           (!fdx_store_is_own_file(s, path) ||
            (s->found_store && (holds_no_bytes(path) || holds_no_object(s))));
}

static int open_db(fdx_store *s, const char *path, int flags)
{
    struct stat st;
    if ((flags & (FDX_OPEN_CREATE | FDX_OPEN_READONLY)) == (FDX_OPEN_CREATE | FDX_OPEN_READONLY))
        return fdx_store_fail(s, FDX_EMISUSE, "FDX_OPEN_CREATE and FDX_OPEN_READONLY conflict");
    s->readonly = (flags & FDX_OPEN_READONLY) != 0;
    if (too_long_for_sqlite(s, path))
        return FDX_EIO;
    if (wal_of_an_empty_file(s, path, flags) != FDX_OK)
        return FDX_ENOTSTORE;
    for (int tries = 0;; tries++) {
        int rc = open_file(s, path, flags);
        if (rc == FDX_OK && (flags & FDX_OPEN_AS_IS))
            rc = hot_journal_refused(s, path);
        if (rc != FDX_OK)
            return rc;
        s->on_disk = stat(path, &st) == 0;
        s->dev = s->on_disk ? st.st_dev : 0;
        s->ino = s->on_disk ? st.st_ino : 0;
        rc = configure(s, flags);
        if (rc != FDX_OK && s->readonly && no_shm_here(s->db))
            return reopen_immutable(s, path);
        if (rc == FDX_OK || tries == 3 || !removed_under_open(s, path, flags))
            return rc;
        close_db(s);
    }
}

/* A store kept by another backend: connect, then open a working copy and
 * let the backend fill it. The copy is always writable; the handle is
 * read-only when asked to be. */
static int open_backend(fdx_store *s, const fdx_backend_ops *be, int flags)
{
    char working[4096];
    if ((flags & (FDX_OPEN_CREATE | FDX_OPEN_READONLY)) == (FDX_OPEN_CREATE | FDX_OPEN_READONLY))
        return fdx_store_fail(s, FDX_EMISUSE, "FDX_OPEN_CREATE and FDX_OPEN_READONLY conflict");
    s->backend = be;
    int rc = be->connect(s, flags, working, sizeof working);
    if (rc != FDX_OK)
        return rc;
    char *msg = NULL;
    rc = open_db(s, working, FDX_OPEN_CREATE);
    s->on_disk = 0;     /* the working copy is not the store: nothing to watch */
    s->wal_pending = 0; /* nor to share: it keeps its rollback journal */
    if (rc == FDX_OK && sqlite3_exec(s->db, fdx_sql_working_copy, NULL, NULL, &msg) != SQLITE_OK) {
        rc = fdx_store_fail(s, FDX_ERROR, "%s: configuring the working copy: %s", s->path,
                            msg ? msg : "error");
        sqlite3_free(msg);
    }
    s->readonly = (flags & FDX_OPEN_READONLY) != 0;
    return rc == FDX_OK ? be->fill(s) : rc;
}

/* The store is open in this process (common/open_stores.h), by the name of
 * the file SQLite opened, beside which its -shm is. */
static int note_open(fdx_store *s, const char *path)
{
    char *real = fdx_real_path(path);
    int rc = fdx_open_stores_add(s, real ? real : path);
    free(real);
    return rc == 0 ? FDX_OK : fdx_store_fail(s, FDX_ENOMEM, "out of memory");
}

int fdx_store_open(const char *path, int flags, fdx_store **out)
{
    return fdx_store_open_v2(path, flags, FDX_DEFAULT_BUSY_MS, out);
}

/* A handle, made before this process was forked from its parent, that held
 * a transaction's write lock at the fork (or one closed here since). */
static int locked_at_fork(const void *owner)
{
    const fdx_store *h = owner;
    return !h || (h->forks != fdx_forks_seen() && h->in_txn);
}

/* SQLite keeps one record of the locks held on a file for all of a
 * process's connections to it, and a fork copies it: where the parent's
 * handle held the write lock, every connection the child opens to that file
 * waits for a lock no one will release. */
static int write_after_fork(fdx_store *s)
{
    if (!fdx_forks_seen() || !fdx_open_stores_find(s->path, locked_at_fork))
        return FDX_OK;
    return fdx_store_fail(s, FDX_EMISUSE,
                          "%s: this process was forked while a handle of its parent held a "
                          "transaction on the store; SQLite's record of that write lock came "
                          "with the fork, and no handle of this process can take it: write the "
                          "store from a process forked while no transaction was open",
                          s->path);
}

int fdx_store_open_v2(const char *path, int flags, int busy_ms, fdx_store **out)
{
    if (!out)
        return FDX_EMISUSE;
    fdx_store *s = calloc(1, sizeof *s);
    *out = s;
    if (!s)
        return FDX_ENOMEM;
    s->forks = fdx_forks_seen();
    s->busy_ms = busy_ms;
    s->path = strdup(path ? path : "");
    s->spill_bytes = FDX_SPILL_BYTES;
    s->pending = fdx_agg_new();
    s->saved = fdx_agg_new();
    s->spill = fdx_spill_new();
    if (!s->path || !s->pending || !s->saved || !s->spill)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    if (!path || !*path)
        return fdx_store_fail(s, FDX_EMISUSE, "no store path given");
    if (busy_ms < 0)
        return fdx_store_fail(s, FDX_EMISUSE, "busy timeout must not be negative");
    const int known = FDX_OPEN_CREATE | FDX_OPEN_READONLY | FDX_OPEN_FOR_READING | FDX_OPEN_AS_IS;
    if (flags & ~known)
        return fdx_store_fail(s, FDX_EMISUSE, "unknown open flags %#x", (unsigned)(flags & ~known));
    /* Readers never create, migrate or convert what they read. */
    if (flags & FDX_OPEN_FOR_READING)
        flags = FDX_OPEN_READONLY | (flags & FDX_OPEN_CREATE);
    const fdx_backend_ops *be = fdx_backend_for(path);
    s->open_flags = flags;
    if (!be && fdx_open_stores_hold(path) == FDX_HELD_SHM)
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: is the -shm of a store open in this process, not a store", path);
    /* a writer's open may take the write lock (to switch to WAL, to migrate) */
    int rc = !be && !(flags & FDX_OPEN_READONLY) ? write_after_fork(s) : FDX_OK;
    if (rc == FDX_OK)
        rc = be ? open_backend(s, be, flags) : open_db(s, path, flags);
    if (rc == FDX_OK && s->on_disk && note_open(s, path) != FDX_OK)
        rc = FDX_ENOMEM;
    s->open_failed = rc != FDX_OK;
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
    if (s->immutable)
        close(s->immutable_fd);
    s->immutable = 0;
    return rc;
}

/* The write lock, so that no other writer is inside a transaction; to empty
 * the file (undo_file), an exclusive one, so that no reader is either. On a
 * file that holds nothing, taking it starts a journal, which a full disk (or
 * a quota, or a failing one) refuses: unless another writer holds the lock,
 * the journal is then kept in memory (the transaction only reads, and is
 * rolled back). */
static int lock_for_removal(fdx_store *s, const char *file)
{
    struct stat st;
    fdx_stmt_id begin = s->created ? FDX_STMT_BEGIN_WRITE : FDX_STMT_BEGIN_EXCLUSIVE;
    if (fdx_store_exec(s, begin) == FDX_OK)
        return 1;
    int why = sqlite3_errcode(s->db) & 0xff; /* not another writer's lock */
    if (why == SQLITE_BUSY || why == SQLITE_LOCKED || stat(file, &st) != 0 || st.st_size != 0 ||
        !sqlite3_get_autocommit(s->db) ||
        fdx_store_script(s, fdx_sql_journal_memory, "keeping the journal in memory") != FDX_OK)
        return 0;
    return fdx_store_exec(s, begin) == FDX_OK;
}

/* The file goes, or, when it was there holding nothing (s->filled), it
 * holds nothing again. */
static int undo_file(fdx_store *s, const char *file)
{
    if (s->created)
        return unlink(file) == 0;
    return truncate(file, 0) == 0;
}

/*
 * Whether the connection reads the store through a WAL (unknown counts as
 * yes). This handle made the store in rollback mode, and another writer that
 * opened it since switched it to WAL. In WAL mode the lock taken for removal
 * is the WAL's write lock, which readers do not wait for, and their -shm is
 * among the companions removed: the file went to no bytes under a reader
 * ("database disk image is malformed"). leave_wal takes the store back to a
 * rollback journal when no other connection has it open; otherwise it is not
 * this handle's alone, and stays.
 */
static int in_wal_mode(fdx_store *s)
{
    sqlite3_stmt *st = NULL;
    int wal = 1;
    if (sqlite3_prepare_v2(s->db, fdx_sql_journal_mode, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const char *mode = (const char *)sqlite3_column_text(st, 0);
        wal = !mode || strcmp(mode, "wal") == 0;
    }
    sqlite3_finalize(st);
    return wal;
}

static int step_at_once(fdx_store *s, const char *sql);

static void leave_wal(fdx_store *s)
{
    if (in_wal_mode(s))
        (void)step_at_once(s, fdx_sql_journal_delete);
}

/* The -wal, -shm and -journal beside the file, removed while this handle
 * holds its lock: once the file goes (or holds nothing), another writer may
 * make a store at the path, and these names are its companions. */
static void remove_companions(const char *path)
{
    for (size_t i = 0; i < N_COMPANIONS; i++) {
        char *name = fdx_store_companion(path, companion_suffixes[i]);
        if (name)
            unlink(name);
        free(name);
    }
}

/* Under the lock: the store holds nothing (no ingest, no merge, no cell). */
static int holds_nothing(fdx_store *s)
{
    identity id;
    sqlite3_stmt *st;
    int unused = 0;
    if (read_identity(s, &id) != FDX_OK)
        return 0;
    if (id.objects == 0)
        return 1;
    if (id.app_id == FDX_APPLICATION_ID && id.version == FDX_SCHEMA_VERSION &&
        fdx_store_stmt(s, FDX_STMT_STORE_UNUSED, &st) == FDX_OK) {
        unused = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
        sqlite3_reset(st);
    }
    return unused;
}

/*
 * Whether the store this handle created (or made in an empty file) still
 * holds nothing (no ingest, no merge, no cell) and is still at its path; if
 * so it is removed (or emptied), under the write lock so that no other
 * writer's commit is lost (a writer that began meanwhile finds its path gone
 * at commit and fails, see still_there).
 */
static int remove_if_unused(fdx_store *s, const char *file)
{
    if (!s->db || !s->on_disk || s->readonly || sqlite3_db_readonly(s->db, "main") != 0)
        return 0; /* a read-only connection's BEGIN EXCLUSIVE takes no write lock */
    int unused = lock_for_removal(s, file) && holds_nothing(s);
    if (unused && in_wal_mode(s)) { /* left outside a transaction, and only if unused */
        sqlite3_exec(s->db, fdx_sql_rollback, NULL, NULL, NULL);
        leave_wal(s);
        unused = lock_for_removal(s, file) && holds_nothing(s);
    }
    if (unused && !in_wal_mode(s) && fdx_store_is_own_file(s, file)) {
        remove_companions(file);
        unused = undo_file(s, file);
    } else {
        unused = 0;
    }
    sqlite3_exec(s->db, fdx_sql_rollback, NULL, NULL, NULL);
    return unused;
}

/* A handle closed in a process forked from the one that opened it: its
 * connection, locks, spill files and server session are the parent's, left
 * alone (their memory too); only what is this process's own is freed. */
static int close_forked(fdx_store *s)
{
    if (s->in_txn) /* its lock stays in this process's SQLite (open_after_fork) */
        fdx_open_stores_forsake(s);
    else
        fdx_open_stores_remove(s);
    fdx_agg_free(s->pending);
    fdx_agg_free(s->saved);
    fdx_buf_free(&s->dtypes);
    fdx_buf_free(&s->cands);
    free(s->path);
    free(s);
    return FDX_OK;
}

int fdx_store_close(fdx_store *s)
{
    if (!s)
        return FDX_OK;
    if (s->forks != fdx_forks_seen())
        return close_forked(s);
    if (s->in_callback) /* the call running on it would go on with freed memory */
        return fdx_store_fail(s, FDX_EMISUSE,
                              "%s: closed from a callback of a call still running on this "
                              "handle: close it once that call has returned",
                              s->path);
    /* A writer that created its store, or made it in a file that held
     * nothing, and failed before its first commit leaves no store behind. */
    int discard = (s->created || s->filled) && !s->committed && (s->open_failed || s->began);
    s->open_failed = 0; /* its connection, if any, serves the cleanup below */
    if (s->in_txn)
        fdx_store_rollback(s);
    char saved[sizeof s->errmsg];
    memcpy(saved, s->errmsg, sizeof saved);
    /* through a symlink, the file made is its target, beside its companions */
    char *target = discard && s->path ? fdx_real_path(s->path) : NULL;
    const char *file = target ? target : s->path;
    if (discard)
        remove_if_unused(s, file);
    memcpy(s->errmsg, saved, sizeof saved);
    int rc = close_db(s);
    fdx_open_stores_remove(s);
    free(target);
    if (s->backend)
        s->backend->close(s);
    fdx_agg_free(s->pending);
    fdx_agg_free(s->saved);
    fdx_spill_free(s->spill);
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

const char *fdx_store_name(const fdx_store *s)
{
    return s && s->path ? s->path : "";
}

const char *fdx_store_notice(const fdx_store *s)
{
    return s ? s->notice : "";
}

int fdx_store_notice_kind(const fdx_store *s)
{
    return s ? s->notice_kind : FDX_NOTICE_NONE;
}

int fdx_store_set_busy_timeout(fdx_store *s, int ms)
{
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
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
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
    return FDX_OK;
}

/* Whether path still names the file opened: a writer that created the store
 * and failed removes it (remove_if_unused), and a commit into the removed
 * file would be lost. Called under the write lock. */
static int still_there(fdx_store *s)
{
    if (!s->on_disk || fdx_store_is_own_file(s, s->path))
        return FDX_OK;
    return fdx_store_fail(s, FDX_EIO,
                          "%s: removed or replaced while this transaction ran (the writer that "
                          "created it failed): nothing committed; run again",
                          s->path);
}

/* A transaction on a backend's working copy starts without the cells of the
 * ones this handle committed before (sql/working_copy_clear.sql): pushed
 * again, they were counted twice. */
static int working_copy_clear(fdx_store *s)
{
    return s->backend ? fdx_store_script(s, fdx_sql_working_copy_clear, "clearing the working copy")
                      : FDX_OK;
}

/* Whether the file this handle opened, which may create its store, is gone
 * from its path before the handle committed anything into it, as when
 * another writer created the store too, failed, and removed it as unused
 * (remove_if_unused); or holds nothing again, as when that writer had made
 * the store in the file while it held nothing, and emptied it (undo_file).
 * No writer removes or empties it while this one holds the lock. */
static int may_make_anew(const fdx_store *s)
{
    return !s->committed && !s->backend && s->on_disk && !s->readonly &&
           (s->open_flags & FDX_OPEN_CREATE);
}

static int removed_before_first_write(fdx_store *s)
{
    return may_make_anew(s) && (!fdx_store_is_own_file(s, s->path) || holds_no_bytes(s->path));
}

/* The same, looked at under the write lock: the file may also hold a page
 * and no object (what SQLite leaves of a database that holds nothing). */
static int emptied_before_first_write(fdx_store *s)
{
    return removed_before_first_write(s) || (may_make_anew(s) && holds_no_object(s));
}

/* Leaves the transaction begun on the removed file and begins one on the
 * store at the path now, made anew if none is there. */
static int open_anew(fdx_store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, fdx_sql_rollback, NULL, NULL, NULL);
    close_db(s);
    int rc = open_db(s, s->path, s->open_flags);
    return rc == FDX_OK ? fdx_store_exec(s, FDX_STMT_BEGIN_WRITE) : rc;
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
    if (s->copy_behind)
        return fdx_store_fail(s, FDX_EIO,
                              "%s: the working copy fell behind the store after a commit "
                              "(see the notice of that commit): open the store again",
                              s->path);
    /* A connection to a file removed from its path runs no statement: taking
     * a lock, it would take the -journal at the path, which is another
     * writer's in the file made there since, for its own hot journal, roll it
     * back into the removed file and delete it. Looked at again once the lock
     * is held: a store removed meanwhile can fail to begin with an I/O error,
     * which says less than still_there. */
    int anew = 0;
    for (int tries = 0; tries < 3 && s->db && removed_before_first_write(s); tries++, anew = 1)
        rc = open_anew(s);
    if (!anew)
        rc = fdx_store_exec(s, FDX_STMT_BEGIN_WRITE);
    for (int tries = 0; tries < 3 && s->db && emptied_before_first_write(s); tries++)
        rc = open_anew(s);
    if (rc != FDX_OK)
        return s->db && still_there(s) != FDX_OK ? FDX_EIO : rc;
    if ((rc = still_there(s)) != FDX_OK || (rc = fdx_identity_check_file(s, 1)) != FDX_OK ||
        (rc = working_copy_clear(s)) != FDX_OK ||
        (s->views_pending && (rc = migrate_in_txn(s)) != FDX_OK)) {
        char saved[sizeof s->errmsg];
        memcpy(saved, s->errmsg, sizeof saved);
        fdx_store_exec(s, FDX_STMT_ROLLBACK);
        memcpy(s->errmsg, saved, sizeof saved);
        return rc;
    }
    s->in_txn = 1;
    s->txn_broken = 0;
    s->began = 1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    s->txn_time_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    fdx_history_begin(s);
    memset(&s->txn_stats, 0, sizeof s->txn_stats);
    fdx_agg_clear(s->pending);
    fdx_spill_truncate(s->spill, 0);
    fdx_ledger_reset(s);
    return FDX_OK;
}

/* Steps sql once without waiting for a lock, for what is only worth doing
 * now if it can be (the store's next writer does it otherwise). */
static int step_at_once(fdx_store *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    sqlite3_busy_timeout(s->db, 0);
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    sqlite3_finalize(st);
    sqlite3_busy_timeout(s->db, s->busy_ms);
    return rc;
}

int fdx_store_rollback(fdx_store *s)
{
    if (fdx_store_usable(s) != FDX_OK) /* a child's rollback would truncate the parent's spill */
        return FDX_EMISUSE;
    if (!s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "no transaction is open");
    s->in_txn = 0;
    s->txn_broken = 0;
    s->path_open = 0;
    fdx_agg_clear(s->pending);
    fdx_agg_clear(s->saved);
    fdx_spill_truncate(s->spill, 0);
    fdx_ledger_reset(s);
    int rc = sqlite3_get_autocommit(s->db) ? FDX_OK : fdx_store_exec(s, FDX_STMT_ROLLBACK);
    /* A write that failed through a rollback journal (a full disk) leaves
     * the journal hot until a writer next reads the store, and a reader,
     * which cannot roll it back, refuses the store meanwhile: this
     * connection reads it at once, which rolls it back. */
    if (s->wal_pending)
        (void)step_at_once(s, fdx_sql_identity);
    return rc;
}

/*
 * After a commit into a new store: WAL from now on. A reader that took hold
 * of the store as the commit ended makes it fail; then it is tried again
 * after the next commit (a sink's handle may stay open for hours), while the
 * next writer to open the store sets it anyway (connection settings). The
 * commit stands either way. A store that cannot be WAL (":memory:") answers
 * with its mode and is not asked again.
 */
static void use_wal(fdx_store *s)
{
    s->wal_pending = step_at_once(s, fdx_sql_journal_wal) != SQLITE_ROW;
}

/* Writes the dirty pages of every database of the connection before COMMIT.
 * The TEMP database (a merge's staging tables, under $TMPDIR) commits after
 * the store: a full $TMPDIR failed it only once the store's commit had taken
 * effect, and the command reported a failure for a change it had made.
 * Written first, such a failure leaves the transaction open, and it is
 * rolled back. */
static int flush_caches(fdx_store *s)
{
    int rc = sqlite3_db_cacheflush(s->db);
    return rc == SQLITE_OK ? FDX_OK : fdx_store_fail_sqlite(s, rc, "writing the transaction");
}

/* The backend (PostgreSQL) committed the change, and then the working copy
 * could not (a full $TMPDIR): the change is made, and the command says so,
 * but the copy no longer shows the store, so the handle takes no more
 * writes. */
static int copy_fell_behind(fdx_store *s, fdx_commit_stats *stats)
{
    char why[sizeof s->errmsg];
    memcpy(why, s->errmsg, sizeof why);
    fdx_commit_stats taken = s->txn_stats;
    fdx_store_rollback(s);
    s->copy_behind = 1;
    s->committed = 1;
    fdx_store_note(s, FDX_NOTICE_COPY_BEHIND,
                   "the change is committed, but the working copy could not follow it (%s); "
                   "open the store again to write more",
                   why);
    if (stats)
        *stats = taken;
    return FDX_OK;
}

/* A run id's retry, or nothing under it: the transaction is rolled back and
 * the commit says so. */
static int nothing_to_commit(fdx_store *s, fdx_commit_stats *stats)
{
    int rc = fdx_store_rollback(s);
    if (rc == FDX_OK && stats)
        *stats = (fdx_commit_stats){0, 0};
    return rc;
}

int fdx_store_commit(fdx_store *s, fdx_commit_stats *stats)
{
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (!s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "no transaction is open");
    fdx_store_note(s, FDX_NOTICE_NONE, "%s", "");
    s->pushed = 0;
    int rc = fdx_store_need_txn(s), repeat = 0;
    if (rc == FDX_OK && s->ledger.run_id && fdx_ledger_txn_empty(s)) {
        fdx_store_note(s, FDX_NOTICE_NOTHING_DONE,
                       "nothing was read or recorded under run id '%s': nothing committed, "
                       "and the id is left for the run's data",
                       s->ledger.run_id);
        return nothing_to_commit(s, stats);
    }
    if (rc == FDX_OK && s->views_pending && fdx_ledger_txn_empty(s))
        return nothing_to_commit(s, stats); /* it would only migrate the views */
    if (rc == FDX_OK && !s->backend && !s->created && !s->filled && fdx_ledger_txn_empty(s))
        return nothing_to_commit(s, stats);              /* it would only relabel a copied store */
    if (rc == FDX_OK && s->ledger.run_id && !s->backend) /* PostgreSQL's push decides */
        rc = fdx_ledger_run_repeat(s, &repeat);
    if (rc == FDX_OK && repeat)
        return nothing_to_commit(s, stats);
    if (rc == FDX_OK)
        rc = fdx_store_flush_pending(s);
    if (rc == FDX_OK)
        rc = fdx_history_finish(s);
    if (rc == FDX_OK)
        rc = fdx_ledger_finish(s);
    if (rc == FDX_OK)
        rc = still_there(s);
    /* Before the push too: a working copy that cannot be written (a full
     * $TMPDIR) failed its COMMIT once PostgreSQL had taken the change, and the
     * command reported a failure for a change it had made. */
    if (rc == FDX_OK)
        rc = flush_caches(s);
    if (rc == FDX_OK && s->backend && (rc = s->backend->push(s)) == FDX_OK)
        rc = flush_caches(s); /* what the push wrote into the working copy */
    if (rc == FDX_OK)
        rc = fdx_store_exec(s, FDX_STMT_COMMIT);
    if (rc != FDX_OK && s->pushed)
        return copy_fell_behind(s, stats);
    if (rc != FDX_OK) {
        char saved[sizeof s->errmsg];
        memcpy(saved, s->errmsg, sizeof saved);
        fdx_store_rollback(s);
        memcpy(s->errmsg, saved, sizeof saved);
        return rc;
    }
    s->in_txn = 0;
    s->committed = 1;
    s->views_pending = 0;
    fdx_ledger_reset(s);
    if (s->wal_pending)
        use_wal(s);
    if (stats)
        *stats = s->txn_stats;
    return FDX_OK;
}

int fdx_store_add_cell(fdx_store *s, const fdx_cell *cell, uint64_t count, fdx_str cands)
{
    if (fdx_agg_add(s->pending, cell, count, cands) != FDX_OK)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    s->ledger.records++;
    s->ledger.recorded++;
    return fdx_store_spill_if_full(s);
}

int fdx_store_record_checked(fdx_store *s, const fdx_miss *m, const fdx_dispatch *d, int trusted)
{
    fdx_cell cell;
    fdx_str cands = FDX_NO_CANDS;
    uint64_t count;
    int rc = fdx_store_need_txn(s);
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
    if (rc == FDX_OK && (!misses || !dispatches))
        rc = fdx_store_fail(s, FDX_EMISUSE, "no place for the counts given");
    if (rc == FDX_OK)
        rc = fdx_store_reads_cells(s);
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
    return src == SQLITE_ROW ? fdx_store_read_verdict(s, FDX_OK)
                             : fdx_store_fail_sqlite(s, src, "counting cells");
}

void fdx_store_set_progress(fdx_store *s, fdx_progress_fn fn, void *ctx)
{
    if (!s)
        return;
    s->progress = fn;
    s->progress_ctx = ctx;
}
