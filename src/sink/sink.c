/*
 * The in-process sink's recording: the reference TelemetrySink over the same
 * aggregator the store uses. A record for a cell already seen is found by
 * the record cache (sink_cache.c) and costs a count; only a new cell, or a
 * new candidates list, is validated and encoded.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/record_cell.h"
#include "sink/sink_internal.h"

/* ---- cell handles: kind, a tag of the sink's epoch and the kind, the
 * cell's index ---- */

/* Epochs are unique in the process (until 2^30 sinks and drains), so a
 * handle from another sink, or from before a drain, is refused instead of
 * counting into some other cell. None is 0, so neither is a valid handle. */
static uint32_t next_epoch(void)
{
    static _Atomic uint32_t epochs;
    return atomic_fetch_add(&epochs, 1) % 0x3fffffff + 1;
}

/* The kind is in the tag too: a handle whose kind bit alone was changed
 * counted into the other kind's cell of the same index. */
static uint32_t tag_of(const fdx_sink *s, fdx_kind kind)
{
    return s->epoch << 1 | (uint32_t)kind;
}

/* The handle of the cell a record went to, when it went to one. */
static int hand_out(const fdx_sink *s, int rc, fdx_kind kind, uint32_t at, fdx_sink_cell *cell)
{
    if (rc == FDX_OK && cell)
        *cell = (uint64_t)kind << 63 | (uint64_t)tag_of(s, kind) << 32 | at;
    return rc;
}

fdx_sink *fdx_sink_new(void)
{
    fdx_sink *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->misses = fdx_agg_new();
    s->dispatches = fdx_agg_new();
    s->epoch = next_epoch();
    s->miss_cache.agg = s->misses;
    s->dispatch_cache.agg = s->dispatches;
    if (!s->misses || !s->dispatches) {
        fdx_sink_free(s);
        return NULL;
    }
    return s;
}

void fdx_sink_free(fdx_sink *s)
{
    if (!s)
        return;
    fdx_agg_free(s->misses);
    fdx_agg_free(s->dispatches);
    fdx_sink_cache_free(&s->miss_cache);
    fdx_sink_cache_free(&s->dispatch_cache);
    for (size_t i = 0; i < s->cap_raw_cands; i++)
        fdx_buf_free(&s->raw_cands[i]);
    free(s->raw_cands);
    fdx_buf_free(&s->dtypes);
    fdx_buf_free(&s->cands);
    free(s);
}

/* Counts a record that could not be kept; rc comes back to the caller. */
static int drop(fdx_sink *s, int rc)
{
    s->dropped++;
    if (rc == FDX_ENOMEM)
        snprintf(s->errmsg, sizeof s->errmsg, "out of memory");
    return rc;
}

static int no_record(fdx_sink *s)
{
    snprintf(s->errmsg, sizeof s->errmsg, "no record given");
    return drop(s, FDX_EMISUSE);
}

/* A record the cache did not know goes to its cell, new or not (rc: whether
 * building the cell worked), and the cache learns it. */
static int add_new(fdx_sink *s, int rc, fdx_sink_cache *cache, const fdx_cell *cell, uint64_t count,
                   fdx_str cands, uint32_t *at)
{
    size_t index;
    if (rc == FDX_OK)
        rc = fdx_agg_add_index(cache->agg, cell, count, cands, &index);
    if (rc != FDX_OK)
        return drop(s, rc);
    *at = (uint32_t)index;
    fdx_sink_cache_learn(cache, *at);
    return FDX_OK;
}

/* ---- misses ---- */

static int record_miss(fdx_sink *s, const fdx_miss *m, uint32_t *at)
{
    if (!s)
        return FDX_EMISUSE; /* no sink to count the record in */
    if (!m)
        return no_record(s);
    fdx_raw_record r = fdx_raw_record_of(1, m->wanted, &m->fallback, &m->hw);
    if (fdx_sink_cache_find(&s->miss_cache, &r, at)) {
        fdx_sink_cache_count(&s->miss_cache, *at, m->count);
        return FDX_OK;
    }
    fdx_cell cell;
    int rc = fdx_cell_from_miss(&cell, m, 0, &s->dtypes, s->errmsg, sizeof s->errmsg);
    return add_new(s, rc, &s->miss_cache, &cell, m->count, FDX_NO_CANDS, at);
}

int fdx_sink_record_miss(fdx_sink *s, const fdx_miss *m)
{
    uint32_t at;
    return record_miss(s, m, &at);
}

int fdx_sink_record_miss_cell(fdx_sink *s, const fdx_miss *m, fdx_sink_cell *cell)
{
    uint32_t at = 0;
    int rc = record_miss(s, m, &at);
    return hand_out(s, rc, FDX_KIND_MISS, at, cell);
}

/* ---- dispatches ---- */

/* Remembers (in s->raw_cands[at]) the raw candidates now held by cell at,
 * which d just set (none when they have no raw form). */
static void remember_cands(fdx_sink *s, size_t at, const fdx_dispatch *d)
{
    if (at >= s->cap_raw_cands) {
        size_t old = s->cap_raw_cands;
        if (fdx_grow(&s->raw_cands, &s->cap_raw_cands, at + 1, sizeof *s->raw_cands))
            return;
        for (size_t i = old; i < s->cap_raw_cands; i++)
            s->raw_cands[i] = (fdx_buf)FDX_BUF_INIT;
    }
    fdx_buf *raw = &s->raw_cands[at];
    if (!fdx_raw_cands_write(raw, d->candidates, d->n_candidates))
        fdx_buf_clear(raw);
}

static int holds_these_cands(const fdx_sink *s, size_t at, const fdx_dispatch *d)
{
    return at < s->cap_raw_cands && s->raw_cands[at].len &&
           fdx_raw_cands_match(s->raw_cands[at].data, s->raw_cands[at].len, d->candidates,
                               d->n_candidates);
}

/* A dispatch for a cell already seen: the count, and the candidates when new. */
static int record_seen_dispatch(fdx_sink *s, const fdx_dispatch *d, uint32_t at)
{
    if (d->n_candidates == 0 || holds_these_cands(s, at, d)) {
        fdx_sink_cache_count(&s->dispatch_cache, at, d->count);
        return FDX_OK;
    }
    int rc =
        fdx_cands_encode(d->candidates, d->n_candidates, 0, &s->cands, s->errmsg, sizeof s->errmsg);
    fdx_str cands = {s->cands.data, s->cands.len};
    if (rc == FDX_OK)
        rc = fdx_agg_add_at(s->dispatches, at, d->count, cands);
    if (rc != FDX_OK)
        return drop(s, rc);
    remember_cands(s, at, d);
    return FDX_OK;
}

static int record_dispatch(fdx_sink *s, const fdx_dispatch *d, uint32_t *at)
{
    if (!s)
        return FDX_EMISUSE;
    if (!d)
        return no_record(s);
    fdx_raw_record r =
        fdx_raw_record_of(d->structure_key != NULL, d->structure_key, &d->chosen, &d->hw);
    if (fdx_sink_cache_find(&s->dispatch_cache, &r, at))
        return record_seen_dispatch(s, d, *at);
    fdx_cell cell;
    int rc =
        fdx_cell_from_dispatch(&cell, d, 0, &s->dtypes, &s->cands, s->errmsg, sizeof s->errmsg);
    fdx_str cands = {s->cands.data, s->cands.len};
    rc = add_new(s, rc, &s->dispatch_cache, &cell, d->count, cands, at);
    if (rc == FDX_OK && d->n_candidates)
        remember_cands(s, *at, d);
    return rc;
}

int fdx_sink_record_dispatch(fdx_sink *s, const fdx_dispatch *d)
{
    uint32_t at;
    return record_dispatch(s, d, &at);
}

int fdx_sink_record_dispatch_cell(fdx_sink *s, const fdx_dispatch *d, fdx_sink_cell *cell)
{
    uint32_t at = 0;
    int rc = record_dispatch(s, d, &at);
    return hand_out(s, rc, FDX_KIND_DISPATCH, at, cell);
}

/* ---- recording through a handle ---- */

int fdx_sink_add(fdx_sink *s, fdx_sink_cell cell, uint64_t count)
{
    if (!s)
        return FDX_EMISUSE;
    fdx_kind kind = cell >> 63 == FDX_KIND_MISS ? FDX_KIND_MISS : FDX_KIND_DISPATCH;
    fdx_agg *agg = kind == FDX_KIND_MISS ? s->misses : s->dispatches;
    uint32_t at = (uint32_t)cell;
    if ((uint32_t)(cell >> 32 & 0x7fffffff) != tag_of(s, kind) || at >= fdx_agg_cells(agg)) {
        snprintf(s->errmsg, sizeof s->errmsg,
                 "cell handle %#llx is not this sink's, or the sink was drained since",
                 (unsigned long long)cell);
        return drop(s, FDX_EMISUSE);
    }
    int rc = fdx_agg_add_at(agg, at, count, FDX_NO_CANDS);
    return rc == FDX_OK ? FDX_OK : drop(s, rc);
}

size_t fdx_sink_miss_cell_count(const fdx_sink *s)
{
    return s ? fdx_agg_cells(s->misses) : 0;
}
size_t fdx_sink_dispatch_cell_count(const fdx_sink *s)
{
    return s ? fdx_agg_cells(s->dispatches) : 0;
}
int fdx_sink_is_empty(const fdx_sink *s)
{
    return fdx_sink_miss_cell_count(s) == 0 && fdx_sink_dispatch_cell_count(s) == 0;
}
uint64_t fdx_sink_dropped(const fdx_sink *s)
{
    return s ? s->dropped : 0;
}
const char *fdx_sink_errmsg(const fdx_sink *s)
{
    return s ? s->errmsg : "out of memory";
}

void fdx_sink_settle(fdx_sink *s)
{
    fdx_sink_cache_settle(&s->miss_cache);
    fdx_sink_cache_settle(&s->dispatch_cache);
}

void fdx_sink_empty(fdx_sink *s)
{
    fdx_agg_clear(s->misses);
    fdx_agg_clear(s->dispatches);
    s->epoch = next_epoch();
    fdx_sink_cache_clear(&s->miss_cache);
    fdx_sink_cache_clear(&s->dispatch_cache);
    for (size_t i = 0; i < s->cap_raw_cands; i++)
        fdx_buf_clear(&s->raw_cands[i]);
}
