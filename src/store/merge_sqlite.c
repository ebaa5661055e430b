/*
 * The SQLite target of a merge (merge_stage.h): the source's rows are staged
 * into TEMP tables of the target's connection (merge_stage_create.sql), then
 * folded in by set-based statements (merge_apply_*.sql, in the order
 * docs/FORMAT.md gives), inside the target's open transaction.
 */
#include <string.h>

#include "sql_text.h"
#include "store/conn.h"
#include "store/history.h"
#include "store/ledger.h"
#include "store/merge_gains.h"
#include "store/merge_sqlite.h"
#include "store/store_flush.h"

/* Steps a statement that returns no rows; *changes (when given) gets the
 * rows it changed. */
static int step(fdx_store *dst, sqlite3_stmt *st, const char *what, uint64_t *changes)
{
    int rc = fdx_store_step_done(dst, st, what);
    if (rc != FDX_OK)
        return rc;
    if (changes)
        *changes = (uint64_t)sqlite3_changes(dst->db);
    return FDX_OK;
}

static void note_self(fdx_store *dst, const char *path, const char *own)
{
    fdx_store_note(dst, FDX_NOTICE_NOTHING_DONE,
                   "%s: is %s itself (store %s), or a copy of it not written to since; nothing "
                   "to do",
                   path, dst->path, own);
}

int fdx_merge_sqlite_self(fdx_store *dst, const char *path)
{
    char own[FDX_STORE_ID_HEX];
    int rc = fdx_identity_read(dst, own);
    if (rc == FDX_OK)
        note_self(dst, path, own);
    return rc;
}

static int known(void *t, const fdx_merge_source *src, fdx_merge_known *out)
{
    fdx_store *dst = t;
    char own[FDX_STORE_ID_HEX];
    sqlite3_stmt *st;
    int rc = fdx_identity_read(dst, own);
    if (rc != FDX_OK)
        return rc;
    if (strcmp(own, src->store_id) == 0) {
        *out = FDX_MERGE_SELF;
        note_self(dst, src->path, own);
        return FDX_OK;
    }
    if ((rc = fdx_store_stmt(dst, FDX_STMT_MERGED_FIND, &st)) != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, src->store_id, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    const unsigned char *digest = rc == SQLITE_ROW ? sqlite3_column_text(st, 3) : NULL;
    const unsigned char *how = rc == SQLITE_ROW ? sqlite3_column_text(st, 4) : NULL;
    int same = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == src->ledger_high && digest &&
               strcmp((const char *)digest, src->digest) == 0 && how &&
               strcmp((const char *)how, "read") == 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(dst, rc, "reading merged stores");
    *out = same ? FDX_MERGE_UNCHANGED : FDX_MERGE_NEW;
    if (same)
        fdx_merge_sqlite_unchanged(dst, src);
    return FDX_OK;
}

void fdx_merge_sqlite_unchanged(fdx_store *dst, const fdx_merge_source *src)
{
    fdx_store_note(dst, FDX_NOTICE_NOTHING_DONE,
                   "%s: store %s was already merged, unchanged; nothing to do", src->path,
                   src->store_id);
}

/* The merge's ledger row is made only for a source that is merged: a merge
 * of sources all merged before writes nothing, and leaves the file as it
 * was. */
static int begin(void *t, const fdx_merge_source *src)
{
    fdx_store *dst = t;
    (void)src;
    int rc = fdx_ledger_open_row(dst);
    if (rc == FDX_OK)
        rc = fdx_store_script(dst, fdx_sql_merge_stage_create,
                              "creating the merge's staging tables");
    if (rc == FDX_OK)
        rc =
            fdx_store_script(dst, fdx_sql_merge_stage_clear, "emptying the merge's staging tables");
    return rc;
}

static int stage_cell(void *t, int64_t staged, const fdx_cell *c, fdx_str cands,
                      const int64_t *set_at)
{
    fdx_store *dst = t;
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(
        dst, c->kind == FDX_KIND_MISS ? FDX_STMT_MERGE_STAGE_MISS : FDX_STMT_MERGE_STAGE_DISPATCH,
        &st);
    if (rc != FDX_OK)
        return rc;
    int i, bound = fdx_bind_key(st, c, &i);
    if (c->kind == FDX_KIND_DISPATCH) {
        if (bound == SQLITE_OK)
            bound = sqlite3_bind_text(st, i, cands.p, (int)cands.n, SQLITE_STATIC);
        if (bound == SQLITE_OK && set_at)
            bound = sqlite3_bind_int64(st, i + 1, *set_at);
        i += 2;
    }
    if (bound == SQLITE_OK)
        bound = sqlite3_bind_int64(st, i, staged);
    if (bound != SQLITE_OK)
        return fdx_store_fail_sqlite(dst, bound, "staging a cell");
    fdx_store_progress(dst, "merge", (uint64_t)staged);
    return step(dst, st, "staging a cell", NULL);
}

static int stage_history(void *t, int64_t staged, int64_t day, const char *store_id, uint64_t count,
                         int pruned)
{
    fdx_store *dst = t;
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(
        dst, pruned ? FDX_STMT_MERGE_STAGE_PRUNED : FDX_STMT_MERGE_STAGE_HISTORY, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, staged);
    sqlite3_bind_int64(st, 2, day);
    sqlite3_bind_text(st, 3, store_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (int64_t)count);
    return step(dst, st, "staging history", NULL);
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static int stage_ledger(void *t, const fdx_merge_ledger_row *l)
{
    fdx_store *dst = t;
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(dst, FDX_STMT_MERGE_STAGE_LEDGER, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, l->store_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, l->id);
    bind_text_or_null(st, 3, l->run_id);
    sqlite3_bind_text(st, 4, l->kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, l->records);
    sqlite3_bind_int64(st, 6, l->cells_added);
    sqlite3_bind_int64(st, 7, l->cells_updated);
    if (l->has_captured_at)
        sqlite3_bind_int64(st, 8, l->captured_at);
    sqlite3_bind_text(st, 9, l->committed_at, -1, SQLITE_STATIC);
    return step(dst, st, "staging a ledger row", NULL);
}

static int stage_store(void *t, const char *store_id, int64_t ledger_high, const char *digest,
                       const char *how)
{
    fdx_store *dst = t;
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(dst, FDX_STMT_MERGE_STAGE_STORE, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, store_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, ledger_high);
    bind_text_or_null(st, 3, digest);
    sqlite3_bind_text(st, 4, how, -1, SQLITE_STATIC);
    return step(dst, st, "staging a merged store", NULL);
}

/* Statement id with ?1 bound to v (when the statement has a parameter). */
static int bound(fdx_store *dst, fdx_stmt_id id, int64_t v, sqlite3_stmt **st)
{
    int rc = fdx_store_stmt(dst, id, st);
    if (rc == FDX_OK && sqlite3_bind_parameter_count(*st) > 0)
        sqlite3_bind_int64(*st, 1, v);
    return rc;
}

/* Runs apply statement id with ?1 bound to v; *changes (when given) gets the
 * rows it changed. */
static int apply_one(fdx_store *dst, fdx_stmt_id id, int64_t v, uint64_t *changes)
{
    sqlite3_stmt *st;
    int rc = bound(dst, id, v, &st);
    return rc == FDX_OK ? step(dst, st, "applying a merge", changes) : rc;
}

/* The one number query id answers, with ?1 bound to v. */
static int query_one(fdx_store *dst, fdx_stmt_id id, int64_t v, int64_t *out)
{
    sqlite3_stmt *st;
    int rc = bound(dst, id, v, &st);
    if (rc != FDX_OK)
        return rc;
    rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? FDX_OK : fdx_store_fail_sqlite(dst, rc, "applying a merge");
}

static int bind_path_and_run(fdx_store *dst, const char *path)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(dst, FDX_STMT_MERGE_APPLY_STORES, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    return step(dst, st, "recording a merged store", NULL);
}

/* Runs statements in turn, each with ?1 bound to its arg. */
typedef struct apply_step {
    fdx_stmt_id id;
    int64_t arg;
    uint64_t *changes;
} apply_step;

static int apply_steps(fdx_store *dst, const apply_step *steps, size_t n)
{
    int rc = FDX_OK;
    for (size_t i = 0; rc == FDX_OK && i < n; i++)
        rc = apply_one(dst, steps[i].id, steps[i].arg, steps[i].changes);
    return rc;
}

/* Whether this store holds history above the origin numbers it gave (known:
 * the highest). Looked for once a transaction: fdx writes no such rows, and
 * a merge gives numbers above the highest, so a store without them at the
 * first merge has none at the next. */
static int stray_origins(fdx_store *dst, int64_t known, int64_t *strays)
{
    if (!dst->hist.strays_known) {
        int rc = query_one(dst, FDX_STMT_MERGE_STRAY_ORIGINS, known, &dst->hist.strays);
        if (rc != FDX_OK)
            return rc;
        dst->hist.strays_known = 1;
    }
    *strays = dst->hist.strays;
    return FDX_OK;
}

/* Steps 1 to 4. Step 4 reads the whole of this store's history; it is left
 * out when every staged origin is one that step 1 has just numbered, which
 * has no history here (a merge of hosts new to this store), unless the store
 * holds rows under numbers it never gave. */
static int apply_sides(fdx_store *dst)
{
    int64_t known = 0, needed = 0;
    const apply_step steps[] = {
        {FDX_STMT_MERGE_APPLY_ORIGINS, 0, NULL},
        {FDX_STMT_MERGE_APPLY_TARGETS, 0, NULL},
        {FDX_STMT_MERGE_APPLY_SRC, 0, NULL},
    };
    int rc = query_one(dst, FDX_STMT_MERGE_ORIGIN_HIGH, 0, &known);
    if (rc == FDX_OK)
        rc = apply_steps(dst, steps, sizeof steps / sizeof steps[0]);
    if (rc == FDX_OK)
        rc = query_one(dst, FDX_STMT_MERGE_TGT_NEEDED, known, &needed);
    if (rc == FDX_OK && !needed)
        rc = stray_origins(dst, known, &needed);
    if (rc == FDX_OK && needed)
        rc = apply_one(dst, FDX_STMT_MERGE_APPLY_TGT, 0, NULL);
    return rc;
}

static int apply(void *t, const fdx_merge_source *src, fdx_merge_applied *out)
{
    fdx_store *dst = t;
    int rc = fdx_history_load(dst);
    if (rc != FDX_OK)
        return rc;
    int64_t coarse =
        src->rolled_before > dst->hist.rolled_before ? src->rolled_before : dst->hist.rolled_before;
    int64_t ledger = dst->ledger.id;
    uint64_t misses = 0, dispatches = 0, lists = 0;
    fdx_merge_gains gains;
    const apply_step after[] = {
        {FDX_STMT_MERGE_APPLY_MISSES, ledger, &misses},
        {FDX_STMT_MERGE_APPLY_DISPATCHES, ledger, &dispatches},
        {FDX_STMT_MERGE_APPLY_LISTS, ledger, &lists},
        {FDX_STMT_MERGE_APPLY_HISTORY, 0, NULL},
        {FDX_STMT_MERGE_APPLY_LEDGER, 0, NULL},
    };
    rc = apply_sides(dst);
    if (rc == FDX_OK) /* steps 5 to 7 */
        rc = fdx_merge_gains_apply(dst, coarse, dst->hist.next_cell_id, &gains);
    if (rc == FDX_OK)
        rc = apply_steps(dst, after, sizeof after / sizeof after[0]);
    if (rc == FDX_OK)
        rc = bind_path_and_run(dst, src->path);
    if (rc != FDX_OK)
        return rc;
    /* the upserts' changes are the new cells and the known ones that gained */
    uint64_t changed = misses + dispatches + lists;
    uint64_t updated = changed > gains.added ? changed - gains.added : 0;
    dst->hist.next_cell_id += (int64_t)gains.added;
    if (gains.max_day > dst->hist.latest_day)
        dst->hist.latest_day = gains.max_day;
    dst->hist.dirty = 1;
    dst->txn_stats.cells_added += gains.added;
    dst->txn_stats.cells_updated += updated;
    *out = (fdx_merge_applied){gains.added, updated};
    return FDX_OK;
}

/* Empties the staging tables. A failure there matters only when SQLite
 * answered it by rolling the whole transaction back (a full $TMPDIR): then
 * it is what fdx_store_merge reports, and only a rollback may follow. */
static void end(void *t)
{
    fdx_store *dst = t;
    char saved[sizeof dst->errmsg];
    memcpy(saved, dst->errmsg, sizeof saved);
    int was_open = !sqlite3_get_autocommit(dst->db);
    int rc =
        fdx_store_script(dst, fdx_sql_merge_stage_clear, "emptying the merge's staging tables");
    if (rc != FDX_OK && was_open && sqlite3_get_autocommit(dst->db))
        dst->txn_broken = rc;
    else
        memcpy(dst->errmsg, saved, sizeof saved);
}

static int fail(void *t, int code, const char *msg)
{
    return fdx_store_fail(t, code, "%s", msg);
}

const fdx_merge_target_ops fdx_merge_sqlite_ops = {
    known, begin, stage_cell, stage_history, stage_ledger, stage_store, apply, end, fail,
};
