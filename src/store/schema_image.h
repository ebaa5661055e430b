/*
 * The schema image: sqlite_schema's rows as the migrations make them in an
 * empty database, taken at build time by schema_image_gen.c. Comparing a
 * store with it costs nothing; building the same rows when a store opens cost
 * as much as creating a store.
 */
#ifndef FDX_STORE_SCHEMA_IMAGE_H
#define FDX_STORE_SCHEMA_IMAGE_H

#include <stddef.h>

typedef struct fdx_schema_row {
    const char *type, *name, *tbl_name, *sql; /* sql: "" where SQLite keeps NULL */
} fdx_schema_row;

/* In the order of sql/schema_objects.sql (by name). */
extern const fdx_schema_row fdx_schema_image[];
extern const size_t fdx_schema_image_rows;
/* The SQLite version that made it. */
extern const char fdx_schema_image_sqlite[];

#endif
