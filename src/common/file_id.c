/* Names compared by the file they name: see file_id.h. */
#include "common/file_id.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fsutil.h"
#include "fdx.h"

int fdx_file_identify(const char *path, fdx_file_id *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (stat(path, &st) == 0) {
        id->exists = 1;
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return 0;
    }
    if (errno != ENOENT)
        return -1;
    char *a = strdup(path), *b = strdup(path);
    int rc = a && b && stat(dirname(a), &st) == 0 ? 0 : -1;
    if (rc == 0) {
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        snprintf(id->base, sizeof id->base, "%s", basename(b));
    }
    free(a);
    free(b);
    return rc;
}

int fdx_file_identify_fd(int fd, fdx_file_id *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (fstat(fd, &st) != 0)
        return -1;
    id->exists = 1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return 0;
}

int fdx_file_same(const fdx_file_id *a, const fdx_file_id *b)
{
    return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino &&
           strcmp(a->base, b->base) == 0;
}

const char *fdx_file_db_part(const fdx_file_id *id, const char *db_path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        char name[4096];
        fdx_file_id part;
        if ((size_t)snprintf(name, sizeof name, "%s%s", db_path, suffixes[i]) >= sizeof name)
            continue; /* no file has such a name */
        if (fdx_file_identify(name, &part) == 0 && fdx_file_same(id, &part))
            return suffixes[i];
    }
    return NULL;
}

int fdx_fd_is_store_file(int fd, const char *path)
{
    fdx_file_id id;
    char *db = path ? fdx_real_path(path) : NULL;
    int is = db && fdx_file_identify_fd(fd, &id) == 0 && fdx_file_db_part(&id, db) != NULL;
    free(db);
    return is;
}
