/* The merge seam (src/store/merge_stage.h) against a recording target: what
 * the reader stages from a source and in which order, that a target's
 * "unchanged" stops it before any staging, and that a source the reader
 * refuses reaches the target as one message, with nothing applied. */
#include <check.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "sql_text.h"
#include "store/conn.h"
#include "store/merge_stage.h"
#include "test_util.h"

/* What the recording target saw. */
typedef struct seen {
    fdx_merge_known answer;
    char calls[64]; /* one letter per op: k b c h l s a e f */
    int64_t cells, last_staged;
    uint64_t history[8]; /* per staged cell */
    int history_rows, foreign_origin;
    int ledger_rows, ledger_foreign;
    char store_id[FDX_STORE_ID_HEX];
    int64_t ledger_high;
    char first_store_how[8];
    char failed[512];
} seen;

static void call(seen *s, char c)
{
    size_t n = strlen(s->calls);
    if (n + 1 < sizeof s->calls)
        s->calls[n] = c;
}

static int known(void *t, const fdx_merge_source *src, fdx_merge_known *out)
{
    seen *s = t;
    call(s, 'k');
    memcpy(s->store_id, src->store_id, sizeof s->store_id);
    s->ledger_high = src->ledger_high;
    *out = s->answer;
    return FDX_OK;
}

static int begin(void *t, const fdx_merge_source *src)
{
    (void)src;
    call(t, 'b');
    return FDX_OK;
}

static int stage_cell(void *t, int64_t staged, const fdx_cell *c, fdx_str cands,
                      const int64_t *set_at)
{
    seen *s = t;
    (void)c, (void)cands, (void)set_at;
    if (s->calls[strlen(s->calls) - 1] != 'c')
        call(s, 'c');
    ck_assert_int_eq(staged, s->last_staged + 1);
    s->last_staged = staged;
    s->cells++;
    return FDX_OK;
}

static int stage_history(void *t, int64_t staged, int64_t day, const char *store_id, uint64_t count)
{
    seen *s = t;
    (void)day;
    if (s->calls[strlen(s->calls) - 1] != 'h')
        call(s, 'h');
    ck_assert(staged >= 1 && staged <= s->cells && staged < 8);
    s->history[staged] += count;
    s->history_rows++;
    s->foreign_origin += strcmp(store_id, s->store_id) != 0;
    return FDX_OK;
}

static int stage_ledger(void *t, const fdx_merge_ledger_row *l)
{
    seen *s = t;
    if (s->calls[strlen(s->calls) - 1] != 'l')
        call(s, 'l');
    s->ledger_rows++;
    s->ledger_foreign += strcmp(l->store_id, s->store_id) != 0;
    return FDX_OK;
}

static int stage_store(void *t, const char *store_id, int64_t high, const char *digest,
                       const char *how)
{
    seen *s = t;
    (void)digest;
    if (s->calls[strlen(s->calls) - 1] != 's') {
        call(s, 's');
        ck_assert_str_eq(store_id, s->store_id);
        ck_assert_int_eq(high, s->ledger_high);
        strcpy(s->first_store_how, how);
    }
    return FDX_OK;
}

static int apply(void *t, const fdx_merge_source *src, fdx_merge_applied *out)
{
    (void)src;
    call(t, 'a');
    out->cells_added = 0;
    out->cells_updated = 0;
    return FDX_OK;
}

static void end(void *t)
{
    call(t, 'e');
}

static int refuse(void *t, int code, const char *msg)
{
    seen *s = t;
    call(s, 'f');
    strncpy(s->failed, msg, sizeof s->failed - 1);
    return code;
}

static const fdx_merge_target_ops recorder = {
    known, begin, stage_cell, stage_history, stage_ledger, stage_store, apply, end, refuse,
};

static const char *const f16[] = {"F16"};

/* A source of two miss cells and a dispatch cell, ingested twice. */
static const char *make_source(void)
{
    const char *path = tu_path(tu_dir, "src.db");
    fdx_store *db = tu_open(path);
    fdx_miss a = {"a", {"Cuda", "MatMul", f16, 1, "k", 1}, 3, {0, 0, 0, "cpu", "n/a"}};
    fdx_miss b = {"b", {"Cuda", "MatMul", f16, 1, "k", 1}, 4, {0, 0, 0, "cpu", "n/a"}};
    fdx_dispatch d = {"s", {"Cuda", "Gelu", f16, 1, "k", 1}, NULL, 0, 5, {0, 0, 0, "cpu", "n/a"}};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        ck_assert_int_eq(fdx_store_set_time(db, 1790857845 + i * 86400), FDX_OK);
        ck_assert_int_eq(fdx_store_record_miss(db, &a), FDX_OK);
        ck_assert_int_eq(fdx_store_record_miss(db, &b), FDX_OK);
        ck_assert_int_eq(fdx_store_record_dispatch(db, &d), FDX_OK);
        ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    }
    fdx_store_close(db);
    return path;
}

static int stage(const char *path, seen *s, fdx_merge_stats *stats)
{
    fdx_store *src;
    fdx_merge_known k;
    fdx_merge_applied applied;
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_FOR_READING, &src), FDX_OK);
    ck_assert_int_eq(fdx_store_exec(src, FDX_STMT_BEGIN_READ), FDX_OK);
    int rc = fdx_merge_stage(src, path, &recorder, s, &k, &applied, stats);
    ck_assert_int_eq(k, s->answer);
    fdx_store_close(src);
    return rc;
}

/* The apply's delta statement joins its per-month sums by key. SQLite's
 * planner once joined two of them by their counts (an automatic index on a
 * column of a few distinct values), which made a merge of 100,000 cells
 * take seconds per source instead of tens of milliseconds. */
START_TEST(merge_delta_joins_months_by_key)
{
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, fdx_sql_merge_stage_create, NULL, NULL, NULL), SQLITE_OK);
    char *plan_sql;
    ck_assert_int_ne(asprintf(&plan_sql, "EXPLAIN QUERY PLAN %s", fdx_sql_merge_apply_delta), -1);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db, plan_sql, -1, &st, NULL), SQLITE_OK);
    int scans_in_a_row = 0, most = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(st, 3);
        ck_assert_msg(!strstr(detail, "(d=?)") && !strstr(detail, "(n=?)"), "%s", detail);
        int cte_scan = strncmp(detail, "SCAN ", 5) == 0 && strlen(detail) == 7;
        scans_in_a_row = cte_scan ? scans_in_a_row + 1 : 0;
        most = scans_in_a_row > most ? scans_in_a_row : most;
    }
    ck_assert_msg(most == 1, "%d scans of the CTEs joined in a row: a cross join", most);
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(plan_sql);
}
END_TEST

START_TEST(stages_every_row_in_order)
{
    const char *path = make_source();
    seen s = {.answer = FDX_MERGE_NEW};
    fdx_merge_stats stats = {0};
    ck_assert_int_eq(stage(path, &s, &stats), FDX_OK);
    ck_assert_str_eq(s.calls, "kbchlsae");
    ck_assert_int_eq(s.cells, 3);
    ck_assert_uint_eq(stats.cells_read, 3);
    /* misses first, in key order: a (3 a day), b (4), then the dispatch (5) */
    ck_assert_uint_eq(s.history[1], 6);
    ck_assert_uint_eq(s.history[2], 8);
    ck_assert_uint_eq(s.history[3], 10);
    ck_assert_int_eq(s.history_rows, 6);
    ck_assert_int_eq(s.foreign_origin, 0); /* its own rows carry its own identity */
    ck_assert_int_eq(s.ledger_rows, 2);
    ck_assert_int_eq(s.ledger_foreign, 0);
    ck_assert_int_eq(s.ledger_high, 2);
    ck_assert_str_eq(s.first_store_how, "read");
}
END_TEST

START_TEST(unchanged_source_is_not_read)
{
    const char *path = make_source();
    seen s = {.answer = FDX_MERGE_UNCHANGED};
    fdx_merge_stats stats = {0};
    ck_assert_int_eq(stage(path, &s, &stats), FDX_OK);
    ck_assert_str_eq(s.calls, "k");
    ck_assert_uint_eq(stats.cells_read, 0);
}
END_TEST

START_TEST(invalid_source_reaches_the_target_as_one_message)
{
    const char *path = make_source();
    sqlite3 *raw;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(raw,
                                  "DELETE FROM cell_history WHERE day = (SELECT max(day) FROM "
                                  "cell_history) AND cell = (SELECT min(cell) FROM cell_history)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(raw);
    seen s = {.answer = FDX_MERGE_NEW};
    fdx_merge_stats stats = {0};
    ck_assert_int_eq(stage(path, &s, &stats), FDX_ENOTSTORE);
    ck_assert_str_eq(s.calls, "kbchfe"); /* no apply; end all the same */
    ck_assert_ptr_nonnull(strstr(s.failed, "src.db"));
    ck_assert_ptr_nonnull(strstr(s.failed, "does not add up to its count"));
    ck_assert_uint_eq(stats.cells_read, 0);
}
END_TEST

Suite *merge_stage_suite(void)
{
    Suite *s = suite_create("merge_stage");
    TCase *tc = tcase_create("seam");
    tcase_add_checked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_add_test(tc, stages_every_row_in_order);
    tcase_add_test(tc, merge_delta_joins_months_by_key);
    tcase_add_test(tc, unchanged_source_is_not_read);
    tcase_add_test(tc, invalid_source_reaches_the_target_as_one_message);
    suite_add_tcase(s, tc);
    return s;
}
