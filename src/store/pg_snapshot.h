/*
 * Copying a PostgreSQL store into its local working copy (pg_snapshot.c).
 */
#ifndef FDX_STORE_PG_SNAPSHOT_H
#define FDX_STORE_PG_SNAPSHOT_H

#include "store/pg_conn.h"

/* Copies the store's tables, from one snapshot, into the working copy
 * (s->db, just created); with_cells 0 leaves out the cells and their
 * history (a writer's working copy starts without them and holds exactly
 * what its transaction adds). */
int fdx_pg_pull(fdx_store *s, fdx_pg *pg, int with_cells);

#endif
