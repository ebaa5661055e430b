/*
 * The connection helpers every store module builds on (conn.c): the
 * statement cache, stepping through SQLITE_BUSY and the error messages.
 */
#ifndef FDX_STORE_CONN_H
#define FDX_STORE_CONN_H

#include "store/store_internal.h"
#include <stdint.h>

/* Sets notice, of kind (FDX_NOTICE_*), from a printf format (a call that
 * succeeds with something to say); FDX_NOTICE_NONE clears it. */
void fdx_store_note(fdx_store *s, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets errmsg from a printf format; returns code. */
int fdx_store_fail(fdx_store *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets errmsg to "what: <SQLite's message>"; returns the matching fdx code
 * (or, for a read without locks whose file changed, fdx_store_read_verdict's
 * outcome). */
int fdx_store_fail_sqlite(fdx_store *s, int rc, const char *what);
/* SQLite's result code as an fdx status. */
int fdx_store_code_of_sqlite(int rc);
/* A monotonic clock in milliseconds, for the busy deadlines. */
int64_t fdx_store_now_ms(void);
/* Whether path names the very file this handle opened (same device and
 * inode); never for a store not on disk. */
int fdx_store_is_own_file(const fdx_store *s, const char *path);
/* Bind to the parameter called name (":top"), when the statement has one;
 * a NULL text leaves it NULL. */
void fdx_store_bind_named_int64(sqlite3_stmt *st, const char *name, int64_t v);
void fdx_store_bind_named_text(sqlite3_stmt *st, const char *name, const char *text);
/* sqlite3_step, retrying SQLITE_BUSY until the handle's busy timeout. */
int fdx_store_step_retrying(fdx_store *s, sqlite3_stmt *st);

/* The cached statement, reset and with bindings cleared. */
int fdx_store_stmt(fdx_store *s, fdx_stmt_id id, sqlite3_stmt **out);
/* FDX_OK for a handle calls may use: not NULL, opened (a handle whose open
 * failed keeps its connection only for fdx_store_close to clean up with), not
 * inside a caller's callback of one of its calls (in_callback), in this
 * process; else FDX_EMISUSE, said. */
int fdx_store_usable(fdx_store *s);
/* Runs a statement that returns no rows (BEGIN, COMMIT, ...). */
int fdx_store_exec(fdx_store *s, fdx_stmt_id id);
/* Steps a bound statement that returns no rows and resets it; on failure the
 * handle's error says what was being done. */
int fdx_store_step_done(fdx_store *s, sqlite3_stmt *st, const char *what);
/* Whether the store holds any cell (*has: 1 or 0). */
int fdx_store_has_cells(fdx_store *s, int *has);
/* FDX_OK inside a write transaction that may go on; FDX_EMISUSE with errmsg
 * set outside one, or after a write failed partway through it (rolling back
 * is then all it can do). */
int fdx_store_need_txn(fdx_store *s);

/* Runs a script of statements without parameters (sqlite3_exec); errmsg
 * says "path: what: <SQLite's message>". */
int fdx_store_script(fdx_store *s, const char *sql, const char *what);

/* Whether SQLite's (extended) result code rc says that the -shm file of a
 * WAL store cannot be made or written where the store lies (a directory the
 * process cannot write, another user's -shm). */
int fdx_store_shm_refused(int rc);
/* FDX_OK unless path names the store's file (or its -wal, -shm or -journal),
 * which an output written by a rename over path would destroy: then
 * FDX_EMISUSE, errmsg saying so. */
int fdx_store_may_replace(fdx_store *s, const char *path);
/* The same for an input open as fd (standard input too), named name in the
 * message: the store's own files are not feeds (ingesting the store being
 * written, or its -wal, reads pages as lines). */
int fdx_store_may_read(fdx_store *s, int fd, const char *name);
/* FDX_OK, or FDX_EMISUSE (said) when the stream writes to one of the store's
 * files (a shell's ">> store.db"): written to, it would be corrupt. */
int fdx_store_may_stream_to(fdx_store *s, FILE *out);
/* The name to give SQLite for the store file at path (malloc'd; NULL when
 * out of memory): a path, never a URI. */
char *fdx_store_file_name(const char *path);
/* The name of the file SQLite keeps beside the store at path with suffix
 * ("-wal", "-shm", "-journal"): beside its target, through a symlink
 * (malloc'd; NULL when out of memory). */
char *fdx_store_companion(const char *path, const char *suffix);
/* The "file:" URI that reads the store at path with immutable=1 (malloc'd;
 * NULL when out of memory). */
char *fdx_store_immutable_uri(const char *path);
/* FDX_OK, or FDX_EMISUSE for a read of a backend's store through a writer's
 * handle: its working copy holds only what its own transactions write, not
 * the store's cells (a read-only handle copies those). */
int fdx_store_reads_cells(fdx_store *s);
/* The outcome rc of a read, unless the handle reads without locks
 * (immutable, where no lock file can be made) and the file has changed since
 * it was opened: a writer wrote meanwhile, what was read may mix two states,
 * and that, FDX_EBUSY, is the outcome (errmsg says so). Every read ends
 * through it. */
int fdx_store_read_verdict(fdx_store *s, int rc);
/* The outcome rc of a call on s that also read through other (NULL: none),
 * unless other's read fails its verdict: then that, its message on s. */
int fdx_store_other_verdict(fdx_store *s, fdx_store *other, int rc);

/* Runs body in one read snapshot (its own, unless a transaction is open),
 * keeping body's error message when it fails. */
int fdx_store_in_read(fdx_store *s, int (*body)(fdx_store *s, void *ctx), void *ctx);

#endif
