/*
 * The rejects file (see fdx.h): skipped lines go to a temporary file beside
 * the path and replace it only once the store has committed, so a failed
 * ingest, a no-op retry or a full disk never truncates the previous file.
 * Paths the ingest reads or the store lives in are refused up front: renaming
 * over them would destroy them.
 */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic_file.h"
#include "common/fsutil.h"
#include "fdx.h"
#include "ingest/sources.h"

struct fdx_rejects {
    char *path;
    fdx_afile af;
    FILE *stream;
    int state; /* 0 checked, 1 started, 2 synced, 3 done (committed or failed) */
    char errmsg[1024];
};

static int fail(fdx_rejects *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(fdx_rejects *r, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->errmsg, sizeof r->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

/* A name's identity: the file's device and inode when it exists, else its
 * directory's and its base name (two names of one file to be created). */
typedef struct file_id {
    int exists;
    dev_t dev;
    ino_t ino;
    char base[256];
} file_id;

static int identify(const char *path, file_id *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (stat(path, &st) == 0) {
        id->exists = 1;
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return 0;
    }
    if (errno != ENOENT)
        return -1;
    char *a = strdup(path), *b = strdup(path);
    int rc = a && b && stat(dirname(a), &st) == 0 ? 0 : -1;
    if (rc == 0) {
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        snprintf(id->base, sizeof id->base, "%s", basename(b));
    }
    free(a);
    free(b);
    return rc;
}

static int same_id(const file_id *a, const file_id *b)
{
    return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino &&
           strcmp(a->base, b->base) == 0;
}

typedef struct check {
    fdx_rejects *r;
    file_id id;
} check;

static int check_input(void *ctx, const char *path, const char *name)
{
    check *c = ctx;
    file_id id = {0};
    struct stat st;
    if (path ? identify(path, &id) != 0 : fstat(0, &st) != 0)
        return fail(c->r, FDX_EIO, "%s: %s", name, strerror(errno));
    if (!path)
        id = (file_id){1, st.st_dev, st.st_ino, ""};
    if (same_id(&c->id, &id))
        return fail(c->r, FDX_EMISUSE, "%s: is the input %s; the rejects file must be another file",
                    c->r->path, name);
    return FDX_OK;
}

static int check_store(check *c, const char *store_path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        char name[4096];
        file_id id;
        if ((size_t)snprintf(name, sizeof name, "%s%s", store_path, suffixes[i]) >= sizeof name)
            return fail(c->r, FDX_EIO, "%s: path too long", store_path);
        if (identify(name, &id) != 0)
            continue; /* its directory is missing: the store cannot be opened anyway */
        if (same_id(&c->id, &id))
            return fail(c->r, FDX_EMISUSE,
                        "%s: is the store%s %s; the rejects file must be another file", c->r->path,
                        i ? "'s file" : "", name);
    }
    return FDX_OK;
}

int fdx_rejects_open(const char *path, const char *store_path, const char *const *inputs, size_t n,
                     fdx_rejects **out)
{
    fdx_rejects *r = calloc(1, sizeof *r);
    *out = r;
    if (!r)
        return FDX_ENOMEM;
    r->af.fd = -1;
    if (!path || !*path || !store_path)
        return fail(r, FDX_EMISUSE, "no rejects path given");
    if (!(r->path = strdup(path)))
        return fail(r, FDX_ENOMEM, "out of memory");
    check c = {r, {0}};
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return fail(r, FDX_EMISUSE, "%s: not a regular file; the rejects file must be one", path);
    char dir[512];
    if (fdx_parent_missing(path, dir, sizeof dir))
        return fail(r, FDX_EIO, "%s: no such directory '%s'", path, dir);
    if (identify(path, &c.id) != 0)
        return fail(r, FDX_EIO, "%s: %s", path, strerror(errno));
    int rc = check_store(&c, store_path);
    for (size_t i = 0; rc == FDX_OK && i < n; i++) {
        r->errmsg[0] = '\0';
        rc = fdx_each_source(inputs[i], check_input, &c, r->errmsg, sizeof r->errmsg);
    }
    return rc;
}

int fdx_rejects_start(fdx_rejects *r, FILE **stream)
{
    if (r->state != 0)
        return fail(r, FDX_EMISUSE, "%s: rejects file already started", r->path);
    int rc = fdx_afile_open(&r->af, r->path, r->errmsg, sizeof r->errmsg);
    if (rc != FDX_OK) {
        r->state = 3;
        return rc;
    }
    int fd = dup(r->af.fd);
    if (fd < 0 || !(r->stream = fdopen(fd, "w"))) {
        rc = fail(r, errno == ENOMEM ? FDX_ENOMEM : FDX_EIO, "%s: %s", r->path, strerror(errno));
        if (fd >= 0)
            close(fd);
        fdx_afile_abort(&r->af);
        r->state = 3;
        return rc;
    }
    r->state = 1;
    *stream = r->stream;
    return FDX_OK;
}

int fdx_rejects_sync(fdx_rejects *r)
{
    FILE *unused;
    int rc = r->state == 0 ? fdx_rejects_start(r, &unused) : FDX_OK;
    if (rc != FDX_OK)
        return rc;
    if (r->state != 1)
        return fail(r, FDX_EMISUSE, "%s: rejects file not open", r->path);
    r->state = 3;
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
    r->state = 2;
    return FDX_OK;
}

int fdx_rejects_commit(fdx_rejects *r)
{
    if (r->state != 2)
        return fail(r, FDX_EMISUSE, "%s: rejects file not synced", r->path);
    r->state = 3;
    int rc = fdx_afile_install(&r->af, r->errmsg, sizeof r->errmsg);
    if (rc == FDX_OK)
        rc = fdx_sync_parent(r->path, r->errmsg, sizeof r->errmsg);
    fdx_afile_abort(&r->af); /* frees; the installed file stays */
    return rc;
}

void fdx_rejects_close(fdx_rejects *r)
{
    if (!r)
        return;
    if (r->stream)
        fclose(r->stream);
    if (r->state == 1 || r->state == 2)
        fdx_afile_abort(&r->af);
    free(r->path);
    free(r);
}

const char *fdx_rejects_errmsg(const fdx_rejects *r)
{
    return r ? r->errmsg : "out of memory";
}
