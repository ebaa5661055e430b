/* The batch scheduling policy for threads that work ahead (see thread_prio.h). */
#include "common/thread_prio.h"

#include <pthread.h>
#include <sched.h>

void fdx_thread_defer(void)
{
#if defined(SCHED_BATCH)
    struct sched_param param;
    int policy;
    if (pthread_getschedparam(pthread_self(), &policy, &param) != 0 || policy != SCHED_OTHER)
        return;
    param.sched_priority = 0;
    /* Speed only: a thread left in the default policy works the same. */
    (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
#endif
}
