/*
 * Aggregated cells that do not fit in memory, kept as runs sorted in key
 * order on an unnamed temporary file until the transaction writes them all
 * at once, merged (spill.c writes them, spill_merge.c merges them).
 */
#ifndef FDX_CELL_SPILL_H
#define FDX_CELL_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "cell/agg.h"
#include "cell/cell.h"

typedef struct fdx_spill fdx_spill;

fdx_spill *fdx_spill_new(void);
/* Closes (so removes) the file. */
void fdx_spill_free(fdx_spill *sp);
size_t fdx_spill_runs(const fdx_spill *sp);
/* Appends agg's cells, in key order, as the newest run. The file is made
 * in $TMPDIR (or /tmp) at the first run. FDX_OK, FDX_ENOMEM, or FDX_EIO with
 * the reason in err. */
int fdx_spill_add(fdx_spill *sp, const fdx_agg *agg, char *err, size_t size);
/* Forgets every run after the first n, giving their space back. */
void fdx_spill_truncate(fdx_spill *sp, size_t n);

/* Called once per distinct cell, in key order; a non-FDX_OK return stops. */
typedef int (*fdx_spill_fn)(void *ctx, const fdx_cell *cell, uint64_t count, fdx_str cands);
/* The cells of every run and of newest (an aggregate newer than them all),
 * merged: counts summed (saturating), the newest non-empty candidates kept.
 * The runs stay; fn's status, FDX_ENOMEM, or FDX_EIO with err. */
int fdx_spill_merge(fdx_spill *sp, const fdx_agg *newest, fdx_spill_fn fn, void *ctx, char *err,
                    size_t size);

#endif
