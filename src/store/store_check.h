/*
 * What a reader checks beyond the cells before it trusts a store's history or
 * ledger (store_check.c).
 */
#ifndef FDX_STORE_CHECK_H
#define FDX_STORE_CHECK_H

#include "store/merge_stage.h"
#include "store/store_internal.h"

/* The history's settings, and every history row and cell id: FDX_OK, or
 * FDX_ENOTSTORE naming the store and what no fdx store holds. */
int fdx_check_history(fdx_store *s);
/* Every ledger row, this store's and those merges brought in (the
 * merge-read query): the same. */
int fdx_check_ledger(fdx_store *s);
/* Reads the merge-read query's row into l: 0 unless it holds the types and
 * values fdx writes. */
int fdx_check_ledger_row(sqlite3_stmt *st, fdx_merge_ledger_row *l);
/* What is wrong with ledger row N (from 1) that fdx_check_ledger_row refuses. */
#define FDX_BAD_LEDGER_ROW                                                                         \
    "a ledger row of the wrong types, or of values fdx does not write (row %lld)"

#endif
