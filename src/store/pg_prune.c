/*
 * A prune of a PostgreSQL store runs where its cells are: the statements of
 * sql/pg/prune_*.sql mirror sql/prune_*.sql, so the cells removed, their
 * tombstones and the counts reported are those of an SQLite store. The push
 * applies the prune in its own transaction, after taking the history
 * settings' lock, and its counts are the ones reported (fdx_store_pruned) and
 * logged; a count asked for before (a dry run's) runs in a transaction rolled
 * back, and nothing is counted twice when none is asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cell/agg.h"
#include "sql_text.h"
#include "store/conn.h"
#include "store/pg_prune.h"

static int run_prune(fdx_store *s, fdx_pg *pg, fdx_prune_stats *stats, int *retry)
{
    const char *sql[] = {fdx_sql_pg_prune_misses, fdx_sql_pg_prune_dispatches};
    uint64_t *cells[] = {&stats->miss_cells, &stats->dispatch_cells};
    stats->miss_cells = stats->dispatch_cells = stats->observations = 0;
    for (int i = 0; i < 2; i++) {
        PGresult *r = fdx_pg_exec(pg, sql[i], 7, (const char *const *)pg->prune);
        if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
            if (retry)
                *retry = fdx_pg_retryable(r) || PQstatus(pg->conn) != CONNECTION_OK;
            int rc = fdx_pg_fail(s, pg, r, "pruning cells");
            PQclear(r);
            return rc;
        }
        *cells[i] = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
        uint64_t n = strtoull(PQgetvalue(r, 0, 1), NULL, 10);
        stats->observations =
            n > FDX_COUNT_MAX - stats->observations ? FDX_COUNT_MAX : stats->observations + n;
        PQclear(r);
    }
    PGresult *r = fdx_pg_exec(pg, fdx_sql_pg_prune_history, 0, NULL);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    int rc = ok ? FDX_OK : fdx_pg_fail(s, pg, r, "pruning history");
    if (!ok && retry)
        *retry = fdx_pg_retryable(r) || PQstatus(pg->conn) != CONNECTION_OK;
    PQclear(r);
    return rc;
}

void fdx_pg_prune_forget(fdx_pg *pg)
{
    for (size_t i = 0; i < sizeof pg->prune / sizeof pg->prune[0]; i++) {
        free(pg->prune[i]);
        pg->prune[i] = NULL;
    }
    pg->pruning = 0;
}

int fdx_pg_prune_count(fdx_store *s, fdx_pg *pg, const char *const values[7], const char *json,
                       fdx_prune_stats *stats)
{
    fdx_pg_prune_forget(pg);
    for (int i = 0; i < 8; i++) {
        const char *v = i < 7 ? values[i] : json;
        if (v && !(pg->prune[i] = strdup(v))) { /* "" matches the empty string */
            fdx_pg_prune_forget(pg);
            return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
        }
    }
    pg->pruning = 1;
    if (!stats)
        return FDX_OK;
    int rc = fdx_pg_run(s, pg, fdx_sql_pg_begin, "starting the transaction");
    if (rc == FDX_OK)
        rc = run_prune(s, pg, stats, NULL);
    if (PQstatus(pg->conn) == CONNECTION_OK)
        PQclear(PQexec(pg->conn, fdx_sql_pg_rollback));
    return rc;
}

int fdx_pg_prune_apply(fdx_store *s, fdx_pg *pg, const char *ledger, int *retry)
{
    if (!pg->pruning)
        return FDX_OK;
    fdx_prune_stats st;
    int rc = run_prune(s, pg, &st, retry);
    if (rc != FDX_OK)
        return rc;
    char nums[3][32];
    snprintf(nums[0], sizeof nums[0], "%llu", (unsigned long long)st.miss_cells);
    snprintf(nums[1], sizeof nums[1], "%llu", (unsigned long long)st.dispatch_cells);
    snprintf(nums[2], sizeof nums[2], "%llu", (unsigned long long)st.observations);
    const char *vals[] = {ledger, pg->prune[7] ? pg->prune[7] : "{}", nums[0], nums[1], nums[2]};
    PGresult *r = fdx_pg_exec(pg, fdx_sql_pg_prune_log_insert, 5, vals);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    rc = ok ? FDX_OK : fdx_pg_fail(s, pg, r, "recording a prune");
    if (!ok)
        *retry = fdx_pg_retryable(r) || PQstatus(pg->conn) != CONNECTION_OK;
    else
        s->pruned = st;
    PQclear(r);
    return rc;
}
