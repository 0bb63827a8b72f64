/*
 * sc_batch.c - batched steps and rollouts over index maps (see sc_batch.h): items in
 * parallel, each a sequence of sc_step calls on one thread.
 */
#include <math.h>
#include <string.h>

#include "sc_batch.h"
#include "sc_model_internal.h"
#include "sc_parallel_internal.h"

int sc_models_alike(const sc_model *a, const sc_model *b)
{
    sc_model_sizes sa, sb;
    int k;
    if (sc_model_check(a, &sa) != SC_OK || sc_model_check(b, &sb) != SC_OK || a->dim != b->dim ||
        a->nbody != b->nbody || sa.nq != sb.nq || sa.nv != sb.nv || sa.nu != sb.nu ||
        sa.np != sb.np) {
        return 0;
    }
    for (k = 0; k < a->nbody; k++) {
        if (a->bodies[k].kind != b->bodies[k].kind ||
            a->bodies[k].actuated != b->bodies[k].actuated) {
            return 0;
        }
    }
    return 1;
}

/* SC_OK for a usable map of B items (every model alike the first, indices in range) */
static int map_check(const sc_batch_map *map, ptrdiff_t B, sc_model_sizes *s)
{
    ptrdiff_t k;
    if (map == NULL || map->models == NULL || map->nmodel < 1 || B < 0 || map->models[0] == NULL ||
        sc_model_check(map->models[0], s) != SC_OK) {
        return SC_EINVAL;
    }
    for (k = 1; k < map->nmodel; k++) {
        if (map->models[k] == NULL || !sc_models_alike(map->models[0], map->models[k])) {
            return SC_EINVAL;
        }
    }
    if (map->model == NULL && map->nmodel > 1 && map->nmodel < B) {
        return SC_EINVAL;
    }
    for (k = 0; k < B; k++) {
        if ((map->model && (map->model[k] < 0 || map->model[k] >= map->nmodel)) ||
            (map->x && map->x[k] < 0) || (map->u && map->u[k] < 0)) {
            return SC_EINVAL;
        }
    }
    return SC_OK;
}

/* one thread's scratch: the largest of the models' */
static ptrdiff_t thread_ws(const sc_batch_map *map, int order, int params)
{
    ptrdiff_t k, ws = 0;
    for (k = 0; k < map->nmodel; k++) {
        const ptrdiff_t w = sc_step_workspace_size(map->models[k], order, params, 1);
        if (w <= 0) {
            return 0;
        }
        ws = w > ws ? w : ws;
    }
    return ws;
}

ptrdiff_t sc_batch_workspace_size(const sc_batch_map *map, int order, int params, int nthreads)
{
    sc_model_sizes s;
    if (map_check(map, 0, &s) != SC_OK || nthreads < 1 || order < 0 || order > 2) {
        return 0;
    }
    return (ptrdiff_t)nthreads * thread_ws(map, order, params);
}

typedef struct {
    const sc_batch_map *map;
    sc_model_sizes s;
    ptrdiff_t T; /* rollouts */
    const double *x, *u;
    int order, params;
    sc_options step_opt; /* every step on one thread */
    double *work;
    ptrdiff_t ws;
    const sc_step_out *sout; /* steps */
    int *status;
    const sc_rollout_out *rout; /* rollouts */
} batch_job;

#define ITEM_MODEL(J, b)                                                                           \
    ((J)->map->models[(J)->map->model ? (J)->map->model[b] : (J)->map->nmodel > 1 ? (b) : 0])
#define ITEM_X(J, b) ((J)->map->x ? (J)->map->x[b] : (b))
#define ITEM_U(J, b) ((J)->map->u ? (J)->map->u[b] : (b))

/* item b's part of an output of `size` doubles per item */
static double *part(double *p, ptrdiff_t b, ptrdiff_t size)
{
    return p ? p + b * size : NULL;
}

static int step_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const batch_job *J = (const batch_job *)ctx;
    const ptrdiff_t nx = J->s.nq + J->s.nv, n2 = 2 * J->s.nv, nu = J->s.nu, np = J->s.np;
    double *work = J->work + (ptrdiff_t)tid * J->ws;
    sc_options opt = J->step_opt;
    sc_interrupt view;
    ptrdiff_t b;
    if (tid != 0) {
        opt.interrupt = sc__interrupt_view(&view, opt.interrupt);
    }
    for (b = begin; b < end; b++) {
        const sc_step_out *o = J->sout;
        sc_step_out so;
        int st;
        if (sc_interrupt_check(opt.interrupt)) {
            return SC_EINTERRUPTED;
        }
        so.x_next = part(o->x_next, b, nx);
        so.dx_dx = part(o->dx_dx, b, n2 * n2);
        so.dx_du = part(o->dx_du, b, n2 * nu);
        so.d2x_dx2 = part(o->d2x_dx2, b, n2 * n2 * n2);
        so.d2x_dxdu = part(o->d2x_dxdu, b, n2 * n2 * nu);
        so.d2x_du2 = part(o->d2x_du2, b, n2 * nu * nu);
        so.dx_dp = part(o->dx_dp, b, n2 * np);
        st = sc_step(ITEM_MODEL(J, b), J->x + ITEM_X(J, b) * nx,
                     J->u ? J->u + ITEM_U(J, b) * nu : NULL, J->order, J->params, &opt, work, &so);
        if (st == SC_EINTERRUPTED) {
            return st;
        }
        J->status[b] = st;
    }
    return SC_OK;
}

/* a failed step t of trajectory b: its outputs from `from` on are NaN (sc_rollout.h) */
static void fail_from(const batch_job *J, ptrdiff_t from, double *X, double *A, double *Bu)
{
    const ptrdiff_t nx = J->s.nq + J->s.nv, n2 = 2 * J->s.nv, nu = J->s.nu;
    ptrdiff_t k;
    for (k = (from + 1) * nx; k < (J->T + 1) * nx; k++) {
        X[k] = NAN;
    }
    for (k = from * n2 * n2; A && k < J->T * n2 * n2; k++) {
        A[k] = NAN;
    }
    for (k = from * n2 * nu; Bu && k < J->T * n2 * nu; k++) {
        Bu[k] = NAN;
    }
}

static int rollout_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const batch_job *J = (const batch_job *)ctx;
    const ptrdiff_t nx = J->s.nq + J->s.nv, n2 = 2 * J->s.nv, nu = J->s.nu;
    double *work = J->work + (ptrdiff_t)tid * J->ws;
    sc_options opt = J->step_opt;
    sc_interrupt view;
    ptrdiff_t b, t;
    if (tid != 0) {
        opt.interrupt = sc__interrupt_view(&view, opt.interrupt);
    }
    for (b = begin; b < end; b++) {
        const sc_model *m = ITEM_MODEL(J, b);
        const double *U = J->u ? J->u + ITEM_U(J, b) * J->T * nu : NULL;
        double *X = J->rout->X + b * (J->T + 1) * nx;
        double *A = part(J->rout->A, b, J->T * n2 * n2);
        double *Bu = part(J->rout->Bu, b, J->T * n2 * nu);
        int st = SC_OK;
        ptrdiff_t failed = -1;
        memcpy(X, J->x + ITEM_X(J, b) * nx, sizeof(double) * (size_t)nx);
        for (t = 0; t < J->T && st == SC_OK; t++) {
            sc_step_out so = {0};
            if (sc_interrupt_check(opt.interrupt)) {
                return SC_EINTERRUPTED;
            }
            so.x_next = X + (t + 1) * nx;
            so.dx_dx = A ? A + t * n2 * n2 : NULL;
            so.dx_du = Bu ? Bu + t * n2 * nu : NULL;
            st = sc_step(m, X + t * nx, U ? U + t * nu : NULL, J->order, 0, &opt, work, &so);
            if (st == SC_EINTERRUPTED) {
                return st;
            }
            if (st != SC_OK) {
                failed = t;
                fail_from(J, st == SC_EDIVERGED ? t + 1 : t, X, A, Bu);
            }
        }
        J->rout->status[b] = st;
        if (J->rout->failed) {
            J->rout->failed[b] = failed;
        }
    }
    return SC_OK;
}

/* the job's common part; SC_OK or SC_EINVAL */
static int job_init(batch_job *J, const sc_batch_map *map, ptrdiff_t B, const double *x,
                    const double *u, int need_u, int order, int params, const sc_options *opt,
                    double *work, int *nthreads)
{
    sc_options o;
    int st;
    memset(J, 0, sizeof *J);
    if (map_check(map, B, &J->s) != SC_OK || x == NULL || (u == NULL && J->s.nu > 0 && need_u) ||
        work == NULL) {
        return SC_EINVAL;
    }
    if ((st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    *nthreads = o.nthreads > B ? (B > 0 ? (int)B : 1) : o.nthreads;
    J->map = map;
    J->x = x;
    J->u = u;
    J->order = order;
    J->params = params;
    J->step_opt = o;
    J->step_opt.nthreads = 1;
    J->work = work;
    J->ws = thread_ws(map, order, params);
    return J->ws > 0 ? SC_OK : SC_EINVAL;
}

int sc_step_batch(const sc_batch_map *map, ptrdiff_t B, const double *x, const double *u, int order,
                  int params, const sc_options *opt, double *work, const sc_step_out *out,
                  int *status)
{
    batch_job J;
    int nthreads;
    if (order < 0 || order > 2 || params < 0 || params > 1 || out == NULL || status == NULL ||
        job_init(&J, map, B, x, u, 1, order, params, opt, work, &nthreads) != SC_OK) {
        return SC_EINVAL;
    }
    J.sout = out;
    J.status = status;
    return sc__parallel_for_polled(B, nthreads, step_range, &J, J.step_opt.interrupt);
}

int sc_rollout_batch(const sc_batch_map *map, ptrdiff_t B, ptrdiff_t T, const double *x0,
                     const double *U, int order, const sc_options *opt, double *work,
                     const sc_rollout_out *out)
{
    batch_job J;
    int nthreads;
    if (T < 0 || order < 0 || order > 1 || out == NULL || out->X == NULL || out->status == NULL ||
        job_init(&J, map, B, x0, U, T > 0, order, 0, opt, work, &nthreads) != SC_OK) {
        return SC_EINVAL;
    }
    J.T = T;
    J.rout = out;
    return sc__parallel_for_polled(B, nthreads, rollout_range, &J, J.step_opt.interrupt);
}
