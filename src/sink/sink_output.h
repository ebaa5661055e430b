/* Sorting a sink's cells into export order (sink_output.c), for the feeds
 * it writes and for the records it hands back. */
#ifndef FDX_SINK_OUTPUT_H
#define FDX_SINK_OUTPUT_H

#include "cell/agg.h"
#include "fdx.h"

typedef struct fdx_sorted_cell {
    fdx_cell cell;
    uint64_t count;
    fdx_str cands;
} fdx_sorted_cell;

/* The cells of agg in export order (malloc'd array; views into agg). */
int fdx_sink_sorted(const fdx_agg *agg, fdx_sorted_cell **out);

#endif
