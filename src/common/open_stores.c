/* A registry of the stores open in this process, for open_stores.h. */
#include "common/open_stores.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/forks.h"

typedef struct entry {
    const void *owner;
    char *path;
} entry;

static entry *entries;
static size_t n_entries, cap_entries;
static pthread_mutex_t entries_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t guarding = PTHREAD_ONCE_INIT;

static void guard(void)
{
    fdx_forks_guard(&entries_lock);
}

static void lock_entries(void)
{
    pthread_once(&guarding, guard);
    pthread_mutex_lock(&entries_lock);
}

/* path from /, so that a later chdir does not lose it; links are followed
 * when it is looked at. */
static char *absolute(const char *path)
{
    char cwd[4096];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        return strdup(path);
    size_t a = strlen(cwd), b = strlen(path);
    char *p = malloc(a + b + 2);
    if (p) {
        memcpy(p, cwd, a);
        p[a] = '/';
        memcpy(p + a + 1, path, b + 1);
    }
    return p;
}

int fdx_open_stores_add(const void *owner, const char *path)
{
    char *real = absolute(path);
    if (!real)
        return -1;
    lock_entries();
    if (n_entries == cap_entries) {
        size_t cap = cap_entries ? cap_entries * 2 : 8;
        entry *grown = realloc(entries, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&entries_lock);
            free(real);
            return -1;
        }
        entries = grown;
        cap_entries = cap;
    }
    entries[n_entries++] = (entry){owner, real};
    pthread_mutex_unlock(&entries_lock);
    return 0;
}

void fdx_open_stores_remove(const void *owner)
{
    lock_entries();
    for (size_t i = 0; i < n_entries; i++)
        if (entries[i].owner == owner) {
            free(entries[i].path);
            entries[i] = entries[--n_entries];
            break;
        }
    pthread_mutex_unlock(&entries_lock);
}

void fdx_open_stores_forsake(const void *owner)
{
    lock_entries();
    for (size_t i = 0; i < n_entries; i++)
        if (entries[i].owner == owner)
            entries[i].owner = NULL;
    pthread_mutex_unlock(&entries_lock);
}

static int same_file(const struct stat *a, const char *path)
{
    struct stat b;
    return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* The store's file, or its -shm: the files SQLite locks. */
static int locked_file_of(const struct stat *target, const char *store)
{
    if (same_file(target, store))
        return FDX_HELD_FILE;
    size_t n = strlen(store);
    char *shm = malloc(n + sizeof "-shm");
    if (!shm)
        return FDX_HELD_SHM; /* unknown: not opened */
    memcpy(shm, store, n);
    memcpy(shm + n, "-shm", sizeof "-shm");
    int is = same_file(target, shm);
    free(shm);
    return is ? FDX_HELD_SHM : FDX_HELD_NONE;
}

int fdx_open_stores_hold(const char *path)
{
    struct stat target;
    if (!path || stat(path, &target) != 0 || !S_ISREG(target.st_mode))
        return FDX_HELD_NONE;
    int held = FDX_HELD_NONE;
    lock_entries();
    for (size_t i = 0; i < n_entries && !held; i++)
        held = locked_file_of(&target, entries[i].path);
    pthread_mutex_unlock(&entries_lock);
    return held;
}

int fdx_open_stores_find(const char *path, int (*match)(const void *owner))
{
    struct stat target;
    if (!path || stat(path, &target) != 0)
        return 0;
    int found = 0;
    lock_entries();
    for (size_t i = 0; i < n_entries && !found; i++)
        found = same_file(&target, entries[i].path) && match(entries[i].owner);
    pthread_mutex_unlock(&entries_lock);
    return found;
}
