/*
 * fdx_store_export: both feeds from one read transaction, in the total order
 * of WIRE.md section 3, each file replaced atomically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "sql_text.h"
#include "store/store_internal.h"

typedef struct rows {
    fdx_store *s;
    sqlite3_stmt *st;
    fdx_row_reader reader;
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
    fdx_row row;
    int code = fdx_row_read(&r->reader, r->st, &row);
    if (code != FDX_OK) {
        snprintf(err, errsz, "%s", r->s->errmsg);
        return -code;
    }
    fdx_buf_append(line, row.line.p, row.line.n);
    return 1;
}

static int write_kind(fdx_store *s, const char *dir, fdx_kind kind, uint64_t *lines)
{
    char err[512];
    const char *name = kind == FDX_KIND_MISS ? "misses.jsonl" : "dispatches.jsonl";
    char *path = fdx_path_join(dir, name);
    if (!path)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    rows r = {s, NULL, {0}};
    int rc = fdx_row_reader_init(&r.reader, s, kind);
    if (rc == FDX_OK)
        rc = fdx_store_stmt(
            s, kind == FDX_KIND_MISS ? FDX_STMT_MISS_EXPORT : FDX_STMT_DISPATCH_EXPORT, &r.st);
    if (rc == FDX_OK) {
        rc = fdx_write_jsonl(path, next_row, &r, lines, err, sizeof err);
        sqlite3_reset(r.st);
        if (rc != FDX_OK)
            fdx_store_fail(s, rc, "%s", err);
    }
    fdx_row_reader_free(&r.reader);
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
