/*
 * The migrations, one SQL script (or two) per schema version. They depend on
 * nothing but SQLite and the embedded SQL, so that the build can run them to
 * make the schema image the store is compared with (schema_image_gen.c).
 */
#include "store/migrations.h"

#include <stdio.h>

#include "sql_text.h"

/* migrations[v] upgrades a store from schema version v to v + 1. */
static const char *const migrations[][2] = {
    {fdx_sql_schema_1, NULL},          {fdx_sql_schema_2, NULL},
    {fdx_sql_views, fdx_sql_schema_3}, {fdx_sql_schema_4, NULL},
    {fdx_sql_schema_5, fdx_sql_views}, {fdx_sql_schema_6, NULL},
    {fdx_sql_views, fdx_sql_schema_7},
};

/* The last version whose migration changed a table, an index or a trigger:
 * from it on, versions differ in their views alone, which no reader of fdx's
 * uses (each reads the tables), so a read-only open reads such a store as it
 * is. A test holds this to what the migrations make. */
enum { LAST_TABLE_CHANGE = 6 };

int fdx_schema_tables_since(void)
{
    return LAST_TABLE_CHANGE;
}

int fdx_schema_version(void)
{
    return (int)(sizeof migrations / sizeof migrations[0]);
}

int fdx_schema_migrate(sqlite3 *db, int64_t from, char *err, size_t errsz)
{
    return fdx_schema_migrate_to(db, from, fdx_schema_version(), err, errsz);
}

int fdx_schema_exec(sqlite3 *db, const char *sql, const char *doing, char *err, size_t errsz)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        snprintf(err, errsz, "%s: %s", doing, msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return rc;
}

int fdx_schema_migrate_to(sqlite3 *db, int64_t from, int64_t to, char *err, size_t errsz)
{
    int rc = SQLITE_OK;
    for (int64_t v = from; rc == SQLITE_OK && v < to && v < fdx_schema_version(); v++)
        for (int k = 0; rc == SQLITE_OK && k < 2 && migrations[v][k]; k++) {
            char doing[48];
            snprintf(doing, sizeof doing, "migrating to schema %lld", (long long)v + 1);
            rc = fdx_schema_exec(db, migrations[v][k], doing, err, errsz);
        }
    return rc;
}
