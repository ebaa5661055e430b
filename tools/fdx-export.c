/* fdx-export: writes a store back out as the sorted JSONL feeds. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "fdx.h"
#include "tool_util.h"

static const char *prog = "fdx-export";

static void usage(void)
{
    printf("Usage: %s [OPTION]... DB OUTDIR\n"
           "  or:  %s [OPTION]... --kind KIND DB -\n"
           "Write OUTDIR/misses.jsonl and OUTDIR/dispatches.jsonl from the fdx store DB,\n"
           "or, with OUTDIR '-', the one feed --kind names to standard output.\n"
           "\n"
           "Both files come from one consistent read of DB, one line per cell in a total\n"
           "order, and each replaces its predecessor atomically. OUTDIR is created when\n"
           "missing; DB must exist (export only reads it: it never creates, migrates or\n"
           "converts a store). Every cell is checked; a store fdx did not write is\n"
           "refused, so every line written is one fdx-ingest accepts. A summary goes to\n"
           "stderr.\n"
           "\n"
           "Options:\n"
           "      --kind KIND      with OUTDIR '-': the feed to write, misses or dispatches\n"
           "      --busy-timeout MS  wait up to MS ms for a locked store (default 10000)\n"
           "  -q, --quiet          no summary on success, no progress unless --progress\n"
           "      --progress       show progress on stderr even when it is not a terminal\n"
           "      --no-progress    never show progress (default: when stderr is a terminal)\n"
           "  -h, --help           show this help\n"
           "  -V, --version        show the version\n"
           "\n"
           "Exit status: 0 exported, 1 I/O or store failure, 2 usage error.\n",
           prog, prog);
}

typedef struct options {
    unsigned long long busy_ms;
    const char *kind;
    tool_common co;
} options;

static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"busy-timeout", required_argument, NULL, 'b'},
        {"kind", required_argument, NULL, 'k'},
        TOOL_QUIET_LONG,
        TOOL_PROGRESS_LONGS,
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
        case 'b':
            if (tool_parse_size(optarg, 1ull << 30, &o->busy_ms))
                return tool_usage_error(prog, "--busy-timeout: not a number: '%s'", optarg);
            break;
        case 'k':
            if (strcmp(optarg, "misses") != 0 && strcmp(optarg, "dispatches") != 0)
                return tool_usage_error(prog, "--kind: expected misses or dispatches, got '%s'",
                                        optarg);
            o->kind = optarg;
            break;
        case 'h': usage(); return -1;
        case 'V': tool_version(prog); return -1;
        default: rc = tool_common_option(prog, c, argv, &o->co); break;
        }
    }
    if (rc)
        return rc;
    if (argc - optind != 2)
        return tool_usage_error(prog, "expected DB and OUTDIR");
    const char *out = argv[optind + 1];
    if (!*out)
        return tool_usage_error(prog, "OUTDIR is empty");
    if (strcmp(out, "-") == 0 && !o->kind)
        return tool_usage_error(prog, "OUTDIR '-' writes one feed to standard output: say which "
                                      "with --kind misses or --kind dispatches");
    if (strcmp(out, "-") != 0 && o->kind)
        return tool_usage_error(prog, "--kind goes with OUTDIR '-' (a directory gets both feeds)");
    return tool_check_store_arg(prog, argv[optind], "[OPTION]... DB OUTDIR");
}

int main(int argc, char **argv)
{
    tool_tune_process();
    options o = {10000, NULL, TOOL_COMMON_INIT};
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? tool_finish_stdout(prog, EXIT_OK) : rc;
    const char *outdir = argv[optind + 1];
    fdx_use_fast_json_allocator(); /* every cell read is decoded to check it */
    fdx_store *db;
    fdx_export_stats st = {0};
    uint64_t lines = 0;
    rc = tool_open_for_reading(prog, argv[optind], (int)o.busy_ms, &db);
    if (rc == FDX_OK) {
        tool_progress_start(prog, db, &o.co);
        rc = o.kind ? fdx_store_export_kind(db, o.kind, stdout, &lines)
                    : fdx_store_export(db, outdir, &st);
        tool_progress_end(o.kind ? lines : st.miss_lines + st.dispatch_lines);
        if (rc != FDX_OK)
            tool_error(prog, "%s", fdx_store_errmsg(db));
    }
    if (rc == FDX_OK && !o.co.quiet && o.kind)
        fprintf(stderr, "%s: %s.jsonl: %llu lines, to standard output\n", prog, o.kind,
                (unsigned long long)lines);
    else if (rc == FDX_OK && !o.co.quiet)
        fprintf(stderr, "%s: misses.jsonl: %llu lines\n%s: dispatches.jsonl: %llu lines\n", prog,
                (unsigned long long)st.miss_lines, prog, (unsigned long long)st.dispatch_lines);
    fdx_store_close(db);
    return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
}
