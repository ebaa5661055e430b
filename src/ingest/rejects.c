/*
 * The rejects file (see fdx.h): skipped lines go to a temporary file beside
 * the path and replace it only once the store has committed, so a failed
 * ingest, a no-op retry or a full disk never truncates the previous file.
 * Paths the ingest reads or the store lives in are refused up front: renaming
 * over them would destroy them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic_file.h"
#include "common/file_id.h"
#include "common/forks.h"
#include "common/fsutil.h"
#include "common/message.h"
#include "fdx.h"
#include "ingest/sources.h"

/* DONE: committed, or failed after it started; REFUSED: its open failed. */
enum { CHECKED, STARTED, SYNCED, DONE, REFUSED };

struct fdx_rejects {
    char *path;
    fdx_afile af;
    FILE *stream;
    int stream_fd;
    int state;
    unsigned forks; /* fdx_forks_seen() when it was opened */
    char errmsg[FDX_MESSAGE_SIZE];
};

static int fail(fdx_rejects *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(fdx_rejects *r, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fdx_vformat_message(r->errmsg, sizeof r->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

typedef struct check {
    fdx_rejects *r;
    fdx_file_id id;
} check;

static int check_input(void *ctx, const char *path, const char *name)
{
    check *c = ctx;
    fdx_file_id id = {0};
    struct stat st;
    if (path ? fdx_file_identify(path, &id) != 0 : fstat(0, &st) != 0)
        return fail(c->r, FDX_EIO, "%s: %s", name, strerror(errno));
    if (!path)
        id = (fdx_file_id){1, st.st_dev, st.st_ino, ""};
    if (fdx_file_same(&c->id, &id))
        return fail(c->r, FDX_EMISUSE, "%s: is the input %s; the rejects file must be another file",
                    c->r->path, name);
    return FDX_OK;
}

/* The store's files lie beside the file its path names, through any
 * symlink: SQLite makes the -wal beside the file it resolved. */
static int check_store(check *c, const char *store_path)
{
    char *resolved = fdx_real_path(store_path);
    const char *names[] = {store_path, resolved};
    int rc = FDX_OK;
    for (size_t i = 0; i < 2 && rc == FDX_OK && names[i]; i++) {
        const char *part = fdx_file_db_part(&c->id, names[i]);
        if (part)
            rc = fail(c->r, FDX_EMISUSE,
                      "%s: is the store%s %s%s; the rejects file must be another file", c->r->path,
                      *part ? "'s file" : "", names[i], part);
    }
    free(resolved);
    return rc;
}

static int check_paths(fdx_rejects *r, const char *path, const char *store_path,
                       const char *const *inputs, size_t n)
{
    if (!path || !*path)
        return fail(r, FDX_EMISUSE, "no rejects path given");
    if (!store_path)
        return fail(r, FDX_EMISUSE, "no store path given");
    for (size_t i = 0; i < n; i++)
        if (!inputs || !inputs[i])
            return fail(r, FDX_EMISUSE, "input %zu of %zu not given", i + 1, n);
    if (!(r->path = strdup(path)))
        return fail(r, FDX_ENOMEM, "out of memory");
    check c = {r, {0}};
    char dir[512];
    if (fdx_parent_missing(path, dir, sizeof dir))
        return fail(r, FDX_ENOENT, "%s: no such directory '%s'", path, dir);
    if (fdx_file_identify(path, &c.id) != 0)
        return fail(r, FDX_EIO, "%s: %s", path, strerror(errno));
    int rc = check_store(&c, store_path);
    for (size_t i = 0; rc == FDX_OK && i < n; i++) {
        r->errmsg[0] = '\0';
        rc = fdx_each_source(inputs[i], check_input, &c, r->errmsg, sizeof r->errmsg);
    }
    if (rc == FDX_OK && fdx_afile_check_path(path, r->errmsg, sizeof r->errmsg) != FDX_OK)
        rc = FDX_EMISUSE;
    return rc;
}

int fdx_rejects_open(const char *path, const char *store_path, const char *const *inputs, size_t n,
                     fdx_rejects **out)
{
    if (!out)
        return FDX_EMISUSE;
    fdx_rejects *r = calloc(1, sizeof *r);
    *out = r;
    if (!r)
        return FDX_ENOMEM;
    fdx_afile_init(&r->af);
    r->forks = fdx_forks_seen();
    int rc = check_paths(r, path, store_path, inputs, n);
    r->state = rc == FDX_OK ? CHECKED : REFUSED;
    return rc;
}

/* FDX_OK for a handle whose open succeeded, in the process that opened it
 * (a child's calls would write, rename or remove the parent's file). */
static int usable(fdx_rejects *r)
{
    if (!r)
        return FDX_EMISUSE;
    if (r->state == REFUSED)
        return fail(r, FDX_EMISUSE, "this rejects handle's open failed: close it");
    if (r->forks != fdx_forks_seen())
        return fail(r, FDX_EMISUSE,
                    "%s: this rejects handle was opened in the process this one was forked "
                    "from, whose temporary file it shares",
                    r->path);
    return FDX_OK;
}

/* The stream's writes, refused in a forked child: exit() flushes every
 * stream, and the lines buffered at the fork are the parent's to write. */
static ssize_t stream_write(void *cookie, const char *p, size_t n)
{
    fdx_rejects *r = cookie;
    if (r->forks != fdx_forks_seen()) {
        errno = EBADF;
        return 0;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(r->stream_fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return (ssize_t)done; /* short: the stream reports an error */
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static int stream_close(void *cookie)
{
    fdx_rejects *r = cookie;
    int rc = close(r->stream_fd);
    r->stream_fd = -1;
    return rc;
}

int fdx_rejects_start(fdx_rejects *r, FILE **stream)
{
    if (usable(r) != FDX_OK)
        return FDX_EMISUSE;
    if (!stream)
        return fail(r, FDX_EMISUSE, "no stream out-parameter given");
    if (r->state != CHECKED)
        return fail(r, FDX_EMISUSE, "%s: rejects file already started", r->path);
    int rc = fdx_afile_open(&r->af, r->path, r->errmsg, sizeof r->errmsg);
    if (rc != FDX_OK) {
        r->state = DONE;
        return rc;
    }
    cookie_io_functions_t io = {.write = stream_write, .close = stream_close};
    r->stream_fd = dup(r->af.fd);
    if (r->stream_fd < 0 || !(r->stream = fopencookie(r, "w", io))) {
        rc = fail(r, errno == ENOMEM ? FDX_ENOMEM : FDX_EIO, "%s: %s", r->path, strerror(errno));
        if (r->stream_fd >= 0)
            close(r->stream_fd);
        fdx_afile_abort(&r->af);
        r->state = DONE;
        return rc;
    }
    r->state = STARTED;
    *stream = r->stream;
    return FDX_OK;
}

int fdx_rejects_sync(fdx_rejects *r)
{
    FILE *unused;
    if (usable(r) != FDX_OK)
        return FDX_EMISUSE;
    int rc = r->state == CHECKED ? fdx_rejects_start(r, &unused) : FDX_OK;
    if (rc != FDX_OK)
        return rc;
    if (r->state != STARTED)
        return fail(r, FDX_EMISUSE, "%s: rejects file not open", r->path);
    r->state = DONE;
    int flushed = fflush(r->stream), err = errno, failed = ferror(r->stream);
    int closed = fclose(r->stream);
    r->stream = NULL;
    if (flushed != 0 || failed || closed != 0) {
        fdx_afile_abort(&r->af);
        return fail(r, FDX_EIO, "%s: writing: %s", r->path,
                    flushed != 0  ? strerror(err)
                    : closed != 0 ? strerror(errno)
                                  : "write failed");
    }
    rc = fdx_afile_seal(&r->af, r->errmsg, sizeof r->errmsg);
    if (rc != FDX_OK) {
        fdx_afile_abort(&r->af);
        return rc;
    }
    r->state = SYNCED;
    return FDX_OK;
}

int fdx_rejects_commit(fdx_rejects *r)
{
    if (usable(r) != FDX_OK)
        return FDX_EMISUSE;
    if (r->state != SYNCED)
        return fail(r, FDX_EMISUSE, "%s: rejects file not synced", r->path);
    r->state = DONE;
    int rc = fdx_afile_install(&r->af, r->errmsg, sizeof r->errmsg);
    if (rc == FDX_OK)
        rc = fdx_afile_sync_dir(&r->af, r->errmsg, sizeof r->errmsg);
    fdx_afile_abort(&r->af); /* frees; the installed file stays */
    return rc;
}

void fdx_rejects_close(fdx_rejects *r)
{
    if (!r)
        return;
    /* A forked child's temporary file is the parent's: the lines buffered
     * when it forked are the parent's to write, the file its to remove. */
    int own = r->forks == fdx_forks_seen();
    if (r->stream) {
        if (!own)
            __fpurge(r->stream);
        fclose(r->stream);
    }
    if (r->state == STARTED || r->state == SYNCED)
        own ? fdx_afile_abort(&r->af) : fdx_afile_forget(&r->af);
    free(r->path);
    free(r);
}

const char *fdx_rejects_errmsg(const fdx_rejects *r)
{
    return r ? r->errmsg : "out of memory";
}
