/*
 * Exact u64 decimal conversion. cJSON keeps numbers as double, which loses
 * digits above 2^53; revision hashes and latencies use the whole u64 range.
 */
#include "common/u64.h"

#include <string.h>

int fdx_u64_parse(const char *s, size_t n, uint64_t *out)
{
    if (n == 0)
        return FDX_U64_SYNTAX;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return FDX_U64_SYNTAX;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return FDX_U64_RANGE;
        v = v * 10 + d;
    }
    *out = v;
    return FDX_U64_OK;
}

/* Two digits at a time: half the divisions. */
size_t fdx_u64_format(uint64_t v, char out[FDX_U64_DIGITS])
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    char tmp[FDX_U64_DIGITS];
    size_t i = FDX_U64_DIGITS;
    for (; v >= 100; v /= 100) {
        i -= 2;
        memcpy(tmp + i, pairs + 2 * (v % 100), 2);
    }
    if (v >= 10) {
        i -= 2;
        memcpy(tmp + i, pairs + 2 * v, 2);
    } else {
        tmp[--i] = (char)('0' + v);
    }
    memcpy(out, tmp + i, FDX_U64_DIGITS - i);
    return FDX_U64_DIGITS - i;
}
