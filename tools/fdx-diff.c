/* fdx-diff: per-cell count changes between two stores, as a table or JSON. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdx.h"
#include "tool_text.h"
#include "tool_util.h"

static const char *prog = "fdx-diff";

static void usage(void)
{
    printf("Usage: %s [OPTION]... A B\n"
           "Print how the count of every cell changed from the fdx store A to the store B\n"
           "(before and after a release, or two hosts), the largest change first. Cells\n"
           "with equal counts are left out; a cell missing from a store counts 0 there.\n"
           "Both stores are only read. The changes go to stdout, a summary to stderr.\n"
           "\n"
           "Options:\n"
           "  -n, --top N          show the N largest changes (default 20, 0 = all)\n"
           "      --json           a JSON array, for scripts\n"
           "  -q, --quiet          no summary (cells changed, rows shown) on stderr\n"
           "  -h, --help           show this help\n"
           "  -V, --version        show the version\n"
           "\n"
           "Exit status: 0 compared (whether or not anything changed), 1 store failure,\n"
           "2 usage error.\n",
           prog);
}

/* The rows kept, their strings as shown (tool_visible) so that the table's
 * columns align, or as JSON strings (tool_json_text). */
typedef struct rows {
    fdx_diff_row *v;
    size_t n, room;
    size_t cap;       /* rows wanted at most; 0: all */
    uint64_t changed; /* cells that changed, shown or not */
    int json;
    int oom;
} rows;

static void free_row(fdx_diff_row *r)
{
    const char **fields[] = {
        &r->kind,         &r->key,           &r->backend,         &r->op,
        &r->dtypes,       &r->kernel_source, &r->kernel_revision, &r->compute_capability,
        &r->hardware_sku, &r->driver_version};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        free((char *)*fields[i]);
}

/* The separators of the table's last column: a space, a slash, parentheses. */
#define SEPS " /()"

static int collect(void *ctx, const fdx_diff_row *row)
{
    rows *r = ctx;
    r->changed++;
    if (r->cap && r->n == r->cap)
        return 0;
    void *grown = r->v;
    if (tool_room(&grown, &r->room, r->n + 1, sizeof *r->v) != 0) {
        r->oom = 1;
        return 1;
    }
    fdx_diff_row *v = r->v = grown;
    fdx_diff_row *d = &v[r->n];
    *d = *row;
    d->kind = tool_row_text(row->kind, r->json, &r->oom);
    d->key = tool_shown(row->key, r->json, SEPS, &r->oom);
    d->backend = tool_shown(row->backend, r->json, SEPS, &r->oom);
    d->op = tool_shown(row->op, r->json, SEPS, &r->oom);
    d->dtypes = *row->dtypes ? tool_shown(row->dtypes, r->json, SEPS, &r->oom)
                             : tool_row_text(row->dtypes, r->json, &r->oom); /* () */
    d->kernel_source = tool_shown(row->kernel_source, r->json, SEPS, &r->oom);
    d->kernel_revision = tool_row_text(row->kernel_revision, r->json, &r->oom);
    d->compute_capability = tool_row_text(row->compute_capability, r->json, &r->oom);
    d->hardware_sku = tool_shown(row->hardware_sku, r->json, SEPS, &r->oom);
    d->driver_version = tool_shown(row->driver_version, r->json, SEPS, &r->oom);
    r->n++;
    return r->oom;
}

static void print_table(const rows *r)
{
    int wc = 6, wb = 6, wa = 5, wk = 4, wcc = 3;
    for (size_t i = 0; i < r->n; i++) {
        const fdx_diff_row *x = &r->v[i];
        wc = tool_wider(wc, snprintf(NULL, 0, "%+lld", (long long)x->change));
        wb = tool_wider(wb, snprintf(NULL, 0, "%llu", (unsigned long long)x->before));
        wa = tool_wider(wa, snprintf(NULL, 0, "%llu", (unsigned long long)x->after));
        wk = tool_wider(wk, tool_text_width(x->kind));
        wcc = tool_wider(wcc, tool_text_width(x->compute_capability));
    }
    printf("%*s  %*s  %*s  %-*s  %-*s  %s\n", wc, "change", wb, "before", wa, "after", wk, "kind",
           wcc, "cc", "key / backend/op(dtypes) / fallback or chosen kernel / device");
    for (size_t i = 0; i < r->n; i++) {
        const fdx_diff_row *x = &r->v[i];
        printf("%+*lld  %*llu  %*llu  %-*s  %-*s  %s  %s/%s(%s)  %s %s  %s %s\n", wc,
               (long long)x->change, wb, (unsigned long long)x->before, wa,
               (unsigned long long)x->after, wk, x->kind, wcc, x->compute_capability,
               x->key ? x->key : "(unkeyed)", x->backend, x->op, x->dtypes, x->kernel_source,
               x->kernel_revision, x->hardware_sku, x->driver_version);
    }
}

static void print_json(const rows *r)
{
    putchar('[');
    for (size_t i = 0; i < r->n; i++) {
        const fdx_diff_row *x = &r->v[i];
        const char *names[] = {
            "kind",         "key",           "backend",         "op",
            "dtypes",       "kernel_source", "kernel_revision", "compute_capability",
            "hardware_sku", "driver_version"};
        const char *values[] = {
            x->kind,         x->key,           x->backend,         x->op,
            x->dtypes,       x->kernel_source, x->kernel_revision, x->compute_capability,
            x->hardware_sku, x->driver_version};
        fputs(i ? ",\n {" : "{", stdout);
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            printf("\"%s\":%s,", names[k], values[k] ? values[k] : "null");
        printf("\"before\":%llu,\"after\":%llu,\"change\":%lld}", (unsigned long long)x->before,
               (unsigned long long)x->after, (long long)x->change);
    }
    puts("]");
}

int main(int argc, char **argv)
{
    tool_tune_process();
    static const struct option longs[] = {
        {"top", required_argument, NULL, 'n'},
        {"json", no_argument, NULL, 'j'},
        TOOL_QUIET_LONG,
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    unsigned long long top = 20;
    tool_common co = TOOL_COMMON_INIT;
    int c, json = 0, rc = 0;
    opterr = 0;
    unsigned char seen[256] = {0};
    while (rc == 0 && (c = getopt_long(argc, argv, ":n:qhV", longs, NULL)) != -1) {
        if ((rc = tool_value_once(prog, longs, c, "", seen)) != 0)
            break;
        switch (c) {
        case 'n':
            if (tool_parse_size(optarg, 1ull << 40, &top))
                return tool_usage_error(prog, "--top: not a number: '%s'", optarg);
            break;
        case 'j': json = 1; break;
        case 'h': usage(); return tool_finish_stdout(prog, EXIT_OK);
        case 'V': tool_version(prog); return tool_finish_stdout(prog, EXIT_OK);
        default: rc = tool_common_option(prog, c, argv, &co); break;
        }
    }
    if (rc)
        return rc;
    if (argc - optind != 2)
        return tool_usage_error(prog, "expected A and B");
    for (int i = optind; i < argc; i++)
        if ((rc = tool_check_store_arg(prog, argv[i], "[OPTION]... A B")) != 0)
            return rc;
    fdx_store *db;
    rows r = {.cap = (size_t)top, .json = json};
    rc = tool_open_for_reading(prog, argv[optind], 10000, &db);
    if (rc == FDX_OK && (rc = fdx_store_diff(db, argv[optind + 1], collect, &r)) != FDX_OK)
        tool_error(prog, "%s", r.oom ? "out of memory" : fdx_store_errmsg(db));
    else if (rc == FDX_OK && r.oom)
        tool_error(prog, "out of memory"), rc = FDX_ENOMEM;
    else if (rc == FDX_OK)
        json ? print_json(&r) : print_table(&r);
    if (rc == FDX_OK && tool_finish_stdout(prog, EXIT_OK) != EXIT_OK)
        rc = FDX_EIO;
    if (rc == FDX_OK && !co.quiet)
        fprintf(stderr, "%s: %llu cell%s changed, %zu shown\n", prog, (unsigned long long)r.changed,
                r.changed == 1 ? "" : "s", r.n);
    for (size_t i = 0; i < r.n; i++)
        free_row(&r.v[i]);
    free(r.v);
    fdx_store_close(db);
    return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
}
