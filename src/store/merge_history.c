/*
 * What a merge carries besides the cells: each source cell's daily history,
 * under the target's id for the cell and the target's number for the store
 * that brought it (so a fleet store answers the same time questions as one
 * store that absorbed every feed, and says which host brought what), and the
 * source's ledger, so that its run ids stay answerable.
 */
#include <stdlib.h>
#include <string.h>

#include "common/when.h"
#include "store/store_internal.h"

/* src's origin numbers as dst numbers them: map[k] for src origin k. */
typedef struct origins {
    int64_t *map;
    int64_t n;
} origins;

static int origin_in_dst(fdx_store *dst, const char *store_id, int64_t *out)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(dst, FDX_STMT_HISTORY_ORIGIN_ID, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, store_id, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (rc == SQLITE_ROW)
        rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(dst, rc, "numbering a merged store");
}

/* src failed: its message, as dst's. */
static int src_failed(fdx_store *dst, fdx_store *src, int rc, const char *what)
{
    fdx_store_fail_sqlite(src, rc, what);
    return fdx_store_fail(dst, FDX_EIO, "%s", src->errmsg);
}

static int map_origins(fdx_store *dst, fdx_store *src, origins *o)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(src, FDX_STMT_MERGE_READ_ORIGINS, &st);
    if (rc != FDX_OK)
        return fdx_store_fail(dst, rc, "%s", src->errmsg);
    int src_rc;
    while (rc == FDX_OK && (src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(st, 0);
        if (k < 0 || k > (1 << 24)) {
            rc = fdx_store_fail(dst, FDX_ENOTSTORE, "%s: a history origin is out of range",
                                src->path);
            break;
        }
        if (k >= o->n) {
            int64_t *m = realloc(o->map, (size_t)(k + 1) * sizeof *m);
            if (!m) {
                rc = fdx_store_fail(dst, FDX_ENOMEM, "out of memory");
                break;
            }
            memset(m + o->n, 0, (size_t)(k + 1 - o->n) * sizeof *m);
            o->map = m;
            o->n = k + 1;
        }
        rc = origin_in_dst(dst, (const char *)sqlite3_column_text(st, 1), &o->map[k]);
    }
    if (rc == FDX_OK && src_rc != SQLITE_DONE)
        rc = src_failed(dst, src, src_rc, "reading history origins");
    sqlite3_reset(st);
    return rc;
}

static int cell_id_in_dst(fdx_store *dst, const fdx_cell *c, int64_t *id)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(
        dst, c->kind == FDX_KIND_MISS ? FDX_STMT_MISS_CELL_ID : FDX_STMT_DISPATCH_CELL_ID, &st);
    if (rc != FDX_OK)
        return rc;
    fdx_bind_key(st, c);
    rc = sqlite3_step(st);
    *id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc == SQLITE_DONE) /* copy_cells wrote every cell first */
        return fdx_store_fail(dst, FDX_ERROR, "%s: a merged cell is missing", dst->path);
    return rc == SQLITE_ROW ? FDX_OK : fdx_store_fail_sqlite(dst, rc, "looking up a cell");
}

static int copy_kind(fdx_store *dst, fdx_store *src, fdx_kind kind, const origins *o)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(src,
                            kind == FDX_KIND_MISS ? FDX_STMT_MERGE_READ_MISS_HISTORY
                                                  : FDX_STMT_MERGE_READ_DISPATCH_HISTORY,
                            &st);
    if (rc != FDX_OK)
        return fdx_store_fail(dst, rc, "%s", src->errmsg);
    int64_t src_cell = -1, dst_cell = 0;
    int src_rc;
    while (rc == FDX_OK && (src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        fdx_cell cell;
        int i = fdx_row_key(st, kind, &cell);
        int64_t id = sqlite3_column_int64(st, i);
        int64_t day = sqlite3_column_int64(st, i + 1);
        int64_t origin = sqlite3_column_int64(st, i + 2);
        int64_t count = sqlite3_column_int64(st, i + 3);
        if (sqlite3_column_type(st, i + 1) != SQLITE_INTEGER ||
            sqlite3_column_type(st, i + 3) != SQLITE_INTEGER || count < 1 || day < 0 ||
            day > FDX_TIME_MAX / FDX_SECONDS_PER_DAY) {
            rc = fdx_store_fail(dst, FDX_ENOTSTORE,
                                "%s: not a valid fdx store: cell_history: a day or count out of "
                                "range (cell %lld)",
                                src->path, (long long)id);
            break;
        }
        if (id != src_cell && (rc = cell_id_in_dst(dst, &cell, &dst_cell)) != FDX_OK)
            break;
        src_cell = id;
        if (origin < 0 || origin >= o->n) {
            rc =
                fdx_store_fail(dst, FDX_ENOTSTORE, "%s: history names an unknown store", src->path);
            break;
        }
        rc = fdx_history_add(dst, dst_cell, day, o->map[origin], (uint64_t)count);
    }
    if (rc == FDX_OK && src_rc != SQLITE_DONE)
        rc = src_failed(dst, src, src_rc, "reading history");
    sqlite3_reset(st);
    return rc;
}

static int copy_ledger(fdx_store *dst, fdx_store *src)
{
    sqlite3_stmt *in, *out;
    int rc = fdx_store_stmt(src, FDX_STMT_MERGE_READ_LEDGER, &in);
    if (rc != FDX_OK)
        return fdx_store_fail(dst, rc, "%s", src->errmsg);
    int src_rc;
    while (rc == FDX_OK && (src_rc = sqlite3_step(in)) == SQLITE_ROW) {
        if ((rc = fdx_store_stmt(dst, FDX_STMT_MERGED_LEDGER_INSERT, &out)) != FDX_OK)
            break;
        for (int i = 0; i < 9; i++)
            sqlite3_bind_value(out, i + 1, sqlite3_column_value(in, i));
        int w = sqlite3_step(out);
        sqlite3_reset(out);
        if (w != SQLITE_DONE)
            rc = fdx_store_fail_sqlite(dst, w, "recording a merged ledger");
    }
    if (rc == FDX_OK && src_rc != SQLITE_DONE)
        rc = src_failed(dst, src, src_rc, "reading the ledger");
    sqlite3_reset(in);
    return rc;
}

int fdx_merge_history(fdx_store *dst, fdx_store *src)
{
    origins o = {NULL, 0};
    int rc = fdx_history_load(dst);
    if (rc == FDX_OK)
        rc = map_origins(dst, src, &o);
    if (rc == FDX_OK)
        rc = copy_kind(dst, src, FDX_KIND_MISS, &o);
    if (rc == FDX_OK)
        rc = copy_kind(dst, src, FDX_KIND_DISPATCH, &o);
    if (rc == FDX_OK)
        rc = copy_ledger(dst, src);
    free(o.map);
    return rc;
}
