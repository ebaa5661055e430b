/* Bump arenas behind cJSON's allocation hooks (see json_arena.h). */
#include "common/json_arena.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>

#include "fdx.h"

#define CHUNK ((size_t)256 << 10)

struct fdx_json_chunk {
    fdx_json_chunk *next;
    char *end;
    char data[];
};

static int installed;
static _Thread_local fdx_json_arena *current;

static int owns(const fdx_json_arena *a, const void *p)
{
    for (const fdx_json_chunk *c = a->head; c; c = c->next)
        if ((const char *)p >= c->data && (const char *)p < c->end)
            return 1;
    return 0;
}

static void *arena_malloc(size_t n)
{
    fdx_json_arena *a = current;
    if (!a)
        return malloc(n);
    n = (n + 15) & ~(size_t)15;
    if (!a->head || (size_t)(a->head->end - a->at) < n) {
        size_t size = n > CHUNK ? n : CHUNK;
        fdx_json_chunk *c = malloc(sizeof *c + size);
        if (!c)
            return NULL;
        c->next = a->head;
        c->end = c->data + size;
        a->head = c;
        a->at = c->data;
    }
    void *p = a->at;
    a->at += n;
    return p;
}

static void arena_free(void *p)
{
    if (p && !(current && owns(current, p)))
        free(p);
}

void fdx_use_fast_json_allocator(void)
{
    cJSON_Hooks hooks = {arena_malloc, arena_free};
    cJSON_InitHooks(&hooks);
    installed = 1;
}

void fdx_json_arena_use(fdx_json_arena *a)
{
    current = installed ? a : NULL;
}

void fdx_json_arena_reset(fdx_json_arena *a)
{
    if (!a->head)
        return;
    /* Keep one ordinary chunk for the next line; give back the rest. */
    fdx_json_chunk *keep = a->head;
    while (keep->next) {
        fdx_json_chunk *c = keep;
        keep = keep->next;
        free(c);
    }
    if ((size_t)(keep->end - keep->data) > CHUNK) {
        free(keep);
        a->head = NULL;
        a->at = NULL;
        return;
    }
    a->head = keep;
    a->at = keep->data;
}

void fdx_json_arena_free(fdx_json_arena *a)
{
    while (a->head) {
        fdx_json_chunk *c = a->head;
        a->head = c->next;
        free(c);
    }
    a->at = NULL;
}
