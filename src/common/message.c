/* Messages that keep their reason: see message.h. */
#include "common/message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int continues(char ch)
{
    return ((unsigned char)ch & 0xC0) == 0x80;
}

void fdx_vformat_message(char *dst, size_t size, const char *fmt, va_list ap)
{
    static const char gap[] = "...";
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(dst, size, fmt, ap);
    char *full = n >= 0 && (size_t)n >= size && size > 64 ? malloc((size_t)n + 1) : NULL;
    if (full && vsnprintf(full, (size_t)n + 1, fmt, again) == n) {
        size_t room = size - sizeof gap, head = room / 3, tail = (size_t)n - (room - head);
        while (head > 0 && continues(full[head]))
            head--;
        while (tail < (size_t)n && continues(full[tail]))
            tail++;
        snprintf(dst, size, "%.*s%s%s", (int)head, full, gap, full + tail);
    }
    free(full);
    va_end(again);
}

void fdx_format_message(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fdx_vformat_message(dst, size, fmt, ap);
    va_end(ap);
}
