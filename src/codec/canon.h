/*
 * Whether a stored dtypes or candidates text is exactly the text the encoder
 * writes for it, decided in one pass without building a JSON tree (canon.c).
 */
#ifndef FDX_CANON_H
#define FDX_CANON_H

#include <stddef.h>

typedef enum fdx_canon {
    FDX_CANON_NO,     /* a decode and re-encode of the cell's line would refuse it */
    FDX_CANON_YES,    /* it would give the text back byte for byte */
    FDX_CANON_UNSURE, /* too long to tell cheaply: decode it */
} fdx_canon;

/* ["a","b"]: a dtypes list as fdx_enc_string_array writes it. */
fdx_canon fdx_canon_dtypes(const char *s, size_t n);
/* [{"impl_id":{...},"latency_ns":N},...]: as fdx_enc_candidates writes it. */
fdx_canon fdx_canon_candidates(const char *s, size_t n);

#endif
