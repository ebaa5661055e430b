/* fdx-top: the miss demand ranking, as a table, as JSON, or as its SQL. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdx.h"
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
} options;

static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"top", required_argument, NULL, 'n'},    {"cc", required_argument, NULL, 'c'},
        {"sku", required_argument, NULL, 's'},    {"op", required_argument, NULL, 'o'},
        {"source", required_argument, NULL, 'k'}, {"json", no_argument, NULL, 'j'},
        {"sql", no_argument, NULL, 'q'},          {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
    };
    unsigned long long top;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "n:hV", longs, NULL)) != -1) {
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
        case 'q': o->sql = 1; break;
        case 'h': usage(); return -1;
        case 'V': tool_version(prog); return -1;
        default: return tool_usage_error(prog, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (o->json && o->sql)
        return tool_usage_error(prog, "--json and --sql exclude each other");
    if (argc - optind != 1)
        return tool_usage_error(prog, "expected DB");
    return 0;
}

/* One sqlite3 shell line binding a named parameter to a text value or NULL. */
static void print_param(const char *name, const char *value)
{
    if (!value) {
        printf(".parameter set %s NULL\n", name);
        return;
    }
    printf(".parameter set %s \"'", name);
    for (const char *p = value; *p; p++) {
        if (*p == '\'')
            fputs("''", stdout);
        else if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else
            putchar(*p);
    }
    puts("'\"");
}

static void print_sql(const options *o)
{
    const fdx_demand_filter *f = &o->filter;
    puts(".parameter init");
    print_param(":cc", f->compute_capability);
    print_param(":sku", f->hardware_sku);
    print_param(":op", f->op);
    print_param(":source", f->kernel_source);
    printf(".parameter set :top %lld\n", f->limit > 0 ? (long long)f->limit : -1LL);
    fputs(fdx_demand_sql(), stdout);
}

/* Rows are collected so that the table's columns can be aligned. */
typedef struct rows {
    fdx_demand_row *v;
    size_t n;
    int oom;
} rows;

static int collect(void *ctx, const fdx_demand_row *row)
{
    rows *r = ctx;
    fdx_demand_row *v = realloc(r->v, (r->n + 1) * sizeof *v);
    char *wanted = strdup(row->wanted), *ops = strdup(row->ops);
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

/* Display width of UTF-8 text, counting code points. */
static int width(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void print_table(const rows *r)
{
    int wm = 6, wf = 9, wd = 7, wo = 3;
    for (size_t i = 0; i < r->n; i++) {
        wm = digits(r->v[i].misses) > wm ? digits(r->v[i].misses) : wm;
        wo = width(r->v[i].ops) > wo ? width(r->v[i].ops) : wo;
    }
    printf("%4s  %*s  %*s  %*s  %-*s  %s\n", "rank", wm, "misses", wf, "fallbacks", wd, "devices",
           wo, "ops", "wanted");
    for (size_t i = 0; i < r->n; i++) {
        const fdx_demand_row *row = &r->v[i];
        printf("%4zu  %*llu  %*llu  %*llu  %s%*s  %s\n", i + 1, wm, (unsigned long long)row->misses,
               wf, (unsigned long long)row->fallbacks, wd, (unsigned long long)row->devices,
               row->ops, wo - width(row->ops), "", row->wanted);
    }
}

static int print_json(const rows *r)
{
    putchar('[');
    for (size_t i = 0; i < r->n; i++) {
        char *wanted = fdx_json_string(r->v[i].wanted), *ops = fdx_json_string(r->v[i].ops);
        if (!wanted || !ops) {
            free(wanted);
            free(ops);
            return -1;
        }
        printf("%s{\"wanted\":%s,\"misses\":%llu,\"fallbacks\":%llu,\"devices\":%llu,\"ops\":%s}",
               i ? ",\n " : "", wanted, (unsigned long long)r->v[i].misses,
               (unsigned long long)r->v[i].fallbacks, (unsigned long long)r->v[i].devices, ops);
        free(wanted);
        free(ops);
    }
    puts("]");
    return 0;
}

int main(int argc, char **argv)
{
    options o = {FDX_DEMAND_FILTER_INIT, 0, 0};
    o.filter.limit = 20;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (o.sql) {
        print_sql(&o);
        return EXIT_OK;
    }
    fdx_store *db;
    rows r = {NULL, 0, 0};
    rc = tool_open_for_reading(prog, argv[optind], 10000, &db);
    if (rc == FDX_OK && (rc = fdx_store_demand(db, &o.filter, collect, &r)) != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    else if (rc == FDX_OK && (r.oom || (o.json ? print_json(&r) : (print_table(&r), 0)) != 0))
        tool_error(prog, "out of memory"), rc = FDX_ENOMEM;
    for (size_t i = 0; i < r.n; i++) {
        free((char *)r.v[i].wanted);
        free((char *)r.v[i].ops);
    }
    free(r.v);
    fdx_store_close(db);
    return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
}
