/* The sink's layout, shared by sink.c and records.c. */
#ifndef FDX_SINK_INTERNAL_H
#define FDX_SINK_INTERNAL_H

#include "agg.h"
#include "buf.h"
#include "fdx.h"
#include "keymap.h"

/* A direct-mapped cache from a record's string pointers to its cell: runtimes
 * pass the same static or interned strings again and again, and checking
 * that they still say what the cell's key says is cheaper than hashing them. */
#define FDX_PTR_SLOTS 16384

typedef struct fdx_ptr_slot {
    uint64_t tag;  /* hash of the record's pointers and numbers */
    uint32_t cell; /* cell index + 1; 0: empty */
} fdx_ptr_slot;

/* Where each cell's raw key sits in its keymap's key arena. */
typedef struct fdx_raw_loc {
    size_t off;
    size_t len;
} fdx_raw_loc;

typedef struct fdx_sink_kind {
    fdx_ptr_slot ptrs[FDX_PTR_SLOTS];
    fdx_raw_loc *raw_at;
    size_t cap_raw_at;
} fdx_sink_kind;

struct fdx_sink {
    fdx_agg *misses;
    fdx_agg *dispatches;
    /* A record's raw fields -> its cell, so that a cell already seen costs a
     * hash lookup instead of validating and encoding the record again. */
    fdx_keymap miss_keys;
    fdx_keymap dispatch_keys;
    fdx_sink_kind miss_fast;
    fdx_sink_kind dispatch_fast;
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
