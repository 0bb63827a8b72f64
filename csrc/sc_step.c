/*
 * sc_step.c - one step of a model and its derivatives (see sc_step.h), one function per
 * integrator (sc_model.integrator).
 *
 * The semi-implicit Euler step (step_euler) is evaluated once with second-order jets
 * (sc_jet.h) in the variables (dx (2 nv), du (nu)) -- or, for the parameter derivatives,
 * first-order jets in (dx, du, dp) -- in three stages:
 *   forces: gravity and actuation directly, each contact pair's wrench from sc_contact's
 *     closed-form Jacobian and second-derivative tensor (scattered from the pair's (dq_a,
 *     dq_b, v_a, v_b) to the step's variables), support friction by the jet rules;
 *   velocities: M^-1 (with the gyroscopic term and, for parameters, a variable mass and
 *     inertia), v+ = v + h a;
 *   positions: the chart of x+: translations and 2D angles dq+ = dq + h dv+ (exact); 3D
 *     rotations Exp(dth+) = Exp(-h w+) Exp(dth) Exp(h w+(dx, du)), and, because that
 *     product is the identity at 0, dth+ = 2 vec(product) to second order (the quaternion
 *     logarithm is 2 v / w (1 + O(|v|^2)) with w = 1 + O(|v|^2)).
 *
 * The linearly implicit step (step_implicit) takes damping and friction at the new
 * velocities w+, friction lagged (its normalizer 1 / |t|_s at the current ones): it
 * evaluates the forces with the normalizers frozen (SC_FRICTION_FROZEN), at least to
 * first order so that D = dQ/dw is among the jets' entries; solves (M - h D_dd) dv = h r,
 * r = Q + actuation - gyro + D_dk (u_k - v_k), by LU with partial pivoting; and
 * differentiates the solve exactly (implicit_velocities): the first derivatives from a
 * numerator pass at w+ (the forces with w+ held, SC_FRICTION_NUMERATOR), the second ones
 * with the frozen jets' second-order entries and numerator passes at unit velocities
 * (second_order_velocities).  The parameter derivatives solve with the same matrix
 * (implicit_params).  The positions stage is the semi-implicit Euler step's.
 */
#include <math.h>
#include <string.h>

#include "sc_jet.h"
#include "sc_model_internal.h"
#include "sc_work_internal.h"

/* ---- scratch ---- */

/* one pair's wrench (12), Jacobian (12 x 24), second derivatives (12 x 24 x 24) and
   parameter derivatives (3 x 12), 3D sizes */
#define PAIRBUF (12 + 12 * 24 + 12 * 24 * 24 + 36)

/* jets of the pass: per moving body Q and v+ (2 nv) and the 3D velocity stage's
   temporaries, plus the chart's */
static int n_jets(const sc_model_sizes *s)
{
    return 24 * s->nmove + 96;
}

static ptrdiff_t contact_work(const sc_model *m, int nthreads)
{
    ptrdiff_t cw = 0;
    int k;
    for (k = 0; k < m->npair; k++) {
        const ptrdiff_t w = sc_contact_workspace_size(&m->bodies[m->pairs[k].a].cloud,
                                                      &m->bodies[m->pairs[k].b].cloud, nthreads);
        cw = w > cw ? w : cw;
    }
    return cw;
}

/* the step's scratch in base (NULL: only its size): a state and a control of scratch
   (sc__step_ws_head doubles, rounded), the contact model's scratch, one pair's outputs
   (PAIRBUF), the jet arena of its order (params: first order in (dx, du, dp)) and a sink
   slot; returns its size in doubles */
static ptrdiff_t step_layout(const sc_model *m, const sc_model_sizes *s, int order, int params,
                             int nthreads, double *base, sc__step_ws *w)
{
    const ptrdiff_t d = sizeof(double);
    /* the implicit step's frozen force jets are at least of order 1 */
    const int jord = order + (m->integrator == SC_INTEGRATOR_IMPLICIT && order == 0);
    const ptrdiff_t nd = sc__n_dynamic_velocities(m);
    const ptrdiff_t ndi = m->integrator == SC_INTEGRATOR_IMPLICIT ? nd : 0;
    const ptrdiff_t len0 = jord >= 2 ? SC_JET_LEN(2 * s->nv + s->nu) : 1 + 2 * s->nv + s->nu;
    const ptrdiff_t len1 = params ? 1 + 2 * s->nv + s->nu + s->np : 0;
    ptrdiff_t off = 0;
    w->xtmp = sc__take(base, &off, s->nq + 2 * s->nv + 8, d);
    w->utmp = sc__take(base, &off, s->nu + 8, d);
    w->cwork = sc__take(base, &off, contact_work(m, nthreads), d);
    w->pairbuf = sc__take(base, &off, PAIRBUF, d);
    w->arena = sc__take(base, &off, (n_jets(s) + 1) * (len0 > len1 ? len0 : len1), d);
    /* the implicit step's matrix, its right sides (values, first-order variables,
       parameters) and, at order 2, one second-order right side and a row of dD/dz */
    w->lin = sc__take(base, &off,
                      ndi * ndi + ndi * (1 + 2 * s->nv + s->nu + (params ? s->np : 0)) +
                          (ndi && order == 2 ? ndi + 2 * s->nv + s->nu : 0),
                      d);
    w->piv = sc__take(base, &off, ndi, sizeof(int));
    /* the step matrix of sc__step_with_matrix (inverse dynamics), kept at every order so
       that the scratch grows with the order */
    w->amat = sc__take(base, &off, nd * nd, d);
    return off;
}

int sc__n_dynamic_velocities(const sc_model *m)
{
    int i, nd = 0;
    for (i = 0; i < m->nbody; i++) {
        nd += m->bodies[i].kind == SC_BODY_DYNAMIC ? SC_NV(m->dim) : 0;
    }
    return nd;
}

ptrdiff_t sc__step_ws_head(const sc_model_sizes *s)
{
    return s->nq + 2 * s->nv + s->nu + 16;
}

ptrdiff_t sc_step_workspace_size(const sc_model *m, int order, int params, int nthreads)
{
    sc_model_sizes s;
    sc__step_ws w;
    if (sc_model_check(m, &s) != SC_OK || order < 0 || order > 2 || nthreads < 1) {
        return 0;
    }
    /* a head more: sc_inverse_dynamics runs a step past its own state and control */
    return sc__step_ws_head(&s) + step_layout(m, &s, order, params, nthreads, NULL, &w);
}

void sc__step_ws_layout(const sc_model *m, const sc_model_sizes *s, int order, int params,
                        int nthreads, double *work, sc__step_ws *w)
{
    step_layout(m, s, order, params, nthreads, work, w);
}

/* ---- the jet pass ---- */

typedef struct {
    const sc_model *m;
    sc_model_sizes s;
    int D, nv1, nvt;
    sc_jet_ctx c;
    int n, ubase, pbase; /* jet variables; first control / parameter variable (or
                            SC_JET_NOVAR) */
    sc_jet_arena jets;
    double **Q[SC_MODEL_MAX_BODIES];  /* per moving body: the generalized force (nv jets),
                                         reused for the dq+ rows at the end */
    double **vp[SC_MODEL_MAX_BODIES]; /* per moving body: v+ (nv jets) */
    int lag;                          /* the implicit step: friction's normalizer frozen
                                         (1: SC_FRICTION_FROZEN; 2: the contacts'
                                         derivatives in the velocities only,
                                         SC_FRICTION_FROZEN_VELOCITY) */
    const double *wnum;               /* NULL, or the friction numerator's velocities (nv per
                                         body): only friction, SC_FRICTION_NUMERATOR */
    int only;                         /* with wnum: -1, or the one body whose pairs and
                                         support are evaluated (the others' are zero) */
} pass_t;

static void pass_init(pass_t *P, const sc_model *m, const sc_model_sizes *s, int order, int params,
                      double *arena, double *(*Qs)[6], double *(*vps)[6])
{
    int i;
    memset(P, 0, sizeof *P);
    P->m = m;
    P->s = *s;
    P->D = m->dim;
    P->nv1 = SC_NV(m->dim);
    P->nvt = s->nv;
    P->n = params ? 2 * s->nv + s->nu + s->np : order > 0 ? 2 * s->nv + s->nu : 0;
    sc_jet_ctx_init(&P->c, P->n, params ? 1 : order);
    P->ubase = 2 * s->nv;
    P->pbase = params ? 2 * s->nv + s->nu : SC_JET_NOVAR;
    P->only = -1;
    sc_jet_arena_init(&P->jets, arena, P->c.len, n_jets(s));
    for (i = 0; i < m->nbody; i++) {
        P->Q[i] = Qs[i];
        P->vp[i] = vps[i];
    }
}

/* a parameter's variable (a constant jet when parameters are not differentiated) */
static void pjet(pass_t *P, double *out, double value, int param)
{
    sc_jet_var(&P->c, P->n, out, value,
               param < 0 || P->pbase == SC_JET_NOVAR ? SC_JET_NOVAR : P->pbase + param);
}

/* variable of the pair coordinate i = (dq_a, dq_b, v_a, v_b)[...], or -1 (static body) */
static int pair_var(const pass_t *P, int a, int b, int i)
{
    const int blk = i / P->nv1, cc = i % P->nv1;
    const int j = sc__move_index(P->m, blk % 2 == 0 ? a : b);
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
            if (dwdp && P->pbase != SC_JET_NOVAR) {
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

/* ---- forces ---- */

/* gravity m g on every dynamic body */
static void add_gravity(pass_t *P)
{
    const sc_model *m = P->m;
    int i, k;
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        double *mj;
        if (b->kind != SC_BODY_DYNAMIC) {
            continue;
        }
        mj = sc_jet_alloc(&P->jets);
        pjet(P, mj, b->mass, sc__body_param(m, i));
        for (k = 0; k < P->D; k++) {
            sc_jet_axpy(&P->c, P->n, P->Q[i][k], m->gravity[k], mj);
        }
        P->jets.used--;
    }
}

/* every pair's contact wrench on its dynamic bodies */
static int add_contacts(pass_t *P, const double *x, const sc_options *opt, double *cwork,
                        double *pairbuf)
{
    const sc_model *m = P->m;
    const int order = P->c.order;
    double *W = pairbuf, *jac = W + 12, *hess = jac + 12 * 24, *dwdp = hess + 12 * 24 * 24;
    int k, st;
    for (k = 0; k < m->npair; k++) {
        const sc_pair *pr = m->pairs + k;
        const sc_body *ba = m->bodies + pr->a, *bb = m->bodies + pr->b;
        const int pidx = sc__n_body_params(m) + 3 * k;
        sc_contact_out out = {0};
        if ((ba->kind != SC_BODY_DYNAMIC && bb->kind != SC_BODY_DYNAMIC) ||
            (P->only >= 0 && pr->a != P->only && pr->b != P->only)) {
            continue;
        }
        out.wrench = W;
        out.jac = order >= 1 ? jac : NULL;
        out.hess = order >= 2 ? hess : NULL;
        out.dw_dprm = P->pbase != SC_JET_NOVAR ? dwdp : NULL;
        if ((st = sc__pair_contact(m, &P->s, x, k, order, 1, opt, cwork, &out,
                                   P->wnum       ? SC_FRICTION_NUMERATOR
                                   : P->lag == 2 ? SC_FRICTION_FROZEN_VELOCITY
                                   : P->lag      ? SC_FRICTION_FROZEN
                                                 : SC_FRICTION_FULL,
                                   P->wnum)) != SC_OK) {
            return st;
        }
        if (ba->kind == SC_BODY_DYNAMIC) {
            scatter(P, P->Q[pr->a], pr->a, pr->b, 0, W, jac, hess, dwdp, pidx);
        }
        if (bb->kind == SC_BODY_DYNAMIC) {
            scatter(P, P->Q[pr->b], pr->a, pr->b, 1, W, jac, hess, dwdp, pidx);
        }
    }
    return SC_OK;
}

/* The planar support friction's sums over body b's points, as jets in the four local
 * variables (the angle perturbation, vx, vy, omega): acc = (f_x, f_y, torque) / coef
 * (add_support).  Always inlined with ord a constant, so that the jet kernels' order tests
 * and loop bounds fold and no call is made per jet operation; the operations, and so the
 * bits, are those of the generic kernels. */
SC_JET_KERNEL void support_sums(const sc_body *b, const double *R, const double *vel, int ord,
                                int lag, const double *wv, double acc[3][SC_JET4_LEN])
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
        if (lag) {
            /* the lagged friction: the normalizer without velocity derivatives */
            sc_jet_promote(&c4, 1, 4, w);
        }
        if (wv) {
            /* the numerator's point velocity, from the constant velocities wv */
            sc_jet_const(&c4, 4, vpnt[0], wv[0]);
            sc_jet_const(&c4, 4, vpnt[1], wv[1]);
            sc__jet_axpy(&c4, 4, vpnt[0], -wv[2], r[1]);
            sc__jet_axpy(&c4, 4, vpnt[1], wv[2], r[0]);
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

/* Planar support friction (2D).  Each point's force depends on four of the jet variables
   only -- the angle perturbation and the three velocities -- and is proportional to coef =
   mu m: so the points are summed as jets in those four local variables (15 doubles at
   order 2 instead of a full jet), and the sums are expanded into the full variables and
   multiplied by coef once per body. */
static void add_support(pass_t *P, const double *x)
{
    const sc_model *m = P->m;
    const sc_jet_ctx *c = &P->c;
    const int nv = P->nv1, nvt = P->nvt, n = P->n;
    int i, k;
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const int j = sc__move_index(m, i);
        sc_jet_ctx c4;
        double pose[3], vel[3], R[4], tt[2], *mu, *mj, *coef, *full, acc[3][SC_JET4_LEN];
        int map[4], base;
        if (b->nsupport == 0 || (P->only >= 0 && i != P->only)) {
            continue;
        }
        sc__body_state(m, &P->s, x, i, pose, vel);
        sc__pose_frame(2, pose, R, tt);
        sc_jet_ctx_init(&c4, 4, c->order);
        /* local variables: the angle perturbation, then the velocities (vx, vy, omega) */
        map[0] = j * nv + 2;
        for (k = 0; k < 3; k++) {
            map[1 + k] = nvt + j * nv + k;
        }
        /* the points' sums, with the order a compile-time constant in each copy */
        {
            /* the numerator pass (wv) keeps the normalizer's velocity derivatives */
            const double *wv = P->wnum ? P->wnum + nv * i : NULL;
            const int lag = P->lag && wv == NULL;
            switch (c->order) {
            case 0: support_sums(b, R, vel, 0, lag, wv, acc); break;
            case 1: support_sums(b, R, vel, 1, lag, wv, acc); break;
            default: support_sums(b, R, vel, 2, lag, wv, acc); break;
            }
        }
        base = P->jets.used;
        mu = sc_jet_alloc(&P->jets);
        mj = sc_jet_alloc(&P->jets);
        coef = sc_jet_alloc(&P->jets);
        full = sc_jet_alloc(&P->jets);
        pjet(P, mu, b->support_friction, sc__support_param(m, i));
        pjet(P, mj, b->mass, sc__body_param(m, i));
        sc_jet_mul(c, n, coef, mu, mj);
        for (k = 0; k < 3; k++) {
            sc_jet_expand(&c4, acc[k], map, c, n, full);
            sc_jet_madd(c, n, P->Q[i][k], 1.0, coef, full);
        }
        P->jets.used = base;
    }
}

/* ---- velocities ---- */

/* a[3..5] = I^-1 (tau - w x I w), 3D, with I = adj(I) / det(I), all as jets (a variable
   inertia when parameters are differentiated); j the body's slot, p0 its first parameter.
   The inverse is formed from I / s, s the power of 2 nearest det(I)^(1/3): the jet of
   1 / det carries 2 / det^3, which for an inertia of 1e-34 kg m^2 underflows (and its
   zero or tiny multipliers give NaN); det(I / s) is near 1 for any inertia in range.
   Scaling by a power of 2 is exact, so where the unscaled numbers stay normal the bits are
   the same. */
static void angular_acceleration(pass_t *P, const sc_body *b, double *const *Qrot,
                                 const double *vel, int j, int p0, double **a)
{
    static const int pidx[9] = {1, 4, 5, 4, 2, 6, 5, 6, 3};
    const sc_jet_ctx *c = &P->c;
    const int n = P->n, nv = P->nv1, nvt = P->nvt;
    double *Ij[9], *wj[3], *Iw[3], *bb[3], *cof[9], *det, *t, si;
    int k, r2, c2;
    for (k = 0; k < 9; k++) {
        Ij[k] = sc_jet_alloc(&P->jets);
        cof[k] = sc_jet_alloc(&P->jets);
        pjet(P, Ij[k], b->inertia[k], p0 < 0 ? -1 : p0 + pidx[k]);
    }
    for (k = 0; k < 3; k++) {
        wj[k] = sc_jet_alloc(&P->jets);
        Iw[k] = sc_jet_alloc(&P->jets);
        bb[k] = sc_jet_alloc(&P->jets);
        sc_jet_var(c, n, wj[k], vel[3 + k], nvt + j * nv + 3 + k);
    }
    det = sc_jet_alloc(&P->jets);
    t = sc_jet_alloc(&P->jets);
    for (r2 = 0; r2 < 3; r2++) {
        sc_jet_mul(c, n, Iw[r2], Ij[3 * r2], wj[0]);
        sc_jet_madd(c, n, Iw[r2], 1.0, Ij[3 * r2 + 1], wj[1]);
        sc_jet_madd(c, n, Iw[r2], 1.0, Ij[3 * r2 + 2], wj[2]);
    }
    for (k = 0; k < 3; k++) {
        const int i1 = (k + 1) % 3, i2 = (k + 2) % 3;
        sc_jet_lin(c, n, bb[k], 1.0, Qrot[k], 0.0, NULL);
        sc_jet_madd(c, n, bb[k], -1.0, wj[i1], Iw[i2]);
        sc_jet_madd(c, n, bb[k], 1.0, wj[i2], Iw[i1]);
    }
    /* I / s (in place: I w is formed), s = 2^(e / 3) for det(I) = f 2^e */
    {
        const double *J = b->inertia;
        const double dv = J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
                          J[2] * (J[3] * J[7] - J[4] * J[6]);
        int e;
        (void)frexp(dv, &e);
        si = ldexp(1.0, -(e / 3));
        for (k = 0; k < 9; k++) {
            sc_jet_lin(c, n, Ij[k], si, Ij[k], 0.0, NULL);
        }
    }
    /* cofactors cof[r][c] = I[r+1][c+1] I[r+2][c+2] - I[r+1][c+2] I[r+2][c+1] (of I / s) */
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
        /* (I^-1)[r][c] = cof[c][r] / det = (cof(I / s)[c][r] / det(I / s)) / s */
        sc_jet_mul(c, n, t, cof[r2], bb[0]);
        sc_jet_madd(c, n, t, 1.0, cof[3 + r2], bb[1]);
        sc_jet_madd(c, n, t, 1.0, cof[6 + r2], bb[2]);
        sc_jet_mul(c, n, a[3 + r2], t, det);
        sc_jet_lin(c, n, a[3 + r2], si, a[3 + r2], 0.0, NULL);
    }
}

/* v+ of moving body i: the control (kinematic), or v + h M^-1 (Q + actuation) */
static void body_velocity(pass_t *P, const double *x, const double *u, int i)
{
    const sc_model *m = P->m;
    const sc_body *b = m->bodies + i;
    const sc_jet_ctx *c = &P->c;
    const int D = P->D, nv = P->nv1, nvt = P->nvt, n = P->n;
    const int j = sc__move_index(m, i), uo = sc__ctrl_offset(m, i), p0 = sc__body_param(m, i);
    double pose[7], vel[6], **Q = P->Q[i], **vp = P->vp[i], *mj, *vj, *a[6];
    int k, base;
    sc__body_state(m, &P->s, x, i, pose, vel);
    if (b->kind == SC_BODY_KINEMATIC) {
        for (k = 0; k < nv; k++) {
            sc_jet_var(c, n, vp[k], u[uo + k], P->ubase + uo + k);
        }
        return;
    }
    if (uo >= 0) {
        double *uj = sc_jet_alloc(&P->jets);
        for (k = 0; k < nv; k++) {
            sc_jet_var(c, n, uj, u[uo + k], P->ubase + uo + k);
            sc_jet_axpy(c, n, Q[k], 1.0, uj);
        }
        P->jets.used--;
    }
    base = P->jets.used;
    mj = sc_jet_alloc(&P->jets);
    vj = sc_jet_alloc(&P->jets);
    for (k = 0; k < nv; k++) {
        a[k] = sc_jet_alloc(&P->jets);
    }
    pjet(P, mj, b->mass, p0);
    sc_jet_func(c, n, mj, mj, 1.0 / b->mass, -1.0 / (b->mass * b->mass),
                2.0 / (b->mass * b->mass * b->mass));
    for (k = 0; k < D; k++) {
        sc_jet_mul(c, n, a[k], Q[k], mj);
    }
    if (D == 2) {
        pjet(P, vj, b->inertia[0], p0 + 1);
        sc_jet_func(c, n, vj, vj, 1.0 / b->inertia[0], -1.0 / (b->inertia[0] * b->inertia[0]),
                    2.0 / (b->inertia[0] * b->inertia[0] * b->inertia[0]));
        sc_jet_mul(c, n, a[2], Q[2], vj);
    } else {
        angular_acceleration(P, b, Q + 3, vel, j, p0, a);
    }
    /* v+ = v + h a */
    for (k = 0; k < nv; k++) {
        sc_jet_var(c, n, vj, vel[k], nvt + j * nv + k);
        sc_jet_lin(c, n, vp[k], 1.0, vj, m->dt, a[k]);
    }
    P->jets.used = base;
}

/* ---- positions ---- */

/* x+ of moving body i (values) and the chart's rows dq+ (jets, in Q[i]) */
static void body_position(pass_t *P, const double *x, int i, double *x_next)
{
    const sc_model *m = P->m;
    const sc_jet_ctx *c = &P->c;
    const int D = P->D, nv = P->nv1, n = P->n, j = sc__move_index(m, i);
    const double h = m->dt;
    double pose[7], vel[6], **dq = P->Q[i], **vp = P->vp[i];
    int k;
    sc__body_state(m, &P->s, x, i, pose, vel);
    for (k = 0; k < nv; k++) {
        x_next[P->s.nq + j * nv + k] = vp[k][0];
    }
    for (k = 0; k < D; k++) {
        x_next[j * SC_NQ(D) + k] = pose[k] + h * vp[k][0];
        sc_jet_var(c, n, dq[k], 0.0, j * nv + k);
        sc_jet_axpy(c, n, dq[k], h, vp[k]);
        dq[k][0] = 0.0;
    }
    if (D == 2) {
        x_next[j * 3 + 2] = pose[2] + h * vp[2][0];
        sc_jet_var(c, n, dq[2], 0.0, j * nv + 2);
        sc_jet_axpy(c, n, dq[2], h, vp[2]);
        dq[2][0] = 0.0;
    } else {
        double *qa[4], *qb[4], *qc[4], *qt[4], *s2, *av[3], Cf[3], Sf[3], q0[4], w0[3], qn;
        const int base = P->jets.used;
        for (k = 0; k < 4; k++) {
            qa[k] = sc_jet_alloc(&P->jets);
            qb[k] = sc_jet_alloc(&P->jets);
            qc[k] = sc_jet_alloc(&P->jets);
            qt[k] = sc_jet_alloc(&P->jets);
        }
        for (k = 0; k < 3; k++) {
            av[k] = sc_jet_alloc(&P->jets);
            sc_jet_lin(c, n, av[k], h, vp[3 + k], 0.0, NULL);
            w0[k] = av[k][0];
        }
        s2 = sc_jet_alloc(&P->jets);
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
        P->jets.used = base;
    }
}

/* The forces stage of every integrator: per moving body the jets Q (zero, then gravity,
   every pair's contact wrench and the support friction, in P's context) and v+ */
static int forces_stage(pass_t *P, const double *x, const sc_options *opt, const sc__step_ws *w)
{
    const sc_model *m = P->m;
    int i, k, st;
    for (i = 0; i < m->nbody; i++) {
        if (m->bodies[i].kind == SC_BODY_STATIC) {
            continue;
        }
        for (k = 0; k < P->nv1; k++) {
            P->Q[i][k] = sc_jet_alloc(&P->jets);
            P->vp[i][k] = sc_jet_alloc(&P->jets);
            sc_jet_const(&P->c, P->n, P->Q[i][k], 0.0);
        }
    }
    add_gravity(P);
    if ((st = add_contacts(P, x, opt, w->cwork, w->pairbuf)) != SC_OK) {
        return st;
    }
    add_support(P, x);
    return SC_OK;
}

/* The pass: x_next's values and, through the jets Q (dq+ rows) and vp (v+ rows), every
   derivative. */
static int euler_pass(pass_t *P, const double *x, const double *u, const sc_options *opt,
                      const sc__step_ws *w, double *x_next)
{
    const sc_model *m = P->m;
    int i, st;
    if ((st = forces_stage(P, x, opt, w)) != SC_OK) {
        return st;
    }
    for (i = 0; i < m->nbody; i++) {
        if (m->bodies[i].kind != SC_BODY_STATIC) {
            body_velocity(P, x, u, i);
        }
    }
    for (i = 0; i < m->nbody; i++) {
        if (m->bodies[i].kind != SC_BODY_STATIC) {
            body_position(P, x, i, x_next);
        }
    }
    return P->jets.overflow ? SC_ENOMEM : SC_OK;
}

/* The derivatives of one pass into the outputs: the first-order ones from pass 1, or from
   the parameter pass (pass 0) when it is the only one; the second-order ones from pass 1;
   dx_dp from pass 0. */
static void write_derivatives(const pass_t *P, int pass, int order, const sc_step_out *out)
{
    const sc_model *m = P->m;
    const int nx2 = 2 * P->s.nv, nu = P->s.nu, np = P->s.np;
    int i, k, a, b;
    for (i = 0; i < m->nbody; i++) {
        const int j = sc__move_index(m, i);
        if (j < 0) {
            continue;
        }
        for (k = 0; k < 2 * P->nv1; k++) {
            const int row = k < P->nv1 ? j * P->nv1 + k : P->s.nv + j * P->nv1 + (k - P->nv1);
            const double *J = k < P->nv1 ? P->Q[i][k] : P->vp[i][k - P->nv1];
            if (order >= 1 && (pass == 1 || order <= 1)) {
                for (a = 0; out->dx_dx && a < nx2; a++) {
                    out->dx_dx[row * nx2 + a] = J[1 + a];
                }
                for (a = 0; out->dx_du && a < nu; a++) {
                    out->dx_du[row * nu + a] = J[1 + nx2 + a];
                }
            }
            for (a = 0; pass == 0 && out->dx_dp && a < np; a++) {
                out->dx_dp[row * np + a] = J[1 + P->pbase + a];
            }
            if (pass != 1 || order < 2) {
                continue;
            }
            for (a = 0; a < nx2 + nu; a++) {
                for (b = 0; b < nx2 + nu; b++) {
                    const double v = J[sc_jet_hidx(&P->c, a, b)];
                    if (a < nx2 && b < nx2) {
                        if (out->d2x_dx2) {
                            out->d2x_dx2[(row * nx2 + a) * nx2 + b] = v;
                        }
                    } else if (a < nx2) {
                        if (out->d2x_dxdu) {
                            out->d2x_dxdu[(row * nx2 + a) * nu + (b - nx2)] = v;
                        }
                    } else if (b >= nx2 && out->d2x_du2) {
                        out->d2x_du2[(row * nu + (a - nx2)) * nu + (b - nx2)] = v;
                    }
                }
            }
        }
    }
}

/* ---- the linearly implicit step ---- */

/* LU factorization with partial pivoting of the n x n matrix A (row-major, in place);
   SC_ENONFINITE when a pivot is zero or not finite */
static int lu_factor(double *A, int n, int *piv)
{
    int i, j, k;
    for (k = 0; k < n; k++) {
        int p = k;
        for (i = k + 1; i < n; i++) {
            if (fabs(A[i * n + k]) > fabs(A[p * n + k])) {
                p = i;
            }
        }
        piv[k] = p;
        if (!(A[p * n + k] != 0.0) || !isfinite(A[p * n + k])) {
            return SC_ENONFINITE;
        }
        if (p != k) {
            for (j = 0; j < n; j++) {
                const double t = A[k * n + j];
                A[k * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
        }
        for (i = k + 1; i < n; i++) {
            const double l = A[i * n + k] / A[k * n + k];
            A[i * n + k] = l;
            for (j = k + 1; j < n; j++) {
                A[i * n + j] -= l * A[k * n + j];
            }
        }
    }
    return SC_OK;
}

/* b := A^-1 b with A's factors from lu_factor */
static void lu_solve(const double *A, int n, const int *piv, double *b)
{
    int i, j;
    for (i = 0; i < n; i++) {
        const double t = b[piv[i]];
        b[piv[i]] = b[i];
        b[i] = t;
    }
    for (i = 0; i < n; i++) {
        for (j = 0; j < i; j++) {
            b[i] -= A[i * n + j] * b[j];
        }
    }
    for (i = n - 1; i >= 0; i--) {
        for (j = i + 1; j < n; j++) {
            b[i] -= A[i * n + j] * b[j];
        }
        b[i] /= A[i * n + i];
    }
}

/* M (mass, then inertia) entry (r, c) of a dynamic body's velocity coordinates */
static double mass_entry(const sc_body *b, int D, int r, int c)
{
    if (r < D || c < D) {
        return r == c ? b->mass : 0.0;
    }
    return D == 2 ? b->inertia[0] : b->inertia[3 * (r - 3) + (c - 3)];
}

/* r (3 jets in the context c) -= w x I w, the gyroscopic term of a 3D body at its
   velocity vel (w = vel[3..5], the state's variables of slot j) */
static void sub_gyro(pass_t *P, const sc_jet_ctx *c, const sc_body *b, const double *vel, int j,
                     double **r)
{
    const int nv = P->nv1, nvt = P->nvt, n = P->n, base = P->jets.used;
    double *wj[3], *Iw[3];
    int k, r2;
    for (k = 0; k < 3; k++) {
        wj[k] = sc_jet_alloc(&P->jets);
        Iw[k] = sc_jet_alloc(&P->jets);
        sc_jet_var(c, n, wj[k], vel[3 + k], nvt + j * nv + 3 + k);
    }
    for (r2 = 0; r2 < 3; r2++) {
        sc_jet_lin(c, n, Iw[r2], b->inertia[3 * r2], wj[0], b->inertia[3 * r2 + 1], wj[1]);
        sc_jet_axpy(c, n, Iw[r2], b->inertia[3 * r2 + 2], wj[2]);
    }
    for (k = 0; k < 3; k++) {
        const int i1 = (k + 1) % 3, i2 = (k + 2) % 3;
        sc_jet_madd(c, n, r[k], -1.0, wj[i1], Iw[i2]);
        sc_jet_madd(c, n, r[k], 1.0, wj[i2], Iw[i1]);
    }
    P->jets.used = base;
}

/* The value of the right side r of dynamic body i (nv order-0 jets c0, into vp[i]): its
   forces Q (the frozen jets' values), actuation, minus the 3D gyroscopic term w x I w,
   plus D_ik (u_k - v_k) for every kinematic body k */
static void implicit_rhs(pass_t *P, const sc_jet_ctx *c0, const double *x, const double *u, int i)
{
    const sc_model *m = P->m;
    const sc_body *b = m->bodies + i;
    const int D = P->D, nv = P->nv1, nvt = P->nvt, n = P->n;
    const int j = sc__move_index(m, i), uo = sc__ctrl_offset(m, i);
    double pose[7], vel[6], **Q = P->Q[i], **r = P->vp[i], *t, *d;
    int k, kb, c2, base = P->jets.used;
    sc__body_state(m, &P->s, x, i, pose, vel);
    t = sc_jet_alloc(&P->jets);
    d = sc_jet_alloc(&P->jets);
    for (k = 0; k < nv; k++) {
        sc_jet_lin(c0, n, r[k], 1.0, Q[k], 0.0, NULL);
        if (uo >= 0) {
            sc_jet_var(c0, n, t, u[uo + k], P->ubase + uo + k);
            sc_jet_axpy(c0, n, r[k], 1.0, t);
        }
    }
    if (D == 3) {
        sub_gyro(P, c0, b, vel, j, r + 3);
    }
    /* the kinematic bodies' velocity changes, known: D_ik (u_k - v_k) */
    for (kb = 0; kb < m->nbody; kb++) {
        const sc_body *bk = m->bodies + kb;
        const int jk = sc__move_index(m, kb), uk = sc__ctrl_offset(m, kb);
        double pk[7], vk[6];
        if (bk->kind != SC_BODY_KINEMATIC) {
            continue;
        }
        sc__body_state(m, &P->s, x, kb, pk, vk);
        for (c2 = 0; c2 < nv; c2++) {
            const int var = nvt + jk * nv + c2;
            /* d = u_k - v_k */
            sc_jet_var(c0, n, d, u[uk + c2], P->ubase + uk + c2);
            sc_jet_var(c0, n, t, vk[c2], var);
            sc_jet_lin(c0, n, d, 1.0, d, -1.0, t);
            for (k = 0; k < nv; k++) {
                /* t = D_ik = dQ_k / dv_var */
                t[0] = Q[k][1 + var];
                sc_jet_madd(c0, n, r[k], 1.0, t, d);
            }
        }
    }
    P->jets.used = base;
}

/* Phi = G(z, W(z)) + act(u) - gyro(v) of dynamic body i to first order (and, at order 2,
   without the cross terms second_order_velocities adds), in the jets Qw[i] of the context
   c: Qw holds G(z, w+) (numerator_pass), W(z) the numerators' velocities (w for the
   dynamic bodies, held; u for the kinematic ones, which adds D_ik du_k/dz) */
static void implicit_phi(pass_t *P, const sc_jet_ctx *c, const double *x, const double *u, int i,
                         double **Qw)
{
    const sc_model *m = P->m;
    const sc_body *b = m->bodies + i;
    const int nv = P->nv1, nvt = P->nvt, n = P->n;
    const int uo = sc__ctrl_offset(m, i);
    double pose[7], vel[6], *t = sc_jet_alloc(&P->jets);
    int k, kb, c2;
    sc__body_state(m, &P->s, x, i, pose, vel);
    for (k = 0; uo >= 0 && k < nv; k++) {
        sc_jet_var(c, n, t, u[uo + k], P->ubase + uo + k);
        sc_jet_axpy(c, n, Qw[k], 1.0, t);
    }
    P->jets.used--;
    if (P->D == 3) {
        sub_gyro(P, c, b, vel, sc__move_index(m, i), Qw + 3);
    }
    for (kb = 0; kb < m->nbody; kb++) {
        const int jk = sc__move_index(m, kb), uk = sc__ctrl_offset(m, kb);
        if (m->bodies[kb].kind != SC_BODY_KINEMATIC) {
            continue;
        }
        for (c2 = 0; c2 < nv; c2++) {
            for (k = 0; k < nv; k++) {
                Qw[k][1 + P->ubase + uk + c2] += P->Q[i][k][1 + nvt + jk * nv + c2];
            }
        }
    }
}

/* The friction numerators' velocities w+ of the step (nv per body, into wnum): v + dv for
   dynamic bodies (dv from rhs, nd values), u for kinematic ones, 0 for static ones */
static void new_velocities(const pass_t *P, const double *x, const double *u, const double *rhs,
                           double *wnum)
{
    const sc_model *m = P->m;
    const int nv = P->nv1;
    int i, k, ra = 0;
    for (i = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        double pose[7], vel[6];
        for (k = 0; k < nv; k++) {
            wnum[nv * i + k] = 0.0;
        }
        if (b->kind == SC_BODY_STATIC) {
            continue;
        }
        sc__body_state(m, &P->s, x, i, pose, vel);
        for (k = 0; k < nv; k++) {
            wnum[nv * i + k] =
                b->kind == SC_BODY_KINEMATIC ? u[sc__ctrl_offset(m, i) + k] : vel[k] + rhs[ra++];
        }
    }
}

/* The lagged friction's numerator pass (jets of the context cn, order 1 or 2): into Qw (nv
   jets per moving body) the contacts' and the support's forces at the numerator velocities
   wnum held constant -- the damping -c s pi_k (nu_k . u_k(w)) nu_k and the friction
   -mu lambda pi_k t_k(w) / |t_k|_s, affine in w -- with the normalizers (and everything
   else) at the state.  At w = w+ its derivatives with respect to the state's velocities
   are what the frozen normalizer's jets leave out of the step's first derivatives.  With
   P->only set, the pairs and support of that body only. */
static int numerator_pass(pass_t *P, const sc_jet_ctx *cn, const double *x, const double *wnum,
                          const sc_options *opt, const sc__step_ws *w, double *(*Qw)[6])
{
    const sc_model *m = P->m;
    const sc_jet_ctx chi = P->c;
    double **Qs[SC_MODEL_MAX_BODIES];
    int i, k, st;
    for (i = 0; i < m->nbody; i++) {
        Qs[i] = P->Q[i];
        if (m->bodies[i].kind == SC_BODY_STATIC) {
            continue;
        }
        for (k = 0; k < P->nv1; k++) {
            Qw[i][k] = sc_jet_alloc(&P->jets);
            sc_jet_const(cn, P->n, Qw[i][k], 0.0);
        }
        P->Q[i] = Qw[i];
    }
    P->c = *cn;
    P->wnum = wnum;
    st = add_contacts(P, x, opt, w->cwork, w->pairbuf);
    if (st == SC_OK) {
        add_support(P, x);
    }
    P->c = chi;
    P->wnum = NULL;
    for (i = 0; i < m->nbody; i++) {
        P->Q[i] = Qs[i];
    }
    return st;
}

/* whether any pair or support has friction (the numerator passes' velocity columns) */
static int has_friction(const sc_model *m)
{
    int i;
    for (i = 0; i < m->npair; i++) {
        if (m->pairs[i].prm.friction > 0.0) {
            return 1;
        }
    }
    for (i = 0; i < m->nbody; i++) {
        if (m->bodies[i].nsupport > 0) {
            return 1;
        }
    }
    return 0;
}

/* Order 2 of the implicit step's new velocities, after implicit_velocities' first-order
 * solves: vp holds w+ (order-2 jets, second derivatives zero) and its first derivatives
 * W'; Qw the second-order Phi (implicit_phi; overwritten).  F (implicit_velocities) is
 * affine in w, so the second derivatives solve
 *   (M - h D_dd) w''_lm = h (G_zz(z, w+) - gyro_zz + X_lm + X_ml),
 *   X_lm = sum_i dD_i/dz_l W'_im,   D_i = dG/dW_i,
 * with dD_i/dz_l the frozen force jets' entries (z_l, v_i) (P->Q, context chi) plus, for a
 * velocity z_l, the normalizers' derivative: the velocity column l of a first-order
 * numerator pass at the unit velocity e_i (t(w) is linear in w and zero at w = 0, the
 * damping constant in the state's velocities).  No third derivative of a force enters. */
static int second_order_velocities(pass_t *P, const sc_jet_ctx *chi, const sc_jet_ctx *c2,
                                   const double *x, const sc_options *opt, const sc__step_ws *w,
                                   double *(*Qw)[6])
{
    const sc_model *m = P->m;
    const int nv = P->nv1, nvt = P->nvt, n = P->n, nd = sc__n_dynamic_velocities(m);
    const int fric = has_friction(m);
    const double h = m->dt;
    double *col = w->lin + nd * nd + nd * (1 + n), *K = col + nd;
    double wnum[SC_MODEL_MAX_BODIES * 6], *Qe[SC_MODEL_MAX_BODIES][6];
    sc_jet_ctx c1;
    int i, i2, k, k2, l, l2, ra, st;
    sc_jet_ctx_init(&c1, n, 1);
    /* Qw: Phi_zz = G_zz(z, w+) - gyro_zz (implicit_phi); + X_lm + X_ml, one moving
       velocity i = (i2, k2) at a time */
    for (i2 = 0; i2 < m->nbody; i2++) {
        const int j2 = sc__move_index(m, i2);
        for (k2 = 0; j2 >= 0 && k2 < nv; k2++) {
            const int vi = nvt + j2 * nv + k2, base = P->jets.used;
            const double *Wi = P->vp[i2][k2];
            if (fric) {
                for (l = 0; l < nv * m->nbody; l++) {
                    wnum[l] = 0.0;
                }
                wnum[nv * i2 + k2] = 1.0;
                P->only = i2;
                st = numerator_pass(P, &c1, x, wnum, opt, w, Qe);
                P->only = -1;
                if (st != SC_OK) {
                    return st;
                }
            }
            for (i = 0; i < m->nbody; i++) {
                if (m->bodies[i].kind != SC_BODY_DYNAMIC) {
                    continue;
                }
                for (k = 0; k < nv; k++) {
                    double *q = Qw[i][k];
                    const double *Hf = P->Q[i][k];
                    for (l = 0; l < n; l++) {
                        K[l] = Hf[sc_jet_hidx(chi, l, vi)];
                        if (fric && l >= nvt && l < 2 * nvt) {
                            K[l] += Qe[i][k][1 + l];
                        }
                    }
                    for (l = 0; l < n; l++) {
                        for (l2 = 0; l2 <= l; l2++) {
                            q[sc_jet_hidx(c2, l, l2)] += K[l] * Wi[1 + l2] + K[l2] * Wi[1 + l];
                        }
                    }
                }
            }
            P->jets.used = base;
        }
    }
    /* the solves, one Hessian entry (l, l2) at a time */
    for (l = 0; l < n; l++) {
        for (l2 = 0; l2 <= l; l2++) {
            const int e = sc_jet_hidx(c2, l, l2);
            for (i = 0, ra = 0; i < m->nbody; i++) {
                for (k = 0; m->bodies[i].kind == SC_BODY_DYNAMIC && k < nv; k++) {
                    col[ra++] = h * Qw[i][k][e];
                }
            }
            lu_solve(w->lin, nd, w->piv, col);
            for (i = 0, ra = 0; i < m->nbody; i++) {
                for (k = 0; m->bodies[i].kind == SC_BODY_DYNAMIC && k < nv; k++) {
                    P->vp[i][k][e] = col[ra++];
                }
            }
        }
    }
    return SC_OK;
}

/* The velocity stage of the implicit step.  The new velocities w (dynamic bodies) solve
 *   F(z, w) = M (w - v) - h (G(z, W) + act(u) - gyro(v)) = 0,
 * G the forces with the damping's and the friction's numerators at W (w for the dynamic
 * bodies, u for the kinematic ones, 0 for static ones) and the friction's normalizers at
 * the state z = (x, u).  G is affine in w: G(z, W) = Q(z) + D (W - v), with Q and
 * D = dQ/dv the frozen force jets (P's context chi: the normalizers without velocity
 * derivatives), so A = M - h D_dd and w = v + h A^-1 r, r = Q + act - gyro + D_dk (u_k -
 * v_k) (implicit_rhs).  Differentiating F(z, w(z)) = 0,
 *   A w'_l = M dv/dz_l + h Phi_l,   Phi = G(z, W) + act - gyro with w held at w+,
 * whose first derivatives are a numerator pass at w+ (numerator_pass, implicit_phi); at
 * order 2, second_order_velocities.  vp := w (kinematic bodies: u) as jets of the
 * output's context cout.  amat (NULL or nd x nd) receives A before the factorization. */
static int implicit_velocities(pass_t *P, const sc_jet_ctx *chi, const sc_jet_ctx *cout,
                               const double *x, const double *u, const sc_options *opt,
                               const sc__step_ws *w, double *amat)
{
    const sc_model *m = P->m;
    const int D = P->D, nv = P->nv1, nvt = P->nvt, n = P->n;
    const int nd = sc__n_dynamic_velocities(m);
    const double h = m->dt;
    double *A = w->lin, *rhs = A + nd * nd, *Qw[SC_MODEL_MAX_BODIES][6];
    double wnum[SC_MODEL_MAX_BODIES * 6];
    sc_jet_ctx c0;
    int i, i2, k, c2, l, ra, rb, st;
    sc_jet_ctx_init(&c0, n, 0);
    for (i = 0; i < m->nbody; i++) {
        if (m->bodies[i].kind == SC_BODY_DYNAMIC) {
            implicit_rhs(P, &c0, x, u, i);
        }
    }
    /* A and the values' right side, row (i, k) and column (i2, c2) over dynamic bodies */
    for (i = 0, ra = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        if (b->kind != SC_BODY_DYNAMIC) {
            continue;
        }
        for (k = 0; k < nv; k++, ra++) {
            for (i2 = 0, rb = 0; i2 < m->nbody; i2++) {
                const int j2 = sc__move_index(m, i2);
                if (m->bodies[i2].kind != SC_BODY_DYNAMIC) {
                    continue;
                }
                for (c2 = 0; c2 < nv; c2++, rb++) {
                    const double M = i2 == i ? mass_entry(b, D, k, c2) : 0.0;
                    A[ra * nd + rb] = M - h * P->Q[i][k][1 + nvt + j2 * nv + c2];
                }
            }
            rhs[ra] = h * P->vp[i][k][0];
        }
    }
    if (amat) {
        memcpy(amat, A, sizeof(double) * (size_t)(nd * nd));
    }
    if ((st = lu_factor(A, nd, w->piv)) != SC_OK) {
        return st;
    }
    lu_solve(A, nd, w->piv, rhs);
    if (cout->order >= 1) {
        new_velocities(P, x, u, rhs, wnum);
        if ((st = numerator_pass(P, cout, x, wnum, opt, w, Qw)) != SC_OK) {
            return st;
        }
        for (i = 0; i < m->nbody; i++) {
            if (m->bodies[i].kind == SC_BODY_DYNAMIC) {
                implicit_phi(P, cout, x, u, i, Qw[i]);
            }
        }
    }
    /* the first derivatives: column l, M dv/dz_l + h Phi_l */
    for (l = 0; cout->order >= 1 && l < n; l++) {
        double *rl = rhs + nd * (1 + l);
        const int jl = l >= nvt && l < 2 * nvt ? (l - nvt) / nv : -1, cl = (l - nvt) % nv;
        for (i = 0, ra = 0; i < m->nbody; i++) {
            const sc_body *b = m->bodies + i;
            if (b->kind != SC_BODY_DYNAMIC) {
                continue;
            }
            for (k = 0; k < nv; k++, ra++) {
                rl[ra] = h * Qw[i][k][1 + l];
                if (jl >= 0 && jl == sc__move_index(m, i)) {
                    rl[ra] += mass_entry(b, D, k, cl);
                }
            }
        }
        lu_solve(A, nd, w->piv, rl);
    }
    /* v+ = v + dv, with its derivatives (dynamic), u (kinematic) */
    for (i = 0, ra = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const int j = sc__move_index(m, i), uo = sc__ctrl_offset(m, i);
        double pose[7], vel[6];
        if (j < 0) {
            continue;
        }
        sc__body_state(m, &P->s, x, i, pose, vel);
        for (k = 0; k < nv; k++) {
            double *vp = P->vp[i][k];
            if (b->kind == SC_BODY_KINEMATIC) {
                sc_jet_var(cout, n, vp, u[uo + k], P->ubase + uo + k);
                continue;
            }
            sc_jet_const(cout, n, vp, vel[k] + rhs[ra]);
            for (l = 0; cout->order >= 1 && l < n; l++) {
                vp[1 + l] = rhs[nd * (1 + l) + ra];
            }
            ra++;
        }
    }
    return cout->order >= 2 ? second_order_velocities(P, chi, cout, x, opt, w, Qw) : SC_OK;
}

/* The implicit step's pass, output order `order`: the frozen force jets (P's context:
   order 1, or 2 for the second derivatives' dD/dz), the velocity stage, then the
   positions with jets of the output's order */
static int implicit_pass(pass_t *P, int order, const double *x, const double *u,
                         const sc_options *opt, const sc__step_ws *w, double *x_next, double *amat)
{
    const sc_model *m = P->m;
    const sc_jet_ctx chi = P->c;
    sc_jet_ctx cout;
    int i, st;
    sc_jet_ctx_init(&cout, P->n, order);
    if ((st = forces_stage(P, x, opt, w)) != SC_OK) {
        return st;
    }
    if ((st = implicit_velocities(P, &chi, &cout, x, u, opt, w, amat)) != SC_OK) {
        return st;
    }
    P->c = cout;
    for (i = 0; i < m->nbody; i++) {
        if (m->bodies[i].kind != SC_BODY_STATIC) {
            body_position(P, x, i, x_next);
        }
    }
    return P->jets.overflow ? SC_ENOMEM : SC_OK;
}

/* The implicit step's parameter derivatives, after its pass (x_next, and A's LU factors and
 * dv in w->lin): with the new velocities w+ held, M(p) dv = h (Q(x; w+; p) - gyro(p) + act)
 * differentiates to (M - h D_dd) d(dv)/dp = h (dQ/dp - dgyro/dp) - (dM/dp) dv.  A pass of
 * first-order jets in (dx, du, dp) forms r = h (Q - gyro + act) - M(p) dv (dv a constant):
 * its p-entries are that right side; the solves give dv+/dp, and the positions stage's
 * jets the chart's dq+/dp. */
static int implicit_params(const sc_model *m, const sc_model_sizes *s, const double *x,
                           const double *u, const sc_options *opt, const sc__step_ws *w,
                           double *x_next, const sc_step_out *out)
{
    double *Qs[SC_MODEL_MAX_BODIES][6], *vps[SC_MODEL_MAX_BODIES][6];
    double wnum[SC_MODEL_MAX_BODIES * 6], *col, *t;
    const int D = m->dim, nv = SC_NV(D), nd = sc__n_dynamic_velocities(m), np = s->np;
    const double h = m->dt;
    pass_t P;
    int i, k, c2, l, ra, st;
    pass_init(&P, m, s, 1, 1, w->arena, Qs, vps);
    /* w+, from the values' solution dv that w->lin still holds */
    new_velocities(&P, x, u, w->lin + nd * nd, wnum);
    /* the forces Q(x; w+; p): gravity, the contacts and the support at w+ */
    P.wnum = wnum;
    if ((st = forces_stage(&P, x, opt, w)) != SC_OK) {
        return st;
    }
    P.wnum = NULL;
    col = w->lin + nd * nd;
    t = sc_jet_alloc(&P.jets);
    for (i = 0, ra = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const int j = sc__move_index(m, i), uo = sc__ctrl_offset(m, i), p0 = sc__body_param(m, i);
        double pose[7], vel[6], *a[6], **Q = P.Q[i];
        if (b->kind != SC_BODY_DYNAMIC) {
            continue;
        }
        sc__body_state(m, &P.s, x, i, pose, vel);
        for (k = 0; k < nv; k++) {
            a[k] = P.vp[i][k]; /* scratch until the velocities are set below */
            if (uo >= 0) {
                sc_jet_const(&P.c, P.n, t, u[uo + k]);
                sc_jet_axpy(&P.c, P.n, Q[k], 1.0, t);
            }
        }
        /* r = h (Q - gyro) - M(p) dv, the gyroscopic term and M with their parameters */
        {
            static const int pidx[9] = {1, 4, 5, 4, 2, 6, 5, 6, 3};
            double *mj = sc_jet_alloc(&P.jets), *Ij[9];
            pjet(&P, mj, b->mass, p0);
            for (k = 0; k < nv; k++) {
                sc_jet_lin(&P.c, P.n, a[k], h, Q[k], 0.0, NULL);
            }
            for (k = 0; k < D; k++) {
                sc_jet_axpy(&P.c, P.n, a[k], -(x_next[s->nq + j * nv + k] - vel[k]), mj);
            }
            if (D == 2) {
                pjet(&P, t, b->inertia[0], p0 + 1);
                sc_jet_axpy(&P.c, P.n, a[2], -(x_next[s->nq + j * nv + 2] - vel[2]), t);
            } else {
                for (k = 0; k < 9; k++) {
                    Ij[k] = sc_jet_alloc(&P.jets);
                    pjet(&P, Ij[k], b->inertia[k], p0 + pidx[k]);
                }
                for (k = 0; k < 3; k++) {
                    const int i1 = (k + 1) % 3, i2 = (k + 2) % 3;
                    /* - h (w x I w)_k - (I dw)_k */
                    for (c2 = 0; c2 < 3; c2++) {
                        const double dwc = x_next[s->nq + j * nv + 3 + c2] - vel[3 + c2];
                        sc_jet_axpy(&P.c, P.n, a[3 + k], -h * vel[3 + i1] * vel[3 + c2],
                                    Ij[3 * i2 + c2]);
                        sc_jet_axpy(&P.c, P.n, a[3 + k], h * vel[3 + i2] * vel[3 + c2],
                                    Ij[3 * i1 + c2]);
                        sc_jet_axpy(&P.c, P.n, a[3 + k], -dwc, Ij[3 * k + c2]);
                    }
                }
                P.jets.used -= 9;
            }
            P.jets.used--;
        }
        for (k = 0; k < nv; k++, ra++) {
            for (l = 0; l < np; l++) {
                col[l * nd + ra] = a[k][1 + P.pbase + l];
            }
        }
    }
    for (l = 0; l < np; l++) {
        lu_solve(w->lin, nd, w->piv, col + l * nd);
    }
    /* v+ with its parameter derivatives (dynamic), u (kinematic); then the positions */
    for (i = 0, ra = 0; i < m->nbody; i++) {
        const sc_body *b = m->bodies + i;
        const int j = sc__move_index(m, i), uo = sc__ctrl_offset(m, i);
        if (j < 0) {
            continue;
        }
        for (k = 0; k < nv; k++) {
            double *vp = P.vp[i][k];
            if (b->kind == SC_BODY_KINEMATIC) {
                sc_jet_const(&P.c, P.n, vp, u[uo + k]);
                continue;
            }
            sc_jet_const(&P.c, P.n, vp, x_next[s->nq + j * nv + k]);
            for (l = 0; l < np; l++) {
                vp[1 + P.pbase + l] = col[l * nd + ra];
            }
            ra++;
        }
    }
    for (i = 0; i < m->nbody; i++) {
        if (m->bodies[i].kind != SC_BODY_STATIC) {
            body_position(&P, x, i, x_next);
        }
    }
    if (P.jets.overflow) {
        return SC_ENOMEM;
    }
    write_derivatives(&P, 0, 0, out);
    return SC_OK;
}

/* Linearly implicit step, order 0, 1 or 2, and the parameter derivatives */
static int step_implicit(const sc_model *m, const sc_model_sizes *s, const double *x,
                         const double *u, int order, int params, const sc_options *opt,
                         const sc__step_ws *w, const sc_step_out *out, double *amat)
{
    double *Qs[SC_MODEL_MAX_BODIES][6], *vps[SC_MODEL_MAX_BODIES][6];
    double *x_next = out->x_next ? out->x_next : w->xtmp;
    pass_t P;
    int st;
    pass_init(&P, m, s, order < 2 ? 1 : 2, 0, w->arena, Qs, vps);
    /* below order 2 the step needs the frozen forces' velocity derivatives D only */
    P.lag = order < 2 ? 2 : 1;
    if ((st = implicit_pass(&P, order, x, u, opt, w, x_next, amat)) != SC_OK) {
        return st;
    }
    write_derivatives(&P, 1, order, out);
    return params ? implicit_params(m, s, x, u, opt, w, x_next, out) : SC_OK;
}

/* Semi-implicit Euler: pass 0, first-order jets in (dx, du, dp), when parameters are asked
   for; pass 1, jets of the requested order in (dx, du), unless pass 0 covered it. */
static int step_euler(const sc_model *m, const sc_model_sizes *s, const double *x, const double *u,
                      int order, int params, const sc_options *opt, const sc__step_ws *w,
                      const sc_step_out *out)
{
    double *Qs[SC_MODEL_MAX_BODIES][6], *vps[SC_MODEL_MAX_BODIES][6];
    double *x_next = out->x_next ? out->x_next : w->xtmp;
    int pass, st;
    for (pass = params ? 0 : 1; pass < 2; pass++) {
        pass_t P;
        if (pass == 1 && params && order <= 1) {
            break;
        }
        pass_init(&P, m, s, order, pass == 0, w->arena, Qs, vps);
        if ((st = euler_pass(&P, x, u, opt, w, x_next)) != SC_OK) {
            return st;
        }
        write_derivatives(&P, pass, order, out);
    }
    return SC_OK;
}

int sc_step(const sc_model *m, const double *x, const double *u, int order, int params,
            const sc_options *opt, double *work, const sc_step_out *out)
{
    return sc__step_with_matrix(m, x, u, order, params, opt, work, out, NULL);
}

int sc__step_with_matrix(const sc_model *m, const double *x, const double *u, int order, int params,
                         const sc_options *opt, double *work, const sc_step_out *out, double *amat)
{
    sc_model_sizes s;
    sc__step_ws w;
    sc_options o;
    int st;
    if (sc_model_check(m, &s) != SC_OK || order < 0 || order > 2 || work == NULL || out == NULL ||
        (amat && (order > 0 || params))) {
        return SC_EINVAL;
    }
    if ((st = sc__state_check(m, &s, x, u, s.nu)) != SC_OK ||
        (st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    sc__step_ws_layout(m, &s, order, params, o.nthreads, work, &w);
    switch (m->integrator) {
    case SC_INTEGRATOR_IMPLICIT:
        st = step_implicit(m, &s, x, u, order, params, &o, &w, out, amat);
        break;
    case SC_INTEGRATOR_EULER:
    default:
        if (amat) {
            const int nd = sc__n_dynamic_velocities(m), nv = SC_NV(m->dim);
            int i, k, c2, ra = 0;
            memset(amat, 0, sizeof(double) * (size_t)(nd * nd));
            for (i = 0; i < m->nbody; i++) {
                if (m->bodies[i].kind != SC_BODY_DYNAMIC) {
                    continue;
                }
                for (k = 0; k < nv; k++) {
                    for (c2 = 0; c2 < nv; c2++) {
                        amat[(ra + k) * nd + ra + c2] = mass_entry(m->bodies + i, m->dim, k, c2);
                    }
                }
                ra += nv;
            }
        }
        st = step_euler(m, &s, x, u, order, params, &o, &w, out);
        break;
    }
    /* a step's new state is tested (sc_step); the inverse dynamics' inner step is not */
    if (st == SC_OK && amat == NULL && out->x_next != NULL) {
        st = sc__state_diverged(m, &s, out->x_next);
    }
    return st;
}
