/* Expanding an ingest path into its sources (see sources.h). */
#include "ingest/sources.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/message.h"
#include "fdx.h"

int fdx_each_source(const char *path, fdx_source_fn fn, void *ctx, char *err, size_t errsz)
{
    static const char *const names[] = {"misses.jsonl", "dispatches.jsonl"};
    struct stat st;
    if (strcmp(path, "-") == 0)
        return fn(ctx, NULL, "<stdin>");
    if (stat(path, &st) != 0) {
        int e = errno;
        fdx_format_message(err, errsz, "%s: %s", path, strerror(e));
        return e == ENOENT ? FDX_ENOENT : FDX_EIO;
    }
    if (!S_ISDIR(st.st_mode))
        return fn(ctx, path, path);
    int found = 0;
    for (size_t i = 0; i < 2; i++) {
        char file[4096];
        if ((size_t)snprintf(file, sizeof file, "%s/%s", path, names[i]) >= sizeof file) {
            fdx_format_message(err, errsz, "%s: path too long", path);
            return FDX_EIO;
        }
        if (stat(file, &st) != 0) {
            int e = errno;
            /* a run without one kind has no file of it; a link to none is
             * a file that went missing, not a kind the run lacks */
            int dangling = e == ENOENT && lstat(file, &st) == 0;
            if (e == ENOENT && !dangling)
                continue;
            fdx_format_message(err, errsz, "%s: %s", file,
                               dangling ? "a symbolic link to nothing" : strerror(e));
            return dangling ? FDX_ENOENT : FDX_EIO;
        }
        found++;
        int rc = fn(ctx, file, file);
        if (rc != FDX_OK)
            return rc;
    }
    if (!found) {
        fdx_format_message(
            err, errsz, "%s: run directory holds neither misses.jsonl nor dispatches.jsonl", path);
        return FDX_ENOENT;
    }
    return FDX_OK;
}

struct fdx_seen_file {
    dev_t dev;
    ino_t ino;
    char *name;
};

int fdx_seen_add(fdx_seen_files *set, int fd, const char *name, const char **earlier)
{
    struct stat st;
    *earlier = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return FDX_OK; /* pipes and terminals are read once whatever they are called */
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i].dev == st.st_dev && set->v[i].ino == st.st_ino) {
            *earlier = set->v[i].name;
            return FDX_OK;
        }
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        fdx_seen_file *v = realloc(set->v, cap * sizeof *v);
        if (!v)
            return FDX_ENOMEM;
        set->v = v;
        set->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return FDX_ENOMEM;
    set->v[set->n++] = (fdx_seen_file){st.st_dev, st.st_ino, copy};
    return FDX_OK;
}

void fdx_seen_free(fdx_seen_files *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->v[i].name);
    free(set->v);
    *set = (fdx_seen_files){0};
}
