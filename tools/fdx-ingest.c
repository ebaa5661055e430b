/* fdx-ingest: adds JSONL feeds to a store, all paths in one transaction. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "fdx.h"
#include "tool_util.h"

static const char *prog = "fdx-ingest";

static void usage(void)
{
    printf("Usage: %s [OPTION]... DB PATH...\n"
           "Ingest kernel-dispatch telemetry into the fdx store DB (created when missing).\n"
           "\n"
           "Each PATH is a JSONL file (misses, dispatches, or both mixed), a run directory\n"
           "holding misses.jsonl and/or dispatches.jsonl, or - for standard input; they are\n"
           "read in the order given. The whole invocation is one transaction: if any line\n"
           "is bad, every bad line is listed as FILE:LINE: REASON and DB is left unchanged.\n"
           "\n"
           "Options:\n"
           "  --max-errors N       list at most N bad lines (default 20, 0 = all)\n"
           "  --max-line-bytes N   reject lines longer than N bytes (default %zu)\n"
           "  --busy-timeout MS    wait up to MS ms for another writer (default 10000)\n"
           "  -q, --quiet          no summary on success\n"
           "  -h, --help           show this help\n"
           "  -V, --version        show the version\n"
           "\n"
           "Exit status: 0 ingested, 1 bad data or I/O failure (DB unchanged), 2 usage error.\n",
           prog, FDX_DEFAULT_MAX_LINE);
}

typedef struct options {
    unsigned long long max_errors;
    unsigned long long max_line;
    unsigned long long busy_ms;
    int quiet;
} options;

typedef struct diag {
    unsigned long long shown;
    unsigned long long total;
    unsigned long long cap;
} diag;

static void on_error(void *ctx, const char *where, const char *reason)
{
    diag *d = ctx;
    d->total++;
    if (d->cap == 0 || d->shown < d->cap) {
        fprintf(stderr, "%s: %s\n", where, reason);
        d->shown++;
    }
}

static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"max-errors", required_argument, NULL, 'e'},
        {"max-line-bytes", required_argument, NULL, 'l'},
        {"busy-timeout", required_argument, NULL, 'b'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+qhV", longs, NULL)) != -1) {
        switch (c) {
        case 'e':
            if (tool_parse_size(optarg, 1ull << 40, &o->max_errors))
                return tool_usage_error(prog, "--max-errors: not a number: '%s'", optarg);
            break;
        case 'l':
            if (tool_parse_size(optarg, 1ull << 30, &o->max_line) || o->max_line == 0)
                return tool_usage_error(prog, "--max-line-bytes: expected 1 to %llu, got '%s'",
                                        1ull << 30, optarg);
            break;
        case 'b':
            if (tool_parse_size(optarg, 1ull << 30, &o->busy_ms))
                return tool_usage_error(prog, "--busy-timeout: not a number: '%s'", optarg);
            break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(); return -1;
        case 'V': tool_version(prog); return -1;
        default:
            return tool_usage_error(prog, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind < 2)
        return tool_usage_error(prog, "expected DB and at least one PATH");
    return 0;
}

static int ingest_all(fdx_store *db, char **paths, int n, const options *o, diag *d,
                      fdx_ingest_stats *stats)
{
    fdx_ingest_opts opts = {on_error, d, (size_t)o->max_line, 0};
    int failed = 0;
    for (int i = 0; i < n; i++) {
        int rc = fdx_store_ingest_path(db, paths[i], &opts, stats);
        if (rc == FDX_EDATA) {
            failed = 1;
            continue;
        }
        if (rc != FDX_OK) {
            tool_error(prog, "%s", fdx_store_errmsg(db));
            return rc;
        }
    }
    return failed ? FDX_EDATA : FDX_OK;
}

static int run(const char *dbpath, char **paths, int n, const options *o)
{
    fdx_store *db;
    fdx_ingest_stats stats = {0};
    fdx_commit_stats cs = {0};
    diag d = {0, 0, o->max_errors};
    int rc = fdx_store_open(dbpath, FDX_OPEN_CREATE, &db);
    if (rc == FDX_OK)
        rc = fdx_store_set_busy_timeout(db, (int)o->busy_ms);
    if (rc == FDX_OK)
        rc = fdx_store_begin(db);
    if (rc != FDX_OK) {
        tool_error(prog, "%s", fdx_store_errmsg(db));
        fdx_store_close(db);
        return EXIT_FAIL;
    }
    rc = ingest_all(db, paths, n, o, &d, &stats);
    if (rc == FDX_OK && (rc = fdx_store_commit(db, &cs)) != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    if (rc != FDX_OK)
        fdx_store_rollback(db);
    fdx_store_close(db);
    if (rc == FDX_EDATA) {
        if (d.total > d.shown)
            fprintf(stderr, "... and %llu more bad lines\n", d.total - d.shown);
        tool_error(prog, "%llu bad line%s: nothing ingested, %s unchanged", d.total,
                   d.total == 1 ? "" : "s", dbpath);
    }
    if (rc != FDX_OK)
        return EXIT_FAIL;
    if (!o->quiet)
        fprintf(stderr,
                "%s: %llu file%s, %llu lines (%llu records, %llu bytes); %llu cells added, "
                "%llu updated\n",
                prog, (unsigned long long)stats.files, stats.files == 1 ? "" : "s",
                (unsigned long long)stats.lines, (unsigned long long)stats.records,
                (unsigned long long)stats.bytes, (unsigned long long)cs.cells_added,
                (unsigned long long)cs.cells_updated);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    options o = {20, FDX_DEFAULT_MAX_LINE, 10000, 0};
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    return run(argv[optind], argv + optind + 1, argc - optind - 1, &o);
}
