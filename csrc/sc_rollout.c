/*
 * sc_rollout.c - batched rollouts (see sc_rollout.h): trajectories in parallel, each a
 * sequence of sc_step calls on one thread.
 */
#include <math.h>
#include <string.h>

#include "sc_model_internal.h"
#include "sc_parallel_internal.h"

typedef struct {
    const sc_model *m;
    sc_model_sizes s;
    ptrdiff_t T;
    const double *x0, *U;
    int order;
    sc_options step_opt; /* every step on one thread */
    double *work;
    ptrdiff_t ws;
    const sc_rollout_out *out;
} rollout_job;

/* a failed step t: its outputs and everything after are NaN */
static void fail_from(const rollout_job *J, ptrdiff_t t, double *X, double *A, double *Bu)
{
    const int nx = J->s.nq + J->s.nv, n2 = 2 * J->s.nv, nu = J->s.nu;
    ptrdiff_t k;
    for (k = (t + 1) * nx; k < (J->T + 1) * nx; k++) {
        X[k] = NAN;
    }
    for (k = t * n2 * n2; A && k < J->T * n2 * n2; k++) {
        A[k] = NAN;
    }
    for (k = t * n2 * nu; Bu && k < J->T * n2 * nu; k++) {
        Bu[k] = NAN;
    }
}

static int rollout_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const rollout_job *J = (const rollout_job *)ctx;
    const int nx = J->s.nq + J->s.nv, n2 = 2 * J->s.nv, nu = J->s.nu;
    double *work = J->work + (ptrdiff_t)tid * J->ws;
    /* the steps of a worker thread read the caller's interrupt through a view */
    sc_options opt = J->step_opt;
    sc_interrupt view;
    ptrdiff_t bi, t;
    if (tid != 0) {
        opt.interrupt = sc__interrupt_view(&view, opt.interrupt);
    }
    for (bi = begin; bi < end; bi++) {
        double *X = J->out->X + bi * (J->T + 1) * nx;
        double *A = J->out->A ? J->out->A + bi * J->T * n2 * n2 : NULL;
        double *Bu = J->out->Bu ? J->out->Bu + bi * J->T * n2 * nu : NULL;
        int st = SC_OK;
        ptrdiff_t failed = -1;
        memcpy(X, J->x0 + bi * nx, sizeof(double) * (size_t)nx);
        for (t = 0; t < J->T && st == SC_OK; t++) {
            sc_step_out so = {0};
            if (sc_interrupt_check(opt.interrupt)) {
                return SC_EINTERRUPTED;
            }
            so.x_next = X + (t + 1) * nx;
            so.dx_dx = A ? A + t * n2 * n2 : NULL;
            so.dx_du = Bu ? Bu + t * n2 * nu : NULL;
            st = sc_step(J->m, X + t * nx, J->U + (bi * J->T + t) * nu, J->order, 0, &opt, work,
                         &so);
            if (st == SC_EINTERRUPTED) {
                return st;
            }
            if (st != SC_OK) {
                failed = t;
                fail_from(J, st == SC_EDIVERGED ? t + 1 : t, X, A, Bu);
            }
        }
        J->out->status[bi] = st;
        if (J->out->failed) {
            J->out->failed[bi] = failed;
        }
    }
    return SC_OK;
}

int sc_rollout(const sc_model *m, ptrdiff_t B, ptrdiff_t T, const double *x0, const double *U,
               int order, const sc_options *opt, double *work, const sc_rollout_out *out)
{
    rollout_job J;
    sc_options o;
    int st, nthreads;
    if (sc_model_check(m, &J.s) != SC_OK || B < 0 || T < 0 || x0 == NULL ||
        (U == NULL && J.s.nu > 0 && T > 0) || order < 0 || order > 1 || work == NULL ||
        out == NULL || out->X == NULL || out->status == NULL) {
        return SC_EINVAL;
    }
    if ((st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    nthreads = o.nthreads > B ? (B > 0 ? (int)B : 1) : o.nthreads;
    J.m = m;
    J.T = T;
    J.x0 = x0;
    J.U = U;
    J.order = order;
    J.step_opt = o;
    J.step_opt.nthreads = 1;
    J.work = work;
    J.ws = sc_step_workspace_size(m, order, 0, 1);
    J.out = out;
    return sc__parallel_for_polled(B, nthreads, rollout_range, &J, o.interrupt);
}
