/* fdx-prune: removes cells by filter from a store, recorded in its ledger. */
#include <getopt.h>
#include <stdio.h>

#include "fdx.h"
#include "tool_util.h"

static const char *prog = "fdx-prune";

static void usage(void)
{
    printf("Usage: %s [OPTION]... DB\n"
           "Remove from the fdx store DB the cells (and their history) that pass every\n"
           "filter given, at least one: an old driver, a retired kernel revision, cells\n"
           "not seen since a date. The prune is recorded in the ledger (kind 'prune',\n"
           "details in prune_log), so fdx-merge tells a pruned store from the full one.\n"
           "\n"
           "Options:\n"
           " Filters, at least one (a cell is removed when it passes all given):\n"
           "      --driver V       cells of this driver version V\n"
           "      --revision HEX   cells of this kernel revision (16 hex digits)\n"
           "      --source NAME    cells of this kernel source\n"
           "      --op NAME        cells of this op\n"
           "      --cc X.Y         cells of devices of compute capability X.Y ('cpu': none)\n"
           "      --sku NAME       cells of this hardware SKU\n"
           "      --before WHEN    cells with no observation on WHEN's UTC day or later\n"
           "                       (WHEN: YYYY-MM-DD, midnight UTC; an RFC 3339 UTC time\n"
           "                       such as 2026-10-01T12:00:00Z; or @UNIX_SECONDS); a month\n"
           "                       rolled up counts as observed through its last day\n"
           " Other options:\n"
           "  -n, --dry-run        say what would be removed; change nothing\n"
           "      --busy-timeout MS  wait up to MS ms for another writer (default 10000)\n"
           "  -q, --quiet          no summary on success\n"
           "  -h, --help           show this help\n"
           "  -V, --version        show the version\n"
           "\n"
           "Exit status: 0 pruned (or nothing matched), 1 failure (DB unchanged), 2 usage\n"
           "error.\n",
           prog);
}

/* A cell has one value of each: a second --op would silently replace the
 * first, and the prune remove other cells than the user read back. */
#define ONE_VALUE "a prune takes one value of each filter (run it once per value)"

static int given_twice(int given, const char *name)
{
    return tool_once(prog, given, name, ONE_VALUE);
}

static int set_once(const char **slot, const char *name, const char *value)
{
    return tool_set_once(prog, slot, name, value, ONE_VALUE);
}

int main(int argc, char **argv)
{
    tool_tune_process();
    static const struct option longs[] = {
        {"driver", required_argument, NULL, 'd'},
        {"revision", required_argument, NULL, 'r'},
        {"source", required_argument, NULL, 's'},
        {"op", required_argument, NULL, 'o'},
        {"cc", required_argument, NULL, 'c'},
        {"sku", required_argument, NULL, 'k'},
        {"before", required_argument, NULL, 'B'},
        {"dry-run", no_argument, NULL, 'n'},
        {"busy-timeout", required_argument, NULL, 'b'},
        TOOL_QUIET_LONG,
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    fdx_prune_filter f = {NULL, NULL, NULL, NULL, NULL, NULL, 0};
    unsigned long long busy_ms = 10000;
    long long before;
    tool_common co = TOOL_COMMON_INIT;
    int c, dry = 0, rc = 0;
    opterr = 0;
    unsigned char seen[256] = {0};
    while (rc == 0 && (c = getopt_long(argc, argv, ":nqhV", longs, NULL)) != -1) {
        if ((rc = tool_value_once(prog, longs, c, "drsockB", seen)) != 0)
            break;
        switch (c) {
        case 'd': rc = set_once(&f.driver_version, "driver", optarg); break;
        case 'r': rc = set_once(&f.kernel_revision, "revision", optarg); break;
        case 's': rc = set_once(&f.kernel_source, "source", optarg); break;
        case 'o': rc = set_once(&f.op, "op", optarg); break;
        case 'c': rc = set_once(&f.compute_capability, "cc", optarg); break;
        case 'k': rc = set_once(&f.hardware_sku, "sku", optarg); break;
        case 'B':
            if ((rc = given_twice(f.before != 0, "before")) != 0)
                break;
            if (tool_parse_when(prog, "before", optarg, &before))
                return EXIT_USAGE;
            f.before = before ? before : 1;
            break;
        case 'n': dry = 1; break;
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
    if (argc - optind != 1)
        return tool_usage_error(prog, "expected one DB, got %d arguments", argc - optind);
    if ((rc = tool_check_store_arg(prog, argv[optind], "[OPTION]... DB")) != 0)
        return rc;
    char why[512];
    if (fdx_prune_filter_check(&f, why, sizeof why) != FDX_OK)
        return tool_usage_error(prog, "%s", why);
    fdx_store *db;
    fdx_prune_stats ps = {0, 0, 0};
    /* a dry run changes nothing: it neither makes, migrates nor converts */
    rc = fdx_store_open_v2(argv[optind], dry ? FDX_OPEN_AS_IS : 0, (int)busy_ms, &db);
    if (rc == FDX_OK)
        rc = fdx_store_begin(db);
    /* A real prune reports what its commit removed (a PostgreSQL store's
     * counts come from the push's transaction); a dry run what it would. */
    if (rc == FDX_OK)
        rc = fdx_store_prune(db, &f, dry ? &ps : NULL);
    if (rc == FDX_OK)
        rc = dry ? fdx_store_rollback(db) : fdx_store_commit(db, NULL);
    if (rc == FDX_OK && !dry)
        rc = fdx_store_pruned(db, &ps);
    if (rc != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    else if (!co.quiet || dry)
        fprintf(stderr, "%s: %s %llu miss cell%s and %llu dispatch cell%s (%llu observations)\n",
                prog, dry ? "would remove" : "removed", (unsigned long long)ps.miss_cells,
                ps.miss_cells == 1 ? "" : "s", (unsigned long long)ps.dispatch_cells,
                ps.dispatch_cells == 1 ? "" : "s", (unsigned long long)ps.observations);
    fdx_store_close(db);
    return rc == FDX_OK ? EXIT_OK : rc == FDX_EMISUSE ? EXIT_USAGE : EXIT_FAIL;
}
