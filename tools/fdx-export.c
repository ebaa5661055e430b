/* fdx-export: writes a store back out as the sorted JSONL feeds. */
#include <getopt.h>
#include <stdio.h>

#include "fdx.h"
#include "tool_util.h"

static const char *prog = "fdx-export";

static void usage(void)
{
    printf("Usage: %s [OPTION]... DB OUTDIR\n"
           "Write OUTDIR/misses.jsonl and OUTDIR/dispatches.jsonl from the fdx store DB.\n"
           "\n"
           "Both files come from one consistent read of DB, one line per cell in a total\n"
           "order, and each replaces its predecessor atomically. OUTDIR is created when\n"
           "missing; DB must exist (export only reads it: it never creates, migrates or\n"
           "converts a store). Every cell is checked; a store fdx did not write is\n"
           "refused, so every line written is one fdx-ingest accepts.\n"
           "\n"
           "Options:\n"
           "  --busy-timeout MS   wait up to MS ms for a locked store (default 10000)\n"
           "  -h, --help          show this help\n"
           "  -V, --version       show the version\n"
           "\n"
           "Exit status: 0 exported, 1 I/O or store failure, 2 usage error.\n",
           prog);
}

int main(int argc, char **argv)
{
    static const struct option longs[] = {
        {"busy-timeout", required_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    unsigned long long busy_ms = 10000;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hV", longs, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (tool_parse_size(optarg, 1ull << 30, &busy_ms))
                return tool_usage_error(prog, "--busy-timeout: not a number: '%s'", optarg);
            break;
        case 'h': usage(); return EXIT_OK;
        case 'V': tool_version(prog); return EXIT_OK;
        default: return tool_usage_error(prog, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return tool_usage_error(prog, "expected DB and OUTDIR");
    if (!*argv[optind + 1])
        return tool_usage_error(prog, "OUTDIR is empty");
    fdx_use_fast_json_allocator(); /* every cell read is decoded to check it */
    fdx_store *db;
    fdx_export_stats st = {0};
    int rc = tool_open_for_reading(prog, argv[optind], (int)busy_ms, &db);
    if (rc == FDX_OK && (rc = fdx_store_export(db, argv[optind + 1], &st)) != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    else if (rc == FDX_OK)
        printf("misses.jsonl: %llu lines\ndispatches.jsonl: %llu lines\n",
               (unsigned long long)st.miss_lines, (unsigned long long)st.dispatch_lines);
    fdx_store_close(db);
    return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
}
