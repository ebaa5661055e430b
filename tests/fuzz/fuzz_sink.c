/*
 * libFuzzer target: the sink's record cache against the store's record
 * calls (tests/sink_ops.h). Bytes rewrite string buffers and record misses
 * and dispatches that point into them; the sink's flush must equal the
 * store's export, and both must refuse the same records.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sink_ops.h"
#include "fdx.h"

static void check(int ok, const char *what, const char *why)
{
    if (!ok) {
        fprintf(stderr, "%s: %s\n", what, why);
        abort();
    }
}

static char *slurp(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    check(f != NULL, "open", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *text = malloc((size_t)n + 1);
    check(text && fread(text, 1, (size_t)n, f) == (size_t)n, "read", path);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void same_file(const char *a, const char *b, const char *name)
{
    char *x = slurp(a, name), *y = slurp(b, name);
    check(strcmp(x, y) == 0, "sink and store differ", name);
    free(x);
    free(y);
}

static char dir[4096], sink_dir[4200], store_dir[4200];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The outputs of every run go when the process ends normally. */
static void remove_dir(void)
{
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/fdx-fuzz-sink.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        check(mkdtemp(dir) != NULL, "mkdtemp", dir);
        check(atexit(remove_dir) == 0, "atexit", dir);
        snprintf(sink_dir, sizeof sink_dir, "%s/sink", dir);
        snprintf(store_dir, sizeof store_dir, "%s/store", dir);
    }
    fdx_sink *sink = fdx_sink_new();
    fdx_store *db = NULL;
    check(sink != NULL, "sink", "out of memory");
    check(fdx_store_open(":memory:", FDX_OPEN_CREATE, &db) == FDX_OK, "open", fdx_store_errmsg(db));
    check(fdx_store_begin(db) == FDX_OK, "begin", fdx_store_errmsg(db));
    sink_ops o = {.data = data, .n = size};
    sink_ops_run(&o, sink, db);
    check(fdx_store_commit(db, NULL) == FDX_OK, "commit", fdx_store_errmsg(db));
    check(fdx_store_export(db, store_dir, NULL) == FDX_OK, "export", fdx_store_errmsg(db));
    check(fdx_sink_flush_all(sink, sink_dir, NULL, NULL) == FDX_OK, "flush", fdx_sink_errmsg(sink));
    same_file(sink_dir, store_dir, "misses.jsonl");
    same_file(sink_dir, store_dir, "dispatches.jsonl");
    check(fdx_sink_dropped(sink) == o.refused_by_store, "dropped", "sink and store disagree");
    fdx_store_close(db);
    fdx_sink_free(sink);
    return 0;
}
