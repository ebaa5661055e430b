/*
 * fdx_store_diff: per-cell count changes between two stores. The other store
 * is opened through fdx_store_open first (so its layout is checked, and
 * migrated when it can be), then attached to this connection, so one query
 * pairs the cells of both by their stored keys. The file attached is named by
 * its path, which may name another file by then: both stores' cells are
 * checked in the comparison's own snapshot, as it reads them.
 */
#include <stdlib.h>

#include "store/conn.h"
#include "store/row.h"

/* Opens the other store; *file is the SQLite database to attach (a store
 * kept elsewhere is attached through its working copy, held open meanwhile;
 * one read without locks, as it was opened; *uri owns that name). */
static int open_other(fdx_store *s, const char *path, fdx_store **other, const char **file,
                      char **uri)
{
    int rc = fdx_store_open(path, FDX_OPEN_FOR_READING, other);
    if (rc != FDX_OK)
        return fdx_store_fail(s, rc, "%s", fdx_store_errmsg(*other));
    if (!(*other)->immutable) /* the file opened, by its full path: never a URI */
        *file = sqlite3_db_filename((*other)->db, "main");
    else if (!s->immutable && !sqlite3_compileoption_used("USE_URI"))
        return fdx_store_fail(s, FDX_EIO,
                              "%s: lies where no lock file can be made, and this SQLite (built "
                              "without SQLITE_USE_URI) cannot attach it without locks; copy it "
                              "to writable storage",
                              path);
    else if (!(*file = *uri = fdx_store_immutable_uri(path)))
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    return FDX_OK;
}

/* Closes the other store: a read of either store without locks must still
 * hold, whatever the comparison's outcome rc. */
static int close_other(fdx_store *s, fdx_store *other, char *uri, int rc)
{
    rc = fdx_store_other_verdict(s, other, rc);
    fdx_store_close(other);
    free(uri);
    return fdx_store_read_verdict(s, rc);
}

static const char *text(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? t : "";
}

typedef struct differ {
    fdx_diff_fn fn;
    void *ctx;
    const char *other_path;
} differ;

static int check_other(fdx_store *s, const char *path)
{
    int rc = fdx_row_check_rows(s, FDX_KIND_MISS, FDX_STMT_DIFF_OTHER_MISSES, path);
    if (rc == FDX_OK)
        rc = fdx_row_check_rows(s, FDX_KIND_DISPATCH, FDX_STMT_DIFF_OTHER_DISPATCHES, path);
    return rc;
}

static int report(fdx_store *s, void *arg)
{
    const differ *d = arg;
    fdx_diff_fn fn = d->fn;
    void *ctx = d->ctx;
    sqlite3_stmt *st;
    int rc = fdx_row_check_cells(s);
    if (rc == FDX_OK)
        rc = check_other(s, d->other_path);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_DIFF_CELLS, &st);
    if (rc != FDX_OK)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        fdx_diff_row row = {text(st, 0),
                            sqlite3_column_type(st, 1) == SQLITE_NULL ? NULL : text(st, 1),
                            text(st, 2),
                            text(st, 3),
                            text(st, 4),
                            text(st, 5),
                            text(st, 6),
                            text(st, 7),
                            text(st, 8),
                            text(st, 9),
                            (uint64_t)sqlite3_column_int64(st, 10),
                            (uint64_t)sqlite3_column_int64(st, 11),
                            sqlite3_column_int64(st, 12)};
        s->in_callback++;
        int stop = fn(ctx, &row);
        s->in_callback--;
        if (stop != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(s, rc, "comparing stores");
}

int fdx_store_diff(fdx_store *s, const char *other_path, fdx_diff_fn fn, void *ctx)
{
    sqlite3_stmt *st;
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
    if (!fn)
        return fdx_store_fail(s, FDX_EMISUSE, "no callback given");
    if (s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "not allowed while a transaction is open");
    fdx_store *other = NULL;
    const char *file = other_path;
    char *uri = NULL;
    int rc = open_other(s, other_path, &other, &file, &uri);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_DIFF_ATTACH, &st);
    if (rc != FDX_OK)
        return close_other(s, other, uri, rc);
    sqlite3_bind_text(st, 1, file, -1, SQLITE_TRANSIENT);
    int src = sqlite3_step(st);
    sqlite3_reset(st);
    if (src != SQLITE_DONE)
        return close_other(s, other, uri, fdx_store_fail_sqlite(s, src, "opening the other store"));
    differ d = {fn, ctx, other->path};
    rc = fdx_store_in_read(s, report, &d);
    int detach = fdx_store_exec(s, FDX_STMT_DIFF_DETACH);
    return close_other(s, other, uri, rc != FDX_OK ? rc : detach);
}
