/*
 * What a merge brings (steps 5 to 7 of docs/FORMAT.md's "How a merge
 * applies") for the SQLite target: each bucket's gain, each staged cell's
 * total, and ids for the new cells that gain. sql/merge_apply_delta.sql,
 * merge_apply_gain.sql and merge_apply_number.sql define them and are what
 * this is tested against; run as SQL, SQLite grouped and joined per-month
 * sums through temporary B-trees and automatic indexes, then went through
 * every staged cell twice more: seconds for a million history rows. Both
 * sides are staged under the key (cell, origin, day), so here each is read
 * once in that order, side by side, a month at a time (a pair has at most 31
 * rows in a month), and a cell's total is known when its last month is done.
 */
#include "store/merge_gains.h"

#include "common/when.h"
#include "store/conn.h"

#define MONTH_DAYS 31

typedef struct hist_row {
    int64_t cell, origin, day;
    uint64_t count;
} hist_row;

typedef struct cursor {
    sqlite3_stmt *st;
    hist_row r;
    int has; /* r is the current row; 0 past the last one */
} cursor;

/* One source day of the month: its count and this store's count that day. */
typedef struct src_day {
    int64_t day;
    uint64_t count, tgt;
} src_day;

typedef struct month {
    int64_t cell, origin, first; /* first: the month's first day */
    src_day days[MONTH_DAYS];
    size_t n;
    uint64_t src_sum, tgt_sum;
} month;

typedef struct pass {
    fdx_store *dst;
    sqlite3_stmt *put_delta, *put_new, *put_known;
    int64_t coarse, next_id;
    int64_t cell;  /* the staged cell being summed */
    int is_new;    /* it has no target here */
    uint64_t gain; /* its gains so far */
    fdx_merge_gains *out;
} pass;

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return b > (uint64_t)INT64_MAX - a ? (uint64_t)INT64_MAX : a + b;
}

static int advance(fdx_store *dst, cursor *c)
{
    int rc = sqlite3_step(c->st);
    c->has = rc == SQLITE_ROW;
    if (c->has)
        c->r = (hist_row){sqlite3_column_int64(c->st, 0), sqlite3_column_int64(c->st, 1),
                          sqlite3_column_int64(c->st, 2), (uint64_t)sqlite3_column_int64(c->st, 3)};
    return c->has || rc == SQLITE_DONE
               ? FDX_OK
               : fdx_store_fail_sqlite(dst, rc, "reading a merge's history");
}

/* Whether the cell of the source's row the cursor is at has no target here
 * (merge_gains_src.sql's fifth column). */
static int cell_is_new(const cursor *src)
{
    return sqlite3_column_int(src->st, 4);
}

static int open_cursor(fdx_store *dst, fdx_stmt_id id, cursor *c)
{
    int rc = fdx_store_stmt(dst, id, &c->st);
    return rc == FDX_OK ? advance(dst, c) : rc;
}

static int in_month(const cursor *c, const month *m)
{
    return c->has && c->r.cell == m->cell && c->r.origin == m->origin &&
           fdx_month_start(c->r.day) == m->first;
}

/* This store's rows that come before the month m of its pair. */
static int before(const cursor *c, const month *m)
{
    const hist_row *r = &c->r;
    return c->has && (r->cell < m->cell || (r->cell == m->cell && r->origin < m->origin) ||
                      (r->cell == m->cell && r->origin == m->origin && r->day < m->first));
}

/* Reads the source's rows of the month the cursor is at. */
static int read_src(fdx_store *dst, cursor *src, month *m)
{
    *m =
        (month){.cell = src->r.cell, .origin = src->r.origin, .first = fdx_month_start(src->r.day)};
    int rc = FDX_OK;
    while (rc == FDX_OK && in_month(src, m)) {
        if (m->n == MONTH_DAYS) /* the key (cell, origin, day) rules this out */
            return fdx_store_fail(dst, FDX_ERROR, "merge: more than %d days of a month staged",
                                  MONTH_DAYS);
        m->days[m->n++] = (src_day){src->r.day, src->r.count, 0};
        m->src_sum = sat_add(m->src_sum, src->r.count);
        rc = advance(dst, src);
    }
    return rc;
}

/* Sums this store's rows of the month, noting each one on its source day. */
static int read_tgt(fdx_store *dst, cursor *tgt, month *m)
{
    int rc = FDX_OK;
    while (rc == FDX_OK && before(tgt, m))
        rc = advance(dst, tgt);
    for (size_t k = 0; rc == FDX_OK && in_month(tgt, m); rc = advance(dst, tgt)) {
        m->tgt_sum = sat_add(m->tgt_sum, tgt->r.count);
        while (k < m->n && m->days[k].day < tgt->r.day)
            k++;
        if (k < m->n && m->days[k].day == tgt->r.day)
            m->days[k].tgt = tgt->r.count;
    }
    return rc;
}

static int put_delta(pass *p, const month *m, int64_t day, uint64_t delta)
{
    sqlite3_stmt *st = p->put_delta;
    sqlite3_bind_int64(st, 1, m->cell);
    sqlite3_bind_int64(st, 2, m->origin);
    sqlite3_bind_int64(st, 3, day);
    sqlite3_bind_int64(st, 4, (int64_t)delta);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(p->dst, rc, "writing a merge's gains");
    p->gain = sat_add(p->gain, delta);
    if (day > p->out->max_day)
        p->out->max_day = day;
    return FDX_OK;
}

/* The month gains G = S - T when S > T: on its days when, from coarse on,
 * their own gains add up to G; otherwise all of it on its first day. */
static int write_month(pass *p, const month *m)
{
    if (m->src_sum <= m->tgt_sum)
        return FDX_OK;
    uint64_t gain = m->src_sum - m->tgt_sum, days_gain = 0;
    int any = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->days[i].day >= p->coarse && m->days[i].count > m->days[i].tgt) {
            days_gain = sat_add(days_gain, m->days[i].count - m->days[i].tgt);
            any = 1;
        }
    if (!any || days_gain != gain)
        return put_delta(p, m, m->first, gain);
    int rc = FDX_OK;
    for (size_t i = 0; rc == FDX_OK && i < m->n; i++)
        if (m->days[i].day >= p->coarse && m->days[i].count > m->days[i].tgt)
            rc = put_delta(p, m, m->days[i].day, m->days[i].count - m->days[i].tgt);
    return rc;
}

static int step_cell(pass *p, sqlite3_stmt *st, int with_id)
{
    sqlite3_bind_int64(st, 1, p->cell);
    sqlite3_bind_int64(st, 2, (int64_t)p->gain);
    if (with_id)
        sqlite3_bind_int64(st, 3, p->next_id);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? FDX_OK
                             : fdx_store_fail_sqlite(p->dst, rc, "writing a merge's gains");
}

/* The summed cell's gain, and the next id when it is new (cells come in
 * staged order, so ids go in that order too). */
static int end_cell(pass *p)
{
    if (p->gain == 0)
        return FDX_OK;
    int rc = step_cell(p, p->is_new ? p->put_new : p->put_known, p->is_new);
    if (rc == FDX_OK && p->is_new) {
        p->next_id++;
        p->out->added++;
    }
    p->gain = 0;
    return rc;
}

int fdx_merge_gains_apply(fdx_store *dst, int64_t coarse, int64_t next_id, fdx_merge_gains *out)
{
    pass p = {.dst = dst, .coarse = coarse, .next_id = next_id, .out = out};
    cursor src = {0}, tgt = {0};
    month m;
    *out = (fdx_merge_gains){0, INT64_MIN};
    int rc = fdx_store_stmt(dst, FDX_STMT_MERGE_GAINS_DELTA, &p.put_delta);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(dst, FDX_STMT_MERGE_GAINS_CELL, &p.put_new);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(dst, FDX_STMT_MERGE_GAINS_KNOWN, &p.put_known);
    if (rc == FDX_OK)
        rc = open_cursor(dst, FDX_STMT_MERGE_GAINS_SRC, &src);
    if (rc == FDX_OK)
        rc = open_cursor(dst, FDX_STMT_MERGE_GAINS_TGT, &tgt);
    p.cell = src.has ? src.r.cell : 0;
    p.is_new = src.has && cell_is_new(&src);
    while (rc == FDX_OK && src.has) {
        if (src.r.cell != p.cell) {
            rc = end_cell(&p);
            p.cell = src.r.cell;
            p.is_new = cell_is_new(&src);
        }
        if (rc == FDX_OK)
            rc = read_src(dst, &src, &m);
        if (rc == FDX_OK)
            rc = read_tgt(dst, &tgt, &m);
        if (rc == FDX_OK)
            rc = write_month(&p, &m);
    }
    if (rc == FDX_OK)
        rc = end_cell(&p);
    if (src.st)
        sqlite3_reset(src.st);
    if (tgt.st)
        sqlite3_reset(tgt.st);
    return rc;
}
