/*
 * In-memory aggregation of cells: the reference sink's hash map. Ingest and
 * the store's record calls aggregate here and write each distinct cell to
 * SQLite once, so the cost of a record is a hash lookup, not an upsert.
 *
 * Cells keep arrival order. Recording into a cell already seen allocates
 * nothing unless its candidates list outgrows the one it had.
 */
#ifndef FDX_AGG_H
#define FDX_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "cell/cell.h"

/* Counts saturate here (the largest value a store can hold). */
#define FDX_COUNT_MAX ((uint64_t)INT64_MAX)

typedef struct fdx_agg fdx_agg;

fdx_agg *fdx_agg_new(void);
void fdx_agg_free(fdx_agg *agg);
/* Forgets every cell, keeping allocations for reuse. */
void fdx_agg_clear(fdx_agg *agg);
/* Forgets every cell and gives its memory back. */
void fdx_agg_release(fdx_agg *agg);

/*
 * Adds max(count, 1) to the cell (saturating at FDX_COUNT_MAX) and, when cands
 * is not empty, replaces its candidates. Returns FDX_OK or FDX_ENOMEM (the
 * aggregate is then unchanged).
 */
int fdx_agg_add(fdx_agg *agg, const fdx_cell *cell, uint64_t count, fdx_str cands);
/* The same, telling which cell (by arrival order) the record went to. */
int fdx_agg_add_index(fdx_agg *agg, const fdx_cell *cell, uint64_t count, fdx_str cands,
                      size_t *index);
/* The same for a cell already packed by fdx_cell_pack (the key may not point
 * into this aggregate). */
int fdx_agg_add_packed(fdx_agg *agg, fdx_str packed, uint64_t count, fdx_str cands, size_t *index);
/* The same with the packed cell's fdx_hash_bytes already known. */
int fdx_agg_add_hashed(fdx_agg *agg, fdx_str packed, uint64_t hash, uint64_t count, fdx_str cands);
/* Adds every cell of src (which is newer) to dst, in src's arrival order. */
int fdx_agg_merge(fdx_agg *dst, const fdx_agg *src);
/* Adds to the i-th cell, as fdx_agg_add would. */
int fdx_agg_add_at(fdx_agg *agg, size_t i, uint64_t count, fdx_str cands);

size_t fdx_agg_cells(const fdx_agg *agg);
/* The memory the cells hold (keys, candidates with malloc's overhead, index,
 * undo log), in bytes. */
size_t fdx_agg_bytes(const fdx_agg *agg);
/* The same counting the arrays' pages that earlier cells wrote and no cell
 * fills now (they stay in memory until the arrays shrink). */
size_t fdx_agg_resident(const fdx_agg *agg);
/* The same counting what its arrays have room for, used or not (what the
 * tests check a shrink against). */
size_t fdx_agg_allocated(const fdx_agg *agg);
/* Gives back the memory its cells do not need (none while it is marked). */
void fdx_agg_shrink(fdx_agg *agg);
/* Forgets every cell (and the mark), keeping of each array what the cells
 * since the last recycle used at most and giving the rest back: the next run
 * of cells reuses those pages instead of faulting fresh ones in. */
void fdx_agg_recycle(fdx_agg *agg);

/*
 * A mark lets the changes made after it be undone, as a savepoint does: an
 * ingest that fails takes its cells back out of the aggregate it shares
 * with the ingests before it. fdx_agg_mark sets it (forgetting an earlier
 * one); until fdx_agg_keep or fdx_agg_undo, each cell that was there before
 * the mark keeps what it held on its first change (a count, and a list only
 * when the list is replaced). fdx_agg_undo restores that and drops the cells
 * added since; fdx_agg_keep forgets the mark. Clearing forgets it too.
 */
void fdx_agg_mark(fdx_agg *agg);
void fdx_agg_keep(fdx_agg *agg);
void fdx_agg_undo(fdx_agg *agg);

/* The i-th cell in arrival order; views stay valid until the next add or clear. */
void fdx_agg_get(const fdx_agg *agg, size_t i, fdx_cell *cell, uint64_t *count, fdx_str *cands);
/* The same cell's packed key (fdx_cell_pack), count and candidates. */
void fdx_agg_get_packed(const fdx_agg *agg, size_t i, fdx_str *key, uint64_t *count,
                        fdx_str *cands);

/* Readies the memory of the cells a walk in `order` (fdx_agg_key_order)
 * reaches a few steps after its i-th of n: in key order each cell and its
 * key sit at places of their own in memory, and a walk that waits for each
 * in turn spends more time waiting than copying. */
void fdx_agg_prefetch(const fdx_agg *agg, const uint32_t *order, size_t i, size_t n);

/* Saturating count addition shared by every place that merges counts. */
static inline uint64_t fdx_count_add(uint64_t total, uint64_t count)
{
    if (count == 0)
        count = 1;
    if (count > FDX_COUNT_MAX)
        count = FDX_COUNT_MAX;
    return total > FDX_COUNT_MAX - count ? FDX_COUNT_MAX : total + count;
}

#endif
