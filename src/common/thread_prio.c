/* The batch scheduling policy for threads that work ahead (see thread_prio.h). */
#include "common/thread_prio.h"

#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

void fdx_thread_defer(void)
{
#if defined(__linux__) && defined(SCHED_BATCH) && defined(SYS_sched_setscheduler)
    /* The kernel's own calls, for this thread alone: glibc's pthread calls
     * answer from a cache a caller's sched_setscheduler does not update, and
     * musl's sched_* refuse. */
    struct sched_param param = {0};
    if (syscall(SYS_sched_getscheduler, 0) != SCHED_OTHER)
        return;
    /* Speed only: a thread left in the default policy works the same. */
    (void)syscall(SYS_sched_setscheduler, 0, SCHED_BATCH, &param);
#endif
}
