/*
 * The spill file as its two halves share it: spill.c writes runs onto it,
 * spill_merge.c reads them back merged (and writes groups of runs merged
 * into one). Nothing outside cell/spill*.c includes this.
 *
 * A run is a sequence of records: a header (key length, candidates length,
 * count), the packed key (fdx_cell_pack), the candidates JSON (none for the
 * empty list).
 */
#ifndef FDX_CELL_SPILL_FILE_H
#define FDX_CELL_SPILL_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cell/spill.h"
#include "common/buf.h"

/* What the file is written (and a run read ahead) in at most. */
#define FDX_SPILL_IO ((size_t)64 << 10)

typedef struct fdx_spill_run {
    off_t start, end;
    size_t longest; /* its longest record's header and key, in bytes */
} fdx_spill_run;

typedef struct fdx_spill_rec {
    uint32_t key_len;
    uint32_t cands_len;
    uint64_t count;
} fdx_spill_rec;

struct fdx_spill {
    int fd;
    char *dir;           /* $TMPDIR or /tmp, from the first run on */
    fdx_spill_run *runs; /* oldest first */
    size_t n_runs, cap_runs;
    off_t file_end; /* runs merged into one leave their place in the list */
    fdx_buf out;
};

/* FDX_EIO with "<what> a temporary file in <dir>: <errno's reason>" in err. */
int fdx_spill_fail(const fdx_spill *sp, char *err, size_t size, const char *what);
int fdx_spill_no_memory(char *err, size_t size);
/* Reads or writes the n bytes at p from or to the file at *at, moving it
 * on: 0, or -1 with errno set (EIO for a run cut short, ENOSPC for a write
 * that wrote nothing). */
int fdx_spill_transfer(const fdx_spill *sp, char *p, size_t n, off_t *at, int writing);
/* Appends a record at *at through the out buffer; a list too long for it
 * goes straight to the file. 0, or -1 with errno set. */
int fdx_spill_put(fdx_spill *sp, fdx_str key, uint64_t count, fdx_str cands, off_t *at);
/* Writes what the out buffer holds at *at: 0, or -1 with errno set. */
int fdx_spill_write_out(fdx_spill *sp, off_t *at);
/* Puts run r, just written, in the place of the n runs from first on
 * (n = 0: before runs[first]), giving their space back; or, when failed
 * says what failed (errno set), gives r's bytes back and says why in err. */
int fdx_spill_end_run(fdx_spill *sp, const char *failed, fdx_spill_run r, size_t first, size_t n,
                      char *err, size_t size);

#endif
