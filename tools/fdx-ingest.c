/* fdx-ingest: adds JSONL feeds to a store, all paths in one transaction. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
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
           "  --at WHEN            the capture time of this ingest, for backfills (default\n"
           "                       now): YYYY-MM-DD (midnight UTC), an RFC 3339 UTC time\n"
           "                       such as 2026-10-01T12:00:00Z, or @UNIX_SECONDS\n"
           "  --daily-days N       keep daily history for the N days before the latest one\n"
           "                       (stored in DB; default 90), months before them\n"
           "  --skip-invalid       ingest the good lines; list and skip the bad ones\n"
           "  --rejects FILE       with --skip-invalid, copy every skipped line to FILE\n"
           "                       (replaced only when the ingest commits; never the\n"
           "                       store or an input)\n"
           "  --max-errors N       list at most N bad lines (default 20, 0 = all)\n"
           "  --max-line-bytes N   reject lines longer than N bytes (default %zu)\n"
           "  --max-depth N        reject JSON nested deeper than N levels (default %d)\n"
           "  --busy-timeout MS    wait up to MS ms for another writer (default 10000;\n"
           "                       0: fail at once)\n"
           "  --threads N          decoding threads (default 0: one per CPU; 1: none)\n"
           "  -q, --quiet          no summary on success, no progress unless --progress\n"
           "      --progress       show progress on stderr even when it is not a terminal\n"
           "      --no-progress    never show progress (default: when stderr is a terminal)\n"
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
    tool_common co;
    int has_at;
    long long at;
    unsigned long long daily_days;
} options;

/* Lines of wire schema 1 are told once per file (say_schema1), not listed. */
typedef struct schema1 {
    char file[1024];
    unsigned long long first, last, n;
} schema1;

typedef struct diag {
    unsigned long long shown;
    unsigned long long total;
    unsigned long long cap;
    unsigned long long old_lines; /* of schema 1, told per file */
    schema1 old;
} diag;

static void say_schema1(schema1 *o)
{
    if (!o->n)
        return;
    char lines[96];
    if (o->first == o->last)
        snprintf(lines, sizeof lines, "line %llu", o->first);
    else if (o->last - o->first + 1 == o->n)
        snprintf(lines, sizeof lines, "lines %llu..%llu", o->first, o->last);
    else
        snprintf(lines, sizeof lines, "the first line %llu, the last %llu", o->first, o->last);
    tool_say("%s: %llu line%s of wire schema 1 (%s): records from before the", o->file, o->n,
             o->n == 1 ? "" : "s", lines);
    fprintf(stderr,
            "  hardware stamp \"hw\", which fdx (wire schema %d) needs. Convert such a feed by\n"
            "  stamping it with the hardware it was recorded on (docs/FORMAT.md), e.g.\n"
            "  jq -c '.schema = 2 | .hw = {\"compute_capability\": [8, 9], \"hardware_sku\":\n"
            "  \"NVIDIA GeForce RTX 4090\", \"driver_version\": \"550.54\"}' OLD > NEW\n",
            FDX_WIRE_SCHEMA);
    o->n = 0;
}

/* Whether where ("file:line") is a line of the file counted. */
static int in_counted_file(const schema1 *o, const char *where)
{
    const char *colon = strrchr(where, ':');
    size_t n = colon ? (size_t)(colon - where) : strlen(where);
    return o->n && strlen(o->file) == n && strncmp(o->file, where, n) == 0;
}

/* Takes a schema-1 line of where ("file:line") into the file's count. */
static int take_schema1(schema1 *o, const char *where, const char *reason)
{
    const char *colon = strrchr(where, ':');
    if (!colon || strncmp(reason, "schema: unsupported version 1 ", 30) != 0)
        return 0;
    size_t n = (size_t)(colon - where);
    unsigned long long line = strtoull(colon + 1, NULL, 10);
    if (!in_counted_file(o, where))
        say_schema1(o);
    if (!o->n) {
        snprintf(o->file, sizeof o->file, "%.*s", (int)n, where);
        o->first = line;
    }
    o->last = line;
    o->n++;
    return 1;
}

static void on_error(void *ctx, const char *where, const char *reason)
{
    diag *d = ctx;
    tool_progress_break();
    d->total++;
    if (take_schema1(&d->old, where, reason)) {
        d->old_lines++;
        return;
    }
    if (!in_counted_file(&d->old, where)) /* one message a file, whatever comes between */
        say_schema1(&d->old);
    if (d->cap == 0 || d->shown < d->cap) {
        tool_say("%s: %s", where, reason);
        d->shown++;
    }
}

static void on_warning(void *ctx, const char *where, const char *message)
{
    (void)ctx;
    tool_progress_break();
    tool_say("%s: warning: %s: %s", prog, where, message);
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
        TOOL_QUIET_LONG,
        TOOL_PROGRESS_LONGS,
        {"at", required_argument, NULL, 'a'},
        {"daily-days", required_argument, NULL, 'D'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c, rc = 0;
    opterr = 0;
    unsigned char seen[256] = {0};
    while (rc == 0 && (c = getopt_long(argc, argv, ":qhV", longs, NULL)) != -1) {
        if ((rc = tool_value_once(prog, longs, c, "", seen)) != 0)
            break;
        switch (c) {
        case 'e': rc = parse_number("max-errors", optarg, 0, 1ull << 40, &o->max_errors); break;
        case 'l':
            rc = parse_number("max-line-bytes", optarg, 1, FDX_MAX_LINE_LIMIT, &o->max_line);
            break;
        case 'd':
            rc = parse_number("max-depth", optarg, 1, FDX_MAX_DEPTH_LIMIT, &o->max_depth);
            break;
        case 'b': rc = parse_number("busy-timeout", optarg, 0, 1ull << 30, &o->busy_ms); break;
        case 't': rc = parse_number("threads", optarg, 0, FDX_MAX_THREADS, &o->threads); break;
        case 'r':
            if (!*optarg)
                return tool_usage_error(prog, "--run-id: must not be empty");
            o->run_id = optarg;
            break;
        case 'j': o->rejects = optarg; break;
        case 's': o->skip_invalid = 1; break;
        case 'a':
            rc = tool_parse_when(prog, "at", optarg, &o->at);
            o->has_at = 1;
            break;
        case 'D':
            rc = parse_number("daily-days", optarg, 1, FDX_MAX_DAILY_DAYS, &o->daily_days);
            break;
        case 'h': usage(); return -1;
        case 'V': tool_version(prog); return -1;
        default: rc = tool_common_option(prog, c, argv, &o->co); break;
        }
    }
    if (rc)
        return rc;
    if (o->rejects && !o->skip_invalid)
        return tool_usage_error(prog, "--rejects needs --skip-invalid");
    if (argc - optind < 2)
        return tool_usage_error(prog, "expected DB and at least one PATH");
    if ((rc = tool_check_nonempty(prog, argv + optind + 1, argc - optind - 1, "a PATH")) != 0)
        return rc;
    int stdins = 0; /* read to its end once, a second - would read nothing */
    for (int i = optind + 1; i < argc; i++)
        stdins += strcmp(argv[i], "-") == 0;
    if (stdins > 1)
        return tool_usage_error(prog, "standard input (-) given more than once: it is read once");
    if (stdins && tool_stdin_closed())
        return tool_usage_error(prog, "standard input (-) is closed: give a feed to read");
    return tool_check_store_arg(prog, argv[optind], "[OPTION]... DB PATH...");
}

/* Under --run-id: 1 when this run was ingested before (and says what to do). */
static int already_ingested(fdx_store *db, const char *dbpath, char **paths, int n,
                            const options *o, int *rc)
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
        tool_say("%s: run id '%s' was already ingested at %s (ledger id %lld); nothing to do", prog,
                 o->run_id, e.committed_at, (long long)e.id);
        return 1;
    }
    *rc = FDX_EDATA;
    tool_error(prog,
               "%s: run id '%s' was already ingested at %s (ledger id %lld) with different "
               "content; use a new run id for new data",
               dbpath, o->run_id, e.committed_at, (long long)e.id);
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
    opts.all_or_nothing = 1; /* any failure rolls the whole invocation back */
    int rc = fdx_store_ingest_paths(db, (const char *const *)paths, (size_t)n, &opts, stats);
    if (rc != FDX_OK && rc != FDX_EDATA)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    return rc;
}

static void summarise(const fdx_ingest_stats *st, const fdx_commit_stats *cs, const diag *d,
                      const options *o)
{
    if (o->skip_invalid && d->total)
        tool_say("%s: skipped %llu bad line%s%s%s", prog, d->total, d->total == 1 ? "" : "s",
                 o->rejects ? ", copied to " : "", o->rejects ? o->rejects : "");
    if (o->co.quiet)
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
    int rc = fdx_store_open_v2(dbpath, FDX_OPEN_CREATE, (int)o->busy_ms, db);
    if (rc == FDX_OK)
        rc = fdx_store_begin(*db);
    if (rc == FDX_OK && o->run_id)
        rc = fdx_store_set_run_id(*db, o->run_id);
    if (rc == FDX_OK && o->has_at)
        rc = fdx_store_set_time(*db, (int64_t)o->at);
    if (rc == FDX_OK && o->daily_days)
        rc = fdx_store_set_daily_days(*db, (int)o->daily_days);
    if (rc != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(*db));
    return rc;
}

/* The store commits only once the rejects are durable; they replace the old
 * file only after it has (a kill in between keeps the old file: see README). */
static int commit(fdx_store *db, fdx_rejects *rejects, fdx_commit_stats *cs)
{
    if (rejects && fdx_rejects_sync(rejects) != FDX_OK) {
        tool_error(prog, "%s", fdx_rejects_errmsg(rejects));
        return FDX_EIO;
    }
    int rc = fdx_store_commit(db, cs);
    if (rc != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    else if (rejects && fdx_rejects_commit(rejects) != FDX_OK)
        tool_error(prog, "%s (the store is committed; the skipped lines are listed above)",
                   fdx_rejects_errmsg(rejects));
    return rc;
}

static int run(const char *dbpath, char **paths, int n, const options *o, fdx_rejects *rejects)
{
    fdx_store *db;
    fdx_ingest_stats stats = {0};
    fdx_commit_stats cs = {0};
    FILE *stream = NULL;
    diag d = {0, 0, o->max_errors, 0, {"", 0, 0, 0}};
    int bad_lines = 0;
    int rc = start(dbpath, o, &db);
    if (rc != FDX_OK) { /* said by start: a refused run id is not bad lines */
        fdx_store_close(db);
        return EXIT_FAIL;
    }
    if (o->run_id && already_ingested(db, dbpath, paths, n, o, &rc)) {
        if (rc != FDX_OK && rc != FDX_EDATA)
            tool_error(prog, "%s", fdx_store_errmsg(db));
        fdx_store_close(db);
        return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
    }
    if (rejects && (rc = fdx_rejects_start(rejects, &stream)) != FDX_OK)
        tool_error(prog, "%s", fdx_rejects_errmsg(rejects));
    if (rc == FDX_OK) {
        tool_progress_start(prog, db, &o->co);
        rc = ingest_all(db, paths, n, o, &d, stream, &stats);
        bad_lines = rc == FDX_EDATA;
        tool_progress_end(stats.records + stats.bad_lines);
        say_schema1(&d.old);
    }
    if (rc == FDX_OK)
        rc = commit(db, rejects, &cs);
    /* A commit's notice is said. It comes with a commit that changed nothing
     * (another writer committed the same run id meanwhile: no summary) or
     * with one that took effect (a PostgreSQL store whose working copy could
     * not follow it: the summary follows). */
    int noticed = rc == FDX_OK && *fdx_store_notice(db);
    int noop = noticed && fdx_store_notice_kind(db) == FDX_NOTICE_NOTHING_DONE;
    if (noticed)
        tool_say("%s: %s", prog, fdx_store_notice(db));
    char shown[4096];
    snprintf(shown, sizeof shown, "%s", db ? fdx_store_name(db) : dbpath);
    fdx_store_close(db); /* rolls back anything uncommitted */
    if ((rc == FDX_OK || rc == FDX_EDATA) && d.total - d.old_lines > d.shown)
        fprintf(stderr, "... and %llu more bad lines\n", d.total - d.old_lines - d.shown);
    if (rc == FDX_EDATA && bad_lines) { /* a commit's refusal was said by commit() */
        tool_error(prog, "%llu bad line%s: nothing ingested, %s unchanged", d.total,
                   d.total == 1 ? "" : "s", shown);
    }
    if (rc != FDX_OK)
        return EXIT_FAIL;
    if (!noop)
        summarise(&stats, &cs, &d, o);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    tool_tune_process();
    options o = {20,
                 FDX_DEFAULT_MAX_LINE,
                 FDX_DEFAULT_MAX_DEPTH,
                 10000,
                 0,
                 NULL,
                 NULL,
                 0,
                 TOOL_COMMON_INIT,
                 0,
                 0,
                 0};
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? tool_finish_stdout(prog, EXIT_OK) : rc;
    fdx_use_fast_json_allocator();
    char **paths = argv + optind + 1;
    int n = argc - optind - 1;
    fdx_rejects *rejects = NULL;
    if (o.rejects && (rc = fdx_rejects_open(o.rejects, argv[optind], (const char *const *)paths,
                                            (size_t)n, &rejects)) != FDX_OK) {
        tool_error(prog, "%s", fdx_rejects_errmsg(rejects));
        fdx_rejects_close(rejects);
        return rc == FDX_EMISUSE ? EXIT_USAGE : EXIT_FAIL;
    }
    rc = run(argv[optind], paths, n, &o, rejects);
    fdx_rejects_close(rejects);
    return rc;
}
