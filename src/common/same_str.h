/*
 * Whether a caller's C string equals a stored copy of known length, a word at
 * a time. The sink checks every string of every record it has seen before
 * against its stored key; one libc call per string costs more than the rest
 * of the record put together.
 *
 * The caller's length is unknown, so the words read from it are aligned: an
 * aligned word holding any byte of the string lies in the same page as that
 * byte and cannot fault. A word is read only when the one before it matched
 * the stored bytes, which are never 0, so the string reaches into it. This is
 * how libc's own string functions read. It may read up to 7 bytes on either
 * side of the string: valgrind accepts that of aligned words, sanitizers do not,
 * so builds with them (or configured with -DFDX_STRICT_READS=ON) use strncmp.
 */
#ifndef FDX_SAME_STR_H
#define FDX_SAME_STR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define FDX_STRICT_READS 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || !defined(__BYTE_ORDER__) ||                                   \
    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#ifndef FDX_STRICT_READS
#define FDX_STRICT_READS 1
#endif
#endif

/* Bytes the stored copy must have readable before and after it. */
#define FDX_SAME_STR_SLACK 8

/* Whether str is exactly the n bytes at stored (none of them 0), which are
 * followed by a terminator and FDX_SAME_STR_SLACK readable bytes and preceded
 * by as many. */
static inline int fdx_same_str(const char *str, const char *stored, size_t n)
{
#ifdef FDX_STRICT_READS
    return strncmp(str, stored, n + 1) == 0;
#else
    /* Bytes of a word at or after its first i, and before its first i. */
    static const uint64_t from[8] = {~0ull,       ~0ull << 8,  ~0ull << 16, ~0ull << 24,
                                     ~0ull << 32, ~0ull << 40, ~0ull << 48, ~0ull << 56};
    static const uint64_t below[9] = {0,           ~0ull >> 56, ~0ull >> 48,
                                      ~0ull >> 40, ~0ull >> 32, ~0ull >> 24,
                                      ~0ull >> 16, ~0ull >> 8,  ~0ull};
    size_t mis = (uintptr_t)str & 7;
    const char *word = str - mis;
    const char *twin = stored - mis;
    size_t left = mis + n + 1; /* bytes from word to the terminator */
    uint64_t a, b, counted = from[mis];
    memcpy(&a, word, 8);
    memcpy(&b, twin, 8);
    while (left > 8) {
        if ((a ^ b) & counted)
            return 0;
        counted = ~0ull;
        word += 8;
        twin += 8;
        left -= 8;
        memcpy(&a, word, 8);
        memcpy(&b, twin, 8);
    }
    return ((a ^ b) & counted & below[left]) == 0;
#endif
}

#endif
