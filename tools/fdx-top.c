/* fdx-top: the miss demand ranking (totals, a window of days, or growth), as a
 * table, as JSON, or as its SQL. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
           "      --since WHEN     rank by the misses captured on WHEN's UTC day or later\n"
           "      --until WHEN     ... and before WHEN's UTC day\n"
           "      --growth N[d|w]  rank by growth: misses in the last N days (up to the\n"
           "                       latest day in the store, or before --until) against\n"
           "                       the N days before; keys new in the window are flagged\n"
           "                       WHEN: YYYY-MM-DD (midnight UTC), an RFC 3339 UTC time\n"
           "                       such as 2026-10-01T12:00:00Z, or @UNIX_SECONDS\n"
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
    int growth_days; /* 0: no growth ranking */
    int json;
    int sql;
    tool_common co;
} options;

/* --growth N, Nd or Nw; 0 on success. */
static int parse_span(const char *arg, int *days)
{
    char *end;
    if (*arg < '1' || *arg > '9')
        return -1;
    long n = strtol(arg, &end, 10);
    int unit = *end == 'w' ? 7 : 1;
    if ((*end && *end != 'd' && *end != 'w') || (*end && end[1]) || n > 100000)
        return -1;
    *days = (int)n * unit;
    return 0;
}

static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"top", required_argument, NULL, 'n'},
        {"cc", required_argument, NULL, 'c'},
        {"sku", required_argument, NULL, 's'},
        {"op", required_argument, NULL, 'o'},
        {"source", required_argument, NULL, 'k'},
        {"json", no_argument, NULL, 'j'},
        {"sql", no_argument, NULL, 'Q'},
        {"help", no_argument, NULL, 'h'},
        {"since", required_argument, NULL, 'S'},
        {"until", required_argument, NULL, 'U'},
        {"growth", required_argument, NULL, 'g'},
        {"version", no_argument, NULL, 'V'},
        TOOL_QUIET_LONG,
        {NULL, 0, NULL, 0},
    };
    unsigned long long top;
    long long when;
    int c, rc = 0;
    opterr = 0;
    unsigned char seen[256] = {0};
    while (rc == 0 && (c = getopt_long(argc, argv, ":n:qhV", longs, NULL)) != -1) {
        if ((rc = tool_value_once(prog, longs, c, "", seen)) != 0)
            break;
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
        case 'Q': o->sql = 1; break;
        case 'S':
        case 'U': {
            int64_t *slot = c == 'S' ? &o->filter.since : &o->filter.until;
            const char *name = c == 'S' ? "since" : "until";
            if (tool_parse_when(prog, name, optarg, &when))
                return EXIT_USAGE;
            *slot = when ? when : 1;
            break;
        }
        case 'g':
            if (parse_span(optarg, &o->growth_days))
                return tool_usage_error(prog, "--growth: expected N days as N, Nd or Nw; got '%s'",
                                        optarg);
            break;
        case 'h': usage(); return -1;
        case 'V': tool_version(prog); return -1;
        default: rc = tool_common_option(prog, c, argv, &o->co); break;
        }
    }
    if (rc)
        return rc;
    if (o->json && o->sql)
        return tool_usage_error(prog, "--json and --sql exclude each other");
    if (o->growth_days && o->filter.since)
        return tool_usage_error(prog, "--growth and --since exclude each other (use --until)");
    if (o->filter.since && o->filter.until && o->filter.until / 86400 <= o->filter.since / 86400)
        return tool_usage_error(prog, "--until must be a later day than --since");
    if (argc - optind != 1)
        return tool_usage_error(prog, "expected one DB, got %d arguments", argc - optind);
    char why[512];
    if (fdx_demand_filter_check(&o->filter, why, sizeof why) != FDX_OK)
        return tool_usage_error(prog, "%s", why);
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

/* A window bound as the queries take it: its UTC day, or NULL when open. */
static int print_day_param(const char *name, int64_t unix_seconds)
{
    char day[32];
    time_t secs = (time_t)unix_seconds;
    struct tm tm;
    if (!unix_seconds || !gmtime_r(&secs, &tm))
        return print_param(name, NULL);
    strftime(day, sizeof day, "%Y-%m-%d", &tm);
    return print_param(name, day);
}

static int print_sql(const options *o)
{
    const fdx_demand_filter *f = &o->filter;
    puts(".parameter init");
    if (print_param(":cc", f->compute_capability) || print_param(":sku", f->hardware_sku) ||
        print_param(":op", f->op) || print_param(":source", f->kernel_source))
        return -1;
    printf(".parameter set :top %lld\n", f->limit > 0 ? (long long)f->limit : -1LL);
    if (o->growth_days) {
        if (print_day_param(":until", f->until))
            return -1;
        printf(".parameter set :days %d\n", o->growth_days);
        fputs(fdx_growth_sql(), stdout);
    } else if (f->since || f->until) {
        if (print_day_param(":since", f->since) || print_day_param(":until", f->until))
            return -1;
        fputs(fdx_demand_window_sql(), stdout);
    } else {
        fputs(fdx_demand_sql(), stdout);
    }
    return 0;
}

/* One ranked key, of either ranking. */
typedef struct row {
    char *wanted;
    char *ops;
    uint64_t misses;
    uint64_t fallbacks;
    uint64_t devices;
    uint64_t previous;
    int64_t growth;
    int is_new;
} row;

/* Rows are collected, as shown (tool_shown), so that the table's columns
 * can be aligned. */
typedef struct rows {
    row *v;
    size_t n, room;
    int oom;
    int json; /* values as JSON strings (tool_json_text), not as shown */
} rows;

static int keep(rows *r, const row *x)
{
    void *grown = r->v;
    row *v = tool_room(&grown, &r->room, r->n + 1, sizeof *v) == 0 ? grown : NULL;
    int oom = 0;
    char *wanted = tool_shown(x->wanted, r->json, "", &oom); /* the last column */
    char *ops = tool_shown(x->ops, r->json, " ", &oom);
    if (!v || oom) {
        free(wanted);
        free(ops);
        if (v)
            r->v = v;
        r->oom = 1;
        return 1;
    }
    r->v = v;
    v[r->n] = *x;
    v[r->n].wanted = wanted;
    v[r->n++].ops = ops;
    return 0;
}

static int collect(void *ctx, const fdx_demand_row *d)
{
    row x = {(char *)d->wanted, (char *)d->ops, d->misses, d->fallbacks, d->devices, 0, 0, 0};
    return keep(ctx, &x);
}

static int collect_growth(void *ctx, const fdx_growth_row *g)
{
    row x = {(char *)g->wanted, (char *)g->ops, g->misses, 0, 0, g->previous, g->growth, g->is_new};
    return keep(ctx, &x);
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

static void print_table(const rows *r, int growth)
{
    int wm = 6, wf = 9, wd = 7, wo = 3, wp = 8, wg = 6;
    for (size_t i = 0; i < r->n; i++) {
        const row *x = &r->v[i];
        wm = tool_wider(wm, digits(x->misses));
        wf = tool_wider(wf, digits(x->fallbacks));
        wd = tool_wider(wd, digits(x->devices));
        wo = tool_wider(wo, tool_text_width(x->ops));
        wp = tool_wider(wp, digits(x->previous));
        wg = tool_wider(wg, snprintf(NULL, 0, "%+lld", (long long)x->growth));
    }
    if (growth)
        printf("%4s  %*s  %*s  %*s  %3s  %-*s  %s\n", "rank", wm, "misses", wp, "previous", wg,
               "growth", "new", wo, "ops", "wanted");
    else
        printf("%4s  %*s  %*s  %*s  %-*s  %s\n", "rank", wm, "misses", wf, "fallbacks", wd,
               "devices", wo, "ops", "wanted");
    for (size_t i = 0; i < r->n; i++) {
        const row *x = &r->v[i];
        if (growth)
            printf("%4zu  %*llu  %*llu  %+*lld  %3s  %s%*s  %s\n", i + 1, wm,
                   (unsigned long long)x->misses, wp, (unsigned long long)x->previous, wg,
                   (long long)x->growth, x->is_new ? "new" : "", x->ops,
                   wo - tool_text_width(x->ops), "", x->wanted);
        else
            printf("%4zu  %*llu  %*llu  %*llu  %s%*s  %s\n", i + 1, wm,
                   (unsigned long long)x->misses, wf, (unsigned long long)x->fallbacks, wd,
                   (unsigned long long)x->devices, x->ops, wo - tool_text_width(x->ops), "",
                   x->wanted);
    }
}

static int print_json(const rows *r, int growth)
{
    putchar('[');
    for (size_t i = 0; i < r->n; i++) {
        const row *x = &r->v[i];
        const char *wanted = x->wanted, *ops = x->ops;
        if (growth)
            printf("%s{\"wanted\":%s,\"misses\":%llu,\"previous\":%llu,\"growth\":%lld,"
                   "\"new\":%s,\"ops\":%s}",
                   i ? ",\n " : "", wanted, (unsigned long long)x->misses,
                   (unsigned long long)x->previous, (long long)x->growth,
                   x->is_new ? "true" : "false", ops);
        else
            printf("%s{\"wanted\":%s,\"misses\":%llu,\"fallbacks\":%llu,\"devices\":%llu,"
                   "\"ops\":%s}",
                   i ? ",\n " : "", wanted, (unsigned long long)x->misses,
                   (unsigned long long)x->fallbacks, (unsigned long long)x->devices, ops);
    }
    puts("]");
    return 0;
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
    char *shown = tool_shown(value, 0, ",", &k->oom); /* quoted where a comma would split it */
    if (!shown)
        return 1;
    fprintf(stderr, "%s%s", k->listed++ ? ", " : "", shown);
    free(shown);
    return 0;
}

static int explain_empty(fdx_store *db, const fdx_demand_filter *f, int windowed)
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
        int oom = 0;
        char *shown = tool_shown(value, 0, ";", &oom);
        fprintf(stderr, "%s: no miss has --%s %s; known: ", prog, filters[i], shown ? shown : "");
        free(shown);
        if (fdx_store_filter_values(db, list_value, &k) != FDX_OK)
            return FDX_EIO;
        fputs(k.listed ? "\n" : "none (the store holds no misses)\n", stderr);
        if (k.oom)
            return FDX_ENOMEM;
    }
    if (!missing && (f->compute_capability || f->hardware_sku || f->op || f->kernel_source))
        fprintf(stderr, "%s: each filter's value exists, but no miss matches them all%s\n", prog,
                windowed ? " in the days asked for" : "");
    return FDX_OK;
}

int main(int argc, char **argv)
{
    tool_tune_process();
    options o = {FDX_DEMAND_FILTER_INIT, 0, 0, 0, TOOL_COMMON_INIT};
    o.filter.limit = 20;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? tool_finish_stdout(prog, EXIT_OK) : rc;
    if (o.sql) {
        if (print_sql(&o) == 0)
            return tool_finish_stdout(prog, EXIT_OK);
        tool_error(prog, "out of memory");
        return EXIT_FAIL;
    }
    fdx_use_fast_json_allocator(); /* every cell read is decoded to check it */
    fdx_store *db;
    rows r = {.json = o.json};
    rc = tool_open_for_reading(prog, argv[optind], 10000, &db);
    if (rc == FDX_OK &&
        (rc = o.growth_days ? fdx_store_growth(db, &o.filter, o.growth_days, collect_growth, &r)
                            : fdx_store_demand(db, &o.filter, collect, &r)) != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(db));
    else if (rc == FDX_OK && (r.oom || (o.json ? print_json(&r, o.growth_days)
                                               : (print_table(&r, o.growth_days), 0)) != 0))
        tool_error(prog, "out of memory"), rc = FDX_ENOMEM;
    if (rc == FDX_OK && tool_finish_stdout(prog, EXIT_OK) != EXIT_OK)
        rc = FDX_EIO;
    if (rc == FDX_OK && r.n == 0 && !o.co.quiet &&
        (rc = explain_empty(db, &o.filter, o.growth_days || o.filter.since || o.filter.until)) !=
            FDX_OK)
        tool_error(prog, "%s", rc == FDX_ENOMEM ? "out of memory" : fdx_store_errmsg(db));
    for (size_t i = 0; i < r.n; i++) {
        free(r.v[i].wanted);
        free(r.v[i].ops);
    }
    free(r.v);
    fdx_store_close(db);
    return rc == FDX_OK ? EXIT_OK : EXIT_FAIL;
}
