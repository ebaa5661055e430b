/*
 * Streaming line reader: memory is bounded by the longest line allowed, never
 * by the file. A line over the limit is skipped to its end and reported.
 */
#ifndef FDX_LINEREADER_H
#define FDX_LINEREADER_H

#include <stddef.h>
#include <stdint.h>

typedef struct fdx_linereader {
    int fd;
    int own_fd;
    char *buf;
    size_t cap;
    size_t start; /* first unread byte */
    size_t end;   /* end of buffered data */
    size_t max_line;
    int eof;
    uint64_t lineno; /* 1-based number of the line last returned */
    uint64_t bytes;  /* bytes read so far */
} fdx_linereader;

enum { FDX_LR_EOF = 0, FDX_LR_LINE = 1, FDX_LR_TOO_LONG = 2, FDX_LR_ERROR = -1 };

/* path NULL reads standard input. FDX_OK, or FDX_EIO/FDX_ENOENT with errno set. */
int fdx_lr_open(fdx_linereader *lr, const char *path, size_t max_line);
/*
 * Next line without its '\n' (a final line without one counts too). Returns
 * FDX_LR_LINE, FDX_LR_TOO_LONG (line skipped; lineno names it), FDX_LR_EOF,
 * or FDX_LR_ERROR (errno set).
 */
int fdx_lr_next(fdx_linereader *lr, const char **line, size_t *len);
void fdx_lr_close(fdx_linereader *lr);

#endif
