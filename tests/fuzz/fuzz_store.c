/*
 * libFuzzer target: arbitrary database images as stores made by another
 * host. The bytes become a store file that is read the ways fdx meets it:
 * opened read-only (as fdx-export and fdx-top do, refusing an older schema)
 * and opened writable (as fdx-ingest opens a store copied from another host,
 * migrating an older schema), each then ranked by the demand query and
 * exported; and merged as a source into a fresh store whose result is
 * exported too.
 * Nothing may crash, every call must return FDX_OK or an error code with a
 * message, and every line an export writes must be accepted by the decoder.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdx.h"

static char dir[4096];

static void remove_dir(void);

static void fail(const char *what, int rc, const char *msg)
{
    fprintf(stderr, "%s: status %d (%s): \"%s\"\n", what, rc, fdx_strerror(rc), msg);
    remove_dir();
    abort();
}

/* FDX_OK, or an error code that comes with a message. */
static void check_status(const char *what, int rc, const fdx_store *db)
{
    const char *msg = fdx_store_errmsg(db);
    if (rc != FDX_OK && (rc < FDX_ERROR || rc > FDX_ECONFLICT || !msg || !*msg))
        fail(what, rc, msg ? msg : "(null)");
}

static void require_ok(const char *what, int rc, const fdx_store *db)
{
    if (rc != FDX_OK)
        fail(what, rc, fdx_store_errmsg(db));
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    if (ftw->level > 0 && remove(path) != 0) {
        perror(path);
        abort();
    }
    return 0;
}

/* Empties the temporary directory: the store, its -wal, -shm and -journal
 * files, and every export. */
static void clear_dir(void)
{
    if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        perror(dir);
        abort();
    }
}

static void remove_dir(void)
{
    clear_dir();
    rmdir(dir);
}

static void make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/fdx-fuzz-store-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror(dir);
        abort();
    }
    atexit(remove_dir);
}

static void path_in_dir(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static void write_image(const char *path, const uint8_t *data, size_t size)
{
    clear_dir();
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

static void on_error(void *ctx, const char *where, const char *reason)
{
    (void)ctx;
    fprintf(stderr, "exported line rejected: %s: %s\n", where, reason);
}

/* Every line of the export in outdir decodes (into a store kept empty). */
static void check_export(const char *outdir)
{
    static fdx_store *db;
    if (!db)
        require_ok("open :memory:", fdx_store_open(":memory:", FDX_OPEN_CREATE, &db), db);
    require_ok("begin", fdx_store_begin(db), db);
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.on_error = on_error;
    opts.max_line_bytes = FDX_MAX_LINE_LIMIT;
    opts.threads = 1;
    require_ok("ingest of the export", fdx_store_ingest_path(db, outdir, &opts, NULL), db);
    require_ok("rollback", fdx_store_rollback(db), db);
}

static void export_and_check(fdx_store *db, const char *what)
{
    char outdir[4200];
    path_in_dir(outdir, sizeof outdir, "out");
    fdx_export_stats stats;
    int rc = fdx_store_export(db, outdir, &stats);
    check_status(what, rc, db);
    if (rc == FDX_OK)
        check_export(outdir);
}

/* What fdx-top does with each row: copy both strings. */
static int take_row(void *ctx, const fdx_demand_row *row)
{
    (void)ctx;
    if (!row->wanted || !row->ops)
        fail("demand row", FDX_OK, "a NULL string in a row");
    char *wanted = strdup(row->wanted), *ops = strdup(row->ops);
    free(wanted);
    free(ops);
    return 0;
}

static void read_store(const char *path, int flags)
{
    fdx_store *db;
    int rc = fdx_store_open(path, flags, &db);
    check_status("open", rc, db);
    if (rc == FDX_OK) {
        fdx_demand_filter top = {.compute_capability = "cpu", .limit = 2};
        check_status("demand", fdx_store_demand(db, NULL, take_row, NULL), db);
        check_status("demand, filtered", fdx_store_demand(db, &top, take_row, NULL), db);
        uint64_t misses, dispatches;
        check_status("cell counts", fdx_store_cell_counts(db, &misses, &dispatches), db);
        export_and_check(db, "export");
    }
    check_status("close", fdx_store_close(db), NULL);
}

static void merge_store(const char *path)
{
    fdx_store *db;
    require_ok("open :memory:", fdx_store_open(":memory:", FDX_OPEN_CREATE, &db), db);
    require_ok("begin", fdx_store_begin(db), db);
    fdx_merge_stats stats = {0};
    int rc = fdx_store_merge(db, path, &stats);
    check_status("merge", rc, db);
    if (rc == FDX_OK) {
        require_ok("commit", fdx_store_commit(db, NULL), db);
        export_and_check(db, "export of the merge");
    } else {
        uint64_t misses, dispatches;
        require_ok("cell counts", fdx_store_cell_counts(db, &misses, &dispatches), db);
        if (misses || dispatches)
            fail("failed merge", rc, "left cells in the transaction");
        require_ok("rollback", fdx_store_rollback(db), db);
    }
    fdx_store_close(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!*dir)
        make_dir();
    char path[4200];
    path_in_dir(path, sizeof path, "host.fdx");
    write_image(path, data, size);
    read_store(path, FDX_OPEN_READONLY);
    write_image(path, data, size);
    read_store(path, 0);
    write_image(path, data, size);
    merge_store(path);
    clear_dir();
    return 0;
}
