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
           "Every ingest is recorded in the store's ingest_ledger table.\n"
           "\n"
           "Options:\n"
           "  --run-id ID          ingest exactly once: if ID was ingested before, do nothing\n"
           "                       (same content) or fail (different content)\n"
           "  --skip-invalid       ingest the good lines; list and skip the bad ones\n"
           "  --rejects FILE       with --skip-invalid, copy every skipped line to FILE\n"
           "  --max-errors N       list at most N bad lines (default 20, 0 = all)\n"
           "  --max-line-bytes N   reject lines longer than N bytes (default %zu)\n"
           "  --max-depth N        reject JSON nested deeper than N levels (default %d)\n"
           "  --busy-timeout MS    wait up to MS ms for another writer (default 10000)\n"
           "  --threads N          decoding threads (default 0: one per CPU; 1: none)\n"
           "  -q, --quiet          no summary on success\n"
           "  -h, --help           show this help\n"
           "  -V, --version        show the version\n"
           "\n"
           "Exit status: 0 ingested (or already ingested under --run-id), 1 bad data or\n"
           "I/O failure (DB unchanged), 2 usage error.\n",
           prog, FDX_DEFAULT_MAX_LINE, FDX_DEFAULT_MAX_DEPTH);
}

typedef struct options {
    unsigned long long max_errors;
    unsigned long long max_line;
    unsigned long long max_depth;
    unsigned long long busy_ms;
    unsigned long long threads;
    const char *run_id;
    const char *rejects;
    int skip_invalid;
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

static void on_warning(void *ctx, const char *where, const char *message)
{
    (void)ctx;
    fprintf(stderr, "%s: warning: %s: %s\n", prog, where, message);
}

static int parse_number(const char *name, const char *arg, unsigned long long lo,
                        unsigned long long hi, unsigned long long *out)
{
    if (tool_parse_size(arg, hi, out) || *out < lo)
        return tool_usage_error(prog, "--%s: expected %llu to %llu, got '%s'", name, lo, hi, arg);
    return 0;
}

static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"max-errors", required_argument, NULL, 'e'},
        {"max-line-bytes", required_argument, NULL, 'l'},
        {"max-depth", required_argument, NULL, 'd'},
        {"busy-timeout", required_argument, NULL, 'b'},
        {"threads", required_argument, NULL, 't'},
        {"run-id", required_argument, NULL, 'r'},
        {"rejects", required_argument, NULL, 'j'},
        {"skip-invalid", no_argument, NULL, 's'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c, rc = 0;
    opterr = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, "qhV", longs, NULL)) != -1) {
        switch (c) {
        case 'e': rc = parse_number("max-errors", optarg, 0, 1ull << 40, &o->max_errors); break;
        case 'l':
            rc = parse_number("max-line-bytes", optarg, 1, FDX_MAX_LINE_LIMIT, &o->max_line);
            break;
        case 'd':
            rc = parse_number("max-depth", optarg, 1, FDX_MAX_DEPTH_LIMIT, &o->max_depth);
            break;
        case 'b': rc = parse_number("busy-timeout", optarg, 0, 1ull << 30, &o->busy_ms); break;
        case 't': rc = parse_number("threads", optarg, 0, 64, &o->threads); break;
        case 'r':
            if (!*optarg)
                return tool_usage_error(prog, "--run-id: must not be empty");
            o->run_id = optarg;
            break;
        case 'j': o->rejects = optarg; break;
        case 's': o->skip_invalid = 1; break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(); return -1;
        case 'V': tool_version(prog); return -1;
        default: return tool_usage_error(prog, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (rc)
        return rc;
    if (o->rejects && !o->skip_invalid)
        return tool_usage_error(prog, "--rejects needs --skip-invalid");
    if (argc - optind < 2)
        return tool_usage_error(prog, "expected DB and at least one PATH");
    return 0;
}

/* Under --run-id: 1 when this run was ingested before (and says what to do). */
static int already_ingested(fdx_store *db, char **paths, int n, const options *o, int *rc)
{
    fdx_ledger_entry e;
    int found;
    char hex[65];
    *rc = fdx_store_find_run(db, o->run_id, &e, &found);
    if (*rc != FDX_OK || !found)
        return *rc != FDX_OK;
    *rc = fdx_store_hash_paths(db, (const char *const *)paths, (size_t)n, hex);
    if (*rc != FDX_OK)
        return 1;
    if (strcmp(hex, e.content_hash) == 0) {
        fprintf(stderr,
                "%s: run id '%s' was already ingested at %s (ledger id %lld); nothing "
                "to do\n",
                prog, o->run_id, e.committed_at, (long long)e.id);
        return 1;
    }
    *rc = FDX_EDATA;
    tool_error(prog,
               "run id '%s' was already ingested at %s (ledger id %lld) with different "
               "content; use a new run id for new data",
               o->run_id, e.committed_at, (long long)e.id);
    return 1;
}

static int ingest_all(fdx_store *db, char **paths, int n, const options *o, diag *d, FILE *rejects,
                      fdx_ingest_stats *stats)
{
    fdx_ingest_opts opts = FDX_INGEST_OPTS_INIT;
    opts.on_error = on_error;
    opts.on_warning = on_warning;
    opts.ctx = d;
    opts.max_line_bytes = (size_t)o->max_line;
    opts.max_depth = (int)o->max_depth;
    opts.skip_invalid = o->skip_invalid;
    opts.rejects = rejects;
    opts.threads = (int)o->threads;
    int rc = fdx_store_ingest_paths(db, (const char *const *)paths, (size_t)n, &opts, stats);
    if (rc != FDX_OK && rc != FDX_EDATA)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    return rc;
}

static void summarise(const fdx_ingest_stats *st, const fdx_commit_stats *cs, const diag *d,
                      const options *o)
{
    if (o->skip_invalid && d->total)
        fprintf(stderr, "%s: skipped %llu bad line%s%s%s\n", prog, d->total,
                d->total == 1 ? "" : "s", o->rejects ? ", copied to " : "",
                o->rejects ? o->rejects : "");
    if (o->quiet)
        return;
    fprintf(stderr,
            "%s: %llu file%s, %llu lines (%llu records, %llu bytes); %llu cells added, %llu "
            "updated\n",
            prog, (unsigned long long)st->files, st->files == 1 ? "" : "s",
            (unsigned long long)st->lines, (unsigned long long)st->records,
            (unsigned long long)st->bytes, (unsigned long long)cs->cells_added,
            (unsigned long long)cs->cells_updated);
}

/* Opens the store and starts the transaction; nonzero on failure (reported). */
static int start(const char *dbpath, const options *o, fdx_store **db)
{
    int rc = fdx_store_open(dbpath, FDX_OPEN_CREATE, db);
    if (rc == FDX_OK)
        rc = fdx_store_set_busy_timeout(*db, (int)o->busy_ms);
    if (rc == FDX_OK)
        rc = fdx_store_begin(*db);
    if (rc == FDX_OK && o->run_id)
        rc = fdx_store_set_run_id(*db, o->run_id);
    if (rc != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(*db));
    return rc;
}

static int run(const char *dbpath, char **paths, int n, const options *o, FILE *rejects)
{
    fdx_store *db;
    fdx_ingest_stats stats = {0};
    fdx_commit_stats cs = {0};
    diag d = {0, 0, o->max_errors};
    int rc = start(dbpath, o, &db);
    if (rc == FDX_OK && o->run_id && already_ingested(db, paths, n, o, &rc)) {
        if (rc != FDX_OK && rc != FDX_EDATA)
            tool_error(prog, "%s", fdx_store_errmsg(db));
        fdx_store_close(db);
        return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
    }
    if (rc == FDX_OK)
        rc = ingest_all(db, paths, n, o, &d, rejects, &stats);
    if (rc == FDX_OK && (rc = fdx_store_commit(db, &cs)) != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    fdx_store_close(db); /* rolls back anything uncommitted */
    if ((rc == FDX_OK || rc == FDX_EDATA) && d.total > d.shown)
        fprintf(stderr, "... and %llu more bad lines\n", d.total - d.shown);
    if (rc == FDX_EDATA) {
        tool_error(prog, "%llu bad line%s: nothing ingested, %s unchanged", d.total,
                   d.total == 1 ? "" : "s", dbpath);
    }
    if (rc != FDX_OK)
        return EXIT_FAIL;
    summarise(&stats, &cs, &d, o);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    options o = {20, FDX_DEFAULT_MAX_LINE, FDX_DEFAULT_MAX_DEPTH, 10000, 0, NULL, NULL, 0, 0};
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    fdx_use_fast_json_allocator();
    FILE *rejects = NULL;
    if (o.rejects && !(rejects = fopen(o.rejects, "w"))) {
        tool_error(prog, "%s: cannot create: %m", o.rejects);
        return EXIT_FAIL;
    }
    rc = run(argv[optind], argv + optind + 1, argc - optind - 1, &o, rejects);
    if (rejects && fclose(rejects) != 0) {
        tool_error(prog, "%s: write failed: %m", o.rejects);
        rc = EXIT_FAIL;
    }
    return rc;
}
