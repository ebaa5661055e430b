/*
 * Atomic file replacement (see atomic_file.h). Temporary files are named
 * ".<name>.fdx-tmp.<pid>.XXXXXX" (a long name cut to its first 200 bytes)
 * so that a later writer can recognise, and
 * remove, those left behind by a writer that was killed. They are created
 * with mode 0666 so that the kernel applies the umask (and any default ACL),
 * as for any file the user creates; mkstemp's fixed 0600 would not.
 */
#include "common/atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/message.h"
#include "common/temp_files.h"
#include "fdx.h"

#define FLUSH_AT ((size_t)256 << 10)

static int io_fail(const char *path, const char *what, char *err, size_t errsz)
{
    fdx_format_message(err, errsz, "%s: %s: %s", path, what, strerror(errno));
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

/* The target's name as its temporary files spell it: cut so that
 * ".<name>.fdx-tmp.<pid>.XXXXXX" stays within a file name's 255 bytes (a
 * target named near that limit could not be written otherwise). */
#define TEMP_STEM_MAX 200

static char *base_of(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    char *base = strdup(basename(copy));
    free(copy);
    if (base && strlen(base) > TEMP_STEM_MAX)
        base[TEMP_STEM_MAX] = '\0';
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

/* Fails when path is not a regular file, or is a store's. A rename over a
 * directory fails only after other files of the same replacement were
 * renamed; a rename over a symlink replaces the link, not the file it names
 * (--rejects /dev/stdout replaced the system's /dev/stdout link), and a
 * device or FIFO by a file; one over an SQLite database or its -wal, -shm
 * or -journal destroys a store (a mistyped report or export path). */
int fdx_afile_check_path(const char *path, char *err, size_t errsz)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return FDX_OK;
    if (S_ISREG(st.st_mode) && fdx_is_sqlite_file(path)) {
        fdx_format_message(err, errsz,
                           "%s: is an SQLite database or its -wal, -shm or -journal file (a "
                           "store's?), which the replacement would destroy: give another path",
                           path);
        return FDX_EMISUSE;
    }
    if (S_ISREG(st.st_mode))
        return FDX_OK;
    if (S_ISDIR(st.st_mode))
        fdx_format_message(err, errsz, "%s: is a directory, not a file", path);
    else if (S_ISLNK(st.st_mode))
        fdx_format_message(err, errsz,
                           "%s: is a symbolic link; the file is replaced by a rename, which would "
                           "replace the link, not what it names: give that path instead",
                           path);
    else
        fdx_format_message(
            err, errsz,
            "%s: is not a regular file (a device, FIFO or socket); the file is replaced "
            "by a rename, which would replace it",
            path);
    return FDX_EIO;
}

int fdx_afile_check_target(const fdx_afile *af, char *err, size_t errsz)
{
    return fdx_afile_check_path(af->path, err, errsz);
}

/* mkostemp's loop with mode 0666: six random hex digits, O_EXCL. */
static int create_temp(char *tmp, size_t len, const char *dir, const char *base)
{
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (int tries = 0; tries < 1000; tries++) {
        uint64_t r = atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_nsec ^
                     (uint64_t)ts.tv_sec << 20;
        r ^= r >> 29;
        snprintf(tmp, len, "%s/.%s.fdx-tmp.%ld.%06llx", dir, base, (long)getpid(),
                 (unsigned long long)(r & 0xFFFFFF));
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

void fdx_afile_init(fdx_afile *af)
{
    memset(af, 0, sizeof *af);
    af->fd = af->dir_fd = af->tmp_slot = -1;
}

int fdx_afile_open(fdx_afile *af, const char *path, char *err, size_t errsz)
{
    fdx_afile_init(af);
    char *dir = dir_of(path), *base = base_of(path);
    size_t len = (dir ? strlen(dir) : 0) + (base ? strlen(base) : 0) + 64;
    af->path = strdup(path);
    af->tmp_path = malloc(len);
    if (!dir || !base || !af->path || !af->tmp_path) {
        free(dir);
        free(base);
        fdx_afile_abort(af);
        fdx_format_message(err, errsz, "%s: out of memory", path);
        return FDX_ENOMEM;
    }
    int rc = fdx_afile_check_target(af, err, errsz);
    if (rc == FDX_OK) {
        sweep_stale(dir, base);
        af->fd = create_temp(af->tmp_path, len, dir, base);
        if (af->fd < 0)
            rc = io_fail(af->tmp_path, "creating a temporary file", err, errsz);
        else /* a program ended by a signal removes it (fdx_remove_temporary_files) */
            af->tmp_slot = fdx_temp_files_note(af->tmp_path, 0);
    }
    if (rc != FDX_OK) { /* no temporary file to remove */
        free(af->tmp_path);
        af->tmp_path = NULL;
    } else if ((af->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        rc = io_fail(dir, "opening the directory (to sync the rename into it)", err, errsz);
    }
    free(dir);
    free(base);
    if (rc != FDX_OK)
        fdx_afile_abort(af);
    return rc;
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
        af->written += (uint64_t)w;
    }
    return FDX_OK;
}

/* A file's writeback starts while it is still being written, every few MiB,
 * so that the fsync sealing it waits for its last few MiB instead of all of
 * it: an export of a million cells wrote 370 MB and waited 0.3 to 0.4 s in
 * its two fsyncs. Only a hint, asked of the kernel without waiting for it:
 * the fsync still makes the file durable, and reports any error the
 * writeback met. */
#define WRITEBACK_AT ((uint64_t)8 << 20)

static void start_writeback(fdx_afile *af)
{
    uint64_t from = af->writing_back, n = af->written - from;
    if (n < WRITEBACK_AT)
        return;
#ifdef SYNC_FILE_RANGE_WRITE
    /* a filesystem without it: the fsync does all the work, as before */
    (void)sync_file_range(af->fd, (off_t)from, (off_t)n, SYNC_FILE_RANGE_WRITE);
#endif
    af->writing_back = af->written;
}

int fdx_afile_flush_if_full(fdx_afile *af, char *err, size_t errsz)
{
    if (af->buf.oom) {
        fdx_format_message(err, errsz, "%s: out of memory", af->path);
        return FDX_ENOMEM;
    }
    if (af->buf.len < FLUSH_AT)
        return FDX_OK;
    int rc = write_all(af, af->buf.data, af->buf.len, err, errsz);
    fdx_buf_clear(&af->buf);
    if (rc == FDX_OK)
        start_writeback(af);
    return rc;
}

int fdx_afile_sync_dir(fdx_afile *af, char *err, size_t errsz)
{
    return fsync(af->dir_fd) == 0
               ? FDX_OK
               : io_fail(af->path, "replaced, but syncing its directory failed", err, errsz);
}

int fdx_afile_seal(fdx_afile *af, char *err, size_t errsz)
{
    int rc = write_all(af, af->buf.data, af->buf.len, err, errsz);
    fdx_buf_free(&af->buf);
    if (rc == FDX_OK && fsync(af->fd) != 0)
        rc = io_fail(af->path, "syncing", err, errsz);
    if (rc == FDX_OK) {
        int fd = af->fd;
        af->fd = -1;
        if (close(fd) != 0)
            rc = io_fail(af->path, "closing", err, errsz);
    }
    return rc;
}

/* The temporary file is no longer one a signal's handler removes. */
static void forget_slot(fdx_afile *af)
{
    fdx_temp_files_forget(af->tmp_slot);
    af->tmp_slot = -1;
}

int fdx_afile_install(fdx_afile *af, char *err, size_t errsz)
{
    if (rename(af->tmp_path, af->path) != 0)
        return io_fail(af->path, "replacing", err, errsz);
    forget_slot(af); /* after: a signal before it finds no file */
    free(af->tmp_path);
    af->tmp_path = NULL;
    return FDX_OK;
}

void fdx_afile_abort(fdx_afile *af)
{
    forget_slot(af); /* first: the name may be another's next */
    if (af->tmp_path)
        unlink(af->tmp_path);
    fdx_afile_forget(af);
}

void fdx_afile_forget(fdx_afile *af)
{
    forget_slot(af);
    if (af->fd >= 0)
        close(af->fd);
    af->fd = -1;
    if (af->dir_fd >= 0)
        close(af->dir_fd);
    af->dir_fd = -1;
    free(af->tmp_path);
    free(af->path);
    af->tmp_path = af->path = NULL;
    fdx_buf_free(&af->buf);
}
