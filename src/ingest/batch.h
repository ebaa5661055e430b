/*
 * A batch of ingest work: raw lines, with markers for where paths and
 * sources begin and end, and, once a worker has decoded it, the aggregated
 * cells and the errors. The cells are kept per path segment (a new segment
 * starts at every PATH_BEGIN but a batch's first entry), so each path's cells
 * can be kept or dropped as a whole even when one batch holds many paths.
 */
#ifndef FDX_BATCH_H
#define FDX_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "cell/agg.h"
#include "common/buf.h"
#include "ingest/line_memo.h"
#include "ingest/slab.h"

typedef enum fdx_entry_kind {
    FDX_E_LINE,
    FDX_E_TOO_LONG,
    FDX_E_PATH_BEGIN,
    FDX_E_SOURCE_BEGIN, /* text: the source's name */
    FDX_E_SOURCE_END,   /* text: the source's 32-byte digest */
    FDX_E_PATH_END
} fdx_entry_kind;

typedef struct fdx_entry {
    fdx_entry_kind kind;
    uint32_t off; /* text in the batch, unless line points into a block it holds */
    uint32_t len;
    const char *line;
    uint64_t lineno; /* lines; for SOURCE_END, the source's line count */
    uint64_t bytes;  /* SOURCE_END: the source's size */
    int64_t error;   /* LINE: index of its error, or -1 once decoded and kept */
    int aborted;     /* PATH_END: the path could not be read to its end */
} fdx_entry;

typedef struct fdx_batch {
    fdx_buf text;
    size_t bytes;     /* of text, and the input read for its lines in blocks */
    fdx_slab **slabs; /* the blocks it holds, in reading order */
    size_t n_slabs;
    size_t cap_slabs;
    fdx_entry *entries;
    size_t n_entries;
    size_t cap_entries;
    /* results */
    fdx_agg **segs;
    uint64_t *seg_records;
    size_t n_segs;
    size_t cap_segs;
    fdx_buf reasons;  /* NUL-separated error reasons */
    size_t *error_at; /* offset of each reason in `reasons` */
    size_t n_errors;
    size_t cap_errors;
    int failed; /* out of memory while decoding */
} fdx_batch;

fdx_batch *fdx_batch_new(void);
void fdx_batch_free(fdx_batch *b);
void fdx_batch_reset(fdx_batch *b);
/* Appends an entry (and its text); FDX_OK or FDX_ENOMEM. */
int fdx_batch_push(fdx_batch *b, fdx_entry_kind kind, const void *text, size_t len,
                   uint64_t lineno);
/* Appends a line that stays where it is, in slab, which the batch then holds
 * until it is reset; FDX_OK or FDX_ENOMEM. read (at least len) is what the
 * reader went past for it, the blank and skipped lines before it included:
 * the batch counts that against its budget, since the blocks it holds keep
 * those bytes too. */
int fdx_batch_push_held(fdx_batch *b, const char *line, size_t len, size_t read, uint64_t lineno,
                        fdx_slab *slab);
static inline const char *fdx_entry_text(const fdx_batch *b, const fdx_entry *e)
{
    return e->line ? e->line : b->text.data + e->off;
}
/* The index of the segment that entry i belongs to, given the previous one. */
static inline size_t fdx_batch_next_seg(const fdx_batch *b, size_t i, size_t seg)
{
    return i > 0 && b->entries[i].kind == FDX_E_PATH_BEGIN ? seg + 1 : seg;
}
/* Worth handing over: enough lines or bytes. */
int fdx_batch_full(const fdx_batch *b);
/* Whether a line of len bytes would take a batch that holds lines past its
 * byte budget, whose text would then grow to twice that. */
int fdx_batch_overflows(const fdx_batch *b, size_t len);
const char *fdx_batch_reason(const fdx_batch *b, int64_t error);

/* A worker's scratch for decoding batches. */
typedef struct fdx_batch_worker {
    struct fdx_decoder *dec;
    fdx_buf dtypes;
    fdx_buf cands;
    fdx_buf packed; /* a cell, packed */
    fdx_line_memo memo;
} fdx_batch_worker;

int fdx_batch_worker_init(fdx_batch_worker *w, int max_depth);
void fdx_batch_worker_free(fdx_batch_worker *w);
/* Decodes every line, aggregating the good ones into their segment in order and
 * noting the reason for each bad one. Sets b->failed when memory runs out. */
void fdx_batch_decode(fdx_batch *b, fdx_batch_worker *w);

#endif
