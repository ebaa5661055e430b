/*
 * libFuzzer target: ingesting a whole buffer into an in-memory store, in
 * both all-or-nothing and --skip-invalid modes. Nothing may crash, a failed
 * ingest must leave nothing to commit (the failed transaction is committed and
 * the store checked still empty), and a successful one is rolled back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fdx.h"

static void check(int ok, fdx_store *db, const char *what)
{
    if (!ok) {
        fprintf(stderr, "%s: %s\n", what, fdx_store_errmsg(db));
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fdx_store *db;
    if (!db)
        check(fdx_store_open(":memory:", FDX_OPEN_CREATE, &db) == FDX_OK, db, "open");
    int skip = size > 0 && (data[0] & 1);
    int threads = size > 0 && (data[0] & 2) ? 2 : 1;
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.skip_invalid = skip;
    opts.max_line_bytes = 4096;
    opts.threads = threads;
    check(fdx_store_begin(db) == FDX_OK, db, "begin");
    int rc = fdx_store_ingest_buffer(db, "fuzz", (const char *)data, size, &opts, NULL);
    check(rc == FDX_OK || (rc == FDX_EDATA && !skip), db, "ingest");
    if (rc == FDX_OK) {
        check(fdx_store_rollback(db) == FDX_OK, db, "rollback");
        return 0;
    }
    /* Cells reach SQLite only at commit, so the failed path is judged after it. */
    fdx_commit_stats cs;
    uint64_t misses, dispatches;
    check(fdx_store_commit(db, &cs) == FDX_OK, db, "commit");
    check(cs.cells_added == 0 && cs.cells_updated == 0, db, "failed ingest committed cells");
    check(fdx_store_cell_counts(db, &misses, &dispatches) == FDX_OK, db, "count");
    check(misses == 0 && dispatches == 0, db, "failed ingest left cells");
    return 0;
}
