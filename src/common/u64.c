/*
 * Exact u64 decimal conversion. cJSON keeps numbers as double, which loses
 * digits above 2^53; revision hashes and latencies use the whole u64 range.
 */
#include "common/u64.h"

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

size_t fdx_u64_format(uint64_t v, char out[FDX_U64_DIGITS])
{
    char tmp[FDX_U64_DIGITS];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}
