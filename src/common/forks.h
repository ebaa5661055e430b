/*
 * Telling a process forked from the one that made a handle. A child shares
 * its parent's SQLite connections, file locks, temporary files and server
 * sessions: a call there would commit into the parent's transaction or tear
 * its connection down. A handle notes the count of forks this process has
 * seen when it is made, and refuses to work once that count differs.
 */
#ifndef FDX_FORKS_H
#define FDX_FORKS_H

#include <pthread.h>

/* How many forks led to this process since the first call (the count is
 * kept from then on). */
unsigned fdx_forks_seen(void);

/* Takes mu (a mutex of the library's, static) around every fork from now
 * on: a child copied while another thread held it would wait for it for
 * ever. Called once for each mutex, before its first lock. */
void fdx_forks_guard(pthread_mutex_t *mu);
/* The same for locks taken and released by calls (a library's own), taken
 * after the mutexes registered before them. */
void fdx_forks_guard_calls(void (*lock)(void), void (*unlock)(void));

#endif
