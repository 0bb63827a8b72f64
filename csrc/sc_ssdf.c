/*
 * sc_ssdf.c - SSDF public entry points: cloud packing, argument checks,
 * instruction-set dispatch and the threaded batch driver.  The arithmetic
 * lives in sc_ssdf_impl.h, compiled once per ISA.
 */
#include <math.h>
#include <stdint.h>

#include "sc_parallel.h"
#include "sc_ssdf.h"

/* below this many sample-query pairs per thread, starting a thread costs more
 * than it saves (thread start ~20 us ~ 2e4 pairs); results do not depend on it */
#define SC_SSDF_MIN_PAIRS_PER_THREAD ((ptrdiff_t)1 << 16)

static ptrdiff_t padded(ptrdiff_t n)
{
    return (n + SC_PAD - 1) / SC_PAD * SC_PAD;
}

ptrdiff_t sc_cloud_packed_size(int dim, ptrdiff_t n)
{
    if ((dim != 2 && dim != 3) || n < 1 || n > PTRDIFF_MAX / 16 / (3 * dim + 4)) {
        return -1;
    }
    return (3 * dim + 3) * padded(n) + SC_PAD;
}

int sc_cloud_pack(const sc_cloud *c, double *buf, sc_packed_cloud *pc)
{
    ptrdiff_t i, npad;
    int D, k;
    double *M, *LA, *Q, *QQ, *hdr, lo[3], hi[3], rho2 = 0.0;

    if (c == NULL || buf == NULL || c->p == NULL || c->nrm == NULL ||
        sc_cloud_packed_size(c->dim, c->n) < 0) {
        return SC_EINVAL;
    }
    D = c->dim;
    npad = padded(c->n);
    M = buf + 2 * D * npad;
    LA = M + npad;
    Q = LA + npad;
    QQ = Q + D * npad;
    hdr = QQ + npad;
    for (i = 0; i < c->n; i++) {
        double m = 0.0, a = c->wts ? c->wts[i] : 1.0;
        if (!isfinite(a)) {
            return SC_ENONFINITE;
        }
        if (!(a > 0.0)) {
            return SC_EINVAL;
        }
        for (k = 0; k < D; k++) {
            double p = c->p[i * D + k], nk = c->nrm[i * D + k];
            if (!isfinite(p) || !isfinite(nk)) {
                return SC_ENONFINITE;
            }
            buf[k * npad + i] = p;
            buf[(D + k) * npad + i] = nk;
            m += nk * p;
        }
        M[i] = m;
        LA[i] = log(a);
    }
    /* c0 = bounding-box centre; q_i = p_i - c0; rho = max |q_i| */
    for (k = 0; k < D; k++) {
        lo[k] = hi[k] = c->p[k];
        for (i = 1; i < c->n; i++) {
            double p = c->p[i * D + k];
            lo[k] = p < lo[k] ? p : lo[k];
            hi[k] = p > hi[k] ? p : hi[k];
        }
        hdr[k] = 0.5 * (lo[k] + hi[k]);
    }
    for (i = 0; i < c->n; i++) {
        double qq = 0.0;
        for (k = 0; k < D; k++) {
            double q = c->p[i * D + k] - hdr[k];
            Q[k * npad + i] = q;
            qq += q * q;
        }
        QQ[i] = qq;
        rho2 = qq > rho2 ? qq : rho2;
    }
    for (k = D; k < SC_PAD; k++) {
        hdr[k] = 0.0;
    }
    hdr[D] = sqrt(rho2);
    for (i = c->n; i < npad; i++) {
        for (k = 0; k < 2 * D; k++) {
            buf[k * npad + i] = 0.0;
        }
        for (k = 0; k < D; k++) {
            Q[k * npad + i] = 0.0;
        }
        M[i] = QQ[i] = 0.0;
        LA[i] = -INFINITY;
    }
    if (pc) {
        pc->dim = D;
        pc->n = c->n;
        pc->npad = npad;
        pc->data = buf;
    }
    return SC_OK;
}

ptrdiff_t sc_ssdf_workspace_size(const sc_packed_cloud *pc)
{
    return pc ? pc->npad : 0;
}

typedef struct ssdf_job {
    sc__ssdf_rows_fn fn;
    const sc_packed_cloud *pc;
    double eps;
    const double *x;
    double *work;
    ptrdiff_t wsize;
    double *phi, *g, *h, *t;
} ssdf_job;

static int ssdf_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const ssdf_job *j = (const ssdf_job *)ctx;
    const ptrdiff_t D = j->pc->dim;
    return j->fn(j->pc, j->eps, end - begin, j->x + begin * D, j->work + tid * j->wsize,
                 j->phi ? j->phi + begin : NULL, j->g ? j->g + begin * D : NULL,
                 j->h ? j->h + begin * D * D : NULL, j->t ? j->t + begin * D * D * D : NULL);
}

int sc_ssdf(const sc_packed_cloud *pc, double eps, ptrdiff_t m, const double *x, int isa,
            int nthreads, double *work, double *phi, double *dphi_dx, double *d2phi_dx2,
            double *d3phi_dx3)
{
    ssdf_job job;
    double pairs_per_thread;

    if (pc == NULL || pc->data == NULL || (pc->dim != 2 && pc->dim != 3) || pc->n < 1 ||
        pc->npad != padded(pc->n) || !(eps > 0.0) || !isfinite(eps) || m < 0 || nthreads < 1 ||
        (m > 0 && (x == NULL || work == NULL))) {
        return SC_EINVAL;
    }
    isa = sc_isa_resolve(isa);
    if (isa < 0) {
        return isa;
    }
    job.fn = isa == SC_ISA_AVX512 ? sc__ssdf_rows_avx512
             : isa == SC_ISA_AVX2 ? sc__ssdf_rows_avx2
                                  : sc__ssdf_rows_generic;
    job.pc = pc;
    job.eps = eps;
    job.x = x;
    job.work = work;
    job.wsize = sc_ssdf_workspace_size(pc);
    job.phi = phi;
    job.g = dphi_dx;
    job.h = d2phi_dx2;
    job.t = d3phi_dx3;
    if (m == 0) {
        return SC_OK;
    }
    /* fewer threads for small problems; per-query results never depend on it */
    /* in double: m * npad may overflow ptrdiff_t on 32-bit platforms */
    pairs_per_thread = (double)m * (double)pc->npad / (double)nthreads;
    if (pairs_per_thread < (double)SC_SSDF_MIN_PAIRS_PER_THREAD) {
        double want = (double)m * (double)pc->npad / (double)SC_SSDF_MIN_PAIRS_PER_THREAD;
        nthreads = want < 1.0 ? 1 : (int)want;
    }
    return sc_parallel_for(m, nthreads, ssdf_range, &job);
}
