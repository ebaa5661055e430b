/*
 * Cell identity: packing it into the aggregator's key bytes, and the total
 * export order. (Cells are built from API records in codec/record_cell.c.)
 */
#include "cell/cell.h"

#include <string.h>

/* Packed layout: kind, keyed, revision, cc_major, cc_minor, then the seven
 * strings, each as a 4-byte length and its bytes. */
static void pack_str(fdx_buf *out, fdx_str s)
{
    uint32_t n = (uint32_t)s.n;
    fdx_buf_append(out, &n, sizeof n);
    fdx_buf_append(out, s.p, s.n);
}

void fdx_cell_pack(const fdx_cell *c, fdx_buf *out)
{
    unsigned char head[2] = {(unsigned char)c->kind, (unsigned char)c->keyed};
    fdx_buf_clear(out);
    fdx_buf_append(out, head, sizeof head);
    fdx_buf_append(out, &c->revision, sizeof c->revision);
    fdx_buf_append(out, &c->cc_major, sizeof c->cc_major);
    fdx_buf_append(out, &c->cc_minor, sizeof c->cc_minor);
    pack_str(out, c->token);
    pack_str(out, c->backend);
    pack_str(out, c->op);
    pack_str(out, c->dtypes_json);
    pack_str(out, c->kernel_source);
    pack_str(out, c->sku);
    pack_str(out, c->driver);
}

static const char *unpack_str(fdx_str *s, const char *p)
{
    uint32_t n;
    memcpy(&n, p, sizeof n);
    s->p = p + sizeof n;
    s->n = n;
    return s->p + n;
}

void fdx_cell_unpack(fdx_cell *c, const char *key, size_t len)
{
    (void)len;
    const char *p = key;
    c->kind = (fdx_kind)(unsigned char)p[0];
    c->keyed = (unsigned char)p[1];
    p += 2;
    memcpy(&c->revision, p, sizeof c->revision);
    p += sizeof c->revision;
    memcpy(&c->cc_major, p, sizeof c->cc_major);
    p += sizeof c->cc_major;
    memcpy(&c->cc_minor, p, sizeof c->cc_minor);
    p += sizeof c->cc_minor;
    p = unpack_str(&c->token, p);
    p = unpack_str(&c->backend, p);
    p = unpack_str(&c->op, p);
    p = unpack_str(&c->dtypes_json, p);
    p = unpack_str(&c->kernel_source, p);
    p = unpack_str(&c->sku, p);
    unpack_str(&c->driver, p);
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
