/* The sink's layout, shared by sink.c and records.c. */
#ifndef FDX_SINK_INTERNAL_H
#define FDX_SINK_INTERNAL_H

#include "agg.h"
#include "buf.h"
#include "fdx.h"

struct fdx_sink {
    fdx_agg *misses;
    fdx_agg *dispatches;
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
