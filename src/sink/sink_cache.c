/*
 * The sink's record cache: see sink_cache.h. Both pointer tables are caches
 * in the hardware sense (a full set evicts): the context slots are a fixed
 * few that live in the processor's caches; the token table grows with the
 * distinct tokens recorded (kept at most half full, 64 bytes a slot, so 128
 * to 256 bytes a distinct cell besides the content maps). The content maps
 * behind them never forget, so an eviction costs one slow record.
 */
#include "sink/sink_cache.h"

#include <stdlib.h>
#include <string.h>

#include "fdx.h"

enum { MIN_TOKS = 64, TOK_PROBES = 16, ENTRY_HEADER = 8 };

static uint64_t rotl(uint64_t x, int k)
{
    return x << k | x >> (64 - k);
}

static uint64_t mix(uint64_t h)
{
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ h >> 29;
}

static void prefetch(const void *p)
{
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/* ---- contexts by their pointers ---- */

/* Pointers differ in their low bits: rotations spread them, and the mix at
 * the end stirs the lot. Never 0. */
static uint64_t ctx_hash(const fdx_raw_record *r)
{
    const fdx_impl *id = r->id;
    const fdx_hw *hw = r->hw;
    uint64_t h = r->nums[0] ^ rotl(r->nums[1], 13) ^ rotl(r->nums[2], 54) ^
                 (uint64_t)(uintptr_t)id->backend ^ rotl((uint64_t)(uintptr_t)id->op, 9) ^
                 rotl((uint64_t)(uintptr_t)id->kernel_source, 18) ^
                 rotl((uint64_t)(uintptr_t)hw->hardware_sku, 27) ^
                 rotl((uint64_t)(uintptr_t)hw->driver_version, 36) ^
                 rotl((uint64_t)(uintptr_t)id->dtypes, 45);
    return mix(h) | 1;
}

static fdx_ctx_slot *ctx_slot(const fdx_sink_cache *c, uint64_t hash)
{
    return &c->ctxs[hash & (FDX_CTX_SLOTS - 1)];
}

static int same_ctx_pointers(const fdx_ctx_slot *s, const fdx_raw_record *r)
{
    const fdx_impl *id = r->id;
    const fdx_hw *hw = r->hw;
    uintptr_t diff = (uintptr_t)((s->nums[0] ^ r->nums[0]) | (s->nums[1] ^ r->nums[1]) |
                                 (s->nums[2] ^ r->nums[2]));
    diff |= ((uintptr_t)s->strs[0] ^ (uintptr_t)id->backend) |
            ((uintptr_t)s->strs[1] ^ (uintptr_t)id->op) |
            ((uintptr_t)s->strs[2] ^ (uintptr_t)id->kernel_source) |
            ((uintptr_t)s->strs[3] ^ (uintptr_t)hw->hardware_sku) |
            ((uintptr_t)s->strs[4] ^ (uintptr_t)hw->driver_version);
    if (diff || (id->n_dtypes && !id->dtypes))
        return 0;
    /* The numbers matched, so n_dtypes is the slot's, at most FDX_CTX_DTYPES. */
    for (size_t i = 0; i < id->n_dtypes; i++)
        diff |= (uintptr_t)s->dtypes[i] ^ (uintptr_t)id->dtypes[i];
    return diff == 0;
}

/* The context's number when its pointers and strings are the ones cached. */
static uint32_t cached_ctx(const fdx_sink_cache *c, const fdx_raw_record *r, uint64_t hash)
{
    const fdx_ctx_slot *s = ctx_slot(c, hash);
    if (s->hash != hash || !same_ctx_pointers(s, r) || !fdx_image_matches(&s->image))
        return 0;
    return s->ctx;
}

/* Caches the record at hand's context as number ctx (when it fits). */
static void note_ctx(fdx_sink_cache *c, uint32_t ctx)
{
    const fdx_raw_record *r = c->at;
    fdx_ctx_slot *s = ctx_slot(c, c->ctx_hash);
    s->hash = 0;
    if (r->id->n_dtypes > FDX_CTX_DTYPES)
        return;
    memcpy(s->nums, r->nums, sizeof s->nums);
    const char *strs[5] = {r->id->backend, r->id->op, r->id->kernel_source, r->hw->hardware_sku,
                           r->hw->driver_version};
    memcpy(s->strs, strs, sizeof strs);
    s->image.n = 0;
    for (int i = 0; i < 5; i++)
        if (!fdx_image_add(&s->image, strs[i]))
            return;
    for (size_t i = 0; i < r->id->n_dtypes; i++) {
        s->dtypes[i] = r->id->dtypes[i];
        if (!fdx_image_add(&s->image, s->dtypes[i]))
            return;
    }
    fdx_image_seal(&s->image);
    s->ctx = ctx;
    s->hash = c->ctx_hash;
}

/* The number of the record at hand's context, found by content (and then
 * cached); with add, numbering it when new. 0: unknown, or no memory. */
static uint32_t ctx_by_content(fdx_sink_cache *c, int add)
{
    if (!c->ctxs || !fdx_raw_context_write(&c->ctx_raw, c->at))
        return 0;
    uint64_t hash = fdx_hash_bytes(c->ctx_raw.data, c->ctx_raw.len);
    uint32_t index;
    if (!fdx_keymap_get(&c->by_ctx, c->ctx_raw.data, c->ctx_raw.len, hash, &index)) {
        index = (uint32_t)c->by_ctx.n;
        if (!add || index == UINT32_MAX - 1 ||
            fdx_keymap_put(&c->by_ctx, c->ctx_raw.data, c->ctx_raw.len, hash, index) != FDX_OK)
            return 0;
    }
    note_ctx(c, index + 1);
    return index + 1;
}

/* ---- tokens by their pointers ---- */

/* A token's home goes by its context's pointers, not its context's number,
 * so that it is known before the context is checked. */
static size_t tok_home(const fdx_sink_cache *c)
{
    return mix((uint64_t)(uintptr_t)c->at->token ^ c->ctx_hash) & (c->n_toks - 1);
}

static const char *entry_key(const fdx_sink_cache *c, uint32_t entry)
{
    return c->entries.data + entry + ENTRY_HEADER;
}

static uint32_t entry_cell(const fdx_sink_cache *c, uint32_t entry)
{
    uint32_t cell;
    memcpy(&cell, c->entries.data + entry, 4);
    return cell;
}

static int token_matches(const fdx_sink_cache *c, const fdx_tok_slot *s, const char *token)
{
    if (!token)
        return 1; /* the slot's is NULL too: an unkeyed dispatch */
    if (!s->mask[0])
        return fdx_raw_token_matches(entry_key(c, s->entry), token);
    const char *block = token - ((uintptr_t)token & 15);
    if (fdx_block_diff(block, s->img, s->mask[0]))
        return 0;
    return !s->mask[1] || !fdx_block_diff(block + 16, s->img + 16, s->mask[1]);
}

static fdx_tok_slot *cached_token(const fdx_sink_cache *c, uint32_t ctx, size_t home)
{
    const char *token = c->at->token;
    for (size_t k = 0; k < TOK_PROBES; k++) {
        fdx_tok_slot *s = &c->toks[(home + k) & (c->n_toks - 1)];
        if (!s->ctx)
            return NULL;
        if (s->ctx == ctx && s->token == token)
            return token_matches(c, s, token) ? s : NULL;
    }
    return NULL;
}

static void settle_slot(fdx_sink_cache *c, fdx_tok_slot *s)
{
    if (s->pending)
        fdx_agg_add_at(c->agg, s->cell, s->pending, FDX_NO_CANDS);
    s->pending = 0;
}

void fdx_sink_cache_settle(fdx_sink_cache *c)
{
    for (size_t i = 0; i < c->n_toks; i++)
        settle_slot(c, &c->toks[i]);
}

static void image_token(fdx_tok_slot *s, const char *token)
{
    size_t mis = (uintptr_t)token & 15;
    size_t end = mis + strlen(token) + 1;
    s->mask[0] = s->mask[1] = 0;
    if (end > sizeof s->img)
        return;
    memset(s->img, 0, sizeof s->img);
    memcpy(s->img + mis, token, end - mis);
    uint32_t mask = (uint32_t)((1ull << end) - (1ull << mis));
    s->mask[0] = (uint16_t)mask;
    s->mask[1] = (uint16_t)(mask >> 16);
}

/* Caches the record at hand's token in context ctx as going to entry. */
static void note_token(fdx_sink_cache *c, uint32_t ctx, uint32_t entry)
{
    const char *token = c->at->token;
    size_t home = tok_home(c);
    fdx_tok_slot *s = NULL;
    for (size_t k = 0; k < TOK_PROBES && !s; k++) {
        fdx_tok_slot *t = &c->toks[(home + k) & (c->n_toks - 1)];
        if (!t->ctx || (t->ctx == ctx && t->token == token))
            s = t;
    }
    if (!s)
        s = &c->toks[(home + (c->raw_hash >> 40) % TOK_PROBES) & (c->n_toks - 1)];
    settle_slot(c, s);
    s->token = token;
    s->ctx = ctx;
    s->cell = entry_cell(c, entry);
    s->entry = entry;
    if (token)
        image_token(s, token);
}

/* The record at hand went to the cell of entry: cache it when it can be. */
static void note(fdx_sink_cache *c, uint32_t entry)
{
    if (!c->ctx)
        c->ctx = ctx_by_content(c, 1);
    if (c->ctx && c->n_toks)
        note_token(c, c->ctx, entry);
}

/* ---- finding ---- */

int fdx_sink_cache_find(fdx_sink_cache *c, const fdx_raw_record *r, uint32_t *cell)
{
    c->at = r;
    c->hit = NULL;
    c->raw_ok = 0;
    c->ctx = 0;
    c->ctx_hash = ctx_hash(r);
    if (c->n_toks) {
        /* The token's slot is likely out of the processor's caches: fetch it
         * while the context is checked. */
        size_t home = tok_home(c);
        prefetch(&c->toks[home]);
        c->ctx = cached_ctx(c, r, c->ctx_hash);
        if (!c->ctx)
            c->ctx = ctx_by_content(c, 0);
        if (c->ctx && (c->hit = cached_token(c, c->ctx, home)) != NULL) {
            *cell = c->hit->cell;
            return 1;
        }
    }
    c->raw_ok = fdx_raw_key_write(&c->raw, r);
    if (!c->raw_ok)
        return 0;
    c->raw_hash = fdx_hash_bytes(c->raw.data, c->raw.len);
    uint32_t entry;
    if (!fdx_keymap_get(&c->by_raw, c->raw.data, c->raw.len, c->raw_hash, &entry))
        return 0;
    note(c, entry);
    *cell = entry_cell(c, entry);
    return 1;
}

/* ---- learning ---- */

/* Keeps the token table at most half full; it is rebuilt empty (its tokens
 * are found again by content). */
static void size_tables(fdx_sink_cache *c)
{
    if (!c->ctxs) {
        c->ctxs = calloc(FDX_CTX_SLOTS, sizeof *c->ctxs);
        if (!c->ctxs)
            return;
    }
    if (c->by_raw.n <= c->n_toks / 2)
        return;
    size_t n = c->n_toks ? c->n_toks * 2 : MIN_TOKS;
    fdx_tok_slot *toks = aligned_alloc(64, n * sizeof *toks);
    if (!toks)
        return;
    memset(toks, 0, n * sizeof *toks);
    fdx_sink_cache_settle(c);
    free(c->toks);
    c->toks = toks;
    c->n_toks = n;
}

void fdx_sink_cache_learn(fdx_sink_cache *c, uint32_t cell)
{
    size_t off = c->entries.len;
    if (!c->raw_ok || off > UINT32_MAX - 1 || c->raw.len > UINT32_MAX)
        return;
    uint32_t header[2] = {cell, (uint32_t)c->raw.len};
    fdx_buf_append(&c->entries, header, sizeof header);
    fdx_buf_append(&c->entries, c->raw.data, c->raw.len);
    if (c->entries.oom || fdx_keymap_put_held(&c->by_raw, &c->entries, off + ENTRY_HEADER,
                                              c->raw.len, c->raw_hash, (uint32_t)off) != FDX_OK) {
        c->entries.oom = 0;
        c->entries.len = off;
        return;
    }
    size_tables(c);
    note(c, (uint32_t)off);
}

void fdx_sink_cache_clear(fdx_sink_cache *c)
{
    if (c->ctxs)
        memset(c->ctxs, 0, FDX_CTX_SLOTS * sizeof *c->ctxs);
    if (c->toks)
        memset(c->toks, 0, c->n_toks * sizeof *c->toks);
    fdx_buf_clear(&c->entries);
    fdx_keymap_clear(&c->by_raw);
    fdx_keymap_clear(&c->by_ctx);
    c->raw_ok = 0;
}

void fdx_sink_cache_free(fdx_sink_cache *c)
{
    free(c->ctxs);
    free(c->toks);
    fdx_buf_free(&c->entries);
    fdx_keymap_free(&c->by_raw);
    fdx_keymap_free(&c->by_ctx);
    fdx_buf_free(&c->raw);
    fdx_buf_free(&c->ctx_raw);
    memset(c, 0, sizeof *c);
}
