/*
 * sc_parallel.c - fork-join over a persistent pool of POSIX threads (see
 * sc_parallel_internal.h).
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
    #define _POSIX_C_SOURCE 200809L
#endif
#include "sc_parallel_internal.h"

#include <stdlib.h>
#include <string.h>
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

/* one step of a polled wait (`mu` held): waits on `cv` for up to it->period seconds (or
   10 ms for a smaller period), then, if *pending (read under `mu`) is still positive,
   polls `it` with `mu` released; a stop is seen by the workers at their next check */
static void timed_wait_poll(pthread_cond_t *cv, pthread_mutex_t *mu, const int *pending,
                            sc_interrupt *it)
{
    struct timespec ts;
    const double p = it->period > 0.01 ? it->period : 0.01;
    double t = now_seconds() + p;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(cv, mu, &ts);
    if (*pending > 0) {
        pthread_mutex_unlock(mu);
        sc_interrupt_check(it);
        pthread_mutex_lock(mu);
    }
}

/* the calling thread's wait for its workers, polling `it` (timed_wait_poll) */
static void wait_polling(join_state *js, sc_interrupt *it)
{
    pthread_mutex_lock(&js->mu);
    while (js->running > 0) {
        timed_wait_poll(&js->cv, &js->mu, &js->running, it);
    }
    pthread_mutex_unlock(&js->mu);
}

/* ---- the persistent pool ----

   Worker threads started on first need (as many as the largest job so far asked for) and
   kept, blocked on a condition variable between jobs.  One job at a time owns the pool
   (owner); a call that finds it owned (a concurrent call from another thread, or a range
   function that itself runs a parallel loop) starts threads of its own, as without the
   pool.  Which thread runs a chunk never changes what it computes.

   fork(): nothing waits; the child (one thread: the parent's workers do not exist there,
   and the pool's locks may have been held by threads of the parent) leaves the copied
   pool alone and gets a fresh one, whose workers it starts on first need. */
typedef struct pool_state pool_state;

typedef struct pool_arg {
    pool_state *P;
    int k; /* worker k runs chunk k + 1 */
} pool_arg;

struct pool_state {
    pthread_mutex_t owner;  /* held by the job that runs on the pool */
    pthread_mutex_t mu;     /* guards the fields below */
    pthread_cond_t work_cv; /* a new job (generation) or shutdown, for the workers */
    pthread_cond_t done_cv; /* the job's last worker done, for the owner */
    int nworkers;           /* started */
    int shutdown;
    unsigned long generation;           /* jobs handed out */
    unsigned long seen[SC_MAX_THREADS]; /* the last generation each worker looked at */
    chunk *chunks;                      /* the current job */
    int njob;                           /* its chunks */
    int pending;                        /* its workers not yet done */
    pthread_t threads[SC_MAX_THREADS];
    pool_arg args[SC_MAX_THREADS];
};

static pool_state pool0 = {.owner = PTHREAD_MUTEX_INITIALIZER,
                           .mu = PTHREAD_MUTEX_INITIALIZER,
                           .work_cv = PTHREAD_COND_INITIALIZER,
                           .done_cv = PTHREAD_COND_INITIALIZER};
/* the process's pool (NULL: none, after a child could not allocate its own); changed only
   by the fork child handler, when the child has one thread */
static pool_state *cur_pool = &pool0;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_on = 1; /* sc__parallel_pool */

static void *pool_main(void *arg)
{
    pool_state *P = ((pool_arg *)arg)->P;
    const int me = ((pool_arg *)arg)->k;
    pthread_mutex_lock(&P->mu);
    for (;;) {
        while (!P->shutdown && P->seen[me] == P->generation) {
            pthread_cond_wait(&P->work_cv, &P->mu);
        }
        if (P->shutdown) {
            break;
        }
        P->seen[me] = P->generation;
        if (me + 1 < P->njob) {
            chunk *c = &P->chunks[me + 1];
            pthread_mutex_unlock(&P->mu);
            run_chunk(c);
            pthread_mutex_lock(&P->mu);
            if (--P->pending == 0) {
                pthread_cond_signal(&P->done_cv);
            }
        }
    }
    pthread_mutex_unlock(&P->mu);
    return NULL;
}

static void pool_child(void)
{
    pool_state *P = (pool_state *)malloc(sizeof(pool_state));
    if (P != NULL) {
        memset(P, 0, sizeof *P);
        if (pthread_mutex_init(&P->owner, NULL) != 0 || pthread_mutex_init(&P->mu, NULL) != 0 ||
            pthread_cond_init(&P->work_cv, NULL) != 0 ||
            pthread_cond_init(&P->done_cv, NULL) != 0) {
            P = NULL; /* (not freed: what failed to initialize is not destroyed) */
        }
    }
    /* the copied pool is left as it is (its memory, if it was a child's, stays) */
    cur_pool = P;
}

static void pool_init(void)
{
    pthread_atfork(NULL, NULL, pool_child);
}

/* the owner's wait for its workers, polling `it` (NULL: none) as wait_polling does */
static void pool_wait(pool_state *P, sc_interrupt *it)
{
    pthread_mutex_lock(&P->mu);
    while (P->pending > 0) {
        if (it == NULL) {
            pthread_cond_wait(&P->done_cv, &P->mu);
        } else {
            timed_wait_poll(&P->done_cv, &P->mu, &P->pending, it);
        }
    }
    P->chunks = NULL;
    P->njob = 0;
    pthread_mutex_unlock(&P->mu);
}

/* chunks 1..nthreads-1 on the pool's workers (started as needed), chunk 0 and those of
   workers that could not be started on the calling thread; 0 (nothing run) when the
   pool is off, missing or owned by another job */
static int pool_run(chunk *chunks, int nthreads, sc_interrupt *it)
{
    pool_state *P;
    int t, usable;
    if (!LOAD_FLAG(&pool_on) || pthread_once(&pool_once, pool_init) != 0 ||
        (P = cur_pool) == NULL || pthread_mutex_trylock(&P->owner) != 0) {
        return 0;
    }
    pthread_mutex_lock(&P->mu);
    while (P->nworkers < nthreads - 1) {
        const int k = P->nworkers;
        P->seen[k] = P->generation;
        P->args[k].P = P;
        P->args[k].k = k;
        if (pthread_create(&P->threads[k], NULL, pool_main, &P->args[k]) != 0) {
            break;
        }
        P->nworkers++;
    }
    usable = P->nworkers < nthreads - 1 ? P->nworkers : nthreads - 1;
    P->chunks = chunks;
    P->njob = 1 + usable;
    P->pending = usable;
    P->generation++;
    pthread_cond_broadcast(&P->work_cv);
    pthread_mutex_unlock(&P->mu);
    run_chunk(&chunks[0]);
    for (t = 1 + usable; t < nthreads; t++) {
        run_chunk(&chunks[t]);
    }
    pool_wait(P, it != NULL && it->poll != NULL && it->caller == NULL ? it : NULL);
    pthread_mutex_unlock(&P->owner);
    return 1;
}
#endif

int sc__parallel_pool(int on)
{
#if SC_HAVE_PTHREADS
    const int was = LOAD_FLAG(&pool_on);
    if (on >= 0) {
        STORE_FLAG(&pool_on, on != 0);
    }
    return was;
#else
    (void)on;
    return 0;
#endif
}

void sc__parallel_shutdown(void)
{
#if SC_HAVE_PTHREADS
    pool_state *P = cur_pool;
    int k, n;
    if (P == NULL) {
        return;
    }
    pthread_mutex_lock(&P->owner);
    pthread_mutex_lock(&P->mu);
    P->shutdown = 1;
    n = P->nworkers;
    pthread_cond_broadcast(&P->work_cv);
    pthread_mutex_unlock(&P->mu);
    for (k = 0; k < n; k++) {
        pthread_join(P->threads[k], NULL);
    }
    pthread_mutex_lock(&P->mu);
    P->nworkers = 0;
    P->shutdown = 0;
    pthread_mutex_unlock(&P->mu);
    pthread_mutex_unlock(&P->owner);
#endif
}

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
    if (nthreads > 1 && pool_run(chunks, nthreads, it)) {
        /* done on the pool */
    } else {
        /* threads of this call; with an interrupt, the calling thread waits on a condition variable
           in steps of its poll period instead of blocking in pthread_join */
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
