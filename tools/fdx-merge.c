/* fdx-merge: folds the stores of many hosts into one, in one transaction. */
#include <getopt.h>
#include <stdio.h>

#include "fdx.h"
#include "tool_util.h"

static const char *prog = "fdx-merge";

static void usage(void)
{
    printf("Usage: %s [OPTION]... DST SRC...\n"
           "Fold the fdx stores SRC... (one per host, say) into the store DST, created\n"
           "when missing. Each source brings what it observed that DST does not hold\n"
           "yet: merging a store again brings what it gained since, a repeat is a\n"
           "no-op, and the order, grouping and timing of merges do not matter. Each\n"
           "dispatch cell keeps the candidates list set last.\n"
           "\n"
           "All sources go in one transaction: if any fails, DST is left unchanged (a\n"
           "DST this run created is removed). Sources are only read, and each must be\n"
           "an fdx store with the schema fdx creates and cells fdx would write.\n"
           "\n"
           "Options:\n"
           "  --busy-timeout MS    wait up to MS ms for another writer (default 10000)\n"
           "  -q, --quiet          no summary on success, no progress unless --progress\n"
           "      --progress       show progress on stderr even when it is not a terminal\n"
           "      --no-progress    never show progress (default: when stderr is a terminal)\n"
           "  -h, --help           show this help\n"
           "  -V, --version        show the version\n"
           "\n"
           "Exit status: 0 merged (or nothing to do), 1 a source not readable or not\n"
           "valid, or a failure (DST unchanged), 2 usage error.\n",
           prog);
}

int main(int argc, char **argv)
{
    tool_tune_process();
    static const struct option longs[] = {
        {"busy-timeout", required_argument, NULL, 'b'},
        TOOL_QUIET_LONG,
        TOOL_PROGRESS_LONGS,
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    unsigned long long busy_ms = 10000;
    tool_common co = TOOL_COMMON_INIT;
    int c, rc = 0;
    opterr = 0;
    unsigned char seen[256] = {0};
    while (rc == 0 && (c = getopt_long(argc, argv, ":qhV", longs, NULL)) != -1) {
        if ((rc = tool_value_once(prog, longs, c, "", seen)) != 0)
            break;
        switch (c) {
        case 'b':
            if (tool_parse_size(optarg, 1ull << 30, &busy_ms))
                return tool_usage_error(prog, "--busy-timeout: not a number: '%s'", optarg);
            break;
        case 'h': usage(); return tool_finish_stdout(prog, EXIT_OK);
        case 'V': tool_version(prog); return tool_finish_stdout(prog, EXIT_OK);
        default: rc = tool_common_option(prog, c, argv, &co); break;
        }
    }
    if (rc)
        return rc;
    if (argc - optind < 2)
        return tool_usage_error(prog, "expected DST and at least one SRC");
    if ((rc = tool_check_store_arg(prog, argv[optind], "[OPTION]... DST SRC...")) != 0)
        return rc;
    if ((rc = tool_check_nonempty(prog, argv + optind + 1, argc - optind - 1,
                                  "a source store's path")) != 0)
        return rc;
    fdx_use_fast_json_allocator(); /* every cell read is decoded to check it */
    fdx_store *db;
    fdx_merge_stats ms = {0};
    fdx_commit_stats cs = {0};
    rc = fdx_store_open(argv[optind], FDX_OPEN_CREATE, &db);
    if (rc == FDX_OK)
        rc = fdx_store_set_busy_timeout(db, (int)busy_ms);
    if (rc == FDX_OK)
        rc = fdx_store_begin(db);
    if (rc == FDX_OK)
        tool_progress_start(prog, db, &co);
    for (int i = optind + 1; rc == FDX_OK && i < argc; i++) {
        uint64_t skipped = ms.stores_skipped;
        rc = fdx_store_merge(db, argv[i], &ms);
        if (rc == FDX_OK && ms.stores_skipped > skipped && !co.quiet)
            tool_say("%s: %s", prog, fdx_store_notice(db));
    }
    tool_progress_end(ms.cells_read);
    if (rc == FDX_OK)
        rc = fdx_store_commit(db, &cs);
    if (rc != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    else if (!co.quiet)
        fprintf(stderr,
                "%s: %llu store%s merged, %llu already merged; %llu cells read, %llu "
                "added, %llu updated\n",
                prog, (unsigned long long)ms.stores_merged, ms.stores_merged == 1 ? "" : "s",
                (unsigned long long)ms.stores_skipped, (unsigned long long)ms.cells_read,
                (unsigned long long)cs.cells_added, (unsigned long long)cs.cells_updated);
    fdx_store_close(db);
    return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
}
