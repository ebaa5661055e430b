/*
 * Applying a write transaction to a PostgreSQL store (pg_push.c).
 */
#ifndef FDX_STORE_PG_PUSH_H
#define FDX_STORE_PG_PUSH_H

#include "store/pg_conn.h"

/* Applies what the working copy's open transaction holds (its cells, its
 * ledger row and sources, their history) to the store in one PostgreSQL
 * transaction, retried on serialization failures and deadlocks; sets
 * s->txn_stats to what PostgreSQL counted. A run id another writer has
 * committed meanwhile makes it a no-op (FDX_OK with a notice) when the
 * content is the same, FDX_EDATA otherwise. */
int fdx_pg_push(fdx_store *s, fdx_pg *pg);

#endif
