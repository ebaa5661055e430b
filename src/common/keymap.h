/*
 * A map from byte strings to small integers: open addressing, keys copied
 * into one arena, or left where the caller already keeps them. The sink uses
 * it to find a record's cell from the record's raw fields without building
 * the canonical cell first; ingest workers to find lines they have decoded.
 */
#ifndef FDX_KEYMAP_H
#define FDX_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

typedef struct fdx_keymap {
    uint64_t *hashes;
    uint32_t *values; /* value + 1; 0 = empty */
    size_t *offs;     /* key offsets in keys, or in held */
    uint32_t *lens;
    size_t cap; /* power of two */
    size_t n;
    fdx_buf keys;
    const fdx_buf *held; /* the caller's buffer holding the keys (fdx_keymap_put_held) */
} fdx_keymap;

uint64_t fdx_hash_bytes(const char *p, size_t n);
/* 1 and *value when found, else 0. */
int fdx_keymap_get(const fdx_keymap *m, const char *key, size_t len, uint64_t hash,
                   uint32_t *value);
/* FDX_OK or FDX_ENOMEM; the key must not be present. */
int fdx_keymap_put(fdx_keymap *m, const char *key, size_t len, uint64_t hash, uint32_t value);
/* The same for a key the caller keeps at held->data + off, with no copy; a
 * map takes all its keys one way or the other. */
int fdx_keymap_put_held(fdx_keymap *m, const fdx_buf *held, size_t off, size_t len, uint64_t hash,
                        uint32_t value);
void fdx_keymap_clear(fdx_keymap *m);
void fdx_keymap_free(fdx_keymap *m);

#endif
