/* The wire codec: decoding every record shape, every error of docs/FORMAT.md
 * ("Errors"), exact u64 digits, and the writer's escaping. */
#include <check.h>
#include <cjson/cJSON.h>
#include <locale.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cell/agg.h"
#include "cell/cell.h"
#include "cell/key_order.h"
#include "codec/decode.h"
#include "codec/decode_fast.h"
#include "codec/encode.h"
#include "codec/record_cell.h"
#include "common/sha256.h"
#include "common/u64.h"
#include "ingest/line_memo.h"

#define IMPL_A                                                                                     \
    "{\"backend\":\"Cuda\",\"op\":\"MatMul\",\"dtypes\":[\"F16\",\"F16\"],"                        \
    "\"kernel_source\":\"baracuda\",\"kernel_revision_hash\":2748}"
#define HW_GPU     "{\"compute_capability\":[8,9],\"hardware_sku\":\"RTX\",\"driver_version\":\"552\"}"
#define MISS(body) "{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_A body "}"

static fdx_decoder *dec;
static char err[512];

static void setup(void)
{
    dec = fdx_decoder_new(0);
}
static void teardown(void)
{
    fdx_decoder_free(dec);
}

static int decode(const char *line, fdx_record *rec)
{
    err[0] = '\0';
    return fdx_decode_line(dec, line, strlen(line), rec, err, sizeof err);
}

/* Re-encodes a decoded record as one exported line. */
static char *reencode(const fdx_record *rec)
{
    fdx_buf dtypes = FDX_BUF_INIT, cands = FDX_BUF_INIT, line = FDX_BUF_INIT;
    fdx_cell cell;
    char e[256];
    int rc = rec->kind == FDX_KIND_MISS
                 ? fdx_cell_from_miss(&cell, &rec->miss, 0, &dtypes, e, sizeof e)
                 : fdx_cell_from_dispatch(&cell, &rec->dispatch, 0, &dtypes, &cands, e, sizeof e);
    ck_assert_msg(rc == FDX_OK, "%s", e);
    fdx_str c = {cands.data ? cands.data : "[]", cands.data ? cands.len : 2};
    uint64_t count = rec->kind == FDX_KIND_MISS ? rec->miss.count : rec->dispatch.count;
    fdx_enc_cell_line(&line, &cell, count, c);
    fdx_buf_free(&dtypes);
    fdx_buf_free(&cands);
    return line.data;
}

START_TEST(decodes_a_miss)
{
    fdx_record r;
    ck_assert_int_eq(decode(MISS(",\"count\":3,\"hw\":" HW_GPU), &r), FDX_OK);
    ck_assert_int_eq(r.kind, FDX_KIND_MISS);
    ck_assert_str_eq(r.miss.wanted, "w");
    ck_assert_str_eq(r.miss.fallback.backend, "Cuda");
    ck_assert_uint_eq(r.miss.fallback.n_dtypes, 2);
    ck_assert_str_eq(r.miss.fallback.dtypes[1], "F16");
    ck_assert_uint_eq(r.miss.fallback.kernel_revision_hash, 2748);
    ck_assert_uint_eq(r.miss.count, 3);
    ck_assert_int_eq(r.miss.hw.has_compute_capability, 1);
    ck_assert_uint_eq(r.miss.hw.cc_major, 8);
    ck_assert_uint_eq(r.miss.hw.cc_minor, 9);
}
END_TEST

START_TEST(decodes_a_dispatch_with_optional_fields)
{
    fdx_record r;
    const char *line =
        "{\"structure_key\":null,\"schema\":2,\"chosen\":" IMPL_A ",\"candidates\":["
        "{\"impl_id\":" IMPL_A ",\"latency_ns\":null},{\"impl_id\":" IMPL_A ",\"latency_ns\":0}],"
        "\"count\":0,\"hw\":{\"compute_capability\":null,\"hardware_sku\":\"cpu\","
        "\"driver_version\":\"n/a\",\"extra\":{\"nested\":[1.5,-2e3]}}}";
    ck_assert_msg(decode(line, &r) == FDX_OK, "%s", err);
    ck_assert_int_eq(r.kind, FDX_KIND_DISPATCH);
    ck_assert_ptr_null(r.dispatch.structure_key);
    ck_assert_uint_eq(r.dispatch.n_candidates, 2);
    ck_assert_int_eq(r.dispatch.candidates[0].has_latency, 0);
    ck_assert_int_eq(r.dispatch.candidates[1].has_latency, 1);
    ck_assert_uint_eq(r.dispatch.candidates[1].latency_ns, 0);
    ck_assert_uint_eq(r.dispatch.count, 0);
    ck_assert_int_eq(r.dispatch.hw.has_compute_capability, 0);
}
END_TEST

START_TEST(absent_candidates_are_empty)
{
    fdx_record r;
    ck_assert_int_eq(decode("{\"schema\":2,\"structure_key\":\"\",\"chosen\":" IMPL_A
                            ",\"count\":1,\"hw\":" HW_GPU "}",
                            &r),
                     FDX_OK);
    ck_assert_str_eq(r.dispatch.structure_key, "");
    ck_assert_uint_eq(r.dispatch.n_candidates, 0);
}
END_TEST

/* Values above 2^53 (double loses digits) and 2^63 (SQLite's INTEGER ends). */
START_TEST(u64_extremes_round_trip_exactly)
{
    static const char *const values[] = {"0",
                                         "9007199254740993",
                                         "9223372036854775807",
                                         "9223372036854775808",
                                         "9223372036854775809",
                                         "18446744073709551614",
                                         "18446744073709551615"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char line[1024];
        fdx_record r;
        snprintf(line, sizeof line,
                 "{\"schema\":2,\"structure_key\":\"k\",\"chosen\":{\"backend\":\"B\",\"op\":"
                 "\"O\",\"dtypes\":[],\"kernel_source\":\"s\",\"kernel_revision_hash\":%s},"
                 "\"candidates\":[{\"impl_id\":{\"backend\":\"B\",\"op\":\"O\",\"dtypes\":[],"
                 "\"kernel_source\":\"s\",\"kernel_revision_hash\":%s},\"latency_ns\":%s}],"
                 "\"count\":1,\"hw\":{\"hardware_sku\":\"x\",\"driver_version\":\"y\"}}\n",
                 values[i], values[i], values[i]);
        ck_assert_msg(decode(line, &r) == FDX_OK, "%s: %s", values[i], err);
        char *out = reencode(&r);
        ck_assert_str_eq(out, line);
        free(out);
    }
}
END_TEST

typedef struct bad_case {
    const char *line;
    const char *reason; /* a substring of the message */
} bad_case;

static const bad_case bad_cases[] = {
    {MISS(",\"count\":-3,\"hw\":" HW_GPU), "count: expected an unsigned integer, got -3"},
    {MISS(",\"count\":1.5,\"hw\":" HW_GPU), "count: expected an unsigned integer, got 1.5"},
    {MISS(",\"count\":1e3,\"hw\":" HW_GPU), "count: expected an unsigned integer, got 1e3"},
    {MISS(",\"count\":18446744073709551616,\"hw\":" HW_GPU),
     "count: 18446744073709551616 is out of range"},
    {MISS(",\"count\":\"1\",\"hw\":" HW_GPU), "count: expected an unsigned integer, got a string"},
    {MISS(",\"count\":1"), "hw: missing"},
    {MISS(",\"hw\":" HW_GPU), "count: missing"},
    {MISS(",\"count\":1,\"hw\":{\"compute_capability\":[8],\"hardware_sku\":\"a\","
          "\"driver_version\":\"b\"}"),
     "hw.compute_capability: expected [major, minor], got an array"},
    {MISS(",\"count\":1,\"hw\":{\"compute_capability\":[8,4294967296],\"hardware_sku\":\"a\","
          "\"driver_version\":\"b\"}"),
     "hw.compute_capability[1]: 4294967296 is out of range"},
    {MISS(",\"count\":1,\"hw\":{\"hardware_sku\":\"a\"}"), "hw.driver_version: missing"},
    {MISS(",\"count\":1,\"count\":2,\"hw\":" HW_GPU), "duplicate key \"count\""},
    {MISS(",\"count\":1,\"hw\":{\"hardware_sku\":\"a\",\"hardware_sku\":\"a\","
          "\"driver_version\":\"b\"}"),
     "hw: duplicate key \"hardware_sku\""},
    {"{\"schema\":1,\"wanted\":\"w\"}",
     "schema: unsupported version 1 (this build reads schema 2)"},
    {"{\"schema\":3,\"wanted\":\"w\"}", "schema: unsupported version 3"},
    {"{\"schema\":2.0,\"wanted\":\"w\"}", "schema: unsupported version 2.0"},
    {"{\"schema\":\"2\",\"wanted\":\"w\"}", "schema: expected 2, got a string"},
    {"{\"wanted\":\"w\"}", "schema: missing"},
    {"{\"schema\":2,\"wanted\":null}", "wanted: expected a string, got null"},
    {"{\"schema\":2,\"wanted\":\"w\",\"fallback\":{\"backend\":\"B\",\"op\":\"O\",\"dtypes\":[1]}}",
     "fallback.dtypes[0]: expected a string, got 1"},
    {"{\"schema\":2,\"wanted\":\"w\",\"fallback\":{\"backend\":\"B\",\"op\":\"O\"}}",
     "fallback.dtypes: missing"},
    {"{\"schema\":2,\"wanted\":\"w\",\"fallback\":[]}",
     "fallback: expected an object, got an array"},
    {"{\"schema\":2,\"structure_key\":5}", "structure_key: expected a string or null, got 5"},
    {"{\"schema\":2,\"chosen\":" IMPL_A ",\"candidates\":null,\"count\":1,\"hw\":" HW_GPU "}",
     "candidates: expected an array, got null"},
    {"{\"schema\":2,\"chosen\":" IMPL_A ",\"candidates\":[{\"impl_id\":" IMPL_A
     ",\"latency_ns\":-1}],\"count\":1,\"hw\":" HW_GPU "}",
     "candidates[0].latency_ns: expected an unsigned integer, got -1"},
    {"{\"schema\":2,\"chosen\":" IMPL_A ",\"candidates\":[3],\"count\":1,\"hw\":" HW_GPU "}",
     "candidates[0]: expected an object, got 3"},
    {"{\"schema\":2,\"chosen\":" IMPL_A ",\"candidates\":[{}],\"count\":1,\"hw\":" HW_GPU "}",
     "candidates[0].impl_id: missing"},
    {"{\"schema\":2,\"wanted\":\"a\xff\"}", "invalid UTF-8 at byte 24"},
    {"{\"schema\":2,\"wanted\":\"\xc0\xaf\"}", "invalid UTF-8"},
    {"{\"schema\":2,\"wanted\":\"\xed\xa0\x80\"}", "invalid UTF-8"},
    {"{\"schema\":2,\"wanted\":\"a\\u0000b\"}", "U+0000"},
    {"{\"schema\":2,\"wanted\":\"\\ud800\"}", "lone UTF-16 surrogate"},
    {"{\"schema\":2,\"wanted\":\"\\udc00\\ud800\"}", "lone UTF-16 surrogate"},
    {"{\"schema\":2,\"wanted\":\"\\ud800\\u0041\"}", "lone UTF-16 surrogate"},
    {"{\"schema\":2,\"wanted\":\"\\x\"}", "invalid escape"},
    {"{\"schema\":2,\"wanted\":\"tab\there\"}", "unescaped control character"},
    {"{\"schema\":2,\"x\":[[[[[1]]]]]}", "nesting deeper than 5 levels"},
    {"{\"schema\":2,\"wanted\":\"w\"} x", "trailing bytes"},
    {"{\"schema\":2}{\"schema\":2}", "trailing bytes"},
    {"[{\"schema\":2}]", "not a JSON object"},
    {"\"text\"", "not a JSON object"},
    {"\xEF\xBB\xBF{\"schema\":2}", "not a JSON object (it starts with a UTF-8 byte order mark"},
    {"{\"schema\":02}", "invalid number"},
    {"{\"schema\":2,}", "invalid JSON"},
    {"{\"schema\":2", "invalid JSON"},
    {"{\"schema\":2,\"wanted\":\"w", "unterminated string"},
    {"{\"schema\":2,\x01\"wanted\":\"w\"}", "control character outside a string"},
};

START_TEST(rejects_bad_line)
{
    const bad_case *c = &bad_cases[_i];
    fdx_record r;
    ck_assert_msg(decode(c->line, &r) == FDX_EDATA, "accepted: %s", c->line);
    ck_assert_msg(strstr(err, c->reason), "line %s\n  got:  %s\n  want: %s", c->line, err,
                  c->reason);
}
END_TEST

START_TEST(surrogate_pairs_and_escapes_decode)
{
    fdx_record r;
    const char *line = MISS(",\"count\":1,\"hw\":{\"hardware_sku\":\"\\ud83d\\ude00\\/\\u00e9\","
                            "\"driver_version\":\"\\u001f\"}");
    ck_assert_msg(decode(line, &r) == FDX_OK, "%s", err);
    ck_assert_str_eq(r.miss.hw.hardware_sku, "\xf0\x9f\x98\x80/\xc3\xa9");
    ck_assert_str_eq(r.miss.hw.driver_version, "\x1f");
}
END_TEST

START_TEST(writer_escapes_exactly)
{
    fdx_buf b = FDX_BUF_INIT;
    const char in[] = "\"\\/\x7f\xc3\xa9\b\f\n\r\t\x01\x1f";
    fdx_enc_string(&b, in, sizeof in - 1);
    ck_assert_str_eq(b.data, "\"\\\"\\\\/\x7f\xc3\xa9\\b\\f\\n\\r\\t\\u0001\\u001f\"");
    fdx_buf_free(&b);
}
END_TEST

/* The writer copies runs of plain bytes a word at a time: every byte value,
 * at every offset of strings up to three words long, against a byte-by-byte
 * rendering of docs/FORMAT.md's escaping. */
static void escape_slowly(fdx_buf *b, const unsigned char *s, size_t n)
{
    static const char shortened[] = "\"\\\b\f\n\r\t", letters[] = "\"\\bfnrt";
    fdx_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        char e[8];
        const char *at = s[i] ? strchr(shortened, s[i]) : NULL;
        if (at)
            snprintf(e, sizeof e, "\\%c", letters[at - shortened]);
        else if (s[i] < 0x20)
            snprintf(e, sizeof e, "\\u%04x", s[i]);
        else
            snprintf(e, sizeof e, "%c", s[i]);
        fdx_buf_puts(b, e);
    }
    fdx_buf_putc(b, '"');
}

START_TEST(writer_escapes_every_byte_at_every_offset)
{
    fdx_buf got = FDX_BUF_INIT, want = FDX_BUF_INIT;
    unsigned char s[24];
    for (size_t n = 1; n <= sizeof s; n++)
        for (size_t at = 0; at < n; at++)
            for (int c = 0; c < 256; c++) {
                memset(s, 'a', n);
                s[at] = (unsigned char)c;
                fdx_buf_clear(&got);
                fdx_buf_clear(&want);
                fdx_enc_string(&got, (const char *)s, n);
                escape_slowly(&want, s, n);
                ck_assert_msg(got.len == want.len && memcmp(got.data, want.data, got.len) == 0,
                              "byte %#x at %zu of %zu: %s, not %s", c, at, n, got.data, want.data);
            }
    fdx_buf_free(&got);
    fdx_buf_free(&want);
}
END_TEST

/* Every digit count, and each side of every power of ten. */
START_TEST(u64_text_at_every_length)
{
    for (uint64_t p = 1;; p *= 10) {
        const uint64_t values[] = {p - 1, p, p + 1, p * 2 - 1, p * 9 + (p - 1)};
        for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
            char want[32], got[FDX_U64_DIGITS + 1];
            snprintf(want, sizeof want, "%llu", (unsigned long long)values[i]);
            got[fdx_u64_format(values[i], got)] = '\0';
            ck_assert_str_eq(got, want);
        }
        if (p > UINT64_MAX / 10)
            break;
    }
    char got[FDX_U64_DIGITS + 1];
    got[fdx_u64_format(UINT64_MAX, got)] = '\0';
    ck_assert_str_eq(got, "18446744073709551615");
}
END_TEST

/* Random mutations of a valid line never crash and either decode or explain. */
/* What the line memo learns from a decoded line, and how it finds it again. */
static int memo_learn_line(fdx_line_memo *m, const char *line, fdx_buf *packed, fdx_buf *cands)
{
    fdx_line_cell lc;
    if (fdx_line_memo_find(m, line, strlen(line), &lc))
        return 1;
    fdx_record rec;
    fdx_cell cell;
    fdx_buf dtypes = FDX_BUF_INIT;
    ck_assert_int_eq(fdx_decode_line(dec, line, strlen(line), &rec, err, sizeof err), FDX_OK);
    ck_assert_int_eq(
        fdx_cell_from_dispatch(&cell, &rec.dispatch, 1, &dtypes, cands, err, sizeof err), FDX_OK);
    fdx_cell_pack(&cell, packed);
    lc.key = (fdx_str){packed->data, packed->len};
    lc.key_hash = fdx_hash_bytes(lc.key.p, lc.key.n);
    lc.count = rec.dispatch.count;
    lc.cands = (fdx_str){cands->data, cands->len};
    fdx_line_memo_learn(m, line, strlen(line), dec, rec.dispatch.n_candidates, &lc);
    fdx_buf_free(&dtypes);
    return 0;
}

#define CAND(lat) "{\"impl_id\":" IMPL_A ",\"latency_ns\":" lat "}"
#define DISP_C(cands, count)                                                                       \
    "{\"schema\":2,\"chosen\":" IMPL_A ",\"candidates\":[" cands "],\"count\":" count              \
    ",\"hw\":" HW_GPU "}"

/* A dispatch line seen again with another count and other latencies is found
 * without parsing, with its candidates re-spliced; other shapes are not. */
/* Line i of pass `pass`: its own structure key, a count that changes. */
static const char *memo_line(char *buf, size_t size, int i, int pass)
{
    snprintf(buf, size,
             "{\"schema\":2,\"structure_key\":\"k%d\",\"chosen\":" IMPL_A
             ",\"candidates\":[" CAND("5") "],\"count\":%d,\"hw\":" HW_GPU "}",
             i, pass + 1);
    return buf;
}

static int by_export_order(const void *a, const void *b)
{
    const fdx_cell *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return fdx_cell_compare(x, y);
}

/* The aggregate's key order is the export order, for tokens and sources that
 * are prefixes of each other, hold NUL bytes or differ past their eighth
 * byte, and for revisions on both sides of the top bit; at sizes around the
 * powers of two, where the sort's last merge joins runs of unequal length. */
static void check_key_order(int cells, unsigned seed)
{
    static const fdx_str strs[] = {{"", 0},          {"a", 1},        {"a\0", 2},
                                   {"a\0b", 3},      {"ab", 2},       {"abcdefgh", 8},
                                   {"abcdefghi", 9}, {"abcdefgi", 8}, {"\xff", 1}};
    static const uint64_t revs[] = {0, 1, UINT64_C(1) << 63, UINT64_MAX, 42};
    enum { NS = sizeof strs / sizeof strs[0] };
    fdx_agg *agg = fdx_agg_new();
    for (int i = 0; i < cells; i++) {
        fdx_cell c = {0};
        seed = seed * 1103515245u + 12345u;
        c.kind = (seed >> 4) & 1 ? FDX_KIND_DISPATCH : FDX_KIND_MISS;
        c.keyed = c.kind == FDX_KIND_MISS || ((seed >> 5) & 1);
        c.token = c.keyed ? strs[(seed >> 8) % NS] : strs[0];
        c.kernel_source = strs[(seed >> 12) % NS];
        c.revision = revs[(seed >> 16) % 5];
        c.backend = strs[(seed >> 19) % 3];
        c.op = strs[(seed >> 21) % 2];
        c.dtypes_json = (fdx_str){"[]", 2};
        c.cc_major = c.cc_minor = (int64_t)((seed >> 23) % 3) - 1;
        c.sku = strs[(seed >> 25) % 2];
        c.driver = strs[(seed >> 27) % 2];
        ck_assert_int_eq(fdx_agg_add(agg, &c, 1, FDX_NO_CANDS), FDX_OK);
    }
    size_t n = fdx_agg_cells(agg);
    uint32_t *order;
    ck_assert_int_eq(fdx_agg_key_order(agg, &order), FDX_OK);
    fdx_cell *want = calloc(n ? n : 1, sizeof *want);
    for (size_t i = 0; i < n; i++) {
        uint64_t count;
        fdx_str cands;
        fdx_agg_get(agg, i, &want[i], &count, &cands);
    }
    qsort(want, n, sizeof *want, by_export_order);
    for (size_t i = 0; i < n; i++) {
        fdx_cell got;
        uint64_t count;
        fdx_str cands;
        fdx_agg_get(agg, order[i], &got, &count, &cands);
        ck_assert_msg(by_export_order(&got, &want[i]) == 0, "%d cells: cell %zu out of order",
                      cells, i);
    }
    free(order);
    free(want);
    fdx_agg_free(agg);
}

static int same_str(fdx_str a, fdx_str b)
{
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* Packing keeps every field exactly, whatever the lengths (one-byte and
 * longer varints, empty strings) and numbers (absent, negative, extreme). */
START_TEST(packed_cells_unpack_to_themselves)
{
    static const int64_t ccs[] = {FDX_CC_ABSENT, 0,   1,  63,        64,       127,
                                  128,           300, -2, INT64_MAX, INT64_MIN};
    static const size_t lens[] = {0, 1, 127, 128, 16383, 16384, 70000};
    char *text = malloc(70000);
    ck_assert_ptr_nonnull(text);
    for (size_t i = 0; i < 70000; i++)
        text[i] = (char)('a' + i % 26);
    fdx_buf packed = FDX_BUF_INIT;
    for (size_t k = 0; k < sizeof ccs / sizeof ccs[0]; k++)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            fdx_str s = {text, lens[l]},
                    t = {text + 1, lens[(l + 3) % 7] ? lens[(l + 3) % 7] - 1 : 0};
            fdx_cell c = {(fdx_kind)(k % 2),
                          (int)(l % 2),
                          s,
                          t,
                          s,
                          t,
                          s,
                          UINT64_MAX - k * 0x0101010101010101u,
                          ccs[k],
                          ccs[(k + 5) % 11],
                          t,
                          s};
            fdx_cell_pack(&c, &packed);
            ck_assert(!packed.oom);
            ck_assert_uint_le(packed.len, 1 + 8 + 2 * 10 + 7 * 3 + 4 * lens[l] + 3 * t.n);
            fdx_cell u;
            fdx_cell_unpack(&u, packed.data, packed.len);
            ck_assert_int_eq(u.kind, c.kind);
            ck_assert_int_eq(u.keyed, c.keyed);
            ck_assert_uint_eq(u.revision, c.revision);
            ck_assert_int_eq(u.cc_major, c.cc_major);
            ck_assert_int_eq(u.cc_minor, c.cc_minor);
            ck_assert(same_str(u.token, c.token) && same_str(u.backend, c.backend) &&
                      same_str(u.op, c.op) && same_str(u.dtypes_json, c.dtypes_json) &&
                      same_str(u.kernel_source, c.kernel_source) && same_str(u.sku, c.sku) &&
                      same_str(u.driver, c.driver));
            ck_assert_int_eq(fdx_cell_compare(&u, &c), 0);
            ck_assert(u.driver.p + u.driver.n == packed.data + packed.len);
        }
    fdx_buf_free(&packed);
    free(text);
}
END_TEST

START_TEST(key_order_is_the_export_order)
{
    static const int sizes[] = {0, 1, 2, 3, 5, 7, 9, 63, 65, 127, 129, 1000, 3000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (unsigned seed = 1; seed <= 4; seed++)
            check_key_order(sizes[k], seed * 7);
}
END_TEST

static fdx_cell miss_named(const char *wanted)
{
    return (fdx_cell){.kind = FDX_KIND_MISS,
                      .keyed = 1,
                      .token = fdx_cstr(wanted),
                      .backend = fdx_cstr("Cuda"),
                      .op = fdx_cstr("MatMul"),
                      .dtypes_json = fdx_cstr("[\"F16\"]"),
                      .kernel_source = fdx_cstr("src"),
                      .cc_major = -1,
                      .cc_minor = -1,
                      .sku = fdx_cstr("c"),
                      .driver = fdx_cstr("d")};
}

/* An aggregate shrunk after an undo keeps its cells, counts and lists,
 * finds them again, takes new ones, and holds less than before; a marked
 * one is left alone, since its undo log is still needed. */
START_TEST(a_shrunk_aggregate_keeps_its_cells)
{
    enum { KEEP = 3000, MORE = 40000 };
    fdx_agg *agg = fdx_agg_new();
    char wanted[32];
    const char *cands = "[{\"impl\":1}]";
    for (int i = 0; i < KEEP + MORE; i++) {
        if (i == KEEP)
            fdx_agg_mark(agg);
        snprintf(wanted, sizeof wanted, "w%d", i);
        fdx_cell c = miss_named(wanted);
        ck_assert_int_eq(fdx_agg_add(agg, &c, 2, fdx_cstr(cands)), FDX_OK);
    }
    size_t full = fdx_agg_allocated(agg);
    fdx_agg_shrink(agg);
    ck_assert_uint_eq(fdx_agg_allocated(agg), full);
    fdx_agg_undo(agg);
    ck_assert_uint_eq(fdx_agg_cells(agg), KEEP);
    fdx_agg_shrink(agg);
    ck_assert_uint_lt(fdx_agg_allocated(agg), full / 8);
    ck_assert_uint_le(fdx_agg_allocated(agg), fdx_agg_bytes(agg) + 64);
    for (int i = 0; i < KEEP + 10; i++) {
        snprintf(wanted, sizeof wanted, "w%d", i);
        fdx_cell c = miss_named(wanted);
        ck_assert_int_eq(fdx_agg_add(agg, &c, 1, FDX_NO_CANDS), FDX_OK);
    }
    ck_assert_uint_eq(fdx_agg_cells(agg), KEEP + 10);
    for (size_t i = 0; i < KEEP + 10; i++) {
        fdx_cell c;
        uint64_t count;
        fdx_str got;
        fdx_agg_get(agg, i, &c, &count, &got);
        snprintf(wanted, sizeof wanted, "w%zu", i);
        ck_assert_msg(fdx_str_compare(c.token, fdx_cstr(wanted)) == 0, "cell %zu", i);
        ck_assert_uint_eq(count, i < KEEP ? 3 : 1);
        ck_assert_uint_eq(got.n, i < KEEP ? strlen(cands) : FDX_NO_CANDS.n);
    }
    fdx_agg_free(agg);
}
END_TEST

/* Adds cells first .. first+n-1 named w<i>, without lists. */
static void add_named(fdx_agg *agg, int first, int n)
{
    char wanted[32];
    for (int i = first; i < first + n; i++) {
        snprintf(wanted, sizeof wanted, "w%d", i);
        fdx_cell c = miss_named(wanted);
        ck_assert_int_eq(fdx_agg_add(agg, &c, 1, FDX_NO_CANDS), FDX_OK);
    }
}

/* A recycled aggregate holds no cell but keeps the arrays its cells filled,
 * even when those cells were undone to the mark first (as a spill does), so
 * as many cells again allocate nothing; the pages kept count as resident
 * until cells fill them, and a recycle after a smaller run gives back what
 * that run did not use, the buffer a long key was packed in and the log of
 * changes under a mark included. */
START_TEST(a_recycled_aggregate_keeps_what_its_cells_used)
{
    enum { RUN = 40000, SMALL = 2000, HUGE = 1 << 20 };
    fdx_agg *agg = fdx_agg_new();
    fdx_agg_mark(agg);
    add_named(agg, 0, RUN);
    size_t bytes = fdx_agg_bytes(agg);
    fdx_agg_undo(agg);
    fdx_agg_recycle(agg);
    ck_assert_uint_eq(fdx_agg_cells(agg), 0);
    size_t kept = fdx_agg_allocated(agg);
    ck_assert_uint_gt(kept, bytes / 2);
    ck_assert_uint_gt(fdx_agg_resident(agg), bytes / 2);
    ck_assert_uint_lt(fdx_agg_bytes(agg), bytes / 8);
    add_named(agg, 0, RUN);
    ck_assert_uint_le(fdx_agg_allocated(agg), kept + 256); /* and the key packed last */
    ck_assert_uint_le(fdx_agg_resident(agg), fdx_agg_bytes(agg) + 64);
    fdx_agg_recycle(agg);
    add_named(agg, 0, SMALL);
    fdx_agg_recycle(agg);
    ck_assert_uint_lt(fdx_agg_allocated(agg), kept / 8);
    ck_assert_uint_lt(fdx_agg_resident(agg), kept / 8);
    size_t small = fdx_agg_allocated(agg);
    char *huge = malloc(HUGE + 1); /* packed in a scratch buffer on its way in */
    memset(huge, 'h', HUGE);
    huge[HUGE] = '\0';
    fdx_cell c = miss_named(huge);
    ck_assert_int_eq(fdx_agg_add(agg, &c, 1, FDX_NO_CANDS), FDX_OK);
    free(huge);
    fdx_agg_recycle(agg);
    add_named(agg, 0, SMALL);
    fdx_agg_recycle(agg);
    ck_assert_uint_le(fdx_agg_allocated(agg), small);
    add_named(agg, 0, SMALL);
    fdx_agg_mark(agg);
    add_named(agg, 0, SMALL); /* each change logged, in case of an undo */
    fdx_agg_keep(agg);
    fdx_agg_recycle(agg);
    ck_assert_uint_le(fdx_agg_allocated(agg), small);
    fdx_agg_free(agg);
}
END_TEST

/* A memo fed lines that never come back stays small; one fed the same
 * lines run after run grows until it holds them all. */
START_TEST(line_memo_grows_only_while_it_pays)
{
    fdx_line_memo once, runs;
    memset(&once, 0, sizeof once);
    memset(&runs, 0, sizeof runs);
    fdx_buf packed = FDX_BUF_INIT, cands = FDX_BUF_INIT;
    char line[1024];
    for (int i = 0; i < 20000; i++)
        ck_assert_int_eq(
            memo_learn_line(&once, memo_line(line, sizeof line, i, 0), &packed, &cands), 0);
    ck_assert_uint_lt(once.bound, (size_t)1 << 20);
    ck_assert_uint_le(once.data.len + once.lines.keys.len, once.bound);
    for (int pass = 0; pass < 30; pass++) /* past a rest (line_memo.h) */
        for (int i = 0; i < 3000; i++)
            memo_learn_line(&runs, memo_line(line, sizeof line, i, pass), &packed, &cands);
    int found = 0;
    for (int i = 0; i < 3000; i++)
        found += memo_learn_line(&runs, memo_line(line, sizeof line, i, 30), &packed, &cands);
    ck_assert_int_eq(found, 3000);
    ck_assert_uint_gt(runs.bound, once.bound);
    fdx_line_memo_free(&once);
    fdx_line_memo_free(&runs);
    fdx_buf_free(&packed);
    fdx_buf_free(&cands);
}
END_TEST

static size_t lent_now(atomic_size_t *lent)
{
    return atomic_load(lent);
}

/* What a memo keeps past its least bound is lent from the ingest's budget,
 * and given back as it shrinks or is freed; a memo given a most grows no
 * larger than that. */
START_TEST(line_memo_lends_what_it_keeps_past_its_least_bound)
{
    atomic_size_t lent = 0;
    fdx_line_memo grown, capped;
    memset(&grown, 0, sizeof grown);
    memset(&capped, 0, sizeof capped);
    grown.lent = capped.lent = &lent;
    grown.most = SIZE_MAX;
    fdx_buf packed = FDX_BUF_INIT, cands = FDX_BUF_INIT;
    char line[1024];
    memo_learn_line(&grown, memo_line(line, sizeof line, 0, 0), &packed, &cands);
    size_t least = grown.bound;
    ck_assert_uint_gt(least, 0);
    ck_assert_uint_eq(lent_now(&lent), 0);
    capped.most = 2 * least;
    size_t most_seen = 0;
    for (int pass = 0; pass < 30; pass++)
        for (int i = 0; i < 3000; i++) {
            memo_learn_line(&grown, memo_line(line, sizeof line, i, pass), &packed, &cands);
            memo_learn_line(&capped, memo_line(line, sizeof line, i, pass), &packed, &cands);
            ck_assert_uint_eq(lent_now(&lent), grown.bound + capped.bound - 2 * least);
            most_seen = capped.bound > most_seen ? capped.bound : most_seen;
        }
    ck_assert_uint_gt(grown.bound, 2 * least);
    ck_assert_uint_eq(most_seen, 2 * least);
    fdx_line_memo_free(&grown);
    ck_assert_uint_eq(lent_now(&lent), capped.bound - least);
    fdx_line_memo_free(&capped);
    ck_assert_uint_eq(lent_now(&lent), 0);
    fdx_buf_free(&packed);
    fdx_buf_free(&cands);
}
END_TEST

/* A memo at its least bound that starts again keeps its memory: on lines
 * that never repeat it starts again every few hundred lines, and giving the
 * memory back each time only had the pages faulted in again. */
START_TEST(line_memo_at_its_least_bound_keeps_its_memory)
{
    fdx_line_memo m;
    memset(&m, 0, sizeof m);
    fdx_buf packed = FDX_BUF_INIT, cands = FDX_BUF_INIT;
    char line[1024];
    int restarts = 0;
    for (int i = 0; i < 20000 && restarts < 3; i++) {
        uint64_t starts = m.starts;
        size_t data_cap = m.data.cap, keys_cap = m.lines.keys.cap;
        snprintf(line, sizeof line,
                 "{\"schema\":2,\"structure_key\":\"%0200d\",\"chosen\":" IMPL_A
                 ",\"count\":1,\"hw\":" HW_GPU "}",
                 i);
        memo_learn_line(&m, line, &packed, &cands);
        if (m.starts == starts)
            continue;
        restarts++;
        ck_assert_uint_ge(m.data.cap, data_cap);
        ck_assert_uint_ge(m.lines.keys.cap, keys_cap);
    }
    ck_assert_int_eq(restarts, 3);
    fdx_line_memo_free(&m);
    fdx_buf_free(&packed);
    fdx_buf_free(&cands);
}
END_TEST

START_TEST(line_memo_finds_lines_with_new_latencies)
{
    fdx_line_memo m;
    memset(&m, 0, sizeof m);
    fdx_buf packed = FDX_BUF_INIT, cands = FDX_BUF_INIT;
    ck_assert_int_eq(
        memo_learn_line(&m, DISP_C(CAND("5") "," CAND("null") "," CAND("6"), "1"), &packed, &cands),
        0);
    fdx_line_cell lc;
    const char *again = DISP_C(CAND("12345") "," CAND("null") "," CAND("0"), "77");
    ck_assert(fdx_line_memo_find(&m, again, strlen(again), &lc));
    ck_assert_uint_eq(lc.count, 77);
    ck_assert_uint_eq(lc.key.n, packed.len);
    ck_assert(memcmp(lc.key.p, packed.data, packed.len) == 0);
    char want[2048];
    snprintf(want, sizeof want, "%.*s", (int)cands.len, cands.data);
    ck_assert_ptr_nonnull(strstr(want, "\"latency_ns\":5}"));
    ck_assert_int_eq(memo_learn_line(&m, again, &packed, &cands), 1);
    /* Re-encoding the line gives what the memo spliced. */
    fdx_line_memo other;
    memset(&other, 0, sizeof other);
    ck_assert_int_eq(memo_learn_line(&other, again, &packed, &cands), 0);
    ck_assert_uint_eq(lc.cands.n, cands.len);
    ck_assert(memcmp(lc.cands.p, cands.data, cands.len) == 0);
    const char *misses[] = {
        DISP_C(CAND("05") "," CAND("null") "," CAND("6"), "1"),
        DISP_C(CAND("5") "," CAND("7") "," CAND("6"), "1"),
        DISP_C(CAND("5") "," CAND("null") "," CAND("18446744073709551616"), "1"),
        DISP_C(CAND("5.0") "," CAND("null") "," CAND("6"), "1"),
    };
    for (size_t i = 0; i < sizeof misses / sizeof *misses; i++)
        ck_assert(!fdx_line_memo_find(&m, misses[i], strlen(misses[i]), &lc));
    fdx_line_memo_free(&m);
    fdx_line_memo_free(&other);
    fdx_buf_free(&packed);
    fdx_buf_free(&cands);
}
END_TEST

/* A memo asked about a window of lines it never finds rests for a while,
 * finding nothing, not even a line it knows (the last it learned: a memo
 * that never finds stays small); then it finds that line again. */
START_TEST(line_memo_rests_after_a_window_of_new_lines)
{
    fdx_line_memo m;
    memset(&m, 0, sizeof m);
    fdx_buf packed = FDX_BUF_INIT, cands = FDX_BUF_INIT;
    char line[1024];
    fdx_line_cell lc;
    for (int i = 0; i < FDX_MEMO_WINDOW; i++) {
        snprintf(line, sizeof line,
                 "{\"schema\":2,\"structure_key\":\"k%d\",\"chosen\":" IMPL_A
                 ",\"count\":1,\"hw\":" HW_GPU "}",
                 i);
        ck_assert_int_eq(memo_learn_line(&m, line, &packed, &cands), 0);
    }
    char again[1024];
    snprintf(again, sizeof again,
             "{\"schema\":2,\"structure_key\":\"k%d\",\"chosen\":" IMPL_A
             ",\"count\":9,\"hw\":" HW_GPU "}",
             FDX_MEMO_WINDOW - 1);
    for (int i = 0; i < FDX_MEMO_REST; i++)
        ck_assert_msg(!fdx_line_memo_find(&m, again, strlen(again), &lc), "found at %d", i);
    ck_assert(fdx_line_memo_find(&m, again, strlen(again), &lc));
    ck_assert_uint_eq(lc.count, 9);
    fdx_line_memo_free(&m);
    fdx_buf_free(&packed);
    fdx_buf_free(&cands);
}
END_TEST

START_TEST(mutated_lines_never_crash)
{
    const char *base = "{\"schema\":2,\"chosen\":" IMPL_A ",\"candidates\":[{\"impl_id\":" IMPL_A
                       ",\"latency_ns\":5}],\"count\":1,\"hw\":" HW_GPU "}";
    size_t n = strlen(base);
    char *line = malloc(n + 1);
    srand(12345);
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(line, base, n + 1);
        int edits = 1 + rand() % 4;
        for (int e = 0; e < edits; e++)
            line[rand() % n] = (char)(rand() % 256);
        fdx_record r;
        err[0] = '\0';
        int rc = fdx_decode_line(dec, line, n, &r, err, sizeof err);
        ck_assert(rc == FDX_OK || (rc == FDX_EDATA && err[0] != '\0'));
    }
    free(line);
}
END_TEST

/* FIPS 180-2 vectors, through both the CPU's SHA instructions (where there
 * are any) and the portable rounds, fed in uneven pieces. */
START_TEST(sha256_matches_known_digests)
{
    static const struct {
        const char *text;
        size_t repeat;
        const char *hex;
    } v[] = {
        {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
    };
    for (int portable = 0; portable < 2; portable++) {
        fdx_sha256_use_portable(portable);
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            fdx_sha256 h;
            unsigned char d[32];
            char hex[FDX_SHA256_HEX];
            fdx_sha256_init(&h);
            size_t n = strlen(v[i].text);
            for (size_t r = 0; r < v[i].repeat; r++)
                for (size_t off = 0; off < n; off += 7)
                    fdx_sha256_update(&h, v[i].text + off, n - off < 7 ? n - off : 7);
            fdx_sha256_final(&h, d);
            fdx_sha256_hex(d, hex);
            ck_assert_str_eq(hex, v[i].hex);
        }
    }
    /* Large updates go through the many-blocks-at-once path. */
    static char block[1000];
    memset(block, 'a', sizeof block);
    for (int portable = 0; portable < 2; portable++) {
        fdx_sha256 h;
        unsigned char d[32];
        char hex[FDX_SHA256_HEX];
        fdx_sha256_use_portable(portable);
        fdx_sha256_init(&h);
        fdx_sha256_update(&h, block, 3);
        for (int i = 0; i < 999; i++)
            fdx_sha256_update(&h, block, sizeof block);
        fdx_sha256_update(&h, block, 997);
        fdx_sha256_final(&h, d);
        fdx_sha256_hex(d, hex);
        ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }
    fdx_sha256_use_portable(0);
}
END_TEST

/* With the opt-in arena allocator, each decoder's record stays intact while
 * another decoder on the same thread decodes (Check runs each test in its own
 * process, so the process-wide switch stays here). */
START_TEST(arena_keeps_decoders_apart)
{
    fdx_use_fast_json_allocator();
    fdx_decoder *a = fdx_decoder_new(0), *b = fdx_decoder_new(0);
    fdx_record ra, rb;
    const char *la =
        "{\"schema\":2,\"wanted\":\"first\",\"fallback\":" IMPL_A ",\"count\":1,\"hw\":" HW_GPU "}";
    const char *lb = "{\"schema\":2,\"wanted\":\"second\",\"fallback\":" IMPL_A
                     ",\"count\":2,\"hw\":" HW_GPU "}";
    ck_assert_int_eq(fdx_decode_line(a, la, strlen(la), &ra, err, sizeof err), FDX_OK);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(fdx_decode_line(b, lb, strlen(lb), &rb, err, sizeof err), FDX_OK);
    ck_assert_str_eq(ra.miss.wanted, "first");
    ck_assert_str_eq(ra.miss.fallback.kernel_source, "baracuda");
    ck_assert_str_eq(rb.miss.wanted, "second");
    cJSON *other = cJSON_Parse("{\"plain\":[1,2,3]}"); /* cJSON elsewhere still works */
    ck_assert_ptr_nonnull(other);
    cJSON_Delete(other);
    fdx_decoder_free(a);
    fdx_decoder_free(b);
}
END_TEST

/* ---- the fast path: which lines it takes, which it leaves to the reference ---- */

#define HW_CPU "{\"hardware_sku\":\"x\",\"driver_version\":\"y\"}"
#define CANDS(c)                                                                                   \
    "{\"schema\":2,\"chosen\":" IMPL_A ",\"candidates\":[" c "],\"count\":1,\"hw\":" HW_CPU "}"
#define MISS_C(c) MISS(",\"count\":" c ",\"hw\":" HW_GPU)
/* A miss with a member no field has, of value v, first in the record. */
#define UNKNOWN(v)                                                                                 \
    "{\"schema\":2,\"extra\":" v ",\"wanted\":\"w\",\"fallback\":" IMPL_A                          \
    ",\"count\":1,\"hw\":" HW_CPU "}"
#define MISS_S(s)                                                                                  \
    "{\"schema\":2,\"wanted\":" s ",\"fallback\":" IMPL_A ",\"count\":1,\"hw\":" HW_CPU "}"

typedef struct fast_case {
    const char *line;
    int depth;     /* the nesting limit: 0 for the default */
    int fast;      /* the fast path takes it */
    int reference; /* the reference accepts it */
} fast_case;

static const fast_case fast_cases[] = {
    /* taken: the spellings feeds use, in any order, with every optional value */
    {MISS_C("3"), 0, 1, 1},
    {"{\"count\":3,\"hw\":" HW_GPU ",\"fallback\":" IMPL_A ",\"wanted\":\"w\",\"schema\":2}", 0, 1,
     1},
    {CANDS("{\"impl_id\":" IMPL_A ",\"latency_ns\":null},{\"latency_ns\":0,\"impl_id\":" IMPL_A
           "}"),
     0, 1, 1},
    {CANDS(""), 0, 1, 1},
    {"{\"schema\":2,\"structure_key\":null,\"chosen\":" IMPL_A ",\"count\":0,\"hw\":" HW_CPU "}", 0,
     1, 1},
    {MISS_C("18446744073709551615"), 0, 1, 1},
    {MISS_C("9999999999999999999"), 0, 1, 1},
    {MISS_C("10000000000000000000"), 0, 1, 1},
    {MISS(",\"count\":1,\"hw\":{\"compute_capability\":[4294967295,0],\"hardware_sku\":\"a\","
          "\"driver_version\":\"b\"}"),
     0, 1, 1},
    {MISS(",\"count\":1,\"hw\":{\"compute_capability\":null,\"hardware_sku\":\"a\",\"driver_"
          "version\":\"b\"}"),
     0, 1, 1},
    {MISS_S("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u20AC \\ud83d\\ude00\""), 0, 1, 1},
    {MISS_S("\"\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x9a\x80\""), 0, 1, 1},
    {MISS_S("\"\""), 0, 1, 1},
    {" \t{ \"schema\" : 2 ,\r\n\"wanted\":\"w\",\"fallback\":" IMPL_A
     ",\"count\": 1 ,\"hw\":" HW_CPU " }\r\n",
     0, 1, 1},
    {CANDS("{\"impl_id\":" IMPL_A "}"), 5, 1, 1},
    /* taken: members no field has, which the reference ignores, at every level, with every
     * kind of value */
    {"{\"schema\":2,\"extra\":[1,{\"a\":null}],\"wanted\":\"w\",\"fallback\":" IMPL_A
     ",\"count\":1,\"hw\":" HW_CPU "}",
     0, 1, 1},
    {MISS(",\"count\":1,\"hw\":{\"hardware_sku\":\"a\",\"driver_version\":\"b\",\"gpus\":2}"), 0, 1,
     1},
    {UNKNOWN("{}"), 0, 1, 1},
    {UNKNOWN("[]"), 0, 1, 1},
    {UNKNOWN("{ }"), 0, 1, 1},
    {UNKNOWN("[ true , false , null ]"), 0, 1, 1},
    {UNKNOWN("\"\\u00e9 \\\" æ¥\""), 0, 1, 1},
    {UNKNOWN("{\"a\":{\"b\":[\"c\"]},\"b\":1}"), 0, 1, 1},
    {UNKNOWN("[[[[1]]]]"), 0, 1, 1},
    {UNKNOWN("-0"), 0, 1, 1},
    {UNKNOWN("-12.5e-3"), 0, 1, 1},
    {UNKNOWN("1E+2"), 0, 1, 1},
    {UNKNOWN("1e999"), 0, 1, 1},
    {UNKNOWN("1234567890123456789012345678901234567890"), 0, 1, 1},
    {UNKNOWN("1,\"extra2\":2,\"count \":3,\"Count\":4"), 0, 1, 1},
    {"{\"schema\":2,\"wanted\":\"w\",\"fallback\":{\"backend\":\"Cuda\",\"variant\":\"v\",\"op\":"
     "\"MatMul\",\"dtypes\":[],\"kernel_source\":\"k\",\"kernel_revision_hash\":1},\"count\":1,"
     "\"hw\":{\"backend\":\"Cuda\",\"hardware_sku\":\"x\",\"driver_version\":\"y\"}}",
     0, 1, 1},
    {CANDS("{\"impl_id\":" IMPL_A ",\"note\":{\"runs\":[3,4]},\"latency_ns\":7}"), 0, 1, 1},
    /* left to the reference, which accepts them */
    {UNKNOWN("12345678901234567890123456789012345678901"), 0, 0, 1},
    {UNKNOWN("1234567890123456789012345678901234567890123456789012345678901234"), 0, 0, 1},
    {"{\"schema\":2,\"\\u0065xtra\":1,\"wanted\":\"w\",\"fallback\":" IMPL_A ",\"count\":1,"
     "\"hw\":" HW_CPU "}",
     0, 0, 1},
    {UNKNOWN("{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"j\":10,"
             "\"k\":11,\"l\":12,\"m\":13,\"n\":14,\"o\":15,\"p\":16,\"q\":17}"),
     0, 0, 1},
    {"{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_A ",\"co\\u0075nt\":1,\"hw\":" HW_CPU "}",
     0, 0, 1},
    {"{\"schema\":2,\"structure_key\":\"k\",\"wanted\":\"w\",\"fallback\":" IMPL_A
     ",\"count\":1,\"hw\":" HW_CPU "}",
     0, 0, 1},
    {"{\"schema\":2,\"fallback\":" IMPL_A ",\"chosen\":" IMPL_A ",\"count\":1,\"hw\":" HW_CPU "}",
     0, 0, 1},
    /* left to the reference, which rejects them */
    {MISS_C("-0"), 0, 0, 0},
    {MISS_C("1e2"), 0, 0, 0},
    {MISS_C("1.0"), 0, 0, 0},
    {MISS_C("01"), 0, 0, 0},
    {MISS_C("18446744073709551616"), 0, 0, 0},
    {MISS_C("99999999999999999999"), 0, 0, 0},
    {MISS_C("184467440737095516150"), 0, 0, 0},
    {MISS(",\"count\":1,\"hw\":{\"compute_capability\":[18446744073709551615,0],"
          "\"hardware_sku\":\"a\",\"driver_version\":\"b\"}"),
     0, 0, 0},
    {MISS(",\"count\":1,\"hw\":{\"compute_capability\":[4294967296,0],\"hardware_sku\":\"a\","
          "\"driver_version\":\"b\"}"),
     0, 0, 0},
    {MISS(",\"count\":1,\"count\":1,\"hw\":" HW_GPU), 0, 0, 0},
    {CANDS("{\"impl_id\":" IMPL_A ",\"latency_ns\":1,\"latency_ns\":1}"), 0, 0, 0},
    {MISS_S("\"a\\u0000\""), 0, 0, 0},
    {MISS_S("\"\\ud83d\""), 0, 0, 0},
    {MISS_S("\"\\ude00\\ud83d\""), 0, 0, 0},
    {MISS_S("\"\\x41\""), 0, 0, 0},
    {MISS_S("\"\xc0\xaf\""), 0, 0, 0},
    {MISS_S("\"\xed\xa0\x80\""), 0, 0, 0},
    {MISS_S("\"a\tb\""), 0, 0, 0},
    {MISS_C("1") " x", 0, 0, 0},
    {"{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_A ",\"count :1,\"hw\":" HW_CPU "}", 0, 0,
     0},
    {"{\"schema", 0, 0, 0},
    {"{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_A ",\"count\":1,\"hw\":{\"driver_version",
     0, 0, 0},
    {MISS_C("1") "\v", 0, 0, 0},
    {"\xef\xbb\xbf" MISS_C("1"), 0, 0, 0},
    {CANDS("{\"impl_id\":" IMPL_A "}"), 4, 0, 0},
    {MISS_C("1"), 2, 0, 0},
    {MISS_S("null"), 0, 0, 0},
    {CANDS("null"), 0, 0, 0},
    {"{\"schema\":2.0,\"wanted\":\"w\",\"fallback\":" IMPL_A ",\"count\":1,\"hw\":" HW_CPU "}", 0,
     0, 0},
    {"{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_A ",\"hw\":" HW_CPU "}", 0, 0, 0},
    {UNKNOWN("1,\"extra\":2"), 0, 0, 0},
    {UNKNOWN("{\"a\":1,\"a\":2}"), 0, 0, 0},
    {UNKNOWN("[[[[[1]]]]]"), 0, 0, 0},
    {UNKNOWN("\"\\u0000\""), 0, 0, 0},
    {UNKNOWN("\"\\ud800\""), 0, 0, 0},
    {UNKNOWN("tru"), 0, 0, 0},
    {UNKNOWN("nul"), 0, 0, 0},
    {UNKNOWN("True"), 0, 0, 0},
    {UNKNOWN("01"), 0, 0, 0},
    {UNKNOWN("1."), 0, 0, 0},
    {UNKNOWN(".5"), 0, 0, 0},
    {UNKNOWN("+1"), 0, 0, 0},
    {UNKNOWN("-"), 0, 0, 0},
    {UNKNOWN("1e"), 0, 0, 0},
    {UNKNOWN("0x10"), 0, 0, 0},
    {UNKNOWN("[1,]"), 0, 0, 0},
    {UNKNOWN("{\"a\"}"), 0, 0, 0},
    {UNKNOWN("{,}"), 0, 0, 0},
    {UNKNOWN(""), 0, 0, 0},
};

START_TEST(fast_path_takes_or_leaves)
{
    const fast_case *c = &fast_cases[_i];
    size_t n = strlen(c->line);
    char *line = malloc(n); /* alone in a buffer of its length: a read past it is caught */
    ck_assert_ptr_nonnull(line);
    memcpy(line, c->line, n);
    fdx_decoder *ref = fdx_decoder_new(c->depth);
    fdx_fast_decoder *fast = fdx_fast_decoder_new();
    fdx_record rf, rr;
    int depth = c->depth ? c->depth : FDX_DEFAULT_MAX_DEPTH;
    int taken = fdx_fast_decode(fast, line, n, depth, &rf);
    int rc = fdx_decode_lex(ref, line, n, err, sizeof err);
    if (rc == FDX_OK)
        rc = fdx_decode_parse(ref, &rr, err, sizeof err);
    ck_assert_msg(taken == c->fast, "fast path %s: %s", taken ? "took" : "left", c->line);
    ck_assert_msg((rc == FDX_OK) == c->reference, "reference %s: %s (%s)",
                  rc == FDX_OK ? "accepts" : "rejects", c->line, err);
    if (taken) {
        if (rf.kind == FDX_KIND_DISPATCH) /* a list, even an empty one, as the reference's */
            ck_assert(rf.dispatch.candidates && rr.dispatch.candidates);
        char *a = reencode(&rf), *b = reencode(&rr);
        ck_assert_str_eq(a, b);
        free(a);
        free(b);
    }
    fdx_fast_decoder_free(fast);
    fdx_decoder_free(ref);
    free(line);
}
END_TEST

/* Strings are read a word at a time: whatever ends a run of plain ASCII (an
 * escape, a byte of a longer UTF-8 sequence, a control character, the
 * closing quote) must be found at every place in a word, as the reference
 * finds it, in a string early in the line and in its last one, which the
 * line's end cuts short of a word. Each line sits alone in a buffer of its
 * own length. */
START_TEST(fast_path_reads_every_byte_at_every_offset)
{
    static const char *const breaks[] = {"\\\"", "\\\\", "\\u00e9", "\xc3\xa9", "\xe2\x82\xac",
                                         "\t",   "\x7f", "\xc3",    "",         "\\n"};
    fdx_decoder *ref = fdx_decoder_new(0);
    fdx_fast_decoder *fast = fdx_fast_decoder_new();
    for (size_t b = 0; b < sizeof breaks / sizeof breaks[0]; b++)
        for (int before = 0; before < 20; before++)
            for (int after = 0; after < 24; after++) {
                char value[64], line[512];
                snprintf(value, sizeof value, "\"%.*s%s%.*s\"", before, "abcdefghijklmnopqrst",
                         breaks[b], after % 12, "ABCDEFGHIJKL");
                int n = after < 12 ? snprintf(line, sizeof line,
                                              "{\"schema\":2,\"wanted\":%s,\"fallback\":" IMPL_A
                                              ",\"count\":1,\"hw\":" HW_CPU "}",
                                              value)
                                   : snprintf(line, sizeof line,
                                              "{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_A
                                              ",\"count\":1,\"hw\":{\"hardware_sku\":\"x\","
                                              "\"driver_version\":%s}}",
                                              value);
                char *own = malloc((size_t)n);
                ck_assert_ptr_nonnull(own);
                memcpy(own, line, (size_t)n);
                fdx_record rf, rr;
                int taken = fdx_fast_decode(fast, own, (size_t)n, FDX_DEFAULT_MAX_DEPTH, &rf);
                int rc = fdx_decode_lex(ref, own, (size_t)n, err, sizeof err);
                if (rc == FDX_OK)
                    rc = fdx_decode_parse(ref, &rr, err, sizeof err);
                ck_assert_msg(taken == (rc == FDX_OK), "fast path %s, reference %s: %s",
                              taken ? "took" : "left", rc == FDX_OK ? "accepts" : "rejects", line);
                if (taken) {
                    char *x = reencode(&rf), *y = reencode(&rr);
                    ck_assert_str_eq(x, y);
                    free(x);
                    free(y);
                }
                free(own);
            }
    fdx_fast_decoder_free(fast);
    fdx_decoder_free(ref);
}
END_TEST

/* The positions the line memo cuts at, from a line the fast path took. */
START_TEST(fast_path_reports_number_positions)
{
    const char *line = CANDS("{\"impl_id\":" IMPL_A ",\"latency_ns\": 1234 },{\"impl_id\":" IMPL_A
                             ",\"latency_ns\":null},{\"impl_id\":" IMPL_A ",\"latency_ns\":0}");
    fdx_record r;
    size_t off, len;
    ck_assert_int_eq(decode(line, &r), FDX_OK);
    ck_assert_uint_eq(r.dispatch.n_candidates, 3);
    ck_assert(fdx_decode_count_token(dec, &off, &len));
    ck_assert_uint_eq(off, (size_t)(strstr(line, "\"count\":1") + 8 - line));
    ck_assert_uint_eq(len, 1);
    ck_assert(fdx_decode_latency_token(dec, 0, &off, &len));
    ck_assert_uint_eq(off, (size_t)(strstr(line, "1234") - line));
    ck_assert_uint_eq(len, 4);
    ck_assert(!fdx_decode_latency_token(dec, 1, &off, &len));
    ck_assert(fdx_decode_latency_token(dec, 2, &off, &len));
    ck_assert_uint_eq(off, (size_t)(strstr(line, "\"latency_ns\":0") + 13 - line));
    ck_assert(!fdx_decode_latency_token(dec, 3, &off, &len));
}
END_TEST

/* cJSON reads a number through strtod in the thread's locale. Where the
 * decimal point is two bytes (ps_AF's U+066B), no fraction read, and the
 * reference refused a line that the fast path took, a fraction in a member no
 * field has. FDX_TEST_LOCALE names such a locale (tests/locale_test.sh builds
 * one and runs this suite in it); without it the suite runs in the C locale. */
START_TEST(numbers_read_alike_in_any_locale)
{
    const char *name = getenv("FDX_TEST_LOCALE");
    if (name) {
        ck_assert_msg(setlocale(LC_ALL, name) != NULL, "no locale %s", name);
        ck_assert_uint_gt(strlen(localeconv()->decimal_point), 1);
    }
    /* the last one's escaped key leaves it to the reference */
    static const char *const lines[] = {UNKNOWN("0.5"), UNKNOWN("[-1.25e3,{\"a\":2.0}]"),
                                        UNKNOWN("0.5,\"\\u0079\":0")};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        size_t n = strlen(lines[i]);
        char *line = malloc(n);
        ck_assert_ptr_nonnull(line);
        memcpy(line, lines[i], n);
        fdx_decoder *d = fdx_decoder_new(0);
        fdx_record r;
        int rc = fdx_decode_lex(d, line, n, err, sizeof err);
        if (rc == FDX_OK)
            rc = fdx_decode_parse(d, &r, err, sizeof err);
        ck_assert_msg(rc == FDX_OK, "reference: %s (%.*s)", err, (int)n, line);
        ck_assert_int_eq(fdx_decode_line(d, line, n, &r, err, sizeof err), FDX_OK);
        fdx_decoder_free(d);
        free(line);
    }
    setlocale(LC_ALL, "C");
}
END_TEST

Suite *codec_suite(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = tcase_create("decode");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, decodes_a_miss);
    tcase_add_test(tc, decodes_a_dispatch_with_optional_fields);
    tcase_add_test(tc, absent_candidates_are_empty);
    tcase_add_test(tc, u64_extremes_round_trip_exactly);
    tcase_add_loop_test(tc, rejects_bad_line, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, surrogate_pairs_and_escapes_decode);
    tcase_add_test(tc, writer_escapes_exactly);
    tcase_add_test(tc, writer_escapes_every_byte_at_every_offset);
    tcase_add_test(tc, u64_text_at_every_length);
    tcase_add_test(tc, line_memo_finds_lines_with_new_latencies);
    tcase_add_test(tc, packed_cells_unpack_to_themselves);
    tcase_add_test(tc, key_order_is_the_export_order);
    tcase_add_test(tc, a_shrunk_aggregate_keeps_its_cells);
    tcase_add_test(tc, a_recycled_aggregate_keeps_what_its_cells_used);
    tcase_add_test(tc, line_memo_grows_only_while_it_pays);
    tcase_add_test(tc, line_memo_at_its_least_bound_keeps_its_memory);
    tcase_add_test(tc, line_memo_lends_what_it_keeps_past_its_least_bound);
    tcase_add_test(tc, line_memo_rests_after_a_window_of_new_lines);
    tcase_add_test(tc, mutated_lines_never_crash);
    tcase_add_test(tc, sha256_matches_known_digests);
    tcase_add_test(tc, arena_keeps_decoders_apart);
    tcase_add_loop_test(tc, fast_path_takes_or_leaves, 0,
                        (int)(sizeof fast_cases / sizeof fast_cases[0]));
    tcase_add_test(tc, fast_path_reads_every_byte_at_every_offset);
    tcase_add_test(tc, fast_path_reports_number_positions);
    tcase_add_test(tc, numbers_read_alike_in_any_locale);
    suite_add_tcase(s, tc);
    return s;
}
