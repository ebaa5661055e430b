/*
 * Merging spilled runs (spill.c writes them) with the newest cells, still
 * in memory, in key order: each distinct cell reaches the caller once, its
 * counts summed and its newest non-empty list kept.
 *
 * What a merge holds must not grow with the runs' number or their records'
 * length: besides its read-ahead it holds the key each run is at, and only
 * the one candidates list it writes (a list longer than its run's read-ahead
 * stays on the file until its cell is written). When the runs are too many,
 * or their longest keys together too long, for one merge, groups of runs are
 * first merged into one run each, as an external sort bounds its fan-in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/key_order.h"
#include "cell/spill_file.h"
#include "fdx.h"

/* What a merge reads ahead of all its runs together, each run a share of it
 * (64 KiB at most, 4 KiB at least), so a merge of many runs holds no more
 * than one of a few. */
#define MERGE_BYTES ((size_t)4 << 20)
#define MERGE_RUNS  (MERGE_BYTES / ((size_t)4 << 10))
/* What the keys the runs of one merge are at may hold together, counting
 * each run's longest (two runs are merged whatever their keys). */
#define MERGE_KEYS ((size_t)16 << 20)

/* A source of cells in key order: a run on the file, or the newest
 * aggregate through its key order. */
typedef struct cursor {
    int from_file;
    size_t age; /* runs are numbered oldest first; the aggregate is newest */
    off_t pos, end;
    fdx_buf buf; /* file bytes read ahead, from the current record on */
    size_t have, used, rec_len;
    const fdx_agg *agg;
    const uint32_t *order;
    size_t next, n;
    fdx_cell cell; /* the current record */
    fdx_str key;   /* packed, for a run's */
    uint64_t count;
    fdx_str cands;  /* its length only, while the list is on the file */
    off_t cands_at; /* where the list is on the file, or -1 */
} cursor;

/* A binary heap of cursors, the one at the smallest cell on top. */
typedef struct heap {
    cursor **v;
    size_t n;
} heap;

typedef struct merger merger;
/* Writes one merged cell: the cursor at it, its count and list. 0, -1 with
 * errno set, or a status of fdx_spill_fn. */
typedef int (*put_fn)(merger *m, const cursor *at, uint64_t count, fdx_str cands);

struct merger {
    fdx_spill *sp;
    size_t share; /* what each run's cursor reads ahead */
    heap h;
    cursor **eq;
    fdx_buf cands; /* the list being written, when it was on the file */
    put_fn put;
    fdx_spill_fn fn; /* merging into the caller's */
    void *ctx;
    off_t at;           /* merging into a new run: where it is written */
    const char *failed; /* what an errno of -1 was doing */
};

/* Makes buf hold the need bytes from the current record on; -1 (errno set)
 * on a read error or a run cut short. Room past its share, taken for a long
 * key, is given back at the next record that needs none. */
static int read_ahead(const merger *m, cursor *c, size_t need)
{
    if (c->used) {
        memmove(c->buf.data, c->buf.data + c->used, c->have - c->used);
        c->have -= c->used;
        c->used = 0;
    }
    size_t want = need > m->share ? need : m->share;
    if (c->have > want)
        want = c->have;
    if (fdx_buf_fit(&c->buf, want) != 0) {
        errno = ENOMEM;
        return -1;
    }
    size_t room = want - c->have;
    if ((off_t)room > c->end - c->pos)
        room = (size_t)(c->end - c->pos);
    if (c->have + room < need) { /* the record runs past its run's end */
        errno = EIO;
        return -1;
    }
    if (fdx_spill_transfer(m->sp, c->buf.data + c->have, room, &c->pos, 0) != 0)
        return -1;
    c->have += room;
    return 0;
}

/* Leaves the current record's list (of len bytes, after its head bytes of
 * header and key) on the file, skipping what of it was read ahead. */
static int leave_cands(cursor *c, size_t head, size_t len)
{
    off_t at = c->pos - (off_t)(c->have - c->used - head);
    if ((off_t)len > c->end - at) {
        errno = EIO;
        return -1;
    }
    c->cands = (fdx_str){NULL, len};
    c->cands_at = at;
    c->have = c->used + head;
    c->pos = at + (off_t)len;
    return 0;
}

/* Moves a run's cursor to its next record: 1, 0 at the end, -1 (errno set)
 * on error. A record within the share is read whole; a longer one leaves
 * its list on the file. */
static int advance_run(const merger *m, cursor *c)
{
    c->used += c->rec_len;
    c->rec_len = 0;
    if (c->used == c->have && c->pos == c->end)
        return 0;
    fdx_spill_rec h;
    if (c->have - c->used < sizeof h && read_ahead(m, c, sizeof h) != 0)
        return -1;
    memcpy(&h, c->buf.data + c->used, sizeof h);
    size_t head = sizeof h + (size_t)h.key_len, len = head + h.cands_len;
    size_t need = len <= m->share ? len : head;
    if (c->have - c->used < need && read_ahead(m, c, need) != 0)
        return -1;
    const char *p = c->buf.data + c->used + sizeof h;
    c->key = (fdx_str){p, h.key_len};
    fdx_cell_unpack(&c->cell, p, h.key_len);
    c->count = h.count;
    c->cands = h.cands_len ? (fdx_str){p + h.key_len, h.cands_len} : FDX_NO_CANDS;
    c->cands_at = -1;
    if (c->have - c->used < len) {
        if (leave_cands(c, head, h.cands_len) != 0)
            return -1;
        len = head;
    }
    c->rec_len = len;
    return 1;
}

/* Moves to the next record: 1, 0 at the end, -1 (errno set) on error. */
static int advance(const merger *m, cursor *c)
{
    if (c->from_file)
        return advance_run(m, c);
    if (c->next == c->n)
        return 0;
    fdx_agg_prefetch(c->agg, c->order, c->next, c->n);
    fdx_agg_get(c->agg, c->order[c->next++], &c->cell, &c->count, &c->cands);
    return 1;
}

static int has_cands(const cursor *c)
{
    return c->cands_at >= 0 || !fdx_cands_empty(c->cands);
}

/* The cursor's list, read into the merger's buffer when it is on the file. */
static int read_cands(merger *m, const cursor *c, fdx_str *cands)
{
    *cands = c->cands;
    if (c->cands_at < 0)
        return 0;
    fdx_buf_clear(&m->cands);
    if (m->cands.cap <= c->cands.n && fdx_buf_fit(&m->cands, c->cands.n) != 0) {
        errno = ENOMEM;
        return -1;
    }
    off_t at = c->cands_at;
    if (fdx_spill_transfer(m->sp, m->cands.data, c->cands.n, &at, 0) != 0)
        return -1;
    cands->p = m->cands.data;
    return 0;
}

static int cursor_cmp(const cursor *a, const cursor *b)
{
    if (a->cell.kind != b->cell.kind)
        return a->cell.kind < b->cell.kind ? -1 : 1;
    return fdx_cell_compare(&a->cell, &b->cell);
}

static void heap_push(heap *h, cursor *c)
{
    size_t i = h->n++;
    while (i && cursor_cmp(c, h->v[(i - 1) / 2]) < 0) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = c;
}

static cursor *heap_pop(heap *h)
{
    cursor *top = h->v[0], *last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = l;
        if (l >= h->n)
            break;
        if (l + 1 < h->n && cursor_cmp(h->v[l + 1], h->v[l]) < 0)
            m = l + 1;
        if (cursor_cmp(h->v[m], last) >= 0)
            break;
        h->v[i] = h->v[m];
        i = m;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/* Takes every cursor at the top's cell off the heap into eq; the count. */
static size_t pop_equal(heap *h, cursor **eq)
{
    size_t n = 0;
    eq[n++] = heap_pop(h);
    while (h->n && cursor_cmp(h->v[0], eq[0]) == 0)
        eq[n++] = heap_pop(h);
    return n;
}

/* Writes the cell the n cursors in eq are at, then moves them on. */
static int emit(merger *m, size_t n)
{
    cursor **eq = m->eq;
    uint64_t count = 0;
    const cursor *newest = NULL;
    for (size_t i = 0; i < n; i++) {
        count = fdx_count_add(count, eq[i]->count);
        if (has_cands(eq[i]) && (!newest || eq[i]->age > newest->age))
            newest = eq[i];
    }
    fdx_str cands = FDX_NO_CANDS;
    if (newest && read_cands(m, newest, &cands) != 0)
        return -1;
    int rc = m->put(m, eq[0], count, cands);
    for (size_t i = 0; rc == FDX_OK && i < n; i++) {
        int r = advance(m, eq[i]);
        if (r < 0)
            return -1;
        if (r)
            heap_push(&m->h, eq[i]);
    }
    return rc;
}

/* Merges the k cursors through m->put: FDX_OK, its status, or -1 (errno
 * set, m->failed saying what failed). Frees what the cursors hold. */
static int merge(merger *m, cursor *cs, size_t k)
{
    m->h = (heap){malloc(k * sizeof *m->h.v), 0};
    m->eq = malloc(k * sizeof *m->eq);
    m->failed = "reading";
    int rc = m->h.v && m->eq ? FDX_OK : -1;
    if (rc != FDX_OK)
        errno = ENOMEM;
    for (size_t i = 0; rc == FDX_OK && i < k; i++) {
        int r = advance(m, &cs[i]);
        if (r < 0)
            rc = -1;
        else if (r)
            heap_push(&m->h, &cs[i]);
    }
    while (rc == FDX_OK && m->h.n)
        rc = emit(m, pop_equal(&m->h, m->eq));
    int saved = errno;
    for (size_t i = 0; i < k; i++)
        fdx_buf_free(&cs[i].buf);
    fdx_buf_free(&m->cands);
    free(m->h.v);
    free(m->eq);
    errno = saved;
    return rc;
}

static size_t share_of(size_t runs)
{
    size_t share = MERGE_BYTES / (runs ? runs : 1);
    return share > FDX_SPILL_IO ? FDX_SPILL_IO : share;
}

static cursor run_cursor(const fdx_spill_run *r, size_t age)
{
    return (cursor){.from_file = 1, .age = age, .pos = r->start, .end = r->end, .cands_at = -1};
}

/* ---- merging groups of runs into one ---- */

static int put_run(merger *m, const cursor *at, uint64_t count, fdx_str cands)
{
    if (fdx_spill_put(m->sp, at->key, count, cands, &m->at) == 0)
        return FDX_OK;
    m->failed = "writing";
    return -1;
}

static size_t all_keys(const fdx_spill *sp)
{
    size_t keys = 0;
    for (size_t i = 0; i < sp->n_runs; i++)
        keys += sp->runs[i].longest;
    return keys;
}

/* Whether one merge may read every run (two always may). */
static int fits(const fdx_spill *sp)
{
    return sp->n_runs <= 2 || (sp->n_runs <= MERGE_RUNS && all_keys(sp) <= MERGE_KEYS);
}

/* How many runs from first on to merge into one: the fewest after which the
 * rest fit one merge, or as many as one merge may read when that is not
 * enough (two at least). */
static size_t group_at(const fdx_spill *sp, size_t first)
{
    size_t total = all_keys(sp), n = 0, keys = 0, longest = 0;
    while (first + n < sp->n_runs) {
        size_t l = sp->runs[first + n].longest;
        if (n >= 2 && (n == MERGE_RUNS || keys + l > MERGE_KEYS))
            break;
        keys += l;
        longest = l > longest ? l : longest;
        n++;
        if (n >= 2 && sp->n_runs - n + 1 <= MERGE_RUNS && total - keys + longest <= MERGE_KEYS)
            break;
    }
    return n;
}

/* Merges the n runs from first on into one new run at the file's end, which
 * takes their place in the list (a merge of consecutive ages keeps the
 * newest list of each cell its newest). */
static int merge_group(fdx_spill *sp, size_t first, size_t n, char *err, size_t size)
{
    cursor *cs = calloc(n, sizeof *cs);
    if (!cs)
        return fdx_spill_no_memory(err, size);
    size_t longest = 0;
    for (size_t i = 0; i < n; i++) {
        cs[i] = run_cursor(&sp->runs[first + i], i);
        if (sp->runs[first + i].longest > longest)
            longest = sp->runs[first + i].longest;
    }
    off_t start = sp->file_end;
    merger m = {.sp = sp, .share = share_of(n), .put = put_run, .at = start};
    int rc = merge(&m, cs, n);
    free(cs);
    if (rc == FDX_OK && fdx_spill_write_out(sp, &m.at) != 0) {
        rc = -1;
        m.failed = "writing";
    }
    return fdx_spill_end_run(sp, rc == FDX_OK ? NULL : m.failed,
                             (fdx_spill_run){start, m.at, longest}, first, n, err, size);
}

/* Merges groups of runs until one merge can read them all: consecutive
 * groups from the oldest on, pass after pass, each as small as will do, so
 * that what is rewritten (and the space it needs before the runs it
 * replaces give theirs back) is no more than it must be. */
static int narrow(fdx_spill *sp, char *err, size_t size)
{
    for (size_t i = 0; !fits(sp); i++) {
        if (i + 1 >= sp->n_runs)
            i = 0; /* the next pass */
        int rc = merge_group(sp, i, group_at(sp, i), err, size);
        if (rc != FDX_OK)
            return rc;
    }
    return FDX_OK;
}

/* ---- the final merge ---- */

static int put_cell(merger *m, const cursor *at, uint64_t count, fdx_str cands)
{
    return m->fn(m->ctx, &at->cell, count, cands);
}

int fdx_spill_merge(fdx_spill *sp, const fdx_agg *newest, fdx_spill_fn fn, void *ctx, char *err,
                    size_t size)
{
    int rc = narrow(sp, err, size);
    if (rc != FDX_OK)
        return rc;
    size_t k = sp->n_runs + 1;
    cursor *cs = calloc(k, sizeof *cs);
    uint32_t *order = NULL;
    if (!cs || fdx_agg_key_order(newest, &order) != FDX_OK) {
        free(cs);
        return fdx_spill_no_memory(err, size);
    }
    for (size_t i = 0; i < sp->n_runs; i++)
        cs[i] = run_cursor(&sp->runs[i], i);
    cs[k - 1] = (cursor){
        .age = k - 1, .agg = newest, .order = order, .n = fdx_agg_cells(newest), .cands_at = -1};
    merger m = {.sp = sp, .share = share_of(sp->n_runs), .put = put_cell, .fn = fn, .ctx = ctx};
    rc = merge(&m, cs, k);
    if (rc == -1)
        rc = errno == ENOMEM ? fdx_spill_no_memory(err, size)
                             : fdx_spill_fail(sp, err, size, m.failed);
    free(cs);
    free(order);
    return rc;
}
