/*
 * The in-process sink: the reference TelemetrySink over the same aggregator,
 * cell order and writer that the store uses, so a sink's flush and a store's
 * export of the same records are the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "fsutil.h"
#include "sink_internal.h"
#include "store_internal.h"

fdx_sink *fdx_sink_new(void)
{
    fdx_sink *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->misses = fdx_agg_new();
    s->dispatches = fdx_agg_new();
    if (!s->misses || !s->dispatches) {
        fdx_sink_free(s);
        return NULL;
    }
    return s;
}

void fdx_sink_free(fdx_sink *s)
{
    if (!s)
        return;
    fdx_agg_free(s->misses);
    fdx_agg_free(s->dispatches);
    fdx_buf_free(&s->dtypes);
    fdx_buf_free(&s->cands);
    free(s);
}

static void drop(fdx_sink *s, int rc)
{
    s->dropped++;
    if (rc == FDX_ENOMEM)
        snprintf(s->errmsg, sizeof s->errmsg, "out of memory");
}

void fdx_sink_record_miss(fdx_sink *s, const fdx_miss *m)
{
    fdx_cell cell;
    static const fdx_str none = {"[]", 2};
    int rc = fdx_cell_from_miss(&cell, m, 0, &s->dtypes, s->errmsg, sizeof s->errmsg);
    if (rc == FDX_OK)
        rc = fdx_agg_add(s->misses, &cell, m->count, none);
    if (rc != FDX_OK)
        drop(s, rc);
}

void fdx_sink_record_dispatch(fdx_sink *s, const fdx_dispatch *d)
{
    fdx_cell cell;
    int rc = fdx_cell_from_dispatch(&cell, d, 0, &s->dtypes, &s->cands, s->errmsg,
                                    sizeof s->errmsg);
    fdx_str cands = {s->cands.data, s->cands.len};
    if (rc == FDX_OK)
        rc = fdx_agg_add(s->dispatches, &cell, d->count, cands);
    if (rc != FDX_OK)
        drop(s, rc);
}

size_t fdx_sink_miss_cell_count(const fdx_sink *s) { return fdx_agg_cells(s->misses); }
size_t fdx_sink_dispatch_cell_count(const fdx_sink *s) { return fdx_agg_cells(s->dispatches); }
int fdx_sink_is_empty(const fdx_sink *s)
{
    return fdx_agg_cells(s->misses) == 0 && fdx_agg_cells(s->dispatches) == 0;
}
uint64_t fdx_sink_dropped(const fdx_sink *s) { return s->dropped; }
const char *fdx_sink_errmsg(const fdx_sink *s) { return s ? s->errmsg : "out of memory"; }

/* ---- export order ---- */

static int cmp_cells(const void *a, const void *b)
{
    return fdx_cell_compare(&((const fdx_sorted_cell *)a)->cell,
                            &((const fdx_sorted_cell *)b)->cell);
}

int fdx_sink_sorted(const fdx_agg *agg, fdx_sorted_cell **out)
{
    size_t n = fdx_agg_cells(agg);
    fdx_sorted_cell *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return FDX_ENOMEM;
    for (size_t i = 0; i < n; i++)
        fdx_agg_get(agg, i, &v[i].cell, &v[i].count, &v[i].cands);
    qsort(v, n, sizeof *v, cmp_cells);
    *out = v;
    return FDX_OK;
}

/* ---- flushing to files ---- */

typedef struct cursor {
    const fdx_sorted_cell *cells;
    size_t n;
    size_t next;
} cursor;

static int next_cell(void *ctx, fdx_buf *line, char *err, size_t errsz)
{
    cursor *c = ctx;
    (void)err;
    (void)errsz;
    if (c->next == c->n)
        return 0;
    const fdx_sorted_cell *sc = &c->cells[c->next++];
    fdx_enc_cell_line(line, &sc->cell, sc->count, sc->cands);
    return 1;
}

static int flush_agg(fdx_sink *s, const fdx_agg *agg, const char *path, size_t *lines)
{
    fdx_sorted_cell *cells;
    if (fdx_sink_sorted(agg, &cells) != FDX_OK) {
        snprintf(s->errmsg, sizeof s->errmsg, "out of memory");
        return FDX_ENOMEM;
    }
    cursor c = {cells, fdx_agg_cells(agg), 0};
    uint64_t n = 0;
    int rc = fdx_write_jsonl(path, next_cell, &c, &n, s->errmsg, sizeof s->errmsg);
    free(cells);
    if (rc == FDX_OK && lines)
        *lines = (size_t)n;
    return rc;
}

int fdx_sink_flush(fdx_sink *s, const char *path, size_t *lines)
{
    return flush_agg(s, s->misses, path, lines);
}

int fdx_sink_flush_dispatches(fdx_sink *s, const char *path, size_t *lines)
{
    return flush_agg(s, s->dispatches, path, lines);
}

int fdx_sink_flush_all(fdx_sink *s, const char *dir, size_t *miss_lines,
                       size_t *dispatch_lines)
{
    int rc = fdx_mkdirs(dir, s->errmsg, sizeof s->errmsg);
    char *misses = fdx_path_join(dir, "misses.jsonl");
    char *dispatches = fdx_path_join(dir, "dispatches.jsonl");
    if (rc == FDX_OK && (!misses || !dispatches)) {
        snprintf(s->errmsg, sizeof s->errmsg, "out of memory");
        rc = FDX_ENOMEM;
    }
    if (rc == FDX_OK)
        rc = flush_agg(s, s->misses, misses, miss_lines);
    if (rc == FDX_OK)
        rc = flush_agg(s, s->dispatches, dispatches, dispatch_lines);
    free(misses);
    free(dispatches);
    return rc;
}

/* ---- draining into a store ---- */

static int add_all(fdx_store *st, const fdx_agg *agg)
{
    for (size_t i = 0; i < fdx_agg_cells(agg); i++) {
        fdx_cell cell;
        uint64_t count;
        fdx_str cands;
        fdx_agg_get(agg, i, &cell, &count, &cands);
        int rc = fdx_store_add_cell(st, &cell, count, cands);
        if (rc != FDX_OK)
            return rc;
    }
    return FDX_OK;
}

int fdx_sink_drain_to_store(fdx_sink *s, fdx_store *st, fdx_commit_stats *stats)
{
    if (st->in_txn) {
        snprintf(s->errmsg, sizeof s->errmsg, "the store already has a transaction open");
        return fdx_store_fail(st, FDX_EMISUSE, "%s", s->errmsg);
    }
    int rc = fdx_store_begin(st);
    if (rc == FDX_OK)
        rc = add_all(st, s->misses);
    if (rc == FDX_OK)
        rc = add_all(st, s->dispatches);
    if (rc == FDX_OK)
        rc = fdx_store_commit(st, stats);
    else if (st->in_txn)
        fdx_store_rollback(st);
    if (rc != FDX_OK) {
        snprintf(s->errmsg, sizeof s->errmsg, "%s", fdx_store_errmsg(st));
        return rc;
    }
    fdx_agg_clear(s->misses);
    fdx_agg_clear(s->dispatches);
    return FDX_OK;
}
