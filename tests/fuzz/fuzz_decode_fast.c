/*
 * libFuzzer target: the fast path of line decoding against the reference
 * (lexer and cJSON). The fast path may decline any line, but a line it takes
 * the reference must take too, with the same record (every field, every byte
 * of every string), the same count and latency positions, and the same cell
 * and candidates JSON built from it. And fdx_decode_line, which tries the
 * fast path first, must answer exactly as the reference: the same status,
 * the same reason, the same record. Each nesting limit the record's shapes
 * straddle is tried, and the highest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cell/cell.h"
#include "codec/decode.h"
#include "codec/decode_fast.h"
#include "codec/record_cell.h"

/* The records' own depths straddle the first three; the highest limit a
 * caller may set lets members no field has nest as deep as they like. */
static const int depths[] = {2, 4, FDX_DEFAULT_MAX_DEPTH, FDX_MAX_DEPTH_LIMIT};
#define N_DEPTHS (sizeof depths / sizeof depths[0])

static void differ(const char *what, const uint8_t *data, size_t size)
{
    fprintf(stderr, "fast path and reference differ: %s\nline: %.*s\n", what, (int)size,
            (const char *)data);
    abort();
}

static int same_text(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strlen(a) == strlen(b) && strcmp(a, b) == 0;
}

static int same_impl(const fdx_impl *a, const fdx_impl *b)
{
    if (!same_text(a->backend, b->backend) || !same_text(a->op, b->op) ||
        !same_text(a->kernel_source, b->kernel_source) ||
        a->kernel_revision_hash != b->kernel_revision_hash || a->n_dtypes != b->n_dtypes ||
        !a->dtypes != !b->dtypes)
        return 0;
    for (size_t i = 0; i < a->n_dtypes; i++)
        if (!same_text(a->dtypes[i], b->dtypes[i]))
            return 0;
    return 1;
}

static int same_hw(const fdx_hw *a, const fdx_hw *b)
{
    return a->has_compute_capability == b->has_compute_capability && a->cc_major == b->cc_major &&
           a->cc_minor == b->cc_minor && same_text(a->hardware_sku, b->hardware_sku) &&
           same_text(a->driver_version, b->driver_version);
}

static int same_record(const fdx_record *a, const fdx_record *b)
{
    if (a->kind != b->kind)
        return 0;
    if (a->kind == FDX_KIND_MISS)
        return same_text(a->miss.wanted, b->miss.wanted) &&
               same_impl(&a->miss.fallback, &b->miss.fallback) && a->miss.count == b->miss.count &&
               same_hw(&a->miss.hw, &b->miss.hw);
    const fdx_dispatch *x = &a->dispatch, *y = &b->dispatch;
    if (!same_text(x->structure_key, y->structure_key) || !same_impl(&x->chosen, &y->chosen) ||
        x->count != y->count || !same_hw(&x->hw, &y->hw) || x->n_candidates != y->n_candidates ||
        !x->candidates != !y->candidates)
        return 0;
    for (size_t i = 0; i < x->n_candidates; i++) {
        const fdx_candidate *p = &x->candidates[i], *q = &y->candidates[i];
        if (!same_impl(&p->impl_id, &q->impl_id) || p->has_latency != q->has_latency ||
            p->latency_ns != q->latency_ns)
            return 0;
    }
    return 1;
}

/* The positions the line memo reads after a decode, as text: the count's,
 * then each candidate's latency's. */
static void tokens_of(const fdx_decoder *dec, const fdx_fast_decoder *fast, const fdx_record *r,
                      fdx_buf *out)
{
    char t[64];
    size_t off = 0, len = 0;
    int has = 1;
    fdx_buf_clear(out);
    if (fast)
        fdx_fast_count_token(fast, &off, &len);
    else
        has = fdx_decode_count_token(dec, &off, &len);
    snprintf(t, sizeof t, has ? "count %zu+%zu" : "no count", off, len);
    fdx_buf_puts(out, t);
    size_t n = r->kind == FDX_KIND_DISPATCH ? r->dispatch.n_candidates : 0;
    for (size_t i = 0; i < n; i++) {
        has = fast ? fdx_fast_latency_token(fast, i, &off, &len)
                   : fdx_decode_latency_token(dec, i, &off, &len);
        snprintf(t, sizeof t, has ? ", latency %zu+%zu" : ", no latency", off, len);
        fdx_buf_puts(out, t);
    }
    if (out->oom)
        abort();
}

static int same_buf(const fdx_buf *a, const fdx_buf *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* What ingest builds from a decoded record: the packed cell, its dtypes and
 * candidates JSON, or the reason it is refused. */
static void cell_of(const fdx_record *r, fdx_buf *out)
{
    fdx_buf dtypes = FDX_BUF_INIT, cands = FDX_BUF_INIT;
    fdx_cell cell;
    char err[256] = "";
    int rc = r->kind == FDX_KIND_MISS
                 ? fdx_cell_from_miss(&cell, &r->miss, 1, &dtypes, err, sizeof err)
                 : fdx_cell_from_dispatch(&cell, &r->dispatch, 1, &dtypes, &cands, err, sizeof err);
    fdx_buf_clear(out);
    if (rc == FDX_OK) {
        fdx_cell_pack(&cell, out);
        fdx_buf_append(out, dtypes.data, dtypes.len);
        fdx_buf_append(out, cands.data, cands.len);
    } else {
        fdx_buf_puts(out, err);
    }
    fdx_buf_free(&dtypes);
    fdx_buf_free(&cands);
    if (out->oom)
        abort();
}

static void check_depth(size_t k, const uint8_t *data, size_t size)
{
    static fdx_decoder *refs[N_DEPTHS], *lines[N_DEPTHS];
    static fdx_fast_decoder *fast;
    static fdx_buf a, b;
    if (!refs[k]) {
        refs[k] = fdx_decoder_new(depths[k]);
        lines[k] = fdx_decoder_new(depths[k]);
        if (!fast)
            fast = fdx_fast_decoder_new();
        if (!refs[k] || !lines[k] || !fast)
            abort();
    }
    const char *line = (const char *)data;
    char err[512] = "", err_line[512] = "";
    fdx_record rf, rr, rl;

    int rc = fdx_decode_lex(refs[k], line, size, err, sizeof err);
    if (rc == FDX_OK)
        rc = fdx_decode_parse(refs[k], &rr, err, sizeof err);
    if (rc != FDX_OK && (rc != FDX_EDATA || !err[0]))
        differ("the reference failed without a reason", data, size);

    int rc_line = fdx_decode_line(lines[k], line, size, &rl, err_line, sizeof err_line);
    if (rc_line != rc || (rc != FDX_OK && strcmp(err, err_line) != 0))
        differ("fdx_decode_line answers otherwise than the reference", data, size);
    if (rc == FDX_OK) {
        if (!same_record(&rl, &rr))
            differ("fdx_decode_line decodes otherwise than the reference", data, size);
        tokens_of(lines[k], NULL, &rl, &a);
        tokens_of(refs[k], NULL, &rr, &b);
        if (!same_buf(&a, &b))
            differ("fdx_decode_line finds other number positions than the reference", data, size);
    }

    if (!fdx_fast_decode(fast, line, size, depths[k], &rf))
        return;
    if (rc != FDX_OK)
        differ("the fast path takes a line the reference rejects", data, size);
    if (!same_record(&rf, &rr))
        differ("the records differ", data, size);
    tokens_of(NULL, fast, &rf, &a);
    tokens_of(refs[k], NULL, &rr, &b);
    if (!same_buf(&a, &b))
        differ("the number positions differ", data, size);
    cell_of(&rf, &a);
    cell_of(&rr, &b);
    if (!same_buf(&a, &b))
        differ("the cells built from the records differ", data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (size_t k = 0; k < N_DEPTHS; k++)
        check_depth(k, data, size);
    return 0;
}
