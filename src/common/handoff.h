/*
 * Blocks of bytes that one thread fills and another takes, in order, a few
 * in flight (handoff.c).
 */
#ifndef FDX_COMMON_HANDOFF_H
#define FDX_COMMON_HANDOFF_H

#include <pthread.h>
#include <stddef.h>

#include "common/buf.h"

#define FDX_HANDOFF_BLOCK_BYTES ((size_t)256 << 10)
#define FDX_HANDOFF_BLOCKS      4

typedef struct fdx_handoff {
    fdx_buf blocks[FDX_HANDOFF_BLOCKS];
    /* blocks ever handed over and ever given back: the filler fills
     * blocks[filled % BLOCKS], the taker takes blocks[taken % BLOCKS] */
    size_t filled, taken;
    int done; /* the filler has handed over its last block */
    int stop; /* the taker wants no more */
    pthread_mutex_t mu;
    pthread_cond_t changed;
} fdx_handoff;

/* 0, or -1 when no mutex or condition can be had (nothing to destroy). */
int fdx_handoff_init(fdx_handoff *h);
void fdx_handoff_destroy(fdx_handoff *h);

/* The filler's side. The block to append a record of n bytes to: the one
 * being filled or, for a record longer than a block, the next one once every
 * block before it is taken, so that one long record at a time is in flight.
 * NULL when the taker wants no more. */
fdx_buf *fdx_handoff_room(fdx_handoff *h, size_t n);
/* After a record is appended: hands the block over once it is full, and
 * waits for a free one. 0, or -1 when the taker wants no more. */
int fdx_handoff_appended(fdx_handoff *h);
/* Says there is no more, after handing over the block being filled when
 * keep is set (otherwise dropping it). */
void fdx_handoff_finish(fdx_handoff *h, int keep);

/* The taker's side. The next block handed over, or NULL once the filler has
 * finished and every block is taken. */
fdx_buf *fdx_handoff_next(fdx_handoff *h);
/* Gives b back; stop: the filler is to stop at its next block. */
void fdx_handoff_give_back(fdx_handoff *h, fdx_buf *b, int stop);
/* The filler is to stop at its next block. */
void fdx_handoff_stop(fdx_handoff *h);

#endif
