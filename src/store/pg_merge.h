/*
 * Merging into a PostgreSQL store (pg_merge.c): the merge target of
 * merge_stage.h for a store whose working copy stands for it, and the apply
 * its push runs.
 */
#ifndef FDX_STORE_PG_MERGE_H
#define FDX_STORE_PG_MERGE_H

#include "store/merge_stage.h"
#include "store/pg_conn.h"

extern const fdx_merge_target_ops fdx_merge_pg_ops;

typedef struct fdx_pg_merged {
    uint64_t added, updated;
    int64_t latest_day; /* the latest day history was added on; INT64_MIN: none */
} fdx_pg_merged;

/*
 * Applies the merges the working copy's open transaction kept, in the order
 * they were made, inside the push's PostgreSQL transaction (history_config
 * already locked; ledger is the push's ledger id, rolled the store's
 * rolled_before). *retry is set when running the transaction again may cure
 * a failure.
 */
int fdx_pg_merge_apply(fdx_store *s, fdx_pg *pg, const char *ledger, int64_t rolled,
                       fdx_pg_merged *out, int *retry);
/* Forgets the kept merges (after the push). */
int fdx_pg_merge_forget(fdx_store *s);

#endif
