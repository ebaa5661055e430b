/*
 * Temporary files a process removes when a fatal signal ends it: a
 * PostgreSQL store's working copy under $TMPDIR is removed at its handle's
 * close, and an export's, a report's or a rejects file's temporary file
 * once it is renamed or abandoned, which a program stopped by SIGTERM or
 * Ctrl-C never reaches. A program's signal handler calls
 * fdx_remove_temporary_files (fdx.h), which is async-signal-safe: it only
 * reads what was noted here and unlinks.
 */
#ifndef FDX_TEMP_FILES_H
#define FDX_TEMP_FILES_H

#include <stddef.h>

/* The longest path noted (with room for a companion's suffix). */
#define FDX_TEMP_PATH_MAX 4096

/* Notes path (and, with companions, its -journal, -wal and -shm) as this
 * process's to remove; a slot number to forget it by, or -1 when every slot
 * is taken or the path is too long (it is then removed at close only). */
int fdx_temp_files_note(const char *path, int companions);
/* Forgets the slot (-1: none). */
void fdx_temp_files_forget(int slot);
/* Unlinks path, its -journal, -wal and -shm (async-signal-safe). */
void fdx_temp_files_remove(const char *path);

#endif
