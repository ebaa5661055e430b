/*
 * LD_PRELOAD shim that SIGKILLs the process at a chosen point, so that the
 * crash tests can kill an export at an exact step rather than at a random
 * moment: FDX_KILL_AT_FSYNC=N kills on the Nth fsync of a regular file,
 * before it runs; FDX_KILL_AT_FDATASYNC=N on the Nth fdatasync (SQLite's sync
 * on Linux: a commit), before it runs; FDX_KILL_AT_RENAME=N kills on the Nth
 * rename, before it runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void count_and_kill(const char *var, int *seen)
{
    const char *at = getenv(var);
    if (at && ++*seen == atoi(at))
        raise(SIGKILL);
}

int fsync(int fd)
{
    static int seen;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        count_and_kill("FDX_KILL_AT_FSYNC", &seen);
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real(fd);
}

int fdatasync(int fd)
{
    static int seen;
    count_and_kill("FDX_KILL_AT_FDATASYNC", &seen);
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
