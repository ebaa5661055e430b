/* The one loop that writes every exported file (see jsonl_files.h). */
#include "common/jsonl_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "fdx.h"

static int write_one(fdx_afile *af, fdx_jsonl_file *f, char *err, size_t errsz)
{
    int rc = fdx_afile_open(af, f->path, err, errsz);
    if (rc != FDX_OK)
        return rc;
    uint64_t n = 0;
    int more;
    while ((more = f->next(f->ctx, &af->buf, err, errsz)) == 1) {
        if ((rc = fdx_afile_flush_if_full(af, err, errsz)) != FDX_OK)
            return rc;
        n++;
    }
    if (more != 0)
        return -more;
    if ((rc = fdx_afile_seal(af, err, errsz)) != FDX_OK)
        return rc;
    f->lines = n;
    return FDX_OK;
}

/* " (PATHS were already replaced)" after err, for the first n files. */
static void note_replaced(const fdx_jsonl_file *files, size_t n, char *err, size_t errsz)
{
    for (size_t k = 0; k < n; k++) {
        size_t len = strlen(err);
        snprintf(err + len, errsz - len, "; %s was already replaced", files[k].path);
    }
}

/* Renames in order, then makes the renames durable; a failure after the
 * first rename names what was replaced. */
static int install_all(fdx_afile *af, fdx_jsonl_file *files, size_t n, char *err, size_t errsz)
{
    for (size_t i = 0; i < n; i++) {
        int rc = fdx_afile_install(&af[i], err, errsz);
        if (rc != FDX_OK) {
            note_replaced(files, i, err, errsz);
            return rc;
        }
    }
    for (size_t i = 0; i < n; i++) {
        int rc = fdx_afile_sync_dir(&af[i], err, errsz);
        if (rc != FDX_OK) {
            note_replaced(files, i, err, errsz);
            note_replaced(files + i + 1, n - i - 1, err, errsz);
            return rc;
        }
    }
    return FDX_OK;
}

int fdx_write_jsonl_files(fdx_jsonl_file *files, size_t n, char *err, size_t errsz)
{
    fdx_afile *af = calloc(n ? n : 1, sizeof *af);
    if (!af) {
        snprintf(err, errsz, "out of memory");
        return FDX_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        fdx_afile_init(&af[i]);
    int rc = FDX_OK;
    for (size_t i = 0; rc == FDX_OK && i < n; i++)
        rc = write_one(&af[i], &files[i], err, errsz);
    for (size_t i = 0; rc == FDX_OK && i < n; i++)
        rc = fdx_afile_check_target(&af[i], err, errsz);
    if (rc == FDX_OK)
        rc = install_all(af, files, n, err, errsz);
    for (size_t i = 0; i < n; i++)
        fdx_afile_abort(&af[i]);
    free(af);
    return rc;
}
