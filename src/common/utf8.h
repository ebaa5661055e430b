/* Strict UTF-8 validation (RFC 3629: no overlongs, surrogates or > U+10FFFF). */
#ifndef FDX_UTF8_H
#define FDX_UTF8_H

#include <stddef.h>

/* Returns 1 when s[0..n) is valid UTF-8; else 0 and *bad = offending offset. */
int fdx_utf8_valid(const char *s, size_t n, size_t *bad);

#endif
