/*
 * The store seam: where a store's data lives. A store is always worked on
 * through an SQLite database (s->db), so every query, check and rule of the
 * store modules holds for every backend. For an SQLite store that database
 * is the store itself and s->backend is NULL. Another backend (PostgreSQL,
 * pg_backend.c) keeps the store elsewhere: its handle's database is a local
 * working copy that the backend fills when the store is opened (a reader gets
 * a snapshot of the whole store, a writer what it needs to write) and whose
 * transaction's changes the backend applies to the store at commit.
 */
#ifndef FDX_STORE_BACKEND_H
#define FDX_STORE_BACKEND_H

#include "store/conn.h"
#include "store/store_internal.h"

typedef struct fdx_backend_ops {
    /* Connects to the store named by s->path and checks (a writer: creates
     * or checks) its schema; fills working_path with the local file to use. */
    int (*connect)(fdx_store *s, int flags, char *working_path, size_t size);
    /* Fills the working copy, just opened and empty of data. */
    int (*fill)(fdx_store *s);
    /* Applies the open transaction to the store; called at commit, before the
     * working copy commits; sets s->txn_stats to what the store counted. */
    int (*push)(fdx_store *s);
    /* Keeps the prune filter (values as sql/pg/prune_*.sql binds them, json
     * its prune_log text) for the push to apply, which sets s->pruned to what
     * it removed; counts what it removes now into stats unless stats is NULL.
     * NULL: the working copy holds the cells to prune. */
    int (*prune)(fdx_store *s, const char *const values[7], const char *json,
                 fdx_prune_stats *stats);
    /* Why an operation this backend does not support is refused (NULL: it is
     * supported). op is "merge", "prune". */
    const char *(*refuses)(const fdx_store *s, const char *op);
    /* Disconnects and removes the working copy (after s->db is closed). */
    void (*close)(fdx_store *s);
    /* The merge target of merge_stage.h for this backend's stores. */
    const struct fdx_merge_target_ops *merge_target;
} fdx_backend_ops;

/* FDX_OK, or FDX_ERROR with the backend's reason when s's backend cannot do op. */
static inline int fdx_backend_allows(fdx_store *s, const char *op)
{
    const char *why = s->backend ? s->backend->refuses(s, op) : NULL;
    return why ? fdx_store_fail(s, FDX_ERROR, "%s: %s", s->path, why) : FDX_OK;
}

/* The backend a store argument names, or NULL for an SQLite file. */
const fdx_backend_ops *fdx_backend_for(const char *path);

#endif
