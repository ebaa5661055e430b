/*
 * The in-process sink's output: its cells in export order, flushed to JSONL
 * through the writer fdx-export uses (so a flush and an export of the same
 * records are the same bytes), or drained into a store.
 */
#include <stdio.h>
#include <stdlib.h>

#include "codec/encode.h"
#include "common/fsutil.h"
#include "common/jsonl_files.h"
#include "common/message.h"
#include "sink/sink_internal.h"
#include "sink/sink_output.h"
#include "store/conn.h"
#include "store/store.h"

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

typedef struct flush_job {
    const fdx_agg *agg;
    const char *path;
    size_t *lines;
} flush_job;

/* Sorts each aggregate, then writes all the files as one replacement. */
static int flush_files(fdx_sink *s, const flush_job *jobs, size_t n)
{
    fdx_sorted_cell *cells[2] = {NULL, NULL};
    cursor cur[2];
    fdx_jsonl_file files[2];
    int rc = FDX_OK;
    for (size_t i = 0; i < n; i++) {
        if (fdx_sink_sorted(jobs[i].agg, &cells[i]) != FDX_OK) {
            snprintf(s->errmsg, sizeof s->errmsg, "out of memory");
            rc = FDX_ENOMEM;
            break;
        }
        cur[i] = (cursor){cells[i], fdx_agg_cells(jobs[i].agg), 0};
        files[i] = (fdx_jsonl_file){jobs[i].path, next_cell, &cur[i], 0};
    }
    if (rc == FDX_OK)
        rc = fdx_write_jsonl_files(files, n, s->errmsg, sizeof s->errmsg);
    for (size_t i = 0; i < n; i++) {
        if (rc == FDX_OK && jobs[i].lines)
            *jobs[i].lines = (size_t)files[i].lines;
        free(cells[i]);
    }
    return rc;
}

/* A sink, and where its files go. */
static int given(fdx_sink *s, const char *path)
{
    if (!s)
        return FDX_EMISUSE;
    if (path && *path)
        return FDX_OK;
    snprintf(s->errmsg, sizeof s->errmsg, "no path given to flush to");
    return FDX_EMISUSE;
}

int fdx_sink_flush_misses(fdx_sink *s, const char *path, size_t *lines)
{
    if (given(s, path) != FDX_OK)
        return FDX_EMISUSE;
    fdx_sink_settle(s);
    flush_job job = {s->misses, path, lines};
    return flush_files(s, &job, 1);
}

int fdx_sink_flush_dispatches(fdx_sink *s, const char *path, size_t *lines)
{
    if (given(s, path) != FDX_OK)
        return FDX_EMISUSE;
    fdx_sink_settle(s);
    flush_job job = {s->dispatches, path, lines};
    return flush_files(s, &job, 1);
}

int fdx_sink_flush_all(fdx_sink *s, const char *dir, size_t *miss_lines, size_t *dispatch_lines)
{
    if (given(s, dir) != FDX_OK)
        return FDX_EMISUSE;
    fdx_sink_settle(s);
    int rc = fdx_mkdirs(dir, NULL, s->errmsg, sizeof s->errmsg);
    char *misses = fdx_path_join(dir, "misses.jsonl");
    char *dispatches = fdx_path_join(dir, "dispatches.jsonl");
    if (rc == FDX_OK && (!misses || !dispatches)) {
        snprintf(s->errmsg, sizeof s->errmsg, "out of memory");
        rc = FDX_ENOMEM;
    }
    flush_job jobs[2] = {{s->misses, misses, miss_lines},
                         {s->dispatches, dispatches, dispatch_lines}};
    if (rc == FDX_OK)
        rc = flush_files(s, jobs, 2);
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

/* at: the capture time, NULL for now. */
static int drain(fdx_sink *s, fdx_store *st, const int64_t *at, fdx_commit_stats *stats)
{
    if (!s)
        return FDX_EMISUSE;
    if (!st) {
        snprintf(s->errmsg, sizeof s->errmsg, "no store given to drain into");
        return FDX_EMISUSE;
    }
    if (fdx_store_usable(st) != FDX_OK) { /* a failed open, a callback's call, a fork's child */
        fdx_format_message(s->errmsg, sizeof s->errmsg, "%s", fdx_store_errmsg(st));
        return FDX_EMISUSE;
    }
    if (st->in_txn) {
        snprintf(s->errmsg, sizeof s->errmsg, "the store already has a transaction open");
        return fdx_store_fail(st, FDX_EMISUSE, "%s", s->errmsg);
    }
    fdx_sink_settle(s);
    int rc = fdx_store_begin(st);
    if (rc == FDX_OK && at)
        rc = fdx_store_set_time(st, *at);
    if (rc == FDX_OK)
        rc = add_all(st, s->misses);
    if (rc == FDX_OK)
        rc = add_all(st, s->dispatches);
    if (rc == FDX_OK)
        rc = fdx_store_commit(st, stats);
    else if (st->in_txn)
        fdx_store_rollback(st);
    if (rc != FDX_OK) {
        fdx_format_message(s->errmsg, sizeof s->errmsg, "%s", fdx_store_errmsg(st));
        return rc;
    }
    fdx_sink_empty(s);
    return FDX_OK;
}

int fdx_sink_drain_to_store(fdx_sink *s, fdx_store *st, fdx_commit_stats *stats)
{
    return drain(s, st, NULL, stats);
}

int fdx_sink_drain_to_store_at(fdx_sink *s, fdx_store *st, int64_t unix_seconds,
                               fdx_commit_stats *stats)
{
    return drain(s, st, &unix_seconds, stats);
}
