/*
 * A store may come from another host, so export and merge check that every
 * stored dtypes and candidates text is what the encoder would write for it:
 * decoding the cell's line and encoding it again must give back the same
 * bytes. Building a cJSON tree for that costs more than the rest of an
 * export's line. But the encoder has one spelling for each value (keys in
 * a fixed order, no spaces, one escape per byte, plain decimals), so the
 * texts it writes form a small grammar, and one pass matches a text against
 * it while refusing what the decoder refuses (invalid UTF-8, U+0000, a
 * number past 2^64-1). tests/fuzz/fuzz_canon.c holds every verdict against
 * the round trip's.
 */
#include "codec/canon.h"

#include <string.h>

#include "cell/cell.h"
#include "common/utf8.h"

typedef struct cursor {
    const unsigned char *p, *end;
} cursor;

/* Consumes text[0..n) when the input continues with it. */
static int take(cursor *c, const char *text, size_t n)
{
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, text, n) != 0)
        return 0;
    c->p += n;
    return 1;
}

#define TAKE(c, text) take(c, text, sizeof text - 1)

static int lower_hex(unsigned char h)
{
    if (h >= '0' && h <= '9')
        return h - '0';
    if (h >= 'a' && h <= 'f')
        return h - 'a' + 10;
    return -1;
}

/* The escape at c->p == '\\' as the encoder writes one: a short form, or
 * \u00xx in lower case for the other control characters but U+0000. */
static int escape(cursor *c)
{
    const unsigned char *e = c->p;
    size_t room = (size_t)(c->end - e);
    if (room < 2)
        return 0;
    switch (e[1]) {
    case '"':
    case '\\':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't': c->p += 2; return 1;
    }
    if (e[1] != 'u' || room < 6 || e[2] != '0' || e[3] != '0' || (e[4] != '0' && e[4] != '1'))
        return 0;
    int low = lower_hex(e[5]);
    int v = (e[4] - '0') * 16 + low;
    if (low < 0 || v == 0 || v == '\b' || v == '\t' || v == '\n' || v == '\f' || v == '\r')
        return 0;
    c->p += 6;
    return 1;
}

static int string(cursor *c)
{
    if (!TAKE(c, "\""))
        return 0;
    while (c->p < c->end) {
        unsigned char b = *c->p;
        if (b >= 0x20 && b < 0x80 && b != '"' && b != '\\') {
            c->p++;
        } else if (b == '"') {
            c->p++;
            return 1;
        } else if (b == '\\') {
            if (!escape(c))
                return 0;
        } else {
            size_t len =
                b < 0x80 ? 0 : fdx_utf8_sequence((const char *)c->p, (size_t)(c->end - c->p));
            if (!len)
                return 0;
            c->p += len;
        }
    }
    return 0;
}

/* A u64 in plain decimal: no sign, no leading zero, at most 2^64-1. */
static int u64(cursor *c)
{
    static const char max[] = "18446744073709551615";
    const unsigned char *d = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    size_t n = (size_t)(c->p - d);
    if (n == 0 || (n > 1 && d[0] == '0') || n > sizeof max - 1)
        return 0;
    return n < sizeof max - 1 || memcmp(d, max, n) <= 0;
}

/* [], or [item,...,item] */
static int list(cursor *c, int (*item)(cursor *))
{
    if (!TAKE(c, "["))
        return 0;
    if (TAKE(c, "]"))
        return 1;
    do
        if (!item(c))
            return 0;
    while (TAKE(c, ","));
    return TAKE(c, "]");
}

static int dtypes(cursor *c)
{
    return list(c, string);
}

static int candidate(cursor *c)
{
    if (!(TAKE(c, "{\"impl_id\":{\"backend\":") && string(c) && TAKE(c, ",\"op\":") && string(c) &&
          TAKE(c, ",\"dtypes\":") && dtypes(c) && TAKE(c, ",\"kernel_source\":") && string(c) &&
          TAKE(c, ",\"kernel_revision_hash\":") && u64(c) && TAKE(c, "}")))
        return 0;
    if (TAKE(c, ",\"latency_ns\":") && !u64(c))
        return 0;
    return TAKE(c, "}");
}

static int candidates(cursor *c)
{
    return list(c, candidate);
}

/* A text longer than a string may be could hold one that is too long; no
 * store holds such a text (SQLite's own limit is lower), so it is left to the
 * decoder rather than counted here. */
static fdx_canon verdict(const char *s, size_t n, int (*grammar)(cursor *))
{
    if (n > FDX_MAX_STRING)
        return FDX_CANON_UNSURE;
    cursor c = {(const unsigned char *)s, (const unsigned char *)s + n};
    return grammar(&c) && c.p == c.end ? FDX_CANON_YES : FDX_CANON_NO;
}

fdx_canon fdx_canon_dtypes(const char *s, size_t n)
{
    return verdict(s, n, dtypes);
}

fdx_canon fdx_canon_candidates(const char *s, size_t n)
{
    return verdict(s, n, candidates);
}
