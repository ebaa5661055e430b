/*
 * Recording into the open transaction (store.c), for ingest and sinks.
 */
#ifndef FDX_STORE_STORE_H
#define FDX_STORE_STORE_H

#include "store/store_internal.h"

/* Records a miss (m) or a dispatch (d); trusted skips the UTF-8 checks for
 * strings the decoder has already validated. */
int fdx_store_record_checked(fdx_store *s, const fdx_miss *m, const fdx_dispatch *d, int trusted);

/* Adds an already-built cell to the open transaction (ingest, sinks). */
int fdx_store_add_cell(fdx_store *s, const fdx_cell *cell, uint64_t count, fdx_str cands);

#endif
