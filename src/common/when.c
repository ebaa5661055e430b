/*
 * Capture times as users write them. Only UTC is accepted, so that a day in
 * the history means the same UTC day on every host; the civil-date arithmetic
 * is Howard Hinnant's days_from_civil, which needs no time zone database.
 */
#include "common/when.h"

#include <stddef.h>
#include <stdio.h>

int64_t fdx_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* The civil date of a day number. */
static void civil_from_days(int64_t day, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t z = day + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

int64_t fdx_month_start(int64_t day)
{
    int64_t y;
    unsigned m, d;
    civil_from_days(day, &y, &m, &d);
    return day - (d - 1);
}

void fdx_day_format(int64_t day, char out[FDX_DAY_TEXT])
{
    int64_t y;
    unsigned m, d;
    civil_from_days(day, &y, &m, &d);
    snprintf(out, FDX_DAY_TEXT, "%04lld-%02u-%02u", (long long)y, m, d);
}

/* Reads exactly n digits; -1 when one is missing. */
static int64_t digits(const char **p, int n)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return -1;
        v = v * 10 + (**p - '0');
    }
    return v;
}

static int leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int parse_unix(const char *p, int64_t *out)
{
    int64_t v = 0;
    if (!*p)
        return -1;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > FDX_TIME_MAX)
            return -1;
    }
    *out = v;
    return 0;
}

/* The clock part of an RFC 3339 UTC time: HH:MM:SS[.frac](Z|+00:00|-00:00). */
static int parse_clock(const char *p, int64_t *seconds)
{
    int64_t h = digits(&p, 2);
    if (h < 0 || h > 23 || *p++ != ':')
        return -1;
    int64_t mi = digits(&p, 2);
    if (mi < 0 || mi > 59 || *p++ != ':')
        return -1;
    int64_t s = digits(&p, 2);
    if (s < 0 || s > 60)
        return -1;
    if (*p == '.') {
        if (*++p < '0' || *p > '9')
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (!(p[0] == 'Z' && p[1] == '\0') &&
        !((p[0] == '+' || p[0] == '-') && p[1] == '0' && p[2] == '0' && p[3] == ':' &&
          p[4] == '0' && p[5] == '0' && p[6] == '\0'))
        return -1;
    *seconds = h * 3600 + mi * 60 + (s == 60 ? 59 : s);
    return 0;
}

int fdx_when_parse(const char *s, int64_t *out)
{
    static const unsigned mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (!s)
        return -1;
    if (*s == '@')
        return parse_unix(s + 1, out);
    const char *p = s;
    int64_t y = digits(&p, 4);
    if (y < 1970 || *p++ != '-')
        return -1;
    int64_t m = digits(&p, 2);
    if (m < 1 || m > 12 || *p++ != '-')
        return -1;
    int64_t d = digits(&p, 2);
    if (d < 1 || d > (int64_t)mdays[m - 1] + (m == 2 && leap(y)))
        return -1;
    int64_t secs = 0;
    if (*p == 'T') {
        if (parse_clock(p + 1, &secs) != 0)
            return -1;
    } else if (*p) {
        return -1;
    }
    *out = fdx_days_from_civil(y, (unsigned)m, (unsigned)d) * FDX_SECONDS_PER_DAY + secs;
    return 0;
}
