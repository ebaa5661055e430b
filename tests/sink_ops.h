/*
 * A differential driver for the sink's record cache: bytes choose operations
 * on a few string buffers (rewritten in place, longer and shorter, from a
 * three-letter alphabet so that contents collide) and records built from
 * them, recorded both into a sink and into a store through the store's own
 * record calls, which have no cache. The two must agree on every cell.
 * Used by the sink_model suite (random bytes) and by fuzz_sink.
 */
#ifndef FDX_SINK_OPS_H
#define FDX_SINK_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fdx.h"

enum { OPS_BUFFERS = 6, OPS_BUFFER_BYTES = 48, OPS_MAX_DTYPES = 3, OPS_MAX_CANDS = 2 };

enum { OPS_REPLAYS = 8 };

typedef struct sink_ops {
    const uint8_t *data;
    size_t n, at;
    /* Where earlier records were built from: most records replay one, so the
     * same pointers come back while what they point to changes. */
    size_t replay[OPS_REPLAYS];
    /* The operation's own byte: varies the numbers of a replayed record. */
    unsigned salt;
    char buffers[OPS_BUFFERS][OPS_BUFFER_BYTES];
    uint64_t recorded, refused_by_store;
} sink_ops;

static inline unsigned ops_byte(sink_ops *o)
{
    return o->at < o->n ? o->data[o->at++] : 0;
}

static inline const char *ops_string(sink_ops *o)
{
    static const char *const fixed[] = {"Cuda",  "MatMul", "F16",    "generic",
                                        "sku-A", "552.44", "bad\xff"};
    unsigned b = ops_byte(o);
    return b < 0x90 ? o->buffers[b % OPS_BUFFERS] : fixed[b % 7];
}

static inline void ops_rewrite(sink_ops *o)
{
    char *buf = o->buffers[ops_byte(o) % OPS_BUFFERS];
    size_t len = ops_byte(o) % 34;
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)('a' + ops_byte(o) % 3);
    buf[len] = '\0';
}

typedef struct ops_impl {
    fdx_impl id;
    const char *dtypes[OPS_MAX_DTYPES];
} ops_impl;

static inline void ops_fill_impl(sink_ops *o, ops_impl *x)
{
    size_t n = ops_byte(o) % (OPS_MAX_DTYPES + 1);
    for (size_t i = 0; i < n; i++)
        x->dtypes[i] = ops_string(o);
    x->id.backend = ops_string(o);
    x->id.op = ops_string(o);
    x->id.kernel_source = ops_string(o);
    x->id.dtypes = x->dtypes;
    x->id.n_dtypes = n;
    unsigned rev = (ops_byte(o) ^ (o->salt >> 3)) % 3;
    x->id.kernel_revision_hash = rev == 2 ? UINT64_MAX : rev;
}

static inline fdx_hw ops_hw(sink_ops *o)
{
    unsigned b = ops_byte(o);
    fdx_hw hw = {(int)(b & 1), (b >> 1) & 1, (b >> 2) & 1, ops_string(o), ops_string(o)};
    return hw;
}

/* Builds a record from the bytes at o->at and records it into both. */
static inline void ops_record(sink_ops *o, fdx_sink *sink, fdx_store *db)
{
    unsigned op = 2 + ops_byte(o) % 6;
    ops_impl impl, cand_impl[OPS_MAX_CANDS];
    fdx_candidate cands[OPS_MAX_CANDS];
    const char *token = ops_string(o);
    ops_fill_impl(o, &impl);
    fdx_hw hw = ops_hw(o);
    uint64_t count = ops_byte(o) % 4;
    int rc;
    if (op < 5) {
        fdx_miss m = {token, impl.id, count, hw};
        fdx_sink_record_miss(sink, &m);
        rc = fdx_store_record_miss(db, &m);
    } else {
        size_t n = ops_byte(o) % (OPS_MAX_CANDS + 1);
        for (size_t k = 0; k < n; k++) {
            ops_fill_impl(o, &cand_impl[k]);
            unsigned b = ops_byte(o) ^ (o->salt >> 5);
            cands[k] = (fdx_candidate){cand_impl[k].id, (int)(b & 1), b >> 1};
        }
        fdx_dispatch d = {op == 7 ? NULL : token, impl.id, n ? cands : NULL, n, count, hw};
        fdx_sink_record_dispatch(sink, &d);
        rc = fdx_store_record_dispatch(db, &d);
    }
    o->recorded++;
    o->refused_by_store += rc != FDX_OK;
}

/* Runs every operation the bytes describe. */
static inline void sink_ops_run(sink_ops *o, fdx_sink *sink, fdx_store *db)
{
    for (size_t i = 0; i < OPS_BUFFERS; i++)
        memcpy(o->buffers[i], "b", 2);
    for (size_t i = 0; i < OPS_REPLAYS; i++)
        o->replay[i] = o->n; /* nothing to replay yet: reads as zeros */
    while (o->at < o->n) {
        unsigned op = o->salt = ops_byte(o);
        size_t *slot = &o->replay[(op >> 3) % OPS_REPLAYS];
        if (op % 8 < 2) {
            ops_rewrite(o);
        } else if (op % 8 < 6 && *slot < o->n) {
            size_t resume = o->at;
            o->at = *slot;
            ops_record(o, sink, db);
            o->at = resume;
        } else {
            *slot = o->at;
            ops_record(o, sink, db);
        }
    }
}

#endif
