/* The report's rows: every part read in one snapshot, after the cells were
 * checked as strictly as an export checks them, and the history and the
 * ledger as store_check.c checks them (a store may come from another host). The rankings are
 * fdx-top's statements; the rest are the report_*.sql statements, over the tables, since a store's
 * views are not trusted. */
#include "store/report.h"

#include <string.h>

#include "codec/encode.h"
#include "common/buf.h"
#include "store/conn.h"
#include "store/row.h"
#include "store/store_check.h"
#include "store/store_internal.h"

typedef struct gather {
    int top;
    fdx_report_row_fn fn;
    void *ctx;
    fdx_buf keys; /* the growth ranking's keys, a JSON array, for the daily part */
} gather;

static const fdx_stmt_id part_stmt[FDX_REPORT_PARTS] = {
    [FDX_REPORT_LEDGER] = FDX_STMT_REPORT_LEDGER,   [FDX_REPORT_DEMAND] = FDX_STMT_TOP_DEMAND,
    [FDX_REPORT_HEATMAP] = FDX_STMT_REPORT_HEATMAP, [FDX_REPORT_GROWTH] = FDX_STMT_TOP_GROWTH,
    [FDX_REPORT_DAILY] = FDX_STMT_REPORT_DAILY,     [FDX_REPORT_REGRET] = FDX_STMT_REPORT_REGRET,
};

static const char *const part_name[FDX_REPORT_PARTS] = {
    "the ledger summary", "the demand ranking", "the heatmap",
    "the growth ranking", "the daily history",  "the dispatch regret",
};

/* A growth row's key joins the keys whose daily misses are read. */
static void after_row(gather *g, fdx_report_part part, const char *wanted)
{
    if (part != FDX_REPORT_GROWTH)
        return;
    fdx_buf_putc(&g->keys, g->keys.len ? ',' : '[');
    fdx_enc_string(&g->keys, wanted, strlen(wanted));
}

/* Reads one part; the daily part is read for the growth ranking's keys, all
 * in one pass over the days it shows. */
static int read_part(fdx_store *s, gather *g, fdx_report_part part)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, part_stmt[part], &st);
    if (rc != FDX_OK)
        return rc;
    fdx_store_bind_named_int64(st, ":top", g->top);
    fdx_store_bind_named_int64(st, ":days", 7);
    fdx_store_bind_named_text(st, ":keys", g->keys.data);
    int n = sqlite3_column_count(st), src;
    if (n > FDX_REPORT_MAX_COLS)
        n = FDX_REPORT_MAX_COLS;
    const char *cols[FDX_REPORT_MAX_COLS];
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < n; i++) {
            const char *t = (const char *)sqlite3_column_text(st, i);
            if (!t && sqlite3_column_type(st, i) != SQLITE_NULL) {
                src = SQLITE_NOMEM;
                break;
            }
            cols[i] = t ? t : "";
        }
        if (src != SQLITE_ROW)
            break;
        after_row(g, part, cols[0]);
        if (g->keys.oom || g->fn(g->ctx, part, cols, n) != 0) {
            sqlite3_reset(st);
            return fdx_store_fail(s, FDX_ENOMEM, "%s: rendering %s: out of memory", s->path,
                                  part_name[part]);
        }
    }
    sqlite3_reset(st);
    return src == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(s, src, part_name[part]);
}

static int gather_body(fdx_store *s, void *ctx)
{
    int rc = fdx_row_check_cells(s);
    if (rc == FDX_OK)
        rc = fdx_check_history(s);
    if (rc == FDX_OK)
        rc = fdx_check_ledger(s);
    gather *g = ctx;
    for (int p = 0; rc == FDX_OK && p < FDX_REPORT_PARTS; p++)
        if (p != FDX_REPORT_DAILY)
            rc = read_part(s, g, (fdx_report_part)p);
    if (rc == FDX_OK && g->keys.len) {
        fdx_buf_putc(&g->keys, ']');
        rc = g->keys.oom ? fdx_store_fail(s, FDX_ENOMEM, "out of memory")
                         : read_part(s, g, FDX_REPORT_DAILY);
    }
    return rc;
}

int fdx_store_report_rows(fdx_store *s, int top, fdx_report_row_fn fn, void *ctx)
{
    gather g = {top, fn, ctx, FDX_BUF_INIT};
    int rc = fdx_store_in_read(s, gather_body, &g);
    fdx_buf_free(&g.keys);
    return rc;
}
