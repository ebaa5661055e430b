/*
 * Error messages that keep their reason. Messages name a path first and the
 * reason last, in a handle's fixed buffer: a path as long as the buffer (a
 * deep tree, a path past PATH_MAX refused for that very length) cut the
 * reason off, leaving a message that said nothing.
 */
#ifndef FDX_MESSAGE_H
#define FDX_MESSAGE_H

#include <stdarg.h>
#include <stddef.h>

/* The bytes of a handle's message buffer (a store's, a sink's, a rejects
 * file's): one size, so that one handle's message passed on through another
 * is not cut. */
#define FDX_MESSAGE_SIZE 1024

/* vsnprintf into dst; a text longer than size - 1 bytes keeps its start and
 * its end, joined by "...", cut between characters (in a dst of more than
 * 64 bytes, or with memory for the whole text; else it is cut short). */
void fdx_vformat_message(char *dst, size_t size, const char *fmt, va_list ap);
void fdx_format_message(char *dst, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
