/* Output directories and the one loop that writes every exported file. */
#include "common/fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/atomic_file.h"
#include "fdx.h"

static int mkdir_one(const char *path, char *err, size_t errsz)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return FDX_OK;
    snprintf(err, errsz, "%s: creating the output directory: %s", path, strerror(errno));
    return FDX_EIO;
}

int fdx_mkdirs(const char *path, char *err, size_t errsz)
{
    char *copy = strdup(path);
    if (!copy) {
        snprintf(err, errsz, "out of memory");
        return FDX_ENOMEM;
    }
    int rc = FDX_OK;
    for (char *p = copy + 1; rc == FDX_OK && *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        rc = mkdir_one(copy, err, errsz);
        *p = '/';
    }
    if (rc == FDX_OK)
        rc = mkdir_one(copy, err, errsz);
    free(copy);
    struct stat st;
    if (rc == FDX_OK && stat(path, &st) != 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return FDX_EIO;
    }
    if (rc == FDX_OK && !S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s: exists and is not a directory", path);
        return FDX_EIO;
    }
    return rc;
}

char *fdx_path_join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s", dir, name);
    return p;
}

int fdx_write_jsonl(const char *path, fdx_line_source next, void *ctx, uint64_t *lines, char *err,
                    size_t errsz)
{
    fdx_afile af;
    int rc = fdx_afile_open(&af, path, err, errsz);
    if (rc != FDX_OK)
        return rc;
    uint64_t n = 0;
    int more;
    while ((more = next(ctx, &af.buf, err, errsz)) ==
           1) { /* lines go straight to the file's buffer */
        if ((rc = fdx_afile_flush_if_full(&af, err, errsz)) != FDX_OK) {
            more = -rc;
            break;
        }
        n++;
    }
    if (more != 0) {
        fdx_afile_abort(&af);
        return -more;
    }
    if ((rc = fdx_afile_commit(&af, err, errsz)) != FDX_OK)
        return rc;
    if (lines)
        *lines = n;
    return FDX_OK;
}
