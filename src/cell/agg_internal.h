/*
 * The aggregate's layout, shared by agg.c (the map, its marks and undo) and
 * agg_arena.c (the arena its keys and lists live in). Declares no function.
 */
#ifndef FDX_AGG_INTERNAL_H
#define FDX_AGG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cell/agg.h"
#include "common/buf.h"

typedef struct agg_cell {
    uint64_t hash;
    uint64_t count;
    size_t cands_off; /* in keys, when cands_len is not 0 */
    size_t key_off;
    uint32_t key_len;
    uint32_t cands_len;
    uint32_t cands_cap;
    uint32_t mark;    /* the mark under which it was added or first changed */
    uint32_t undo_at; /* its undo entry, when it has one under the current mark */
} agg_cell;

/* What a cell held before the mark's first change to it. */
typedef struct agg_undo {
    uint64_t count;
    size_t cands_off;
    size_t saved; /* 1 + where undo_lists holds the list's bytes, once written over; or 0 */
    uint32_t cell;
    uint32_t cands_len;
    uint32_t cands_cap;
} agg_undo;

struct fdx_agg {
    agg_cell *cells;
    size_t n_cells;
    size_t cap_cells;
    uint32_t *index;  /* cell number + 1, or 0 */
    size_t index_cap; /* power of two */
    fdx_buf keys;     /* the cells' packed keys and candidates lists */
    fdx_buf scratch;
    int marked;
    uint32_t mark;     /* numbers marks, so a cell knows whether it is logged */
    size_t mark_cells; /* n_cells at the mark */
    size_t mark_keys;  /* keys.len at the mark */
    agg_undo *undo;
    size_t n_undo;
    size_t cap_undo;
    fdx_buf undo_lists;  /* lists held at the mark, since written over */
    size_t outgrown;     /* bytes of rooms lists have outgrown (an estimate) */
    size_t outgrown_low; /* of those, under a mark, in rooms below mark_keys */
    size_t outgrown_at_mark;
    size_t warm_cells; /* the most cells and key bytes its arrays have held */
    size_t warm_keys;  /* since they were last given back: pages in memory */
    size_t run_cells;  /* the same since the last fdx_agg_recycle */
    size_t run_keys;
};

/* Remembers how far the arrays have been written, before cells are
 * forgotten or the arena is squeezed: those pages stay in memory. */
static inline void fdx_agg_note_warm(fdx_agg *agg)
{
    if (agg->n_cells > agg->run_cells)
        agg->run_cells = agg->n_cells;
    if (agg->keys.len > agg->run_keys)
        agg->run_keys = agg->keys.len;
    if (agg->run_cells > agg->warm_cells)
        agg->warm_cells = agg->run_cells;
    if (agg->run_keys > agg->warm_keys)
        agg->warm_keys = agg->run_keys;
}

#endif
