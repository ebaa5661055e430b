/*
 * The merge runs on its own thread and hands its cells over in blocks of
 * packed records (a head, the packed key, the list) through a handoff
 * (common/handoff.h), so it runs ahead of the writing by a megabyte or two
 * and holds no more than that whatever the number of cells; a long
 * candidates list crosses alone. The caller's fn sees each cell unpacked
 * from the block, in the merge's order; when fn fails, the merge is told to
 * stop at its next block.
 */
#include "cell/spill_pipe.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cell/spill_file.h"
#include "common/buf.h"
#include "common/handoff.h"
#include "fdx.h"

typedef struct rec_head {
    uint64_t count;
    size_t key_len;
    size_t cands_len;
} rec_head;

typedef struct merge_pipe {
    fdx_spill *sp;
    const fdx_agg *newest;
    fdx_handoff ho;
    int rc; /* the merge's, read once it is joined */
    char err[700];
    fdx_buf key; /* the merging thread's, for packing */
} merge_pipe;

/* ---- the merging thread ---- */

static int put(void *ctx, const fdx_cell *cell, uint64_t count, fdx_str cands)
{
    merge_pipe *p = ctx;
    fdx_cell_pack(cell, &p->key);
    if (p->key.oom)
        return fdx_spill_no_memory(p->err, sizeof p->err);
    rec_head h = {count, p->key.len, cands.n};
    size_t n = h.cands_len > SIZE_MAX - sizeof h - h.key_len ? SIZE_MAX
                                                             : sizeof h + h.key_len + h.cands_len;
    fdx_buf *b = fdx_handoff_room(&p->ho, n);
    if (!b)
        return FDX_ERROR;
    fdx_buf_append(b, &h, sizeof h);
    fdx_buf_append(b, p->key.data, p->key.len);
    fdx_buf_append(b, cands.p, cands.n);
    if (b->oom)
        return fdx_spill_no_memory(p->err, sizeof p->err);
    return fdx_handoff_appended(&p->ho) != 0 ? FDX_ERROR : FDX_OK;
}

static void *merging(void *arg)
{
    merge_pipe *p = arg;
    p->rc = fdx_spill_merge(p->sp, p->newest, put, p, p->err, sizeof p->err);
    fdx_handoff_finish(&p->ho, p->rc == FDX_OK);
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

int fdx_spill_merge_piped(fdx_spill *sp, const fdx_agg *newest, fdx_spill_fn fn, void *ctx,
                          char *err, size_t size)
{
    merge_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return fdx_spill_no_memory(err, size);
    p->sp = sp;
    p->newest = newest;
    int synced = fdx_handoff_init(&p->ho) == 0;
    pthread_t merger;
    if (!synced || pthread_create(&merger, NULL, merging, p) != 0) {
        if (synced)
            fdx_handoff_destroy(&p->ho);
        free(p);
        return fdx_spill_merge(sp, newest, fn, ctx, err, size);
    }
    int rc = FDX_OK;
    fdx_buf *b;
    while (rc == FDX_OK && (b = fdx_handoff_next(&p->ho)) != NULL) {
        rc = write_block(b, fn, ctx);
        fdx_handoff_give_back(&p->ho, b, rc != FDX_OK);
    }
    if (pthread_join(merger, NULL) != 0) /* it may still be running: p stays */
        return rc != FDX_OK ? rc : fdx_spill_no_memory(err, size);
    if (rc == FDX_OK && (rc = p->rc) != FDX_OK)
        snprintf(err, size, "%s", p->err);
    fdx_handoff_destroy(&p->ho);
    fdx_buf_free(&p->key);
    free(p);
    return rc;
}
