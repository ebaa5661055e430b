/* Small filesystem helpers shared by the exporters. */
#ifndef FDX_FSUTIL_H
#define FDX_FSUTIL_H

#include <stddef.h>

/* mkdir -p; fails when path is empty or it or a component exists and is
 * not a directory. *made_from (when not NULL) is the length of the first
 * prefix of path it made, or 0 when it made none. */
int fdx_mkdirs(const char *path, size_t *made_from, char *err, size_t errsz);
/* Removes what fdx_mkdirs(path) made (made_from, as it set it), deepest
 * first, up to the first that is not empty: a failed output leaves none. */
void fdx_unmake_dirs(const char *path, size_t made_from);
/* Whether path is an SQLite database, or a -wal, -shm or -journal file of
 * one (by its first bytes, or by its name beside the database). */
int fdx_is_sqlite_file(const char *path);
/* "dir/name", malloc'd; NULL when memory runs out. */
char *fdx_path_join(const char *dir, const char *name);
/* The path of the file path names, from /, links resolved (as SQLite names
 * a store's file and makes its -wal beside it); for a name not there yet,
 * its directory's so resolved and its own name. malloc'd; NULL when neither
 * resolves or memory runs out. */
char *fdx_real_path(const char *path);
/* 1 when the directory a path would be created in does not exist (its name
 * goes to dir), so that a message can name it rather than the file. */
int fdx_parent_missing(const char *path, char *dir, size_t dirsz);

#endif
