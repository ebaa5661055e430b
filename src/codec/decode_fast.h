/*
 * The fast path of line decoding: one pass over the bytes of a record as
 * feeds spell it (docs/FORMAT.md, "Records") straight into an fdx_record,
 * without the lexer and cJSON. It decides nothing on its own: a line it does
 * not fully handle is "not mine" and goes to the reference decoder
 * (decode.c), which alone rejects lines and words the reasons. What it
 * accepts, the reference accepts with the same record and the same number
 * positions; tests/fuzz/fuzz_decode_fast.c checks that on any input.
 */
#ifndef FDX_DECODE_FAST_H
#define FDX_DECODE_FAST_H

#include <stddef.h>

#include "codec/record.h"

typedef struct fdx_fast_decoder fdx_fast_decoder;

fdx_fast_decoder *fdx_fast_decoder_new(void);
void fdx_fast_decoder_free(fdx_fast_decoder *f);

/*
 * Decodes line[0..n) (no newline) into rec as the reference decoder with
 * this nesting limit would, and returns 1; or returns 0 when the line is not
 * one it handles (rec is then undefined). The record borrows from f until
 * its next call.
 */
int fdx_fast_decode(fdx_fast_decoder *f, const char *line, size_t n, int max_depth,
                    fdx_record *rec);
/* After a line was decoded: where its count's digits are. */
void fdx_fast_count_token(const fdx_fast_decoder *f, size_t *off, size_t *len);
/* After a dispatch was decoded: where candidate i's latency digits are,
 * when it has a latency; 0 otherwise. */
int fdx_fast_latency_token(const fdx_fast_decoder *f, size_t i, size_t *off, size_t *len);

#endif
