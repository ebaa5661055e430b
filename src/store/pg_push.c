/*
 * A write transaction on a PostgreSQL store runs into the store's working
 * copy, which starts without cells: at commit the copy holds exactly what the
 * transaction adds, aggregated and checked by the code every store uses. The
 * push applies it in one PostgreSQL transaction: the ledger row first (its
 * UNIQUE run_id is what makes --run-id exactly-once between concurrent
 * writers), the history settings locked (pushes take turns, so retention is
 * applied as in SQLite), the cells COPYed into staging tables and upserted in
 * one statement per table, their history added for the day.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/when.h"
#include "sql_text.h"
#include "store/conn.h"
#include "store/history.h"
#include "store/ledger.h"
#include "store/pg_copy.h"
#include "store/pg_merge.h"
#include "store/pg_prune.h"
#include "store/pg_push.h"
#include "store/pg_schema.h"

#define PUSH_ATTEMPTS 8

typedef struct push {
    fdx_store *s;
    fdx_pg *pg;
    int retry;       /* the last failure may be cured by running again */
    int duplicate;   /* the run id was taken */
    char xid[32];    /* the transaction's id ("" until known) */
    char ledger[32]; /* the PostgreSQL ledger id */
    uint64_t added, updated;
    int cells;                     /* the transaction upserted cells (not only merged) */
    int64_t daily, rolled, latest; /* history_config, locked */
} push;

/* Runs sql; *out (optional) keeps a TUPLES_OK result for the caller. */
static int run(push *p, const char *sql, int n, const char *const *vals, const char *what,
               PGresult **out)
{
    PGresult *r = fdx_pg_exec(p->pg, sql, n, vals);
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        if (out)
            *out = r;
        else
            PQclear(r);
        return FDX_OK;
    }
    /* A lost connection aborted the transaction: running it again is safe. */
    p->retry = fdx_pg_retryable(r) || PQstatus(p->pg->conn) != CONNECTION_OK;
    int rc = fdx_pg_fail(p->s, p->pg, r, what);
    PQclear(r);
    return rc;
}

/* COPYs the rows of the local query local_sql into staging (copy_sql). */
static int stage(push *p, const char *local_sql, const char *copy_sql)
{
    return fdx_pg_copy_in(p->s, p->pg, local_sql, copy_sql, &p->retry);
}

/* Reads a row of two counts (added, updated) and adds them up. */
static int upsert(push *p, const char *sql, const char *what)
{
    PGresult *r = NULL;
    const char *vals[] = {p->ledger};
    int rc = run(p, sql, 1, vals, what, &r);
    if (rc != FDX_OK)
        return rc;
    p->added += strtoull(PQgetvalue(r, 0, 0), NULL, 10);
    p->updated += strtoull(PQgetvalue(r, 0, 1), NULL, 10);
    PQclear(r);
    return FDX_OK;
}

static void text_of(char out[32], long long v)
{
    snprintf(out, 32, "%lld", v);
}

/* The local ledger row as the values of pg/ledger_insert.sql. */
static int insert_ledger(push *p)
{
    fdx_store *s = p->s;
    sqlite3_stmt *st = NULL;
    char nums[6][32];
    const char *vals[9] = {NULL};
    int rc = FDX_OK;
    if (sqlite3_prepare_v2(s->db, fdx_sql_push_ledger, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return fdx_store_fail_sqlite(s, sqlite3_errcode(s->db), "reading the ledger");
    }
    sqlite3_bind_int64(st, 1, s->ledger.id);
    int src = sqlite3_step(st);
    if (src != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fdx_store_fail_sqlite(s, src, "reading the ledger");
    }
    for (int i = 0; i < 3; i++)
        vals[i] = (const char *)sqlite3_column_text(st, i);
    for (int i = 0; i < 5; i++) {
        text_of(nums[i], (long long)sqlite3_column_int64(st, 3 + i));
        vals[3 + i] = nums[i];
    }
    text_of(nums[5], (long long)sqlite3_column_int64(st, 9));
    vals[8] = sqlite3_column_type(st, 9) == SQLITE_NULL ? NULL : nums[5];
    PGresult *r = NULL;
    rc = run(p, fdx_sql_pg_ledger_insert, 9, vals, "writing the ledger", &r);
    sqlite3_finalize(st);
    if (rc != FDX_OK)
        return rc;
    if (PQntuples(r) == 0)
        p->duplicate = 1;
    else
        snprintf(p->ledger, sizeof p->ledger, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return FDX_OK;
}

static int insert_sources(push *p)
{
    fdx_store *s = p->s;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, fdx_sql_push_sources, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return fdx_store_fail_sqlite(s, sqlite3_errcode(s->db), "reading the ledger");
    }
    sqlite3_bind_int64(st, 1, s->ledger.id);
    int rc = FDX_OK, src;
    while (rc == FDX_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        char nums[6][32];
        const char *vals[8] = {p->ledger};
        static const int num_cols[] = {0, 3, 4, 5, 6};
        static const int num_pos[] = {1, 4, 5, 6, 7};
        for (int i = 0; i < 5; i++) {
            text_of(nums[i], (long long)sqlite3_column_int64(st, num_cols[i]));
            vals[num_pos[i]] = nums[i];
        }
        vals[2] = (const char *)sqlite3_column_text(st, 1);
        vals[3] = (const char *)sqlite3_column_text(st, 2);
        rc = run(p, fdx_sql_pg_source_insert, 8, vals, "writing the ledger", NULL);
    }
    if (rc == FDX_OK && src != SQLITE_DONE)
        rc = fdx_store_fail_sqlite(s, src, "reading the ledger");
    sqlite3_finalize(st);
    return rc;
}

/* Takes the push's turn: locks history_config and reads the retention. */
static int history_lock(push *p)
{
    fdx_store *s = p->s;
    PGresult *r = NULL;
    int rc = run(p, fdx_sql_pg_history_config_lock, 0, NULL, "reading the history settings", &r);
    if (rc != FDX_OK)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return fdx_store_fail(s, FDX_ENOTSTORE, "%s: the history settings are missing", s->path);
    }
    /* The one this transaction set, or the store's as it is now: the working
     * copy's is the store's as read at open, which a push committed since may
     * have changed (writing it back reverted that push's setting). */
    int64_t stored = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    p->daily = s->hist.daily_set ? s->hist.daily_days : stored;
    p->rolled = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    p->latest = PQgetisnull(r, 0, 2) ? INT64_MIN : strtoll(PQgetvalue(r, 0, 2), NULL, 10);
    PQclear(r);
    /* As they are now, not as the open read them: every writer builds on them. */
    const char *bad = fdx_history_bad_setting(stored, p->rolled, p->latest);
    return bad ? fdx_store_fail(s, FDX_ENOTSTORE, FDX_BAD_SETTING, s->path, bad) : FDX_OK;
}

/* Adds the day's history of the upserted cells and moves the daily window on. */
static int history_write(push *p)
{
    int64_t day = fdx_history_txn_day(p->s);
    char bucket[32], lo[32], hi[32], dd[32], lat[32];
    text_of(bucket, day < p->rolled ? fdx_month_start(day) : day);
    const char *vals[1] = {bucket};
    int rc = run(p, fdx_sql_pg_history_add, 1, vals, "writing history", NULL);
    if (rc != FDX_OK)
        return rc;
    if (p->cells && p->latest < day)
        p->latest = day;
    int64_t keep_from = fdx_history_keep_from(p->latest, p->daily);
    if (keep_from > p->rolled) {
        text_of(lo, p->rolled);
        text_of(hi, keep_from);
        const char *range[] = {lo, hi};
        rc = run(p, fdx_sql_pg_history_rollup, 2, range, "rolling up history", NULL);
        if (rc == FDX_OK)
            rc = run(p, fdx_sql_pg_history_rollup_clear, 2, range, "rolling up history", NULL);
        if (rc != FDX_OK)
            return rc;
        p->rolled = keep_from;
    }
    text_of(dd, p->daily);
    text_of(lo, p->rolled);
    text_of(lat, p->latest);
    const char *cfg[] = {dd, lo, p->latest == INT64_MIN ? NULL : lat};
    return run(p, fdx_sql_pg_history_config_write, 3, cfg, "writing the history settings", NULL);
}

/* Waits for the lost transaction to end, for no longer than the busy
 * timeout (the session's lock timeout, set again by the reconnection): every
 * push holds the history settings' row until it ends, so taking that row
 * waits for it (a failure to take it is told by the status asked again). */
static void wait_for_lost(push *p)
{
    PQclear(fdx_pg_exec(p->pg, fdx_sql_pg_begin, 0, NULL));
    PQclear(fdx_pg_exec(p->pg, fdx_sql_pg_history_config_lock, 0, NULL));
    PQclear(fdx_pg_exec(p->pg, fdx_sql_pg_rollback, 0, NULL));
}

/* Whether the transaction the connection lost while committing committed:
 * asked of the server over a new connection. One still committing there
 * ('in progress': its COMMIT not yet flushed) is waited for: taken for one
 * that did not commit, it was pushed again and counted twice. FDX_EIO when
 * the server cannot tell. */
static int learn_outcome(push *p, int *committed)
{
    if (fdx_pg_reset(p->s, p->pg) != FDX_OK)
        return FDX_EIO;
    for (int asked = 0;; asked++) {
        PGresult *r = NULL;
        const char *vals[] = {p->xid};
        int rc =
            run(p, fdx_sql_pg_txid_status, 1, vals, "asking whether the commit went through", &r);
        if (rc != FDX_OK)
            return rc;
        const char *status = PQgetisnull(r, 0, 0) ? NULL : PQgetvalue(r, 0, 0);
        int settled = status && (!strcmp(status, "committed") || !strcmp(status, "aborted"));
        int pending = status && !strcmp(status, "in progress");
        *committed = settled && !strcmp(status, "committed");
        PQclear(r);
        if (settled)
            return FDX_OK;
        if (!pending || asked == 3)
            return FDX_EIO;
        wait_for_lost(p);
    }
}

/* What running the transaction again does, when its outcome is unknown. */
static const char *rerun_advice(const fdx_store *s)
{
    if (s->ledger.merged || s->ledger.pruned)
        return "running it again is exact (a merge already applied, or a prune already made, "
               "changes nothing)";
    if (s->ledger.run_id)
        return "a run with the same --run-id finds out and never counts twice";
    return "look for its row in the store's ingest_ledger before running it again (without "
           "--run-id, a second run counts it twice)";
}

static int commit(push *p)
{
    PGresult *r = fdx_pg_exec(p->pg, fdx_sql_pg_commit, 0, NULL);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    int lost = !ok && PQstatus(p->pg->conn) != CONNECTION_OK;
    int rc = ok ? FDX_OK : fdx_pg_fail(p->s, p->pg, r, "committing");
    if (!ok)
        p->retry = fdx_pg_retryable(r);
    PQclear(r);
    if (!lost || !*p->xid)
        return rc;
    char lost_msg[sizeof p->s->errmsg];
    memcpy(lost_msg, p->s->errmsg, sizeof lost_msg);
    int committed = 0;
    if (learn_outcome(p, &committed) != FDX_OK) {
        p->retry = 0; /* running it again could count it twice */
        fdx_store_fail(p->s, FDX_EIO,
                       "%s: the connection was lost during COMMIT and whether it went through "
                       "is unknown (%s): %s",
                       p->s->path, lost_msg, rerun_advice(p->s));
        return FDX_EIO;
    }
    if (committed)
        return FDX_OK;
    memcpy(p->s->errmsg, lost_msg, sizeof lost_msg);
    p->retry = 1; /* it did not commit: running it again is safe */
    return rc;
}

/* The merges the transaction made (pg_merge.c), after its cells. */
static int merge(push *p)
{
    fdx_pg_merged m;
    p->cells = p->added + p->updated > 0;
    int rc = fdx_pg_merge_apply(p->s, p->pg, p->ledger, p->rolled, &m, &p->retry);
    if (rc != FDX_OK)
        return rc;
    p->added += m.added;
    p->updated += m.updated;
    if (m.latest_day > p->latest)
        p->latest = m.latest_day;
    return FDX_OK;
}

static int push_once(push *p)
{
    PGresult *r = NULL;
    p->added = p->updated = 0;
    p->duplicate = 0;
    p->xid[0] = '\0';
    int rc = run(p, fdx_sql_pg_begin, 0, NULL, "starting the transaction", NULL);
    if (rc == FDX_OK && (rc = fdx_pg_lock_timeout(p->s, p->pg, 1)) != FDX_OK)
        p->retry = PQstatus(p->pg->conn) != CONNECTION_OK;
    if (rc == FDX_OK &&
        (rc = run(p, fdx_sql_pg_txid, 0, NULL, "starting the transaction", &r)) == FDX_OK) {
        snprintf(p->xid, sizeof p->xid, "%s", PQgetvalue(r, 0, 0));
        PQclear(r);
    }
    if (rc == FDX_OK)
        rc = insert_ledger(p);
    if (rc == FDX_OK && !p->duplicate) {
        PGresult *c = PQexec(p->pg->conn, fdx_sql_pg_stage_create); /* several statements */
        if (PQresultStatus(c) != PGRES_COMMAND_OK) {
            p->retry = fdx_pg_retryable(c);
            rc = fdx_pg_fail(p->s, p->pg, c, "staging cells");
        }
        PQclear(c);
        if (rc == FDX_OK)
            rc = stage(p, fdx_sql_push_misses, fdx_sql_pg_stage_copy_misses);
        if (rc == FDX_OK)
            rc = stage(p, fdx_sql_push_dispatches, fdx_sql_pg_stage_copy_dispatches);
        if (rc == FDX_OK)
            rc = history_lock(p); /* the turn is taken before any cell is touched */
        if (rc == FDX_OK)
            rc = upsert(p, fdx_sql_pg_upsert_misses, "writing miss cells");
        if (rc == FDX_OK)
            rc = upsert(p, fdx_sql_pg_upsert_dispatches, "writing dispatch cells");
        if (rc == FDX_OK)
            rc = merge(p);
        if (rc == FDX_OK && p->s->ledger.pruned)
            rc = fdx_pg_prune_apply(p->s, p->pg, p->ledger, &p->retry);
        if (rc == FDX_OK)
            rc = history_write(p);
        if (rc == FDX_OK)
            rc = insert_sources(p);
        if (rc == FDX_OK) {
            char a[32], u[32];
            text_of(a, (long long)p->added);
            text_of(u, (long long)p->updated);
            const char *vals[] = {p->ledger, a, u};
            rc = run(p, fdx_sql_pg_ledger_counts, 3, vals, "writing the ledger", NULL);
        }
    }
    /* After the last write: a trigger added since the open acted on the
     * writes (none can be added to a table this transaction wrote now). */
    if (rc == FDX_OK && !p->duplicate)
        rc = fdx_pg_schema_check(p->s, p->pg);
    if (rc == FDX_OK && !p->duplicate) {
        rc = commit(p);
        p->s->pushed = rc == FDX_OK;
        return rc;
    }
    if (PQstatus(p->pg->conn) == CONNECTION_OK)
        PQclear(PQexec(p->pg->conn, fdx_sql_pg_rollback));
    return rc;
}

/* Another writer committed this run id: the same files are the no-op they
 * are, anything else is refused (fdx_ledger_repeat_verdict). */
static int duplicate(push *p)
{
    fdx_store *s = p->s;
    PGresult *r = NULL;
    const char *vals[] = {s->ledger.run_id};
    if (!s->ledger.run_id) /* only an index fdx does not make refuses a row without one */
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: not an fdx store: its ingest_ledger refused a row without a "
                              "run id (an index or constraint fdx does not make)",
                              s->path);
    int rc = run(p, fdx_sql_pg_ledger_find_run, 1, vals, "reading the ledger", &r);
    if (rc != FDX_OK)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return fdx_store_fail(s, FDX_ERROR, "%s: run id '%s' was taken and then went away", s->path,
                              s->ledger.run_id);
    }
    rc = fdx_ledger_repeat_verdict(s, PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 2),
                                   atoll(PQgetvalue(r, 0, 0)));
    PQclear(r);
    return rc;
}

static void backoff(int attempt)
{
    long ms = (10L << attempt) + rand() % (10L << attempt);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int fdx_pg_push(fdx_store *s, fdx_pg *pg)
{
    push p = {.s = s, .pg = pg};
    memset(&s->txn_stats, 0, sizeof s->txn_stats);
    if (!s->ledger.id)
        return FDX_OK; /* the transaction changed nothing */
    int rc = FDX_OK;
    for (int attempt = 0; attempt < PUSH_ATTEMPTS; attempt++) {
        if (attempt) {
            backoff(attempt - 1);
            /* a server still unreachable: why is kept, not hidden by a
             * statement sent on no connection */
            if (PQstatus(pg->conn) != CONNECTION_OK && (rc = fdx_pg_reset(s, pg)) != FDX_OK)
                continue;
        }
        p.retry = 0;
        rc = push_once(&p);
        if (rc == FDX_OK || !p.retry)
            break;
    }
    fdx_pg_prune_forget(pg);
    if (rc == FDX_OK)
        rc = fdx_pg_merge_forget(s);
    if (rc != FDX_OK)
        return rc;
    if (p.duplicate)
        return duplicate(&p);
    s->txn_stats.cells_added = p.added;
    s->txn_stats.cells_updated = p.updated;
    return FDX_OK;
}
