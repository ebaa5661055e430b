/* The time axis through the C API: capture times of store transactions and
 * sink drains, their misuse, history across days and saturation, and the
 * argument checks of growth, diff and prune. */
#include <check.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static const char *const f16[] = {"F16"};

static fdx_miss a_miss(uint64_t count)
{
    fdx_miss m = {"w", {"Cuda", "MatMul", f16, 1, "k", 1}, count, {0, 0, 0, "cpu", "n/a"}};
    return m;
}

/* One integer from a query over the store at path. */
static long long query_int(const char *path, const char *sql)
{
    sqlite3 *raw;
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_msg(sqlite3_prepare_v2(raw, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(raw));
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    return v;
}

/* Records one miss of count in a transaction captured at `at` (0: now). */
static void record_at(fdx_store *db, int64_t at, uint64_t count)
{
    fdx_miss m = a_miss(count);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    if (at)
        ck_assert_int_eq(fdx_store_set_time(db, at), FDX_OK);
    ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
}

START_TEST(capture_time_sets_the_day)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    record_at(db, 1790857845, 5); /* 2026-10-01T12:30:45Z */
    record_at(db, 1790900000, 2); /* 2026-10-02 */
    record_at(db, 1790812800, 1); /* 2026-10-01 again */
    fdx_store_close(db);
    ck_assert_int_eq(query_int(path, "SELECT count FROM miss_daily WHERE day = '2026-10-01'"), 6);
    ck_assert_int_eq(query_int(path, "SELECT count FROM miss_daily WHERE day = '2026-10-02'"), 2);
    ck_assert_int_eq(query_int(path, "SELECT count FROM miss_cell"), 8);
    ck_assert_int_eq(query_int(path, "SELECT captured_at FROM ingest_ledger WHERE id = 1"),
                     1790857845);
}
END_TEST

START_TEST(capture_time_misuse)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    fdx_miss m = a_miss(1);
    ck_assert_int_eq(fdx_store_set_time(db, 0), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_time(db, -1), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_set_time(db, 253402300800LL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_set_time(db, 1790812800), FDX_OK);
    ck_assert_int_eq(fdx_store_set_time(db, 1790899200),
                     FDX_OK); /* again, still nothing recorded */
    ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
    ck_assert_int_eq(fdx_store_set_time(db, 1790812800), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "before the transaction records"));
    ck_assert_int_eq(fdx_store_set_daily_days(db, 0), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_set_daily_days(db, FDX_MAX_DAILY_DAYS + 1), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_set_daily_days(db, INT_MAX), FDX_EMISUSE); /* --daily-days's bound */
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_set_daily_days(db, 10), FDX_EMISUSE); /* no transaction */
    fdx_store_close(db);
    ck_assert_int_eq(query_int(tu_path(tu_dir, "s.db"), "SELECT day FROM cell_history"),
                     1790899200 / 86400);
}
END_TEST

START_TEST(parse_time_forms)
{
    static const struct {
        const char *text;
        int64_t want;
    } good[] = {
        {"2026-10-01", 1790812800},
        {"2026-10-01T12:30:45Z", 1790857845},
        {"2026-10-01T12:30:45.5Z", 1790857845},
        {"2026-10-01T12:30:45-00:00", 1790857845},
        {"2000-02-29", 951782400},
        {"@42", 42},
        {"1970-01-01", 0},
    };
    static const char *const bad[] = {"",
                                      "2026-10-01 ",
                                      "2026-9-01",
                                      "2100-02-29",
                                      "2026-10-01T24:00:00Z",
                                      "2026-10-01T12:60:00Z",
                                      "@",
                                      "@1e5",
                                      "2026-10-01T12:00:00+01:00",
                                      "x"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t v = -1;
        ck_assert_msg(fdx_parse_time(good[i].text, &v) == FDX_OK, "%s", good[i].text);
        ck_assert_msg(v == good[i].want, "%s: %lld", good[i].text, (long long)v);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v;
        ck_assert_msg(fdx_parse_time(bad[i], &v) == FDX_EDATA, "'%s' accepted", bad[i]);
    }
    int64_t v;
    ck_assert_int_eq(fdx_parse_time(NULL, &v), FDX_EDATA);
    ck_assert_int_eq(fdx_parse_time("2026-10-01", NULL), FDX_EMISUSE);
}
END_TEST

START_TEST(sink_drains_at_a_capture_time)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    fdx_sink *sink = fdx_sink_new();
    fdx_miss m = a_miss(3);
    fdx_sink_record_miss(sink, &m);
    fdx_sink_record_miss(sink, &m);
    ck_assert_int_eq(fdx_sink_drain_to_store_at(sink, db, 1790812800, NULL), FDX_OK);
    ck_assert(fdx_sink_is_empty(sink));
    fdx_sink_record_miss(sink, &m);
    ck_assert_int_eq(fdx_sink_drain_to_store_at(sink, db, -5, NULL), FDX_EMISUSE);
    ck_assert(!fdx_sink_is_empty(sink)); /* a failed drain keeps the sink */
    fdx_sink_free(sink);
    fdx_store_close(db);
    ck_assert_int_eq(query_int(path, "SELECT count FROM miss_daily WHERE day = '2026-10-01'"), 6);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM cell_history"), 1);
}
END_TEST

/* Each day saturates on its own; the total is the saturating sum of the days. */
START_TEST(days_and_totals_saturate)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    record_at(db, 1790812800, UINT64_MAX);
    record_at(db, 1790812800, 9);
    record_at(db, 1790899200, 7);
    fdx_store_close(db);
    ck_assert_int_eq(query_int(path, "SELECT count FROM miss_cell"), INT64_MAX);
    ck_assert_int_eq(query_int(path, "SELECT count FROM miss_daily WHERE day = '2026-10-01'"),
                     INT64_MAX);
    ck_assert_int_eq(query_int(path, "SELECT count FROM miss_daily WHERE day = '2026-10-02'"), 7);
}
END_TEST

/* A transaction's history rows go in groups of 64 and one at a time after:
 * each cell's row holds what that cell gained, whichever way it went in, and
 * a row already there (the same day, a transaction before) is added to, up to
 * saturation. 197 cells: three groups and five alone. */
/* Records n misses "w000" ... in a transaction captured at `at`: the first
 * `saturating` of them UINT64_MAX times, the others i + 1 times. */
static void record_many_at(fdx_store *db, int64_t at, int n, int saturating)
{
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_time(db, at), FDX_OK);
    for (int i = 0; i < n; i++) {
        char wanted[16];
        snprintf(wanted, sizeof wanted, "w%03d", i);
        fdx_miss m = a_miss(i < saturating ? UINT64_MAX : (uint64_t)i + 1);
        m.wanted = wanted;
        ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
    }
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
}

START_TEST(many_cells_a_transaction_each_get_their_history)
{
    enum { CELLS = 3 * 64 + 5, SATURATED = 70 };
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    record_many_at(db, 1790812800, CELLS, 0);
    record_many_at(db, 1790812800, CELLS, SATURATED);
    record_many_at(db, 1790899200, CELLS, 0);
    fdx_store_close(db);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM cell_history"), 2 * CELLS);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM miss_cell m JOIN cell_history h "
                                     "ON h.cell = m.cell_id AND h.day = 20727"),
                     CELLS);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM miss_cell m JOIN cell_history h "
                                     "ON h.cell = m.cell_id WHERE h.day = 20727 AND h.count != "
                                     "CASE WHEN m.wanted < 'w070' THEN 9223372036854775807 "
                                     "ELSE 2 * (CAST(substr(m.wanted, 2) AS INTEGER) + 1) END"),
                     0);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM miss_cell m JOIN cell_history h "
                                     "ON h.cell = m.cell_id WHERE h.day = 20728 AND h.count != "
                                     "CAST(substr(m.wanted, 2) AS INTEGER) + 1"),
                     0);
}
END_TEST

/* Rows that go 64 to a statement still move the latest day, which rolls
 * older days into months, and a day already rolled goes to its month. */
START_TEST(grouped_history_rolls_up_and_back_fills_months)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    record_many_at(db, 1768435200, 128, 0); /* 2026-01-15, day 20468 */
    record_many_at(db, 1811808000, 128, 0); /* 2027-06-01: January 2026 leaves the 90 days */
    record_many_at(db, 1770681600, 128, 0); /* 2026-02-10, day 20494, rolled already */
    fdx_store_close(db);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM cell_history WHERE day = 20468"), 0);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM cell_history WHERE day = 20454"), 128);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM cell_history WHERE day = 20494"), 0);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM cell_history WHERE day = 20485"), 128);
    ck_assert_int_eq(query_int(path, "SELECT count(*) FROM cell_history WHERE day = 20970"), 128);
}
END_TEST

static int no_growth(void *ctx, const fdx_growth_row *row)
{
    (void)ctx;
    (void)row;
    return 0;
}

static int no_diff(void *ctx, const fdx_diff_row *row)
{
    (void)ctx;
    (void)row;
    return 0;
}

START_TEST(growth_diff_and_prune_check_their_arguments)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    fdx_prune_filter none = {NULL, NULL, NULL, NULL, NULL, NULL, 0};
    fdx_prune_filter op = {NULL, NULL, NULL, "MatMul", NULL, NULL, 0};
    ck_assert_int_eq(fdx_store_growth(db, NULL, 0, no_growth, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_prune(db, &op, NULL), FDX_EMISUSE); /* no transaction */
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_prune(db, &none, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_prune(db, NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_diff(db, path, no_diff, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_prune(db, &op, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_prune(db, &op, NULL), FDX_EMISUSE); /* one per transaction */
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    ck_assert_int_eq(fdx_store_diff(db, tu_path(tu_dir, "none.db"), no_diff, NULL), FDX_ENOENT);
    fdx_store_close(db);
}
END_TEST

/* A filter is checked without a store, as fdx_store_prune checks it, so a
 * program refuses a typo before it opens (and waits for) a store. */
START_TEST(prune_filters_are_checked_without_a_store)
{
    fdx_prune_filter f = {NULL, NULL, NULL, NULL, NULL, NULL, 0};
    char why[64];
    ck_assert_int_eq(fdx_prune_filter_check(&f, why, sizeof why), FDX_EMISUSE);
    ck_assert_str_eq(why, "a prune needs at least one filter");
    ck_assert_int_eq(fdx_prune_filter_check(NULL, NULL, 0), FDX_EMISUSE);
    f.kernel_revision = "abc";
    ck_assert_int_eq(fdx_prune_filter_check(&f, why, sizeof why), FDX_EMISUSE);
    ck_assert_str_eq(why, "kernel revision 'abc' is not 16 hex digits");
    f.kernel_revision = "00000000000000aF";
    ck_assert_int_eq(fdx_prune_filter_check(&f, NULL, 0), FDX_OK);
    f.compute_capability = "8.9.1";
    ck_assert_int_eq(fdx_prune_filter_check(&f, why, 16), FDX_EMISUSE);
    ck_assert_str_eq(why, "compute capabil"); /* cut to the room given */
    f.compute_capability = "cpu";
    ck_assert_int_eq(fdx_prune_filter_check(&f, why, sizeof why), FDX_OK);
    f.compute_capability = "4294967295.0";
    ck_assert_int_eq(fdx_prune_filter_check(&f, why, sizeof why), FDX_OK);
    f.compute_capability = "4294967296.0";
    ck_assert_int_eq(fdx_prune_filter_check(&f, why, sizeof why), FDX_EMISUSE);
    f.compute_capability = NULL; /* written into prune_log, which no reader would take */
    f.op = "\xff\xfe";
    ck_assert_int_eq(fdx_prune_filter_check(&f, why, sizeof why), FDX_EMISUSE);
    ck_assert_str_eq(why, "the op filter is not UTF-8");
    f.op = NULL;
    /* before INT64_MIN pruned every cell, and logged a day 292 billion years ago */
    fdx_prune_filter t = {NULL, NULL, NULL, NULL, NULL, NULL, INT64_MIN};
    char longer[160];
    ck_assert_int_eq(fdx_prune_filter_check(&t, longer, sizeof longer), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(longer, "outside 1970-01-01 .. 9999-12-31"));
    t.before = -86400;
    ck_assert_int_eq(fdx_prune_filter_check(&t, NULL, 0), FDX_EMISUSE);
    t.before = 253402300800; /* 10000-01-01 */
    ck_assert_int_eq(fdx_prune_filter_check(&t, NULL, 0), FDX_EMISUSE);
    t.before = 253402300799;
    ck_assert_int_eq(fdx_prune_filter_check(&t, NULL, 0), FDX_OK);
}
END_TEST

/* fdx_store_pruned: all 0 before a prune, then what the committed prune
 * removed, also when fdx_store_prune was not asked for counts. */
START_TEST(pruned_reports_the_committed_prune)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    fdx_miss kept = a_miss(2);
    kept.fallback.op = "Conv";
    fdx_miss gone = a_miss(3);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_record_miss(db, &kept), FDX_OK);
    ck_assert_int_eq(fdx_store_record_miss(db, &gone), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    fdx_prune_stats ps = {9, 9, 9};
    ck_assert_int_eq(fdx_store_pruned(db, &ps), FDX_OK);
    ck_assert(ps.miss_cells == 0 && ps.dispatch_cells == 0 && ps.observations == 0);
    fdx_prune_filter op = {NULL, NULL, NULL, "MatMul", NULL, NULL, 0};
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_prune(db, &op, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_pruned(db, &ps), FDX_OK);
    ck_assert(ps.miss_cells == 1 && ps.dispatch_cells == 0 && ps.observations == 3);
    ck_assert_int_eq(fdx_store_pruned(db, NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "no stats"));
    ck_assert_int_eq(fdx_store_pruned(NULL, &ps), FDX_EMISUSE);
    fdx_store_close(db);
}
END_TEST

Suite *history_suite(void)
{
    Suite *s = suite_create("history");
    TCase *tc = tcase_create("history");
    tcase_add_checked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_add_test(tc, capture_time_sets_the_day);
    tcase_add_test(tc, capture_time_misuse);
    tcase_add_test(tc, parse_time_forms);
    tcase_add_test(tc, sink_drains_at_a_capture_time);
    tcase_add_test(tc, days_and_totals_saturate);
    tcase_add_test(tc, many_cells_a_transaction_each_get_their_history);
    tcase_add_test(tc, grouped_history_rolls_up_and_back_fills_months);
    tcase_add_test(tc, growth_diff_and_prune_check_their_arguments);
    tcase_add_test(tc, prune_filters_are_checked_without_a_store);
    tcase_add_test(tc, pruned_reports_the_committed_prune);
    suite_add_tcase(s, tc);
    return s;
}
