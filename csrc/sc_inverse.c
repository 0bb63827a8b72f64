/*
 * sc_inverse.c - inverse dynamics of one step (see sc_inverse.h).
 */
#include <math.h>

#include "sc_model_internal.h"

int sc_inverse_dynamics(const sc_model *m, const double *x, const double *x_next,
                        const sc_options *opt, double *work, double *u, double *f)
{
    sc_model_sizes s;
    sc__step_ws w;
    sc_step_out so = {0};
    sc_options o;
    const int D = m ? m->dim : 2, nv = SC_NV(D);
    sc__step_ws wi;
    double *A;
    int st, i, k, c, nd, ra;
    if (sc_model_check(m, &s) != SC_OK || x_next == NULL || work == NULL) {
        return SC_EINVAL;
    }
    if ((st = sc__state_check(m, &s, x_next, NULL, 0)) != SC_OK ||
        (st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    sc__step_ws_layout(m, &s, 0, 0, o.nthreads, work, &w);
    nd = sc__n_dynamic_velocities(m);
    /* the step's matrix, in the room the step's scratch keeps for it */
    sc__step_ws_layout(m, &s, 0, 0, o.nthreads, work + sc__step_ws_head(&s), &wi);
    A = wi.amat;
    /* the uncontrolled step: no actuation, the kinematic bodies at x_next's velocities */
    for (i = 0; i < m->nbody; i++) {
        const int j = sc__move_index(m, i), uo = sc__ctrl_offset(m, i);
        for (k = 0; uo >= 0 && k < nv; k++) {
            w.utmp[uo + k] =
                m->bodies[i].kind == SC_BODY_KINEMATIC ? x_next[s.nq + j * nv + k] : 0.0;
        }
    }
    /* in the scratch past the head that holds its state and control */
    so.x_next = w.xtmp;
    st = sc__step_with_matrix(m, x, w.utmp, 0, 0, &o, work + sc__step_ws_head(&s), &so, A);
    if (st != SC_OK) {
        return st;
    }
    /* f = A (v+ - v0+) / h over the dynamic bodies' velocities (A = M for semi-implicit
       Euler, M - h D_dd for the implicit step) */
    for (i = 0, ra = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const int j = sc__move_index(m, i), uo = sc__ctrl_offset(m, i);
        double fb[6] = {0, 0, 0, 0, 0, 0};
        if (j < 0) {
            continue;
        }
        if (b->kind == SC_BODY_DYNAMIC) {
            for (k = 0; k < nv; k++, ra++) {
                int i2, rb = 0;
                double acc = 0.0;
                for (i2 = 0; i2 < m->nbody; i2++) {
                    const int j2 = sc__move_index(m, i2);
                    if (m->bodies[i2].kind != SC_BODY_DYNAMIC) {
                        continue;
                    }
                    for (c = 0; c < nv; c++, rb++) {
                        const double dv = x_next[s.nq + j2 * nv + c] - w.xtmp[s.nq + j2 * nv + c];
                        if (A[ra * nd + rb] != 0.0) {
                            acc += A[ra * nd + rb] * dv;
                        }
                    }
                }
                fb[k] = acc / m->dt;
            }
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
