/*
 * Open-addressing hash map from packed cell keys to counts and candidates.
 * Keys and candidates lists live in one arena addressed by offset
 * (cell/agg_arena.c), so growing it never leaves a dangling pointer; the
 * index holds cell numbers plus one (0 = empty slot). Under a mark, a list
 * written over has its old bytes kept in the undo log's own buffer, dropped
 * when the mark is kept.
 *
 * This is not common/keymap.c on purpose: a probe here finds the hash, the
 * key's place, the count and the candidates in one struct, one cache line.
 * Built on the keymap (its entries numbered as the cells, counts and
 * candidates beside them), a hit touches one line more, and fdx-ingest on
 * bench/gen_feed.py's 40-run feed took 4-6% more CPU time (medians of 9-10
 * alternating runs against this version, three sittings).
 */
#include "cell/agg.h"

#include <stdlib.h>
#include <string.h>

#include "cell/agg_arena.h"
#include "cell/agg_internal.h"
#include "common/buf.h"
#include "common/keymap.h" /* fdx_hash_bytes */

fdx_agg *fdx_agg_new(void)
{
    return calloc(1, sizeof(fdx_agg));
}

static void drop_undo(fdx_agg *agg)
{
    agg->n_undo = 0;
    fdx_buf_clear(&agg->undo_lists);
    agg->marked = 0;
}

/* Written pages beyond what the arrays still hold are no longer in memory. */
static void clamp_warm(fdx_agg *agg)
{
    if (agg->warm_cells > agg->cap_cells)
        agg->warm_cells = agg->cap_cells;
    if (agg->warm_keys > agg->keys.cap)
        agg->warm_keys = agg->keys.cap;
}

void fdx_agg_clear(fdx_agg *agg)
{
    drop_undo(agg);
    fdx_agg_note_warm(agg);
    agg->n_cells = 0;
    if (agg->index)
        memset(agg->index, 0, agg->index_cap * sizeof *agg->index);
    fdx_buf_clear(&agg->keys);
    agg->outgrown = agg->outgrown_low = agg->outgrown_at_mark = 0;
    agg->mark_cells = agg->mark_keys = 0;
}

void fdx_agg_release(fdx_agg *agg)
{
    fdx_agg_clear(agg);
    free(agg->cells);
    free(agg->undo);
    free(agg->index);
    fdx_buf_free(&agg->keys);
    fdx_buf_free(&agg->undo_lists);
    fdx_buf_free(&agg->scratch);
    memset(agg, 0, sizeof *agg);
}

void fdx_agg_free(fdx_agg *agg)
{
    if (!agg)
        return;
    fdx_agg_release(agg);
    free(agg);
}

size_t fdx_agg_cells(const fdx_agg *agg)
{
    return agg->n_cells;
}

size_t fdx_agg_bytes(const fdx_agg *agg)
{
    return agg->n_cells * sizeof *agg->cells + agg->index_cap * sizeof *agg->index + agg->keys.len +
           agg->n_undo * sizeof *agg->undo + agg->undo_lists.len;
}

size_t fdx_agg_resident(const fdx_agg *agg)
{
    size_t cells = agg->warm_cells > agg->n_cells ? agg->warm_cells - agg->n_cells : 0;
    size_t keys = agg->warm_keys > agg->keys.len ? agg->warm_keys - agg->keys.len : 0;
    return fdx_agg_bytes(agg) + cells * sizeof *agg->cells + keys;
}

size_t fdx_agg_allocated(const fdx_agg *agg)
{
    return agg->cap_cells * sizeof *agg->cells + agg->index_cap * sizeof *agg->index +
           agg->keys.cap + agg->scratch.cap + agg->cap_undo * sizeof *agg->undo +
           agg->undo_lists.cap;
}

/* Indexes every cell in a zeroed index of cap slots. */
static void fill_index(const fdx_agg *agg, uint32_t *index, size_t cap)
{
    for (size_t i = 0; i < agg->n_cells; i++) {
        size_t slot = agg->cells[i].hash & (cap - 1);
        while (index[slot])
            slot = (slot + 1) & (cap - 1);
        index[slot] = (uint32_t)(i + 1);
    }
}

static int rehash(fdx_agg *agg, size_t cap)
{
    uint32_t *index = calloc(cap, sizeof *index);
    if (!index)
        return FDX_ENOMEM;
    fill_index(agg, index, cap);
    free(agg->index);
    agg->index = index;
    agg->index_cap = cap;
    return FDX_OK;
}

/* The smallest index at most half full with n cells. */
static size_t index_size(size_t n)
{
    size_t cap = 512;
    while (cap < n * 2)
        cap *= 2;
    return cap;
}

/* Gives back the undo log, the packing buffer (as long as the longest key
 * recorded) and what the arrays hold beyond room for cells cells and
 * key_bytes key bytes. */
static void trim_to(fdx_agg *agg, size_t cells, size_t key_bytes)
{
    free(agg->undo);
    agg->undo = NULL;
    agg->cap_undo = 0;
    fdx_buf_free(&agg->undo_lists);
    fdx_buf_free(&agg->scratch);
    fdx_shrink(&agg->cells, &agg->cap_cells, cells, sizeof *agg->cells);
    fdx_shrink(&agg->keys.data, &agg->keys.cap, key_bytes + 1, 1); /* kept if realloc fails */
    clamp_warm(agg);
    size_t cap = index_size(cells + 1);
    if (agg->index && cap < agg->index_cap)
        (void)rehash(agg, cap); /* without memory for a smaller one, the old one serves */
}

void fdx_agg_shrink(fdx_agg *agg)
{
    if (!agg->marked)
        trim_to(agg, agg->n_cells, agg->keys.len);
}

void fdx_agg_recycle(fdx_agg *agg)
{
    fdx_agg_clear(agg);
    trim_to(agg, agg->run_cells, agg->run_keys);
    agg->run_cells = agg->run_keys = 0;
}

/* Room for one more cell: the cell array and an index at most half full. */
static int make_room(fdx_agg *agg)
{
    if (agg->n_cells >= UINT32_MAX - 1)
        return FDX_ENOMEM;
    if (fdx_grow(&agg->cells, &agg->cap_cells, agg->n_cells + 1, sizeof *agg->cells))
        return FDX_ENOMEM;
    if ((agg->n_cells + 1) * 2 > agg->index_cap)
        return rehash(agg, index_size(agg->n_cells + 1));
    return FDX_OK;
}

/* ---- changes, and undoing them ---- */

/* The undo entry of a cell whose list is still the one it held at the
 * mark, in the room it had then, with its bytes not yet kept; or NULL. */
static agg_undo *list_at_mark(fdx_agg *agg, const agg_cell *c)
{
    if (!agg->marked || !c->cands_len || (size_t)(c - agg->cells) >= agg->mark_cells ||
        c->mark != agg->mark)
        return NULL;
    agg_undo *u = &agg->undo[c->undo_at];
    return u->saved || c->cands_off != u->cands_off ? NULL : u;
}

/* Keeps the bytes of the list the cell held at the mark before they are
 * written over (a list that moves to new room leaves them where they are). */
static int keep_list_at_mark(fdx_agg *agg, agg_undo *u)
{
    size_t at = agg->undo_lists.len;
    fdx_buf_append(&agg->undo_lists, agg->keys.data + u->cands_off, u->cands_len);
    if (agg->undo_lists.oom) {
        agg->undo_lists.oom = 0;
        agg->undo_lists.len = at;
        return FDX_ENOMEM;
    }
    u->saved = at + 1;
    return FDX_OK;
}

static int set_cands(fdx_agg *agg, agg_cell *c, fdx_str cands)
{
    if (fdx_cands_empty(cands))
        return FDX_OK;
    if (cands.n > UINT32_MAX)
        return FDX_ENOMEM;
    if (cands.n <= c->cands_cap) {
        agg_undo *u = list_at_mark(agg, c);
        if (u && keep_list_at_mark(agg, u) != FDX_OK)
            return FDX_ENOMEM;
    } else {
        size_t room = fdx_agg_list_room(cands.n);
        if (fdx_agg_arena_reserve(agg, room, &cands.p) != FDX_OK)
            return FDX_ENOMEM;
        if (c->cands_len) { /* its room is left behind: under a mark, maybe below it */
            agg->outgrown += c->cands_cap;
            agg->outgrown_low += agg->marked && c->cands_off < agg->mark_keys ? c->cands_cap : 0;
        }
        c->cands_off = fdx_agg_arena_take(agg, room);
        c->cands_cap = (uint32_t)room;
    }
    memmove(agg->keys.data + c->cands_off, cands.p, cands.n);
    c->cands_len = (uint32_t)cands.n;
    return FDX_OK;
}

/* Logs what cell i holds before its first change under the mark. */
static int log_change(fdx_agg *agg, size_t i)
{
    agg_cell *c = &agg->cells[i];
    if (!agg->marked || i >= agg->mark_cells || c->mark == agg->mark)
        return FDX_OK;
    if (fdx_grow(&agg->undo, &agg->cap_undo, agg->n_undo + 1, sizeof *agg->undo))
        return FDX_ENOMEM;
    agg_undo u = {c->count, c->cands_off, 0, (uint32_t)i, c->cands_len, c->cands_cap};
    agg->undo[agg->n_undo] = u;
    c->undo_at = (uint32_t)agg->n_undo++;
    c->mark = agg->mark;
    return FDX_OK;
}

static int change(fdx_agg *agg, size_t i, uint64_t count, fdx_str cands)
{
    if (log_change(agg, i) != FDX_OK || set_cands(agg, &agg->cells[i], cands) != FDX_OK)
        return FDX_ENOMEM;
    agg->cells[i].count = fdx_count_add(agg->cells[i].count, count);
    return FDX_OK;
}

void fdx_agg_mark(fdx_agg *agg)
{
    drop_undo(agg);
    if (++agg->mark == 0) { /* numbers wrapped: no cell may look logged */
        for (size_t i = 0; i < agg->n_cells; i++)
            agg->cells[i].mark = 0;
        agg->mark = 1;
    }
    agg->marked = 1;
    agg->mark_cells = agg->n_cells;
    agg->mark_keys = agg->keys.len;
    agg->outgrown_at_mark = agg->outgrown_low = agg->outgrown;
}

void fdx_agg_keep(fdx_agg *agg)
{
    drop_undo(agg);
}

void fdx_agg_undo(fdx_agg *agg)
{
    if (!agg->marked)
        return;
    for (size_t k = agg->n_undo; k-- > 0;) {
        agg_undo *u = &agg->undo[k];
        agg_cell *c = &agg->cells[u->cell];
        c->count = u->count; /* and its list: any room it got since is cut off below */
        c->cands_off = u->cands_off;
        c->cands_len = u->cands_len;
        c->cands_cap = u->cands_cap;
        if (u->saved)
            memcpy(agg->keys.data + c->cands_off, agg->undo_lists.data + u->saved - 1,
                   c->cands_len);
    }
    fdx_buf_clear(&agg->undo_lists);
    agg->outgrown = agg->outgrown_at_mark; /* rooms outgrown since are cut off, or hold lists */
    fdx_agg_note_warm(agg);
    agg->n_cells = agg->mark_cells;
    agg->keys.len = agg->mark_keys;
    agg->n_undo = 0;
    agg->marked = 0;
    if (agg->index) { /* the index forgets the cells added since the mark */
        memset(agg->index, 0, agg->index_cap * sizeof *agg->index);
        fill_index(agg, agg->index, agg->index_cap);
    }
}

/* ---- adding ---- */

static int insert(fdx_agg *agg, size_t slot, uint64_t h, fdx_str key, uint64_t count, fdx_str cands)
{
    int listed = !fdx_cands_empty(cands);
    if (key.n > UINT32_MAX || (listed && cands.n > UINT32_MAX))
        return FDX_ENOMEM;
    /* Room for both first: once the key is written and the cell counted,
     * set_cands does not fail, and moves nothing cands may point into. */
    size_t room = listed ? fdx_agg_list_room(cands.n) : 0;
    if (fdx_agg_arena_reserve(agg, key.n + room, &cands.p) != FDX_OK)
        return FDX_ENOMEM;
    agg_cell *c = &agg->cells[agg->n_cells];
    memset(c, 0, sizeof *c);
    c->hash = h;
    c->key_off = fdx_agg_arena_take(agg, key.n);
    memcpy(agg->keys.data + c->key_off, key.p, key.n);
    c->key_len = (uint32_t)key.n;
    c->mark = agg->mark;
    c->count = fdx_count_add(0, count);
    agg->index[slot] = (uint32_t)(++agg->n_cells);
    (void)set_cands(agg, c, cands);
    return FDX_OK;
}

static int add_hashed(fdx_agg *agg, fdx_str packed, uint64_t h, uint64_t count, fdx_str cands,
                      size_t *index)
{
    if (make_room(agg) != FDX_OK)
        return FDX_ENOMEM;
    size_t mask = agg->index_cap - 1;
    for (size_t slot = h & mask;; slot = (slot + 1) & mask) {
        uint32_t at = agg->index[slot];
        if (!at) {
            if (index)
                *index = agg->n_cells;
            return insert(agg, slot, h, packed, count, cands);
        }
        const agg_cell *c = &agg->cells[at - 1];
        if (c->hash == h && c->key_len == packed.n &&
            memcmp(agg->keys.data + c->key_off, packed.p, packed.n) == 0) {
            if (index)
                *index = at - 1;
            return change(agg, at - 1, count, cands);
        }
    }
}

int fdx_agg_add_at(fdx_agg *agg, size_t i, uint64_t count, fdx_str cands)
{
    return change(agg, i, count, cands);
}

int fdx_agg_add(fdx_agg *agg, const fdx_cell *cell, uint64_t count, fdx_str cands)
{
    return fdx_agg_add_index(agg, cell, count, cands, NULL);
}

int fdx_agg_add_index(fdx_agg *agg, const fdx_cell *cell, uint64_t count, fdx_str cands,
                      size_t *index)
{
    fdx_cell_pack(cell, &agg->scratch);
    if (agg->scratch.oom) {
        agg->scratch.oom = 0;
        return FDX_ENOMEM;
    }
    fdx_str key = {agg->scratch.data, agg->scratch.len};
    return fdx_agg_add_packed(agg, key, count, cands, index);
}

int fdx_agg_add_packed(fdx_agg *agg, fdx_str packed, uint64_t count, fdx_str cands, size_t *index)
{
    return add_hashed(agg, packed, fdx_hash_bytes(packed.p, packed.n), count, cands, index);
}

int fdx_agg_add_hashed(fdx_agg *agg, fdx_str packed, uint64_t hash, uint64_t count, fdx_str cands)
{
    return add_hashed(agg, packed, hash, count, cands, NULL);
}

int fdx_agg_merge(fdx_agg *dst, const fdx_agg *src)
{
    for (size_t i = 0; i < src->n_cells; i++) {
        const agg_cell *c = &src->cells[i];
        fdx_str key = {src->keys.data + c->key_off, c->key_len};
        fdx_str cands = {c->cands_len ? src->keys.data + c->cands_off : "[]",
                         c->cands_len ? c->cands_len : 2};
        if (add_hashed(dst, key, c->hash, c->count, cands, NULL) != FDX_OK)
            return FDX_ENOMEM;
    }
    return FDX_OK;
}

/* ---- reading ---- */

void fdx_agg_get_packed(const fdx_agg *agg, size_t i, fdx_str *key, uint64_t *count, fdx_str *cands)
{
    const agg_cell *c = &agg->cells[i];
    key->p = agg->keys.data + c->key_off;
    key->n = c->key_len;
    *count = c->count;
    cands->p = c->cands_len ? agg->keys.data + c->cands_off : "[]";
    cands->n = c->cands_len ? c->cands_len : 2;
}

/* Cells eight steps ahead, their keys four: a key's place is known only once
 * its cell is read. */
enum { CELL_AHEAD = 8, KEY_AHEAD = 4 };

void fdx_agg_prefetch(const fdx_agg *agg, const uint32_t *order, size_t i, size_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    if (i + CELL_AHEAD < n)
        __builtin_prefetch(&agg->cells[order[i + CELL_AHEAD]]);
    if (i + KEY_AHEAD < n)
        __builtin_prefetch(agg->keys.data + agg->cells[order[i + KEY_AHEAD]].key_off);
#else
    (void)agg, (void)order, (void)i, (void)n;
#endif
}

void fdx_agg_get(const fdx_agg *agg, size_t i, fdx_cell *cell, uint64_t *count, fdx_str *cands)
{
    fdx_str key;
    fdx_agg_get_packed(agg, i, &key, count, cands);
    fdx_cell_unpack(cell, key.p, key.n);
}
