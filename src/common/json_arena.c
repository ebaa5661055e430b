/* Bump arenas behind cJSON's allocation hooks (see json_arena.h). */
#include "common/json_arena.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "fdx.h"

#define JSON_CHUNK ((size_t)256 << 10)

static int installed;
static _Thread_local fdx_json_arena *current;

static void *arena_malloc(size_t n)
{
    return current ? fdx_arena_alloc(current, n) : malloc(n);
}

static void arena_free(void *p)
{
    if (p && !(current && fdx_arena_owns(current, p)))
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
    if (current && !current->chunk_size)
        current->chunk_size = JSON_CHUNK;
}

void fdx_json_arena_reset(fdx_json_arena *a)
{
    fdx_arena_reset(a);
}

void fdx_json_arena_free(fdx_json_arena *a)
{
    fdx_arena_free(a);
}
