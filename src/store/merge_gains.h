/*
 * What a merge brings, for the SQLite target (merge_gains.c).
 */
#ifndef FDX_STORE_MERGE_GAINS_H
#define FDX_STORE_MERGE_GAINS_H

#include <stdint.h>

#include "store/store_internal.h"

typedef struct fdx_merge_gains {
    uint64_t added;  /* staged cells that took a new id */
    int64_t max_day; /* the latest day of temp.merge_delta; INT64_MIN: none */
} fdx_merge_gains;

/* Steps 5 to 7 of a merge's apply, from temp.merge_src and temp.merge_tgt,
 * as sql/merge_apply_delta.sql, merge_apply_gain.sql and merge_apply_number.sql
 * define them: fills temp.merge_delta, and sets each staged cell's gain and,
 * when new and gaining, its target (next_id upward, in staged order). coarse
 * is the later of the two stores' rolled_before. */
int fdx_merge_gains_apply(fdx_store *dst, int64_t coarse, int64_t next_id, fdx_merge_gains *out);

#endif
