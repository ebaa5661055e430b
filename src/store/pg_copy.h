/*
 * Loading a working copy's rows into PostgreSQL with COPY (pg_copy.c).
 */
#ifndef FDX_STORE_PG_COPY_H
#define FDX_STORE_PG_COPY_H

#include "store/pg_conn.h"

/* COPYs the rows of local_sql (a query of the working copy) with copy_sql (a
 * COPY ... FROM STDIN in text format); *retry is set when running the
 * PostgreSQL transaction again may cure the failure. */
int fdx_pg_copy_in(fdx_store *s, fdx_pg *pg, const char *local_sql, const char *copy_sql,
                   int *retry);

#endif
