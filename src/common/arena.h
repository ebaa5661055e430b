/*
 * Bump allocation in chunks, for many small allocations that die together
 * (a decoded line's JSON tree, the records handed to a caller): each costs a
 * pointer bump, and the whole lot one free per chunk.
 */
#ifndef FDX_ARENA_H
#define FDX_ARENA_H

#include <stddef.h>

typedef struct fdx_arena_chunk fdx_arena_chunk;

typedef struct fdx_arena {
    fdx_arena_chunk *head; /* the chunk being filled; older ones follow */
    char *at;
    char *chunk_end;   /* the end of head's room */
    size_t chunk_size; /* 0: FDX_ARENA_CHUNK */
} fdx_arena;

#define FDX_ARENA_CHUNK ((size_t)64 << 10)

/* Starts a new chunk with room for n bytes (rounded) and takes them. */
void *fdx_arena_alloc_slow(fdx_arena *a, size_t n);

/* n bytes, 16-byte aligned; NULL when memory runs out. Inline: cJSON calls
 * it once per JSON value. */
static inline void *fdx_arena_alloc(fdx_arena *a, size_t n)
{
    size_t rounded = (n + 15) & ~(size_t)15;
    if (a->head && rounded >= n && (size_t)(a->chunk_end - a->at) >= rounded) {
        void *p = a->at;
        a->at += rounded;
        return p;
    }
    return fdx_arena_alloc_slow(a, n);
}
/* Whether p was allocated from a (and a not reset since). */
int fdx_arena_owns(const fdx_arena *a, const void *p);
/* Forgets every allocation, keeping one chunk of the ordinary size for reuse. */
void fdx_arena_reset(fdx_arena *a);
void fdx_arena_free(fdx_arena *a);

#endif
