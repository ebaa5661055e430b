/*
 * Eight bytes of JSON string text tested at once, for the decoder that
 * skips the bytes a string holds as they are and the encoder that copies
 * the bytes it need not escape. Each test flags the high bit of the bytes it
 * names, and the lowest byte flagged is exactly the first such byte: a
 * subtraction's borrow runs only upward from a byte that is flagged itself.
 * Bytes above that one may be flagged falsely, which only matters to a
 * caller that looks past the first.
 */
#ifndef FDX_JSON_WORD_H
#define FDX_JSON_WORD_H

#include <stdint.h>
#include <string.h>

#define FDX_WORD_BYTES(b) (0x0101010101010101ULL * (b))

/* Where the first byte flagged can be told from the lowest bit set. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FDX_WORD_FIRST(m) ((size_t)__builtin_ctzll(m) / 8)
#endif

static inline uint64_t fdx_word_load(const void *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* The bytes of w a JSON string must escape: a quote, a backslash, a
 * control character (below 0x20). */
static inline uint64_t fdx_word_to_escape(uint64_t w)
{
    uint64_t q = w ^ FDX_WORD_BYTES('"'), b = w ^ FDX_WORD_BYTES('\\');
    return (((w - FDX_WORD_BYTES(0x20)) & ~w) | ((q - FDX_WORD_BYTES(1)) & ~q) |
            ((b - FDX_WORD_BYTES(1)) & ~b)) &
           FDX_WORD_BYTES(0x80);
}

/* Those, and the bytes of longer UTF-8 sequences (0x80 and above). */
static inline uint64_t fdx_word_not_ascii_text(uint64_t w)
{
    return fdx_word_to_escape(w) | (w & FDX_WORD_BYTES(0x80));
}

#endif
