/*
 * fdx_store_export: both feeds from one read transaction, in the total order
 * of WIRE.md section 3, the pair replaced as jsonl_files.h describes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/encode.h"
#include "common/fsutil.h"
#include "common/jsonl_files.h"
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
    uint64_t *done; /* lines written by the whole export, for progress */
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
    fdx_store_progress(r->s, "export", ++*r->done);
    return 1;
}

static int write_pair(fdx_store *s, const char *dir, fdx_export_stats *stats)
{
    char err[512];
    uint64_t done = 0;
    rows r[2] = {{s, NULL, FDX_KIND_MISS, &done}, {s, NULL, FDX_KIND_DISPATCH, &done}};
    fdx_jsonl_file files[2] = {{fdx_path_join(dir, "misses.jsonl"), next_row, &r[0], 0},
                               {fdx_path_join(dir, "dispatches.jsonl"), next_row, &r[1], 0}};
    int rc =
        files[0].path && files[1].path ? FDX_OK : fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_MISS_EXPORT, &r[0].st);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, FDX_STMT_DISPATCH_EXPORT, &r[1].st);
    if (rc == FDX_OK && (rc = fdx_write_jsonl_files(files, 2, err, sizeof err)) != FDX_OK)
        fdx_store_fail(s, rc, "%s", err);
    for (int i = 0; i < 2; i++) {
        if (r[i].st)
            sqlite3_reset(r[i].st);
        free((char *)files[i].path);
    }
    stats->miss_lines = files[0].lines;
    stats->dispatch_lines = files[1].lines;
    return rc;
}

static int can_export(fdx_store *s)
{
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
    if (s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "cannot export while a transaction is open");
    return FDX_OK;
}

/* The lines of one kind to out, buffered up to 64 KiB at a time. */
static int write_kind(rows *r, FILE *out, uint64_t *lines)
{
    char err[512];
    fdx_buf b = FDX_BUF_INIT;
    int more, rc = fdx_store_stmt(
                  r->s, r->kind == FDX_KIND_MISS ? FDX_STMT_MISS_EXPORT : FDX_STMT_DISPATCH_EXPORT,
                  &r->st);
    while (rc == FDX_OK && (more = next_row(r, &b, err, sizeof err)) != 0) {
        if (more < 0)
            rc = -more;
        else if (b.oom)
            rc = fdx_store_fail(r->s, FDX_ENOMEM, "out of memory");
        if (rc == FDX_OK && b.len >= 65536) {
            if (fwrite(b.data, 1, b.len, out) != b.len)
                rc = fdx_store_fail(r->s, FDX_EIO, "writing the feed: %s", strerror(errno));
            fdx_buf_clear(&b);
        }
    }
    if (rc == FDX_OK && b.len && fwrite(b.data, 1, b.len, out) != b.len)
        rc = fdx_store_fail(r->s, FDX_EIO, "writing the feed: %s", strerror(errno));
    if (rc == FDX_OK && (fflush(out) != 0 || ferror(out)))
        rc = fdx_store_fail(r->s, FDX_EIO, "writing the feed: %s", strerror(errno));
    if (r->st)
        sqlite3_reset(r->st);
    fdx_buf_free(&b);
    *lines = *r->done;
    return rc;
}

int fdx_store_export_kind(fdx_store *s, const char *kind, FILE *out, uint64_t *lines)
{
    uint64_t done = 0, local;
    int is_miss = kind && strcmp(kind, "misses") == 0;
    rows r = {s, NULL, is_miss ? FDX_KIND_MISS : FDX_KIND_DISPATCH, &done};
    lines = lines ? lines : &local;
    *lines = 0;
    if (!is_miss && !(kind && strcmp(kind, "dispatches") == 0))
        return fdx_store_fail(s, FDX_EMISUSE, "no feed kind '%s' (misses or dispatches)",
                              kind ? kind : "");
    int rc = can_export(s);
    if (rc != FDX_OK)
        return rc;
    sqlite3_exec(s->db, fdx_sql_export_tuning, NULL, NULL, NULL); /* speed only */
    if ((rc = fdx_store_exec(s, FDX_STMT_BEGIN_READ)) != FDX_OK)
        return rc;
    rc = write_kind(&r, out, lines);
    int end = fdx_store_exec(s, rc == FDX_OK ? FDX_STMT_COMMIT : FDX_STMT_ROLLBACK);
    return rc != FDX_OK ? rc : end;
}

int fdx_store_export(fdx_store *s, const char *outdir, fdx_export_stats *stats)
{
    fdx_export_stats local = {0, 0};
    char err[512];
    stats = stats ? stats : &local;
    int rc = can_export(s);
    if (rc != FDX_OK)
        return rc;
    rc = fdx_mkdirs(outdir, err, sizeof err);
    if (rc != FDX_OK)
        return fdx_store_fail(s, rc, "%s", err);
    sqlite3_exec(s->db, fdx_sql_export_tuning, NULL, NULL, NULL); /* speed only */
    if ((rc = fdx_store_exec(s, FDX_STMT_BEGIN_READ)) != FDX_OK)
        return rc;
    rc = write_pair(s, outdir, stats);
    int end = fdx_store_exec(s, rc == FDX_OK ? FDX_STMT_COMMIT : FDX_STMT_ROLLBACK);
    return rc != FDX_OK ? rc : end;
}
