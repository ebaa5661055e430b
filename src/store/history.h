/*
 * A transaction's daily and monthly history (history.c).
 */
#ifndef FDX_STORE_HISTORY_H
#define FDX_STORE_HISTORY_H

#include "store/store_internal.h"

/* History (history.c). */
/* Reads history_config into s->hist once per transaction; a store whose
 * settings no fdx wrote (they would overflow the day and id arithmetic) is
 * FDX_ENOTSTORE. */
int fdx_history_load(fdx_store *s);
/* Whether v may be history_config.rolled_before: -2^31 (nothing rolled up
 * yet) or the first day of a month up to 9999, before 1970 as far as the
 * widest daily window reaches. */
int fdx_history_rolled_valid(int64_t v);
/* The name of the first of a store's history settings that no fdx store
 * holds (latest INT64_MIN: none yet), or NULL; said with FDX_BAD_SETTING. */
const char *fdx_history_bad_setting(int64_t daily_days, int64_t rolled_before, int64_t latest_day);
#define FDX_BAD_SETTING                                                                            \
    "%s: history_config.%s holds a value no fdx store holds; the store is damaged or was not "     \
    "written by fdx"
/* Adds count observations of a cell on day (a day number) from origin. */
int fdx_history_add(fdx_store *s, int64_t cell_id, int64_t day, int64_t origin, uint64_t count);
typedef struct fdx_history_row {
    int64_t cell_id;
    uint64_t count;
} fdx_history_row;
/* fdx_history_add for each of n rows, in order, 64 to a statement. */
int fdx_history_add_rows(fdx_store *s, const fdx_history_row *rows, size_t n, int64_t day,
                         int64_t origin);
/* The history key of a day: the day itself, or its month once rolled up. */
int64_t fdx_history_bucket(const fdx_store *s, int64_t day);
/* The day a transaction's own observations go to. */
int64_t fdx_history_txn_day(const fdx_store *s);
/* The first day the daily window keeps: the month of the window's start,
 * counted back from the latest day, but never from past tomorrow, so that a
 * capture time in the future (a mistyped --at, a host clock ahead, a store
 * merged from one) does not roll every day before it into months for good.
 * INT64_MIN when there is no history yet. */
int64_t fdx_history_keep_from(int64_t latest_day, int64_t daily_days);
/* Before COMMIT: rolls up what left the daily window, stores the counters. */
int fdx_history_finish(fdx_store *s);
/* Starts a transaction's capture time at now. */
void fdx_history_begin(fdx_store *s);

#endif
