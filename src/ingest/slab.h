/*
 * Blocks the line reader reads a file into and the batches its lines go to
 * without being copied: a block stays as long as the reader or a batch
 * still points into it, and goes back to its pool once none does. All on
 * the calling thread: the decoders only read the lines they are handed, and
 * a batch lets go of its blocks when the calling thread finishes it.
 */
#ifndef FDX_SLAB_H
#define FDX_SLAB_H

#include <stddef.h>

typedef struct fdx_slab_pool fdx_slab_pool;

typedef struct fdx_slab {
    char *data;
    size_t cap;
    size_t holders; /* the reader and the batches that point into it */
    fdx_slab_pool *pool;
    struct fdx_slab *next_free;
} fdx_slab;

/* The size of a block, unless a longer line needs more. */
#define FDX_SLAB_BYTES ((size_t)256 << 10)

fdx_slab_pool *fdx_slab_pool_new(void);
/* Frees the pool and its free blocks; blocks still held are the caller's bug. */
void fdx_slab_pool_free(fdx_slab_pool *pool);
/* A block of at least cap bytes with one holder; NULL without memory. */
fdx_slab *fdx_slab_take(fdx_slab_pool *pool, size_t cap);
void fdx_slab_hold(fdx_slab *slab);
/* Lets go of a block; its last holder gives it back to the pool. */
void fdx_slab_let_go(fdx_slab *slab);
/* A reader done with a block leaves it, with its ref, for the next reader
 * to go on after its first used bytes, so that many small files share
 * blocks as one large file does. */
void fdx_slab_park(fdx_slab_pool *pool, fdx_slab *slab, size_t used);
/* The block parked last and where its free room starts, with the ref it
 * was parked with; NULL when none is. */
fdx_slab *fdx_slab_unpark(fdx_slab_pool *pool, size_t *used);

#endif
