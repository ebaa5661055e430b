/*
 * Replacing a file atomically: write a unique temporary file beside it, fsync,
 * rename over the target, fsync the directory. A reader or a crash sees the
 * old file or the new one, never a part.
 */
#ifndef FDX_ATOMIC_FILE_H
#define FDX_ATOMIC_FILE_H

#include <stddef.h>

#include "common/buf.h"

typedef struct fdx_afile {
    int fd;
    char *path;
    char *tmp_path;
    fdx_buf buf;
} fdx_afile;

/* Each returns FDX_OK or an fdx error code with the reason in err. */
int fdx_afile_open(fdx_afile *af, const char *path, char *err, size_t errsz);
/* Writers append to af->buf themselves; this writes it out once it is big. */
int fdx_afile_flush_if_full(fdx_afile *af, char *err, size_t errsz);
/* Writes out the buffer, syncs and closes the temporary file, leaving the
 * rename to commit; on failure the handle is aborted. */
int fdx_afile_sync(fdx_afile *af, char *err, size_t errsz);
/* Syncs (unless fdx_afile_sync did) and renames; the handle is closed either way. */
int fdx_afile_commit(fdx_afile *af, char *err, size_t errsz);
/* Closes and removes the temporary file; the target is untouched. */
void fdx_afile_abort(fdx_afile *af);

#endif
