/*
 * What the store's modules (open and transactions, flush, ingest, export)
 * share: the handle's layout, the prepared-statement cache and error helpers.
 */
#ifndef FDX_STORE_INTERNAL_H
#define FDX_STORE_INTERNAL_H

#include <sqlite3.h>

#include "agg.h"
#include "buf.h"
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
    FDX_STMT_MISS_EXISTS,
    FDX_STMT_DISPATCH_EXISTS,
    FDX_STMT_MISS_EXPORT,
    FDX_STMT_DISPATCH_EXPORT,
    FDX_STMT_CELL_COUNTS,
    FDX_STMT_COUNT
} fdx_stmt_id;

/* Pending cells are written to SQLite (inside the open transaction) once
 * there are this many, which bounds memory whatever the input holds. */
#define FDX_SPILL_CELLS 65536

struct fdx_store {
    sqlite3 *db;
    char *path;
    char errmsg[1024];
    int in_txn;
    int busy_ms;
    fdx_agg *pending;
    fdx_buf dtypes; /* scratch for recording */
    fdx_buf cands;
    fdx_commit_stats txn_stats;
    sqlite3_stmt *stmts[FDX_STMT_COUNT];
};

/* Sets errmsg from a printf format; returns code. */
int fdx_store_fail(fdx_store *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets errmsg to "what: <SQLite's message>"; returns the matching fdx code. */
int fdx_store_fail_sqlite(fdx_store *s, int rc, const char *what);

/* The cached statement, reset and with bindings cleared. */
int fdx_store_stmt(fdx_store *s, fdx_stmt_id id, sqlite3_stmt **out);
/* Runs a statement that returns no rows (BEGIN, COMMIT, ...). */
int fdx_store_exec(fdx_store *s, fdx_stmt_id id);

/* Writes the pending cells into the open transaction (store_flush.c). */
int fdx_store_flush_pending(fdx_store *s);

#endif
