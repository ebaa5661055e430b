/* Helpers shared by the test programs: temporary directories and files. */
#ifndef FDX_TEST_UTIL_H
#define FDX_TEST_UTIL_H

#include <stddef.h>

#include "fdx.h"

/* A fresh directory under $TMPDIR (or /tmp); caller frees the path. */
char *tu_tempdir(void);
/* dir/name in a static rotating buffer. */
const char *tu_path(const char *dir, const char *name);
void tu_write_file(const char *path, const char *text);
/* Whole file, NUL-terminated; NULL when it cannot be read. Caller frees. */
char *tu_read_file(const char *path, size_t *len);
/* Removes a directory tree. */
void tu_rmtree(const char *path);
struct stat;
/* Finds a file this process has open under dir (through /proc/self/fd, so
 * an unnamed one too): 1 with its status in st, or 0. */
int tu_open_file_in(const char *dir, struct stat *st);
/*
 * The scratch directory of a test: tu_dir_setup makes it (a fresh tu_tempdir)
 * and tu_dir_teardown removes it, as a checked fixture or from one.
 */
extern char *tu_dir;
void tu_dir_setup(void);
void tu_dir_teardown(void);
/* The path of a file in tests/data. */
const char *tu_data(const char *rel);

/* Opens (creating) a store and fails the test on error. */
fdx_store *tu_open(const char *path);
/* Commits one miss of count 1 on a CPU, keyed wanted, in a transaction of its own. */
void tu_commit_miss(fdx_store *db, const char *wanted);
/* Ingests each path in one transaction; returns the status of the first failure. */
int tu_ingest(fdx_store *db, const char *const *paths, size_t n);
/* Runs sql on the file at path through SQLite alone (an edit fdx never
 * makes); fails the test on error. */
void tu_raw_exec(const char *path, const char *sql);
/* Exports to dir and returns misses.jsonl + "--\n" + dispatches.jsonl. Caller frees. */
char *tu_export(fdx_store *db, const char *dir);

#endif
