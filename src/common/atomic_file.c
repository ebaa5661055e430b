/*
 * Atomic file replacement (see atomic_file.h). Temporary files are named
 * ".<name>.fdx-tmp.<pid>.XXXXXX" so that a later writer can recognise, and
 * remove, those left behind by a writer that was killed.
 */
#include "common/atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdx.h"

#define FLUSH_AT ((size_t)256 << 10)

static int io_fail(const char *path, const char *what, char *err, size_t errsz)
{
    snprintf(err, errsz, "%s: %s: %s", path, what, strerror(errno));
    return errno == ENOMEM ? FDX_ENOMEM : FDX_EIO;
}

/* dirname() may modify its argument and return static storage: copy twice. */
static char *dir_of(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    char *dir = strdup(dirname(copy));
    free(copy);
    return dir;
}

static char *base_of(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    char *base = strdup(basename(copy));
    free(copy);
    return base;
}

/* Removes temporary files of this target left by writers that were killed
 * (their pid no longer runs); a live writer's file is left alone. */
static void sweep_stale(const char *dir, const char *base)
{
    char prefix[512];
    int plen = snprintf(prefix, sizeof prefix, ".%s.fdx-tmp.", base);
    DIR *d = opendir(dir);
    if (plen <= 0 || (size_t)plen >= sizeof prefix || !d) {
        if (d)
            closedir(d);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + plen, &end, 10);
        if (end == e->d_name + plen || *end != '.' || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path)
            unlink(path);
    }
    closedir(d);
}

int fdx_afile_open(fdx_afile *af, const char *path, char *err, size_t errsz)
{
    memset(af, 0, sizeof *af);
    af->fd = -1;
    char *dir = dir_of(path), *base = base_of(path);
    size_t len = (dir ? strlen(dir) : 0) + (base ? strlen(base) : 0) + 64;
    af->path = strdup(path);
    af->tmp_path = malloc(len);
    if (!dir || !base || !af->path || !af->tmp_path) {
        free(dir);
        free(base);
        fdx_afile_abort(af);
        snprintf(err, errsz, "%s: out of memory", path);
        return FDX_ENOMEM;
    }
    sweep_stale(dir, base);
    snprintf(af->tmp_path, len, "%s/.%s.fdx-tmp.%ld.XXXXXX", dir, base, (long)getpid());
    free(dir);
    free(base);
    af->fd = mkostemp(af->tmp_path, O_CLOEXEC);
    if (af->fd < 0) {
        int rc = io_fail(af->tmp_path, "creating a temporary file", err, errsz);
        free(af->tmp_path);
        af->tmp_path = NULL;
        fdx_afile_abort(af);
        return rc;
    }
    if (fchmod(af->fd, 0644) != 0) {
        int rc = io_fail(af->tmp_path, "setting permissions", err, errsz);
        fdx_afile_abort(af);
        return rc;
    }
    return FDX_OK;
}

static int write_all(fdx_afile *af, const char *p, size_t n, char *err, size_t errsz)
{
    while (n > 0) {
        ssize_t w = write(af->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return io_fail(af->path, "writing", err, errsz);
        p += w;
        n -= (size_t)w;
    }
    return FDX_OK;
}

int fdx_afile_flush_if_full(fdx_afile *af, char *err, size_t errsz)
{
    if (af->buf.oom) {
        snprintf(err, errsz, "%s: out of memory", af->path);
        return FDX_ENOMEM;
    }
    if (af->buf.len < FLUSH_AT)
        return FDX_OK;
    int rc = write_all(af, af->buf.data, af->buf.len, err, errsz);
    fdx_buf_clear(&af->buf);
    return rc;
}

static int sync_dir(const char *path, char *err, size_t errsz)
{
    char *dir = dir_of(path);
    if (!dir) {
        snprintf(err, errsz, "%s: out of memory", path);
        return FDX_ENOMEM;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = FDX_OK;
    if (fd < 0 || fsync(fd) != 0)
        rc = io_fail(dir, "syncing the directory", err, errsz);
    if (fd >= 0)
        close(fd);
    free(dir);
    return rc;
}

int fdx_afile_sync(fdx_afile *af, char *err, size_t errsz)
{
    int rc = write_all(af, af->buf.data, af->buf.len, err, errsz);
    fdx_buf_clear(&af->buf);
    if (rc == FDX_OK && fsync(af->fd) != 0)
        rc = io_fail(af->path, "syncing", err, errsz);
    if (rc == FDX_OK) {
        int fd = af->fd;
        af->fd = -1;
        if (close(fd) != 0)
            rc = io_fail(af->path, "closing", err, errsz);
    }
    if (rc != FDX_OK)
        fdx_afile_abort(af);
    return rc;
}

int fdx_afile_commit(fdx_afile *af, char *err, size_t errsz)
{
    int rc = af->fd >= 0 ? fdx_afile_sync(af, err, errsz) : FDX_OK;
    if (rc != FDX_OK)
        return rc;
    if (rename(af->tmp_path, af->path) != 0) {
        rc = io_fail(af->path, "replacing", err, errsz);
        fdx_afile_abort(af);
        return rc;
    }
    free(af->tmp_path);
    af->tmp_path = NULL;
    rc = sync_dir(af->path, err, errsz);
    fdx_afile_abort(af);
    return rc;
}

void fdx_afile_abort(fdx_afile *af)
{
    if (af->fd >= 0)
        close(af->fd);
    af->fd = -1;
    if (af->tmp_path)
        unlink(af->tmp_path);
    free(af->tmp_path);
    free(af->path);
    af->tmp_path = af->path = NULL;
    fdx_buf_free(&af->buf);
}
