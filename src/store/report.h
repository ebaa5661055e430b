/*
 * The data behind fdx-report, gathered from one read snapshot after every
 * cell was checked: each part's rows as text, in the order the page shows
 * them. Rendering is elsewhere (report/), so the store knows nothing of HTML.
 */
#ifndef FDX_STORE_REPORT_H
#define FDX_STORE_REPORT_H

#include "fdx.h"

typedef enum fdx_report_part {
    FDX_REPORT_LEDGER,  /* ingests, runs, stores, first day, last day, records,
                           miss cells, dispatch cells */
    FDX_REPORT_DEMAND,  /* wanted, misses, fallbacks, devices, ops */
    FDX_REPORT_HEATMAP, /* op, cc_major, cc_minor, compute_capability, misses, ops in
                           all, compute capabilities in all; the top ones only */
    FDX_REPORT_GROWTH,  /* wanted, misses, previous, growth, is_new, ops */
    FDX_REPORT_DAILY,   /* wanted, day, misses (the last 90 days of history) of the
                           growth ranking's keys, by key and day, after every other part */
    FDX_REPORT_REGRET,  /* structure_key, op, dtypes, compute_capability,
                           hardware_sku, driver_version, chosen backend, source,
                           revision, best backend, source, revision, chosen_ns,
                           best_ns, speedup, count, unkeyed ('1' or '0') */
    FDX_REPORT_PARTS
} fdx_report_part;

#define FDX_REPORT_MAX_COLS 17

/* cols[i] is never NULL (SQL NULL reads as ""); a non-zero return stops. */
typedef int (*fdx_report_row_fn)(void *ctx, fdx_report_part part, const char *const *cols,
                                 int ncols);

/* top bounds the rankings (demand, growth, regret). */
int fdx_store_report_rows(fdx_store *s, int top, fdx_report_row_fn fn, void *ctx);

#endif
