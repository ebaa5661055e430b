/*
 * An opt-in allocator for cJSON: each decoder owns an arena that it empties
 * before every line, instead of one malloc and one free per JSON value.
 * cJSON's hooks are process-wide, so the program switches this on
 * (fdx_use_fast_json_allocator), never the library on its own. Allocations
 * go to the arena the calling thread has selected; with none selected (any
 * other cJSON use in the process) the hooks are plain malloc and free.
 */
#ifndef FDX_JSON_ARENA_H
#define FDX_JSON_ARENA_H

#include "common/arena.h"

/* A decoder's arena; its chunks are larger than the default, room for the
 * tree of any ordinary line. */
typedef fdx_arena fdx_json_arena;

/* Selects the arena this thread's cJSON calls allocate from (NULL: none). */
void fdx_json_arena_use(fdx_json_arena *a);
/* Forgets everything allocated from a (no tree from it may be alive). */
void fdx_json_arena_reset(fdx_json_arena *a);
void fdx_json_arena_free(fdx_json_arena *a);

#endif
