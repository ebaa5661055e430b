/*
 * fdx-report's page: one self-contained HTML file (inline CSS and SVG,
 * nothing fetched) rendered from the rows store/report.c gathers. Every value
 * from the store is escaped, as text and in attributes alike: a store may
 * come from another host. Written through an atomic file, so a failure leaves
 * the previous page.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "common/utf8.h"
#include "store/conn.h"
#include "store/report.h"
#include "store/store_internal.h"

typedef struct row {
    char *col[FDX_REPORT_MAX_COLS];
} row;

typedef struct part_rows {
    row *v;
    size_t n, cap;
} part_rows;

typedef struct page {
    part_rows part[FDX_REPORT_PARTS];
    fdx_buf *out;
} page;

static int keep_row(void *ctx, fdx_report_part part, const char *const *cols, int ncols)
{
    part_rows *p = &((page *)ctx)->part[part];
    if (fdx_grow(&p->v, &p->cap, p->n + 1, sizeof *p->v))
        return 1;
    row *r = &p->v[p->n++];
    memset(r, 0, sizeof *r);
    for (int i = 0; i < ncols; i++)
        if (!(r->col[i] = strdup(cols[i])))
            return 1;
    return 0;
}

static void free_page(page *pg)
{
    for (int p = 0; p < FDX_REPORT_PARTS; p++) {
        for (size_t i = 0; i < pg->part[p].n; i++)
            for (int c = 0; c < FDX_REPORT_MAX_COLS; c++)
                free(pg->part[p].v[i].col[c]);
        free(pg->part[p].v);
    }
}

static void put(page *pg, const char *s)
{
    fdx_buf_puts(pg->out, s);
}

static void putf(page *pg, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        fdx_buf_append(pg->out, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* One byte of text or of an attribute's value, escaped for both. */
static void esc_char(page *pg, char c)
{
    switch (c) {
    case '&': put(pg, "&amp;"); break;
    case '<': put(pg, "&lt;"); break;
    case '>': put(pg, "&gt;"); break;
    case '"': put(pg, "&quot;"); break;
    case '\'': put(pg, "&#39;"); break;
    default: fdx_buf_putc(pg->out, c);
    }
}

/* s as an attribute's value: exactly its text, escaped. */
static void esc_attr(page *pg, const char *s)
{
    for (; *s; s++)
        esc_char(pg, *s);
}

/* The code point of the n-byte UTF-8 sequence at s. */
static unsigned code_point(const unsigned char *s, size_t n)
{
    static const unsigned char lead[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    unsigned c = s[0] & lead[n];
    for (size_t i = 1; i < n; i++)
        c = c << 6 | (s[i] & 0x3F);
    return c;
}

/* s as text on the page, escaped, its hidden code points shown as \uXXXX: a
 * key that holds a right-to-left override would otherwise show another key.
 * A backslash is shown as \\ (as fdx-top shows it), so that a key spelling
 * such an escape is told from the code point; a byte that is not UTF-8 (a
 * path's) as \xXX, since the page is UTF-8 throughout. */
static void esc_n(page *pg, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t n = *p < 0x80 ? 1 : fdx_utf8_sequence((const char *)p, 4);
        unsigned cp = n ? code_point(p, n) : 0;
        if (!n)
            putf(pg, "\\x%02X", *p);
        else if (fdx_code_point_escaped(cp))
            putf(pg, cp > 0xFFFF ? "\\U%08X" : "\\u%04X", cp);
        else if (*p == '\\')
            put(pg, "\\\\");
        else
            for (size_t i = 0; i < n; i++)
                esc_char(pg, (char)p[i]);
        p += n ? n : 1;
    }
}

static void esc(page *pg, const char *s)
{
    esc_n(pg, s, strlen(s));
}

/* A value in a table: as esc shows it, but a space at either end, which the
 * page would not show, as \u0020; runs of spaces inside keep their width
 * (white-space:pre-wrap), so that "k", "k " and "a  b" are not "a b". */
static void esc_value(page *pg, const char *v)
{
    size_t n = strlen(v);
    int lead = n && v[0] == ' ', trail = n > 1 && v[n - 1] == ' ';
    put(pg, lead ? "\\u0020" : "");
    esc_n(pg, v + lead, n - lead - trail);
    put(pg, trail ? "\\u0020" : "");
}

static const char css[] =
    ":root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;"
    "--heat:#c2410c;--up:#b91c1c;--upbg:#fde8e8;--spark:#2563eb;--zebra:#f6f8fa}\n"
    "@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9aa4ae;"
    "--line:#30363d;--heat:#fb923c;--up:#fca5a5;--upbg:#3b1111;--spark:#60a5fa;"
    "--zebra:#161b22}}\n"
    "body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,'DejaVu Sans',"
    "sans-serif;margin:1.5rem auto;max-width:72rem;padding:0 1rem}\n"
    "h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.15rem;margin:2rem 0 .5rem;"
    "border-bottom:1px solid var(--line);padding-bottom:.2rem}\n"
    "p.note{color:var(--muted);margin:.2rem 0 .6rem}\n"
    "table{border-collapse:collapse;width:100%}th,td{padding:.25rem .5rem;"
    "border-bottom:1px solid var(--line);text-align:left;vertical-align:middle;"
    "white-space:pre-wrap;unicode-bidi:bidi-override}\n"
    "th{font-weight:600;color:var(--muted)}td.n,th.n{text-align:right;"
    "font-variant-numeric:tabular-nums}tbody tr:nth-child(even){background:var(--zebra)}\n"
    "td.key{font-family:'DejaVu Sans Mono',monospace;word-break:break-all}\n"
    "dl.ledger{display:grid;grid-template-columns:repeat(auto-fill,minmax(9rem,1fr));"
    "gap:.5rem;margin:0}dl.ledger div{border:1px solid var(--line);border-radius:6px;"
    "padding:.4rem .6rem}dt{color:var(--muted);font-size:.8rem}dd{margin:0;font-size:1.2rem;"
    "font-weight:600}\n"
    "svg text{fill:var(--fg);font:11px 'DejaVu Sans',sans-serif;white-space:pre;"
    "unicode-bidi:bidi-override}svg .hi{fill:var(--bg)}\n"
    "rect.cell{fill:var(--heat)}rect.empty{fill:none;stroke:var(--line)}\n"
    "polyline{fill:none;stroke:var(--spark);stroke-width:1.5}circle{fill:var(--spark)}\n"
    "tr.up td{background:var(--upbg)}tr.up .growth{color:var(--up);font-weight:700}\n"
    ".badge{border:1px solid var(--up);color:var(--up);border-radius:4px;padding:0 .3rem;"
    "font-size:.75rem;margin-left:.3rem}\n"
    "@media print{:root{--bg:#fff;--fg:#000;--muted:#333;--line:#999;--zebra:#fff;"
    "--upbg:#eee}body{margin:0;max-width:none}section{break-inside:avoid}"
    "tr{break-inside:avoid}}\n";

static void ledger(page *pg, const char *store_path)
{
    static const char *const names[] = {"ingests",  "runs",    "stores",     "first_day",
                                        "last_day", "records", "miss_cells", "dispatch_cells"};
    static const char *const labels[] = {"Ingests",  "Run ids", "Hosts (stores)", "First day",
                                         "Last day", "Records", "Miss cells",     "Dispatch cells"};
    put(pg, "<section id=\"ledger\"><h2>Ledger</h2><p class=\"note\">Store ");
    esc(pg, store_path);
    put(pg, "</p><dl class=\"ledger\">");
    const row *r = pg->part[FDX_REPORT_LEDGER].n ? &pg->part[FDX_REPORT_LEDGER].v[0] : NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = r && r->col[i] && *r->col[i] ? r->col[i] : "-";
        putf(pg, "<div><dt>%s</dt><dd data-ledger=\"%s\">", labels[i], names[i]);
        esc(pg, v);
        put(pg, "</dd></div>");
    }
    put(pg, "</dl></section>\n");
}

static void num_cell(page *pg, const char *attr, const char *v)
{
    putf(pg, "<td class=\"n\" data-%s=\"", attr);
    esc_attr(pg, v);
    put(pg, "\">");
    esc(pg, v);
    put(pg, "</td>");
}

/* A structure key; an empty one, or none (unkeyed), said in italics, which no
 * key's own text is. */
static void key_cell(page *pg, const char *v, int unkeyed)
{
    put(pg, "<td class=\"key\" data-key=\"");
    esc_attr(pg, v);
    put(pg, "\">");
    if (unkeyed || !*v)
        put(pg, unkeyed ? "<i>(unkeyed)</i>" : "<i>(empty)</i>");
    else
        esc_value(pg, v);
    put(pg, "</td>");
}

static void text_cell(page *pg, const char *v)
{
    put(pg, "<td>");
    if (*v)
        esc_value(pg, v);
    else
        put(pg, "<i>(empty)</i>");
    put(pg, "</td>");
}

/* An implementation: its backend, kernel source and revision on lines of
 * their own (a value's line break is shown as an escape), so that "Cuda/x" and
 * "lib" do not read as "Cuda" and "x/lib". */
static void impl_cell(page *pg, const char *which, char *const *v)
{
    putf(pg, "<td class=\"impl\" data-%s=\"", which);
    esc_attr(pg, v[0]);
    put(pg, "\">");
    for (int i = 0; i < 3; i++) {
        put(pg, i ? "<br>" : "");
        if (*v[i])
            esc_value(pg, v[i]);
        else
            put(pg, "<i>(empty)</i>");
    }
    put(pg, "</td>");
}

static void demand(page *pg)
{
    const part_rows *p = &pg->part[FDX_REPORT_DEMAND];
    put(pg, "<section id=\"demand\"><h2>Demand ranking</h2><p class=\"note\">Wanted structure "
            "keys by misses: the kernels most worth writing.</p>");
    if (!p->n) {
        put(pg, "<p>No misses.</p></section>\n");
        return;
    }
    put(pg, "<table><thead><tr><th class=\"n\">#</th><th>Wanted</th><th class=\"n\">Misses</th>"
            "<th class=\"n\">Fallbacks</th><th class=\"n\">Devices</th><th>Ops</th></tr>"
            "</thead><tbody>");
    for (size_t i = 0; i < p->n; i++) {
        const row *r = &p->v[i];
        putf(pg, "<tr class=\"demand\"><td class=\"n\">%zu</td>", i + 1);
        key_cell(pg, r->col[0], 0);
        num_cell(pg, "misses", r->col[1]);
        num_cell(pg, "fallbacks", r->col[2]);
        num_cell(pg, "devices", r->col[3]);
        text_cell(pg, r->col[4]);
        put(pg, "</tr>");
    }
    put(pg, "</tbody></table></section>\n");
}

/* Distinct values of one column whose equal values are adjacent (the SQL
 * orders them), in order. */
static size_t distinct(const part_rows *p, int col, const char **out)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        if (!n || strcmp(out[n - 1], p->v[i].col[col]) != 0)
            out[n++] = p->v[i].col[col];
    return n;
}

static int cc_cmp(const void *a, const void *b)
{
    const row *x = *(const row *const *)a, *y = *(const row *const *)b;
    long xa = atol(x->col[1]), ya = atol(y->col[1]), xb = atol(x->col[2]), yb = atol(y->col[2]);
    return xa != ya ? (xa > ya) - (xa < ya) : (xb > yb) - (xb < yb);
}

/* ln(1 + v) for v >= 0, without libm (a shade, not a measurement). */
static double ln1p(double v)
{
    double x = 1 + v, k = 0;
    while (x > 2)
        x /= 2, k++;
    double y = (x - 1) / (x + 1), y2 = y * y, t = y, sum = 0;
    for (int i = 1; i < 40; i += 2, t *= y2)
        sum += t / i;
    return 2 * sum + k * 0.6931471805599453;
}

enum { LABEL_BYTES = 20, LABEL_ROOM = LABEL_BYTES + 4 };

/* A label cut to LABEL_BYTES bytes, at a character's start, with an ellipsis. */
static const char *short_label(const char *s, char out[LABEL_ROOM])
{
    size_t n = strlen(s), cut = LABEL_BYTES;
    while (cut > 0 && n > cut && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    snprintf(out, LABEL_ROOM, "%.*s%s", (int)cut, s, n > cut ? "\xe2\x80\xa6" : "");
    return out;
}

static void heatmap(page *pg)
{
    const part_rows *p = &pg->part[FDX_REPORT_HEATMAP];
    put(pg, "<section id=\"heatmap\"><h2>Misses by op and compute capability</h2>");
    if (!p->n) {
        put(pg, "<p>No misses.</p></section>\n");
        return;
    }
    const char **ops = malloc(p->n * sizeof *ops);
    const row **byc = malloc(p->n * sizeof *byc);
    const char **ccs = malloc(p->n * sizeof *ccs);
    if (!ops || !byc || !ccs) {
        free(ops), free(byc), free(ccs);
        pg->out->oom = 1;
        return;
    }
    size_t nops = distinct(p, 0, ops), ncc = 0, next = 0;
    for (size_t i = 0; i < p->n; i++)
        byc[i] = &p->v[i];
    qsort(byc, p->n, sizeof *byc, cc_cmp);
    for (size_t i = 0; i < p->n; i++)
        if (!ncc || strcmp(ccs[ncc - 1], byc[i]->col[3]) != 0)
            ccs[ncc++] = byc[i]->col[3];
    double max = 1;
    for (size_t i = 0; i < p->n; i++)
        if (atof(p->v[i].col[4]) > max)
            max = atof(p->v[i].col[4]);
    const int lw = 170, cw = 78, ch = 28, top = 24;
    unsigned long long all_ops = strtoull(p->v[0].col[5], NULL, 10);
    unsigned long long all_ccs = strtoull(p->v[0].col[6], NULL, 10);
    if (all_ops > nops || all_ccs > ncc)
        putf(pg,
             "<p class=\"note\">The %zu ops and %zu compute capabilities with the most misses, "
             "of %llu and %llu.</p>",
             nops, ncc, all_ops, all_ccs);
    putf(pg,
         "<p class=\"note\">Summed miss counts; a stronger colour is more (log scale).</p>"
         "<svg role=\"img\" aria-label=\"heatmap\" width=\"%d\" height=\"%d\" "
         "viewBox=\"0 0 %d %d\">",
         lw + cw * (int)ncc, top + ch * (int)nops, lw + cw * (int)ncc, top + ch * (int)nops);
    for (size_t c = 0; c < ncc; c++) {
        putf(pg, "<text x=\"%d\" y=\"16\" text-anchor=\"middle\">", lw + cw * (int)c + cw / 2);
        esc(pg, ccs[c]);
        put(pg, "</text>");
    }
    for (size_t o = 0; o < nops; o++) {
        int y = top + ch * (int)o;
        putf(pg, "<text x=\"4\" y=\"%d\"><title>", y + 18);
        esc(pg, ops[o]);
        put(pg, "</title>");
        char shown[LABEL_ROOM];
        if (*ops[o])
            esc_value(pg, short_label(ops[o], shown));
        else
            put(pg, "<tspan font-style=\"italic\">(empty)</tspan>");
        put(pg, "</text>");
        for (size_t c = 0; c < ncc; c++) {
            /* the rows come in op order, each op's in capability order */
            const row *hit = NULL;
            if (next < p->n && !strcmp(p->v[next].col[0], ops[o]) &&
                !strcmp(p->v[next].col[3], ccs[c]))
                hit = &p->v[next++];
            int x = lw + cw * (int)c;
            if (!hit) {
                putf(pg, "<rect class=\"empty\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>",
                     x + 1, y + 1, cw - 2, ch - 2);
                continue;
            }
            double v = atof(hit->col[4]);
            double a = 0.15 + 0.85 * ln1p(v) / ln1p(max);
            put(pg, "<g class=\"heat\" data-op=\"");
            esc_attr(pg, ops[o]);
            put(pg, "\" data-cc=\"");
            esc_attr(pg, ccs[c]);
            put(pg, "\" data-misses=\"");
            esc_attr(pg, hit->col[4]);
            putf(pg,
                 "\"><rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                 "fill-opacity=\"%.2f\"/><text x=\"%d\" y=\"%d\" text-anchor=\"middle\"%s>",
                 x + 1, y + 1, cw - 2, ch - 2, a, x + cw / 2, y + 18,
                 a > 0.55 ? " class=\"hi\"" : "");
            esc(pg, hit->col[4]);
            put(pg, "</text></g>");
        }
    }
    put(pg, "</svg></section>\n");
    free(ops), free(byc), free(ccs);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Days since 1970-01-01 of a 'YYYY-MM-DD' day (the civil calendar). */
static long day_number(const char *day)
{
    long y = atol(day), m = strlen(day) >= 7 ? atol(day + 5) : 1,
         d = strlen(day) >= 10 ? atol(day + 8) : 1;
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* The daily rows by key, then day, so that a key's are found by a search
 * (a trend table of thousands of keys read them all for each). */
typedef struct daily_index {
    const row **by_key;
    size_t n;
    const char **days; /* every day any key has, once each, in order */
    size_t ndays;
    double *misses; /* scratch: one key's misses on each of days */
} daily_index;

static int key_day_cmp(const void *a, const void *b)
{
    const row *x = *(const row *const *)a, *y = *(const row *const *)b;
    int c = strcmp(x->col[0], y->col[0]);
    return c ? c : strcmp(x->col[1], y->col[1]);
}

static size_t day_at(const daily_index *ix, const char *day)
{
    const char **at = bsearch(&day, ix->days, ix->ndays, sizeof *ix->days, str_cmp);
    return (size_t)(at - ix->days); /* every row's day is among them */
}

/* The first of the key's rows, or ix->n when it has none. */
static size_t first_of_key(const daily_index *ix, const char *wanted)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ix->by_key[mid]->col[0], wanted) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int daily_index_init(daily_index *ix, const part_rows *d)
{
    memset(ix, 0, sizeof *ix);
    ix->by_key = malloc((d->n + 1) * sizeof *ix->by_key);
    ix->days = malloc((d->n + 1) * sizeof *ix->days);
    ix->misses = calloc(d->n + 1, sizeof *ix->misses);
    if (!ix->by_key || !ix->days || !ix->misses)
        return -1;
    for (size_t i = 0; i < d->n; i++) {
        ix->by_key[i] = &d->v[i];
        ix->days[i] = d->v[i].col[1];
    }
    ix->n = d->n;
    qsort(ix->by_key, ix->n, sizeof *ix->by_key, key_day_cmp);
    qsort(ix->days, ix->n, sizeof *ix->days, str_cmp);
    for (size_t i = 0; i < ix->n; i++)
        if (!ix->ndays || strcmp(ix->days[ix->ndays - 1], ix->days[i]) != 0)
            ix->days[ix->ndays++] = ix->days[i];
    return 0;
}

static void daily_index_free(daily_index *ix)
{
    free(ix->by_key);
    free(ix->days);
    free(ix->misses);
}

/* The key's misses on each day any trend has, placed by calendar day. */
static void sparkline(page *pg, const char *wanted, daily_index *ix)
{
    const char **days = ix->days;
    size_t ndays = ix->ndays, to = first_of_key(ix, wanted);
    const int w = 160, h = 28;
    double max = 1;
    long first = ndays ? day_number(days[0]) : 0, last = ndays ? day_number(days[ndays - 1]) : 0;
    for (; to < ix->n && !strcmp(ix->by_key[to]->col[0], wanted); to++)
        ix->misses[day_at(ix, ix->by_key[to]->col[1])] += atof(ix->by_key[to]->col[2]);
    for (size_t k = 0; k < ndays; k++)
        max = ix->misses[k] > max ? ix->misses[k] : max;
    putf(pg,
         "<svg class=\"spark\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">"
         "<polyline points=\"",
         w, h, w, h);
    double lx = 0, ly = h - 3;
    for (size_t k = 0; k < ndays; k++) {
        double v = ix->misses[k];
        long x = day_number(days[k]) - first;
        lx = last > first ? 2 + (double)(w - 4) * (double)x / (double)(last - first) : w / 2.0;
        ly = h - 3 - (h - 6) * v / max;
        putf(pg, "%s%.1f,%.1f", k ? " " : "", lx, ly);
    }
    putf(pg, "\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/></svg>", lx, ly);
    memset(ix->misses, 0, ndays * sizeof *ix->misses);
}

static void trends(page *pg)
{
    const part_rows *g = &pg->part[FDX_REPORT_GROWTH];
    put(pg, "<section id=\"trends\"><h2>Trends</h2><p class=\"note\">Misses in the last 7 days "
            "of history against the 7 days before; growing keys are highlighted.</p>");
    if (!g->n) {
        put(pg, "<p>No history.</p></section>\n");
        return;
    }
    daily_index ix;
    if (daily_index_init(&ix, &pg->part[FDX_REPORT_DAILY]) != 0) {
        daily_index_free(&ix);
        pg->out->oom = 1;
        return;
    }
    const char **days = ix.days;
    size_t ndays = ix.ndays;
    if (ndays) {
        put(pg, "<p class=\"note\">Days ");
        esc(pg, days[0]);
        put(pg, " to ");
        esc(pg, days[ndays - 1]);
        put(pg, "</p>");
    }
    put(pg, "<table><thead><tr><th>Wanted</th><th>Daily misses</th><th class=\"n\">Last 7 days"
            "</th><th class=\"n\">7 days before</th><th class=\"n\">Growth</th></tr></thead>"
            "<tbody>");
    for (size_t i = 0; i < g->n; i++) {
        const row *r = &g->v[i];
        int up = atoll(r->col[3]) > 0;
        put(pg, up ? "<tr class=\"trend up\">" : "<tr class=\"trend\">");
        key_cell(pg, r->col[0], 0);
        put(pg, "<td>");
        sparkline(pg, r->col[0], &ix);
        put(pg, "</td>");
        num_cell(pg, "misses", r->col[1]);
        num_cell(pg, "previous", r->col[2]);
        put(pg, "<td class=\"n growth\" data-growth=\"");
        esc_attr(pg, r->col[3]);
        put(pg, "\">");
        put(pg, up ? "+" : "");
        esc(pg, r->col[3]);
        if (atoi(r->col[4]))
            put(pg, "<span class=\"badge\">new</span>");
        put(pg, "</td></tr>");
    }
    put(pg, "</tbody></table></section>\n");
    daily_index_free(&ix);
}

static void regret(page *pg)
{
    const part_rows *p = &pg->part[FDX_REPORT_REGRET];
    put(pg, "<section id=\"regret\"><h2>Dispatch regret</h2><p class=\"note\">Dispatches where "
            "a measured candidate beat the chosen implementation.</p>");
    if (!p->n) {
        put(pg, "<p>No regret measured.</p></section>\n");
        return;
    }
    put(pg, "<table><thead><tr><th>Structure key</th><th>Op</th><th>Dtypes</th><th>CC</th>"
            "<th>SKU</th><th>Driver</th><th>Chosen</th><th>Best</th><th class=\"n\">Chosen ns"
            "</th><th class=\"n\">Best ns</th><th class=\"n\">Speedup</th>"
            "<th class=\"n\">Dispatches</th></tr></thead><tbody>");
    for (size_t i = 0; i < p->n; i++) {
        const row *r = &p->v[i];
        put(pg, "<tr class=\"regret\">");
        key_cell(pg, r->col[0], r->col[16] && !strcmp(r->col[16], "1"));
        for (int c = 1; c < 6; c++)
            text_cell(pg, r->col[c]);
        impl_cell(pg, "chosen", r->col + 6);
        impl_cell(pg, "best", r->col + 9);
        num_cell(pg, "chosen-ns", r->col[12]);
        num_cell(pg, "best-ns", r->col[13]);
        if (*r->col[14])
            num_cell(pg, "speedup", r->col[14]);
        else /* the best candidate measured 0 ns */
            put(pg, "<td class=\"n\" data-speedup=\"inf\">\xe2\x88\x9e</td>"); /* U+221E */
        num_cell(pg, "count", r->col[15]);
        put(pg, "</tr>");
    }
    put(pg, "</tbody></table></section>\n");
}

static void render(page *pg, const char *store_path)
{
    put(pg, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            "<meta name=\"color-scheme\" content=\"light dark\"><title>fdx report</title><style>");
    put(pg, css);
    put(pg, "</style></head><body><header><h1>Kernel demand report</h1></header>\n");
    ledger(pg, store_path);
    demand(pg);
    heatmap(pg);
    trends(pg);
    regret(pg);
    put(pg, "</body></html>\n");
}

int fdx_report_opts_init(fdx_report_opts *opts, unsigned int version)
{
    static const fdx_report_opts def = FDX_REPORT_OPTS_INIT;
    if (!opts || version != FDX_REPORT_OPTS_VERSION)
        return FDX_EMISUSE;
    *opts = def;
    return FDX_OK;
}

int fdx_store_report(fdx_store *s, const char *path, const fdx_report_opts *opts)
{
    static const fdx_report_opts def = FDX_REPORT_OPTS_INIT;
    const fdx_report_opts *o = opts ? opts : &def;
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (o->version != FDX_REPORT_OPTS_VERSION)
        return fdx_store_fail(s, FDX_EMISUSE,
                              "fdx_report_opts version %u is not one this build knows (%d): "
                              "start from FDX_REPORT_OPTS_INIT",
                              o->version, FDX_REPORT_OPTS_VERSION);
    if (!path || !*path)
        return fdx_store_fail(s, FDX_EMISUSE, "fdx_store_report: no output path");
    int rc = fdx_store_may_replace(s, path);
    if (rc != FDX_OK)
        return rc;
    page pg;
    memset(&pg, 0, sizeof pg);
    rc = fdx_store_report_rows(s, o->top > 0 ? o->top : 20, keep_row, &pg);
    if (rc != FDX_OK) {
        free_page(&pg);
        return rc;
    }
    fdx_afile af;
    char err[512];
    rc = fdx_afile_open(&af, path, err, sizeof err);
    if (rc == FDX_OK) {
        pg.out = &af.buf;
        render(&pg, s->path ? s->path : "");
        if (af.buf.oom)
            rc = FDX_ENOMEM, snprintf(err, sizeof err, "%s: out of memory", path);
    }
    if (rc == FDX_OK)
        rc = fdx_afile_seal(&af, err, sizeof err);
    if (rc == FDX_OK)
        rc = fdx_afile_check_target(&af, err, sizeof err);
    if (rc == FDX_OK)
        rc = fdx_afile_install(&af, err, sizeof err);
    if (rc == FDX_OK)
        rc = fdx_afile_sync_dir(&af, err, sizeof err);
    fdx_afile_abort(&af);
    free_page(&pg);
    return rc == FDX_OK ? FDX_OK : fdx_store_fail(s, rc, "%s", err);
}
