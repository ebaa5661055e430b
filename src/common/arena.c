/* Chunked bump arenas (see arena.h). */
#include "common/arena.h"

#include <stdint.h>
#include <stdlib.h>

struct fdx_arena_chunk {
    fdx_arena_chunk *next;
    char *end;
    _Alignas(16) char data[];
};

static size_t chunk_size(const fdx_arena *a)
{
    return a->chunk_size ? a->chunk_size : FDX_ARENA_CHUNK;
}

void *fdx_arena_alloc_slow(fdx_arena *a, size_t n)
{
    if (n > SIZE_MAX - 15)
        return NULL;
    n = (n + 15) & ~(size_t)15;
    if (!a->head || (size_t)(a->chunk_end - a->at) < n) {
        size_t size = n > chunk_size(a) ? n : chunk_size(a);
        fdx_arena_chunk *c = malloc(sizeof *c + size);
        if (!c)
            return NULL;
        c->next = a->head;
        c->end = c->data + size;
        a->head = c;
        a->at = c->data;
        a->chunk_end = c->end;
    }
    void *p = a->at;
    a->at += n;
    return p;
}

int fdx_arena_owns(const fdx_arena *a, const void *p)
{
    for (const fdx_arena_chunk *c = a->head; c; c = c->next)
        if ((const char *)p >= c->data && (const char *)p < c->end)
            return 1;
    return 0;
}

void fdx_arena_reset(fdx_arena *a)
{
    if (!a->head)
        return;
    fdx_arena_chunk *keep = a->head;
    while (keep->next) {
        fdx_arena_chunk *c = keep;
        keep = keep->next;
        free(c);
    }
    if ((size_t)(keep->end - keep->data) > chunk_size(a)) {
        free(keep);
        a->head = NULL;
        a->at = a->chunk_end = NULL;
        return;
    }
    a->head = keep;
    a->at = keep->data;
    a->chunk_end = keep->end;
}

void fdx_arena_free(fdx_arena *a)
{
    while (a->head) {
        fdx_arena_chunk *c = a->head;
        a->head = c->next;
        free(c);
    }
    a->at = a->chunk_end = NULL;
}
