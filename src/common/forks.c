/* The fork count of forks.h, raised in each child by a pthread_atfork
 * handler, and the locks taken around every fork. */
#include "common/forks.h"

static unsigned forks; /* written only in a new child, while it has one thread */
static pthread_once_t watching = PTHREAD_ONCE_INIT;

enum { MAX_GUARDED = 8 };
static struct {
    pthread_mutex_t *mu; /* or: */
    void (*lock)(void), (*unlock)(void);
} guarded[MAX_GUARDED];
static size_t n_guarded;
static pthread_mutex_t guarded_lock = PTHREAD_MUTEX_INITIALIZER;

/* In the forking thread: no other thread is inside a guarded lock when the
 * process is copied, so the child finds each free and whole. */
static void before_fork(void)
{
    pthread_mutex_lock(&guarded_lock);
    for (size_t i = 0; i < n_guarded; i++) {
        if (guarded[i].mu)
            pthread_mutex_lock(guarded[i].mu);
        else
            guarded[i].lock();
    }
}

static void after_fork(void)
{
    for (size_t i = n_guarded; i-- > 0;) {
        if (guarded[i].mu)
            pthread_mutex_unlock(guarded[i].mu);
        else
            guarded[i].unlock();
    }
    pthread_mutex_unlock(&guarded_lock);
}

static void in_child(void)
{
    forks++;
    after_fork();
}

static void watch(void)
{
    /* without memory for it, no fork is told */
    (void)pthread_atfork(before_fork, after_fork, in_child);
}

unsigned fdx_forks_seen(void)
{
    pthread_once(&watching, watch);
    return forks;
}

/* Notes a lock once (a child may register again what its parent had). */
static void guard(pthread_mutex_t *mu, void (*lock)(void), void (*unlock)(void))
{
    pthread_once(&watching, watch);
    pthread_mutex_lock(&guarded_lock);
    int known = 0;
    for (size_t i = 0; i < n_guarded && !known; i++)
        known = guarded[i].mu == mu && guarded[i].lock == lock;
    if (!known && n_guarded < MAX_GUARDED) {
        guarded[n_guarded].mu = mu;
        guarded[n_guarded].lock = lock;
        guarded[n_guarded++].unlock = unlock;
    }
    pthread_mutex_unlock(&guarded_lock);
}

void fdx_forks_guard(pthread_mutex_t *mu)
{
    guard(mu, NULL, NULL);
}

void fdx_forks_guard_calls(void (*lock)(void), void (*unlock)(void))
{
    guard(NULL, lock, unlock);
}
