/* The miss demand ranking behind fdx-top, over the embedded query. */
#include <stdlib.h>
#include <string.h>

#include "codec/encode.h"
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

int fdx_store_demand(fdx_store *s, const fdx_demand_filter *f, fdx_demand_fn fn, void *ctx)
{
    static const fdx_demand_filter none;
    sqlite3_stmt *st;
    f = f ? f : &none;
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

int fdx_store_filter_values(fdx_store *s, fdx_filter_value_fn fn, void *ctx)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_FILTER_VALUES, &st);
    if (rc != FDX_OK)
        return rc;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *value = (const char *)sqlite3_column_text(st, 1);
        if (fn(ctx, (const char *)sqlite3_column_text(st, 0), value ? value : "") != 0) {
            src = SQLITE_DONE;
            break;
        }
    }
    sqlite3_reset(st);
    return src == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(s, src, "listing filter values");
}

char *fdx_json_string(const char *s)
{
    fdx_buf b = FDX_BUF_INIT;
    fdx_enc_string(&b, s, strlen(s));
    if (b.oom) {
        fdx_buf_free(&b);
        return NULL;
    }
    return b.data;
}
