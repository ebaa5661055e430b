/*
 * A store from another host is untrusted input. The cells are checked as an
 * export checks them (row.c); the history and the ledger are summed by
 * fdx-top's windows, fdx-report and fdx-prune, so a count below one, a day
 * past 9999, a cell id two cells share or a negative ledger number would
 * print as a wrapped or misattributed figure. Each is looked for with one
 * statement, and the first found refuses the store.
 */
#include "store/store_check.h"

#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "common/when.h"
#include "store/conn.h"
#include "store/history.h"
#include "store/identity.h"
#include "store/row.h"

/* Steps st once: FDX_OK when it finds nothing, else a refusal that says what
 * it found. */
static int none_found(fdx_store *s, sqlite3_stmt *st, const char *reading)
{
    int src = sqlite3_step(st);
    int rc = FDX_OK;
    const char *what = src == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (what)
        rc = fdx_store_fail(s, FDX_ENOTSTORE,
                            "%s: not a valid fdx store: %s; it is damaged or was not written "
                            "by fdx",
                            s->path, what);
    else if (src == SQLITE_ROW)
        rc = fdx_store_fail(s, FDX_ENOMEM, "%s: %s: out of memory", s->path, reading);
    else if (src != SQLITE_DONE)
        rc = fdx_store_fail_sqlite(s, src, reading);
    sqlite3_reset(st);
    return rc;
}

int fdx_check_history(fdx_store *s)
{
    sqlite3_stmt *st;
    if (!s->in_txn)
        s->hist.loaded = 0; /* a read sees the settings of its own snapshot */
    int rc = fdx_history_load(s);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_HISTORY_CHECKED, &st);
    if (rc != FDX_OK)
        return rc;
    fdx_store_bind_named_int64(st, ":max_day", FDX_TIME_MAX / FDX_SECONDS_PER_DAY);
    /* A PostgreSQL store numbers cells from a sequence, not the settings. */
    fdx_store_bind_named_int64(st, ":next_cell_id", s->backend ? INT64_MAX : s->hist.next_cell_id);
    if (s->hist.latest_day != INT64_MIN) /* else NULL: no day yet */
        fdx_store_bind_named_int64(st, ":latest_day", s->hist.latest_day);
    return none_found(s, st, "checking the history");
}

/* Values fdx writes (a merge's target keeps them, and a report sums them). */
static int ledger_values_valid(const fdx_merge_ledger_row *l)
{
    static const char *const kinds[] = {"ingest", "records", "merge", "prune"};
    int kind = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        kind |= strcmp(l->kind, kinds[i]) == 0;
    return kind && l->records >= 0 && l->cells_added >= 0 && l->cells_updated >= 0 &&
           (!l->has_captured_at || (l->captured_at >= 0 && l->captured_at <= FDX_TIME_MAX)) &&
           (!l->run_id || (*l->run_id && fdx_utf8_valid(l->run_id, strlen(l->run_id), NULL))) &&
           fdx_utf8_valid(l->committed_at, strlen(l->committed_at), NULL);
}

int fdx_check_ledger_row(sqlite3_stmt *st, fdx_merge_ledger_row *l)
{
    static const int ints[] = {1, 4, 5, 6};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (sqlite3_column_type(st, ints[i]) != SQLITE_INTEGER)
            return 0;
    int run = sqlite3_column_type(st, 2), at = sqlite3_column_type(st, 7);
    *l = (fdx_merge_ledger_row){.store_id = fdx_row_text_or_null(st, 0),
                                .id = sqlite3_column_int64(st, 1),
                                .run_id = fdx_row_text_or_null(st, 2),
                                .kind = fdx_row_text_or_null(st, 3),
                                .records = sqlite3_column_int64(st, 4),
                                .cells_added = sqlite3_column_int64(st, 5),
                                .cells_updated = sqlite3_column_int64(st, 6),
                                .has_captured_at = at == SQLITE_INTEGER,
                                .captured_at = sqlite3_column_int64(st, 7),
                                .committed_at = fdx_row_text_or_null(st, 8)};
    return fdx_store_id_valid((const unsigned char *)l->store_id) && l->kind && l->committed_at &&
           (run == SQLITE_NULL || l->run_id) && (at == SQLITE_NULL || l->has_captured_at) &&
           ledger_values_valid(l);
}

void fdx_bad_ledger_row(sqlite3_stmt *st, char *what, size_t size)
{
    const char *table = fdx_row_text_or_null(st, 9);
    const char *id = sqlite3_column_type(st, 1) == SQLITE_NULL
                         ? NULL
                         : (const char *)sqlite3_column_text(st, 1); /* its text, whatever type */
    snprintf(what, size, "%s row %s%s: of the wrong types, or of values fdx does not write",
             table ? table : "a ledger", id ? "of id " : "without an id", id ? id : "");
}

int fdx_check_ledger(fdx_store *s)
{
    sqlite3_stmt *st;
    char id[FDX_STORE_ID_HEX];
    /* each row is read with the store's identity: a missing one is named */
    int rc = fdx_identity_read(s, id);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_MERGE_READ_LEDGER, &st);
    if (rc != FDX_OK)
        return rc;
    int src;
    char what[256];
    fdx_merge_ledger_row l;
    while (rc == FDX_OK && (src = sqlite3_step(st)) == SQLITE_ROW)
        if (!fdx_check_ledger_row(st, &l)) {
            fdx_bad_ledger_row(st, what, sizeof what);
            rc = fdx_store_fail(s, FDX_ENOTSTORE, "%s: not a valid fdx store: %s", s->path, what);
        }
    if (rc == FDX_OK && src != SQLITE_DONE)
        rc = fdx_store_fail_sqlite(s, src, "checking the ledger");
    sqlite3_reset(st);
    return rc;
}

/* Digits as SQLite prints a compute capability's number (0 to 2^32-1, as
 * the wire holds it): no sign, no leading zero. */
static const char *plain_digits(const char *p)
{
    size_t n = strspn(p, "0123456789");
    if (n == 0 || n > 10 || (n > 1 && p[0] == '0') || (n == 10 && strncmp(p, "4294967295", 10) > 0))
        return NULL;
    return p + n;
}

int fdx_check_cc_text(const char *cc)
{
    const char *dot;
    return strcmp(cc, "cpu") == 0 ||
           ((dot = plain_digits(cc)) && *dot == '.' && (dot = plain_digits(dot + 1)) && !*dot);
}
