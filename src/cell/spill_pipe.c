/*
 * The merge runs on its own thread and hands its cells over in blocks of
 * packed records (a head, the packed key, the list), at most BLOCKS of
 * them in flight, so it runs ahead of the writing by a megabyte or two and
 * holds no more than that whatever the number of cells. A record longer
 * than a block (a long candidates list) crosses alone, once the blocks
 * before it are written, and its room is given back after it: the pipe
 * holds one long list at a time, as the merge itself does, not one per
 * block. The caller's fn sees each cell unpacked from the block, in the
 * merge's order; when fn fails, the merge is told to stop at its next block.
 */
#include "cell/spill_pipe.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cell/spill_file.h"
#include "common/buf.h"
#include "fdx.h"

#define BLOCK_BYTES ((size_t)256 << 10)
#define BLOCKS      4

typedef struct rec_head {
    uint64_t count;
    size_t key_len;
    size_t cands_len;
} rec_head;

typedef struct merge_pipe {
    fdx_spill *sp;
    const fdx_agg *newest;
    fdx_buf blocks[BLOCKS];
    /* blocks ever handed over and ever given back: the merge fills
     * blocks[filled % BLOCKS], the caller writes blocks[taken % BLOCKS] */
    size_t filled, taken;
    int merged; /* the merge has returned rc, and err when it failed */
    int stop;   /* fn failed: the merge is to stop */
    int rc;
    char err[700];
    fdx_buf key; /* the merging thread's, for packing */
    pthread_mutex_t mu;
    pthread_cond_t changed;
} merge_pipe;

/* ---- the merging thread ---- */

/* Hands the block being filled over and waits for a free one: 0, or -1
 * when the caller wants no more. */
static int hand_over(merge_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    p->filled++;
    pthread_cond_broadcast(&p->changed);
    while (!p->stop && p->filled - p->taken == BLOCKS)
        pthread_cond_wait(&p->changed, &p->mu);
    int stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    return stop ? -1 : 0;
}

/* Waits until every block handed over is written: 0, or -1 when the caller
 * wants no more. */
static int wait_written(merge_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    while (!p->stop && p->taken != p->filled)
        pthread_cond_wait(&p->changed, &p->mu);
    int stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    return stop ? -1 : 0;
}

static int put(void *ctx, const fdx_cell *cell, uint64_t count, fdx_str cands)
{
    merge_pipe *p = ctx;
    fdx_buf *b = &p->blocks[p->filled % BLOCKS];
    fdx_cell_pack(cell, &p->key);
    if (p->key.oom)
        return fdx_spill_no_memory(p->err, sizeof p->err);
    rec_head h = {count, p->key.len, cands.n};
    if (h.cands_len > BLOCK_BYTES || sizeof h + h.key_len > BLOCK_BYTES - h.cands_len) {
        if ((b->len && hand_over(p) != 0) || wait_written(p) != 0)
            return FDX_ERROR;
        b = &p->blocks[p->filled % BLOCKS];
    }
    fdx_buf_append(b, &h, sizeof h);
    fdx_buf_append(b, p->key.data, p->key.len);
    fdx_buf_append(b, cands.p, cands.n);
    if (b->oom)
        return fdx_spill_no_memory(p->err, sizeof p->err);
    return b->len >= BLOCK_BYTES && hand_over(p) != 0 ? FDX_ERROR : FDX_OK;
}

static void *merging(void *arg)
{
    merge_pipe *p = arg;
    int rc = fdx_spill_merge(p->sp, p->newest, put, p, p->err, sizeof p->err);
    pthread_mutex_lock(&p->mu);
    if (rc == FDX_OK && p->blocks[p->filled % BLOCKS].len)
        p->filled++; /* the last block, a free one */
    p->rc = rc;
    p->merged = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ---- the calling thread ---- */

static int write_block(const fdx_buf *b, fdx_spill_fn fn, void *ctx)
{
    int rc = FDX_OK;
    for (size_t at = 0; rc == FDX_OK && at < b->len;) {
        rec_head h;
        memcpy(&h, b->data + at, sizeof h);
        at += sizeof h;
        fdx_cell cell;
        fdx_cell_unpack(&cell, b->data + at, h.key_len);
        at += h.key_len;
        rc = fn(ctx, &cell, h.count, (fdx_str){b->data + at, h.cands_len});
        at += h.cands_len;
    }
    return rc;
}

/* The next block handed over, or NULL once the merge has returned and
 * every block is written. */
static fdx_buf *next_block(merge_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->taken == p->filled && !p->merged)
        pthread_cond_wait(&p->changed, &p->mu);
    fdx_buf *b = p->taken != p->filled ? &p->blocks[p->taken % BLOCKS] : NULL;
    pthread_mutex_unlock(&p->mu);
    return b;
}

static void give_back(merge_pipe *p, fdx_buf *b, int failed)
{
    pthread_mutex_lock(&p->mu);
    if (b->cap > 2 * BLOCK_BYTES)
        fdx_buf_free(b); /* it held a long record */
    else
        fdx_buf_clear(b);
    p->taken++;
    p->stop = failed;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->mu);
}

static void pipe_free(merge_pipe *p, int synced)
{
    for (size_t i = 0; i < BLOCKS; i++)
        fdx_buf_free(&p->blocks[i]);
    fdx_buf_free(&p->key);
    if (synced) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->changed);
    }
    free(p);
}

int fdx_spill_merge_piped(fdx_spill *sp, const fdx_agg *newest, fdx_spill_fn fn, void *ctx,
                          char *err, size_t size)
{
    merge_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return fdx_spill_no_memory(err, size);
    p->sp = sp;
    p->newest = newest;
    int synced = pthread_mutex_init(&p->mu, NULL) == 0;
    if (synced && pthread_cond_init(&p->changed, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        synced = 0;
    }
    pthread_t merger;
    if (!synced || pthread_create(&merger, NULL, merging, p) != 0) {
        pipe_free(p, synced);
        return fdx_spill_merge(sp, newest, fn, ctx, err, size);
    }
    int rc = FDX_OK;
    fdx_buf *b;
    while (rc == FDX_OK && (b = next_block(p)) != NULL) {
        rc = write_block(b, fn, ctx);
        give_back(p, b, rc != FDX_OK);
    }
    if (pthread_join(merger, NULL) != 0) /* it may still be running: p stays */
        return rc != FDX_OK ? rc : fdx_spill_no_memory(err, size);
    if (rc == FDX_OK && (rc = p->rc) != FDX_OK)
        snprintf(err, size, "%s", p->err);
    pipe_free(p, 1);
    return rc;
}
