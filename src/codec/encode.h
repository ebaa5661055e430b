/*
 * The JSON Lines writer: the exact bytes of docs/FORMAT.md ("The export").
 * cJSON cannot print u64 values exactly, so the writer is hand-made and byte
 * for byte equal to the reference serializer.
 */
#ifndef FDX_ENCODE_H
#define FDX_ENCODE_H

#include "cell/cell.h"
#include "common/buf.h"

void fdx_enc_string(fdx_buf *b, const char *s, size_t n);
void fdx_enc_u64(fdx_buf *b, uint64_t v);
/* ["a","b"] */
void fdx_enc_string_array(fdx_buf *b, const char *const *v, size_t n);
/* [{"impl_id":{...},"latency_ns":N},...]: the candidates array as stored. */
void fdx_enc_candidates(fdx_buf *b, const fdx_candidate *c, size_t n);
/*
 * One exported line, '\n' included. cands is the stored candidates JSON
 * (ignored for misses; omitted from the line when it is "[]").
 */
void fdx_enc_cell_line(fdx_buf *b, const fdx_cell *cell, uint64_t count, fdx_str cands);

#endif
