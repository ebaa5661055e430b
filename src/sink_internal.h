/* The sink's layout, shared by sink.c and records.c. */
#ifndef FDX_SINK_INTERNAL_H
#define FDX_SINK_INTERNAL_H

#include "agg.h"
#include "buf.h"
#include "fdx.h"
#include "keymap.h"

struct fdx_sink {
    fdx_agg *misses;
    fdx_agg *dispatches;
    /* A record's raw fields -> its cell, so that a cell already seen costs a
     * hash lookup instead of validating and encoding the record again. */
    fdx_keymap miss_keys;
    fdx_keymap dispatch_keys;
    fdx_buf raw;
    /* Per dispatch cell, the raw fields of the candidates it holds, so that a
     * record repeating them costs no validation or encoding either. */
    fdx_buf *raw_cands;
    size_t cap_raw_cands;
    fdx_buf raw_incoming;
    fdx_buf dtypes; /* scratch for recording */
    fdx_buf cands;
    uint64_t dropped;
    char errmsg[512];
};

typedef struct fdx_sorted_cell {
    fdx_cell cell;
    uint64_t count;
    fdx_str cands;
} fdx_sorted_cell;

/* The cells of agg in export order (malloc'd array; views into agg). */
int fdx_sink_sorted(const fdx_agg *agg, fdx_sorted_cell **out);

#endif
