/* Output directories and output paths. */
#include "common/fsutil.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdx.h"

/* An existing component must be a directory (or a link to one); *made says
 * whether this call made it. */
static int mkdir_one(const char *path, int *made, char *err, size_t errsz)
{
    struct stat st;
    if ((*made = mkdir(path, 0777) == 0))
        return FDX_OK;
    if (errno != EEXIST) {
        snprintf(err, errsz, "%s: creating the output directory: %s", path, strerror(errno));
        return FDX_EIO;
    }
    if (stat(path, &st) != 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return FDX_EIO;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s: exists and is not a directory", path);
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
        snprintf(err, errsz, "the output directory name is empty");
        return FDX_EMISUSE;
    }
    size_t n = strlen(path);
    char *copy = strdup(path);
    if (!copy) {
        snprintf(err, errsz, "%s: out of memory", path);
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

int fdx_is_sqlite_file(const char *path)
{
    static const char magic[16] = "SQLite format 3";
    char head[16];
    FILE *f = fopen(path, "rb");
    int is = f && fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, magic, 16);
    if (f)
        fclose(f);
    return is;
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
