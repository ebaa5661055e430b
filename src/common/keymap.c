/* Byte-string keys to small integers (see keymap.h). */
#include "common/keymap.h"

#include <stdlib.h>
#include <string.h>

#include "fdx.h"

/*
 * Two independent multiply lanes over 16-byte steps, then a full avalanche
 * (murmur3's fmix). Not for hostile keys: the tables that use it hold cells
 * of the caller's own feeds.
 */
uint64_t fdx_hash_bytes(const char *p, size_t n)
{
    const uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xC2B2AE3D27D4EB4Full;
    uint64_t a = n * k1, b = ~n * k2;
    for (; n >= 16; p += 16, n -= 16) {
        uint64_t x, y;
        memcpy(&x, p, 8);
        memcpy(&y, p + 8, 8);
        a = (a ^ x) * k1;
        b = (b ^ y) * k2;
    }
    uint64_t x = 0, y = 0;
    if (n > 8) {
        memcpy(&x, p, 8);
        memcpy(&y, p + 8, n - 8);
    } else if (n) {
        memcpy(&x, p, n);
    }
    a = (a ^ x) * k1;
    b = (b ^ y) * k2;
    uint64_t h = a ^ (b >> 29 | b << 35);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

int fdx_keymap_get(const fdx_keymap *m, const char *key, size_t len, uint64_t hash, uint32_t *value)
{
    if (!m->cap)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = hash & mask; m->values[i]; i = (i + 1) & mask)
        if (m->hashes[i] == hash && m->lens[i] == len &&
            memcmp((m->held ? m->held : &m->keys)->data + m->offs[i], key, len) == 0) {
            *value = m->values[i] - 1;
            return 1;
        }
    return 0;
}

static int grow(fdx_keymap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint64_t *h = calloc(cap, sizeof *h);
    uint32_t *v = calloc(cap, sizeof *v);
    size_t *o = calloc(cap, sizeof *o);
    uint32_t *l = calloc(cap, sizeof *l);
    if (!h || !v || !o || !l) {
        free(h);
        free(v);
        free(o);
        free(l);
        return FDX_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->values[i])
            continue;
        size_t j = m->hashes[i] & (cap - 1);
        while (v[j])
            j = (j + 1) & (cap - 1);
        h[j] = m->hashes[i];
        v[j] = m->values[i];
        o[j] = m->offs[i];
        l[j] = m->lens[i];
    }
    free(m->hashes);
    free(m->values);
    free(m->offs);
    free(m->lens);
    m->hashes = h;
    m->values = v;
    m->offs = o;
    m->lens = l;
    m->cap = cap;
    return FDX_OK;
}

/* Adds the key at off (in keys or held) to the table. */
static int insert(fdx_keymap *m, size_t off, size_t len, uint64_t hash, uint32_t value)
{
    if (((m->n + 1) * 2 > m->cap && grow(m) != FDX_OK) || len > UINT32_MAX || value == UINT32_MAX)
        return FDX_ENOMEM;
    size_t i = hash & (m->cap - 1);
    while (m->values[i])
        i = (i + 1) & (m->cap - 1);
    m->hashes[i] = hash;
    m->values[i] = value + 1;
    m->offs[i] = off;
    m->lens[i] = (uint32_t)len;
    m->n++;
    return FDX_OK;
}

int fdx_keymap_put(fdx_keymap *m, const char *key, size_t len, uint64_t hash, uint32_t value)
{
    size_t off = m->keys.len;
    fdx_buf_append(&m->keys, key, len);
    if (m->keys.oom || insert(m, off, len, hash, value) != FDX_OK) {
        m->keys.oom = 0;
        m->keys.len = off;
        return FDX_ENOMEM;
    }
    return FDX_OK;
}

int fdx_keymap_put_held(fdx_keymap *m, const fdx_buf *held, size_t off, size_t len, uint64_t hash,
                        uint32_t value)
{
    m->held = held;
    return insert(m, off, len, hash, value);
}

void fdx_keymap_clear(fdx_keymap *m)
{
    if (m->values)
        memset(m->values, 0, m->cap * sizeof *m->values);
    m->n = 0;
    fdx_buf_clear(&m->keys);
}

void fdx_keymap_free(fdx_keymap *m)
{
    free(m->hashes);
    free(m->values);
    free(m->offs);
    free(m->lens);
    fdx_buf_free(&m->keys);
    memset(m, 0, sizeof *m);
}
