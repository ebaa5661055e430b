/* The fork count of forks.h, raised in each child by a pthread_atfork handler. */
#include "common/forks.h"

#include <pthread.h>

static unsigned forks; /* written only in a new child, while it has one thread */
static pthread_once_t watching = PTHREAD_ONCE_INIT;

static void in_child(void)
{
    forks++;
}

static void watch(void)
{
    (void)pthread_atfork(NULL, NULL, in_child); /* without memory for it, no fork is told */
}

unsigned fdx_forks_seen(void)
{
    pthread_once(&watching, watch);
    return forks;
}
