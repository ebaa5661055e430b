/*
 * The seam between reading a merge's source and applying it to a target.
 *
 * A merge folds a source store (an fdx SQLite file, untrusted) into a target.
 * fdx_merge_stage (merge_read.c) reads the source in one snapshot, checks
 * every row as strictly as a feed line, and hands the target STAGED rows
 * through fdx_merge_target_ops, in this order:
 *
 *   known          the source's identity, ledger position and digest: the
 *                  target says whether it merged this very ledger before
 *                  (the merge then ends there) or is that store itself;
 *   begin          the staging starts (the target empties its staging area);
 *   stage_cell     every cell: a number (1, 2, ... in reading order), its
 *                  key, candidates and candidates_set_at (dispatch cells);
 *   stage_history  every history row: the staged cell's number, the bucket
 *                  (a day, or a month's first day before the source's
 *                  rolled_before), the identity of the store that observed
 *                  it (32 hex digits; the source's own rows carry the
 *                  source's identity) and the count; then, flagged pruned,
 *                  the rows the source pruned of the keys it holds again,
 *                  which add to the live rows of their key (what a source
 *                  observed of a key is both, as a target's is);
 *   stage_ledger   the source's ledger rows and those of the stores merged
 *                  into it, each under its store's identity;
 *   stage_store    the source itself ('read', with its ledger position and
 *                  digest) and the stores it says it holds ('held');
 *   apply          the target folds the staged rows in (docs/FORMAT.md,
 *                  "How a merge applies", says exactly how), inside the
 *                  target's open transaction, and reports the cells it added
 *                  and updated;
 *   end            always, last: the target drops what it staged.
 *
 * An op returns FDX_OK or an FDX_E* status with its message kept by the
 * target; fail() gives the target a message from the reader (a source that
 * is not valid), so that one handle holds the whole story. The SQLite target
 * (merge_sqlite.c) stages into TEMP tables and applies with set-based
 * statements. A backend's store names its target in fdx_backend_ops
 * (backend.h). The PostgreSQL target (pg_merge.c) stages the same way into
 * its working copy, which holds none of the store's cells, so its apply only
 * keeps the staged rows in the working copy's transaction: the push at
 * commit applies every kept source, in order, in its one PostgreSQL
 * transaction (COPY into TEMP tables, then set-based statements mirroring
 * the SQLite ones), and the counts the apply reports are PostgreSQL's, in
 * the commit's statistics.
 */
#ifndef FDX_STORE_MERGE_STAGE_H
#define FDX_STORE_MERGE_STAGE_H

#include "store/identity.h"
#include "store/store_internal.h"

/* The source as the reader found it. */
typedef struct fdx_merge_source {
    const char *path;
    char store_id[FDX_STORE_ID_HEX];
    int64_t ledger_high; /* its last ledger row id (0: empty) */
    char digest[FDX_SHA256_HEX];
    int64_t rolled_before; /* its first daily day; earlier buckets are months */
} fdx_merge_source;

/* One ledger row, as merged_ledger keeps it. */
typedef struct fdx_merge_ledger_row {
    const char *store_id;
    int64_t id;
    const char *run_id; /* NULL: none */
    const char *kind;
    int64_t records, cells_added, cells_updated;
    int has_captured_at;
    int64_t captured_at;
    const char *committed_at;
} fdx_merge_ledger_row;

typedef enum fdx_merge_known {
    FDX_MERGE_NEW,       /* read and apply it */
    FDX_MERGE_UNCHANGED, /* merged before at this very ledger: nothing to do */
    FDX_MERGE_SELF       /* the target itself (or a copy not written to since) */
} fdx_merge_known;

typedef struct fdx_merge_applied {
    uint64_t cells_added;   /* new to the target */
    uint64_t cells_updated; /* gained observations or candidates */
} fdx_merge_applied;

typedef struct fdx_merge_target_ops {
    int (*known)(void *t, const fdx_merge_source *src, fdx_merge_known *out);
    int (*begin)(void *t, const fdx_merge_source *src);
    int (*stage_cell)(void *t, int64_t staged, const fdx_cell *c, fdx_str cands,
                      const int64_t *set_at);
    int (*stage_history)(void *t, int64_t staged, int64_t day, const char *store_id, uint64_t count,
                         int pruned);
    int (*stage_ledger)(void *t, const fdx_merge_ledger_row *row);
    int (*stage_store)(void *t, const char *store_id, int64_t ledger_high, const char *digest,
                       const char *how);
    int (*apply)(void *t, const fdx_merge_source *src, fdx_merge_applied *out);
    void (*end)(void *t);
    int (*fail)(void *t, int code, const char *msg);
} fdx_merge_target_ops;

/*
 * Reads src (open, in a read transaction) and stages it into the target
 * through ops. *skipped is set when the target said the source needs no
 * reading (known). stats->cells_read counts the cells staged.
 */
int fdx_merge_stage(fdx_store *src, const char *path, const fdx_merge_target_ops *ops, void *t,
                    fdx_merge_known *known, fdx_merge_applied *applied, fdx_merge_stats *stats);

#endif
