/*
 * fdx_store_merge: folding another store's cells into this one. The source
 * is read in one snapshot through its own connection; its lineage (its own
 * identity and every store it absorbed) decides whether the merge is new, a
 * repeat, or a conflict that would count cells twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

typedef struct lineage_entry {
    char id[40];
    int64_t ledger_high;
} lineage_entry;

/* The stores whose cells a store holds: itself when it has ingested data of
 * its own, and every store merged into it. */
typedef struct lineage {
    lineage_entry self;
    lineage_entry *v;
    size_t n;
} lineage;

static int read_lineage(fdx_store *src, lineage *l)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(src, FDX_STMT_STORE_ID, &st);
    if (rc != FDX_OK)
        return rc;
    l->n = 0;
    l->v = malloc(sizeof *l->v);
    if (!l->v)
        return fdx_store_fail(src, FDX_ENOMEM, "out of memory");
    if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
        sqlite3_reset(st);
        return fdx_store_fail_sqlite(src, rc, "reading the store identity");
    }
    snprintf(l->self.id, sizeof l->self.id, "%s", (const char *)sqlite3_column_text(st, 0));
    l->self.ledger_high = sqlite3_column_int64(st, 1);
    sqlite3_reset(st);
    if (l->self.ledger_high > 0)
        l->v[l->n++] = l->self;
    if ((rc = fdx_store_stmt(src, FDX_STMT_MERGED_LIST, &st)) != FDX_OK)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        lineage_entry *v = realloc(l->v, (l->n + 1) * sizeof *v);
        if (!v) {
            sqlite3_reset(st);
            return fdx_store_fail(src, FDX_ENOMEM, "out of memory");
        }
        l->v = v;
        snprintf(v[l->n].id, sizeof v[l->n].id, "%s", (const char *)sqlite3_column_text(st, 0));
        v[l->n++].ledger_high = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? FDX_OK : fdx_store_fail_sqlite(src, rc, "reading merged stores");
}

/* How dst already knows a store: 0 not at all, 1 at this ledger position,
 * 2 at another one (it changed since). */
static int known_as(fdx_store *dst, const lineage_entry *e, char *when, size_t whensz,
                    int64_t *then, int *how)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(dst, FDX_STMT_MERGED_FIND, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, e->id, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    *how = 0;
    if (rc == SQLITE_ROW) {
        *then = sqlite3_column_int64(st, 0);
        snprintf(when, whensz, "%s", (const char *)sqlite3_column_text(st, 1));
        *how = *then == e->ledger_high ? 1 : 2;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(dst, rc, "reading merged stores");
    return FDX_OK;
}

/* FDX_OK to merge, FDX_OK with *skip for a repeat, FDX_ECONFLICT otherwise. */
static int check_lineage(fdx_store *dst, const char *path, const lineage *l, int *skip)
{
    lineage_entry self = {"", 0};
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(dst, FDX_STMT_STORE_ID, &st);
    if (rc != FDX_OK)
        return rc;
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(self.id, sizeof self.id, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_reset(st);
    if (strcmp(l->self.id, self.id) == 0)
        return fdx_store_fail(dst, FDX_ECONFLICT, "%s: is the same store as %s (store %s)", path,
                              dst->path, self.id);
    size_t repeats = 0;
    for (size_t i = 0; i < l->n; i++) {
        char when[40] = "";
        int64_t then = 0;
        int how;
        if (strcmp(l->v[i].id, self.id) == 0)
            return fdx_store_fail(dst, FDX_ECONFLICT,
                                  "%s: already holds the cells of %s (store %s): merging it "
                                  "would count them twice",
                                  path, dst->path, self.id);
        if ((rc = known_as(dst, &l->v[i], when, sizeof when, &then, &how)) != FDX_OK)
            return rc;
        if (how == 2)
            return fdx_store_fail(
                dst, FDX_ECONFLICT,
                "%s: store %s%s changed since it was merged into %s at %s (its ledger was at "
                "%lld, is now at %lld): merging it again would count its earlier cells twice. "
                "Put new runs into a new store and merge that, or rebuild %s by merging every "
                "host store into an empty store",
                path, l->v[i].id, strcmp(l->v[i].id, l->self.id) ? ", which it holds," : "",
                dst->path, when, (long long)then, (long long)l->v[i].ledger_high, dst->path);
        repeats += how == 1;
    }
    if (repeats && repeats < l->n)
        return fdx_store_fail(dst, FDX_ECONFLICT,
                              "%s: holds some stores already merged into %s and some not: "
                              "merging it would count the former twice. Merge the stores it "
                              "holds that are new instead, or rebuild %s from every host store",
                              path, dst->path, dst->path);
    *skip = repeats == l->n;
    if (*skip)
        fdx_store_note(dst, "%s: store %s was already merged, unchanged; nothing to do", path,
                       l->self.id);
    return FDX_OK;
}

static int copy_cells(fdx_store *dst, fdx_store *src, fdx_kind kind, uint64_t *cells)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(
        src, kind == FDX_KIND_MISS ? FDX_STMT_MERGE_READ_MISSES : FDX_STMT_MERGE_READ_DISPATCHES,
        &st);
    fdx_stmt_id upsert =
        kind == FDX_KIND_MISS ? FDX_STMT_MISS_UPSERT : FDX_STMT_MERGE_DISPATCH_UPSERT;
    int src_rc = SQLITE_DONE;
    while (rc == FDX_OK && (src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        fdx_cell cell;
        fdx_str cands = FDX_NO_CANDS;
        int i = fdx_row_cell(st, kind, &cell);
        if (kind == FDX_KIND_DISPATCH)
            cands = fdx_column_text(st, i++);
        uint64_t count = (uint64_t)sqlite3_column_int64(st, i++);
        int64_t set_at = sqlite3_column_int64(st, i);
        int has_set_at = kind == FDX_KIND_DISPATCH && sqlite3_column_type(st, i) != SQLITE_NULL;
        rc = fdx_store_upsert(dst, upsert, &cell, count, cands, has_set_at ? &set_at : NULL);
        (*cells)++;
    }
    if (rc == FDX_OK && src_rc != SQLITE_DONE) {
        fdx_store_fail_sqlite(src, src_rc, "reading cells");
        rc = fdx_store_fail(dst, FDX_EIO, "%s", src->errmsg);
    }
    sqlite3_reset(st);
    return rc;
}

static int record_lineage(fdx_store *dst, const char *path, const lineage *l)
{
    for (size_t i = 0; i < l->n; i++) {
        sqlite3_stmt *st;
        int rc = fdx_store_stmt(dst, FDX_STMT_MERGED_INSERT, &st);
        if (rc != FDX_OK)
            return rc;
        sqlite3_bind_text(st, 1, l->v[i].id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, l->v[i].ledger_high);
        sqlite3_bind_text(st, 3, path, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            return fdx_store_fail_sqlite(dst, rc, "recording a merged store");
    }
    return FDX_OK;
}

/* The merge proper, inside dst's savepoint and src's read transaction. */
static int merge_from(fdx_store *dst, fdx_store *src, const char *path, fdx_merge_stats *stats)
{
    lineage l = {{"", 0}, NULL, 0};
    int skip = 0;
    int rc = read_lineage(src, &l);
    if (rc != FDX_OK)
        rc = fdx_store_fail(dst, rc, "%s", src->errmsg);
    if (rc == FDX_OK)
        rc = check_lineage(dst, path, &l, &skip);
    if (rc == FDX_OK && !skip) {
        rc = copy_cells(dst, src, FDX_KIND_MISS, &stats->cells_read);
        if (rc == FDX_OK)
            rc = copy_cells(dst, src, FDX_KIND_DISPATCH, &stats->cells_read);
        if (rc == FDX_OK)
            rc = record_lineage(dst, path, &l);
    }
    if (rc == FDX_OK) {
        stats->stores_merged += !skip;
        stats->stores_skipped += skip;
        dst->ledger.merged += !skip;
    }
    free(l.v);
    return rc;
}

static int open_source(fdx_store *dst, const char *path, fdx_store **src)
{
    int rc = fdx_store_open(path, FDX_OPEN_FOR_READING, src);
    if (rc == FDX_OK)
        rc = fdx_store_exec(*src, FDX_STMT_BEGIN_READ);
    if (rc != FDX_OK)
        fdx_store_fail(dst, rc, "%s", fdx_store_errmsg(*src));
    return rc;
}

int fdx_store_merge(fdx_store *dst, const char *path, fdx_merge_stats *stats)
{
    fdx_merge_stats local = {0};
    stats = stats ? stats : &local;
    dst->notice[0] = '\0';
    if (!dst->in_txn)
        return fdx_store_fail(dst, FDX_EMISUSE, "no transaction is open (call fdx_store_begin)");
    fdx_store *src = NULL;
    fdx_commit_stats stats_before = dst->txn_stats;
    fdx_merge_stats merge_before = *stats;
    int rc = fdx_store_flush_pending(dst);
    if (rc == FDX_OK)
        rc = fdx_ledger_open_row(dst);
    if (rc == FDX_OK)
        rc = fdx_store_exec(dst, FDX_STMT_SAVEPOINT);
    if (rc != FDX_OK)
        return rc;
    uint64_t merged_before = dst->ledger.merged;
    rc = open_source(dst, path, &src);
    if (rc == FDX_OK)
        rc = merge_from(dst, src, path, stats);
    fdx_store_close(src);
    if (rc == FDX_OK)
        return fdx_store_exec(dst, FDX_STMT_RELEASE) == FDX_OK ? FDX_OK : FDX_ERROR;
    char saved[sizeof dst->errmsg];
    memcpy(saved, dst->errmsg, sizeof saved);
    dst->txn_stats = stats_before;
    dst->ledger.merged = merged_before;
    *stats = merge_before;
    if (fdx_store_exec(dst, FDX_STMT_ROLLBACK_TO) == FDX_OK)
        fdx_store_exec(dst, FDX_STMT_RELEASE);
    memcpy(dst->errmsg, saved, sizeof saved);
    return rc;
}
