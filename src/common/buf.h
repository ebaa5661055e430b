/*
 * Growable byte buffer. An allocation failure is sticky (oom), so encoders
 * can append freely and check once at the end instead of after every call.
 */
#ifndef FDX_BUF_H
#define FDX_BUF_H

#include <stddef.h>
#include <string.h>

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

/* Ensures room for extra more bytes plus a NUL, doubling as it grows; returns
 * 0, or -1 on OOM. */
int fdx_buf_reserve(fdx_buf *b, size_t extra);
/* Makes the room exactly extra more bytes plus a NUL, growing or giving the
 * rest back (kept when realloc fails), for a buffer of a fixed size. */
int fdx_buf_fit(fdx_buf *b, size_t extra);
/* fdx_buf_append when the buffer must grow first (or has run out of memory). */
void fdx_buf_append_growing(fdx_buf *b, const void *p, size_t n);
/* Inline, because encoders append a few bytes at a time and mostly fit. */
static inline void fdx_buf_append(fdx_buf *b, const void *p, size_t n)
{
    if (n >= b->cap - b->len || b->oom) {
        fdx_buf_append_growing(b, p, n);
        return;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}
void fdx_buf_puts(fdx_buf *b, const char *s);
static inline void fdx_buf_putc(fdx_buf *b, char c)
{
    if (b->len + 1 >= b->cap || b->oom) {
        fdx_buf_append_growing(b, &c, 1);
        return;
    }
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}
/*
 * Makes the array *arrp (a pointer to any element type, passed by address)
 * hold at least need elements of size bytes, doubling as it grows. Returns 0,
 * or -1 when memory runs out (the array is then unchanged).
 */
int fdx_grow(void *arrp, size_t *cap, size_t need, size_t size);
/* Makes such an array hold n elements when it has room for more (n > 0; it
 * is left as it is when realloc fails). */
void fdx_shrink(void *arrp, size_t *cap, size_t n, size_t size);
/* Keeps the allocation for reuse. */
void fdx_buf_clear(fdx_buf *b);
void fdx_buf_free(fdx_buf *b);

#endif
