/*
 * Writing pending cells into SQLite: one upsert per distinct cell, telling
 * inserts from updates for the commit statistics.
 */
#include "store/store_internal.h"

/* Binds the key columns in the order the .sql files number them; returns the
 * next parameter index. */
static int bind_key(sqlite3_stmt *st, const fdx_cell *c)
{
    int i = 1;
    if (c->kind == FDX_KIND_DISPATCH)
        sqlite3_bind_int(st, i++, c->keyed);
    const fdx_str *texts1[] = {&c->token, &c->backend, &c->op, &c->dtypes_json, &c->kernel_source};
    for (size_t k = 0; k < sizeof texts1 / sizeof texts1[0]; k++, i++)
        sqlite3_bind_text(st, i, texts1[k]->p, (int)texts1[k]->n, SQLITE_STATIC);
    sqlite3_bind_int64(st, i++, (int64_t)(c->revision ^ FDX_HASH_FLIP));
    sqlite3_bind_int64(st, i++, c->cc_major);
    sqlite3_bind_int64(st, i++, c->cc_minor);
    sqlite3_bind_text(st, i++, c->sku.p, (int)c->sku.n, SQLITE_STATIC);
    sqlite3_bind_text(st, i++, c->driver.p, (int)c->driver.n, SQLITE_STATIC);
    return i;
}

static int cell_exists(fdx_store *s, const fdx_cell *c, int *exists)
{
    sqlite3_stmt *st;
    fdx_stmt_id id = c->kind == FDX_KIND_MISS ? FDX_STMT_MISS_EXISTS : FDX_STMT_DISPATCH_EXISTS;
    int rc = fdx_store_stmt(s, id, &st);
    if (rc != FDX_OK)
        return rc;
    bind_key(st, c);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(s, rc, "looking up a cell");
    *exists = rc == SQLITE_ROW;
    return FDX_OK;
}

int fdx_store_upsert(fdx_store *s, fdx_stmt_id id, const fdx_cell *c, uint64_t count, fdx_str cands,
                     const int64_t *set_at)
{
    int existed = -1;
    if (count == FDX_COUNT_MAX) { /* the returned count cannot tell */
        int rc = cell_exists(s, c, &existed);
        if (rc != FDX_OK)
            return rc;
    }
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, id, &st);
    if (rc != FDX_OK)
        return rc;
    int i = bind_key(st, c);
    if (c->kind == FDX_KIND_DISPATCH)
        sqlite3_bind_text(st, i++, cands.p, (int)cands.n, SQLITE_STATIC);
    sqlite3_bind_int64(st, i++, (int64_t)count);
    sqlite3_bind_int64(st, i++, s->ledger.id);
    if (c->kind == FDX_KIND_DISPATCH && set_at)
        sqlite3_bind_int64(st, i, *set_at);
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        int code = fdx_store_fail_sqlite(s, rc, "writing a cell");
        sqlite3_reset(st);
        return code;
    }
    uint64_t stored = (uint64_t)sqlite3_column_int64(st, 0);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(s, rc, "writing a cell");
    int added = existed >= 0 ? !existed : stored == count;
    if (added)
        s->txn_stats.cells_added++;
    else
        s->txn_stats.cells_updated++;
    return FDX_OK;
}

static int write_agg(fdx_store *s, fdx_agg *agg)
{
    size_t n = fdx_agg_cells(agg);
    int rc = n ? fdx_ledger_open_row(s) : FDX_OK; /* cells name their transaction */
    for (size_t i = 0; rc == FDX_OK && i < n; i++) {
        fdx_cell cell;
        uint64_t count;
        fdx_str cands;
        fdx_agg_get(agg, i, &cell, &count, &cands);
        rc = fdx_store_upsert(
            s, cell.kind == FDX_KIND_MISS ? FDX_STMT_MISS_UPSERT : FDX_STMT_DISPATCH_UPSERT, &cell,
            count, cands, &s->txn_time_ms);
    }
    return rc;
}

static int flush_agg(fdx_store *s, fdx_agg *agg)
{
    int rc = write_agg(s, agg);
    if (rc == FDX_OK)
        fdx_agg_clear(agg);
    return rc;
}

static void swap(fdx_agg **a, fdx_agg **b)
{
    fdx_agg *t = *a;
    *a = *b;
    *b = t;
}

int fdx_store_flush_pending(fdx_store *s)
{
    return flush_agg(s, s->pending);
}

int fdx_store_flush_path(fdx_store *s)
{
    if (fdx_agg_cells(s->pending)) {
        int rc = write_agg(s, s->pending);
        if (rc != FDX_OK)
            return rc;
        swap(&s->pending, &s->saved); /* saved was empty: pending is written once */
    }
    return flush_agg(s, s->path_agg);
}

int fdx_store_end_path(fdx_store *s, int ok)
{
    if (!ok) {
        fdx_agg_clear(s->path_agg);
        if (fdx_agg_cells(s->saved))
            swap(&s->pending, &s->saved);
        return FDX_OK;
    }
    fdx_agg_clear(s->saved);
    if (fdx_agg_merge(s->pending, s->path_agg) != FDX_OK)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    fdx_agg_clear(s->path_agg);
    return fdx_agg_cells(s->pending) >= FDX_SPILL_CELLS ? fdx_store_flush_pending(s) : FDX_OK;
}
