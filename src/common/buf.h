/*
 * Growable byte buffer. An allocation failure is sticky (oom), so encoders
 * can append freely and check once at the end instead of after every call.
 */
#ifndef FDX_BUF_H
#define FDX_BUF_H

#include <stddef.h>

typedef struct fdx_buf {
    char *data;
    size_t len;
    size_t cap;
    int oom;
} fdx_buf;

#define FDX_BUF_INIT                                                                               \
    {                                                                                              \
        NULL, 0, 0, 0                                                                              \
    }

/* Ensures room for extra more bytes plus a NUL; returns 0, or -1 on OOM. */
int fdx_buf_reserve(fdx_buf *b, size_t extra);
void fdx_buf_append(fdx_buf *b, const void *p, size_t n);
void fdx_buf_puts(fdx_buf *b, const char *s);
void fdx_buf_putc(fdx_buf *b, char c);
/*
 * Makes the array *arrp (a pointer to any element type, passed by address)
 * hold at least need elements of size bytes, doubling as it grows. Returns 0,
 * or -1 when memory runs out (the array is then unchanged).
 */
int fdx_grow(void *arrp, size_t *cap, size_t need, size_t size);
/* Keeps the allocation for reuse. */
void fdx_buf_clear(fdx_buf *b);
void fdx_buf_free(fdx_buf *b);

#endif
