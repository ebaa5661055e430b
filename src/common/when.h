/*
 * Capture times: the text forms a user gives (--at, --since, --until) and the
 * UTC day numbers history is kept by. Days count from 1970-01-01 (day 0).
 */
#ifndef FDX_WHEN_H
#define FDX_WHEN_H

#include <stdint.h>

/* The latest time accepted: 9999-12-31T23:59:59Z. */
#define FDX_TIME_MAX        253402300799LL
#define FDX_SECONDS_PER_DAY 86400

/* Parses YYYY-MM-DD, an RFC 3339 UTC time or @UNIX_SECONDS; 0 on success. */
int fdx_when_parse(const char *s, int64_t *unix_seconds);
/* Day number of a civil date, and the first day of the month holding day. */
int64_t fdx_days_from_civil(int64_t y, unsigned m, unsigned d);
int64_t fdx_month_start(int64_t day);

/* A day number as YYYY-MM-DD. */
#define FDX_DAY_TEXT 48
void fdx_day_format(int64_t day, char out[FDX_DAY_TEXT]);

#endif
