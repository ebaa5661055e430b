/* Exact decimal text <-> uint64_t, for values a double cannot hold. */
#ifndef FDX_U64_H
#define FDX_U64_H

#include <stddef.h>
#include <stdint.h>

#define FDX_U64_DIGITS 20

enum { FDX_U64_OK = 0, FDX_U64_SYNTAX = -1, FDX_U64_RANGE = -2 };

/* Parses a plain unsigned decimal integer (digits only). */
int fdx_u64_parse(const char *s, size_t n, uint64_t *out);
/* Writes v in decimal without a terminator; returns the number of digits. */
size_t fdx_u64_format(uint64_t v, char out[FDX_U64_DIGITS]);

#endif
