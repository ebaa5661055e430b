/*
 * fdx_store_prune: removing cells by filter (an old driver, a retired kernel
 * revision, cells not seen since a date) with their history, recorded in the
 * ledger. The history of the removed cells is kept as tombstones
 * (pruned_cell, pruned_history), so that a later merge of a store holding
 * those counts brings only what it observed beyond them.
 */
#include <stdio.h>
#include <string.h>

#include "codec/encode.h"
#include "common/utf8.h"
#include "common/when.h"
#include "store/backend.h"
#include "store/conn.h"
#include "store/ledger.h"
#include "store/row.h"
#include "store/store_check.h"
#include "store/store_flush.h"

/* The filters given, as JSON text for prune_log, and the :before day. */
static void describe(const fdx_prune_filter *f, fdx_buf *json, char before[FDX_DAY_TEXT])
{
    const char *names[] = {"driver_version",     "kernel_revision", "kernel_source", "op",
                           "compute_capability", "hardware_sku"};
    const char *values[] = {f->driver_version,     f->kernel_revision, f->kernel_source, f->op,
                            f->compute_capability, f->hardware_sku};
    fdx_buf_putc(json, '{');
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!values[i])
            continue;
        if (json->len > 1)
            fdx_buf_putc(json, ',');
        fdx_enc_string(json, names[i], strlen(names[i]));
        fdx_buf_putc(json, ':');
        fdx_enc_string(json, values[i], strlen(values[i]));
    }
    before[0] = '\0';
    if (f->before) {
        fdx_day_format(f->before / FDX_SECONDS_PER_DAY, before);
        fdx_buf_puts(json, json->len > 1 ? ",\"before\":\"" : "\"before\":\"");
        fdx_buf_puts(json, before);
        fdx_buf_putc(json, '"');
    }
    fdx_buf_putc(json, '}');
}

/* A removed cell's key, so that its history is kept as counts already
 * absorbed: a later merge of a store that holds them does not bring them
 * back (schema_6.sql). */
static int remember(fdx_store *s, const fdx_cell *c, int64_t cell_id)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(
        s, c->kind == FDX_KIND_MISS ? FDX_STMT_PRUNE_TOMB_MISS : FDX_STMT_PRUNE_TOMB_DISPATCH, &st);
    if (rc != FDX_OK)
        return rc;
    int next;
    if ((rc = fdx_bind_key(st, c, &next)) == SQLITE_OK)
        rc = sqlite3_bind_int64(st, next, cell_id);
    if (rc != SQLITE_OK)
        return fdx_store_fail_sqlite(s, rc, "remembering a pruned cell");
    return fdx_store_step_done(s, st, "remembering a pruned cell");
}

/* The filters' values in the order of the prune statements' parameters (the
 * backend's too): NULL filters nothing; an empty value matches the empty
 * string. */
enum { N_FILTERS = 7 };

static int remove_cells(fdx_store *s, fdx_stmt_id id, const char *const values[N_FILTERS],
                        uint64_t *cells, uint64_t *observations)
{
    static const char *const names[N_FILTERS] = {":driver", ":revision", ":source", ":op",
                                                 ":cc",     ":sku",      ":before"};
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, id, &st);
    if (rc != FDX_OK)
        return rc;
    for (int i = 0; i < N_FILTERS; i++)
        fdx_store_bind_named_text(st, names[i], values[i]);
    int code = FDX_OK;
    while (code == FDX_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        fdx_cell cell;
        int i =
            fdx_row_key(st, id == FDX_STMT_PRUNE_MISSES ? FDX_KIND_MISS : FDX_KIND_DISPATCH, &cell);
        uint64_t n = (uint64_t)sqlite3_column_int64(st, i);
        *observations = n > FDX_COUNT_MAX - *observations ? FDX_COUNT_MAX : *observations + n;
        (*cells)++;
        code = remember(s, &cell, sqlite3_column_int64(st, i + 1));
    }
    sqlite3_reset(st);
    if (code != FDX_OK)
        return code;
    return rc == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(s, rc, "pruning cells");
}

static int log_prune(fdx_store *s, const fdx_buf *json, const fdx_prune_stats *p)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_PRUNE_LOG_INSERT, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, s->ledger.id);
    sqlite3_bind_text(st, 2, json->data, (int)json->len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (int64_t)p->miss_cells);
    sqlite3_bind_int64(st, 4, (int64_t)p->dispatch_cells);
    sqlite3_bind_int64(st, 5, (int64_t)p->observations);
    return fdx_store_step_done(s, st, "recording a prune");
}

/* The prune's writes, after pending is written: its ledger row, the cells
 * it removes (or the backend's prune) and the log of it. */
static int write_prune(fdx_store *s, const fdx_prune_filter *f, const char *before,
                       const fdx_buf *json, fdx_prune_stats *stats, fdx_prune_stats *asked)
{
    const char *values[N_FILTERS] = {
        f->driver_version,     f->kernel_revision, f->kernel_source,         f->op,
        f->compute_capability, f->hardware_sku,    f->before ? before : NULL};
    int rc = fdx_ledger_open_row(s);
    if (rc == FDX_OK && s->backend && s->backend->prune) {
        rc = s->backend->prune(s, values, json->data, asked);
    } else if (rc == FDX_OK) {
        rc = remove_cells(s, FDX_STMT_PRUNE_MISSES, values, &stats->miss_cells,
                          &stats->observations);
        if (rc == FDX_OK)
            rc = remove_cells(s, FDX_STMT_PRUNE_DISPATCHES, values, &stats->dispatch_cells,
                              &stats->observations);
        if (rc == FDX_OK)
            rc = fdx_store_exec(s, FDX_STMT_PRUNE_TOMB_HISTORY);
        if (rc == FDX_OK)
            rc = fdx_store_exec(s, FDX_STMT_PRUNE_HISTORY);
    }
    return rc == FDX_OK ? log_prune(s, json, stats) : rc;
}

static int any_filter(const fdx_prune_filter *f)
{
    return f && (f->driver_version || f->kernel_revision || f->kernel_source || f->op ||
                 f->compute_capability || f->hardware_sku || f->before);
}

/* The name of a text filter that is not UTF-8 (it is written into
 * prune_log, and no cell's text could match it), or NULL. */
static const char *not_utf8(const fdx_prune_filter *f)
{
    const char *names[] = {"driver_version", "kernel_source", "op", "hardware_sku"};
    const char *values[] = {f->driver_version, f->kernel_source, f->op, f->hardware_sku};
    size_t bad;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (values[i] && !fdx_utf8_valid(values[i], strlen(values[i]), &bad))
            return names[i];
    return NULL;
}

/* A value that matches no cell's is a mistyped filter, not an empty prune:
 * a revision is 16 hex digits, a compute capability "cpu" or MAJOR.MINOR. */
int fdx_prune_filter_check(const fdx_prune_filter *f, char *why, size_t why_size)
{
    if (!why) /* the verdict without its reason */
        why_size = 0;
    const char *r = f ? f->kernel_revision : NULL, *cc = f ? f->compute_capability : NULL;
    const char *text = f ? not_utf8(f) : NULL;
    if (!any_filter(f))
        snprintf(why, why_size, "a prune needs at least one filter");
    else if (text)
        snprintf(why, why_size, "the %s filter is not UTF-8", text);
    else if (r && (strlen(r) != 16 || strspn(r, "0123456789abcdefABCDEF") != 16))
        snprintf(why, why_size, "kernel revision '%s' is not 16 hex digits", r);
    else if (cc && !fdx_check_cc_text(cc))
        snprintf(why, why_size, FDX_BAD_CC_TEXT, cc);
    else if (f->before < 0 || f->before > FDX_TIME_MAX)
        snprintf(why, why_size,
                 "before %lld is outside 1970-01-01 .. 9999-12-31 (Unix seconds 0 to %lld)",
                 (long long)f->before, (long long)FDX_TIME_MAX);
    else
        return FDX_OK;
    return FDX_EMISUSE;
}

static int check_filter(fdx_store *s, const fdx_prune_filter *f)
{
    char why[512];
    if (fdx_prune_filter_check(f, why, sizeof why) == FDX_OK)
        return FDX_OK;
    return fdx_store_fail(s, FDX_EMISUSE, "%s", why);
}

/* What a prune sums and writes into pruned_cell is first checked, as the
 * store's readers check it (it may come from another host). */
static int checked_store(fdx_store *s)
{
    int rc = fdx_row_check_cells(s);
    return rc == FDX_OK ? fdx_check_history(s) : rc;
}

int fdx_store_prune(fdx_store *s, const fdx_prune_filter *f, fdx_prune_stats *stats)
{
    fdx_prune_stats local = {0, 0, 0};
    fdx_prune_stats *asked = stats; /* NULL: a backend need not count now */
    stats = stats ? stats : &local;
    *stats = local;
    int need = fdx_store_need_txn(s);
    if (need != FDX_OK)
        return need;
    if (check_filter(s, f) != FDX_OK)
        return FDX_EMISUSE;
    if (s->ledger.pruned)
        return fdx_store_fail(s, FDX_EMISUSE, "one prune per transaction");
    if (fdx_backend_allows(s, "prune") != FDX_OK)
        return FDX_ERROR;
    fdx_buf json = FDX_BUF_INIT;
    char before[FDX_DAY_TEXT];
    describe(f, &json, before);
    int rc = json.oom ? fdx_store_fail(s, FDX_ENOMEM, "out of memory") : FDX_OK;
    if (rc == FDX_OK)
        rc = fdx_store_flush_pending(s);
    if (rc == FDX_OK && !s->backend)
        rc = checked_store(s);
    if (rc == FDX_OK && (rc = write_prune(s, f, before, &json, stats, asked)) != FDX_OK)
        s->txn_broken = 1; /* part of the prune may be written */
    if (rc == FDX_OK) {
        s->ledger.pruned++;
        s->pruned = *stats;
    }
    fdx_buf_free(&json);
    return rc;
}

int fdx_store_pruned(fdx_store *s, fdx_prune_stats *stats)
{
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (!stats)
        return fdx_store_fail(s, FDX_EMISUSE, "no stats out-parameter given");
    *stats = s->pruned;
    return FDX_OK;
}
