/* fdx-report: one self-contained HTML page of what to write next. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "fdx.h"
#include "tool_util.h"

static const char *prog = "fdx-report";

static void usage(void)
{
    printf("Usage: %s [OPTION]... DB OUT.html\n"
           "Write OUT.html, one self-contained page (nothing fetched from the network)\n"
           "for deciding which kernel to write next, from the fdx store DB: the ledger\n"
           "summary, the demand ranking, misses by op and compute capability, per-key\n"
           "trends over the daily history with growth highlighted, and the dispatch\n"
           "regret list. OUT.html is replaced atomically.\n"
           "\n"
           "Options:\n"
           "  -n, --top N          rows per ranking (default 20)\n"
           "  --busy-timeout MS    wait up to MS ms for a writer (default 10000)\n"
           "  -q, --quiet          no summary on success\n"
           "  -h, --help           show this help\n"
           "  -V, --version        show the version\n"
           "\n"
           "Exit status: 0 written, 1 store or I/O failure (OUT.html unchanged), 2 usage\n"
           "error.\n",
           prog);
}

int main(int argc, char **argv)
{
    tool_tune_process();
    static const struct option longs[] = {
        {"top", required_argument, NULL, 'n'}, {"busy-timeout", required_argument, NULL, 'b'},
        {"quiet", no_argument, NULL, 'q'},     {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},   {NULL, 0, NULL, 0},
    };
    fdx_report_opts opts = FDX_REPORT_OPTS_INIT;
    unsigned long long top = 20, busy_ms = 10000;
    int c, quiet = 0;
    opterr = 0;
    tool_common co = TOOL_COMMON_INIT;
    unsigned char seen[256] = {0};
    while ((c = getopt_long(argc, argv, ":n:qhV", longs, NULL)) != -1) {
        int once = tool_value_once(prog, longs, c, "", seen);
        if (once)
            return once;
        switch (c) {
        case 'n':
            if (tool_parse_size(optarg, 100000, &top) || top == 0)
                return tool_usage_error(prog, "--top: not a number from 1 to 100000: '%s'", optarg);
            break;
        case 'b':
            if (tool_parse_size(optarg, 1ull << 30, &busy_ms))
                return tool_usage_error(prog, "--busy-timeout: not a number: '%s'", optarg);
            break;
        case 'q': quiet = 1; break;
        case 'h': usage(); return tool_finish_stdout(prog, EXIT_OK);
        case 'V': tool_version(prog); return tool_finish_stdout(prog, EXIT_OK);
        default: return tool_common_option(prog, c, argv, &co);
        }
    }
    if (argc - optind != 2)
        return tool_usage_error(prog, "expected DB and OUT.html");
    int bad = tool_check_store_arg(prog, argv[optind], "[OPTION]... DB OUT.html");
    if (!bad)
        bad = tool_check_nonempty(prog, argv + optind + 1, 1, "OUT.html");
    if (!bad && strcmp(argv[optind + 1], "-") == 0) /* a file named "-" is ./- */
        bad = tool_usage_error(prog, "OUT.html: '-': the page is a file, replaced atomically, "
                                     "not standard output");
    if (bad)
        return bad;
    opts.top = (int)top;
    fdx_use_fast_json_allocator(); /* every cell read is decoded to check it */
    fdx_store *db;
    int rc = tool_open_for_reading(prog, argv[optind], (int)busy_ms, &db);
    if (rc == FDX_OK && (rc = fdx_store_report(db, argv[optind + 1], &opts)) != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    else if (rc == FDX_OK && !quiet)
        tool_say("%s: wrote %s", prog, argv[optind + 1]);
    fdx_store_close(db);
    return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
}
