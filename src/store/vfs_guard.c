/*
 * A VFS over SQLite's default one that keeps a connection to a database file
 * removed from its path from taking another store's -journal or -wal for
 * its own.
 *
 * SQLite names both after the database's path. A writer that created a store
 * and failed before its first commit removes the file; a connection still
 * holding the removed file, taking a lock, finds the -journal of the store
 * another writer has made at that path since, sees no reserved lock on its
 * own file, takes the journal for a hot one, plays it back into the removed
 * file and deletes it: the other writer's transaction has lost its journal.
 * One to a WAL file, reading it for the first time, opens the new store's
 * -wal and -shm, reads its frames as its own pages and writes into it.
 * Through this VFS a main database file that has moved
 * (SQLITE_FCNTL_HAS_MOVED) reports its reserved lock as held, so that no
 * journal is hot for it, and opens no -wal; SQLite refuses to write to it on
 * its own in rollback mode (SQLITE_READONLY_DBMOVED), and fdx opens the store
 * at the path again.
 */
#include "store/vfs_guard.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "common/forks.h"

typedef struct guard_file {
    sqlite3_file base;
    sqlite3_file *real; /* the default VFS's file, stored after this one */
    int main_db;
} guard_file;

/* The real file's storage starts this far into a guard_file's. */
#define REAL_AT ((sizeof(guard_file) + 15) & ~(size_t)15)

static sqlite3_vfs *first_default; /* the default VFS when this one was made */
static sqlite3_vfs guard_vfs;

/* Room for a file of a default VFS made later (a program's own, wrapping
 * SQLite's) beyond the first default's. */
#define SLACK 512

/* The VFS under this one for files: the default now, so that a program's
 * own default serves fdx's stores too (the first one should this one have
 * become it). Time, randomness, libraries and system calls are the first
 * default's. */
static sqlite3_vfs *under(void)
{
    sqlite3_vfs *v = sqlite3_vfs_find(NULL);
    return v && v != &guard_vfs ? v : first_default;
}

/* One set of methods per set of the default VFS's (it has one per locking
 * style): a method the real file lacks is lacking here too. */
enum { MAX_METHOD_SETS = 16 };
static struct {
    const sqlite3_io_methods *real;
    sqlite3_io_methods guard;
} method_sets[MAX_METHOD_SETS];
static size_t n_method_sets;
static pthread_mutex_t method_sets_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t guarding = PTHREAD_ONCE_INIT;

/*
 * SQLite's global mutexes that a thread inside it holds for a moment: that
 * of its unix files' shared state (VFS1), and that of its allocator's
 * statistics (MEM), taken in every sqlite3_malloc. A child forked then
 * waited for one of them for ever at its first call into SQLite. Taken
 * around every fork, in the order SQLite nests them (VFS1 holds across
 * allocations; MEM holds no other).
 */
static const int sqlite_mutexes[] = {SQLITE_MUTEX_STATIC_VFS1, SQLITE_MUTEX_STATIC_MEM};
enum { N_SQLITE_MUTEXES = sizeof sqlite_mutexes / sizeof *sqlite_mutexes };

static void lock_sqlite(void)
{
    for (int i = 0; i < N_SQLITE_MUTEXES; i++)
        sqlite3_mutex_enter(sqlite3_mutex_alloc(sqlite_mutexes[i]));
}

static void unlock_sqlite(void)
{
    for (int i = N_SQLITE_MUTEXES; i-- > 0;)
        sqlite3_mutex_leave(sqlite3_mutex_alloc(sqlite_mutexes[i]));
}

static void guard(void)
{
    fdx_forks_guard(&method_sets_lock);
    fdx_forks_guard_calls(lock_sqlite, unlock_sqlite);
}

static sqlite3_file *real_of(sqlite3_file *f)
{
    return ((guard_file *)f)->real;
}

static int guard_close(sqlite3_file *f)
{
    return real_of(f)->pMethods->xClose(real_of(f));
}

static int guard_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 at)
{
    return real_of(f)->pMethods->xRead(real_of(f), buf, n, at);
}

static int guard_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 at)
{
    return real_of(f)->pMethods->xWrite(real_of(f), buf, n, at);
}

static int guard_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return real_of(f)->pMethods->xTruncate(real_of(f), size);
}

static int guard_sync(sqlite3_file *f, int flags)
{
    return real_of(f)->pMethods->xSync(real_of(f), flags);
}

static int guard_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return real_of(f)->pMethods->xFileSize(real_of(f), size);
}

static int guard_lock(sqlite3_file *f, int level)
{
    return real_of(f)->pMethods->xLock(real_of(f), level);
}

static int guard_unlock(sqlite3_file *f, int level)
{
    return real_of(f)->pMethods->xUnlock(real_of(f), level);
}

/* Whether f is a main database file that is no longer the file at its path. */
static int has_moved(sqlite3_file *f)
{
    sqlite3_file *real = real_of(f);
    int moved = 0;
    return ((guard_file *)f)->main_db && real->pMethods &&
           real->pMethods->xFileControl(real, SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved;
}

/* SQLite asks it before playing a journal back, and a removed file's
 * answer must stop it. */
static int guard_check_reserved_lock(sqlite3_file *f, int *held)
{
    sqlite3_file *real = real_of(f);
    int rc = real->pMethods->xCheckReservedLock(real, held);
    if (rc == SQLITE_OK && !*held && has_moved(f))
        *held = 1;
    return rc;
}

static int guard_file_control(sqlite3_file *f, int op, void *arg)
{
    return real_of(f)->pMethods->xFileControl(real_of(f), op, arg);
}

static int guard_sector_size(sqlite3_file *f)
{
    return real_of(f)->pMethods->xSectorSize(real_of(f));
}

static int guard_device_characteristics(sqlite3_file *f)
{
    return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
}

static int guard_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **p)
{
    return real_of(f)->pMethods->xShmMap(real_of(f), region, size, extend, p);
}

static int guard_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
    return real_of(f)->pMethods->xShmLock(real_of(f), offset, n, flags);
}

static void guard_shm_barrier(sqlite3_file *f)
{
    real_of(f)->pMethods->xShmBarrier(real_of(f));
}

static int guard_shm_unmap(sqlite3_file *f, int delete_flag)
{
    return real_of(f)->pMethods->xShmUnmap(real_of(f), delete_flag);
}

static int guard_fetch(sqlite3_file *f, sqlite3_int64 at, int n, void **p)
{
    return real_of(f)->pMethods->xFetch(real_of(f), at, n, p);
}

static int guard_unfetch(sqlite3_file *f, sqlite3_int64 at, void *p)
{
    return real_of(f)->pMethods->xUnfetch(real_of(f), at, p);
}

/* Each method the real set has, by this VFS's; NULL where it has none. */
#define GUARD(method, fn) g->method = r->method ? fn : NULL

static void make_methods(sqlite3_io_methods *g, const sqlite3_io_methods *r)
{
    memset(g, 0, sizeof *g);
    g->iVersion = r->iVersion;
    GUARD(xClose, guard_close);
    GUARD(xRead, guard_read);
    GUARD(xWrite, guard_write);
    GUARD(xTruncate, guard_truncate);
    GUARD(xSync, guard_sync);
    GUARD(xFileSize, guard_file_size);
    GUARD(xLock, guard_lock);
    GUARD(xUnlock, guard_unlock);
    GUARD(xCheckReservedLock, guard_check_reserved_lock);
    GUARD(xFileControl, guard_file_control);
    GUARD(xSectorSize, guard_sector_size);
    GUARD(xDeviceCharacteristics, guard_device_characteristics);
    if (r->iVersion >= 2) {
        GUARD(xShmMap, guard_shm_map);
        GUARD(xShmLock, guard_shm_lock);
        GUARD(xShmBarrier, guard_shm_barrier);
        GUARD(xShmUnmap, guard_shm_unmap);
    }
    if (r->iVersion >= 3) {
        GUARD(xFetch, guard_fetch);
        GUARD(xUnfetch, guard_unfetch);
    }
}

/* The guard methods over real, made at first sight; NULL past the table. */
static const sqlite3_io_methods *methods_over(const sqlite3_io_methods *real)
{
    const sqlite3_io_methods *found = NULL;
    pthread_once(&guarding, guard);
    pthread_mutex_lock(&method_sets_lock);
    for (size_t i = 0; i < n_method_sets && !found; i++)
        if (method_sets[i].real == real)
            found = &method_sets[i].guard;
    if (!found && n_method_sets < MAX_METHOD_SETS) {
        method_sets[n_method_sets].real = real;
        make_methods(&method_sets[n_method_sets].guard, real);
        found = &method_sets[n_method_sets++].guard;
    }
    pthread_mutex_unlock(&method_sets_lock);
    return found;
}

static int guard_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
                      int *out_flags)
{
    sqlite3_vfs *real_vfs = under();
    guard_file *g = (guard_file *)f;
    g->real = (sqlite3_file *)((char *)f + REAL_AT);
    g->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
    g->real->pMethods = NULL;
    f->pMethods = NULL;
    if (REAL_AT + (size_t)real_vfs->szOsFile > (size_t)vfs->szOsFile)
        return SQLITE_CANTOPEN;
    /* The -wal named after a removed file's path is another store's: its
     * frames read as this file's pages, this file's written among its own,
     * and at the last close checkpointed into the removed file and deleted. */
    sqlite3_file *db =
        (flags & SQLITE_OPEN_WAL) && name ? sqlite3_database_file_object(name) : NULL;
    if (db && db->pMethods && has_moved(db))
        return SQLITE_CANTOPEN;
    int rc = real_vfs->xOpen(real_vfs, name, g->real, flags, out_flags);
    /* a file whose methods are set is closed through them, even when its
     * open failed */
    const sqlite3_io_methods *m = g->real->pMethods ? methods_over(g->real->pMethods) : NULL;
    if (g->real->pMethods && !m) {
        g->real->pMethods->xClose(g->real);
        g->real->pMethods = NULL;
        rc = rc == SQLITE_OK ? SQLITE_CANTOPEN : rc;
    }
    f->pMethods = m;
    return rc;
}

static int guard_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = under();
    return real_vfs->xDelete(real_vfs, name, sync_dir);
}

static int guard_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = under();
    return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int guard_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = under();
    return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static void *guard_dl_open(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xDlOpen(real_vfs, name);
}

static void guard_dl_error(sqlite3_vfs *vfs, int n, char *msg)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    real_vfs->xDlError(real_vfs, n, msg);
}

static void (*guard_dl_sym(sqlite3_vfs *vfs, void *lib, const char *sym))(void)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xDlSym(real_vfs, lib, sym);
}

static void guard_dl_close(sqlite3_vfs *vfs, void *lib)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    real_vfs->xDlClose(real_vfs, lib);
}

static int guard_randomness(sqlite3_vfs *vfs, int n, char *out)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xRandomness(real_vfs, n, out);
}

static int guard_sleep(sqlite3_vfs *vfs, int us)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xSleep(real_vfs, us);
}

static int guard_current_time(sqlite3_vfs *vfs, double *now)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xCurrentTime(real_vfs, now);
}

static int guard_last_error(sqlite3_vfs *vfs, int n, char *msg)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, n, msg) : 0;
}

static int guard_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *now)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xCurrentTimeInt64(real_vfs, now);
}

static int guard_set_system_call(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr call)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xSetSystemCall(real_vfs, name, call);
}

static sqlite3_syscall_ptr guard_get_system_call(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xGetSystemCall(real_vfs, name);
}

static const char *guard_next_system_call(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    sqlite3_vfs *real_vfs = first_default;
    return real_vfs->xNextSystemCall(real_vfs, name);
}

static int registered = SQLITE_ERROR;

static void register_guard(void)
{
    sqlite3_vfs *real_vfs = first_default = sqlite3_vfs_find(NULL);
    if (!real_vfs || real_vfs->iVersion < 2)
        return;
    guard_vfs = (sqlite3_vfs){
        .iVersion = real_vfs->iVersion,
        .szOsFile = (int)(REAL_AT + (size_t)real_vfs->szOsFile + SLACK),
        .mxPathname = real_vfs->mxPathname,
        .zName = "fdx-guard",
        .xOpen = guard_open,
        .xDelete = guard_delete,
        .xAccess = guard_access,
        .xFullPathname = guard_full_pathname,
        .xDlOpen = real_vfs->xDlOpen ? guard_dl_open : NULL,
        .xDlError = real_vfs->xDlError ? guard_dl_error : NULL,
        .xDlSym = real_vfs->xDlSym ? guard_dl_sym : NULL,
        .xDlClose = real_vfs->xDlClose ? guard_dl_close : NULL,
        .xRandomness = guard_randomness,
        .xSleep = guard_sleep,
        .xCurrentTime = guard_current_time,
        .xGetLastError = guard_last_error,
        .xCurrentTimeInt64 = real_vfs->xCurrentTimeInt64 ? guard_current_time_int64 : NULL,
        .xSetSystemCall =
            real_vfs->iVersion >= 3 && real_vfs->xSetSystemCall ? guard_set_system_call : NULL,
        .xGetSystemCall =
            real_vfs->iVersion >= 3 && real_vfs->xGetSystemCall ? guard_get_system_call : NULL,
        .xNextSystemCall =
            real_vfs->iVersion >= 3 && real_vfs->xNextSystemCall ? guard_next_system_call : NULL,
    };
    registered = sqlite3_vfs_register(&guard_vfs, 0);
}

const char *fdx_vfs_guard(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_guard);
    return registered == SQLITE_OK ? guard_vfs.zName : NULL;
}
