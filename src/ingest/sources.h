/*
 * What an ingest path names: "-" (standard input), a JSONL file, or a run
 * directory's misses.jsonl then dispatches.jsonl. Shared by the ingest, its
 * content hash and the checks made before an ingest writes anything.
 */
#ifndef FDX_SOURCES_H
#define FDX_SOURCES_H

#include <stddef.h>

/* Called per source: path NULL for standard input; name is what messages say. */
typedef int (*fdx_source_fn)(void *ctx, const char *path, const char *name);

/* Calls fn for each source path names and returns the first failure. A
 * failure of its own (a path that is missing, or a run directory holding
 * neither file) is explained in err; fn's failures leave err untouched. */
int fdx_each_source(const char *path, fdx_source_fn fn, void *ctx, char *err, size_t errsz);

/* The regular files an ingest has read, by device and inode: a file given
 * twice (under any name) is noticed. */
typedef struct fdx_seen_file fdx_seen_file;
typedef struct fdx_seen_files {
    fdx_seen_file *v;
    size_t n, cap;
} fdx_seen_files;

/* Adds the file open as fd; *earlier is the name it was read under before in
 * this set, or NULL. FDX_OK, or FDX_ENOMEM. */
int fdx_seen_add(fdx_seen_files *set, int fd, const char *name, const char **earlier);
void fdx_seen_free(fdx_seen_files *set);

#endif
