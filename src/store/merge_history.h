/*
 * Carrying history and ledger across a merge (merge_history.c).
 */
#ifndef FDX_STORE_MERGE_HISTORY_H
#define FDX_STORE_MERGE_HISTORY_H

#include "store/store_internal.h"

/* Carries src's history and ledger into dst's open transaction after its
 * cells (merge_history.c). */
int fdx_merge_history(fdx_store *dst, fdx_store *src);

#endif
