/*
 * Whether a store holds the schema fdx creates (schema.c).
 */
#ifndef FDX_STORE_SCHEMA_H
#define FDX_STORE_SCHEMA_H

#include "store/migrations.h"
#include "store/schema_image.h"
#include "store/store_internal.h"

/* Whether the open store's schema is exactly the one fdx creates. */
int fdx_schema_check(fdx_store *s);
/* FDX_ENOTSTORE for a database whose text encoding is not UTF-8 (checked
 * once when a store is opened, before anything else reads it). */
int fdx_schema_check_encoding(fdx_store *s);
/* Whether a store of an older version is exactly what the migrations made of
 * it, so that migrating it runs nothing but them: checked before they run. */
int fdx_schema_check_older(fdx_store *s, int64_t version);
/* Makes the current schema in db, which holds nothing, from the image: what
 * the migrations make from version 0, for a fraction of their cost (their
 * statements alter and drop what they made, and SQLite reads its whole
 * schema again after each); by the migrations when the image was made by
 * another SQLite. An SQLite status, the reason in err. */
int fdx_schema_create(sqlite3 *db, char *err, size_t errsz);

/* For tests: rows and the SQLite version that made them in place of the
 * image (what a build with another SQLite would hold; NULL: the image again),
 * and how many times the reference was built because a store differed from
 * the image. */
void fdx_schema_image_set(const fdx_schema_row *rows, size_t n, const char *sqlite_version);
size_t fdx_schema_reference_builds(void);

#endif
