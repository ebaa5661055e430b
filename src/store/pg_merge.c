/*
 * Merging into a PostgreSQL store. The source is read and staged exactly as
 * for an SQLite target (merge_sqlite.c's staging, in the working copy); what
 * differs is where it is applied. The working copy holds none of the store's
 * cells, so the apply cannot run there: each source's staged rows are kept in
 * the working copy's transaction (pgm_keep.sql), and the push applies them in
 * its one PostgreSQL transaction, after the ledger row and with
 * history_config locked: for each source in turn, COPY into TEMP staging
 * tables (pg/merge_stage_create.sql) and the set-based statements
 * pg/merge_*.sql, which mirror merge_apply_*.sql step by step
 * (docs/FORMAT.md, "How a merge applies"). A merge of several sources is
 * therefore all or nothing, like a merge into an SQLite store, and runs
 * again as a whole on a serialization failure, a deadlock or a lost
 * connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_text.h"
#include "store/conn.h"
#include "store/merge_sqlite.h"
#include "store/pg_copy.h"
#include "store/pg_merge.h"

static int prepare(fdx_store *s, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) == SQLITE_OK)
        return FDX_OK;
    sqlite3_finalize(*st);
    *st = NULL;
    return fdx_store_fail_sqlite(s, sqlite3_errcode(s->db), "keeping a merge for the push");
}

/* A statement over the kept merges' tables, made first if need be. */
static int prepare_kept(fdx_store *s, const char *sql, sqlite3_stmt **st)
{
    int rc = fdx_store_script(s, fdx_sql_pgm_keep, "keeping a merge for the push");
    return rc == FDX_OK ? prepare(s, sql, st) : rc;
}

/* Whether a source kept earlier in this transaction is this very ledger. */
static int kept_before(fdx_store *dst, const fdx_merge_source *src, int *kept)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare_kept(dst, fdx_sql_pgm_kept, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, src->store_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, src->ledger_high);
    sqlite3_bind_text(st, 3, src->digest, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    *kept = step == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return step == SQLITE_ROW ? FDX_OK
                              : fdx_store_fail_sqlite(dst, step, "reading the kept merges");
}

/* Staging is merge_sqlite.c's: the source is checked and staged the same way
 * for every target. A source given twice is known by what this transaction
 * keeps for the push, which the working copy's merged_store does not hold. */
static int known(void *t, const fdx_merge_source *src, fdx_merge_known *out)
{
    int kept = 0, rc = fdx_merge_sqlite_ops.known(t, src, out);
    if (rc == FDX_OK && *out == FDX_MERGE_NEW)
        rc = kept_before(t, src, &kept);
    if (rc == FDX_OK && kept) {
        *out = FDX_MERGE_UNCHANGED;
        fdx_merge_sqlite_unchanged(t, src);
    }
    return rc;
}

static int begin(void *t, const fdx_merge_source *src)
{
    return fdx_merge_sqlite_ops.begin(t, src);
}

static int stage_cell(void *t, int64_t staged, const fdx_cell *c, fdx_str cands,
                      const int64_t *set_at)
{
    return fdx_merge_sqlite_ops.stage_cell(t, staged, c, cands, set_at);
}

static int stage_history(void *t, int64_t staged, int64_t day, const char *store_id, uint64_t count,
                         int pruned)
{
    return fdx_merge_sqlite_ops.stage_history(t, staged, day, store_id, count, pruned);
}

static int stage_ledger(void *t, const fdx_merge_ledger_row *row)
{
    return fdx_merge_sqlite_ops.stage_ledger(t, row);
}

static int stage_store(void *t, const char *store_id, int64_t ledger_high, const char *digest,
                       const char *how)
{
    return fdx_merge_sqlite_ops.stage_store(t, store_id, ledger_high, digest, how);
}

static void end(void *t)
{
    fdx_merge_sqlite_ops.end(t);
}

static int fail(void *t, int code, const char *msg)
{
    return fdx_merge_sqlite_ops.fail(t, code, msg);
}

/* The apply of merge_stage.h: keeps the staged rows for the push. The counts
 * are PostgreSQL's, known at commit. */
static int keep(void *t, const fdx_merge_source *src, fdx_merge_applied *out)
{
    fdx_store *dst = t;
    sqlite3_stmt *st = NULL;
    *out = (fdx_merge_applied){0, 0};
    int rc = prepare_kept(dst, fdx_sql_pgm_source, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, src->path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, src->rolled_before);
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    if (step != SQLITE_DONE)
        return fdx_store_fail_sqlite(dst, step, "keeping a merge for the push");
    return fdx_store_script(dst, fdx_sql_pgm_keep_rows, "keeping a merge for the push");
}

const fdx_merge_target_ops fdx_merge_pg_ops = {
    known, begin, stage_cell, stage_history, stage_ledger, stage_store, keep, end, fail,
};

typedef struct apply_ctx {
    fdx_store *s;
    fdx_pg *pg;
    int *retry;
} apply_ctx;

/* Runs sql with n text parameters; *tuples (optional) gets the rows it
 * changed, *out (optional) keeps a row-returning result. */
static int run(apply_ctx *a, const char *sql, int n, const char *const *vals, uint64_t *tuples,
               PGresult **out)
{
    PGresult *r = fdx_pg_exec(a->pg, sql, n, vals);
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        if (tuples)
            *tuples = strtoull(PQcmdTuples(r), NULL, 10);
        if (out)
            *out = r;
        else
            PQclear(r);
        return FDX_OK;
    }
    *a->retry = fdx_pg_retryable(r) || PQstatus(a->pg->conn) != CONNECTION_OK;
    int rc = fdx_pg_fail(a->s, a->pg, r, "applying a merge");
    PQclear(r);
    return rc;
}

/* Locks every origin store the kept history names, in sorted order, before
 * any count is read: merges carrying the same store take turns. */
static int lock_origins(apply_ctx *a)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(a->s, fdx_sql_pgm_origins, &st), step = SQLITE_DONE;
    while (rc == FDX_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        char hex[17], key[24];
        snprintf(hex, sizeof hex, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(key, sizeof key, "%lld", (long long)(int64_t)strtoull(hex, NULL, 16));
        const char *vals[] = {key};
        rc = run(a, fdx_sql_pg_merge_lock, 1, vals, NULL, NULL);
    }
    sqlite3_finalize(st);
    if (rc == FDX_OK && step != SQLITE_DONE)
        rc = fdx_store_fail_sqlite(a->s, step, "reading the kept merges");
    return rc;
}

static int choose(apply_ctx *a, int64_t seq)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(a->s, fdx_sql_pgm_now, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, seq);
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? FDX_OK
                               : fdx_store_fail_sqlite(a->s, step, "reading the kept merges");
}

/* One kept source: staged into PostgreSQL, then applied. */
static int apply_one(apply_ctx *a, int64_t seq, const char *path, int64_t src_rolled,
                     const char *ledger, int64_t rolled, fdx_pg_merged *out)
{
    int rc = choose(a, seq);
    if (rc != FDX_OK)
        return rc;
    PGresult *c = PQexec(a->pg->conn, fdx_sql_pg_merge_stage_create); /* several statements */
    if (PQresultStatus(c) != PGRES_COMMAND_OK) {
        *a->retry = fdx_pg_retryable(c) || PQstatus(a->pg->conn) != CONNECTION_OK;
        rc = fdx_pg_fail(a->s, a->pg, c, "staging a merge");
    }
    PQclear(c);
    const char *const copies[][2] = {
        {fdx_sql_pgm_rows_cell, fdx_sql_pg_merge_copy_cell},
        {fdx_sql_pgm_rows_history, fdx_sql_pg_merge_copy_history},
        {fdx_sql_pgm_rows_ledger, fdx_sql_pg_merge_copy_ledger},
        {fdx_sql_pgm_rows_store, fdx_sql_pg_merge_copy_store},
    };
    for (size_t i = 0; rc == FDX_OK && i < sizeof copies / sizeof copies[0]; i++)
        rc = fdx_pg_copy_in(a->s, a->pg, copies[i][0], copies[i][1], a->retry);
    char coarse[24];
    snprintf(coarse, sizeof coarse, "%lld", (long long)(src_rolled > rolled ? src_rolled : rolled));
    uint64_t added = 0, misses = 0, dispatches = 0;
    const char *arg_coarse[] = {coarse}, *arg_ledger[] = {ledger}, *arg_path[] = {path};
    const struct {
        const char *sql;
        const char *const *arg;
        uint64_t *tuples;
    } steps[] = {
        {fdx_sql_pg_merge_origins, NULL, NULL},
        {fdx_sql_pg_merge_targets, NULL, NULL},
        {fdx_sql_pg_merge_src, NULL, NULL},
        {fdx_sql_pg_merge_tgt, NULL, NULL},
        {fdx_sql_pg_merge_delta, arg_coarse, NULL},
        {fdx_sql_pg_merge_gain, NULL, NULL},
        {fdx_sql_pg_merge_number, NULL, &added},
        {fdx_sql_pg_merge_new_misses, arg_ledger, NULL},
        {fdx_sql_pg_merge_new_dispatches, arg_ledger, NULL},
        {fdx_sql_pg_merge_misses, arg_ledger, &misses},
        {fdx_sql_pg_merge_dispatches, arg_ledger, &dispatches},
        {fdx_sql_pg_merge_history, NULL, NULL},
        {fdx_sql_pg_merge_ledger, NULL, NULL},
        {fdx_sql_pg_merge_stores, arg_path, NULL},
    };
    for (size_t i = 0; rc == FDX_OK && i < sizeof steps / sizeof steps[0]; i++)
        rc = run(a, steps[i].sql, steps[i].arg ? 1 : 0, steps[i].arg, steps[i].tuples, NULL);
    PGresult *r = NULL;
    if (rc == FDX_OK)
        rc = run(a, fdx_sql_pg_merge_max_day, 0, NULL, NULL, &r);
    if (rc != FDX_OK)
        return rc;
    if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) {
        int64_t day = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        if (day > out->latest_day)
            out->latest_day = day;
    }
    PQclear(r);
    out->added += added;
    out->updated += misses + dispatches;
    return FDX_OK;
}

int fdx_pg_merge_apply(fdx_store *s, fdx_pg *pg, const char *ledger, int64_t rolled,
                       fdx_pg_merged *out, int *retry)
{
    apply_ctx a = {s, pg, retry};
    sqlite3_stmt *st = NULL;
    *out = (fdx_pg_merged){0, 0, INT64_MIN};
    int rc = fdx_store_script(s, fdx_sql_pgm_keep, "reading the kept merges");
    if (rc == FDX_OK)
        rc = lock_origins(&a);
    if (rc == FDX_OK)
        rc = prepare(s, fdx_sql_pgm_sources, &st);
    int step = SQLITE_DONE;
    while (rc == FDX_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        char *path = strdup((const char *)sqlite3_column_text(st, 1));
        if (!path) {
            rc = fdx_store_fail(s, FDX_ENOMEM, "out of memory");
            break;
        }
        rc = apply_one(&a, sqlite3_column_int64(st, 0), path, sqlite3_column_int64(st, 2), ledger,
                       rolled, out);
        free(path);
    }
    sqlite3_finalize(st);
    if (rc == FDX_OK && step != SQLITE_DONE)
        rc = fdx_store_fail_sqlite(s, step, "reading the kept merges");
    return rc;
}

int fdx_pg_merge_forget(fdx_store *s)
{
    int rc = fdx_store_script(s, fdx_sql_pgm_keep, "forgetting the kept merges");
    return rc == FDX_OK ? fdx_store_script(s, fdx_sql_pgm_forget, "forgetting the kept merges")
                        : rc;
}
