/*
 * The sink's memory of the records it has seen, per kind: from a record to
 * the cell it went to, without validating or encoding it again.
 *
 * Runtimes pass the same static or interned strings again and again, so the
 * fast path goes by the record's pointers, in two steps that match how
 * records vary: the context (implementation and device: everything but the
 * token, shared by many cells) is found by its pointers and checked against
 * an image of its strings (str_image.h); then the token is found by its
 * pointer and the context's number, and checked against its own image. Both
 * tables are caches: a full set evicts, and whatever they miss is found by
 * content, from the record's raw key (raw_key.h).
 */
#ifndef FDX_SINK_CACHE_H
#define FDX_SINK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "cell/agg.h"
#include "common/buf.h"
#include "common/keymap.h"
#include "sink/raw_key.h"
#include "sink/str_image.h"

#define FDX_CTX_SLOTS  64
#define FDX_CTX_DTYPES 8

/* A context seen by its pointers, and the number of its content. */
typedef struct fdx_ctx_slot {
    uint64_t hash; /* of its pointers and numbers; 0: empty */
    uint64_t nums[3];
    const char *strs[5]; /* backend, op, kernel source, sku, driver */
    const char *dtypes[FDX_CTX_DTYPES];
    uint32_t ctx; /* 1-based number of the content */
    fdx_image image;
} fdx_ctx_slot;

/* A token seen by its pointer in one context: one cache line, which also
 * holds the count recorded through it since it was last settled into the
 * cell, so that a record touches no other line of the sink's. A token whose
 * image would take more than two blocks (mask[0] == 0) is compared with its
 * entry. */
typedef struct fdx_tok_slot {
    const char *token;
    uint64_t pending;
    uint32_t ctx; /* 0: empty */
    uint32_t cell;
    uint32_t entry; /* offset of the cell's entry */
    uint16_t mask[2];
    _Alignas(16) unsigned char img[32];
} fdx_tok_slot;

typedef struct fdx_sink_cache {
    fdx_agg *agg;       /* the cells, set by the sink */
    fdx_ctx_slot *ctxs; /* FDX_CTX_SLOTS, allocated with the first cell */
    fdx_tok_slot *toks;
    size_t n_toks;     /* a power of two, grown with the cells; 0 before the first */
    fdx_keymap by_ctx; /* a context's raw key -> its number - 1 */
    /* Per cell: its index (4 bytes), its raw key's length (4 bytes), the key. */
    fdx_buf entries;
    fdx_keymap by_raw; /* raw key (held in entries) -> offset of its entry */
    /* The record at hand: its fields, the token slot that found it (if one
     * did), its context's hash and number (0: not known yet), and once
     * written, its raw key and its context's. */
    const fdx_raw_record *at;
    fdx_tok_slot *hit;
    uint64_t ctx_hash;
    uint32_t ctx;
    fdx_buf raw;
    int raw_ok;
    uint64_t raw_hash;
    fdx_buf ctx_raw;
} fdx_sink_cache;

/* The cell r went to before, if the cache knows it (1 and *cell). Either way
 * it prepares fdx_sink_cache_learn for r, which must still be in scope. */
int fdx_sink_cache_find(fdx_sink_cache *c, const fdx_raw_record *r, uint32_t *cell);
/* Counts the record that find just found in its cell (see fdx_agg_add). */
static inline void fdx_sink_cache_count(fdx_sink_cache *c, uint32_t cell, uint64_t count)
{
    if (c->hit)
        c->hit->pending = fdx_count_add(c->hit->pending, count);
    else
        fdx_agg_add_at(c->agg, cell, count, FDX_NO_CANDS);
}
/* Moves every count the cache holds into the cells: before reading them. */
void fdx_sink_cache_settle(fdx_sink_cache *c);
/* Remembers that the record last passed to find went to a new cell. Failing
 * to (no memory) costs speed only. */
void fdx_sink_cache_learn(fdx_sink_cache *c, uint32_t cell);
/* Forgets every record, and the counts held with them: settle first. */
void fdx_sink_cache_clear(fdx_sink_cache *c);
void fdx_sink_cache_free(fdx_sink_cache *c);

#endif
