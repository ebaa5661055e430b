/*
 * An opt-in allocator for cJSON: per-thread arenas that the decoder empties
 * after each line, instead of one malloc and one free per JSON value.
 * cJSON's hooks are process-wide, so this is switched on by the program
 * (fdx_use_fast_json_allocator), never by the library on its own.
 */
#ifndef FDX_JSON_ARENA_H
#define FDX_JSON_ARENA_H

/* Forgets this thread's allocations (call only when no tree is alive). */
void fdx_json_arena_reset(void);
/* Frees this thread's arena (thread exit). */
void fdx_json_arena_release(void);

#endif
