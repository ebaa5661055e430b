/* SHA-256 (FIPS 180-4), for the ingest ledger's content hashes. */
#ifndef FDX_SHA256_H
#define FDX_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct fdx_sha256 {
    uint32_t state[8];
    uint64_t bytes;
    unsigned char block[64];
    size_t used;
} fdx_sha256;

#define FDX_SHA256_HEX 65 /* 64 hex digits and a NUL */

void fdx_sha256_init(fdx_sha256 *h);
void fdx_sha256_update(fdx_sha256 *h, const void *data, size_t n);
void fdx_sha256_final(fdx_sha256 *h, unsigned char digest[32]);
/* Forces (1) or lifts (0) the portable rounds instead of the CPU's SHA
 * instructions; for tests. */
void fdx_sha256_use_portable(int portable);
/* Lowercase hex of a digest. */
void fdx_sha256_hex(const unsigned char digest[32], char hex[FDX_SHA256_HEX]);

#endif
