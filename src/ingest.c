/*
 * fdx_store_ingest_path: JSONL files, run directories and standard input,
 * streamed line by line into the open transaction. Each path is applied all
 * or nothing, inside a savepoint.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decode.h"
#include "linereader.h"
#include "store_internal.h"

typedef struct ingest {
    fdx_store *s;
    const fdx_ingest_opts *opts;
    fdx_ingest_stats *stats;
    fdx_decoder *dec;
    uint64_t bad;
} ingest;

/* Reports one bad line: to the callback, and the first one to errmsg. */
static void report(ingest *in, const char *file, uint64_t line, const char *reason)
{
    char where[1024];
    snprintf(where, sizeof where, "%s:%llu", file, (unsigned long long)line);
    if (in->bad++ == 0)
        fdx_store_fail(in->s, FDX_EDATA, "%s: %s", where, reason);
    if (in->opts->on_error)
        in->opts->on_error(in->opts->ctx, where, reason);
}

static int is_blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    return 1;
}

static int record(fdx_store *s, const fdx_record *rec)
{
    if (rec->kind == FDX_KIND_MISS)
        return fdx_store_record_miss(s, &rec->miss);
    return fdx_store_record_dispatch(s, &rec->dispatch);
}

/* Decodes and records one non-blank line. FDX_EDATA has been reported. */
static int ingest_line(ingest *in, const char *name, uint64_t lineno, const char *p, size_t n)
{
    char err[512];
    fdx_record rec;
    int rc = fdx_decode_line(in->dec, p, n, &rec, err, sizeof err);
    if (rc == FDX_OK && in->bad == 0) {
        rc = record(in->s, &rec);
        if (rc == FDX_EDATA)
            snprintf(err, sizeof err, "%.500s", in->s->errmsg);
    }
    if (rc == FDX_EDATA)
        report(in, name, lineno, err);
    else if (rc == FDX_ENOMEM)
        return fdx_store_fail(in->s, rc, "%s:%llu: out of memory", name,
                              (unsigned long long)lineno);
    else if (rc != FDX_OK)
        return rc;
    else
        in->stats->records++;
    return FDX_OK;
}

static int read_lines(ingest *in, fdx_linereader *lr, const char *name)
{
    const char *p;
    size_t n;
    int r;
    while ((r = fdx_lr_next(lr, &p, &n)) != FDX_LR_EOF) {
        if (r == FDX_LR_ERROR)
            return fdx_store_fail(in->s, FDX_EIO, "%s: reading: %s", name, strerror(errno));
        in->stats->lines++;
        if (r == FDX_LR_TOO_LONG) {
            char reason[128];
            snprintf(reason, sizeof reason, "line longer than %zu bytes", lr->max_line);
            report(in, name, lr->lineno, reason);
            continue;
        }
        if (is_blank(p, n))
            continue;
        int rc = ingest_line(in, name, lr->lineno, p, n);
        if (rc != FDX_OK)
            return rc;
    }
    return FDX_OK;
}

/* One stream; path NULL is standard input. */
static int ingest_stream(ingest *in, const char *path, const char *name)
{
    fdx_linereader lr;
    int rc = fdx_lr_open(&lr, path, in->opts->max_line_bytes);
    if (rc != FDX_OK)
        return fdx_store_fail(in->s, rc, "%s: %s", name, strerror(errno));
    rc = read_lines(in, &lr, name);
    in->stats->files++;
    in->stats->bytes += lr.bytes;
    fdx_lr_close(&lr);
    return rc;
}

static int ingest_dir(ingest *in, const char *dir)
{
    static const char *const names[] = {"misses.jsonl", "dispatches.jsonl"};
    int found = 0;
    for (size_t i = 0; i < 2; i++) {
        char path[4096];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= sizeof path)
            return fdx_store_fail(in->s, FDX_EIO, "%s: path too long", dir);
        if (stat(path, &st) != 0) {
            if (errno == ENOENT)
                continue;
            return fdx_store_fail(in->s, FDX_EIO, "%s: %s", path, strerror(errno));
        }
        found++;
        int rc = ingest_stream(in, path, path);
        if (rc != FDX_OK)
            return rc;
    }
    if (!found)
        return fdx_store_fail(in->s, FDX_ENOENT,
                              "%s: run directory holds neither misses.jsonl nor dispatches.jsonl",
                              dir);
    return FDX_OK;
}

static int ingest_any(ingest *in, const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0)
        return ingest_stream(in, NULL, "<stdin>");
    if (stat(path, &st) != 0)
        return fdx_store_fail(in->s, errno == ENOENT ? FDX_ENOENT : FDX_EIO, "%s: %s", path,
                              strerror(errno));
    if (S_ISDIR(st.st_mode))
        return ingest_dir(in, path);
    return ingest_stream(in, path, path);
}

/* Runs the ingest of one path inside a savepoint so a failure undoes only it. */
static int ingest_atomically(ingest *in, const char *path)
{
    fdx_store *s = in->s;
    fdx_commit_stats before = s->txn_stats;
    int rc = fdx_store_flush_pending(s);
    if (rc == FDX_OK)
        rc = fdx_store_exec(s, FDX_STMT_SAVEPOINT);
    if (rc != FDX_OK)
        return rc;
    rc = ingest_any(in, path);
    if (rc == FDX_OK && in->bad) {
        char first[sizeof s->errmsg];
        memcpy(first, s->errmsg, sizeof first);
        rc = fdx_store_fail(s, FDX_EDATA, "%.900s (%llu bad line%s in %s)", first,
                            (unsigned long long)in->bad, in->bad == 1 ? "" : "s", path);
    }
    if (rc == FDX_OK)
        rc = fdx_store_flush_pending(s);
    if (rc == FDX_OK)
        return fdx_store_exec(s, FDX_STMT_RELEASE);
    char saved[sizeof s->errmsg];
    memcpy(saved, s->errmsg, sizeof saved);
    fdx_agg_clear(s->pending);
    s->txn_stats = before;
    if (fdx_store_exec(s, FDX_STMT_ROLLBACK_TO) == FDX_OK)
        fdx_store_exec(s, FDX_STMT_RELEASE);
    memcpy(s->errmsg, saved, sizeof saved);
    return rc;
}

int fdx_store_ingest_path(fdx_store *s, const char *path, const fdx_ingest_opts *opts,
                          fdx_ingest_stats *stats)
{
    static const fdx_ingest_opts defaults;
    fdx_ingest_stats local = {0};
    if (!s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "no transaction is open (call fdx_store_begin)");
    if (!path)
        return fdx_store_fail(s, FDX_EMISUSE, "no path given");
    ingest in = {s, opts ? opts : &defaults, stats ? stats : &local, NULL, 0};
    in.dec = fdx_decoder_new(in.opts->max_depth);
    if (!in.dec)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    int rc = ingest_atomically(&in, path);
    in.stats->bad_lines += in.bad;
    fdx_decoder_free(in.dec);
    return rc;
}
