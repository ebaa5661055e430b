/*
 * Ingest: JSONL files, run directories, standard input and memory, streamed
 * into the open transaction. The calling thread reads and hashes the input
 * and cuts it into batches (never spanning two paths); the pool decodes them,
 * on worker threads or inline; back on the calling thread, in order, each
 * batch's cells join the path's, errors are reported, and the path is applied
 * or undone as a whole inside a savepoint, with its sources in the ledger.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/message.h"
#include "common/open_stores.h"
#include "ingest/batch.h"
#include "ingest/linereader.h"
#include "ingest/pool.h"
#include "ingest/sources.h"
#include "store/conn.h"
#include "store/ledger.h"
#include "store/store_flush.h"

/* The most of a path a message shows (its start and end, joined by "...",
 * common/message.h), so that two paths leave its reason room. */
#define SHOWN_PATH 320

typedef struct ingest {
    fdx_store *s;
    const fdx_ingest_opts *opts;
    fdx_ingest_stats *stats;
    fdx_pool *pool;
    fdx_slab_pool *slabs; /* the blocks files are read into */
    fdx_batch *cur;       /* being filled by the reader */
    size_t max_line;
    /* the path being finished, in batch order (copied: the batch that
     * began it is reused before a long path ends) */
    char path[PATH_MAX];
    uint64_t path_bad;
    char first_error[sizeof(((fdx_store *)0)->errmsg)];
    fdx_commit_stats stats_before;
    fdx_txn_ledger ledger_before;
    fdx_history_config hist_before;
    /* the source being finished */
    char source[PATH_MAX];
    uint64_t src_records;
    uint64_t src_bad;
    uint64_t failed_paths;
    fdx_seen_files seen; /* files read so far, to notice one given twice */
    int skip_rc;         /* why reject_chunk could not hand the batch over */
    /* The workers' line memos share the budget with the pending cells: each
     * may keep memo_most, and what they keep past their least bound
     * (memo_lent) the pending cells give up. */
    size_t memo_most;
    atomic_size_t memo_lent;
} ingest;

/* ---- the calling thread, after decoding: in batch order ---- */

static void write_reject(ingest *in, const char *p, size_t n)
{
    if (in->opts->rejects) {
        fwrite(p, 1, n, in->opts->rejects);
        fputc('\n', in->opts->rejects);
    }
}

static void report(ingest *in, uint64_t line, const char *reason)
{
    char where[sizeof in->source + 32], shown[SHOWN_PATH];
    snprintf(where, sizeof where, "%s:%llu", in->source, (unsigned long long)line);
    if (in->path_bad++ == 0) {
        fdx_format_message(shown, sizeof shown, "%s", where);
        fdx_format_message(in->first_error, sizeof in->first_error, "%s: %s", shown, reason);
    }
    in->src_bad++;
    in->stats->bad_lines++;
    if (in->opts->on_error) {
        in->s->in_callback++;
        in->opts->on_error(in->opts->ctx, where, reason);
        in->s->in_callback--;
    }
}

/* The caller's warning callback, which must not call into the store. */
static void warn(ingest *in, const char *source, const char *msg)
{
    in->s->in_callback++;
    in->opts->on_warning(in->opts->ctx, source, msg);
    in->s->in_callback--;
}

/* Warns when the same bytes were ingested before (an accidental re-ingest?). */
static int warn_if_seen(ingest *in, const unsigned char digest[32])
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
    warn(in, in->source, msg);
    return FDX_OK;
}

static int source_end(ingest *in, const fdx_batch *b, const fdx_entry *e)
{
    fdx_source_info src = {in->source, {0}, e->bytes, e->lineno, in->src_records, in->src_bad};
    memcpy(src.digest, b->text.data + e->off, 32);
    in->stats->lines += e->lineno;
    in->stats->bytes += e->bytes;
    int rc = warn_if_seen(in, src.digest);
    return rc == FDX_OK ? fdx_ledger_add_source(in->s, &src) : rc;
}

static int path_begin(ingest *in, const char *name)
{
    fdx_store *s = in->s;
    int rc = fdx_ledger_open_row(s);
    if (rc == FDX_OK)
        rc = fdx_store_exec(s, FDX_STMT_SAVEPOINT);
    fdx_store_begin_path(s, !in->opts->all_or_nothing);
    snprintf(in->path, sizeof in->path, "%s", name);
    in->path_bad = 0;
    in->stats_before = s->txn_stats;
    in->ledger_before = s->ledger;
    in->hist_before = s->hist;
    return rc;
}

/* Applies the path, or (when it had bad lines, or aborted) undoes it. */
static int path_end(ingest *in, int aborted)
{
    fdx_store *s = in->s;
    int rc = FDX_OK;
    if (!aborted && (!in->path_bad || in->opts->skip_invalid)) {
        rc = fdx_store_end_path(s, 1);
        if (rc == FDX_OK)
            return fdx_store_exec(s, FDX_STMT_RELEASE);
    }
    if (!aborted && rc == FDX_OK) {
        in->failed_paths++;
        char shown[SHOWN_PATH];
        fdx_format_message(shown, sizeof shown, "%s", in->path);
        if (in->failed_paths == 1)
            fdx_store_fail(s, FDX_EDATA, "%s (%llu bad line%s in %s)", in->first_error,
                           (unsigned long long)in->path_bad, in->path_bad == 1 ? "" : "s", shown);
    }
    fdx_store_end_path(s, 0);
    s->txn_stats = in->stats_before;
    s->ledger = in->ledger_before;
    s->hist = in->hist_before;
    int undo = fdx_store_exec(s, FDX_STMT_ROLLBACK_TO);
    if (undo == FDX_OK)
        undo = fdx_store_exec(s, FDX_STMT_RELEASE);
    return rc != FDX_OK ? rc : undo;
}

/* A segment's cells join its path's (unless the path is already lost). */
static int adopt(ingest *in, fdx_batch *b, size_t seg)
{
    fdx_store *s = in->s;
    fdx_agg *agg = b->segs[seg];
    int lost = (in->path_bad && !in->opts->skip_invalid) || s->txn_broken;
    if (!lost && fdx_agg_merge(s->pending, agg) != FDX_OK)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    s->ledger.records += lost ? 0 : b->seg_records[seg];
    b->seg_records[seg] = 0;
    fdx_agg_clear(agg);
    s->spill_lent = atomic_load_explicit(&in->memo_lent, memory_order_relaxed);
    return fdx_store_spill_if_full(s);
}

static int on_entry(ingest *in, fdx_batch *b, const fdx_entry *e, size_t seg)
{
    const char *text = fdx_entry_text(b, e);
    char reason[192];
    switch (e->kind) {
    case FDX_E_PATH_BEGIN: return path_begin(in, text);
    case FDX_E_SOURCE_BEGIN:
        snprintf(in->source, sizeof in->source, "%.*s", (int)e->len, text);
        in->src_records = in->src_bad = 0;
        in->stats->files++;
        return FDX_OK;
    case FDX_E_LINE:
        fdx_store_progress(in->s, "ingest", in->stats->records + in->stats->bad_lines + 1);
        if (e->error < 0) {
            in->src_records++;
            in->stats->records++;
            return FDX_OK;
        }
        report(in, e->lineno, fdx_batch_reason(b, e->error));
        write_reject(in, text, e->len);
        return FDX_OK;
    case FDX_E_TOO_LONG:
        if (in->max_line < FDX_MAX_LINE_LIMIT)
            snprintf(reason, sizeof reason,
                     "line longer than %zu bytes, the limit, which fdx-ingest --max-line-bytes "
                     "(fdx_ingest_opts.max_line_bytes) raises up to %zu",
                     in->max_line, FDX_MAX_LINE_LIMIT);
        else
            snprintf(reason, sizeof reason, "line longer than %zu bytes, the most fdx reads",
                     in->max_line);
        report(in, e->lineno, reason);
        write_reject(in, "", 0); /* its bytes went out as they were read */
        return FDX_OK;
    case FDX_E_SOURCE_END: return source_end(in, b, e);
    case FDX_E_PATH_END: {
        int rc = adopt(in, b, seg);
        return rc == FDX_OK ? path_end(in, e->aborted) : rc;
    }
    }
    return FDX_OK;
}

static int on_batch(ingest *in, fdx_batch *b)
{
    if (b->failed)
        return fdx_store_fail(in->s, FDX_ENOMEM, "out of memory while decoding");
    int rc = FDX_OK;
    size_t seg = 0;
    for (size_t i = 0; rc == FDX_OK && i < b->n_entries; i++) {
        seg = fdx_batch_next_seg(b, i, seg);
        rc = on_entry(in, b, &b->entries[i], seg);
    }
    /* The last path goes on in the next batch: what it has so far joins it. */
    if (rc == FDX_OK && b->n_entries && b->entries[b->n_entries - 1].kind != FDX_E_PATH_END)
        rc = adopt(in, b, seg);
    return rc;
}

/* ---- the calling thread, reading ---- */

static int push(ingest *in, fdx_entry_kind kind, const void *text, size_t len, uint64_t lineno)
{
    int rc = fdx_batch_push(in->cur, kind, text, len, lineno);
    if (rc != FDX_OK)
        return fdx_store_fail(in->s, rc, "out of memory");
    return FDX_OK;
}

/* Hands the batch over and starts a new one (of the same path). */
static int next_batch(ingest *in)
{
    int rc = fdx_pool_submit(in->pool, in->cur);
    in->cur = rc == FDX_OK ? fdx_pool_take(in->pool, &rc) : NULL;
    return rc;
}

/* A line that would take the batch past its byte budget starts the next.
 * A line in a block of the reader stays there, held by the batch, which
 * counts what the reader went past since the last line (*charged on). */
static int push_line(ingest *in, const fdx_linereader *lr, const char *p, size_t n,
                     uint64_t *charged)
{
    uint64_t now = fdx_lr_consumed(lr);
    size_t read = lr->slab ? (size_t)(now - *charged) : n;
    *charged = now;
    int rc = fdx_batch_overflows(in->cur, read) ? next_batch(in) : FDX_OK;
    if (rc != FDX_OK || !lr->slab)
        return rc == FDX_OK ? push(in, FDX_E_LINE, p, n, lr->lineno) : rc;
    rc = fdx_batch_push_held(in->cur, p, n, read, lr->lineno, lr->slab);
    return rc == FDX_OK ? FDX_OK : fdx_store_fail(in->s, rc, "out of memory");
}

/* An over-long line's bytes go to the rejects file as they stream past;
 * everything before it is finished first so the file stays in order. */
static void reject_chunk(void *ctx, const char *p, size_t n)
{
    ingest *in = ctx;
    if (!in->cur)
        return;
    /* the batches handed over may hold rejects too, the current one or not */
    int rc = in->cur->n_entries ? next_batch(in) : FDX_OK;
    if (rc == FDX_OK)
        rc = fdx_pool_drain(in->pool);
    if (rc != FDX_OK) {
        in->skip_rc = rc;
        return;
    }
    fwrite(p, 1, n, in->opts->rejects);
}

static int is_blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    return 1;
}

static int read_source(ingest *in, fdx_linereader *lr, const char *name)
{
    const char *p;
    size_t n;
    uint64_t charged = fdx_lr_consumed(lr);
    int r, rc = FDX_OK;
    lr->on_skip = in->opts->rejects ? reject_chunk : NULL;
    lr->skip_ctx = in;
    while (rc == FDX_OK && (r = fdx_lr_next(lr, &p, &n)) != FDX_LR_EOF) {
        if (r == FDX_LR_ERROR)
            return fdx_store_fail(in->s, FDX_EIO, "%s: reading: %s", name, strerror(errno));
        if (!in->cur)
            return in->skip_rc ? in->skip_rc : FDX_ERROR;
        if (r == FDX_LR_TOO_LONG)
            rc = push(in, FDX_E_TOO_LONG, "", 0, lr->lineno);
        else if (!is_blank(p, n))
            rc = push_line(in, lr, p, n, &charged);
        if (rc == FDX_OK && fdx_batch_full(in->cur))
            rc = next_batch(in);
    }
    if (rc != FDX_OK)
        return rc;
    unsigned char digest[32];
    fdx_sha256_final(&lr->hash, digest);
    rc = push(in, FDX_E_SOURCE_END, digest, 32, lr->lineno);
    if (rc == FDX_OK)
        in->cur->entries[in->cur->n_entries - 1].bytes = lr->bytes;
    return rc;
}

/* Warns when this invocation already read the file open as fd, under any name. */
static int warn_if_repeated(ingest *in, int fd, const char *name)
{
    const char *earlier;
    char msg[1200];
    if (fdx_seen_add(&in->seen, fd, name, &earlier) != FDX_OK)
        return fdx_store_fail(in->s, FDX_ENOMEM, "out of memory");
    if (earlier && in->opts->on_warning) {
        snprintf(msg, sizeof msg, "same file as %.1000s, given earlier; counting it again",
                 earlier);
        warn(in, name, msg);
    }
    return FDX_OK;
}

/* Opens a file of the input (path NULL: standard input), never one of a
 * store open in this process (common/open_stores.h). */
static int open_input(fdx_store *s, fdx_linereader *lr, const char *path, const char *name,
                      size_t max_line)
{
    if (fdx_open_stores_hold(path))
        return fdx_store_fail(s, FDX_EMISUSE,
                              "%s: is the file or the -shm of a store open in this process, not "
                              "a feed to ingest (reading it would release that store's locks)",
                              name);
    int rc = fdx_lr_open(lr, path, max_line);
    return rc == FDX_OK ? FDX_OK : fdx_store_fail(s, rc, "%s: %s", name, strerror(errno));
}

static int read_stream(void *ctx, const char *path, const char *name)
{
    ingest *in = ctx;
    fdx_linereader lr;
    int rc = open_input(in->s, &lr, path, name, in->max_line);
    if (rc != FDX_OK)
        return rc;
    fdx_lr_read_into(&lr, in->slabs);
    if (fdx_store_may_read(in->s, lr.fd, name) != FDX_OK) {
        fdx_lr_close(&lr);
        return FDX_EMISUSE;
    }
    rc = warn_if_repeated(in, lr.fd, name);
    if (rc == FDX_OK)
        rc = push(in, FDX_E_SOURCE_BEGIN, name, strlen(name), 0);
    if (rc == FDX_OK)
        rc = read_source(in, &lr, name);
    fdx_lr_close(&lr);
    return rc;
}

/* fdx_each_source, its own failures explained in the store's errmsg. */
static int each_source(fdx_store *s, const char *path, fdx_source_fn fn, void *ctx)
{
    char err[sizeof s->errmsg] = "";
    int rc = fdx_each_source(path, fn, ctx, err, sizeof err);
    return rc != FDX_OK && err[0] ? fdx_store_fail(s, rc, "%s", err) : rc;
}

/* Reads one path into the pipeline, between PATH_BEGIN and PATH_END. */
static int read_path(ingest *in, const char *path, const char *data, size_t len)
{
    int rc = push(in, FDX_E_PATH_BEGIN, path, strlen(path) + 1, 0);
    if (rc == FDX_OK && data) {
        fdx_linereader lr;
        fdx_lr_open_mem(&lr, data, len, in->max_line);
        rc = push(in, FDX_E_SOURCE_BEGIN, path, strlen(path), 0);
        if (rc == FDX_OK)
            rc = read_source(in, &lr, path);
        fdx_lr_close(&lr);
    } else if (rc == FDX_OK) {
        rc = each_source(in->s, path, read_stream, in);
    }
    if (!in->cur)
        return rc;
    /* A path that could not be read to its end is undone. */
    int end = push(in, FDX_E_PATH_END, "", 0, 0);
    if (end == FDX_OK)
        in->cur->entries[in->cur->n_entries - 1].aborted = rc != FDX_OK;
    int next = rc == FDX_OK && end == FDX_OK && fdx_batch_full(in->cur) ? next_batch(in) : FDX_OK;
    return rc != FDX_OK ? rc : end != FDX_OK ? end : next;
}

/* ---- the pool's jobs: batches ---- */

static void *batch_new(void *ctx)
{
    (void)ctx;
    return fdx_batch_new();
}

static void batch_free(void *ctx, void *job)
{
    (void)ctx;
    fdx_batch_free(job);
}

static void *worker_new(void *ctx)
{
    ingest *in = ctx;
    fdx_batch_worker *w = malloc(sizeof *w);
    if (w && fdx_batch_worker_init(w, in->opts->max_depth) != FDX_OK) {
        free(w);
        return NULL;
    }
    if (w) {
        w->memo.most = in->memo_most;
        w->memo.lent = &in->memo_lent;
    }
    return w;
}

static void worker_free(void *ctx, void *scratch)
{
    (void)ctx;
    fdx_batch_worker_free(scratch);
    free(scratch);
}

static void batch_decode(void *ctx, void *job, void *scratch)
{
    (void)ctx;
    fdx_batch_decode(job, scratch);
}

static int batch_finish(void *ctx, void *job)
{
    int rc = on_batch(ctx, job);
    fdx_batch_reset(job);
    return rc;
}

/* The bytes of fdx_ingest_opts a caller of that version has: 0 for none this
 * build knows. Version 1 ended before all_or_nothing. */
static size_t opts_size(unsigned int version)
{
    switch (version) {
    case 1: return offsetof(fdx_ingest_opts, all_or_nothing);
    case FDX_INGEST_OPTS_VERSION: return sizeof(fdx_ingest_opts);
    default: return 0;
    }
}

int fdx_ingest_opts_init(fdx_ingest_opts *opts, unsigned int version)
{
    fdx_ingest_opts defaults = FDX_INGEST_OPTS_INIT;
    size_t size = opts_size(version);
    if (!opts || !size)
        return FDX_EMISUSE;
    defaults.version = version;
    memcpy(opts, &defaults, size);
    return FDX_OK;
}

static int run_ingest(fdx_store *s, const char *const *paths, size_t n, const char *data,
                      size_t len, const fdx_ingest_opts *opts, fdx_ingest_stats *stats)
{
    fdx_ingest_opts given = FDX_INGEST_OPTS_INIT;
    fdx_ingest_stats local = {0};
    int need = fdx_store_need_txn(s);
    if (need != FDX_OK)
        return need;
    if (opts && !opts_size(opts->version))
        return fdx_store_fail(s, FDX_EMISUSE,
                              "fdx_ingest_opts version %u is not one this build knows (1 to %d): "
                              "start from FDX_INGEST_OPTS_INIT",
                              opts->version, FDX_INGEST_OPTS_VERSION);
    if (opts) /* an older caller's struct is shorter: the rest keep their defaults */
        memcpy(&given, opts, opts_size(opts->version));
    opts = &given;
    if (opts->max_line_bytes > FDX_MAX_LINE_LIMIT || opts->max_depth < 0 ||
        opts->max_depth > FDX_MAX_DEPTH_LIMIT || opts->threads < 0 ||
        opts->threads > FDX_MAX_THREADS)
        return fdx_store_fail(s, FDX_EMISUSE, "ingest limits out of range");
    ingest in = {.s = s, .opts = opts, .stats = stats ? stats : &local};
    in.max_line = opts->max_line_bytes ? opts->max_line_bytes : FDX_DEFAULT_MAX_LINE;
    int threads = opts->threads ? opts->threads : fdx_pool_default_threads();
    int rc = fdx_store_flush_pending(s); /* what came before is older than any path */
    in.memo_most = s->spill_bytes / 2 / (size_t)threads; /* the pending cells keep half */
    fdx_pool_jobs jobs = {.ctx = &in,
                          .job_new = batch_new,
                          .job_free = batch_free,
                          .scratch_new = worker_new,
                          .scratch_free = worker_free,
                          .run = batch_decode,
                          .finish = batch_finish};
    in.slabs = rc == FDX_OK ? fdx_slab_pool_new() : NULL;
    in.pool = in.slabs ? fdx_pool_new(threads, &jobs) : NULL;
    if (!in.pool) {
        fdx_slab_pool_free(in.slabs);
        return rc != FDX_OK ? rc : fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    }
    in.cur = fdx_pool_take(in.pool, &rc);
    for (size_t i = 0; rc == FDX_OK && i < n; i++)
        rc = read_path(&in, data ? paths[0] : paths[i], data, len);
    if (in.cur && in.cur->n_entries) {
        int last = fdx_pool_submit(in.pool, in.cur);
        rc = rc != FDX_OK ? rc : last;
    }
    char reading[sizeof s->errmsg];
    memcpy(reading, s->errmsg, sizeof reading);
    int drained = fdx_pool_drain(in.pool);
    fdx_pool_free(in.pool); /* its batches let go of their blocks, its memos of the budget */
    s->spill_lent = 0;
    fdx_slab_pool_free(in.slabs);
    fdx_seen_free(&in.seen);
    if (s->path_open) { /* a failure stopped the batches inside a path: it is undone */
        char failure[sizeof s->errmsg];
        memcpy(failure, s->errmsg, sizeof failure);
        path_end(&in, 1);
        memcpy(s->errmsg, failure, sizeof failure);
    }
    if (rc != FDX_OK) { /* the reader's failure explains more than the rest */
        memcpy(s->errmsg, reading, sizeof reading);
        return rc;
    }
    if (drained != FDX_OK)
        return drained;
    return in.failed_paths ? FDX_EDATA : FDX_OK;
}

/* A handle, and n paths none of which is NULL; FDX_EMISUSE otherwise. */
static int paths_given(fdx_store *s, const char *const *paths, size_t n)
{
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (n && !paths)
        return fdx_store_fail(s, FDX_EMISUSE, "no paths given");
    for (size_t i = 0; i < n; i++)
        if (!paths[i])
            return fdx_store_fail(s, FDX_EMISUSE, "no path given");
    return FDX_OK;
}

int fdx_store_ingest_paths(fdx_store *s, const char *const *paths, size_t n,
                           const fdx_ingest_opts *opts, fdx_ingest_stats *stats)
{
    int rc = paths_given(s, paths, n);
    return rc != FDX_OK ? rc : run_ingest(s, paths, n, NULL, 0, opts, stats);
}

int fdx_store_ingest_path(fdx_store *s, const char *path, const fdx_ingest_opts *opts,
                          fdx_ingest_stats *stats)
{
    return fdx_store_ingest_paths(s, &path, 1, opts, stats);
}

int fdx_store_ingest_buffer(fdx_store *s, const char *name, const char *data, size_t len,
                            const fdx_ingest_opts *opts, fdx_ingest_stats *stats)
{
    static const char empty[1];
    const char *label = name ? name : "<buffer>";
    if (fdx_store_usable(s) != FDX_OK)
        return FDX_EMISUSE;
    if (!data && len)
        return fdx_store_fail(s, FDX_EMISUSE, "no data given");
    return run_ingest(s, &label, 1, data ? data : empty, len, opts, stats);
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
    int r, rc = open_input(h->s, &lr, path, name, FDX_MAX_LINE_LIMIT);
    if (rc != FDX_OK)
        return rc;
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
    int given = paths_given(s, paths, n);
    if (given != FDX_OK)
        return given;
    if (!hex)
        return fdx_store_fail(s, FDX_EMISUSE, "no place for the hash given");
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
