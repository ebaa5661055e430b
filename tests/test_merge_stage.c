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
#include "store/merge_gains.h"
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

static int stage_history(void *t, int64_t staged, int64_t day, const char *store_id, uint64_t count,
                         int pruned)
{
    seen *s = t;
    (void)day, (void)pruned;
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

/* ---- the delta: store/merge_delta.c against sql/merge_apply_delta.sql ---- */

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Counts: mostly small, so that days and months tie; sometimes near 2^63-1,
 * so that sums saturate on one side, or both. */
static int64_t random_count(void)
{
    switch (next_rand() % 8) {
    case 0: return INT64_MAX - (int64_t)(next_rand() % 3);
    case 1: return INT64_MAX / 2 + (int64_t)(next_rand() % 3);
    default: return 1 + (int64_t)(next_rand() % 4);
    }
}

/* Rows on days from mid-December 2025 to early April 2026, half of them on
 * months' first days (where either side's month buckets are). */
static void stage_random(sqlite3 *db, const char *table)
{
    static const int64_t firsts[] = {20423, 20454, 20485, 20513, 20544};
    char *sql = sqlite3_mprintf("INSERT OR REPLACE INTO temp.%s (cell, origin, day, count) "
                                "VALUES (?1, ?2, ?3, ?4)",
                                table);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_free(sql);
    for (int n = (int)(next_rand() % 24); n > 0; n--) {
        int64_t day =
            next_rand() % 2 ? firsts[next_rand() % 5] : 20440 + (int64_t)(next_rand() % 120);
        sqlite3_bind_int64(st, 1, 1 + (int64_t)(next_rand() % 3));
        sqlite3_bind_int64(st, 2, (int64_t)(next_rand() % 2));
        sqlite3_bind_int64(st, 3, day);
        sqlite3_bind_int64(st, 4, random_count());
        ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
}

/* Three staged cells, each either new to the target or its cell 10n. */
static void stage_cells(sqlite3 *db)
{
    for (int id = 1; id <= 3; id++) {
        char *sql = sqlite3_mprintf(
            "INSERT INTO temp.merge_cell (id, kind, keyed, token, backend, op, dtypes, "
            "kernel_source, kernel_revision_hash, cc_major, cc_minor, hardware_sku, "
            "driver_version, candidates, target) VALUES (%d, 'miss', 1, 'k%d', 'b', 'o', 'd', "
            "'s', 0, -1, -1, '', '', '[]', %s)",
            id, id,
            next_rand() % 2 ? "NULL"
            : id == 1       ? "10"
            : id == 2       ? "20"
                            : "30");
        ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_free(sql);
    }
}

static int64_t count_rows(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* What steps 5 to 7 left, as text: merge_delta's rows, then each staged
 * cell's gain, target and added; merge_delta is emptied and the cells'
 * working columns reset for the next run. */
static char *take_gains(sqlite3 *db)
{
    sqlite3_stmt *st;
    ck_assert_int_eq(
        sqlite3_prepare_v2(db,
                           "SELECT coalesce((SELECT group_concat(cell || ' ' || origin || ' ' || "
                           "day || ' ' || delta, ', ') FROM (SELECT * FROM temp.merge_delta "
                           "ORDER BY cell, origin, day)), '') || ' | ' || (SELECT "
                           "group_concat(id || ':' || gain || ':' || coalesce(target, '-') || "
                           "':' || added, ' ') FROM (SELECT * FROM temp.merge_cell ORDER BY id))",
                           -1, &st, NULL),
        SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    char *out = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    ck_assert_int_eq(sqlite3_exec(db,
                                  "DELETE FROM temp.merge_delta; UPDATE temp.merge_cell SET gain "
                                  "= 0, target = CASE WHEN added THEN NULL ELSE target END, added "
                                  "= 0",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    return out;
}

static void run_statement(sqlite3 *db, const char *sql, int64_t arg, int64_t *changes)
{
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_bind_parameter_count(st))
        sqlite3_bind_int64(st, 1, arg);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    if (changes)
        *changes = sqlite3_changes(db);
}

/* Steps 5 to 7 as the statements define them: the rows, the cells numbered
 * and the latest day. */
static char *gains_by_sql(sqlite3 *db, int64_t coarse, int64_t next_id, int64_t *added,
                          int64_t *max_day)
{
    run_statement(db, fdx_sql_merge_apply_delta, coarse, NULL);
    run_statement(db, fdx_sql_merge_apply_gain, 0, NULL);
    run_statement(db, fdx_sql_merge_apply_number, next_id, added);
    *max_day = count_rows(db, "SELECT coalesce(max(day), -9223372036854775807 - 1) FROM "
                              "temp.merge_delta");
    return take_gains(db);
}

/* The SQLite target's steps 5 to 7, computed in C, leave what the statements
 * that define them leave, row for row: random staged rows on both sides of
 * cells new to the target or not, months split by the coarse boundary or not,
 * bucket days and plain days meeting, sums that saturate. */
START_TEST(merge_gains_are_the_statements)
{
    static const int64_t coarse[] = {-2147483648LL, 20454, 20485, 20544, 30000};
    fdx_store *s = tu_open(tu_path(tu_dir, "gains.db"));
    sqlite3 *db = s->db;
    ck_assert_int_eq(sqlite3_exec(db, fdx_sql_merge_stage_create, NULL, NULL, NULL), SQLITE_OK);
    int by_day = 0, by_month = 0, numbered = 0;
    ck_assert_int_eq(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    for (int trial = 0; trial < 2000; trial++) {
        ck_assert_int_eq(sqlite3_exec(db,
                                      "DELETE FROM temp.merge_src; DELETE FROM temp.merge_tgt; "
                                      "DELETE FROM temp.merge_cell",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
        stage_cells(db);
        stage_random(db, "merge_src");
        stage_random(db, "merge_tgt");
        int64_t c = coarse[next_rand() % 5], next_id = 100 + trial, added, max_day;
        fdx_merge_gains g;
        ck_assert_int_eq(fdx_merge_gains_apply(s, c, next_id, &g), FDX_OK);
        by_day += count_rows(db, "SELECT count(*) FROM temp.merge_delta WHERE day <> "
                                 "CAST(strftime('%s', day * 86400, 'unixepoch', 'start of month') "
                                 "AS INTEGER) / 86400") > 0;
        by_month +=
            count_rows(db, "SELECT count(*) FROM temp.merge_delta AS d WHERE EXISTS "
                           "(SELECT 1 FROM temp.merge_src AS s WHERE s.cell = d.cell AND "
                           "s.origin = d.origin AND s.day > d.day AND s.day < d.day + 28)") > 0;
        numbered += g.added > 0;
        char *got = take_gains(db);
        char *want = gains_by_sql(db, c, next_id, &added, &max_day);
        ck_assert_msg(strcmp(want, got) == 0, "trial %d (coarse %lld): want [%s], got [%s]", trial,
                      (long long)c, want, got);
        ck_assert_int_eq((int64_t)g.added, added);
        ck_assert_int_eq(g.max_day, max_day);
        free(want);
        free(got);
    }
    /* both ways of giving a month's gain were taken, and new cells numbered */
    ck_assert_int_gt(by_day, 400);
    ck_assert_int_gt(by_month, 400);
    ck_assert_int_gt(numbered, 400);
    ck_assert_int_eq(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    fdx_store_close(s);
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
    tcase_add_test(tc, merge_gains_are_the_statements);
    tcase_add_test(tc, unchanged_source_is_not_read);
    tcase_add_test(tc, invalid_source_reaches_the_target_as_one_message);
    suite_add_tcase(s, tc);
    return s;
}
