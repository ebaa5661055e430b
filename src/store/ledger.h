/*
 * The ledger row of the open transaction and lookups in it (ledger.c).
 */
#ifndef FDX_STORE_LEDGER_H
#define FDX_STORE_LEDGER_H

#include "store/store_internal.h"

/* Ledger (ledger.c). */
void fdx_ledger_reset(fdx_store *s);
/* Creates the transaction's ledger row if it does not exist yet. */
int fdx_ledger_open_row(fdx_store *s);
typedef struct fdx_source_info {
    const char *path;
    unsigned char digest[32];
    uint64_t bytes;
    uint64_t lines;
    uint64_t records;
    uint64_t skipped;
} fdx_source_info;
int fdx_ledger_add_source(fdx_store *s, const fdx_source_info *src);
/* 1 when the transaction read no file and did nothing else: under a run id
 * it commits nothing, and leaves the id free for the run's data. */
int fdx_ledger_txn_empty(const fdx_store *s);
/* Whether the transaction's run id is one the ledger holds: *repeat is 1
 * (with a notice) when the transaction read files and did nothing else, and
 * their content hash is the earlier one's: the retry an exactly-once ingest
 * makes a no-op. FDX_EDATA for other files, and for records given through
 * the record calls, merges, prunes and a changed setting, whose sameness no
 * hash tells. */
int fdx_ledger_run_repeat(fdx_store *s, int *repeat);
/* That verdict on an earlier commit of the run id (its content hash, time
 * and ledger id), for a backend that finds it its own way. */
int fdx_ledger_repeat_verdict(fdx_store *s, const char *content_hash, const char *committed_at,
                              long long ledger_id);
/* Completes (or, when nothing changed, removes) the row before COMMIT. */
int fdx_ledger_finish(fdx_store *s);
/* The latest earlier ingest that read content with this digest. */
int fdx_ledger_find_source(fdx_store *s, const char *hex, char *path, size_t pathsz,
                           fdx_ledger_entry *entry, int *found);

#endif
