/*
 * The migrations that build fdx's schema, version by version (migrations.c).
 * Apart from the store so that the build can run them too: the schema image
 * (schema_image.h) is what they make in an empty database.
 */
#ifndef FDX_STORE_MIGRATIONS_H
#define FDX_STORE_MIGRATIONS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* The current schema version. */
int fdx_schema_version(void);
/* The oldest version whose tables, indexes and triggers are the current
 * version's (its views may be older). */
int fdx_schema_tables_since(void);
/* Runs the migrations from version `from` on db: an SQLite status, the
 * reason in err. */
int fdx_schema_migrate(sqlite3 *db, int64_t from, char *err, size_t errsz);
/* The same, up to version `to` only. */
int fdx_schema_migrate_to(sqlite3 *db, int64_t from, int64_t to, char *err, size_t errsz);
/* Runs the statements of sql on db: an SQLite status, and when it fails
 * "DOING: reason" in err. */
int fdx_schema_exec(sqlite3 *db, const char *sql, const char *doing, char *err, size_t errsz);

#endif
