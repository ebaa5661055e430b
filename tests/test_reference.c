/* The reference sink's own tests (telemetry_sink.rs), ported to the store:
 * records go in through the C API and come back out through export. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ref_records.h"
#include "test_util.h"

static fdx_store *db;

static void setup(void)
{
    tu_dir_setup();
    db = tu_open(tu_path(tu_dir, "store.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
}

static void teardown(void)
{
    fdx_store_close(db);
    tu_dir_teardown();
}

static void commit(void)
{
    ck_assert_msg(fdx_store_commit(db, NULL) == FDX_OK, "%s", fdx_store_errmsg(db));
}

static uint64_t miss_cells(void)
{
    uint64_t m, d;
    ck_assert_int_eq(fdx_store_cell_counts(db, &m, &d), FDX_OK);
    return m;
}

static uint64_t dispatch_cells(void)
{
    uint64_t m, d;
    ck_assert_int_eq(fdx_store_cell_counts(db, &m, &d), FDX_OK);
    return d;
}

static char *export_file(const char *name)
{
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    free(out);
    return tu_read_file(tu_path(tu_path(tu_dir, "out"), name), NULL);
}

#define CPU_HW                                                                                     \
    "\"hw\":{\"hardware_sku\":\"Intel(R) Core(TM) i9-14900K\",\"driver_version\":\"n/a\"}"
#define IMPL(src)                                                                                  \
    "{\"backend\":\"Cuda\",\"op\":\"MatMul\",\"dtypes\":[\"F16\",\"F16\",\"F16\"],"                \
    "\"kernel_source\":\"" src "\",\"kernel_revision_hash\":2748}"

START_TEST(generic_only_cell_emits_one_aggregated_miss_record)
{
    fdx_miss m = ref_miss("matmul:innerdiv16:vec8:f16", "baracuda-generic-strided");
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
    commit();
    ck_assert_uint_eq(miss_cells(), 1);
    char *body = export_file("misses.jsonl");
    ck_assert_str_eq(body,
                     "{\"schema\":2,\"wanted\":\"matmul:innerdiv16:vec8:f16\",\"fallback\":" IMPL(
                         "baracuda-generic-strided") ",\"count\":3," CPU_HW "}\n");
    free(body);
}
END_TEST

START_TEST(distinct_fallbacks_are_distinct_cells)
{
    fdx_miss a = ref_miss("matmul:k", "baracuda-generic-strided");
    fdx_miss b = ref_miss("matmul:k", "portable-cpu-strided");
    ck_assert_int_eq(fdx_store_record_miss(db, &a), FDX_OK);
    ck_assert_int_eq(fdx_store_record_miss(db, &b), FDX_OK);
    commit();
    ck_assert_uint_eq(miss_cells(), 2);
}
END_TEST

START_TEST(flush_writes_valid_jsonl_that_round_trips)
{
    fdx_miss m = ref_miss("matmul:innerdiv16:f16", "baracuda-generic-strided");
    ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
    commit();
    fdx_export_stats st;
    ck_assert_int_eq(fdx_store_export(db, tu_path(tu_dir, "out"), &st), FDX_OK);
    ck_assert_uint_eq(st.miss_lines, 1);
    char *body = tu_read_file(tu_path(tu_path(tu_dir, "out"), "misses.jsonl"), NULL);
    ck_assert_ptr_null(strstr(body, "est_speedup"));
    ck_assert_ptr_null(strstr(body, "compute_capability"));
    ck_assert_ptr_eq(strchr(body, '\n'), body + strlen(body) - 1);
    /* The exported line parses back as the same record, into a second store. */
    fdx_store *again = tu_open(tu_path(tu_dir, "again.db"));
    const char *path = tu_path(tu_path(tu_dir, "out"), "misses.jsonl");
    ck_assert_int_eq(tu_ingest(again, &path, 1), FDX_OK);
    char *body2 = tu_export(again, tu_path(tu_dir, "out2"));
    ck_assert_ptr_nonnull(strstr(body2, body));
    fdx_store_close(again);
    free(body);
    free(body2);
}
END_TEST

START_TEST(empty_sink_flushes_empty_file)
{
    commit();
    fdx_export_stats st;
    ck_assert_int_eq(fdx_store_export(db, tu_path(tu_dir, "out"), &st), FDX_OK);
    ck_assert_uint_eq(st.miss_lines + st.dispatch_lines, 0);
    size_t n = 99;
    free(tu_read_file(tu_path(tu_path(tu_dir, "out"), "misses.jsonl"), &n));
    ck_assert_uint_eq(n, 0);
    free(tu_read_file(tu_path(tu_path(tu_dir, "out"), "dispatches.jsonl"), &n));
    ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(dispatch_records_aggregate_by_cell_and_keep_candidates)
{
    fdx_candidate c = {ref_impl("baracuda"), 1, 41230};
    fdx_dispatch detailed = ref_dispatch("mm:innerdiv16", "baracuda", &c, 1);
    fdx_dispatch coarse = ref_dispatch("mm:innerdiv16", "baracuda", NULL, 0);
    ck_assert_int_eq(fdx_store_record_dispatch(db, &detailed), FDX_OK);
    ck_assert_int_eq(fdx_store_record_dispatch(db, &coarse), FDX_OK);
    commit();
    ck_assert_uint_eq(dispatch_cells(), 1);
    char *body = export_file("dispatches.jsonl");
    ck_assert_str_eq(
        body,
        "{\"schema\":2,\"structure_key\":\"mm:innerdiv16\",\"chosen\":" IMPL(
            "baracuda") ",\"candidates\":[{\"impl_id\":" IMPL("baracuda") ",\"latency_ns\":41230}],"
                                                                          "\"count\":2," CPU_HW
                                                                          "}\n");
    free(body);
}
END_TEST

START_TEST(distinct_chosen_are_distinct_dispatch_cells)
{
    fdx_dispatch a = ref_dispatch("mm", "baracuda", NULL, 0);
    fdx_dispatch b = ref_dispatch("mm", "cublas", NULL, 0);
    ck_assert_int_eq(fdx_store_record_dispatch(db, &a), FDX_OK);
    ck_assert_int_eq(fdx_store_record_dispatch(db, &b), FDX_OK);
    commit();
    ck_assert_uint_eq(dispatch_cells(), 2);
}
END_TEST

START_TEST(flush_all_writes_separate_files)
{
    fdx_miss m = ref_miss("matmul:innerdiv16:f16", "baracuda-generic-strided");
    fdx_candidate c = {ref_impl("baracuda"), 1, 41230};
    fdx_dispatch d = ref_dispatch("mm:innerdiv16", "baracuda", &c, 1);
    ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
    ck_assert_int_eq(fdx_store_record_dispatch(db, &d), FDX_OK);
    commit();
    fdx_export_stats st;
    ck_assert_int_eq(fdx_store_export(db, tu_path(tu_dir, "out"), &st), FDX_OK);
    ck_assert_uint_eq(st.miss_lines, 1);
    ck_assert_uint_eq(st.dispatch_lines, 1);
    char *mb = tu_read_file(tu_path(tu_path(tu_dir, "out"), "misses.jsonl"), NULL);
    char *db_ = tu_read_file(tu_path(tu_path(tu_dir, "out"), "dispatches.jsonl"), NULL);
    ck_assert_ptr_nonnull(strstr(mb, "\"wanted\":"));
    ck_assert_ptr_null(strstr(mb, "\"chosen\":"));
    ck_assert_ptr_nonnull(strstr(db_, "\"chosen\":" IMPL("baracuda")));
    ck_assert_ptr_nonnull(strstr(db_, "\"latency_ns\":41230"));
    ck_assert_ptr_null(strstr(db_, "\"wanted\":"));
    free(mb);
    free(db_);
}
END_TEST

Suite *reference_suite(void)
{
    Suite *s = suite_create("reference");
    TCase *tc = tcase_create("sink");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, generic_only_cell_emits_one_aggregated_miss_record);
    tcase_add_test(tc, distinct_fallbacks_are_distinct_cells);
    tcase_add_test(tc, flush_writes_valid_jsonl_that_round_trips);
    tcase_add_test(tc, empty_sink_flushes_empty_file);
    tcase_add_test(tc, dispatch_records_aggregate_by_cell_and_keep_candidates);
    tcase_add_test(tc, distinct_chosen_are_distinct_dispatch_cells);
    tcase_add_test(tc, flush_all_writes_separate_files);
    suite_add_tcase(s, tc);
    return s;
}
