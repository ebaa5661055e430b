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
    fdx_keymap_free(&s->miss_keys);
    fdx_keymap_free(&s->dispatch_keys);
    fdx_buf_free(&s->raw);
    fdx_buf_free(&s->raw_incoming);
    free(s->miss_fast.raw_at);
    free(s->dispatch_fast.raw_at);
    for (size_t i = 0; i < s->cap_raw_cands; i++)
        fdx_buf_free(&s->raw_cands[i]);
    free(s->raw_cands);
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

/* ---- raw keys: the record's own fields, unvalidated, for finding its cell ----
 * Layout: the numbers, then each string as a 4-byte length and its bytes. The
 * lengths are taken first so the key is written with one reservation. */

enum { RAW_MAX_FIELDS = 64 };

typedef struct raw_fields {
    const char *s[RAW_MAX_FIELDS];
    uint32_t n[RAW_MAX_FIELDS];
    size_t count;
    size_t bytes;
} raw_fields;

static int raw_add(raw_fields *f, const char *str)
{
    if (!str || f->count == RAW_MAX_FIELDS)
        return 0;
    size_t n = strlen(str);
    if (n > FDX_MAX_STRING)
        return 0;
    f->s[f->count] = str;
    f->n[f->count++] = (uint32_t)n;
    f->bytes += n + 4;
    return 1;
}

static int raw_collect(raw_fields *f, const char *token, const fdx_impl *id, const fdx_hw *hw)
{
    if ((token && !raw_add(f, token)) || !raw_add(f, id->backend) || !raw_add(f, id->op) ||
        !raw_add(f, id->kernel_source) || !raw_add(f, hw->hardware_sku) ||
        !raw_add(f, hw->driver_version) || (id->n_dtypes && !id->dtypes))
        return 0;
    for (size_t i = 0; i < id->n_dtypes; i++)
        if (!raw_add(f, id->dtypes[i]))
            return 0;
    return 1;
}

/* Writes the raw key into b; 0 when the record has to take the slow path. */
static int raw_key(fdx_buf *b, int keyed, const char *token, const fdx_impl *id, const fdx_hw *hw)
{
    raw_fields f;
    f.count = f.bytes = 0;
    if (!raw_collect(&f, token, id, hw))
        return 0;
    int64_t nums[5] = {keyed, (int64_t)id->kernel_revision_hash, (int64_t)id->n_dtypes,
                       hw->has_compute_capability ? (int64_t)hw->cc_major : -1,
                       hw->has_compute_capability ? (int64_t)hw->cc_minor : -1};
    fdx_buf_clear(b);
    if (fdx_buf_reserve(b, sizeof nums + f.bytes) != 0)
        return 0;
    char *p = b->data;
    memcpy(p, nums, sizeof nums);
    p += sizeof nums;
    for (size_t i = 0; i < f.count; i++) {
        memcpy(p, &f.n[i], 4);
        memcpy(p + 4, f.s[i], f.n[i]);
        p += 4 + f.n[i];
    }
    b->len = (size_t)(p - b->data);
    return 1;
}

/* The cell already holding records with these raw fields, if any. */
static int seen(fdx_keymap *keys, const fdx_buf *raw, uint64_t *hash, uint32_t *index)
{
    *hash = fdx_hash_bytes(raw->data, raw->len);
    return fdx_keymap_get(keys, raw->data, raw->len, *hash, index);
}

/* Remembers the raw fields of a record that reached cell index. */
static void learn(fdx_keymap *keys, fdx_sink_kind *fast, const fdx_buf *raw, uint64_t hash,
                  size_t index)
{
    size_t off = keys->keys.len;
    if (fdx_keymap_put(keys, raw->data, raw->len, hash, (uint32_t)index) != FDX_OK) {
        if (index < fast->cap_raw_at)
            fast->raw_at[index].len = 0; /* a miss costs speed only */
        return;
    }
    size_t old = fast->cap_raw_at;
    if (fdx_grow(&fast->raw_at, &fast->cap_raw_at, index + 1, sizeof *fast->raw_at))
        return;
    for (size_t i = old; i < fast->cap_raw_at; i++)
        fast->raw_at[i].len = 0;
    fast->raw_at[index].off = off;
    fast->raw_at[index].len = raw->len;
}

/* ---- the pointer cache ---- */

static uint64_t ptr_tag(int keyed, const char *token, const fdx_impl *id, const fdx_hw *hw)
{
    uint64_t v[10] = {(uint64_t)(uintptr_t)token,
                      (uint64_t)(uintptr_t)id->backend,
                      (uint64_t)(uintptr_t)id->op,
                      (uint64_t)(uintptr_t)id->kernel_source,
                      (uint64_t)(uintptr_t)hw->hardware_sku,
                      (uint64_t)(uintptr_t)hw->driver_version,
                      id->kernel_revision_hash,
                      id->n_dtypes,
                      (uint64_t)hw->cc_major << 32 | hw->cc_minor,
                      (uint64_t)(keyed | hw->has_compute_capability << 1)};
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 10; i++)
        h = (h << 7 | h >> 57) ^ v[i];
    for (size_t i = 0; i < id->n_dtypes && id->dtypes; i++)
        h = (h << 7 | h >> 57) ^ (uint64_t)(uintptr_t)id->dtypes[i];
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* Whether str says exactly the stored field at *p (a 4-byte length and bytes);
 * advances *p. strncmp never reads past str's end. */
static int same_field(const char **p, const char *str)
{
    uint32_t n;
    memcpy(&n, *p, 4);
    const char *stored = *p + 4;
    *p = stored + n;
    return str && strncmp(str, stored, n) == 0 && str[n] == '\0';
}

/* Whether the record's fields are exactly the raw key stored for cell at. */
static int still_says(const fdx_keymap *keys, const fdx_sink_kind *fast, uint32_t at, int keyed,
                      const char *token, const fdx_impl *id, const fdx_hw *hw)
{
    if (at >= fast->cap_raw_at || !fast->raw_at[at].len)
        return 0;
    const char *p = keys->keys.data + fast->raw_at[at].off;
    int64_t nums[5] = {keyed, (int64_t)id->kernel_revision_hash, (int64_t)id->n_dtypes,
                       hw->has_compute_capability ? (int64_t)hw->cc_major : -1,
                       hw->has_compute_capability ? (int64_t)hw->cc_minor : -1};
    if (memcmp(p, nums, sizeof nums) != 0 || (id->n_dtypes && !id->dtypes))
        return 0;
    p += sizeof nums;
    if ((token && !same_field(&p, token)) || !same_field(&p, id->backend) ||
        !same_field(&p, id->op) || !same_field(&p, id->kernel_source) ||
        !same_field(&p, hw->hardware_sku) || !same_field(&p, hw->driver_version))
        return 0;
    for (size_t i = 0; i < id->n_dtypes; i++)
        if (!same_field(&p, id->dtypes[i]))
            return 0;
    return p == keys->keys.data + fast->raw_at[at].off + fast->raw_at[at].len;
}

/* The cell this record's pointers led to last time, if its fields still match. */
static int fast_find(const fdx_keymap *keys, fdx_sink_kind *fast, uint64_t tag, int keyed,
                     const char *token, const fdx_impl *id, const fdx_hw *hw, uint32_t *at)
{
    const fdx_ptr_slot *slot = &fast->ptrs[tag & (FDX_PTR_SLOTS - 1)];
    if (slot->tag != tag || !slot->cell)
        return 0;
    *at = slot->cell - 1;
    return still_says(keys, fast, *at, keyed, token, id, hw);
}

static void fast_note(fdx_sink_kind *fast, uint64_t tag, size_t at)
{
    fdx_ptr_slot *slot = &fast->ptrs[tag & (FDX_PTR_SLOTS - 1)];
    slot->tag = tag;
    slot->cell = (uint32_t)at + 1;
}

void fdx_sink_record_miss(fdx_sink *s, const fdx_miss *m)
{
    if (!m) {
        snprintf(s->errmsg, sizeof s->errmsg, "no record given");
        s->dropped++;
        return;
    }
    fdx_cell cell;
    static const fdx_str none = {"[]", 2};
    uint64_t hash = 0;
    uint32_t at;
    size_t index;
    uint64_t tag = ptr_tag(1, m->wanted, &m->fallback, &m->hw);
    if (m->wanted &&
        fast_find(&s->miss_keys, &s->miss_fast, tag, 1, m->wanted, &m->fallback, &m->hw, &at)) {
        fdx_agg_add_at(s->misses, at, m->count, none);
        return;
    }
    int raw = m->wanted && raw_key(&s->raw, 1, m->wanted, &m->fallback, &m->hw);
    if (raw && seen(&s->miss_keys, &s->raw, &hash, &at)) {
        fdx_agg_add_at(s->misses, at, m->count, none);
        fast_note(&s->miss_fast, tag, at);
        return;
    }
    int rc = fdx_cell_from_miss(&cell, m, 0, &s->dtypes, s->errmsg, sizeof s->errmsg);
    if (rc == FDX_OK)
        rc = fdx_agg_add_index(s->misses, &cell, m->count, none, &index);
    if (rc != FDX_OK)
        drop(s, rc);
    else if (raw) {
        learn(&s->miss_keys, &s->miss_fast, &s->raw, hash, index);
        fast_note(&s->miss_fast, tag, index);
    }
}

/* The raw fields of a candidates list; 0 when it must take the slow path. */
static int raw_cands_key(fdx_buf *b, const fdx_candidate *c, size_t n)
{
    fdx_buf_clear(b);
    if (!c)
        return 0;
    for (size_t i = 0; i < n; i++) {
        raw_fields f;
        f.count = f.bytes = 0;
        const fdx_impl *id = &c[i].impl_id;
        if (!raw_add(&f, id->backend) || !raw_add(&f, id->op) || !raw_add(&f, id->kernel_source) ||
            (id->n_dtypes && !id->dtypes))
            return 0;
        for (size_t k = 0; k < id->n_dtypes; k++)
            if (!raw_add(&f, id->dtypes[k]))
                return 0;
        uint64_t nums[4] = {id->kernel_revision_hash, id->n_dtypes, (uint64_t)c[i].has_latency,
                            c[i].has_latency ? c[i].latency_ns : 0};
        fdx_buf_append(b, nums, sizeof nums);
        for (size_t k = 0; k < f.count; k++) {
            fdx_buf_append(b, &f.n[k], 4);
            fdx_buf_append(b, f.s[k], f.n[k]);
        }
    }
    return !b->oom;
}

/* Remembers (in s->raw_cands[at]) the raw candidates now held by cell at. */
static void remember_cands(fdx_sink *s, size_t at, const fdx_buf *raw)
{
    if (at >= s->cap_raw_cands) {
        size_t old = s->cap_raw_cands;
        if (fdx_grow(&s->raw_cands, &s->cap_raw_cands, at + 1, sizeof *s->raw_cands))
            return;
        for (size_t i = old; i < s->cap_raw_cands; i++)
            s->raw_cands[i] = (fdx_buf)FDX_BUF_INIT;
    }
    fdx_buf_clear(&s->raw_cands[at]);
    if (raw)
        fdx_buf_append(&s->raw_cands[at], raw->data, raw->len);
}

static int holds_these_cands(const fdx_sink *s, size_t at, const fdx_buf *raw)
{
    return at < s->cap_raw_cands && s->raw_cands[at].len == raw->len && raw->len &&
           memcmp(s->raw_cands[at].data, raw->data, raw->len) == 0;
}

/* A dispatch for a cell already seen: the count, and the candidates when new. */
static void record_seen_dispatch(fdx_sink *s, const fdx_dispatch *d, uint32_t at)
{
    static const fdx_str none = {"[]", 2};
    if (d->n_candidates == 0) {
        fdx_agg_add_at(s->dispatches, at, d->count, none);
        return;
    }
    int raw = raw_cands_key(&s->raw_incoming, d->candidates, d->n_candidates);
    if (raw && holds_these_cands(s, at, &s->raw_incoming)) {
        fdx_agg_add_at(s->dispatches, at, d->count, none);
        return;
    }
    int rc =
        fdx_cands_encode(d->candidates, d->n_candidates, 0, &s->cands, s->errmsg, sizeof s->errmsg);
    fdx_str cands = {s->cands.data, s->cands.len};
    if (rc == FDX_OK)
        rc = fdx_agg_add_at(s->dispatches, at, d->count, cands);
    if (rc != FDX_OK)
        drop(s, rc);
    else
        remember_cands(s, at, raw ? &s->raw_incoming : NULL);
}

void fdx_sink_record_dispatch(fdx_sink *s, const fdx_dispatch *d)
{
    if (!d) {
        snprintf(s->errmsg, sizeof s->errmsg, "no record given");
        s->dropped++;
        return;
    }
    fdx_cell cell;
    uint64_t hash = 0;
    uint32_t at;
    size_t index;
    int keyed = d->structure_key != NULL;
    uint64_t tag = ptr_tag(keyed, d->structure_key, &d->chosen, &d->hw);
    if (fast_find(&s->dispatch_keys, &s->dispatch_fast, tag, keyed, d->structure_key, &d->chosen,
                  &d->hw, &at)) {
        record_seen_dispatch(s, d, at);
        return;
    }
    int raw = raw_key(&s->raw, keyed, d->structure_key, &d->chosen, &d->hw);
    if (raw && seen(&s->dispatch_keys, &s->raw, &hash, &at)) {
        record_seen_dispatch(s, d, at);
        fast_note(&s->dispatch_fast, tag, at);
        return;
    }
    int rc =
        fdx_cell_from_dispatch(&cell, d, 0, &s->dtypes, &s->cands, s->errmsg, sizeof s->errmsg);
    fdx_str cands = {s->cands.data, s->cands.len};
    if (rc == FDX_OK)
        rc = fdx_agg_add_index(s->dispatches, &cell, d->count, cands, &index);
    if (rc != FDX_OK) {
        drop(s, rc);
        return;
    }
    if (d->n_candidates)
        remember_cands(s, index,
                       raw_cands_key(&s->raw_incoming, d->candidates, d->n_candidates)
                           ? &s->raw_incoming
                           : NULL);
    if (raw) {
        learn(&s->dispatch_keys, &s->dispatch_fast, &s->raw, hash, index);
        fast_note(&s->dispatch_fast, tag, index);
    }
}

size_t fdx_sink_miss_cell_count(const fdx_sink *s)
{
    return fdx_agg_cells(s->misses);
}
size_t fdx_sink_dispatch_cell_count(const fdx_sink *s)
{
    return fdx_agg_cells(s->dispatches);
}
int fdx_sink_is_empty(const fdx_sink *s)
{
    return fdx_agg_cells(s->misses) == 0 && fdx_agg_cells(s->dispatches) == 0;
}
uint64_t fdx_sink_dropped(const fdx_sink *s)
{
    return s->dropped;
}
const char *fdx_sink_errmsg(const fdx_sink *s)
{
    return s ? s->errmsg : "out of memory";
}

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

int fdx_sink_flush_all(fdx_sink *s, const char *dir, size_t *miss_lines, size_t *dispatch_lines)
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
    fdx_keymap_clear(&s->miss_keys);
    fdx_keymap_clear(&s->dispatch_keys);
    for (size_t i = 0; i < s->cap_raw_cands; i++)
        fdx_buf_clear(&s->raw_cands[i]);
    fdx_sink_kind *kinds[] = {&s->miss_fast, &s->dispatch_fast};
    for (int k = 0; k < 2; k++) {
        memset(kinds[k]->ptrs, 0, sizeof kinds[k]->ptrs);
        for (size_t i = 0; i < kinds[k]->cap_raw_at; i++)
            kinds[k]->raw_at[i].len = 0;
    }
    return FDX_OK;
}
