/* The miss demand rankings behind fdx-top (totals, a window, growth), over
 * the embedded queries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/when.h"
#include "sql_text.h"
#include "store/conn.h"
#include "store/row.h"
#include "store/store_check.h"

const char *fdx_demand_sql(void)
{
    return fdx_sql_top_demand;
}

const char *fdx_demand_window_sql(void)
{
    return fdx_sql_top_window;
}

const char *fdx_growth_sql(void)
{
    return fdx_sql_top_growth;
}

/* A capture time's day as the queries take it; NULL for 0 (open). */
static void bind_day(sqlite3_stmt *st, const char *name, int64_t unix_seconds)
{
    char day[FDX_DAY_TEXT];
    if (!unix_seconds)
        return;
    fdx_day_format(unix_seconds / FDX_SECONDS_PER_DAY, day);
    fdx_store_bind_named_text(st, name, day);
}

int fdx_demand_filter_init(fdx_demand_filter *filter, unsigned int version)
{
    static const fdx_demand_filter none = FDX_DEMAND_FILTER_INIT;
    if (!filter || version != FDX_DEMAND_FILTER_VERSION)
        return FDX_EMISUSE;
    *filter = none;
    return FDX_OK;
}

/* Prepares a ranking with the filter bound. */
static int prepare(fdx_store *s, fdx_stmt_id id, const fdx_demand_filter *f, sqlite3_stmt **out)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, id, &st);
    if (rc != FDX_OK)
        return rc;
    fdx_store_bind_named_text(st, ":cc", f->compute_capability);
    fdx_store_bind_named_text(st, ":sku", f->hardware_sku);
    fdx_store_bind_named_text(st, ":op", f->op);
    fdx_store_bind_named_text(st, ":source", f->kernel_source);
    bind_day(st, ":since", f->since);
    bind_day(st, ":until", f->until);
    fdx_store_bind_named_int64(st, ":top", f->limit > 0 ? f->limit : -1);
    *out = st;
    return FDX_OK;
}

static const char *text_or_empty(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? t : "";
}

static int rank(fdx_store *s, const fdx_demand_filter *f, fdx_demand_fn fn, void *ctx)
{
    sqlite3_stmt *st;
    int rc = prepare(s, f->since || f->until ? FDX_STMT_TOP_WINDOW : FDX_STMT_TOP_DEMAND, f, &st);
    if (rc != FDX_OK)
        return rc;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        fdx_demand_row row = {text_or_empty(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
                              (uint64_t)sqlite3_column_int64(st, 2),
                              (uint64_t)sqlite3_column_int64(st, 3), text_or_empty(st, 4)};
        s->in_callback++;
        int stop = fn(ctx, &row);
        s->in_callback--;
        if (stop != 0) {
            src = SQLITE_DONE;
            break;
        }
    }
    sqlite3_reset(st);
    return src == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(s, src, "ranking demand");
}

int fdx_store_filter_values(fdx_store *s, fdx_filter_value_fn fn, void *ctx)
{
    sqlite3_stmt *st;
    if (s && !fn)
        return fdx_store_fail(s, FDX_EMISUSE, "no callback given");
    int rc = fdx_store_reads_cells(s);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_FILTER_VALUES, &st);
    if (rc != FDX_OK)
        return rc;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *value = (const char *)sqlite3_column_text(st, 1);
        s->in_callback++;
        int stop = fn(ctx, (const char *)sqlite3_column_text(st, 0), value ? value : "");
        s->in_callback--;
        if (stop != 0) {
            src = SQLITE_DONE;
            break;
        }
    }
    sqlite3_reset(st);
    return src == SQLITE_DONE ? fdx_store_read_verdict(s, FDX_OK)
                              : fdx_store_fail_sqlite(s, src, "listing filter values");
}

/* The ranking is over cells checked first, in the same snapshot, as strictly
 * as an export checks them (a store may come from another host), and the
 * ranking of a window over a checked history. */
typedef struct ranking {
    const fdx_demand_filter *f;
    int growth_days; /* 0: the demand ranking */
    fdx_demand_fn demand;
    fdx_growth_fn growth;
    void *ctx;
} ranking;

static int growth(fdx_store *s, const ranking *k);

static int rank_body(fdx_store *s, void *ctx)
{
    const ranking *k = ctx;
    int rc = fdx_row_check_all(s, FDX_KIND_MISS);
    if (rc == FDX_OK && (k->growth_days || k->f->since || k->f->until))
        rc = fdx_check_history(s); /* the rankings of a window sum it */
    if (rc == FDX_OK)
        rc = k->growth_days ? growth(s, k) : rank(s, k->f, k->demand, k->ctx);
    return rc;
}

int fdx_demand_filter_check(const fdx_demand_filter *f, char *why, size_t why_size)
{
    if (!why) /* the verdict without its reason */
        why_size = 0;
    if (!f)
        return FDX_OK;
    if (f->version != FDX_DEMAND_FILTER_VERSION)
        snprintf(why, why_size,
                 "fdx_demand_filter version %u is not one this build knows (%d): start from "
                 "FDX_DEMAND_FILTER_INIT",
                 f->version, FDX_DEMAND_FILTER_VERSION);
    else if (f->since < 0 || f->since > FDX_TIME_MAX || f->until < 0 || f->until > FDX_TIME_MAX)
        snprintf(why, why_size,
                 "a window's times must be within 1970-01-01 .. 9999-12-31 (Unix seconds 0 to "
                 "%lld)",
                 (long long)FDX_TIME_MAX);
    else if (f->compute_capability && !fdx_check_cc_text(f->compute_capability))
        snprintf(why, why_size, FDX_BAD_CC_TEXT, f->compute_capability);
    else
        return FDX_OK;
    return FDX_EMISUSE;
}

static int checked_rank(fdx_store *s, const ranking *k)
{
    if (!s)
        return FDX_EMISUSE;
    if (!k->demand && !k->growth)
        return fdx_store_fail(s, FDX_EMISUSE, "no callback given");
    char why[512];
    if (fdx_demand_filter_check(k->f, why, sizeof why) != FDX_OK)
        return fdx_store_fail(s, FDX_EMISUSE, "%s", why);
    return fdx_store_in_read(s, rank_body, (void *)k);
}

int fdx_store_demand(fdx_store *s, const fdx_demand_filter *f, fdx_demand_fn fn, void *ctx)
{
    static const fdx_demand_filter none = FDX_DEMAND_FILTER_INIT;
    ranking k = {f ? f : &none, 0, fn, NULL, ctx};
    return checked_rank(s, &k);
}

int fdx_store_growth(fdx_store *s, const fdx_demand_filter *f, int days, fdx_growth_fn fn,
                     void *ctx)
{
    static const fdx_demand_filter none = FDX_DEMAND_FILTER_INIT;
    if (days < 1) /* a NULL handle says no more than that */
        return fdx_store_fail(s, FDX_EMISUSE, "a growth window must be at least one day");
    ranking k = {f ? f : &none, days, NULL, fn, ctx};
    return checked_rank(s, &k);
}

static int growth(fdx_store *s, const ranking *k)
{
    sqlite3_stmt *st;
    int rc = prepare(s, FDX_STMT_TOP_GROWTH, k->f, &st);
    if (rc != FDX_OK)
        return rc;
    fdx_store_bind_named_int64(st, ":days", k->growth_days);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        fdx_growth_row row = {text_or_empty(st, 0),
                              (uint64_t)sqlite3_column_int64(st, 1),
                              (uint64_t)sqlite3_column_int64(st, 2),
                              sqlite3_column_int64(st, 3),
                              sqlite3_column_int(st, 4),
                              text_or_empty(st, 5)};
        s->in_callback++;
        int stop = k->growth(k->ctx, &row);
        s->in_callback--;
        if (stop != 0) {
            src = SQLITE_DONE;
            break;
        }
    }
    sqlite3_reset(st);
    return src == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(s, src, "ranking growth");
}
