/*
 * Drives one store handle through several write transactions, as a runtime
 * that embeds the library does (a sink drained now and then, records, a
 * prune), and prints what each commit reports. pg_test.py runs it against an
 * SQLite and a PostgreSQL store: both must end with the same cells and
 * report the same counts; a transaction must never apply an earlier one's
 * cells again. Then it reads the cell counts through the same handle and
 * says on stderr what it got: a PostgreSQL writer's handle holds only what
 * it writes, and refuses.
 *
 * Usage: one_handle STORE
 */
#include <stdio.h>

#include "fdx.h"

static const char *const dtypes[] = {"F32"};

static fdx_miss miss(const char *wanted, const char *op, uint64_t count)
{
    fdx_miss m = {0};
    m.wanted = wanted;
    m.fallback.backend = "Cuda";
    m.fallback.op = op;
    m.fallback.dtypes = dtypes;
    m.fallback.n_dtypes = 1;
    m.fallback.kernel_source = "generic";
    m.fallback.kernel_revision_hash = 7;
    m.hw.hardware_sku = "H100";
    m.hw.driver_version = "560";
    m.count = count;
    return m;
}

static int failed(fdx_store *db, const char *what)
{
    fprintf(stderr, "one_handle: %s: %s\n", what, fdx_store_errmsg(db));
    return 1;
}

static int drain(fdx_store *db, fdx_sink *sink, uint64_t count)
{
    fdx_miss a = miss("txn:sink", "Gelu", count), t = miss("txn:pruned", "Tanh", 1);
    fdx_commit_stats cs;
    if (fdx_sink_record_miss(sink, &a) != FDX_OK || fdx_sink_record_miss(sink, &t) != FDX_OK ||
        fdx_sink_drain_to_store(sink, db, &cs) != FDX_OK)
        return failed(db, "sink drain");
    printf("drain: %llu added, %llu updated\n", (unsigned long long)cs.cells_added,
           (unsigned long long)cs.cells_updated);
    return 0;
}

static int record(fdx_store *db, uint64_t count)
{
    fdx_miss b = miss("txn:direct", "Gelu", count);
    fdx_commit_stats cs;
    if (fdx_store_begin(db) != FDX_OK || fdx_store_record_miss(db, &b) != FDX_OK ||
        fdx_store_commit(db, &cs) != FDX_OK)
        return failed(db, "record");
    printf("record: %llu added, %llu updated\n", (unsigned long long)cs.cells_added,
           (unsigned long long)cs.cells_updated);
    return 0;
}

static int prune(fdx_store *db)
{
    fdx_prune_filter f = {0};
    fdx_prune_stats ps;
    f.op = "Tanh";
    if (fdx_store_begin(db) != FDX_OK || fdx_store_prune(db, &f, NULL) != FDX_OK ||
        fdx_store_commit(db, NULL) != FDX_OK || fdx_store_pruned(db, &ps) != FDX_OK)
        return failed(db, "prune");
    printf("prune: %llu cells, %llu observations\n", (unsigned long long)ps.miss_cells,
           (unsigned long long)ps.observations);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: one_handle STORE\n");
        return 2;
    }
    fdx_store *db;
    if (fdx_store_open(argv[1], FDX_OPEN_CREATE, &db) != FDX_OK) {
        failed(db, "open");
        fdx_store_close(db);
        return 1;
    }
    fdx_sink *sink = fdx_sink_new();
    int bad = !sink || drain(db, sink, 1) || record(db, 2) || drain(db, sink, 3) || prune(db) ||
              record(db, 4) || drain(db, sink, 5) || prune(db) || record(db, 6);
    fdx_sink_free(sink);
    uint64_t misses = 0, dispatches = 0;
    if (!bad && fdx_store_cell_counts(db, &misses, &dispatches) == FDX_OK)
        fprintf(stderr, "read through the writer's handle: %llu miss cells\n",
                (unsigned long long)misses);
    else if (!bad)
        fprintf(stderr, "read through the writer's handle: %s\n", fdx_store_errmsg(db));
    if (fdx_store_close(db) != FDX_OK)
        bad = 1;
    return bad;
}
