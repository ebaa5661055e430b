/* The miss demand ranking behind fdx-top, over the embedded query. */
#include <stdlib.h>

#include "sql_text.h"
#include "store/store_internal.h"

const char *fdx_demand_sql(void)
{
    return fdx_sql_top_demand;
}

static void bind_opt(sqlite3_stmt *st, const char *name, const char *value)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0 && value)
        sqlite3_bind_text(st, i, value, -1, SQLITE_STATIC);
}

int fdx_demand_filter_init(fdx_demand_filter *filter, unsigned int version)
{
    static const fdx_demand_filter none = FDX_DEMAND_FILTER_INIT;
    if (!filter || version != FDX_DEMAND_FILTER_VERSION)
        return FDX_EMISUSE;
    *filter = none;
    return FDX_OK;
}

int fdx_store_demand(fdx_store *s, const fdx_demand_filter *f, fdx_demand_fn fn, void *ctx)
{
    static const fdx_demand_filter none = FDX_DEMAND_FILTER_INIT;
    sqlite3_stmt *st;
    f = f ? f : &none;
    if (f->version != FDX_DEMAND_FILTER_VERSION)
        return fdx_store_fail(s, FDX_EMISUSE,
                              "fdx_demand_filter version %u is not one this build knows (%d): "
                              "start from FDX_DEMAND_FILTER_INIT",
                              f->version, FDX_DEMAND_FILTER_VERSION);
    int rc = fdx_store_stmt(s, FDX_STMT_TOP_DEMAND, &st);
    if (rc != FDX_OK)
        return rc;
    bind_opt(st, ":cc", f->compute_capability);
    bind_opt(st, ":sku", f->hardware_sku);
    bind_opt(st, ":op", f->op);
    bind_opt(st, ":source", f->kernel_source);
    sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":top"), f->limit > 0 ? f->limit : -1);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        fdx_demand_row row = {
            (const char *)sqlite3_column_text(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
            (uint64_t)sqlite3_column_int64(st, 2), (uint64_t)sqlite3_column_int64(st, 3),
            (const char *)sqlite3_column_text(st, 4)};
        if (!row.ops)
            row.ops = "";
        if (fn(ctx, &row) != 0) {
            src = SQLITE_DONE;
            break;
        }
    }
    sqlite3_reset(st);
    return src == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(s, src, "ranking demand");
}
