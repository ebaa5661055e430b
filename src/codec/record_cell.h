/*
 * Building a cell from an API record is validation plus encoding (dtypes and
 * candidates become the JSON the store keeps), so it lives with the encoder,
 * not with the cell identity it produces.
 */
#ifndef FDX_RECORD_CELL_H
#define FDX_RECORD_CELL_H

#include <stddef.h>

#include "cell/cell.h"
#include "common/buf.h"
#include "fdx.h"

/*
 * Builds the cell of an API record. dtypes (and, for dispatches, the
 * candidates array, into cands) are encoded into the scratch buffers, which
 * the cell then points into. Fails with FDX_EDATA and a message in err when
 * a string is missing or not valid UTF-8, FDX_ENOMEM when memory runs out.
 * trusted skips the UTF-8 check, for strings the decoder already checked.
 */
int fdx_cell_from_miss(fdx_cell *cell, const fdx_miss *m, int trusted, fdx_buf *dtypes, char *err,
                       size_t errsz);
int fdx_cell_from_dispatch(fdx_cell *cell, const fdx_dispatch *d, int trusted, fdx_buf *dtypes,
                           fdx_buf *cands, char *err, size_t errsz);

/* Validates a candidates list and writes it as its stored JSON into out. */
int fdx_cands_encode(const fdx_candidate *cands, size_t n, int trusted, fdx_buf *out, char *err,
                     size_t errsz);

#endif
