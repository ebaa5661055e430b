/*
 * An aggregate's cells in key order (key_order.c).
 */
#ifndef FDX_CELL_KEY_ORDER_H
#define FDX_CELL_KEY_ORDER_H

#include <stdint.h>

#include "cell/agg.h"

/*
 * The cells' arrival numbers in key order (kind, then fdx_cell_compare: the
 * order of the store's primary keys), in a malloc'd array of
 * fdx_agg_cells(agg) entries. Returns FDX_OK or FDX_ENOMEM.
 */
int fdx_agg_key_order(const fdx_agg *agg, uint32_t **order);
/* What fdx_agg_key_order holds at most, besides the strings' ranks, while
 * it sorts n cells: an entry for each and room to merge half of them. */
size_t fdx_agg_key_order_bytes(size_t n);

#endif
