/*
 * sc_rollout.c - batched rollouts (see sc_rollout.h): sc_rollout is sc_rollout_batch
 * (sc_batch.c) of one model without index maps; and their reverse-mode adjoint.
 */
#include <math.h>
#include <string.h>

#include "sc_batch.h"
#include "sc_model_internal.h"
#include "sc_parallel_internal.h"

int sc_rollout(const sc_model *m, ptrdiff_t B, ptrdiff_t T, const double *x0, const double *U,
               int order, const sc_options *opt, double *work, const sc_rollout_out *out)
{
    /* one model, trajectory b on row b of x0 and U: a batch without index maps */
    const sc_model *models[1];
    sc_batch_map map;
    models[0] = m;
    map.models = models;
    map.nmodel = 1;
    map.model = NULL;
    map.x = NULL;
    map.u = NULL;
    return sc_rollout_batch(&map, B, T, x0, U, order, opt, work, out);
}

/* ---- the reverse-mode adjoint ------------------------------------------------------------ */

typedef struct {
    const sc_model *m;
    sc_model_sizes s;
    ptrdiff_t T;
    const double *X, *U, *GX;
    sc_options step_opt;
    double *work;
    ptrdiff_t ws, step_ws;
    double *gx0, *gU;
    int *status;
} vjp_job;

ptrdiff_t sc_rollout_vjp_workspace_size(const sc_model *m)
{
    sc_model_sizes s;
    ptrdiff_t n2;
    if (sc_model_check(m, &s) != SC_OK) {
        return 0;
    }
    n2 = 2 * (ptrdiff_t)s.nv;
    /* the step's scratch, A, B, x_next, and two adjoint vectors */
    return sc_step_workspace_size(m, 1, 0, 1) + n2 * n2 + n2 * s.nu + s.nq + s.nv + 2 * n2;
}

/* lam += P(x)' g: the tangent cotangent of the ambient cotangent g at the state x */
static void add_tangent_cotangent(const sc_model *m, const sc_model_sizes *s, const double *x,
                                  const double *g, double *lam)
{
    int j, i;
    for (j = 0; j < s->nmove; j++) {
        if (m->dim == 2) {
            for (i = 0; i < 3; i++) {
                lam[3 * j + i] += g[3 * j + i];
            }
        } else {
            const double *q = x + 7 * j + 3, *gq = g + 7 * j + 3;
            for (i = 0; i < 3; i++) {
                lam[6 * j + i] += g[7 * j + i];
            }
            /* columns 1..3 of Q(q), the left product q (x) p, halved */
            lam[6 * j + 3] += 0.5 * (-q[1] * gq[0] + q[0] * gq[1] + q[3] * gq[2] - q[2] * gq[3]);
            lam[6 * j + 4] += 0.5 * (-q[2] * gq[0] - q[3] * gq[1] + q[0] * gq[2] + q[1] * gq[3]);
            lam[6 * j + 5] += 0.5 * (-q[3] * gq[0] + q[2] * gq[1] - q[1] * gq[2] + q[0] * gq[3]);
        }
    }
    for (i = 0; i < s->nv; i++) {
        lam[s->nv + i] += g[s->nq + i];
    }
}

/* g = E(x)' lam: the ambient gradient at the state x (unit quaternions) of the tangent
 * gradient lam; E = d (tangent) / d x, 2 Q(q)[:, 1:]' for a quaternion */
static void ambient_gradient(const sc_model *m, const sc_model_sizes *s, const double *x,
                             const double *lam, double *g)
{
    int j, i;
    for (j = 0; j < s->nmove; j++) {
        if (m->dim == 2) {
            for (i = 0; i < 3; i++) {
                g[3 * j + i] = lam[3 * j + i];
            }
        } else {
            const double *q = x + 7 * j + 3, *l = lam + 6 * j + 3;
            double *gq = g + 7 * j + 3;
            for (i = 0; i < 3; i++) {
                g[7 * j + i] = lam[6 * j + i];
            }
            gq[0] = 2.0 * (-q[1] * l[0] - q[2] * l[1] - q[3] * l[2]);
            gq[1] = 2.0 * (q[0] * l[0] - q[3] * l[1] + q[2] * l[2]);
            gq[2] = 2.0 * (q[3] * l[0] + q[0] * l[1] - q[1] * l[2]);
            gq[3] = 2.0 * (-q[2] * l[0] + q[1] * l[1] + q[0] * l[2]);
        }
    }
    for (i = 0; i < s->nv; i++) {
        g[s->nq + i] = lam[s->nv + i];
    }
}

static int vjp_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const vjp_job *J = (const vjp_job *)ctx;
    const int nx = J->s.nq + J->s.nv, n2 = 2 * J->s.nv, nu = J->s.nu;
    double *step_work = J->work + (ptrdiff_t)tid * J->ws;
    double *A = step_work + J->step_ws, *Bu = A + n2 * n2, *xn = Bu + n2 * nu, *lam = xn + nx,
           *nxt = lam + n2;
    sc_options opt = J->step_opt;
    sc_interrupt view;
    ptrdiff_t bi, t;
    int i, k;
    if (tid != 0) {
        opt.interrupt = sc__interrupt_view(&view, opt.interrupt);
    }
    for (bi = begin; bi < end; bi++) {
        const double *X = J->X + bi * (J->T + 1) * nx, *GX = J->GX + bi * (J->T + 1) * nx;
        const double *U = J->U ? J->U + bi * J->T * nu : NULL;
        double *gU = J->gU ? J->gU + bi * J->T * nu : NULL, *gx0 = J->gx0 + bi * nx;
        /* the last state is no step's input: checked here (the others by sc_step) */
        int st = sc__state_check(J->m, &J->s, X + J->T * nx, NULL, 0);
        memset(lam, 0, sizeof(double) * (size_t)n2);
        add_tangent_cotangent(J->m, &J->s, X + J->T * nx, GX + J->T * nx, lam);
        for (t = J->T - 1; t >= 0 && st == SC_OK; t--) {
            sc_step_out so = {0};
            if (sc_interrupt_check(opt.interrupt)) {
                return SC_EINTERRUPTED;
            }
            so.x_next = xn;
            so.dx_dx = A;
            so.dx_du = Bu;
            st = sc_step(J->m, X + t * nx, U ? U + t * nu : NULL, 1, 0, &opt, step_work, &so);
            if (st == SC_EINTERRUPTED) {
                return st;
            }
            if (st != SC_OK) {
                break;
            }
            for (k = 0; k < nu; k++) {
                double v = 0.0;
                for (i = 0; i < n2; i++) {
                    v += Bu[i * nu + k] * lam[i];
                }
                gU[t * nu + k] = v;
            }
            for (k = 0; k < n2; k++) {
                double v = 0.0;
                for (i = 0; i < n2; i++) {
                    v += A[i * n2 + k] * lam[i];
                }
                nxt[k] = v;
            }
            memcpy(lam, nxt, sizeof(double) * (size_t)n2);
            add_tangent_cotangent(J->m, &J->s, X + t * nx, GX + t * nx, lam);
        }
        if (st == SC_OK) {
            ambient_gradient(J->m, &J->s, X, lam, gx0);
        } else {
            for (k = 0; k < nx; k++) {
                gx0[k] = NAN;
            }
            for (k = 0; gU && k < J->T * nu; k++) {
                gU[k] = NAN;
            }
        }
        J->status[bi] = st;
    }
    return SC_OK;
}

int sc_rollout_vjp(const sc_model *m, ptrdiff_t B, ptrdiff_t T, const double *X, const double *U,
                   const double *GX, const sc_options *opt, double *work, double *gx0, double *gU,
                   int *status)
{
    vjp_job J;
    sc_options o;
    int st, nthreads;
    if (sc_model_check(m, &J.s) != SC_OK || B < 0 || T < 0 || X == NULL || GX == NULL ||
        ((U == NULL || gU == NULL) && J.s.nu > 0 && T > 0) || work == NULL || gx0 == NULL ||
        status == NULL) {
        return SC_EINVAL;
    }
    if ((st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    nthreads = o.nthreads > B ? (B > 0 ? (int)B : 1) : o.nthreads;
    J.m = m;
    J.T = T;
    J.X = X;
    J.U = J.s.nu > 0 ? U : NULL;
    J.GX = GX;
    J.step_opt = o;
    J.step_opt.nthreads = 1;
    J.work = work;
    J.ws = sc_rollout_vjp_workspace_size(m);
    J.step_ws = sc_step_workspace_size(m, 1, 0, 1);
    J.gx0 = gx0;
    J.gU = J.s.nu > 0 ? gU : NULL;
    J.status = status;
    return sc__parallel_for_polled(B, nthreads, vjp_range, &J, o.interrupt);
}
