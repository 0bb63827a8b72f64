/*
 * test_core.c - dependency-free tests of the softcontact C core (csrc/sc_*.c).
 * Built with -std=c11 -Wall -Wextra -Wpedantic -Werror and run under
 * AddressSanitizer/UBSan and valgrind by tests/c/Makefile (see .ci/run).
 * Exit status 0 when every check passes; prints "N passed, N failed".
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_vec_generic.h" /* the portable exp, tested against libm */
#include "softcontact.h"
/* white-box: the internal layout constants, the SSDF's cheap logarithm, the contact
   model's compiled variants and the parallel loop */
#include "sc_cloud_internal.h"
#include "sc_contact_internal.h"
#include "sc_parallel_internal.h"
#include "sc_ssdf_internal.h"

static int n_pass, n_fail;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            n_pass++;                                                                              \
        } else {                                                                                   \
            n_fail++;                                                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

/* run options as an argument: OPT(isa, dense, nthreads) */
#define OPT(isa, dense, nthreads) (&(const sc_options){(isa), (dense), (nthreads), NULL})

/* deterministic uniform numbers in [0, 1) (64-bit LCG, top 53 bits) */
static unsigned long long rng_state = 0x9E3779B97F4A7C15ULL;
static double urand(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

typedef struct cloud_data {
    int dim;
    ptrdiff_t n;
    double *p, *nrm, *w, *packed;
    sc_packed_cloud pc;
} cloud_data;

/* random cloud: points in [-1, 1]^D, unit normals, weights in [0.5, 2] */
static void make_cloud(cloud_data *c, int dim, ptrdiff_t n)
{
    ptrdiff_t i;
    int k;
    sc_cloud view;
    c->dim = dim;
    c->n = n;
    c->p = malloc(sizeof(double) * (size_t)(n * dim));
    c->nrm = malloc(sizeof(double) * (size_t)(n * dim));
    c->w = malloc(sizeof(double) * (size_t)n);
    c->packed = malloc(sizeof(double) * (size_t)sc_cloud_packed_size(dim, n));
    for (i = 0; i < n; i++) {
        double nn = 0.0;
        for (k = 0; k < dim; k++) {
            c->p[i * dim + k] = 2.0 * urand() - 1.0;
            c->nrm[i * dim + k] = 2.0 * urand() - 1.0;
            nn += c->nrm[i * dim + k] * c->nrm[i * dim + k];
        }
        for (k = 0; k < dim; k++) {
            c->nrm[i * dim + k] /= sqrt(nn);
        }
        c->w[i] = 0.5 + 1.5 * urand();
    }
    view.dim = dim;
    view.n = n;
    view.p = c->p;
    view.nrm = c->nrm;
    view.wts = c->w;
    CHECK(sc_cloud_pack(&view, c->packed, &c->pc) == SC_OK, "pack");
}

static void free_cloud(cloud_data *c)
{
    free(c->p);
    free(c->nrm);
    free(c->w);
    free(c->packed);
}

/* naive reference: phi and grad from the definition (libm exp, two passes) */
static void naive(const cloud_data *c, double eps, const double *x, double *phi, double *g)
{
    ptrdiff_t i;
    int k, D = c->dim;
    double dmin = INFINITY, S = 0.0, sh = 0.0, pb[3] = {0}, nb[3] = {0}, cov[3] = {0};
    double *w = malloc(sizeof(double) * (size_t)c->n), *h = malloc(sizeof(double) * (size_t)c->n);
    for (i = 0; i < c->n; i++) {
        double d = 0.0;
        for (k = 0; k < D; k++) {
            d += (x[k] - c->p[i * D + k]) * (x[k] - c->p[i * D + k]);
        }
        w[i] = d / eps - log(c->w[i]);
        dmin = w[i] < dmin ? w[i] : dmin;
    }
    for (i = 0; i < c->n; i++) {
        w[i] = exp(dmin - w[i]);
        S += w[i];
    }
    for (i = 0; i < c->n; i++) {
        w[i] /= S;
        h[i] = 0.0;
        for (k = 0; k < D; k++) {
            h[i] += c->nrm[i * D + k] * (x[k] - c->p[i * D + k]);
            pb[k] += w[i] * c->p[i * D + k];
            nb[k] += w[i] * c->nrm[i * D + k];
        }
        sh += w[i] * h[i];
    }
    for (i = 0; i < c->n; i++) {
        for (k = 0; k < D; k++) {
            cov[k] += w[i] * (h[i] - sh) * (c->p[i * D + k] - pb[k]);
        }
    }
    *phi = sh;
    for (k = 0; k < D; k++) {
        g[k] = nb[k] + 2.0 / eps * cov[k];
    }
    free(w);
    free(h);
}

static double relerr(double a, double b, double scale)
{
    return fabs(a - b) / (fabs(b) + scale);
}

static void test_status_and_isa(void)
{
    static const int codes[9] = {SC_OK,         SC_EINVAL,       SC_ENOMEM,
                                 SC_ENONFINITE, SC_ENOTUNIT,     SC_EUNSUPPORTED,
                                 SC_EDIVERGED,  SC_EINTERRUPTED, SC_ERANGE};
    int s, i, j, distinct = 1;
    for (s = -9; s <= 1; s++) {
        CHECK(sc_status_str(s) != NULL && strlen(sc_status_str(s)) > 0, "status %d", s);
    }
    CHECK(SC_OK == 0 && SC_EINVAL == -1 && SC_ENOMEM == -2 && SC_ENONFINITE == -3 &&
              SC_ENOTUNIT == -4 && SC_EUNSUPPORTED == -5 && SC_EDIVERGED == -6 &&
              SC_EINTERRUPTED == -7 && SC_ERANGE == -8,
          "status code values");
    for (i = 0; i < 9; i++) {
        distinct &= strcmp(sc_status_str(codes[i]), "unknown error") != 0;
        for (j = 0; j < i; j++) {
            distinct &= strcmp(sc_status_str(codes[i]), sc_status_str(codes[j])) != 0;
        }
    }
    CHECK(distinct, "each status code has its own message");
    CHECK(strcmp(sc_status_str(-9), "unknown error") == 0 &&
              strcmp(sc_status_str(1), "unknown warning") == 0,
          "no codes below SC_ERANGE; warnings unknown");
    CHECK(sc_isa_supported(SC_ISA_GENERIC) == 1, "generic always supported");
    CHECK(sc_isa_supported(42) == 0, "unknown isa");
    CHECK(sc_isa_resolve(SC_ISA_AUTO) == sc_isa_best(), "auto resolves to best");
    CHECK(sc_isa_resolve(7) == SC_EINVAL, "bad isa value");
    CHECK(sc_isa_resolve(SC_ISA_GENERIC) == SC_ISA_GENERIC, "generic kept");
    /* dense is an option now, no longer ISA + 16: the old encodings are unknown ISAs */
    CHECK(sc_isa_resolve(SC_ISA_AUTO + 16) == SC_EINVAL &&
              sc_isa_resolve(SC_ISA_GENERIC + 16) == SC_EINVAL &&
              sc_isa_resolve(SC_ISA_AVX512 + 16 + 1) == SC_EINVAL,
          "old dense encodings refused");
    CHECK(sc_isa_resolve(SC_ISA_AVX512 + 1) == SC_EINVAL && sc_isa_resolve(-2) == SC_EINVAL,
          "isa values next to the valid ones");
    for (s = SC_ISA_AVX2; s <= SC_ISA_AVX512; s++) {
        CHECK(sc_isa_resolve(s) == (sc_isa_supported(s) ? s : SC_EUNSUPPORTED),
              "isa %d resolves to itself or SC_EUNSUPPORTED", s);
    }
    CHECK(strcmp(sc_isa_name(SC_ISA_AVX2), "avx2") == 0, "isa name");
    CHECK(strcmp(sc_isa_name(SC_ISA_GENERIC + 16), "unknown") == 0, "no dense isa names");
    CHECK(SC_NQ(2) == 3 && SC_NQ(3) == 7 && SC_NV(2) == 3 && SC_NV(3) == 6, "pose sizes");
    /* the ENOTUNIT checks below put norms 1 + 1e-6 (refused) and 1 + 1e-12 (accepted) */
    CHECK(SC_UNIT_TOL > 1e-11 && SC_UNIT_TOL < 1e-7, "SC_UNIT_TOL %g", SC_UNIT_TOL);
    printf("# best ISA here: %s\n", sc_isa_name(sc_isa_best()));
}

/* sc_options_resolve: NULL is SC_OPTIONS_DEFAULT (auto ISA, pruned, one thread) */
static void test_options(void)
{
    const sc_options def = SC_OPTIONS_DEFAULT;
    sc_options o;
    int isa;
    CHECK(def.isa == SC_ISA_AUTO && def.dense == 0 && def.nthreads == 1, "SC_OPTIONS_DEFAULT");
    memset(&o, 0x5a, sizeof o);
    CHECK(sc_options_resolve(NULL, &o) == SC_OK && o.isa == sc_isa_best() && o.dense == 0 &&
              o.nthreads == 1,
          "NULL options: best isa %d, dense %d, threads %d", o.isa, o.dense, o.nthreads);
    CHECK(sc_options_resolve(&def, &o) == SC_OK && o.isa == sc_isa_best() && o.dense == 0 &&
              o.nthreads == 1,
          "default options");
    CHECK(sc_options_resolve(OPT(SC_ISA_GENERIC, 1, 3), &o) == SC_OK && o.isa == SC_ISA_GENERIC &&
              o.dense == 1 && o.nthreads == 3,
          "explicit options kept");
    CHECK(sc_options_resolve(OPT(SC_ISA_AUTO, 1, 2), &o) == SC_OK && o.isa == sc_isa_best() &&
              o.dense == 1 && o.nthreads == 2,
          "auto dense");
    CHECK(sc_options_resolve(OPT(SC_ISA_GENERIC, 7, 1), &o) == SC_OK && o.dense == 1,
          "dense is a truth value (resolved to 1)");
    CHECK(sc_options_resolve(OPT(SC_ISA_GENERIC, 0, SC_MAX_THREADS + 5), &o) == SC_OK &&
              o.nthreads == SC_MAX_THREADS + 5,
          "more threads than SC_MAX_THREADS accepted");
    for (isa = SC_ISA_AVX2; isa <= SC_ISA_AVX512; isa++) {
        const int st = sc_options_resolve(OPT(isa, 0, 1), &o);
        CHECK(sc_isa_supported(isa) ? st == SC_OK && o.isa == isa : st == SC_EUNSUPPORTED,
              "isa %s: status %d", sc_isa_name(isa), st);
    }
    CHECK(sc_options_resolve(OPT(7, 0, 1), &o) == SC_EINVAL, "bad isa");
    CHECK(sc_options_resolve(OPT(-2, 0, 1), &o) == SC_EINVAL, "isa below auto");
    CHECK(sc_options_resolve(OPT(SC_ISA_GENERIC + 16, 0, 1), &o) == SC_EINVAL,
          "old dense encoding");
    CHECK(sc_options_resolve(OPT(SC_ISA_AUTO, 0, 0), &o) == SC_EINVAL, "0 threads");
    CHECK(sc_options_resolve(OPT(SC_ISA_GENERIC, 0, -1), &o) == SC_EINVAL, "-1 threads");
    CHECK(sc_options_resolve(OPT(SC_ISA_GENERIC, 1, -2147483647 - 1), &o) == SC_EINVAL,
          "INT_MIN threads");
}

static void test_exp(void)
{
    double worst = 0.0, t;
    int i;
    for (i = 0; i <= 200000; i++) {
        double e, r;
        t = -708.0 * i / 200000.0;
        e = vexp_neg(t);
        r = exp(t);
        worst = fabs(e - r) / r > worst ? fabs(e - r) / r : worst;
    }
    CHECK(worst < 4.5e-16, "exp max relative error %.3g", worst);
    CHECK(vexp_neg(0.0) == 1.0, "exp(0) == 1 exactly");
    CHECK(vexp_neg(-708.5) == 0.0 && vexp_neg(-INFINITY) == 0.0, "flush below cutoff");
    CHECK(vexp_neg(NAN) == 0.0, "NaN argument gives 0");
}

/* the pruned SSDF's cheap logarithm (sc_ssdf.h): an upper bound of ln y for y >= 1, at
   most ~0.19 above it, non-decreasing (the cut from a lower bound of s* must not be
   below the cut from s*) */
static void test_ln_up(void)
{
    double prev = -INFINITY, worst = 0.0, y;
    int i, mono = 1, above = 1;
    for (i = 0; i <= 400000; i++) {
        const double v = sc__ln_up(y = pow(2.0, 1000.0 * i / 400000.0)), l = log(y);
        above = above && v >= l;
        worst = v - l > worst ? v - l : worst;
        mono = mono && v >= prev;
        prev = v;
    }
    for (i = 0; i < 100000; i++) { /* the binade edges and just below them */
        y = ldexp(1.0, i % 1000);
        above = above && sc__ln_up(y) >= log(y) && sc__ln_up(nextafter(y, 0.0)) >= log(y) - 1e-15;
        mono = mono && sc__ln_up(nextafter(y, 0.0)) <= sc__ln_up(y);
    }
    CHECK(above, "ln_up is an upper bound of ln");
    CHECK(mono, "ln_up is non-decreasing");
    CHECK(worst < 0.194, "ln_up at most %.4g above ln", worst);
    CHECK(sc__ln_up(1.0) >= 0.0 && sc__ln_up(1.0) < 0.2, "ln_up(1)");
    CHECK(sc__ln_up(INFINITY) > 700.0, "ln_up(inf) is a large cut");
}

static void test_parallel_range_fn_checks(void);

static int count_fn(void *ctx, ptrdiff_t b, ptrdiff_t e, int tid)
{
    int *seen = (int *)ctx;
    ptrdiff_t i;
    (void)tid;
    for (i = b; i < e; i++) {
        seen[i]++;
    }
    return SC_OK;
}

static int fail_fn(void *ctx, ptrdiff_t b, ptrdiff_t e, int tid)
{
    (void)ctx, (void)b, (void)e;
    return tid == 1 ? SC_ENOTUNIT : SC_OK;
}

/* chunks 1 and 2 fail: the lowest chunk's status is reported */
static int fail2_fn(void *ctx, ptrdiff_t b, ptrdiff_t e, int tid)
{
    (void)ctx, (void)b, (void)e;
    return tid == 1 ? SC_ENONFINITE : tid == 2 ? SC_EINVAL : SC_OK;
}

static void test_parallel_range_fn_checks(void)
{
    int seen[37], i, t, ok;
    for (t = 1; t <= 5; t++) {
        memset(seen, 0, sizeof seen);
        CHECK(sc__parallel_for(37, t, count_fn, seen) == SC_OK, "parallel_for ok");
        for (ok = 1, i = 0; i < 37; i++) {
            ok &= seen[i] == 1;
        }
        CHECK(ok, "each item exactly once with %d threads", t);
    }
    /* more threads than items, and than SC_MAX_THREADS */
    memset(seen, 0, sizeof seen);
    CHECK(sc__parallel_for(37, SC_MAX_THREADS + 100, count_fn, seen) == SC_OK,
          "more than SC_MAX_THREADS threads");
    for (ok = 1, i = 0; i < 37; i++) {
        ok &= seen[i] == 1;
    }
    CHECK(ok, "each item exactly once with %d threads", SC_MAX_THREADS + 100);
    CHECK(sc__parallel_for(0, 4, count_fn, seen) == SC_OK, "empty range");
    CHECK(sc__parallel_for(-1, 1, count_fn, seen) == SC_EINVAL, "negative n");
    CHECK(sc__parallel_for(5, 0, count_fn, seen) == SC_EINVAL, "zero threads");
    CHECK(sc__parallel_for(5, 1, NULL, seen) == SC_EINVAL, "NULL fn");
    CHECK(sc__parallel_for(10, 3, fail_fn, NULL) == SC_ENOTUNIT, "status propagated");
    CHECK(sc__parallel_for(10, 3, fail2_fn, NULL) == SC_ENONFINITE, "lowest chunk's status");
}

/* the persistent pool (sc_parallel_internal.h): repeated calls with the thread count
   varying, the pool off and on, a shutdown and a restart, and calls from several threads
   at once (one owns the pool, the others start threads of their own) */
typedef struct pool_caller {
    int seen[101];
    int ok;
} pool_caller;

static void *pool_caller_main(void *arg)
{
    pool_caller *c = (pool_caller *)arg;
    int r, i;
    c->ok = 1;
    for (r = 0; r < 50; r++) {
        memset(c->seen, 0, sizeof c->seen);
        c->ok &= sc__parallel_for(101, 1 + r % 5, count_fn, c->seen) == SC_OK;
        for (i = 0; i < 101; i++) {
            c->ok &= c->seen[i] == 1;
        }
    }
    return NULL;
}

static void test_parallel_pool(void)
{
    int seen[64], i, r, ok = 1, k;
    pthread_t th[3];
    pool_caller callers[3];
    for (r = 0; r < 300; r++) {
        const int nt = 1 + (r * 7) % 9;
        if (r == 100) {
            CHECK(sc__parallel_pool(0) == 1, "pool on by default");
        }
        if (r == 150) {
            CHECK(sc__parallel_pool(1) == 0, "pool was off");
        }
        if (r == 200) {
            sc__parallel_shutdown();
        }
        memset(seen, 0, sizeof seen);
        ok &= sc__parallel_for(64, nt, count_fn, seen) == SC_OK;
        for (i = 0; i < 64; i++) {
            ok &= seen[i] == 1;
        }
        ok &= sc__parallel_for(10, nt, fail2_fn, NULL) == (nt > 1 ? SC_ENONFINITE : SC_OK);
    }
    CHECK(ok, "300 calls, 1..9 threads, the pool off, on, shut down and restarted");
    for (k = 0; k < 3; k++) {
        if (pthread_create(&th[k], NULL, pool_caller_main, &callers[k]) != 0) {
            callers[k].ok = 1;
            pool_caller_main(&callers[k]);
            th[k] = pthread_self();
        }
    }
    for (ok = 1, k = 0; k < 3; k++) {
        if (!pthread_equal(th[k], pthread_self())) {
            pthread_join(th[k], NULL);
        }
        ok &= callers[k].ok;
    }
    CHECK(ok, "calls from three threads at once");
    sc__parallel_shutdown();
    sc__parallel_shutdown(); /* no workers: nothing to do */
}

/* phi, grad vs naive; all ISAs agree; bitwise invariances; FD of derivatives */

/* the spatial index (n = 3001), and a cloud without one (n = 40: the group skip against
   each query's far cut alone): pruned == dense to rounding, 1 and 2 threads (per-thread
   scratch under the sanitizers), near, inside and far queries, small to huge eps */
static void test_ssdf_pruned(int dim, int N)
{
    enum { M = 150 };
    cloud_data c;
    static const double epss[] = {1e-4, 1e-2, 1.0, 1e6};
    double *x = malloc(sizeof(double) * M * 3), *work;
    double *r[2][4];
    int e, i, v, k, D = dim, nt;
    ptrdiff_t ws;
    make_cloud(&c, dim, N);
    ws = sc_ssdf_workspace_size(&c.pc);
    CHECK(ws >= c.pc.npad, "workspace covers the dense path");
    work = malloc(sizeof(double) * 2 * (size_t)ws);
    for (v = 0; v < 2; v++) {
        r[v][0] = malloc(sizeof(double) * M);
        r[v][1] = malloc(sizeof(double) * M * 3);
        r[v][2] = malloc(sizeof(double) * M * 9);
        r[v][3] = malloc(sizeof(double) * M * 27);
    }
    for (i = 0; i < M * D; i++) {
        x[i] = 3.0 * urand() - 1.5;
    }
    for (k = 0; k < D; k++) {
        x[(M - 1) * D + k] = 1e3 * (urand() - 0.5); /* far: the expanded form */
        x[(M - 2) * D + k] = c.p[7 * D + k];        /* on a sample */
    }
    for (e = 0; e < 4; e++) {
        for (nt = 1; nt <= 2; nt++) {
            double worst[4] = {0.0, 0.0, 0.0, 0.0}, scale[4] = {0.0, 0.0, 0.0, 0.0};
            const ptrdiff_t len[4] = {M, M * D, M * D * D, M * D * D * D};
            CHECK(sc_ssdf(&c.pc, epss[e], M, x, OPT(SC_ISA_GENERIC, 0, nt), work, r[0][0], r[0][1],
                          r[0][2], r[0][3]) == SC_OK,
                  "pruned");
            CHECK(sc_ssdf(&c.pc, epss[e], M, x, OPT(SC_ISA_GENERIC, 1, nt), work, r[1][0], r[1][1],
                          r[1][2], r[1][3]) == SC_OK,
                  "dense");
            for (v = 0; v < 4; v++) {
                for (i = 0; i < len[v]; i++) {
                    const double d = fabs(r[0][v][i] - r[1][v][i]), s = fabs(r[1][v][i]);
                    worst[v] = d > worst[v] ? d : worst[v];
                    scale[v] = s > scale[v] ? s : scale[v];
                }
                if (v == 0 && scale[0] < 1.0) {
                    /* phi averages plane distances of size ~1 (the cloud's size): at huge
                       eps they cancel to less, and their rounding is relative to 1 */
                    scale[0] = 1.0;
                }
                CHECK(worst[v] <= 1e-12 * scale[v],
                      "dim %d n %d eps %g threads %d order %d: "
                      "pruned vs dense %.3g of %.3g",
                      D, N, epss[e], nt, v, worst[v], scale[v]);
            }
        }
    }
    for (v = 0; v < 2; v++) {
        for (k = 0; k < 4; k++) {
            free(r[v][k]);
        }
    }
    free(work);
    free(x);
    free_cloud(&c);
}

/* sc_interrupt: a poll that says stop after `*left` calls */
static int poll_countdown(void *ctx)
{
    int *left = (int *)ctx;
    return --*left <= 0;
}

/* the SSDF stops at its next check once a poll says so (dense and pruned, 1 and 2
   threads: the workers see the calling thread's stop); a poll that never says stop
   changes no bit; a long period never polls */
static void test_interrupt(void)
{
    enum { M = 2000 };
    cloud_data c;
    double *x = malloc(sizeof(double) * M * 3), *work, *r0, *r1;
    int i, nt, dense, left;
    sc_interrupt it;
    make_cloud(&c, 3, 3001);
    work = malloc(sizeof(double) * 2 * (size_t)sc_ssdf_workspace_size(&c.pc));
    r0 = malloc(sizeof(double) * M * 3);
    r1 = malloc(sizeof(double) * M * 3);
    for (i = 0; i < M * 3; i++) {
        x[i] = 3.0 * urand() - 1.5;
    }
    CHECK(sc_interrupt_check(NULL) == 0, "no interrupt: never stops");
    {
        /* a worker's view reads the caller's stop and never polls */
        sc_interrupt view, view2;
        left = 1;
        sc_interrupt_init(&it, poll_countdown, &left, 0.0);
        CHECK(sc__interrupt_view(&view, NULL) == NULL, "no view of no interrupt");
        CHECK(sc_interrupt_check(sc__interrupt_view(&view, &it)) == 0 && left == 1,
              "a view does not poll");
        CHECK(sc__interrupt_view(&view2, &view)->caller == &it,
              "a view of a view reads the caller");
        it.stop = 1;
        CHECK(sc_interrupt_check(&view) == 1 && sc_interrupt_check(&view2) == 1,
              "views see the caller's stop");
    }
    for (dense = 0; dense <= 1; dense++) {
        for (nt = 1; nt <= 2; nt++) {
            const sc_options plain = {SC_ISA_AUTO, dense, nt, NULL};
            sc_options o = {SC_ISA_AUTO, dense, nt, &it};
            int st;
            CHECK(sc_ssdf(&c.pc, 1e-2, M, x, &plain, work, NULL, r0, NULL, NULL) == SC_OK,
                  "ssdf without interrupt");
            left = 1;
            sc_interrupt_init(&it, poll_countdown, &left, 0.0);
            st = sc_ssdf(&c.pc, 1e-2, M, x, &o, work, NULL, r1, NULL, NULL);
            CHECK(st == SC_EINTERRUPTED && it.stop == 1 && left == 0,
                  "dense %d threads %d: stopped at the first poll (%d)", dense, nt, st);
            CHECK(sc_interrupt_check(&it) == 1, "a stop stays");
            left = 1 << 30;
            sc_interrupt_init(&it, poll_countdown, &left, 0.0);
            st = sc_ssdf(&c.pc, 1e-2, M, x, &o, work, NULL, r1, NULL, NULL);
            CHECK(st == SC_OK && left < (1 << 30) && memcmp(r0, r1, sizeof(double) * M * 3) == 0,
                  "dense %d threads %d: polled, not stopped, same bits", dense, nt);
            left = 1;
            sc_interrupt_init(&it, poll_countdown, &left, 1e9);
            CHECK(sc_ssdf(&c.pc, 1e-2, M, x, &o, work, NULL, r1, NULL, NULL) == SC_OK && left == 1,
                  "a long period never polls");
        }
    }
    free(r0);
    free(r1);
    free(work);
    free(x);
    free_cloud(&c);
}

/* the contact model's passes check the interrupt too: a cloud against a half-space (its
   samples' SSDF in closed form, which does not poll; the half-space's one query polls
   once), all samples kept (eps_c large): the second poll falls in the law's pass, which
   stops (every order); with a poll that never says stop, the same bits */
static void test_contact_interrupt(void)
{
    const sc_contact_params prm = {1e-2, 10.0, 2e3, 1e-2, 10.0, 0.5, 1e-2};
    const double pose[7] = {0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0}, vel[6] = {0.1, 0.0, -0.2};
    cloud_data c, h;
    double *work, w0[12], w1[12], *j0, *j1;
    int order, left;
    sc_interrupt it;
    make_cloud(&c, 3, 3000);
    make_cloud(&h, 3, 1);
    work = malloc(sizeof(double) * (size_t)sc_contact_workspace_size(&c.pc, &h.pc, 1));
    j0 = malloc(sizeof(double) * 12 * 24);
    j1 = malloc(sizeof(double) * 12 * 24);
    for (order = 0; order <= 1; order++) {
        sc_contact_body A = {&c.pc, pose, vel, 0}, B = {&h.pc, pose, vel, 1};
        sc_contact_out o0, o1;
        const sc_options plain = {SC_ISA_AUTO, 0, 1, NULL};
        sc_options opt = {SC_ISA_AUTO, 0, 1, &it};
        int st;
        memset(&o0, 0, sizeof o0);
        memset(&o1, 0, sizeof o1);
        o0.wrench = w0, o1.wrench = w1;
        o0.jac = order ? j0 : NULL, o1.jac = order ? j1 : NULL;
        CHECK(sc_contact(&A, &B, &prm, order, &plain, work, &o0) == SC_OK, "contact");
        left = 2;
        sc_interrupt_init(&it, poll_countdown, &left, 0.0);
        st = sc_contact(&A, &B, &prm, order, &opt, work, &o1);
        CHECK(st == SC_EINTERRUPTED && left == 0,
              "order %d: the law's pass stopped at the second poll (%d, %d left)", order, st, left);
        left = 1 << 30;
        sc_interrupt_init(&it, poll_countdown, &left, 0.0);
        st = sc_contact(&A, &B, &prm, order, &opt, work, &o1);
        CHECK(st == SC_OK && (1 << 30) - left >= 2 && memcmp(w0, w1, sizeof w0) == 0 &&
                  (!order || memcmp(j0, j1, sizeof(double) * 12 * 24) == 0),
              "order %d: polled %d times, not stopped, same bits", order, (1 << 30) - left);
    }
    free(j0);
    free(j1);
    free(work);
    free_cloud(&c);
    free_cloud(&h);
}

static void test_ssdf_values(int dim)
{
    enum { N = 61, M = 23 };
    cloud_data c;
    double x[M * 3], phi[M], g[M * 3], h[M * 9], t[M * 27], phi0[M], phi1[M], phip[M];
    double *work;
    static const double epss[] = {1e-6, 1e-3, 1e-1, 1.0, 100.0};
    int e, i, k, isa, D = dim;
    make_cloud(&c, dim, N);
    /* the documented size (a cloud without an index: npad SC_VW_MAX, the query-lane
       kernel's d_i and w_i per lane) */
    work = malloc(sizeof(double) * (size_t)sc_ssdf_workspace_size(&c.pc));
    CHECK(sc_ssdf_workspace_size(&c.pc) == c.pc.npad * SC_VW_MAX && SC_VW_MAX <= SC_PAD,
          "workspace of a cloud without an index: npad SC_VW_MAX");
    for (i = 0; i < M * D; i++) {
        x[i] = 3.0 * urand() - 1.5;
    }
    for (e = 0; e < 5; e++) {
        double eps = epss[e], worst = 0.0, worst_isa = 0.0;
        CHECK(sc_ssdf(&c.pc, eps, M, x, OPT(SC_ISA_GENERIC, 0, 1), work, phi, g, h, t) == SC_OK,
              "ssdf");
        for (i = 0; i < M; i++) {
            double pr, gr[3];
            naive(&c, eps, x + i * D, &pr, gr);
            worst = fmax(worst, relerr(phi[i], pr, 1.0));
            for (k = 0; k < D; k++) {
                worst = fmax(worst, relerr(g[i * D + k], gr[k], 1.0));
            }
        }
        CHECK(worst < 1e-11, "dim %d eps %g: generic vs naive %.3g", D, eps, worst);
        for (isa = SC_ISA_AVX2; isa <= SC_ISA_AVX512; isa++) {
            double p2[M], g2[M * 3], h2[M * 9], t2[M * 27], hs = 0.0, ts = 0.0;
            if (!sc_isa_supported(isa)) {
                CHECK(sc_ssdf(&c.pc, eps, M, x, OPT(isa, 0, 1), work, p2, NULL, NULL, NULL) ==
                          SC_EUNSUPPORTED,
                      "unsupported isa refused");
                continue;
            }
            CHECK(sc_ssdf(&c.pc, eps, M, x, OPT(isa, 0, 1), work, p2, g2, h2, t2) == SC_OK,
                  "ssdf isa");
            for (i = 0; i < M * D * D; i++) {
                hs = fmax(hs, fabs(h[i]));
            }
            for (i = 0; i < M * D * D * D; i++) {
                ts = fmax(ts, fabs(t[i]));
            }
            for (i = 0; i < M; i++) {
                worst_isa = fmax(worst_isa, relerr(p2[i], phi[i], 1.0));
            }
            for (i = 0; i < M * D; i++) {
                worst_isa = fmax(worst_isa, relerr(g2[i], g[i], 1.0));
            }
            for (i = 0; i < M * D * D; i++) {
                worst_isa = fmax(worst_isa, relerr(h2[i], h[i], hs));
            }
            for (i = 0; i < M * D * D * D; i++) {
                worst_isa = fmax(worst_isa, relerr(t2[i], t[i], ts));
            }
            CHECK(worst_isa < 1e-12, "dim %d eps %g: %s vs generic %.3g", D, eps, sc_isa_name(isa),
                  worst_isa);
        }
        /* phi bitwise identical whatever is requested, alone or batched, any thread count
           (pruned and dense); dense agrees with pruned to rounding */
        for (isa = SC_ISA_GENERIC; isa <= SC_ISA_AVX512; isa++) {
            int dense;
            if (!sc_isa_supported(isa)) {
                continue;
            }
            for (dense = 0; dense <= 1; dense++) {
                int same = 1;
                CHECK(sc_ssdf(&c.pc, eps, M, x, OPT(isa, dense, 1), work, phi0, NULL, NULL, NULL) ==
                          SC_OK,
                      "o0");
                CHECK(sc_ssdf(&c.pc, eps, M, x, OPT(isa, dense, 3), work, phi1, g, h, t) == SC_OK,
                      "o3 3 thr");
                same &= memcmp(phi0, phi1, sizeof phi0) == 0;
                for (i = 0; i < M; i++) {
                    double one;
                    CHECK(sc_ssdf(&c.pc, eps, 1, x + i * D, OPT(isa, dense, 1), work, &one, NULL, h,
                                  NULL) == SC_OK,
                          "single");
                    same &= memcmp(&one, &phi0[i], sizeof one) == 0;
                }
                CHECK(same, "bitwise invariance (%s, dense %d, eps %g)", sc_isa_name(isa), dense,
                      eps);
                if (dense == 0) {
                    memcpy(phip, phi0, sizeof phi0);
                } else {
                    double wd = 0.0;
                    for (i = 0; i < M; i++) {
                        wd = fmax(wd, fabs(phi0[i] - phip[i]));
                    }
                    CHECK(wd <= 1e-12, "%s eps %g: dense vs pruned phi %.3g", sc_isa_name(isa), eps,
                          wd);
                }
            }
        }
        /* NULL options: the defaults (auto ISA, pruned, one thread), the same bits */
        CHECK(sc_ssdf(&c.pc, eps, M, x, NULL, work, phi0, g, NULL, NULL) == SC_OK &&
                  sc_ssdf(&c.pc, eps, M, x, OPT(SC_ISA_AUTO, 0, 1), work, phi1, NULL, NULL, NULL) ==
                      SC_OK &&
                  memcmp(phi0, phi1, sizeof phi0) == 0,
              "NULL options are SC_OPTIONS_DEFAULT (eps %g)", eps);
    }
    /* hess and d3 vs central differences of the next lower order (eps = 0.1) */
    {
        const double eps = 0.1, step = 1e-5;
        double xp[3], xm[3], gp[3], gm[3], hp[9], hm[9], worst_h = 0.0, worst_t = 0.0;
        int j, q;
        CHECK(sc_ssdf(&c.pc, eps, M, x, NULL, work, phi, g, h, t) == SC_OK, "ssdf");
        for (q = 0; q < M; q++) {
            for (j = 0; j < D; j++) {
                double pv;
                memcpy(xp, x + q * D, sizeof(double) * (size_t)D);
                memcpy(xm, x + q * D, sizeof(double) * (size_t)D);
                xp[j] += step;
                xm[j] -= step;
                sc_ssdf(&c.pc, eps, 1, xp, NULL, work, &pv, gp, hp, NULL);
                sc_ssdf(&c.pc, eps, 1, xm, NULL, work, &pv, gm, hm, NULL);
                for (k = 0; k < D; k++) {
                    double fd = (gp[k] - gm[k]) / (2 * step);
                    worst_h = fmax(worst_h, relerr(h[(q * D + k) * D + j], fd, 1.0));
                }
                for (k = 0; k < D * D; k++) {
                    double fd = (hp[k] - hm[k]) / (2 * step);
                    worst_t = fmax(worst_t, relerr(t[(q * D * D + k) * D + j], fd, 10.0));
                }
            }
        }
        CHECK(worst_h < 1e-6, "dim %d: hess vs FD of grad %.3g", D, worst_h);
        CHECK(worst_t < 1e-6, "dim %d: d3 vs FD of hess %.3g", D, worst_t);
    }
    free(work);
    free_cloud(&c);
}

static void test_ssdf_special(void)
{
    /* half-space: exact plane distance for every eps; NaN rows isolated */
    double p[3] = {0.1, -0.2, 0.3}, nrm[3] = {0.0, 0.6, 0.8}, buf[12 * 8 + 8], work[2 * 16];
    double x[9] = {1.0, 2.0, 3.0, NAN, 0.0, 0.0, -4.0, 5.0, 0.5};
    double phi[3], g[9], h[27], t[81];
    sc_cloud view = {3, 1, p, nrm, NULL};
    sc_packed_cloud pc;
    int i, ok = 1;
    CHECK(sc_cloud_pack(&view, buf, &pc) == SC_OK && pc.npad == SC_PAD, "pack half-space");
    CHECK(sc_ssdf_workspace_size(&pc) <= 16, "half-space workspace fits");
    CHECK(sc_ssdf(&pc, 1e-3, 3, x, OPT(SC_ISA_AUTO, 0, 2), work, phi, g, h, t) == SC_OK, "ssdf");
    for (i = 0; i < 3; i += 2) {
        double e = nrm[0] * (x[3 * i] - p[0]) + nrm[1] * (x[3 * i + 1] - p[1]) +
                   nrm[2] * (x[3 * i + 2] - p[2]);
        ok &= fabs(phi[i] - e) <= 1e-15 * (1 + fabs(e));
        ok &= g[3 * i] == 0.0 && g[3 * i + 1] == 0.6 && g[3 * i + 2] == 0.8;
    }
    CHECK(ok, "half-space exact");
    CHECK(isnan(phi[1]) && isnan(g[3]) && isnan(h[9]) && isnan(t[27]), "NaN row");
    for (ok = 1, i = 0; i < 27; i++) {
        ok &= h[i] == 0.0 || i / 9 == 1;
    }
    CHECK(ok, "half-space Hessian exactly zero");

    /* error statuses: outputs untouched */
    phi[0] = 7.0;
    CHECK(sc_ssdf(&pc, 0.0, 1, x, NULL, work, phi, NULL, NULL, NULL) == SC_EINVAL, "eps 0");
    CHECK(sc_ssdf(&pc, -1.0, 1, x, NULL, work, phi, NULL, NULL, NULL) == SC_EINVAL, "eps < 0");
    CHECK(sc_ssdf(&pc, NAN, 1, x, NULL, work, phi, NULL, NULL, NULL) == SC_EINVAL, "eps NaN");
    CHECK(sc_ssdf(&pc, INFINITY, 1, x, NULL, work, phi, NULL, NULL, NULL) == SC_EINVAL, "eps inf");
    CHECK(sc_ssdf(&pc, 1.0, -1, x, NULL, work, phi, NULL, NULL, NULL) == SC_EINVAL, "m < 0");
    CHECK(sc_ssdf(&pc, 1.0, 1, x, OPT(SC_ISA_AUTO, 0, 0), work, phi, NULL, NULL, NULL) == SC_EINVAL,
          "0 threads");
    CHECK(sc_ssdf(&pc, 1.0, 1, NULL, NULL, work, phi, NULL, NULL, NULL) == SC_EINVAL, "NULL x");
    CHECK(sc_ssdf(NULL, 1.0, 1, x, NULL, work, phi, NULL, NULL, NULL) == SC_EINVAL, "NULL cloud");
    CHECK(sc_ssdf(&pc, 1.0, 1, x, OPT(99, 0, 1), work, phi, NULL, NULL, NULL) == SC_EINVAL,
          "bad isa");
    CHECK(phi[0] == 7.0, "outputs untouched on error");
    CHECK(sc_ssdf(&pc, 1.0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == SC_OK, "empty batch");
    pc.npad = 3;
    CHECK(sc_ssdf(&pc, 1.0, 1, x, NULL, work, phi, NULL, NULL, NULL) == SC_EINVAL,
          "malformed packed cloud");

    /* packing errors */
    CHECK(sc_cloud_packed_size(4, 10) == -1 && sc_cloud_packed_size(3, 0) == -1, "packed size");
    {
        double wbad = -1.0, pnan[3] = {NAN, 0, 0};
        sc_cloud bad = {3, 1, p, nrm, &wbad};
        CHECK(sc_cloud_pack(&bad, buf, NULL) == SC_EINVAL, "weight <= 0");
        bad.wts = NULL;
        bad.p = pnan;
        CHECK(sc_cloud_pack(&bad, buf, NULL) == SC_ENONFINITE, "NaN point");
        bad.p = p;
        bad.dim = 5;
        CHECK(sc_cloud_pack(&bad, buf, NULL) == SC_EINVAL, "bad dim");
    }
}

/* a unit quaternion (w first) of angle ang about the unit axis (ax, ay, az), times scale */
static void quat(double *q, double ang, double ax, double ay, double az, double scale)
{
    q[0] = scale * cos(0.5 * ang);
    q[1] = scale * sin(0.5 * ang) * ax;
    q[2] = scale * sin(0.5 * ang) * ay;
    q[3] = scale * sin(0.5 * ang) * az;
}

static void test_separation(void)
{
    /* 2D: A's sample at its origin (normal +y), B's sample at its origin (normal -y),
       B posed at (0.3, 0.05, 0): A's sample sits 0.05 below B's plane, B's 0.05 above A's */
    double pa[2] = {0.0, 0.0}, na[2] = {0.0, 1.0}, pb[2] = {0.0, 0.0}, nb[2] = {0.0, -1.0};
    double ka[9 * 8 + 8], kb[9 * 8 + 8], qa[3] = {0.0, 0.0, 0.0}, qb[3] = {0.3, 0.05, 0.0};
    double q3[7] = {0, 0, 0, 0, 0, 0, 0}, qnan[3] = {NAN, 0.0, 0.0};
    double work[256], phi[2], x[4], g[4], d1[12], d2[72];
    sc_cloud ca = {2, 1, pa, na, NULL}, cb = {2, 1, pb, nb, NULL};
    sc_packed_cloud A, B;
    sc_separation_out out = {NULL, NULL, NULL, NULL, NULL};
    int i, j, sym = 1;
    CHECK(sc_cloud_pack(&ca, ka, &A) == SC_OK && sc_cloud_pack(&cb, kb, &B) == SC_OK, "pack");
    CHECK(sc_separation_workspace_size(&A, &B, 1) <= 256, "workspace fits");
    out.phi = phi;
    out.x_w = x;
    out.g_w = g;
    out.dphi_dq = d1;
    out.d2phi_dq2 = d2;
    CHECK(sc_separation(&A, qa, &B, qb, 1e-3, NULL, work, &out) == SC_OK, "separation");
    CHECK(fabs(phi[0] - 0.05) < 1e-15 && fabs(phi[1] - 0.05) < 1e-15, "plane distances %g %g",
          phi[0], phi[1]);
    CHECK(g[0] == 0.0 && g[1] == -1.0 && g[2] == 0.0 && g[3] == 1.0, "world gradients");
    CHECK(x[2] == 0.3 && x[3] == 0.05, "world position of B's sample");
    /* dPhi_0/dt_A = G_0 = (0, -1); dPhi_0/dt_B = -G_0 */
    CHECK(d1[0] == 0.0 && d1[1] == -1.0 && d1[3] == 0.0 && d1[4] == 1.0, "translation derivatives");
    for (i = 0; i < 2; i++) {
        for (j = 0; j < 36; j++) {
            sym &= d2[i * 36 + j] == d2[i * 36 + (j % 6) * 6 + j / 6];
        }
    }
    CHECK(sym, "second derivatives exactly symmetric");
    out.x_w = out.g_w = out.dphi_dq = out.d2phi_dq2 = NULL;
    CHECK(sc_separation(&A, qa, &B, qb, 0.0, NULL, work, &out) == SC_EINVAL, "eps 0");
    CHECK(sc_separation(&A, qnan, &B, qb, 1e-3, NULL, work, &out) == SC_ENONFINITE, "NaN pose");
    CHECK(sc_separation(NULL, qa, &B, qb, 1e-3, NULL, work, &out) == SC_EINVAL, "NULL cloud");
    CHECK(sc_separation(&A, qa, &B, qb, 1e-3, NULL, work, NULL) == SC_EINVAL, "NULL out");
    CHECK(sc_separation(&A, qa, &B, qb, 1e-3, OPT(SC_ISA_AUTO, 0, 0), work, &out) == SC_EINVAL,
          "0 threads");
    CHECK(sc_separation(&A, qa, &B, qb, 1e-3, OPT(9, 0, 1), work, &out) == SC_EINVAL, "bad isa");
    B.dim = 3;
    CHECK(sc_separation(&A, q3, &B, q3, 1e-3, NULL, work, &out) == SC_EINVAL, "dimension mismatch");
    A.dim = 3;
    /* was SC_EINVAL: a zero quaternion is now one not of unit norm */
    CHECK(sc_separation(&A, q3, &B, q3, 1e-3, NULL, work, &out) == SC_ENOTUNIT, "zero quaternion");
}

/* 3D: quaternions must have unit norm within SC_UNIT_TOL (SC_ENOTUNIT otherwise), and
   those within it are normalized before use */
static void test_separation_unit(void)
{
    /* A's sample at its origin (normal +z), B's (normal -z), B posed 0.05 above A: each
       sample 0.05 outside the other's plane, whatever the rotations about z */
    double pa[3] = {0.0, 0.0, 0.0}, na[3] = {0.0, 0.0, 1.0}, nb[3] = {0.0, 0.0, -1.0};
    double ka[12 * 8 + 8], kb[12 * 8 + 8], work[512], phi[2], phi1[2], d1[24], d1u[24];
    double qa[7] = {0.0, 0.0, 0.0}, qb[7] = {0.3, -0.1, 0.05};
    static const double scales[4] = {1.0 + 1e-6, 1.0 - 1e-6, 1.0 + 1e-12, 1.0 - 1e-12};
    sc_cloud ca = {3, 1, pa, na, NULL}, cb = {3, 1, pa, nb, NULL};
    sc_packed_cloud A, B;
    sc_separation_out out = {NULL, NULL, NULL, NULL, NULL};
    int k, body;
    CHECK(sc_cloud_pack(&ca, ka, &A) == SC_OK && sc_cloud_pack(&cb, kb, &B) == SC_OK, "pack");
    CHECK(sc_separation_workspace_size(&A, &B, 1) <= 512, "workspace fits");
    quat(qa + 3, 0.7, 0.0, 0.0, 1.0, 1.0);
    quat(qb + 3, -1.1, 0.0, 0.0, 1.0, 1.0);
    out.phi = phi;
    out.dphi_dq = d1u;
    CHECK(sc_separation(&A, qa, &B, qb, 1e-3, NULL, work, &out) == SC_OK, "unit quaternions");
    CHECK(fabs(phi[0] - 0.05) < 1e-15 && fabs(phi[1] - 0.05) < 1e-15, "plane distances %g %g",
          phi[0], phi[1]);
    out.dphi_dq = d1;
    for (body = 0; body < 2; body++) {
        for (k = 0; k < 4; k++) {
            double q[7], *qq = body == 0 ? qa : qb;
            int st, ok;
            memcpy(q, qq, sizeof q);
            quat(q + 3, body == 0 ? 0.7 : -1.1, 0.0, 0.0, 1.0, scales[k]);
            phi1[0] = phi1[1] = 7.0;
            out.phi = phi1;
            st = body == 0 ? sc_separation(&A, q, &B, qb, 1e-3, NULL, work, &out)
                           : sc_separation(&A, qa, &B, q, 1e-3, NULL, work, &out);
            if (k < 2) {
                CHECK(st == SC_ENOTUNIT, "%s quaternion of norm 1 %+g: status %d",
                      body == 0 ? "A's" : "B's", scales[k] - 1.0, st);
                continue;
            }
            CHECK(st == SC_OK, "%s quaternion of norm 1 %+g: status %d", body == 0 ? "A's" : "B's",
                  scales[k] - 1.0, st);
            /* normalized: the unit quaternion's results to rounding */
            for (ok = 1, st = 0; st < 2; st++) {
                ok &= fabs(phi1[st] - phi[st]) <= 1e-15;
            }
            for (st = 0; st < 24; st++) {
                ok &= fabs(d1[st] - d1u[st]) <= 1e-14 * (1.0 + fabs(d1u[st]));
            }
            CHECK(ok, "%s quaternion of norm 1 %+g normalized", body == 0 ? "A's" : "B's",
                  scales[k] - 1.0);
        }
    }
}

static void test_contact(void)
{
    /* the two facing half-spaces of test_separation, B at (0.3, yb): Phi = (yb, yb), so
       pi = (1/2, 1/2), m = yb - eps_c log 2, and at rest the force on A is (0, -lambda) with
       torque -0.3 lambda / 2 (B's sample, at x = 0.3, pushes A with -lambda/2 along y) */
    double pa[2] = {0.0, 0.0}, na[2] = {0.0, 1.0}, pb[2] = {0.0, 0.0}, nb[2] = {0.0, -1.0};
    double ka[9 * 8 + 8], kb[9 * 8 + 8], qa[3] = {0.0, 0.0, 0.0}, qb[3] = {0.3, -0.002, 0.0};
    double v0[3] = {0.0, 0.0, 0.0}, vnan[3] = {0.0, NAN, 0.0}, vb[3] = {0.0, 0.1, 0.0};
    double w[6], w2[6], sc3[3], phi[2], pi[2], f[4], x[4], jac[72], hess[6 * 12 * 12], *work;
    double m, z, sp, sg, lam;
    sc_contact_params prm = {1e-5, 1e-3, 2e3, 1e-3, 10.0, 0.5, 1e-2}, bad;
    sc_cloud ca = {2, 1, pa, na, NULL}, cb = {2, 1, pb, nb, NULL};
    sc_packed_cloud A, B;
    sc_contact_body ba, bb;
    sc_contact_out out;
    ptrdiff_t ws;
    int i, j, sym = 1, fin = 1, st_ok = 1;
    CHECK(sc_cloud_pack(&ca, ka, &A) == SC_OK && sc_cloud_pack(&cb, kb, &B) == SC_OK, "pack");
    ws = sc_contact_workspace_size(&A, &B, 1);
    work = (double *)malloc((size_t)ws * sizeof(double));
    CHECK(work != NULL && ws > 0, "workspace");
    if (work == NULL) {
        return;
    }
    ba.cloud = &A, ba.pose = qa, ba.vel = v0, ba.frozen = 0;
    bb.cloud = &B, bb.pose = qb, bb.vel = v0, bb.frozen = 0;
    memset(&out, 0, sizeof out);
    out.wrench = w, out.scalars = sc3, out.phi = phi, out.pi = pi, out.forces = f, out.x_w = x;
    out.jac = jac, out.hess = hess;
    CHECK(sc_contact(&ba, &bb, &prm, 2, NULL, work, &out) == SC_OK, "contact");
    m = -0.002 - 1e-3 * log(2.0);
    z = -m / 1e-3;
    sp = 1e-3 * log1p(exp(z));
    sg = 1.0 / (1.0 + exp(-z));
    lam = 2e3 * sp * sg;
    CHECK(fabs(sc3[1] - m) < 1e-17 && fabs(sc3[2] + 0.002) < 1e-17, "depth %g (want %g)", sc3[1],
          m);
    CHECK(fabs(sc3[0] - 0.5 * 2e3 * sp * sp) < 1e-14, "energy");
    CHECK(pi[0] == 0.5 && pi[1] == 0.5, "distribution");
    CHECK(fabs(w[0]) < 1e-15 && fabs(w[1] + lam) < 1e-12 * lam &&
              fabs(w[2] + 0.15 * lam) < 1e-12 * lam,
          "wrench on A (%g %g %g), lambda %g", w[0], w[1], w[2], lam);
    CHECK(w[3] == -w[0] && w[4] == -w[1], "equal and opposite");
    for (i = 0; i < 6; i++) {
        for (j = 0; j < 144; j++) {
            sym &= hess[i * 144 + j] == hess[i * 144 + (j % 12) * 12 + j / 12];
            fin &= isfinite(hess[i * 144 + j]);
        }
    }
    CHECK(sym && fin, "second derivatives finite and exactly symmetric");
    /* d fy_A / d y_B = -d lambda/d m * dm/dy_B = -lambda'(m) (both Phi move with y_B) */
    {
        double S1 = sg * (1.0 - sg) / 1e-3, dl = -2e3 * (sg * sg + sp * S1);
        CHECK(fabs(jac[1 * 12 + 4] + dl) < 1e-9 * fabs(dl), "d fy_A / d y_B = %g, want %g",
              jac[1 * 12 + 4], -dl);
    }
    /* B frozen (static): A's derivative columns unchanged, B's zero, values identical */
    {
        double w3[6], jac3[72], hess3[6 * 12 * 12], vt[3] = {0.05, -0.08, 0.3};
        double jf[72], hf[6 * 12 * 12], w4[6], jac4[72], hess4[6 * 12 * 12];
        int same = 1, zero = 1, r, a, b2;
        ba.vel = vt;
        CHECK(sc_contact(&ba, &bb, &prm, 2, NULL, work,
                         &(const sc_contact_out){.wrench = w3, .jac = jf, .hess = hf}) == SC_OK &&
                  sc_contact(&ba, &(const sc_contact_body){&B, qb, v0, 1}, &prm, 2, NULL, work,
                             &(const sc_contact_out){.wrench = w2, .jac = jac3, .hess = hess3}) ==
                      SC_OK,
              "frozen B");
        for (r = 0; r < 6; r++) {
            same &= w2[r] == w3[r];
            for (a = 0; a < 12; a++) {
                const int fa = (a / 3) % 2 == 1; /* B's columns: dq_B (3..5), v_B (9..11) */
                same &= fa ? jac3[r * 12 + a] == 0.0
                           : fabs(jac3[r * 12 + a] - jf[r * 12 + a]) <=
                                 1e-13 * (1.0 + fabs(jf[r * 12 + a]));
                for (b2 = 0; b2 < 12; b2++) {
                    const int fb = (b2 / 3) % 2 == 1;
                    const double hv = hess3[(r * 12 + a) * 12 + b2],
                                 hw = hf[(r * 12 + a) * 12 + b2];
                    same &= fa || fb ? hv == 0.0 : fabs(hv - hw) <= 1e-12 * (1.0 + fabs(hw));
                }
            }
        }
        CHECK(same, "frozen body: same values, same derivatives for the moving body, zeros");
        /* frozen is a flag per body now (no bit mask to be out of range): any nonzero value
           freezes, the same bits as 1 */
        CHECK(sc_contact(&ba, &(const sc_contact_body){&B, qb, v0, 2}, &prm, 2, NULL, work,
                         &(const sc_contact_out){.wrench = w4, .jac = jac4, .hess = hess4}) ==
                      SC_OK &&
                  memcmp(w4, w2, sizeof w4) == 0 && memcmp(jac4, jac3, sizeof jac4) == 0 &&
                  memcmp(hess4, hess3, sizeof hess4) == 0,
              "frozen flag 2 acts as 1");
        /* both frozen (the old mask 3): the same values, every derivative zero */
        CHECK(sc_contact(&(const sc_contact_body){&A, qa, vt, 1},
                         &(const sc_contact_body){&B, qb, v0, 1}, &prm, 2, NULL, work,
                         &(const sc_contact_out){.wrench = w4, .jac = jac4, .hess = hess4}) ==
                  SC_OK,
              "both frozen");
        for (r = 0; r < 6; r++) {
            zero &= w4[r] == w3[r];
        }
        for (r = 0; r < 72; r++) {
            zero &= jac4[r] == 0.0;
        }
        for (r = 0; r < 6 * 12 * 12; r++) {
            zero &= hess4[r] == 0.0;
        }
        CHECK(zero, "both frozen: same values, zero derivatives");
        ba.vel = v0;
    }
    /* approaching (B moves down onto A): damping adds to the repulsion on A */
    vb[1] = -0.1;
    bb.vel = vb;
    CHECK(sc_contact(&ba, &bb, &prm, 0, NULL, work, &(const sc_contact_out){.wrench = w2}) == SC_OK,
          "all optional outputs NULL");
    CHECK(w2[1] < w[1], "damping opposes approach: %g < %g", w2[1], w[1]);
    CHECK(sc_contact(&ba, &bb, &prm, 2, NULL, work, &(const sc_contact_out){NULL}) == SC_OK,
          "every output NULL (the wrench is optional too)");
    /* d wrench / d (k, c, mu) against central differences in each parameter, moving */
    {
        double dp[18], wp[6], wm[6], vt[3] = {0.05, -0.08, 0.3}, hh, *field;
        int ok = 1, r;
        ba.vel = vt;
        CHECK(sc_contact(&ba, &bb, &prm, 0, NULL, work,
                         &(const sc_contact_out){.wrench = w2, .dw_dprm = dp}) == SC_OK,
              "parameter derivatives");
        for (j = 0; j < 3; j++) {
            bad = prm;
            field = j == 0 ? &bad.stiffness : j == 1 ? &bad.damping : &bad.friction;
            hh = 1e-6 * *field;
            *field += hh;
            st_ok &= sc_contact(&ba, &bb, &bad, 0, NULL, work,
                                &(const sc_contact_out){.wrench = wp}) == SC_OK;
            *field -= 2.0 * hh;
            st_ok &= sc_contact(&ba, &bb, &bad, 0, NULL, work,
                                &(const sc_contact_out){.wrench = wm}) == SC_OK;
            for (r = 0; r < 6; r++) {
                double fd = (wp[r] - wm[r]) / (2.0 * hh);
                ok &=
                    fabs(fd - dp[j * 6 + r]) <= 1e-7 * (fabs(dp[j * 6 + r]) + fabs(w2[r]) / *field);
            }
        }
        CHECK(ok && st_ok, "d wrench / d (k, c, mu) vs central differences");
        ba.vel = v0;
    }
    bb.vel = v0;
    memset(&out, 0, sizeof out);
    out.wrench = w;
    bad = prm;
    bad.stiffness = -1.0;
    CHECK(sc_contact(&ba, &bb, &bad, 0, NULL, work, &out) == SC_EINVAL, "negative stiffness");
    bad = prm;
    bad.friction = NAN;
    CHECK(sc_contact(&ba, &bb, &bad, 0, NULL, work, &out) == SC_EINVAL, "NaN friction");
    CHECK(sc_contact(&ba, &bb, &prm, 3, NULL, work, &out) == SC_EINVAL, "order 3");
    ba.vel = vnan;
    CHECK(sc_contact(&ba, &bb, &prm, 0, NULL, work, &out) == SC_ENONFINITE, "NaN velocity");
    ba.vel = v0;
    bb.vel = NULL;
    CHECK(sc_contact(&ba, &bb, &prm, 0, NULL, work, &out) == SC_EINVAL, "NULL velocity");
    bb.vel = v0;
    /* the new API's own NULLs and options */
    CHECK(sc_contact(NULL, &bb, &prm, 0, NULL, work, &out) == SC_EINVAL, "NULL body A");
    CHECK(sc_contact(&ba, NULL, &prm, 0, NULL, work, &out) == SC_EINVAL, "NULL body B");
    CHECK(sc_contact(&ba, &(const sc_contact_body){NULL, qb, v0, 0}, &prm, 0, NULL, work, &out) ==
              SC_EINVAL,
          "NULL cloud");
    CHECK(sc_contact(&ba, &bb, NULL, 0, NULL, work, &out) == SC_EINVAL, "NULL params");
    CHECK(sc_contact(&ba, &bb, &prm, 0, NULL, work, NULL) == SC_EINVAL, "NULL out");
    CHECK(sc_contact(&ba, &bb, &prm, 0, OPT(SC_ISA_AUTO, 0, 0), work, &out) == SC_EINVAL,
          "0 threads");
    CHECK(sc_contact(&ba, &bb, &prm, 0, OPT(5, 0, 1), work, &out) == SC_EINVAL, "bad isa");
    free(work);
}

/* sc_contact_params_check: each field NaN, infinite or out of its range is SC_EINVAL */
static void test_contact_params(void)
{
    const sc_contact_params prm = {1e-5, 1e-3, 2e3, 1e-3, 10.0, 0.5, 1e-2};
    /* per field: whether 0 is allowed (damping and friction: >= 0; the others > 0), and its
       valid range (sc_common.h) */
    static const int zero_ok[7] = {0, 0, 0, 0, 1, 1, 0};
    static const char *const names[7] = {"eps",     "eps_c",    "stiffness",    "beta",
                                         "damping", "friction", "slip_velocity"};
    static const double lo[7] = {SC_EPS_MIN, SC_LENGTH_MIN, SC_STIFFNESS_MIN, SC_LENGTH_MIN,
                                 0.0,        0.0,           SC_SLIP_MIN};
    static const double hi[7] = {SC_EPS_MAX,     SC_LENGTH_MAX,   SC_STIFFNESS_MAX, SC_LENGTH_MAX,
                                 SC_DAMPING_MAX, SC_FRICTION_MAX, SC_SLIP_MAX};
    int k;
    CHECK(sc_contact_params_check(&prm) == SC_OK, "valid parameters");
    CHECK(sc_contact_params_check(NULL) == SC_EINVAL, "NULL parameters");
    for (k = 0; k < 7; k++) {
        sc_contact_params p = prm;
        double *fld = k == 0   ? &p.eps
                      : k == 1 ? &p.eps_c
                      : k == 2 ? &p.stiffness
                      : k == 3 ? &p.beta
                      : k == 4 ? &p.damping
                      : k == 5 ? &p.friction
                               : &p.slip_velocity;
        *fld = 0.0;
        CHECK(sc_contact_params_check(&p) == (zero_ok[k] ? SC_OK : SC_EINVAL), "%s = 0", names[k]);
        *fld = -1e-300;
        CHECK(sc_contact_params_check(&p) == SC_EINVAL, "%s < 0", names[k]);
        *fld = -1.0;
        CHECK(sc_contact_params_check(&p) == SC_EINVAL, "%s = -1", names[k]);
        *fld = NAN;
        CHECK(sc_contact_params_check(&p) == SC_EINVAL, "%s NaN", names[k]);
        *fld = INFINITY;
        CHECK(sc_contact_params_check(&p) == SC_EINVAL, "%s inf", names[k]);
        *fld = -INFINITY;
        CHECK(sc_contact_params_check(&p) == SC_EINVAL, "%s -inf", names[k]);
        *fld = 1e-300;
        CHECK(sc_contact_params_check(&p) == (zero_ok[k] ? SC_OK : SC_EINVAL), "%s tiny positive",
              names[k]);
        *fld = 1e300;
        CHECK(sc_contact_params_check(&p) == SC_EINVAL, "%s huge", names[k]);
        /* the range's ends are in it, their neighbours out of it */
        *fld = lo[k];
        CHECK(sc_contact_params_check(&p) == SC_OK, "%s at its lower end", names[k]);
        *fld = hi[k];
        CHECK(sc_contact_params_check(&p) == SC_OK, "%s at its upper end", names[k]);
        *fld = nextafter(hi[k], INFINITY);
        CHECK(sc_contact_params_check(&p) == SC_EINVAL, "%s above its range", names[k]);
        if (lo[k] > 0.0) {
            *fld = nextafter(lo[k], 0.0);
            CHECK(sc_contact_params_check(&p) == SC_EINVAL, "%s below its range", names[k]);
        }
    }
}

/* 3D contact: SC_ENOTUNIT for a quaternion of norm 1 +- 1e-6, normalized within
   SC_UNIT_TOL (norm 1 +- 1e-12: the unit quaternion's wrench to rounding) */
static void test_contact_unit(void)
{
    double pa[3] = {0.0, 0.0, 0.0}, na[3] = {0.0, 0.0, 1.0}, nb[3] = {0.0, 0.0, -1.0};
    double ka[12 * 8 + 8], kb[12 * 8 + 8], qa[7] = {0.0, 0.0, 0.0}, qb[7] = {0.3, -0.1, -0.002};
    double v0[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, wu[12], w[12], *work;
    static const double scales[4] = {1.0 + 1e-6, 1.0 - 1e-6, 1.0 + 1e-12, 1.0 - 1e-12};
    const sc_contact_params prm = {1e-5, 1e-3, 2e3, 1e-3, 10.0, 0.5, 1e-2};
    sc_cloud ca = {3, 1, pa, na, NULL}, cb = {3, 1, pa, nb, NULL};
    sc_packed_cloud A, B;
    sc_contact_body ba, bb;
    int k, body, r;
    CHECK(sc_cloud_pack(&ca, ka, &A) == SC_OK && sc_cloud_pack(&cb, kb, &B) == SC_OK, "pack");
    work = malloc(sizeof(double) * (size_t)sc_contact_workspace_size(&A, &B, 1));
    quat(qa + 3, 0.7, 0.0, 0.0, 1.0, 1.0);
    quat(qb + 3, -1.1, 0.0, 0.0, 1.0, 1.0);
    ba.cloud = &A, ba.pose = qa, ba.vel = v0, ba.frozen = 0;
    bb.cloud = &B, bb.pose = qb, bb.vel = v0, bb.frozen = 0;
    CHECK(sc_contact(&ba, &bb, &prm, 1, NULL, work, &(const sc_contact_out){.wrench = wu}) ==
                  SC_OK &&
              wu[2] < 0.0,
          "3D contact, unit quaternions (fz on A %g)", wu[2]);
    for (body = 0; body < 2; body++) {
        for (k = 0; k < 4; k++) {
            double q[7];
            int st, ok = 1;
            memcpy(q, body == 0 ? qa : qb, sizeof q);
            quat(q + 3, body == 0 ? 0.7 : -1.1, 0.0, 0.0, 1.0, scales[k]);
            st = sc_contact(body == 0 ? &(const sc_contact_body){&A, q, v0, 0} : &ba,
                            body == 1 ? &(const sc_contact_body){&B, q, v0, 0} : &bb, &prm, 1, NULL,
                            work, &(const sc_contact_out){.wrench = w});
            if (k < 2) {
                CHECK(st == SC_ENOTUNIT, "contact: %s quaternion of norm 1 %+g: status %d",
                      body == 0 ? "A's" : "B's", scales[k] - 1.0, st);
                continue;
            }
            for (r = 0; r < 12; r++) {
                ok &= fabs(w[r] - wu[r]) <= 1e-12 * (fabs(wu[2]) + fabs(wu[r]));
            }
            CHECK(st == SC_OK && ok, "contact: %s quaternion of norm 1 %+g: status %d, normalized",
                  body == 0 ? "A's" : "B's", scales[k] - 1.0, st);
        }
    }
    /* a zero quaternion: SC_ENOTUNIT (was SC_EINVAL) */
    memset(qa + 3, 0, 4 * sizeof(double));
    CHECK(sc_contact(&ba, &bb, &prm, 0, NULL, work, &(const sc_contact_out){.wrench = w}) ==
              SC_ENOTUNIT,
          "contact: zero quaternion");
    free(work);
}

/* the portable, AVX2 and AVX-512 builds of the contact model give the same bits (3D and
   2D, both bodies moving, orders 1 (the lane pass: 4 samples per lane group, 8 with
   AVX-512) and 2, every output) */
static void test_contact_variants(void)
{
    const int isa[3] = {SC_ISA_GENERIC, SC_ISA_AVX2, SC_ISA_AVX512};
    /* the variants' SSDF evaluations all on the portable build (its ISAs agree to rounding
       only): the options as sc_contact passes them, resolved */
    sc_options opt;
    int dim, order, v, dense;
    CHECK(sc__contact_generic != NULL, "the portable contact variant is always built");
    /* a variant the CPU (or valgrind's emulation, which has no AVX-512) lacks is not even
       called: its prologue may already use the wider registers */
    if (!sc_isa_supported(SC_ISA_AVX2)) {
        printf("  (no AVX2 here: contact variants not compared)\n");
        return;
    }
    CHECK(sc__contact_avx2 != NULL &&
              (sc__contact_avx512 != NULL || !sc_isa_supported(SC_ISA_AVX512)),
          "the variants this CPU supports are built");
    for (dense = 0; dense <= 1; dense++) {
        CHECK(sc_options_resolve(OPT(SC_ISA_GENERIC, dense, 1), &opt) == SC_OK, "resolved options");
        for (order = 1; order <= 2; order++) {
            for (dim = 2; dim <= 3; dim++) {
                const int nv = dim == 2 ? 3 : 6, nw = 2 * nv, ns = 4 * nv;
                double qa3[7] = {0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0},
                       qb3[7] = {0.9, 0.3, -0.2, 0.9, 0.1, -0.3, 0.2};
                double qa2[3] = {0.0, 0.0, 0.1}, qb2[3] = {0.9, 0.3, -0.4};
                double va[6] = {0.1, -0.2, 0.05, 0.3, -0.1, 0.2},
                       vb[6] = {-0.2, 0.1, 0.0, -0.1, 0.4, 0.1};
                sc_contact_params prm = {2e-2, 2e-2, 2e3, 2e-2, 10.0, 0.5, 1e-2};
                cloud_data a, b;
                sc_contact_body ba, bb;
                ptrdiff_t n, ws, len[9], k, tot = 0;
                double *buf[3], *work;
                int i, st[3], nvar = sc_isa_supported(SC_ISA_AVX512) ? 3 : 2;
                {
                    /* the old test's poses, whose 3D quaternions are not unit: normalized here as
                       the contact model did, to within SC_UNIT_TOL */
                    double nq =
                        sqrt(qb3[3] * qb3[3] + qb3[4] * qb3[4] + qb3[5] * qb3[5] + qb3[6] * qb3[6]);
                    for (i = 3; i < 7; i++) {
                        qb3[i] /= nq;
                    }
                }
                make_cloud(&a, dim, 150);
                make_cloud(&b, dim, 90);
                n = a.n + b.n;
                len[0] = nw, len[1] = 3, len[2] = n, len[3] = n, len[4] = n * dim, len[5] = n * dim;
                len[6] = nw * ns, len[7] = order == 2 ? nw * ns * ns : 0, len[8] = 3 * nw;
                for (i = 0; i < 9; i++) {
                    tot += len[i];
                }
                ba.cloud = &a.pc, ba.pose = dim == 2 ? qa2 : qa3, ba.vel = va, ba.frozen = 0;
                bb.cloud = &b.pc, bb.pose = dim == 2 ? qb2 : qb3, bb.vel = vb, bb.frozen = 0;
                ws = sc_contact_workspace_size(&a.pc, &b.pc, 1);
                work = malloc(sizeof(double) * (size_t)ws);
                for (v = 0; v < nvar; v++) {
                    double *o[9];
                    sc_contact_out out;
                    buf[v] = malloc(sizeof(double) * (size_t)tot);
                    o[0] = buf[v];
                    for (i = 1; i < 9; i++) {
                        o[i] = o[i - 1] + len[i - 1];
                    }
                    for (k = 0; k < tot; k++) {
                        buf[v][k] = -7.0; /* every output entry must be written alike */
                    }
                    out.wrench = o[0], out.scalars = o[1], out.phi = o[2], out.pi = o[3];
                    out.forces = o[4], out.x_w = o[5], out.jac = o[6];
                    out.hess = order == 2 ? o[7] : NULL, out.dw_dprm = o[8];
                    st[v] = sc__contact_with(isa[v], &ba, &bb, &prm, order, &opt, work, &out);
                }
                for (v = 1; v < nvar; v++) {
                    CHECK(st[0] == SC_OK && st[v] == SC_OK,
                          "variants run (%dD, order %d, dense %d)", dim, order, dense);
                    CHECK(memcmp(buf[0], buf[v], sizeof(double) * (size_t)tot) == 0,
                          "portable and ISA %d contact variants: the same bits (%dD, order %d, "
                          "dense %d)",
                          isa[v], dim, order, dense);
                }
                {
                    double wmax = 0.0;
                    for (k = 0; k < nw; k++) {
                        wmax = fabs(buf[0][k]) > wmax ? fabs(buf[0][k]) : wmax;
                    }
                    CHECK(wmax > 0.0, "the %dD test pair is in contact", dim);
                }
                /* sc_contact's dispatch: at opt.isa = SC_ISA_GENERIC, the portable variant (other
                   ISAs also change the SSDF's build, which agrees to rounding only) */
                {
                    double *b2 = malloc(sizeof(double) * (size_t)tot), *o[9];
                    sc_contact_out out;
                    o[0] = b2;
                    for (i = 1; i < 9; i++) {
                        o[i] = o[i - 1] + len[i - 1];
                    }
                    for (k = 0; k < tot; k++) {
                        b2[k] = -7.0;
                    }
                    out.wrench = o[0], out.scalars = o[1], out.phi = o[2], out.pi = o[3];
                    out.forces = o[4], out.x_w = o[5], out.jac = o[6];
                    out.hess = order == 2 ? o[7] : NULL, out.dw_dprm = o[8];
                    CHECK(sc_contact(&ba, &bb, &prm, order, OPT(SC_ISA_GENERIC, dense, 1), work,
                                     &out) == SC_OK &&
                              memcmp(b2, buf[0], sizeof(double) * (size_t)tot) == 0,
                          "sc_contact at the portable ISA: the portable variant's bits (%dD, order "
                          "%d, "
                          "dense %d)",
                          dim, order, dense);
                    free(b2);
                }
                for (v = 0; v < nvar; v++) {
                    free(buf[v]);
                }
                free(work);
                free_cloud(&a);
                free_cloud(&b);
            }
        }
    }
}

/* the implicit step's friction modes (sc__contact_mode): the frozen normalizer changes no
   value; the numerator pass (damping and the friction's numerator at given velocities) is
   affine in its velocities and equal to the model's wrench at the bodies' own; every ISA
   variant gives the same bits; the mode's arguments are checked */
static void test_contact_friction_modes(void)
{
    const int isa[3] = {SC_ISA_GENERIC, SC_ISA_AVX2, SC_ISA_AVX512};
    const int nvar = !sc_isa_supported(SC_ISA_AVX2) ? 1 : sc_isa_supported(SC_ISA_AVX512) ? 3 : 2;
    sc_options opt;
    int dim, order, v;
    CHECK(sc_options_resolve(OPT(SC_ISA_GENERIC, 0, 1), &opt) == SC_OK, "resolved options");
    for (order = 1; order <= 2; order++) {
        for (dim = 2; dim <= 3; dim++) {
            const int nv = dim == 2 ? 3 : 6, nw = 2 * nv, ns = 4 * nv;
            double qa3[7] = {0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0};
            double qb3[7] = {0.9, 0.3, -0.2, 0.9, 0.1, -0.3, 0.2};
            double qa2[3] = {0.0, 0.0, 0.1}, qb2[3] = {0.9, 0.3, -0.4};
            double va[6] = {0.1, -0.2, 0.05, 0.3, -0.1, 0.2},
                   vb[6] = {-0.2, 0.1, 0.0, -0.1, 0.4, 0.1};
            double w2a[6], w2b[6], bad[6], zero[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            sc_contact_params prm = {2e-2, 2e-2, 2e3, 2e-2, 10.0, 0.5, 1e-2};
            cloud_data a, b;
            sc_contact_body ba, bb;
            const ptrdiff_t len = nw + nw * ns + (order == 2 ? nw * ns * ns : 0);
            double *full, *num0, *frz, *num[3], *num2, *velo, *frz1, *work, nq, scale = 0.0,
                                                                                err = 0.0;
            ptrdiff_t ws, k;
            int i, ok = 1;
            sc_contact_out out = {NULL};
            nq = sqrt(qb3[3] * qb3[3] + qb3[4] * qb3[4] + qb3[5] * qb3[5] + qb3[6] * qb3[6]);
            for (i = 3; i < 7; i++) {
                qb3[i] /= nq;
            }
            for (i = 0; i < 6; i++) {
                w2a[i] = 2.0 * va[i];
                w2b[i] = 2.0 * vb[i];
                bad[i] = i == 1 ? NAN : 0.0;
            }
            make_cloud(&a, dim, 150);
            make_cloud(&b, dim, 90);
            ba.cloud = &a.pc, ba.pose = dim == 2 ? qa2 : qa3, ba.vel = va, ba.frozen = 0;
            bb.cloud = &b.pc, bb.pose = dim == 2 ? qb2 : qb3, bb.vel = vb, bb.frozen = 0;
            ws = sc_contact_workspace_size(&a.pc, &b.pc, 1);
            work = malloc(sizeof(double) * (size_t)ws);
            full = malloc(sizeof(double) * (size_t)len * 9);
            num0 = full + len, frz = num0 + len, num2 = frz + len;
            num[0] = num2 + len, num[1] = num[0] + len, num[2] = num[1] + len;
            velo = num[2] + len, frz1 = velo + len;
#define RUN(buf, p, mode, wa, wb, variant)                                                         \
    (out.wrench = (buf), out.jac = (buf) + nw,                                                     \
     out.hess = order == 2 ? (buf) + nw + nw * ns : NULL,                                          \
     sc__contact_mode(isa[variant], &ba, &bb, (p), order, &opt, work, &out, (mode), (wa), (wb)))
            ok &= RUN(full, &prm, SC_FRICTION_FULL, NULL, NULL, 0) == SC_OK;
            ok &= RUN(num0, &prm, SC_FRICTION_NUMERATOR, zero, zero, 0) == SC_OK;
            ok &= RUN(frz, &prm, SC_FRICTION_FROZEN, NULL, NULL, 0) == SC_OK;
            ok &= RUN(num2, &prm, SC_FRICTION_NUMERATOR, w2a, w2b, 0) == SC_OK;
            for (v = 0; v < nvar; v++) {
                ok &= RUN(num[v], &prm, SC_FRICTION_NUMERATOR, va, vb, v) == SC_OK;
            }
            CHECK(ok, "friction modes run (%dD, order %d)", dim, order);
            CHECK(memcmp(full, frz, sizeof(double) * (size_t)nw) == 0,
                  "the frozen normalizer changes no value (%dD, order %d)", dim, order);
            for (v = 1; v < nvar; v++) {
                CHECK(memcmp(num[0], num[v], sizeof(double) * (size_t)len) == 0,
                      "numerator pass: ISA %d gives the portable bits (%dD, order %d)", isa[v], dim,
                      order);
            }
            /* at the bodies' own velocities: the model's wrench */
            for (k = 0; k < nw; k++) {
                scale = fmax(scale, fabs(full[k]));
                err = fmax(err, fabs(num[0][k] - full[k]));
            }
            CHECK(scale > 0.0 && err <= 1e-12 * scale,
                  "numerator pass at the bodies' velocities: the wrench (%dD, order %d: %g)", dim,
                  order, err / scale);
            /* affine in the numerator's velocities: W(2w) - 2 W(w) + W(0) = 0, wrench and
               Jacobian */
            err = 0.0, scale = 0.0;
            for (k = 0; k < nw + nw * ns; k++) {
                scale = fmax(scale, fabs(num[0][k]));
                err = fmax(err, fabs(num2[k] - 2.0 * num[0][k] + num0[k]));
            }
            CHECK(scale > 0.0 && err <= 1e-12 * scale,
                  "numerator pass: affine in its velocities (%dD, order %d: %g)", dim, order,
                  err / scale);
            /* at the bodies' own velocities the Jacobians fit together: the pose columns are
               the full model's in all three; its velocity columns are the frozen
               normalizer's plus the numerator pass's (the normalizer's derivatives times
               t(w)), each to rounding */
            err = 0.0, scale = 0.0;
            for (i = 0; i < nw; i++) {
                for (k = 0; k < ns; k++) {
                    const double f = full[nw + i * ns + k], z = frz[nw + i * ns + k];
                    const double q = num[0][nw + i * ns + k];
                    scale = fmax(scale, fabs(f));
                    err = fmax(err, k < ns / 2 ? fmax(fabs(z - f), fabs(q - f)) : fabs(z + q - f));
                }
            }
            CHECK(scale > 0.0 && err <= 1e-12 * scale,
                  "full Jacobian = frozen + numerator velocity columns (%dD, order %d: %g)", dim,
                  order, err / scale);
            /* the frozen normalizer's Jacobian differs (velocity columns) from the full one */
            err = 0.0;
            for (k = nw; k < nw + nw * ns; k++) {
                err = fmax(err, fabs(full[k] - frz[k]));
            }
            CHECK(err > 0.0, "the frozen normalizer drops velocity derivatives (%dD, order %d)",
                  dim, order);
            /* the velocities-only frozen mode: the frozen mode's value and velocity columns,
               the same bits, in every ISA variant, with both bodies moving and with B
               frozen (a wall); the pose columns zero; no second order */
            for (i = 0; order == 1 && i < 2; i++) {
                bb.frozen = i;
                ok = RUN(frz1, &prm, SC_FRICTION_FROZEN, NULL, NULL, 0) == SC_OK;
                for (v = 0; v < nvar; v++) {
                    int same;
                    ok &= RUN(velo, &prm, SC_FRICTION_FROZEN_VELOCITY, NULL, NULL, v) == SC_OK;
                    same = memcmp(velo, frz1, sizeof(double) * (size_t)nw) == 0;
                    for (k = 0; k < nw * ns; k++) {
                        const double q = velo[nw + k], z = frz1[nw + k];
                        same &= k % ns < ns / 2 ? q == 0.0 : memcmp(&q, &z, sizeof q) == 0;
                    }
                    CHECK(ok && same,
                          "velocities-only frozen mode: the frozen bits (%dD, B frozen %d, "
                          "ISA %d)",
                          dim, i, isa[v]);
                }
            }
            /* both frozen (no variables at all): at order 1 every mode gives the values of
               order 0 and a zero Jacobian */
            if (order == 1) {
                const int modes[3] = {SC_FRICTION_FULL, SC_FRICTION_FROZEN,
                                      SC_FRICTION_FROZEN_VELOCITY};
                ba.frozen = bb.frozen = 1;
                out.wrench = frz1, out.jac = NULL, out.hess = NULL;
                ok = sc__contact_mode(isa[0], &ba, &bb, &prm, 0, &opt, work, &out, SC_FRICTION_FULL,
                                      NULL, NULL) == SC_OK;
                for (i = 0; i < 3; i++) {
                    for (v = 0; v < nvar; v++) {
                        int same;
                        ok &= RUN(velo, &prm, modes[i], NULL, NULL, v) == SC_OK;
                        same = memcmp(velo, frz1, sizeof(double) * (size_t)nw) == 0;
                        for (k = 0; k < nw * ns; k++) {
                            same &= velo[nw + k] == 0.0;
                        }
                        CHECK(ok && same,
                              "both bodies frozen, order 1, mode %d: the values of order 0, "
                              "zero Jacobian (%dD, ISA %d)",
                              modes[i], dim, isa[v]);
                    }
                }
                ba.frozen = 0;
            }
            bb.frozen = 0;
            CHECK(order == 1 ||
                      RUN(velo, &prm, SC_FRICTION_FROZEN_VELOCITY, NULL, NULL, 0) == SC_EINVAL,
                  "velocities-only frozen mode: no order 2 (%dD)", dim);
            CHECK(RUN(num[0], &prm, SC_FRICTION_NUMERATOR, NULL, vb, 0) == SC_EINVAL &&
                      RUN(num[0], &prm, SC_FRICTION_NUMERATOR, bad, vb, 0) == SC_ENONFINITE &&
                      RUN(num[0], &prm, 7, NULL, NULL, 0) == SC_EINVAL,
                  "friction modes: bad arguments refused (%dD, order %d)", dim, order);
#undef RUN
            {
                /* order 0 has no numerator pass */
                out.wrench = num[0], out.jac = NULL, out.hess = NULL;
                CHECK(sc__contact_mode(isa[0], &ba, &bb, &prm, 0, &opt, work, &out,
                                       SC_FRICTION_NUMERATOR, va, vb) == SC_EINVAL,
                      "numerator pass at order 0 refused (%dD)", dim);
            }
            free(full);
            free(work);
            free_cloud(&a);
            free_cloud(&b);
        }
    }
}

/* a model's ranges: its parameters (sc_model_check), states and controls (SC_ERANGE), and a
   step whose new state leaves the range (SC_EDIVERGED) */
static void test_model_ranges(void)
{
    /* 2D: an actuated dynamic body and a kinematic body, without geometry */
    sc_body bodies[2];
    sc_model m;
    double x[12] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0, -2.0, 0.5, 0.0, 0.0, 0.0};
    double u[6] = {0.2, -0.1, 0.05, 0.3, 0.0, -1.0}, xn[12], *work;
    sc_step_out so = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int k;
    memset(bodies, 0, sizeof bodies);
    bodies[0].kind = SC_BODY_DYNAMIC;
    bodies[0].actuated = 1;
    bodies[0].mass = 1e-3;
    bodies[0].inertia[0] = 1e-3;
    bodies[0].cloud.dim = 2;
    bodies[1].kind = SC_BODY_KINEMATIC;
    bodies[1].cloud.dim = 2;
    memset(&m, 0, sizeof m);
    m.dim = 2;
    m.nbody = 2;
    m.bodies = bodies;
    m.gravity[1] = -9.81;
    m.dt = 0.01;
    m.integrator = SC_INTEGRATOR_EULER;
    CHECK(sc_model_check(&m, NULL) == SC_OK, "model in range");
    m.dt = nextafter(SC_DT_MAX, INFINITY);
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "dt above its range");
    m.dt = nextafter(SC_DT_MIN, 0.0);
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "dt below its range");
    m.dt = 0.01;
    m.gravity[0] = 2e12;
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "gravity beyond its range");
    m.gravity[0] = 0.0;
    bodies[0].mass = 1e101;
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "mass beyond its range");
    bodies[0].mass = 1e-3;
    bodies[0].inertia[0] = 1e-101;
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "inertia beyond its range");
    bodies[0].inertia[0] = 1e-3;
    work = (double *)malloc((size_t)sc_step_workspace_size(&m, 0, 0, 1) * sizeof(double));
    if (work == NULL) {
        return;
    }
    so.x_next = xn;
    CHECK(sc_step(&m, x, u, 0, 0, NULL, work, &so) == SC_OK, "a state in range");
    /* each entry past its range: a position, a velocity, a force, a kinematic velocity */
    {
        static const int at[4] = {1, 7, 0, 3};
        static const double over[4] = {2e12, 2e8, 2e30, 2e8};
        for (k = 0; k < 4; k++) {
            double *v = k < 2 ? x : u, keep = v[at[k]];
            v[at[k]] = over[k];
            CHECK(sc_step(&m, x, u, 0, 0, NULL, work, &so) == SC_ERANGE, "entry %d out of range",
                  k);
            v[at[k]] = keep;
        }
    }
    /* the largest force on 1 g: v+ = 1e30 h / m = 1e29 m/s leaves the range */
    u[0] = SC_FORCE_MAX;
    CHECK(sc_step(&m, x, u, 0, 0, NULL, work, &so) == SC_EDIVERGED && isfinite(xn[6]) &&
              xn[6] > SC_SPEED_MAX,
          "a new state out of range diverges");
    free(work);
}

/* The valid ranges (sc_common.h): every kernel refuses a finite value outside them, at
   their ends it runs and its outputs are finite */
static void test_ranges(void)
{
    /* a 2D cloud of two samples 0.2 apart (c0 = (1, 0), rho = 0.1, radius 1.1 about the
       origin) and a half-space */
    double p2[4] = {0.9, 0.0, 1.1, 0.0}, n2[4] = {-1.0, 0.0, 1.0, 0.0}, ph[2] = {0.0, 0.0};
    double nh[2] = {0.0, 1.0}, k2[9 * 8 + 16], kh[9 * 8 + 8], work[4096], phi[4], g[4], h[8];
    double t[16], x[4], eps = 1e-3, lim, qa[3] = {0.0, 0.0, 0.0}, qb[3], va[3] = {0, 0, 0};
    double vb[3] = {0, 0, 0}, w[6], sc3[3], *cwork;
    sc_cloud c2 = {2, 2, p2, n2, NULL}, ch = {2, 1, ph, nh, NULL};
    sc_packed_cloud P, H;
    sc_separation_out so = {NULL, NULL, NULL, NULL, NULL};
    sc_contact_params prm = {1e-3, 1e-3, 2e3, 1e-3, 10.0, 0.5, 1e-2};
    sc_contact_body A, B;
    sc_contact_out co = {NULL};
    int ok, k;
    CHECK(sc_cloud_pack(&c2, k2, &P) == SC_OK && sc_cloud_pack(&ch, kh, &H) == SC_OK, "pack");
    CHECK(fabs(sc__cloud_radius(&P) - 1.1) < 1e-15, "a cloud's radius about its origin");
    /* eps at and beyond its ends */
    x[0] = 1.0, x[1] = 0.05;
    phi[0] = 7.0;
    CHECK(sc_ssdf(&P, nextafter(SC_EPS_MIN, 0.0), 1, x, NULL, work, phi, NULL, NULL, NULL) ==
                  SC_EINVAL &&
              sc_ssdf(&P, nextafter(SC_EPS_MAX, INFINITY), 1, x, NULL, work, phi, NULL, NULL,
                      NULL) == SC_EINVAL &&
              phi[0] == 7.0,
          "eps outside its range");
    CHECK(sc_ssdf(&P, SC_EPS_MAX, 1, x, NULL, work, phi, g, h, t) == SC_OK && isfinite(t[0]),
          "eps at its upper end");
    /* a query's coordinates and reach: (|x - c0| + rho) rho <= SC_REACH_MAX eps */
    lim = SC_REACH_MAX * eps / 0.1 - 0.1;
    x[0] = 1.0 + 0.5 * lim, x[1] = 0.0;
    x[2] = 1.0 + 0.999 * lim, x[3] = 0.0;
    ok = sc_ssdf(&P, eps, 2, x, NULL, work, phi, g, h, t) == SC_OK;
    for (k = 0; k < 2; k++) {
        ok &= isfinite(phi[k]) && isfinite(g[2 * k]) && isfinite(h[4 * k]) && isfinite(t[8 * k]);
    }
    CHECK(ok, "queries within the reach: finite at order 3");
    x[2] = 1.0 + 1.001 * lim;
    phi[0] = 7.0;
    CHECK(sc_ssdf(&P, eps, 2, x, NULL, work, phi, NULL, NULL, NULL) == SC_ERANGE && phi[0] == 7.0,
          "a query beyond the reach: SC_ERANGE, outputs untouched");
    x[2] = NAN;
    CHECK(sc_ssdf(&P, eps, 2, x, NULL, work, phi, NULL, NULL, NULL) == SC_OK && isnan(phi[1]),
          "a non-finite query still gets a NaN row");
    x[0] = 0.0, x[1] = 2e12;
    CHECK(sc_ssdf(&H, eps, 1, x, NULL, work, phi, NULL, NULL, NULL) == SC_ERANGE,
          "a coordinate beyond SC_COORD_MAX (a half-space has no reach limit)");
    x[1] = SC_COORD_MAX;
    CHECK(sc_ssdf(&H, eps, 1, x, NULL, work, phi, NULL, NULL, NULL) == SC_OK && phi[0] == 1e12,
          "a coordinate at SC_COORD_MAX");
    /* pairs: (d + r_a + r_b) rho <= SC_REACH_MAX eps; translations within SC_COORD_MAX */
    so.phi = phi;
    lim = SC_REACH_MAX * eps / 0.1 - 2.2;
    qb[0] = 0.999 * lim, qb[1] = 0.0, qb[2] = 0.0;
    CHECK(sc_separation(&P, qa, &P, qb, eps, NULL, work, &so) == SC_OK && isfinite(phi[0]),
          "clouds within each other's reach");
    qb[0] = 1.001 * lim;
    CHECK(sc_separation(&P, qa, &P, qb, eps, NULL, work, &so) == SC_ERANGE,
          "clouds beyond each other's reach");
    qb[0] = 2e12;
    CHECK(sc_separation(&H, qa, &H, qb, eps, NULL, work, &so) == SC_ERANGE,
          "a translation beyond SC_COORD_MAX");
    CHECK(sc_separation(&P, qa, &P, qb, nextafter(SC_EPS_MIN, 0.0), NULL, work, &so) == SC_EINVAL,
          "separation: eps below its range");
    /* contact: velocities within SC_SPEED_MAX */
    cwork = (double *)malloc((size_t)sc_contact_workspace_size(&P, &P, 1) * sizeof(double));
    if (cwork == NULL) {
        return;
    }
    qb[0] = 0.15;
    A.cloud = &P, A.pose = qa, A.vel = va, A.frozen = 0;
    B.cloud = &P, B.pose = qb, B.vel = vb, B.frozen = 0;
    co.wrench = w, co.scalars = sc3;
    vb[2] = SC_SPEED_MAX;
    CHECK(sc_contact(&A, &B, &prm, 0, NULL, cwork, &co) == SC_OK && isfinite(w[0]),
          "a velocity at SC_SPEED_MAX");
    vb[2] = nextafter(SC_SPEED_MAX, INFINITY);
    CHECK(sc_contact(&A, &B, &prm, 0, NULL, cwork, &co) == SC_ERANGE,
          "a velocity beyond SC_SPEED_MAX");
    vb[2] = 0.0;
    prm.eps = 1e-8; /* reach: d <= 1e14 eps / rho - 2.2 = 1e7 - 2.2 */
    qb[0] = 0.999e7;
    CHECK(sc_contact(&A, &B, &prm, 0, NULL, cwork, &co) == SC_OK, "contact: within the reach");
    qb[0] = 1e7;
    CHECK(sc_contact(&A, &B, &prm, 0, NULL, cwork, &co) == SC_ERANGE,
          "contact: bodies beyond each other's reach");
    free(cwork);
    test_model_ranges();
}

static void test_model(void)
{
    /* 2D: an actuated dynamic body (no geometry) under gravity, a kinematic body */
    sc_body bodies[2];
    sc_model m;
    sc_model_sizes sz;
    double x[12] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0, -2.0, 0.5, 0.0, 0.0, 0.0};
    double u[6] = {0.2, -0.1, 0.05, 0.3, 0.0, -1.0}, xn[12], A[144], B[72], H[12 * 12 * 12];
    double uid[6], f[6], X[2 * 4 * 12], U[2 * 3 * 6], e[3], mom[3], *work;
    int status[2], k, ok = 1, st;
    const double h = 0.01;
    memset(bodies, 0, sizeof bodies);
    bodies[0].kind = SC_BODY_DYNAMIC;
    bodies[0].actuated = 1;
    bodies[0].mass = 2.0;
    bodies[0].inertia[0] = 0.5;
    bodies[0].cloud.dim = 2;
    bodies[1].kind = SC_BODY_KINEMATIC;
    bodies[1].cloud.dim = 2;
    memset(&m, 0, sizeof m);
    m.dim = 2;
    m.nbody = 2;
    m.bodies = bodies;
    m.gravity[1] = -9.81;
    m.dt = h;
    m.integrator = SC_INTEGRATOR_EULER;
    CHECK(sc_model_check(&m, &sz) == SC_OK && sz.nq == 6 && sz.nv == 6 && sz.nu == 6 &&
              sz.np == 2 && sz.nmove == 2,
          "model sizes");
    work = (double *)malloc((size_t)sc_step_workspace_size(&m, 2, 1, 1) * sizeof(double));
    if (work == NULL) {
        return;
    }
    {
        sc_step_out so = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        so.x_next = xn, so.dx_dx = A, so.dx_du = B, so.d2x_dx2 = H;
        st = sc_step(&m, x, u, 2, 0, NULL, work, &so);
    }
    CHECK(st == SC_OK, "step");
    /* v+ = v + h (m g + u) / m; theta: omega + h tau / I; positions q + h v+ */
    ok &= fabs(xn[6] - (1.0 + h * 0.2 / 2.0)) < 1e-15;
    ok &= fabs(xn[7] - (-2.0 + h * (-9.81 * 2.0 - 0.1) / 2.0)) < 1e-15;
    ok &= fabs(xn[8] - (0.5 + h * 0.05 / 0.5)) < 1e-15;
    ok &= fabs(xn[1] - (0.2 + h * xn[7])) < 1e-15;
    ok &= xn[9] == 0.3 && xn[10] == 0.0 && xn[11] == -1.0 && xn[5] == 0.6 - h;
    CHECK(ok, "free flight and kinematic control");
    /* dx_dx: dq+/dq = I, dq+/dv = h I, dv+/dv = I; dx_du = h M^-1 / h^2 M^-1 */
    ok = 1;
    for (k = 0; k < 12; k++) {
        ok &= A[k * 12 + k] == (k < 9 ? 1.0 : 0.0); /* kinematic: v+ = u, not v */
    }
    ok &= A[0 * 12 + 6] == h && B[6 * 6 + 0] == h / 2.0 && B[0 * 6 + 0] == h * h / 2.0;
    ok &= B[9 * 6 + 3] == 1.0 && B[3 * 6 + 3] == h;
    for (k = 0; k < 12 * 12 * 12; k++) {
        ok &= H[k] == 0.0; /* linear in free flight (2D) */
    }
    CHECK(ok, "free-flight derivatives");
    st = sc_inverse_dynamics(&m, x, xn, NULL, work, uid, f);
    ok = st == SC_OK;
    for (k = 0; k < 6; k++) {
        ok &= fabs(uid[k] - u[k]) < 1e-12;
    }
    CHECK(ok, "inverse dynamics recovers u");
    CHECK(sc_energy(&m, x, NULL, work, e) == SC_OK &&
              fabs(e[0] - (0.5 * 2.0 * 5.0 + 0.5 * 0.5 * 0.25)) < 1e-15 &&
              fabs(e[1] - 2.0 * 9.81 * 0.2) < 1e-15 && e[2] == 0.0,
          "energy");
    CHECK(sc_momentum(&m, x, mom) == SC_OK && mom[0] == 2.0 && mom[1] == -4.0 &&
              fabs(mom[2] - (2.0 * (0.1 * -2.0 - 0.2 * 1.0) + 0.5 * 0.5)) < 1e-15,
          "momentum");
    /* rollouts: trajectory 1 meets a NaN control at t = 1 */
    for (k = 0; k < 2 * 3 * 6; k++) {
        U[k] = 0.1;
    }
    U[(1 * 3 + 1) * 6 + 2] = NAN;
    free(work);
    work = (double *)malloc(2 * (size_t)sc_step_workspace_size(&m, 1, 0, 1) * sizeof(double));
    if (work == NULL) {
        return;
    }
    {
        double x0[24];
        sc_rollout_out ro = {NULL, NULL, NULL, NULL, NULL};
        memcpy(x0, x, sizeof x);
        memcpy(x0 + 12, x, sizeof x);
        ro.X = X, ro.status = status;
        st = sc_rollout(&m, 2, 3, x0, U, 0, OPT(SC_ISA_AUTO, 0, 2), work, &ro);
    }
    CHECK(st == SC_OK && status[0] == SC_OK && status[1] == SC_ENONFINITE, "rollout statuses %d %d",
          status[0], status[1]);
    CHECK(!isnan(X[4 * 12 + 12 + 0]) && isnan(X[4 * 12 + 2 * 12 + 0]) &&
              isnan(X[4 * 12 + 3 * 12 + 11]),
          "failed trajectory: NaN from the failing step on");
    /* divergence: the body's speed limit crossed by the step (|v| = 2.33 after a step from
       x, 2.60 with vy = -2.3); the step keeps its outputs, a rollout names the step and
       keeps its state */
    bodies[0].max_speed = 2.4;
    {
        sc_step_out so = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        sc_rollout_out ro = {NULL, NULL, NULL, NULL, NULL};
        ptrdiff_t failed[2] = {7, 7};
        double xd[12];
        double x0[24];
        so.x_next = xd;
        CHECK(sc_step(&m, x, u, 0, 0, NULL, work, &so) == SC_OK && hypot(xd[6], xd[7]) < 2.4,
              "below max_speed");
        x[7] = -2.3;
        st = sc_step(&m, x, u, 0, 0, NULL, work, &so);
        CHECK(st == SC_EDIVERGED && hypot(xd[6], xd[7]) > 2.4 && xd[7] < -2.3,
              "past max_speed: SC_EDIVERGED, x_next written (%d)", st);
        memcpy(x0, x, sizeof x);
        memcpy(x0 + 12, x, sizeof x);
        x0[12 + 7] = -2.0;
        ro.X = X, ro.status = status, ro.failed = failed;
        st = sc_rollout(&m, 2, 3, x0, U, 0, OPT(SC_ISA_AUTO, 0, 2), work, &ro);
        CHECK(st == SC_OK && status[0] == SC_EDIVERGED && failed[0] == 0 &&
                  hypot(X[12 + 6], X[12 + 7]) > 2.4 && isnan(X[2 * 12]) &&
                  status[1] == SC_ENONFINITE && failed[1] == 1,
              "rollout: the diverged step's state kept, its index reported (%d %d, %td %td)",
              status[0], status[1], failed[0], failed[1]);
        x[7] = -2.0;
        bodies[0].max_speed = NAN;
        CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "max_speed NaN refused");
        bodies[0].max_speed = 0.0;
        bodies[0].max_spin = -1.0;
        CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "negative max_spin refused");
        bodies[0].max_spin = 0.0;
    }
    free(work);
    /* inconsistent models */
    bodies[1].actuated = 1;
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "actuated kinematic body");
    bodies[1].actuated = 0;
    m.dt = 0.0;
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "dt 0");
    m.dt = h;
    m.integrator = SC_INTEGRATOR_IMPLICIT + 1;
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "unknown integrator");
    work = (double *)malloc((size_t)sc_step_workspace_size(&m, 0, 0, 1) * sizeof(double));
    if (work != NULL) {
        sc_step_out so = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        so.x_next = xn;
        CHECK(sc_step(&m, x, u, 0, 0, NULL, work, &so) == SC_EINVAL, "step: unknown integrator");
        free(work);
    }
    m.integrator = -1;
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "negative integrator");
    /* the implicit step in free flight (no velocity-dependent force): the Euler step's
       values and derivatives to rounding */
    m.integrator = SC_INTEGRATOR_IMPLICIT;
    work = (double *)malloc((size_t)sc_step_workspace_size(&m, 1, 0, 1) * sizeof(double));
    if (work != NULL) {
        double xi[12], Ai[144], Bi[72];
        sc_step_out so = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        so.x_next = xi, so.dx_dx = Ai, so.dx_du = Bi;
        st = sc_step(&m, x, u, 1, 0, NULL, work, &so);
        ok = st == SC_OK;
        for (k = 0; k < 12; k++) {
            ok &= fabs(xi[k] - xn[k]) <= 1e-15 * (1.0 + fabs(xn[k]));
        }
        for (k = 0; k < 144; k++) {
            ok &= fabs(Ai[k] - A[k]) <= 1e-15;
        }
        for (k = 0; k < 72; k++) {
            ok &= fabs(Bi[k] - B[k]) <= 1e-15;
        }
        CHECK(ok, "implicit step in free flight: status %d", st);
        st = sc_inverse_dynamics(&m, x, xi, NULL, work, uid, f);
        ok = st == SC_OK;
        for (k = 0; k < 6; k++) {
            ok &= fabs(uid[k] - u[k]) < 1e-12;
        }
        CHECK(ok, "implicit: inverse dynamics recovers u");
        free(work);
    }
    /* and its second derivatives: the Euler step's to rounding */
    {
        double *w2, *Hi;
        sc_step_out s2 = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        const ptrdiff_t wn = sc_step_workspace_size(&m, 2, 0, 1);
        m.integrator = SC_INTEGRATOR_EULER;
        w2 = malloc(sizeof(double) * (size_t)(wn > sc_step_workspace_size(&m, 2, 0, 1)
                                                  ? wn
                                                  : sc_step_workspace_size(&m, 2, 0, 1)));
        Hi = malloc(sizeof(double) * 2 * (12 + 144 + 72 + 1728 + 864 + 432));
        if (w2 != NULL && Hi != NULL) {
            double *He = Hi + 12 + 144 + 72 + 1728 + 864 + 432;
            int t;
            for (t = 0; t < 2; t++) {
                double *o = t == 0 ? He : Hi;
                s2.x_next = o, s2.dx_dx = o + 12, s2.dx_du = o + 156;
                s2.d2x_dx2 = o + 228, s2.d2x_dxdu = o + 1956, s2.d2x_du2 = o + 2820;
                st = sc_step(&m, x, u, 2, 0, NULL, w2, &s2);
                CHECK(st == SC_OK, "order-2 step of integrator %d: status %d", m.integrator, st);
                m.integrator = SC_INTEGRATOR_IMPLICIT;
            }
            ok = 1;
            for (k = 0; k < 12 + 144 + 72 + 1728 + 864 + 432; k++) {
                ok &= fabs(Hi[k] - He[k]) <= 1e-13 * (1.0 + fabs(He[k]));
            }
            CHECK(ok, "implicit second derivatives in free flight: the Euler step's");
        }
        free(w2);
        free(Hi);
    }
    /* its parameter derivatives in free flight: the Euler step's to rounding */
    {
        sc_model_sizes szp;
        double *wp, *dpi, *dpe, xi[12];
        sc_step_out sp = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        CHECK(sc_model_check(&m, &szp) == SC_OK && szp.np > 0, "parameters to differentiate");
        wp = malloc(sizeof(double) * (size_t)sc_step_workspace_size(&m, 0, 1, 1));
        dpi = malloc(sizeof(double) * (size_t)(2 * 2 * szp.nv * szp.np));
        if (wp != NULL && dpi != NULL) {
            dpe = dpi + 2 * szp.nv * szp.np;
            sp.x_next = xi, sp.dx_dp = dpi;
            st = sc_step(&m, x, u, 0, 1, NULL, wp, &sp);
            m.integrator = SC_INTEGRATOR_EULER;
            sp.dx_dp = dpe;
            ok = st == SC_OK && sc_step(&m, x, u, 0, 1, NULL, wp, &sp) == SC_OK;
            m.integrator = SC_INTEGRATOR_IMPLICIT;
            for (k = 0; k < 2 * szp.nv * szp.np; k++) {
                ok &= fabs(dpi[k] - dpe[k]) <= 1e-13 * (1.0 + fabs(dpe[k]));
            }
            CHECK(ok, "implicit parameter derivatives in free flight: the Euler step's");
        }
        free(wp);
        free(dpi);
    }
    m.integrator = SC_INTEGRATOR_EULER;
    CHECK(sc_model_check(&m, NULL) == SC_OK, "Euler integrator");
    bodies[0].mass = -1.0;
    CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "negative mass");
    bodies[0].mass = 2.0;
    {
        sc_pair pr = {0, 0, {1e-5, 1e-3, 2e3, 1e-3, 10.0, 0.5, 1e-2}};
        m.pairs = &pr;
        m.npair = 1;
        CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "pair of a body with itself");
        pr.b = 1;
        CHECK(sc_model_check(&m, NULL) == SC_EINVAL, "pair of bodies without samples");
        m.npair = 0;
    }
}

/* 3D: a free dynamic body; sc_step, sc_inverse_dynamics and sc_rollout refuse a state
   whose quaternion is not of unit norm within SC_UNIT_TOL (SC_ENOTUNIT) and normalize one
   within it */
/* a 3D model of one actuated dynamic body without geometry (forces and torques as
   controls), Euler steps of 10 ms under gravity */
static void free_body_model(sc_body *body, sc_model *m)
{
    memset(body, 0, sizeof *body);
    body->kind = SC_BODY_DYNAMIC;
    body->actuated = 1;
    body->mass = 1.5;
    body->inertia[0] = 0.1, body->inertia[4] = 0.2, body->inertia[8] = 0.3;
    body->cloud.dim = 3;
    memset(m, 0, sizeof *m);
    m->dim = 3;
    m->nbody = 1;
    m->bodies = body;
    m->gravity[2] = -9.81;
    m->dt = 0.01;
    m->integrator = SC_INTEGRATOR_EULER;
}

static void test_step_unit(void)
{
    sc_body body;
    sc_model m;
    sc_model_sizes sz;
    static const double scales[4] = {1.0 + 1e-6, 1.0 - 1e-6, 1.0 + 1e-12, 1.0 - 1e-12};
    double x[13] = {0.1, -0.2, 0.3}, u[6] = {0.5, -0.3, 0.2, 0.05, -0.02, 0.01};
    double xu[13], xn[13], Xr[2 * 13], *work;
    int k, r, st, status[1];
    sc_step_out so = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    sc_rollout_out ro = {NULL, NULL, NULL, NULL, NULL};
    free_body_model(&body, &m);
    CHECK(sc_model_check(&m, &sz) == SC_OK && sz.nq == 7 && sz.nv == 6 && sz.nu == 6,
          "3D model sizes");
    work = (double *)malloc((size_t)sc_step_workspace_size(&m, 1, 0, 1) * sizeof(double));
    if (work == NULL) {
        return;
    }
    quat(x + 3, 0.8, 0.6, 0.0, 0.8, 1.0);
    x[7] = 0.4, x[8] = -0.1, x[9] = 0.2, x[10] = 1.0, x[11] = -2.0, x[12] = 0.5;
    so.x_next = xu;
    CHECK(sc_step(&m, x, u, 1, 0, NULL, work, &so) == SC_OK, "3D step, unit quaternion");
    so.x_next = xn;
    for (k = 0; k < 4; k++) {
        double xs[13];
        int ok = 1;
        memcpy(xs, x, sizeof xs);
        quat(xs + 3, 0.8, 0.6, 0.0, 0.8, scales[k]);
        st = sc_step(&m, xs, u, 1, 0, NULL, work, &so);
        if (k < 2) {
            CHECK(st == SC_ENOTUNIT, "step: quaternion of norm 1 %+g: status %d", scales[k] - 1.0,
                  st);
            CHECK(sc_inverse_dynamics(&m, xs, xu, NULL, work, NULL, NULL) == SC_ENOTUNIT &&
                      sc_inverse_dynamics(&m, x, xs, NULL, work, NULL, NULL) == SC_ENOTUNIT,
                  "inverse dynamics: quaternion of norm 1 %+g", scales[k] - 1.0);
            ro.X = Xr, ro.status = status;
            status[0] = 12345;
            CHECK(sc_rollout(&m, 1, 1, xs, u, 0, NULL, work, &ro) == SC_OK &&
                      status[0] == SC_ENOTUNIT && isnan(Xr[13]),
                  "rollout: quaternion of norm 1 %+g: status %d", scales[k] - 1.0, status[0]);
            continue;
        }
        for (r = 0; r < 13; r++) {
            ok &= fabs(xn[r] - xu[r]) <= 1e-14 * (1.0 + fabs(xu[r]));
        }
        CHECK(st == SC_OK && ok, "step: quaternion of norm 1 %+g: status %d, normalized",
              scales[k] - 1.0, st);
    }
    {
        double xz[13];
        memcpy(xz, x, sizeof xz);
        xz[3] = xz[4] = xz[5] = xz[6] = 0.0;
        CHECK(sc_step(&m, xz, u, 0, 0, NULL, work, &so) == SC_ENOTUNIT, "step: zero quaternion");
    }
    free(work);
}

/* sc_cloud_view describes a buffer sc_cloud_pack filled: the same view as the pack's, and
   the same SSDF bits through it */
static void test_cloud_view(void)
{
    static const ptrdiff_t ns[3] = {1, 40, 300}; /* a half-space, group boxes, an index */
    int dim, j;
    for (dim = 2; dim <= 3; dim++) {
        for (j = 0; j < 3; j++) {
            cloud_data c;
            sc_packed_cloud pv;
            double x[3 * 5], phi0[5], phi1[5], g0[15], g1[15], *work;
            int i;
            make_cloud(&c, dim, ns[j]);
            memset(&pv, 0, sizeof pv);
            CHECK(sc_cloud_view(dim, ns[j], c.packed, &pv) == SC_OK && pv.dim == c.pc.dim &&
                      pv.n == c.pc.n && pv.npad == c.pc.npad && pv.data == c.pc.data &&
                      pv.data == c.packed && pv.npad == sc__padded(ns[j]),
                  "view of a packed cloud (%dD, n %td) as the pack's", dim, ns[j]);
            work = malloc(sizeof(double) * (size_t)sc_ssdf_workspace_size(&pv));
            for (i = 0; i < 5 * dim; i++) {
                x[i] = 3.0 * urand() - 1.5;
            }
            CHECK(sc_ssdf(&c.pc, 1e-2, 5, x, NULL, work, phi0, g0, NULL, NULL) == SC_OK &&
                      sc_ssdf(&pv, 1e-2, 5, x, NULL, work, phi1, g1, NULL, NULL) == SC_OK &&
                      memcmp(phi0, phi1, sizeof(double) * 5) == 0 &&
                      memcmp(g0, g1, sizeof(double) * 5 * (size_t)dim) == 0,
                  "SSDF through the view (%dD, n %td): the same bits", dim, ns[j]);
            free(work);
            free_cloud(&c);
        }
    }
    {
        double buf[8];
        sc_packed_cloud pv;
        CHECK(sc_cloud_view(3, 10, NULL, &pv) == SC_EINVAL, "view: NULL buffer");
        CHECK(sc_cloud_view(3, 10, buf, NULL) == SC_EINVAL, "view: NULL view");
        CHECK(sc_cloud_view(1, 10, buf, &pv) == SC_EINVAL, "view: dim 1");
        CHECK(sc_cloud_view(4, 10, buf, &pv) == SC_EINVAL, "view: dim 4");
        CHECK(sc_cloud_view(2, 0, buf, &pv) == SC_EINVAL, "view: n 0");
        CHECK(sc_cloud_view(2, -3, buf, &pv) == SC_EINVAL, "view: n < 0");
        CHECK(sc_cloud_view(2, PTRDIFF_MAX, buf, &pv) == SC_EINVAL, "view: size overflows");
    }
}

/* sc_ilqr: the backward pass of a scalar linear-quadratic problem against its closed form
   (free, at a bound, not definite, DDP's eigenvalue fix), argument checks, and the
   closed-loop rollout of a 3D free body (its reference reproduced bit for bit at alpha 0,
   a state difference of a known rotation, a failing step reported) */
/* the reverse-mode adjoint of rollouts (sc_rollout_vjp) against central differences of
   L = <GX, X> on the 3D free body of test_step_unit (a rotating body: quaternions and
   gyroscopic terms), the start state's rotation perturbed along q (x) exp(h e_k / 2) */
enum { VJP_T = 4, VJP_NX = 13 };

static double vjp_objective(const sc_model *m, const double *x0, const double *U, const double *GX,
                            double *work)
{
    double X[(VJP_T + 1) * VJP_NX], L = 0.0;
    int status[1], i;
    sc_rollout_out ro = {NULL, NULL, NULL, NULL, NULL};
    ro.X = X, ro.status = status;
    if (sc_rollout(m, 1, VJP_T, x0, U, 0, NULL, work, &ro) != SC_OK || status[0] != SC_OK) {
        return NAN;
    }
    for (i = 0; i < (VJP_T + 1) * VJP_NX; i++) {
        L += GX[i] * X[i];
    }
    return L;
}

static void test_rollout_vjp(void)
{
    sc_body body;
    sc_model m;
    const double h = 1e-6;
    double x0[2 * VJP_NX] = {0.1, -0.2, 0.3}, U[2 * VJP_T * 6], GX[2 * (VJP_T + 1) * VJP_NX];
    double X[2 * (VJP_T + 1) * VJP_NX], gx0[2 * VJP_NX], gU[2 * VJP_T * 6], gx1[2 * VJP_NX],
        gU1[2 * VJP_T * 6], *work, worst = 0.0, scale = 0.0;
    int status[2], st, i, k, same = 1;
    sc_rollout_out ro = {NULL, NULL, NULL, NULL, NULL};
    ptrdiff_t ws;
    free_body_model(&body, &m);
    ws = sc_rollout_vjp_workspace_size(&m);
    CHECK(ws >= sc_step_workspace_size(&m, 1, 0, 1), "rollout vjp workspace size");
    work = (double *)malloc(2 * (size_t)ws * sizeof(double));
    if (work == NULL) {
        return;
    }
    quat(x0 + 3, 0.8, 0.6, 0.0, 0.8, 1.0);
    x0[7] = 0.4, x0[8] = -0.1, x0[9] = 0.2, x0[10] = 1.0, x0[11] = -2.0, x0[12] = 0.5;
    memcpy(x0 + VJP_NX, x0, sizeof(double) * VJP_NX);
    x0[VJP_NX + 10] = -0.5;
    for (i = 0; i < 2 * VJP_T * 6; i++) {
        U[i] = 0.3 * (urand() - 0.5);
    }
    for (i = 0; i < 2 * (VJP_T + 1) * VJP_NX; i++) {
        GX[i] = urand() - 0.5;
    }
    ro.X = X, ro.status = status;
    st = sc_rollout(&m, 2, VJP_T, x0, U, 0, NULL, work, &ro);
    CHECK(st == SC_OK && status[0] == SC_OK && status[1] == SC_OK, "rollout for the vjp");
    st = sc_rollout_vjp(&m, 2, VJP_T, X, U, GX, OPT(SC_ISA_AUTO, 0, 2), work, gx0, gU, status);
    CHECK(st == SC_OK && status[0] == SC_OK && status[1] == SC_OK, "rollout vjp status %d", st);
    st = sc_rollout_vjp(&m, 2, VJP_T, X, U, GX, OPT(SC_ISA_AUTO, 0, 1), work, gx1, gU1, status);
    for (i = 0; i < 2 * VJP_NX; i++) {
        same &= gx0[i] == gx1[i];
    }
    for (i = 0; i < 2 * VJP_T * 6; i++) {
        same &= gU[i] == gU1[i];
    }
    CHECK(st == SC_OK && same, "rollout vjp: the same bits on 1 and 2 threads");
    /* trajectory 1 against central differences: controls, positions, velocities */
    for (i = 0; i < VJP_T * 6 + 3 + 6; i++) {
        double xp[VJP_NX], xm[VJP_NX], Up[VJP_T * 6], Um[VJP_T * 6], fd, an;
        memcpy(xp, x0 + VJP_NX, sizeof xp), memcpy(xm, x0 + VJP_NX, sizeof xm);
        memcpy(Up, U + VJP_T * 6, sizeof Up), memcpy(Um, U + VJP_T * 6, sizeof Um);
        if (i < VJP_T * 6) {
            Up[i] += h, Um[i] -= h;
            an = gU[VJP_T * 6 + i];
        } else {
            k = i - VJP_T * 6;
            k = k < 3 ? k : 7 + (k - 3); /* a position, then a velocity */
            xp[k] += h, xm[k] -= h;
            an = gx0[VJP_NX + k];
        }
        fd = (vjp_objective(&m, xp, Up, GX + (VJP_T + 1) * VJP_NX, work) -
              vjp_objective(&m, xm, Um, GX + (VJP_T + 1) * VJP_NX, work)) /
             (2.0 * h);
        worst = fmax(worst, fabs(fd - an));
        scale = fmax(scale, fabs(an));
    }
    /* rotations: the directional derivative of L along q (x) exp(h e_k / 2) is
       gx0_q . Q(q)[:, 1 + k] / 2 */
    for (k = 0; k < 3; k++) {
        double xp[VJP_NX], xm[VJP_NX], fd, an = 0.0;
        const double *q = x0 + VJP_NX + 3, c = cos(0.5 * h), sn = sin(0.5 * h);
        const double cols[3][4] = {
            {-q[1], q[0], q[3], -q[2]}, {-q[2], -q[3], q[0], q[1]}, {-q[3], q[2], -q[1], q[0]}};
        memcpy(xp, x0 + VJP_NX, sizeof xp), memcpy(xm, x0 + VJP_NX, sizeof xm);
        for (i = 0; i < 4; i++) { /* q (x) exp(+-h e_k / 2) = c q +- s Q(q)[:, 1 + k] */
            xp[3 + i] = c * q[i] + sn * cols[k][i];
            xm[3 + i] = c * q[i] - sn * cols[k][i];
        }
        fd = (vjp_objective(&m, xp, U + VJP_T * 6, GX + (VJP_T + 1) * VJP_NX, work) -
              vjp_objective(&m, xm, U + VJP_T * 6, GX + (VJP_T + 1) * VJP_NX, work)) /
             (2.0 * h);
        for (i = 0; i < 4; i++) {
            an += 0.5 * gx0[VJP_NX + 3 + i] * cols[k][i];
        }
        worst = fmax(worst, fabs(fd - an));
    }
    CHECK(worst <= 1e-7 * scale && scale > 0.1, "rollout vjp: central differences (%.3g of %.3g)",
          worst, scale);
    /* orthogonal to the unit quaternion: no component along the normalisation */
    CHECK(fabs(gx0[3] * x0[3] + gx0[4] * x0[4] + gx0[5] * x0[5] + gx0[6] * x0[6]) < 1e-14,
          "rollout vjp: the quaternion's gradient is tangent");
    X[(VJP_T + 1) * VJP_NX + 2 * VJP_NX + 7] = NAN; /* a non-finite state in trajectory 1 */
    st = sc_rollout_vjp(&m, 2, VJP_T, X, U, GX, NULL, work, gx0, gU, status);
    CHECK(st == SC_OK && status[0] == SC_OK && status[1] == SC_ENONFINITE && isnan(gx0[VJP_NX]) &&
              isnan(gU[VJP_T * 6]) && !isnan(gx0[0]),
          "rollout vjp: a failing step's trajectory NaN, the others kept (%d)", status[1]);
    X[VJP_T * VJP_NX + 3] *= 1.001; /* the last state of trajectory 0: no step's input */
    st = sc_rollout_vjp(&m, 2, VJP_T, X, U, GX, NULL, work, gx0, gU, status);
    CHECK(st == SC_OK && status[0] == SC_ENOTUNIT && isnan(gx0[0]) && isnan(gU[0]),
          "rollout vjp: the last state checked too (%d)", status[0]);
    CHECK(sc_rollout_vjp(&m, -1, VJP_T, X, U, GX, NULL, work, gx0, gU, status) == SC_EINVAL &&
              sc_rollout_vjp(&m, 2, VJP_T, X, NULL, GX, NULL, work, gx0, gU, status) == SC_EINVAL &&
              sc_rollout_vjp(&m, 2, VJP_T, X, U, NULL, NULL, work, gx0, gU, status) == SC_EINVAL &&
              sc_rollout_vjp(&m, 2, VJP_T, X, U, GX, NULL, NULL, gx0, gU, status) == SC_EINVAL &&
              sc_rollout_vjp(&m, 2, VJP_T, X, U, GX, NULL, work, gx0, gU, NULL) == SC_EINVAL,
          "rollout vjp: argument checks");
    free(work);
}

static void test_ilqr(void)
{
    /* T = 1, n = 1, nu = 1: x1 = a x0 + b u0, cost r u^2 / 2 + q x1^2 / 2 + c x1 (terms
       at the trajectory) */
    const double a = 0.9, b = 0.5, r = 0.2, q = 3.0, c = 1.5, U = 0.1;
    double A[1] = {a}, B[1] = {b}, g[4] = {0.0, r * U, c, 0.0}, H[8] = {0, 0, 0, r, q, 0, 0, 0};
    double lo[1] = {-1.0}, hi[1] = {1.0}, Uv[1] = {U}, k[2], K[2], work[256];
    double quu = r + b * q * b, qu = r * U + b * c, qux = b * q * a;
    sc_ilqr_expansion e;
    sc_ilqr_policy pol;
    CHECK(sc_ilqr_backward_workspace_size(1, 1) <= 256 &&
              sc_ilqr_backward_workspace_size(0, 1) == 0,
          "ilqr workspace size");
    memset(&e, 0, sizeof e);
    e.T = 1, e.n = 1, e.nu = 1, e.A = A, e.B = B, e.g = g, e.H = H, e.U = Uv, e.lo = lo, e.hi = hi;
    pol.k = k, pol.K = K;
    CHECK(sc_ilqr_backward(&e, 0.0, work, &pol) == SC_OK && pol.definite &&
              fabs(k[0] + qu / quu) < 1e-15 && fabs(K[0] + qux / quu) < 1e-15 &&
              fabs(pol.dv1 - k[0] * qu) < 1e-15 && fabs(pol.dv2 - 0.5 * k[0] * k[0] * quu) < 1e-15,
          "ilqr backward: LQ closed form (k %g, K %g)", k[0], K[0]);
    lo[0] = -0.1;
    CHECK(sc_ilqr_backward(&e, 0.0, work, &pol) == SC_OK && pol.definite && k[0] == -0.1 - U &&
              K[0] == 0.0,
          "ilqr backward: a control held at its bound (k %g, K %g)", k[0], K[0]);
    lo[0] = -1.0;
    CHECK(sc_ilqr_backward(&e, 1.0, work, &pol) == SC_OK && pol.definite &&
              fabs(k[0] + qu / (quu + 1.0)) < 1e-15,
          "ilqr backward: regularization mu");
    H[3] = -2.0; /* Quu = -2 + 0.75 < 0 */
    CHECK(sc_ilqr_backward(&e, 0.0, work, &pol) == SC_OK && !pol.definite,
          "ilqr backward: Quu not definite reported");
    {
        double fxx[1] = {0.0}, fxu[1] = {0.0}, fuu[1] = {0.0};
        e.fxx = fxx, e.fxu = fxu, e.fuu = fuu; /* DDP: Quu's eigenvalue replaced by |.| */
        CHECK(sc_ilqr_backward(&e, 0.0, work, &pol) == SC_OK && pol.definite &&
                  fabs(k[0] + qu / 1.25) < 1e-15,
              "ilqr backward: DDP's saddle-free Quu (k %g)", k[0]);
        e.fxu = NULL;
        CHECK(sc_ilqr_backward(&e, 0.0, work, &pol) == SC_EINVAL, "ilqr: fxx without fxu");
        e.fxx = e.fuu = NULL;
    }
    CHECK(sc_ilqr_backward(NULL, 0.0, work, &pol) == SC_EINVAL &&
              sc_ilqr_backward(&e, NAN, work, &pol) == SC_ENONFINITE &&
              sc_ilqr_backward(&e, -1.0, work, &pol) == SC_EINVAL &&
              sc_ilqr_backward(&e, 0.0, NULL, &pol) == SC_EINVAL,
          "ilqr backward: argument checks");
    {
        /* the 3D free body of test_step_unit, forces and torques as controls */
        sc_body body;
        sc_model m;
        sc_model_sizes sz;
        enum { T = 4 };
        double x0[13] = {0.1, -0.2, 0.3}, Uc[T * 6], X[(T + 1) * 13], Xn[(T + 1) * 13], Un[T * 6],
               kk[T * 6], KK[T * 6 * 12], ulo[T * 6], uhi[T * 6], d[12], x1[13], *w;
        int st, i, ok = 1;
        ptrdiff_t failed = 7;
        sc_rollout_out ro = {NULL, NULL, NULL, NULL, NULL};
        int status[1];
        free_body_model(&body, &m);
        sc_model_check(&m, &sz);
        quat(x0 + 3, 0.8, 0.6, 0.0, 0.8, 1.0);
        x0[7] = 0.4, x0[10] = 1.0;
        for (i = 0; i < T * 6; i++) {
            Uc[i] = 0.1 * (i % 5) - 0.2, kk[i] = 0.05, ulo[i] = -0.25, uhi[i] = 0.25;
        }
        for (i = 0; i < T * 6 * 12; i++) {
            KK[i] = 0.01 * ((i % 7) - 3);
        }
        w = (double *)malloc((size_t)(sc_step_workspace_size(&m, 0, 0, 1) + 12) * sizeof(double));
        if (w == NULL) {
            return;
        }
        ro.X = X, ro.status = status;
        sc_rollout(&m, 1, T, x0, Uc, 0, NULL, w, &ro);
        st = sc_rollout_policy(&m, T, X, Uc, kk, KK, 0.0, ulo, uhi, NULL, w, Xn, Un, &failed);
        for (i = 0; i < (T + 1) * 13; i++) {
            ok &= Xn[i] == X[i];
        }
        CHECK(st == SC_OK && failed == -1 && ok, "rollout_policy: alpha 0 is the reference");
        st = sc_rollout_policy(&m, T, X, Uc, kk, KK, 1.0, ulo, uhi, NULL, w, Xn, Un, &failed);
        ok = st == SC_OK && failed == -1;
        for (i = 0; i < T * 6; i++) {
            ok &= Un[i] >= ulo[i] && Un[i] <= uhi[i];
        }
        CHECK(ok, "rollout_policy: controls within their bounds");
        memcpy(x1, x0, sizeof x1);
        quat(x1 + 3, 0.8, 0.6, 0.0, 0.8, 1.0);
        {
            double qz[4] = {cos(0.15), 0.0, 0.0, sin(0.15)}, *q0 = x0 + 3; /* q0 then 0.3 about z */
            x1[3] = q0[0] * qz[0] - q0[3] * qz[3];
            x1[4] = q0[1] * qz[0] + q0[2] * qz[3];
            x1[5] = q0[2] * qz[0] - q0[1] * qz[3];
            x1[6] = q0[3] * qz[0] + q0[0] * qz[3];
        }
        x1[0] += 0.5;
        sc_state_difference(&m, &sz, x1, x0, d);
        CHECK(fabs(d[0] - 0.5) < 1e-15 && fabs(d[3]) < 1e-15 && fabs(d[4]) < 1e-15 &&
                  fabs(d[5] - 0.3) < 1e-15 && d[6] == 0.0,
              "state difference: 0.3 rad about the body's z (%g %g %g)", d[3], d[4], d[5]);
        for (i = 0; i < T * 6; i++) {
            ulo[i] = -INFINITY, uhi[i] = INFINITY;
        }
        kk[2 * 6 + 1] = 1e40; /* a force beyond the valid range at step 2 */
        st = sc_rollout_policy(&m, T, X, Uc, kk, KK, 1.0, ulo, uhi, NULL, w, Xn, Un, &failed);
        CHECK(st == SC_ERANGE && failed == 2 && isnan(Xn[3 * 13]) && isnan(Un[3 * 6]) &&
                  !isnan(Xn[2 * 13]),
              "rollout_policy: a failed step (status %d at %td)", st, failed);
        CHECK(sc_rollout_policy(&m, T, X, Uc, kk, KK, NAN, ulo, uhi, NULL, w, Xn, Un, &failed) ==
                      SC_EINVAL &&
                  sc_rollout_policy(&m, -1, X, Uc, kk, KK, 1.0, ulo, uhi, NULL, w, Xn, Un,
                                    &failed) == SC_EINVAL,
              "rollout_policy: argument checks");
        free(w);
    }
}

/* sc_batch.h: two 2D models of one structure (masses differ), index maps (a broadcast
   start state, one control sequence for all), 1..3 threads: each item equals sc_step /
   sc_rollout of its model and rows, bit for bit; maps and models refused */
static void test_batch(void)
{
    sc_body b1[2], b2[2], b3[2];
    sc_model m1, m2, m3;
    const sc_model *models[2] = {&m1, &m2}, *odd[2] = {&m1, &m3};
    const ptrdiff_t mi[4] = {0, 1, 1, 0}, xi[4] = {0, 0, 0, 0}, ui[4] = {0, 1, 0, 1};
    const ptrdiff_t bad_mi[4] = {0, 2, 0, 0};
    double x[12] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0, -2.0, 0.5, 0.0, 0.0, 0.0};
    double U[2 * 3 * 6], X[4 * 4 * 12], A[4 * 3 * 144], Xr[4 * 12], Ar[3 * 144];
    double xn[4 * 12], dxdx[4 * 144], sn[12], sA[144], *work;
    int status[4], st1, k, t, nth, ok;
    sc_batch_map map = {NULL, 2, NULL, NULL, NULL};
    memset(b1, 0, sizeof b1);
    b1[0].kind = SC_BODY_DYNAMIC;
    b1[0].actuated = 1;
    b1[0].mass = 2.0;
    b1[0].inertia[0] = 0.5;
    b1[0].cloud.dim = 2;
    b1[1].kind = SC_BODY_KINEMATIC;
    b1[1].cloud.dim = 2;
    memcpy(b2, b1, sizeof b1);
    b2[0].mass = 3.0;
    memcpy(b3, b1, sizeof b1);
    b3[0].actuated = 0;
    memset(&m1, 0, sizeof m1);
    m1.dim = 2;
    m1.nbody = 2;
    m1.bodies = b1;
    m1.gravity[1] = -9.81;
    m1.dt = 0.01;
    m1.integrator = SC_INTEGRATOR_EULER;
    m2 = m1;
    m2.bodies = b2;
    m2.integrator = SC_INTEGRATOR_IMPLICIT;
    m3 = m1;
    m3.bodies = b3;
    CHECK(sc_models_alike(&m1, &m2) && !sc_models_alike(&m1, &m3), "models alike");
    for (k = 0; k < 2 * 3 * 6; k++) {
        U[k] = 0.01 * (double)(k % 7) - 0.02;
    }
    map.models = models;
    map.model = mi, map.x = xi, map.u = ui;
    work = (double *)malloc((size_t)sc_batch_workspace_size(&map, 2, 1, 3) * sizeof(double));
    if (work == NULL) {
        return;
    }
    for (nth = 1; nth <= 3; nth++) {
        sc_rollout_out ro = {NULL, NULL, NULL, NULL, NULL};
        sc_step_out so = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        ro.X = X, ro.A = A, ro.status = status;
        CHECK(sc_rollout_batch(&map, 4, 3, x, U, 1, OPT(SC_ISA_AUTO, 0, nth), work, &ro) == SC_OK,
              "rollout_batch with %d threads", nth);
        for (ok = 1, k = 0; k < 4; k++) {
            sc_rollout_out r1 = {NULL, NULL, NULL, NULL, NULL};
            r1.X = Xr, r1.A = Ar, r1.status = &st1;
            ok &= sc_rollout(models[mi[k]], 1, 3, x, U + ui[k] * 18, 1, NULL, work, &r1) == SC_OK;
            ok &= status[k] == st1 && memcmp(X + k * 48, Xr, sizeof Xr) == 0 &&
                  memcmp(A + k * 3 * 144, Ar, sizeof Ar) == 0;
        }
        CHECK(ok, "rollout_batch == sc_rollout per item, bitwise (%d threads)", nth);
        so.x_next = xn, so.dx_dx = dxdx;
        CHECK(sc_step_batch(&map, 4, x, U, 1, 0, OPT(SC_ISA_AUTO, 0, nth), work, &so, status) ==
                  SC_OK,
              "step_batch with %d threads", nth);
        for (ok = 1, k = 0; k < 4; k++) {
            sc_step_out s1 = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
            s1.x_next = sn, s1.dx_dx = sA;
            t = sc_step(models[mi[k]], x, U + ui[k] * 6, 1, 0, NULL, work, &s1);
            ok &= t == SC_OK && status[k] == SC_OK && memcmp(xn + k * 12, sn, sizeof sn) == 0 &&
                  memcmp(dxdx + k * 144, sA, sizeof sA) == 0;
        }
        CHECK(ok, "step_batch == sc_step per item, bitwise (%d threads)", nth);
    }
    {
        sc_rollout_out ro = {NULL, NULL, NULL, NULL, NULL};
        sc_step_out so = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        ro.X = X, ro.status = status;
        so.x_next = xn;
        map.model = bad_mi;
        CHECK(sc_rollout_batch(&map, 4, 3, x, U, 0, NULL, work, &ro) == SC_EINVAL,
              "model index out of range");
        map.model = NULL; /* model b for item b: needs nmodel >= B */
        CHECK(sc_step_batch(&map, 4, x, U, 0, 0, NULL, work, &so, status) == SC_EINVAL &&
                  sc_step_batch(&map, 2, x, U, 0, 0, NULL, work, &so, status) == SC_OK,
              "no model index: one model per item");
        map.models = odd;
        CHECK(sc_step_batch(&map, 2, x, U, 0, 0, NULL, work, &so, status) == SC_EINVAL &&
                  sc_batch_workspace_size(&map, 0, 0, 1) == 0,
              "models of another structure refused");
        map.models = models;
        CHECK(sc_rollout_batch(NULL, 1, 1, x, U, 0, NULL, work, &ro) == SC_EINVAL &&
                  sc_rollout_batch(&map, 1, 1, x, NULL, 0, NULL, work, &ro) == SC_EINVAL &&
                  sc_rollout_batch(&map, 1, 0, x, NULL, 0, NULL, work, &ro) == SC_OK,
              "bad arguments");
    }
    free(work);
}

int main(void)
{
    test_status_and_isa();
    test_options();
    test_exp();
    test_ln_up();
    test_parallel_range_fn_checks();
    test_parallel_pool();
    test_ssdf_values(2);
    test_ssdf_values(3);
    test_ssdf_pruned(2, 3001);
    test_ssdf_pruned(3, 3001);
    test_ssdf_pruned(2, 40);
    test_ssdf_pruned(3, 40);
    test_ssdf_special();
    test_interrupt();
    test_contact_interrupt();
    test_cloud_view();
    test_ranges();
    test_separation();
    test_separation_unit();
    test_contact();
    test_contact_params();
    test_contact_unit();
    test_contact_variants();
    test_contact_friction_modes();
    test_model();
    test_batch();
    test_step_unit();
    test_rollout_vjp();
    test_ilqr();
    sc__parallel_shutdown(); /* the pool's workers joined: nothing left for the leak checks */
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail == 0 ? 0 : 1;
}
