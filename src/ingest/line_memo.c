/* Remembered lines: see line_memo.h. */
#include "ingest/line_memo.h"

#include <stdlib.h>
#include <string.h>

#include "codec/decode.h"
#include "common/u64.h"
#include "fdx.h"

/*
 * The memo is bounded (lines, and bytes kept in the entries and the map's
 * keys): past its bound it starts again empty. Lines with latencies, which
 * take more room and repeat less, are only taken while a sixth of the bound
 * is still free.
 *
 * The bound starts small and earns its size. Lines forgotten when the memo
 * started again are kept as hashes ("ghosts") with the number of the start,
 * so the memo knows when a line it misses would have been found by one
 * large enough to hold every line since, and whether the largest would be.
 * A memo that fills up after finding, or missing only for want of such
 * room, at least half as many lines as it learned doubles its bound
 * (keeping what it holds), up to the largest; one that did not starts again
 * empty with half the bound and gives back its memory. On feeds whose lines do not repeat (many
 * cells, reshaped lines) each worker then keeps about MEMO_MIN_BYTES instead of MEMO_MAX_BYTES; a
 * feed that repeats a few thousand cells run after run grows it within a run or two.
 *
 * What the memos of an ingest keep past their least bound is lent from
 * the ingest's budget (m->lent): its pending cells spill that much sooner.
 * A feed that repeats tens of thousands of cells fills both, and the
 * pending cells at their budget beside two memos at their largest took an
 * ingest past 32 MiB; spilling sooner cost no measurable time there, and
 * smaller memos did.
 */
/* 3 MiB a worker, not 6: on flush-shaped feeds (every cell once a run, too
 * many to hold) the memo grew, missed and started again, run after run,
 * and took peak memory from 27 to 32 MiB at times; repeat-heavy feeds lost
 * 5% of their speed and 7 MiB of memory with the smaller bound. */
#define MEMO_MAX_LINES 32768
#define MEMO_MAX_BYTES ((size_t)3 << 20)
#define MEMO_MIN_BYTES ((size_t)3 << 17) /* MEMO_MAX_BYTES / 8 */

static const char LATENCY_KEY[] = "\"latency_ns\":";
enum { LATENCY_KEY_LEN = sizeof LATENCY_KEY - 1, COUNT_KEY_LEN = 8 };

/* The largest bound the memo may have: its own, or its share of an ingest's. */
static size_t largest_bound(const fdx_line_memo *m)
{
    return m->lent && m->most < MEMO_MAX_BYTES ? m->most : MEMO_MAX_BYTES;
}

/* Sets the bound, lending the ingest's budget what it takes past the least. */
static void set_bound(fdx_line_memo *m, size_t bound)
{
    size_t lend = bound > MEMO_MIN_BYTES ? bound - MEMO_MIN_BYTES : 0;
    if (m->lent && lend > m->lent_here)
        atomic_fetch_add_explicit(m->lent, lend - m->lent_here, memory_order_relaxed);
    else if (m->lent && lend < m->lent_here)
        atomic_fetch_sub_explicit(m->lent, m->lent_here - lend, memory_order_relaxed);
    m->lent_here = lend;
    m->bound = bound;
}

/* ---- ghosts: hashes of the lines forgotten ---- */

enum { GHOST_SLOTS = 2 * MEMO_MAX_LINES };

/* A ghost is a line's hash with its low 16 bits replaced by the number of
 * the start that forgot it (15 bits, counting modulo 2^15), plus one: 0
 * marks an empty slot. */
#define GHOST_HASH(h)  ((h) & ~(uint64_t)0xffff)
#define GHOST_START(g) (((g)&0xffff) - 1)

/* Whether the largest memo would have held the line of hash h. */
static int is_ghost(const fdx_line_memo *m, uint64_t h)
{
    if (!m->ghosts)
        return 0;
    for (size_t i = (h >> 16) & (GHOST_SLOTS - 1); m->ghosts[i]; i = (i + 1) & (GHOST_SLOTS - 1))
        if (GHOST_HASH(m->ghosts[i]) == GHOST_HASH(h)) {
            size_t since = (m->starts - GHOST_START(m->ghosts[i])) & 0x7fff;
            return (since + 1) * m->bound <= largest_bound(m);
        }
    return 0;
}

/* Remembers the hashes of the lines held, starting over when half full. */
static void keep_ghosts(fdx_line_memo *m)
{
    m->starts++;
    if (!m->ghosts && !(m->ghosts = calloc(GHOST_SLOTS, sizeof *m->ghosts)))
        return;
    const fdx_keymap *k = &m->lines;
    for (size_t s = 0; s < k->cap; s++) {
        if (!k->values[s])
            continue;
        if (m->n_ghosts >= GHOST_SLOTS / 2) {
            memset(m->ghosts, 0, GHOST_SLOTS * sizeof *m->ghosts);
            m->n_ghosts = 0;
        }
        uint64_t h = k->hashes[s];
        size_t i = (h >> 16) & (GHOST_SLOTS - 1);
        while (m->ghosts[i] && GHOST_HASH(m->ghosts[i]) != GHOST_HASH(h))
            i = (i + 1) & (GHOST_SLOTS - 1);
        m->n_ghosts += !m->ghosts[i];
        m->ghosts[i] = GHOST_HASH(h) | ((((uint64_t)m->starts - 1) & 0x7fff) + 1);
    }
}

static void clear(fdx_line_memo *m)
{
    keep_ghosts(m);
    fdx_keymap_clear(&m->lines);
    fdx_buf_clear(&m->data);
    m->n = 0;
    m->hits = 0;
}

/* Starts again empty with half the bound, giving the memory back; at the
 * least bound it keeps its memory, which it would only fault in again. */
static void shrink(fdx_line_memo *m)
{
    if (m->bound <= MEMO_MIN_BYTES) {
        clear(m);
        return;
    }
    keep_ghosts(m);
    fdx_keymap_free(&m->lines);
    fdx_buf_free(&m->data);
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
    m->hits = 0;
    set_bound(m, m->bound / 2 < MEMO_MIN_BYTES ? MEMO_MIN_BYTES : m->bound / 2);
}

void fdx_line_memo_free(fdx_line_memo *m)
{
    set_bound(m, 0);
    fdx_keymap_free(&m->lines);
    fdx_buf_free(&m->data);
    fdx_buf_free(&m->tmpl);
    fdx_buf_free(&m->cands);
    free(m->v);
    free(m->ghosts);
    memset(m, 0, sizeof *m);
}

static size_t max_lines(const fdx_line_memo *m)
{
    return (size_t)MEMO_MAX_LINES * (m->bound / MEMO_MIN_BYTES) / (MEMO_MAX_BYTES / MEMO_MIN_BYTES);
}

/* The memo is full: it grows, or starts again. */
static int paid(const fdx_line_memo *m)
{
    return m->hits >= m->n / 2;
}

/* Whether a line with latencies (or without) fits. */
static int has_room(const fdx_line_memo *m, int latencies)
{
    size_t used = m->data.len + m->lines.keys.len;
    if (latencies)
        return m->n < max_lines(m) / 2 && used < m->bound - m->bound / 6;
    return m->n < max_lines(m) && used < m->bound;
}

/* Whether the line at hand may be learned: when it does not fit, a memo that
 * paid grows; a full one that cannot starts again. */
static int room_for(fdx_line_memo *m, int latencies)
{
    if (has_room(m, latencies))
        return 1;
    if (paid(m) && m->bound * 2 <= largest_bound(m))
        set_bound(m, m->bound * 2);
    else if (!has_room(m, 0))
        paid(m) ? clear(m) : shrink(m);
    return has_room(m, latencies);
}

/* ---- holes ---- */

/* The last `"count":` in the line (records put it near the end), or NULL. */
static const char *last_count_key(const char *p, size_t n)
{
    for (const char *colon = memrchr(p, ':', n); colon;
         colon = memrchr(p, ':', (size_t)(colon - p)))
        if (colon - p >= 7 && memcmp(colon - 7, "\"count\"", 7) == 0)
            return colon - 7;
    return NULL;
}

static size_t digits_at(const char *p, size_t n, size_t off)
{
    size_t len = 0;
    while (off + len < n && p[off + len] >= '0' && p[off + len] <= '9')
        len++;
    return len;
}

/* Plain digits as JSON writes an unsigned integer: no leading zero, in range. */
static int plain_u64(const char *p, size_t len, uint64_t *v)
{
    return len && !(len > 1 && p[0] == '0') && fdx_u64_parse(p, len, v) == FDX_U64_OK;
}

static int add_hole(fdx_line_holes *h, size_t off, size_t len)
{
    if (h->n == FDX_MEMO_HOLES)
        return 0;
    h->off[h->n] = off;
    h->len[h->n++] = len;
    return 1;
}

static int add_count_hole(fdx_line_holes *h, const char *p, size_t n, size_t off)
{
    h->count = h->n;
    return add_hole(h, off, digits_at(p, n, off));
}

/* The next `"latency_ns":` in p[from..n), found by its rare 'y'. */
static const char *next_latency_key(const char *p, size_t n, size_t from)
{
    enum { Y_AT = 7 }; /* the y's place in "latency */
    for (const char *y = from + Y_AT < n ? memchr(p + from + Y_AT, 'y', n - from - Y_AT) : NULL; y;
         y = memchr(y + 1, 'y', n - (size_t)(y + 1 - p)))
        if ((size_t)(y - p) + LATENCY_KEY_LEN - Y_AT <= n &&
            memcmp(y - Y_AT, LATENCY_KEY, LATENCY_KEY_LEN) == 0)
            return y - Y_AT;
    return NULL;
}

/* The line's holes in order: its count's digits (which it must have) and the
 * digits after each `"latency_ns":`; 0 unless each is a plain number. */
static int find_holes(const char *p, size_t n, fdx_line_holes *h)
{
    const char *k = last_count_key(p, n);
    if (!k)
        return 0;
    size_t count_off = (size_t)(k - p) + COUNT_KEY_LEN;
    h->n = 0;
    h->count = SIZE_MAX;
    for (const char *q = next_latency_key(p, n, 0); q;
         q = next_latency_key(p, n, (size_t)(q + 1 - p))) {
        size_t off = (size_t)(q - p) + LATENCY_KEY_LEN, len = digits_at(p, n, off);
        if (off > count_off && h->count == SIZE_MAX && !add_count_hole(h, p, n, count_off))
            return 0;
        if (len && !add_hole(h, off, len))
            return 0;
    }
    if (h->count == SIZE_MAX && !add_count_hole(h, p, n, count_off))
        return 0;
    for (size_t i = 0; i < h->n; i++) {
        uint64_t v;
        if (!plain_u64(p + h->off[i], h->len[i], &v))
            return 0;
        if (i == h->count)
            h->count_value = v;
    }
    return 1;
}

/* m->tmpl: the line without its holes; and each hole's place in it. */
static int cut(fdx_line_memo *m, const char *p, size_t n)
{
    fdx_line_holes *h = &m->at;
    size_t from = 0;
    fdx_buf_clear(&m->tmpl);
    for (size_t i = 0; i < h->n; i++) {
        fdx_buf_append(&m->tmpl, p + from, h->off[i] - from);
        h->tmpl[i] = m->tmpl.len;
        from = h->off[i] + h->len[i];
    }
    fdx_buf_append(&m->tmpl, p + from, n - from);
    h->hash = fdx_hash_bytes(m->tmpl.data, m->tmpl.len);
    return !m->tmpl.oom;
}

/* The first latency hole at or after hole i (the count's is skipped). */
static size_t next_latency(const fdx_line_holes *h, size_t i)
{
    return i == h->count ? i + 1 : i;
}

/* ---- finding ---- */

static size_t lat_place(const fdx_line_memo *m, const fdx_line_memo_entry *e, size_t k, int in_json)
{
    size_t place;
    memcpy(&place, m->data.data + e->lats_off + (2 * k + (size_t)in_json) * sizeof place,
           sizeof place);
    return place;
}

static int same_places(const fdx_line_memo *m, const fdx_line_memo_entry *e)
{
    const fdx_line_holes *h = &m->at;
    if (e->n_lats + 1 != h->n || e->count_off != h->tmpl[h->count])
        return 0;
    for (size_t k = 0, i = next_latency(h, 0); k < e->n_lats; k++, i = next_latency(h, i + 1))
        if (lat_place(m, e, k, 0) != h->tmpl[i])
            return 0;
    return 1;
}

/* m->cands: the entry's candidates with this line's latencies. */
static int splice(fdx_line_memo *m, const fdx_line_memo_entry *e, const char *p)
{
    const fdx_line_holes *h = &m->at;
    const char *json = m->data.data + e->cands_off;
    size_t from = 0;
    fdx_buf_clear(&m->cands);
    for (size_t k = 0, i = next_latency(h, 0); k < e->n_lats; k++, i = next_latency(h, i + 1)) {
        size_t place = lat_place(m, e, k, 1);
        fdx_buf_append(&m->cands, json + from, place - from);
        fdx_buf_append(&m->cands, p + h->off[i], h->len[i]);
        from = place;
    }
    fdx_buf_append(&m->cands, json + from, e->cands_len - from);
    return !m->cands.oom;
}

static int lookup(fdx_line_memo *m, const char *p, size_t n, fdx_line_cell *out)
{
    if (!m->n && !m->n_ghosts)
        return 0;
    if (!find_holes(p, n, &m->at) || !cut(m, p, n))
        return 0;
    m->cut = 1;
    uint32_t at;
    m->known = fdx_keymap_get(&m->lines, m->tmpl.data, m->tmpl.len, m->at.hash, &at);
    if (!m->known) {
        m->hits += is_ghost(m, m->at.hash); /* a larger memo would have had it */
        return 0;
    }
    if (!same_places(m, &m->v[at]))
        return 0;
    const fdx_line_memo_entry *e = &m->v[at];
    m->hits++;
    out->count = m->at.count_value;
    out->key = (fdx_str){m->data.data + e->key_off, e->key_len};
    out->key_hash = e->key_hash;
    out->cands = (fdx_str){m->data.data + e->cands_off, e->cands_len};
    if (e->n_lats) {
        if (!splice(m, e, p))
            return 0;
        out->cands = (fdx_str){m->cands.data, m->cands.len};
    }
    return 1;
}

int fdx_line_memo_find(fdx_line_memo *m, const char *p, size_t n, fdx_line_cell *out)
{
    m->cut = m->known = 0;
    m->resting = m->rest > 0;
    if (m->resting) {
        m->rest--;
        return 0;
    }
    uint64_t hits = m->hits;
    int found = lookup(m, p, n, out);
    m->found += m->hits != hits; /* a line a larger memo would have held counts */
    if (++m->looked == FDX_MEMO_WINDOW) {
        if (m->found * 4 < m->looked)
            m->rest = FDX_MEMO_REST;
        m->looked = m->found = 0;
    }
    return found;
}

/* ---- learning ---- */

/* Whether the holes are exactly the decoder's count and latencies. */
static int holes_are_numbers(const fdx_line_holes *h, const struct fdx_decoder *dec, size_t n_cands)
{
    size_t off, len, i = 0;
    if (!fdx_decode_count_token(dec, &off, &len) || h->off[h->count] != off ||
        h->len[h->count] != len)
        return 0;
    for (size_t c = 0; c < n_cands; c++) {
        if (!fdx_decode_latency_token(dec, c, &off, &len))
            continue;
        i = next_latency(h, i);
        if (i >= h->n || h->off[i] != off || h->len[i] != len)
            return 0;
        i++;
    }
    return next_latency(h, i) == h->n;
}

/* Appends cands to m->data without its latencies' digits, which must be the
 * line's, noting each one's places; 0 when they are not. */
static int put_cands(fdx_line_memo *m, fdx_line_memo_entry *e, fdx_str cands, const char *p)
{
    const fdx_line_holes *h = &m->at;
    size_t places[2 * FDX_MEMO_HOLES];
    size_t from = 0, k = 0, i = next_latency(h, 0);
    e->cands_off = m->data.len;
    for (const char *q = next_latency_key(cands.p, cands.n, 0); q;
         q = next_latency_key(cands.p, cands.n, (size_t)(q + 1 - cands.p))) {
        size_t off = (size_t)(q - cands.p) + LATENCY_KEY_LEN,
               len = digits_at(cands.p, cands.n, off);
        if (!len)
            continue;
        if (i >= h->n || len != h->len[i] || memcmp(cands.p + off, p + h->off[i], len) != 0)
            return 0;
        fdx_buf_append(&m->data, cands.p + from, off - from);
        places[2 * k] = h->tmpl[i];
        places[2 * k + 1] = m->data.len - e->cands_off;
        from = off + len;
        k++;
        i = next_latency(h, i + 1);
    }
    if (i != h->n)
        return 0;
    fdx_buf_append(&m->data, cands.p + from, cands.n - from);
    e->cands_len = m->data.len - e->cands_off;
    e->lats_off = m->data.len;
    e->n_lats = k;
    fdx_buf_append(&m->data, places, 2 * k * sizeof *places);
    return 1;
}

void fdx_line_memo_learn(fdx_line_memo *m, const char *p, size_t n, const struct fdx_decoder *dec,
                         size_t n_cands, const fdx_line_cell *cell)
{
    if (m->resting || (!m->cut && (!find_holes(p, n, &m->at) || !cut(m, p, n))))
        return;
    int known = m->known;
    m->cut = m->known = 0;
    if (known || !holes_are_numbers(&m->at, dec, n_cands))
        return;
    if (!m->bound)
        set_bound(m, MEMO_MIN_BYTES);
    if (!room_for(m, m->at.n > 1))
        return;
    if (fdx_grow(&m->v, &m->cap, m->n + 1, sizeof *m->v))
        return; /* a memo that cannot grow only costs speed */
    fdx_line_memo_entry *e = &m->v[m->n];
    e->count_off = m->at.tmpl[m->at.count];
    e->key_off = m->data.len;
    e->key_len = cell->key.n;
    e->key_hash = cell->key_hash;
    fdx_buf_append(&m->data, cell->key.p, cell->key.n);
    if (!put_cands(m, e, cell->cands, p)) {
        m->data.len = e->key_off;
        m->data.oom = 0;
        return;
    }
    if (m->data.oom || fdx_keymap_put(&m->lines, m->tmpl.data, m->tmpl.len, m->at.hash,
                                      (uint32_t)m->n) != FDX_OK) {
        clear(m);
        return;
    }
    m->n++;
}
