/*
 * COPY ... FROM STDIN of a working copy's rows (text format), for the push of
 * an ingest's cells (pg_push.c) and of a merge's staged rows (pg_merge.c).
 */
#include <stdio.h>

#include "common/buf.h"
#include "store/conn.h"
#include "store/pg_copy.h"

static void copy_text(fdx_buf *b, const unsigned char *t, int n)
{
    for (int i = 0; i < n; i++) {
        switch (t[i]) {
        case '\\': fdx_buf_append(b, "\\\\", 2); break;
        case '\t': fdx_buf_append(b, "\\t", 2); break;
        case '\n': fdx_buf_append(b, "\\n", 2); break;
        case '\r': fdx_buf_append(b, "\\r", 2); break;
        default: fdx_buf_putc(b, (char)t[i]);
        }
    }
}

/* One row of st as a line of COPY's text format. */
static void copy_row(fdx_buf *b, sqlite3_stmt *st)
{
    int n = sqlite3_column_count(st);
    for (int i = 0; i < n; i++) {
        if (i)
            fdx_buf_putc(b, '\t');
        int type = sqlite3_column_type(st, i);
        if (type == SQLITE_NULL) {
            fdx_buf_append(b, "\\N", 2);
        } else if (type == SQLITE_INTEGER) {
            char num[24];
            int len = snprintf(num, sizeof num, "%lld", (long long)sqlite3_column_int64(st, i));
            fdx_buf_append(b, num, (size_t)len);
        } else {
            const unsigned char *t = sqlite3_column_text(st, i);
            copy_text(b, t, sqlite3_column_bytes(st, i));
        }
    }
    fdx_buf_putc(b, '\n');
}

static int copy_flush(fdx_store *s, fdx_pg *pg, fdx_buf *b)
{
    if (b->oom)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    if (b->len && PQputCopyData(pg->conn, b->data, (int)b->len) != 1)
        return fdx_pg_fail(s, pg, NULL, "sending cells");
    fdx_buf_clear(b);
    return FDX_OK;
}

int fdx_pg_copy_in(fdx_store *s, fdx_pg *pg, const char *local_sql, const char *copy_sql,
                   int *retry)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, local_sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return fdx_store_fail_sqlite(s, sqlite3_errcode(s->db), "reading the transaction");
    }
    PGresult *r = fdx_pg_exec(pg, copy_sql, 0, NULL);
    int rc = FDX_OK;
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        *retry = fdx_pg_retryable(r) || PQstatus(pg->conn) != CONNECTION_OK;
        rc = fdx_pg_fail(s, pg, r, "staging cells");
    }
    PQclear(r);
    fdx_buf b = FDX_BUF_INIT;
    int src = SQLITE_DONE;
    while (rc == FDX_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        copy_row(&b, st);
        if (b.len >= 1 << 16)
            rc = copy_flush(s, pg, &b);
    }
    sqlite3_finalize(st);
    if (rc == FDX_OK && src != SQLITE_DONE)
        rc = fdx_store_fail_sqlite(s, src, "reading the transaction");
    if (rc == FDX_OK)
        rc = copy_flush(s, pg, &b);
    fdx_buf_free(&b);
    if (PQputCopyEnd(pg->conn, rc == FDX_OK ? NULL : "aborted") != 1 && rc == FDX_OK)
        rc = fdx_pg_fail(s, pg, NULL, "staging cells");
    while ((r = PQgetResult(pg->conn)) != NULL) {
        if (rc == FDX_OK && PQresultStatus(r) != PGRES_COMMAND_OK) {
            *retry = fdx_pg_retryable(r) || PQstatus(pg->conn) != CONNECTION_OK;
            rc = fdx_pg_fail(s, pg, r, "staging cells");
        }
        PQclear(r);
    }
    if (rc != FDX_OK && PQstatus(pg->conn) != CONNECTION_OK)
        *retry = 1;
    return rc;
}
