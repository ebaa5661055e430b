/*
 * Decoding threads do not take the CPU from the thread that called fdx when
 * they wake. An ingest's calling thread reads the input, takes each decoded
 * batch back in order, spills and writes the store, and hands the decoders a
 * batch at a time: a decoder woken by a new batch could preempt it, and its
 * reading stalled behind the decoding it was feeding. Where the scheduler has a batch policy
 * (Linux's SCHED_BATCH), a decoding thread takes it: the same share of the CPU as before, on a busy
 * host too, but no preempting on wake-up. A thread that starts in another
 * policy than the default (a caller's real-time or idle one) keeps it;
 * elsewhere than Linux nothing changes.
 */
#ifndef FDX_THREAD_PRIO_H
#define FDX_THREAD_PRIO_H

/* Called first thing on a thread that works ahead of its creator. */
void fdx_thread_defer(void);

#endif
