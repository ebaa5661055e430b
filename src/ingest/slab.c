/*
 * The blocks lines are read into (see slab.h). A few free blocks are kept
 * for the next reads, so that reading a feed touches the same pages over
 * and over instead of faulting in new ones; more than that are freed. Of
 * the blocks larger than FDX_SLAB_BYTES (made for long lines) only the
 * largest is kept: a feed whose long lines come again reads each into it,
 * as a reader's one buffer that grew would, and memory stays bounded by the
 * longest line allowed.
 */
#include "ingest/slab.h"

#include <stdlib.h>

/* The reader's block and the batches in flight hold a handful at a time. */
#define KEEP_FREE 8
/* Less room than this left in a block is not worth a next file's reads. */
#define PARK_ROOM ((size_t)16 << 10)

struct fdx_slab_pool {
    fdx_slab *free; /* of FDX_SLAB_BYTES each */
    size_t n_free;
    fdx_slab *large; /* the largest block let go that was larger, or NULL */
    fdx_slab *parked;
    size_t parked_used;
};

fdx_slab_pool *fdx_slab_pool_new(void)
{
    return calloc(1, sizeof(fdx_slab_pool));
}

static void slab_free(fdx_slab *slab)
{
    if (slab) {
        free(slab->data);
        free(slab);
    }
}

void fdx_slab_pool_free(fdx_slab_pool *pool)
{
    if (!pool)
        return;
    if (pool->parked)
        fdx_slab_let_go(pool->parked);
    while (pool->free) {
        fdx_slab *next = pool->free->next_free;
        slab_free(pool->free);
        pool->free = next;
    }
    slab_free(pool->large);
    free(pool);
}

/* A free block of at least cap bytes, unlinked; NULL when none is. */
static fdx_slab *take_free(fdx_slab_pool *pool, size_t cap)
{
    fdx_slab *slab = NULL;
    if (cap <= FDX_SLAB_BYTES && pool->free) {
        slab = pool->free;
        pool->free = slab->next_free;
        pool->n_free--;
    } else if (cap > FDX_SLAB_BYTES && pool->large && pool->large->cap >= cap) {
        slab = pool->large;
        pool->large = NULL;
    }
    return slab;
}

fdx_slab *fdx_slab_take(fdx_slab_pool *pool, size_t cap)
{
    fdx_slab *slab = take_free(pool, cap);
    if (!slab) {
        slab = calloc(1, sizeof *slab);
        if (!slab)
            return NULL;
        slab->cap = cap > FDX_SLAB_BYTES ? cap : FDX_SLAB_BYTES;
        slab->data = malloc(slab->cap);
        if (!slab->data) {
            free(slab);
            return NULL;
        }
        slab->pool = pool;
    }
    slab->holders = 1;
    slab->next_free = NULL;
    return slab;
}

void fdx_slab_hold(fdx_slab *slab)
{
    slab->holders++;
}

void fdx_slab_let_go(fdx_slab *slab)
{
    if (--slab->holders > 0)
        return;
    fdx_slab_pool *pool = slab->pool;
    if (slab->cap > FDX_SLAB_BYTES) {
        int larger = !pool->large || slab->cap > pool->large->cap;
        slab_free(larger ? pool->large : slab);
        if (larger)
            pool->large = slab;
        return;
    }
    if (pool->n_free >= KEEP_FREE) {
        slab_free(slab);
        return;
    }
    slab->next_free = pool->free;
    pool->free = slab;
    pool->n_free++;
}

void fdx_slab_park(fdx_slab_pool *pool, fdx_slab *slab, size_t used)
{
    if (pool->parked)
        fdx_slab_let_go(pool->parked);
    pool->parked = NULL;
    if (slab->cap - used < PARK_ROOM) {
        fdx_slab_let_go(slab);
        return;
    }
    pool->parked = slab;
    pool->parked_used = used;
}

fdx_slab *fdx_slab_unpark(fdx_slab_pool *pool, size_t *used)
{
    fdx_slab *slab = pool->parked;
    pool->parked = NULL;
    *used = pool->parked_used;
    return slab;
}
