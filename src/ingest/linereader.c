/* Buffered line reading over read(2) or memory, with a hard per-line limit. */
#include "ingest/linereader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdx.h"

#define CHUNK ((size_t)64 << 10)

static void init(fdx_linereader *lr, size_t max_line)
{
    memset(lr, 0, sizeof *lr);
    lr->fd = -1;
    lr->max_line = max_line ? max_line : FDX_DEFAULT_MAX_LINE;
    fdx_sha256_init(&lr->hash);
}

int fdx_lr_open(fdx_linereader *lr, const char *path, size_t max_line)
{
    init(lr, max_line);
    if (!path) {
        lr->fd = STDIN_FILENO;
        return FDX_OK;
    }
    lr->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (lr->fd < 0)
        return errno == ENOENT ? FDX_ENOENT : FDX_EIO;
    lr->own_fd = 1;
    return FDX_OK;
}

void fdx_lr_open_mem(fdx_linereader *lr, const char *data, size_t len, size_t max_line)
{
    static char empty[1];
    init(lr, max_line);
    lr->borrowed = 1;
    lr->buf = len ? (char *)data : empty;
    lr->cap = lr->end = len;
    lr->bytes = len;
    lr->eof = 1;
    fdx_sha256_update(&lr->hash, data, len);
}

void fdx_lr_read_into(fdx_linereader *lr, fdx_slab_pool *slabs)
{
    if (lr->borrowed || lr->buf)
        return;
    size_t used;
    lr->slabs = slabs;
    lr->slab = fdx_slab_unpark(slabs, &used);
    if (lr->slab) {
        lr->buf = lr->slab->data + used;
        lr->cap = lr->slab->cap - used;
    }
}

uint64_t fdx_lr_consumed(const fdx_linereader *lr)
{
    return lr->bytes - (lr->end - lr->start);
}

void fdx_lr_close(fdx_linereader *lr)
{
    if (lr->own_fd && lr->fd >= 0)
        close(lr->fd);
    if (lr->slab)
        fdx_slab_park(lr->slabs, lr->slab, (size_t)(lr->buf - lr->slab->data) + lr->end);
    else if (!lr->borrowed)
        free(lr->buf);
    lr->slab = NULL;
    lr->buf = NULL;
    lr->fd = -1;
}

/* Room after end in the pool's blocks. A block only the reader holds is
 * compacted once full, as a buffer of its own would be; otherwise the unread
 * bytes go to a new block with room for a read beside them, as large as a
 * line of up to max_line bytes needs. */
static int slab_room(fdx_linereader *lr)
{
    if (lr->slab && lr->end < lr->cap)
        return 0;
    size_t unread = lr->end - lr->start;
    if (lr->slab && lr->slab->holders == 1 && lr->start > 0) {
        memmove(lr->buf, lr->buf + lr->start, unread);
        lr->end = unread;
        lr->start = 0;
        return 0;
    }
    size_t most = lr->max_line + CHUNK > FDX_SLAB_BYTES ? lr->max_line + CHUNK : FDX_SLAB_BYTES;
    size_t cap = FDX_SLAB_BYTES; /* not the block's size: one long line does not make all large */
    while (cap < unread + CHUNK && cap < most)
        cap *= 2;
    if (cap > most)
        cap = most;
    if (lr->slab && cap <= unread)
        return 0; /* full, with a line over the limit: the caller skips it */
    fdx_slab *slab = fdx_slab_take(lr->slabs, cap);
    if (!slab) {
        errno = ENOMEM;
        return -1;
    }
    if (unread)
        memcpy(slab->data, lr->buf + lr->start, unread);
    if (lr->slab)
        fdx_slab_let_go(lr->slab);
    lr->slab = slab;
    lr->buf = slab->data;
    lr->cap = slab->cap;
    lr->start = 0;
    lr->end = unread;
    return 0;
}

/* Makes room after end: compacts, then grows up to max_line + CHUNK bytes. */
static int make_room(fdx_linereader *lr)
{
    if (lr->slabs)
        return slab_room(lr);
    if (lr->start > 0) {
        memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
        lr->end -= lr->start;
        lr->start = 0;
    }
    if (lr->end < lr->cap)
        return 0;
    size_t cap = lr->cap ? lr->cap * 2 : CHUNK;
    if (cap > lr->max_line + CHUNK)
        cap = lr->max_line + CHUNK;
    if (cap <= lr->cap)
        return 0;
    char *p = realloc(lr->buf, cap);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    lr->buf = p;
    lr->cap = cap;
    return 0;
}

/* Reads more data; 1 if some arrived (or the buffer is full), 0 at EOF, -1 on error. */
static int fill(fdx_linereader *lr)
{
    if (lr->eof)
        return 0;
    if (make_room(lr) != 0)
        return -1;
    if (lr->end == lr->cap)
        return 1;
    for (;;) {
        ssize_t got = read(lr->fd, lr->buf + lr->end, lr->cap - lr->end);
        if (got > 0) {
            fdx_sha256_update(&lr->hash, lr->buf + lr->end, (size_t)got);
            lr->end += (size_t)got;
            lr->bytes += (uint64_t)got;
            return 1;
        }
        if (got == 0) {
            lr->eof = 1;
            return 0;
        }
        if (errno != EINTR)
            return -1;
    }
}

static void skipped(fdx_linereader *lr, const char *p, size_t n)
{
    if (lr->on_skip && n)
        lr->on_skip(lr->skip_ctx, p, n);
}

/* Discards an over-long line, up to and including its '\n'. */
static int skip_line(fdx_linereader *lr)
{
    for (;;) {
        char *from = lr->buf + lr->start;
        char *nl = memchr(from, '\n', lr->end - lr->start);
        if (nl) {
            skipped(lr, from, (size_t)(nl - from));
            lr->start = (size_t)(nl - lr->buf) + 1;
            return FDX_LR_TOO_LONG;
        }
        skipped(lr, from, lr->end - lr->start);
        lr->start = lr->end;
        int r = fill(lr);
        if (r < 0)
            return FDX_LR_ERROR;
        if (r == 0)
            return FDX_LR_TOO_LONG;
    }
}

/* A line's length against the limit: without the CR of a CRLF ending (or,
 * before its LF is read, of one that may be), so that a feed with Windows
 * line endings meets the limit where the same feed with LF endings does. */
static size_t measured(const char *line, size_t n)
{
    return n && line[n - 1] == '\r' ? n - 1 : n;
}

int fdx_lr_next(fdx_linereader *lr, const char **line, size_t *len)
{
    size_t scanned = 0;
    if (!lr->buf && fill(lr) < 0)
        return FDX_LR_ERROR;
    for (;;) {
        size_t avail = lr->end - lr->start;
        char *from = lr->buf + lr->start;
        char *nl = avail > scanned ? memchr(from + scanned, '\n', avail - scanned) : NULL;
        size_t n = nl ? (size_t)(nl - from) : avail;
        if (measured(from, n) > lr->max_line) {
            lr->lineno++;
            return skip_line(lr);
        }
        if (nl || (lr->eof && avail > 0)) {
            lr->lineno++;
            *line = from;
            *len = n;
            lr->start += nl ? n + 1 : n;
            return FDX_LR_LINE;
        }
        if (lr->eof)
            return FDX_LR_EOF;
        scanned = avail;
        if (fill(lr) < 0)
            return FDX_LR_ERROR;
    }
}
