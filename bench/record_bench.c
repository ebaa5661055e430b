/*
 * In-process record calls: ns per fdx_store_record_* (inside a transaction,
 * committed at the end and included), per fdx_sink_record_*, and per call
 * through cell handles (the first record of each cell by
 * fdx_sink_record_*_cell, then fdx_sink_add; all included), over the same
 * records cycling through CELLS distinct cells per kind.
 * One dispatch cell in CANDS_EVERY carries a candidates list (0: none).
 * Calls alternate a miss and a dispatch of the same cell, cell after cell.
 * Usage: record_bench DB CALLS CELLS [CANDS_EVERY]
 * Prints: store_ns sink_ns handle_ns
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fdx.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct recs {
    fdx_miss *m;
    fdx_dispatch *d;
    char (*keys)[32];
    fdx_candidate cand;
} recs;

static const char *const dtypes[] = {"F16", "F16", "F16"};

static void make(recs *r, int cells, int cands_every)
{
    r->m = calloc((size_t)cells, sizeof *r->m);
    r->d = calloc((size_t)cells, sizeof *r->d);
    r->keys = calloc((size_t)cells, sizeof *r->keys);
    fdx_impl id = {"Cuda", "MatMul", dtypes, 3, "baracuda-generic-strided", 0xabcdef0123456789u};
    fdx_hw hw = {1, 8, 9, "NVIDIA GeForce RTX 4090", "552.44"};
    r->cand = (fdx_candidate){id, 1, 41230};
    for (int i = 0; i < cells; i++) {
        snprintf(r->keys[i], sizeof r->keys[i], "matmul:innerdiv%d:vec8", i);
        r->m[i] = (fdx_miss){r->keys[i], id, 1, hw};
        int with = cands_every && i % cands_every == 0;
        r->d[i] = (fdx_dispatch){r->keys[i], id, with ? &r->cand : NULL, with ? 1 : 0, 1, hw};
    }
}

/* The same calls through cell handles; -1 when the counts come out wrong. */
static double by_handle(const recs *r, long calls, int cells)
{
    fdx_sink *sink = fdx_sink_new();
    fdx_sink_cell *h = calloc(2 * (size_t)cells, sizeof *h);
    long first = 2 * (long)cells;
    double t0 = now();
    for (long i = 0, c = 0, at = 0; i < calls; i++) {
        int rc;
        if (i >= first)
            rc = fdx_sink_add(sink, h[at], 1);
        else if (i & 1)
            rc = fdx_sink_record_dispatch_cell(sink, &r->d[c], &h[at]);
        else
            rc = fdx_sink_record_miss_cell(sink, &r->m[c], &h[at]);
        if (rc != FDX_OK)
            return -1;
        if (++at == first)
            at = 0;
        if ((i & 1) && ++c == cells)
            c = 0;
    }
    double ns = (now() - t0) * 1e9 / (double)calls;
    int ok = fdx_sink_miss_cell_count(sink) == (size_t)cells && fdx_sink_dropped(sink) == 0;
    free(h);
    fdx_sink_free(sink);
    return ok ? ns : -1;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5)
        return 2;
    int cands_every = argc == 5 ? atoi(argv[4]) : 5;
    long calls = atol(argv[2]);
    int cells = atoi(argv[3]);
    recs r;
    make(&r, cells, cands_every);
    fdx_store *db;
    if (fdx_store_open(argv[1], FDX_OPEN_CREATE, &db) != FDX_OK || fdx_store_begin(db) != FDX_OK) {
        fprintf(stderr, "%s\n", fdx_store_errmsg(db));
        return 1;
    }
    double t0 = now();
    for (long i = 0, c = 0; i < calls; i++) {
        if (i & 1)
            fdx_store_record_dispatch(db, &r.d[c]);
        else
            fdx_store_record_miss(db, &r.m[c]);
        if ((i & 1) && ++c == cells)
            c = 0;
    }
    int rc = fdx_store_commit(db, NULL);
    double store_ns = (now() - t0) * 1e9 / (double)calls;
    fdx_store_close(db);
    fdx_sink *sink = fdx_sink_new();
    t0 = now();
    for (long i = 0, c = 0; i < calls; i++) {
        if (i & 1)
            fdx_sink_record_dispatch(sink, &r.d[c]);
        else
            fdx_sink_record_miss(sink, &r.m[c]);
        if ((i & 1) && ++c == cells)
            c = 0;
    }
    double sink_ns = (now() - t0) * 1e9 / (double)calls;
    if (rc != FDX_OK || fdx_sink_miss_cell_count(sink) != (size_t)cells)
        return 1;
    double handle_ns = by_handle(&r, calls, cells);
    fdx_sink_free(sink);
    if (handle_ns < 0)
        return 1;
    printf("%.1f %.1f %.1f\n", store_ns, sink_ns, handle_ns);
    return 0;
}
