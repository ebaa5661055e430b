/* fdx-top: the miss demand ranking, as a table, as JSON, or as its SQL. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdx.h"
#include "tool_text.h"
#include "tool_util.h"

static const char *prog = "fdx-top";

static void usage(void)
{
    printf("Usage: %s [OPTION]... DB\n"
           "Rank what kernel authors should write next: misses per wanted structure key,\n"
           "most demanded first, from the fdx store DB.\n"
           "\n"
           "Options:\n"
           "  -n, --top N          show the N most demanded keys (default 20, 0 = all)\n"
           "      --cc X.Y         only devices of compute capability X.Y ('cpu': none)\n"
           "      --sku NAME       only this hardware SKU\n"
           "      --op NAME        only fallbacks for this op\n"
           "      --source NAME    only this fallback kernel source\n"
           "      --json           a JSON array, for scripts\n"
           "      --sql            print the query (with its parameters) for sqlite3\n"
           "  -q, --quiet          when a filter matches nothing, do not list the values\n"
           "                       that exist\n"
           "  -h, --help           show this help\n"
           "  -V, --version        show the version\n"
           "\n"
           "Exit status: 0 ranked, 1 store failure, 2 usage error.\n",
           prog);
}

typedef struct options {
    fdx_demand_filter filter;
    int json;
    int sql;
    tool_common co;
} options;

static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"top", required_argument, NULL, 'n'},
        {"cc", required_argument, NULL, 'c'},
        {"sku", required_argument, NULL, 's'},
        {"op", required_argument, NULL, 'o'},
        {"source", required_argument, NULL, 'k'},
        {"json", no_argument, NULL, 'j'},
        {"sql", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        TOOL_QUIET_LONG,
        {NULL, 0, NULL, 0},
    };
    unsigned long long top;
    int c, rc = 0;
    opterr = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":n:qhV", longs, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (tool_parse_size(optarg, 1ull << 40, &top))
                return tool_usage_error(prog, "--top: not a number: '%s'", optarg);
            o->filter.limit = (int64_t)top;
            break;
        case 'c': o->filter.compute_capability = optarg; break;
        case 's': o->filter.hardware_sku = optarg; break;
        case 'o': o->filter.op = optarg; break;
        case 'k': o->filter.kernel_source = optarg; break;
        case 'j': o->json = 1; break;
        case 'S': o->sql = 1; break;
        case 'h': usage(); return -1;
        case 'V': tool_version(prog); return -1;
        default: rc = tool_common_option(prog, c, argv, &o->co); break;
        }
    }
    if (rc)
        return rc;
    if (o->json && o->sql)
        return tool_usage_error(prog, "--json and --sql exclude each other");
    if (argc - optind != 1)
        return tool_usage_error(prog, "expected DB");
    return tool_check_store_arg(prog, argv[optind], "[OPTION]... DB");
}

/*
 * One sqlite3 shell line binding a named parameter to a text value or NULL.
 * The value is an SQL expression (see tool_sql_text) in one double-quoted
 * argument, so no byte of it can end the line or start a dot-command.
 */
static int print_param(const char *name, const char *value)
{
    if (!value) {
        printf(".parameter set %s NULL\n", name);
        return 0;
    }
    char *sql = tool_sql_text(value);
    if (!sql)
        return -1;
    printf(".parameter set %s \"", name);
    for (const char *p = sql; *p; p++) {
        if (*p == '"' || *p == '\\')
            putchar('\\');
        putchar(*p);
    }
    puts("\"");
    free(sql);
    return 0;
}

static int print_sql(const options *o)
{
    const fdx_demand_filter *f = &o->filter;
    puts(".parameter init");
    if (print_param(":cc", f->compute_capability) || print_param(":sku", f->hardware_sku) ||
        print_param(":op", f->op) || print_param(":source", f->kernel_source))
        return -1;
    printf(".parameter set :top %lld\n", f->limit > 0 ? (long long)f->limit : -1LL);
    fputs(fdx_demand_sql(), stdout);
    return 0;
}

/* Rows are collected, as shown (tool_visible), so that the table's columns
 * can be aligned. */
typedef struct rows {
    fdx_demand_row *v;
    size_t n;
    int oom;
    int json; /* values as JSON strings (tool_json_text), not as shown */
} rows;

static int collect(void *ctx, const fdx_demand_row *row)
{
    rows *r = ctx;
    fdx_demand_row *v = realloc(r->v, (r->n + 1) * sizeof *v);
    char *wanted = r->json ? tool_json_text(row->wanted) : tool_visible(row->wanted);
    char *ops = r->json ? tool_json_text(row->ops) : tool_visible(row->ops);
    if (!v || !wanted || !ops) {
        free(wanted);
        free(ops);
        if (v)
            r->v = v;
        r->oom = 1;
        return 1;
    }
    r->v = v;
    v[r->n] = *row;
    v[r->n].wanted = wanted;
    v[r->n++].ops = ops;
    return 0;
}

static int digits(uint64_t v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

static void print_table(const rows *r)
{
    int wm = 6, wf = 9, wd = 7, wo = 3;
    for (size_t i = 0; i < r->n; i++) {
        wm = digits(r->v[i].misses) > wm ? digits(r->v[i].misses) : wm;
        wf = digits(r->v[i].fallbacks) > wf ? digits(r->v[i].fallbacks) : wf;
        wd = digits(r->v[i].devices) > wd ? digits(r->v[i].devices) : wd;
        wo = tool_text_width(r->v[i].ops) > wo ? tool_text_width(r->v[i].ops) : wo;
    }
    printf("%4s  %*s  %*s  %*s  %-*s  %s\n", "rank", wm, "misses", wf, "fallbacks", wd, "devices",
           wo, "ops", "wanted");
    for (size_t i = 0; i < r->n; i++) {
        const fdx_demand_row *row = &r->v[i];
        printf("%4zu  %*llu  %*llu  %*llu  %s%*s  %s\n", i + 1, wm, (unsigned long long)row->misses,
               wf, (unsigned long long)row->fallbacks, wd, (unsigned long long)row->devices,
               row->ops, wo - tool_text_width(row->ops), "", row->wanted);
    }
}

static void print_json(const rows *r)
{
    putchar('[');
    for (size_t i = 0; i < r->n; i++) {
        const char *wanted = r->v[i].wanted, *ops = r->v[i].ops;
        printf("%s{\"wanted\":%s,\"misses\":%llu,\"fallbacks\":%llu,\"devices\":%llu,\"ops\":%s}",
               i ? ",\n " : "", wanted, (unsigned long long)r->v[i].misses,
               (unsigned long long)r->v[i].fallbacks, (unsigned long long)r->v[i].devices, ops);
    }
    puts("]");
}

/* Which values a filter can take, for an empty ranking: each filter given
 * whose value the store lacks is listed with the values it has. */
typedef struct known {
    const fdx_demand_filter *f;
    const char *filter; /* the one being listed */
    int matched;        /* its value exists */
    int listed;
    int oom;
} known;

static const char *filter_value(const fdx_demand_filter *f, const char *filter)
{
    return strcmp(filter, "cc") == 0    ? f->compute_capability
           : strcmp(filter, "sku") == 0 ? f->hardware_sku
           : strcmp(filter, "op") == 0  ? f->op
                                        : f->kernel_source;
}

static int find_value(void *ctx, const char *filter, const char *value)
{
    known *k = ctx;
    if (strcmp(filter, k->filter) == 0 && strcmp(value, filter_value(k->f, filter)) == 0)
        k->matched = 1;
    return 0;
}

static int list_value(void *ctx, const char *filter, const char *value)
{
    known *k = ctx;
    if (strcmp(filter, k->filter) != 0)
        return 0;
    char *shown = tool_visible(value);
    if (!shown) {
        k->oom = 1;
        return 1;
    }
    fprintf(stderr, "%s%s", k->listed++ ? ", " : "", shown);
    free(shown);
    return 0;
}

static int explain_empty(fdx_store *db, const fdx_demand_filter *f)
{
    static const char *const filters[] = {"cc", "sku", "op", "source"};
    int missing = 0;
    for (size_t i = 0; i < sizeof filters / sizeof *filters; i++) {
        const char *value = filter_value(f, filters[i]);
        known k = {f, filters[i], 0, 0, 0};
        if (!value)
            continue;
        if (fdx_store_filter_values(db, find_value, &k) != FDX_OK)
            return FDX_EIO;
        if (k.matched)
            continue;
        missing = 1;
        char *shown = tool_visible(value);
        fprintf(stderr, "%s: no miss has --%s %s; known: ", prog, filters[i], shown ? shown : "");
        free(shown);
        if (fdx_store_filter_values(db, list_value, &k) != FDX_OK)
            return FDX_EIO;
        fputs(k.listed ? "\n" : "none (the store holds no misses)\n", stderr);
        if (k.oom)
            return FDX_ENOMEM;
    }
    if (!missing && (f->compute_capability || f->hardware_sku || f->op || f->kernel_source))
        fprintf(stderr, "%s: each filter's value exists, but no miss matches them all\n", prog);
    return FDX_OK;
}

int main(int argc, char **argv)
{
    options o = {{NULL, NULL, NULL, NULL, 20}, 0, 0, TOOL_COMMON_INIT};
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (o.sql) {
        if (print_sql(&o) == 0)
            return EXIT_OK;
        tool_error(prog, "out of memory");
        return EXIT_FAIL;
    }
    fdx_store *db;
    rows r = {NULL, 0, 0, o.json};
    rc = tool_open_for_reading(prog, argv[optind], 10000, &db);
    if (rc == FDX_OK && (rc = fdx_store_demand(db, &o.filter, collect, &r)) != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    else if (rc == FDX_OK && r.oom)
        tool_error(prog, "out of memory"), rc = FDX_ENOMEM;
    else if (rc == FDX_OK && r.n == 0 && !o.co.quiet &&
             (rc = explain_empty(db, &o.filter)) != FDX_OK)
        tool_error(prog, "%s", rc == FDX_ENOMEM ? "out of memory" : fdx_store_errmsg(db));
    if (rc == FDX_OK && o.json)
        print_json(&r);
    else if (rc == FDX_OK)
        print_table(&r);
    for (size_t i = 0; i < r.n; i++) {
        free((char *)r.v[i].wanted);
        free((char *)r.v[i].ops);
    }
    free(r.v);
    fdx_store_close(db);
    return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
}
