/*
 * The final merge of spilled runs on a thread of its own. Reading and
 * merging the runs is a third of writing a large spilled transaction; here
 * it overlaps the caller's writing of the cells it has already been handed.
 */
#ifndef FDX_CELL_SPILL_PIPE_H
#define FDX_CELL_SPILL_PIPE_H

#include "cell/spill.h"

/* fdx_spill_merge, with the same cells in the same order, and the same
 * status and error when it fails (though fn may by then have seen fewer of
 * the cells before the failure: the block being filled is dropped). fn runs
 * on the calling thread; sp and newest are read on the merging thread until
 * this returns. Merges on the calling thread when no thread can be started. */
int fdx_spill_merge_piped(fdx_spill *sp, const fdx_agg *newest, fdx_spill_fn fn, void *ctx,
                          char *err, size_t size);

#endif
