/*
 * The stores this process has open. SQLite's locks are POSIX record locks,
 * which the kernel drops, every one a process holds on a file, as soon as
 * the process closes any descriptor of that file. A path that names a store
 * open here, or its -shm (where a WAL store's locks are), must not be opened
 * and closed by fdx's own code (to check an output path, to ingest or hash
 * it): that would release the lock of a transaction under way, and another
 * process would write beside it. Such paths are told by device and inode
 * before anything opens them.
 */
#ifndef FDX_OPEN_STORES_H
#define FDX_OPEN_STORES_H

/* Notes the store at path (links resolved, as SQLite names its -shm) as
 * open by owner; -1 when memory runs out. */
int fdx_open_stores_add(const void *owner, const char *path);
/* Forgets owner's store; a no-op when it has none. */
void fdx_open_stores_remove(const void *owner);
/* Keeps owner's store noted, with no owner (NULL) from now on: a handle
 * gone whose locks stay (one a fork copied while it held them). */
void fdx_open_stores_forsake(const void *owner);
enum { FDX_HELD_NONE = 0, FDX_HELD_FILE = 1, FDX_HELD_SHM = 2 };
/* Whether path names the file (FDX_HELD_FILE), or the -shm (FDX_HELD_SHM),
 * of a store open in this process; else FDX_HELD_NONE. SQLite itself may
 * open a store's file again (it shares one descriptor's locks between its
 * connections), but not its -shm as a database. */
int fdx_open_stores_hold(const char *path);
/* Whether path names the file of a store noted with an owner (or NULL, for
 * one forsaken) for which match is true. */
int fdx_open_stores_find(const char *path, int (*match)(const void *owner));

#endif
