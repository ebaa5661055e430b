/*
 * Images of a caller's strings where they lie in the caller's memory: the
 * aligned 16-byte blocks holding them, and the bytes they held when learned.
 * A record that passes the same pointers again is checked a block at a time,
 * several strings per block when they lie side by side, instead of string by
 * string; that is what keeps a record for a cell already seen cheap.
 *
 * Reading is safe for the same reason libc's string functions are: an
 * aligned block holding any byte of a string lies in the page of that byte.
 * A block where no string starts is read only after every block before it
 * matched, so the strings reaching into it still do. Other bytes of a block
 * are read but ignored: valgrind accepts that of aligned loads, sanitizers
 * do not, so builds with them (FDX_STRICT_READS, see same_str.h) and builds
 * without SSE2 compare byte by byte, in order, stopping at the first
 * difference.
 */
#ifndef FDX_STR_IMAGE_H
#define FDX_STR_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/same_str.h"

#define FDX_IMAGE_BLOCKS 24

typedef struct fdx_block {
    _Alignas(16) unsigned char img[16];
    const char *addr; /* 16-aligned */
    uint32_t mask;    /* bit i: byte i belongs to a string */
    uint32_t follows; /* 1: no string starts in this block */
} fdx_block;

typedef struct fdx_image {
    uint32_t n;
    fdx_block blocks[FDX_IMAGE_BLOCKS];
} fdx_image;

/* Whether every string in the image still holds the bytes it held. */
static inline int fdx_image_matches(const fdx_image *im)
{
    unsigned diff = 0;
    for (const fdx_block *b = im->blocks, *end = b + im->n; b < end; b++) {
#ifdef FDX_BLOCK_SSE2
        if (b->follows && diff)
            return 0;
#else
        if (diff)
            return 0;
#endif
        diff |= fdx_block_diff(b->addr, b->img, b->mask);
    }
    return diff == 0;
}

/* Adds str (its bytes and terminator) to the image; 0 when it has no room
 * (the image is then unusable). */
int fdx_image_add(fdx_image *im, const char *str);
/* Puts the blocks in address order; call once every string is added. */
void fdx_image_seal(fdx_image *im);

#endif
