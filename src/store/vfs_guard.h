/*
 * The VFS fdx opens its stores through (vfs_guard.c): SQLite's default one,
 * but a connection to a file removed from its path never takes another
 * store's -journal for a hot journal of its own, nor its -wal for its own.
 */
#ifndef FDX_STORE_VFS_GUARD_H
#define FDX_STORE_VFS_GUARD_H

#include <sqlite3.h>

/* Its name for sqlite3_open_v2, registered at the first call; NULL (SQLite's
 * default VFS) when it could not be. */
const char *fdx_vfs_guard(void);

#endif
