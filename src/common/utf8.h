/* Strict UTF-8 validation (RFC 3629: no overlongs, surrogates or > U+10FFFF). */
#ifndef FDX_UTF8_H
#define FDX_UTF8_H

#include <stddef.h>

/* Returns 1 when s[0..n) is valid UTF-8; else 0 and *bad = offending offset. */
int fdx_utf8_valid(const char *s, size_t n, size_t *bad);
/* Length of the valid sequence at s[0] (a lead byte >= 0x80) within s[0..n),
 * or 0 when it is not one. */
size_t fdx_utf8_sequence(const char *s, size_t n);

#endif
