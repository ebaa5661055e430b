/*
 * One thread works ahead of another and hands its output over in blocks, at
 * most FDX_HANDOFF_BLOCKS of them in flight: the filler runs ahead of the
 * taker by a megabyte or so and holds no more than that, however much it
 * produces. A record longer than a block crosses alone, once the blocks
 * before it are taken, and its room is given back after it. Both the final
 * merge of spilled runs (cell/spill_pipe.c) and an export's reading of rows
 * (store/row_stream.c) hand over this way.
 */
#include "common/handoff.h"

#include <string.h>

int fdx_handoff_init(fdx_handoff *h)
{
    memset(h, 0, sizeof *h);
    if (pthread_mutex_init(&h->mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&h->changed, NULL) != 0) {
        pthread_mutex_destroy(&h->mu);
        return -1;
    }
    return 0;
}

void fdx_handoff_destroy(fdx_handoff *h)
{
    for (size_t i = 0; i < FDX_HANDOFF_BLOCKS; i++)
        fdx_buf_free(&h->blocks[i]);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->changed);
}

/* Hands the block being filled over and waits until fewer than `busy`
 * blocks are in flight: 0, or -1 when the taker wants no more. */
static int hand_over(fdx_handoff *h, int give, size_t busy)
{
    pthread_mutex_lock(&h->mu);
    h->filled += give;
    pthread_cond_broadcast(&h->changed);
    while (!h->stop && h->filled - h->taken >= busy)
        pthread_cond_wait(&h->changed, &h->mu);
    int stop = h->stop;
    pthread_mutex_unlock(&h->mu);
    return stop ? -1 : 0;
}

fdx_buf *fdx_handoff_room(fdx_handoff *h, size_t n)
{
    fdx_buf *b = &h->blocks[h->filled % FDX_HANDOFF_BLOCKS];
    if (n <= FDX_HANDOFF_BLOCK_BYTES)
        return b;
    /* a long record: hand over what the block holds, then wait for all */
    if (hand_over(h, b->len != 0, 1) != 0)
        return NULL;
    return &h->blocks[h->filled % FDX_HANDOFF_BLOCKS];
}

int fdx_handoff_appended(fdx_handoff *h)
{
    const fdx_buf *b = &h->blocks[h->filled % FDX_HANDOFF_BLOCKS];
    return b->len >= FDX_HANDOFF_BLOCK_BYTES ? hand_over(h, 1, FDX_HANDOFF_BLOCKS) : 0;
}

void fdx_handoff_finish(fdx_handoff *h, int keep)
{
    pthread_mutex_lock(&h->mu);
    /* a block is being filled only while fewer than all are in flight */
    if (keep && h->blocks[h->filled % FDX_HANDOFF_BLOCKS].len &&
        h->filled - h->taken < FDX_HANDOFF_BLOCKS)
        h->filled++;
    h->done = 1;
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->mu);
}

fdx_buf *fdx_handoff_next(fdx_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    while (h->taken == h->filled && !h->done)
        pthread_cond_wait(&h->changed, &h->mu);
    fdx_buf *b = h->taken != h->filled ? &h->blocks[h->taken % FDX_HANDOFF_BLOCKS] : NULL;
    pthread_mutex_unlock(&h->mu);
    return b;
}

void fdx_handoff_give_back(fdx_handoff *h, fdx_buf *b, int stop)
{
    pthread_mutex_lock(&h->mu);
    if (b->cap > 2 * FDX_HANDOFF_BLOCK_BYTES)
        fdx_buf_free(b); /* it held a long record */
    else
        fdx_buf_clear(b);
    h->taken++;
    h->stop = stop;
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->mu);
}

void fdx_handoff_stop(fdx_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    h->stop = 1;
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->mu);
}
