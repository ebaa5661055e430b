/*
 * UTF-8 validation. The wire is UTF-8 and the store hands text to SQLite and
 * to JSON writers verbatim, so anything invalid must be refused at the door.
 */
#include "common/utf8.h"

#include <stdint.h>
#include <string.h>

static size_t ascii_run(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull)
            break;
        i += 8;
    }
    while (i < n && s[i] < 0x80)
        i++;
    return i;
}

size_t fdx_utf8_sequence(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    unsigned char lo = 0x80, hi = 0xBF;
    size_t len;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

int fdx_utf8_valid(const char *str, size_t n, size_t *bad)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    for (;;) {
        i += ascii_run(s + i, n - i);
        if (i == n)
            return 1;
        size_t len = fdx_utf8_sequence(str + i, n - i);
        if (len == 0) {
            if (bad)
                *bad = i;
            return 0;
        }
        i += len;
    }
}
