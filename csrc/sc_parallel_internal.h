/*
 * sc_parallel_internal.h - a minimal fork-join parallel loop over independent items
 * (internal).
 */
#ifndef SC_PARALLEL_INTERNAL_H
#define SC_PARALLEL_INTERNAL_H

#include "sc_common.h"

/* Work function: process items [begin, end) using thread slot `tid`
 * (0 <= tid < nthreads, so callers can hand each slot its own scratch).
 * Returns a status; the first nonzero status (lowest slot) is reported. */
typedef int (*sc__range_fn)(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid);

/*
 * Run fn over [0, n) split into `nthreads` contiguous, near-equal chunks.
 *
 * Given:
 *   n          ptrdiff_t    number of items, >= 0
 *   nthreads   int          number of chunks/threads, >= 1 (at most
 *                           SC_MAX_THREADS are used); the calling thread
 *                           runs chunk 0 and nthreads-1 threads are started
 *   fn, ctx                 work function and its context
 * Returned (function value):
 *   SC_OK, the first nonzero status returned by fn (lowest chunk first), or
 *   SC_EINVAL for n < 0, nthreads < 1 or fn == NULL.
 * Notes:
 *   1) Which thread runs which item never changes what an item computes;
 *      kernels that are per-item independent are therefore bitwise
 *      independent of nthreads.
 *   2) Threads are POSIX threads of a persistent pool: started on first need (as
 *      many as the largest call so far asked for), kept blocked between calls and
 *      reused.  One call at a time runs on the pool; a concurrent call (another
 *      thread's, or a nested one from a range function) starts and joins threads of
 *      its own, as do all calls after sc__parallel_pool(0).  After fork() the child
 *      has no workers: it leaves the copied pool alone (its locks may have been held
 *      by the parent's threads) and gets a fresh one (pthread_atfork; fork never
 *      waits).  The workers are not detached: they live, blocked, until
 *      sc__parallel_shutdown or the process's exit.  Without POSIX threads
 *      (e.g. MSVC) everything runs on the calling thread.
 *   3) If a thread cannot be started its chunk is run serially instead, and
 *      the call still returns SC_OK: results are identical either way.
 */
int sc__parallel_for(ptrdiff_t n, int nthreads, sc__range_fn fn, void *ctx);

/* Whether calls run on the persistent pool (1, the default) or on threads started per
 * call (0): sets it for on = 0 or 1 (-1: leaves it), returns the previous setting (0
 * without POSIX threads).  The results are the same either way. */
int sc__parallel_pool(int on);

/* Stop and join the pool's workers (none run after it until a call needs them again);
 * waits for a call running on the pool to finish.  For leak checkers and embedders that
 * unload the library; not needed otherwise. */
void sc__parallel_shutdown(void);

/* Set `view` up as a worker thread's view of `it` (which may be a view itself or NULL):
 * sc_interrupt_check(view) reads the caller's stop and never polls.  Returns view, or
 * NULL for it == NULL. */
sc_interrupt *sc__interrupt_view(sc_interrupt *view, sc_interrupt *it);

/*
 * sc__parallel_for whose calling thread, once its own chunk is done, waits for the
 * others polling `it` (sc_interrupt_check; NULL: none), so that a stop requested while
 * only worker threads run is seen within the poll period.  The range functions check
 * `it` themselves (chunk tid 0, on the calling thread, with sc_interrupt_check(it); the
 * others through sc__interrupt_view) and return SC_EINTERRUPTED.
 */
int sc__parallel_for_polled(ptrdiff_t n, int nthreads, sc__range_fn fn, void *ctx,
                            sc_interrupt *it);

#endif /* SC_PARALLEL_INTERNAL_H */
