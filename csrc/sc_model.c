/*
 * sc_model.c - a model's checks and layout (which state, control and parameter entries
 * belong to which body; sc_model_internal.h), its energy and momentum (see sc_model.h).
 */
#include <math.h>
#include <string.h>

#include "sc_model_internal.h"

static int inertia_params(int D)
{
    return D == 2 ? 1 : 6;
}

int sc__move_index(const sc_model *m, int body)
{
    int i, j = 0;
    if (m->bodies[body].kind == SC_BODY_STATIC) {
        return -1;
    }
    for (i = 0; i < body; i++) {
        j += m->bodies[i].kind != SC_BODY_STATIC;
    }
    return j;
}

int sc__ctrl_offset(const sc_model *m, int body)
{
    const int nv = SC_NV(m->dim);
    int i, o = 0;
    for (i = 0; i <= body; i++) {
        const sc_body *b = m->bodies + i;
        const int has = b->kind == SC_BODY_KINEMATIC || (b->kind == SC_BODY_DYNAMIC && b->actuated);
        if (i == body) {
            return has ? o : -1;
        }
        o += has ? nv : 0;
    }
    return -1;
}

int sc__body_param(const sc_model *m, int body)
{
    int i, o = 0;
    for (i = 0; i < body; i++) {
        o += m->bodies[i].kind == SC_BODY_DYNAMIC ? 1 + inertia_params(m->dim) : 0;
    }
    return m->bodies[body].kind == SC_BODY_DYNAMIC ? o : -1;
}

int sc__n_body_params(const sc_model *m)
{
    int i, o = 0;
    for (i = 0; i < m->nbody; i++) {
        o += m->bodies[i].kind == SC_BODY_DYNAMIC ? 1 + inertia_params(m->dim) : 0;
    }
    return o;
}

int sc__support_param(const sc_model *m, int body)
{
    int i, o = sc__n_body_params(m) + 3 * m->npair;
    if (m->bodies[body].nsupport == 0) {
        return -1;
    }
    for (i = 0; i < body; i++) {
        o += m->bodies[i].nsupport > 0;
    }
    return o;
}

/* lo <= v <= hi (false for NaN) */
static int within(double v, double lo, double hi)
{
    return v >= lo && v <= hi;
}

int sc_model_check(const sc_model *m, sc_model_sizes *sz)
{
    int i, k, D;
    sc_model_sizes s = {0, 0, 0, 0, 0};
    if (m == NULL || (m->dim != 2 && m->dim != 3) || m->nbody < 1 ||
        m->nbody > SC_MODEL_MAX_BODIES || m->npair < 0 ||
        (m->integrator != SC_INTEGRATOR_EULER && m->integrator != SC_INTEGRATOR_IMPLICIT) ||
        m->bodies == NULL || (m->npair > 0 && m->pairs == NULL) ||
        !within(m->dt, SC_DT_MIN, SC_DT_MAX)) {
        return SC_EINVAL;
    }
    D = m->dim;
    for (k = 0; k < 3; k++) {
        if (!within(m->gravity[k], -SC_GRAVITY_MAX, SC_GRAVITY_MAX)) {
            return SC_EINVAL;
        }
    }
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        if (b->kind < SC_BODY_DYNAMIC || b->kind > SC_BODY_STATIC ||
            (b->cloud.n > 0 && (b->cloud.dim != D || b->cloud.data == NULL ||
                                !(sc__cloud_radius(&b->cloud) <= SC_COORD_MAX)))) {
            return SC_EINVAL;
        }
        if (b->kind == SC_BODY_DYNAMIC) {
            if (!within(b->mass, SC_MASS_MIN, SC_MASS_MAX)) {
                return SC_EINVAL;
            }
            if (D == 2 ? !within(b->inertia[0], SC_MASS_MIN, SC_MASS_MAX) : 0) {
                return SC_EINVAL;
            }
            if (D == 3) {
                /* a diagonal entry lies between the extreme eigenvalues, which the Python
                   layer checks against the range */
                const double *J = b->inertia;
                double d1 = J[0], d2 = J[0] * J[4] - J[1] * J[3];
                double d3 = J[0] * (J[4] * J[8] - J[5] * J[7]) -
                            J[1] * (J[3] * J[8] - J[5] * J[6]) + J[2] * (J[3] * J[7] - J[4] * J[6]);
                for (k = 0; k < 9; k++) {
                    if (!isfinite(J[k]) ||
                        (k % 4 == 0 && !within(J[k], SC_MASS_MIN, SC_MASS_MAX))) {
                        return SC_EINVAL;
                    }
                }
                if (J[1] != J[3] || J[2] != J[6] || J[5] != J[7] || !(d1 > 0) || !(d2 > 0) ||
                    !(d3 > 0)) {
                    return SC_EINVAL;
                }
            }
        } else if (b->actuated) {
            return SC_EINVAL;
        }
        if (!(b->max_speed >= 0.0) || !(b->max_spin >= 0.0)) {
            return SC_EINVAL; /* NaN or negative */
        }
        if (b->kind == SC_BODY_STATIC && sc__pose_check(D, b->pose) != SC_OK) {
            return SC_EINVAL; /* a static pose: finite, a unit quaternion (3D), in range */
        }
        if (b->nsupport < 0 ||
            (b->nsupport > 0 &&
             (D != 2 || b->kind != SC_BODY_DYNAMIC || b->support_points == NULL ||
              b->support_weights == NULL || !within(b->support_friction, 0.0, SC_FRICTION_MAX) ||
              !(b->support_gravity > 0.0 && b->support_gravity <= SC_GRAVITY_MAX) ||
              !within(b->support_slip, SC_SLIP_MIN, SC_SLIP_MAX)))) {
            return SC_EINVAL;
        }
        if (b->kind != SC_BODY_STATIC) {
            s.nmove++;
            s.nq += SC_NQ(D);
            s.nv += SC_NV(D);
        }
        if (b->kind == SC_BODY_KINEMATIC || (b->kind == SC_BODY_DYNAMIC && b->actuated)) {
            s.nu += SC_NV(D);
        }
        s.np += (b->kind == SC_BODY_DYNAMIC ? 1 + inertia_params(D) : 0) + (b->nsupport > 0);
    }
    for (k = 0; k < m->npair; k++) {
        const sc_pair *p = m->pairs + k;
        if (p->a < 0 || p->b < 0 || p->a >= m->nbody || p->b >= m->nbody || p->a == p->b ||
            (m->bodies[p->a].kind == SC_BODY_STATIC && m->bodies[p->b].kind == SC_BODY_STATIC) ||
            m->bodies[p->a].cloud.n < 1 || m->bodies[p->b].cloud.n < 1) {
            return SC_EINVAL;
        }
        if (sc_contact_params_check(&p->prm) != SC_OK) {
            return SC_EINVAL;
        }
        s.np += 3;
    }
    if (sz) {
        *sz = s;
    }
    return SC_OK;
}

void sc__body_state(const sc_model *m, const sc_model_sizes *s, const double *x, int body,
                    double *pose, double *vel)
{
    const int D = m->dim, j = sc__move_index(m, body);
    int k;
    if (j < 0) {
        memcpy(pose, m->bodies[body].pose, sizeof(double) * (size_t)SC_NQ(D));
        for (k = 0; k < SC_NV(D); k++) {
            vel[k] = 0.0;
        }
        return;
    }
    memcpy(pose, x + j * SC_NQ(D), sizeof(double) * (size_t)SC_NQ(D));
    if (D == 3) {
        double qn =
            sqrt(pose[3] * pose[3] + pose[4] * pose[4] + pose[5] * pose[5] + pose[6] * pose[6]);
        for (k = 3; k < 7; k++) {
            pose[k] /= qn;
        }
    }
    memcpy(vel, x + s->nq + j * SC_NV(D), sizeof(double) * (size_t)SC_NV(D));
}

/* the translation of body i in the state x (a static body's from its pose) */
static const double *body_translation(const sc_model *m, const double *x, int i)
{
    const int j = sc__move_index(m, i);
    return j < 0 ? m->bodies[i].pose : x + j * SC_NQ(m->dim);
}

/* SC_OK if the state x is in the valid range past its finiteness and unit quaternions:
   positions (sc__pose_check), velocity components within SC_SPEED_MAX, and every contact
   pair within its reach (sc__pair_reach_check); else the first failing status */
static int state_range(const sc_model *m, const sc_model_sizes *s, const double *x)
{
    int k, j, st;
    for (j = 0; j < s->nmove; j++) {
        if ((st = sc__pose_check(m->dim, x + SC_NQ(m->dim) * j)) != SC_OK) {
            return st;
        }
    }
    for (k = s->nq; k < s->nq + s->nv; k++) {
        if (!(fabs(x[k]) <= SC_SPEED_MAX)) {
            return SC_ERANGE;
        }
    }
    for (k = 0; k < m->npair; k++) {
        const sc_pair *p = m->pairs + k;
        if ((st = sc__pair_reach_check(m->dim, &m->bodies[p->a].cloud, body_translation(m, x, p->a),
                                       &m->bodies[p->b].cloud, body_translation(m, x, p->b),
                                       p->prm.eps)) != SC_OK) {
            return st;
        }
    }
    return SC_OK;
}

int sc__state_diverged(const sc_model *m, const sc_model_sizes *s, const double *x)
{
    const int D = m->dim, nl = D, na = D == 2 ? 1 : 3;
    int k, i, j = 0;
    for (k = 0; k < s->nq + s->nv; k++) {
        if (!isfinite(x[k])) {
            return SC_EDIVERGED;
        }
    }
    /* a new state out of the valid range (positions, speeds, reach; its quaternions are
       unit) would be refused by the next step */
    if (state_range(m, s, x) != SC_OK) {
        return SC_EDIVERGED;
    }
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const double *v;
        double vv = 0.0, ww = 0.0;
        if (b->kind == SC_BODY_STATIC) {
            continue;
        }
        v = x + s->nq + (j++) * SC_NV(D);
        if (b->kind != SC_BODY_DYNAMIC) {
            continue;
        }
        for (k = 0; k < nl; k++) {
            vv += v[k] * v[k];
        }
        for (k = 0; k < na; k++) {
            ww += v[nl + k] * v[nl + k];
        }
        /* squares overflow only for speeds above 1e154, past every finite limit too */
        if ((b->max_speed > 0.0 && sqrt(vv) > b->max_speed) ||
            (b->max_spin > 0.0 && sqrt(ww) > b->max_spin)) {
            return SC_EDIVERGED;
        }
    }
    return SC_OK;
}

int sc__state_check(const sc_model *m, const sc_model_sizes *s, const double *x, const double *u,
                    int u_len)
{
    int k, i;
    if (x == NULL || (u_len > 0 && u == NULL)) {
        return SC_EINVAL;
    }
    for (k = 0; k < s->nq + s->nv; k++) {
        if (!isfinite(x[k])) {
            return SC_ENONFINITE;
        }
    }
    for (k = 0; k < u_len; k++) {
        if (!isfinite(u[k])) {
            return SC_ENONFINITE;
        }
    }
    /* controls: a kinematic body's velocity (SC_SPEED_MAX), an actuated body's force and
       torque (SC_FORCE_MAX) */
    for (i = 0; u_len > 0 && i < m->nbody; i++) {
        const int o = sc__ctrl_offset(m, i);
        const double lim = m->bodies[i].kind == SC_BODY_KINEMATIC ? SC_SPEED_MAX : SC_FORCE_MAX;
        for (k = 0; o >= 0 && k < SC_NV(m->dim); k++) {
            if (!(fabs(u[o + k]) <= lim)) {
                return SC_ERANGE;
            }
        }
    }
    return state_range(m, s, x);
}

int sc__pair_contact(const sc_model *m, const sc_model_sizes *s, const double *x, int pair,
                     int order, int freeze, const sc_options *opt, double *cwork,
                     const sc_contact_out *out, int mode, const double *wv)
{
    const sc_pair *pr = m->pairs + pair;
    const sc_body *ba = m->bodies + pr->a, *bb = m->bodies + pr->b;
    double pa[7], va[6], pb[7], vb[6];
    sc_contact_body A, B;
    sc__body_state(m, s, x, pr->a, pa, va);
    sc__body_state(m, s, x, pr->b, pb, vb);
    A.cloud = &ba->cloud;
    A.pose = pa;
    A.vel = va;
    A.frozen = freeze && ba->kind == SC_BODY_STATIC;
    B.cloud = &bb->cloud;
    B.pose = pb;
    B.vel = vb;
    B.frozen = freeze && bb->kind == SC_BODY_STATIC;
    if (mode == SC_FRICTION_FULL) {
        return sc_contact(&A, &B, &pr->prm, order, opt, cwork, out);
    }
    return sc__contact_mode(opt->isa, &A, &B, &pr->prm, order, opt, cwork, out, mode,
                            wv ? wv + SC_NV(m->dim) * pr->a : NULL,
                            wv ? wv + SC_NV(m->dim) * pr->b : NULL);
}

int sc_energy(const sc_model *m, const double *x, const sc_options *opt, double *work, double *out)
{
    sc_model_sizes s;
    sc__step_ws w;
    sc_options o;
    const int D = m ? m->dim : 2;
    int st, i, k;
    if (sc_model_check(m, &s) != SC_OK || work == NULL || out == NULL) {
        return SC_EINVAL;
    }
    if ((st = sc__state_check(m, &s, x, NULL, 0)) != SC_OK ||
        (st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    sc__step_ws_layout(m, &s, 0, 0, o.nthreads, work, &w);
    out[0] = out[1] = out[2] = 0.0;
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        double pose[7], vel[6];
        if (b->kind != SC_BODY_DYNAMIC) {
            continue;
        }
        sc__body_state(m, &s, x, i, pose, vel);
        for (k = 0; k < D; k++) {
            out[0] += 0.5 * b->mass * vel[k] * vel[k];
            out[1] -= b->mass * m->gravity[k] * pose[k];
        }
        if (D == 2) {
            out[0] += 0.5 * b->inertia[0] * vel[2] * vel[2];
        } else {
            int r, c;
            for (r = 0; r < 3; r++) {
                for (c = 0; c < 3; c++) {
                    out[0] += 0.5 * vel[3 + r] * b->inertia[3 * r + c] * vel[3 + c];
                }
            }
        }
    }
    for (k = 0; k < m->npair; k++) {
        double sc3[3], W[12];
        sc_contact_out co = {0};
        co.wrench = W;
        co.scalars = sc3;
        if ((st = sc__pair_contact(m, &s, x, k, 0, 0, &o, w.cwork, &co, SC_FRICTION_FULL, NULL)) !=
            SC_OK) {
            return st;
        }
        out[2] += sc3[0];
    }
    return SC_OK;
}

int sc_momentum(const sc_model *m, const double *x, double *out)
{
    sc_model_sizes s;
    const int D = m ? m->dim : 2;
    int i, k, st;
    if (sc_model_check(m, &s) != SC_OK || x == NULL || out == NULL) {
        return SC_EINVAL;
    }
    if ((st = sc__state_check(m, &s, x, NULL, 0)) != SC_OK) {
        return st;
    }
    for (k = 0; k < (D == 2 ? 3 : 6); k++) {
        out[k] = 0.0;
    }
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        double pose[7], vel[6], R[9], t[3];
        if (b->kind != SC_BODY_DYNAMIC) {
            continue;
        }
        sc__body_state(m, &s, x, i, pose, vel);
        sc__pose_frame(D, pose, R, t);
        if (D == 2) {
            out[0] += b->mass * vel[0];
            out[1] += b->mass * vel[1];
            out[2] += b->mass * (t[0] * vel[1] - t[1] * vel[0]) + b->inertia[0] * vel[2];
        } else {
            double Lb[3], p[3];
            int r;
            for (k = 0; k < 3; k++) {
                p[k] = b->mass * vel[k];
                out[k] += p[k];
                Lb[k] = b->inertia[3 * k] * vel[3] + b->inertia[3 * k + 1] * vel[4] +
                        b->inertia[3 * k + 2] * vel[5];
            }
            out[3] += t[1] * p[2] - t[2] * p[1];
            out[4] += t[2] * p[0] - t[0] * p[2];
            out[5] += t[0] * p[1] - t[1] * p[0];
            for (r = 0; r < 3; r++) {
                out[3 + r] += R[3 * r] * Lb[0] + R[3 * r + 1] * Lb[1] + R[3 * r + 2] * Lb[2];
            }
        }
    }
    return SC_OK;
}
