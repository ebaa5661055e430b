/*
 * The line decoder: one JSON Lines record into an fdx_miss or fdx_dispatch
 * (docs/FORMAT.md, "Records"), on cJSON with exact u64 numbers, after a
 * one-pass fast path (decode_fast.h) for the lines it fully handles. The
 * decoded record borrows from the decoder and stays valid until the next
 * decode.
 */
#ifndef FDX_DECODE_H
#define FDX_DECODE_H

#include <stddef.h>

#include "codec/record.h"

typedef struct fdx_decoder fdx_decoder;

fdx_decoder *fdx_decoder_new(int max_depth);
void fdx_decoder_free(fdx_decoder *d);

/*
 * Decodes line[0..n) (no newline): the fast path when it takes the line, the
 * reference otherwise. Returns FDX_OK, FDX_EDATA with the reason in err
 * ("count: expected an unsigned integer, got -3"), or FDX_ENOMEM.
 */
int fdx_decode_line(fdx_decoder *d, const char *line, size_t n, fdx_record *rec, char *err,
                    size_t errsz);

/* The reference alone, in two steps: the byte-level checks, then the JSON
 * itself. */
int fdx_decode_lex(fdx_decoder *d, const char *line, size_t n, char *err, size_t errsz);
int fdx_decode_parse(fdx_decoder *d, fdx_record *rec, char *err, size_t errsz);
/* After a decode: where the value of the one top-level "count" key is, when
 * it is a number; 0 otherwise. */
int fdx_decode_count_token(const fdx_decoder *d, size_t *off, size_t *len);
/* After a decode returned a dispatch: where candidate i's latency number is,
 * when it has one; 0 otherwise. */
int fdx_decode_latency_token(const fdx_decoder *d, size_t i, size_t *off, size_t *len);

#endif
