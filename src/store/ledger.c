/*
 * The ingest ledger: one row per committed write transaction, written inside
 * it, so the ledger and the cells can never disagree. Run ids make ingests
 * exactly-once; content hashes let a repeated feed be recognised.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "store/conn.h"
#include "store/ledger.h"

void fdx_ledger_reset(fdx_store *s)
{
    free(s->ledger.run_id);
    memset(&s->ledger, 0, sizeof s->ledger);
    fdx_sha256_init(&s->ledger.content);
}

int fdx_ledger_open_row(fdx_store *s)
{
    sqlite3_stmt *st;
    if (s->ledger.id)
        return FDX_OK;
    int rc = fdx_store_stmt(s, FDX_STMT_LEDGER_INSERT, &st);
    if (rc == FDX_OK)
        rc = fdx_store_step_done(s, st, "writing the ledger");
    if (rc == FDX_OK)
        s->ledger.id = sqlite3_last_insert_rowid(s->db);
    return rc;
}

int fdx_ledger_add_source(fdx_store *s, const fdx_source_info *src)
{
    sqlite3_stmt *st;
    char hex[FDX_SHA256_HEX];
    int rc = fdx_ledger_open_row(s);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_LEDGER_SOURCE_INSERT, &st);
    if (rc != FDX_OK)
        return rc;
    fdx_sha256_hex(src->digest, hex);
    sqlite3_bind_int64(st, 1, s->ledger.id);
    sqlite3_bind_int64(st, 2, (int64_t)s->ledger.sources);
    sqlite3_bind_text(st, 3, src->path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, hex, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, (int64_t)src->bytes);
    sqlite3_bind_int64(st, 6, (int64_t)src->lines);
    sqlite3_bind_int64(st, 7, (int64_t)src->records);
    sqlite3_bind_int64(st, 8, (int64_t)src->skipped);
    if ((rc = fdx_store_step_done(s, st, "writing the ledger")) != FDX_OK)
        return rc;
    fdx_txn_ledger *l = &s->ledger;
    fdx_sha256_update(&l->content, src->digest, 32);
    l->sources++;
    l->bytes += src->bytes;
    l->lines += src->lines;
    l->skipped += src->skipped;
    return FDX_OK;
}

static int delete_row(fdx_store *s)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_LEDGER_DELETE, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, s->ledger.id);
    return fdx_store_step_done(s, st, "writing the ledger");
}

/* The content hash the row records: "" for a transaction that read no files. */
static void content_hex(const fdx_txn_ledger *l, char hex[FDX_SHA256_HEX])
{
    hex[0] = '\0';
    if (!l->sources)
        return;
    fdx_sha256 h = l->content; /* the transaction may read on */
    unsigned char digest[32];
    fdx_sha256_final(&h, digest);
    fdx_sha256_hex(digest, hex);
}

/* Nothing but files read (if any): no record, merge, prune or setting. */
static int nothing_but_files(const fdx_store *s)
{
    const fdx_txn_ledger *l = &s->ledger;
    return !l->recorded && !l->merged && !l->pruned && !s->hist.daily_changed;
}

/* The transaction read files and did nothing else. */
static int files_only(const fdx_store *s)
{
    return s->ledger.sources && nothing_but_files(s);
}

int fdx_ledger_txn_empty(const fdx_store *s)
{
    return !s->ledger.sources && nothing_but_files(s);
}

int fdx_ledger_repeat_verdict(fdx_store *s, const char *content_hash, const char *committed_at,
                              long long ledger_id)
{
    char hex[FDX_SHA256_HEX];
    content_hex(&s->ledger, hex);
    if (!files_only(s))
        return fdx_store_fail(s, FDX_EDATA,
                              "%s: run id '%s' was already committed at %s (ledger id %lld); "
                              "records, merges, prunes and settings under a run id cannot be "
                              "told to be the same as before, so nothing was written: use a new "
                              "run id for new data",
                              s->path, s->ledger.run_id, committed_at, ledger_id);
    if (strcmp(hex, content_hash) != 0)
        return fdx_store_fail(s, FDX_EDATA,
                              "%s: run id '%s' was already ingested at %s (ledger id %lld) with "
                              "different content; use a new run id for new data",
                              s->path, s->ledger.run_id, committed_at, ledger_id);
    s->txn_stats = (fdx_commit_stats){0, 0}; /* the commit adds and updates nothing */
    fdx_store_note(s, FDX_NOTICE_NOTHING_DONE,
                   "run id '%s' was already ingested at %s (ledger id %lld); nothing to do",
                   s->ledger.run_id, committed_at, ledger_id);
    return FDX_OK;
}

int fdx_ledger_run_repeat(fdx_store *s, int *repeat)
{
    fdx_ledger_entry e;
    int found;
    *repeat = 0;
    int rc = fdx_store_find_run(s, s->ledger.run_id, &e, &found);
    if (rc != FDX_OK || !found)
        return rc;
    rc = fdx_ledger_repeat_verdict(s, e.content_hash, e.committed_at, (long long)e.id);
    *repeat = rc == FDX_OK;
    return rc;
}

int fdx_ledger_finish(fdx_store *s)
{
    fdx_txn_ledger *l = &s->ledger;
    int changed = l->sources || l->records || l->merged || l->pruned || l->run_id;
    if (!changed) {
        int rc = l->id ? delete_row(s) : FDX_OK;
        if (rc == FDX_OK)
            l->id = 0; /* no row: a backend's push has nothing to apply */
        return rc;
    }
    sqlite3_stmt *st;
    int rc = fdx_ledger_open_row(s);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_LEDGER_UPDATE, &st);
    if (rc != FDX_OK)
        return rc;
    char hex[FDX_SHA256_HEX];
    content_hex(l, hex);
    sqlite3_bind_int64(st, 1, l->id);
    sqlite3_bind_text(st, 2, l->run_id, -1, SQLITE_STATIC); /* NULL binds NULL */
    sqlite3_bind_text(st, 3,
                      l->merged    ? "merge"
                      : l->pruned  ? "prune"
                      : l->sources ? "ingest"
                                   : "records",
                      -1, SQLITE_STATIC);
    if (l->sources)
        sqlite3_bind_text(st, 4, hex, -1, SQLITE_STATIC);
    const uint64_t nums[] = {l->sources + l->merged,
                             l->bytes,
                             l->lines,
                             l->records,
                             l->skipped,
                             s->txn_stats.cells_added,
                             s->txn_stats.cells_updated};
    for (int i = 0; i < 7; i++)
        sqlite3_bind_int64(st, 5 + i, (int64_t)nums[i]);
    sqlite3_bind_int64(st, 12, s->txn_at);
    return fdx_store_step_done(s, st, "writing the ledger");
}

static void copy_text(char *dst, size_t size, const unsigned char *src)
{
    snprintf(dst, size, "%s", src ? (const char *)src : "");
}

int fdx_store_find_run(fdx_store *s, const char *run_id, fdx_ledger_entry *e, int *found)
{
    sqlite3_stmt *st;
    if (!s)
        return FDX_EMISUSE;
    if (!run_id || !e || !found)
        return fdx_store_fail(s, FDX_EMISUSE,
                              "fdx_store_find_run needs a run id, an entry "
                              "and a found flag");
    int rc = fdx_store_stmt(s, FDX_STMT_LEDGER_FIND_RUN, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW;
    if (*found) {
        e->id = sqlite3_column_int64(st, 0);
        copy_text(e->content_hash, sizeof e->content_hash, sqlite3_column_text(st, 1));
        copy_text(e->committed_at, sizeof e->committed_at, sqlite3_column_text(st, 2));
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(s, rc, "reading the ledger");
    return fdx_store_read_verdict(s, FDX_OK);
}

int fdx_ledger_find_source(fdx_store *s, const char *hex, char *path, size_t pathsz,
                           fdx_ledger_entry *e, int *found)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_LEDGER_FIND_SOURCE, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, hex, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, s->ledger.id);
    rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW;
    if (*found) {
        copy_text(path, pathsz, sqlite3_column_text(st, 0));
        e->id = sqlite3_column_int64(st, 1);
        copy_text(e->committed_at, sizeof e->committed_at, sqlite3_column_text(st, 2));
        copy_text(e->content_hash, sizeof e->content_hash, (const unsigned char *)hex);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fdx_store_fail_sqlite(s, rc, "reading the ledger");
    return FDX_OK;
}

int fdx_store_set_run_id(fdx_store *s, const char *run_id)
{
    int need = fdx_store_need_txn(s);
    if (need != FDX_OK)
        return need;
    if (!run_id || !*run_id)
        return fdx_store_fail(s, FDX_EMISUSE, "a run id must not be empty");
    if (!fdx_utf8_valid(run_id, strlen(run_id), NULL))
        return fdx_store_fail(s, FDX_EDATA, "%s: run id: invalid UTF-8", s->path);
    char *copy = strdup(run_id);
    if (!copy)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    free(s->ledger.run_id);
    s->ledger.run_id = copy;
    return FDX_OK;
}
