/*
 * Replacing a file atomically: write a unique temporary file beside it, fsync,
 * rename over the target, fsync the directory. A reader or a crash sees the
 * old file or the new one, never a part. Sealing and installing are separate
 * steps so that several files can all be sealed before any is renamed. The
 * directory is opened with the temporary file, before anything is renamed:
 * a directory that cannot be opened for its fsync (not readable, no
 * descriptor or memory left) fails the write while the targets are as they
 * were, instead of after they were replaced.
 */
#ifndef FDX_ATOMIC_FILE_H
#define FDX_ATOMIC_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

typedef struct fdx_afile {
    int fd;
    int dir_fd; /* the target's directory; -1: none */
    char *path;
    char *tmp_path;
    int tmp_slot; /* in common/temp_files.h, or -1 */
    fdx_buf buf;
    uint64_t written;      /* bytes written to fd */
    uint64_t writing_back; /* of those, the bytes whose writeback has started */
} fdx_afile;

/* No files yet: what fdx_afile_abort may be called on before an open. */
void fdx_afile_init(fdx_afile *af);
/* Each returns FDX_OK or an fdx error code with the reason in err. */
int fdx_afile_open(fdx_afile *af, const char *path, char *err, size_t errsz);
/* Writers append to af->buf themselves; this writes it out once it is big. */
int fdx_afile_flush_if_full(fdx_afile *af, char *err, size_t errsz);
/* Writes out the rest, fsyncs and closes the temporary file. */
int fdx_afile_seal(fdx_afile *af, char *err, size_t errsz);
/* Fails when path is there and not a regular file (a directory, a symlink,
 * a device): a rename over it would fail or replace the wrong thing. */
int fdx_afile_check_path(const char *path, char *err, size_t errsz);
/* fdx_afile_check_path of the target. */
int fdx_afile_check_target(const fdx_afile *af, char *err, size_t errsz);
/* Renames the sealed temporary file over the target. */
int fdx_afile_install(fdx_afile *af, char *err, size_t errsz);
/* fsyncs the target's directory, making the rename durable; a failure says
 * the target was replaced. */
int fdx_afile_sync_dir(fdx_afile *af, char *err, size_t errsz);
/* Closes and removes the temporary file unless it was installed; frees. */
void fdx_afile_abort(fdx_afile *af);
/* Closes and frees, leaving the temporary file where it is (a forked
 * child's copy of a parent's, which is the parent's to keep or remove). */
void fdx_afile_forget(fdx_afile *af);

#endif
