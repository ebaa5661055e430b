/*
 * fdx-prune on a PostgreSQL store (pg_prune.c): the working copy holds none
 * of the store's cells, so the filter is kept with the connection and the
 * prune runs in PostgreSQL, counted once in the push's transaction (and in a
 * transaction rolled back for a count asked before, such as a dry run's).
 */
#ifndef FDX_STORE_PG_PRUNE_H
#define FDX_STORE_PG_PRUNE_H

#include "store/pg_conn.h"

/* Keeps the filter (7 values as the pg/prune_*.sql parameters, NULL: no
 * filter, and its prune_log JSON) and, unless stats is NULL, counts what it
 * removes now, in a transaction rolled back (a dry run's answer: what the push
 * applies may differ when another writer commits in between). */
int fdx_pg_prune_count(fdx_store *s, fdx_pg *pg, const char *const values[7], const char *json,
                       fdx_prune_stats *stats);
/* Applies the kept filter (none: does nothing) inside the push's open
 * transaction, recording prune_log for ledger and setting s->pruned to the
 * same counts; *retry as pg_push.c's. */
int fdx_pg_prune_apply(fdx_store *s, fdx_pg *pg, const char *ledger, int *retry);
/* Forgets the kept filter. */
void fdx_pg_prune_forget(fdx_pg *pg);

#endif
