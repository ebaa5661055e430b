/*
 * The sink's memory of the records it has seen, per kind: from a record to
 * the cell it went to, without validating or encoding it again.
 *
 * Two levels. Runtimes pass the same static or interned strings again and
 * again, so a set-associative table keyed by a hash of the record's pointers
 * leads straight to the cell's entry, whose raw key the record is then
 * compared with in place (the strings may have changed since). When that
 * misses, the record's raw key is written and looked up by content.
 */
#ifndef FDX_SINK_CACHE_H
#define FDX_SINK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "keymap.h"
#include "raw_key.h"

#define FDX_PTR_WAYS 8

/* One cache line: per way, the high half of the pointers' hash (never 0;
 * 0: empty) and the offset of the cell's entry. */
typedef struct fdx_ptr_set {
    uint32_t tag[FDX_PTR_WAYS];
    uint32_t entry[FDX_PTR_WAYS];
} fdx_ptr_set;

typedef struct fdx_sink_cache {
    fdx_ptr_set *sets;
    size_t n_sets; /* a power of two, grown with the cells; 0 before the first */
    /* Per cell: its index (4 bytes), its raw key's length (4 bytes), the key. */
    fdx_buf entries;
    fdx_keymap by_raw; /* raw key (held in entries) -> offset of its entry */
    /* The record at hand: its pointers' hash and, once written, its raw key. */
    uint64_t ptr_hash;
    fdx_buf raw;
    int raw_ok;
    uint64_t raw_hash;
} fdx_sink_cache;

/* The cell r went to before, if the cache knows it (1 and *cell). Either way
 * it prepares fdx_sink_cache_learn for r. */
int fdx_sink_cache_find(fdx_sink_cache *c, const fdx_raw_record *r, uint32_t *cell);
/* Remembers that the record last passed to find went to a new cell. Failing
 * to (no memory) costs speed only. */
void fdx_sink_cache_learn(fdx_sink_cache *c, uint32_t cell);
void fdx_sink_cache_clear(fdx_sink_cache *c);
void fdx_sink_cache_free(fdx_sink_cache *c);

#endif
