/* The one-pass check of stored dtypes and candidates texts (codec/canon.h):
 * its verdict on every kind of text the encoder writes or does not write,
 * each held against the round trip it stands in for; and the messages with
 * which export refuses rows, which the check must leave as they were. */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "codec/canon.h"
#include "codec/encode.h"
#include "store/row.h"
#include "test_util.h"

/* Two candidates, one with a latency and one without; the substitutions
 * below replace the first of a given piece of it. */
#define CAND_A                                                                                     \
    "{\"impl_id\":{\"backend\":\"Cuda\",\"op\":\"MatMul\",\"dtypes\":[\"F16\",\"F32\"],"           \
    "\"kernel_source\":\"cublas\",\"kernel_revision_hash\":128162},\"latency_ns\":93561}"
#define CAND_B                                                                                     \
    "{\"impl_id\":{\"backend\":\"Vulkan\",\"op\":\"FlashAttn\",\"dtypes\":[],"                     \
    "\"kernel_source\":\"sk4\",\"kernel_revision_hash\":18446744073709551615}}"
#define CANDS "[" CAND_A "," CAND_B "]"

static fdx_store *db;
static fdx_row_reader reader[2];

static void setup(void)
{
    ck_assert_int_eq(fdx_store_open(":memory:", FDX_OPEN_CREATE, &db), FDX_OK);
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(fdx_row_reader_init(&reader[k], db, (fdx_kind)k), FDX_OK);
}

static void teardown(void)
{
    for (int k = 0; k < 2; k++)
        fdx_row_reader_free(&reader[k]);
    fdx_store_close(db);
}

/* Whether the round trip accepts a valid cell with these texts. */
static int round_trip_accepts(fdx_kind kind, const char *dtypes, size_t dn, const char *cands,
                              size_t cn)
{
    fdx_cell c = {
        kind, 1, fdx_cstr("k"),   fdx_cstr("cuda"), fdx_cstr("mm"), {dtypes, dn}, fdx_cstr("t"), 5,
        8,    0, fdx_cstr("sku"), fdx_cstr("drv")};
    const char *field;
    char err[512];
    int rc =
        fdx_row_round_trip(&reader[kind], &c, 3, (fdx_str){cands, cn}, &field, err, sizeof err);
    ck_assert_int_ne(rc, FDX_ENOMEM);
    return rc == FDX_OK;
}

/* The check's verdict on a candidates text, which must be the round trip's. */
static int cands_ok(const char *text, size_t n)
{
    fdx_canon v = fdx_canon_candidates(text, n);
    ck_assert_int_ne(v, FDX_CANON_UNSURE);
    int accepted = round_trip_accepts(FDX_KIND_DISPATCH, "[]", 2, text, n);
    ck_assert_msg(accepted == (v == FDX_CANON_YES), "verdict %d, round trip %d on %.*s", v,
                  accepted, (int)n, text);
    return v == FDX_CANON_YES;
}

/* The same for a dtypes text, in a miss and in a dispatch. */
static int dtypes_ok(const char *text, size_t n)
{
    fdx_canon v = fdx_canon_dtypes(text, n);
    ck_assert_int_ne(v, FDX_CANON_UNSURE);
    for (int k = 0; k < 2; k++) {
        int accepted = round_trip_accepts((fdx_kind)k, text, n, "[]", 2);
        ck_assert_msg(accepted == (v == FDX_CANON_YES), "verdict %d, round trip %d on %.*s", v,
                      accepted, (int)n, text);
    }
    return v == FDX_CANON_YES;
}

/* CANDS with the first `from` replaced by to[0..n). */
static int cands_with(const char *from, const char *to, size_t n)
{
    static const char base[] = CANDS;
    const char *at = strstr(base, from);
    ck_assert_ptr_nonnull(at);
    char text[4096];
    size_t head = (size_t)(at - base), tail = strlen(at + strlen(from));
    ck_assert_uint_lt(head + n + tail, sizeof text);
    memcpy(text, base, head);
    memcpy(text + head, to, n);
    memcpy(text + head + n, at + strlen(from), tail);
    return cands_ok(text, head + n + tail);
}

#define CANDS_OK(text)       cands_ok("" text, sizeof text - 1)
#define DTYPES_OK(text)      dtypes_ok("" text, sizeof text - 1)
#define CANDS_WITH(from, to) cands_with(from, "" to, sizeof to - 1)
#define STRING_OK(s)         CANDS_WITH("Cuda", s)
#define NUMBER_OK(s)         CANDS_WITH("128162", s)
#define LATENCY_OK(s)        CANDS_WITH("93561", s)

START_TEST(what_the_encoder_writes_is_canonical)
{
    char every[128];
    for (int i = 1; i < 128; i++)
        every[i - 1] = (char)i;
    every[127] = '\0';
    const char *const dts[] = {every, "F16",
                               "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"};
    fdx_candidate c[3] = {
        {{every, "op", dts, 3, "src", 0}, 1, 0},
        {{"b", every, NULL, 0, every, UINT64_MAX}, 0, 0},
        {{"", "", dts + 1, 1, "", 1}, 1, UINT64_MAX},
    };
    fdx_buf b = FDX_BUF_INIT;
    for (size_t n = 0; n <= 3; n++) {
        fdx_buf_clear(&b);
        fdx_enc_candidates(&b, c, n);
        ck_assert(cands_ok(b.data, b.len));
    }
    for (size_t n = 0; n <= 3; n++) {
        fdx_buf_clear(&b);
        fdx_enc_string_array(&b, dts, n);
        ck_assert(dtypes_ok(b.data, b.len));
    }
    fdx_buf_free(&b);
}
END_TEST

START_TEST(escapes_only_as_the_encoder_writes_them)
{
    ck_assert(STRING_OK("\\\"\\\\\\b\\f\\n\\r\\t"));
    ck_assert(STRING_OK("\\u0001\\u000b\\u000e\\u001f"));
    ck_assert(STRING_OK("/\x7f"));
    ck_assert(!STRING_OK("\\/"));
    ck_assert(!STRING_OK("\\u0041"));
    ck_assert(!STRING_OK("\\u001F"));
    ck_assert(!STRING_OK("\\u000a"));
    ck_assert(!STRING_OK("\\u0008"));
    ck_assert(!STRING_OK("\\u007f"));
    ck_assert(!STRING_OK("\\u00e9"));
    ck_assert(!STRING_OK("\\u0020"));
    ck_assert(!STRING_OK("\\ud83d\\ude00"));
    ck_assert(!STRING_OK("\\ud800"));
    ck_assert(!STRING_OK("\\udc00"));
    ck_assert(!STRING_OK("\\x41"));
    ck_assert(!STRING_OK("\\u12"));
    ck_assert(!STRING_OK("\\u00g1"));
    ck_assert(!STRING_OK("\\"));
    ck_assert(!STRING_OK("\t"));
    ck_assert(!STRING_OK("\n"));
    ck_assert(!STRING_OK("\x1f"));
}
END_TEST

START_TEST(nul_is_refused_in_every_spelling)
{
    ck_assert(!STRING_OK("\\u0000"));
    ck_assert(!CANDS_WITH("Cuda", "a\0b"));
    ck_assert(!DTYPES_OK("[\"\\u0000\"]"));
    ck_assert(!DTYPES_OK("[\"\0\"]"));
    ck_assert(!CANDS_OK("[]\0"));
}
END_TEST

START_TEST(utf8_only_when_valid)
{
    ck_assert(STRING_OK("\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80"));
    ck_assert(!STRING_OK("\xff"));
    ck_assert(!STRING_OK("\x80"));
    ck_assert(!STRING_OK("\xc0\x80"));         /* overlong */
    ck_assert(!STRING_OK("\xe0\x80\x80"));     /* overlong */
    ck_assert(!STRING_OK("\xed\xa0\x80"));     /* a surrogate */
    ck_assert(!STRING_OK("\xf4\x90\x80\x80")); /* past U+10FFFF */
    ck_assert(!STRING_OK("\xc3"));             /* cut short by the quote */
    ck_assert(!STRING_OK("\xe2\x82"));
    ck_assert(!DTYPES_OK("[\"\xc3")); /* cut short by the end */
}
END_TEST

START_TEST(numbers_in_plain_decimal_within_u64)
{
    ck_assert(NUMBER_OK("0"));
    ck_assert(NUMBER_OK("18446744073709551615"));
    ck_assert(LATENCY_OK("0"));
    ck_assert(LATENCY_OK("9"));
    ck_assert(!NUMBER_OK("18446744073709551616"));
    ck_assert(!NUMBER_OK("99999999999999999999"));
    ck_assert(!NUMBER_OK("100000000000000000000"));
    ck_assert(!NUMBER_OK("00"));
    ck_assert(!NUMBER_OK("01"));
    ck_assert(!NUMBER_OK("-0"));
    ck_assert(!NUMBER_OK("-1"));
    ck_assert(!NUMBER_OK("+1"));
    ck_assert(!NUMBER_OK("1e3"));
    ck_assert(!NUMBER_OK("1E3"));
    ck_assert(!NUMBER_OK("1.0"));
    ck_assert(!NUMBER_OK(""));
    ck_assert(!NUMBER_OK("\"5\""));
    ck_assert(!NUMBER_OK("null"));
    ck_assert(!LATENCY_OK("18446744073709551616"));
    ck_assert(!LATENCY_OK("-0"));
    ck_assert(!LATENCY_OK("null"));
    ck_assert(!LATENCY_OK("1.5"));
}
END_TEST

START_TEST(only_the_encoders_layout)
{
    ck_assert(CANDS_OK("[]"));
    ck_assert(!CANDS_OK(""));
    ck_assert(!CANDS_OK("[ ]"));
    ck_assert(!CANDS_OK("[{}]"));
    ck_assert(!CANDS_OK("null"));
    ck_assert(!CANDS_OK("[]x"));
    ck_assert(!CANDS_OK("[],"));
    ck_assert(!CANDS_OK("[" CAND_A ",]"));
    ck_assert(!CANDS_OK("[" CAND_A "][" CAND_B "]"));
    ck_assert(!CANDS_WITH("\":", "\": "));
    ck_assert(!CANDS_WITH(",", " ,"));
    ck_assert(!CANDS_WITH("}}", "}\n}"));
    ck_assert(!CANDS_WITH("\"backend\":\"Cuda\",\"op\":\"MatMul\"",
                          "\"op\":\"MatMul\",\"backend\":\"Cuda\""));
    ck_assert(!CANDS_WITH("\"backend\":\"Cuda\",", "\"backend\":\"Cuda\",\"backend\":\"Cuda\","));
    ck_assert(!CANDS_WITH(",\"latency_ns\":93561", ",\"latency_ns\":93561,\"latency_ns\":1"));
    ck_assert(!CANDS_WITH(",\"latency_ns\":93561", ",\"latency_ns\":null"));
    ck_assert(!CANDS_WITH("{\"impl_id\":", "{\"latency_ns\":1,\"impl_id\":"));
    ck_assert(!CANDS_WITH("128162}", "128162,\"x\":1}"));
    ck_assert(!CANDS_WITH("\"op\":\"MatMul\",", ""));
    ck_assert(!CANDS_WITH("\"impl_id\"", "\"impl\\u005fid\""));
    ck_assert(!CANDS_WITH("[\"F16\",\"F32\"]", "[[\"F16\"],\"F32\"]"));
    ck_assert(!CANDS_WITH("[\"F16\",\"F32\"]", "\"F16\""));
    ck_assert(!CANDS_OK("[" CAND_A "],\"count\":5"));
    ck_assert(DTYPES_OK("[]"));
    ck_assert(!DTYPES_OK(""));
    ck_assert(!DTYPES_OK("[ \"F16\"]"));
    ck_assert(!DTYPES_OK("[\"F16\",]"));
    ck_assert(!DTYPES_OK("[1]"));
    ck_assert(!DTYPES_OK("[[\"F16\"]]"));
    ck_assert(!DTYPES_OK("[\"F16\"],\"dtypes\":[\"F32\"]"));
}
END_TEST

/* A text longer than any string may be is left to the decoder, unread: the
 * pages behind it cannot be read at all. */
START_TEST(texts_longer_than_a_string_are_left_to_the_decoder)
{
    size_t n = (size_t)FDX_MAX_STRING + 1;
    void *none = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ck_assert_ptr_ne(none, MAP_FAILED);
    ck_assert_int_eq(fdx_canon_candidates(none, n), FDX_CANON_UNSURE);
    ck_assert_int_eq(fdx_canon_dtypes(none, n), FDX_CANON_UNSURE);
    munmap(none, n);
}
END_TEST

/* Exporting a store whose dispatch cells' column holds text: the message. */
static char *refusal(const char *column, const char *text, size_t n)
{
    char *dir = tu_tempdir();
    const char *path = tu_path(dir, "s.db");
    fdx_store *s = tu_open(path);
    const char *feed = tu_data("basic/input/run_0000");
    ck_assert_int_eq(tu_ingest(s, &feed, 1), FDX_OK);
    fdx_store_close(s);
    sqlite3 *raw;
    sqlite3_stmt *st;
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE dispatch_cell SET %s = ?1", column);
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_bind_text(st, 1, text, (int)n, SQLITE_STATIC), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    s = tu_open(path);
    ck_assert_int_eq(fdx_store_export(s, tu_path(dir, "out"), NULL), FDX_EDATA);
    const char *msg = fdx_store_errmsg(s), *after = strstr(msg, ": not a valid fdx store: ");
    ck_assert_ptr_nonnull(after);
    char *rest = strdup(after + 2);
    fdx_store_close(s);
    tu_rmtree(dir);
    free(dir);
    return rest;
}

#define REFUSED(column, text, want)                                                                \
    do {                                                                                           \
        char *got = refusal(column, text, sizeof text - 1);                                        \
        ck_assert_str_eq(got, "not a valid fdx store: dispatch_cell, cell 1: " want);              \
        free(got);                                                                                 \
    } while (0)

START_TEST(refused_rows_keep_their_messages)
{
    REFUSED("candidates", "[ ]",
            "candidates: not as fdx writes it (its line would not decode to the same cell)");
    REFUSED("candidates", "[1]",
            "candidates: not the compact JSON fdx writes; its line would not decode: "
            "candidates[0]: expected an object, got 1");
    REFUSED("candidates", "[" CAND_A "]x",
            "candidates: not the compact JSON fdx writes; its line would not decode: invalid JSON "
            "at byte 295");
    REFUSED("candidates", "[{\"impl_id\":{\"backend\":\"\xff\"}}]", "candidates: invalid UTF-8");
    REFUSED("candidates",
            "[{\"impl_id\":{\"backend\":\"a\",\"op\":\"b\",\"dtypes\":[],\"kernel_source\":\"c\","
            "\"kernel_revision_hash\":1},\"latency_ns\":18446744073709551616}]",
            "candidates: not the compact JSON fdx writes; its line would not decode: "
            "candidates[0].latency_ns: 18446744073709551616 is out of range");
    REFUSED("candidates", "[{\"impl_id\":{\"backend\":\"\\u0000\"}}]",
            "candidates: not the compact JSON fdx writes; its line would not decode: string holds "
            "U+0000, which fdx cannot store at byte 176");
    REFUSED("dtypes", "[\"F16\" ]",
            "dtypes: not as fdx writes it (its line would not decode to the same cell)");
    REFUSED("dtypes", "[\"\\u0041\"]",
            "dtypes: not as fdx writes it (its line would not decode to the same cell)");
    REFUSED("dtypes", "[\"\\ud800\"]",
            "dtypes: not the compact JSON fdx writes; its line would not decode: lone UTF-16 "
            "surrogate escape in string at byte 65");
    REFUSED("dtypes", "[\"F16\"",
            "dtypes: not the compact JSON fdx writes; its line would not decode: invalid JSON at "
            "byte 85");
}
END_TEST

Suite *canon_suite(void)
{
    Suite *s = suite_create("canon");
    TCase *tc = tcase_create("verdicts");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, what_the_encoder_writes_is_canonical);
    tcase_add_test(tc, escapes_only_as_the_encoder_writes_them);
    tcase_add_test(tc, nul_is_refused_in_every_spelling);
    tcase_add_test(tc, utf8_only_when_valid);
    tcase_add_test(tc, numbers_in_plain_decimal_within_u64);
    tcase_add_test(tc, only_the_encoders_layout);
    tcase_add_test(tc, texts_longer_than_a_string_are_left_to_the_decoder);
    suite_add_tcase(s, tc);
    tc = tcase_create("rows");
    tcase_add_test(tc, refused_rows_keep_their_messages);
    suite_add_tcase(s, tc);
    return s;
}
