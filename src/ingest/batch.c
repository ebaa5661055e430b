/* Batches of ingest work (see batch.h). */
#include "ingest/batch.h"

#include <stdlib.h>
#include <string.h>

#include "codec/decode.h"
#include "codec/record_cell.h"
#include "common/u64.h"
#include "fdx.h"

/* Each of the pool's threads + 2 batches holds up to this much, with the
 * cells its lines decode to: 2048 lines and 512 KiB cost 2 MiB a batch of
 * resident memory against 1 here, and no measurable speed. */
#define BATCH_LINES 1024
#define BATCH_BYTES ((size_t)256 << 10)

fdx_batch *fdx_batch_new(void)
{
    return calloc(1, sizeof(fdx_batch));
}

/* Makes segment i exist (empty); FDX_OK or FDX_ENOMEM. */
static int need_seg(fdx_batch *b, size_t i)
{
    if (i >= b->cap_segs) {
        size_t cap = b->cap_segs ? b->cap_segs * 2 : 4;
        fdx_agg **segs = realloc(b->segs, cap * sizeof *segs);
        if (segs)
            b->segs = segs;
        uint64_t *recs = segs ? realloc(b->seg_records, cap * sizeof *recs) : NULL;
        if (!recs)
            return FDX_ENOMEM;
        b->seg_records = recs;
        for (size_t k = b->cap_segs; k < cap; k++)
            b->segs[k] = NULL;
        b->cap_segs = cap;
    }
    if (!b->segs[i] && !(b->segs[i] = fdx_agg_new()))
        return FDX_ENOMEM;
    if (i >= b->n_segs) {
        b->n_segs = i + 1;
        b->seg_records[i] = 0;
    }
    return FDX_OK;
}

void fdx_batch_free(fdx_batch *b)
{
    if (!b)
        return;
    fdx_batch_reset(b);
    free(b->slabs);
    fdx_buf_free(&b->text);
    fdx_buf_free(&b->reasons);
    for (size_t i = 0; i < b->cap_segs; i++)
        fdx_agg_free(b->segs[i]);
    free(b->segs);
    free(b->seg_records);
    free(b->entries);
    free(b->error_at);
    free(b);
}

void fdx_batch_reset(fdx_batch *b)
{
    for (size_t i = 0; i < b->n_slabs; i++)
        fdx_slab_let_go(b->slabs[i]);
    b->n_slabs = b->bytes = 0;
    fdx_buf_clear(&b->text);
    fdx_buf_clear(&b->reasons);
    for (size_t i = 0; i < b->n_segs; i++)
        fdx_agg_clear(b->segs[i]);
    b->n_entries = b->n_errors = b->n_segs = 0;
    b->failed = 0;
}

/* The next entry, zeroed but for what every entry has. */
static fdx_entry *add_entry(fdx_batch *b, fdx_entry_kind kind, size_t len, uint64_t lineno)
{
    if (len > UINT32_MAX ||
        fdx_grow(&b->entries, &b->cap_entries, b->n_entries + 1, sizeof *b->entries))
        return NULL;
    fdx_entry *e = &b->entries[b->n_entries++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->len = (uint32_t)len;
    e->lineno = lineno;
    e->error = -1;
    b->bytes += len;
    return e;
}

int fdx_batch_push(fdx_batch *b, fdx_entry_kind kind, const void *text, size_t len, uint64_t lineno)
{
    size_t off = b->text.len;
    fdx_buf_append(&b->text, text, len);
    if (b->text.oom || off > UINT32_MAX)
        return FDX_ENOMEM;
    fdx_entry *e = add_entry(b, kind, len, lineno);
    if (!e)
        return FDX_ENOMEM;
    e->off = (uint32_t)off;
    return FDX_OK;
}

int fdx_batch_push_held(fdx_batch *b, const char *line, size_t len, size_t read, uint64_t lineno,
                        fdx_slab *slab)
{
    if (!b->n_slabs || b->slabs[b->n_slabs - 1] != slab) {
        if (fdx_grow(&b->slabs, &b->cap_slabs, b->n_slabs + 1, sizeof *b->slabs))
            return FDX_ENOMEM;
        fdx_slab_hold(slab);
        b->slabs[b->n_slabs++] = slab;
    }
    fdx_entry *e = add_entry(b, FDX_E_LINE, len, lineno);
    if (!e)
        return FDX_ENOMEM;
    e->line = line;
    b->bytes += read > len ? read - len : 0;
    return FDX_OK;
}

int fdx_batch_full(const fdx_batch *b)
{
    return b->n_entries >= BATCH_LINES || b->bytes >= BATCH_BYTES;
}

int fdx_batch_overflows(const fdx_batch *b, size_t len)
{
    /* entries between lines (a file's end, the next one's name) can take
     * the text past the budget without filling the batch; a line is at most
     * FDX_MAX_LINE_LIMIT, so the sum cannot wrap */
    return b->bytes && b->bytes + len >= BATCH_BYTES;
}

const char *fdx_batch_reason(const fdx_batch *b, int64_t error)
{
    return b->reasons.data + b->error_at[error];
}

int fdx_batch_worker_init(fdx_batch_worker *w, int max_depth)
{
    memset(w, 0, sizeof *w);
    w->dec = fdx_decoder_new(max_depth);
    return w->dec ? FDX_OK : FDX_ENOMEM;
}

void fdx_batch_worker_free(fdx_batch_worker *w)
{
    fdx_decoder_free(w->dec);
    w->dec = NULL;
    fdx_buf_free(&w->dtypes);
    fdx_buf_free(&w->cands);
    fdx_buf_free(&w->packed);
    fdx_line_memo_free(&w->memo);
}

static int push_error(fdx_batch *b, fdx_entry *e, const char *reason)
{
    if (fdx_grow(&b->error_at, &b->cap_errors, b->n_errors + 1, sizeof *b->error_at))
        return FDX_ENOMEM;
    b->error_at[b->n_errors] = b->reasons.len;
    fdx_buf_append(&b->reasons, reason, strlen(reason) + 1);
    if (b->reasons.oom)
        return FDX_ENOMEM;
    e->error = (int64_t)b->n_errors++;
    return FDX_OK;
}

/* Decodes one line into a cell of the batch; FDX_EDATA with the reason in err. */
static int decode_line(fdx_batch *b, fdx_batch_worker *w, const fdx_entry *e, fdx_agg *agg,
                       char *err, size_t errsz)
{
    const char *p = fdx_entry_text(b, e);
    fdx_line_cell lc;
    if (fdx_line_memo_find(&w->memo, p, e->len, &lc))
        return fdx_agg_add_hashed(agg, lc.key, lc.key_hash, lc.count, lc.cands);
    fdx_record rec;
    fdx_cell cell;
    size_t n_cands = 0;
    lc.cands = FDX_NO_CANDS;
    int rc = fdx_decode_line(w->dec, p, e->len, &rec, err, errsz);
    if (rc == FDX_OK && rec.kind == FDX_KIND_MISS)
        rc = fdx_cell_from_miss(&cell, &rec.miss, 1, &w->dtypes, err, errsz);
    else if (rc == FDX_OK) {
        rc = fdx_cell_from_dispatch(&cell, &rec.dispatch, 1, &w->dtypes, &w->cands, err, errsz);
        lc.cands = (fdx_str){w->cands.data, w->cands.len};
        n_cands = rec.dispatch.n_candidates;
    }
    if (rc != FDX_OK)
        return rc;
    fdx_cell_pack(&cell, &w->packed);
    if (w->packed.oom)
        return FDX_ENOMEM;
    lc.key = (fdx_str){w->packed.data, w->packed.len};
    lc.key_hash = fdx_hash_bytes(lc.key.p, lc.key.n);
    lc.count = rec.kind == FDX_KIND_MISS ? rec.miss.count : rec.dispatch.count;
    fdx_line_memo_learn(&w->memo, p, e->len, w->dec, n_cands, &lc);
    return fdx_agg_add_hashed(agg, lc.key, lc.key_hash, lc.count, lc.cands);
}

void fdx_batch_decode(fdx_batch *b, fdx_batch_worker *w)
{
    char err[512];
    size_t seg = 0;
    b->failed = need_seg(b, 0) != FDX_OK;
    for (size_t i = 0; i < b->n_entries && !b->failed; i++) {
        fdx_entry *e = &b->entries[i];
        size_t next = fdx_batch_next_seg(b, i, seg);
        if (next != seg && need_seg(b, next) != FDX_OK)
            b->failed = 1;
        seg = next;
        if (e->kind != FDX_E_LINE || b->failed)
            continue;
        int rc = decode_line(b, w, e, b->segs[seg], err, sizeof err);
        if (rc == FDX_OK)
            b->seg_records[seg]++;
        else if (rc != FDX_EDATA || push_error(b, e, err) != FDX_OK)
            b->failed = 1;
    }
}
