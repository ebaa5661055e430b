/*
 * Spilling cells to sorted runs. An ingest with more distinct cells than fit
 * in its memory budget used to write them into SQLite each time the budget
 * filled: every write touched pages all over the cell tables, so a 500k-cell
 * ingest wrote its store several times over through a page cache that held
 * a fraction of it. Here each spill is one sequential write of the cells in
 * key order; the transaction's end merges the runs and writes each cell
 * once, walking the tables from one end to the other.
 *
 * A run is a sequence of records: a header (key length, candidates length,
 * count), the packed key (fdx_cell_pack), the candidates JSON (none for the
 * empty list). The file has no name, so nothing is left behind by a kill.
 */
#include "cell/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/key_order.h"
#include "common/buf.h"
#include "fdx.h"

#define IO_BYTES ((size_t)64 << 10)
/* What a merge reads ahead of all its runs together, so that a merge of
 * many runs holds no more than a few: each run gets a share, 4 KiB at least. */
#define MERGE_BYTES  ((size_t)4 << 20)
#define MERGE_MIN_IO ((size_t)4 << 10)

typedef struct run {
    off_t start, end;
} run;

typedef struct rec_head {
    uint32_t key_len;
    uint32_t cands_len;
    uint64_t count;
} rec_head;

struct fdx_spill {
    int fd;
    char *dir; /* $TMPDIR or /tmp, from the first run on */
    run *runs;
    size_t n_runs, cap_runs;
    fdx_buf out;
};

fdx_spill *fdx_spill_new(void)
{
    fdx_spill *sp = calloc(1, sizeof *sp);
    if (sp)
        sp->fd = -1;
    return sp;
}

void fdx_spill_free(fdx_spill *sp)
{
    if (!sp)
        return;
    if (sp->fd >= 0)
        close(sp->fd);
    free(sp->dir);
    free(sp->runs);
    fdx_buf_free(&sp->out);
    free(sp);
}

size_t fdx_spill_runs(const fdx_spill *sp)
{
    return sp->n_runs;
}

static int fail(const fdx_spill *sp, char *err, size_t size, const char *what)
{
    snprintf(err, size, "%s a temporary file in %s: %s", what, sp->dir, strerror(errno));
    return FDX_EIO;
}

static int no_memory(char *err, size_t size)
{
    snprintf(err, size, "out of memory");
    return FDX_ENOMEM;
}

static int open_file(fdx_spill *sp, char *err, size_t size)
{
    static const char tail[] = "/fdx-spill-XXXXXX";
    const char *dir = getenv("TMPDIR");
    dir = dir && *dir ? dir : "/tmp";
    size_t n = strlen(dir);
    free(sp->dir);
    sp->dir = malloc(n + sizeof tail);
    if (!sp->dir)
        return no_memory(err, size);
    memcpy(sp->dir, dir, n + 1);
    sp->fd = open(sp->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (sp->fd >= 0)
        return FDX_OK;
    /* filesystems without O_TMPFILE: a name, removed at once */
    memcpy(sp->dir + n, tail, sizeof tail);
    sp->fd = mkostemp(sp->dir, O_CLOEXEC);
    if (sp->fd >= 0)
        unlink(sp->dir);
    int saved = errno;
    sp->dir[n] = '\0';
    errno = saved;
    return sp->fd >= 0 ? FDX_OK : fail(sp, err, size, "cannot create");
}

static off_t end_of_runs(const fdx_spill *sp)
{
    return sp->n_runs ? sp->runs[sp->n_runs - 1].end : 0;
}

static int write_all(fdx_spill *sp, off_t *at, char *err, size_t size)
{
    const char *p = sp->out.data;
    size_t n = sp->out.len;
    while (n) {
        ssize_t w = pwrite(sp->fd, p, n, *at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return fail(sp, err, size, "writing");
        }
        p += w;
        n -= (size_t)w;
        *at += w;
    }
    fdx_buf_clear(&sp->out);
    return FDX_OK;
}

static void put_record(fdx_buf *out, fdx_str key, uint64_t count, fdx_str cands)
{
    int none = fdx_cands_empty(cands);
    rec_head h = {(uint32_t)key.n, none ? 0 : (uint32_t)cands.n, count};
    fdx_buf_append(out, &h, sizeof h);
    fdx_buf_append(out, key.p, key.n);
    if (!none)
        fdx_buf_append(out, cands.p, cands.n);
}

/* Drops the file's bytes from end on, giving their space back. */
static void cut_at(const fdx_spill *sp, off_t end)
{
    if (ftruncate(sp->fd, end) != 0) {
        /* the space comes back when the file closes */
    }
}

int fdx_spill_add(fdx_spill *sp, const fdx_agg *agg, char *err, size_t size)
{
    int rc = sp->fd < 0 ? open_file(sp, err, size) : FDX_OK;
    if (rc != FDX_OK)
        return rc;
    uint32_t *order;
    if (fdx_grow(&sp->runs, &sp->cap_runs, sp->n_runs + 1, sizeof *sp->runs) ||
        fdx_agg_key_order(agg, &order) != FDX_OK)
        return no_memory(err, size);
    off_t start = end_of_runs(sp), at = start;
    for (size_t i = 0, n = fdx_agg_cells(agg); rc == FDX_OK && i < n; i++) {
        fdx_str key, cands;
        uint64_t count;
        fdx_agg_get_packed(agg, order[i], &key, &count, &cands);
        if (key.n > UINT32_MAX || cands.n > UINT32_MAX)
            rc = FDX_ENOMEM;
        else
            put_record(&sp->out, key, count, cands);
        if (rc == FDX_OK && sp->out.oom)
            rc = FDX_ENOMEM;
        if (rc == FDX_OK && (sp->out.len >= IO_BYTES || i + 1 == n))
            rc = write_all(sp, &at, err, size);
    }
    free(order);
    fdx_buf_clear(&sp->out);
    if (rc != FDX_OK && at > start) /* a run cut short (a full disk) holds no space */
        cut_at(sp, start);
    if (rc == FDX_ENOMEM)
        return no_memory(err, size);
    if (rc != FDX_OK)
        return rc;
    sp->runs[sp->n_runs++] = (run){start, at};
    return FDX_OK;
}

void fdx_spill_truncate(fdx_spill *sp, size_t n)
{
    if (n >= sp->n_runs)
        return;
    sp->n_runs = n;
    cut_at(sp, end_of_runs(sp));
}

/* ---- merging ---- */

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
    uint64_t count;
    fdx_str cands;
} cursor;

/* What each run's cursor reads at a time: its share of MERGE_BYTES. */
static size_t run_share(const fdx_spill *sp)
{
    size_t share = MERGE_BYTES / (sp->n_runs ? sp->n_runs : 1);
    return share > IO_BYTES ? IO_BYTES : share < MERGE_MIN_IO ? MERGE_MIN_IO : share;
}

/* Makes buf hold the need bytes from the current record on; -1 (errno set)
 * on a read error or a run cut short. */
static int read_ahead(const fdx_spill *sp, cursor *c, size_t need)
{
    if (c->used) {
        memmove(c->buf.data, c->buf.data + c->used, c->have - c->used);
        c->have -= c->used;
        c->used = 0;
    }
    size_t share = run_share(sp), want = need > share ? need : share;
    if (fdx_buf_reserve_exact(&c->buf, want) != 0) {
        errno = ENOMEM;
        return -1;
    }
    while (c->have < need) {
        size_t room = want - c->have;
        if ((off_t)room > c->end - c->pos)
            room = (size_t)(c->end - c->pos);
        ssize_t r = room ? pread(sp->fd, c->buf.data + c->have, room, c->pos) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO;
            return -1;
        }
        c->have += (size_t)r;
        c->pos += r;
    }
    return 0;
}

/* Moves to the next record: 1, 0 at the end, -1 (errno set) on error. */
static int advance(const fdx_spill *sp, cursor *c)
{
    if (!c->from_file) {
        if (c->next == c->n)
            return 0;
        fdx_agg_get(c->agg, c->order[c->next++], &c->cell, &c->count, &c->cands);
        return 1;
    }
    c->used += c->rec_len;
    c->rec_len = 0;
    if (c->used == c->have && c->pos == c->end)
        return 0;
    rec_head h;
    if (c->have - c->used < sizeof h && read_ahead(sp, c, sizeof h) != 0)
        return -1;
    memcpy(&h, c->buf.data + c->used, sizeof h);
    size_t len = sizeof h + (size_t)h.key_len + h.cands_len;
    if (c->have - c->used < len && read_ahead(sp, c, len) != 0)
        return -1;
    const char *p = c->buf.data + c->used + sizeof h;
    fdx_cell_unpack(&c->cell, p, h.key_len);
    c->count = h.count;
    c->cands = h.cands_len ? (fdx_str){p + h.key_len, h.cands_len} : FDX_NO_CANDS;
    c->rec_len = len;
    return 1;
}

static int cursor_cmp(const cursor *a, const cursor *b)
{
    if (a->cell.kind != b->cell.kind)
        return a->cell.kind < b->cell.kind ? -1 : 1;
    return fdx_cell_compare(&a->cell, &b->cell);
}

/* A binary heap of cursors, the one at the smallest cell on top. */
typedef struct heap {
    cursor **v;
    size_t n;
} heap;

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

/* Writes the cell the cursors in eq are at, then moves them on. */
static int emit(const fdx_spill *sp, heap *h, cursor **eq, size_t n, fdx_spill_fn fn, void *ctx)
{
    uint64_t count = 0;
    fdx_str cands = FDX_NO_CANDS;
    size_t age = 0;
    for (size_t i = 0; i < n; i++) {
        count = fdx_count_add(count, eq[i]->count);
        if (!fdx_cands_empty(eq[i]->cands) && (fdx_cands_empty(cands) || eq[i]->age > age)) {
            cands = eq[i]->cands;
            age = eq[i]->age;
        }
    }
    int rc = fn(ctx, &eq[0]->cell, count, cands);
    for (size_t i = 0; rc == FDX_OK && i < n; i++) {
        int r = advance(sp, eq[i]);
        if (r < 0)
            return -1;
        if (r)
            heap_push(h, eq[i]);
    }
    return rc;
}

static int merge(const fdx_spill *sp, cursor *cs, size_t k, heap *h, fdx_spill_fn fn, void *ctx)
{
    cursor **eq = malloc(k * sizeof *eq);
    if (!eq) {
        errno = ENOMEM;
        return -1;
    }
    int rc = FDX_OK;
    for (size_t i = 0; rc == FDX_OK && i < k; i++) {
        int r = advance(sp, &cs[i]);
        if (r < 0)
            rc = -1;
        else if (r)
            heap_push(h, &cs[i]);
    }
    while (rc == FDX_OK && h->n)
        rc = emit(sp, h, eq, pop_equal(h, eq), fn, ctx);
    free(eq);
    return rc;
}

int fdx_spill_merge(fdx_spill *sp, const fdx_agg *newest, fdx_spill_fn fn, void *ctx, char *err,
                    size_t size)
{
    size_t k = sp->n_runs + 1;
    cursor *cs = calloc(k, sizeof *cs);
    heap h = {malloc(k * sizeof *h.v), 0};
    uint32_t *order = NULL;
    if (!cs || !h.v || fdx_agg_key_order(newest, &order) != FDX_OK) {
        free(cs);
        free(h.v);
        return no_memory(err, size);
    }
    for (size_t i = 0; i < sp->n_runs; i++)
        cs[i] =
            (cursor){.from_file = 1, .age = i, .pos = sp->runs[i].start, .end = sp->runs[i].end};
    cs[k - 1] = (cursor){.age = k - 1, .agg = newest, .order = order, .n = fdx_agg_cells(newest)};
    int rc = merge(sp, cs, k, &h, fn, ctx);
    if (rc == -1)
        rc = errno == ENOMEM ? no_memory(err, size) : fail(sp, err, size, "reading");
    for (size_t i = 0; i < k; i++)
        fdx_buf_free(&cs[i].buf);
    free(cs);
    free(h.v);
    free(order);
    return rc;
}
