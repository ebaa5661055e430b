/*
 * fdx_sink_records: the aggregated records as API structs, in export order.
 * Each cell is written as its exported line and read back by the decoder, so
 * what a caller sees is exactly what the feed says; the decoded record is
 * then deep-copied into an arena owned by the fdx_records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/decode.h"
#include "codec/encode.h"
#include "common/arena.h"
#include "sink/sink_internal.h"
#include "sink/sink_output.h"

typedef struct records {
    fdx_records pub;
    const fdx_agg *misses_agg; /* which aggregate holds misses */
    fdx_arena arena;
} records;

static void *arena_alloc(records *r, size_t n)
{
    return fdx_arena_alloc(&r->arena, n);
}

static const char *copy_str(records *r, const char *s, int *oom)
{
    size_t n = strlen(s) + 1;
    char *p = arena_alloc(r, n);
    if (!p) {
        *oom = 1;
        return "";
    }
    return memcpy(p, s, n);
}

static void copy_impl(records *r, fdx_impl *dst, const fdx_impl *src, int *oom)
{
    const char **dtypes = arena_alloc(r, (src->n_dtypes + 1) * sizeof *dtypes);
    *dst = *src;
    if (!dtypes) {
        *oom = 1;
        dst->n_dtypes = 0;
        return;
    }
    for (size_t i = 0; i < src->n_dtypes; i++)
        dtypes[i] = copy_str(r, src->dtypes[i], oom);
    dst->dtypes = dtypes;
    dst->backend = copy_str(r, src->backend, oom);
    dst->op = copy_str(r, src->op, oom);
    dst->kernel_source = copy_str(r, src->kernel_source, oom);
}

static void copy_hw(records *r, fdx_hw *dst, const fdx_hw *src, int *oom)
{
    *dst = *src;
    dst->hardware_sku = copy_str(r, src->hardware_sku, oom);
    dst->driver_version = copy_str(r, src->driver_version, oom);
}

static void copy_record(records *r, const fdx_record *rec, fdx_miss *m, fdx_dispatch *d, int *oom)
{
    if (rec->kind == FDX_KIND_MISS) {
        *m = rec->miss;
        m->wanted = copy_str(r, rec->miss.wanted, oom);
        copy_impl(r, &m->fallback, &rec->miss.fallback, oom);
        copy_hw(r, &m->hw, &rec->miss.hw, oom);
        return;
    }
    const fdx_dispatch *src = &rec->dispatch;
    fdx_candidate *cands = arena_alloc(r, (src->n_candidates + 1) * sizeof *cands);
    *d = *src;
    if (!cands) {
        *oom = 1;
        d->n_candidates = 0;
    }
    for (size_t i = 0; cands && i < src->n_candidates; i++) {
        cands[i] = src->candidates[i];
        copy_impl(r, &cands[i].impl_id, &src->candidates[i].impl_id, oom);
    }
    d->candidates = cands;
    d->structure_key = src->structure_key ? copy_str(r, src->structure_key, oom) : NULL;
    copy_impl(r, &d->chosen, &src->chosen, oom);
    copy_hw(r, &d->hw, &src->hw, oom);
}

/* Materialises one aggregate's cells into the arena; returns the array. */
static void *materialise(records *r, const fdx_agg *agg, fdx_decoder *dec, size_t *n, int *oom)
{
    fdx_sorted_cell *cells;
    *n = fdx_agg_cells(agg);
    if (fdx_sink_sorted(agg, &cells) != FDX_OK) {
        *oom = 1;
        return NULL;
    }
    int misses = agg == r->misses_agg;
    char *out = arena_alloc(r, (*n + 1) * (misses ? sizeof(fdx_miss) : sizeof(fdx_dispatch)));
    fdx_buf line = FDX_BUF_INIT;
    for (size_t i = 0; out && !*oom && i < *n; i++) {
        fdx_record rec;
        char err[256];
        fdx_buf_clear(&line);
        fdx_enc_cell_line(&line, &cells[i].cell, cells[i].count, cells[i].cands);
        if (line.oom || fdx_decode_line(dec, line.data, line.len - 1, &rec, err, sizeof err)) {
            *oom = 1;
            break;
        }
        copy_record(r, &rec, misses ? (fdx_miss *)out + i : NULL,
                    misses ? NULL : (fdx_dispatch *)out + i, oom);
    }
    fdx_buf_free(&line);
    free(cells);
    if (!out)
        *oom = 1;
    return out;
}

int fdx_sink_records(fdx_sink *s, fdx_records **out)
{
    if (!s)
        return FDX_EMISUSE;
    if (!out) {
        snprintf(s->errmsg, sizeof s->errmsg, "no place given for the records");
        return FDX_EMISUSE;
    }
    records *r = calloc(1, sizeof *r);
    fdx_decoder *dec = fdx_decoder_new(0);
    int oom = !r || !dec;
    fdx_sink_settle(s);
    if (!oom) {
        r->misses_agg = s->misses;
        r->pub.misses = materialise(r, s->misses, dec, &r->pub.n_misses, &oom);
        r->pub.dispatches = materialise(r, s->dispatches, dec, &r->pub.n_dispatches, &oom);
    }
    fdx_decoder_free(dec);
    if (oom) {
        fdx_records_free(r ? &r->pub : NULL);
        *out = NULL;
        snprintf(s->errmsg, sizeof s->errmsg, "out of memory");
        return FDX_ENOMEM;
    }
    *out = &r->pub;
    return FDX_OK;
}

void fdx_records_free(fdx_records *pub)
{
    if (!pub)
        return;
    records *r = (records *)pub;
    fdx_arena_free(&r->arena);
    free(r);
}
