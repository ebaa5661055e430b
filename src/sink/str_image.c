/* Building string images: see str_image.h. */
#include "sink/str_image.h"

#include <stdlib.h>
#include <string.h>

static fdx_block *block_at(fdx_image *im, const char *addr)
{
    for (uint32_t i = 0; i < im->n; i++)
        if (im->blocks[i].addr == addr)
            return &im->blocks[i];
    if (im->n == FDX_IMAGE_BLOCKS)
        return NULL;
    fdx_block *b = &im->blocks[im->n++];
    memset(b, 0, sizeof *b);
    b->addr = addr;
    b->follows = 1;
    return b;
}

int fdx_image_add(fdx_image *im, const char *str)
{
    size_t mis = (uintptr_t)str & 15;
    const char *first = str - mis;
    size_t end = mis + strlen(str) + 1; /* the terminator's place after first, plus one */
    for (size_t at = 0; at < end; at += 16) {
        fdx_block *b = block_at(im, first + at);
        if (!b)
            return 0;
        if (at == 0)
            b->follows = 0;
        for (size_t i = at < mis ? mis - at : 0; i < 16 && at + i < end; i++) {
            b->mask |= 1u << i;
            b->img[i] = (unsigned char)str[at + i - mis];
        }
    }
    return 1;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const fdx_block *)a)->addr;
    uintptr_t y = (uintptr_t)((const fdx_block *)b)->addr;
    return x < y ? -1 : x > y;
}

void fdx_image_seal(fdx_image *im)
{
    qsort(im->blocks, im->n, sizeof im->blocks[0], by_address);
}
