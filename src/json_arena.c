/* Thread-local bump arenas behind cJSON's allocation hooks (see json_arena.h). */
#include "json_arena.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>

#include "fdx.h"

#define CHUNK ((size_t)256 << 10)

typedef struct chunk {
    struct chunk *next;
    char *end;
    char data[];
} chunk;

typedef struct arena {
    chunk *head; /* the chunk being filled; older ones follow */
    char *at;
} arena;

static int installed;
static _Thread_local arena tls;

static int owns(const void *p)
{
    for (chunk *c = tls.head; c; c = c->next)
        if ((const char *)p >= c->data && (const char *)p < c->end)
            return 1;
    return 0;
}

static void *arena_malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!tls.head || (size_t)(tls.head->end - tls.at) < n) {
        size_t size = n > CHUNK ? n : CHUNK;
        chunk *c = malloc(sizeof *c + size);
        if (!c)
            return NULL;
        c->next = tls.head;
        c->end = c->data + size;
        tls.head = c;
        tls.at = c->data;
    }
    void *p = tls.at;
    tls.at += n;
    return p;
}

static void arena_free(void *p)
{
    if (p && !owns(p))
        free(p);
}

void fdx_use_fast_json_allocator(void)
{
    cJSON_Hooks hooks = {arena_malloc, arena_free};
    cJSON_InitHooks(&hooks);
    installed = 1;
}

void fdx_json_arena_reset(void)
{
    if (!installed || !tls.head)
        return;
    /* Keep one ordinary chunk for the next line; give back the rest. */
    chunk *keep = tls.head;
    while (keep->next) {
        chunk *c = keep;
        keep = keep->next;
        free(c);
    }
    if ((size_t)(keep->end - keep->data) > CHUNK) {
        free(keep);
        tls.head = NULL;
        tls.at = NULL;
        return;
    }
    tls.head = keep;
    tls.at = keep->data;
}

void fdx_json_arena_release(void)
{
    while (tls.head) {
        chunk *c = tls.head;
        tls.head = c->next;
        free(c);
    }
    tls.at = NULL;
}
