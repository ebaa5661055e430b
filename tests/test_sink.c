/* The in-process sink: the reference tests on it, the golden vectors through
 * it, draining into a store, allocation-free recording, and threads. */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec/decode.h"
#include "common/same_str.h"
#include "ref_records.h"
#include "test_util.h"

/* Allocation counting (the test links with --wrap for these). */
void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_calloc(size_t n, size_t m);
static __thread long allocations;
void *__wrap_malloc(size_t n)
{
    allocations++;
    return __real_malloc(n);
}
void *__wrap_realloc(void *p, size_t n)
{
    allocations++;
    return __real_realloc(p, n);
}
void *__wrap_calloc(size_t n, size_t m)
{
    allocations++;
    return __real_calloc(n, m);
}

static fdx_sink *sink;

static void setup(void)
{
    tu_dir_setup();
    sink = fdx_sink_new();
    ck_assert_ptr_nonnull(sink);
}

static void teardown(void)
{
    fdx_sink_free(sink);
    tu_dir_teardown();
}

/* ---- the reference's tests ---- */

START_TEST(generic_only_cell_emits_one_aggregated_miss_record)
{
    fdx_miss m = ref_miss("matmul:innerdiv16:vec8:f16", "baracuda-generic-strided");
    for (int i = 0; i < 3; i++)
        fdx_sink_record_miss(sink, &m);
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), 1);
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    ck_assert_uint_eq(r->n_misses, 1);
    ck_assert_str_eq(r->misses[0].wanted, "matmul:innerdiv16:vec8:f16");
    ck_assert_str_eq(r->misses[0].fallback.kernel_source, "baracuda-generic-strided");
    ck_assert_uint_eq(r->misses[0].fallback.n_dtypes, 3);
    ck_assert_str_eq(r->misses[0].fallback.dtypes[2], "F16");
    ck_assert_uint_eq(r->misses[0].fallback.kernel_revision_hash, 0xabc);
    ck_assert_uint_eq(r->misses[0].count, 3);
    ck_assert_int_eq(r->misses[0].hw.has_compute_capability, 0);
    ck_assert_str_eq(r->misses[0].hw.hardware_sku, ref_cpu_hw().hardware_sku);
    fdx_records_free(r);
}
END_TEST

START_TEST(distinct_fallbacks_are_distinct_cells)
{
    fdx_miss a = ref_miss("matmul:k", "baracuda-generic-strided");
    fdx_miss b = ref_miss("matmul:k", "portable-cpu-strided");
    fdx_sink_record_miss(sink, &a);
    fdx_sink_record_miss(sink, &b);
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), 2);
}
END_TEST

START_TEST(flush_writes_valid_jsonl_that_round_trips)
{
    fdx_miss m = ref_miss("matmul:innerdiv16:f16", "baracuda-generic-strided");
    fdx_sink_record_miss(sink, &m);
    size_t n = 0;
    const char *path = tu_path(tu_dir, "telemetry.jsonl");
    ck_assert_int_eq(fdx_sink_flush_misses(sink, path, &n), FDX_OK);
    ck_assert_uint_eq(n, 1);
    size_t len;
    char *body = tu_read_file(path, &len);
    ck_assert_ptr_eq(strchr(body, '\n'), body + len - 1);
    ck_assert_ptr_null(strstr(body, "est_speedup"));
    ck_assert_ptr_null(strstr(body, "compute_capability"));
    fdx_decoder *dec = fdx_decoder_new(0);
    fdx_record rec;
    char err[256];
    ck_assert_int_eq(fdx_decode_line(dec, body, len - 1, &rec, err, sizeof err), FDX_OK);
    ck_assert_str_eq(rec.miss.wanted, "matmul:innerdiv16:f16");
    ck_assert_str_eq(rec.miss.fallback.kernel_source, "baracuda-generic-strided");
    ck_assert_int_eq(rec.miss.hw.has_compute_capability, 0);
    fdx_decoder_free(dec);
    free(body);
}
END_TEST

/* Each flush, of misses or of dispatches alone, counts what the record
 * cache still holds. */
START_TEST(single_flushes_count_held_records)
{
    fdx_miss m = ref_miss("w", "generic");
    fdx_dispatch d = ref_dispatch("k", "a", NULL, 0);
    for (int i = 0; i < 3; i++) {
        fdx_sink_record_miss(sink, &m);
        fdx_sink_record_dispatch(sink, &d);
    }
    const char *misses = tu_path(tu_dir, "m.jsonl");
    ck_assert_int_eq(fdx_sink_flush_misses(sink, misses, NULL), FDX_OK);
    char *body = tu_read_file(misses, NULL);
    ck_assert_ptr_nonnull(strstr(body, "\"count\":3,"));
    free(body);
    fdx_sink_record_dispatch(sink, &d);
    const char *dispatches = tu_path(tu_dir, "d.jsonl");
    ck_assert_int_eq(fdx_sink_flush_dispatches(sink, dispatches, NULL), FDX_OK);
    body = tu_read_file(dispatches, NULL);
    ck_assert_ptr_nonnull(strstr(body, "\"count\":4,"));
    free(body);
}
END_TEST

START_TEST(empty_sink_flushes_empty_file)
{
    ck_assert(fdx_sink_is_empty(sink));
    size_t n = 99, len = 99;
    const char *path = tu_path(tu_dir, "empty.jsonl");
    ck_assert_int_eq(fdx_sink_flush_misses(sink, path, &n), FDX_OK);
    ck_assert_uint_eq(n, 0);
    free(tu_read_file(path, &len));
    ck_assert_uint_eq(len, 0);
}
END_TEST

START_TEST(dispatch_records_aggregate_by_cell_and_keep_candidates)
{
    fdx_candidate c = {ref_impl("baracuda"), 1, 41230};
    fdx_dispatch detailed = ref_dispatch("mm:innerdiv16", "baracuda", &c, 1);
    fdx_dispatch coarse = ref_dispatch("mm:innerdiv16", "baracuda", NULL, 0);
    fdx_sink_record_dispatch(sink, &detailed);
    fdx_sink_record_dispatch(sink, &coarse);
    ck_assert_uint_eq(fdx_sink_dispatch_cell_count(sink), 1);
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    ck_assert_uint_eq(r->n_dispatches, 1);
    ck_assert_uint_eq(r->dispatches[0].count, 2);
    ck_assert_uint_eq(r->dispatches[0].n_candidates, 1);
    ck_assert_str_eq(r->dispatches[0].candidates[0].impl_id.kernel_source, "baracuda");
    ck_assert_int_eq(r->dispatches[0].candidates[0].has_latency, 1);
    ck_assert_uint_eq(r->dispatches[0].candidates[0].latency_ns, 41230);
    fdx_records_free(r);
}
END_TEST

START_TEST(distinct_chosen_are_distinct_dispatch_cells)
{
    fdx_dispatch a = ref_dispatch("mm", "baracuda", NULL, 0);
    fdx_dispatch b = ref_dispatch("mm", "cublas", NULL, 0);
    fdx_sink_record_dispatch(sink, &a);
    fdx_sink_record_dispatch(sink, &b);
    ck_assert_uint_eq(fdx_sink_dispatch_cell_count(sink), 2);
}
END_TEST

START_TEST(flush_all_writes_separate_files)
{
    fdx_miss m = ref_miss("matmul:innerdiv16:f16", "baracuda-generic-strided");
    fdx_candidate c = {ref_impl("baracuda"), 1, 41230};
    fdx_dispatch d = ref_dispatch("mm:innerdiv16", "baracuda", &c, 1);
    fdx_sink_record_miss(sink, &m);
    fdx_sink_record_dispatch(sink, &d);
    size_t nm = 0, nd = 0;
    char out[4096];
    snprintf(out, sizeof out, "%s/run/0001", tu_dir);
    ck_assert_int_eq(fdx_sink_flush_all(sink, out, &nm, &nd), FDX_OK);
    ck_assert_uint_eq(nm, 1);
    ck_assert_uint_eq(nd, 1);
    char *mb = tu_read_file(tu_path(out, "misses.jsonl"), NULL);
    char *db = tu_read_file(tu_path(out, "dispatches.jsonl"), NULL);
    ck_assert_ptr_nonnull(strstr(mb, "\"wanted\":\"matmul:innerdiv16:f16\""));
    ck_assert_ptr_nonnull(strstr(db, "\"latency_ns\":41230"));
    ck_assert_ptr_null(strstr(db, "\"wanted\""));
    free(mb);
    free(db);
}
END_TEST

/* A target that cannot be replaced fails the flush before either file is:
 * the previous misses.jsonl stays beside the directory in dispatches' place. */
START_TEST(flush_all_replaces_both_files_or_neither)
{
    fdx_miss m = ref_miss("matmul:innerdiv16:f16", "baracuda-generic-strided");
    fdx_sink_record_miss(sink, &m);
    char *out = strdup(tu_path(tu_dir, "pair"));
    ck_assert_int_eq(mkdir(out, 0777), 0);
    tu_write_file(tu_path(out, "misses.jsonl"), "previous\n");
    ck_assert_int_eq(mkdir(tu_path(out, "dispatches.jsonl"), 0777), 0);
    ck_assert_int_eq(fdx_sink_flush_all(sink, out, NULL, NULL), FDX_EIO);
    ck_assert_ptr_nonnull(strstr(fdx_sink_errmsg(sink), "dispatches.jsonl"));
    char *mb = tu_read_file(tu_path(out, "misses.jsonl"), NULL);
    ck_assert_str_eq(mb, "previous\n");
    free(mb);
    DIR *d = opendir(out);
    ck_assert_ptr_nonnull(d);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d));)
        entries += e->d_name[0] != '.' || strstr(e->d_name, ".fdx-tmp.") != NULL;
    closedir(d);
    ck_assert_int_eq(entries, 2);
    ck_assert_int_eq(fdx_sink_flush_all(sink, "", NULL, NULL), FDX_EMISUSE);
    free(out);
}
END_TEST

/* ---- the golden vectors through the sink ---- */

static void record_file(fdx_sink *s, fdx_decoder *dec, const char *path)
{
    char *text = tu_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    for (char *line = text, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        fdx_record rec;
        char err[256];
        ck_assert_int_eq(fdx_decode_line(dec, line, (size_t)(nl - line), &rec, err, sizeof err),
                         FDX_OK);
        if (rec.kind == FDX_KIND_MISS)
            fdx_sink_record_miss(s, &rec.miss);
        else
            fdx_sink_record_dispatch(s, &rec.dispatch);
    }
    free(text);
}

static void golden(const char *vector, int runs)
{
    fdx_decoder *dec = fdx_decoder_new(0);
    char rel[256];
    for (int r = 0; r < runs; r++)
        for (int k = 0; k < 2; k++) {
            snprintf(rel, sizeof rel, "%s/input/run_%04d/%s", vector, r,
                     k ? "dispatches.jsonl" : "misses.jsonl");
            record_file(sink, dec, tu_data(rel));
        }
    fdx_decoder_free(dec);
    char *out = strdup(tu_path(tu_dir, "out"));
    ck_assert_int_eq(fdx_sink_flush_all(sink, out, NULL, NULL), FDX_OK);
    for (int k = 0; k < 2; k++) {
        const char *name = k ? "dispatches.jsonl" : "misses.jsonl";
        snprintf(rel, sizeof rel, "%s/expected/%s", vector, name);
        char *want = tu_read_file(tu_data(rel), NULL);
        char *got = tu_read_file(tu_path(out, name), NULL);
        ck_assert_str_eq(got, want);
        free(want);
        free(got);
    }
    /* Draining into a store gives the same export. */
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, db, NULL), FDX_OK);
    ck_assert(fdx_sink_is_empty(sink));
    char *exported = tu_export(db, tu_path(tu_dir, "export"));
    char *m = tu_read_file(tu_path(out, "misses.jsonl"), NULL);
    char *d = tu_read_file(tu_path(out, "dispatches.jsonl"), NULL);
    char *flushed = malloc(strlen(m) + strlen(d) + 4);
    sprintf(flushed, "%s--\n%s", m, d);
    ck_assert_str_eq(exported, flushed);
    fdx_store_close(db);
    free(exported);
    free(flushed);
    free(m);
    free(d);
    free(out);
}

START_TEST(golden_basic)
{
    golden("basic", 2);
}
END_TEST
START_TEST(golden_nasty)
{
    golden("nasty", 3);
}
END_TEST

START_TEST(drain_counts_once_and_refuses_an_open_transaction)
{
    fdx_miss m = ref_miss("w", "generic");
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    fdx_sink_record_miss(sink, &m);
    fdx_sink_record_miss(sink, &m);
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, db, NULL), FDX_EMISUSE);
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), 1);
    ck_assert_int_eq(fdx_store_rollback(db), FDX_OK);
    fdx_commit_stats cs;
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added, 1);
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_added + cs.cells_updated, 0);
    fdx_sink_record_miss(sink, &m);
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, db, &cs), FDX_OK);
    ck_assert_uint_eq(cs.cells_updated, 1);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    ck_assert_ptr_nonnull(strstr(out, "\"count\":3,"));
    free(out);
    fdx_store_close(db);
}
END_TEST

/* A drain that fails says what the store said, whole: a store's message
 * names its path, and the sink kept 512 bytes of it. */
START_TEST(a_failed_drain_keeps_the_stores_whole_message)
{
    char path[600];
    int n = snprintf(path, sizeof path, "%s", tu_dir);
    while (n < 480) { /* SQLite opens paths up to 504 bytes */
        n += snprintf(path + n, sizeof path - (size_t)n, "/%0*d", 480 - n < 200 ? 480 - n : 200, 0);
        ck_assert_int_eq(mkdir(path, 0700), 0);
    }
    snprintf(path + n, sizeof path - (size_t)n, "/s.db");
    fdx_store *db = tu_open(path);
    tu_commit_miss(db, "w");
    fdx_store_close(db);
    tu_raw_exec(path, "PRAGMA ignore_check_constraints = 1; UPDATE miss_cell SET count = -5");
    const char *dt[] = {"F16"}; /* the cell tu_commit_miss records */
    fdx_miss m = {"w", {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "cpu", "n/a"}};
    ck_assert_int_eq(fdx_sink_record_miss(sink, &m), FDX_OK);
    db = tu_open(path);
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, db, NULL), FDX_EDATA);
    ck_assert_uint_gt(strlen(fdx_store_errmsg(db)), 512);
    ck_assert_str_eq(fdx_sink_errmsg(sink), fdx_store_errmsg(db));
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), 1);
    fdx_store_close(db);
}
END_TEST

START_TEST(bad_records_are_dropped_and_counted)
{
    fdx_miss m = ref_miss("bad\xff", "generic");
    ck_assert_int_eq(fdx_sink_record_miss(sink, &m), FDX_EDATA);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 1);
    ck_assert_ptr_nonnull(strstr(fdx_sink_errmsg(sink), "wanted: invalid UTF-8"));
    ck_assert(fdx_sink_is_empty(sink));
    m.wanted = "ok";
    m.hw.hardware_sku = NULL;
    ck_assert_int_eq(fdx_sink_record_miss(sink, &m), FDX_EDATA);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 2);
    ck_assert_int_eq(fdx_sink_record_miss(sink, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_record_dispatch(sink, NULL), FDX_EMISUSE);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 4);
    ck_assert(fdx_sink_is_empty(sink));
    fdx_dispatch d = ref_dispatch("k\xc3", "generic", NULL, 0);
    ck_assert_int_eq(fdx_sink_record_dispatch(sink, &d), FDX_EDATA);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 5);
    m.hw.hardware_sku = "cpu";
    d.structure_key = "k";
    ck_assert_int_eq(fdx_sink_record_miss(sink, &m), FDX_OK);
    ck_assert_int_eq(fdx_sink_record_dispatch(sink, &d), FDX_OK);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 5);
}
END_TEST

/* A NULL sink (fdx_sink_new's answer when memory runs out), path, directory
 * or store is refused, not followed (each of these crashed). */
START_TEST(null_handles_and_paths_are_refused)
{
    fdx_miss m = ref_miss("w", "generic");
    fdx_dispatch d = ref_dispatch("k", "generic", NULL, 0);
    fdx_sink_cell cell = 0;
    fdx_records *records = NULL;
    size_t a = 7, b = 7;
    ck_assert_int_eq(fdx_sink_record_miss(NULL, &m), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_record_dispatch(NULL, &d), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_record_miss_cell(NULL, &m, &cell), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_record_dispatch_cell(NULL, &d, &cell), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_add(NULL, cell, 1), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_records(NULL, &records), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_flush_misses(NULL, tu_path(tu_dir, "m.jsonl"), &a), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_flush_all(NULL, tu_dir, &a, &b), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_drain_to_store(NULL, NULL, NULL), FDX_EMISUSE);
    ck_assert_uint_eq(fdx_sink_miss_cell_count(NULL) + fdx_sink_dispatch_cell_count(NULL), 0);
    ck_assert(fdx_sink_is_empty(NULL));
    ck_assert_uint_eq(fdx_sink_dropped(NULL), 0);

    ck_assert_int_eq(fdx_sink_record_miss(sink, &m), FDX_OK);
    ck_assert_int_eq(fdx_sink_flush_misses(sink, NULL, &a), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_flush_dispatches(sink, "", &a), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_flush_all(sink, NULL, &a, &b), FDX_EMISUSE);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "no path given to flush to");
    ck_assert_int_eq(fdx_sink_records(sink, NULL), FDX_EMISUSE);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "no place given for the records");
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, NULL, NULL), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_drain_to_store_at(sink, NULL, 0, NULL), FDX_EMISUSE);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "no store given to drain into");
    /* a store's file is not a feed to flush over: the rename would destroy it */
    const char *store = tu_path(tu_dir, "s.db");
    fdx_store *db = tu_open(store);
    tu_commit_miss(db, "kept");
    fdx_store_close(db);
    ck_assert_int_eq(fdx_sink_flush_misses(sink, store, &a), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_sink_errmsg(sink), "is an SQLite database"));
    /* nor its -wal (committed transactions), -shm or -journal: by their first
     * bytes, or by their names beside the store even when empty */
    db = tu_open(store);
    tu_commit_miss(db, "in the wal");
    char part[4096];
    const char *parts[] = {"-wal", "-shm", "-journal"};
    for (int i = 0; i < 3; i++) {
        snprintf(part, sizeof part, "%s%s", store, parts[i]);
        if (i == 2)
            tu_write_file(part, "");
        ck_assert_int_eq(fdx_sink_flush_misses(sink, part, &a), FDX_EMISUSE);
        ck_assert_ptr_nonnull(strstr(fdx_sink_errmsg(sink), "-wal, -shm or -journal"));
    }
    unlink(part);
    snprintf(part, sizeof part, "%s", tu_path(tu_dir, "copied-journal"));
    tu_write_file(part, "\xd9\xd5\x05\xf9\x20\xa1\x63\xd7 a hot journal elsewhere");
    ck_assert_int_eq(fdx_sink_flush_misses(sink, part, &a), FDX_EMISUSE);
    fdx_store_close(db);
    unlink(tu_path(tu_dir, "copied-journal"));
    /* a FIFO beside the path is not opened to be told (the open would wait) */
    ck_assert_int_eq(mkfifo(tu_path(tu_dir, "fifo"), 0600), 0);
    size_t written;
    ck_assert_int_eq(fdx_sink_flush_misses(sink, tu_path(tu_dir, "fifo-wal"), &written), FDX_OK);
    unlink(tu_path(tu_dir, "fifo-wal"));
    unlink(tu_path(tu_dir, "fifo"));
    db = tu_open(store);
    uint64_t misses, dispatches;
    ck_assert_int_eq(fdx_store_cell_counts(db, &misses, &dispatches), FDX_OK);
    ck_assert_uint_eq(misses, 2); /* the commit the -wal held too */
    fdx_store_close(db);
    ck_assert_uint_eq(a + b, 14);                         /* no count set by a refusal */
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), 1); /* and the sink kept its cell */
    ck_assert_uint_eq(fdx_sink_dropped(sink), 0);
}
END_TEST

/* Refused records are explained field by field, a list's items by index. */
START_TEST(refusals_name_the_field)
{
    static const char *const bad_dtypes[] = {"F16", "F1\xc3"};
    fdx_miss m = ref_miss("w\xe2\x82", "generic");
    fdx_sink_record_miss(sink, &m);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "wanted: invalid UTF-8 at byte 1");
    m = ref_miss("w", "generic");
    m.fallback.dtypes = bad_dtypes;
    m.fallback.n_dtypes = 2;
    fdx_sink_record_miss(sink, &m);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "fallback.dtypes[1]: invalid UTF-8 at byte 2");
    m.fallback.dtypes = NULL;
    fdx_sink_record_miss(sink, &m);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "fallback.dtypes: missing (NULL)");
    fdx_candidate c[3] = {{ref_impl("a"), 0, 0}, {ref_impl("b"), 0, 0}, {ref_impl("c"), 0, 0}};
    c[2].impl_id.op = NULL;
    fdx_dispatch d = ref_dispatch("k", "generic", c, 3);
    fdx_sink_record_dispatch(sink, &d);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "candidates[2].impl_id.op: missing (NULL)");
    c[2].impl_id.op = "MatMul";
    c[1].impl_id.dtypes = bad_dtypes;
    c[1].impl_id.n_dtypes = 2;
    fdx_sink_record_dispatch(sink, &d);
    ck_assert_str_eq(fdx_sink_errmsg(sink),
                     "candidates[1].impl_id.dtypes[1]: invalid UTF-8 at byte 2");
    c[1].impl_id.dtypes = NULL;
    fdx_sink_record_dispatch(sink, &d);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "candidates[1].impl_id.dtypes: missing (NULL)");
    d = ref_dispatch("k", "generic", NULL, 1);
    fdx_sink_record_dispatch(sink, &d);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "candidates: missing (NULL)");
    d = ref_dispatch("k", "generic", NULL, 0);
    d.hw.driver_version = NULL;
    fdx_sink_record_dispatch(sink, &d);
    ck_assert_str_eq(fdx_sink_errmsg(sink), "hw.driver_version: missing (NULL)");
    ck_assert_uint_eq(fdx_sink_dropped(sink), 8);
    ck_assert(fdx_sink_is_empty(sink));
}
END_TEST

/* A miss without its wanted key is dropped even when a cell with all its
 * other fields exists (the record cache must not take it for that cell). */
START_TEST(a_miss_without_wanted_never_matches_a_cell)
{
    fdx_miss m = ref_miss("w", "generic");
    fdx_sink_record_miss(sink, &m);
    fdx_sink_record_miss(sink, &m);
    m.wanted = NULL;
    fdx_sink_record_miss(sink, &m);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 1);
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    ck_assert_uint_eq(r->misses[0].count, 2);
    fdx_records_free(r);
}
END_TEST

/* The latest non-empty list wins, also when a list comes back. */
START_TEST(candidates_follow_the_latest_list)
{
    fdx_candidate x = {ref_impl("x"), 1, 10}, y = {ref_impl("y"), 0, 0};
    fdx_dispatch dx = ref_dispatch("k", "a", &x, 1), dy = ref_dispatch("k", "a", &y, 1),
                 d0 = ref_dispatch("k", "a", NULL, 0);
    const fdx_dispatch *order[] = {&dx, &dy, &d0, &dx, &dx, &d0, &dy, &d0};
    const char *want[] = {"x", "y", "y", "x", "x", "x", "y", "y"};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        fdx_sink_record_dispatch(sink, order[i]);
        fdx_records *r;
        ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
        ck_assert_uint_eq(r->n_dispatches, 1);
        ck_assert_uint_eq(r->dispatches[0].count, i + 1);
        ck_assert_str_eq(r->dispatches[0].candidates[0].impl_id.kernel_source, want[i]);
        fdx_records_free(r);
    }
}
END_TEST

/* The same buffer, rewritten between records, is a different cell: the
 * pointer cache checks what the strings say. */
START_TEST(reused_buffers_are_read_again)
{
    char wanted[32] = "", sku[32] = "";
    fdx_miss m = ref_miss(wanted, "generic");
    m.hw.hardware_sku = sku;
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 4; i++) {
            snprintf(wanted, sizeof wanted, "w%d", i);
            snprintf(sku, sizeof sku, i % 2 ? "gpu" : "gpu-%d", i);
            fdx_sink_record_miss(sink, &m);
        }
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), 4);
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    for (size_t i = 0; i < r->n_misses; i++)
        ck_assert_uint_eq(r->misses[i].count, 3);
    ck_assert_str_eq(r->misses[0].hw.hardware_sku, "gpu-0");
    ck_assert_str_eq(r->misses[1].hw.hardware_sku, "gpu");
    fdx_records_free(r);
    /* After a drain the cache starts afresh. */
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, db, NULL), FDX_OK);
    snprintf(wanted, sizeof wanted, "after");
    fdx_sink_record_miss(sink, &m);
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), 1);
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    ck_assert_str_eq(r->misses[0].wanted, "after");
    fdx_records_free(r);
    fdx_store_close(db);
}
END_TEST

/* Candidates are compared in place with the ones a cell holds: a rewritten
 * buffer is a new list. */
START_TEST(reused_candidate_buffers_are_read_again)
{
    char source[32] = "first";
    fdx_candidate c = {ref_impl(source), 1, 5};
    fdx_dispatch d = ref_dispatch("k", "a", &c, 1);
    fdx_sink_record_dispatch(sink, &d);
    fdx_sink_record_dispatch(sink, &d);
    snprintf(source, sizeof source, "second-longer");
    fdx_sink_record_dispatch(sink, &d);
    snprintf(source, sizeof source, "third");
    fdx_sink_record_dispatch(sink, &d);
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    ck_assert_uint_eq(r->dispatches[0].count, 4);
    ck_assert_str_eq(r->dispatches[0].candidates[0].impl_id.kernel_source, "third");
    fdx_records_free(r);
}
END_TEST

/* More cells than the pointer table has ways for, recorded in three orders
 * and through two sets of pointers: every record lands in its own cell. */
START_TEST(many_cells_through_many_pointers)
{
    enum { CELLS = 20000 };
    char(*a)[24] = malloc(sizeof *a * CELLS), (*b)[24] = malloc(sizeof *b * CELLS);
    for (int i = 0; i < CELLS; i++) {
        snprintf(a[i], sizeof a[i], "key-%d", i);
        memcpy(b[i], a[i], sizeof a[i]);
    }
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < CELLS; k++) {
            int i = round == 1 ? CELLS - 1 - k : round == 2 ? (k * 7919) % CELLS : k;
            fdx_dispatch d = ref_dispatch(round == 2 ? b[i] : a[i], "a", NULL, 0);
            d.count = (uint64_t)i + 1;
            fdx_sink_record_dispatch(sink, &d);
        }
    ck_assert_uint_eq(fdx_sink_dispatch_cell_count(sink), CELLS);
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    for (size_t i = 0; i < r->n_dispatches; i++) {
        int n = atoi(r->dispatches[i].structure_key + 4);
        ck_assert_uint_eq(r->dispatches[i].count, 3 * ((uint64_t)n + 1));
    }
    fdx_records_free(r);
    free(a);
    free(b);
}
END_TEST

/* A few cells reached through many more pointers than the table has ways
 * (a runtime formatting its keys into fresh buffers): the token table
 * evicts, again and again. */
START_TEST(few_cells_through_fresh_buffers)
{
    enum { BUFFERS = 30000, CELLS = 5 };
    char **keys = malloc(BUFFERS * sizeof *keys);
    for (int i = 0; i < BUFFERS; i++) {
        keys[i] = malloc(16);
        snprintf(keys[i], 16, "key-%d", i % CELLS);
    }
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < BUFFERS; k++) {
            int i = round ? (int)(((long)k * 7919) % BUFFERS) : k;
            fdx_miss m = ref_miss(keys[i], "generic");
            fdx_sink_record_miss(sink, &m);
        }
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), CELLS);
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    for (size_t i = 0; i < r->n_misses; i++)
        ck_assert_uint_eq(r->misses[i].count, 2 * BUFFERS / CELLS);
    fdx_records_free(r);
    for (int i = 0; i < BUFFERS; i++)
        free(keys[i]);
    free(keys);
}
END_TEST

/* fdx_same_str reads a word at a time: strings that end at the last byte
 * before an unreadable page, at every alignment and length, compared with
 * stored strings shorter, equal and longer, give strcmp's answer and no
 * fault. */
START_TEST(same_str_stops_at_the_string)
{
    long page = sysconf(_SC_PAGESIZE);
    char *mem =
        mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(mem, MAP_FAILED);
    ck_assert_int_eq(mprotect(mem + page, (size_t)page, PROT_NONE), 0);
    char stored[FDX_SAME_STR_SLACK + 64 + FDX_SAME_STR_SLACK];
    char *copy = stored + FDX_SAME_STR_SLACK;
    for (int len = 0; len < 40; len++)
        for (int n = 0; n < 40; n++)
            for (int flip = -1; flip < n; flip++) {
                char *str = mem + page - len - 1;
                for (int i = 0; i < len; i++)
                    str[i] = (char)('a' + i % 26);
                str[len] = '\0';
                memset(stored, 'x', sizeof stored);
                for (int i = 0; i < n; i++)
                    copy[i] = (char)('a' + i % 26);
                if (flip >= 0)
                    copy[flip] = 'Z';
                copy[n] = '\0';
                int want = strcmp(str, copy) == 0;
                ck_assert_int_eq(fdx_same_str(str, copy, (size_t)n), want);
            }
    munmap(mem, 2 * (size_t)page);
}
END_TEST

/* Records whose strings were shortened in place so that they now end on the
 * last byte before an unreadable page, where the first record's strings went
 * on into it: the sink's images of the first record must stop reading at the
 * new terminator (a token, and strings of the context, at every length). */
static void shorten_before_page(int field, int was, int now)
{
    long page = sysconf(_SC_PAGESIZE);
    char *mem =
        mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(mem, MAP_FAILED);
    char *str = mem + page - now - 1;
    for (int i = 0; i < was; i++)
        str[i] = (char)('a' + i % 26);
    str[was] = '\0';
    fdx_sink *s = fdx_sink_new();
    fdx_miss m = ref_miss("w", "generic");
    const char **at[] = {&m.wanted, &m.fallback.backend, &m.fallback.kernel_source,
                         &m.hw.driver_version};
    *at[field] = str;
    fdx_sink_record_miss(s, &m);
    fdx_sink_record_miss(s, &m);
    ck_assert_int_eq(mprotect(mem + page, (size_t)page, PROT_NONE), 0);
    str[now] = '\0';
    fdx_sink_record_miss(s, &m);
    fdx_sink_record_miss(s, &m);
    /* The shortened string (empty included) is a cell of its own. */
    ck_assert_uint_eq(fdx_sink_miss_cell_count(s), 2);
    ck_assert_uint_eq(fdx_sink_dropped(s), 0);
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(s, &r), FDX_OK);
    ck_assert_uint_eq(r->misses[0].count + 100 * r->misses[1].count, 202);
    fdx_records_free(r);
    fdx_sink_free(s);
    munmap(mem, 2 * (size_t)page);
}

START_TEST(strings_shortened_before_an_unreadable_page)
{
    for (int field = 0; field < 4; field++)
        for (int was = 1; was < 40; was++)
            for (int now = 0; now < was; now++)
                shorten_before_page(field, was, now);
}
END_TEST

/* Keys of every length around the token images' two blocks, at every
 * alignment, rewritten in place at their last byte: each version is its own
 * cell, and the first counts again when it comes back. */
START_TEST(rewritten_keys_at_every_length_and_alignment)
{
    char buf[96];
    for (int len = 1; len < 64; len++)
        for (int off = 0; off < 16; off++) {
            fdx_sink *s = fdx_sink_new();
            char *key = buf + off;
            for (int i = 0; i < len; i++)
                key[i] = (char)('a' + (i * 7 + off) % 26);
            key[len] = '\0';
            fdx_dispatch d = ref_dispatch(key, "a", NULL, 0);
            fdx_sink_record_dispatch(s, &d);
            fdx_sink_record_dispatch(s, &d);
            key[len - 1] = '#';
            fdx_sink_record_dispatch(s, &d);
            key[len - 1] = (char)('a' + ((len - 1) * 7 + off) % 26);
            fdx_sink_record_dispatch(s, &d);
            ck_assert_uint_eq(fdx_sink_dispatch_cell_count(s), 2);
            fdx_records *r;
            ck_assert_int_eq(fdx_sink_records(s, &r), FDX_OK);
            for (size_t i = 0; i < r->n_dispatches; i++) {
                const char *k = r->dispatches[i].structure_key;
                ck_assert_uint_eq(r->dispatches[i].count, k[len - 1] == '#' ? 1 : 3);
            }
            fdx_records_free(r);
            fdx_sink_free(s);
        }
}
END_TEST

/* More contexts (implementation and device) than the context table holds,
 * each over many keys, recorded in three orders, the last through copies
 * of every string: each record lands in its own cell. */
START_TEST(many_contexts_over_many_keys)
{
    enum { CTXS = 300, KEYS = 40 };
    char(*src)[16] = malloc(sizeof *src * CTXS), (*src2)[16] = malloc(sizeof *src2 * CTXS);
    char(*key)[16] = malloc(sizeof *key * KEYS), (*key2)[16] = malloc(sizeof *key2 * KEYS);
    for (int i = 0; i < CTXS; i++) {
        snprintf(src[i], sizeof src[i], "src-%d", i);
        memcpy(src2[i], src[i], sizeof src[i]);
    }
    for (int i = 0; i < KEYS; i++) {
        snprintf(key[i], sizeof key[i], "key-%d", i);
        memcpy(key2[i], key[i], sizeof key[i]);
    }
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < CTXS * KEYS; k++) {
            int j = round == 1 ? CTXS * KEYS - 1 - k : round == 2 ? (k * 7919) % (CTXS * KEYS) : k;
            int c = round == 1 ? j / KEYS : j % CTXS, t = round == 1 ? j % KEYS : j / CTXS;
            fdx_miss m = ref_miss(round == 2 ? key2[t] : key[t], round == 2 ? src2[c] : src[c]);
            m.count = (uint64_t)(c * KEYS + t) + 1;
            fdx_sink_record_miss(sink, &m);
        }
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), CTXS * KEYS);
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    for (size_t i = 0; i < r->n_misses; i++) {
        int c = atoi(r->misses[i].fallback.kernel_source + 4), t = atoi(r->misses[i].wanted + 4);
        ck_assert_uint_eq(r->misses[i].count, 3 * ((uint64_t)(c * KEYS + t) + 1));
    }
    fdx_records_free(r);
    free(src);
    free(src2);
    free(key);
    free(key2);
}
END_TEST

/* A dtype count that differs from a cell's only in bits the numbers shift
 * out must not reach that cell (nor read past its dtypes). */
START_TEST(a_huge_dtype_count_never_matches_a_cell)
{
    static const char *const dtypes[] = {"F16", "F16", "F16", NULL}; /* validation stops */
    fdx_miss m = ref_miss("w", "generic");
    m.fallback.dtypes = dtypes;
    fdx_sink_record_miss(sink, &m);
    fdx_sink_record_miss(sink, &m);
    m.fallback.n_dtypes += (size_t)1 << (sizeof(size_t) * 8 - 2);
    fdx_sink_record_miss(sink, &m);
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), 1);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 1);
}
END_TEST

/* Counts recorded through the token table wait there until something reads
 * the cells: they must survive the table's growth, evictions and a drain. */
START_TEST(counts_held_in_the_cache_are_never_lost)
{
    enum { CELLS = 3000 };
    char(*keys)[16] = malloc(sizeof *keys * CELLS);
    for (int i = 0; i < CELLS; i++) {
        snprintf(keys[i], sizeof keys[i], "key-%d", i);
        fdx_miss m = ref_miss(keys[i], "generic");
        for (int k = 0; k <= i % 3; k++)
            fdx_sink_record_miss(sink, &m);
    }
    fdx_records *r;
    ck_assert_int_eq(fdx_sink_records(sink, &r), FDX_OK);
    ck_assert_uint_eq(r->n_misses, CELLS);
    uint64_t total = 0;
    for (size_t i = 0; i < r->n_misses; i++) {
        ck_assert_uint_eq(r->misses[i].count, atoi(r->misses[i].wanted + 4) % 3 + 1);
        total += r->misses[i].count + 1;
    }
    fdx_records_free(r);
    /* Read once; recorded again, held again, and drained. */
    for (int i = 0; i < CELLS; i++) {
        fdx_miss m = ref_miss(keys[i], "generic");
        fdx_sink_record_miss(sink, &m);
    }
    fdx_store *st = tu_open(tu_path(tu_dir, "held.db"));
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, st, NULL), FDX_OK);
    char *text = tu_export(st, tu_path(tu_dir, "held"));
    uint64_t drained = 0;
    for (const char *p = strstr(text, "\"count\":"); p; p = strstr(p + 1, "\"count\":"))
        drained += strtoull(p + 8, NULL, 10);
    ck_assert_uint_eq(drained, total);
    free(text);
    fdx_store_close(st);
    free(keys);
}
END_TEST

/* Adding through handles leaves what recording the records would. */
START_TEST(handles_count_like_records)
{
    fdx_sink *plain = fdx_sink_new();
    fdx_candidate c = {ref_impl("x"), 1, 10};
    fdx_miss m = ref_miss("w", "generic");
    fdx_dispatch d = ref_dispatch("k", "a", &c, 1), again = ref_dispatch("k", "a", NULL, 0);
    fdx_sink_cell mc, dc;
    m.count = 3;
    ck_assert_int_eq(fdx_sink_record_miss_cell(sink, &m, &mc), FDX_OK);
    ck_assert_int_eq(fdx_sink_record_dispatch_cell(sink, &d, &dc), FDX_OK);
    fdx_sink_record_miss(plain, &m);
    fdx_sink_record_dispatch(plain, &d);
    for (uint64_t n = 0; n < 5; n++) {
        ck_assert_int_eq(fdx_sink_add(sink, mc, n), FDX_OK);
        ck_assert_int_eq(fdx_sink_add(sink, dc, n), FDX_OK);
        m.count = again.count = n;
        fdx_sink_record_miss(plain, &m);
        fdx_sink_record_dispatch(plain, &again);
    }
    /* A second record of the same cell hands out the same handle. */
    fdx_sink_cell mc2;
    ck_assert_int_eq(fdx_sink_record_miss_cell(sink, &m, &mc2), FDX_OK);
    fdx_sink_record_miss(plain, &m);
    ck_assert_uint_eq(mc2, mc);
    fdx_store *da = tu_open(tu_path(tu_dir, "a.db")), *db = tu_open(tu_path(tu_dir, "b.db"));
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, da, NULL), FDX_OK);
    ck_assert_int_eq(fdx_sink_drain_to_store(plain, db, NULL), FDX_OK);
    char *x = tu_export(da, tu_path(tu_dir, "a")), *y = tu_export(db, tu_path(tu_dir, "b"));
    ck_assert_ptr_nonnull(strstr(x, "\"count\":18,"));
    ck_assert_ptr_nonnull(strstr(x, "\"count\":12,"));
    ck_assert_str_eq(x, y);
    free(x);
    free(y);
    fdx_store_close(da);
    fdx_store_close(db);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 0);
    fdx_sink_free(plain);
}
END_TEST

/* Handles from another sink, from before a drain, or made up are refused and
 * counted as dropped; a record that is not valid gives no handle. */
START_TEST(foreign_and_stale_handles_are_refused)
{
    fdx_sink *other = fdx_sink_new();
    fdx_miss m = ref_miss("w", "generic");
    fdx_sink_cell mine, theirs;
    ck_assert_int_eq(fdx_sink_record_miss_cell(sink, &m, &mine), FDX_OK);
    ck_assert_int_eq(fdx_sink_record_miss_cell(other, &m, &theirs), FDX_OK);
    ck_assert_int_eq(fdx_sink_add(sink, theirs, 1), FDX_EMISUSE);
    ck_assert_ptr_nonnull(strstr(fdx_sink_errmsg(sink), "not this sink's"));
    ck_assert_int_eq(fdx_sink_add(sink, mine | 7, 1), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_add(sink, ~mine, 1), FDX_EMISUSE);
    ck_assert_int_eq(fdx_sink_add(sink, 0, 1), FDX_EMISUSE);
    /* its kind bit changed: counted into the dispatch cell of the same index */
    fdx_dispatch d = ref_dispatch("k", "a", NULL, 0);
    ck_assert_int_eq(fdx_sink_record_dispatch(sink, &d), FDX_OK);
    ck_assert_int_eq(fdx_sink_add(sink, mine ^ 1ull << 63, 1000), FDX_EMISUSE);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 5);
    fdx_store *db = tu_open(tu_path(tu_dir, "s.db"));
    ck_assert_int_eq(fdx_sink_drain_to_store(sink, db, NULL), FDX_OK);
    ck_assert_int_eq(fdx_sink_add(sink, mine, 1), FDX_EMISUSE);
    ck_assert(fdx_sink_is_empty(sink));
    fdx_miss invalid = ref_miss("bad\xff", "generic");
    fdx_sink_cell untouched = 7;
    ck_assert_int_eq(fdx_sink_record_miss_cell(sink, &invalid, &untouched), FDX_EDATA);
    ck_assert_int_eq(fdx_sink_record_dispatch_cell(sink, NULL, &untouched), FDX_EMISUSE);
    ck_assert_uint_eq(untouched, 7);
    ck_assert_uint_eq(fdx_sink_dropped(sink), 8);
    ck_assert_int_eq(fdx_sink_add(other, theirs, 1), FDX_OK);
    fdx_store_close(db);
    fdx_sink_free(other);
}
END_TEST

START_TEST(recording_a_seen_cell_allocates_nothing)
{
    fdx_candidate c[2] = {{ref_impl("a"), 1, 5}, {ref_impl("b"), 0, 0}};
    fdx_miss m = ref_miss("w", "generic");
    fdx_dispatch d = ref_dispatch("k", "a", c, 2);
    fdx_sink_record_miss(sink, &m); /* first sight may allocate */
    fdx_sink_record_dispatch(sink, &d);
    fdx_sink_cell handle;
    ck_assert_int_eq(fdx_sink_record_miss_cell(sink, &m, &handle), FDX_OK);
    long before = allocations;
    for (int i = 0; i < 10000; i++) {
        fdx_sink_record_miss(sink, &m);
        fdx_sink_record_dispatch(sink, &d);
        fdx_sink_add(sink, handle, 1);
    }
    ck_assert_int_eq(allocations - before, 0);
    ck_assert_uint_eq(fdx_sink_miss_cell_count(sink), 1);
}
END_TEST

/* ---- one sink per thread, all drained into one store ---- */

typedef struct worker {
    const char *db_path;
    int id;
    int rc;
} worker;

enum { THREADS = 4, RECORDS = 20000, SHARED_CELLS = 50 };

static void *work(void *arg)
{
    worker *w = arg;
    fdx_sink *own = fdx_sink_new();
    char wanted[32];
    for (int i = 0; i < RECORDS; i++) {
        snprintf(wanted, sizeof wanted, "w%d", i % SHARED_CELLS);
        fdx_miss m = ref_miss(wanted, "generic");
        fdx_sink_record_miss(own, &m);
    }
    fdx_store *db;
    w->rc = fdx_store_open(w->db_path, FDX_OPEN_CREATE, &db);
    if (w->rc == FDX_OK)
        w->rc = fdx_sink_drain_to_store(own, db, NULL);
    fdx_store_close(db);
    fdx_sink_free(own);
    return NULL;
}

static void check_totals(const char *db_path, uint64_t writers)
{
    fdx_store *db = tu_open(db_path);
    char *out = tu_export(db, tu_path(tu_dir, "out"));
    char want[64];
    snprintf(want, sizeof want, "\"count\":%llu,",
             (unsigned long long)(writers * RECORDS / SHARED_CELLS));
    int lines = 0;
    for (char *p = out; (p = strstr(p, "\"wanted\"")); p++, lines++)
        ;
    ck_assert_int_eq(lines, SHARED_CELLS);
    for (char *p = out; (p = strstr(p, "\"count\":")); p++)
        ck_assert_msg(strncmp(p, want, strlen(want)) == 0, "%.40s", p);
    free(out);
    fdx_store_close(db);
}

START_TEST(one_sink_per_thread_drains_exactly)
{
    const char *db_path = strdup(tu_path(tu_dir, "threads.db"));
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){db_path, i, -1};
        ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(w[i].rc, FDX_OK);
    }
    check_totals(db_path, THREADS);
    free((char *)db_path);
}
END_TEST

START_TEST(sinks_in_several_processes_drain_exactly)
{
    const char *db_path = strdup(tu_path(tu_dir, "procs.db"));
    enum { PROCS = 5 };
    pid_t pids[PROCS];
    for (int i = 0; i < PROCS; i++) {
        pids[i] = fork();
        ck_assert_int_ge(pids[i], 0);
        if (pids[i] == 0) {
            worker w = {db_path, i, -1};
            work(&w);
            _exit(w.rc == FDX_OK ? 0 : 1);
        }
    }
    for (int i = 0; i < PROCS; i++) {
        int status;
        ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    check_totals(db_path, PROCS);
    free((char *)db_path);
}
END_TEST

Suite *sink_suite(void)
{
    Suite *s = suite_create("sink");
    TCase *tc = tcase_create("sink");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, generic_only_cell_emits_one_aggregated_miss_record);
    tcase_add_test(tc, distinct_fallbacks_are_distinct_cells);
    tcase_add_test(tc, flush_writes_valid_jsonl_that_round_trips);
    tcase_add_test(tc, single_flushes_count_held_records);
    tcase_add_test(tc, empty_sink_flushes_empty_file);
    tcase_add_test(tc, dispatch_records_aggregate_by_cell_and_keep_candidates);
    tcase_add_test(tc, distinct_chosen_are_distinct_dispatch_cells);
    tcase_add_test(tc, flush_all_writes_separate_files);
    tcase_add_test(tc, flush_all_replaces_both_files_or_neither);
    tcase_add_test(tc, golden_basic);
    tcase_add_test(tc, golden_nasty);
    tcase_add_test(tc, drain_counts_once_and_refuses_an_open_transaction);
    tcase_add_test(tc, a_failed_drain_keeps_the_stores_whole_message);
    tcase_add_test(tc, bad_records_are_dropped_and_counted);
    tcase_add_test(tc, null_handles_and_paths_are_refused);
    tcase_add_test(tc, refusals_name_the_field);
    tcase_add_test(tc, a_miss_without_wanted_never_matches_a_cell);
    tcase_add_test(tc, candidates_follow_the_latest_list);
    tcase_add_test(tc, reused_buffers_are_read_again);
    tcase_add_test(tc, reused_candidate_buffers_are_read_again);
    tcase_add_test(tc, many_cells_through_many_pointers);
    tcase_add_test(tc, few_cells_through_fresh_buffers);
    tcase_add_test(tc, same_str_stops_at_the_string);
    tcase_add_test(tc, strings_shortened_before_an_unreadable_page);
    tcase_add_test(tc, rewritten_keys_at_every_length_and_alignment);
    tcase_add_test(tc, many_contexts_over_many_keys);
    tcase_add_test(tc, counts_held_in_the_cache_are_never_lost);
    tcase_add_test(tc, a_huge_dtype_count_never_matches_a_cell);
    tcase_add_test(tc, handles_count_like_records);
    tcase_add_test(tc, foreign_and_stale_handles_are_refused);
    tcase_add_test(tc, recording_a_seen_cell_allocates_nothing);
    tcase_add_test(tc, one_sink_per_thread_drains_exactly);
    tcase_add_test(tc, sinks_in_several_processes_drain_exactly);
    suite_add_tcase(s, tc);
    return s;
}
