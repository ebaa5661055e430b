/*
 * The schema fdx creates and migrates (schema.c).
 */
#ifndef FDX_STORE_SCHEMA_H
#define FDX_STORE_SCHEMA_H

#include "store/store_internal.h"

/* The schema (schema.c): its current version, the migrations from version
 * `from` run on db (an SQLite status, the reason in err), and the check that
 * the open store's schema is exactly the one fdx creates. */
int fdx_schema_version(void);
int fdx_schema_migrate(sqlite3 *db, int64_t from, char *err, size_t errsz);
int fdx_schema_check(fdx_store *s);

#endif
