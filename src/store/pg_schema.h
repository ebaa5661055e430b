/*
 * The fdx tables in a PostgreSQL database (pg_schema.c).
 */
#ifndef FDX_STORE_PG_SCHEMA_H
#define FDX_STORE_PG_SCHEMA_H

#include "store/pg_conn.h"

/* The layout version sql/pg/schema.sql writes into fdx_meta. */
#define FDX_PG_SCHEMA_VERSION 3

/* Checks that the current schema holds exactly fdx's tables; a writer that
 * may create the store (FDX_OPEN_CREATE) first creates them when fdx_meta is
 * missing, under an advisory lock so that concurrent first writers create
 * them once. */
int fdx_pg_schema_ready(fdx_store *s, fdx_pg *pg, int may_create);
/* The same check alone: FDX_OK, or FDX_ENOTSTORE naming what is not fdx's.
 * Run again inside the transactions that read or write the store, as they
 * read and write it: a trigger, a rule or row-level security added since it
 * was opened would otherwise act on them. */
int fdx_pg_schema_check(fdx_store *s, fdx_pg *pg);

#endif
