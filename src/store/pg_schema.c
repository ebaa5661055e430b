/*
 * Creating the fdx tables in PostgreSQL and refusing a database whose fdx
 * tables are not exactly the ones fdx creates: a store on a shared server is
 * as untrusted as an SQLite file from another host (schema.c does the same
 * for SQLite).
 */
#include <stdlib.h>
#include <string.h>

#include "sql_text.h"
#include "store/conn.h"
#include "store/pg_schema.h"

/* One integer from a one-row query; FDX_OK or fdx_pg_fail's code. */
static int query_int(fdx_store *s, fdx_pg *pg, const char *sql, const char *what, long long *out)
{
    PGresult *r = fdx_pg_exec(pg, sql, 0, NULL);
    int rc = FDX_OK;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        rc = fdx_pg_fail(s, pg, r, what);
    else if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0))
        rc = fdx_store_fail(s, FDX_ENOTSTORE, "%s: %s: no value", s->path, what);
    else
        *out = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return rc;
}

static int create(fdx_store *s, fdx_pg *pg)
{
    long long have = 0;
    int rc = fdx_pg_run(s, pg, fdx_sql_pg_begin, "creating the fdx tables");
    if (rc == FDX_OK)
        rc = fdx_pg_run(s, pg, fdx_sql_pg_lock, "locking the schema");
    if (rc == FDX_OK)
        rc = query_int(s, pg, fdx_sql_pg_meta_exists, "reading the schema", &have);
    if (rc == FDX_OK && !have) {
        PGresult *r = PQexec(pg->conn, fdx_sql_pg_schema); /* no parameters: several statements */
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            rc = fdx_pg_fail(s, pg, r, "creating the fdx tables");
        PQclear(r);
    }
    if (rc == FDX_OK)
        return fdx_pg_run(s, pg, fdx_sql_pg_commit, "creating the fdx tables");
    PQclear(PQexec(pg->conn, fdx_sql_pg_rollback));
    return rc;
}

int fdx_pg_schema_check(fdx_store *s, fdx_pg *pg)
{
    PGresult *r = fdx_pg_exec(pg, fdx_sql_pg_catalog_check, 0, NULL);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        int rc = fdx_pg_fail(s, pg, r, "reading the schema");
        PQclear(r);
        return rc;
    }
    int rc = FDX_OK;
    if (PQntuples(r) > 0)
        rc = fdx_store_fail(s, FDX_ENOTSTORE,
                            "%s: not an fdx store (its tables are not the ones fdx creates): %s%s",
                            s->path, PQgetvalue(r, 0, 0), PQntuples(r) > 1 ? " (and more)" : "");
    PQclear(r);
    return rc;
}

int fdx_pg_schema_ready(fdx_store *s, fdx_pg *pg, int may_create)
{
    long long have = 0, version = 0;
    int rc = query_int(s, pg, fdx_sql_pg_meta_exists, "reading the schema", &have);
    if (rc == FDX_OK && !have && !may_create)
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: not an fdx store (no fdx_meta table in the current schema): "
                              "ingest into it once to create the store",
                              s->path);
    if (rc == FDX_OK && !have)
        rc = create(s, pg);
    if (rc != FDX_OK)
        return rc;
    /* A newer fdx's layout is named as such before its tables are compared
     * with this build's, which they need not be; a version that cannot be
     * read is told after the comparison, which says why more precisely. */
    int read = query_int(s, pg, fdx_sql_pg_meta_read, "reading the schema version", &version);
    if (read == FDX_OK && version > FDX_PG_SCHEMA_VERSION)
        return fdx_store_fail(s, FDX_ESCHEMA,
                              "%s: written by a newer fdx (PostgreSQL layout version %lld; this "
                              "build reads up to %d): upgrade fdx",
                              s->path, version, FDX_PG_SCHEMA_VERSION);
    rc = fdx_pg_schema_check(s, pg);
    if (rc == FDX_OK)
        rc = read;
    if (rc == FDX_OK && version != FDX_PG_SCHEMA_VERSION)
        return fdx_store_fail(s, FDX_ENOTSTORE, "%s: not an fdx store (layout version %lld)",
                              s->path, version);
    return rc;
}
