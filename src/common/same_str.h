/*
 * Comparing a caller's strings in aligned 16-byte blocks, the one way the
 * sink checks a record against what it has seen: against a stored copy of
 * known length (fdx_same_str), or against images of the blocks that held the
 * strings (str_image.h). One libc call per string would cost more than the
 * rest of the record put together.
 *
 * The caller's length is unknown, so the blocks read from it are aligned: an
 * aligned block holding any byte of the string lies in the same page as that
 * byte and cannot fault. A block is read only when the one before it matched
 * the stored bytes, which are never 0, so the string reaches into it. This is
 * how libc's own string functions read. It may read up to 15 bytes on either
 * side of the string: valgrind accepts that of aligned loads, sanitizers do
 * not, so builds with them (or configured with -DFDX_STRICT_READS=ON), and
 * builds without SSE2, compare byte by byte.
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

#if defined(__SSE2__) && !defined(FDX_STRICT_READS)
#include <emmintrin.h>
#define FDX_BLOCK_SSE2 1
#endif

/* Bytes the stored copy must have readable before and after it. */
#define FDX_SAME_STR_SLACK 16

/* Nonzero when a byte of the 16-byte aligned block at addr named by mask
 * differs from the same byte of img. The strict version reads only the bytes
 * named, in order, and stops at the first difference. */
static inline unsigned fdx_block_diff(const char *addr, const unsigned char *img, unsigned mask)
{
#ifdef FDX_BLOCK_SSE2
    __m128i now = _mm_load_si128((const __m128i *)(const void *)addr);
    __m128i then = _mm_loadu_si128((const __m128i *)(const void *)img);
    return ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(now, then)) & mask;
#else
    for (int i = 0; i < 16; i++)
        if ((mask >> i & 1) && (unsigned char)addr[i] != img[i])
            return 1;
    return 0;
#endif
}

/* Whether str is exactly the n bytes at stored (none of them 0), which are
 * followed by a terminator and FDX_SAME_STR_SLACK readable bytes and preceded
 * by as many. */
static inline int fdx_same_str(const char *str, const char *stored, size_t n)
{
#ifdef FDX_STRICT_READS
    return strncmp(str, stored, n + 1) == 0;
#else
    size_t mis = (uintptr_t)str & 15;
    const char *block = str - mis;
    const unsigned char *twin = (const unsigned char *)stored - mis;
    size_t left = mis + n + 1; /* bytes from block to the terminator, inclusive */
    unsigned counted = (0xffffu << mis) & 0xffffu;
    while (left > 16) {
        if (fdx_block_diff(block, twin, counted))
            return 0;
        counted = 0xffffu;
        block += 16;
        twin += 16;
        left -= 16;
    }
    return fdx_block_diff(block, twin, counted & (0xffffu >> (16 - left))) == 0;
#endif
}

#endif
