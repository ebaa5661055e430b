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
/* Whether a filter's compute capability is one a cell's can be: "cpu", or
 * MAJOR.MINOR as SQLite prints the numbers (0 to 2^32-1, no sign, no
 * leading zero). Anything else matches nothing: a mistyped filter. */
int fdx_check_cc_text(const char *cc);
#define FDX_BAD_CC_TEXT                                                                            \
    "compute capability '%s' is neither 'cpu' nor MAJOR.MINOR (such as 8.9: numbers to "           \
    "4294967295, without leading zeros)"
/* What is wrong with a ledger row that fdx_check_ledger_row refuses: the
 * query's row st, named by its table and id, into what. */
void fdx_bad_ledger_row(sqlite3_stmt *st, char *what, size_t size);

#endif
