/*
 * sc_parallel.c - fork-join over POSIX threads (see sc_parallel_internal.h).
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
    #define _POSIX_C_SOURCE 200809L
#endif
#include "sc_parallel_internal.h"

#if !defined(_WIN32)
    #include <pthread.h>
    #define SC_HAVE_PTHREADS 1
#else
    #define SC_HAVE_PTHREADS 0
#endif

typedef struct chunk {
    sc__range_fn fn;
    void *ctx;
    ptrdiff_t begin, end;
    int tid;
    int status;
} chunk;

static void run_chunk(chunk *c)
{
    c->status = c->begin < c->end ? c->fn(c->ctx, c->begin, c->end, c->tid) : SC_OK;
}

#if SC_HAVE_PTHREADS
static void *thread_main(void *arg)
{
    run_chunk((chunk *)arg);
    return NULL;
}
#endif

int sc__parallel_for(ptrdiff_t n, int nthreads, sc__range_fn fn, void *ctx)
{
    chunk chunks[SC_MAX_THREADS];
#if SC_HAVE_PTHREADS
    pthread_t threads[SC_MAX_THREADS];
    int started[SC_MAX_THREADS];
#endif
    int t, st = SC_OK;

    if (n < 0 || nthreads < 1 || fn == NULL) {
        return SC_EINVAL;
    }
    if (nthreads > SC_MAX_THREADS) {
        nthreads = SC_MAX_THREADS;
    }
    if ((ptrdiff_t)nthreads > n) {
        nthreads = n > 0 ? (int)n : 1;
    }
    /* chunk t covers [n t / T, n (t+1) / T), computed without overflow */
    for (t = 0; t < nthreads; t++) {
        ptrdiff_t q = n / nthreads, r = n % nthreads;
        chunks[t].fn = fn;
        chunks[t].ctx = ctx;
        chunks[t].tid = t;
        chunks[t].begin = q * t + (t < r ? t : r);
        chunks[t].end = chunks[t].begin + q + (t < r ? 1 : 0);
        chunks[t].status = SC_OK;
    }
#if SC_HAVE_PTHREADS
    for (t = 1; t < nthreads; t++) {
        started[t] = pthread_create(&threads[t], NULL, thread_main, &chunks[t]) == 0;
    }
    run_chunk(&chunks[0]);
    for (t = 1; t < nthreads; t++) {
        if (started[t]) {
            pthread_join(threads[t], NULL);
        } else {
            run_chunk(&chunks[t]);
        }
    }
#else
    for (t = 0; t < nthreads; t++) {
        run_chunk(&chunks[t]);
    }
#endif
    for (t = 0; t < nthreads; t++) {
        if (chunks[t].status != SC_OK) {
            st = chunks[t].status;
            break;
        }
    }
    return st;
}
