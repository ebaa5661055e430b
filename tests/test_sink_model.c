/* The sink's record cache against the store's record calls (no cache), over
 * random operations that rewrite the strings records point to: the sink's
 * flush must equal the store's export, and both must refuse the same
 * records. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink_ops.h"
#include "test_util.h"

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static void agree(const uint8_t *bytes, size_t n)
{
    char *dir = tu_tempdir();
    fdx_sink *sink = fdx_sink_new();
    fdx_store *db = tu_open(tu_path(dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    sink_ops o = {.data = bytes, .n = n};
    sink_ops_run(&o, sink, db);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    char *want = tu_export(db, tu_path(dir, "store"));
    ck_assert_int_eq(fdx_sink_flush_all(sink, tu_path(dir, "sink"), NULL, NULL), FDX_OK);
    char *m = tu_read_file(tu_path(dir, "sink/misses.jsonl"), NULL);
    char *d = tu_read_file(tu_path(dir, "sink/dispatches.jsonl"), NULL);
    char *got;
    ck_assert_int_ne(asprintf(&got, "%s--\n%s", m, d), -1);
    ck_assert_str_eq(got, want);
    ck_assert_uint_eq(fdx_sink_dropped(sink), o.refused_by_store);
    ck_assert_uint_gt(o.recorded, o.refused_by_store);
    free(m);
    free(d);
    free(got);
    free(want);
    fdx_store_close(db);
    fdx_sink_free(sink);
    tu_rmtree(dir);
    free(dir);
}

START_TEST(sink_agrees_with_the_store)
{
    enum { BYTES = 30000 };
    uint8_t *bytes = malloc(BYTES);
    uint64_t state = 0x9E3779B97F4A7C15ull * (uint64_t)(_i + 1);
    for (size_t k = 0; k < BYTES; k++)
        bytes[k] = (uint8_t)(next_random(&state) >> 24);
    agree(bytes, BYTES);
    free(bytes);
}
END_TEST

Suite *sink_model_suite(void)
{
    Suite *s = suite_create("sink_model");
    TCase *tc = tcase_create("model");
    tcase_add_loop_test(tc, sink_agrees_with_the_store, 0, 40);
    suite_add_tcase(s, tc);
    return s;
}
