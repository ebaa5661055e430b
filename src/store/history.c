/*
 * The time axis: every write transaction has a capture time, and every cell
 * it changes gains that many observations on the capture time's UTC day.
 * History rows are keyed by the cell's compact id, so writing one costs an
 * integer-keyed upsert beside the cell's own. Days that leave the daily
 * window (history_config.daily_days before the latest day, or before tomorrow
 * when that is earlier) are rolled into month buckets at commit, so a store
 * fed for years stays small.
 */
#include "store/history.h"

#include <limits.h>
#include <time.h>

#include "common/when.h"
#include "store/conn.h"

int fdx_parse_time(const char *text, int64_t *unix_seconds)
{
    if (!unix_seconds)
        return FDX_EMISUSE;
    return fdx_when_parse(text, unix_seconds) == 0 ? FDX_OK : FDX_EDATA;
}

void fdx_history_begin(fdx_store *s)
{
    s->txn_at = s->txn_time_ms / 1000;
    s->hist.loaded = 0;
    s->hist.dirty = 0;
    s->hist.daily_set = 0;
    s->hist.daily_changed = 0;
    s->hist.strays_known = 0;
}

static int64_t day_of(int64_t unix_seconds)
{
    return unix_seconds / FDX_SECONDS_PER_DAY;
}

int fdx_store_set_time(fdx_store *s, int64_t unix_seconds)
{
    int need = fdx_store_need_txn(s);
    if (need != FDX_OK)
        return need;
    if (s->ledger.id || s->ledger.records || s->ledger.sources || s->ledger.merged)
        return fdx_store_fail(s, FDX_EMISUSE,
                              "the capture time must be set before the transaction records "
                              "anything");
    if (unix_seconds < 0 || unix_seconds > FDX_TIME_MAX)
        return fdx_store_fail(s, FDX_EMISUSE,
                              "capture time %lld is outside 1970-01-01 .. 9999-12-31",
                              (long long)unix_seconds);
    s->txn_at = unix_seconds;
    s->txn_time_ms = unix_seconds * 1000; /* the time its candidates lists are set at */
    return FDX_OK;
}

#define MAX_DAY     (FDX_TIME_MAX / FDX_SECONDS_PER_DAY)
#define MAX_CELL_ID ((int64_t)1 << 62) /* far above any store; no sum of ids overflows */
#define NOT_ROLLED  (-2147483648LL)
/* A daily window reaching back before 1970 (a long --daily-days, a capture
 * time early in 1970) rolls up from a month before it: as far back as the
 * widest window, INT_MAX days, from day 0. */
#define MIN_ROLLED (-(int64_t)INT_MAX - 31)

int fdx_history_rolled_valid(int64_t v)
{
    return v == NOT_ROLLED || (v >= MIN_ROLLED && v <= MAX_DAY && fdx_month_start(v) == v);
}

const char *fdx_history_bad_setting(int64_t daily_days, int64_t rolled_before, int64_t latest_day)
{
    if (daily_days < 1 || daily_days > INT_MAX)
        return "daily_days";
    if (!fdx_history_rolled_valid(rolled_before))
        return "rolled_before";
    if (latest_day != INT64_MIN && (latest_day < 0 || latest_day > MAX_DAY))
        return "latest_day";
    return NULL;
}

/* The first of the settings' columns (0 to 3 of its row) that is not an
 * integer (latest_day may be NULL): a store can hold a REAL there when its
 * table's STRICT was taken away, and reading it as an integer would move
 * its days. */
static const char *setting_not_integer(sqlite3_stmt *st)
{
    static const char *const names[] = {"daily_days", "rolled_before", "latest_day",
                                        "next_cell_id"};
    for (int i = 0; i < 4; i++) {
        int type = sqlite3_column_type(st, i);
        if (type != SQLITE_INTEGER && !(i == 2 && type == SQLITE_NULL))
            return names[i];
    }
    return NULL;
}

/* The settings read from a store that may come from elsewhere. */
static int settings_valid(fdx_store *s, const char *not_integer)
{
    const char *bad = not_integer
                          ? not_integer
                          : fdx_history_bad_setting(s->hist.daily_days, s->hist.rolled_before,
                                                    s->hist.latest_day);
    if (!bad && (s->hist.next_cell_id < 1 || s->hist.next_cell_id > MAX_CELL_ID))
        bad = "next_cell_id";
    return bad ? fdx_store_fail(s, FDX_ENOTSTORE, FDX_BAD_SETTING, s->path, bad) : FDX_OK;
}

static const char *const id_tables[] = {"miss_cell", "dispatch_cell", "pruned_cell"};

/* The table (if any) holding a cell id that a writer would give a new cell,
 * from columns 4 to 6 of the settings' row. A backend's working copy numbers
 * nothing itself. */
static const char *cell_ids_reaching(const fdx_store *s, sqlite3_stmt *st)
{
    if (s->backend)
        return NULL;
    for (int i = 0; i < 3; i++) {
        int type = sqlite3_column_type(st, 4 + i);
        if (type != SQLITE_NULL &&
            (type != SQLITE_INTEGER || sqlite3_column_int64(st, 4 + i) >= s->hist.next_cell_id))
            return id_tables[i];
    }
    return NULL;
}

/* The cell table (if any) whose lowest id is missing or below 1, from
 * columns 7 and 8: its cell would take another's history, or none. */
static const char *cell_ids_below(const fdx_store *s, sqlite3_stmt *st)
{
    for (int i = 0; i < 2 && !s->backend; i++)
        if (sqlite3_column_int(st, 7 + i) != 0)
            return id_tables[i];
    return NULL;
}

int fdx_history_load(fdx_store *s)
{
    if (s->hist.loaded)
        return FDX_OK;
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_HISTORY_CONFIG_READ, &st);
    if (rc != FDX_OK)
        return rc;
    rc = sqlite3_step(st);
    const char *stray = NULL, *below = NULL, *not_integer = NULL;
    if (rc == SQLITE_ROW) {
        not_integer = setting_not_integer(st);
        s->hist.daily_days = sqlite3_column_int64(st, 0);
        s->hist.rolled_before = sqlite3_column_int64(st, 1);
        s->hist.latest_day =
            sqlite3_column_type(st, 2) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(st, 2);
        s->hist.next_cell_id = sqlite3_column_int64(st, 3);
        stray = cell_ids_reaching(s, st);
        below = cell_ids_below(s, st);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return rc == SQLITE_DONE ? fdx_store_fail(s, FDX_ENOTSTORE,
                                                  "%s: the history settings are missing", s->path)
                                 : fdx_store_fail_sqlite(s, rc, "reading the history settings");
    if ((rc = settings_valid(s, not_integer)) != FDX_OK)
        return rc;
    if (stray)
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: %s: a cell id out of range (at or above "
                              "history_config.next_cell_id, %lld); the store is damaged or was "
                              "not written by fdx",
                              s->path, stray, (long long)s->hist.next_cell_id);
    if (below)
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: %s: a cell id missing or out of range (NULL, or below 1); "
                              "the store is damaged or was not written by fdx",
                              s->path, below);
    s->hist.loaded = 1;
    return FDX_OK;
}

int64_t fdx_history_bucket(const fdx_store *s, int64_t day)
{
    return day < s->hist.rolled_before ? fdx_month_start(day) : day;
}

/* Rows were written on day: the settings move to it (rolling up what leaves
 * the daily window) when the transaction ends. */
static void saw_day(fdx_store *s, int64_t day)
{
    if (s->hist.latest_day < day)
        s->hist.latest_day = day;
    s->hist.dirty = 1;
}

int fdx_history_add(fdx_store *s, int64_t cell_id, int64_t day, int64_t origin, uint64_t count)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_HISTORY_ADD, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int64(st, 2, fdx_history_bucket(s, day));
    sqlite3_bind_int64(st, 3, origin);
    sqlite3_bind_int64(st, 4, (int64_t)count);
    if ((rc = fdx_store_step_done(s, st, "writing history")) != FDX_OK)
        return rc;
    saw_day(s, day);
    return FDX_OK;
}

/* The observations of a transaction are one row a cell: a statement for each
 * would cost more than the rows (history_add_rows.sql). */
enum { ROWS_PER_STMT = 64 };

static int add_group(fdx_store *s, const fdx_history_row *rows, int64_t bucket, int64_t origin)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_HISTORY_ADD_ROWS, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, bucket);
    sqlite3_bind_int64(st, 2, origin);
    for (int i = 0; i < ROWS_PER_STMT; i++) {
        sqlite3_bind_int64(st, 2 * i + 3, rows[i].cell_id);
        sqlite3_bind_int64(st, 2 * i + 4, (int64_t)rows[i].count);
    }
    return fdx_store_step_done(s, st, "writing history");
}

int fdx_history_add_rows(fdx_store *s, const fdx_history_row *rows, size_t n, int64_t day,
                         int64_t origin)
{
    size_t i = 0;
    int rc = FDX_OK;
    for (; rc == FDX_OK && n - i >= ROWS_PER_STMT; i += ROWS_PER_STMT)
        rc = add_group(s, rows + i, fdx_history_bucket(s, day), origin);
    for (; rc == FDX_OK && i < n; i++)
        rc = fdx_history_add(s, rows[i].cell_id, day, origin, rows[i].count);
    if (rc == FDX_OK && n)
        saw_day(s, day);
    return rc;
}

static int run_range(fdx_store *s, fdx_stmt_id id, int64_t lo, int64_t hi)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, id, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    return fdx_store_step_done(s, st, "rolling up history");
}

int64_t fdx_history_keep_from(int64_t latest_day, int64_t daily_days)
{
    if (latest_day == INT64_MIN)
        return INT64_MIN;
    int64_t tomorrow = day_of((int64_t)time(NULL)) + 1;
    int64_t from = latest_day < tomorrow ? latest_day : tomorrow;
    return fdx_month_start(from - daily_days + 1);
}

/* Rolls the days before the daily window into months, a whole month at a time. */
static int roll_up(fdx_store *s)
{
    int64_t keep_from = fdx_history_keep_from(s->hist.latest_day, s->hist.daily_days);
    if (keep_from <= s->hist.rolled_before) /* INT64_MIN: no history yet */
        return FDX_OK;
    int rc = run_range(s, FDX_STMT_HISTORY_ROLLUP, s->hist.rolled_before, keep_from);
    if (rc == FDX_OK)
        rc = run_range(s, FDX_STMT_HISTORY_ROLLUP_CLEAR, s->hist.rolled_before, keep_from);
    if (rc != FDX_OK)
        return rc;
    s->hist.rolled_before = keep_from;
    return FDX_OK;
}

int fdx_history_finish(fdx_store *s)
{
    if (!s->hist.loaded || !s->hist.dirty)
        return FDX_OK;
    int rc = roll_up(s);
    sqlite3_stmt *st;
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_HISTORY_CONFIG_WRITE, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, s->hist.daily_days);
    sqlite3_bind_int64(st, 2, s->hist.rolled_before);
    if (s->hist.latest_day != INT64_MIN)
        sqlite3_bind_int64(st, 3, s->hist.latest_day);
    sqlite3_bind_int64(st, 4, s->hist.next_cell_id);
    return fdx_store_step_done(s, st, "writing the history settings");
}

int fdx_store_set_daily_days(fdx_store *s, int days)
{
    int need = fdx_store_need_txn(s);
    if (need != FDX_OK)
        return need;
    if (days < 1 || days > FDX_MAX_DAILY_DAYS)
        return fdx_store_fail(s, FDX_EMISUSE, "the daily window must be 1 to %d days",
                              FDX_MAX_DAILY_DAYS);
    int rc = fdx_history_load(s);
    if (rc != FDX_OK)
        return rc;
    if (!s->hist.daily_set)
        s->hist.daily_stored = s->hist.daily_days;
    s->hist.daily_changed = days != s->hist.daily_stored; /* set back: unchanged */
    s->hist.daily_days = days;
    s->hist.daily_set = 1;
    s->hist.dirty = 1;
    return FDX_OK;
}

/* The day a transaction's own observations go to. */
int64_t fdx_history_txn_day(const fdx_store *s)
{
    return day_of(s->txn_at);
}
