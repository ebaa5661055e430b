/*
 * Writing recorded cells into SQLite, each distinct cell once: a stored one
 * by an upsert of its own, new ones held and written 16 to an insert (the
 * last few of a kind one at a time), telling inserts from updates for the
 * commit statistics. Cells past the memory budget wait in sorted runs on a
 * temporary file (cell/spill.c) and are merged with pending when the
 * transaction writes them.
 */
#include "store/store_flush.h"

#include <stdlib.h>

#include "cell/key_order.h"
#include "cell/spill_pipe.h"
#include "store/conn.h"
#include "store/history.h"
#include "store/ledger.h"

/* The first of two SQLite codes that is not SQLITE_OK. */
static int first_failure(int rc, int r)
{
    return rc != SQLITE_OK ? rc : r;
}

/* A text past SQLite's length limit is refused (SQLITE_TOOBIG) and bound as
 * NULL, so each bind's code is kept: the first failure is returned. */
static int bind_key_from(sqlite3_stmt *st, int *i, const fdx_cell *c)
{
    int rc = SQLITE_OK;
    if (c->kind == FDX_KIND_DISPATCH)
        rc = sqlite3_bind_int(st, (*i)++, c->keyed);
    const fdx_str *texts[] = {&c->token, &c->backend, &c->op, &c->dtypes_json, &c->kernel_source};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++)
        rc = first_failure(
            rc, sqlite3_bind_text(st, (*i)++, texts[k]->p, (int)texts[k]->n, SQLITE_STATIC));
    rc = first_failure(rc, sqlite3_bind_int64(st, (*i)++, (int64_t)(c->revision ^ FDX_HASH_FLIP)));
    rc = first_failure(rc, sqlite3_bind_int64(st, (*i)++, c->cc_major));
    rc = first_failure(rc, sqlite3_bind_int64(st, (*i)++, c->cc_minor));
    rc = first_failure(rc, sqlite3_bind_text(st, (*i)++, c->sku.p, (int)c->sku.n, SQLITE_STATIC));
    return first_failure(
        rc, sqlite3_bind_text(st, (*i)++, c->driver.p, (int)c->driver.n, SQLITE_STATIC));
}

int fdx_bind_key(sqlite3_stmt *st, const fdx_cell *c, int *next)
{
    *next = 1;
    return bind_key_from(st, next, c);
}

/* A cell's parameters of an upsert statement (miss_upsert.sql,
 * dispatch_upsert.sql), from ?first on: a statement of many rows gives each
 * row the same parameters one after another. The cell is written by the
 * transaction's ledger row, and candidates it brings are set at its time. */
static int bind_cell(sqlite3_stmt *st, int first, const fdx_store *s, const fdx_cell *c,
                     uint64_t count, fdx_str cands, int64_t cell_id)
{
    int i = first, rc = bind_key_from(st, &i, c);
    if (c->kind == FDX_KIND_DISPATCH)
        rc = first_failure(rc, sqlite3_bind_text(st, i++, cands.p, (int)cands.n, SQLITE_STATIC));
    rc = first_failure(rc, sqlite3_bind_int64(st, i++, (int64_t)count));
    rc = first_failure(rc, sqlite3_bind_int64(st, i++, s->ledger.id));
    if (c->kind == FDX_KIND_DISPATCH)
        rc = first_failure(rc, sqlite3_bind_int64(st, i++, s->txn_time_ms));
    return first_failure(rc, sqlite3_bind_int64(st, i, cell_id));
}

/*
 * Whether the store holds the cell, and if so its id and the ledger id that
 * last changed it. Looking it up tells a new cell from a stored one, and a
 * stored cell this transaction already changed (last_ingest is its ledger
 * id) from one it had not, so each cell counts once, as added or updated,
 * however many flushes write it.
 */
static int find_cell(fdx_store *s, const fdx_cell *c, int *found, int64_t *id, int64_t *last_ingest)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(
        s, c->kind == FDX_KIND_MISS ? FDX_STMT_MISS_CELL_ID : FDX_STMT_DISPATCH_CELL_ID, &st);
    if (rc != FDX_OK)
        return rc;
    int next;
    if ((rc = fdx_bind_key(st, c, &next)) != SQLITE_OK)
        return fdx_store_fail_sqlite(s, rc, "reading a cell");
    rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW;
    if (*found) {
        *id = sqlite3_column_int64(st, 0);
        *last_ingest = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? FDX_OK
                                                 : fdx_store_fail_sqlite(s, rc, "reading a cell");
}

/*
 * One upsert of a cell the store holds (its id), counted in the commit
 * statistics. The upsert returns nothing: a RETURNING clause makes SQLite
 * keep a statement journal for every upsert.
 */
static int update_stored(fdx_store *s, const fdx_cell *c, uint64_t count, fdx_str cands, int64_t id,
                         int64_t last_ingest)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(
        s, c->kind == FDX_KIND_MISS ? FDX_STMT_MISS_UPSERT : FDX_STMT_DISPATCH_UPSERT, &st);
    if (rc != FDX_OK)
        return rc;
    if ((rc = bind_cell(st, 1, s, c, count, cands, id)) != SQLITE_OK)
        return fdx_store_fail_sqlite(s, rc, "writing a cell");
    if ((rc = fdx_store_step_done(s, st, "writing a cell")) != FDX_OK)
        return rc;
    s->txn_stats.cells_updated += last_ingest != s->ledger.id;
    return FDX_OK;
}

static int by_cell_id(const void *a, const void *b)
{
    int64_t x = ((const fdx_history_row *)a)->cell_id, y = ((const fdx_history_row *)b)->cell_id;
    return (x > y) - (x < y);
}

/* History rows wait for this many (4 MiB) before they are written, sorted by
 * cell id: a store that holds cells has its history walked once for them. A
 * new store numbers its cells in the order written, so its rows come sorted
 * and waiting buys nothing; they wait for fewer (256 KiB), since they grow
 * while pending, which the merge reads from, still holds its budget. */
#define HISTORY_ROWS       ((size_t)1 << 18)
#define FRESH_HISTORY_ROWS ((size_t)1 << 14)

/* New cells wait for a statement of this many (*_insert_rows.sql): its own
 * cost, paid once for them all, is more than a row's. */
enum { GROUP = 16 };

/* A new cell, copied aside until its group is written. */
typedef struct held_cell {
    fdx_buf key; /* packed */
    fdx_buf cands;
    uint64_t count;
    int64_t id;
} held_cell;

typedef struct writer {
    fdx_store *s;
    int fresh; /* the store held no cell: none needs looking up */
    fdx_history_row *rows;
    size_t n, cap;
    held_cell held[2][GROUP]; /* by kind */
    int n_held[2];
} writer;

/* Writes the held cells of a kind: a whole group in one statement, fewer one
 * at a time. */
static int write_held(writer *w, fdx_kind kind)
{
    fdx_store *s = w->s;
    int per_stmt = w->n_held[kind] == GROUP && !s->ungrouped ? GROUP : 1, rc = FDX_OK;
    fdx_stmt_id id =
        per_stmt == GROUP
            ? (kind == FDX_KIND_MISS ? FDX_STMT_MISS_INSERT_ROWS : FDX_STMT_DISPATCH_INSERT_ROWS)
            : (kind == FDX_KIND_MISS ? FDX_STMT_MISS_UPSERT : FDX_STMT_DISPATCH_UPSERT);
    for (int k = 0; rc == FDX_OK && k < w->n_held[kind]; k += per_stmt) {
        sqlite3_stmt *st;
        if ((rc = fdx_store_stmt(s, id, &st)) != FDX_OK)
            break;
        int params = sqlite3_bind_parameter_count(st) / per_stmt, bound = SQLITE_OK;
        for (int r = 0; r < per_stmt; r++) {
            held_cell *h = &w->held[kind][k + r];
            fdx_cell c;
            fdx_cell_unpack(&c, h->key.data, h->key.len);
            bound = first_failure(bound, bind_cell(st, r * params + 1, s, &c, h->count,
                                                   (fdx_str){h->cands.data, h->cands.len}, h->id));
        }
        rc = bound != SQLITE_OK ? fdx_store_fail_sqlite(s, bound, "writing a cell")
                                : fdx_store_step_done(s, st, "writing a cell");
    }
    w->n_held[kind] = 0;
    return rc;
}

/* A cell the store does not hold: it gets the next id now, and is written
 * with the group it completes. The merge writes each cell once, so no other
 * statement of the flush can write it first. */
static int hold_new(writer *w, const fdx_cell *cell, uint64_t count, fdx_str cands, int64_t *id)
{
    fdx_store *s = w->s;
    held_cell *h = &w->held[cell->kind][w->n_held[cell->kind]];
    fdx_cell_pack(cell, &h->key);
    fdx_buf_clear(&h->cands);
    fdx_buf_append(&h->cands, cands.p, cands.n);
    if (h->key.oom || h->cands.oom)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    h->count = count;
    *id = h->id = s->hist.next_cell_id++;
    s->hist.dirty = 1;
    s->txn_stats.cells_added++;
    return ++w->n_held[cell->kind] == GROUP ? write_held(w, cell->kind) : FDX_OK;
}

static void writer_free(writer *w)
{
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < GROUP; i++) {
            fdx_buf_free(&w->held[k][i].key);
            fdx_buf_free(&w->held[k][i].cands);
        }
    free(w->rows);
}

/* Cells go in key order and their history rows in cell id order: each
 * B-tree is then walked from one end to the other, every page read and
 * written once, instead of a page fetched per cell. The cells held for their
 * group go first, so that each row's cell is written before it. */
static int write_history(writer *w)
{
    int rc = write_held(w, FDX_KIND_MISS);
    if (rc == FDX_OK)
        rc = write_held(w, FDX_KIND_DISPATCH);
    if (rc != FDX_OK)
        return rc;
    size_t sorted = 1;
    while (sorted < w->n && w->rows[sorted - 1].cell_id < w->rows[sorted].cell_id)
        sorted++;
    if (sorted < w->n) /* a new store's cells are numbered in the order written */
        qsort(w->rows, w->n, sizeof *w->rows, by_cell_id);
    rc = fdx_history_add_rows(w->s, w->rows, w->n, fdx_history_txn_day(w->s), 0);
    w->n = 0;
    return rc;
}

static int write_cell(void *ctx, const fdx_cell *cell, uint64_t count, fdx_str cands)
{
    writer *w = ctx;
    int rc = w->n == (w->fresh ? FRESH_HISTORY_ROWS : HISTORY_ROWS) ? write_history(w) : FDX_OK;
    if (rc == FDX_OK && fdx_grow(&w->rows, &w->cap, w->n + 1, sizeof *w->rows))
        rc = fdx_store_fail(w->s, FDX_ENOMEM, "out of memory");
    if (rc != FDX_OK)
        return rc;
    fdx_history_row *row = &w->rows[w->n++];
    row->count = count;
    int found = 0;
    int64_t last_ingest = 0;
    if (!w->fresh && (rc = find_cell(w->s, cell, &found, &row->cell_id, &last_ingest)) != FDX_OK)
        return rc;
    if (!found)
        return hold_new(w, cell, count, cands, &row->cell_id);
    return update_stored(w->s, cell, count, cands, row->cell_id, last_ingest);
}

/* Pending and the runs spilled before it, merged: each cell written once. */
static int write_pending(fdx_store *s)
{
    if (!fdx_agg_cells(s->pending) && !fdx_spill_runs(s->spill))
        return FDX_OK;
    int rc = fdx_ledger_open_row(s); /* cells name their transaction */
    if (rc == FDX_OK)
        rc = fdx_history_load(s); /* the next cell id, and the days the rows roll */
    if (rc != FDX_OK)
        return rc;
    if (fdx_spill_runs(s->spill))
        fdx_agg_shrink(s->pending); /* its arrays held a whole run: room for the merge */
    writer w = {.s = s};
    int has_cells;
    if ((rc = fdx_store_has_cells(s, &has_cells)) != FDX_OK)
        return rc;
    w.fresh = !has_cells;
    char err[700] = "";
    rc = fdx_spill_runs(s->spill)
             ? fdx_spill_merge_piped(s->spill, s->pending, write_cell, &w, err, sizeof err)
             : fdx_spill_merge(s->spill, s->pending, write_cell, &w, err, sizeof err);
    if (rc != FDX_OK && err[0])
        rc = fdx_store_fail(s, rc, "%s: writing spilled cells: %s", s->path, err);
    if (rc == FDX_OK) {
        fdx_agg_release(s->pending); /* written: its memory serves the history and the commit */
        rc = write_history(&w);
    }
    writer_free(&w);
    return rc;
}

static void swap(fdx_agg **a, fdx_agg **b)
{
    fdx_agg *t = *a;
    *a = *b;
    *b = t;
}

/* A flush that fails has written part of pending, or all of it and given it
 * back before the history rows: writing it again would count that part twice
 * or lose the rest, so the transaction can only be rolled back. */
int fdx_store_flush_pending(fdx_store *s)
{
    int rc = write_pending(s);
    if (rc == FDX_OK) {
        fdx_agg_clear(s->pending);
        fdx_spill_truncate(s->spill, 0);
    } else {
        s->txn_broken = 1;
    }
    return rc;
}

/* Pending, in key order, onto the spill file as its newest run. */
static int spill(fdx_store *s)
{
    char err[700] = "";
    int rc = fdx_spill_add(s->spill, s->pending, err, sizeof err);
    s->spills += rc == FDX_OK;
    return rc == FDX_OK ? rc : fdx_store_fail(s, rc, "%s: spilling cells: %s", s->path, err);
}

/*
 * The ingest's cells are in pending since its mark. Once spilled, pending
 * goes back to the mark: what is left is what the ingests before it
 * recorded, kept in `saved` in case the ingest fails and its runs are
 * dropped. A later spill of the same ingest finds saved already holding
 * that, and pending empty at its mark.
 */
static int spill_path(fdx_store *s)
{
    int rc = spill(s);
    if (rc != FDX_OK)
        return rc;
    fdx_agg_undo(s->pending);
    if (fdx_agg_cells(s->pending)) {
        swap(&s->pending, &s->saved); /* saved was empty: this is the first spill */
        fdx_agg_shrink(s->saved);     /* its arrays were sized for the whole budget */
        fdx_agg_release(s->pending);  /* saved's, which held nothing */
    } else {
        fdx_agg_recycle(s->pending);
    }
    fdx_agg_mark(s->pending);
    return FDX_OK;
}

/*
 * Pending is written once it holds the budget, less what `saved` holds, but
 * never with less than a quarter of the budget to itself: an ingest that
 * began with pending nearly full still aggregates its lines between spills.
 * So at most 1.25 budgets of cells are held (1.3125 with the pages below),
 * and cells recorded again by later runs of the same ingest are written once
 * as long as they fit in one. Once spilled, pending keeps of its arrays what
 * this run used (fdx_agg_recycle):
 * faulting a budget's pages in again for every run cost an eighth of a
 * high-cardinality ingest. What fills the budget differs from run to run
 * (many cells in one, long keys in the next), and the pages one run wrote
 * stay in memory while the next fills other arrays, so pending also spills
 * once those and its cells hold a sixteenth of the budget more than its room.
 * What an ingest's line memos hold past their least bound is lent from the
 * budget (spill_lent, at most half of it). The spill's sort takes memory of
 * its own for each cell (a fifth more than small cells hold), so the cells
 * and what sorting them will take stay within the room together.
 */
int fdx_store_spill_if_full(fdx_store *s)
{
    size_t lent = s->spill_lent < s->spill_bytes / 2 ? s->spill_lent : s->spill_bytes / 2;
    size_t kept = fdx_agg_bytes(s->saved), budget = s->spill_bytes - lent;
    size_t room = kept < budget / 4 * 3 ? budget - kept : budget / 4;
    size_t sort = fdx_agg_key_order_bytes(fdx_agg_cells(s->pending));
    if (fdx_agg_bytes(s->pending) + sort < room &&
        fdx_agg_resident(s->pending) + sort < room + budget / 16)
        return FDX_OK;
    if (s->path_open == FDX_PATH_UNDOABLE)
        return spill_path(s);
    int rc = spill(s);
    if (rc == FDX_OK)
        fdx_agg_recycle(s->pending);
    return rc;
}

void fdx_store_begin_path(fdx_store *s, int undoable)
{
    s->path_runs = fdx_spill_runs(s->spill);
    s->path_open = undoable ? FDX_PATH_UNDOABLE : FDX_PATH_ALL_OR_NOTHING;
    if (undoable)
        fdx_agg_mark(s->pending);
}

int fdx_store_end_path(fdx_store *s, int ok)
{
    int open = s->path_open;
    s->path_open = 0;
    if (!ok && open != FDX_PATH_UNDOABLE) {
        /* An all-or-nothing path; or none open (its start was never recorded, or
         * it was ended already and its last spill failed): nothing can say what
         * to take back. */
        if (!s->txn_broken)
            s->txn_broken = open == FDX_PATH_ALL_OR_NOTHING ? FDX_TXN_BROKEN_PATH : 1;
        return FDX_OK;
    }
    if (!ok) {
        fdx_spill_truncate(s->spill, s->path_runs);
        fdx_agg_undo(s->pending);
        if (fdx_agg_cells(s->saved))
            swap(&s->pending, &s->saved); /* pending was empty at its mark */
        fdx_agg_release(s->saved);
        return FDX_OK;
    }
    fdx_agg_keep(s->pending);
    fdx_agg_release(s->saved);
    return fdx_store_spill_if_full(s);
}
