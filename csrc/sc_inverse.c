/*
 * sc_inverse.c - inverse dynamics of one step (see sc_inverse.h).
 */
#include <math.h>

#include "sc_model_internal.h"

/* the generalized force (nv) that changes dynamic body b's velocities from v0 to vn in one
   step: M (vn - v0) / h */
static void body_force(const sc_model *m, const sc_body *b, const double *vn, const double *v0,
                       double *fb)
{
    const int D = m->dim;
    int k;
    for (k = 0; k < D; k++) {
        fb[k] = b->mass * (vn[k] - v0[k]) / m->dt;
    }
    if (D == 2) {
        fb[2] = b->inertia[0] * (vn[2] - v0[2]) / m->dt;
        return;
    }
    for (k = 0; k < 3; k++) {
        fb[3 + k] = (b->inertia[3 * k] * (vn[3] - v0[3]) + b->inertia[3 * k + 1] * (vn[4] - v0[4]) +
                     b->inertia[3 * k + 2] * (vn[5] - v0[5])) /
                    m->dt;
    }
}

int sc_inverse_dynamics(const sc_model *m, const double *x, const double *x_next,
                        const sc_options *opt, double *work, double *u, double *f)
{
    sc_model_sizes s;
    sc__step_ws w;
    sc_step_out so = {NULL};
    sc_options o;
    const int D = m ? m->dim : 2, nv = SC_NV(D);
    int st, i, k;
    if (sc_model_check(m, &s) != SC_OK || x_next == NULL || work == NULL) {
        return SC_EINVAL;
    }
    if ((st = sc__state_check(m, &s, x_next, NULL, 0)) != SC_OK ||
        (st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    sc__step_ws_layout(m, &s, 0, 0, o.nthreads, work, &w);
    for (k = 0; k < s.nu; k++) {
        w.utmp[k] = 0.0;
    }
    /* the uncontrolled step, in the scratch past the head that holds its state and
       control */
    so.x_next = w.xtmp;
    st = sc_step(m, x, w.utmp, 0, 0, &o, work + sc__step_ws_head(&s), &so);
    if (st != SC_OK) {
        return st;
    }
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const int j = sc__move_index(m, i), uo = sc__ctrl_offset(m, i);
        double fb[6] = {0, 0, 0, 0, 0, 0};
        if (j < 0) {
            continue;
        }
        if (b->kind == SC_BODY_DYNAMIC) {
            body_force(m, b, x_next + s.nq + j * nv, w.xtmp + s.nq + j * nv, fb);
        }
        for (k = 0; k < nv; k++) {
            if (f) {
                f[j * nv + k] = fb[k];
            }
            if (u && uo >= 0) {
                u[uo + k] = b->kind == SC_BODY_KINEMATIC ? x_next[s.nq + j * nv + k] : fb[k];
            }
        }
    }
    return SC_OK;
}
