/*
 * A reader of a PostgreSQL store works on a local SQLite copy of it, taken
 * from one REPEATABLE READ snapshot through a cursor, batch by batch. The
 * rows go into fdx's own SQLite tables, whose types and CHECKs refuse what
 * fdx would not have written, and every reader then checks each cell as it
 * checks an SQLite store's: the server is trusted no more than a file.
 */
#include <stdlib.h>
#include <string.h>

#include "sql_text.h"
#include "store/conn.h"
#include "store/pg_schema.h"
#include "store/pg_snapshot.h"

#define INT8OID 20
#define INT4OID 23

typedef struct table {
    const char *name;
    const char *pull; /* PostgreSQL: DECLARE fdx_pull CURSOR FOR ... */
    const char *put;  /* SQLite: INSERT INTO ... */
    int cells;        /* left out of a writer's working copy */
} table;

static const table tables[] = {
    {"store_identity", fdx_sql_pg_pull_store_identity, fdx_sql_snapshot_store_identity, 0},
    {"history_config", fdx_sql_pg_pull_history_config, fdx_sql_snapshot_history_config, 0},
    {"ingest_ledger", fdx_sql_pg_pull_ingest_ledger, fdx_sql_snapshot_ingest_ledger, 0},
    {"ingest_source", fdx_sql_pg_pull_ingest_source, fdx_sql_snapshot_ingest_source, 0},
    {"prune_log", fdx_sql_pg_pull_prune_log, fdx_sql_snapshot_prune_log, 0},
    {"merged_store", fdx_sql_pg_pull_merged_store, fdx_sql_snapshot_merged_store, 0},
    {"merged_ledger", fdx_sql_pg_pull_merged_ledger, fdx_sql_snapshot_merged_ledger, 0},
    {"history_origin", fdx_sql_pg_pull_history_origin, fdx_sql_snapshot_history_origin, 0},
    {"miss_cell", fdx_sql_pg_pull_miss_cell, fdx_sql_snapshot_miss_cell, 1},
    {"dispatch_cell", fdx_sql_pg_pull_dispatch_cell, fdx_sql_snapshot_dispatch_cell, 1},
    {"cell_history", fdx_sql_pg_pull_cell_history, fdx_sql_snapshot_cell_history, 1},
    {"pruned_cell", fdx_sql_pg_pull_pruned_cell, fdx_sql_snapshot_pruned_cell, 1},
    {"pruned_history", fdx_sql_pg_pull_pruned_history, fdx_sql_snapshot_pruned_history, 1},
};

/* Binds row i of r to st: integers as integers, text as text. */
static int bind_row(fdx_store *s, const table *t, const PGresult *r, int i, sqlite3_stmt *st)
{
    int n = PQnfields(r);
    if (n != sqlite3_bind_parameter_count(st))
        return fdx_store_fail(s, FDX_ENOTSTORE, "%s: %s: %d columns read, %d expected", s->path,
                              t->name, n, sqlite3_bind_parameter_count(st));
    int bound = SQLITE_OK;
    for (int k = 0; bound == SQLITE_OK && k < n; k++) {
        if (PQgetisnull(r, i, k))
            bound = sqlite3_bind_null(st, k + 1);
        else if (PQftype(r, k) == INT8OID || PQftype(r, k) == INT4OID)
            bound = sqlite3_bind_int64(st, k + 1, strtoll(PQgetvalue(r, i, k), NULL, 10));
        else
            bound = sqlite3_bind_text(st, k + 1, PQgetvalue(r, i, k), PQgetlength(r, i, k),
                                      SQLITE_STATIC);
    }
    if (bound != SQLITE_OK) /* a text longer than SQLite stores: no fdx store holds one */
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: not an fdx store: a row of %s is not one fdx writes (%s)",
                              s->path, t->name, sqlite3_errstr(bound));
    return FDX_OK;
}

static int put_rows(fdx_store *s, const table *t, const PGresult *r, sqlite3_stmt *st,
                    uint64_t *done)
{
    for (int i = 0; i < PQntuples(r); i++) {
        int rc = bind_row(s, t, r, i, st);
        if (rc != FDX_OK)
            return rc;
        int src = sqlite3_step(st);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        if (src != SQLITE_DONE)
            return fdx_store_fail(s, FDX_ENOTSTORE,
                                  "%s: not an fdx store: a row of %s is not one fdx writes (%s)",
                                  s->path, t->name, sqlite3_errmsg(s->db));
        fdx_store_progress(s, "snapshot", ++*done);
    }
    return FDX_OK;
}

static int pull_table(fdx_store *s, fdx_pg *pg, const table *t, uint64_t *done)
{
    sqlite3_stmt *st = NULL;
    char what[96];
    snprintf(what, sizeof what, "reading %s", t->name);
    if (sqlite3_prepare_v2(s->db, t->put, -1, &st, NULL) != SQLITE_OK) {
        int rc = fdx_store_fail(s, FDX_ERROR, "%s: preparing the copy of %s: %s", s->path, t->name,
                                sqlite3_errmsg(s->db));
        sqlite3_finalize(st);
        return rc;
    }
    int rc = fdx_pg_run(s, pg, t->pull, what);
    while (rc == FDX_OK) {
        PGresult *r = fdx_pg_exec(pg, fdx_sql_pg_fetch, 0, NULL);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            rc = fdx_pg_fail(s, pg, r, what);
        else if (PQntuples(r) == 0) {
            PQclear(r);
            break;
        } else
            rc = put_rows(s, t, r, st, done);
        PQclear(r);
    }
    sqlite3_finalize(st);
    return rc == FDX_OK ? fdx_pg_run(s, pg, fdx_sql_pg_close, what) : rc;
}

int fdx_pg_pull(fdx_store *s, fdx_pg *pg, int with_cells)
{
    uint64_t done = 0;
    char *msg = NULL;
    int rc = fdx_store_exec(s, FDX_STMT_BEGIN_WRITE);
    if (rc != FDX_OK)
        return rc;
    if (sqlite3_exec(s->db, fdx_sql_snapshot_clear, NULL, NULL, &msg) != SQLITE_OK) {
        rc = fdx_store_fail(s, FDX_ERROR, "%s: preparing the working copy: %s", s->path,
                            msg ? msg : "error");
        sqlite3_free(msg);
    }
    if (rc == FDX_OK)
        rc = fdx_pg_run(s, pg, fdx_sql_pg_begin_snapshot, "starting a snapshot");
    if (rc == FDX_OK)
        rc = fdx_pg_schema_check(s, pg); /* in the snapshot the pulls read */
    for (size_t i = 0; rc == FDX_OK && i < sizeof tables / sizeof tables[0]; i++)
        if (with_cells || !tables[i].cells)
            rc = pull_table(s, pg, &tables[i], &done);
    if (rc == FDX_OK)
        rc = fdx_pg_run(s, pg, fdx_sql_pg_commit, "ending the snapshot");
    else
        PQclear(PQexec(pg->conn, fdx_sql_pg_rollback));
    if (rc != FDX_OK) {
        char saved[sizeof s->errmsg];
        memcpy(saved, s->errmsg, sizeof saved);
        fdx_store_exec(s, FDX_STMT_ROLLBACK);
        memcpy(s->errmsg, saved, sizeof saved);
        return rc;
    }
    return fdx_store_exec(s, FDX_STMT_COMMIT);
}
