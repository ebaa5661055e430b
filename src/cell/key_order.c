/*
 * An aggregate's cells in key order, for writing and spilling. Feeds hold
 * few distinct tokens (structure keys, wanted keys) and kernel sources for
 * many cells, so comparing them as strings decided little and cost most of
 * a sort: here each distinct token and source gets its rank in byte order
 * first, and a comparison reads two integers (kind, keyed and both ranks
 * in one; the revision hash) before it ever unpacks a key.
 *
 * A spill sorts a whole budget of cells while the threads that decode
 * lines wait for the reader, which is sorting: from SHARED_SORT_MIN cells
 * on, half of them are numbered and sorted on a thread of their own, the
 * two halves' strings ranked together and their sorted runs merged.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cell/key_order.h"
#include "common/keymap.h"

#define SHARED_SORT_MIN 8192

/* The distinct strings of one field, numbered in order of first sight, and
 * each one's rank in byte order. The table holds numbers (and a part of each
 * hash) only; the strings stay in the aggregate's keys. When every cell has
 * a token of its own, a copy of them added the budget's key bytes once more
 * to a spill's peak, and a general map's offsets, lengths and full hashes
 * half as much again. */
typedef struct slot {
    uint32_t hash;
    uint32_t number; /* + 1; 0: empty */
} slot;

typedef struct ranks {
    slot *slots;
    size_t cap;     /* power of two; at most three quarters full */
    fdx_str *strs;  /* number -> string */
    uint32_t *rank; /* number -> rank */
    size_t n, strs_cap;
} ranks;

/* The table is needed only while cells are numbered, the strings only
 * until they are ranked: each goes as soon as it can, since what a spill's
 * sort takes on top of a full budget is the peak of the process. */
static void ranks_drop_table(ranks *r)
{
    free(r->slots);
    r->slots = NULL;
    r->cap = 0;
}

static void ranks_drop_strs(ranks *r)
{
    free(r->strs);
    r->strs = NULL;
    r->strs_cap = 0;
}

static void ranks_free(ranks *r)
{
    ranks_drop_table(r);
    ranks_drop_strs(r);
    free(r->rank);
}

static int ranks_grow(ranks *r)
{
    size_t cap = r->cap ? r->cap * 2 : 1024;
    slot *s = calloc(cap, sizeof *s);
    if (!s)
        return FDX_ENOMEM;
    for (size_t i = 0; i < r->cap; i++) {
        if (!r->slots[i].number)
            continue;
        size_t j = r->slots[i].hash & (cap - 1);
        while (s[j].number)
            j = (j + 1) & (cap - 1);
        s[j] = r->slots[i];
    }
    free(r->slots);
    r->slots = s;
    r->cap = cap;
    return FDX_OK;
}

/* The string's number, numbering it when new; -1 when memory ran out. */
static int64_t number_of(ranks *r, fdx_str s)
{
    if (r->n >= INT32_MAX || ((r->n + 1) * 4 > r->cap * 3 && ranks_grow(r) != FDX_OK))
        return -1;
    uint32_t h = (uint32_t)fdx_hash_bytes(s.p, s.n);
    size_t mask = r->cap - 1, i = h & mask;
    for (; r->slots[i].number; i = (i + 1) & mask) {
        const fdx_str *t = &r->strs[r->slots[i].number - 1];
        if (r->slots[i].hash == h && fdx_str_compare(*t, s) == 0)
            return r->slots[i].number - 1;
    }
    if (fdx_grow(&r->strs, &r->strs_cap, r->n + 1, sizeof *r->strs))
        return -1;
    r->strs[r->n] = s;
    r->slots[i] = (slot){h, (uint32_t)r->n + 1};
    return (int64_t)r->n++;
}

/* A string of one of two tables as one word: the table in the top bit. */
#define TABLE_SHIFT 31
#define NUMBER_MASK ((uint32_t)INT32_MAX)

static int by_bytes(const void *a, const void *b, void *tables)
{
    ranks *const *r = tables;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return fdx_str_compare(r[x >> TABLE_SHIFT]->strs[x & NUMBER_MASK],
                           r[y >> TABLE_SHIFT]->strs[y & NUMBER_MASK]);
}

/* Ranks the strings of k (1 or 2) tables of one field together: a string
 * in both gets the same rank in each. */
static int rank_together(ranks *const *r, size_t k)
{
    size_t total = 0;
    for (size_t t = 0; t < k; t++)
        total += r[t]->n;
    if (total >= INT32_MAX) /* ranks take 31 bits of an entry */
        return FDX_ENOMEM;
    uint32_t *v = malloc((total ? total : 1) * sizeof *v);
    int ok = v != NULL;
    for (size_t t = 0; ok && t < k; t++)
        ok = (r[t]->rank = malloc((r[t]->n ? r[t]->n : 1) * sizeof *r[t]->rank)) != NULL;
    if (!ok) {
        free(v);
        return FDX_ENOMEM;
    }
    size_t j = 0;
    for (size_t t = 0; t < k; t++)
        for (size_t i = 0; i < r[t]->n; i++)
            v[j++] = (uint32_t)(t << TABLE_SHIFT | i);
    qsort_r(v, total, sizeof *v, by_bytes, (void *)r);
    uint32_t rank = 0;
    for (size_t i = 0; i < total; i++) {
        rank += i > 0 && by_bytes(&v[i - 1], &v[i], (void *)r) != 0;
        r[v[i] >> TABLE_SHIFT]->rank[v[i] & NUMBER_MASK] = rank;
    }
    free(v);
    for (size_t t = 0; t < k; t++)
        ranks_drop_strs(r[t]);
    return FDX_OK;
}

/* A cell's place: kind and keyed (2 bits), the token's number, then its
 * rank, and the source's (31 bits each); the revision; the cell's number,
 * through which the rare tie is broken by the packed key. 24 bytes, not the
 * 32 that the key's address and length took: a budget's sort arrays are
 * among what a spill adds to the peak. */
typedef struct sort_ent {
    uint64_t major;
    uint64_t revision;
    uint32_t index;
} sort_ent;

static int cmp_ent(const fdx_agg *agg, const sort_ent *a, const sort_ent *b)
{
    if (a->major != b->major)
        return a->major < b->major ? -1 : 1;
    if (a->revision != b->revision)
        return a->revision < b->revision ? -1 : 1;
    fdx_cell x, y;
    uint64_t count;
    fdx_str cands;
    fdx_agg_get(agg, a->index, &x, &count, &cands);
    fdx_agg_get(agg, b->index, &y, &count, &cands);
    return fdx_cell_compare(&x, &y);
}

/* Stable merge of the sorted v[lo..mid) and v[mid..hi) in place, through
 * tmp, which holds the shorter of them meanwhile: from the front when it is
 * the first, from the back when it is the second. */
static void merge_runs(const fdx_agg *agg, sort_ent *v, sort_ent *tmp, size_t lo, size_t mid,
                       size_t hi)
{
    if (mid - lo <= hi - mid) {
        size_t n = mid - lo, i = 0, j = mid, k = lo;
        memcpy(tmp, v + lo, n * sizeof *v);
        while (i < n && j < hi)
            v[k++] = cmp_ent(agg, &v[j], &tmp[i]) < 0 ? v[j++] : tmp[i++];
        memcpy(v + k, tmp + i, (n - i) * sizeof *v); /* the rest of v[mid..hi) is in place */
        return;
    }
    size_t j = hi - mid, i = mid, k = hi;
    memcpy(tmp, v + mid, j * sizeof *v);
    while (i > lo && j > 0)
        v[--k] = cmp_ent(agg, &tmp[j - 1], &v[i - 1]) < 0 ? v[--i] : tmp[--j];
    memcpy(v + lo, tmp, j * sizeof *v); /* the rest of v[lo..mid) is in place */
}

/* Stable merge sort of v[0..n), bottom-up, through tmp of n / 2 + 1
 * entries: only the shorter of two runs is copied aside, so the sort takes
 * one and a half times its entries, not twice. */
static void sort_by_key(const fdx_agg *agg, sort_ent *v, sort_ent *tmp, size_t n)
{
    for (size_t w = 1; w < n; w *= 2)
        for (size_t lo = 0; lo + w < n; lo += 2 * w)
            merge_runs(agg, v, tmp, lo, lo + w, lo + 2 * w < n ? lo + 2 * w : n);
}

/* A share of the cells, sorted on a thread of its own when there are
 * enough: numbered (the numbers of their strings in major), then, once
 * every share's strings are ranked together, ranked and sorted. */
typedef struct share {
    const fdx_agg *agg;
    sort_ent *v;   /* the share's entries */
    sort_ent *tmp; /* room for half of them and one, once ranked */
    size_t first, n;
    ranks tokens, sources;
    int rc;
} share;

static void *number_share(void *arg)
{
    share *h = arg;
    h->rc = FDX_OK;
    for (size_t i = 0; i < h->n; i++) {
        fdx_str key, cands;
        uint64_t count;
        fdx_cell c;
        uint32_t at = (uint32_t)(h->first + i);
        fdx_agg_get_packed(h->agg, at, &key, &count, &cands);
        fdx_cell_unpack(&c, key.p, key.n);
        int64_t t = number_of(&h->tokens, c.token), k = number_of(&h->sources, c.kernel_source);
        if (t < 0 || k < 0) {
            h->rc = FDX_ENOMEM;
            break;
        }
        uint64_t group = (uint64_t)c.kind * 2 + (uint64_t)c.keyed;
        h->v[i] = (sort_ent){group << 62 | (uint64_t)t << 31 | (uint64_t)k, c.revision, at};
    }
    return NULL;
}

static void *sort_share(void *arg)
{
    share *h = arg;
    const uint64_t field = ((uint64_t)1 << 31) - 1;
    for (size_t i = 0; i < h->n; i++) {
        uint64_t m = h->v[i].major;
        h->v[i].major = (m >> 62) << 62 | (uint64_t)h->tokens.rank[(m >> 31) & field] << 31 |
                        h->sources.rank[m & field];
    }
    sort_by_key(h->agg, h->v, h->tmp, h->n);
    return NULL;
}

/* Runs fn over both shares, the first on a thread of its own when there is
 * a second and a thread starts: 0, or -1 when that thread could not be
 * joined (and may still be using its share). */
static int both(share *sh, size_t k, void *(*fn)(void *))
{
    pthread_t helper;
    int helped = k == 2 && pthread_create(&helper, NULL, fn, &sh[0]) == 0;
    if (!helped)
        fn(&sh[0]);
    if (k == 2)
        fn(&sh[1]);
    return helped && pthread_join(helper, NULL) != 0 ? -1 : 0;
}

/* sort_cells' status when a helper thread was lost: its memory stays. */
#define LOST_HELPER (-1)

/* Sorts the ranked shares through room for half of the cells, then merges
 * their sorted runs into one. */
static int sort_ranked(share *sh, size_t k, size_t n)
{
    sort_ent *tmp = malloc((n / 2 + 2) * sizeof *tmp);
    if (!tmp)
        return FDX_ENOMEM;
    sh[0].tmp = tmp;
    sh[1].tmp = tmp + sh[0].n / 2 + 1;
    if (both(sh, k, sort_share) != 0)
        return LOST_HELPER;
    if (k == 2)
        merge_runs(sh[0].agg, sh[0].v, tmp, 0, sh[0].n, n);
    free(tmp);
    return FDX_OK;
}

/* Fills v with the cells' entries, sorted by key. */
static int sort_cells(const fdx_agg *agg, sort_ent *v, size_t n)
{
    size_t k = n >= SHARED_SORT_MIN ? 2 : 1, first = k == 2 ? n / 2 : n;
    share sh[2] = {{.agg = agg, .v = v, .first = 0, .n = first},
                   {.agg = agg, .v = v + first, .first = first, .n = n - first}};
    if (both(sh, k, number_share) != 0)
        return LOST_HELPER;
    for (size_t i = 0; i < 2; i++) {
        ranks_drop_table(&sh[i].tokens);
        ranks_drop_table(&sh[i].sources);
    }
    ranks *tokens[2] = {&sh[0].tokens, &sh[1].tokens},
          *sources[2] = {&sh[0].sources, &sh[1].sources};
    int rc = sh[0].rc != FDX_OK ? sh[0].rc : sh[k - 1].rc;
    if (rc == FDX_OK && (rc = rank_together(tokens, k)) == FDX_OK &&
        (rc = rank_together(sources, k)) == FDX_OK && (rc = sort_ranked(sh, k, n)) == LOST_HELPER)
        return LOST_HELPER;
    for (size_t i = 0; i < 2; i++) {
        ranks_free(&sh[i].tokens);
        ranks_free(&sh[i].sources);
    }
    return rc;
}

/* The entries' cell numbers, packed at the front of their own array, which
 * is then given back down to them: entry i is read before its number is
 * written, at a lower address than any entry still to read. */
static uint32_t *numbers_in_place(sort_ent *v, size_t n)
{
    uint32_t *out = (uint32_t *)(void *)v;
    for (size_t i = 0; i < n; i++) {
        uint32_t index = v[i].index;
        out[i] = index;
    }
    uint32_t *fit = realloc(out, (n ? n : 1) * sizeof *out);
    return fit ? fit : out;
}

size_t fdx_agg_key_order_bytes(size_t n)
{
    return (n + n / 2) * sizeof(sort_ent);
}

int fdx_agg_key_order(const fdx_agg *agg, uint32_t **order)
{
    size_t n = fdx_agg_cells(agg);
    sort_ent *v = malloc((n ? n : 1) * sizeof *v);
    int rc = v ? sort_cells(agg, v, n) : FDX_ENOMEM;
    if (rc == LOST_HELPER)
        return FDX_ENOMEM;
    if (rc != FDX_OK) {
        free(v);
        return FDX_ENOMEM;
    }
    *order = numbers_in_place(v, n);
    return FDX_OK;
}
