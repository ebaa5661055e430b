/*
 * fdx_store_export: both feeds from one read transaction, in the total order
 * of docs/FORMAT.md ("The export"), the pair replaced as jsonl_files.h describes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "common/jsonl_files.h"
#include "sql_text.h"
#include "store/conn.h"
#include "store/row.h"
#include "store/row_stream.h"

typedef struct rows {
    fdx_store *s;
    sqlite3_stmt *st;
    fdx_kind kind;
    fdx_row_reader reader;
    uint64_t *done;         /* lines written by the whole export, for progress */
    fdx_row_stream *stream; /* while st is stepped: nothing else uses the connection */
} rows;

/* A row source's failure: the store's message, as the writer reports it. */
static int row_failed(const rows *r, int code, char *err, size_t errsz)
{
    snprintf(err, errsz, "%.*s", (int)(errsz - 1), r->s->errmsg);
    return -code;
}

/* Stops stepping r's query: the connection is the caller's again. */
static void rows_stop(rows *r)
{
    fdx_row_stream_stop(r->stream);
    r->stream = NULL;
}

/* The end of r's query: 0 when it was read whole, or its failure. */
static int rows_end(rows *r, int rc, char *err, size_t errsz)
{
    rows_stop(r);
    if (rc == 0) {
        /* before the feed replaces the last one: a read without locks holds */
        int code = fdx_store_read_verdict(r->s, FDX_OK);
        return code == FDX_OK ? 0 : row_failed(r, code, err, errsz);
    }
    int code = rc == SQLITE_NOMEM ? fdx_store_fail(r->s, FDX_ENOMEM, "out of memory")
                                  : fdx_store_fail_sqlite(r->s, rc, "reading cells");
    return row_failed(r, code, err, errsz);
}

static int next_row(void *ctx, fdx_buf *line, char *err, size_t errsz)
{
    rows *r = ctx;
    if (!r->stream && fdx_row_stream_start(&r->stream, r->st) != FDX_OK)
        return rows_end(r, SQLITE_NOMEM, err, errsz);
    const fdx_row_cols *cols;
    int rc = fdx_row_stream_next(r->stream, &cols);
    if (rc != 1)
        return rows_end(r, rc, err, errsz);
    fdx_row row;
    int code = fdx_row_read_cols(&r->reader, cols, &row);
    if (code != FDX_OK)
        return row_failed(r, code, err, errsz);
    fdx_buf_append(line, row.line.p, row.line.n);
    fdx_store_progress(r->s, "export", ++*r->done);
    return 1;
}

/* The row reader and the export query of r's kind. */
static int rows_open(rows *r)
{
    int rc = fdx_row_reader_init(&r->reader, r->s, r->kind);
    return rc == FDX_OK ? fdx_store_stmt(r->s,
                                         r->kind == FDX_KIND_MISS ? FDX_STMT_MISS_EXPORT
                                                                  : FDX_STMT_DISPATCH_EXPORT,
                                         &r->st)
                        : rc;
}

static int write_pair(fdx_store *s, const char *dir, fdx_export_stats *stats)
{
    char err[512];
    uint64_t done = 0;
    rows r[2] = {{s, NULL, FDX_KIND_MISS, {0}, &done, NULL},
                 {s, NULL, FDX_KIND_DISPATCH, {0}, &done, NULL}};
    fdx_jsonl_file files[2] = {{fdx_path_join(dir, "misses.jsonl"), next_row, &r[0], 0},
                               {fdx_path_join(dir, "dispatches.jsonl"), next_row, &r[1], 0}};
    int rc =
        files[0].path && files[1].path ? FDX_OK : fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    for (int i = 0; i < 2 && rc == FDX_OK; i++)
        rc = fdx_store_may_replace(s, files[i].path);
    for (int i = 0; i < 2 && rc == FDX_OK; i++)
        rc = rows_open(&r[i]);
    if (rc == FDX_OK && (rc = fdx_write_jsonl_files(files, 2, err, sizeof err)) != FDX_OK)
        fdx_store_fail(s, rc, "%s", err);
    for (int i = 0; i < 2; i++) {
        rows_stop(&r[i]);
        if (r[i].st)
            sqlite3_reset(r[i].st);
        fdx_row_reader_free(&r[i].reader);
        free((char *)files[i].path);
    }
    stats->miss_lines = files[0].lines;
    stats->dispatch_lines = files[1].lines;
    return rc;
}

static int can_export(fdx_store *s)
{
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
    if (s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "cannot export while a transaction is open");
    return fdx_store_reads_cells(s);
}

static int write_failed(const rows *r)
{
    return fdx_store_fail(r->s, FDX_EIO, "%s: writing the %s feed to its stream: %s", r->s->path,
                          r->kind == FDX_KIND_MISS ? "misses" : "dispatches", strerror(errno));
}

/* The lines of one kind to out, buffered up to 64 KiB at a time. */
static int write_kind(rows *r, FILE *out, uint64_t *lines)
{
    char err[512];
    fdx_buf b = FDX_BUF_INIT;
    int more, rc = rows_open(r);
    while (rc == FDX_OK && (more = next_row(r, &b, err, sizeof err)) != 0) {
        if (more < 0)
            rc = -more;
        else if (b.oom)
            rc = fdx_store_fail(r->s, FDX_ENOMEM, "out of memory");
        if (rc == FDX_OK && b.len >= 65536) {
            if (fwrite(b.data, 1, b.len, out) != b.len)
                rc = write_failed(r);
            fdx_buf_clear(&b);
        }
    }
    if (rc == FDX_OK && b.len && fwrite(b.data, 1, b.len, out) != b.len)
        rc = write_failed(r);
    if (rc == FDX_OK && (fflush(out) != 0 || ferror(out)))
        rc = write_failed(r);
    rows_stop(r);
    if (r->st)
        sqlite3_reset(r->st);
    fdx_row_reader_free(&r->reader);
    fdx_buf_free(&b);
    *lines = *r->done;
    return rc;
}

int fdx_store_export_kind(fdx_store *s, const char *kind, FILE *out, uint64_t *lines)
{
    uint64_t done = 0, local;
    if (!out) /* a NULL handle is refused as can_export refuses it */
        return fdx_store_fail(s, FDX_EMISUSE, "no output stream given");
    int is_miss = kind && strcmp(kind, "misses") == 0;
    rows r = {s, NULL, is_miss ? FDX_KIND_MISS : FDX_KIND_DISPATCH, {0}, &done, NULL};
    lines = lines ? lines : &local;
    *lines = 0;
    if (!is_miss && !(kind && strcmp(kind, "dispatches") == 0))
        return fdx_store_fail(s, FDX_EMISUSE, "no feed kind '%s' (misses or dispatches)",
                              kind ? kind : "");
    int rc = can_export(s);
    if (rc == FDX_OK)
        rc = fdx_store_may_stream_to(s, out);
    if (rc != FDX_OK)
        return rc;
    sqlite3_exec(s->db, fdx_sql_export_tuning, NULL, NULL, NULL); /* speed only */
    if ((rc = fdx_store_exec(s, FDX_STMT_BEGIN_READ)) != FDX_OK)
        return rc;
    rc = write_kind(&r, out, lines);
    int end = fdx_store_exec(s, rc == FDX_OK ? FDX_STMT_COMMIT : FDX_STMT_ROLLBACK);
    return fdx_store_read_verdict(s, rc != FDX_OK ? rc : end);
}

static int export_into(fdx_store *s, const char *outdir, fdx_export_stats *stats)
{
    sqlite3_exec(s->db, fdx_sql_export_tuning, NULL, NULL, NULL); /* speed only */
    int rc = fdx_store_exec(s, FDX_STMT_BEGIN_READ);
    if (rc != FDX_OK)
        return rc;
    rc = write_pair(s, outdir, stats);
    int end = fdx_store_exec(s, rc == FDX_OK ? FDX_STMT_COMMIT : FDX_STMT_ROLLBACK);
    /* a pair written was read whole before it replaced the last (next_row) */
    return rc != FDX_OK ? fdx_store_read_verdict(s, rc) : end;
}

int fdx_store_export(fdx_store *s, const char *outdir, fdx_export_stats *stats)
{
    fdx_export_stats local = {0, 0};
    char err[512];
    stats = stats ? stats : &local;
    int rc = can_export(s);
    if (rc != FDX_OK)
        return rc;
    if (!outdir)
        return fdx_store_fail(s, FDX_EMISUSE, "no output directory given");
    size_t made_from;
    rc = fdx_mkdirs(outdir, &made_from, err, sizeof err);
    if (rc == FDX_OK)
        rc = export_into(s, outdir, stats);
    else
        fdx_store_fail(s, rc, "%s", err);
    if (rc != FDX_OK) /* a failed export leaves no directory it made */
        fdx_unmake_dirs(outdir, made_from);
    return rc;
}
