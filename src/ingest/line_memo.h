/*
 * Lines seen before, but for their numbers: feeds repeat each cell run after
 * run with only the count changed, and a dispatch's candidates with only
 * their latencies changed. A line whose other bytes equal an earlier line's,
 * with plain digits in the same places, decodes to that line's cell (and
 * candidates, with the new latencies) without being parsed again.
 *
 * The places ("holes") are the digits after the line's last `"count":` and
 * after every `"latency_ns":`. A line is remembered only when those are
 * exactly its count and its candidates' latencies as the decoder read them;
 * a later line with the same bytes around the same holes has the same
 * structure, so the same meaning.
 */
#ifndef FDX_LINE_MEMO_H
#define FDX_LINE_MEMO_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cell/cell.h"
#include "common/buf.h"
#include "common/keymap.h"

struct fdx_decoder;

#define FDX_MEMO_HOLES 16

/* A memo that finds few of the lines it is asked about costs more than it
 * saves: on lines that never repeat, cutting a line, looking it up and
 * learning it cost about what decoding it does. After a window of
 * FDX_MEMO_WINDOW lookups that found fewer than a quarter of their lines
 * (counting those a larger memo would have held: see line_memo.c), the
 * memo rests (neither finds nor learns) for the next FDX_MEMO_REST lines,
 * keeping what it knows, then looks again. */
#define FDX_MEMO_WINDOW 4096
#define FDX_MEMO_REST   (16 * FDX_MEMO_WINDOW)

typedef struct fdx_line_memo_entry {
    size_t count_off; /* the count's place in the line without its holes */
    size_t key_off;   /* the packed cell, in memo.data */
    size_t key_len;
    uint64_t key_hash;
    size_t cands_off; /* its candidates JSON without the latencies' digits */
    size_t cands_len;
    size_t lats_off; /* per latency: its place in the line and in the JSON */
    size_t n_lats;
} fdx_line_memo_entry;

/* A line cut at its holes. */
typedef struct fdx_line_holes {
    size_t n;
    size_t count;                /* which hole is the count */
    size_t off[FDX_MEMO_HOLES];  /* where its digits are in the line */
    size_t len[FDX_MEMO_HOLES];  /* how many */
    size_t tmpl[FDX_MEMO_HOLES]; /* its place in the line without its holes */
    uint64_t hash;               /* of the line without its holes */
    uint64_t count_value;
} fdx_line_holes;

typedef struct fdx_line_memo {
    fdx_keymap lines; /* line without its holes -> entry */
    fdx_buf data;
    fdx_line_memo_entry *v;
    size_t n;
    size_t cap;
    fdx_buf tmpl;  /* the line at hand without its holes */
    fdx_buf cands; /* candidates rebuilt with new latencies */
    fdx_line_holes at;
    int cut;          /* at and tmpl are the line at hand's */
    int known;        /* and the memo has its tmpl */
    int resting;      /* the line at hand passes by */
    size_t looked;    /* lookups in this window */
    size_t found;     /* of which found */
    size_t rest;      /* lines still to pass by */
    size_t bound;     /* bytes it may keep now (line_memo.c) */
    uint64_t hits;    /* lines found, or forgotten, since it was last empty */
    uint64_t *ghosts; /* hashes of lines forgotten */
    size_t n_ghosts;
    uint64_t starts; /* times it started again */
    /* Set together by an ingest, whose budget its memos share with its
     * pending cells (lent NULL: a memo of its own): the most one may keep,
     * and what they keep past their least bound, which the pending cells
     * give up. */
    size_t most;
    atomic_size_t *lent;
    size_t lent_here; /* this memo's part of *lent */
} fdx_line_memo;

void fdx_line_memo_free(fdx_line_memo *m);

/* A line's meaning: its packed cell (and that's fdx_hash_bytes), its count
 * and its candidates' JSON. */
typedef struct fdx_line_cell {
    fdx_str key;
    uint64_t key_hash;
    uint64_t count;
    fdx_str cands;
} fdx_line_cell;

/* Whether p[0..n) is a remembered line with other digits in its holes: then
 * what it means (valid until the next call). Either way it prepares
 * fdx_line_memo_learn for the line. A resting memo finds nothing. */
int fdx_line_memo_find(fdx_line_memo *m, const char *p, size_t n, fdx_line_cell *out);
/* Remembers the line last passed to find, which dec has just decoded to
 * cell, from n_cands candidates (failing to costs speed only). */
void fdx_line_memo_learn(fdx_line_memo *m, const char *p, size_t n, const struct fdx_decoder *dec,
                         size_t n_cands, const fdx_line_cell *cell);

#endif
