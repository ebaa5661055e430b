/*
 * The arena an aggregate keeps its keys and candidates lists in, addressed
 * by offset. Lists share the keys' arena rather than each having a block of
 * the heap: an ingest's misses fill the budget with keys and its dispatches
 * with lists, and a heap that held a budget's lists kept those pages through
 * the next budget of keys (the heap does not shrink), so a flush-shaped feed
 * past the budget peaked with both. In the arena, what a run does not use is
 * given back with the rest (fdx_agg_recycle).
 *
 * A list outgrowing its room leaves it behind, counted in fdx_agg_bytes (the
 * budget sees it), until the arena is squeezed: once outgrown rooms are a
 * quarter of it, the live keys and lists are moved down over them, so lists
 * that keep growing (a sink's, as implementations are added) cost at most a
 * third more than their rooms, where realloc's blocks cost about what the
 * lists did.
 */
#include "cell/agg_arena.h"

#include <stdlib.h>
#include <string.h>

#include "cell/agg_internal.h"

/* Outgrown rooms below this are not worth a squeeze, however small the arena. */
#define SQUEEZE_MIN 65536

size_t fdx_agg_list_room(size_t n)
{
    return n + n / 8 <= UINT32_MAX ? n + n / 8 : n;
}

/* A list's room, for sorting rooms by where they are. */
typedef struct list_at {
    size_t off;
    uint32_t cell;
} list_at;

static int by_offset(const void *a, const void *b)
{
    size_t x = ((const list_at *)a)->off, y = ((const list_at *)b)->off;
    return (x > y) - (x < y);
}

/* Where a squeeze may move rooms from: under a mark, only what was added
 * since, since an undo needs the arena below it as it was (the cells added
 * since, whose keys are all there, come after mark_cells). */
static size_t squeeze_from(const fdx_agg *agg)
{
    return agg->marked ? agg->mark_keys : 0;
}

/* Moves the keys and lists from squeeze_from on down over the rooms lists
 * outgrew, in the order they are in the arena, so nothing is moved over
 * before it is read. Keys are in the cells' order already; lists are sorted
 * first (16 bytes a list, for the time of the squeeze). Without memory for
 * the sort, the arena stays as it is. */
static void squeeze(fdx_agg *agg)
{
    size_t from = squeeze_from(agg), m = 0, n = agg->n_cells;
    for (size_t i = 0; i < n; i++)
        m += agg->cells[i].cands_len && agg->cells[i].cands_off >= from;
    list_at *lists = malloc((m ? m : 1) * sizeof *lists);
    if (!lists)
        return;
    for (size_t i = 0, k = 0; i < n; i++)
        if (agg->cells[i].cands_len && agg->cells[i].cands_off >= from)
            lists[k++] = (list_at){agg->cells[i].cands_off, (uint32_t)i};
    qsort(lists, m, sizeof *lists, by_offset);
    fdx_agg_note_warm(agg); /* the pages written stay in memory */
    char *data = agg->keys.data;
    size_t to = from;
    for (size_t i = agg->marked ? agg->mark_cells : 0, k = 0; i < n || k < m;) {
        if (k == m || (i < n && agg->cells[i].key_off < lists[k].off)) {
            agg_cell *c = &agg->cells[i++];
            memmove(data + to, data + c->key_off, c->key_len);
            c->key_off = to;
            to += c->key_len;
        } else {
            agg_cell *c = &agg->cells[lists[k++].cell];
            memmove(data + to, data + c->cands_off, c->cands_len);
            c->cands_off = to;
            to += c->cands_cap;
        }
    }
    free(lists);
    agg->keys.len = to;
    agg->outgrown = agg->marked ? agg->outgrown_low : 0;
}

int fdx_agg_arena_reserve(fdx_agg *agg, size_t extra, const char **src)
{
    uintptr_t from = (uintptr_t)*src, base = (uintptr_t)agg->keys.data;
    int inside = agg->keys.data && from >= base && from < base + agg->keys.len;
    size_t dead = agg->outgrown - (agg->marked ? agg->outgrown_low : 0);
    if (!inside && dead >= SQUEEZE_MIN && dead >= (agg->keys.len - squeeze_from(agg)) / 4)
        squeeze(agg);
    if (fdx_buf_reserve(&agg->keys, extra) != 0) {
        agg->keys.oom = 0;
        return FDX_ENOMEM;
    }
    if (inside)
        *src = agg->keys.data + (from - base);
    return FDX_OK;
}
