/*
 * Spilling cells to sorted runs. An ingest with more distinct cells than fit
 * in its memory budget used to write them into SQLite each time the budget
 * filled: every write touched pages all over the cell tables, so a 500k-cell
 * ingest wrote its store several times over through a page cache that held
 * a fraction of it. Here each spill is one sequential write of the cells in
 * key order; the transaction's end merges the runs and writes each cell
 * once, walking the tables from one end to the other.
 *
 * This half writes the runs (the record format is in spill_file.h); the
 * file has no name, so nothing is left behind by a kill. spill_merge.c
 * reads them back.
 */
#include "cell/spill_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/key_order.h"
#include "fdx.h"

fdx_spill *fdx_spill_new(void)
{
    fdx_spill *sp = calloc(1, sizeof *sp);
    if (sp)
        sp->fd = -1;
    return sp;
}

void fdx_spill_free(fdx_spill *sp)
{
    if (!sp)
        return;
    if (sp->fd >= 0)
        close(sp->fd);
    free(sp->dir);
    free(sp->runs);
    fdx_buf_free(&sp->out);
    free(sp);
}

size_t fdx_spill_runs(const fdx_spill *sp)
{
    return sp->n_runs;
}

int fdx_spill_fail(const fdx_spill *sp, char *err, size_t size, const char *what)
{
    snprintf(err, size, "%s a temporary file in %s: %s", what, sp->dir, strerror(errno));
    return FDX_EIO;
}

int fdx_spill_no_memory(char *err, size_t size)
{
    snprintf(err, size, "out of memory");
    return FDX_ENOMEM;
}

static int open_file(fdx_spill *sp, char *err, size_t size)
{
    static const char tail[] = "/fdx-spill-XXXXXX";
    const char *dir = getenv("TMPDIR");
    dir = dir && *dir ? dir : "/tmp";
    size_t n = strlen(dir);
    free(sp->dir);
    sp->dir = malloc(n + sizeof tail);
    if (!sp->dir)
        return fdx_spill_no_memory(err, size);
    memcpy(sp->dir, dir, n + 1);
    sp->fd = open(sp->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (sp->fd >= 0)
        return FDX_OK;
    /* filesystems without O_TMPFILE: a name, removed at once */
    memcpy(sp->dir + n, tail, sizeof tail);
    sp->fd = mkostemp(sp->dir, O_CLOEXEC);
    if (sp->fd >= 0)
        unlink(sp->dir);
    int saved = errno;
    sp->dir[n] = '\0';
    errno = saved;
    return sp->fd >= 0 ? FDX_OK : fdx_spill_fail(sp, err, size, "cannot create");
}

int fdx_spill_transfer(const fdx_spill *sp, char *p, size_t n, off_t *at, int writing)
{
    while (n) {
        ssize_t r = writing ? pwrite(sp->fd, p, n, *at) : pread(sp->fd, p, n, *at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = writing ? ENOSPC : EIO;
            return -1;
        }
        p += r;
        n -= (size_t)r;
        *at += r;
    }
    return 0;
}

static int write_at(const fdx_spill *sp, const char *p, size_t n, off_t *at)
{
    return fdx_spill_transfer(sp, (char *)p, n, at, 1); /* pwrite only reads p */
}

int fdx_spill_write_out(fdx_spill *sp, off_t *at)
{
    int rc = write_at(sp, sp->out.data, sp->out.len, at);
    fdx_buf_clear(&sp->out);
    return rc;
}

int fdx_spill_put(fdx_spill *sp, fdx_str key, uint64_t count, fdx_str cands, off_t *at)
{
    int none = fdx_cands_empty(cands);
    if (key.n > UINT32_MAX || cands.n > UINT32_MAX) {
        errno = ENOMEM;
        return -1;
    }
    fdx_spill_rec h = {(uint32_t)key.n, none ? 0 : (uint32_t)cands.n, count};
    fdx_buf_append(&sp->out, &h, sizeof h);
    fdx_buf_append(&sp->out, key.p, key.n);
    int direct = !none && cands.n >= FDX_SPILL_IO;
    if (!none && !direct)
        fdx_buf_append(&sp->out, cands.p, cands.n);
    if (sp->out.oom) {
        fdx_buf_clear(&sp->out);
        errno = ENOMEM;
        return -1;
    }
    if ((direct || sp->out.len >= FDX_SPILL_IO) && fdx_spill_write_out(sp, at) != 0)
        return -1;
    return direct ? write_at(sp, cands.p, cands.n, at) : 0;
}

/* Drops the file's bytes from end on, giving their space back. */
static void cut_at(const fdx_spill *sp, off_t end)
{
    if (ftruncate(sp->fd, end) != 0) {
        /* the space comes back when the file closes */
    }
}

/* Gives back the space of bytes no run holds any more. */
static void punch(const fdx_spill *sp, off_t start, off_t end)
{
    if (end > start &&
        fallocate(sp->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, start, end - start) != 0) {
        /* a filesystem without holes keeps them until the file is cut */
    }
}

/* Gives back the space of the n runs from first on, those next to each
 * other on the file at once (a hole frees only whole blocks). */
static void punch_runs(const fdx_spill *sp, size_t first, size_t n)
{
    size_t i = first, end = first + n;
    while (i < end) {
        size_t j = i + 1;
        while (j < end && sp->runs[j].start == sp->runs[j - 1].end)
            j++;
        punch(sp, sp->runs[i].start, sp->runs[j - 1].end);
        i = j;
    }
}

int fdx_spill_end_run(fdx_spill *sp, const char *failed, fdx_spill_run r, size_t first, size_t n,
                      char *err, size_t size)
{
    fdx_buf_clear(&sp->out);
    if (sp->out.cap > 2 * FDX_SPILL_IO) /* grown for a long key */
        (void)fdx_buf_fit(&sp->out, FDX_SPILL_IO);
    if (failed) {
        int saved = errno;
        if (r.end > r.start) /* a run cut short (a full disk) holds no space */
            cut_at(sp, r.start);
        errno = saved;
        return errno == ENOMEM ? fdx_spill_no_memory(err, size)
                               : fdx_spill_fail(sp, err, size, failed);
    }
    punch_runs(sp, first, n);
    memmove(&sp->runs[first + 1], &sp->runs[first + n],
            (sp->n_runs - first - n) * sizeof *sp->runs);
    sp->runs[first] = r;
    sp->n_runs = sp->n_runs - n + 1;
    sp->file_end = r.end;
    return FDX_OK;
}

int fdx_spill_add(fdx_spill *sp, const fdx_agg *agg, char *err, size_t size)
{
    int rc = sp->fd < 0 ? open_file(sp, err, size) : FDX_OK;
    if (rc != FDX_OK)
        return rc;
    uint32_t *order;
    if (fdx_grow(&sp->runs, &sp->cap_runs, sp->n_runs + 1, sizeof *sp->runs) ||
        fdx_agg_key_order(agg, &order) != FDX_OK)
        return fdx_spill_no_memory(err, size);
    off_t start = sp->file_end, at = start;
    size_t longest = 0;
    for (size_t i = 0, n = fdx_agg_cells(agg); rc == 0 && i < n; i++) {
        fdx_str key, cands;
        uint64_t count;
        fdx_agg_prefetch(agg, order, i, n);
        fdx_agg_get_packed(agg, order[i], &key, &count, &cands);
        if (sizeof(fdx_spill_rec) + key.n > longest)
            longest = sizeof(fdx_spill_rec) + key.n;
        rc = fdx_spill_put(sp, key, count, cands, &at);
    }
    if (rc == 0)
        rc = fdx_spill_write_out(sp, &at);
    free(order);
    return fdx_spill_end_run(sp, rc ? "writing" : NULL, (fdx_spill_run){start, at, longest},
                             sp->n_runs, 0, err, size);
}

void fdx_spill_truncate(fdx_spill *sp, size_t n)
{
    if (n >= sp->n_runs)
        return;
    sp->n_runs = n;
    sp->file_end = 0;
    for (size_t i = 0; i < n; i++)
        if (sp->runs[i].end > sp->file_end)
            sp->file_end = sp->runs[i].end;
    cut_at(sp, sp->file_end);
}
