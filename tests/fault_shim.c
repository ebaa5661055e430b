/*
 * LD_PRELOAD shim that SIGKILLs the process at a chosen point, so that the
 * crash tests can kill an export at an exact step rather than at a random
 * moment: FDX_KILL_AT_FSYNC=N kills on the Nth fsync of a regular file,
 * before it runs; FDX_KILL_AT_FDATASYNC=N on the Nth fdatasync (SQLite's sync
 * on Linux: a commit), before it runs; FDX_KILL_AT_RENAME=N kills on the Nth
 * rename, before it runs. FDX_KILL_SIGNAL=N raises signal N there instead
 * (a SIGTERM the program handles, say). FDX_SYNC_LOG=FILE appends to FILE "unlink PATH"
 * for each unlink and "sync DIR" for each sync of a directory, so that a test
 * sees whether a deletion was made durable.
 *
 * FDX_FULL_UNDER=DIR with FDX_FULL_AT=N fails the Nth pwrite of a file under
 * DIR, and every later one, with ENOSPC, as a disk that filled up would (or
 * with FDX_FULL_ERRNO: EDQUOT, a quota reached; EIO, a failing disk); at
 * exit FDX_SYNC_LOG gets "writes N", the number of such writes tried, so that
 * a test can fail each one in turn.
 *
 * FDX_SHRINK_FILE=PATH with FDX_SHRINK_TO=N cuts PATH to N bytes on the first
 * write(2) to a regular file (an export's first output), as another process
 * truncating a store under a reader would. With FDX_SHRINK_AT_PREAD=K it does
 * so before the Kth pread of any file instead (0: never), for a reader that
 * writes through stdio; at exit FDX_SYNC_LOG then gets "preads N", so that a
 * test can pick the last.
 *
 * FDX_FAIL_DIR_OPEN=1 fails open(2) of a directory with O_DIRECTORY (not a
 * temporary file's) with EACCES, as a directory its user cannot read does;
 * FDX_FAIL_DIR_FSYNC=1 fails fsync(2) of a directory with EIO.
 *
 * FDX_SWAP_NAME=NAME with FDX_SWAP_WITH=PATH and FDX_SWAP_AT=N renames PATH
 * over the file being opened just before the Nth open(2) of a file named
 * NAME (its last path component), as another process replacing a store
 * between a reader's opens of it would.
 *
 * FDX_FAIL_THREADS=1 fails every pthread_create with EAGAIN, as a process at
 * its limit of threads is refused one: fdx then does the threads' work on
 * the calling thread. FDX_FAIL_THREAD_REALLOC=N fails every realloc of N
 * bytes or more made on a thread other than the process's first.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void count_and_kill(const char *var, int *seen)
{
    const char *at = getenv(var), *sig = getenv("FDX_KILL_SIGNAL");
    if (at && ++*seen == atoi(at))
        raise(sig ? atoi(sig) : SIGKILL);
}

static void log_event(const char *what, const char *path)
{
    const char *log = getenv("FDX_SYNC_LOG");
    char line[PATH_MAX + 16];
    int n = snprintf(line, sizeof line, "%s %s\n", what, path);
    int fd = log ? open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd < 0)
        return;
    if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) != n)
        abort(); /* a log that misses an event would pass a test it should fail */
    close(fd);
}

static void log_dir_sync(int fd)
{
    struct stat st;
    char link[64], dir[PATH_MAX];
    if (!getenv("FDX_SYNC_LOG") || fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, dir, sizeof dir - 1);
    if (n < 0)
        abort();
    dir[n] = '\0';
    log_event("sync", dir);
}

int unlink(const char *path)
{
    if (getenv("FDX_SYNC_LOG"))
        log_event("unlink", path);
    int (*real)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    return real(path);
}

static int fail_dir_open(int flags)
{
    if (!getenv("FDX_FAIL_DIR_OPEN") || (flags & O_TMPFILE) != O_DIRECTORY)
        return 0;
    errno = EACCES;
    return 1;
}

static mode_t mode_of(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

static void swap_before_open(const char *path)
{
    static int seen;
    const char *name = getenv("FDX_SWAP_NAME"), *with = getenv("FDX_SWAP_WITH");
    const char *at = getenv("FDX_SWAP_AT"), *slash = strrchr(path, '/');
    if (!name || !with || !at || strcmp(slash ? slash + 1 : path, name) != 0)
        return;
    int (*real)(const char *, const char *) =
        (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    if (++seen == atoi(at) && real(with, path) != 0)
        abort(); /* a swap that did not happen would pass a test it should fail */
}

/* Built with _FILE_OFFSET_BITS=64, as the library is: this is open64. */
int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    if (fail_dir_open(flags))
        return -1;
    swap_before_open(path);
    int (*real)(const char *, int, ...) =
        (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
    return real(path, flags, mode);
}

int fsync(int fd)
{
    static int seen;
    struct stat st;
    int known = fstat(fd, &st) == 0;
    if (known && S_ISREG(st.st_mode))
        count_and_kill("FDX_KILL_AT_FSYNC", &seen);
    if (known && S_ISDIR(st.st_mode) && getenv("FDX_FAIL_DIR_FSYNC")) {
        errno = EIO;
        return -1;
    }
    log_dir_sync(fd);
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real(fd);
}

int fdatasync(int fd)
{
    static int seen;
    count_and_kill("FDX_KILL_AT_FDATASYNC", &seen);
    log_dir_sync(fd);
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    return real(fd);
}

int rename(const char *from, const char *to)
{
    static int seen;
    count_and_kill("FDX_KILL_AT_RENAME", &seen);
    int (*real)(const char *, const char *) =
        (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    return real(from, to);
}

static int writes_under; /* pwrites tried on files under FDX_FULL_UNDER */

/* Whether fd is a file under FDX_FULL_UNDER (a deleted one too: SQLite
 * unlinks its temporary files as it opens them). */
static int under_full_dir(int fd)
{
    const char *dir = getenv("FDX_FULL_UNDER");
    char link[64], path[PATH_MAX];
    if (!dir)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 0)
        return 0;
    path[n] = '\0';
    size_t len = strlen(dir);
    return strncmp(path, dir, len) == 0 && path[len] == '/';
}

static int disk_full(int fd)
{
    const char *at = getenv("FDX_FULL_AT");
    if (!under_full_dir(fd))
        return 0;
    writes_under++;
    return at && atoi(at) > 0 && writes_under >= atoi(at);
}

static int full_errno(void)
{
    const char *e = getenv("FDX_FULL_ERRNO");
    return !e ? ENOSPC : strcmp(e, "EDQUOT") == 0 ? EDQUOT : strcmp(e, "EIO") == 0 ? EIO : ENOSPC;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    if (disk_full(fd)) {
        errno = full_errno();
        return -1;
    }
    ssize_t (*real)(int, const void *, size_t, off64_t) =
        (ssize_t(*)(int, const void *, size_t, off64_t))dlsym(RTLD_NEXT, "pwrite64");
    return real(fd, buf, n, off);
}

static void shrink_once(void)
{
    static int shrunk;
    const char *path = getenv("FDX_SHRINK_FILE"), *to = getenv("FDX_SHRINK_TO");
    if (!path || !to || shrunk)
        return;
    shrunk = 1;
    if (truncate(path, atoll(to)) != 0)
        abort(); /* a shrink that did not happen would pass a test it should fail */
}

ssize_t write(int fd, const void *buf, size_t n)
{
    struct stat st;
    if (!getenv("FDX_SHRINK_AT_PREAD") && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        shrink_once();
    ssize_t (*real)(int, const void *, size_t) =
        (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    return real(fd, buf, n);
}

static int preads; /* under FDX_SHRINK_AT_PREAD */

/* SQLite reads its files through pread64. */
ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    const char *at = getenv("FDX_SHRINK_AT_PREAD");
    if (at && ++preads == atoi(at))
        shrink_once();
    ssize_t (*real)(int, void *, size_t, off64_t) =
        (ssize_t(*)(int, void *, size_t, off64_t))dlsym(RTLD_NEXT, "pread64");
    return real(fd, buf, n, off);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (getenv("FDX_FAIL_THREADS"))
        return EAGAIN;
    int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
            RTLD_NEXT, "pthread_create");
    return real(t, attr, fn, arg);
}

void *realloc(void *p, size_t n)
{
    static void *(*real)(void *, size_t);
    if (!real)
        real = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    const char *at = getenv("FDX_FAIL_THREAD_REALLOC");
    if (at && n >= strtoull(at, NULL, 10) && syscall(SYS_gettid) != getpid())
        return NULL;
    return real(p, n);
}

__attribute__((destructor)) static void report_counts(void)
{
    char count[32];
    if (getenv("FDX_FULL_UNDER")) {
        snprintf(count, sizeof count, "%d", writes_under);
        log_event("writes", count);
    }
    if (getenv("FDX_SHRINK_AT_PREAD")) {
        snprintf(count, sizeof count, "%d", preads);
        log_event("preads", count);
    }
}
