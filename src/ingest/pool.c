/*
 * The worker pool (see pool.h): a ring of jobs under one mutex. head, next_q
 * and tail count jobs ever finished, handed to a worker and submitted; a
 * job's slot is its count modulo the ring size.
 */
#include "ingest/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/thread_prio.h"
#include "fdx.h"

typedef enum { FREE, FILLING, QUEUED, WORKING, DONE } job_state;

typedef struct slot {
    void *job;
    job_state state;
} slot;

typedef struct worker {
    fdx_pool *pool;
    void *scratch;
    pthread_t tid;
    int started;
} worker;

struct fdx_pool {
    int threads;     /* 0: inline */
    worker *workers; /* threads of them, or one for inline use */
    slot *ring;
    size_t n_slots;
    size_t head;
    size_t next_q;
    size_t tail;
    int stop;
    int status;
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued, or stop */
    pthread_cond_t done; /* a job was run */
    fdx_pool_jobs fns;
};

int fdx_pool_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    fdx_pool *p = w->pool;
    fdx_thread_defer();
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->next_q == p->tail)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->next_q == p->tail)
            break;
        slot *s = &p->ring[p->next_q++ % p->n_slots];
        s->state = WORKING;
        pthread_mutex_unlock(&p->mu);
        p->fns.run(p->fns.ctx, s->job, w->scratch);
        pthread_mutex_lock(&p->mu);
        s->state = DONE;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

fdx_pool *fdx_pool_new(int threads, const fdx_pool_jobs *jobs)
{
    fdx_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->threads = threads > 1 ? threads : 0;
    p->fns = *jobs;
    p->n_slots = p->threads ? (size_t)p->threads + 2 : 1;
    size_t n_workers = p->threads ? (size_t)p->threads : 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->ring = calloc(p->n_slots, sizeof *p->ring);
    p->workers = calloc(n_workers, sizeof *p->workers);
    int ok = p->ring && p->workers;
    for (size_t i = 0; ok && i < p->n_slots; i++)
        ok = (p->ring[i].job = p->fns.job_new(p->fns.ctx)) != NULL;
    for (size_t i = 0; ok && i < n_workers; i++) {
        p->workers[i].pool = p;
        ok = (p->workers[i].scratch = p->fns.scratch_new(p->fns.ctx)) != NULL;
    }
    for (int i = 0; ok && i < p->threads; i++)
        ok = (p->workers[i].started =
                  pthread_create(&p->workers[i].tid, NULL, worker_main, &p->workers[i]) == 0);
    if (!ok) { /* threads that cannot start leave the jobs to run inline */
        fdx_pool_free(p);
        return threads > 1 ? fdx_pool_new(1, jobs) : NULL;
    }
    return p;
}

/* Waits for the oldest submitted job and finishes it. */
static void finish_one(fdx_pool *p)
{
    slot *s = &p->ring[p->head % p->n_slots];
    pthread_mutex_lock(&p->mu);
    while (s->state != DONE)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (p->status == FDX_OK)
        p->status = p->fns.finish(p->fns.ctx, s->job);
    s->state = FREE;
    p->head++;
}

void *fdx_pool_take(fdx_pool *p, int *rc)
{
    if (p->tail - p->head == p->n_slots)
        finish_one(p);
    if ((*rc = p->status) != FDX_OK)
        return NULL;
    slot *s = &p->ring[p->tail % p->n_slots];
    s->state = FILLING;
    return s->job;
}

int fdx_pool_submit(fdx_pool *p, void *job)
{
    slot *s = &p->ring[p->tail % p->n_slots];
    if (s->job != job || s->state != FILLING)
        return p->status ? p->status : FDX_EMISUSE;
    if (!p->threads) {
        p->fns.run(p->fns.ctx, job, p->workers[0].scratch);
        s->state = DONE;
        p->tail++;
        p->next_q++;
        finish_one(p);
        return p->status;
    }
    pthread_mutex_lock(&p->mu);
    s->state = QUEUED;
    p->tail++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return p->status;
}

int fdx_pool_drain(fdx_pool *p)
{
    while (p->head != p->tail)
        finish_one(p);
    return p->status;
}

void fdx_pool_free(fdx_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    size_t n_workers = p->threads ? (size_t)p->threads : 1;
    for (size_t i = 0; p->workers && i < n_workers; i++) {
        if (p->workers[i].started)
            pthread_join(p->workers[i].tid, NULL);
        if (p->workers[i].scratch)
            p->fns.scratch_free(p->fns.ctx, p->workers[i].scratch);
    }
    for (size_t i = 0; p->ring && i < p->n_slots; i++)
        if (p->ring[i].job)
            p->fns.job_free(p->fns.ctx, p->ring[i].job);
    free(p->workers);
    free(p->ring);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
}
