/* The arena of an aggregate's keys and candidates lists (agg_arena.c). */
#ifndef FDX_AGG_ARENA_H
#define FDX_AGG_ARENA_H

#include <stddef.h>

#include "cell/agg_internal.h"

/* Room for an n-byte list: an eighth more, since a cell's later lists are
 * mostly the same candidates with other latencies, and fit. */
size_t fdx_agg_list_room(size_t n);

/* Room for extra more bytes at the arena's end (FDX_OK or FDX_ENOMEM),
 * squeezing out outgrown rooms first when they are a quarter of it (under
 * a mark, of what was added since). *src follows the arena when it points
 * into it (which is then not squeezed: the room it is in would move). */
int fdx_agg_arena_reserve(fdx_agg *agg, size_t extra, const char **src);

/* Takes n bytes at the arena's end, which fdx_agg_arena_reserve made room
 * for; returns their offset. */
static inline size_t fdx_agg_arena_take(fdx_agg *agg, size_t n)
{
    size_t off = agg->keys.len;
    agg->keys.len += n;
    return off;
}

#endif
