/* The store: golden vectors, aggregation across ingests and reopenings,
 * saturation, u64 order, atomic failure, schema versions and bad files. */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cell/agg.h"
#include "cell/key_order.h"
#include "common/atomic_file.h"
#include "common/message.h"
#include "common/open_stores.h"
#include "common/utf8.h"
#include "ingest/batch.h"
#include "ingest/linereader.h"
#include "sql_text.h"
#include "store/conn.h"
#include "store/migrations.h"
#include "store/pg_conn.h"
#include "store/schema.h"
#include "store/store_flush.h"
#include "store/store_internal.h"
#include "store/vfs_guard.h"
#include "test_util.h"

/* expected/misses.jsonl + "--\n" + expected/dispatches.jsonl of a vector. */
static char *expected_of(const char *vector)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/expected/misses.jsonl", vector);
    char *m = tu_read_file(tu_data(rel), NULL);
    snprintf(rel, sizeof rel, "%s/expected/dispatches.jsonl", vector);
    char *d = tu_read_file(tu_data(rel), NULL);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(d);
    char *all = malloc(strlen(m) + strlen(d) + 4);
    sprintf(all, "%s--\n%s", m, d);
    free(m);
    free(d);
    return all;
}

static const char *run_dir(const char *vector, int run)
{
    static char rel[256];
    snprintf(rel, sizeof rel, "%s/input/run_%04d", vector, run);
    return tu_data(rel);
}

static void check_vector(const char *vector, int runs, int one_by_one)
{
    char *want = expected_of(vector);
    const char *db_path = tu_path(tu_dir, "v.db");
    const char *paths[8];
    for (int r = 0; r < runs; r++)
        paths[r] = strdup(run_dir(vector, r));
    if (one_by_one) {
        for (int r = 0; r < runs; r++) { /* reopened for every run */
            fdx_store *db = tu_open(db_path);
            ck_assert_msg(tu_ingest(db, &paths[r], 1) == FDX_OK, "%s", fdx_store_errmsg(db));
            fdx_store_close(db);
        }
    } else {
        fdx_store *db = tu_open(db_path);
        ck_assert_msg(tu_ingest(db, paths, (size_t)runs) == FDX_OK, "%s", fdx_store_errmsg(db));
        fdx_store_close(db);
    }
    fdx_store *db = tu_open(db_path);
    char *got = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_str_eq(got, want);
    fdx_store_close(db);
    for (int r = 0; r < runs; r++)
        free((char *)paths[r]);
    free(got);
    free(want);
}

/* Each golden vector ingested all at once and run by run (reopening). */
static const struct {
    const char *vector;
    int runs;
    int one_by_one;
} golden[] = {{"basic", 2, 0}, {"basic", 2, 1}, {"nasty", 3, 0}, {"nasty", 3, 1}};

START_TEST(golden_vectors)
{
    check_vector(golden[_i].vector, golden[_i].runs, golden[_i].one_by_one);
}
END_TEST

/* ---- helpers for hand-written feeds ---- */

#define IMPL_H(src, hash)                                                                          \
    "{\"backend\":\"Cuda\",\"op\":\"MatMul\",\"dtypes\":[\"F16\"],\"kernel_source\":\"" src        \
    "\",\"kernel_revision_hash\":" hash "}"
#define CPU "{\"hardware_sku\":\"cpu\",\"driver_version\":\"n/a\"}"
#define GPU "{\"compute_capability\":[8,9],\"hardware_sku\":\"gpu\",\"driver_version\":\"1\"}"

/* Writes text to a file in the test directory and ingests it in its own
 * transaction, through a freshly opened store. */
static int ingest_text(const char *name, const char *text)
{
    const char *path = strdup(tu_path(tu_dir, name));
    tu_write_file(path, text);
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    int rc = tu_ingest(db, &path, 1);
    fdx_store_close(db);
    free((char *)path);
    return rc;
}

static char *export_store(void)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    fdx_store_close(db);
    return out;
}

START_TEST(unkeyed_and_cpu_cells_aggregate_across_ingests)
{
    const char *line =
        "{\"schema\":2,\"chosen\":" IMPL_H("k", "1") ",\"count\":2,\"hw\":" CPU "}\n";
    const char *line_null = "{\"schema\":2,\"structure_key\":null,\"chosen\":" IMPL_H(
        "k", "1") ",\"count\":3,\"hw\":{\"compute_capability\":null,\"hardware_sku\":\"cpu\","
                  "\"driver_version\":\"n/a\"}}\n";
    ck_assert_int_eq(ingest_text("a.jsonl", line), FDX_OK);
    ck_assert_int_eq(ingest_text("b.jsonl", line_null), FDX_OK);
    ck_assert_int_eq(ingest_text("c.jsonl", line), FDX_OK);
    char *out = export_store();
    ck_assert_str_eq(
        out, "--\n{\"schema\":2,\"chosen\":" IMPL_H("k", "1") ",\"count\":7,\"hw\":" CPU "}\n");
    free(out);
}
END_TEST

START_TEST(empty_structure_key_differs_from_unkeyed)
{
    const char *feed = "{\"schema\":2,\"structure_key\":\"\",\"chosen\":" IMPL_H(
        "k", "1") ",\"count\":1,\"hw\":" CPU "}\n"
                  "{\"schema\":2,\"chosen\":" IMPL_H("k", "1") ",\"count\":1,\"hw\":" CPU "}\n";
    ck_assert_int_eq(ingest_text("a.jsonl", feed), FDX_OK);
    ck_assert_int_eq(ingest_text("b.jsonl", feed), FDX_OK);
    char *out = export_store();
    ck_assert_str_eq(out,
                     "--\n{\"schema\":2,\"chosen\":" IMPL_H(
                         "k", "1") ",\"count\":2,\"hw\":" CPU
                                   "}\n{\"schema\":2,\"structure_key\":\"\",\"chosen\":" IMPL_H(
                                       "k", "1") ",\"count\":2,\"hw\":" CPU "}\n");
    free(out);
}
END_TEST

#define MISS_LINE(count)                                                                           \
    "{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_H("k", "1") ",\"count\":" count            \
                                                                    ",\"hw\":" GPU "}\n"
#define MISS_OUT(count)                                                                            \
    "{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_H("k", "1") ",\"count\":" count            \
                                                                    ",\"hw\":" GPU "}\n--\n"

/* The one row sql returns, on its own connection (closed by raw_row_end). */
static sqlite3_stmt *raw_row(const char *path, const char *sql)
{
    sqlite3 *raw;
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    return st;
}

static void raw_row_end(sqlite3_stmt *st)
{
    sqlite3 *raw = sqlite3_db_handle(st);
    sqlite3_finalize(st);
    sqlite3_close(raw);
}

/* The store's page size, through a connection of the test's own. */
static int page_size_of(const char *path)
{
    sqlite3_stmt *st = raw_row(path, "PRAGMA page_size");
    int size = sqlite3_column_int(st, 0);
    raw_row_end(st);
    return size;
}

/* A new store is made with 8 KiB pages; a store made with 4 KiB ones keeps
 * them, and takes and gives back its cells as before. */
START_TEST(new_stores_have_8_kib_pages_and_older_ones_keep_theirs)
{
    const char *path = tu_path(tu_dir, "s.db");
    ck_assert_int_eq(ingest_text("a.jsonl", MISS_LINE("1")), FDX_OK);
    ck_assert_int_eq(page_size_of(path), 8192);

    sqlite3 *raw;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(raw,
                                  "PRAGMA journal_mode = DELETE; PRAGMA page_size = 4096; VACUUM; "
                                  "PRAGMA journal_mode = WAL",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(raw);
    ck_assert_int_eq(page_size_of(path), 4096);

    ck_assert_int_eq(ingest_text("b.jsonl", MISS_LINE("2")), FDX_OK);
    ck_assert_int_eq(page_size_of(path), 4096);
    char *out = export_store();
    ck_assert_str_eq(out, MISS_OUT("3"));
    free(out);
}
END_TEST

START_TEST(counts_saturate_within_one_ingest)
{
    ck_assert_int_eq(ingest_text("a.jsonl", MISS_LINE("18446744073709551615") MISS_LINE("7")),
                     FDX_OK);
    char *out = export_store();
    ck_assert_str_eq(out, MISS_OUT("9223372036854775807"));
    free(out);
}
END_TEST

START_TEST(counts_saturate_across_ingests)
{
    ck_assert_int_eq(ingest_text("a.jsonl", MISS_LINE("9223372036854775800")), FDX_OK);
    ck_assert_int_eq(ingest_text("b.jsonl", MISS_LINE("7")), FDX_OK);
    char *out = export_store();
    ck_assert_str_eq(out, MISS_OUT("9223372036854775807"));
    free(out);
    ck_assert_int_eq(ingest_text("c.jsonl", MISS_LINE("9223372036854775807")), FDX_OK);
    ck_assert_int_eq(ingest_text("d.jsonl", MISS_LINE("0")), FDX_OK);
    out = export_store();
    ck_assert_str_eq(out, MISS_OUT("9223372036854775807"));
    free(out);
    /* The stored value stays an INTEGER, never a REAL. */
    sqlite3 *raw;
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_open(tu_path(tu_dir, "s.db"), &raw), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(raw, "SELECT typeof(count) FROM miss_cell", -1, &st, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "integer");
    sqlite3_finalize(st);
    sqlite3_close(raw);
}
END_TEST

START_TEST(zero_count_counts_once)
{
    ck_assert_int_eq(ingest_text("a.jsonl", MISS_LINE("0") MISS_LINE("0")), FDX_OK);
    ck_assert_int_eq(ingest_text("b.jsonl", MISS_LINE("0")), FDX_OK);
    char *out = export_store();
    ck_assert_str_eq(out, MISS_OUT("3"));
    free(out);
}
END_TEST

#define HASH_LINE(h)                                                                               \
    "{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_H("k", h) ",\"count\":1,\"hw\":" CPU "}\n"

START_TEST(revision_hashes_keep_u64_and_sort_unsigned)
{
    ck_assert_int_eq(ingest_text("a.jsonl",
                                 HASH_LINE("18446744073709551615") HASH_LINE("9223372036854775809")
                                     HASH_LINE("1") HASH_LINE("9223372036854775807")
                                         HASH_LINE("9223372036854775808")),
                     FDX_OK);
    ck_assert_int_eq(ingest_text("b.jsonl", HASH_LINE("9223372036854775809")), FDX_OK);
    char *out = export_store();
    const char *order[] = {"1}", "9223372036854775807}", "9223372036854775808}",
                           "9223372036854775809}", "18446744073709551615}"};
    const char *at = out;
    for (size_t i = 0; i < 5; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "\"kernel_revision_hash\":%s", order[i]);
        const char *hit = strstr(out, needle);
        ck_assert_msg(hit && hit >= at, "%s out of order in\n%s", order[i], out);
        at = hit;
    }
    ck_assert_ptr_nonnull(strstr(out, "\"kernel_revision_hash\":9223372036854775809},\"count\":2"));
    free(out);
}
END_TEST

#define DISP(cands, count)                                                                         \
    "{\"schema\":2,\"structure_key\":\"s\",\"chosen\":" IMPL_H("k", "1") cands                     \
        ",\"count\":" count ",\"hw\":" GPU "}\n"
#define CANDS(lat) ",\"candidates\":[{\"impl_id\":" IMPL_H("c", "2") ",\"latency_ns\":" lat "}]"

START_TEST(latest_non_empty_candidates_win_across_ingests)
{
    ck_assert_int_eq(ingest_text("a.jsonl", DISP(CANDS("5"), "1")), FDX_OK);
    ck_assert_int_eq(ingest_text("b.jsonl", DISP("", "1") DISP(",\"candidates\":[]", "1")), FDX_OK);
    char *out = export_store();
    ck_assert_str_eq(out, "--\n" DISP(CANDS("5"), "3"));
    free(out);
    ck_assert_int_eq(ingest_text("c.jsonl", DISP(CANDS("7"), "1") DISP(CANDS("9"), "1")), FDX_OK);
    out = export_store();
    ck_assert_str_eq(out, "--\n" DISP(CANDS("9"), "5"));
    free(out);
}
END_TEST

/* A store closed, reopened and added to keeps accumulating. */
START_TEST(reopened_store_accumulates)
{
    for (int run = 0; run < 5; run++)
        ck_assert_int_eq(ingest_text("run.jsonl", MISS_LINE("2")), FDX_OK);
    char *out = export_store();
    ck_assert_str_eq(out, MISS_OUT("10"));
    free(out);
}
END_TEST

/* Every error of docs/FORMAT.md ("Errors") leaves the store exactly as it was. */
static const char *const bad_lines[] = {
    "{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_H("k", "1") ",\"count\":-3,\"hw\":" GPU "}",
    "{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_H(
        "k", "18446744073709551616") ",\"count\":1,\"hw\":" GPU "}",
    "{\"schema\":1,\"wanted\":\"w\"}",
    "{\"schema\":2,\"wanted\":\"\xff\"}",
    "{\"schema\":2,\"wanted\":\"\\u0000\"}",
    "{\"schema\":2,\"wanted\":\"\\udead\"}",
    "{\"schema\":2,\"a\":[[[[[[]]]]]]}",
    "{\"schema\":2} {}",
    "[1,2]",
    "{\"schema\":2,\"schema\":2}",
    "{\"schema\":2,\"chosen\":" IMPL_H("k", "1") ",\"candidates\":null,\"count\":1,\"hw\":" GPU "}",
    "{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_H("k", "1.0") ",\"count\":1,\"hw\":" GPU
                                                                      "}",
    "not json",
};

START_TEST(bad_line_leaves_store_unchanged)
{
    ck_assert_int_eq(ingest_text("seed.jsonl", MISS_LINE("4") DISP(CANDS("5"), "1")), FDX_OK);
    char *before = export_store();
    char feed[2048];
    snprintf(feed, sizeof feed, "%s\n%s\n%s\n", MISS_LINE("1"), bad_lines[_i],
             DISP(CANDS("6"), "1"));
    ck_assert_int_eq(ingest_text("bad.jsonl", feed), FDX_EDATA);
    char *after = export_store();
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
}
END_TEST

START_TEST(errors_name_file_and_line)
{
    const char *path = strdup(tu_path(tu_dir, "bad.jsonl"));
    tu_write_file(path, "\n" MISS_LINE("1") "{\"schema\":2,\"wanted\":\"w\",\"count\":-3}\n");
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, path, NULL, NULL), FDX_EDATA);
    char want[4200];
    snprintf(want, sizeof want, "%s:3: fallback: missing", path);
    ck_assert_msg(strstr(fdx_store_errmsg(db), want), "%s", fdx_store_errmsg(db));
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    fdx_store_close(db);
    free((char *)path);
}
END_TEST

/* One bad path undoes only itself inside the caller's transaction. */
START_TEST(failed_path_is_undone_alone)
{
    const char *good = strdup(tu_path(tu_dir, "good.jsonl"));
    const char *bad = strdup(tu_path(tu_dir, "bad.jsonl"));
    tu_write_file(good, MISS_LINE("2"));
    tu_write_file(bad, MISS_LINE("5") "oops\n");
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    fdx_ingest_stats st = {0};
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, good, NULL, &st), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, bad, NULL, &st), FDX_EDATA);
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, 1);
    ck_assert_uint_eq(st.files, 2);
    ck_assert_uint_eq(st.records, 2);
    ck_assert_uint_eq(st.bad_lines, 1);
    fdx_store_close(db);
    char *out = export_store();
    ck_assert_str_eq(out, MISS_OUT("2"));
    free(out);
    free((char *)good);
    free((char *)bad);
}
END_TEST

/* A bad path longer than the batches the pool holds is still named by the
 * error: the batch that began it has been reused for later lines by then. */
START_TEST(failed_long_path_is_named)
{
    const char *path = strdup(tu_path(tu_dir, "long.jsonl"));
    size_t cap = 8000 * sizeof MISS_LINE("1") + 8, len = 0;
    char *text = malloc(cap);
    for (int i = 0; i < 8000; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s", MISS_LINE("1"));
    snprintf(text + len, cap - len, "oops\n");
    tu_write_file(path, text);
    char want[1100];
    snprintf(want, sizeof want, "(1 bad line in %s)", path);
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    for (int threads = 1; threads <= 2; threads++) {
        fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
        opts.threads = threads;
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        ck_assert_int_eq(fdx_store_ingest_paths(db, &path, 1, &opts, NULL), FDX_EDATA);
        ck_assert_msg(strstr(fdx_store_errmsg(db), want), "%s", fdx_store_errmsg(db));
        ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    }
    fdx_store_close(db);
    free(text);
    free((char *)path);
}
END_TEST

/* The first row of a query over the store file at path, read past fdx:
 * its first n columns, as integers. */
static void raw_ints(const char *path, const char *sql, int64_t *cols, int n)
{
    sqlite3 *raw;
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    for (int i = 0; i < n; i++)
        cols[i] = sqlite3_column_int64(st, i);
    sqlite3_finalize(st);
    sqlite3_close(raw);
}

/* The first column of the first row of a query over the store file at path,
 * read past fdx, as text. */
static char *raw_text(const char *path, const char *sql)
{
    sqlite3 *raw;
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_msg(sqlite3_prepare_v2(raw, sql, -1, &st, NULL) == SQLITE_OK, "%s",
                  sqlite3_errmsg(raw));
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    const char *got = (const char *)sqlite3_column_text(st, 0);
    ck_assert_msg(got != NULL, "NULL from %s", sql);
    char *text = strdup(got);
    ck_assert_ptr_nonnull(text);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    return text;
}

/* Every column of the feed's cells, with what differs between two stores (the
 * first id, the ledger id, the time) taken out: ids from the first, whether
 * they were made and last changed by the last ingest, candidates set at its
 * time or not at all. */
#define GROUPED_ROWS                                                                               \
    "WITH base(id, l, t) AS (SELECT (SELECT min(cell_id) FROM miss_cell WHERE wanted != 'zz'), "   \
    "(SELECT max(id) FROM ingest_ledger), (SELECT max(candidates_set_at) FROM dispatch_cell)) "    \
    "SELECT group_concat(r, ';') FROM (SELECT 'm' || (cell_id - id) || wanted || count || "        \
    "(first_ingest = l) || (last_ingest = l) AS r FROM miss_cell, base WHERE wanted != 'zz' "      \
    "UNION ALL SELECT 'd' || (cell_id - id) || keyed || structure_key || kernel_revision_hash || " \
    "count || candidates || (first_ingest = l) || (last_ingest = l) || "                           \
    "coalesce(candidates_set_at = t, 'none') FROM dispatch_cell, base ORDER BY 1)"

/* The feed of new_cells_are_written_alike_in_groups: 53 misses, and 37
 * dispatches keyed and not, with candidates and without. */
static char *grouped_feed(void)
{
    size_t cap = 90 * 400, len = 0;
    char *feed = malloc(cap);
    ck_assert_ptr_nonnull(feed);
    for (int i = 0; i < 53; i++)
        len += (size_t)snprintf(feed + len, cap - len,
                                "{\"schema\":2,\"wanted\":\"w%02d\",\"fallback\":" IMPL_H(
                                    "k", "1") ",\"count\":%d,\"hw\":" CPU "}\n",
                                i, i + 1);
    for (int i = 0; i < 37; i++)
        len += (size_t)snprintf(
            feed + len, cap - len,
            "{\"schema\":2,%s\"chosen\":" IMPL_H("k", "%d") ",%s\"count\":%d,\"hw\":" GPU "}\n",
            i % 5 ? "\"structure_key\":\"s\"," : "", i,
            i % 3 ? "" : "\"candidates\":[{\"impl_id\":" IMPL_H("c", "2") ",\"latency_ns\":5}],",
            i + 1);
    ck_assert_uint_lt(len, cap);
    return feed;
}

/* The export of a store that held cell "zz" before feed.jsonl, without it. */
static void drop_zz(char *export)
{
    char *zz = strstr(export, "\"zz\"");
    ck_assert_ptr_nonnull(zz);
    char *line = zz;
    while (line > export && line[-1] != '\n')
        line--;
    char *end = strchr(zz, '\n');
    memmove(line, end + 1, strlen(end + 1) + 1);
}

/* Cells the store does not hold are written 16 to a statement (no lookup in
 * a store that held none), the rest of a kind one at a time: a new store, a
 * store that held a cell, and one that writes each new cell alone end with
 * the same cells, ids and history. */
START_TEST(new_cells_are_written_alike_in_groups)
{
    char *feed = grouped_feed();
    const char *paths[] = {strdup(tu_path(tu_dir, "feed.jsonl")),
                           strdup(tu_path(tu_dir, "one.jsonl"))};
    tu_write_file(paths[0], feed);
    tu_write_file(paths[1], "{\"schema\":2,\"wanted\":\"zz\",\"fallback\":" IMPL_H(
                                "k", "1") ",\"count\":1,\"hw\":" CPU "}\n");
    static const char *const names[] = {"fresh", "held", "alone"};
    char *exports[3], *rows[3];
    for (int way = 0; way < 3; way++) {
        char name[32];
        snprintf(name, sizeof name, "%s.db", names[way]);
        const char *db_path = tu_path(tu_dir, name);
        fdx_store *db = tu_open(db_path);
        db->ungrouped = way == 2;
        if (way)
            ck_assert_int_eq(tu_ingest(db, &paths[1], 1), FDX_OK);
        ck_assert_int_eq(tu_ingest(db, &paths[0], 1), FDX_OK);
        snprintf(name, sizeof name, "out_%s", names[way]);
        exports[way] = tu_export(db, tu_path(tu_dir, name));
        fdx_store_close(db);
        int64_t v[4];
        raw_ints(db_path,
                 "SELECT count(*), count(DISTINCT cell_id), min(cell_id), max(cell_id) FROM "
                 "(SELECT cell_id FROM miss_cell WHERE wanted != 'zz' UNION ALL "
                 "SELECT cell_id FROM dispatch_cell)",
                 v, 4);
        ck_assert_int_eq(v[0], 90);
        ck_assert_int_eq(v[1], 90);
        ck_assert_int_eq(v[3] - v[2], 89);
        raw_ints(db_path,
                 "SELECT (SELECT count(*) FROM dispatch_cell WHERE (candidates = '[]') != "
                 "(candidates_set_at IS NULL)), (SELECT count(*) FROM cell_history h WHERE "
                 "h.count != coalesce((SELECT count FROM miss_cell WHERE cell_id = h.cell), "
                 "(SELECT count FROM dispatch_cell WHERE cell_id = h.cell)))",
                 v, 2);
        ck_assert_int_eq(v[0], 0);
        ck_assert_int_eq(v[1], 0);
        rows[way] = raw_text(db_path, GROUPED_ROWS);
        if (way)
            drop_zz(exports[way]);
    }
    for (int way = 1; way < 3; way++) {
        ck_assert_str_eq(rows[0], rows[way]);
        ck_assert_str_eq(exports[0], exports[way]);
    }
    for (int way = 0; way < 3; way++) {
        free(rows[way]);
        free(exports[way]);
    }
    free((char *)paths[0]);
    free((char *)paths[1]);
    free(feed);
}
END_TEST

/* A memory budget that 70,000 small cells overflow several times over. */
static fdx_store *open_spilling(const char *path)
{
    fdx_store *db = tu_open(path);
    db->spill_bytes = (size_t)1 << 20;
    return db;
}

/* Ingests one line of its own, then big, which fails with want (under
 * tmpdir when given): the commit keeps that line alone. */
static void big_path_fails_alone(const char *big, size_t len, int want, const char *tmpdir)
{
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    const char *first = MISS_LINE("3");
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "first", first, strlen(first), NULL, NULL),
                     FDX_OK);
    if (tmpdir)
        ck_assert_int_eq(setenv("TMPDIR", tmpdir, 1), 0);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "big", big, len, NULL, NULL), want);
    unsetenv("TMPDIR");
    if (want == FDX_EDATA) {
        ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "big:70001:"));
        ck_assert_uint_gt(db->spills, 1);
    }
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, 1);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_str_eq(out, MISS_OUT("3"));
    free(out);
    fdx_store_close(db);
}

/* pthread_create, refused while refuse_threads is set (the link wraps it). */
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
static int refuse_threads, threads_refused;
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (!refuse_threads)
        return __real_pthread_create(t, a, fn, arg);
    threads_refused++;
    return EAGAIN;
}

/* 70,000 distinct miss lines, passes times over, with room for a line of
 * up to FEED_SPARE bytes after them; the caller frees them. */
#define FEED_SPARE 64
static char *many_cells_feed(int passes, size_t *len)
{
    size_t cap = (size_t)passes * 70000 * 300 + FEED_SPARE;
    char *feed = malloc(cap);
    ck_assert_ptr_nonnull(feed);
    *len = 0;
    for (int pass = 0; pass < passes; pass++)
        for (int i = 0; i < 70000; i++)
            *len += (size_t)snprintf(feed + *len, cap - *len,
                                     "{\"schema\":2,\"wanted\":\"w%d\",\"fallback\":" IMPL_H(
                                         "k", "1") ",\"count\":1,\"hw\":" CPU "}\n",
                                     i);
    ck_assert_uint_le(*len + FEED_SPARE, cap);
    return feed;
}

/* Ingests feed on two threads into a store that spills: the export. */
static char *ingest_spilling(const char *name, const char *feed, size_t len)
{
    fdx_store *db = open_spilling(tu_path(tu_dir, name));
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.threads = 2;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    int rc = fdx_store_ingest_buffer(db, "feed", feed, len, &opts, NULL);
    ck_assert_msg(rc == FDX_OK, "%s", fdx_store_errmsg(db));
    ck_assert_uint_gt(db->spills, 1);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    fdx_store_close(db);
    return out;
}

/* Where no thread can start, an ingest decodes, sorts its spills and merges
 * them on the calling thread, to the same cells: it used to fail, "out of
 * memory (threads)", before reading a line. */
START_TEST(an_ingest_runs_on_the_calling_thread_when_threads_cannot_start)
{
    size_t len;
    char *feed = many_cells_feed(2, &len);
    char *threaded = ingest_spilling("threaded.db", feed, len);
    refuse_threads = 1;
    char *alone = ingest_spilling("alone.db", feed, len);
    refuse_threads = 0;
    /* the decoders, each spill's second sorter and the merge beside the writing */
    ck_assert_int_gt(threads_refused, 3);
    ck_assert_str_eq(alone, threaded);
    ck_assert_ptr_nonnull(strstr(alone, "\"wanted\":\"w69999\""));
    ck_assert_ptr_nonnull(strstr(alone, "\"count\":2,"));
    ck_assert_ptr_null(strstr(alone, "\"count\":1,"));
    free(threaded);
    free(alone);
    free(feed);
}
END_TEST

/* A failed ingest that had to write cells early (more than fit in memory)
 * still undoes only itself, and keeps what earlier ingests recorded. */
START_TEST(failed_spilling_path_keeps_earlier_records)
{
    size_t len;
    char *big = many_cells_feed(1, &len);
    len += (size_t)snprintf(big + len, FEED_SPARE, "oops\n");
    big_path_fails_alone(big, len, FDX_EDATA, NULL);
    free(big);
}
END_TEST

/* Several paths in one call share batches; a bad one still drops alone, on
 * one thread or several. */
START_TEST(paths_in_one_call_fail_alone)
{
    const char *paths[3];
    paths[0] = strdup(tu_path(tu_dir, "a.jsonl"));
    paths[1] = strdup(tu_path(tu_dir, "bad.jsonl"));
    paths[2] = strdup(tu_path(tu_dir, "c.jsonl"));
    tu_write_file(paths[0], MISS_LINE("2"));
    tu_write_file(paths[1], MISS_LINE("100") "{\"schema\":2}\n" MISS_LINE("100"));
    tu_write_file(paths[2], MISS_LINE("3"));
    for (int threads = 1; threads <= 3; threads += 2) {
        char name[32];
        snprintf(name, sizeof name, "t%d.db", threads);
        fdx_store *db = tu_open(tu_path(tu_dir, name));
        fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
        opts.threads = threads;
        fdx_ingest_stats st = {0};
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        ck_assert_int_eq(fdx_store_ingest_paths(db, paths, 3, &opts, &st), FDX_EDATA);
        ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "bad.jsonl:2: "));
        ck_assert_uint_eq(st.bad_lines, 1);
        ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
        char *out = tu_export(db, tu_path(tu_dir, "out"));
        ck_assert_str_eq(out, MISS_OUT("5"));
        free(out);
        fdx_store_close(db);
    }
    for (int i = 0; i < 3; i++)
        free((char *)paths[i]);
}
END_TEST

/* Ingests feed with one thread and with two, skipping bad lines: both must
 * count these and export want. */
static void ingest_both_ways(const char *feed, uint64_t bad, uint64_t records, const char *want)
{
    for (int threads = 1; threads <= 2; threads++) {
        char name[32];
        snprintf(name, sizeof name, "t%d.db", threads);
        fdx_store *db = tu_open(tu_path(tu_dir, name));
        fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
        opts.skip_invalid = 1;
        opts.threads = threads;
        fdx_ingest_stats st = {0};
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        ck_assert_int_eq(fdx_store_ingest_buffer(db, "feed", feed, strlen(feed), &opts, &st),
                         FDX_OK);
        ck_assert_uint_eq(st.bad_lines, bad);
        ck_assert_uint_eq(st.records, records);
        ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
        char *out = tu_export(db, tu_path(tu_dir, "out"));
        ck_assert_str_eq(out, want);
        free(out);
        fdx_store_close(db);
    }
}

#if defined(__linux__) && defined(SCHED_BATCH)
/* The scheduling policies of the calling thread and of the threads an ingest
 * started, seen while the calling thread is told of a bad line. */
typedef struct policies_seen {
    pid_t caller;
    pid_t before[16]; /* the process's threads before the ingest */
    size_t n_before;
    int want; /* the policy every thread the ingest started must have */
    int caller_policy, started, as_wanted;
} policies_seen;

/* The kernel's calls, as the library makes them (musl's sched_* refuse). */
static int policy_of(pid_t tid)
{
    return (int)syscall(SYS_sched_getscheduler, tid);
}

static int set_policy(int policy)
{
    struct sched_param none = {0};
    return (int)syscall(SYS_sched_setscheduler, 0, policy, &none);
}

static size_t list_threads(pid_t *tids, size_t max)
{
    size_t n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d));)
        if (atoi(e->d_name) > 0 && n < max)
            tids[n++] = (pid_t)atoi(e->d_name);
    if (d)
        closedir(d);
    return n;
}

static void count_started(policies_seen *ps)
{
    pid_t now[64];
    size_t n = list_threads(now, 64);
    ps->started = ps->as_wanted = 0;
    for (size_t i = 0; i < n; i++) {
        int old = 0;
        for (size_t j = 0; j < ps->n_before; j++)
            old |= now[i] == ps->before[j];
        if (old)
            continue;
        ps->started++;
        ps->as_wanted += policy_of(now[i]) == ps->want;
    }
}

static void note_policies(void *ctx, const char *where, const char *reason)
{
    (void)where;
    (void)reason;
    policies_seen *ps = ctx;
    ps->caller_policy = policy_of(ps->caller);
    /* a decoder that has not run yet has not changed its policy: give it 10 s,
     * and one that should keep it 0.2 s to show it does not */
    int polls = ps->want == SCHED_BATCH ? 1000 : 20;
    for (int i = 0; i < polls; i++) {
        count_started(ps);
        if (ps->want == SCHED_BATCH && ps->started >= 2 && ps->as_wanted == ps->started)
            return;
        usleep(10000);
    }
}

/* Ingests a bad line with two decoding threads in a child (whose policy may
 * not come back once changed): 0, 1 when they were not in want, 77 when the
 * policy cannot be set or the threads not listed here. */
static int decoders_take(int caller_policy, int want)
{
    if (set_policy(caller_policy) != 0)
        return 77;
    policies_seen ps = {.caller = (pid_t)syscall(SYS_gettid), .want = want};
    ps.n_before = list_threads(ps.before, 16);
    if (ps.n_before == 0)
        return 77;
    fdx_store *db = NULL;
    int ok = fdx_store_open(tu_path(tu_dir, "policy.db"), FDX_OPEN_CREATE, &db) == FDX_OK;
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.threads = 2;
    opts.skip_invalid = 1;
    opts.on_error = note_policies;
    opts.ctx = &ps;
    const char *feed = MISS_LINE("1") "not json\n" MISS_LINE("2");
    ok = ok && fdx_store_begin(db) == FDX_OK &&
         fdx_store_ingest_buffer(db, "feed", feed, strlen(feed), &opts, NULL) == FDX_OK &&
         fdx_store_commit(db, NULL) == FDX_OK;
    fdx_store_close(db);
    if (ok && ps.caller_policy == caller_policy && ps.started >= 2 && ps.as_wanted == ps.started)
        return 0;
    fprintf(stderr, "caller in policy %d (was %d), %d of %d threads started in policy %d\n",
            ps.caller_policy, caller_policy, ps.as_wanted, ps.started, want);
    return 1;
}

static int in_child(int caller_policy, int want)
{
    fflush(NULL);
    pid_t child = fork();
    if (child == 0)
        _exit(decoders_take(caller_policy, want));
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

static void expect_policies(int caller_policy, int want, const char *which)
{
    int rc = in_child(caller_policy, want);
    if (rc == 77)
        fprintf(stderr,
                "decoding_threads_do_not_preempt_the_caller: %s: the policy cannot "
                "be set or the threads listed here; not run\n",
                which);
    else
        ck_assert_msg(rc == 0, "%s: %d", which, rc);
}

/* A decoder woken by a batch no longer preempts the calling thread, which
 * reads and merges what the decoders need next: they take the batch policy,
 * unless the caller chose a policy of its own (here the idle one, which only
 * a privileged thread could leave). */
START_TEST(decoding_threads_do_not_preempt_the_caller)
{
    expect_policies(SCHED_OTHER, SCHED_BATCH, "a caller in the default policy");
    expect_policies(SCHED_IDLE, SCHED_IDLE, "a caller in SCHED_IDLE");
}
END_TEST
#endif

/* Lines that repeat but for their count skip the JSON parser; variants that
 * are not valid must still be caught. */
START_TEST(repeated_lines_are_still_checked)
{
    const char *x_first =
        "{\"schema\":2,\"x\":{\"count\":\"s\"},\"wanted\":\"w\",\"fallback\":" IMPL_H(
            "k", "1") ",\"count\":5,\"hw\":" CPU "}\n";
    const char *moved =
        "{\"schema\":2,\"x\":{\"count\":5\"s\"},\"wanted\":\"w\",\"fallback\":" IMPL_H(
            "k", "1") ",\"count\":,\"hw\":" CPU "}\n";
    char feed[8192];
    snprintf(feed, sizeof feed, "%s%s%s%s%s%s%s%s%s", MISS_LINE("5"), MISS_LINE("6"),
             MISS_LINE("007"), MISS_LINE("18446744073709551616"), MISS_LINE("-1"), MISS_LINE("1.0"),
             x_first, moved, MISS_LINE("0"));
    ingest_both_ways(feed, 5, 4,
                     "{\"schema\":2,\"wanted\":\"w\",\"fallback\":" IMPL_H(
                         "k", "1") ",\"count\":5,\"hw\":" CPU "}\n" MISS_OUT("12"));
}
END_TEST

#define CANDS2(a, b)                                                                               \
    ",\"candidates\":[{\"impl_id\":" IMPL_H(                                                       \
        "c", "2") ",\"latency_ns\":" a "},{\"impl_id\":" IMPL_H("d", "3") ",\"latency_ns\":" b     \
                                                                          "}]"
#define DISPX(x, cands, count)                                                                     \
    "{\"schema\":2,\"x\":{\"latency_ns\":" x                                                       \
    "},\"structure_key\":\"s\",\"chosen\":" IMPL_H("k", "1") cands ",\"count\":" count             \
                                                                   ",\"hw\":" GPU "}\n"

/* Lines that repeat but for their count and latencies skip the JSON parser
 * too; variants that are not valid must still be caught, and a
 * "latency_ns" that is not a candidate's must not be taken for one. */
START_TEST(repeated_candidate_lines_are_still_checked)
{
    const char *feed =
        DISP(CANDS2("5", "6"), "1") DISP(CANDS2("50", "60"), "2") DISP(CANDS2("007", "6"), "1")
            DISP(CANDS2("18446744073709551616", "6"), "1") DISP(CANDS2("-1", "6"), "1")
                DISP(CANDS2("1.0", "6"), "1") DISP(CANDS2("null", "6"), "3")
                    DISP(CANDS2("7", "8"), "4") DISPX("3", CANDS2("9", "10"), "1")
                        DISPX("4", CANDS2("11", "12"), "1") DISP("", "0");
    ingest_both_ways(feed, 4, 7, "--\n" DISP(CANDS2("11", "12"), "13"));
}
END_TEST

START_TEST(over_long_line_is_an_error)
{
    const char *path = strdup(tu_path(tu_dir, "long.jsonl"));
    tu_write_file(path, MISS_LINE("1") MISS_LINE("2"));
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.max_line_bytes = 100;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, path, &opts, NULL), FDX_EDATA);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), ":1: line longer than 100 bytes"));
    fdx_store_rollback(db);
    /* A line of exactly the limit is taken with either ending, from a file
     * and from memory: the CR of a CRLF is the ending's, not the line's. */
    const char *line = MISS_LINE("1");
    size_t n = strlen(line) - 1;
    opts.max_line_bytes = n;
    for (int crlf = 0; crlf < 2; crlf++) {
        char text[512];
        snprintf(text, sizeof text, "%.*s%s%.*s%s", (int)n, line, crlf ? "\r\n" : "\n", (int)n,
                 line, crlf ? "\r" : "");
        tu_write_file(path, text);
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        ck_assert_msg(fdx_store_ingest_path(db, path, &opts, NULL) == FDX_OK, "%s",
                      fdx_store_errmsg(db));
        ck_assert_msg(fdx_store_ingest_buffer(db, "mem", text, strlen(text), &opts, NULL) == FDX_OK,
                      "%s", fdx_store_errmsg(db));
        ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    }
    opts.max_line_bytes = n - 1;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, path, &opts, NULL), FDX_EDATA);
    fdx_store_rollback(db);
    fdx_store_close(db);
    free((char *)path);
}
END_TEST

/* A transaction begun and rolled back: a writer's that failed, or a look at
 * the store under its write lock. */
static void begin_and_roll_back(fdx_store *db)
{
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
}

/* A writer that made the store at path (creating the file, or in a file that
 * holds nothing) and whose first transaction failed; not closed yet. */
static fdx_store *a_failed_creator(const char *path)
{
    fdx_store *db = tu_open(path);
    begin_and_roll_back(db);
    return db;
}

/* A writer that opened a new store another writer created, which failed and
 * removed it as unused, makes it anew at its first transaction: it had
 * written nothing into the removed file ("removed or replaced while this
 * transaction ran" failed an ingest that two creators raced). */
START_TEST(a_store_its_creator_removed_is_made_anew)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *creator, *writer;
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_CREATE, &creator), FDX_OK);
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_CREATE, &writer), FDX_OK);
    begin_and_roll_back(creator); /* its ingest failed */
    fdx_store_close(creator);
    ck_assert_int_ne(access(path, F_OK), 0);
    tu_commit_miss(writer, "w");
    ck_assert_int_eq(access(path, F_OK), 0);
    ck_assert_int_eq(fdx_store_cell_counts(writer, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 1);
    fdx_store_close(writer);
    fdx_store *again = tu_open(path);
    ck_assert_int_eq(fdx_store_cell_counts(again, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 1);
    fdx_store_close(again);
}
END_TEST

/* What a child does with a handle its parent opened and had a transaction
 * open on: 0 when every call that would use the parent's connection is
 * refused, naming the fork, and the handle closes. */
static int child_of_open_transaction(fdx_store *db)
{
    const char *dt[] = {"F16"};
    fdx_miss m = {"child", {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "cpu", "n/a"}};
    uint64_t misses, dispatches;
    int refused =
        fdx_store_record_miss(db, &m) == FDX_EMISUSE && fdx_store_commit(db, NULL) == FDX_EMISUSE &&
        strstr(fdx_store_errmsg(db), "forked from") != NULL && fdx_store_begin(db) == FDX_EMISUSE &&
        fdx_store_cell_counts(db, &misses, &dispatches) == FDX_EMISUSE &&
        fdx_store_rollback(db) == FDX_EMISUSE && fdx_store_set_busy_timeout(db, 1) == FDX_EMISUSE;
    return fdx_store_close(db) == FDX_OK && refused ? 0 : 1;
}

/* A handle used in a child of the process that opened it would commit into
 * the parent's transaction through the connection they share (both commits
 * said they succeeded, and one was lost) or tear it down: every call is
 * refused there, and the parent's transaction commits as if no fork had
 * been. A store opened in the child works. The child's rollback refused only
 * after it had cut the spill file it shares with the parent to nothing, and
 * the parent's commit then failed, its cells lost. */
START_TEST(a_forked_child_cannot_use_its_parents_handle)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    const char *dt[] = {"F16"};
    fdx_miss m = {"parent", {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "cpu", "n/a"}};
    char wanted[32];
    tu_commit_miss(db, "seed");
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    db->spill_bytes = 1024;
    for (int i = 0; i < 200; i++) {
        snprintf(wanted, sizeof wanted, "parent %d", i);
        m.wanted = wanted;
        ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
    }
    ck_assert_uint_gt(db->spills, 0);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        int rc = child_of_open_transaction(db);
        fdx_store *own = NULL;
        uint64_t seen = 0, none;
        if (rc == 0 && (fdx_store_open(path, FDX_OPEN_FOR_READING, &own) != FDX_OK ||
                        fdx_store_cell_counts(own, &seen, &none) != FDX_OK || seen != 1))
            rc = 2;
        fdx_store_close(own);
        _exit(rc);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    ck_assert_msg(fdx_store_commit(db, NULL) == FDX_OK, "%s", fdx_store_errmsg(db));
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 201);
    fdx_store_close(db);
}
END_TEST

/* In a child forked while the parent's handle held a transaction: 0 when a
 * writer's open here is refused at once, naming the fork (before and after
 * the inherited handle's close), and the store still reads. */
static int child_of_a_held_write_lock(fdx_store *inherited, const char *path)
{
    fdx_store *own = NULL, *later = NULL;
    uint64_t misses = 0, none;
    int rc = fdx_store_open_v2(path, 0, 5000, &own) == FDX_EMISUSE &&
                     strstr(fdx_store_errmsg(own), "forked while a handle of its parent held") &&
                     fdx_store_close(inherited) == FDX_OK &&
                     fdx_store_open_v2(path, 0, 5000, &later) == FDX_EMISUSE
                 ? 0
                 : 1;
    fdx_store_close(own);
    fdx_store_close(later);
    if (rc == 0 && (fdx_store_open(path, FDX_OPEN_FOR_READING, &own) != FDX_OK ||
                    fdx_store_cell_counts(own, &misses, &none) != FDX_OK || misses != 1))
        rc = 2;
    fdx_store_close(own);
    return rc;
}

/* A child forked while its parent's handle held the store's write lock
 * inherits SQLite's record of that lock, shared by every connection the
 * child opens to the file: "open the store again in the child" gave a
 * handle whose every begin waited out its busy timeout, after the parent had
 * committed and closed too (and a writer's open of a store in its first
 * transaction, which turns it to WAL, waited the same). Such an open is
 * refused at once, naming the fork; a child forked outside any transaction
 * writes as before. */
START_TEST(a_child_forked_in_a_transaction_is_told_it_cannot_write)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    tu_commit_miss(db, "seed");
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0)
        _exit(child_of_a_held_write_lock(db, path));
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    fflush(NULL);
    child = fork();
    if (child == 0) { /* no transaction open: the child writes */
        fdx_store *own = NULL;
        int ok = fdx_store_close(db) == FDX_OK && fdx_store_open_v2(path, 0, 5000, &own) == FDX_OK;
        ok = ok && fdx_store_begin(own) == FDX_OK && fdx_store_commit(own, NULL) == FDX_OK;
        fdx_store_close(own);
        _exit(ok ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    fdx_store_close(db);
}
END_TEST

static volatile int finding; /* 1 while slow_match runs, under the registry's lock */

static int slow_match(const void *owner)
{
    (void)owner;
    finding = 1;
    usleep(300 * 1000);
    return 0;
}

static void *find_slowly(void *path)
{
    fdx_open_stores_find(path, slow_match);
    return NULL;
}

static void stuck(int sig)
{
    (void)sig;
    _exit(99);
}

/* Holds SQLite's allocator mutex (taken in every sqlite3_malloc) a moment. */
static void *hold_sqlite_allocator(void *unused)
{
    (void)unused;
    sqlite3_mutex *mem = sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_MEM);
    sqlite3_mutex_enter(mem);
    finding = 1;
    usleep(300 * 1000);
    sqlite3_mutex_leave(mem);
    return NULL;
}

/* What a child forked beside a holder does: 0 when it could. */
typedef int (*in_child_fn)(fdx_store *db, const char *path);

static int closes_the_parents_handle(fdx_store *db, const char *path)
{
    (void)path;
    return fdx_store_close(db) == FDX_OK ? 0 : 1;
}

static int opens_the_store(fdx_store *db, const char *path)
{
    (void)db;
    fdx_store *own = NULL;
    int rc = fdx_store_open(path, FDX_OPEN_FOR_READING, &own);
    fdx_store_close(own);
    return rc == FDX_OK ? 0 : 1;
}

/* Forks while a thread runs holder (which sets finding once it holds its
 * lock); the child does what, and is not left waiting. */
static void fork_beside(void *(*holder)(void *), fdx_store *db, const char *path, in_child_fn what)
{
    pthread_t thread;
    finding = 0;
    ck_assert_int_eq(pthread_create(&thread, NULL, holder, (void *)path), 0);
    while (!finding)
        usleep(1000);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        signal(SIGALRM, stuck);
        alarm(5);
        _exit(what(db, path));
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}

/* A child forked while another thread of the parent was inside the registry
 * of open stores (common/open_stores.h) found its lock held by a thread it
 * does not have: its fdx_store_close of the parent's handle, which forgets
 * the store there, waited for ever; and one forked while a thread was inside
 * SQLite's allocator waited for SQLite's mutex at its first call. The
 * library's locks, and those of SQLite's that it holds a moment, are taken
 * around every fork. */
START_TEST(a_child_forked_beside_a_thread_in_the_library_can_close)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    fork_beside(find_slowly, db, path, closes_the_parents_handle);
    tu_commit_miss(db, "seed");
    fork_beside(hold_sqlite_allocator, db, path, opens_the_store);
    fdx_store_close(db);
}
END_TEST

START_TEST(records_need_a_transaction_and_valid_text)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    const char *dt[] = {"F16"};
    fdx_miss m = {"w", {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "cpu", "n/a"}};
    ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_record_miss(db, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_record_dispatch(db, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_begin(db), FDX_EMISUSE);
    m.wanted = "bad\xc3";
    ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_EDATA);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "wanted: invalid UTF-8"));
    m.wanted = "w";
    m.fallback.kernel_source = NULL;
    ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_EDATA);
    m.fallback.kernel_source = "src";
    ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
    /* Only the valid record reached the transaction: either refused one
     * would be a cell of its own. */
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 1);
    ck_assert_uint_eq(dispatches, 0);
    ck_assert_int_eq(fdx_store_export(db, tu_path(tu_dir, "out"), NULL), FDX_OK);
    char *text = tu_read_file(tu_path(tu_path(tu_dir, "out"), "misses.jsonl"), NULL);
    ck_assert_ptr_nonnull(strstr(text, "\"wanted\":\"w\","));
    ck_assert_ptr_nonnull(strstr(text, "\"count\":1,"));
    free(text);
    fdx_store_close(db);
}
END_TEST

START_TEST(many_distinct_cells_spill_and_stay_exact)
{
    /* More distinct cells than are kept in memory, each seen twice. */
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    const char *dt[] = {"F16"};
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    char wanted[32];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 70000; i++) {
            snprintf(wanted, sizeof wanted, "w%d", i);
            fdx_miss m = {wanted, {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "c", "d"}};
            ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
        }
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_gt(db->spills, 1);
    ck_assert_uint_eq(cs.cells_added, 70000);
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 70000);
    fdx_export_stats es;
    ck_assert_int_eq(fdx_store_export(db, tu_path(tu_dir, "out"), &es), FDX_OK);
    char *m = tu_read_file(tu_path(tu_path(tu_dir, "out"), "misses.jsonl"), NULL);
    ck_assert_ptr_null(strstr(m, "\"count\":1,"));
    free(m);
    fdx_store_close(db);
}
END_TEST

/* Records `n` miss cells w<first> .. w<first+n-1>, `passes` times over, so
 * that with more cells than are kept in memory each cell is written by more
 * than one flush of the transaction. */
static void record_cells(fdx_store *db, int first, int n, int passes)
{
    const char *dt[] = {"F16"};
    char wanted[32];
    for (int pass = 0; pass < passes; pass++)
        for (int i = first; i < first + n; i++) {
            snprintf(wanted, sizeof wanted, "w%d", i);
            fdx_miss m = {wanted, {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "c", "d"}};
            ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
        }
}

/* A record call that returns want (a transaction that cannot go on). */
static void record_cells_fail(fdx_store *db, int want)
{
    const char *dt[] = {"F16"};
    fdx_miss m = {"w0", {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "c", "d"}};
    ck_assert_int_eq(fdx_store_record_miss(db, &m), want);
}

/* A text longer than SQLite stores is refused by its bind, which binds NULL
 * instead: the commit says so, rather than "NOT NULL constraint failed",
 * into a store that holds no cell and into one that does. */
START_TEST(a_text_longer_than_sqlite_stores_fails_its_commit_saying_so)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    size_t n = 5000;
    char *longer = malloc(n + 1);
    memset(longer, 'a', n);
    longer[n] = 0;
    const char *dt[] = {"F16"};
    for (int stored = 0; stored < 2; stored++) {
        sqlite3_limit(db->db, SQLITE_LIMIT_LENGTH, 4096);
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        fdx_miss m = {longer, {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "c", "d"}};
        ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
        ck_assert_int_ne(fdx_store_commit(db, NULL), FDX_OK);
        ck_assert_msg(strstr(fdx_store_errmsg(db), "too big") != NULL, "%s", fdx_store_errmsg(db));
        fdx_store_rollback(db);
        sqlite3_limit(db->db, SQLITE_LIMIT_LENGTH, 1000000000);
        tu_commit_miss(db, "w0");
    }
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 1);
    free(longer);
    fdx_store_close(db);
}
END_TEST

/* JSONL of the same cells as record_cells, once each, then a bad line. */
static char *bad_feed_of(int first, int n, size_t *len)
{
    size_t cap = (size_t)n * 200 + 64;
    char *text = malloc(cap);
    *len = 0;
    for (int i = first; i < first + n; i++)
        *len += (size_t)snprintf(text + *len, cap - *len,
                                 "{\"schema\":2,\"wanted\":\"w%d\",\"fallback\":{\"backend\":"
                                 "\"Cuda\",\"op\":\"MatMul\",\"dtypes\":[\"F16\"],"
                                 "\"kernel_source\":\"src\",\"kernel_revision_hash\":1},"
                                 "\"count\":1,\"hw\":{\"hardware_sku\":\"c\","
                                 "\"driver_version\":\"d\"}}\n",
                                 i);
    *len += (size_t)snprintf(text + *len, cap - *len, "oops\n");
    return text;
}

/* The cells of a source read before one that spills wait aside in arrays
 * of their own size, not in the arrays the whole budget filled: when the
 * later source fails, pending gets them back that way. */
START_TEST(cells_kept_aside_hold_no_slack)
{
    const char *paths[2];
    paths[0] = strdup(tu_path(tu_dir, "a.jsonl"));
    paths[1] = strdup(tu_path(tu_dir, "bad.jsonl"));
    size_t len;
    char *text = bad_feed_of(0, 2000, &len);
    text[len - strlen("oops\n")] = '\0';
    tu_write_file(paths[0], text);
    free(text);
    text = bad_feed_of(10000, 60000, &len);
    tu_write_file(paths[1], text);
    free(text);
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_paths(db, paths, 2, NULL, NULL), FDX_EDATA);
    ck_assert_uint_gt(db->spills, 0);
    ck_assert_uint_eq(fdx_agg_cells(db->pending), 2000);
    ck_assert_uint_le(fdx_agg_allocated(db->pending), fdx_agg_bytes(db->pending) + 64);
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, 2000);
    fdx_store_close(db);
    free((char *)paths[0]);
    free((char *)paths[1]);
}
END_TEST

/* Records a miss whose wanted is name padded to pad bytes. */
static void record_padded(fdx_store *db, int i, size_t pad)
{
    char wanted[4096];
    const char *dt[] = {"F16"};
    int n = snprintf(wanted, sizeof wanted, "w%d-", i);
    memset(wanted + n, 'x', pad > (size_t)n ? pad - (size_t)n : 0);
    wanted[pad > (size_t)n ? pad : (size_t)n] = '\0';
    fdx_miss m = {wanted, {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "c", "d"}};
    ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
}

/* The default VFS, wrapped to count the statement journals SQLite opens as
 * files: one spills there once a statement has copied 64 KiB of the pages it
 * changes, and each page is then written to it before the store. */
static sqlite3_vfs *plain_vfs;
static int subjournals_opened;

/* Makes *vfs the default: the default VFS with its xOpen replaced by open
 * (which passes on to plain_vfs). */
static void wrap_default_vfs(sqlite3_vfs *vfs, const char *name,
                             int (*open)(sqlite3_vfs *, sqlite3_filename, sqlite3_file *, int,
                                         int *))
{
    plain_vfs = sqlite3_vfs_find(NULL);
    ck_assert_ptr_nonnull(plain_vfs);
    *vfs = *plain_vfs;
    vfs->zName = name;
    vfs->xOpen = open;
    ck_assert_int_eq(sqlite3_vfs_register(vfs, 1), SQLITE_OK);
}

/* Puts the default VFS back (first: a VFS registered meanwhile, fdx's own,
 * may have come to follow the wrapper). */
static void unwrap_default_vfs(sqlite3_vfs *vfs)
{
    ck_assert_int_eq(sqlite3_vfs_unregister(vfs), SQLITE_OK);
    ck_assert_int_eq(sqlite3_vfs_register(plain_vfs, 1), SQLITE_OK);
    ck_assert_ptr_eq(sqlite3_vfs_find(NULL), plain_vfs);
}

static int counting_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
                         int *out)
{
    (void)vfs;
    subjournals_opened += (flags & SQLITE_OPEN_SUBJOURNAL) != 0;
    return plain_vfs->xOpen(plain_vfs, name, f, flags, out);
}

/* 3,000 new cells of a kind with keys of 1,000 bytes, into a new store. */
static void write_long_keys(fdx_store *db, int dispatches)
{
    if (!dispatches) {
        for (int i = 0; i < 3000; i++)
            record_padded(db, i, 1000);
        return;
    }
    size_t cap = 3000 * 1300, len = 0;
    char *feed = malloc(cap), pad[1001];
    ck_assert_ptr_nonnull(feed);
    memset(pad, 'x', 1000);
    pad[1000] = '\0';
    for (int i = 0; i < 3000; i++)
        len += (size_t)snprintf(feed + len, cap - len,
                                "{\"schema\":2,\"structure_key\":\"%d-%s\",\"chosen\":" IMPL_H(
                                    "k", "1") ",\"count\":1,\"hw\":" GPU "}\n",
                                i, pad);
    ck_assert_uint_lt(len, cap);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "d", feed, len, NULL, NULL), FDX_OK);
    free(feed);
}

/* Cells the store does not hold (none, in a new store; looked up in one that
 * holds cells) cannot be stored already, and a failed flush leaves a
 * transaction that can only be rolled back: the statements that write them
 * in groups need no journal of their own. Long keys make each statement
 * change more than 64 KiB of pages that the statements before it wrote. */
START_TEST(new_cells_are_written_without_statement_journals)
{
    static sqlite3_vfs counting;
    wrap_default_vfs(&counting, "fdx-test-counting", counting_open);
    for (int way = 0; way < 4; way++) {
        int dispatches = way & 1, held = way >> 1;
        char name[16];
        snprintf(name, sizeof name, "%s%s.db", dispatches ? "d" : "m", held ? "_held" : "");
        fdx_store *db = tu_open(tu_path(tu_dir, name));
        fdx_commit_stats cs;
        if (held) {
            ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
            record_cells(db, 0, 1, 1);
            ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
        }
        subjournals_opened = 0;
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        write_long_keys(db, dispatches);
        ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
        ck_assert_uint_eq(cs.cells_added, 3000);
        fdx_store_close(db);
        ck_assert_msg(subjournals_opened == 0, "%s: %d statement journals opened", name,
                      subjournals_opened);
    }
    unwrap_default_vfs(&counting);
}
END_TEST

/* What an ingest's line memos keep past their least bound is lent from the
 * budget: pending spills that much sooner, never with less than half the
 * budget to itself. What the spill's sort will take counts too: pending
 * spills before its cells and their sort together pass the room (sorting
 * a budget of small cells took 5 MiB more at each spill, and flush-shaped
 * feeds to 31 MiB of peak RSS). */
START_TEST(pending_spills_sooner_by_what_is_lent_to_the_memos)
{
    static const char *const names[] = {"none.db", "quarter.db", "all.db"};
    size_t budget = (size_t)1 << 20, lent[] = {0, budget / 4, SIZE_MAX};
    size_t room[] = {budget, budget - budget / 4, budget / 2};
    for (int k = 0; k < 3; k++) {
        fdx_store *db = open_spilling(tu_path(tu_dir, names[k]));
        db->spill_lent = lent[k];
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        size_t held = 0;
        for (int i = 0; db->spills == 0; i++) {
            held = fdx_agg_bytes(db->pending) + fdx_agg_key_order_bytes(fdx_agg_cells(db->pending));
            record_padded(db, i, 64);
        }
        ck_assert_uint_lt(held, room[k]);
        ck_assert_uint_gt(held + 512, room[k]);
        fdx_store_rollback(db);
        fdx_store_close(db);
    }
}
END_TEST

/* Statements that wrote new miss cells, and how many of them came before the
 * first that wrote history rows (-1: none came). */
typedef struct write_order {
    long cell_stmts;
    long before_history;
} write_order;

static int note_write(unsigned type, void *ctx, void *stmt, void *sql)
{
    (void)type;
    (void)sql;
    write_order *o = ctx;
    const char *text = sqlite3_sql(stmt);
    if (strstr(text, "INTO cell_history") && o->before_history < 0)
        o->before_history = o->cell_stmts;
    else if (strstr(text, "INTO miss_cell"))
        o->cell_stmts++;
    return 0;
}

/* A new store numbers its cells in the order written, so their history rows
 * come sorted: they go out every 16,384 cells instead of waiting for 262,144
 * (4 MiB) while pending still holds its budget. That took a flush-shaped
 * feed of 900,000 long lines to 32 MiB of peak RSS. */
START_TEST(a_new_stores_history_rows_do_not_wait_for_all_its_cells)
{
    enum { CELLS = 40000, GROUP = 16, WAIT = 16384 };
    fdx_store *db = tu_open(tu_path(tu_dir, "h.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 0, CELLS, 1);
    write_order o = {0, -1};
    sqlite3_trace_v2(db->db, SQLITE_TRACE_STMT, note_write, &o);
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    sqlite3_trace_v2(db->db, 0, NULL, NULL);
    ck_assert_uint_eq(cs.cells_added, CELLS);
    ck_assert_int_ge(o.cell_stmts, CELLS / GROUP);
    ck_assert_int_ge(o.before_history, WAIT / GROUP);
    ck_assert_int_le(o.before_history, WAIT / GROUP + GROUP);
    int64_t rows_and_total[2];
    raw_ints(db->path, "SELECT count(*), sum(count) FROM cell_history", rows_and_total, 2);
    ck_assert_int_eq(rows_and_total[0], CELLS);
    ck_assert_int_eq(rows_and_total[1], CELLS);
    fdx_store_close(db);
}
END_TEST

/* Once spilled, pending keeps the arrays its run filled, so the next run of
 * the same shape reuses their pages: the second run allocates nothing more.
 * A run of another shape (long keys after many short ones) fills other
 * arrays while the first run's pages stay in memory; it spills before those
 * and its own cells pass its room by a sixteenth of the budget, so the two
 * runs' largest arrays are never held at once. Both ways to spill: records
 * outside an ingest, and an ingest's source (which goes back to its mark). */
START_TEST(pending_reuses_its_arrays_within_the_budget)
{
    enum { FEED_CELLS = 30000, LONG = 3000 };
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    size_t bound = db->spill_bytes + db->spill_bytes / 16 + LONG + 64;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    int i = 0;
    while (db->spills == 0)
        record_padded(db, i++, 8);
    size_t kept = fdx_agg_allocated(db->pending);
    ck_assert_uint_eq(fdx_agg_cells(db->pending), 0);
    ck_assert_uint_gt(kept, db->spill_bytes / 4);
    ck_assert_uint_le(kept, bound);
    ck_assert_uint_ge(fdx_agg_resident(db->pending), kept - fdx_agg_bytes(db->pending) - 64);
    while (db->spills == 1)
        record_padded(db, i++, 8);
    ck_assert_uint_le(fdx_agg_allocated(db->pending), kept);
    while (db->spills < 5) {
        record_padded(db, i++, LONG);
        ck_assert_uint_le(fdx_agg_resident(db->pending), bound);
    }
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, (uint64_t)i);
    size_t spills = db->spills, len;
    char *text = bad_feed_of(0, FEED_CELLS, &len);
    text[len - strlen("oops\n")] = '\0';
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "a", text, strlen(text), NULL, NULL), FDX_OK);
    free(text);
    ck_assert_uint_gt(db->spills, spills + 1);
    ck_assert_uint_le(fdx_agg_resident(db->pending), bound);
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, FEED_CELLS);
    fdx_store_close(db);
}
END_TEST

/* An ingest begins by writing the cells recorded before it. When that write
 * fails partway (here a trigger refuses one cell), the cells before it are
 * in SQLite and still pending: going on would write them twice. So the
 * transaction takes nothing more and its commit fails; a rollback leaves the
 * store as it was, and the next transaction counts each cell once. */
/* A commit that must be refused, leaving the store its misses_kept cells. */
static void commit_refused(fdx_store *db, uint64_t misses_kept)
{
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_EMISUSE);
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, misses_kept);
}

/* Records n new cells from w<first> in a transaction of their own. */
static void record_committed(fdx_store *db, int first, int n)
{
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, first, n, 1);
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, (uint64_t)n);
}

/* A copy's first write moves the history it holds aside and back in a TEMP
 * table (identity_relabel*.sql). The rows are read once, in order, so the
 * TEMP cache is kept small: at SQLite's default, 2 MiB of its pages stayed
 * with the connection beside the ingest that followed. */
START_TEST(a_copys_relabelling_keeps_a_small_temp_cache)
{
    enum { CELLS = 100000 };
    char orig[4096], copy[4096];
    snprintf(orig, sizeof orig, "%s", tu_path(tu_dir, "orig.db"));
    snprintf(copy, sizeof copy, "%s", tu_path(tu_dir, "copy.db"));
    fdx_store *db = tu_open(orig);
    record_committed(db, 0, CELLS);
    fdx_store_close(db);
    size_t len;
    char *bytes = tu_read_file(orig, &len);
    FILE *f = fopen(copy, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
    free(bytes);
    db = tu_open(copy);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK); /* a copy: its history is relabelled */
    int64_t moved[1];
    raw_ints(orig, "SELECT count(*) FROM cell_history", moved, 1);
    ck_assert_int_eq(moved[0], CELLS);
    int used = 0, high = 0;
    ck_assert_int_eq(sqlite3_db_status(db->db, SQLITE_DBSTATUS_CACHE_USED, &used, &high, 0),
                     SQLITE_OK);
    /* the store's own cache (2000 KiB) and the TEMP one's 256 KiB, with their
     * pages' headers */
    ck_assert_int_lt(used, (2000 + 256) * 1024 * 11 / 10);
    record_cells(db, CELLS, 1, 1); /* a commit of nothing but the relabelling is none */
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    fdx_store_close(db);
    raw_ints(copy, "SELECT count(*) FROM cell_history WHERE origin <> 0", moved, 1);
    ck_assert_int_eq(moved[0], CELLS);
}
END_TEST

/* Creates a trigger (sql) that makes the next write fail, then ingests a
 * line, which must fail saying why. */
static void ingest_refused(fdx_store *db, const char *sql, const char *why)
{
    ck_assert_int_eq(sqlite3_exec(db->db, sql, NULL, NULL, NULL), SQLITE_OK);
    const char *line = MISS_LINE("3");
    ck_assert_int_ne(fdx_store_ingest_buffer(db, "a", line, strlen(line), NULL, NULL), FDX_OK);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), why));
}

START_TEST(a_write_that_fails_partway_leaves_only_a_rollback)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 0, 1000, 1);
    const char *line = MISS_LINE("3");
    ingest_refused(db,
                   "CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.miss_cell "
                   "WHEN NEW.wanted = 'w5' BEGIN SELECT RAISE(ABORT, 'refused'); END",
                   "refused");
    ck_assert_int_eq(sqlite3_exec(db->db, "DROP TRIGGER temp.refuse", NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "a", line, strlen(line), NULL, NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "can only be rolled back"));
    record_cells_fail(db, FDX_EMISUSE);
    commit_refused(db, 0);
    record_committed(db, 0, 1000);
    sqlite3_stmt *st;
    ck_assert_int_eq(
        sqlite3_prepare_v2(db->db, "SELECT max(count), count(*) FROM miss_cell", -1, &st, NULL),
        SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_int_eq(sqlite3_column_int(st, 0), 1);
    ck_assert_int_eq(sqlite3_column_int(st, 1), 1000);
    sqlite3_finalize(st);
    fdx_store_close(db);
}
END_TEST

/* A statement that fails can make SQLite roll the whole transaction back by
 * itself (a full disk, or here a trigger's RAISE(ROLLBACK) on an ingest's
 * source row, after the cells recorded before it were written): what follows
 * must not run outside a transaction, each statement committed at once, and
 * the commit must leave the store as it was. */
START_TEST(a_transaction_sqlite_rolled_back_is_not_written_after)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 0, 10, 1);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 100, 600, 1);
    ingest_refused(db,
                   "CREATE TEMP TRIGGER gone BEFORE INSERT ON main.ingest_source "
                   "BEGIN SELECT RAISE(ROLLBACK, 'gone'); END",
                   "gone");
    ck_assert_int_eq(sqlite3_get_autocommit(db->db), 1);
    record_cells_fail(db, FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "can only be rolled back"));
    commit_refused(db, 10);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_EMISUSE); /* the commit rolled it back */
    record_committed(db, 100, 600);
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 610);
    fdx_store_close(db);
}
END_TEST

/* A prune that fails partway (here a trigger refuses the dispatch cells
 * after the miss cells are gone) leaves the transaction only a rollback:
 * committing it would keep half a prune. */
START_TEST(a_prune_that_fails_partway_leaves_only_a_rollback)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    const char *dt[] = {"F16"};
    fdx_dispatch d = {"s", {"Cuda", "MatMul", dt, 1, "k", 1}, NULL, 0, 4, {0, 0, 0, "c", "d"}};
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 0, 10, 1);
    ck_assert_int_eq(fdx_store_record_dispatch(db, &d), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(sqlite3_exec(db->db,
                                  "CREATE TEMP TRIGGER refuse BEFORE DELETE ON main.dispatch_cell "
                                  "BEGIN SELECT RAISE(ABORT, 'refused'); END",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    fdx_prune_filter op = {NULL, NULL, NULL, "MatMul", NULL, NULL, 0};
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_ne(fdx_store_prune(db, &op, NULL), FDX_OK);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "refused"));
    ck_assert_int_eq(sqlite3_exec(db->db, "DROP TRIGGER temp.refuse", NULL, NULL, NULL), SQLITE_OK);
    record_cells_fail(db, FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_EMISUSE);
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 10);
    ck_assert_uint_eq(dispatches, 1);
    fdx_store_close(db);
}
END_TEST

/* A cell counts once, as added when this transaction created it and as
 * updated when it was stored before, however many flushes wrote it. */
START_TEST(added_cells_count_once_across_spills)
{
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK); /* a fresh store */
    record_cells(db, 0, 70000, 2);
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_gt(db->spills, 1);
    ck_assert_uint_eq(cs.cells_added, 70000);
    ck_assert_uint_eq(cs.cells_updated, 0);
    fdx_store_close(db);
}
END_TEST

START_TEST(updated_cells_count_once_across_spills)
{
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 0, 70000, 1);
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK); /* 30,000 stored cells, 40,000 new */
    record_cells(db, 40000, 70000, 2);
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, 40000);
    ck_assert_uint_eq(cs.cells_updated, 30000);
    fdx_store_close(db);
}
END_TEST

/* An ingest that wrote stored cells and was undone leaves them to count when
 * the transaction writes them again. */
START_TEST(cells_of_an_undone_ingest_count_when_written_again)
{
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 0, 70000, 1);
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    size_t len;
    char *bad = bad_feed_of(0, 70000, &len);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    uint64_t before = db->spills;
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "bad", bad, len, NULL, NULL), FDX_EDATA);
    ck_assert_uint_gt(db->spills, before);
    record_cells(db, 69990, 20, 1);
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, 10);
    ck_assert_uint_eq(cs.cells_updated, 10);
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 70010);
    fdx_store_close(db);
    free(bad);
}
END_TEST

/* A dispatch cell of its own, with no candidates in the first ingest below. */
#define DISP_T(cands, count)                                                                       \
    "{\"schema\":2,\"structure_key\":\"t\",\"chosen\":" IMPL_H("k", "1") cands                     \
        ",\"count\":" count ",\"hw\":" GPU "}\n"

/* An ingest that fails takes back what it did to cells that earlier ingests
 * of the same call recorded (their counts, and candidates it replaced or
 * gave, twice over), and the cells it added; with or without spilling. */
static void failed_ingest_restores_cells(int spill, int threads)
{
    char name[32];
    snprintf(name, sizeof name, "s%d%d.db", spill, threads);
    fdx_store *db = spill ? open_spilling(tu_path(tu_dir, name)) : tu_open(tu_path(tu_dir, name));
    const char *paths[3];
    paths[0] = strdup(tu_path(tu_dir, "first.jsonl"));
    paths[1] = strdup(tu_path(tu_dir, "bad.jsonl"));
    paths[2] = strdup(tu_path(tu_dir, "last.jsonl"));
    tu_write_file(paths[0], DISP(CANDS("5"), "2") MISS_LINE("3") DISP_T("", "2"));
    size_t cap = 80000 * 260, len = 0;
    char *bad = malloc(cap);
    len += (size_t)snprintf(bad + len, cap - len, "%s",
                            DISP(CANDS("7"), "10") MISS_LINE("10") DISP(CANDS("9"), "10")
                                DISP_T(CANDS("7"), "10") DISP_T(CANDS("9"), "10"));
    for (int i = 0; i < (spill ? 70000 : 3000); i++) /* past one batch */
        len += (size_t)snprintf(bad + len, cap - len,
                                "{\"schema\":2,\"wanted\":\"n%d\",\"fallback\":" IMPL_H(
                                    "k", "1") ",\"count\":1,\"hw\":" CPU "}\n",
                                i);
    len += (size_t)snprintf(bad + len, cap - len, "%s", DISP(CANDS("11"), "10") "oops\n");
    tu_write_file(paths[1], bad);
    tu_write_file(paths[2], MISS_LINE("1"));
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.threads = threads;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_paths(db, paths, 3, &opts, NULL), FDX_EDATA);
    ck_assert_uint_eq(db->spills > 0, (uint64_t)spill);
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, 3);
    char *out = tu_export(db, tu_path(tu_dir, name + 1));
    ck_assert_str_eq(out, MISS_OUT("4") DISP(CANDS("5"), "2") DISP_T("", "2"));
    free(out);
    fdx_store_close(db);
    free(bad);
    for (int i = 0; i < 3; i++)
        free((char *)paths[i]);
}

/* Lines of `n` miss cells n<first> .. of their own, enough to spill. */
static size_t filler(char *out, size_t cap, int first, int n)
{
    size_t len = 0;
    for (int i = first; i < first + n; i++)
        len += (size_t)snprintf(out + len, cap - len,
                                "{\"schema\":2,\"wanted\":\"n%d\",\"fallback\":" IMPL_H(
                                    "k", "1") ",\"count\":1,\"hw\":" CPU "}\n",
                                i);
    return len;
}

/* A cell met in several spilled runs and in memory sums its counts and
 * keeps the newest non-empty candidates, whether the runs were spilled
 * inside an ingest or between records. */
START_TEST(spilled_runs_keep_the_newest_candidates)
{
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    size_t cap = 80000 * 200, len = 0;
    char *feed = malloc(cap);
    len += (size_t)snprintf(feed, cap, "%s", DISP_T(CANDS("7"), "1"));
    len += filler(feed + len, cap - len, 0, 30000);
    len += (size_t)snprintf(feed + len, cap - len, "%s", DISP_T(CANDS("9"), "2"));
    len += filler(feed + len, cap - len, 30000, 30000);
    len += (size_t)snprintf(feed + len, cap - len, "%s", DISP_T("", "4"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 0, 40000, 1);
    ck_assert_uint_gt(db->spills, 0);
    uint64_t before = db->spills;
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "feed", feed, len, NULL, NULL), FDX_OK);
    ck_assert_uint_gt(db->spills, before + 1);
    record_cells(db, 0, 10, 1);
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, 40000 + 60000 + 1);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_ptr_nonnull(strstr(out, DISP_T(CANDS("9"), "7")));
    ck_assert_ptr_nonnull(strstr(out, "\"wanted\":\"w9\",\"fallback\":{\"backend\":\"Cuda\""));
    int64_t got[2];
    raw_ints(tu_path(tu_dir, "s.db"),
             "SELECT sum(count), sum(wanted GLOB 'w*' AND count = 2) FROM miss_cell", got, 2);
    ck_assert_int_eq(got[0], 40000 + 60000 + 10);
    ck_assert_int_eq(got[1], 10);
    free(out);
    free(feed);
    fdx_store_close(db);
}
END_TEST

/* Records dispatch cell s<i> with 100 candidates (about 9 KiB as text),
 * every latency lat. */
static void record_big_cands(fdx_store *db, int i, uint64_t lat)
{
    static const char *dt[] = {"F16"};
    char key[32], sources[100][16];
    fdx_candidate cands[100];
    for (int c = 0; c < 100; c++) {
        snprintf(sources[c], sizeof sources[c], "cand%d", c);
        cands[c] = (fdx_candidate){{"Cuda", "MatMul", dt, 1, sources[c], (uint64_t)c}, 1, lat};
    }
    snprintf(key, sizeof key, "s%d", i);
    fdx_dispatch d = {key, {"Cuda", "MatMul", dt, 1, "k", 1}, cands, 100, 1, {0, 0, 0, "c", "d"}};
    ck_assert_int_eq(fdx_store_record_dispatch(db, &d), FDX_OK);
}

/* Past a thousand runs, each run's read-ahead is smaller than one record:
 * the merge still writes every record whole, sums each cell and keeps its
 * newest list. */
START_TEST(a_merge_of_many_runs_reads_records_larger_than_its_share)
{
    enum { CELLS = 1100 };
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    db->spill_bytes = 1024;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < CELLS; i++)
            record_big_cands(db, i, pass ? 9 : 7);
    ck_assert_uint_gt(db->spills, 2000);
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, CELLS);
    int64_t got[3];
    raw_ints(tu_path(tu_dir, "s.db"),
             "SELECT count(*), sum(count = 2), sum(candidates NOT LIKE '%\"latency_ns\":7%' AND "
             "length(candidates) > 8000) FROM dispatch_cell",
             got, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(got[i], CELLS);
    fdx_store_close(db);
}
END_TEST

/* Records cells x0 .. x69999 until a call fails: its status, or FDX_OK. */
static int record_until_failure(fdx_store *db)
{
    const char *dt[] = {"F16"};
    int rc = FDX_OK;
    char wanted[32];
    for (int i = 0; rc == FDX_OK && i < 70000; i++) {
        snprintf(wanted, sizeof wanted, "x%d", i);
        fdx_miss m = {wanted, {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "c", "d"}};
        rc = fdx_store_record_miss(db, &m);
    }
    return rc;
}

/* A spill that cannot be written fails the call that needed it, says where,
 * and the transaction, rolled back, leaves the store as it was. */
START_TEST(spill_that_cannot_be_written_fails_cleanly)
{
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 0, 10, 1);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(setenv("TMPDIR", tu_path(tu_dir, "no-such-dir"), 1), 0);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    int rc = record_until_failure(db);
    ck_assert_int_eq(rc, FDX_EIO);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "spilling cells: cannot create"));
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "no-such-dir"));
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    unsetenv("TMPDIR");
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 10);
    fdx_store_close(db);
}
END_TEST

/* An ingest stopped by a failure that is not bad data (here a spill that
 * cannot be written) still undoes the path it stopped in: committing what
 * the transaction holds then keeps the paths before it, not part of it. */
START_TEST(path_stopped_by_a_failed_spill_is_undone)
{
    size_t len;
    char *big = bad_feed_of(0, 70000, &len);
    big_path_fails_alone(big, len - strlen("oops\n"), FDX_EIO, tu_path(tu_dir, "no-such-dir"));
    free(big);
}
END_TEST

/* The size of the open spill file under dir, or -1 when there is none. */
static long long spill_file_bytes(const char *dir)
{
    struct stat st;
    return tu_open_file_in(dir, &st) ? (long long)st.st_size : -1;
}

/* A spill cut short by a full disk gives its space back at once: the
 * transaction, rolled back or not, holds none of it. */
START_TEST(spill_cut_short_gives_its_space_back)
{
    const char *dir = strdup(tu_path(tu_dir, "tmp"));
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, small = {256 << 10, 256 << 10};
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    small.rlim_max = old.rlim_max;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = record_until_failure(db);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    unsetenv("TMPDIR");
    ck_assert_int_eq(rc, FDX_EIO);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "spilling cells: writing"));
    ck_assert_int_eq(spill_file_bytes(dir), 0);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    ck_assert_int_eq(spill_file_bytes(dir), 0);
    fdx_store_close(db);
    ck_assert_int_eq(spill_file_bytes(dir), -1);
    free((char *)dir);
}
END_TEST

/* Runs are spilled into any $TMPDIR a path can name, however long. */
START_TEST(spill_goes_to_a_long_tmpdir)
{
    char dir[1200];
    size_t len = (size_t)snprintf(dir, sizeof dir, "%s", tu_dir);
    while (len < 700) {
        len += (size_t)snprintf(dir + len, sizeof dir - len, "/%.60s",
                                "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd");
        ck_assert_int_eq(mkdir(dir, 0700), 0);
    }
    ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
    fdx_store *db = open_spilling(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    record_cells(db, 0, 70000, 1);
    ck_assert_uint_gt(db->spills, 0);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    unsetenv("TMPDIR");
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 70000);
    fdx_store_close(db);
}
END_TEST

START_TEST(failed_ingest_restores_cells_in_memory)
{
    failed_ingest_restores_cells(0, 1);
    failed_ingest_restores_cells(0, 2);
}
END_TEST

START_TEST(failed_spilling_ingest_restores_cells)
{
    failed_ingest_restores_cells(1, 2);
}
END_TEST

/* ---- all-or-nothing ingests ---- */

/* An all-or-nothing ingest with a bad path (or one it cannot read) leaves a
 * transaction that only a rollback ends, on one thread or two; the store is
 * as it was, and the next transaction works. */
START_TEST(all_or_nothing_failure_leaves_only_a_rollback)
{
    const char *paths[3];
    paths[0] = strdup(tu_path(tu_dir, "a.jsonl"));
    paths[1] = strdup(tu_path(tu_dir, "bad.jsonl"));
    paths[2] = strdup(tu_path(tu_dir, "absent.jsonl"));
    tu_write_file(paths[0], MISS_LINE("2"));
    tu_write_file(paths[1], MISS_LINE("5") "oops\n" MISS_LINE("5"));
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, paths[0], NULL, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    for (int threads = 1; threads <= 2; threads++)
        for (int n = 2; n <= 3; n++) { /* a bad line; then a path that is not there */
            fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
            fdx_ingest_stats st = {0};
            opts.threads = threads;
            opts.all_or_nothing = 1;
            ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
            const char *const *these = n == 2 ? paths : paths + 1;
            ck_assert_int_ne(fdx_store_ingest_paths(db, these, 2, &opts, &st), FDX_OK);
            ck_assert_uint_eq(st.bad_lines, n == 2 ? 1 : 1);
            ck_assert_int_eq(fdx_store_ingest_path(db, paths[0], NULL, NULL), FDX_EMISUSE);
            ck_assert_msg(strstr(fdx_store_errmsg(db), "all-or-nothing ingest failed"), "%s",
                          fdx_store_errmsg(db));
            ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_EMISUSE);
            char *out = tu_export(db, tu_path(tu_dir, "out"));
            ck_assert_str_eq(out, MISS_OUT("2"));
            free(out);
        }
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.all_or_nothing = 1;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_paths(db, paths, 1, &opts, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_str_eq(out, MISS_OUT("4"));
    free(out);
    fdx_store_close(db);
    for (int i = 0; i < 3; i++)
        free((char *)paths[i]);
}
END_TEST

/* A path that fails after it was ended (its last spill failed), or whose
 * start was never recorded, cannot be taken back: the transaction breaks as
 * a failed write does, undoable ingest or not, and is not blamed on an
 * all-or-nothing ingest; a path ended once fails alone, as before. */
START_TEST(a_path_ended_twice_breaks_the_transaction)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    for (int undoable = 0; undoable <= 1; undoable++) {
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        fdx_store_begin_path(db, undoable);
        ck_assert_int_eq(fdx_store_end_path(db, 0), FDX_OK);
        ck_assert_int_eq(db->txn_broken, undoable ? 0 : FDX_TXN_BROKEN_PATH);
        fdx_store_begin_path(db, undoable);
        ck_assert_int_eq(fdx_store_end_path(db, 1), FDX_OK);
        ck_assert_int_eq(fdx_store_end_path(db, 0), FDX_OK);
        ck_assert_int_eq(db->txn_broken, undoable ? 1 : FDX_TXN_BROKEN_PATH);
        ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_EMISUSE);
        ck_assert_ptr_nonnull(
            strstr(fdx_store_errmsg(db), undoable ? "a write failed partway" : "all-or-nothing"));
    }
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_end_path(db, 0), FDX_OK); /* none began */
    ck_assert_int_eq(db->txn_broken, 1);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    fdx_store_close(db);
}
END_TEST

/* `n` dispatch cells d<i>, each with a candidates list holding lat. */
static char *lists_feed(int n, const char *lat, size_t *len)
{
    size_t cap = (size_t)n * 400 + 64;
    char *text = malloc(cap);
    *len = 0;
    for (int i = 0; i < n; i++)
        *len +=
            (size_t)snprintf(text + *len, cap - *len,
                             "{\"schema\":2,\"structure_key\":\"d%d\",\"chosen\":" IMPL_H("k", "1")
                                 CANDS("%s") ",\"count\":1,\"hw\":" GPU "}\n",
                             i, lat);
    return text;
}

/* Two runs of the same cells, the second replacing every list: pending
 * holds both runs' cells for as long as they fit. Returns the spills. */
static uint64_t two_runs(int all_or_nothing, size_t budget, char **export)
{
    static int stores;
    char name[32];
    snprintf(name, sizeof name, "r%d.db", stores++);
    const char *paths[2];
    paths[0] = strdup(tu_path(tu_dir, "run1.jsonl"));
    paths[1] = strdup(tu_path(tu_dir, "run2.jsonl"));
    size_t len;
    char *text = lists_feed(3000, "1000", &len);
    tu_write_file(paths[0], text);
    free(text);
    text = lists_feed(3000, "2000", &len);
    tu_write_file(paths[1], text);
    free(text);
    fdx_store *db = tu_open(tu_path(tu_dir, name));
    db->spill_bytes = budget;
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.all_or_nothing = all_or_nothing;
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_paths(db, paths, 2, &opts, NULL), FDX_OK);
    ck_assert_uint_eq(fdx_agg_cells(db->saved), 0);
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, 3000);
    *export = tu_export(db, tu_path(tu_dir, name + 1));
    uint64_t spills = db->spills;
    fdx_store_close(db);
    free((char *)paths[0]);
    free((char *)paths[1]);
    return spills;
}

/* What one run's cells take in pending. */
static size_t one_run_bytes(void)
{
    size_t len;
    char *text = lists_feed(3000, "1000", &len);
    fdx_store *db = tu_open(tu_path(tu_dir, "one.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "run1", text, len, NULL, NULL), FDX_OK);
    size_t bytes = fdx_agg_bytes(db->pending);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    fdx_store_close(db);
    free(text);
    return bytes;
}

/* Nothing is kept to undo an all-or-nothing path: a budget a third over one
 * run's cells holds both runs of them, where an undoable ingest, which keeps
 * each replaced list and count until its path ends, spills; both write the
 * same cells, spilled or not. */
START_TEST(all_or_nothing_holds_more_cells_in_the_same_budget)
{
    size_t budget = one_run_bytes() / 3 * 4;
    char *undoable, *atomic, *small;
    ck_assert_uint_gt(two_runs(0, budget, &undoable), 0);
    ck_assert_uint_eq(two_runs(1, budget, &atomic), 0);
    ck_assert_uint_gt(two_runs(1, budget / 4, &small), 1); /* spills with no saved */
    ck_assert_str_eq(undoable, atomic);
    ck_assert_str_eq(small, atomic);
    ck_assert_ptr_nonnull(strstr(atomic, "\"latency_ns\":2000"));
    ck_assert_ptr_null(strstr(atomic, "\"latency_ns\":1000"));
    free(undoable);
    free(atomic);
    free(small);
}
END_TEST

/* A program built against version 1 of the options has a shorter struct:
 * init writes none of the bytes past it, and an ingest reads none (ASan
 * would see it) and undoes a bad path alone, as version 1 did. */
START_TEST(options_of_version_1_still_work)
{
    size_t v1 = offsetof(fdx_ingest_opts, all_or_nothing);
    unsigned char *raw = malloc(v1 + 16);
    memset(raw, 0xab, v1 + 16);
    ck_assert_int_eq(fdx_ingest_opts_init((fdx_ingest_opts *)(void *)raw, 1), FDX_OK);
    for (size_t i = v1; i < v1 + 16; i++)
        ck_assert_uint_eq(raw[i], 0xab);
    void *old = malloc(v1); /* all a version 1 caller has */
    unsigned int version;
    memcpy(old, raw, v1);
    free(raw);
    memcpy(&version, old, sizeof version);
    ck_assert_uint_eq(version, 1);
    const char *good = MISS_LINE("2"), *bad = MISS_LINE("5") "oops\n";
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "good", good, strlen(good), old, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "bad", bad, strlen(bad), old, NULL), FDX_EDATA);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_str_eq(out, MISS_OUT("2"));
    free(out);
    fdx_store_close(db);
    free(old);
}
END_TEST

/* ---- options versions, errmsg and notices ---- */

static int count_rows(void *ctx, const fdx_demand_row *row)
{
    (void)row;
    ++*(int *)ctx;
    return 0;
}

START_TEST(options_of_an_unknown_version_are_refused)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    const char *line = "{\"schema\":2}";
    fdx_ingest_opts opts = {0};
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "b", line, strlen(line), &opts, NULL),
                     FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "fdx_ingest_opts version 0"));
    opts.version = FDX_INGEST_OPTS_VERSION + 1;
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "b", line, strlen(line), &opts, NULL),
                     FDX_EMISUSE);
    ck_assert_int_eq(fdx_ingest_opts_init(&opts, FDX_INGEST_OPTS_VERSION + 1), FDX_EMISUSE);
    ck_assert_int_eq(fdx_ingest_opts_init(&opts, FDX_INGEST_OPTS_VERSION), FDX_OK);
    ck_assert_uint_eq(opts.version, FDX_INGEST_OPTS_VERSION);
    ck_assert_ptr_null(opts.on_error);
    ck_assert_int_eq(opts.skip_invalid, 0);
    /* A valid version reaches the data (which is bad: no kind). */
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "b", line, strlen(line), &opts, NULL), FDX_EDATA);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);

    int rows = 0;
    fdx_demand_filter f = {0};
    ck_assert_int_eq(fdx_store_demand(db, &f, count_rows, &rows), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "fdx_demand_filter version 0"));
    ck_assert_int_eq(fdx_demand_filter_init(&f, 0), FDX_EMISUSE);
    ck_assert_int_eq(fdx_demand_filter_init(&f, FDX_DEMAND_FILTER_VERSION), FDX_OK);
    ck_assert_int_eq(fdx_store_demand(db, &f, count_rows, &rows), FDX_OK);
    fdx_demand_filter init = FDX_DEMAND_FILTER_INIT;
    ck_assert_int_eq(fdx_store_demand(db, &init, count_rows, &rows), FDX_OK);
    ck_assert_int_eq(rows, 0);
    fdx_store_close(db);
}
END_TEST

/* Makes a store at path holding one miss, keyed wanted. */
static void store_of_one_miss(const char *path, const char *wanted)
{
    fdx_store *db = tu_open(path);
    tu_commit_miss(db, wanted);
    fdx_store_close(db);
}

/* A merge with nothing to do succeeds with a notice, never an error message. */
START_TEST(already_merged_is_a_notice_not_an_error)
{
    const char *src_path = tu_path(tu_dir, "src.db");
    store_of_one_miss(src_path, "w");

    fdx_store *db = tu_open(tu_path(tu_dir, "dst.db"));
    fdx_merge_stats ms = {0};
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_merge(db, src_path, &ms), FDX_OK);
    ck_assert_str_eq(fdx_store_notice(db), "");
    ck_assert_int_eq(fdx_store_notice_kind(db), FDX_NOTICE_NONE);
    ck_assert_int_eq(fdx_store_merge(db, src_path, &ms), FDX_OK);
    ck_assert_uint_eq(ms.stores_merged, 1);
    ck_assert_uint_eq(ms.stores_skipped, 1);
    ck_assert_str_eq(fdx_store_errmsg(db), "");
    ck_assert_ptr_nonnull(strstr(fdx_store_notice(db), "already merged"));
    ck_assert_int_eq(fdx_store_notice_kind(db), FDX_NOTICE_NOTHING_DONE);
    ck_assert_int_eq(fdx_store_merge(db, tu_path(tu_dir, "missing.db"), &ms), FDX_ENOENT);
    ck_assert_str_eq(fdx_store_notice(db), "");
    ck_assert_int_eq(fdx_store_notice_kind(db), FDX_NOTICE_NONE);
    ck_assert_str_ne(fdx_store_errmsg(db), "");
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    fdx_store_close(db);
}
END_TEST

/* ---- opening: identity and schema versions ---- */

static int open_status(const char *path, int flags, const char *expect_msg)
{
    fdx_store *db;
    int rc = fdx_store_open(path, flags, &db);
    if (expect_msg)
        ck_assert_msg(strstr(fdx_store_errmsg(db), expect_msg), "%s", fdx_store_errmsg(db));
    fdx_store_close(db);
    return rc;
}

/* "PRAGMA user_version = N": a store's version set by hand. */
static const char *version_pragma(int version)
{
    static char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", version);
    return sql;
}

START_TEST(newer_schema_is_refused)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store_close(tu_open(path));
    tu_raw_exec(path, "PRAGMA user_version = 99");
    ck_assert_int_eq(open_status(path, 0, "newer fdx (store schema version 99"), FDX_ESCHEMA);
}
END_TEST

/* The miss cells of the store at path, read through a handle of its own. */
static uint64_t miss_cells_at(const char *path)
{
    fdx_store *db;
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_FOR_READING, &db), FDX_OK);
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    fdx_store_close(db);
    return misses;
}

/* A handle whose open failed kept its connection (to remove a store it
 * created, at close), and every call on it went on to use it: an older
 * build wrote into a newer fdx's store, a foreign trigger ran at its commit.
 * Every call but errmsg and close is refused, and the file is left as it was. */
START_TEST(a_handle_whose_open_failed_only_closes)
{
    const char *path = tu_path(tu_dir, "s.db");
    const char *breaks[] = {"PRAGMA user_version = 99",
                            "CREATE TABLE seen (x); CREATE TRIGGER t AFTER INSERT ON miss_cell "
                            "BEGIN INSERT INTO seen VALUES (1); END"};
    const char *dt[] = {"F16"};
    fdx_miss m = {"later", {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "cpu", "n/a"}};
    for (int i = 0; i < 2; i++) {
        unlink(path);
        fdx_store *db = tu_open(path);
        tu_commit_miss(db, "seed");
        fdx_store_close(db);
        tu_raw_exec(path, breaks[i]);
        ck_assert_int_ne(fdx_store_open(path, 0, &db), FDX_OK);
        uint64_t misses, dispatches;
        fdx_demand_filter f = FDX_DEMAND_FILTER_INIT;
        ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_EMISUSE);
        ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "open failed"));
        ck_assert_int_eq(fdx_store_begin(db), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_rollback(db), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_export(db, tu_path(tu_dir, "out"), NULL), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_demand(db, &f, NULL, NULL), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_set_busy_timeout(db, 10), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_ingest_buffer(db, "b", "", 0, NULL, NULL), FDX_EMISUSE);
        fdx_prune_stats pruned;
        ck_assert_int_eq(fdx_store_pruned(db, &pruned), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_close(db), FDX_OK);
        tu_raw_exec(path, i ? "DROP TRIGGER t" : version_pragma(fdx_schema_version()));
        ck_assert_uint_eq(miss_cells_at(path), 1);
    }
}
END_TEST

/* A version below any fdx's indexed the migrations before the first: each
 * open that migrates read outside them (and ran whatever SQL it found). */
START_TEST(negative_schema_version_is_refused)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store_close(tu_open(path));
    const char *versions[] = {"PRAGMA user_version = -1", "PRAGMA user_version = -2147483648"};
    for (int i = 0; i < 2; i++) {
        tu_raw_exec(path, versions[i]);
        ck_assert_int_eq(open_status(path, 0, "not an fdx store (store schema version -"),
                         FDX_ENOTSTORE);
        ck_assert_int_eq(open_status(path, FDX_OPEN_READONLY, "schema version -"), FDX_ENOTSTORE);
    }
}
END_TEST

/* An older store whose migration would make rows the readers refuse (a
 * ledger time before 1970 becomes a history day before it) is refused and
 * left at its version, where it was migrated into a store fdx then refused. */
START_TEST(older_store_migrating_to_invalid_rows_is_refused)
{
    const char *path = tu_path(tu_dir, "s.db");
    tu_raw_exec(path, fdx_sql_schema_1);
    tu_raw_exec(path, fdx_sql_schema_2);
    tu_raw_exec(path, fdx_sql_views);
    tu_raw_exec(path, fdx_sql_schema_3);
    tu_raw_exec(path, fdx_sql_schema_4);
    tu_raw_exec(path,
                "INSERT INTO ingest_ledger (id, kind, sources, bytes, lines, records, skipped,"
                " cells_added, cells_updated, committed_at)"
                " VALUES (1, 'ingest', 1, 10, 1, 1, 0, 1, 0, '0000-01-01T00:00:00Z');"
                "INSERT INTO miss_cell VALUES "
                "('w','B','O','[]','k',0,-1,-1,'cpu','n/a',4,1,1)");
    ck_assert_int_eq(open_status(path, 0, "what migrating it from schema 4 to"), FDX_ENOTSTORE);
    sqlite3_stmt *st = raw_row(path, "SELECT user_version FROM pragma_user_version()");
    ck_assert_int_eq(sqlite3_column_int(st, 0), 4);
    raw_row_end(st);
}
END_TEST

/* A store of schema version 1 (before the ledger) is migrated on open and
 * keeps its cells. */
START_TEST(older_schema_is_migrated)
{
    const char *path = tu_path(tu_dir, "s.db");
    tu_raw_exec(path, fdx_sql_schema_1);
    /* The stored hash has its top bit flipped: 9223372036854775807 is 2^64-1. */
    tu_raw_exec(path, "INSERT INTO miss_cell VALUES "
                      "('w','B','O','[]','k',9223372036854775807,-1,-1,'cpu','n/a',4)");
    fdx_store *db = tu_open(path);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_str_eq(out, "{\"schema\":2,\"wanted\":\"w\",\"fallback\":{\"backend\":\"B\","
                          "\"op\":\"O\",\"dtypes\":[],\"kernel_source\":\"k\","
                          "\"kernel_revision_hash\":18446744073709551615},\"count\":4,\"hw\":"
                          "{\"hardware_sku\":\"cpu\",\"driver_version\":\"n/a\"}}\n--\n");
    free(out);
    fdx_store_close(db);
    ck_assert_int_eq(ingest_text("x.jsonl", MISS_LINE("1")), FDX_OK);
    sqlite3_stmt *st = raw_row(path, "SELECT (SELECT user_version FROM pragma_user_version()),"
                                     " (SELECT count(*) FROM ingest_ledger),"
                                     " (SELECT misses FROM miss_demand WHERE wanted = 'w'),"
                                     " (SELECT sum(count) FROM miss_daily WHERE wanted = 'w')");
    ck_assert_int_eq(sqlite3_column_int(st, 0), fdx_schema_version());
    ck_assert_int_eq(sqlite3_column_int(st, 1), 1);
    ck_assert_int_eq(sqlite3_column_int(st, 2), 5); /* the old cell and the new one */
    ck_assert_int_eq(sqlite3_column_int(st, 3), 5); /* its history adds up to its total */
    raw_row_end(st);
}
END_TEST

/* A store of schema version 3 keeps its identity when migrated, is tied to
 * its file, and its merged_store rows say they carry no ledger digest. */
START_TEST(schema_3_identity_is_migrated)
{
    const char *path = tu_path(tu_dir, "s.db");
    tu_raw_exec(path, fdx_sql_schema_1);
    tu_raw_exec(path, fdx_sql_schema_2);
    tu_raw_exec(path, fdx_sql_views);
    tu_raw_exec(path, fdx_sql_schema_3);
    tu_raw_exec(path,
                "UPDATE store_identity SET id = '0123456789abcdef0123456789abcdef';"
                "INSERT INTO merged_store VALUES "
                "('fedcba9876543210fedcba9876543210', 7, 'h.db', '2026-01-01T00:00:00.000Z')");
    fdx_store_close(tu_open(path));
    sqlite3_stmt *st = raw_row(path, "SELECT (SELECT user_version FROM pragma_user_version()),"
                                     " i.id, i.file_dev IS NOT NULL AND i.file_ino IS NOT NULL,"
                                     " m.ledger_high, m.ledger_digest IS NULL AND m.how IS NULL"
                                     " FROM store_identity i, merged_store m");
    ck_assert_int_eq(sqlite3_column_int(st, 0), fdx_schema_version());
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 1), "0123456789abcdef0123456789abcdef");
    ck_assert_int_eq(sqlite3_column_int(st, 2), 1);
    ck_assert_int_eq(sqlite3_column_int(st, 3), 7);
    ck_assert_int_eq(sqlite3_column_int(st, 4), 1);
    raw_row_end(st);
}
END_TEST

/* Export order is the primary keys' order: exporting is a scan, never a sort
 * (a store of any size exports in constant memory). */
START_TEST(export_queries_need_no_sort)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store_close(tu_open(path));
    /* every reader of cells checks that each follows the one before */
    const char *queries[] = {fdx_sql_miss_export, fdx_sql_dispatch_export,
                             fdx_sql_merge_read_misses, fdx_sql_merge_read_dispatches};
    sqlite3 *raw;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    for (int i = 0; i < 4; i++) {
        char sql[2048];
        sqlite3_stmt *st;
        snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", queries[i]);
        ck_assert_int_eq(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW)
            ck_assert_ptr_null(strstr((const char *)sqlite3_column_text(st, 3), "TEMP B-TREE"));
        sqlite3_finalize(st);
    }
    sqlite3_close(raw);
}
END_TEST

START_TEST(read_only_open_never_writes)
{
    const char *path = tu_path(tu_dir, "s.db");
    ck_assert_int_eq(ingest_text("x.jsonl", MISS_LINE("1")), FDX_OK);
    fdx_store *db;
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_READONLY, &db), FDX_OK);
    ck_assert_int_eq(fdx_store_begin(db), FDX_EREADONLY);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_str_eq(out, MISS_OUT("1"));
    free(out);
    fdx_store_close(db);
    tu_raw_exec(path, "PRAGMA user_version = 1");
    ck_assert_int_eq(open_status(path, FDX_OPEN_READONLY, "open it writable once"), FDX_EREADONLY);
}
END_TEST

/* The unix VFS's open(2), and whether it refuses to create a -wal, as in a
 * directory the process cannot write (SQLite then says
 * SQLITE_READONLY_DIRECTORY). */
static sqlite3_syscall_ptr plain_open;
static int refuse_wal;

static int wal_refusing_open(const char *path, int flags, int mode)
{
    size_t n = strlen(path);
    if (refuse_wal && (flags & O_CREAT) && n > 4 && strcmp(path + n - 4, "-wal") == 0 &&
        access(path, F_OK) != 0) {
        errno = EACCES;
        return -1;
    }
    return ((int (*)(const char *, int, int))plain_open)(path, flags, mode);
}

/* A reader opens a store in rollback mode where it can create no -wal; a
 * writer turns the store to WAL mode; the reader's next read cannot follow,
 * and says that the store changed and must be opened again (not that it
 * cannot be written); a new open reads it, without locks. */
START_TEST(a_store_turned_to_wal_under_a_reader_that_cannot_follow)
{
    const char *path = tu_path(tu_dir, "s.db");
    ck_assert_int_eq(ingest_text("x.jsonl", MISS_LINE("1")), FDX_OK);
    tu_raw_exec(path, "PRAGMA journal_mode = DELETE");
    sqlite3_vfs *unix_vfs = sqlite3_vfs_find("unix");
    ck_assert_ptr_nonnull(unix_vfs);
    plain_open = unix_vfs->xGetSystemCall(unix_vfs, "open");
    ck_assert_int_eq(
        unix_vfs->xSetSystemCall(unix_vfs, "open", (sqlite3_syscall_ptr)wal_refusing_open),
        SQLITE_OK);
    fdx_store *db;
    uint64_t misses, dispatches;
    refuse_wal = 1;
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_FOR_READING, &db), FDX_OK);
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    refuse_wal = 0;
    ck_assert_int_eq(ingest_text("y.jsonl", MISS_LINE("2")), FDX_OK);
    tu_raw_exec(path, "PRAGMA journal_mode = WAL");
    refuse_wal = 1;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_EBUSY);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "open it again"));
    fdx_store_close(db);
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_FOR_READING, &db), FDX_OK);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_str_eq(out, MISS_OUT("3"));
    free(out);
    fdx_store_close(db);
    refuse_wal = 0;
    ck_assert_int_eq(unix_vfs->xSetSystemCall(unix_vfs, "open", plain_open), SQLITE_OK);
}
END_TEST

START_TEST(missing_store_is_not_created_without_create)
{
    const char *path = tu_path(tu_dir, "none.db");
    ck_assert_int_eq(open_status(path, 0, "no such store"), FDX_ENOENT);
    struct stat st;
    ck_assert_int_ne(stat(path, &st), 0);
}
END_TEST

START_TEST(foreign_files_are_refused)
{
    const char *junk = tu_path(tu_dir, "junk.db");
    tu_write_file(junk, "this is not a database, just text that is long enough to matter....."
                        "...............................................................");
    ck_assert_int_eq(open_status(junk, FDX_OPEN_CREATE, "not an fdx store"), FDX_ENOTSTORE);
    const char *other = tu_path(tu_dir, "other.db");
    tu_raw_exec(other, "CREATE TABLE t(x)");
    ck_assert_int_eq(open_status(other, 0, "another kind"), FDX_ENOTSTORE);
    ck_assert_int_eq(open_status(tu_dir, 0, "is a directory"), FDX_ENOTSTORE);
}
END_TEST

START_TEST(empty_file_becomes_a_store)
{
    const char *path = tu_path(tu_dir, "empty.db");
    tu_write_file(path, "");
    ck_assert_int_eq(open_status(path, 0, NULL), FDX_OK);
    ck_assert_int_eq(ingest_text("x.jsonl", MISS_LINE("1")), FDX_OK);
}
END_TEST

/* Readers never create, migrate or convert what they read: an empty file is
 * not a store and stays empty, a rollback-journal store stays one. */
START_TEST(reading_changes_nothing)
{
    const char *empty = tu_path(tu_dir, "empty.db");
    tu_write_file(empty, "");
    ck_assert_int_eq(open_status(empty, FDX_OPEN_FOR_READING, "not an fdx store (it is empty)"),
                     FDX_ENOTSTORE);
    struct stat st;
    ck_assert_int_eq(stat(empty, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
    ck_assert_int_eq(ingest_text("x.jsonl", MISS_LINE("1")), FDX_OK);
    const char *path = tu_path(tu_dir, "s.db");
    tu_raw_exec(path, "PRAGMA journal_mode = DELETE");
    fdx_store *db;
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_FOR_READING, &db), FDX_OK);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_str_eq(out, MISS_OUT("1"));
    free(out);
    fdx_store_close(db);
    unsigned char header[20];
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fread(header, 1, sizeof header, f), sizeof header);
    fclose(f);
    ck_assert_int_eq(header[18], 1); /* read and write versions: 1 is rollback, 2 WAL */
    ck_assert_int_eq(header[19], 1);
}
END_TEST

/* Before anything is read, the schema must be the one fdx creates. */
START_TEST(foreign_schema_objects_are_refused)
{
    static const struct {
        const char *sql, *msg;
    } cases[] = {
        {"CREATE TRIGGER t AFTER INSERT ON miss_cell BEGIN SELECT 1; END",
         "has a trigger t on miss_cell"},
        {"CREATE INDEX i ON miss_cell (count)", "has an index i on miss_cell"},
        {"DROP VIEW miss_demand", "the view miss_demand is missing"},
        {"DROP VIEW miss_cells; CREATE VIEW miss_cells AS SELECT 1", "defined differently"},
        {"ALTER TABLE miss_cell RENAME TO m; CREATE VIEW miss_cell AS SELECT * FROM m",
         "miss_cell is a view, not a table"},
        {"CREATE TRIGGER t AFTER INSERT ON Ingest_Ledger BEGIN SELECT 1; END",
         "has a trigger t on Ingest_Ledger"},
        {"CREATE TRIGGER t INSTEAD OF INSERT ON MISS_CELLS BEGIN SELECT 1; END",
         "has a trigger t on MISS_CELLS"},
        {"CREATE INDEX i ON Miss_Cell (count)", "has an index i on miss_cell"},
        {"CREATE TRIGGER miss_cell AFTER INSERT ON ingest_ledger BEGIN SELECT 1; END",
         "has a trigger miss_cell on ingest_ledger"},
        {"CREATE TABLE e (l INTEGER REFERENCES ingest_ledger (id) ON DELETE CASCADE)",
         "has a table e with a foreign key to ingest_ledger"},
        {"CREATE TABLE e (c INTEGER REFERENCES Cell_History (cell))",
         "has a table e with a foreign key to Cell_History"},
        {"PRAGMA writable_schema = ON; INSERT INTO sqlite_schema SELECT * FROM sqlite_schema "
         "WHERE name = 'sqlite_autoindex_history_origin_1'",
         "has two objects named sqlite_autoindex_history_origin_1"},
        {"CREATE TABLE e (a); PRAGMA writable_schema = ON; UPDATE sqlite_schema SET rootpage = "
         "(SELECT rootpage FROM sqlite_schema WHERE name = 'cell_history') WHERE name = 'e'",
         "shares its pages with another object"},
        {"CREATE TABLE e (c INTEGER REFERENCES cell_history (cell) ON DELETE CASCADE);"
         "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET name = 'sqlite_temp_master', "
         "tbl_name = 'sqlite_temp_master', sql = replace(sql, 'TABLE e', 'TABLE "
         "sqlite_temp_master') "
         "WHERE name = 'e'",
         "table sqlite_temp_master with a foreign key to cell_history"},
        {"CREATE TABLE e (a); PRAGMA writable_schema = ON; UPDATE sqlite_schema SET name = "
         "'sqlite_e', tbl_name = 'sqlite_e', sql = 'CREATE TABLE sqlite_e (a)' WHERE name = 'e'",
         "an object named sqlite_e, as SQLite names only its own"},
        {"CREATE VIRTUAL TABLE pragma_foreign_key_list USING fts4 (\"table\");"
         "CREATE TABLE e (c INTEGER REFERENCES dispatch_cell (cell_id) ON DELETE CASCADE)",
         "an object named pragma_foreign_key_list"},
        {"CREATE VIEW Json_Tree AS SELECT 1", "an object named Json_Tree"},
    };
    const char *path = tu_path(tu_dir, "s.db");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unlink(path);
        fdx_store_close(tu_open(path));
        tu_raw_exec(path, cases[i].sql);
        ck_assert_int_eq(open_status(path, FDX_OPEN_FOR_READING, cases[i].msg), FDX_ENOTSTORE);
        ck_assert_int_eq(open_status(path, 0, cases[i].msg), FDX_ENOTSTORE);
    }
}
END_TEST

/* A store of an older version is migrated only when its schema is what the
 * migrations made: a foreign key or trigger of its own would run with them
 * (schema 5 drops and rebuilds the ledger, and updates every cell), and one
 * that ran would fail the migration with its own message, or never end. */
START_TEST(an_older_store_is_checked_before_it_is_migrated)
{
    static const struct {
        const char *sql, *msg;
    } cases[] = {
        {"CREATE TABLE e (l INTEGER REFERENCES ingest_ledger (id) ON DELETE CASCADE);"
         "INSERT INTO e SELECT id FROM ingest_ledger;"
         "CREATE TRIGGER e_t AFTER DELETE ON e BEGIN SELECT RAISE(FAIL, 'it ran'); END",
         "has a table e with a foreign key to ingest_ledger"},
        {"CREATE TRIGGER t AFTER UPDATE ON miss_cell BEGIN SELECT RAISE(FAIL, 'it ran'); END",
         "has a trigger t on miss_cell"},
        {"CREATE TABLE e (c INTEGER REFERENCES cell_history (cell) ON DELETE CASCADE)",
         "has a table e with a foreign key to cell_history"},
        {"CREATE TRIGGER t AFTER INSERT ON ran BEGIN SELECT 1; END", NULL},
    };
    const char *path = tu_path(tu_dir, "old.db");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unlink(path);
        sqlite3 *db;
        char err[512] = "";
        ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
        ck_assert_msg(fdx_schema_migrate_to(db, 0, 4, err, sizeof err) == SQLITE_OK, "%s", err);
        ck_assert_int_eq(sqlite3_exec(db,
                                      "INSERT INTO miss_cell VALUES ('w','B','O','[]','k',1,-1,-1,"
                                      "'cpu','n/a',4,NULL,NULL); CREATE TABLE ran (x)",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
        sqlite3_close(db);
        tu_raw_exec(path, cases[i].sql);
        size_t before_len, after_len;
        char *before = tu_read_file(path, &before_len);
        ck_assert_int_eq(open_status(path, 0, cases[i].msg), cases[i].msg ? FDX_ENOTSTORE : FDX_OK);
        char *bytes = tu_read_file(path, &after_len);
        if (cases[i].msg) /* refused: not a byte changed, the journal mode included */
            ck_assert_msg(before_len == after_len && memcmp(before, bytes, before_len) == 0,
                          "case %zu: the refused store changed", i);
        free(before);
        free(bytes);
        char *after = raw_text(path, "SELECT user_version || ',' || (SELECT count(*) FROM ran) "
                                     "FROM pragma_user_version");
        char current[16];
        snprintf(current, sizeof current, "%d,0", fdx_schema_version());
        ck_assert_str_eq(after, cases[i].msg ? "4,0" : current);
        free(after);
    }
}
END_TEST

/* The image the build took is what the migrations make with this SQLite. */
START_TEST(the_schema_image_is_what_the_migrations_make)
{
    sqlite3 *db;
    char err[512] = "";
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    ck_assert_msg(fdx_schema_migrate(db, 0, err, sizeof err) == SQLITE_OK, "%s", err);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db, fdx_sql_schema_objects, -1, &st, NULL), SQLITE_OK);
    size_t n = 0;
    for (; sqlite3_step(st) == SQLITE_ROW; n++) {
        ck_assert_uint_lt(n, fdx_schema_image_rows);
        const fdx_schema_row *r = &fdx_schema_image[n];
        const char *want[] = {r->type, r->name, r->tbl_name, r->sql};
        for (int i = 0; i < 4; i++) {
            const char *have = (const char *)sqlite3_column_text(st, i);
            ck_assert_str_eq(have ? have : "", want[i]);
        }
    }
    ck_assert_uint_eq(n, fdx_schema_image_rows);
    sqlite3_finalize(st);
    sqlite3_close(db);
}
END_TEST

/* The image as a build with another SQLite might hold it: one view's text
 * worded otherwise (a view, so that a store made from it still works). */
static fdx_schema_row *image_worded_otherwise(void)
{
    size_t n = fdx_schema_image_rows, view = n;
    fdx_schema_row *other = malloc(n * sizeof *other);
    ck_assert_ptr_nonnull(other);
    memcpy(other, fdx_schema_image, n * sizeof *other);
    for (size_t i = 0; i < n && view == n; i++)
        if (strcmp(other[i].type, "view") == 0)
            view = i;
    ck_assert_uint_lt(view, n);
    other[view].sql = "CREATE VIEW worded_otherwise AS SELECT 1";
    return other;
}

/* A store like the image opens without building the reference. One that is
 * not, as a store written with another SQLite may word its schema, is judged
 * by the reference: accepted when it is fdx's, refused with what differs. */
START_TEST(a_store_unlike_the_image_is_judged_by_the_reference)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store_close(tu_open(path));
    size_t builds = fdx_schema_reference_builds();
    fdx_store_close(tu_open(path));
    ck_assert_int_eq(open_status(path, FDX_OPEN_FOR_READING, NULL), FDX_OK);
    ck_assert_uint_eq(fdx_schema_reference_builds(), builds);

    fdx_schema_row *other = image_worded_otherwise();
    fdx_schema_image_set(other, fdx_schema_image_rows, "3.0.0");
    ck_assert_int_eq(open_status(path, FDX_OPEN_FOR_READING, NULL), FDX_OK);
    ck_assert_int_eq(open_status(path, 0, NULL), FDX_OK);
    ck_assert_uint_eq(fdx_schema_reference_builds(), builds + 2);

    tu_raw_exec(path, "CREATE INDEX i ON miss_cell (count)");
    ck_assert_int_eq(open_status(path, FDX_OPEN_FOR_READING, "has an index i on miss_cell"),
                     FDX_ENOTSTORE);
    fdx_schema_image_set(NULL, 0, NULL);
    free(other);
    ck_assert_int_eq(open_status(path, FDX_OPEN_FOR_READING, "has an index i on miss_cell"),
                     FDX_ENOTSTORE);
    ck_assert_uint_eq(fdx_schema_reference_builds(), builds + 4);
}
END_TEST

/* Every row sql returns on db, one line each, columns as SQLite quotes them. */
static char *rows_text(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(db));
    char *text = strdup("");
    while (sqlite3_step(st) == SQLITE_ROW)
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            const char *v = (const char *)sqlite3_column_text(st, i);
            char *next;
            ck_assert_int_ge(asprintf(&next, "%s%s%c", text, v ? v : "NULL",
                                      i + 1 < sqlite3_column_count(st) ? '|' : '\n'),
                             0);
            free(text);
            text = next;
        }
    sqlite3_finalize(st);
    return text;
}

/* What a store holds, but for its random identity: schema, settings and
 * every table's rows. */
static char *store_text(const char *path)
{
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    char *text = rows_text(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name");
    char *version = rows_text(db, "PRAGMA user_version");
    char *app = rows_text(db, "PRAGMA application_id");
    char *tables =
        rows_text(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name");
    char *all;
    ck_assert_int_ge(asprintf(&all, "%s%s%s", text, version, app), 0);
    for (char *name = strtok(tables, "\n"); name; name = strtok(NULL, "\n")) {
        char sql[128], *rows, *next;
        snprintf(sql, sizeof sql, "SELECT %s FROM %s",
                 strcmp(name, "store_identity") ? "*" : "one, length(id), length(created_at)",
                 name);
        rows = rows_text(db, sql);
        ck_assert_int_ge(asprintf(&next, "%s%s:\n%s", all, name, rows), 0);
        free(all);
        free(rows);
        all = next;
    }
    free(text);
    free(version);
    free(app);
    free(tables);
    sqlite3_close(db);
    return all;
}

/* A new store is made from the image, not by the migrations: it must hold
 * what they make, rows and settings included, and pass the check. */
START_TEST(a_new_store_is_what_the_migrations_make)
{
    const char *made = strdup(tu_path(tu_dir, "image.db"));
    const char *migrated = strdup(tu_path(tu_dir, "migrated.db"));
    fdx_store_close(tu_open(made));
    sqlite3 *db;
    char err[512] = "";
    ck_assert_int_eq(sqlite3_open(migrated, &db), SQLITE_OK);
    ck_assert_msg(fdx_schema_migrate(db, 0, err, sizeof err) == SQLITE_OK, "%s", err);
    sqlite3_close(db);
    char *want = store_text(migrated), *have = store_text(made);
    ck_assert_msg(strcmp(have, want) == 0, "made from the image:\n%.3000s", have);
    ck_assert_ptr_nonnull(strstr(have, "history_config:\n1|90|"));
    ck_assert_ptr_nonnull(strstr(have, "store_identity:\n1|32|24\n"));
    size_t builds = fdx_schema_reference_builds();
    ck_assert_int_eq(open_status(migrated, 0, NULL), FDX_OK);
    ck_assert_int_eq(open_status(made, 0, NULL), FDX_OK);
    ck_assert_uint_eq(fdx_schema_reference_builds(), builds);

    /* An image another SQLite made is not used to make a store: this one's
     * text goes in, as the migrations make it. */
    fdx_schema_row *other = image_worded_otherwise();
    fdx_schema_image_set(other, fdx_schema_image_rows, "3.0.0");
    char *by_other = strdup(tu_path(tu_dir, "other.db"));
    fdx_store_close(tu_open(by_other));
    char *text = store_text(by_other);
    ck_assert_msg(strcmp(text, want) == 0, "made with another SQLite's image:\n%.3000s", text);
    free(text);
    fdx_schema_image_set(other, fdx_schema_image_rows, sqlite3_libversion());
    char *by_this = strdup(tu_path(tu_dir, "this.db"));
    fdx_store_close(tu_open(by_this));
    text = store_text(by_this);
    ck_assert_ptr_nonnull(strstr(text, "worded_otherwise"));
    free(text);
    free(by_other);
    free(by_this);
    fdx_schema_image_set(NULL, 0, NULL);
    free(other);
    free(want);
    free(have);
    free((char *)made);
    free((char *)migrated);
}
END_TEST

/* A writer that created its store and failed before its first commit leaves
 * no file behind; one that only opened it keeps it (an empty store on purpose). */
START_TEST(failed_first_transaction_removes_the_new_store)
{
    const char *path = strdup(tu_path(tu_dir, "new.db"));
    fdx_store *db = tu_open(path);
    begin_and_roll_back(db);
    fdx_store_close(db);
    ck_assert_int_ne(access(path, F_OK), 0);
    ck_assert_int_ne(access(tu_path(tu_dir, "new.db-wal"), F_OK), 0);
    ck_assert_int_ne(access(tu_path(tu_dir, "new.db-shm"), F_OK), 0);
    fdx_store_close(tu_open(path));
    ck_assert_int_eq(access(path, F_OK), 0);
    free((char *)path);
}
END_TEST

/* So does one that made its store in a file that was there and held
 * nothing: the file holds nothing again (a failed ingest or merge into it
 * left an empty store, which readers then took, where they had refused the
 * file, and the message said "unchanged"). One that only opened it, or
 * committed, keeps the store. */
START_TEST(failed_first_transaction_leaves_an_empty_file_empty)
{
    const char *path = strdup(tu_path(tu_dir, "empty.db"));
    const char *src = strdup(tu_path(tu_dir, "src.db"));
    store_of_one_miss(src, "w");
    tu_raw_exec(src, "DELETE FROM store_identity"); /* a source a merge refuses */
    const char *bad = strdup(tu_path(tu_dir, "bad.jsonl"));
    tu_write_file(bad, "garbage\n");
    struct stat st;
    for (int how = 0; how < 3; how++) {
        tu_write_file(path, "");
        fdx_store *db = tu_open(path);
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        if (how == 0)
            ck_assert_int_eq(fdx_store_ingest_path(db, bad, NULL, NULL), FDX_EDATA);
        else if (how == 1)
            ck_assert_int_ne(fdx_store_merge(db, src, NULL), FDX_OK);
        ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
        fdx_store_close(db);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_msg(st.st_size == 0, "%d: %lld bytes", how, (long long)st.st_size);
        ck_assert_int_ne(access(tu_path(tu_dir, "empty.db-journal"), F_OK), 0);
        ck_assert_int_ne(access(tu_path(tu_dir, "empty.db-wal"), F_OK), 0);
    }
    fdx_store_close(tu_open(path));
    ck_assert(stat(path, &st) == 0 && st.st_size > 0);
    tu_write_file(path, "");
    fdx_store *db = tu_open(path);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    fdx_store_close(db);
    ck_assert(stat(path, &st) == 0 && st.st_size > 0);
    free((char *)path);
    free((char *)src);
    free((char *)bad);
}
END_TEST

/* A store made through a symlink that named nothing yet is the symlink's
 * target: failing before its first commit, the writer removes the target and
 * leaves the symlink, which was there before (it removed the symlink and left
 * an empty store at the target). */
START_TEST(a_failed_new_store_made_through_a_symlink_removes_its_target)
{
    char *link = strdup(tu_path(tu_dir, "link.db")), *target = strdup(tu_path(tu_dir, "target.db"));
    struct stat st;
    ck_assert_int_eq(symlink(target, link), 0);
    fdx_store *db = tu_open(link);
    ck_assert_int_eq(access(target, F_OK), 0);
    begin_and_roll_back(db);
    fdx_store_close(db);
    ck_assert_int_ne(access(target, F_OK), 0);
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(unlink(link), 0);
    free(link);
    free(target);
}
END_TEST

/* The default VFS, wrapped to act once on a store's file just before SQLite
 * opens it (hooked_file names it, hook acts), as another writer or SQLite
 * itself may between a writer's look at the path and its open. */
static const char *hooked_file;
static void (*hook)(const char *name, int *flags);

static int hooked_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
                       int *out)
{
    (void)vfs;
    if (hooked_file && name && (flags & SQLITE_OPEN_MAIN_DB) && strstr(name, hooked_file)) {
        hooked_file = NULL;
        hook(name, &flags);
    }
    return plain_vfs->xOpen(plain_vfs, name, f, flags, out);
}

/* Removed, as the writer that created it does when it fails. */
static void remove_it(const char *name, int *flags)
{
    (void)flags;
    ck_assert_int_eq(unlink(name), 0);
}

/* Opened read-only, as SQLite does when its open for writing fails: the file
 * was removed, and made again there since. */
static void open_read_only(const char *name, int *flags)
{
    (void)name;
    *flags = (*flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY;
}

/* A writer's handle on a file that held nothing, opened through the hook;
 * unwrap_default_vfs(vfs) when done. */
static fdx_store *open_hooked(sqlite3_vfs *vfs, const char *path,
                              void (*act)(const char *name, int *flags))
{
    tu_write_file(path, "");
    wrap_default_vfs(vfs, "fdx-test-hooked", hooked_open);
    hook = act;
    hooked_file = strrchr(path, '/') + 1;
    fdx_store *db = tu_open(path);
    ck_assert_ptr_null(hooked_file);
    return db;
}

/* A writer that found the file there, and then made it again because it went
 * before the open, made the store: failing before its first commit, it
 * leaves no file behind (it left an empty one). */
START_TEST(a_store_made_again_after_it_went_is_removed_by_its_maker)
{
    static sqlite3_vfs removing;
    const char *path = strdup(tu_path(tu_dir, "again.db"));
    fdx_store *db = open_hooked(&removing, path, remove_it);
    begin_and_roll_back(db);
    fdx_store_close(db);
    unwrap_default_vfs(&removing);
    ck_assert_int_ne(access(path, F_OK), 0);
    free((char *)path);
}
END_TEST

/* A writer whose connection SQLite opened read-only, to a file it can write,
 * took another writer's new store, still empty, for one to make in it, failed
 * to ("attempt to write a readonly database"), and emptied it at close with
 * the other's journal: its BEGIN EXCLUSIVE took no write lock. It opens the
 * file again. */
START_TEST(a_writer_opened_read_only_by_a_race_opens_again)
{
    static sqlite3_vfs read_only;
    const char *path = strdup(tu_path(tu_dir, "raced.db"));
    fdx_store *db = open_hooked(&read_only, path, open_read_only);
    tu_commit_miss(db, "w");
    fdx_store_close(db);
    unwrap_default_vfs(&read_only);
    ck_assert_uint_eq(miss_cells_at(path), 1);
    free((char *)path);
}
END_TEST

/* A writer whose store was removed after it committed into it fails to
 * begin instead of committing into the removed file (or into a new one,
 * without the cells it committed before). */
START_TEST(commit_into_a_removed_store_fails)
{
    const char *path = strdup(tu_path(tu_dir, "new.db"));
    const char *feed = strdup(tu_path(tu_dir, "x.jsonl"));
    tu_write_file(feed, MISS_LINE("1"));
    fdx_store *other = tu_open(path);
    tu_commit_miss(other, "w");
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(fdx_store_begin(other), FDX_EIO);
    ck_assert_msg(strstr(fdx_store_errmsg(other), "removed"), "%s", fdx_store_errmsg(other));
    fdx_store_close(other);
    free((char *)path);
    free((char *)feed);
}
END_TEST

static const char *journal_mode(const char *path)
{
    static char mode[16];
    sqlite3_stmt *st = raw_row(path, "PRAGMA journal_mode");
    snprintf(mode, sizeof mode, "%s", (const char *)sqlite3_column_text(st, 0));
    raw_row_end(st);
    return mode;
}

/* A new store, opened with one miss pending in its first transaction. */
static fdx_store *new_store_in_its_first_transaction(char **path, char **feed, int busy_ms)
{
    *path = strdup(tu_path(tu_dir, "new.db"));
    *feed = strdup(tu_path(tu_dir, "x.jsonl"));
    tu_write_file(*feed, MISS_LINE("1"));
    fdx_store *db = tu_open(*path);
    ck_assert_int_eq(fdx_store_set_busy_timeout(db, busy_ms), FDX_OK);
    ck_assert_str_eq(journal_mode(*path), "delete");
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, *feed, NULL, NULL), FDX_OK);
    return db;
}

/* A new store's first commit goes through a rollback journal (each page
 * written once); from then on it is a WAL store, and no journal is left. */
START_TEST(new_store_is_wal_after_its_first_commit)
{
    char *path, *feed;
    fdx_store *db = new_store_in_its_first_transaction(&path, &feed, 10000);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_str_eq(journal_mode(path), "wal");
    ck_assert_int_ne(access(tu_path(tu_dir, "new.db-journal"), F_OK), 0);
    fdx_store_close(db);
    ck_assert_str_eq(journal_mode(path), "wal");
    free(path);
    free(feed);
}
END_TEST

/* Through a rollback journal, the first commit into a new store waits for
 * its readers (up to the busy timeout) instead of writing beside them: one
 * that holds on fails the commit, and nothing is left of it. */
START_TEST(first_commit_into_a_new_store_waits_for_its_readers)
{
    char *path, *feed;
    fdx_store *db = new_store_in_its_first_transaction(&path, &feed, 50);
    sqlite3_stmt *reading = raw_row(path, "SELECT count(*) FROM sqlite_schema");
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_EBUSY);
    raw_row_end(reading);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, feed, NULL, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    fdx_store_close(db);
    ck_assert_str_eq(journal_mode(path), "wal");
    uint64_t misses, dispatches;
    db = tu_open(path);
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_int_eq(misses, 1);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_str_eq(out, MISS_OUT("1"));
    free(out);
    fdx_store_close(db);
    free(path);
    free(feed);
}
END_TEST

/* The connection a trace callback opens to read the store right after the
 * statement it traces has finished (a commit), before anything else runs. */
static sqlite3_stmt *reader_after_commit;

static int read_after_commit(unsigned type, void *path, void *stmt, void *ns)
{
    (void)type;
    (void)ns;
    if (!reader_after_commit && !strncmp(sqlite3_sql(stmt), "COMMIT", 6))
        reader_after_commit = raw_row(path, "SELECT count(*) FROM sqlite_schema");
    return 0;
}

/* A reader that takes hold of a new store just as its first commit ends
 * keeps it from becoming WAL then; a handle that stays open (a sink draining
 * into it) makes it WAL at its next commit, so that readers do not go on
 * waiting for every commit it makes. */
START_TEST(new_store_becomes_wal_at_a_later_commit)
{
    char *path, *feed;
    fdx_store *db = new_store_in_its_first_transaction(&path, &feed, 50);
    reader_after_commit = NULL;
    sqlite3_trace_v2(db->db, SQLITE_TRACE_PROFILE, read_after_commit, path);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    sqlite3_trace_v2(db->db, 0, NULL, NULL);
    ck_assert_ptr_nonnull(reader_after_commit);
    raw_row_end(reader_after_commit);
    ck_assert_str_eq(journal_mode(path), "delete");
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, feed, NULL, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_str_eq(journal_mode(path), "wal");
    fdx_store_close(db);
    free(path);
    free(feed);
}
END_TEST

/* A writer that opens a new store while its first transaction runs (no WAL
 * yet: the switch to it waits for that writer) says the store is locked and
 * for how long it waited, as it does at its begin into a WAL store. */
START_TEST(writer_opening_a_new_store_in_its_first_transaction_says_it_is_locked)
{
    char *path, *feed;
    fdx_store *db = new_store_in_its_first_transaction(&path, &feed, 10000), *other;
    ck_assert_int_eq(fdx_store_open_v2(path, FDX_OPEN_CREATE, 50, &other), FDX_EBUSY);
    ck_assert_msg(
        strstr(fdx_store_errmsg(other), "locked by another process or handle for more than 50 ms"),
        "%s", fdx_store_errmsg(other));
    fdx_store_close(other);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    fdx_store_close(db);
    free(path);
    free(feed);
}
END_TEST

START_TEST(export_needs_a_directory)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    const char *file = tu_path(tu_dir, "file");
    tu_write_file(file, "x");
    ck_assert_int_eq(fdx_store_export(db, file, NULL), FDX_EIO);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "not a directory"));
    fdx_store_close(db);
}
END_TEST

static int no_growth(void *ctx, const fdx_growth_row *row)
{
    (void)ctx;
    (void)row;
    return 0;
}

static int no_value(void *ctx, const char *field, const char *value)
{
    (void)ctx;
    (void)field;
    (void)value;
    return 0;
}

/* A NULL handle, or one whose open failed, is misuse the API says so of:
 * every call returns FDX_EMISUSE (with a reason on the handle), never
 * crashes. So are NULL out-parameters and callbacks. */
START_TEST(misuse_of_handles_and_pointers_is_refused)
{
    fdx_store *none = NULL, *failed, *db;
    fdx_demand_filter window = FDX_DEMAND_FILTER_INIT;
    uint64_t n;
    int found, rows = 0;
    fdx_ledger_entry e;
    char hex[65];
    const char *paths[] = {"x"};
    ck_assert_int_eq(fdx_store_open(tu_path(tu_dir, "x.db"), FDX_OPEN_CREATE, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_begin(none), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_commit(none, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_rollback(none), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_demand(none, NULL, count_rows, &rows), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_export(none, tu_dir, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_ingest_paths(none, paths, 1, NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_report(none, tu_path(tu_dir, "r.html"), NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_diff(none, "x.db", NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_merge(none, "x.db", NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_set_busy_timeout(none, 5), FDX_EMISUSE);
    fdx_store_set_progress(none, NULL, NULL);
    ck_assert_ptr_null(fdx_json_string(NULL));
    ck_assert_ptr_null(fdx_json_string("a\xff")); /* no JSON string holds it */
    char *json = fdx_json_string("\xc3\xa9\t");
    ck_assert_str_eq(json, "\"\xc3\xa9\\t\"");
    free(json);
    fdx_store *flagged;
    const int bad_flags[] = {-1, FDX_OPEN_CREATE | 0x1000, FDX_OPEN_FOR_READING | FDX_OPEN_CREATE};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(fdx_store_open(tu_path(tu_dir, "x.db"), bad_flags[i], &flagged),
                         FDX_EMISUSE);
        fdx_store_close(flagged);
    }
    ck_assert_int_ne(access(tu_path(tu_dir, "x.db"), F_OK), 0);

    ck_assert_int_eq(fdx_store_open(tu_path(tu_dir, "no-such.db"), 0, &failed), FDX_ENOENT);
    ck_assert_int_eq(fdx_store_demand(failed, NULL, count_rows, &rows), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(failed), "open failed"));
    ck_assert_int_eq(fdx_store_growth(failed, NULL, 7, no_growth, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_report(failed, tu_path(tu_dir, "r.html"), NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_filter_values(failed, no_value, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_find_run(failed, "r", &e, &found), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_diff(failed, tu_path(tu_dir, "no-such.db"), NULL, NULL),
                     FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_cell_counts(failed, &n, &n), FDX_EMISUSE);
    fdx_store_close(failed);

    ck_assert_int_eq(fdx_store_open(tu_path(tu_dir, "misuse.db"), FDX_OPEN_CREATE, &db), FDX_OK);
    ck_assert_int_eq(fdx_store_demand(db, NULL, NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_growth(db, NULL, 7, NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_filter_values(db, NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_find_run(db, "r", NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_cell_counts(db, NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_export(db, NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_diff(db, tu_path(tu_dir, "misuse.db"), NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_export_kind(db, "misses", NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_hash_paths(db, NULL, 1, hex), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_hash_paths(db, paths, 1, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_merge(db, NULL, NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "no store path given"));
    ck_assert_int_eq(fdx_store_ingest_paths(db, NULL, 2, NULL, NULL), FDX_EMISUSE);
    /* threads without bound started as many (5,000 took 532 MB) */
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.threads = FDX_MAX_THREADS + 1;
    ck_assert_int_eq(fdx_store_ingest_paths(db, paths, 1, &opts, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    for (int i = 0; i < 4; i++) { /* window times outside 1970 .. 9999 */
        int64_t bad[] = {-86400, INT64_MIN, INT64_MAX, 253402300800LL};
        window.since = i % 2 ? bad[i] : 0;
        window.until = i % 2 ? 0 : bad[i];
        ck_assert_int_eq(fdx_store_demand(db, &window, count_rows, &rows), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_growth(db, &window, 7, no_growth, NULL), FDX_EMISUSE);
    }
    window.since = window.until = 0;
    window.compute_capability = "89"; /* matches nothing: a mistyped filter */
    ck_assert_int_eq(fdx_store_demand(db, &window, count_rows, &rows), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "neither 'cpu' nor MAJOR.MINOR"));
    window.compute_capability = "8.9";
    ck_assert_int_eq(fdx_demand_filter_check(&window, NULL, 0), FDX_OK);
    window.compute_capability = "bogus"; /* a NULL why wrote through NULL when given a size */
    ck_assert_int_eq(fdx_demand_filter_check(&window, NULL, 64), FDX_EMISUSE);
    ck_assert_int_eq(fdx_prune_filter_check(NULL, NULL, 64), FDX_EMISUSE);
    fdx_store_close(db);

    fdx_rejects *rj = NULL;
    FILE *stream;
    const char *const no_input[] = {NULL};
    const char *rejects = tu_path(tu_dir, "rejects.jsonl"), *store = tu_path(tu_dir, "misuse.db");
    ck_assert_int_eq(fdx_rejects_open(rejects, store, paths, 1, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_rejects_open(rejects, store, NULL, 1, &rj), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_rejects_errmsg(rj), "input 1 of 1 not given"));
    fdx_rejects_close(rj);
    ck_assert_int_eq(fdx_rejects_open(rejects, store, no_input, 1, &rj), FDX_EMISUSE);
    fdx_rejects_close(rj);
    ck_assert_int_eq(fdx_rejects_open(rejects, NULL, NULL, 0, &rj), FDX_EMISUSE);
    ck_assert_str_eq(fdx_rejects_errmsg(rj), "no store path given");
    fdx_rejects_close(rj);
    ck_assert_int_eq(fdx_rejects_start(NULL, &stream), FDX_EMISUSE);
    ck_assert_int_eq(fdx_rejects_sync(NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_rejects_commit(NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_rejects_open(rejects, store, NULL, 0, &rj), FDX_OK);
    ck_assert_int_eq(fdx_rejects_start(rj, NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_rejects_errmsg(rj), "no stream"));
    fdx_rejects_close(rj);
    /* A handle whose open was refused went on to start, sync and commit: a
     * rejects file renamed over the store it had refused, or, with no path,
     * a crash. */
    tu_commit_miss(db = tu_open(store), "kept");
    fdx_store_close(db);
    const char *refused[] = {store, NULL};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(fdx_rejects_open(refused[i], store, NULL, 0, &rj), FDX_EMISUSE);
        ck_assert_int_eq(fdx_rejects_start(rj, &stream), FDX_EMISUSE);
        ck_assert_ptr_nonnull(strstr(fdx_rejects_errmsg(rj), "open failed"));
        ck_assert_int_eq(fdx_rejects_sync(rj), FDX_EMISUSE);
        ck_assert_int_eq(fdx_rejects_commit(rj), FDX_EMISUSE);
        fdx_rejects_close(rj);
    }
    ck_assert_uint_eq(miss_cells_at(store), 1);
}
END_TEST

/* What a forked child does with its parent's rejects handle: its calls are
 * refused (its close removed the parent's temporary file, and the parent's
 * commit failed), and so are its stream's writes (leaving through exit(),
 * which flushes every stream, it wrote the lines the parent had buffered at
 * the fork into the parent's file, where the parent wrote them again). 1
 * when it was refused. */
static int child_of_rejects(fdx_rejects *rj, FILE *stream, int leaves_by_exit)
{
    if (leaves_by_exit) {
        fputs("the child's line\n", stream);
        return fflush(stream) != 0; /* what exit() does, without Check's handlers */
    }
    int refused = fdx_rejects_sync(rj) == FDX_EMISUSE && fdx_rejects_commit(rj) == FDX_EMISUSE &&
                  strstr(fdx_rejects_errmsg(rj), "forked from") != NULL;
    fdx_rejects_close(rj);
    return refused;
}

/* The parent commits the lines it wrote, once, whatever its child did. */
START_TEST(a_forked_child_leaves_its_parents_rejects_file)
{
    const char *path = tu_path(tu_dir, "rejects.jsonl");
    for (int by_exit = 0; by_exit < 2; by_exit++) {
        fdx_rejects *rj;
        FILE *stream;
        ck_assert_int_eq(fdx_rejects_open(path, tu_path(tu_dir, "s.db"), NULL, 0, &rj), FDX_OK);
        ck_assert_int_eq(fdx_rejects_start(rj, &stream), FDX_OK);
        fputs("bad line\n", stream); /* buffered when the child is forked */
        pid_t child = fork();
        if (child == 0)
            _exit(child_of_rejects(rj, stream, by_exit) ? 0 : 1);
        int status;
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert(WIFEXITED(status));
        ck_assert_msg(WEXITSTATUS(status) == 0, "child %d was not refused", by_exit);
        fputs("second line\n", stream);
        ck_assert_int_eq(fdx_rejects_sync(rj), FDX_OK);
        ck_assert_msg(fdx_rejects_commit(rj) == FDX_OK, "%s", fdx_rejects_errmsg(rj));
        fdx_rejects_close(rj);
        char *text = tu_read_file(path, NULL);
        ck_assert_str_eq(text, "bad line\nsecond line\n");
        free(text);
    }
}
END_TEST

/* An empty file beside a -wal holding commits: SQLite deletes such a -wal on
 * the file's first read, and every reader (fdx-top, fdx-export...) refused
 * the empty store having deleted its -wal; a writer creating the missing
 * file deleted it too. Readers and writers refuse it and leave both files as
 * they were. */
START_TEST(an_empty_file_with_a_wal_is_refused_untouched)
{
    const char *path = tu_path(tu_dir, "s.db");
    store_of_one_miss(path, "seed");
    sqlite3 *raw;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(raw,
                                  "PRAGMA wal_autocheckpoint = 0; "
                                  "UPDATE miss_cell SET count = count + 1",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    size_t n;
    char *wal = tu_read_file(tu_path(tu_dir, "s.db-wal"), &n);
    ck_assert_ptr_nonnull(wal);
    ck_assert_uint_gt(n, 0);
    sqlite3_close(raw);
    const char *empty = tu_path(tu_dir, "e.db"), *empty_wal = tu_path(tu_dir, "e.db-wal");
    const int flags[] = {FDX_OPEN_FOR_READING, FDX_OPEN_READONLY, 0, FDX_OPEN_CREATE,
                         FDX_OPEN_CREATE};
    for (int i = 0; i < 5; i++) {
        FILE *f = fopen(empty_wal, "wb");
        ck_assert_uint_eq(fwrite(wal, 1, n, f), n);
        fclose(f);
        if (i < 4)
            fclose(fopen(empty, "wb"));
        else /* a writer that would create the file */
            unlink(empty);
        fdx_store *db;
        ck_assert_int_eq(fdx_store_open(empty, flags[i], &db), FDX_ENOTSTORE);
        ck_assert_msg(strstr(fdx_store_errmsg(db), "its -wal holds"), "%s", fdx_store_errmsg(db));
        fdx_store_close(db);
        struct stat st;
        ck_assert_int_eq(stat(empty_wal, &st), 0);
        ck_assert_uint_eq((size_t)st.st_size, n);
        ck_assert_int_eq(stat(empty, &st) == 0, i < 4);
        ck_assert(i == 4 || st.st_size == 0);
    }
    free(wal);
}
END_TEST

/* SQLite's plan for sql in db, its steps joined by "; ". */
static void plan_of(sqlite3 *db, const char *sql, char *out, size_t size)
{
    char explain[8192];
    sqlite3_stmt *st;
    snprintf(explain, sizeof explain, "EXPLAIN QUERY PLAN %s", sql);
    ck_assert_int_eq(sqlite3_prepare_v2(db, explain, -1, &st, NULL), SQLITE_OK);
    out[0] = '\0';
    size_t len = 0;
    while (sqlite3_step(st) == SQLITE_ROW && len < size)
        len += (size_t)snprintf(out + len, size - len, "%s; ", sqlite3_column_text(st, 3));
    sqlite3_finalize(st);
}

/* Statistics a store carries (sqlite_stat1, which the schema check allows)
 * steer SQLite's plans: crafted ones made fdx-top's windows and growth, and
 * fdx-report, read the whole history again for each cell (100 times slower
 * on 20,000 cells, and growing with the square of the store). Their plans,
 * the report's sparklines' too, read the history first and find each cell by
 * its id, whatever the statistics say (the sparklines' keys only filter: as
 * an index constraint, each history row took one search a key). */
START_TEST(crafted_statistics_do_not_steer_the_readers_plans)
{
    const char *path = tu_path(tu_dir, "s.db");
    store_of_one_miss(path, "seed");
    tu_raw_exec(path,
                "ANALYZE; "
                "UPDATE sqlite_stat1 SET stat = '1 1' WHERE idx = 'miss_cell_by_id'; "
                "UPDATE sqlite_stat1 SET stat = '1 1 1 1 1 1 1 1 1 1 1' WHERE idx = 'miss_cell'; "
                "INSERT OR REPLACE INTO sqlite_stat1 VALUES "
                "('cell_history', 'cell_history', '100000000 1 1 1')");
    sqlite3 *db;
    char plan[4096];
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    const char *by_id[] = {fdx_sql_top_window, fdx_sql_top_growth, fdx_sql_report_daily};
    for (int i = 0; i < 3; i++) {
        plan_of(db, by_id[i], plan, sizeof plan);
        ck_assert_msg(strstr(plan, "SEARCH c USING INDEX miss_cell_by_id (cell_id=?)") ||
                          strstr(plan, "SEARCH c USING COVERING INDEX miss_cell_by_id (cell_id=?)"),
                      "%s", plan);
        ck_assert_msg(!strstr(plan, "SCAN c"), "%s", plan);
    }
    sqlite3_close(db);
    fdx_store *s;
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_FOR_READING, &s), FDX_OK); /* still a store */
    fdx_store_close(s);
}
END_TEST

/* What a callback's calls into its own handle returned. */
typedef struct reentry {
    fdx_store *db;
    int calls, refused;
} reentry;

static void commit_from_progress(void *ctx, const char *what, uint64_t done)
{
    reentry *r = ctx;
    (void)what, (void)done;
    r->calls++;
    fdx_sink *sink = fdx_sink_new(); /* a drain's message said "a transaction open" */
    r->refused += fdx_store_commit(r->db, NULL) == FDX_EMISUSE &&
                  strstr(fdx_store_errmsg(r->db), "from a callback") != NULL && sink &&
                  fdx_sink_drain_to_store(sink, r->db, NULL) == FDX_EMISUSE &&
                  strstr(fdx_sink_errmsg(sink), "from a callback") != NULL &&
                  fdx_store_close(r->db) == FDX_EMISUSE;
    fdx_sink_free(sink);
}

static int first_row(void *ctx, const fdx_demand_row *row)
{
    (void)ctx, (void)row;
    return 1;
}

static int demand_from_demand(void *ctx, const fdx_demand_row *row)
{
    reentry *r = ctx;
    (void)row;
    r->calls++;
    r->refused += fdx_store_demand(r->db, NULL, first_row, NULL) == FDX_EMISUSE &&
                  fdx_store_begin(r->db) == FDX_EMISUSE &&
                  fdx_store_close(r->db) == FDX_EMISUSE; /* it freed the handle in use */
    return 0;
}

/* A commit from the progress callback of an ingest committed the lines read
 * so far of a path that then failed on a bad line, and a ranking from a
 * ranking's callback reset the rows being read, and a close from either
 * freed the handle the call went on using: a call into a handle from a
 * callback of a call still running on it is refused. */
START_TEST(a_callback_cannot_call_into_its_handle)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    fdx_buf feed = FDX_BUF_INIT;
    for (int i = 0; i < 3000; i++) {
        char line[256];
        snprintf(line, sizeof line,
                 "{\"schema\":2,\"wanted\":\"w%d\",\"fallback\":{\"backend\":\"Cuda\","
                 "\"op\":\"A\",\"dtypes\":[],\"kernel_source\":\"s\",\"kernel_revision_hash\":1},"
                 "\"count\":1,\"hw\":{\"hardware_sku\":\"x\",\"driver_version\":\"1\"}}\n",
                 i);
        fdx_buf_puts(&feed, line);
    }
    fdx_buf_puts(&feed, "{\"schema\":2}\n");
    reentry r = {db, 0, 0};
    fdx_store_set_progress(db, commit_from_progress, &r);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_ne(fdx_store_ingest_buffer(db, "feed", feed.data, feed.len, NULL, NULL), FDX_OK);
    ck_assert_int_gt(r.calls, 1);
    ck_assert_int_eq(r.refused, r.calls);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK); /* the path was left out whole */
    fdx_store_set_progress(db, NULL, NULL);
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 0);
    fdx_store_close(db);
    db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "feed", feed.data, feed.len - 14, NULL, NULL),
                     FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    fdx_store_close(db);
    ck_assert_int_eq(fdx_store_open(tu_path(tu_dir, "s.db"), FDX_OPEN_READONLY, &db), FDX_OK);
    r = (reentry){db, 0, 0};
    ck_assert_int_eq(fdx_store_demand(db, NULL, demand_from_demand, &r), FDX_OK);
    ck_assert_int_eq(r.calls, 3000); /* each row once: the rows were not read again */
    ck_assert_int_eq(r.refused, 3000);
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK); /* and after */
    ck_assert_uint_eq(misses, 3000);
    fdx_store_close(db);
    fdx_buf_free(&feed);
}
END_TEST

static int no_diff_row(void *ctx, const fdx_diff_row *row)
{
    (void)ctx, (void)row;
    return 0;
}

/* Whether another process can begin a transaction on the store at path. */
static int another_process_begins(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        sqlite3 *c;
        _exit(sqlite3_open(path, &c) == SQLITE_OK &&
                      sqlite3_exec(c, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK
                  ? 0
                  : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* SQLite's locks are POSIX record locks, dropped when the process closes any
 * descriptor of the file. Checking an output path's first bytes, ingesting
 * or hashing a path opened and closed it: given a store's -shm (or its file)
 * while a handle of the same process held the store's write lock, that let
 * another process write beside the transaction, and the store lost the other
 * commit's index rows. Such a path is now refused before it is opened. */
START_TEST(a_path_of_a_store_open_here_is_refused_unopened)
{
    const char *path = strdup(tu_path(tu_dir, "held.db"));
    char *shm = fdx_store_companion(path, "-shm");
    fdx_store *held = tu_open(path), *other = tu_open(tu_path(tu_dir, "other.db"));
    tu_commit_miss(held, "first");
    ck_assert_int_eq(fdx_store_begin(held), FDX_OK);
    const char *line = MISS_LINE("1");
    ck_assert_int_eq(fdx_store_ingest_buffer(held, "feed", line, strlen(line), NULL, NULL), FDX_OK);
    ck_assert(!another_process_begins(path));
    const char *targets[] = {shm, path};
    for (int i = 0; i < 2; i++) {
        const char *t = targets[i];
        char hex[65];
        ck_assert_int_eq(fdx_store_begin(other), FDX_OK);
        ck_assert_int_eq(fdx_store_ingest_path(other, t, NULL, NULL), FDX_EMISUSE);
        ck_assert_msg(strstr(fdx_store_errmsg(other), "store open in this process"), "%s",
                      fdx_store_errmsg(other));
        ck_assert_int_eq(fdx_store_rollback(other), FDX_OK);
        ck_assert_int_eq(fdx_store_hash_paths(other, &t, 1, hex), FDX_EMISUSE);
        ck_assert_int_eq(fdx_store_report(other, t, NULL), FDX_EMISUSE);
        fdx_sink *sink = fdx_sink_new();
        ck_assert_int_eq(fdx_sink_flush_misses(sink, t, NULL), FDX_EMISUSE);
        fdx_sink_free(sink);
        ck_assert(!another_process_begins(path));
    }
    /* SQLite opening the -shm as a store (a merge's source, a diff's other
     * store) closed it too */
    ck_assert_int_eq(fdx_store_merge(held, shm, NULL), FDX_ENOTSTORE);
    ck_assert(!another_process_begins(path));
    ck_assert_int_eq(fdx_store_begin(other), FDX_OK);
    ck_assert_int_eq(fdx_store_merge(other, shm, NULL), FDX_ENOTSTORE);
    ck_assert_int_eq(fdx_store_rollback(other), FDX_OK);
    fdx_store *reader;
    ck_assert_int_eq(fdx_store_open(tu_path(tu_dir, "other.db"), FDX_OPEN_READONLY, &reader),
                     FDX_OK);
    ck_assert_int_eq(fdx_store_diff(reader, shm, no_diff_row, NULL), FDX_ENOTSTORE);
    fdx_store_close(reader);
    ck_assert(!another_process_begins(path));
    /* and a store opened through a link: its -shm is beside the link's target */
    const char *link = strdup(tu_path(tu_dir, "link.db")), *real = strdup(tu_path(tu_dir, "real")),
               *real_db = strdup(tu_path(tu_dir, "real/r.db"));
    ck_assert_int_eq(mkdir(real, 0755), 0);
    ck_assert_int_eq(symlink(real_db, link), 0);
    fdx_store *linked = tu_open(link);
    tu_commit_miss(linked, "l");
    ck_assert_int_eq(fdx_store_begin(linked), FDX_OK);
    char *real_shm = fdx_store_companion(real_db, "-shm");
    ck_assert_int_eq(fdx_store_begin(other), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(other, real_shm, NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_store_rollback(other), FDX_OK);
    ck_assert(!another_process_begins(real_db));
    ck_assert_int_eq(fdx_store_commit(linked, NULL), FDX_OK);
    fdx_store_close(linked);
    free(real_shm);
    free((char *)link);
    free((char *)real);
    free((char *)real_db);
    ck_assert_int_eq(fdx_store_commit(held, NULL), FDX_OK);
    fdx_store_close(other);
    fdx_store_close(held);
    ck_assert(another_process_begins(path));
    free(shm);
    free((char *)path);
}
END_TEST

/* Messages put the path first and the reason last: a path as long as the
 * message's room left only the path. */
START_TEST(a_long_path_leaves_the_reason_in_the_message)
{
    size_t n = 70000;
    char *path = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        path[i] = i % 100 == 0 ? '/' : 'd';
    memcpy(path + n - 7, "\xc3\xa9t.db", 6);
    path[n - 1] = '\0';
    fdx_store *db;
    ck_assert_int_ne(fdx_store_open(path, FDX_OPEN_CREATE, &db), FDX_OK);
    const char *msg = fdx_store_errmsg(db);
    size_t len = strlen(msg);
    ck_assert_msg(len > 40 && strstr(msg, "t.db: ") && strstr(msg, "...") &&
                      strstr(msg, strerror(ENAMETOOLONG)),
                  "%s", msg);
    ck_assert(fdx_utf8_valid(msg, len, NULL));
    fdx_store_close(db);
    free(path);
    /* The cuts fall between characters wherever they are: a two-, three- and
     * four-byte character at each offset around both cuts. */
    const char *chars[] = {"\xc3\xa9", "\xe2\x80\xa6", "\xf0\x9f\x98\x80"};
    char text[600], out[100];
    for (int c = 0; c < 3; c++)
        for (size_t at = 0; at + 4 < sizeof text; at++) {
            memset(text, 'a', sizeof text);
            memcpy(text + at, chars[c], strlen(chars[c]));
            text[sizeof text - 1] = '\0';
            fdx_format_message(out, sizeof out, "%s: the reason", text);
            ck_assert_msg(fdx_utf8_valid(out, strlen(out), NULL), "%zu %d: %s", at, c, out);
            ck_assert_uint_ge(strlen(out), sizeof out - 4); /* a character's bytes at most */
            ck_assert(strstr(out, "...") && strstr(out, ": the reason"));
        }
}
END_TEST

#define CAND_LINE(source)                                                                          \
    "{\"schema\":2,\"structure_key\":\"k\",\"chosen\":{\"backend\":\"Cuda\",\"op\":\"Gelu\","      \
    "\"dtypes\":[\"F16\"],\"kernel_source\":\"s\",\"kernel_revision_hash\":1},\"candidates\":[{"   \
    "\"impl_id\":{\"backend\":\"Cuda\",\"op\":\"Gelu\",\"dtypes\":[\"F16\"],\"kernel_source\":"    \
    "\"" source "\",\"kernel_revision_hash\":2}}],\"count\":1,\"hw\":{\"hardware_sku\":\"x\","     \
    "\"driver_version\":\"1\"}}\n"

static void ingest_into(fdx_store *db, const char *text)
{
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "feed", text, strlen(text), NULL, NULL), FDX_OK);
}

/* A backfill that writes a cell twice in one transaction (a record or an
 * earlier ingest first, then a list) keeps a later capture's list, as two
 * transactions would: only a list this transaction set is replaced by
 * arrival order. */
START_TEST(a_backfill_writing_a_cell_twice_keeps_a_later_list)
{
    const char *no_list = "{\"schema\":2,\"structure_key\":\"k\",\"chosen\":{\"backend\":"
                          "\"Cuda\",\"op\":\"Gelu\",\"dtypes\":[\"F16\"],\"kernel_source\":"
                          "\"s\",\"kernel_revision_hash\":1},\"count\":1,\"hw\":{"
                          "\"hardware_sku\":\"x\",\"driver_version\":\"1\"}}\n";
    fdx_store *db = tu_open(tu_path(tu_dir, "twice.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_time(db, 1780272000), FDX_OK); /* 2026-06-01 */
    ingest_into(db, CAND_LINE("later"));
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_time(db, 1767225600), FDX_OK); /* 2026-01-01 */
    ingest_into(db, no_list);
    ingest_into(db, CAND_LINE("older"));
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_time(db, 1790812800), FDX_OK); /* 2026-10-01 */
    ingest_into(db, CAND_LINE("first"));
    ingest_into(db, CAND_LINE("second")); /* one transaction: arrival order */
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_export(db, tu_path(tu_dir, "twice"), NULL), FDX_OK);
    char *text = tu_read_file(tu_path(tu_path(tu_dir, "twice"), "dispatches.jsonl"), NULL);
    ck_assert_ptr_nonnull(strstr(text, "\"second\""));
    free(text);
    fdx_store_close(db);
    db = tu_open(tu_path(tu_dir, "twice2.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_time(db, 1780272000), FDX_OK);
    ingest_into(db, CAND_LINE("later"));
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_time(db, 1767225600), FDX_OK);
    ingest_into(db, no_list);
    ingest_into(db, CAND_LINE("older"));
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_export(db, tu_path(tu_dir, "twice2"), NULL), FDX_OK);
    text = tu_read_file(tu_path(tu_path(tu_dir, "twice2"), "dispatches.jsonl"), NULL);
    ck_assert_ptr_nonnull(strstr(text, "\"later\""));
    free(text);
    fdx_store_close(db);
}
END_TEST

/* FDX_OPEN_AS_IS writes to a store only as it is: an empty file is not made
 * a store, an older one not migrated; a current store opens writable. */
START_TEST(an_open_as_it_is_makes_and_migrates_nothing)
{
    const char *empty = tu_path(tu_dir, "empty.db"), *older = tu_path(tu_dir, "older.db");
    FILE *f = fopen(empty, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    fdx_store *db;
    ck_assert_int_eq(fdx_store_open(empty, FDX_OPEN_AS_IS, &db), FDX_ENOTSTORE);
    fdx_store_close(db);
    struct stat st;
    ck_assert_int_eq(stat(empty, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
    fdx_store_close(tu_open(older));
    sqlite3 *raw;
    ck_assert_int_eq(sqlite3_open(older, &raw), SQLITE_OK);
    ck_assert_int_eq(
        sqlite3_exec(raw, version_pragma(fdx_schema_tables_since() - 1), NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(raw);
    ck_assert_int_eq(fdx_store_open(older, FDX_OPEN_AS_IS, &db), FDX_ERROR);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "needs migrating"));
    fdx_store_close(db);
    ck_assert_int_eq(sqlite3_open(older, &raw), SQLITE_OK);
    sqlite3_stmt *q;
    ck_assert_int_eq(sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &q, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    ck_assert_int_eq(sqlite3_column_int(q, 0), fdx_schema_tables_since() - 1);
    sqlite3_finalize(q);
    ck_assert_int_eq(sqlite3_exec(raw, version_pragma(fdx_schema_version()), NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(raw);
    ck_assert_int_eq(fdx_store_open(older, FDX_OPEN_AS_IS, &db), FDX_OK);
    begin_and_roll_back(db);
    fdx_store_close(db);
}
END_TEST

/* A file's bytes, to tell later whether a command left it as it was. */
typedef struct file_bytes {
    char *data;
    size_t len;
} file_bytes;

static file_bytes file_now(const char *path)
{
    file_bytes f = {NULL, 0};
    f.data = tu_read_file(path, &f.len);
    return f;
}

/* Whether path still holds before's bytes (both read); frees before. */
static int unchanged(const char *path, file_bytes before)
{
    file_bytes after = file_now(path);
    int same = before.data && after.data && before.len == after.len &&
               !memcmp(before.data, after.data, before.len);
    free(before.data);
    free(after.data);
    return same;
}

/* An export or report whose file is the store's own (or its -wal) would
 * rename over it: refused, the store as it was. A store named
 * misses.jsonl exported into its own directory, or a report written to
 * the store's path, was replaced by the output. */
START_TEST(outputs_never_replace_the_store)
{
    const char *store = tu_path(tu_dir, "misses.jsonl");
    fdx_store *db = tu_open(store);
    const char *feed[] = {tu_data("basic/input/run_0000")};
    ck_assert_int_eq(tu_ingest(db, feed, 1), FDX_OK);
    file_bytes before = file_now(store);
    ck_assert_int_eq(fdx_store_export(db, tu_dir, NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "would be replaced"));
    char dotted[4200];
    snprintf(dotted, sizeof dotted, "%s/./misses.jsonl", tu_dir);
    ck_assert_int_eq(fdx_store_report(db, dotted, NULL), FDX_EMISUSE);
    snprintf(dotted, sizeof dotted, "%s/misses.jsonl-wal", tu_dir);
    ck_assert_int_eq(fdx_store_report(db, dotted, NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "-wal"));
    ck_assert(unchanged(store, before));
    ck_assert_int_eq(fdx_store_report(db, tu_path(tu_dir, "r.html"), NULL), FDX_OK);
    fdx_store_close(db);
}
END_TEST

/* Nor another store: a report or export path mistyped as another store's
 * (or its -wal's) replaced it and answered FDX_OK, where a sink's flush
 * refused it. */
START_TEST(outputs_never_replace_another_store)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "a.db"));
    const char *feed[] = {tu_data("basic/input/run_0000")};
    ck_assert_int_eq(tu_ingest(db, feed, 1), FDX_OK);
    const char *victim = tu_path(tu_dir, "out/misses.jsonl");
    ck_assert_int_eq(mkdir(tu_path(tu_dir, "out"), 0755), 0);
    store_of_one_miss(victim, "victim");
    file_bytes before = file_now(victim);
    ck_assert_int_eq(fdx_store_export(db, tu_path(tu_dir, "out"), NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "misses.jsonl: is an SQLite database"));
    ck_assert_int_eq(fdx_store_report(db, victim, NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "give another path"));
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", victim);
    FILE *f = fopen(wal, "wb"); /* an empty -wal: told by its name beside the store */
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(fdx_store_report(db, wal, NULL), FDX_EMISUSE);
    ck_assert(unchanged(victim, before));
    struct stat st;
    ck_assert(stat(wal, &st) == 0 && st.st_size == 0);
    DIR *d = opendir(tu_path(tu_dir, "out"));
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) /* no temporary file left */
        ck_assert_msg(e->d_name[0] == '.' ? !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")
                                          : !strncmp(e->d_name, "misses.jsonl", 12),
                      "%s", e->d_name);
    closedir(d);
    fdx_store_close(db);
}
END_TEST

/* A writer sums into the cells it finds: an edited store's count below 1
 * came out a count readers take (-5 + 49 = 44), hiding the edit. The
 * ingest and the merge into it fail, naming it, and change nothing. */
START_TEST(a_stored_count_below_one_is_not_summed)
{
    const char *path = strdup(tu_path(tu_dir, "s.db")), *src = strdup(tu_path(tu_dir, "src.db"));
    store_of_one_miss(path, "w");
    store_of_one_miss(src, "w");
    tu_raw_exec(path, "PRAGMA ignore_check_constraints = 1; UPDATE miss_cell SET count = -5");
    file_bytes before = file_now(path);
    fdx_store *db = tu_open(path);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_merge(db, src, NULL), FDX_EDATA);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "count is below 1"));
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    fdx_store_close(db);
    db = tu_open(path);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    const char *dt[] = {"F16"}; /* the cell tu_commit_miss records */
    fdx_miss m = {"w", {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "cpu", "n/a"}};
    int rc = fdx_store_record_miss(db, &m);
    if (rc == FDX_OK)
        rc = fdx_store_commit(db, NULL);
    ck_assert_msg(rc == FDX_EDATA, "%d: %s", rc, fdx_store_errmsg(db));
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "count is below 1"));
    fdx_store_close(db);
    ck_assert(unchanged(path, before));
    free((char *)path);
    free((char *)src);
}
END_TEST

/* Two writers open a file that holds nothing; the first makes the store in
 * it, begins, fails and empties the file again as it closes. The second,
 * which found the store made, makes it anew at its begin: it failed with
 * SQLite's "no such table: store_identity" (seen in the concurrency test's
 * creation race, now and then). */
START_TEST(a_writer_beside_one_that_empties_the_file_makes_the_store_anew)
{
    const char *path = strdup(tu_path(tu_dir, "s.db"));
    tu_write_file(path, "");
    fdx_store *first = tu_open(path), *second = tu_open(path);
    begin_and_roll_back(first);
    fdx_store_close(first);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
    tu_commit_miss(second, "kept");
    fdx_store_close(second);
    ck_assert_uint_eq(miss_cells_at(path), 1);
    /* emptied to pages that hold no object, as SQLite may leave a database
     * that holds nothing: made anew too */
    tu_write_file(path, "");
    first = tu_open(path);
    second = tu_open(path);
    begin_and_roll_back(first);
    fdx_store_close(first);
    tu_raw_exec(path, "CREATE TABLE x (a); DROP TABLE x;");
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_gt(st.st_size, 0);
    tu_commit_miss(second, "kept");
    fdx_store_close(second);
    ck_assert_uint_eq(miss_cells_at(path), 1);
    free((char *)path);
}
END_TEST

/* A writer makes the store in a file that held nothing (or creates the
 * file), begins and fails; meanwhile another writer switched the store to
 * WAL, and a reader is reading it. Emptying (or removing) the file then took
 * only the WAL's write lock, which readers do not wait for: the file went to
 * no bytes under the reader ("database disk image is malformed", seen in a
 * race of four creators). The store now goes back to a rollback journal
 * first, which SQLite refuses while another connection reads it: it stays,
 * unused, and the reader reads on. */
START_TEST(a_store_another_writer_switched_to_wal_stays_under_its_reader)
{
    for (int made_in_empty_file = 0; made_in_empty_file < 2; made_in_empty_file++) {
        const char *path = strdup(tu_path(tu_dir, made_in_empty_file ? "e.db" : "c.db"));
        if (made_in_empty_file)
            tu_write_file(path, "");
        fdx_store *maker = a_failed_creator(path);
        fdx_store *other = tu_open(path); /* a writer: switches the store to WAL */
        begin_and_roll_back(other);
        sqlite3 *reader;
        sqlite3_stmt *st;
        ck_assert_int_eq(sqlite3_open(path, &reader), SQLITE_OK);
        ck_assert_int_eq(
            sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM miss_cell", NULL, NULL, NULL),
            SQLITE_OK);
        fdx_store_close(maker);
        ck_assert_int_eq(
            sqlite3_prepare_v2(reader, "SELECT count(*) FROM cell_history", -1, &st, NULL),
            SQLITE_OK);
        ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
        sqlite3_finalize(st);
        sqlite3_exec(reader, "COMMIT", NULL, NULL, NULL);
        sqlite3_close(reader);
        tu_commit_miss(other, "kept");
        fdx_store_close(other);
        ck_assert_uint_eq(miss_cells_at(path), 1);
        free((char *)path);
    }
}
END_TEST

/* A creator that failed, beside another writer that committed into its new
 * store (and switched it to WAL), took the store back to a rollback journal
 * before it found the store used: the store was left out of WAL mode. */
START_TEST(a_used_store_stays_in_wal_mode_beside_a_failed_creator)
{
    const char *path = strdup(tu_path(tu_dir, "used.db"));
    fdx_store *maker = a_failed_creator(path);
    fdx_store *other = tu_open(path);
    tu_commit_miss(other, "kept");
    fdx_store_close(other);
    begin_and_roll_back(maker); /* it reads the store in WAL mode */
    fdx_store_close(maker);
    ck_assert_str_eq(journal_mode(path), "wal");
    ck_assert_uint_eq(miss_cells_at(path), 1);
    free((char *)path);
}
END_TEST

/* A handle whose file was removed from its path (a creator that failed
 * removes it) reads on; a store made at the path since is in the middle of a
 * write, its -journal beside it. The handle's read took that journal for a
 * hot one of its own (no reserved lock on its own, removed, file), played it
 * back into the removed file and deleted it, under the other writer. */
START_TEST(a_removed_files_handle_leaves_the_new_stores_journal_alone)
{
    const char *path = strdup(tu_path(tu_dir, "s.db")), *gone = strdup(tu_path(tu_dir, "gone.db"));
    const char *journal = strdup(tu_path(tu_dir, "s.db-journal"));
    fdx_store *db = tu_open(path);
    tu_commit_miss(db, "old");
    fdx_store_close(db);
    tu_raw_exec(path, "PRAGMA journal_mode = DELETE");
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_AS_IS, &db), FDX_OK); /* keeps the mode */
    ck_assert_int_eq(rename(path, gone), 0);
    fdx_store *made = tu_open(path);
    tu_commit_miss(made, "new");
    fdx_store_close(made);
    tu_raw_exec(path, "PRAGMA journal_mode = DELETE");
    sqlite3 *writer;
    ck_assert_int_eq(sqlite3_open(path, &writer), SQLITE_OK);
    /* pages spilled from a small cache: the journal is synced, as in a commit */
    ck_assert_int_eq(sqlite3_exec(writer,
                                  "PRAGMA cache_size = 2; BEGIN; UPDATE miss_cell SET count = 9;"
                                  "CREATE TABLE filler (b); WITH RECURSIVE n(i) AS (SELECT 1 "
                                  "UNION ALL SELECT i + 1 FROM n WHERE i < 400) INSERT INTO "
                                  "filler SELECT randomblob(2000) FROM n",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    struct stat st;
    ck_assert_int_eq(stat(journal, &st), 0);
    uint64_t misses, dispatches;
    fdx_store_cell_counts(db, &misses, &dispatches); /* the removed file's: whatever it says */
    ck_assert_msg(stat(journal, &st) == 0 && st.st_size > 0, "the new store's journal is gone");
    ck_assert_int_eq(sqlite3_exec(writer, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(writer);
    fdx_store_close(db);
    char *count = raw_text(path, "SELECT group_concat(wanted || count) FROM miss_cell");
    ck_assert_str_eq(count, "new9");
    free(count);
    free((char *)path);
    free((char *)gone);
    free((char *)journal);
}
END_TEST

/* A connection to a WAL store's file moved from its path since it was
 * opened (a creator that failed removes it), reading it for the first time,
 * opened the -wal and -shm named after the path: those of the store made
 * there since. It read that store's frames as its own pages, and its writes
 * went into that store. */
START_TEST(a_moved_files_connection_leaves_the_new_stores_wal_alone)
{
    const char *path = strdup(tu_path(tu_dir, "s.db")), *gone = strdup(tu_path(tu_dir, "gone.db"));
    fdx_store *db = tu_open(path);
    tu_commit_miss(db, "old");
    fdx_store_close(db);
    ck_assert_str_eq(journal_mode(path), "wal");
    sqlite3 *moved, *writer;
    ck_assert_int_eq(sqlite3_open_v2(path, &moved, SQLITE_OPEN_READWRITE, fdx_vfs_guard()),
                     SQLITE_OK);
    ck_assert_int_eq(rename(path, gone), 0);
    fdx_store *made = tu_open(path);
    tu_commit_miss(made, "new");
    fdx_store_close(made);
    ck_assert_int_eq(sqlite3_open(path, &writer), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(writer,
                                  "PRAGMA wal_autocheckpoint = 0; UPDATE miss_cell SET count = 9",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_ne(sqlite3_exec(moved, "UPDATE miss_cell SET count = 77", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(moved);
    char *count = raw_text(path, "SELECT group_concat(wanted || count) FROM miss_cell");
    ck_assert_str_eq(count, "new9");
    free(count);
    sqlite3_close(writer);
    free((char *)path);
    free((char *)gone);
}
END_TEST

/* What a transaction under a run id does besides reading its file. */
enum run_extra { RUN_FILE_ONLY, RUN_RECORD, RUN_MERGE, RUN_PRUNE };

/* A transaction under run_id that reads file (none: NULL) and does extra. */
static int commit_run_with(fdx_store *db, const char *run_id, const char *file,
                           enum run_extra extra, const char *src)
{
    const char *dt[] = {"F16"};
    fdx_miss m = {"w", {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "cpu", "n/a"}};
    fdx_prune_filter f = {NULL, NULL, NULL, "Nothing", NULL, NULL, 0}; /* removes nothing */
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_run_id(db, run_id), FDX_OK);
    if (file)
        ck_assert_int_eq(fdx_store_ingest_path(db, file, NULL, NULL), FDX_OK);
    if (extra == RUN_RECORD)
        ck_assert_int_eq(fdx_store_record_miss(db, &m), FDX_OK);
    if (extra == RUN_MERGE)
        ck_assert_int_eq(fdx_store_merge(db, src, NULL), FDX_OK);
    if (extra == RUN_PRUNE)
        ck_assert_int_eq(fdx_store_prune(db, &f, NULL), FDX_OK);
    return fdx_store_commit(db, NULL);
}

/* A run id is exactly-once in the library, not only in fdx-ingest: its
 * commit repeated was SQLite's "UNIQUE constraint failed" and lost the run.
 * Only a transaction that reads files and does nothing else can be told to
 * be the same as before (by their content hash): under a run id already
 * committed, anything else (records, a merge, a prune, a changed setting,
 * other files) is refused, where a first version took records, merges and
 * prunes for a repeat and dropped them, and a later one a setting. A
 * transaction that did nothing under an id (its only path left out as bad)
 * took the id, and the corrected retry was refused: it commits nothing. */
START_TEST(a_run_id_committed_again_is_a_no_op)
{
    const char *a = strdup(tu_path(tu_dir, "a.jsonl")), *b = strdup(tu_path(tu_dir, "b.jsonl"));
    tu_write_file(a, "{\"schema\":2,\"wanted\":\"a\",\"fallback\":" IMPL_H(
                         "src", "1") ",\"count\":1,\"hw\":" CPU "}\n");
    tu_write_file(b, "{\"schema\":2,\"wanted\":\"b\",\"fallback\":" IMPL_H(
                         "src", "1") ",\"count\":1,\"hw\":" CPU "}\n");
    const char *path = strdup(tu_path(tu_dir, "s.db")), *src = strdup(tu_path(tu_dir, "src.db"));
    store_of_one_miss(src, "m");
    fdx_store *db = tu_open(path);
    ck_assert_int_eq(commit_run_with(db, "records", NULL, RUN_RECORD, NULL), FDX_OK);
    ck_assert_int_eq(commit_run_with(db, "files", a, RUN_FILE_ONLY, NULL), FDX_OK);
    /* nothing under an id (a bad path left out) does not take it */
    ck_assert_int_eq(commit_run_with(db, "empty", NULL, RUN_FILE_ONLY, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_notice_kind(db), FDX_NOTICE_NOTHING_DONE);
    fdx_ledger_entry e;
    int found = 1;
    ck_assert_int_eq(fdx_store_find_run(db, "empty", &e, &found), FDX_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_run_id(db, "empty"), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "bad", "{bad\n", 5, NULL, NULL), FDX_EDATA);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_find_run(db, "empty", &e, &found), FDX_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(commit_run_with(db, "empty", b, RUN_FILE_ONLY, NULL), FDX_OK);
    fdx_store_close(db); /* its last commits checkpointed into the file */
    file_bytes before = file_now(path);
    db = tu_open(path);
    fdx_commit_stats cs = {7, 7};
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_run_id(db, "files"), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, a, NULL, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added + cs.cells_updated, 0);
    ck_assert_int_eq(fdx_store_notice_kind(db), FDX_NOTICE_NOTHING_DONE);
    ck_assert_ptr_nonnull(strstr(fdx_store_notice(db), "run id 'files' was already ingested"));
    ck_assert_int_eq(commit_run_with(db, "files", b, RUN_FILE_ONLY, NULL), FDX_EDATA);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "with different content"));
    const enum run_extra extras[] = {RUN_RECORD, RUN_MERGE, RUN_PRUNE};
    const char *ids[] = {"records", "files", "empty"};
    for (size_t i = 0; i < sizeof extras / sizeof *extras; i++)
        for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
            const char *file = strcmp(ids[k], "files") == 0 ? a : NULL;
            ck_assert_int_eq(commit_run_with(db, ids[k], file, extras[i], src), FDX_EDATA);
            ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "cannot be told to be the same"));
        }
    ck_assert_int_eq(commit_run_with(db, "records", a, RUN_FILE_ONLY, NULL), FDX_EDATA);
    /* a setting set and set back is no change */
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_daily_days(db, 7), FDX_OK);
    ck_assert_int_eq(fdx_store_set_daily_days(db, 90), FDX_OK);
    ck_assert_int_eq(fdx_store_set_run_id(db, "files"), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, a, NULL, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_notice_kind(db), FDX_NOTICE_NOTHING_DONE);
    /* a setting changed beside the same files was dropped by the no-op */
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_daily_days(db, 7), FDX_OK);
    ck_assert_int_eq(fdx_store_set_run_id(db, "files"), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_path(db, a, NULL, NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_EDATA);
    begin_and_roll_back(db); /* nothing was left open */
    fdx_store_close(db);
    ck_assert(unchanged(path, before));
    free((char *)a);
    free((char *)b);
    free((char *)path);
    free((char *)src);
}
END_TEST

/* A dispatch line of key R whose chosen implementation has dtypes DT (JSON)
 * and candidates CANDS. */
#define REGRET_LINE(dt, cands)                                                                     \
    "{\"schema\":2,\"structure_key\":\"R\",\"chosen\":{\"backend\":\"Cuda\",\"op\":\"Op\","        \
    "\"dtypes\":" dt ",\"kernel_source\":\"k\",\"kernel_revision_hash\":1},\"candidates\":[" cands \
    "],\"count\":7,\"hw\":" CPU "}\n"
#define REGRET_CAND(backend, dt, ns)                                                               \
    "{\"impl_id\":{\"backend\":\"" backend "\",\"op\":\"Op\",\"dtypes\":" dt                       \
    ",\"kernel_source\":\"k\",\"kernel_revision_hash\":1},\"latency_ns\":" ns "}"

/* Two dispatch cells whose dtypes join to the same text (["F16,F32"] and
 * ["F16","F32"]) are two cells of the regret view: it took them for one, and
 * the second's fast choice hid the first's regret. */
START_TEST(regret_takes_each_cell_by_its_id)
{
    ck_assert_int_eq(
        ingest_text(
            "r.jsonl",
            REGRET_LINE("[\"F16,F32\"]",
                        REGRET_CAND("Cuda", "[\"F16,F32\"]",
                                    "100") "," REGRET_CAND("fast", "[\"F16,F32\"]", "50"))
                REGRET_LINE("[\"F16\",\"F32\"]", REGRET_CAND("Cuda", "[\"F16\",\"F32\"]", "10"))),
        FDX_OK);
    const char *path = tu_path(tu_dir, "s.db");
    char *rows = raw_text(path, "SELECT group_concat(chosen_dtypes || ' ' || best_backend || ' ' "
                                "|| speedup, ';') FROM dispatch_regret");
    ck_assert_str_eq(rows, "F16,F32 fast 2.0");
    free(rows);
    rows = raw_text(path,
                    "SELECT count(DISTINCT cell_id) || ' ' || count(*) FROM dispatch_candidates");
    ck_assert_str_eq(rows, "2 3");
    free(rows);
}
END_TEST

/* The schema version from which on the tables are the current ones, as the
 * migrations make them: only views differ from there on, and not before. */
static char *schema_without_views(int version)
{
    sqlite3 *db;
    char err[256] = "";
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    ck_assert_msg(fdx_schema_migrate_to(db, 0, version, err, sizeof err) == SQLITE_OK, "%s", err);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db,
                                        "SELECT group_concat(type || name || tbl_name || "
                                        "coalesce(sql, ''), ';') FROM (SELECT * FROM "
                                        "sqlite_schema WHERE type <> 'view' ORDER BY type, name)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    char *text = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return text;
}

START_TEST(versions_from_the_last_table_change_differ_in_views_alone)
{
    char *current = schema_without_views(fdx_schema_version());
    for (int v = fdx_schema_tables_since(); v < fdx_schema_version(); v++) {
        char *older = schema_without_views(v);
        ck_assert_str_eq(older, current);
        free(older);
    }
    char *before = schema_without_views(fdx_schema_tables_since() - 1);
    ck_assert_str_ne(before, current);
    free(before);
    free(current);
}
END_TEST

/* The text sql gives on the store at path, through SQLite alone, is word
 * followed by a space and version. */
static void raw_text_is(const char *path, const char *sql, const char *word, int version)
{
    char want[64], *got = raw_text(path, sql);
    snprintf(want, sizeof want, "%s %d", word, version);
    ck_assert_str_eq(got, want);
    free(got);
}

/* A store whose views alone are older (an older fdx's) is read as it is, by
 * readers and a dry run, and migrated by a writer's first commit. */
START_TEST(a_store_whose_views_alone_are_older_is_read_as_it_is)
{
    const char *path = strdup(tu_path(tu_dir, "s.db"));
    fdx_store *db = tu_open(path);
    tu_commit_miss(db, "w");
    fdx_store_close(db);
    tu_raw_exec(path,
                "DROP VIEW dispatch_regret; CREATE VIEW dispatch_regret AS SELECT 1 AS older;");
    tu_raw_exec(path, version_pragma(fdx_schema_tables_since()));
    file_bytes before = file_now(path);
    uint64_t misses, dispatches;
    const int flags[] = {FDX_OPEN_READONLY, FDX_OPEN_FOR_READING, FDX_OPEN_AS_IS};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        ck_assert_int_eq(fdx_store_open(path, flags[i], &db), FDX_OK);
        ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
        ck_assert_uint_eq(misses, 1);
        if (flags[i] == FDX_OPEN_AS_IS) { /* a dry run's writes, rolled back */
            begin_and_roll_back(db);
        }
        fdx_store_close(db);
    }
    ck_assert(unchanged(path, before));
    /* a commit through an open as it is keeps its version and journal mode */
    tu_raw_exec(path, "PRAGMA journal_mode = DELETE");
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_AS_IS, &db), FDX_OK);
    tu_commit_miss(db, "as-is");
    fdx_store_close(db);
    raw_text_is(path,
                "SELECT (SELECT journal_mode FROM pragma_journal_mode) || ' ' || "
                "(SELECT user_version FROM pragma_user_version)",
                "delete", fdx_schema_tables_since());
    /* tables of an older version are not read as they are */
    tu_raw_exec(path, version_pragma(fdx_schema_tables_since() - 1));
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_READONLY, &db), FDX_EREADONLY);
    fdx_store_close(db);
    tu_raw_exec(path, version_pragma(fdx_schema_tables_since()));
    /* a writer migrates it in its first write's transaction: one that fails,
     * or has nothing to commit, leaves it as it was (it was migrated at the
     * open, whatever came after) */
    const char *version_of = "SELECT (SELECT count(*) FROM dispatch_regret) || ' ' || "
                             "(SELECT user_version FROM pragma_user_version)";
    db = tu_open(path);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_ingest_buffer(db, "bad", "{bad\n", 5, NULL, NULL), FDX_EDATA);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_set_run_id(db, "none"), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK); /* nothing under a run id */
    raw_text_is(path, version_of, "1", fdx_schema_tables_since());
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);          /* nothing at all, as a merge */
    raw_text_is(path, version_of, "1", fdx_schema_tables_since()); /* of nothing new */
    tu_commit_miss(db, "m");
    fdx_store_close(db);
    raw_text_is(path, version_of, "0", fdx_schema_version());
    /* A name the migrations give a view, taken by an index of the store's
     * own: readers took the store, whose migration then failed. */
    tu_raw_exec(path, "DROP VIEW dispatch_regret; CREATE TABLE mine (a);"
                      "CREATE INDEX Dispatch_Regret ON mine (a);");
    tu_raw_exec(path, version_pragma(fdx_schema_tables_since()));
    for (int writer = 0; writer < 2; writer++) {
        ck_assert_int_eq(fdx_store_open(path, writer ? 0 : FDX_OPEN_READONLY, &db), FDX_ENOTSTORE);
        ck_assert_ptr_nonnull(
            strstr(fdx_store_errmsg(db), "Dispatch_Regret is an index, not a view"));
        fdx_store_close(db);
    }
    free((char *)path);
}
END_TEST

/* What the programs ask before printing: is their standard output the store? */
START_TEST(a_file_descriptor_is_told_from_the_store)
{
    const char *path = strdup(tu_path(tu_dir, "s.db"));
    store_of_one_miss(path, "w");
    const char *link = strdup(tu_path(tu_dir, "link.db"));
    ck_assert_int_eq(symlink(path, link), 0);
    tu_write_file(tu_path(tu_dir, "s.db-wal"), "");
    tu_write_file(tu_path(tu_dir, "other"), "");
    const char *names[] = {"s.db", "s.db-wal", "other"};
    for (int i = 0; i < 3; i++) {
        int fd = open(tu_path(tu_dir, names[i]), O_RDONLY);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fdx_fd_is_store_file(fd, path), i < 2);
        ck_assert_int_eq(fdx_fd_is_store_file(fd, link), i < 2);
        ck_assert_int_eq(fdx_fd_is_store_file(fd, NULL), 0);
        close(fd);
    }
    ck_assert_int_eq(fdx_fd_is_store_file(-1, path), 0);
    ck_assert_int_eq(fdx_fd_is_store_file(0, tu_path(tu_dir, "missing.db")), 0);
    free((char *)path);
    free((char *)link);
}
END_TEST

/* Output directory names mkdir -p must handle: empty, doubled and trailing
 * slashes, and a component that is a file (named in the message). */
START_TEST(export_directory_names)
{
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_store_export(db, "", NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "empty"));
    char path[4200];
    snprintf(path, sizeof path, "%s//a///b/", tu_dir);
    ck_assert_int_eq(fdx_store_export(db, path, NULL), FDX_OK);
    char *misses = tu_read_file(tu_path(tu_dir, "a/b/misses.jsonl"), NULL);
    ck_assert_ptr_nonnull(misses);
    free(misses);
    tu_write_file(tu_path(tu_dir, "file"), "x");
    snprintf(path, sizeof path, "%s/file/sub/", tu_dir);
    ck_assert_int_eq(fdx_store_export(db, path, NULL), FDX_EIO);
    snprintf(path, sizeof path, "%s/file: exists and is not a directory", tu_dir);
    ck_assert_str_eq(fdx_store_errmsg(db), path);
    fdx_store_close(db);
}
END_TEST

/* The entries of a directory, . and .. aside. */
static int entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

START_TEST(export_replaces_files_and_leaves_no_temporaries)
{
    ck_assert_int_eq(ingest_text("a.jsonl", MISS_LINE("1")), FDX_OK);
    free(export_store());
    ck_assert_int_eq(ingest_text("b.jsonl", MISS_LINE("1")), FDX_OK);
    char *out = export_store();
    ck_assert_str_eq(out, MISS_OUT("2"));
    free(out);
    ck_assert_int_eq(entries_in(tu_path(tu_dir, "out")), 2);
}
END_TEST

/* Line i of a numbered file: its length varies, so the writes and their
 * writeback ranges end at no fixed place in a line. */
static size_t numbered_line(uint64_t i, fdx_buf *line)
{
    char text[96];
    int n = snprintf(text, sizeof text, "{\"line\":%llu,\"pad\":\"%.*s\"}\n", (unsigned long long)i,
                     (int)(i * 7919 % 41), "0123456789012345678901234567890123456789");
    fdx_buf_append(line, text, (size_t)n);
    return (size_t)n;
}

/* A file written past several writeback steps has its writeback started up
 * to its last step, and comes out whole, every byte where it was written. */
START_TEST(files_past_the_writeback_step_start_their_writeback)
{
    const char *path = tu_path(tu_dir, "big.jsonl");
    fdx_afile af;
    char err[512] = "";
    ck_assert_msg(fdx_afile_open(&af, path, err, sizeof err) == FDX_OK, "%s", err);
    const uint64_t step = (uint64_t)8 << 20;
    uint64_t lines = 0;
    while (af.written < 3 * step + step / 2) {
        numbered_line(lines++, &af.buf);
        ck_assert_msg(fdx_afile_flush_if_full(&af, err, sizeof err) == FDX_OK, "%s", err);
    }
    ck_assert_uint_ge(af.writing_back, 3 * step);
    ck_assert_uint_lt(af.written - af.writing_back, step);
    ck_assert_msg(fdx_afile_seal(&af, err, sizeof err) == FDX_OK, "%s", err);
    ck_assert_msg(fdx_afile_install(&af, err, sizeof err) == FDX_OK, "%s", err);
    fdx_afile_abort(&af);

    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    fdx_buf want = {0};
    char got[128];
    uint64_t i = 0, differs = UINT64_MAX;
    while (differs == UINT64_MAX && fgets(got, sizeof got, f)) {
        fdx_buf_clear(&want);
        size_t n = numbered_line(i, &want);
        if (strlen(got) != n || memcmp(got, want.data, n) != 0)
            differs = i;
        i++;
    }
    fclose(f);
    fdx_buf_free(&want);
    ck_assert_msg(differs == UINT64_MAX, "line %llu differs", (unsigned long long)differs);
    ck_assert_uint_eq(i, lines);
    ck_assert_int_eq(entries_in(tu_dir), 1);
}
END_TEST

/* One feed to a stream is byte for byte that feed's file; another kind is refused. */
START_TEST(export_kind_writes_one_feed)
{
    ck_assert_int_eq(ingest_text("a.jsonl", MISS_LINE("3")), FDX_OK);
    char *both = export_store();
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    const char *kinds[] = {"misses", "dispatches"};
    for (int k = 0; k < 2; k++) {
        char name[64], file[64];
        snprintf(name, sizeof name, "%s.stream", kinds[k]);
        snprintf(file, sizeof file, "out/%s.jsonl", kinds[k]);
        char *path = strdup(tu_path(tu_dir, name));
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        uint64_t lines = 99;
        ck_assert_int_eq(fdx_store_export_kind(db, kinds[k], f, &lines), FDX_OK);
        fclose(f);
        char *got = tu_read_file(path, NULL), *want = tu_read_file(tu_path(tu_dir, file), NULL);
        ck_assert_str_eq(got, want);
        ck_assert_uint_eq(lines, k == 0 ? 1 : 0);
        free(got);
        free(want);
        free(path);
    }
    ck_assert_int_eq(fdx_store_export_kind(db, "both", stdout, NULL), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "both"));
    fdx_store_close(db);
    free(both);
}
END_TEST

typedef struct progress_log {
    int calls[3]; /* ingest, merge, export */
    uint64_t last[3];
    int other;
} progress_log;

static void log_progress(void *ctx, const char *what, uint64_t done)
{
    progress_log *l = ctx;
    int i = strcmp(what, "ingest") == 0 ? 0 : strcmp(what, "merge") == 0 ? 1 : 2;
    if (i == 2 && strcmp(what, "export") != 0)
        l->other++;
    ck_assert_uint_gt(done, l->last[i]); /* counts only go up */
    l->calls[i]++;
    l->last[i] = done;
}

/* Ingest, merge and export each report through the callback; unset, nothing. */
START_TEST(progress_is_reported_through_the_callback)
{
    const char *path = strdup(tu_path(tu_dir, "many.jsonl"));
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 3000; i++)
        fprintf(f,
                "{\"schema\":2,\"wanted\":\"w%d\",\"fallback\":" IMPL_H(
                    "k", "1") ",\"count\":1,\"hw\":" GPU "}\n",
                i);
    fclose(f);
    progress_log l = {{0}, {0}, 0};
    fdx_store *db = tu_open(tu_path(tu_dir, "p.db"));
    fdx_store_set_progress(db, log_progress, &l);
    ck_assert_int_eq(tu_ingest(db, &path, 1), FDX_OK);
    ck_assert_int_ge(l.calls[0], 3); /* line 1, 1024, 2048 */
    ck_assert_uint_ge(l.last[0], 2048);
    free(tu_export(db, tu_path(tu_dir, "pout")));
    ck_assert_int_ge(l.calls[2], 2);
    fdx_store *dst = tu_open(tu_path(tu_dir, "dst.db"));
    fdx_store_set_progress(dst, log_progress, &l);
    ck_assert_int_eq(fdx_store_begin(dst), FDX_OK);
    ck_assert_int_eq(fdx_store_merge(dst, tu_path(tu_dir, "p.db"), NULL), FDX_OK);
    ck_assert_int_eq(fdx_store_commit(dst, NULL), FDX_OK);
    ck_assert_int_ge(l.calls[1], 2);
    ck_assert_int_eq(l.other, 0);
    int before = l.calls[2];
    fdx_store_set_progress(db, NULL, NULL);
    free(tu_export(db, tu_path(tu_dir, "pout2")));
    ck_assert_int_eq(l.calls[2], before);
    fdx_store_close(dst);
    fdx_store_close(db);
    free((char *)path);
}
END_TEST

typedef struct values {
    char text[512];
} values;

static int collect_value(void *ctx, const char *filter, const char *value)
{
    values *v = ctx;
    size_t n = strlen(v->text);
    snprintf(v->text + n, sizeof v->text - n, "%s=%s;", filter, value);
    return 0;
}

/* Each filter's values, in order, from the cells recorded. */
START_TEST(filter_values_list_what_the_cells_hold)
{
    ck_assert_int_eq(
        ingest_text("a.jsonl", MISS_LINE("1") "{\"schema\":2,\"wanted\":\"v\",\"fallback\":{"
                                              "\"backend\":\"Cpu\",\"op\":\"Gelu\",\"dtypes\":[],"
                                              "\"kernel_source\":\"g\",\"kernel_revision_hash\":2},"
                                              "\"count\":1,\"hw\":" CPU "}\n"),
        FDX_OK);
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    values v = {""};
    ck_assert_int_eq(fdx_store_filter_values(db, collect_value, &v), FDX_OK);
    ck_assert_str_eq(v.text, "cc=8.9;cc=cpu;op=Gelu;op=MatMul;sku=cpu;sku=gpu;source=g;source=k;");
    fdx_store_close(db);
}
END_TEST

/* Creating a store or a rejects file in a directory that does not exist
 * names the directory, as a path that must exist (FDX_ENOENT). */
START_TEST(missing_directory_is_named)
{
    char path[4200], want[4200];
    snprintf(path, sizeof path, "%s/nodir/s.db", tu_dir);
    snprintf(want, sizeof want, "no such directory '%s/nodir'", tu_dir);
    fdx_store *db;
    ck_assert_int_eq(fdx_store_open(path, FDX_OPEN_CREATE, &db), FDX_ENOENT);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), want));
    fdx_store_close(db);
    snprintf(path, sizeof path, "%s/nodir/rejects.jsonl", tu_dir);
    fdx_rejects *rj;
    ck_assert_int_eq(fdx_rejects_open(path, tu_path(tu_dir, "s.db"), NULL, 0, &rj), FDX_ENOENT);
    ck_assert_ptr_nonnull(strstr(fdx_rejects_errmsg(rj), want));
    fdx_rejects_close(rj);
}
END_TEST

/* A URI's password never reaches a message: user:PASSWORD@ and every
 * password= parameter are hidden, the rest stays as given. */
START_TEST(pg_uri_password_is_redacted)
{
    static const char *const cases[][2] = {
        {"postgresql://u:pw@h/db", "postgresql://u:***@h/db"},
        {"postgres://u:p%40w@h:5432/db?sslmode=require",
         "postgres://u:***@h:5432/db?sslmode=require"},
        {"postgresql:///db?host=/run/pg&password=zz&user=u",
         "postgresql:///db?host=/run/pg&password=***&user=u"},
        {"postgresql://u:a@h/db?password=b", "postgresql://u:***@h/db?password=***"},
        {"postgresql://u@h/db?connect_timeout=2", "postgresql://u@h/db?connect_timeout=2"},
        {"postgresql://h1,h2:5433/db", "postgresql://h1,h2:5433/db"},
        {"postgresql:///db?%70assword=x", "postgresql:///db?***"},
        {"postgresql://u:x@y@h/db", "postgresql://u:***@h/db"},
        /* libpq reads these passwords: '?' and '#' do not end them */
        {"postgresql://postgres:Se?kr1t@/t1?host=/tmp&port=5",
         "postgresql://postgres:***@/t1?host=/tmp&port=5"},
        {"postgresql://u:Se#kr1t@h/db", "postgresql://u:***@h/db"},
        {"postgresql://u:a?b#c@h", "postgresql://u:***@h"},
        {"postgresql://h/db?password=ab#cd&sslmode=require",
         "postgresql://h/db?password=***&sslmode=require"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = fdx_pg_redact(cases[i][0]);
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, cases[i][1]);
        free(got);
    }
    ck_assert(fdx_pg_is_uri("postgres://x"));
    ck_assert(fdx_pg_is_uri("postgresql:///x"));
    ck_assert(!fdx_pg_is_uri("postgresql:x"));
    ck_assert(!fdx_pg_is_uri("./postgresql://x"));
}
END_TEST

/* A batch that its entries between lines (the end of one file, the start
 * of the next) took past its byte budget takes no further line. */
START_TEST(batch_past_its_budget_takes_no_line)
{
    fdx_batch *b = fdx_batch_new();
    size_t budget = (size_t)256 << 10;
    char *text = calloc(1, budget);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(fdx_batch_push(b, FDX_E_LINE, text, budget - 10, 1), FDX_OK);
    ck_assert(!fdx_batch_full(b));
    ck_assert_int_eq(fdx_batch_push(b, FDX_E_SOURCE_END, text, 32, 1), FDX_OK);
    ck_assert_int_eq(fdx_batch_push(b, FDX_E_SOURCE_BEGIN, "dispatches.jsonl", 16, 0), FDX_OK);
    ck_assert(fdx_batch_overflows(b, 1));
    ck_assert(fdx_batch_overflows(b, (size_t)1 << 20));
    fdx_batch_free(b);
    free(text);
}
END_TEST

/* A line that would take a batch past its byte budget starts the next
 * batch, so batches stay within it; lines longer than the budget still go
 * (alone), and every line counts once, in order. */
START_TEST(lines_of_any_length_fill_batches)
{
    fdx_batch *b = fdx_batch_new();
    ck_assert_ptr_nonnull(b);
    ck_assert(!fdx_batch_overflows(b, (size_t)4 << 20)); /* an empty batch takes any line */
    ck_assert_int_eq(fdx_batch_push(b, FDX_E_LINE, "x", 1, 1), FDX_OK);
    ck_assert(!fdx_batch_overflows(b, 1000));
    ck_assert(fdx_batch_overflows(b, (size_t)4 << 20));
    fdx_batch_free(b);

    static const size_t lens[] = {100000, 262142, 262143, 262144, 300000, 700000, 10, 262100};
    size_t total = 0;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        total += lens[i] + 400;
    char *feed = malloc(total * 3 + 1000), *p = feed;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        for (int k = 0; k < 3; k++) {
            p += sprintf(p, "{\"schema\":2,\"wanted\":\"w%zu:", i);
            memset(p, 'a' + (char)k, lens[i]);
            p += lens[i];
            p += sprintf(p,
                         "\",\"fallback\":{\"backend\":\"Cuda\",\"op\":\"Op\",\"dtypes\":[],"
                         "\"kernel_source\":\"g\",\"kernel_revision_hash\":1},\"count\":%zu,"
                         "\"hw\":{\"hardware_sku\":\"s\",\"driver_version\":\"d\"}}\n",
                         i + 1);
        }
    }
    const char *path = tu_path(tu_dir, "long.jsonl");
    tu_write_file(path, feed);
    fdx_store *db = tu_open(tu_path(tu_dir, "long.db"));
    ck_assert_int_eq(tu_ingest(db, &path, 1), FDX_OK);
    ck_assert_int_eq(tu_ingest(db, &path, 1), FDX_OK);
    int64_t got[4];
    raw_ints(tu_path(tu_dir, "long.db"),
             "SELECT count(*), sum(count), sum(length(wanted)), "
             "sum(count * CAST(substr(wanted, 2, 1) AS INTEGER)) FROM miss_cell",
             got, 4);
    size_t n = sizeof lens / sizeof lens[0], want_sum = 0, want_len = 0, want_weighted = 0;
    for (size_t i = 0; i < n; i++) {
        want_sum += 2 * 3 * (i + 1);
        want_len += 3 * (lens[i] + 3);
        want_weighted += 2 * 3 * (i + 1) * i;
    }
    ck_assert_int_eq(got[0], (int64_t)(3 * n));
    ck_assert_int_eq(got[1], (int64_t)want_sum);
    ck_assert_int_eq(got[2], (int64_t)want_len);
    ck_assert_int_eq(got[3], (int64_t)want_weighted);
    fdx_store_close(db);
    free(feed);
}
END_TEST

/* One line of a generated feed: mostly good lines of a few hundred cells,
 * and now and then one longer than a block, one too long to take (over
 * max), a blank one, a bad one; some end in CRLF. */
static void feed_line(fdx_buf *b, size_t max, unsigned *seed)
{
    int r = rand_r(seed) % 1000;
    size_t wanted = r < 3 ? 100000 + (size_t)rand_r(seed) % 600000 : r < 4 ? max + 1000 : 0;
    if (r >= 4 && r < 30) {
        fdx_buf_append(b, r % 2 ? "  \r" : "", r % 2 ? 3 : 0);
    } else if (r >= 30 && r < 60) {
        fdx_buf_append(b, "{\"schema\":2,bad}", 16);
    } else {
        char head[256];
        int n = snprintf(head, sizeof head, "{\"schema\":2,\"wanted\":\"w%d", rand_r(seed) % 300);
        fdx_buf_append(b, head, (size_t)n);
        for (size_t i = 0; i < wanted; i++)
            fdx_buf_putc(b, (char)('a' + i % 26));
        n = snprintf(head, sizeof head, "\",\"fallback\":" IMPL_H("k", "1") ",\"count\":%d,",
                     1 + rand_r(seed) % 1000);
        fdx_buf_append(b, head, (size_t)n);
        fdx_buf_append(b, "\"hw\":" GPU "}", sizeof "\"hw\":" GPU "}" - 1);
    }
    if (r % 10 == 5)
        fdx_buf_putc(b, '\r');
}

/* Files are read into blocks that their batches hold instead of copying
 * each line (ingest/slab.h). Lines across the blocks' ends, longer than a
 * block or too long to take, blank, bad, in CRLF, without a last newline,
 * in files from empty to many blocks long, read in one call, count and
 * reject exactly as the same bytes given from memory (which are copied). */
START_TEST(files_read_in_blocks_ingest_as_the_same_bytes_from_memory)
{
    enum { FILES = 40 };
    static const int line_counts[] = {0, 1, 3, 50, 300, 1500};
    const size_t max = 800000;
    unsigned seed = 7;
    char *paths[FILES];
    fdx_buf texts[FILES];
    for (int f = 0; f < FILES; f++) {
        texts[f] = (fdx_buf)FDX_BUF_INIT;
        int lines = line_counts[rand_r(&seed) % 6];
        for (int i = 0; i < lines; i++) {
            feed_line(&texts[f], max, &seed);
            if (i + 1 < lines || rand_r(&seed) % 4)
                fdx_buf_putc(&texts[f], '\n');
        }
        char name[32];
        snprintf(name, sizeof name, "blocks%02d.jsonl", f);
        paths[f] = strdup(tu_path(tu_dir, name));
        FILE *out = fopen(paths[f], "wb");
        ck_assert_ptr_nonnull(out);
        if (texts[f].len)
            ck_assert_uint_eq(fwrite(texts[f].data, 1, texts[f].len, out), texts[f].len);
        ck_assert_int_eq(fclose(out), 0);
    }
    char *rejected[2];
    size_t rejected_len[2];
    fdx_ingest_stats stats[2] = {{0}, {0}};
    char *exported[2];
    for (int from_memory = 0; from_memory < 2; from_memory++) {
        FILE *rejects = open_memstream(&rejected[from_memory], &rejected_len[from_memory]);
        fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
        opts.skip_invalid = 1;
        opts.rejects = rejects;
        opts.max_line_bytes = max;
        opts.threads = 2;
        fdx_store *db = tu_open(tu_path(tu_dir, from_memory ? "memory.db" : "files.db"));
        ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
        if (!from_memory)
            ck_assert_msg(fdx_store_ingest_paths(db, (const char *const *)paths, FILES, &opts,
                                                 &stats[0]) == FDX_OK,
                          "%s", fdx_store_errmsg(db));
        for (int f = 0; from_memory && f < FILES; f++)
            ck_assert_msg(fdx_store_ingest_buffer(db, paths[f], texts[f].data ? texts[f].data : "",
                                                  texts[f].len, &opts, &stats[1]) == FDX_OK,
                          "%s", fdx_store_errmsg(db));
        ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
        exported[from_memory] = tu_export(db, tu_path(tu_dir, from_memory ? "mem_out" : "out"));
        fdx_store_close(db);
        ck_assert_int_eq(fclose(rejects), 0);
    }
    ck_assert_uint_eq(stats[0].lines, stats[1].lines);
    ck_assert_uint_eq(stats[0].records, stats[1].records);
    ck_assert_uint_eq(stats[0].bad_lines, stats[1].bad_lines);
    ck_assert_uint_gt(stats[0].records, 1000);
    ck_assert_uint_gt(stats[0].bad_lines, 10);
    ck_assert_str_eq(exported[0], exported[1]);
    ck_assert_uint_eq(rejected_len[0], rejected_len[1]);
    ck_assert(memcmp(rejected[0], rejected[1], rejected_len[0]) == 0);
    for (int k = 0; k < 2; k++) {
        free(rejected[k]);
        free(exported[k]);
    }
    for (int f = 0; f < FILES; f++) {
        free(paths[f]);
        fdx_buf_free(&texts[f]);
    }
}
END_TEST

/* A block grown for one long line is not the size of every block after it:
 * read into blocks that stay held (as batches hold them), a feed of one
 * 900 KB line and then 4 MB of short ones takes its later blocks at the
 * usual size. */
START_TEST(blocks_after_a_long_line_are_of_the_usual_size)
{
    const char *path = tu_path(tu_dir, "long_first.jsonl");
    FILE *out = fopen(path, "wb");
    ck_assert_ptr_nonnull(out);
    for (int i = 0; i < 900000; i++)
        fputc('x', out);
    fputc('\n', out);
    for (int i = 0; i < 40000; i++)
        fprintf(out, "%0100d\n", i);
    ck_assert_int_eq(fclose(out), 0);
    fdx_slab_pool *pool = fdx_slab_pool_new();
    fdx_linereader lr;
    ck_assert_int_eq(fdx_lr_open(&lr, path, 1 << 20), FDX_OK);
    fdx_lr_read_into(&lr, pool);
    fdx_slab *held[256];
    size_t n_held = 0, large = 0, lines = 0;
    const char *p;
    size_t n;
    int r;
    while ((r = fdx_lr_next(&lr, &p, &n)) == FDX_LR_LINE) {
        lines++;
        if (n_held && held[n_held - 1] == lr.slab)
            continue;
        ck_assert_uint_lt(n_held, 256);
        fdx_slab_hold(lr.slab);
        held[n_held++] = lr.slab;
        large += lr.slab->cap > FDX_SLAB_BYTES;
    }
    ck_assert_int_eq(r, FDX_LR_EOF);
    ck_assert_uint_eq(lines, 40001);
    ck_assert_uint_le(large, 1);
    fdx_lr_close(&lr);
    for (size_t i = 0; i < n_held; i++)
        fdx_slab_let_go(held[i]);
    fdx_slab_pool_free(pool);
}
END_TEST

/* With threads, a line too long to take goes to the rejects file after the
 * bad lines before it, even when the batch that holds them was handed over
 * just before (and the batch being filled is empty). */
START_TEST(rejects_stay_in_order_around_a_long_line)
{
    fdx_buf feed = FDX_BUF_INIT;
    for (int i = 0; i < 2000; i++)
        fdx_buf_putc(&feed, 'a');
    fdx_buf_putc(&feed, '\n');
    for (int i = 0; i < 1023; i++)
        fdx_buf_append(&feed, "{}\n", 3);
    for (int i = 0; i < 2000; i++)
        fdx_buf_putc(&feed, 'b');
    fdx_buf_putc(&feed, '\n');
    fdx_buf_putc(&feed, '\0');
    const char *path = tu_path(tu_dir, "order.jsonl");
    tu_write_file(path, feed.data);
    char *got = NULL;
    size_t got_len = 0;
    FILE *rejects = open_memstream(&got, &got_len);
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.skip_invalid = 1;
    opts.rejects = rejects;
    opts.max_line_bytes = 1000;
    opts.threads = 2;
    fdx_store *db = tu_open(tu_path(tu_dir, "order.db"));
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_msg(fdx_store_ingest_path(db, path, &opts, NULL) == FDX_OK, "%s",
                  fdx_store_errmsg(db));
    ck_assert_int_eq(fdx_store_commit(db, NULL), FDX_OK);
    fdx_store_close(db);
    ck_assert_int_eq(fclose(rejects), 0);
    ck_assert_uint_eq(got_len, feed.len - 1);
    ck_assert(memcmp(got, feed.data, got_len) == 0);
    free(got);
    fdx_buf_free(&feed);
}
END_TEST

/* libpq and what it brings (about 6 MiB resident) are mapped when a
 * PostgreSQL store is first opened, not by every process that links fdx. */
START_TEST(libpq_is_loaded_at_the_first_postgresql_store)
{
    const char *path = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(path);
    const char *feed = tu_data("basic/input/run_0000");
    ck_assert_int_eq(tu_ingest(db, &feed, 1), FDX_OK);
    free(tu_export(db, tu_path(tu_dir, "out")));
    fdx_store_close(db);
    ck_assert_msg(!dlopen("libpq.so.5", RTLD_LAZY | RTLD_NOLOAD), "libpq mapped by a SQLite store");

    ck_assert_int_eq(fdx_store_open("postgresql://u:secret@/db?host=/nonexistent-fdx-dir", 0, &db),
                     FDX_EIO);
    ck_assert_ptr_nonnull(strstr(fdx_store_errmsg(db), "postgresql://u:***@/db"));
    ck_assert_ptr_null(strstr(fdx_store_errmsg(db), "secret"));
    fdx_store_close(db);
    void *lib = dlopen("libpq.so.5", RTLD_LAZY | RTLD_NOLOAD);
    ck_assert_msg(lib != NULL, "libpq not loaded for a postgresql:// store");
    dlclose(lib);
}
END_TEST

Suite *store_suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_add_checked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, golden_vectors, 0, (int)(sizeof golden / sizeof golden[0]));
    tcase_add_test(tc, unkeyed_and_cpu_cells_aggregate_across_ingests);
    tcase_add_test(tc, new_cells_are_written_alike_in_groups);
    tcase_add_test(tc, new_cells_are_written_without_statement_journals);
    tcase_add_test(tc, all_or_nothing_failure_leaves_only_a_rollback);
    tcase_add_test(tc, a_path_ended_twice_breaks_the_transaction);
    tcase_add_test(tc, all_or_nothing_holds_more_cells_in_the_same_budget);
    tcase_add_test(tc, options_of_version_1_still_work);
    tcase_add_test(tc, pg_uri_password_is_redacted);
    tcase_add_test(tc, libpq_is_loaded_at_the_first_postgresql_store);
    tcase_add_test(tc, lines_of_any_length_fill_batches);
    tcase_add_test(tc, files_read_in_blocks_ingest_as_the_same_bytes_from_memory);
    tcase_add_test(tc, blocks_after_a_long_line_are_of_the_usual_size);
    tcase_add_test(tc, rejects_stay_in_order_around_a_long_line);
    tcase_add_test(tc, batch_past_its_budget_takes_no_line);
    tcase_add_test(tc, empty_structure_key_differs_from_unkeyed);
    tcase_add_test(tc, new_stores_have_8_kib_pages_and_older_ones_keep_theirs);
    tcase_add_test(tc, counts_saturate_within_one_ingest);
    tcase_add_test(tc, counts_saturate_across_ingests);
    tcase_add_test(tc, zero_count_counts_once);
    tcase_add_test(tc, revision_hashes_keep_u64_and_sort_unsigned);
    tcase_add_test(tc, latest_non_empty_candidates_win_across_ingests);
    tcase_add_test(tc, reopened_store_accumulates);
    tcase_add_test(tc, a_forked_child_cannot_use_its_parents_handle);
    tcase_add_test(tc, a_child_forked_in_a_transaction_is_told_it_cannot_write);
    tcase_add_test(tc, a_child_forked_beside_a_thread_in_the_library_can_close);
    tcase_add_test(tc, a_store_its_creator_removed_is_made_anew);
    tcase_add_loop_test(tc, bad_line_leaves_store_unchanged, 0,
                        (int)(sizeof bad_lines / sizeof bad_lines[0]));
    tcase_add_test(tc, errors_name_file_and_line);
    tcase_add_test(tc, failed_path_is_undone_alone);
    tcase_add_test(tc, failed_long_path_is_named);
    tcase_add_test(tc, failed_spilling_path_keeps_earlier_records);
    tcase_add_test(tc, an_ingest_runs_on_the_calling_thread_when_threads_cannot_start);
    tcase_add_test(tc, paths_in_one_call_fail_alone);
    tcase_add_test(tc, repeated_lines_are_still_checked);
#if defined(__linux__) && defined(SCHED_BATCH)
    tcase_add_test(tc, decoding_threads_do_not_preempt_the_caller);
#endif
    tcase_add_test(tc, repeated_candidate_lines_are_still_checked);
    tcase_add_test(tc, over_long_line_is_an_error);
    tcase_add_test(tc, records_need_a_transaction_and_valid_text);
    tcase_add_test(tc, many_distinct_cells_spill_and_stay_exact);
    tcase_add_test(tc, cells_kept_aside_hold_no_slack);
    tcase_add_test(tc, pending_reuses_its_arrays_within_the_budget);
    tcase_add_test(tc, pending_spills_sooner_by_what_is_lent_to_the_memos);
    tcase_add_test(tc, a_new_stores_history_rows_do_not_wait_for_all_its_cells);
    tcase_add_test(tc, a_copys_relabelling_keeps_a_small_temp_cache);
    tcase_add_test(tc, a_write_that_fails_partway_leaves_only_a_rollback);
    tcase_add_test(tc, a_transaction_sqlite_rolled_back_is_not_written_after);
    tcase_add_test(tc, a_text_longer_than_sqlite_stores_fails_its_commit_saying_so);
    tcase_add_test(tc, a_prune_that_fails_partway_leaves_only_a_rollback);
    tcase_add_test(tc, a_merge_of_many_runs_reads_records_larger_than_its_share);
    tcase_add_test(tc, added_cells_count_once_across_spills);
    tcase_add_test(tc, updated_cells_count_once_across_spills);
    tcase_add_test(tc, failed_ingest_restores_cells_in_memory);
    tcase_add_test(tc, failed_spilling_ingest_restores_cells);
    tcase_add_test(tc, spilled_runs_keep_the_newest_candidates);
    tcase_add_test(tc, spill_that_cannot_be_written_fails_cleanly);
    tcase_add_test(tc, spill_goes_to_a_long_tmpdir);
    tcase_add_test(tc, path_stopped_by_a_failed_spill_is_undone);
    tcase_add_test(tc, spill_cut_short_gives_its_space_back);
    tcase_add_test(tc, cells_of_an_undone_ingest_count_when_written_again);
    tcase_add_test(tc, options_of_an_unknown_version_are_refused);
    tcase_add_test(tc, already_merged_is_a_notice_not_an_error);
    tcase_add_test(tc, newer_schema_is_refused);
    tcase_add_test(tc, a_handle_whose_open_failed_only_closes);
    tcase_add_test(tc, a_forked_child_leaves_its_parents_rejects_file);
    tcase_add_test(tc, a_long_path_leaves_the_reason_in_the_message);
    tcase_add_test(tc, a_callback_cannot_call_into_its_handle);
    tcase_add_test(tc, an_empty_file_with_a_wal_is_refused_untouched);
    tcase_add_test(tc, crafted_statistics_do_not_steer_the_readers_plans);
    tcase_add_test(tc, older_schema_is_migrated);
    tcase_add_test(tc, schema_3_identity_is_migrated);
    tcase_add_test(tc, negative_schema_version_is_refused);
    tcase_add_test(tc, older_store_migrating_to_invalid_rows_is_refused);
    tcase_add_test(tc, export_queries_need_no_sort);
    tcase_add_test(tc, read_only_open_never_writes);
    tcase_add_test(tc, a_store_turned_to_wal_under_a_reader_that_cannot_follow);
    tcase_add_test(tc, missing_store_is_not_created_without_create);
    tcase_add_test(tc, foreign_files_are_refused);
    tcase_add_test(tc, empty_file_becomes_a_store);
    tcase_add_test(tc, reading_changes_nothing);
    tcase_add_test(tc, foreign_schema_objects_are_refused);
    tcase_add_test(tc, the_schema_image_is_what_the_migrations_make);
    tcase_add_test(tc, an_older_store_is_checked_before_it_is_migrated);
    tcase_add_test(tc, a_store_unlike_the_image_is_judged_by_the_reference);
    tcase_add_test(tc, a_new_store_is_what_the_migrations_make);
    tcase_add_test(tc, failed_first_transaction_removes_the_new_store);
    tcase_add_test(tc, failed_first_transaction_leaves_an_empty_file_empty);
    tcase_add_test(tc, commit_into_a_removed_store_fails);
    tcase_add_test(tc, a_store_made_again_after_it_went_is_removed_by_its_maker);
    tcase_add_test(tc, a_failed_new_store_made_through_a_symlink_removes_its_target);
    tcase_add_test(tc, new_store_is_wal_after_its_first_commit);
    tcase_add_test(tc, first_commit_into_a_new_store_waits_for_its_readers);
    tcase_add_test(tc, new_store_becomes_wal_at_a_later_commit);
    tcase_add_test(tc, writer_opening_a_new_store_in_its_first_transaction_says_it_is_locked);
    tcase_add_test(tc, export_needs_a_directory);
    tcase_add_test(tc, export_directory_names);
    tcase_add_test(tc, export_replaces_files_and_leaves_no_temporaries);
    tcase_add_test(tc, files_past_the_writeback_step_start_their_writeback);
    tcase_add_test(tc, export_kind_writes_one_feed);
    tcase_add_test(tc, progress_is_reported_through_the_callback);
    tcase_add_test(tc, filter_values_list_what_the_cells_hold);
    tcase_add_test(tc, missing_directory_is_named);
    tcase_add_test(tc, outputs_never_replace_the_store);
    tcase_add_test(tc, outputs_never_replace_another_store);
    tcase_add_test(tc, a_file_descriptor_is_told_from_the_store);
    tcase_add_test(tc, a_stored_count_below_one_is_not_summed);
    tcase_add_test(tc, a_run_id_committed_again_is_a_no_op);
    tcase_add_test(tc, a_writer_beside_one_that_empties_the_file_makes_the_store_anew);
    tcase_add_test(tc, a_removed_files_handle_leaves_the_new_stores_journal_alone);
    tcase_add_test(tc, a_moved_files_connection_leaves_the_new_stores_wal_alone);
    tcase_add_test(tc, a_store_another_writer_switched_to_wal_stays_under_its_reader);
    tcase_add_test(tc, a_used_store_stays_in_wal_mode_beside_a_failed_creator);
    tcase_add_test(tc, a_path_of_a_store_open_here_is_refused_unopened);
    tcase_add_test(tc, a_writer_opened_read_only_by_a_race_opens_again);
    tcase_add_test(tc, regret_takes_each_cell_by_its_id);
    tcase_add_test(tc, versions_from_the_last_table_change_differ_in_views_alone);
    tcase_add_test(tc, a_store_whose_views_alone_are_older_is_read_as_it_is);
    tcase_add_test(tc, an_open_as_it_is_makes_and_migrates_nothing);
    tcase_add_test(tc, misuse_of_handles_and_pointers_is_refused);
    tcase_add_test(tc, a_backfill_writing_a_cell_twice_keeps_a_later_list);
    suite_add_tcase(s, tc);
    return s;
}
