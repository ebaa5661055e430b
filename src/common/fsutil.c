/* Output directories and output paths. */
#include "common/fsutil.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/message.h"
#include "common/open_stores.h"
#include "fdx.h"

/* An existing component must be a directory (or a link to one); *made says
 * whether this call made it. */
static int mkdir_one(const char *path, int *made, char *err, size_t errsz)
{
    struct stat st;
    if ((*made = mkdir(path, 0777) == 0))
        return FDX_OK;
    if (errno != EEXIST) {
        fdx_format_message(err, errsz, "%s: creating the output directory: %s", path,
                           strerror(errno));
        return FDX_EIO;
    }
    if (stat(path, &st) != 0) {
        fdx_format_message(err, errsz, "%s: %s", path, strerror(errno));
        return FDX_EIO;
    }
    if (!S_ISDIR(st.st_mode)) {
        fdx_format_message(err, errsz, "%s: exists and is not a directory", path);
        return FDX_EIO;
    }
    return FDX_OK;
}

int fdx_mkdirs(const char *path, size_t *made_from, char *err, size_t errsz)
{
    size_t unused;
    made_from = made_from ? made_from : &unused;
    *made_from = 0;
    if (!*path) {
        fdx_format_message(err, errsz, "the output directory name is empty");
        return FDX_EMISUSE;
    }
    size_t n = strlen(path);
    char *copy = strdup(path);
    if (!copy) {
        fdx_format_message(err, errsz, "%s: out of memory", path);
        return FDX_ENOMEM;
    }
    int rc = FDX_OK;
    /* Each prefix that ends a component: "a", "a/b" for "a//b/"; "/" is never made. */
    for (size_t i = 1; rc == FDX_OK && i <= n; i++) {
        if ((copy[i] != '/' && copy[i] != '\0') || copy[i - 1] == '/')
            continue;
        char c = copy[i];
        int made;
        copy[i] = '\0';
        rc = mkdir_one(copy, &made, err, errsz);
        copy[i] = c;
        if (made && !*made_from)
            *made_from = i;
    }
    free(copy);
    return rc;
}

void fdx_unmake_dirs(const char *path, size_t made_from)
{
    char *copy = made_from ? strdup(path) : NULL;
    if (!copy)
        return;
    /* Each made prefix, deepest first, as fdx_mkdirs made them. */
    for (size_t i = strlen(copy); i >= made_from; i--) {
        if ((copy[i] != '/' && copy[i] != '\0') || copy[i - 1] == '/')
            continue;
        copy[i] = '\0';
        if (rmdir(copy) != 0)
            break; /* not empty (another writer's), or not ours */
    }
    free(copy);
}

/* Whether path is a regular file whose first bytes are those of a database,
 * a write-ahead log (either byte order of its checksums) or a rollback
 * journal. Anything else is not opened: a FIFO's open would wait for ever. */
static int starts_as_sqlite(const char *path)
{
    static const unsigned char db[16] = "SQLite format 3",
                               wal[2][4] = {{0x37, 0x7f, 0x06, 0x82}, {0x37, 0x7f, 0x06, 0x83}},
                               journal[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
    unsigned char head[16];
    struct stat st;
    if (fdx_open_stores_hold(path)) /* it is; and closing a descriptor of it drops its locks */
        return 1;
    FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    return (n == sizeof db && !memcmp(head, db, sizeof db)) ||
           (n >= 8 &&
            (!memcmp(head, wal[0], 4) || !memcmp(head, wal[1], 4) || !memcmp(head, journal, 8)));
}

int fdx_is_sqlite_file(const char *path)
{
    static const char *const parts[] = {"-wal", "-shm", "-journal"};
    if (starts_as_sqlite(path))
        return 1;
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) { /* an empty -wal, any -shm */
        size_t k = strlen(parts[i]);
        if (n > k && strcmp(path + n - k, parts[i]) == 0) {
            char *db = strndup(path, n - k);
            int is = db && starts_as_sqlite(db);
            free(db);
            if (is)
                return 1;
        }
    }
    return 0;
}

char *fdx_path_join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s", dir, name);
    return p;
}

char *fdx_real_path(const char *path)
{
    char *full = realpath(path, NULL);
    if (full || errno != ENOENT)
        return full;
    char *dir = strdup(path), *base = strdup(path), *real_dir = NULL;
    if (dir && base && (real_dir = realpath(dirname(dir), NULL)))
        full = fdx_path_join(real_dir, basename(base));
    free(dir);
    free(base);
    free(real_dir);
    return full;
}

int fdx_parent_missing(const char *path, char *dir, size_t dirsz)
{
    struct stat st;
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path || (size_t)(slash - path) >= dirsz)
        return 0;
    snprintf(dir, dirsz, "%.*s", (int)(slash - path), path);
    return stat(dir, &st) != 0 && errno == ENOENT;
}
