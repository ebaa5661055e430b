/*
 * fdx_store_merge: folding another store's cells into this one. The source
 * is read in one snapshot through its own connection.
 *
 * Whether a merge is new, a repeat or a conflict that would count cells
 * twice is decided by this store's own records. A source is skipped as a
 * repeat only when this store once read that very store's own ledger
 * ('read' in merged_store) and the ledger digest recorded then equals the
 * one computed now from the source's actual ledger (identity.c): the same id
 * and position with another digest is a copy fed other runs or a rewritten
 * store, and is refused. What a source says it holds (its merged_store rows)
 * is only a claim: rows in a file can say anything, so a claim can make a
 * merge be refused, never skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/backend.h"
#include "store/conn.h"
#include "store/identity.h"
#include "store/ledger.h"
#include "store/merge_history.h"
#include "store/row.h"
#include "store/store_flush.h"

typedef struct lineage_entry {
    char id[FDX_STORE_ID_HEX];
    int64_t ledger_high;
    char digest[FDX_SHA256_HEX]; /* "" when unknown */
    int copied;                  /* the source is a copy of this store */
} lineage_entry;

/* A source: itself, from its identity and its actual ledger, and the stores
 * it claims to hold. */
typedef struct lineage {
    lineage_entry self;
    lineage_entry *v;
    size_t n;
} lineage;

static void column_copy(char *dst, size_t size, sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(dst, size, "%s", t ? (const char *)t : "");
}

static int read_claim(fdx_store *src, sqlite3_stmt *st, lineage_entry *e)
{
    const unsigned char *id = sqlite3_column_text(st, 0);
    if (!fdx_store_id_valid(id))
        return fdx_store_fail(src, FDX_ENOTSTORE,
                              "%s: merged_store: malformed store identity '%.64s' (not 32 hex "
                              "digits)",
                              src->path, id ? (const char *)id : "");
    memcpy(e->id, id, FDX_STORE_ID_HEX);
    e->ledger_high = sqlite3_column_int64(st, 1);
    column_copy(e->digest, sizeof e->digest, st, 2);
    if (strlen(e->digest) != FDX_SHA256_HEX - 1)
        e->digest[0] = '\0';
    const unsigned char *how = sqlite3_column_text(st, 3);
    e->copied = how && strcmp((const char *)how, "copied") == 0;
    return FDX_OK;
}

static int read_lineage(fdx_store *src, lineage *l)
{
    int rc = fdx_identity_read(src, l->self.id);
    if (rc == FDX_OK)
        rc = fdx_identity_ledger_digest(src, &l->self.ledger_high, l->self.digest);
    sqlite3_stmt *st;
    if (rc != FDX_OK || (rc = fdx_store_stmt(src, FDX_STMT_MERGED_LIST, &st)) != FDX_OK)
        return rc;
    int src_rc;
    while ((src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        lineage_entry *v = realloc(l->v, (l->n + 1) * sizeof *v);
        if (!v)
            rc = fdx_store_fail(src, FDX_ENOMEM, "out of memory");
        else
            rc = read_claim(src, st, &(l->v = v)[l->n++]);
        if (rc != FDX_OK)
            break;
    }
    sqlite3_reset(st);
    if (rc == FDX_OK && src_rc != SQLITE_DONE)
        rc = fdx_store_fail_sqlite(src, src_rc, "reading merged stores");
    return rc;
}

/* What dst's merged_store says of a store. */
typedef struct record {
    int found;
    int64_t ledger_high;
    char when[40];
    char source[512];
    char digest[FDX_SHA256_HEX];
    char how[8]; /* "read", "held", "copied"; "" for rows older than schema 4 */
} record;

static int find_record(fdx_store *dst, const char *id, record *r)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(dst, FDX_STMT_MERGED_FIND, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    r->found = rc == SQLITE_ROW;
    if (r->found) {
        r->ledger_high = sqlite3_column_int64(st, 0);
        column_copy(r->when, sizeof r->when, st, 1);
        column_copy(r->source, sizeof r->source, st, 2);
        column_copy(r->digest, sizeof r->digest, st, 3);
        column_copy(r->how, sizeof r->how, st, 4);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(dst, rc, "reading merged stores");
    return FDX_OK;
}

/* How dst came to hold a store, for messages. */
static const char *how_held(const record *r, char *buf, size_t size)
{
    if (strcmp(r->how, "held") == 0)
        snprintf(buf, size, "through %s (as that store said) since %s", r->source, r->when);
    else if (strcmp(r->how, "copied") == 0)
        snprintf(buf, size, "because it is a copy of it (made at %s)", r->when);
    else
        snprintf(buf, size, "merged from %s at %s", r->source, r->when);
    return buf;
}

/* The source itself is known to dst: a proven repeat (skip), or a refusal. */
static int judge_known(fdx_store *dst, const char *path, const lineage_entry *self, const record *r,
                       int *skip)
{
    char held[1200];
    if (strcmp(r->how, "read") == 0 && r->ledger_high == self->ledger_high &&
        strcmp(r->digest, self->digest) == 0) {
        *skip = 1;
        fdx_store_note(dst, "%s: store %s was already merged, unchanged; nothing to do", path,
                       self->id);
        return FDX_OK;
    }
    if (strcmp(r->how, "held") == 0 || strcmp(r->how, "copied") == 0)
        return fdx_store_fail(dst, FDX_ECONFLICT,
                              "%s: store %s is already in %s (%s): merging it would count its "
                              "cells twice. If both are what they say, there is nothing to do; "
                              "otherwise one is a copy or a crafted store: rebuild %s by merging "
                              "every host store into an empty store",
                              path, self->id, dst->path, how_held(r, held, sizeof held), dst->path);
    if (r->ledger_high != self->ledger_high)
        return fdx_store_fail(
            dst, FDX_ECONFLICT,
            "%s: store %s changed since it was merged into %s from %s at %s (its ledger was at "
            "%lld, is now at %lld): merging it again would count its earlier cells twice. Put "
            "new runs into a new store and merge that, or rebuild %s by merging every host store "
            "into an empty store",
            path, self->id, dst->path, r->source, r->when, (long long)r->ledger_high,
            (long long)self->ledger_high, dst->path);
    if (!r->digest[0])
        return fdx_store_fail(dst, FDX_ECONFLICT,
                              "%s: store %s was merged into %s from %s at %s by an older fdx, "
                              "which kept no ledger digest: its ledger is at the same position "
                              "(%lld) but that does not prove it unchanged. If it is the same "
                              "store, there is nothing to do; otherwise rebuild %s by merging "
                              "every host store into an empty store",
                              path, self->id, dst->path, r->source, r->when,
                              (long long)self->ledger_high, dst->path);
    return fdx_store_fail(dst, FDX_ECONFLICT,
                          "%s: has the identity (store %s) and ledger position (%lld) of the "
                          "store merged into %s from %s at %s, but another ledger (digest "
                          "%.16s, was %.16s): it is a copy of that store fed other runs, or a "
                          "rewritten store. Merging it would lose or double-count cells; rebuild "
                          "%s by merging every host store into an empty store, leaving out copies",
                          path, self->id, (long long)self->ledger_high, dst->path, r->source,
                          r->when, self->digest, r->digest, dst->path);
}

/* FDX_OK to merge, FDX_OK with *skip for a proven repeat, FDX_ECONFLICT (or
 * an error) otherwise. */
static int check_lineage(fdx_store *dst, const char *path, const lineage *l, int *skip)
{
    char dst_id[FDX_STORE_ID_HEX];
    int rc = fdx_identity_read(dst, dst_id);
    if (rc != FDX_OK)
        return rc;
    if (strcmp(l->self.id, dst_id) == 0)
        return fdx_store_fail(dst, FDX_ECONFLICT,
                              "%s: is the same store as %s (store %s), or a copy of it not "
                              "written to since",
                              path, dst->path, dst_id);
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].id, dst_id) == 0)
            return fdx_store_fail(dst, FDX_ECONFLICT,
                                  "%s: already holds the cells of %s (store %s): merging it "
                                  "would count them twice",
                                  path, dst->path, dst_id);
        if (strcmp(l->v[i].id, l->self.id) == 0)
            return fdx_store_fail(dst, FDX_ENOTSTORE,
                                  "%s: lists its own identity (store %s) in merged_store: the "
                                  "store is inconsistent or crafted",
                                  path, l->self.id);
    }
    record r;
    if ((rc = find_record(dst, l->self.id, &r)) != FDX_OK)
        return rc;
    if (r.found)
        return judge_known(dst, path, &l->self, &r, skip);
    for (size_t i = 0; i < l->n; i++) {
        char held[1200];
        if ((rc = find_record(dst, l->v[i].id, &r)) != FDX_OK)
            return rc;
        if (r.found)
            return fdx_store_fail(
                dst, FDX_ECONFLICT,
                "%s: holds some stores already merged into %s: %s store %s (at its ledger "
                "position %lld), which %s holds %s. Merging it would count those cells twice. "
                "%s, or rebuild %s from every host store",
                path, dst->path, l->v[i].copied ? "it is a copy of" : "it says it holds",
                l->v[i].id, (long long)l->v[i].ledger_high, dst->path,
                how_held(&r, held, sizeof held),
                l->v[i].copied ? "Copies of one store share its cells: merge one of them only, "
                                 "give each host a new store of its own rather than a copy"
                               : "Merge the stores it holds that are new instead",
                dst->path);
    }
    *skip = 0;
    return FDX_OK;
}

static int copy_cells(fdx_store *dst, fdx_store *src, fdx_kind kind, uint64_t *cells)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(
        src, kind == FDX_KIND_MISS ? FDX_STMT_MERGE_READ_MISSES : FDX_STMT_MERGE_READ_DISPATCHES,
        &st);
    if (rc != FDX_OK)
        return fdx_store_fail(dst, rc, "%s (reading its cells)", src->errmsg);
    fdx_stmt_id upsert =
        kind == FDX_KIND_MISS ? FDX_STMT_MISS_UPSERT : FDX_STMT_MERGE_DISPATCH_UPSERT;
    fdx_row_reader reader = {0};
    fdx_row row;
    int src_rc = SQLITE_DONE;
    if (rc == FDX_OK && (rc = fdx_row_reader_init(&reader, src, kind)) != FDX_OK)
        return fdx_store_fail(dst, rc, "%s", src->errmsg);
    while (rc == FDX_OK && (src_rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((rc = fdx_row_read(&reader, st, &row)) != FDX_OK) {
            rc = fdx_store_fail(dst, rc, "%s", src->errmsg);
            break;
        }
        rc = fdx_store_upsert(dst, upsert, &row.cell, row.count, row.cands,
                              row.has_set_at ? &row.set_at : NULL, NULL);
        fdx_store_progress(dst, "merge", ++*cells);
    }
    fdx_row_reader_free(&reader);
    if (rc == FDX_OK && src_rc != SQLITE_DONE) {
        fdx_store_fail_sqlite(src, src_rc, "reading cells");
        rc = fdx_store_fail(dst, FDX_EIO, "%s", src->errmsg);
    }
    sqlite3_reset(st);
    return rc;
}

static int record_one(fdx_store *dst, const char *path, const lineage_entry *e, const char *how)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(dst, FDX_STMT_MERGED_INSERT, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, e->id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, e->ledger_high);
    sqlite3_bind_text(st, 3, path, -1, SQLITE_STATIC);
    if (e->digest[0])
        sqlite3_bind_text(st, 4, e->digest, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, how, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(dst, rc, "recording a merged store");
    return FDX_OK;
}

/* The source as read; what it holds as claims (never grounds for a skip). */
static int record_lineage(fdx_store *dst, const char *path, const lineage *l)
{
    int rc = record_one(dst, path, &l->self, "read");
    for (size_t i = 0; rc == FDX_OK && i < l->n; i++)
        rc = record_one(dst, path, &l->v[i], "held");
    return rc;
}

/* The merge proper, inside dst's savepoint and src's read transaction. */
static int merge_from(fdx_store *dst, fdx_store *src, const char *path, fdx_merge_stats *stats)
{
    lineage l = {{"", 0, "", 0}, NULL, 0};
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
            rc = fdx_merge_history(dst, src);
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
    if (fdx_backend_allows(dst, "merge") != FDX_OK)
        return FDX_ERROR;
    fdx_store *src = NULL;
    fdx_commit_stats stats_before = dst->txn_stats;
    fdx_merge_stats merge_before = *stats;
    fdx_history_config hist_before;
    int rc = fdx_store_flush_pending(dst);
    if (rc == FDX_OK)
        rc = fdx_ledger_open_row(dst);
    if (rc == FDX_OK)
        rc = fdx_store_exec(dst, FDX_STMT_SAVEPOINT);
    if (rc != FDX_OK)
        return rc;
    uint64_t merged_before = dst->ledger.merged;
    hist_before = dst->hist;
    rc = open_source(dst, path, &src);
    if (rc == FDX_OK)
        rc = merge_from(dst, src, src->path, stats); /* a URI's password left out */
    fdx_store_close(src);
    if (rc == FDX_OK)
        return fdx_store_exec(dst, FDX_STMT_RELEASE) == FDX_OK ? FDX_OK : FDX_ERROR;
    char saved[sizeof dst->errmsg];
    memcpy(saved, dst->errmsg, sizeof saved);
    dst->txn_stats = stats_before;
    dst->ledger.merged = merged_before;
    dst->hist = hist_before;
    *stats = merge_before;
    if (fdx_store_exec(dst, FDX_STMT_ROLLBACK_TO) == FDX_OK)
        fdx_store_exec(dst, FDX_STMT_RELEASE);
    memcpy(dst->errmsg, saved, sizeof saved);
    return rc;
}
