/*
 * Whether two names are one file. A file written by a rename over a name
 * (a rejects file, a report, an export) must not be a file the program reads
 * or a store's: the rename would destroy it. Names are compared by the file
 * they name when it exists, else by their directory and base name (two
 * names of one file still to be created).
 */
#ifndef FDX_FILE_ID_H
#define FDX_FILE_ID_H

#include <sys/types.h>

typedef struct fdx_file_id {
    int exists;
    dev_t dev;
    ino_t ino;
    char base[256];
} fdx_file_id;

/* 0, or -1 with errno set (its directory missing, say). */
int fdx_file_identify(const char *path, fdx_file_id *id);
/* The same of an open file: 0, or -1 with errno set. */
int fdx_file_identify_fd(int fd, fdx_file_id *id);
int fdx_file_same(const fdx_file_id *a, const fdx_file_id *b);
/* Which of an SQLite database's files (the database, its -wal, -shm or
 * -journal) id names: the suffix ("" for the database itself), or NULL for
 * none. */
const char *fdx_file_db_part(const fdx_file_id *id, const char *db_path);

#endif
