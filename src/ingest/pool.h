/*
 * Worker threads with ordered completion: the calling thread fills jobs and
 * submits them, workers run them, and the calling thread finishes them
 * strictly in the order they were submitted, so the outcome is the same as
 * running everything on one thread (which is what a pool of one thread does,
 * inline). The pool knows nothing of what a job is: the caller's functions
 * make, run and finish them (zstd's POOL_add(ctx, fn, opaque) is the model).
 */
#ifndef FDX_POOL_H
#define FDX_POOL_H

typedef struct fdx_pool fdx_pool;

typedef struct fdx_pool_jobs {
    void *ctx;                   /* passed to every function below */
    void *(*job_new)(void *ctx); /* an empty job; NULL when memory runs out */
    void (*job_free)(void *ctx, void *job);
    void *(*scratch_new)(void *ctx); /* one worker's own state; NULL when memory runs out */
    void (*scratch_free)(void *ctx, void *scratch);
    /* On a worker (or inline): does the job's work. */
    void (*run)(void *ctx, void *job, void *scratch);
    /* On the calling thread, in submission order: takes the job's results and
     * leaves it empty for reuse. A non-zero return stops the pool; it is
     * returned by later calls. */
    int (*finish)(void *ctx, void *job);
} fdx_pool_jobs;

/* threads <= 1 runs jobs inline, and so does a pool whose threads cannot
 * start; NULL when memory runs out. */
fdx_pool *fdx_pool_new(int threads, const fdx_pool_jobs *jobs);
/* An empty job to fill, finishing earlier jobs when none is free. On failure
 * returns NULL with the status in *rc. */
void *fdx_pool_take(fdx_pool *p, int *rc);
/* Hands a filled job over. */
int fdx_pool_submit(fdx_pool *p, void *job);
/* Waits for every submitted job and finishes it. */
int fdx_pool_drain(fdx_pool *p);
/* Stops the workers (after draining what is queued) and frees the pool. */
void fdx_pool_free(fdx_pool *p);
/* The number of worker threads to use when the caller leaves it to fdx. */
int fdx_pool_default_threads(void);

#endif
