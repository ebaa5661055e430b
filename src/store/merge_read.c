/*
 * The backend-neutral half of a merge: reading a source store and staging
 * it into a target (merge_stage.h). A source comes from another host, so
 * every row is checked before it is staged: cells as strictly as feed lines
 * (row.c), identities as fdx makes them, history buckets and counts in
 * range, every history row's origin known, a cell's history adding up to its
 * count (a merge adds history, and the cell's count grows by what its
 * history gains), ledger rows of the types fdx writes. A cell the source
 * pruned and holds again is staged with its pruned history too: a merge
 * compares everything each store observed of a key.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/when.h"
#include "store/conn.h"
#include "store/history.h"
#include "store/merge_stage.h"
#include "store/row.h"
#include "store/store_check.h"

/* A source cell: its id in the source's history, the number it was staged
 * under, its count and what its history adds up to. */
typedef struct src_cell {
    int64_t id;
    int64_t staged;
    uint64_t count;
    uint64_t history;
} src_cell;

/* A store whose history the source holds, under the source's number for it
 * (numbers need not be dense: a crafted one far out cost memory up to it). */
typedef struct origin {
    int64_t k;
    char id[FDX_STORE_ID_HEX];
} origin;

typedef struct reader {
    fdx_store *src;
    const char *path;
    const fdx_merge_target_ops *ops;
    void *t;
    src_cell *cells;
    size_t n, cap;
    origin *origins; /* the source's origins, by number */
    size_t n_origins, cap_origins;
} reader;

/* The source's message, handed to the target. */
static int src_failed(reader *r, int rc)
{
    return r->ops->fail(r->t, rc, r->src->errmsg);
}

static int invalid(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int invalid(reader *r, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fdx_store_fail(r->src, FDX_ENOTSTORE, "%s: not a valid fdx store: %s", r->path, what);
    return src_failed(r, FDX_ENOTSTORE);
}

static int sqlite_failed(reader *r, int rc, const char *what)
{
    fdx_store_fail_sqlite(r->src, rc, what);
    return src_failed(r, FDX_EIO);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return b > FDX_COUNT_MAX - a ? FDX_COUNT_MAX : a + b;
}

static int describe_source(reader *r, fdx_merge_source *m)
{
    sqlite3_stmt *st;
    m->path = r->path;
    int rc = fdx_identity_read(r->src, m->store_id);
    if (rc == FDX_OK)
        rc = fdx_identity_ledger_digest(r->src, &m->ledger_high, m->digest);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(r->src, FDX_STMT_MERGE_READ_CONFIG, &st);
    if (rc != FDX_OK)
        return src_failed(r, rc);
    int src_rc = sqlite3_step(st);
    int ok = src_rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER;
    m->rolled_before = ok ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (src_rc != SQLITE_ROW && src_rc != SQLITE_DONE)
        return sqlite_failed(r, src_rc, "reading the history settings");
    if (src_rc == SQLITE_DONE)
        return invalid(r, "history_config: the history settings are missing");
    if (!ok || !fdx_history_rolled_valid(m->rolled_before))
        return invalid(r, "history_config: rolled_before is not the first day of a month");
    return FDX_OK;
}

static int push_cell(reader *r, int64_t id, uint64_t count)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        src_cell *v = realloc(r->cells, cap * sizeof *v);
        if (!v)
            return r->ops->fail(r->t, FDX_ENOMEM, "out of memory");
        r->cells = v;
        r->cap = cap;
    }
    r->cells[r->n] = (src_cell){id, (int64_t)r->n + 1, count, 0};
    r->n++;
    return FDX_OK;
}

static int stage_cells(reader *r, fdx_kind kind)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(
        r->src, kind == FDX_KIND_MISS ? FDX_STMT_MERGE_READ_MISSES : FDX_STMT_MERGE_READ_DISPATCHES,
        &st);
    if (rc != FDX_OK)
        return src_failed(r, rc);
    fdx_row_reader rr;
    if ((rc = fdx_row_reader_init(&rr, r->src, kind)) != FDX_OK)
        return src_failed(r, rc);
    int id_col = sqlite3_column_count(st) - 1, src_rc = SQLITE_DONE;
    fdx_row row;
    while (rc == FDX_OK && (src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((rc = fdx_row_read(&rr, st, &row)) != FDX_OK) {
            rc = src_failed(r, rc);
            break;
        }
        if (sqlite3_column_type(st, id_col) != SQLITE_INTEGER) {
            rc = invalid(r, "a cell without a history id (cell %lld)", (long long)rr.rows);
            break;
        }
        rc = push_cell(r, sqlite3_column_int64(st, id_col), row.count);
        if (rc == FDX_OK)
            rc = r->ops->stage_cell(r->t, (int64_t)r->n, &row.cell, row.cands,
                                    row.has_set_at ? &row.set_at : NULL);
    }
    fdx_row_reader_free(&rr);
    sqlite3_reset(st);
    if (rc == FDX_OK && src_rc != SQLITE_DONE)
        rc = sqlite_failed(r, src_rc, "reading cells");
    return rc;
}

static int by_id(const void *a, const void *b)
{
    int64_t x = ((const src_cell *)a)->id, y = ((const src_cell *)b)->id;
    return (x > y) - (x < y);
}

static src_cell *find_cell(reader *r, int64_t id)
{
    src_cell key = {id, 0, 0, 0};
    return r->n ? bsearch(&key, r->cells, r->n, sizeof key, by_id) : NULL;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Two origins naming one store (the store itself, origin 0, among them) would
 * be staged as one: a day's rows of both, the larger kept, and the source's
 * counts lost. No store fdx writes names one store twice. */
static int origins_distinct(reader *r)
{
    const char **ids = malloc((r->n_origins ? r->n_origins : 1) * sizeof *ids);
    if (!ids)
        return r->ops->fail(r->t, FDX_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->n_origins; i++)
        ids[i] = r->origins[i].id;
    qsort(ids, r->n_origins, sizeof *ids, by_text);
    int rc = FDX_OK;
    for (size_t i = 1; rc == FDX_OK && i < r->n_origins; i++)
        if (strcmp(ids[i - 1], ids[i]) == 0)
            rc = invalid(r,
                         "history_origin: the store %s is named twice (origin 0 is the "
                         "store itself)",
                         ids[i]);
    free(ids);
    return rc;
}

static int read_origins(reader *r, const char *self)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(r->src, FDX_STMT_MERGE_READ_ORIGINS, &st);
    if (rc != FDX_OK)
        return src_failed(r, rc);
    int src_rc;
    while (rc == FDX_OK && (src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(st, 0);
        const unsigned char *id = (const unsigned char *)fdx_row_text_or_null(st, 1);
        if (k < 0 || (r->n_origins && k <= r->origins[r->n_origins - 1].k)) {
            rc = invalid(r, "history_origin: an origin out of range or twice (%lld)", (long long)k);
            break;
        }
        if (!fdx_store_id_valid(id)) {
            rc = invalid(r, "history_origin: origin %lld is not a store identity", (long long)k);
            break;
        }
        if (fdx_grow(&r->origins, &r->cap_origins, r->n_origins + 1, sizeof *r->origins) != 0) {
            rc = r->ops->fail(r->t, FDX_ENOMEM, "out of memory");
            break;
        }
        origin *o = &r->origins[r->n_origins++];
        o->k = k;
        memcpy(o->id, k == 0 ? (const unsigned char *)self : id, FDX_STORE_ID_HEX);
    }
    sqlite3_reset(st);
    if (rc == FDX_OK && src_rc != SQLITE_DONE)
        rc = sqlite_failed(r, src_rc, "reading history origins");
    return rc == FDX_OK ? origins_distinct(r) : rc;
}

/* The store the source numbers k, or NULL (origins are in ascending order). */
static const char *origin_id(const reader *r, int64_t k)
{
    size_t lo = 0, hi = r->n_origins;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->origins[mid].k < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n_origins && r->origins[lo].k == k ? r->origins[lo].id : NULL;
}

/* Stages the rows of a history table (cell_history, or pruned_history under
 * the live cells' ids), checked as they come. Only live rows make up a
 * cell's count. */
static int stage_rows(reader *r, int pruned)
{
    const char *table = pruned ? "pruned_history" : "cell_history";
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(r->src,
                            pruned ? FDX_STMT_MERGE_READ_PRUNED : FDX_STMT_MERGE_READ_HISTORY, &st);
    if (rc != FDX_OK)
        return src_failed(r, rc);
    int src_rc;
    src_cell *c = NULL;
    while (rc == FDX_OK && (src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t cell = sqlite3_column_int64(st, 0), day = sqlite3_column_int64(st, 1);
        int64_t origin = sqlite3_column_int64(st, 2), count = sqlite3_column_int64(st, 3);
        if (sqlite3_column_type(st, 1) != SQLITE_INTEGER ||
            sqlite3_column_type(st, 3) != SQLITE_INTEGER || count < 1 || day < 0 ||
            day > FDX_TIME_MAX / FDX_SECONDS_PER_DAY) {
            rc = invalid(r, "%s: a day or count out of range (%scell %lld)", table,
                         pruned ? "the tombstone of " : "", (long long)cell);
            break;
        }
        if (!c || c->id != cell)
            c = find_cell(r, cell);
        if (!c)
            continue; /* a row of no cell counts nowhere */
        const char *from = origin_id(r, origin);
        if (!from) {
            rc = invalid(r, "%s: history names an unknown store (origin %lld, %scell %lld)", table,
                         (long long)origin, pruned ? "the tombstone of " : "", (long long)cell);
            break;
        }
        if (!pruned)
            c->history = sat_add(c->history, (uint64_t)count);
        rc = r->ops->stage_history(r->t, c->staged, day, from, (uint64_t)count, pruned);
    }
    sqlite3_reset(st);
    if (rc == FDX_OK && src_rc != SQLITE_DONE)
        rc = sqlite_failed(r, src_rc, "reading history");
    return rc;
}

static int stage_history(reader *r)
{
    int rc = stage_rows(r, 0);
    for (size_t i = 0; rc == FDX_OK && i < r->n; i++)
        if (r->cells[i].history != r->cells[i].count)
            rc = invalid(r, "cell_history: the history of cell %lld does not add up to its count",
                         (long long)r->cells[i].id);
    if (rc == FDX_OK)
        rc = stage_rows(r, 1);
    return rc;
}

static int stage_ledger(reader *r)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(r->src, FDX_STMT_MERGE_READ_LEDGER, &st);
    if (rc != FDX_OK)
        return src_failed(r, rc);
    int src_rc;
    while (rc == FDX_OK && (src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        fdx_merge_ledger_row l;
        char what[256];
        if (!fdx_check_ledger_row(st, &l)) {
            fdx_bad_ledger_row(st, what, sizeof what);
            rc = invalid(r, "%s", what);
        } else
            rc = r->ops->stage_ledger(r->t, &l);
    }
    sqlite3_reset(st);
    if (rc == FDX_OK && src_rc != SQLITE_DONE)
        rc = sqlite_failed(r, src_rc, "reading the ledger");
    return rc;
}

/* The source itself, and the stores it says it holds (recorded, never
 * trusted: they decide nothing). */
static int stage_stores(reader *r, const fdx_merge_source *m)
{
    sqlite3_stmt *st;
    int rc = r->ops->stage_store(r->t, m->store_id, m->ledger_high, m->digest, "read");
    if (rc != FDX_OK || (rc = fdx_store_stmt(r->src, FDX_STMT_MERGED_LIST, &st)) != FDX_OK)
        return rc == FDX_OK ? src_failed(r, rc) : rc;
    int src_rc;
    while (rc == FDX_OK && (src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *id = (const unsigned char *)fdx_row_text_or_null(st, 0);
        if (!fdx_store_id_valid(id)) {
            rc = invalid(r, "merged_store: a malformed store identity");
            break;
        }
        if (strcmp((const char *)id, m->store_id) == 0) {
            rc = invalid(r, "merged_store lists the store's own identity");
            break;
        }
        const char *digest = fdx_row_text_or_null(st, 2);
        if (digest && strlen(digest) != FDX_SHA256_HEX - 1)
            digest = NULL;
        rc = r->ops->stage_store(r->t, (const char *)id, sqlite3_column_int64(st, 1), digest,
                                 "held");
    }
    sqlite3_reset(st);
    if (rc == FDX_OK && src_rc != SQLITE_DONE)
        rc = sqlite_failed(r, src_rc, "reading merged stores");
    return rc;
}

static int stage_all(reader *r, const fdx_merge_source *m)
{
    int rc = r->ops->begin(r->t, m);
    if (rc == FDX_OK)
        rc = stage_cells(r, FDX_KIND_MISS);
    if (rc == FDX_OK)
        rc = stage_cells(r, FDX_KIND_DISPATCH);
    if (rc == FDX_OK) {
        if (r->n)
            qsort(r->cells, r->n, sizeof *r->cells, by_id);
        for (size_t i = 1; rc == FDX_OK && i < r->n; i++)
            if (r->cells[i].id == r->cells[i - 1].id)
                rc = invalid(r, "two cells share the history id %lld", (long long)r->cells[i].id);
    }
    if (rc == FDX_OK)
        rc = read_origins(r, m->store_id);
    if (rc == FDX_OK)
        rc = stage_history(r);
    if (rc == FDX_OK)
        rc = stage_ledger(r);
    if (rc == FDX_OK)
        rc = stage_stores(r, m);
    return rc;
}

int fdx_merge_stage(fdx_store *src, const char *path, const fdx_merge_target_ops *ops, void *t,
                    fdx_merge_known *known, fdx_merge_applied *applied, fdx_merge_stats *stats)
{
    reader r = {src, path, ops, t, NULL, 0, 0, NULL, 0, 0};
    fdx_merge_source m;
    *applied = (fdx_merge_applied){0, 0};
    int rc = describe_source(&r, &m);
    if (rc == FDX_OK)
        rc = ops->known(t, &m, known);
    if (rc != FDX_OK || *known != FDX_MERGE_NEW)
        return rc;
    /* what the readers of its history refuse (a day past its latest, ids
     * out of range or shared), a merge must not carry into the target */
    if ((rc = fdx_check_history(src)) != FDX_OK)
        return src_failed(&r, rc);
    rc = stage_all(&r, &m);
    if (rc == FDX_OK)
        rc = ops->apply(t, &m, applied);
    if (rc == FDX_OK)
        stats->cells_read += r.n;
    ops->end(t);
    free(r.cells);
    free(r.origins);
    return rc;
}
