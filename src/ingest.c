/*
 * fdx_store_ingest_path / _buffer: JSONL files, run directories, standard
 * input and memory, streamed line by line into the open transaction. Each
 * call is applied all or nothing inside a savepoint, and each source it reads
 * is written to the ledger in the same transaction.
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
    uint64_t bad;        /* bad lines in this call */
    uint64_t src_records; /* of the source being read */
    uint64_t src_bad;
} ingest;

static void write_reject(ingest *in, const char *p, size_t n)
{
    if (in->opts->rejects && n)
        fwrite(p, 1, n, in->opts->rejects);
}

static void end_reject(ingest *in)
{
    if (in->opts->rejects)
        fputc('\n', in->opts->rejects);
}

static void reject_chunk(void *ctx, const char *p, size_t n) { write_reject(ctx, p, n); }

/* Reports one bad line: to the callback, and the first one to errmsg. */
static void report(ingest *in, const char *file, uint64_t line, const char *reason)
{
    char where[1024];
    snprintf(where, sizeof where, "%s:%llu", file, (unsigned long long)line);
    if (in->bad++ == 0)
        fdx_store_fail(in->s, FDX_EDATA, "%s: %s", where, reason);
    in->src_bad++;
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
        return fdx_store_record_checked(s, &rec->miss, NULL, 1);
    return fdx_store_record_checked(s, NULL, &rec->dispatch, 1);
}

/* Decodes and records one non-blank line. FDX_EDATA has been reported. */
static int ingest_line(ingest *in, const char *name, uint64_t lineno, const char *p, size_t n)
{
    char err[512];
    fdx_record rec;
    int rc = fdx_decode_line(in->dec, p, n, &rec, err, sizeof err);
    int recording = in->bad == 0 || in->opts->skip_invalid;
    if (rc == FDX_OK && recording) {
        rc = record(in->s, &rec);
        if (rc == FDX_EDATA)
            snprintf(err, sizeof err, "%.500s", in->s->errmsg);
    }
    if (rc == FDX_EDATA) {
        report(in, name, lineno, err);
        write_reject(in, p, n);
        end_reject(in);
        return FDX_OK;
    }
    if (rc == FDX_ENOMEM)
        return fdx_store_fail(in->s, rc, "%s:%llu: out of memory", name,
                              (unsigned long long)lineno);
    if (rc != FDX_OK)
        return rc;
    in->stats->records++;
    in->src_records++;
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
            end_reject(in);
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

/* Warns when the same bytes were ingested before (an accidental re-ingest?). */
static int warn_if_seen(ingest *in, const char *name, const unsigned char digest[32])
{
    char hex[FDX_SHA256_HEX], earlier[512], msg[1024];
    fdx_ledger_entry e;
    int found;
    fdx_sha256_hex(digest, hex);
    int rc = fdx_ledger_find_source(in->s, hex, earlier, sizeof earlier, &e, &found);
    if (rc != FDX_OK || !found || !in->opts->on_warning)
        return rc;
    snprintf(msg, sizeof msg,
             "same content as %s, ingested at %s (ledger id %lld); ingesting it again", earlier,
             e.committed_at, (long long)e.id);
    in->opts->on_warning(in->opts->ctx, name, msg);
    return FDX_OK;
}

/* Reads one opened source to its end and writes its ledger row. */
static int ingest_source(ingest *in, fdx_linereader *lr, const char *name)
{
    in->src_records = in->src_bad = 0;
    lr->on_skip = in->opts->rejects ? reject_chunk : NULL;
    lr->skip_ctx = in;
    int rc = read_lines(in, lr, name);
    in->stats->files++;
    in->stats->bytes += lr->bytes;
    if (rc != FDX_OK)
        return rc;
    fdx_source_info src = {name, {0}, lr->bytes, lr->lineno, in->src_records, in->src_bad};
    fdx_sha256_final(&lr->hash, src.digest);
    rc = warn_if_seen(in, name, src.digest);
    return rc == FDX_OK ? fdx_ledger_add_source(in->s, &src) : rc;
}

/* One stream; path NULL is standard input. */
static int ingest_stream(ingest *in, const char *path, const char *name)
{
    fdx_linereader lr;
    int rc = fdx_lr_open(&lr, path, in->opts->max_line_bytes);
    if (rc != FDX_OK)
        return fdx_store_fail(in->s, rc, "%s: %s", name, strerror(errno));
    rc = ingest_source(in, &lr, name);
    fdx_lr_close(&lr);
    return rc;
}

typedef int (*each_file_fn)(void *ctx, const char *path, const char *name);

/* Calls fn for each source a path names: "-", a file, or a run directory's
 * misses.jsonl then dispatches.jsonl. */
static int each_source(fdx_store *s, const char *path, each_file_fn fn, void *ctx)
{
    static const char *const names[] = {"misses.jsonl", "dispatches.jsonl"};
    struct stat st;
    if (strcmp(path, "-") == 0)
        return fn(ctx, NULL, "<stdin>");
    if (stat(path, &st) != 0)
        return fdx_store_fail(s, errno == ENOENT ? FDX_ENOENT : FDX_EIO, "%s: %s", path,
                              strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return fn(ctx, path, path);
    int found = 0;
    for (size_t i = 0; i < 2; i++) {
        char file[4096];
        if ((size_t)snprintf(file, sizeof file, "%s/%s", path, names[i]) >= sizeof file)
            return fdx_store_fail(s, FDX_EIO, "%s: path too long", path);
        if (stat(file, &st) != 0) {
            if (errno == ENOENT)
                continue;
            return fdx_store_fail(s, FDX_EIO, "%s: %s", file, strerror(errno));
        }
        found++;
        int rc = fn(ctx, file, file);
        if (rc != FDX_OK)
            return rc;
    }
    if (!found)
        return fdx_store_fail(s, FDX_ENOENT,
                              "%s: run directory holds neither misses.jsonl nor dispatches.jsonl",
                              path);
    return FDX_OK;
}

static int ingest_file_cb(void *ctx, const char *path, const char *name)
{
    return ingest_stream(ctx, path, name);
}

typedef struct mem_source {
    const char *name;
    const char *data;
    size_t len;
} mem_source;

/*
 * Runs one ingest call so that a failure undoes only it: its records gather
 * in the store's path aggregate (joining pending only on success), and what
 * had to be written early, with the ledger rows, sits in a savepoint.
 */
static int ingest_atomically(ingest *in, const char *path, const mem_source *mem)
{
    fdx_store *s = in->s;
    fdx_commit_stats stats_before = s->txn_stats;
    fdx_txn_ledger ledger_before = s->ledger;
    int rc = fdx_ledger_open_row(s);
    if (rc == FDX_OK)
        rc = fdx_store_exec(s, FDX_STMT_SAVEPOINT);
    if (rc != FDX_OK)
        return rc;
    ledger_before.id = s->ledger.id;
    s->in_path = 1;
    if (mem) {
        fdx_linereader lr;
        fdx_lr_open_mem(&lr, mem->data, mem->len, in->opts->max_line_bytes);
        rc = ingest_source(in, &lr, mem->name);
        fdx_lr_close(&lr);
    } else {
        rc = each_source(s, path, ingest_file_cb, in);
    }
    s->in_path = 0;
    if (rc == FDX_OK && in->bad && !in->opts->skip_invalid) {
        char first[sizeof s->errmsg];
        memcpy(first, s->errmsg, sizeof first);
        rc = fdx_store_fail(s, FDX_EDATA, "%.900s (%llu bad line%s in %s)", first,
                            (unsigned long long)in->bad, in->bad == 1 ? "" : "s",
                            mem ? mem->name : path);
    }
    if (rc == FDX_OK)
        rc = fdx_store_end_path(s, 1);
    if (rc == FDX_OK)
        return fdx_store_exec(s, FDX_STMT_RELEASE);
    char saved[sizeof s->errmsg];
    memcpy(saved, s->errmsg, sizeof saved);
    fdx_store_end_path(s, 0);
    s->txn_stats = stats_before;
    s->ledger = ledger_before; /* run_id and the hash state are unchanged by sources */
    if (fdx_store_exec(s, FDX_STMT_ROLLBACK_TO) == FDX_OK)
        fdx_store_exec(s, FDX_STMT_RELEASE);
    memcpy(s->errmsg, saved, sizeof saved);
    return rc;
}

static int run_ingest(fdx_store *s, const char *path, const mem_source *mem,
                      const fdx_ingest_opts *opts, fdx_ingest_stats *stats)
{
    static const fdx_ingest_opts defaults;
    fdx_ingest_stats local = {0};
    if (!s->in_txn)
        return fdx_store_fail(s, FDX_EMISUSE, "no transaction is open (call fdx_store_begin)");
    opts = opts ? opts : &defaults;
    if (opts->max_line_bytes > FDX_MAX_LINE_LIMIT || opts->max_depth < 0 ||
        opts->max_depth > FDX_MAX_DEPTH_LIMIT)
        return fdx_store_fail(s, FDX_EMISUSE, "ingest limits out of range");
    ingest in = {s, opts, stats ? stats : &local, NULL, 0, 0, 0};
    in.dec = fdx_decoder_new(opts->max_depth);
    if (!in.dec)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    int rc = ingest_atomically(&in, path, mem);
    in.stats->bad_lines += in.bad;
    fdx_decoder_free(in.dec);
    return rc;
}

int fdx_store_ingest_path(fdx_store *s, const char *path, const fdx_ingest_opts *opts,
                          fdx_ingest_stats *stats)
{
    if (!path)
        return fdx_store_fail(s, FDX_EMISUSE, "no path given");
    return run_ingest(s, path, NULL, opts, stats);
}

int fdx_store_ingest_buffer(fdx_store *s, const char *name, const char *data, size_t len,
                            const fdx_ingest_opts *opts, fdx_ingest_stats *stats)
{
    mem_source mem = {name ? name : "<buffer>", data, len};
    if (!data && len)
        return fdx_store_fail(s, FDX_EMISUSE, "no data given");
    return run_ingest(s, NULL, &mem, opts, stats);
}

/* ---- content hashes without ingesting ---- */

typedef struct hash_ctx {
    fdx_store *s;
    fdx_sha256 combined;
} hash_ctx;

static int hash_file_cb(void *ctx, const char *path, const char *name)
{
    hash_ctx *h = ctx;
    fdx_linereader lr;
    const char *p;
    size_t n;
    int r, rc = fdx_lr_open(&lr, path, FDX_MAX_LINE_LIMIT);
    if (rc != FDX_OK)
        return fdx_store_fail(h->s, rc, "%s: %s", name, strerror(errno));
    while ((r = fdx_lr_next(&lr, &p, &n)) != FDX_LR_EOF && r != FDX_LR_ERROR)
        ;
    if (r == FDX_LR_ERROR)
        rc = fdx_store_fail(h->s, FDX_EIO, "%s: reading: %s", name, strerror(errno));
    unsigned char digest[32];
    fdx_sha256_final(&lr.hash, digest);
    fdx_sha256_update(&h->combined, digest, 32);
    fdx_lr_close(&lr);
    return rc;
}

int fdx_store_hash_paths(fdx_store *s, const char *const *paths, size_t n, char hex[65])
{
    hash_ctx h = {s, {{0}, 0, {0}, 0}};
    fdx_sha256_init(&h.combined);
    for (size_t i = 0; i < n; i++) {
        int rc = each_source(s, paths[i], hash_file_cb, &h);
        if (rc != FDX_OK)
            return rc;
    }
    unsigned char digest[32];
    fdx_sha256_final(&h.combined, digest);
    fdx_sha256_hex(digest, hex);
    return FDX_OK;
}
