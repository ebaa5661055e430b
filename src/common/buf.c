/* Growable byte buffer with a sticky out-of-memory flag (see buf.h). */
#include "common/buf.h"

#include <stdlib.h>
#include <string.h>

/* Room for extra more bytes plus a NUL: doubling, or exactly that. */
static int reserve(fdx_buf *b, size_t extra, int exact)
{
    if (b->oom)
        return -1;
    if (extra > (size_t)-1 - b->len - 1) {
        b->oom = 1;
        return -1;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = exact ? need : b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > (size_t)-1 / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int fdx_buf_reserve(fdx_buf *b, size_t extra)
{
    return reserve(b, extra, 0);
}

int fdx_buf_fit(fdx_buf *b, size_t extra)
{
    if (reserve(b, extra, 1) != 0)
        return -1;
    fdx_shrink(&b->data, &b->cap, b->len + extra + 1, 1);
    return 0;
}

void fdx_buf_append_growing(fdx_buf *b, const void *p, size_t n)
{
    if (fdx_buf_reserve(b, n) != 0)
        return;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void fdx_buf_puts(fdx_buf *b, const char *s)
{
    fdx_buf_append(b, s, strlen(s));
}

int fdx_grow(void *arrp, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > (size_t)-1 / 2 / size)
            return -1;
        c *= 2;
    }
    void *old;
    memcpy(&old, arrp, sizeof old);
    void *p = realloc(old, c * size);
    if (!p)
        return -1;
    memcpy(arrp, &p, sizeof p);
    *cap = c;
    return 0;
}

void fdx_shrink(void *arrp, size_t *cap, size_t n, size_t size)
{
    if (n == 0 || n >= *cap)
        return;
    void *old;
    memcpy(&old, arrp, sizeof old);
    void *p = realloc(old, n * size);
    if (!p)
        return;
    memcpy(arrp, &p, sizeof p);
    *cap = n;
}

void fdx_buf_clear(fdx_buf *b)
{
    b->len = 0;
    b->oom = 0;
    if (b->data)
        b->data[0] = '\0';
}

void fdx_buf_free(fdx_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}
