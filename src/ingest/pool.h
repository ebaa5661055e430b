/*
 * Worker threads for ingest: the calling thread reads and fills batches,
 * workers decode and pre-aggregate them, and the calling thread takes the
 * results back strictly in the order the batches were submitted, so the
 * outcome is byte-identical to decoding everything on one thread (which is
 * what a pool of one thread does, inline).
 */
#ifndef FDX_POOL_H
#define FDX_POOL_H

#include "ingest/batch.h"

typedef struct fdx_pool fdx_pool;

/* Called on the calling thread for each decoded batch, in submission order.
 * A non-zero return stops the pool; it is returned by later calls. */
typedef int (*fdx_batch_done_fn)(void *ctx, fdx_batch *b);

/* threads <= 1 decodes inline; NULL when memory or threads run out. */
fdx_pool *fdx_pool_new(int threads, int max_depth, fdx_batch_done_fn done, void *ctx);
/* An empty batch to fill, finishing earlier batches when none is free. On
 * failure returns NULL with the status in *rc. */
fdx_batch *fdx_pool_take(fdx_pool *p, int *rc);
/* Hands a filled batch over. */
int fdx_pool_submit(fdx_pool *p, fdx_batch *b);
/* Waits for every submitted batch and finishes it. */
int fdx_pool_drain(fdx_pool *p);
/* Stops the workers (after draining what is queued) and frees the pool. */
void fdx_pool_free(fdx_pool *p);
/* The number of worker threads to use when the caller leaves it to fdx. */
int fdx_pool_default_threads(void);

#endif
