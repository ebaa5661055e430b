/*
 * SHA-256, straight from FIPS 180-4; no dependency on a crypto library. Every
 * byte ingested is hashed for the ledger, so x86 CPUs with the SHA extensions
 * use them (chosen at run time); the portable rounds serve everywhere else.
 */
#include "common/sha256.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define FDX_SHA_NI 1
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void compress_block(uint32_t s[8], const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s[0] += a;
    s[1] += b;
    s[2] += c;
    s[3] += d;
    s[4] += e;
    s[5] += f;
    s[6] += g;
    s[7] += h;
}

static void compress_portable(uint32_t s[8], const unsigned char *p, size_t blocks)
{
    for (; blocks; blocks--, p += 64)
        compress_block(s, p);
}

#ifdef FDX_SHA_NI
__attribute__((target("sha,sse4.1,ssse3"))) static void
compress_ni(uint32_t s[8], const unsigned char *p, size_t blocks)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s[0]), 0xB1); /* CDAB */
    __m128i st1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s[4]), 0x1B); /* EFGH */
    __m128i st0 = _mm_alignr_epi8(tmp, st1, 8);                                     /* ABEF */
    st1 = _mm_blend_epi16(st1, tmp, 0xF0);                                          /* CDGH */
    for (; blocks; blocks--, p += 64) {
        /* Each word of the schedule is made beside the rounds that use the
         * words before it, four words held at a time. */
        __m128i abef = st0, cdgh = st1, w[4];
        for (int i = 0; i < 4; i++)
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#pragma GCC unroll 16
#endif
        for (int i = 0; i < 16; i++) {
            if (i >= 4) { /* w[i - 4], w[i - 3], w[i - 2], w[i - 1] at i, i + 1, i + 2, i + 3 */
                __m128i t = _mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]);
                t = _mm_add_epi32(t, _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4));
                w[i & 3] = _mm_sha256msg2_epu32(t, w[(i + 3) & 3]);
            }
            __m128i msg = _mm_add_epi32(w[i & 3], _mm_loadu_si128((const __m128i *)&K[4 * i]));
            st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
            st0 = _mm_sha256rnds2_epu32(st0, st1, _mm_shuffle_epi32(msg, 0x0E));
        }
        st0 = _mm_add_epi32(st0, abef);
        st1 = _mm_add_epi32(st1, cdgh);
    }
    tmp = _mm_shuffle_epi32(st0, 0x1B);    /* FEBA */
    st1 = _mm_shuffle_epi32(st1, 0xB1);    /* DCHG */
    st0 = _mm_blend_epi16(tmp, st1, 0xF0); /* DCBA */
    st1 = _mm_alignr_epi8(st1, tmp, 8);    /* ABEF */
    _mm_storeu_si128((__m128i *)&s[0], st0);
    _mm_storeu_si128((__m128i *)&s[4], st1);
}

static int cpu_has_sha(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & (1u << 29)))
        return 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 19)) && (c & (1u << 9));
}
#endif

static void (*compress)(uint32_t s[8], const unsigned char *p, size_t blocks);

void fdx_sha256_use_portable(int portable)
{
#ifdef FDX_SHA_NI
    compress = !portable && cpu_has_sha() ? compress_ni : compress_portable;
#else
    (void)portable;
    compress = compress_portable;
#endif
}

void fdx_sha256_init(fdx_sha256 *h)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    if (!compress)
        fdx_sha256_use_portable(0);
    memcpy(h->state, iv, sizeof iv);
    h->bytes = 0;
    h->used = 0;
}

void fdx_sha256_update(fdx_sha256 *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    h->bytes += n;
    if (h->used) {
        size_t take = 64 - h->used < n ? 64 - h->used : n;
        memcpy(h->block + h->used, p, take);
        h->used += take;
        p += take;
        n -= take;
        if (h->used < 64)
            return;
        compress(h->state, h->block, 1);
        h->used = 0;
    }
    if (n >= 64) {
        compress(h->state, p, n / 64);
        p += n / 64 * 64;
        n %= 64;
    }
    memcpy(h->block, p, n);
    h->used = n;
}

void fdx_sha256_final(fdx_sha256 *h, unsigned char digest[32])
{
    uint64_t bits = h->bytes * 8;
    unsigned char pad[72] = {0x80};
    size_t padlen = (h->used < 56 ? 56 : 120) - h->used;
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    fdx_sha256_update(h, pad, padlen);
    fdx_sha256_update(h, len, 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (unsigned char)(h->state[i] >> 24);
        digest[4 * i + 1] = (unsigned char)(h->state[i] >> 16);
        digest[4 * i + 2] = (unsigned char)(h->state[i] >> 8);
        digest[4 * i + 3] = (unsigned char)h->state[i];
    }
}

void fdx_sha256_hex(const unsigned char digest[32], char hex[FDX_SHA256_HEX])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[64] = '\0';
}
