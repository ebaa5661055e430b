/*
 * The SQLite target of a merge (merge_sqlite.c).
 */
#ifndef FDX_STORE_MERGE_SQLITE_H
#define FDX_STORE_MERGE_SQLITE_H

#include "store/merge_stage.h"

/* The ops of merge_stage.h for a target fdx_store (the void * is the store,
 * inside its open transaction). */
extern const fdx_merge_target_ops fdx_merge_sqlite_ops;
/* A merge of the store's own file (path) into it: notes that there is
 * nothing to do. */
int fdx_merge_sqlite_self(fdx_store *dst, const char *path);
/* Notes that src is the very ledger the store merged before: nothing to do. */
void fdx_merge_sqlite_unchanged(fdx_store *dst, const fdx_merge_source *src);

#endif
