/*
 * The sink's record cache: see sink_cache.h. The pointer table is a cache in
 * the hardware sense (a full set evicts a way), sized to the cells so that
 * it stays small enough to live in the processor's caches itself.
 */
#include "sink_cache.h"

#include <stdlib.h>
#include <string.h>

#include "fdx.h"

enum { MIN_SETS = 64, ENTRY_HEADER = 8 };

static uint32_t way_tag(uint64_t hash)
{
    return (uint32_t)(hash >> 32) | 1;
}

static fdx_ptr_set *set_of(const fdx_sink_cache *c, uint64_t hash)
{
    return &c->sets[hash & (c->n_sets - 1)];
}

static uint32_t entry_cell(const fdx_sink_cache *c, uint32_t off)
{
    uint32_t cell;
    memcpy(&cell, c->entries.data + off, 4);
    return cell;
}

static int entry_matches(const fdx_sink_cache *c, uint32_t off, const fdx_raw_record *r)
{
    uint32_t len;
    memcpy(&len, c->entries.data + off + 4, 4);
    return fdx_raw_key_matches(c->entries.data + off + ENTRY_HEADER, len, r);
}

/* The way for this hash: the one it already has, else an empty one, else one
 * picked by the hash's middle bits. */
static int way_for(const fdx_ptr_set *set, uint32_t tag, uint64_t hash)
{
    int empty = -1;
    for (int w = 0; w < FDX_PTR_WAYS; w++) {
        if (set->tag[w] == tag)
            return w;
        if (!set->tag[w] && empty < 0)
            empty = w;
    }
    return empty >= 0 ? empty : (int)((hash >> 20) % FDX_PTR_WAYS);
}

static void note(fdx_sink_cache *c, uint32_t off)
{
    if (!c->n_sets)
        return;
    fdx_ptr_set *set = set_of(c, c->ptr_hash);
    uint32_t tag = way_tag(c->ptr_hash);
    int w = way_for(set, tag, c->ptr_hash);
    set->tag[w] = tag;
    set->entry[w] = off;
}

int fdx_sink_cache_find(fdx_sink_cache *c, const fdx_raw_record *r, uint32_t *cell)
{
    c->raw_ok = 0;
    c->ptr_hash = fdx_raw_ptr_hash(r);
    if (c->n_sets) {
        const fdx_ptr_set *set = set_of(c, c->ptr_hash);
        uint32_t tag = way_tag(c->ptr_hash);
        for (int w = 0; w < FDX_PTR_WAYS; w++)
            if (set->tag[w] == tag) {
                if (!entry_matches(c, set->entry[w], r))
                    break;
                *cell = entry_cell(c, set->entry[w]);
                return 1;
            }
    }
    c->raw_ok = fdx_raw_key_write(&c->raw, r);
    if (!c->raw_ok)
        return 0;
    c->raw_hash = fdx_hash_bytes(c->raw.data, c->raw.len);
    uint32_t off;
    if (!fdx_keymap_get(&c->by_raw, c->raw.data, c->raw.len, c->raw_hash, &off))
        return 0;
    note(c, off);
    *cell = entry_cell(c, off);
    return 1;
}

/* Keeps about four entries or fewer per set; the table is rebuilt empty (its
 * entries are found again by content). */
static void size_sets(fdx_sink_cache *c)
{
    if (c->by_raw.n <= c->n_sets * 4)
        return;
    size_t n = c->n_sets ? c->n_sets * 2 : MIN_SETS;
    fdx_ptr_set *sets = calloc(n, sizeof *sets);
    if (!sets)
        return;
    free(c->sets);
    c->sets = sets;
    c->n_sets = n;
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
    size_sets(c);
    note(c, (uint32_t)off);
}

void fdx_sink_cache_clear(fdx_sink_cache *c)
{
    if (c->sets)
        memset(c->sets, 0, c->n_sets * sizeof *c->sets);
    fdx_buf_clear(&c->entries);
    fdx_keymap_clear(&c->by_raw);
    c->raw_ok = 0;
}

void fdx_sink_cache_free(fdx_sink_cache *c)
{
    free(c->sets);
    fdx_buf_free(&c->entries);
    fdx_keymap_free(&c->by_raw);
    fdx_buf_free(&c->raw);
    memset(c, 0, sizeof *c);
}
