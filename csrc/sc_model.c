/*
 * sc_model.c - scenes, one step with its first and second derivatives, rollouts, inverse
 * dynamics, energy and momentum (see sc_model.h).
 *
 * The step is evaluated once with second-order jets (sc_jet.h) in the variables
 * (dx (2 nv), du (nu)) -- or, for the parameter derivatives, first-order jets in
 * (dx, du, dp).  Every force enters as a jet: gravity and actuation directly, each contact
 * pair's wrench from sc_contact's closed-form Jacobian and second-derivative tensor
 * (scattered from the pair's (dq_a, dq_b, v_a, v_b) to the step's variables), support
 * friction by the jet rules.  Then M^-1 (with the gyroscopic term and, for parameters, a
 * variable mass and inertia), v+ = v + h a, and the chart of x+:
 *   translations and 2D angles: dq+ = dq + h dv+ (exact);
 *   3D rotations: Exp(dth+) = Exp(-h w+) Exp(dth) Exp(h w+(dx, du)), and, because that
 *   product is the identity at 0, dth+ = 2 vec(product) to second order (the quaternion
 *   logarithm is 2 v / w (1 + O(|v|^2)) with w = 1 + O(|v|^2)).
 */
#include <math.h>
#include <string.h>

#include "sc_jet.h"
#include "sc_model.h"
#include "sc_parallel.h"
#include "sc_spatial.h"

#define NONE 1000000 /* a variable index past every jet: sc_jet_var gives a constant */

static int nv_of(int D) { return D == 2 ? 3 : 6; }
static int nq_of(int D) { return D == 2 ? 3 : 7; }

/* ---- layout ---- */

static int move_index(const sc_model *m, int body)
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

/* first control of a body, or -1 */
static int ctrl_offset(const sc_model *m, int body)
{
    const int nv = nv_of(m->dim);
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

static int inertia_params(int D) { return D == 2 ? 1 : 6; }

/* first parameter (mass) of a dynamic body, or -1 */
static int body_param(const sc_model *m, int body)
{
    int i, o = 0;
    for (i = 0; i < body; i++) {
        o += m->bodies[i].kind == SC_BODY_DYNAMIC ? 1 + inertia_params(m->dim) : 0;
    }
    return m->bodies[body].kind == SC_BODY_DYNAMIC ? o : -1;
}

static int n_body_params(const sc_model *m)
{
    int i, o = 0;
    for (i = 0; i < m->nbody; i++) {
        o += m->bodies[i].kind == SC_BODY_DYNAMIC ? 1 + inertia_params(m->dim) : 0;
    }
    return o;
}

/* the support-friction parameter of a body, or -1 */
static int support_param(const sc_model *m, int body)
{
    int i, o = n_body_params(m) + 3 * m->npair;
    if (m->bodies[body].nsupport == 0) {
        return -1;
    }
    for (i = 0; i < body; i++) {
        o += m->bodies[i].nsupport > 0;
    }
    return o;
}

int sc_model_check(const sc_model *m, sc_model_sizes *sz)
{
    int i, k, D;
    sc_model_sizes s = {0, 0, 0, 0, 0};
    if (m == NULL || (m->dim != 2 && m->dim != 3) || m->nbody < 1 ||
        m->nbody > SC_MODEL_MAX_BODIES || m->npair < 0 ||
        m->bodies == NULL || (m->npair > 0 && m->pairs == NULL) || !(m->dt > 0.0) ||
        !isfinite(m->dt)) {
        return SC_EINVAL;
    }
    D = m->dim;
    for (k = 0; k < 3; k++) {
        if (!isfinite(m->gravity[k])) {
            return SC_EINVAL;
        }
    }
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        if (b->kind < SC_BODY_DYNAMIC || b->kind > SC_BODY_STATIC ||
            (b->cloud.n > 0 && (b->cloud.dim != D || b->cloud.data == NULL))) {
            return SC_EINVAL;
        }
        if (b->kind == SC_BODY_DYNAMIC) {
            if (!(b->mass > 0.0) || !isfinite(b->mass)) {
                return SC_EINVAL;
            }
            if (D == 2 ? !(b->inertia[0] > 0.0) || !isfinite(b->inertia[0]) : 0) {
                return SC_EINVAL;
            }
            if (D == 3) {
                const double *J = b->inertia;
                double d1 = J[0], d2 = J[0] * J[4] - J[1] * J[3];
                double d3 = J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
                            J[2] * (J[3] * J[7] - J[4] * J[6]);
                for (k = 0; k < 9; k++) {
                    if (!isfinite(J[k])) {
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
        if (b->kind == SC_BODY_STATIC) {
            for (k = 0; k < nq_of(D); k++) {
                if (!isfinite(b->pose[k])) {
                    return SC_EINVAL;
                }
            }
        }
        if (b->nsupport < 0 || (b->nsupport > 0 && (D != 2 || b->kind != SC_BODY_DYNAMIC ||
                                                     b->support_points == NULL ||
                                                     b->support_weights == NULL ||
                                                     !(b->support_friction >= 0.0) ||
                                                     !isfinite(b->support_friction) ||
                                                     !(b->support_gravity > 0.0) ||
                                                     !isfinite(b->support_gravity) ||
                                                     !(b->support_slip > 0.0) ||
                                                     !isfinite(b->support_slip)))) {
            return SC_EINVAL;
        }
        if (b->kind != SC_BODY_STATIC) {
            s.nmove++;
            s.nq += nq_of(D);
            s.nv += nv_of(D);
        }
        if (b->kind == SC_BODY_KINEMATIC || (b->kind == SC_BODY_DYNAMIC && b->actuated)) {
            s.nu += nv_of(D);
        }
        s.np += (b->kind == SC_BODY_DYNAMIC ? 1 + inertia_params(D) : 0) + (b->nsupport > 0);
    }
    for (k = 0; k < m->npair; k++) {
        const sc_pair *p = m->pairs + k;
        const sc_contact_params *c = &p->prm;
        if (p->a < 0 || p->b < 0 || p->a >= m->nbody || p->b >= m->nbody || p->a == p->b ||
            (m->bodies[p->a].kind == SC_BODY_STATIC && m->bodies[p->b].kind == SC_BODY_STATIC) ||
            m->bodies[p->a].cloud.n < 1 || m->bodies[p->b].cloud.n < 1) {
            return SC_EINVAL;
        }
        if (!(c->eps > 0.0) || !isfinite(c->eps) || !(c->eps_c > 0.0) || !isfinite(c->eps_c) ||
            !(c->stiffness > 0.0) || !isfinite(c->stiffness) || !(c->beta > 0.0) ||
            !isfinite(c->beta) || !(c->damping >= 0.0) || !isfinite(c->damping) ||
            !(c->friction >= 0.0) || !isfinite(c->friction) || !(c->slip_velocity > 0.0) ||
            !isfinite(c->slip_velocity)) {
            return SC_EINVAL;
        }
        s.np += 3;
    }
    if (sz) {
        *sz = s;
    }
    return SC_OK;
}

/* ---- workspace ---- */

#define PAIRBUF (12 + 12 * 24 + 12 * 24 * 24 + 36)

static ptrdiff_t jet_len(int n, int order)
{
    return 1 + n + (order >= 2 ? (ptrdiff_t)n * (n + 1) / 2 : 0);
}

static int n_jets(const sc_model_sizes *s)
{
    return 24 * s->nmove + 96;
}

ptrdiff_t sc_step_workspace_size(const sc_model *m, int order, int params, int nthreads)
{
    sc_model_sizes s;
    ptrdiff_t cw = 0, len0, len1;
    int k;
    if (sc_model_check(m, &s) != SC_OK || order < 0 || order > 2 || nthreads < 1) {
        return 0;
    }
    for (k = 0; k < m->npair; k++) {
        ptrdiff_t w = sc_contact_workspace_size(&m->bodies[m->pairs[k].a].cloud,
                                                &m->bodies[m->pairs[k].b].cloud, nthreads);
        cw = w > cw ? w : cw;
    }
    len0 = jet_len(2 * s.nv + s.nu, order);
    len1 = params ? jet_len(2 * s.nv + s.nu + s.np, 1) : 0;
    /* two state-sized headers: sc_inverse_dynamics runs a step inside its own scratch */
    return 2 * (ptrdiff_t)(s.nq + 2 * s.nv + s.nu + 16) + cw + PAIRBUF +
           (ptrdiff_t)n_jets(&s) * (len0 > len1 ? len0 : len1);
}

/* ---- the jet pass ---- */

typedef struct {
    const sc_model *m;
    sc_model_sizes s;
    int D, nv1, nvt;
    sc_jet_ctx c;
    int n, ubase, pbase; /* jet variables; first control / parameter variable (or NONE) */
    double *arena;
    int used, cap, overflow;
} pass_t;

static double *jalloc(pass_t *P)
{
    if (P->used >= P->cap) {
        P->overflow = 1;
        return P->arena + (ptrdiff_t)P->cap * P->c.len; /* the sink slot */
    }
    return P->arena + (ptrdiff_t)(P->used++) * P->c.len;
}

/* a parameter's variable (a constant jet when parameters are not differentiated) */
static void pjet(pass_t *P, double *out, double value, int param)
{
    sc_jet_var(&P->c, P->n, out, value, param < 0 || P->pbase == NONE ? NONE : P->pbase + param);
}

/* body pose (R, t) and velocity of a body at state x */
static void body_state(const sc_model *m, const sc_model_sizes *s, const double *x, int body,
                       double *pose, double *vel)
{
    const int D = m->dim, j = move_index(m, body);
    int k;
    if (j < 0) {
        memcpy(pose, m->bodies[body].pose, sizeof(double) * (size_t)nq_of(D));
        for (k = 0; k < nv_of(D); k++) {
            vel[k] = 0.0;
        }
        return;
    }
    memcpy(pose, x + j * nq_of(D), sizeof(double) * (size_t)nq_of(D));
    if (D == 3) {
        double qn = sqrt(pose[3] * pose[3] + pose[4] * pose[4] + pose[5] * pose[5] +
                         pose[6] * pose[6]);
        for (k = 3; k < 7; k++) {
            pose[k] /= qn;
        }
    }
    memcpy(vel, x + s->nq + j * nv_of(D), sizeof(double) * (size_t)nv_of(D));
}

/* variable of the pair coordinate i = (dq_a, dq_b, v_a, v_b)[...], or -1 (static body) */
static int pair_var(const pass_t *P, int a, int b, int i)
{
    const int blk = i / P->nv1, cc = i % P->nv1;
    const int j = move_index(P->m, blk % 2 == 0 ? a : b);
    if (j < 0) {
        return -1;
    }
    return (blk < 2 ? 0 : P->nvt) + j * P->nv1 + cc;
}

/* Q[body] (nv jets) += the pair's wrench rows r0.. with derivatives */
static void scatter(pass_t *P, double **Q, int a, int b, int side, const double *W,
                    const double *jac, const double *hess, const double *dwdp, int pair)
{
    const sc_jet_ctx *c = &P->c;
    const int nv = P->nv1, ns = 4 * nv;
    int r, i, j;
    for (r = 0; r < nv; r++) {
        const int row = side * nv + r;
        double *q = Q[r];
        q[0] += W[row];
        if (c->order >= 1) {
            for (i = 0; i < ns; i++) {
                const int gi = pair_var(P, a, b, i);
                if (gi >= 0) {
                    q[1 + gi] += jac[row * ns + i];
                }
            }
            if (dwdp && P->pbase != NONE) {
                for (j = 0; j < 3; j++) {
                    q[1 + P->pbase + pair + j] += dwdp[j * 2 * nv + row];
                }
            }
        }
        if (c->order >= 2) {
            for (i = 0; i < ns; i++) {
                const int gi = pair_var(P, a, b, i);
                if (gi < 0) {
                    continue;
                }
                for (j = 0; j <= i; j++) {
                    const int gj = pair_var(P, a, b, j);
                    if (gj >= 0) {
                        q[sc_jet_hidx(c, gi, gj)] += hess[(row * ns + i) * ns + j];
                    }
                }
            }
        }
    }
}

/* out (4 jets) = a (x) b, quaternions (w, x, y, z); out must not alias a or b */
static void quat_mul(pass_t *P, double **out, double *const *a, double *const *b)
{
    const sc_jet_ctx *c = &P->c;
    const int n = P->n;
    int k;
    sc_jet_mul(c, n, out[0], a[0], b[0]);
    for (k = 1; k < 4; k++) {
        sc_jet_madd(c, n, out[0], -1.0, a[k], b[k]);
        sc_jet_mul(c, n, out[k], a[0], b[k]);
        sc_jet_madd(c, n, out[k], 1.0, b[0], a[k]);
    }
    /* + a_vec x b_vec */
    for (k = 0; k < 3; k++) {
        const int i = (k + 1) % 3, j = (k + 2) % 3;
        sc_jet_madd(c, n, out[1 + k], 1.0, a[1 + i], b[1 + j]);
        sc_jet_madd(c, n, out[1 + k], -1.0, a[1 + j], b[1 + i]);
    }
}

/* C(s) = cos(sqrt(s)/2) and S(s) = sin(sqrt(s)/2)/sqrt(s), each with two derivatives in s:
 * Exp(a) = (C(|a|^2), S(|a|^2) a) is then smooth at a = 0 too */
static void half_angle_fns(double s, double C[3], double S[3])
{
    if (s < 1.0) {
        /* S = sum c_k s^k, c_k = (-1)^k / (2 4^k (2k+1)!); C = sum a_k s^k,
           a_k = (-1)^k / (4^k (2k)!); 16 terms reach rounding for s < 1 */
        double ck = 0.5, ak = 1.0, pk = 1.0, pk1 = 0.0, pk2 = 0.0;
        int k;
        S[0] = S[1] = S[2] = C[0] = 0.0;
        for (k = 0; k < 16; k++) {
            S[0] += ck * pk;
            S[1] += k * ck * pk1;
            S[2] += k * (k - 1) * ck * pk2;
            C[0] += ak * pk;
            pk2 = pk1;
            pk1 = pk;
            pk *= s;
            ck *= -1.0 / (4.0 * (2 * k + 2) * (2 * k + 3));
            ak *= -1.0 / (4.0 * (2 * k + 1) * (2 * k + 2));
        }
    } else {
        const double t = 0.5 * sqrt(s), st = sin(t), ct = cos(t);
        S[0] = st / (2.0 * t);
        S[1] = (t * ct - st) / (16.0 * t * t * t);
        S[2] = (-t * t * st - 3.0 * t * ct + 3.0 * st) / (128.0 * t * t * t * t * t);
        C[0] = ct;
    }
    /* dC/ds = -sin(t) / (8 t) = -S / 4 */
    C[1] = -0.25 * S[0];
    C[2] = -0.25 * S[1];
}

/* The planar support friction's sums over body b's points, as jets in the four local
 * variables (the angle perturbation, vx, vy, omega): acc = (f_x, f_y, torque) / coef
 * (step_pass).  Always inlined with ord a constant, so that the jet kernels' order tests
 * and loop bounds fold and no call is made per jet operation (the push-T step: -5 %
 * instructions at first order); the operations, and so the bits, are those of the
 * generic kernels. */
SC_JET_KERNEL void support_sums(const sc_body *b, const double *R, const double *vel, int ord,
                                double acc[3][SC_JET4_LEN])
{
    sc_jet_ctx c4;
    double r[2][SC_JET4_LEN], vpnt[2][SC_JET4_LEN], w[SC_JET4_LEN], f[2][SC_JET4_LEN];
    ptrdiff_t l;
    int k;
    sc_jet_ctx_init(&c4, 4, ord);
    for (k = 0; k < 3; k++) {
        sc_jet_const(&c4, 4, acc[k], 0.0);
    }
    for (l = 0; l < b->nsupport; l++) {
        const double *sp = b->support_points + 2 * l;
        const double b0 = R[0] * sp[0] + R[1] * sp[1], b1 = R[2] * sp[0] + R[3] * sp[1];
        double *wx = f[0], *wy = f[1], *om = w;
        /* r = R Exp(dth J) s = b + dth J b - dth^2 b / 2, J b = (-b1, b0) */
        sc_jet_const(&c4, 4, r[0], b0);
        sc_jet_const(&c4, 4, r[1], b1);
        if (c4.order >= 1) {
            r[0][1] = -b1;
            r[1][1] = b0;
        }
        sc_jet_hadd(&c4, 4, r[0], 0, 0, -b0);
        sc_jet_hadd(&c4, 4, r[1], 0, 0, -b1);
        /* point velocity v + omega J r */
        sc_jet_var(&c4, 4, wx, vel[0], 1);
        sc_jet_var(&c4, 4, wy, vel[1], 2);
        sc_jet_var(&c4, 4, om, vel[2], 3);
        sc__jet_lin(&c4, 4, vpnt[0], 1.0, wx, 0.0, NULL);
        sc__jet_lin(&c4, 4, vpnt[1], 1.0, wy, 0.0, NULL);
        sc__jet_madd(&c4, 4, vpnt[0], -1.0, om, r[1]);
        sc__jet_madd(&c4, 4, vpnt[1], 1.0, om, r[0]);
        /* f / coef = -g w_l vp / sqrt(|vp|^2 + vs^2) */
        sc__jet_mul(&c4, 4, w, vpnt[0], vpnt[0]);
        sc__jet_madd(&c4, 4, w, 1.0, vpnt[1], vpnt[1]);
        {
            const double q0 = w[0] + b->support_slip * b->support_slip, iq = 1.0 / sqrt(q0);
            sc__jet_func(&c4, 4, w, w, iq, -0.5 * iq / q0, 0.75 * iq / (q0 * q0));
        }
        sc__jet_lin(&c4, 4, w, -b->support_gravity * b->support_weights[l], w, 0.0, NULL);
        sc__jet_mul(&c4, 4, f[0], w, vpnt[0]);
        sc__jet_mul(&c4, 4, f[1], w, vpnt[1]);
        sc__jet_axpy(&c4, 4, acc[0], 1.0, f[0]);
        sc__jet_axpy(&c4, 4, acc[1], 1.0, f[1]);
        sc__jet_madd(&c4, 4, acc[2], 1.0, r[0], f[1]);
        sc__jet_madd(&c4, 4, acc[2], -1.0, r[1], f[0]);
    }
}

/* The pass: writes the value x_next and, through the jets, every derivative. */
static int step_pass(pass_t *P, const double *x, const double *u, int isa, int nthreads,
                     double *cwork, double *pairbuf, double *x_next, double *(*Qs)[6],
                     double *(*vps)[6])
{
    const sc_model *m = P->m;
    const sc_jet_ctx *c = &P->c;
    const int D = P->D, nv = P->nv1, nvt = P->nvt, n = P->n;
    const int order_c = c->order;
    const double h = m->dt;
    double **Q[SC_MODEL_MAX_BODIES], **vp[SC_MODEL_MAX_BODIES];
    double *W = pairbuf, *jac = W + 12, *hess = jac + 12 * 24, *dwdp = hess + 12 * 24 * 24;
    int i, k, st, base;

    /* per moving body: Q (nv jets; reused for the dq+ rows at the end), v+ (nv jets) */
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        Q[i] = Qs[i];
        vp[i] = vps[i];
        if (b->kind == SC_BODY_STATIC) {
            continue;
        }
        for (k = 0; k < nv; k++) {
            Q[i][k] = jalloc(P);
            vp[i][k] = jalloc(P);
            sc_jet_const(c, n, Q[i][k], 0.0);
        }
    }

    /* gravity */
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        if (b->kind != SC_BODY_DYNAMIC) {
            continue;
        }
        {
            double *mj = jalloc(P);
            pjet(P, mj, b->mass, body_param(m, i));
            for (k = 0; k < D; k++) {
                sc_jet_axpy(c, n, Q[i][k], m->gravity[k], mj);
            }
            P->used--;
        }
    }

    /* contact pairs */
    for (k = 0; k < m->npair; k++) {
        const sc_pair *pr = m->pairs + k;
        const sc_body *ba = m->bodies + pr->a, *bb = m->bodies + pr->b;
        double pa[7], va[6], pb[7], vb[6];
        const int pidx = n_body_params(m) + 3 * k;
        if (ba->kind != SC_BODY_DYNAMIC && bb->kind != SC_BODY_DYNAMIC) {
            continue;
        }
        body_state(m, &P->s, x, pr->a, pa, va);
        body_state(m, &P->s, x, pr->b, pb, vb);
        st = sc_contact(&ba->cloud, pa, va, &bb->cloud, pb, vb, &pr->prm, order_c,
                        (ba->kind == SC_BODY_STATIC) | (bb->kind == SC_BODY_STATIC) << 1, isa,
                        nthreads, cwork, W, NULL, NULL, NULL, NULL, NULL,
                        order_c >= 1 ? jac : NULL, order_c >= 2 ? hess : NULL,
                        P->pbase != NONE ? dwdp : NULL);
        if (st != SC_OK) {
            return st;
        }
        if (ba->kind == SC_BODY_DYNAMIC) {
            scatter(P, Q[pr->a], pr->a, pr->b, 0, W, jac, hess, dwdp, pidx);
        }
        if (bb->kind == SC_BODY_DYNAMIC) {
            scatter(P, Q[pr->b], pr->a, pr->b, 1, W, jac, hess, dwdp, pidx);
        }
    }

    /* planar support friction (2D).  Each point's force depends on four of the jet
       variables only -- the angle perturbation and the three velocities -- and is
       proportional to coef = mu m: so the points are summed as jets in those four local
       variables (15 doubles at order 2 instead of a full jet), and the sums are expanded
       into the full variables and multiplied by coef once per body. */
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const int j = move_index(m, i);
        sc_jet_ctx c4;
        double pose[3], vel[3], R[4], tt[2], *mu, *mj, *coef, *full, acc[3][SC_JET4_LEN];
        int map[4];
        if (b->nsupport == 0) {
            continue;
        }
        body_state(m, &P->s, x, i, pose, vel);
        sc_pose_frame(2, pose, R, tt);
        sc_jet_ctx_init(&c4, 4, c->order);
        /* local variables: the angle perturbation, then the velocities (vx, vy, omega) */
        map[0] = j * nv + 2;
        for (k = 0; k < 3; k++) {
            map[1 + k] = nvt + j * nv + k;
        }
        /* the points' sums, with the order a compile-time constant in each copy */
        switch (c->order) {
        case 0: support_sums(b, R, vel, 0, acc); break;
        case 1: support_sums(b, R, vel, 1, acc); break;
        default: support_sums(b, R, vel, 2, acc); break;
        }
        base = P->used;
        mu = jalloc(P);
        mj = jalloc(P);
        coef = jalloc(P);
        full = jalloc(P);
        pjet(P, mu, b->support_friction, support_param(m, i));
        pjet(P, mj, b->mass, body_param(m, i));
        sc_jet_mul(c, n, coef, mu, mj);
        for (k = 0; k < 3; k++) {
            sc_jet_expand(&c4, acc[k], map, c, n, full);
            sc_jet_madd(c, n, Q[i][k], 1.0, coef, full);
        }
        P->used = base;
    }

    /* actuation, accelerations, v+ */
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const int j = move_index(m, i), uo = ctrl_offset(m, i), p0 = body_param(m, i);
        double pose[7], vel[6];
        if (j < 0) {
            continue;
        }
        body_state(m, &P->s, x, i, pose, vel);
        if (b->kind == SC_BODY_KINEMATIC) {
            for (k = 0; k < nv; k++) {
                sc_jet_var(c, n, vp[i][k], u[uo + k], P->ubase + uo + k);
            }
            continue;
        }
        if (uo >= 0) {
            double *uj = jalloc(P);
            for (k = 0; k < nv; k++) {
                sc_jet_var(c, n, uj, u[uo + k], P->ubase + uo + k);
                sc_jet_axpy(c, n, Q[i][k], 1.0, uj);
            }
            P->used--;
        }
        base = P->used;
        {
            double *mj = jalloc(P), *a[6], *vj = jalloc(P);
            for (k = 0; k < nv; k++) {
                a[k] = jalloc(P);
            }
            pjet(P, mj, b->mass, p0);
            sc_jet_func(c, n, mj, mj, 1.0 / b->mass, -1.0 / (b->mass * b->mass),
                        2.0 / (b->mass * b->mass * b->mass));
            for (k = 0; k < D; k++) {
                sc_jet_mul(c, n, a[k], Q[i][k], mj);
            }
            if (D == 2) {
                pjet(P, vj, b->inertia[0], p0 + 1);
                sc_jet_func(c, n, vj, vj, 1.0 / b->inertia[0],
                            -1.0 / (b->inertia[0] * b->inertia[0]),
                            2.0 / (b->inertia[0] * b->inertia[0] * b->inertia[0]));
                sc_jet_mul(c, n, a[2], Q[i][2], vj);
            } else {
                /* a_rot = I^-1 (tau - w x I w), I = adj(I) / det(I), all as jets */
                double *Ij[9], *wj[3], *Iw[3], *bb[3], *cof[9], *det, *t;
                static const int pidx[9] = {1, 4, 5, 4, 2, 6, 5, 6, 3};
                int r2, c2;
                for (k = 0; k < 9; k++) {
                    Ij[k] = jalloc(P);
                    cof[k] = jalloc(P);
                    pjet(P, Ij[k], b->inertia[k], p0 < 0 ? -1 : p0 + pidx[k]);
                }
                for (k = 0; k < 3; k++) {
                    wj[k] = jalloc(P);
                    Iw[k] = jalloc(P);
                    bb[k] = jalloc(P);
                    sc_jet_var(c, n, wj[k], vel[3 + k], nvt + j * nv + 3 + k);
                }
                det = jalloc(P);
                t = jalloc(P);
                for (r2 = 0; r2 < 3; r2++) {
                    sc_jet_mul(c, n, Iw[r2], Ij[3 * r2], wj[0]);
                    sc_jet_madd(c, n, Iw[r2], 1.0, Ij[3 * r2 + 1], wj[1]);
                    sc_jet_madd(c, n, Iw[r2], 1.0, Ij[3 * r2 + 2], wj[2]);
                }
                for (k = 0; k < 3; k++) {
                    const int i1 = (k + 1) % 3, i2 = (k + 2) % 3;
                    sc_jet_lin(c, n, bb[k], 1.0, Q[i][3 + k], 0.0, NULL);
                    sc_jet_madd(c, n, bb[k], -1.0, wj[i1], Iw[i2]);
                    sc_jet_madd(c, n, bb[k], 1.0, wj[i2], Iw[i1]);
                }
                /* cofactors cof[r][c] = I[r+1][c+1] I[r+2][c+2] - I[r+1][c+2] I[r+2][c+1] */
                for (r2 = 0; r2 < 3; r2++) {
                    for (c2 = 0; c2 < 3; c2++) {
                        const int ra = (r2 + 1) % 3, rb = (r2 + 2) % 3;
                        const int ca = (c2 + 1) % 3, cb = (c2 + 2) % 3;
                        sc_jet_mul(c, n, cof[3 * r2 + c2], Ij[3 * ra + ca], Ij[3 * rb + cb]);
                        sc_jet_madd(c, n, cof[3 * r2 + c2], -1.0, Ij[3 * ra + cb], Ij[3 * rb + ca]);
                    }
                }
                sc_jet_mul(c, n, det, Ij[0], cof[0]);
                sc_jet_madd(c, n, det, 1.0, Ij[1], cof[1]);
                sc_jet_madd(c, n, det, 1.0, Ij[2], cof[2]);
                {
                    const double d0 = det[0];
                    sc_jet_func(c, n, det, det, 1.0 / d0, -1.0 / (d0 * d0), 2.0 / (d0 * d0 * d0));
                }
                for (r2 = 0; r2 < 3; r2++) {
                    /* (I^-1)[r][c] = cof[c][r] / det */
                    sc_jet_mul(c, n, t, cof[r2], bb[0]);
                    sc_jet_madd(c, n, t, 1.0, cof[3 + r2], bb[1]);
                    sc_jet_madd(c, n, t, 1.0, cof[6 + r2], bb[2]);
                    sc_jet_mul(c, n, a[3 + r2], t, det);
                }
            }
            /* v+ = v + h a */
            for (k = 0; k < nv; k++) {
                sc_jet_var(c, n, vj, vel[k], nvt + j * nv + k);
                sc_jet_lin(c, n, vp[i][k], 1.0, vj, h, a[k]);
            }
        }
        P->used = base;
    }

    /* x+ values and the chart of x+ */
    for (i = 0; i < m->nbody; i++) {
        const int j = move_index(m, i);
        double pose[7], vel[6], **dq = Q[i]; /* Q's jets are reused for the dq+ rows */
        if (j < 0) {
            continue;
        }
        body_state(m, &P->s, x, i, pose, vel);
        for (k = 0; k < nv; k++) {
            x_next[P->s.nq + j * nv + k] = vp[i][k][0];
        }
        for (k = 0; k < D; k++) {
            x_next[j * nq_of(D) + k] = pose[k] + h * vp[i][k][0];
            sc_jet_var(c, n, dq[k], 0.0, j * nv + k);
            sc_jet_axpy(c, n, dq[k], h, vp[i][k]);
            dq[k][0] = 0.0;
        }
        if (D == 2) {
            x_next[j * 3 + 2] = pose[2] + h * vp[i][2][0];
            sc_jet_var(c, n, dq[2], 0.0, j * nv + 2);
            sc_jet_axpy(c, n, dq[2], h, vp[i][2]);
            dq[2][0] = 0.0;
        } else {
            double *qa[4], *qb[4], *qc[4], *qt[4], *s2, *av[3], Cf[3], Sf[3], q0[4], w0[3], qn;
            base = P->used;
            for (k = 0; k < 4; k++) {
                qa[k] = jalloc(P);
                qb[k] = jalloc(P);
                qc[k] = jalloc(P);
                qt[k] = jalloc(P);
            }
            for (k = 0; k < 3; k++) {
                av[k] = jalloc(P);
                sc_jet_lin(c, n, av[k], h, vp[i][3 + k], 0.0, NULL);
                w0[k] = av[k][0];
            }
            s2 = jalloc(P);
            sc_jet_mul(c, n, s2, av[0], av[0]);
            sc_jet_madd(c, n, s2, 1.0, av[1], av[1]);
            sc_jet_madd(c, n, s2, 1.0, av[2], av[2]);
            half_angle_fns(s2[0], Cf, Sf);
            /* qb = Exp(h w+) = (C(s), S(s) a) */
            sc_jet_func(c, n, qb[0], s2, Cf[0], Cf[1], Cf[2]);
            sc_jet_func(c, n, s2, s2, Sf[0], Sf[1], Sf[2]);
            for (k = 0; k < 3; k++) {
                sc_jet_mul(c, n, qb[1 + k], s2, av[k]);
            }
            /* qa = Exp(dth) = (1 - |dth|^2 / 8, dth / 2) */
            sc_jet_const(c, n, qa[0], 1.0);
            for (k = 0; k < 3; k++) {
                sc_jet_var(c, n, qa[1 + k], 0.0, j * nv + 3 + k);
                sc_jet_lin(c, n, qa[1 + k], 0.5, qa[1 + k], 0.0, NULL);
                sc_jet_hadd(c, n, qa[0], j * nv + 3 + k, j * nv + 3 + k, -0.25);
            }
            /* qc = Exp(-h w+0) = conj(qb value) */
            sc_jet_const(c, n, qc[0], qb[0][0]);
            for (k = 0; k < 3; k++) {
                sc_jet_const(c, n, qc[1 + k], -qb[1 + k][0]);
            }
            /* value: q+ = q (x) Exp(h w+), normalized */
            {
                const double *q = pose + 3;
                const double bw = Cf[0], bx = Sf[0] * w0[0], by = Sf[0] * w0[1], bz = Sf[0] * w0[2];
                q0[0] = q[0] * bw - q[1] * bx - q[2] * by - q[3] * bz;
                q0[1] = q[0] * bx + bw * q[1] + q[2] * bz - q[3] * by;
                q0[2] = q[0] * by + bw * q[2] + q[3] * bx - q[1] * bz;
                q0[3] = q[0] * bz + bw * q[3] + q[1] * by - q[2] * bx;
                qn = sqrt(q0[0] * q0[0] + q0[1] * q0[1] + q0[2] * q0[2] + q0[3] * q0[3]);
                for (k = 0; k < 4; k++) {
                    x_next[j * 7 + 3 + k] = q0[k] / qn;
                }
            }
            quat_mul(P, qt, qc, qa);
            quat_mul(P, qa, qt, qb); /* qa is free again */
            for (k = 0; k < 3; k++) {
                sc_jet_lin(c, n, dq[3 + k], 2.0, qa[1 + k], 0.0, NULL);
                dq[3 + k][0] = 0.0;
            }
            P->used = base;
        }
    }
    return P->overflow ? SC_ENOMEM : SC_OK;
}

/* ---- entry points ---- */

typedef struct {
    double *cwork, *pairbuf, *arena, *xtmp, *utmp;
} ws_t;

static void ws_layout(const sc_model *m, const sc_model_sizes *s, int nthreads, double *work,
                      ws_t *w)
{
    ptrdiff_t cw = 0;
    int k;
    for (k = 0; k < m->npair; k++) {
        ptrdiff_t c = sc_contact_workspace_size(&m->bodies[m->pairs[k].a].cloud,
                                                &m->bodies[m->pairs[k].b].cloud, nthreads);
        cw = c > cw ? c : cw;
    }
    w->xtmp = work;
    w->utmp = work + s->nq + 2 * s->nv + 8;
    w->cwork = work + s->nq + 2 * s->nv + s->nu + 16;
    w->pairbuf = w->cwork + cw;
    w->arena = w->pairbuf + PAIRBUF;
}

static void pass_init(pass_t *P, const sc_model *m, const sc_model_sizes *s, int order,
                      int params, double *arena)
{
    memset(P, 0, sizeof *P);
    P->m = m;
    P->s = *s;
    P->D = m->dim;
    P->nv1 = nv_of(m->dim);
    P->nvt = s->nv;
    P->n = params ? 2 * s->nv + s->nu + s->np : order > 0 ? 2 * s->nv + s->nu : 0;
    sc_jet_ctx_init(&P->c, P->n, params ? 1 : order);
    P->ubase = 2 * s->nv;
    P->pbase = params ? 2 * s->nv + s->nu : NONE;
    P->arena = arena;
    P->cap = n_jets(s);
}

static int check_state(const sc_model *m, const sc_model_sizes *s, const double *x,
                       const double *u, int with_u)
{
    int k, j;
    if (x == NULL || (with_u && s->nu > 0 && u == NULL)) {
        return SC_EINVAL;
    }
    for (k = 0; k < s->nq + s->nv; k++) {
        if (!isfinite(x[k])) {
            return SC_ENONFINITE;
        }
    }
    for (k = 0; with_u && k < s->nu; k++) {
        if (!isfinite(u[k])) {
            return SC_ENONFINITE;
        }
    }
    if (m->dim == 3) {
        for (j = 0; j < s->nmove; j++) {
            const double *q = x + 7 * j + 3;
            if (q[0] == 0.0 && q[1] == 0.0 && q[2] == 0.0 && q[3] == 0.0) {
                return SC_EINVAL;
            }
        }
    }
    return SC_OK;
}

int sc_step(const sc_model *m, const double *x, const double *u, int order, int params, int isa,
            int nthreads, double *work, double *x_next, double *dx_dx, double *dx_du,
            double *d2x_dx2, double *d2x_dxdu, double *d2x_du2, double *dx_dp)
{
    double *Qs[SC_MODEL_MAX_BODIES][6], *vps[SC_MODEL_MAX_BODIES][6];
    sc_model_sizes s;
    ws_t w;
    int st, pass;
    if (sc_model_check(m, &s) != SC_OK || order < 0 || order > 2 || nthreads < 1 ||
        work == NULL) {
        return SC_EINVAL;
    }
    if ((st = check_state(m, &s, x, u, 1)) != SC_OK) {
        return st;
    }
    ws_layout(m, &s, nthreads, work, &w);
    if (x_next == NULL) {
        x_next = w.xtmp;
    }
    /* pass 0: first-order jets in (dx, du, dp) when parameters are asked for;
     * pass 1: jets of the requested order in (dx, du), unless pass 0 covered it */
    for (pass = params ? 0 : 1; pass < 2; pass++) {
        pass_t P;
        const int nx2 = 2 * s.nv, nu = s.nu;
        int i, k, a, b;
        if (pass == 1 && params && order <= 1) {
            break;
        }
        pass_init(&P, m, &s, order, pass == 0, w.arena);
        st = step_pass(&P, x, u, isa, nthreads, w.cwork, w.pairbuf, x_next, Qs, vps);
        if (st != SC_OK) {
            return st;
        }
        for (i = 0; i < m->nbody; i++) {
            const int j = move_index(m, i);
            if (j < 0) {
                continue;
            }
            for (k = 0; k < 2 * P.nv1; k++) {
                const int row = k < P.nv1 ? j * P.nv1 + k : s.nv + j * P.nv1 + (k - P.nv1);
                const double *J = k < P.nv1 ? Qs[i][k] : vps[i][k - P.nv1];
                if (order >= 1 && (pass == 1 || order <= 1)) {
                    if (dx_dx) {
                        for (a = 0; a < nx2; a++) {
                            dx_dx[row * nx2 + a] = J[1 + a];
                        }
                    }
                    if (dx_du) {
                        for (a = 0; a < nu; a++) {
                            dx_du[row * nu + a] = J[1 + nx2 + a];
                        }
                    }
                }
                if (pass == 0 && dx_dp) {
                    for (a = 0; a < s.np; a++) {
                        dx_dp[row * s.np + a] = J[1 + P.pbase + a];
                    }
                }
                if (pass == 1 && order >= 2) {
                    for (a = 0; a < nx2 + nu; a++) {
                        for (b = 0; b < nx2 + nu; b++) {
                            const double v = J[sc_jet_hidx(&P.c, a, b)];
                            if (a < nx2 && b < nx2) {
                                if (d2x_dx2) {
                                    d2x_dx2[(row * nx2 + a) * nx2 + b] = v;
                                }
                            } else if (a < nx2) {
                                if (d2x_dxdu) {
                                    d2x_dxdu[(row * nx2 + a) * nu + (b - nx2)] = v;
                                }
                            } else if (b >= nx2 && d2x_du2) {
                                d2x_du2[(row * nu + (a - nx2)) * nu + (b - nx2)] = v;
                            }
                        }
                    }
                }
            }
        }
    }
    return SC_OK;
}

typedef struct {
    const sc_model *m;
    sc_model_sizes s;
    ptrdiff_t T;
    const double *x0, *U;
    int order, isa;
    double *work, *X, *A, *Bu;
    ptrdiff_t ws;
    int *status;
} rollout_job;

static int rollout_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const rollout_job *J = (const rollout_job *)ctx;
    const int nx = J->s.nq + J->s.nv, n2 = 2 * J->s.nv, nu = J->s.nu;
    double *work = J->work + (ptrdiff_t)tid * J->ws;
    ptrdiff_t bi, t, k;
    for (bi = begin; bi < end; bi++) {
        double *X = J->X + bi * (J->T + 1) * nx;
        double *A = J->A ? J->A + bi * J->T * n2 * n2 : NULL;
        double *Bu = J->Bu ? J->Bu + bi * J->T * n2 * nu : NULL;
        int st = SC_OK;
        memcpy(X, J->x0 + bi * nx, sizeof(double) * (size_t)nx);
        for (t = 0; t < J->T && st == SC_OK; t++) {
            st = sc_step(J->m, X + t * nx, J->U + (bi * J->T + t) * nu, J->order, 0, J->isa, 1,
                         work, X + (t + 1) * nx, A ? A + t * n2 * n2 : NULL,
                         Bu ? Bu + t * n2 * nu : NULL, NULL, NULL, NULL, NULL);
            if (st != SC_OK) {
                /* this step's outputs and everything after are NaN */
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
        }
        J->status[bi] = st;
    }
    return SC_OK;
}

int sc_rollout(const sc_model *m, ptrdiff_t B, ptrdiff_t T, const double *x0, const double *U,
               int order, int isa, int nthreads, double *work, double *X, double *A, double *Bu,
               int *status)
{
    rollout_job J;
    if (sc_model_check(m, &J.s) != SC_OK || B < 0 || T < 0 || x0 == NULL ||
        (U == NULL && J.s.nu > 0 && T > 0) || order < 0 || order > 1 || nthreads < 1 ||
        work == NULL || X == NULL || status == NULL) {
        return SC_EINVAL;
    }
    if (nthreads > B) {
        nthreads = B > 0 ? (int)B : 1;
    }
    J.m = m;
    J.T = T;
    J.x0 = x0;
    J.U = U;
    J.order = order;
    J.isa = isa;
    J.work = work;
    J.X = X;
    J.A = order >= 1 ? A : NULL;
    J.Bu = order >= 1 ? Bu : NULL;
    J.ws = sc_step_workspace_size(m, order, 0, 1);
    J.status = status;
    return sc_parallel_for(B, nthreads, rollout_range, &J);
}

int sc_inverse_dynamics(const sc_model *m, const double *x, const double *x_next, int isa,
                        int nthreads, double *work, double *u, double *f)
{
    sc_model_sizes s;
    ws_t w;
    double *x0p;
    const int D = m ? m->dim : 2, nv = nv_of(D);
    int st, i, k;
    if (sc_model_check(m, &s) != SC_OK || x_next == NULL || work == NULL || nthreads < 1) {
        return SC_EINVAL;
    }
    if ((st = check_state(m, &s, x_next, NULL, 0)) != SC_OK) {
        return st;
    }
    ws_layout(m, &s, nthreads, work, &w);
    for (k = 0; k < s.nu; k++) {
        w.utmp[k] = 0.0;
    }
    /* the uncontrolled step; its scratch follows utmp, so shift the work pointer past it */
    x0p = w.xtmp;
    st = sc_step(m, x, w.utmp, 0, 0, isa, nthreads, work + (s.nq + 2 * s.nv + s.nu + 16), x0p,
                 NULL, NULL, NULL, NULL, NULL, NULL);
    if (st != SC_OK) {
        return st;
    }
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const int j = move_index(m, i), uo = ctrl_offset(m, i);
        const double *vn = x_next + s.nq + j * nv, *v0 = x0p + s.nq + j * nv;
        double fb[6] = {0, 0, 0, 0, 0, 0};
        if (j < 0) {
            continue;
        }
        if (b->kind == SC_BODY_DYNAMIC) {
            for (k = 0; k < D; k++) {
                fb[k] = b->mass * (vn[k] - v0[k]) / m->dt;
            }
            if (D == 2) {
                fb[2] = b->inertia[0] * (vn[2] - v0[2]) / m->dt;
            } else {
                for (k = 0; k < 3; k++) {
                    fb[3 + k] = (b->inertia[3 * k] * (vn[3] - v0[3]) +
                                 b->inertia[3 * k + 1] * (vn[4] - v0[4]) +
                                 b->inertia[3 * k + 2] * (vn[5] - v0[5])) /
                                m->dt;
                }
            }
        }
        for (k = 0; k < nv; k++) {
            if (f) {
                f[j * nv + k] = fb[k];
            }
            if (u && uo >= 0) {
                u[uo + k] = b->kind == SC_BODY_KINEMATIC ? vn[k] : fb[k];
            }
        }
    }
    return SC_OK;
}

int sc_energy(const sc_model *m, const double *x, int isa, int nthreads, double *work,
              double *out)
{
    sc_model_sizes s;
    ws_t w;
    const int D = m ? m->dim : 2;
    int st, i, k;
    if (sc_model_check(m, &s) != SC_OK || work == NULL || out == NULL || nthreads < 1) {
        return SC_EINVAL;
    }
    if ((st = check_state(m, &s, x, NULL, 0)) != SC_OK) {
        return st;
    }
    ws_layout(m, &s, nthreads, work, &w);
    out[0] = out[1] = out[2] = 0.0;
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        double pose[7], vel[6];
        if (b->kind != SC_BODY_DYNAMIC) {
            continue;
        }
        body_state(m, &s, x, i, pose, vel);
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
        const sc_pair *pr = m->pairs + k;
        double pa[7], va[6], pb[7], vb[6], sc3[3], W[12];
        body_state(m, &s, x, pr->a, pa, va);
        body_state(m, &s, x, pr->b, pb, vb);
        st = sc_contact(&m->bodies[pr->a].cloud, pa, va, &m->bodies[pr->b].cloud, pb, vb,
                        &pr->prm, 0, 0, isa, nthreads, w.cwork, W, sc3, NULL, NULL, NULL, NULL,
                        NULL, NULL, NULL);
        if (st != SC_OK) {
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
    if ((st = check_state(m, &s, x, NULL, 0)) != SC_OK) {
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
        body_state(m, &s, x, i, pose, vel);
        sc_pose_frame(D, pose, R, t);
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
