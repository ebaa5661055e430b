/*
 * Cell identity: packing it into the aggregator's key bytes, and the total
 * export order. (Cells are built from API records in codec/record_cell.c.)
 */
#include "cell/cell.h"

#include <string.h>

/*
 * Packed layout: kind * 2 + keyed in one byte, the revision's 8 bytes, cc_major
 * and cc_minor as zigzag varints, then the seven strings, each as a varint
 * length and its bytes. Lengths and small numbers take one byte each, so a
 * key's fixed part is 18 bytes instead of the 54 that 4-byte lengths and
 * 8-byte numbers took: pending holds 10-20% more cells in its budget, and a
 * spill writes that much less.
 */
enum { PACK_STRINGS = 7, VARINT_MAX = 10 };

static char *put_varint(char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (char)v;
    return p;
}

static const char *get_varint(const char *p, uint64_t *v)
{
    uint64_t x = (unsigned char)*p;
    if (x < 0x80) {
        *v = x;
        return p + 1;
    }
    x &= 0x7f;
    for (unsigned shift = 7;; shift += 7) {
        uint64_t b = (unsigned char)*++p;
        x |= (b & 0x7f) << shift;
        if (b < 0x80 || shift >= 63)
            break;
    }
    *v = x;
    return p + 1;
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static char *put_str(char *p, fdx_str s)
{
    p = put_varint(p, s.n);
    if (s.n)
        memcpy(p, s.p, s.n);
    return p + s.n;
}

void fdx_cell_pack(const fdx_cell *c, fdx_buf *out)
{
    const fdx_str *strs[PACK_STRINGS] = {&c->token,         &c->backend, &c->op,    &c->dtypes_json,
                                         &c->kernel_source, &c->sku,     &c->driver};
    size_t most = 1 + sizeof c->revision + 2 * VARINT_MAX;
    for (size_t i = 0; i < PACK_STRINGS; i++)
        most += VARINT_MAX + strs[i]->n;
    fdx_buf_clear(out);
    if (fdx_buf_reserve(out, most) != 0)
        return;
    char *p = out->data;
    *p++ = (char)(c->kind * 2 + (c->keyed != 0));
    memcpy(p, &c->revision, sizeof c->revision);
    p += sizeof c->revision;
    p = put_varint(p, zigzag(c->cc_major));
    p = put_varint(p, zigzag(c->cc_minor));
    for (size_t i = 0; i < PACK_STRINGS; i++)
        p = put_str(p, *strs[i]);
    out->len = (size_t)(p - out->data);
    out->data[out->len] = '\0';
}

static const char *get_str(fdx_str *s, const char *p)
{
    uint64_t n;
    p = get_varint(p, &n);
    s->p = p;
    s->n = (size_t)n;
    return p + n;
}

void fdx_cell_unpack(fdx_cell *c, const char *key, size_t len)
{
    (void)len;
    const char *p = key;
    uint64_t v;
    c->kind = (fdx_kind)((unsigned char)p[0] >> 1);
    c->keyed = p[0] & 1;
    p++;
    memcpy(&c->revision, p, sizeof c->revision);
    p += sizeof c->revision;
    p = get_varint(p, &v);
    c->cc_major = unzigzag(v);
    p = get_varint(p, &v);
    c->cc_minor = unzigzag(v);
    p = get_str(&c->token, p);
    p = get_str(&c->backend, p);
    p = get_str(&c->op, p);
    p = get_str(&c->dtypes_json, p);
    p = get_str(&c->kernel_source, p);
    p = get_str(&c->sku, p);
    get_str(&c->driver, p);
}

int fdx_str_compare(fdx_str a, fdx_str b)
{
    size_t n = a.n < b.n ? a.n : b.n;
    int r = n ? memcmp(a.p, b.p, n) : 0;
    if (r)
        return r;
    return (a.n > b.n) - (a.n < b.n);
}

#define CMP_NUM(x, y)                                                                              \
    do {                                                                                           \
        if ((x) != (y))                                                                            \
            return (x) < (y) ? -1 : 1;                                                             \
    } while (0)

int fdx_cell_compare(const fdx_cell *a, const fdx_cell *b)
{
    int r;
    CMP_NUM(a->keyed, b->keyed);
    if ((r = fdx_str_compare(a->token, b->token)) != 0 ||
        (r = fdx_str_compare(a->kernel_source, b->kernel_source)) != 0)
        return r;
    CMP_NUM(a->revision, b->revision);
    if ((r = fdx_str_compare(a->backend, b->backend)) != 0 ||
        (r = fdx_str_compare(a->op, b->op)) != 0 ||
        (r = fdx_str_compare(a->dtypes_json, b->dtypes_json)) != 0)
        return r;
    CMP_NUM(a->cc_major, b->cc_major);
    CMP_NUM(a->cc_minor, b->cc_minor);
    if ((r = fdx_str_compare(a->sku, b->sku)) != 0)
        return r;
    return fdx_str_compare(a->driver, b->driver);
}
