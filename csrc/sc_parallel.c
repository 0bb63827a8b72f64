/*
 * sc_parallel.c - fork-join over POSIX threads (see sc_parallel_internal.h).
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
    #define _POSIX_C_SOURCE 200809L
#endif
#include "sc_parallel_internal.h"

#include <time.h>

#if !defined(_WIN32)
    #include <pthread.h>
    #define SC_HAVE_PTHREADS 1
#else
    #define SC_HAVE_PTHREADS 0
#endif

#if defined(__GNUC__) || defined(__clang__)
    #define LOAD_FLAG(p) __atomic_load_n((p), __ATOMIC_RELAXED)
    #define STORE_FLAG(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#else
    #define LOAD_FLAG(p) (*(p))
    #define STORE_FLAG(p, v) (*(p) = (v))
#endif

/* wall-clock time (s), as pthread_cond_timedwait reads it */
static double now_seconds(void)
{
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) != TIME_UTC) {
        return 0.0;
    }
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the clock of the interrupt's period: a coarse monotonic clock where there is one (a few
   nanoseconds to read, ticks of 1-4 ms, fine for a period of milliseconds) */
static double poll_seconds(void)
{
#if defined(CLOCK_MONOTONIC_COARSE)
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0) {
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    }
#endif
    return now_seconds();
}

void sc_interrupt_init(sc_interrupt *it, int (*poll)(void *ctx), void *ctx, double period)
{
    it->poll = poll;
    it->ctx = ctx;
    it->period = period >= 0.0 ? period : 0.0;
    it->stop = 0;
    it->last = poll_seconds();
    it->caller = NULL;
}

sc_interrupt *sc__interrupt_view(sc_interrupt *view, sc_interrupt *it)
{
    if (it == NULL) {
        return NULL;
    }
    view->poll = NULL;
    view->ctx = NULL;
    view->period = it->period;
    view->stop = 0;
    view->last = 0.0;
    view->caller = it->caller ? it->caller : it;
    return view;
}

int sc_interrupt_check(sc_interrupt *it)
{
    double t;
    if (it == NULL) {
        return 0;
    }
    if (it->caller) {
        return LOAD_FLAG(&it->caller->stop) != 0;
    }
    if (LOAD_FLAG(&it->stop)) {
        return 1;
    }
    if (it->poll == NULL) {
        return 0;
    }
    t = poll_seconds();
    if (t - it->last < it->period && t >= it->last) { /* a clock set back: poll now */
        return 0;
    }
    it->last = t;
    if (it->poll(it->ctx)) {
        STORE_FLAG(&it->stop, 1);
        return 1;
    }
    return 0;
}

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
/* what the workers of one call share with the calling thread's wait */
typedef struct join_state {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running; /* workers not yet finished */
} join_state;

typedef struct worker {
    chunk *c;
    join_state *js;
} worker;

static void *thread_main(void *arg)
{
    worker *w = (worker *)arg;
    run_chunk(w->c);
    if (w->js) {
        pthread_mutex_lock(&w->js->mu);
        w->js->running--;
        pthread_cond_signal(&w->js->cv);
        pthread_mutex_unlock(&w->js->mu);
    }
    return NULL;
}

/* the calling thread's wait for its workers, polling `it` every it->period seconds (or
   every 10 ms for a smaller period): a stop is seen by the workers at their next check */
static void wait_polling(join_state *js, sc_interrupt *it)
{
    pthread_mutex_lock(&js->mu);
    while (js->running > 0) {
        struct timespec ts;
        const double p = it->period > 0.01 ? it->period : 0.01;
        double t = now_seconds() + p;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&js->cv, &js->mu, &ts);
        if (js->running > 0) {
            pthread_mutex_unlock(&js->mu);
            sc_interrupt_check(it);
            pthread_mutex_lock(&js->mu);
        }
    }
    pthread_mutex_unlock(&js->mu);
}
#endif

int sc__parallel_for(ptrdiff_t n, int nthreads, sc__range_fn fn, void *ctx)
{
    return sc__parallel_for_polled(n, nthreads, fn, ctx, NULL);
}

int sc__parallel_for_polled(ptrdiff_t n, int nthreads, sc__range_fn fn, void *ctx, sc_interrupt *it)
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
    {
        /* with an interrupt, the calling thread waits on a condition variable in steps
           of its poll period instead of blocking in pthread_join */
        join_state js;
        worker workers[SC_MAX_THREADS];
        const int polled = it != NULL && it->poll != NULL && it->caller == NULL && nthreads > 1 &&
                           pthread_mutex_init(&js.mu, NULL) == 0;
        if (polled && pthread_cond_init(&js.cv, NULL) != 0) {
            pthread_mutex_destroy(&js.mu);
            return sc__parallel_for_polled(n, nthreads, fn, ctx, NULL);
        }
        js.running = 0;
        for (t = 1; t < nthreads; t++) {
            workers[t].c = &chunks[t];
            workers[t].js = polled ? &js : NULL;
            if (polled) {
                pthread_mutex_lock(&js.mu);
                js.running++;
                pthread_mutex_unlock(&js.mu);
            }
            started[t] = pthread_create(&threads[t], NULL, thread_main, &workers[t]) == 0;
            if (!started[t] && polled) {
                pthread_mutex_lock(&js.mu);
                js.running--;
                pthread_mutex_unlock(&js.mu);
            }
        }
        run_chunk(&chunks[0]);
        if (polled) {
            wait_polling(&js, it);
        }
        for (t = 1; t < nthreads; t++) {
            if (started[t]) {
                pthread_join(threads[t], NULL);
            } else {
                run_chunk(&chunks[t]);
            }
        }
        if (polled) {
            pthread_cond_destroy(&js.cv);
            pthread_mutex_destroy(&js.mu);
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
