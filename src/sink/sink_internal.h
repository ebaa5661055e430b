/* The sink's layout, shared by sink.c, records.c and sink_output.c. */
#ifndef FDX_SINK_INTERNAL_H
#define FDX_SINK_INTERNAL_H

#include "cell/agg.h"
#include "common/buf.h"
#include "common/message.h"
#include "fdx.h"
#include "sink/sink_cache.h"

struct fdx_sink {
    fdx_agg *misses;
    fdx_agg *dispatches;
    fdx_sink_cache miss_cache;
    fdx_sink_cache dispatch_cache;
    /* Per dispatch cell, the raw fields of the candidates it holds, so that a
     * record repeating them costs no validation or encoding either. */
    fdx_buf *raw_cands;
    size_t cap_raw_cands;
    fdx_buf dtypes; /* scratch for recording */
    fdx_buf cands;
    uint64_t dropped;
    uint32_t epoch; /* changes when the cells are emptied; see fdx_sink_add */
    char errmsg[FDX_MESSAGE_SIZE];
};

/* Moves the counts the record caches hold into the cells: every reader of
 * the cells calls it first. */
void fdx_sink_settle(fdx_sink *s);
/* Forgets every cell (after a drain); handles given out so far go stale. */
void fdx_sink_empty(fdx_sink *s);

#endif
