/*
 * Streaming line reader: memory is bounded by the longest line allowed, never
 * by the file. A line over the limit is skipped to its end and reported, its
 * bytes handed to an optional callback (for a rejects file). Every byte read
 * also goes into a SHA-256 of the whole input, for the ingest ledger.
 */
#ifndef FDX_LINEREADER_H
#define FDX_LINEREADER_H

#include <stddef.h>
#include <stdint.h>

#include "common/sha256.h"
#include "ingest/slab.h"

typedef void (*fdx_lr_skip_fn)(void *ctx, const char *p, size_t n);

typedef struct fdx_linereader {
    int fd;
    int own_fd;
    int borrowed; /* buf is the caller's memory */
    char *buf;
    size_t cap;
    size_t start; /* first unread byte */
    size_t end;   /* end of buffered data */
    size_t max_line;
    int eof;
    uint64_t lineno; /* 1-based number of the line last returned */
    uint64_t bytes;  /* bytes read so far */
    fdx_sha256 hash;
    fdx_lr_skip_fn on_skip; /* receives the bytes of over-long lines */
    void *skip_ctx;
    fdx_slab_pool *slabs; /* when set, buf is slab's: see fdx_lr_read_into */
    fdx_slab *slab;
} fdx_linereader;

enum { FDX_LR_EOF = 0, FDX_LR_LINE = 1, FDX_LR_TOO_LONG = 2, FDX_LR_ERROR = -1 };

/* path NULL reads standard input. FDX_OK, or FDX_EIO/FDX_ENOENT with errno set. */
int fdx_lr_open(fdx_linereader *lr, const char *path, size_t max_line);
/* Reads lines from memory the caller keeps alive until fdx_lr_close. */
void fdx_lr_open_mem(fdx_linereader *lr, const char *data, size_t len, size_t max_line);
/* Before the first line of a file: reads it into blocks of the pool, which a
 * caller may hold (fdx_slab_hold on lr->slab) to keep the lines it was given
 * beyond the next call. The reader never moves bytes of a block someone else
 * holds; it carries the unread ones over to a new block instead. */
void fdx_lr_read_into(fdx_linereader *lr, fdx_slab_pool *slabs);
/* The bytes read and gone past so far: lines, their ends, blank and skipped
 * lines. */
uint64_t fdx_lr_consumed(const fdx_linereader *lr);
/*
 * Next line without its '\n' (a final line without one counts too). Returns
 * FDX_LR_LINE, FDX_LR_TOO_LONG (line skipped; lineno names it), FDX_LR_EOF,
 * or FDX_LR_ERROR (errno set).
 */
int fdx_lr_next(fdx_linereader *lr, const char **line, size_t *len);
void fdx_lr_close(fdx_linereader *lr);

#endif
