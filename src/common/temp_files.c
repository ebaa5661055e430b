/* The temporary files of temp_files.h, in fixed slots that a signal handler
 * can read: no allocation, no lock on its side. */
#include "common/temp_files.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common/forks.h"
#include "fdx.h"

enum { SLOTS = 16 };
static char paths[SLOTS][FDX_TEMP_PATH_MAX];
static pid_t owners[SLOTS]; /* the process that noted it (a fork's child removes none) */
static int with_companions[SLOTS];
static volatile sig_atomic_t used[SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t guarding = PTHREAD_ONCE_INIT;

static void guard(void)
{
    fdx_forks_guard(&slots_lock);
}

int fdx_temp_files_note(const char *path, int companions)
{
    size_t n = strlen(path);
    if (n + sizeof "-journal" > FDX_TEMP_PATH_MAX)
        return -1;
    int slot = -1;
    pthread_once(&guarding, guard);
    pthread_mutex_lock(&slots_lock);
    for (int i = 0; i < SLOTS && slot < 0; i++)
        if (!used[i]) {
            memcpy(paths[i], path, n + 1);
            owners[i] = getpid();
            with_companions[i] = companions;
            __atomic_thread_fence(__ATOMIC_RELEASE); /* the path before its flag */
            used[i] = 1;
            slot = i;
        }
    pthread_mutex_unlock(&slots_lock);
    return slot;
}

void fdx_temp_files_forget(int slot)
{
    if (slot < 0 || slot >= SLOTS)
        return;
    pthread_mutex_lock(&slots_lock);
    used[slot] = 0;
    pthread_mutex_unlock(&slots_lock);
}

/* path with suffix appended, unlinked; nothing when the name is too long
 * to hold (a cut name would be another file's). */
static void unlink_with(const char *path, const char *suffix)
{
    char buf[FDX_TEMP_PATH_MAX];
    size_t n = strlen(path), k = strlen(suffix); /* both async-signal-safe, as memcpy */
    if (n + k >= sizeof buf)
        return;
    memcpy(buf, path, n);
    memcpy(buf + n, suffix, k + 1);
    unlink(buf);
}

void fdx_temp_files_remove(const char *path)
{
    static const char *const suffixes[] = {"-journal", "-wal", "-shm", ""};
    for (size_t k = 0; k < sizeof suffixes / sizeof *suffixes; k++)
        unlink_with(path, suffixes[k]);
}

void fdx_remove_temporary_files(void)
{
    pid_t self = getpid();
    for (int i = 0; i < SLOTS; i++) {
        if (!used[i])
            continue;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (owners[i] != self)
            continue;
        if (with_companions[i])
            fdx_temp_files_remove(paths[i]);
        else
            unlink(paths[i]);
    }
}
