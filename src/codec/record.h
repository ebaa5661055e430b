/*
 * A decoded line, on its own so the two decoders that fill it (the reference
 * on cJSON, decode.c, and the one-pass fast path, decode_fast.c) share the
 * type without depending on each other.
 */
#ifndef FDX_RECORD_H
#define FDX_RECORD_H

#include "cell/cell.h"
#include "fdx.h"

typedef struct fdx_record {
    fdx_kind kind;
    fdx_miss miss;         /* when kind == FDX_KIND_MISS */
    fdx_dispatch dispatch; /* when kind == FDX_KIND_DISPATCH */
} fdx_record;

#endif
