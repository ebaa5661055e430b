/*
 * fdx_store_merge: folding another store into this one, incrementally. The
 * source is read in one snapshot through its own connection and staged into
 * this store (merge_read.c through merge_sqlite.c, the seam of
 * merge_stage.h), inside a savepoint of the open transaction, so that a
 * failure leaves the transaction as it was.
 *
 * Each (cell, origin store, history bucket) count is a grow-only counter and
 * a merge keeps the larger of this store's and the source's: merging a
 * store again brings only what it gained since, a repeat changes nothing,
 * and the order, grouping and timing of merges do not matter. A source whose
 * ledger position and digest are those this store recorded when it last
 * read it is skipped without reading its cells.
 */
#include <string.h>

#include "store/backend.h"
#include "store/conn.h"
#include "store/merge_sqlite.h"
#include "store/store_flush.h"

static int open_source(fdx_store *dst, const char *path, fdx_store **src)
{
    int rc = fdx_store_open(path, FDX_OPEN_FOR_READING, src);
    if (rc == FDX_OK)
        rc = fdx_store_exec(*src, FDX_STMT_BEGIN_READ);
    if (rc != FDX_OK)
        fdx_store_fail(dst, rc, "%s", fdx_store_errmsg(*src));
    return rc;
}

/* SQLite rolled the whole transaction back under a merge that had otherwise
 * succeeded (merge_sqlite.c's end, clearing the staging tables on a full
 * $TMPDIR, says why): the merge fails, and only a rollback may follow. */
static int transaction_lost(fdx_store *dst)
{
    if (!dst->txn_broken)
        dst->txn_broken =
            fdx_store_fail(dst, FDX_ERROR, "%s: the transaction was rolled back", dst->path);
    return dst->txn_broken;
}

int fdx_store_merge(fdx_store *dst, const char *path, fdx_merge_stats *stats)
{
    fdx_merge_stats local = {0};
    if (!dst)
        return FDX_EMISUSE;
    if (!path || !*path)
        return fdx_store_fail(dst, FDX_EMISUSE, "no store path given");
    stats = stats ? stats : &local;
    fdx_store_note(dst, FDX_NOTICE_NONE, "%s", "");
    int need = fdx_store_need_txn(dst);
    if (need != FDX_OK)
        return need;
    if (fdx_backend_allows(dst, "merge") != FDX_OK)
        return FDX_ERROR;
    fdx_store *src = NULL;
    fdx_commit_stats stats_before = dst->txn_stats;
    fdx_merge_stats merge_before = *stats;
    fdx_history_config hist_before;
    int rc = fdx_store_flush_pending(dst);
    if (rc == FDX_OK)
        rc = fdx_store_exec(dst, FDX_STMT_SAVEPOINT);
    if (rc != FDX_OK)
        return rc;
    uint64_t merged_before = dst->ledger.merged;
    int64_t ledger_before = dst->ledger.id; /* a source's staging opens the row */
    hist_before = dst->hist;
    fdx_merge_known known = FDX_MERGE_NEW;
    fdx_merge_applied applied;
    /* A source that is this store's own file is this store, whatever it
     * holds. It is not opened: no other connection can read a store that is
     * not WAL yet (a new one) while this transaction writes it. */
    if (fdx_store_is_own_file(dst, path)) {
        known = FDX_MERGE_SELF;
        rc = fdx_merge_sqlite_self(dst, path);
    } else {
        rc = open_source(dst, path, &src);
        if (rc == FDX_OK)
            rc = fdx_merge_stage(src, src->path,
                                 dst->backend ? dst->backend->merge_target : &fdx_merge_sqlite_ops,
                                 dst, &known, &applied, stats);
        rc = fdx_store_other_verdict(dst, src, rc);
        fdx_store_close(src);
    }
    if (rc == FDX_OK && sqlite3_get_autocommit(dst->db))
        return transaction_lost(dst);
    if (rc == FDX_OK) {
        int skip = known != FDX_MERGE_NEW;
        stats->stores_merged += !skip;
        stats->stores_skipped += skip;
        dst->ledger.merged += !skip;
        return fdx_store_exec(dst, FDX_STMT_RELEASE) == FDX_OK ? FDX_OK : FDX_ERROR;
    }
    char saved[sizeof dst->errmsg];
    memcpy(saved, dst->errmsg, sizeof saved);
    dst->txn_stats = stats_before;
    dst->ledger.merged = merged_before;
    dst->ledger.id = ledger_before;
    dst->hist = hist_before;
    *stats = merge_before;
    if (sqlite3_get_autocommit(dst->db)) /* SQLite rolled it all back */
        dst->txn_broken = dst->txn_broken ? dst->txn_broken : rc;
    else if (fdx_store_exec(dst, FDX_STMT_ROLLBACK_TO) == FDX_OK)
        fdx_store_exec(dst, FDX_STMT_RELEASE);
    memcpy(dst->errmsg, saved, sizeof saved);
    return rc;
}
