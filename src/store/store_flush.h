/*
 * Writing recorded cells into the open transaction (store_flush.c).
 */
#ifndef FDX_STORE_STORE_FLUSH_H
#define FDX_STORE_STORE_FLUSH_H

#include "store/store_internal.h"

/* Writes the pending cells, and the runs spilled before them, into the open
 * transaction: each distinct cell once, in key order. */
int fdx_store_flush_pending(fdx_store *s);
/*
 * Spills pending to a sorted run once it holds about FDX_SPILL_BYTES. During
 * an ingest, what the ingests before it recorded is kept in `saved` until
 * it ends: if the ingest fails, fdx_store_end_path drops the runs it spilled
 * and puts that back.
 */
int fdx_store_spill_if_full(fdx_store *s);
/* Starts an ingest: its cells go to pending, from a mark that lets a failed
 * ingest take them out again when it is undoable. One that is not logs
 * nothing (and keeps no `saved`): if it fails, so does the transaction. */
void fdx_store_begin_path(fdx_store *s, int undoable);
/* Ends an ingest: on success its cells stay in pending; otherwise pending is
 * what it was when the ingest began, or the transaction can only be rolled
 * back: FDX_TXN_BROKEN_PATH when the ingest was not undoable, 1 when none
 * was under way (ended already, or its start never recorded). */
int fdx_store_end_path(fdx_store *s, int ok);
/* Binds a cell's key columns from ?1 in the order the .sql files number them,
 * setting *next to the next parameter index; SQLITE_OK or the first bind's
 * failure (SQLITE_TOOBIG: a text longer than SQLite stores). */
int fdx_bind_key(sqlite3_stmt *st, const fdx_cell *c, int *next);

#endif
