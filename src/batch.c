/* Batches of ingest work (see batch.h). */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "fdx.h"
#include "u64.h"

#define BATCH_LINES 2048
#define BATCH_BYTES ((size_t)512 << 10)

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
    fdx_buf_clear(&b->text);
    fdx_buf_clear(&b->reasons);
    for (size_t i = 0; i < b->n_segs; i++)
        fdx_agg_clear(b->segs[i]);
    b->n_entries = b->n_errors = b->n_segs = 0;
    b->failed = 0;
}

int fdx_batch_push(fdx_batch *b, fdx_entry_kind kind, const void *text, size_t len, uint64_t lineno)
{
    if (fdx_grow(&b->entries, &b->cap_entries, b->n_entries + 1, sizeof *b->entries))
        return FDX_ENOMEM;
    size_t off = b->text.len;
    fdx_buf_append(&b->text, text, len);
    if (b->text.oom || off > UINT32_MAX || len > UINT32_MAX)
        return FDX_ENOMEM;
    fdx_entry *e = &b->entries[b->n_entries++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->off = (uint32_t)off;
    e->len = (uint32_t)len;
    e->lineno = lineno;
    e->error = -1;
    return FDX_OK;
}

int fdx_batch_full(const fdx_batch *b)
{
    return b->n_entries >= BATCH_LINES || b->text.len >= BATCH_BYTES;
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

static void memo_clear(fdx_line_memo *m)
{
    fdx_keymap_clear(&m->lines);
    fdx_buf_clear(&m->data);
    m->n = 0;
}

void fdx_batch_worker_free(fdx_batch_worker *w)
{
    fdx_decoder_free(w->dec);
    w->dec = NULL;
    fdx_buf_free(&w->dtypes);
    fdx_buf_free(&w->cands);
    fdx_buf_free(&w->tmpl);
    fdx_buf_free(&w->packed);
    fdx_keymap_free(&w->memo.lines);
    fdx_buf_free(&w->memo.data);
    free(w->memo.v);
}

/* The memo is bounded: past these it starts again empty. */
#define MEMO_MAX_LINES 32768
#define MEMO_MAX_BYTES ((size_t)4 << 20)

/* Remembers that tmpl decodes to the packed cell with these candidates. */
static void memo_put(fdx_line_memo *m, const fdx_buf *tmpl, uint64_t hash, size_t count_off,
                     const fdx_buf *packed, fdx_str cands)
{
    if (m->n >= MEMO_MAX_LINES || m->data.len >= MEMO_MAX_BYTES)
        memo_clear(m);
    if (fdx_grow(&m->v, &m->cap, m->n + 1, sizeof *m->v))
        return; /* a memo that cannot grow only costs speed */
    fdx_line_memo_entry *e = &m->v[m->n];
    e->count_off = count_off;
    e->key_off = m->data.len;
    e->key_len = packed->len;
    fdx_buf_append(&m->data, packed->data, packed->len);
    e->cands_off = m->data.len;
    e->cands_len = cands.n;
    fdx_buf_append(&m->data, cands.p, cands.n);
    if (m->data.oom ||
        fdx_keymap_put(&m->lines, tmpl->data, tmpl->len, hash, (uint32_t)m->n) != FDX_OK) {
        memo_clear(m);
        return;
    }
    m->n++;
}

static int cut_count(fdx_batch_worker *w, const char *p, size_t n, size_t off, size_t len)
{
    fdx_buf_clear(&w->tmpl);
    fdx_buf_append(&w->tmpl, p, off);
    fdx_buf_append(&w->tmpl, p + off + len, n - off - len);
    return !w->tmpl.oom;
}

/* The last `"count":` in the line (records put it near the end), or NULL. */
static const char *last_count_key(const char *p, size_t n)
{
    for (const char *colon = memrchr(p, ':', n); colon;
         colon = memrchr(p, ':', (size_t)(colon - p)))
        if (colon - p >= 7 && memcmp(colon - 7, "\"count\"", 7) == 0)
            return colon - 7;
    return NULL;
}

/* What memo_hit left in w->tmpl, for remembering the line after a miss. */
typedef struct memo_probe {
    int cut;
    size_t off;
    uint64_t hash;
} memo_probe;

/*
 * The fast path, before any checking: the last `"count":` followed by plain
 * digits. When the rest of the line equals a remembered line's with the count
 * at the same place, the line is that line with another count, so it is valid
 * and decodes to the same cell; anything else goes the long way.
 */
static int memo_hit(fdx_batch_worker *w, fdx_agg *agg, const char *p, size_t n, int *rc,
                    memo_probe *probe)
{
    const char *k = w->memo.n ? last_count_key(p, n) : NULL;
    if (!k)
        return 0;
    size_t off = (size_t)(k - p) + 8, len = 0;
    uint64_t count;
    uint32_t at;
    while (off + len < n && p[off + len] >= '0' && p[off + len] <= '9')
        len++;
    if (len == 0 || (len > 1 && p[off] == '0') || fdx_u64_parse(p + off, len, &count) ||
        !cut_count(w, p, n, off, len))
        return 0;
    uint64_t hash = fdx_hash_bytes(w->tmpl.data, w->tmpl.len);
    *probe = (memo_probe){1, off, hash};
    if (!fdx_keymap_get(&w->memo.lines, w->tmpl.data, w->tmpl.len, hash, &at) ||
        w->memo.v[at].count_off != off)
        return 0;
    const fdx_line_memo_entry *m = &w->memo.v[at];
    fdx_str key = {w->memo.data.data + m->key_off, m->key_len};
    fdx_str cands = {w->memo.data.data + m->cands_off, m->cands_len};
    *rc = fdx_agg_add_packed(agg, key, count, cands, NULL);
    return 1;
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
    const char *p = b->text.data + e->off;
    memo_probe probe = {0, 0, 0};
    int rc;
    if (memo_hit(w, agg, p, e->len, &rc, &probe))
        return rc;
    if ((rc = fdx_decode_lex(w->dec, p, e->len, err, errsz)) != FDX_OK)
        return rc;
    fdx_record rec;
    fdx_cell cell;
    fdx_str cands = FDX_NO_CANDS;
    rc = fdx_decode_parse(w->dec, &rec, err, errsz);
    if (rc == FDX_OK && rec.kind == FDX_KIND_MISS)
        rc = fdx_cell_from_miss(&cell, &rec.miss, 1, &w->dtypes, err, errsz);
    else if (rc == FDX_OK) {
        rc = fdx_cell_from_dispatch(&cell, &rec.dispatch, 1, &w->dtypes, &w->cands, err, errsz);
        cands.p = w->cands.data;
        cands.n = w->cands.len;
    }
    if (rc != FDX_OK)
        return rc;
    uint64_t count = rec.kind == FDX_KIND_MISS ? rec.miss.count : rec.dispatch.count;
    fdx_cell_pack(&cell, &w->packed);
    if (w->packed.oom)
        return FDX_ENOMEM;
    /* Lines with candidates rarely repeat (latencies vary): not worth keeping.
     * The others are remembered by the line without its count, which
     * memo_hit has usually cut already. */
    size_t off, len;
    if (fdx_cands_empty(cands) && fdx_decode_count_token(w->dec, &off, &len)) {
        if (!probe.cut || probe.off != off) {
            probe.cut = cut_count(w, p, e->len, off, len);
            probe.hash = fdx_hash_bytes(w->tmpl.data, w->tmpl.len);
        }
        if (probe.cut)
            memo_put(&w->memo, &w->tmpl, probe.hash, off, &w->packed, cands);
    }
    fdx_str key = {w->packed.data, w->packed.len};
    return fdx_agg_add_packed(agg, key, count, cands, NULL);
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
