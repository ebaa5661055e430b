/*
 * fdx_store_export: both feeds from one read transaction, in the total order
 * of docs/FORMAT.md ("The export"), each file replaced atomically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/encode.h"
#include "common/fsutil.h"
#include "sql_text.h"
#include "store/store_internal.h"

fdx_str fdx_column_text(sqlite3_stmt *st, int i)
{
    fdx_str v;
    v.p = (const char *)sqlite3_column_text(st, i);
    v.n = (size_t)sqlite3_column_bytes(st, i);
    if (!v.p)
        v.p = "";
    return v;
}

/* Reads the key columns (in the order of the export queries) into a cell. */
int fdx_row_cell(sqlite3_stmt *st, fdx_kind kind, fdx_cell *c)
{
    int i = 0;
    c->kind = kind;
    c->keyed = kind == FDX_KIND_MISS ? 1 : sqlite3_column_int(st, i++);
    c->token = fdx_column_text(st, i++);
    c->backend = fdx_column_text(st, i++);
    c->op = fdx_column_text(st, i++);
    c->dtypes_json = fdx_column_text(st, i++);
    c->kernel_source = fdx_column_text(st, i++);
    c->revision = (uint64_t)sqlite3_column_int64(st, i++) ^ FDX_HASH_FLIP;
    c->cc_major = sqlite3_column_int64(st, i++);
    c->cc_minor = sqlite3_column_int64(st, i++);
    c->sku = fdx_column_text(st, i++);
    c->driver = fdx_column_text(st, i++);
    return i;
}

typedef struct rows {
    fdx_store *s;
    sqlite3_stmt *st;
    fdx_kind kind;
} rows;

static int next_row(void *ctx, fdx_buf *line, char *err, size_t errsz)
{
    rows *r = ctx;
    int rc = sqlite3_step(r->st);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW) {
        int code = fdx_store_fail_sqlite(r->s, rc, "reading cells");
        snprintf(err, errsz, "%s", r->s->errmsg);
        return -code;
    }
    fdx_cell cell;
    fdx_str cands = FDX_NO_CANDS;
    int i = fdx_row_cell(r->st, r->kind, &cell);
    if (r->kind == FDX_KIND_DISPATCH)
        cands = fdx_column_text(r->st, i++);
    fdx_enc_cell_line(line, &cell, (uint64_t)sqlite3_column_int64(r->st, i), cands);
    return 1;
}

static int write_kind(fdx_store *s, const char *dir, fdx_kind kind, uint64_t *lines)
{
    char err[512];
    const char *name = kind == FDX_KIND_MISS ? "misses.jsonl" : "dispatches.jsonl";
    char *path = fdx_path_join(dir, name);
    if (!path)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    rows r = {s, NULL, kind};
    int rc = fdx_store_stmt(
        s, kind == FDX_KIND_MISS ? FDX_STMT_MISS_EXPORT : FDX_STMT_DISPATCH_EXPORT, &r.st);
    if (rc == FDX_OK) {
        rc = fdx_write_jsonl(path, next_row, &r, lines, err, sizeof err);
        sqlite3_reset(r.st);
        if (rc != FDX_OK)
            fdx_store_fail(s, rc, "%s", err);
    }
    free(path);
    return rc;
}

int fdx_store_export(fdx_store *s, const char *outdir, fdx_export_stats *stats)
{
    fdx_export_stats local = {0, 0};
    char err[512];
    stats = stats ? stats : &local;
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
    if (s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "cannot export while a transaction is open");
    int rc = fdx_mkdirs(outdir, err, sizeof err);
    if (rc != FDX_OK)
        return fdx_store_fail(s, rc, "%s", err);
    sqlite3_exec(s->db, fdx_sql_export_tuning, NULL, NULL, NULL); /* speed only */
    if ((rc = fdx_store_exec(s, FDX_STMT_BEGIN_READ)) != FDX_OK)
        return rc;
    rc = write_kind(s, outdir, FDX_KIND_MISS, &stats->miss_lines);
    if (rc == FDX_OK)
        rc = write_kind(s, outdir, FDX_KIND_DISPATCH, &stats->dispatch_lines);
    int end = fdx_store_exec(s, rc == FDX_OK ? FDX_STMT_COMMIT : FDX_STMT_ROLLBACK);
    return rc != FDX_OK ? rc : end;
}
