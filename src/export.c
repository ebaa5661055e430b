/*
 * fdx_store_export: both feeds from one read transaction, in the total order
 * of WIRE.md section 3, each file replaced atomically.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "encode.h"
#include "store_internal.h"

static fdx_str column_text(sqlite3_stmt *st, int i)
{
    fdx_str v;
    v.p = (const char *)sqlite3_column_text(st, i);
    v.n = (size_t)sqlite3_column_bytes(st, i);
    if (!v.p)
        v.p = "";
    return v;
}

/* Reads the key columns (in the order of the export queries) into a cell. */
static int row_cell(sqlite3_stmt *st, fdx_kind kind, fdx_cell *c)
{
    int i = 0;
    c->kind = kind;
    c->keyed = kind == FDX_KIND_MISS ? 1 : sqlite3_column_int(st, i++);
    c->token = column_text(st, i++);
    c->backend = column_text(st, i++);
    c->op = column_text(st, i++);
    c->dtypes_json = column_text(st, i++);
    c->kernel_source = column_text(st, i++);
    c->revision = (uint64_t)sqlite3_column_int64(st, i++);
    c->cc_major = sqlite3_column_int64(st, i++);
    c->cc_minor = sqlite3_column_int64(st, i++);
    c->sku = column_text(st, i++);
    c->driver = column_text(st, i++);
    return i;
}

static int write_kind(fdx_store *s, const char *path, fdx_kind kind, uint64_t *lines)
{
    fdx_afile af;
    char err[512];
    int rc = fdx_afile_open(&af, path, err, sizeof err);
    if (rc != FDX_OK)
        return fdx_store_fail(s, rc, "%s", err);
    sqlite3_stmt *st;
    fdx_stmt_id id = kind == FDX_KIND_MISS ? FDX_STMT_MISS_EXPORT : FDX_STMT_DISPATCH_EXPORT;
    if ((rc = fdx_store_stmt(s, id, &st)) != FDX_OK) {
        fdx_afile_abort(&af);
        return rc;
    }
    fdx_buf line = FDX_BUF_INIT;
    int src;
    *lines = 0;
    while (rc == FDX_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        fdx_cell cell;
        fdx_str cands = {"[]", 2};
        int i = row_cell(st, kind, &cell);
        if (kind == FDX_KIND_DISPATCH)
            cands = column_text(st, i++);
        uint64_t count = (uint64_t)sqlite3_column_int64(st, i);
        fdx_buf_clear(&line);
        fdx_enc_cell_line(&line, &cell, count, cands);
        rc = line.oom ? fdx_store_fail(s, FDX_ENOMEM, "out of memory")
                      : fdx_afile_write(&af, line.data, line.len, err, sizeof err);
        if (rc != FDX_OK && !line.oom)
            fdx_store_fail(s, rc, "%s", err);
        (*lines)++;
    }
    fdx_buf_free(&line);
    if (rc == FDX_OK && src != SQLITE_DONE)
        rc = fdx_store_fail_sqlite(s, src, "reading cells");
    sqlite3_reset(st);
    if (rc != FDX_OK) {
        fdx_afile_abort(&af);
        return rc;
    }
    if ((rc = fdx_afile_commit(&af, err, sizeof err)) != FDX_OK)
        return fdx_store_fail(s, rc, "%s", err);
    return FDX_OK;
}

/* mkdir -p: creates outdir and any missing parents. */
static int make_dirs(fdx_store *s, char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0777);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return fdx_store_fail(s, FDX_EIO, "%s: creating the output directory: %s", path,
                                  strerror(errno));
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return fdx_store_fail(s, FDX_EIO, "%s: creating the output directory: %s", path,
                              strerror(errno));
    return FDX_OK;
}

static int make_outdir(fdx_store *s, const char *outdir)
{
    struct stat st;
    char *copy = strdup(outdir);
    if (!copy)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    int rc = make_dirs(s, copy);
    free(copy);
    if (rc != FDX_OK)
        return rc;
    if (stat(outdir, &st) != 0)
        return fdx_store_fail(s, FDX_EIO, "%s: %s", outdir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return fdx_store_fail(s, FDX_EIO, "%s: exists and is not a directory", outdir);
    return FDX_OK;
}

static char *join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s", dir, name);
    return p;
}

static int export_both(fdx_store *s, const char *outdir, fdx_export_stats *stats)
{
    char *misses = join(outdir, "misses.jsonl");
    char *dispatches = join(outdir, "dispatches.jsonl");
    int rc = misses && dispatches ? FDX_OK : fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    if (rc == FDX_OK)
        rc = write_kind(s, misses, FDX_KIND_MISS, &stats->miss_lines);
    if (rc == FDX_OK)
        rc = write_kind(s, dispatches, FDX_KIND_DISPATCH, &stats->dispatch_lines);
    free(misses);
    free(dispatches);
    return rc;
}

int fdx_store_export(fdx_store *s, const char *outdir, fdx_export_stats *stats)
{
    fdx_export_stats local;
    if (!s->db)
        return fdx_store_fail(s, FDX_EMISUSE, "the store is not open");
    if (s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "cannot export while a transaction is open");
    int rc = make_outdir(s, outdir);
    if (rc != FDX_OK)
        return rc;
    if ((rc = fdx_store_exec(s, FDX_STMT_BEGIN_READ)) != FDX_OK)
        return rc;
    rc = export_both(s, outdir, stats ? stats : &local);
    int end = fdx_store_exec(s, rc == FDX_OK ? FDX_STMT_COMMIT : FDX_STMT_ROLLBACK);
    return rc != FDX_OK ? rc : end;
}
