/*
 * sc_contact_kernel.h - the soft-minimum contact model (docs/method.md section 5) and its
 * first and second derivatives with respect to both bodies' states (see sc_contact.h).
 *
 * Variables s (4 nv): (dq_A, dq_B, v_A, v_B); dq_X = (dt_X (D, world), dth_X (1 or 3,
 * body)) perturbs pose X by the retraction, v_X = (linear (world), angular (2D scalar,
 * 3D body frame)) is the velocity itself.  Everything below is a closed-form expression
 * evaluated with second-order jets (sc_jet.h), i.e. exact derivatives of the formulas:
 *
 *   sample k of owner O against the other body K, with p its body-frame position:
 *     r_O = R_O Exp(dth_O) p,  x = t_O + dt_O + r_O,  r_K = x - t_K - dt_K,
 *     y = Exp(-dth_K) R_K^T r_K,  Phi_k = phi_K(y),  G_k = R_K Exp(dth_K) grad phi_K(y),
 *     u_k = v_O + w_O x r_O - v_K - w_K x r_K   (world angular velocities; 3D: R Exp(dth) w_b),
 *   the jets of phi_K(y) and grad phi_K(y) come from the SSDF's derivatives (order + 1) by
 *   the chain rule (exact for order <= 2 at s = 0);
 *   m = -eps_c log sum exp(-Phi_k / eps_c),  pi_k = exp((m - Phi_k) / eps_c),
 *     dm = sum pi dPhi,  d2m = sum pi d2Phi - (1/eps_c) sum pi (dPhi - dm)(dPhi - dm)^T
 *     (the diagonal-plus-rank-one Hessian of the soft minimum applied, never formed);
 *   A = sum_k wrench(pi_k G_k at x_k)   (= dm/dq as a jet: the unit normal wrench),
 *   B = sum_k wrench(pi_k t_k / sqrt(|t_k|^2 + v_s^2) at x_k),  t_k = u_k - (nu_k.u_k) nu_k,
 *   C = sum_k wrench(pi_k (nu_k.u_k) nu_k at x_k)  (each sample's normal velocity),
 *   wrench = lambda(m) A - c s_b(-m) C - mu lambda(m) B,
 * where wrench(f at x) puts f on the owner and -f on the other body: 2D (f, r x f),
 * 3D (f, R(dth)^T (r x f)) = (f, p x (Exp(-dth_O) R_O^T f)) for the owner and
 * -(f, y x (Exp(-dth_K) R_K^T f)) for the other body.
 *
 * Cost: the SSDF evaluations (O(I J), threaded) dominate; the closed-form part is O(I + J)
 * with configuration-only jets in 2 nv variables and velocity-dependent ones (damping
 * and friction) in 4 nv.  It runs on one thread, in sample order, so results do not depend on
 * the number of threads.
 */
#include <math.h>
#include <string.h>

#include "sc_contact_internal.h"
#include "sc_jet.h"
#include "sc_rotation.h"

/* Compiled once per ISA (sc_contact_generic.c, sc_contact_avx2.c, sc_contact_avx512.c),
 * which define SC_CONTACT_VARIANT (the name of the sc__contact_fn to define) and may set
 * SC_CONTACT_VL (samples per lane group of the first-order pass; 4 unless set).  The jets'
 * loops are elementwise and -ffp-contract=off holds for all, so the variants give the
 * same bits; the wider ones run the jets' loops on wider vectors. */

/* a jet operation of wacc_add: the always-inline kernel in the first-order lane copies with
 * constant sizes (inl = 1), its wrapper (a call, dispatched on the variable count) in the
 * second-order pass, whose inlined kernels would only add compile time.  Both run the same
 * kernel, so the bits do not depend on the copy.  SC_CONTACT_JOP: an sc_jet.h operation. */
#define SC_CONTACT_CALL(inl, kernel, wrapper, ...)                                                 \
    do {                                                                                           \
        if (inl) {                                                                                 \
            kernel(__VA_ARGS__);                                                                   \
        } else {                                                                                   \
            wrapper(__VA_ARGS__);                                                                  \
        }                                                                                          \
    } while (0)
#define SC_CONTACT_JOP(inl, op, ...) SC_CONTACT_CALL(inl, sc__jet_##op, sc_jet_##op, __VA_ARGS__)

/* the pair (sc_contact_internal.h) */
typedef sc__contact contact_t;

/* the Levi-Civita symbol e_ijk */
static const signed char LEVI[3][3][3] = {{{0, 0, 0}, {0, 0, 1}, {0, -1, 0}},
                                          {{0, 0, -1}, {0, 0, 0}, {1, 0, 0}},
                                          {{0, 1, 0}, {-1, 0, 0}, {0, 0, 0}}};

/* the jet variable of pair coordinate i of (dq_A, dq_B, v_A, v_B), or >= SC_JET_NOVAR */
static int full_to_var(const contact_t *S, int i)
{
    const int blk = i / S->nv, X = blk % 2;
    return (blk < 2 ? S->pv[X] : S->vv[X]) + i % S->nv;
}

/* out = Exp(sgn [dth_X]) in, to second order (out must not alias in) */
static void rot_apply(const contact_t *S, int na, double **out, double *const *in, int X,
                      double sgn)
{
    const sc_jet_ctx *c = &S->c;
    const int D = S->D, r0 = S->pv[X] + D;
    int a, i, j;
    for (a = 0; a < D; a++) {
        sc_jet_lin(c, na, out[a], 1.0, in[a], 0.0, NULL);
    }
    if (D == 2) {
        /* Exp(th J) w = w + th J w - th^2 w / 2, J w = (-w1, w0) */
        sc_jet_var_madd(c, na, out[0], -sgn, r0, in[1]);
        sc_jet_var_madd(c, na, out[1], sgn, r0, in[0]);
        sc_jet_hadd(c, na, out[0], r0, r0, -in[0][0]);
        sc_jet_hadd(c, na, out[1], r0, r0, -in[1][0]);
        return;
    }
    /* Exp([a]) w = w + a x w + a x (a x w) / 2 */
    for (a = 0; a < 3; a++) {
        for (i = 0; i < 3; i++) {
            for (j = 0; j < 3; j++) {
                const int e = LEVI[a][i][j];
                if (e != 0) {
                    sc_jet_var_madd(c, na, out[a], sgn * e, r0 + i, in[j]);
                }
            }
        }
        if (c->order < 2) {
            continue; /* the second-order terms below touch Hessian entries only */
        }
        for (i = 0; i < 3; i++) {
            for (j = 0; j <= i; j++) {
                double hv = 0.5 * ((a == i ? in[j][0] : 0.0) + (a == j ? in[i][0] : 0.0)) -
                            (i == j ? in[a][0] : 0.0);
                sc_jet_hadd(c, na, out[a], r0 + i, r0 + j, hv);
            }
        }
    }
}

/* out = M in (trans = 0) or M^T in (trans = 1), M constant D x D (out must not alias in) */
static void mat_apply(const contact_t *S, int na, double **out, const double *M, int trans,
                      double *const *in)
{
    const int D = S->D;
    int a, j;
    for (a = 0; a < D; a++) {
        sc_jet_lin(&S->c, na, out[a], trans ? M[a] : M[a * D], in[0], 0.0, NULL);
        for (j = 1; j < D; j++) {
            sc_jet_axpy(&S->c, na, out[a], trans ? M[j * D + a] : M[a * D + j], in[j]);
        }
    }
}

/* out = M v (trans = 0) or M^T v (trans = 1) on numbers: the products and sums that
 * mat_apply's sc_jet_lin and sc_jet_axpy do on the jets' values, in the same order (so the
 * same bits); out must not alias v */
static void mat_value(int D, const double *M, int trans, const double *v, double *out)
{
    int a, j;
    for (a = 0; a < D; a++) {
        out[a] = (trans ? M[a] : M[a * D]) * v[0];
        for (j = 1; j < D; j++) {
            out[a] += (trans ? M[j * D + a] : M[a * D + j]) * v[j];
        }
    }
}

/* mat_apply at order 0 (rot_apply's value is the identity, 1.0 x) without jet calls */
static void mat_apply0(int D, double **out, const double *M, int trans, double *const *in)
{
    double v[3] = {0.0, 0.0, 0.0}, r[3] = {0.0, 0.0, 0.0};
    int a;
    for (a = 0; a < D; a++) {
        v[a] = in[a][0];
    }
    mat_value(D, M, trans, v, r);
    for (a = 0; a < D; a++) {
        out[a][0] = r[a];
    }
}

/* out = R_X Exp(dth_X) in (body X's frame to the world) and out = Exp(-dth_X) R_X^T in (the
 * world to X's frame); tmp: D scratch jets (none of them aliases out or in) */
static void to_world(const contact_t *S, int na, double **out, double *const *in, int X,
                     double **tmp)
{
    if (S->c.order == 0) {
        mat_apply0(S->D, out, S->R[X], 0, in); /* the same value arithmetic, no calls */
        return;
    }
    rot_apply(S, na, tmp, in, X, 1.0);
    mat_apply(S, na, out, S->R[X], 0, tmp);
}

static void to_body(const contact_t *S, int na, double **out, double *const *in, int X,
                    double **tmp)
{
    if (S->c.order == 0) {
        mat_apply0(S->D, out, S->R[X], 1, in);
        return;
    }
    mat_apply(S, na, tmp, S->R[X], 1, in);
    rot_apply(S, na, out, tmp, X, -1.0);
}

/* out = f0 + f1 . (y - y0) + (y - y0)^T f2 (y - y0) / 2 as a jet of the jets y (compose:
 * na dispatched as in sc_jet.h) */
SC_JET_KERNEL void compose_k(const sc_jet_ctx *c, int na, int D, double *out, double f0,
                             const double *f1, const double *f2, double *const *y)
{
    int a, b, r, s, curved = 0;
    sc_jet_const(c, na, out, f0);
    if (c->order < 1) {
        return;
    }
    /* Exact zeros in f1 and f2 (a half-space's SSDF: constant gradient, no curvature) are
     * skipped: the entries start at +0 and the y are finite, so adding their +-0 products
     * would change no bit. */
    for (a = 0; a < D; a++) {
        if (f1[a] == 0.0) {
            continue;
        }
        for (r = 0; r < na; r++) {
            out[1 + r] += f1[a] * y[a][1 + r];
        }
        for (r = 1 + c->n; r < 1 + c->n + sc_jet_nh(c, na); r++) {
            out[r] += f1[a] * y[a][r];
        }
    }
    for (a = 0; c->order >= 2 && a < D * D; a++) {
        curved |= f2[a] != 0.0; /* f2 is read at order 2 only */
    }
    if (curved) {
        double U[3][SC_CONTACT_MAXV];
        double *oh = out + 1 + c->n;
        for (a = 0; a < D; a++) {
            for (s = 0; s < na; s++) {
                double u = 0.0;
                for (b = 0; b < D; b++) {
                    u += f2[a * D + b] * y[b][1 + s];
                }
                U[a][s] = u;
            }
        }
        for (r = 0; r < na; r++) {
            for (s = 0; s <= r; s++) {
                double v = 0.0;
                for (a = 0; a < D; a++) {
                    v += y[a][1 + r] * U[a][s];
                }
                oh[r * (r + 1) / 2 + s] += v;
            }
        }
    }
}

static void compose(const sc_jet_ctx *c, int na, int D, double *out, double f0, const double *f1,
                    const double *f2, double *const *y)
{
    SC_JET_SPECIALIZE(compose_k, c, na, D, out, f0, f1, f2, y)
}

/* Wrench accumulator: the sample forces summed by owner, F[X], and the world torques of
 * each owner's own sample forces about its origin, T[X] (2D: T[X][0]).  A force f at a
 * sample of owner O acts on O with torque r_O x f, r_O = x - t_O = L_O p the world lever
 * arm (p the sample's body-frame position, a constant; L_O = R_O Exp(dth_O) the same for
 * all of O's samples).
 *   The sample pass works in the other body K's frame: a sample's force is f = M_K f_K
 *   (M_K = R_K Exp(dth_K); f_K from K's SSDF gradient, which is in K's frame), so F[O]
 *   and the 3D moments P[O] sum the f_K, and M_K is applied once per owner after the pass
 *   (wacc_to_world) instead of to every sample's gradient.
 *   2D: r_O x f = q x f_K (q = M_K^T r_O = Q_O p: a 2D rotation keeps cross products) is
 *   added to T[O] per sample (two jet products).
 *   3D: the first moments P[X][b][j] = sum p_b f_j are accumulated instead (nine scalars
 *   times a jet, cheaper than six jet products in 12 or 24 variables), and T[O] =
 *   sum_b L_O e_b x P[O][b] is formed once at the end (wacc_torques).  In 2D, with 6 or 12
 *   variables, the two jet products per sample cost no more than the moments would.
 * The force also acts (as -f) on the other body K, with torque -(r_K x f), r_K = r_O + d_O,
 * d_O = t_O + dt_O - t_K - dt_K the same for all of O's samples: body X's torque T[X] -
 * T[K] - d_K x F[K] is formed once at the end (wacc_finish), as is the body frame rotation
 * Exp(-dth) R^T of the 3D torques. */
typedef struct {
    double *F[2][3], *P[2][3][3], *T[2][3];
} wacc_t;

static void wacc_init(contact_t *S, int na, wacc_t *w)
{
    int X, a, b;
    for (X = 0; X < 2; X++) {
        for (a = 0; a < S->D; a++) {
            w->F[X][a] = sc_jet_alloc(&S->jets);
            sc_jet_const(&S->c, na, w->F[X][a], 0.0);
            for (b = 0; S->D == 3 && b < 3; b++) {
                w->P[X][b][a] = sc_jet_alloc(&S->jets);
                sc_jet_const(&S->c, na, w->P[X][b][a], 0.0);
            }
        }
        for (a = 0; a < (S->D == 2 ? 1 : 3); a++) {
            w->T[X][a] = sc_jet_alloc(&S->jets);
            sc_jet_const(&S->c, na, w->T[X][a], 0.0);
        }
    }
}

/* add the force F (D jets, K's frame) on the owner O at its sample p (body frame; 2D: the
 * lever arm in K's frame, rO = q) */
SC_JET_KERNEL void wacc_add(int inl, const sc_jet_ctx *c, int D, int na, wacc_t *w,
                            double *const *F, int O, const double *p, double *const *rO)
{
    int a;
    for (a = 0; a < D; a++) {
        SC_CONTACT_JOP(inl, axpy, c, na, w->F[O][a], 1.0, F[a]);
    }
    if (D == 2) {
        SC_CONTACT_JOP(inl, madd, c, na, w->T[O][0], 1.0, rO[0], F[1]);
        SC_CONTACT_JOP(inl, madd, c, na, w->T[O][0], -1.0, rO[1], F[0]);
        return;
    }
    for (a = 0; a < 3; a++) {
        SC_CONTACT_JOP(inl, axpy3, c, na, w->P[O][0][a], w->P[O][1][a], w->P[O][2][a], p[0], p[1],
                       p[2], F[a]);
    }
}

/* after the sample pass: F[O] (and the 3D moments P[O][b]) from K's frame to the world,
 * M_K = R_K Exp(dth_K), K = 1 - O; tmp: 2 D scratch jets.  (2D torques are invariant.) */
static void wacc_to_world(const contact_t *S, int na, wacc_t *w, double **tmp)
{
    const int D = S->D;
    int O, b, a;
    for (O = 0; O < 2; O++) {
        for (b = 0; b < (D == 3 ? 4 : 1); b++) {
            double **v = b == 0 ? w->F[O] : w->P[O][b - 1];
            to_world(S, na, tmp + D, v, 1 - O, tmp);
            for (a = 0; a < D; a++) {
                sc_jet_lin(&S->c, na, v[a], 1.0, tmp[D + a], 0.0, NULL);
            }
        }
    }
}

/* 3D: T[X] = sum_b L_X e_b x P[X][b], the world torque of X's own sample forces about X's
 * origin; L[X][i][b] = (R_X Exp(dth_X) e_b)_i.  (2D: T was accumulated directly.) */
static void wacc_torques(const contact_t *S, int na, wacc_t *w, double *(*L)[3][3])
{
    const sc_jet_ctx *c = &S->c;
    int X, a, b;
    if (S->D == 2) {
        return;
    }
    for (X = 0; X < 2; X++) {
        for (a = 0; a < 3; a++) {
            const int i = (a + 1) % 3, j = (a + 2) % 3;
            sc_jet_const(c, na, w->T[X][a], 0.0);
            for (b = 0; b < 3; b++) {
                sc_jet_madd(c, na, w->T[X][a], 1.0, L[X][i][b], w->P[X][b][j]);
                sc_jet_madd(c, na, w->T[X][a], -1.0, L[X][j][b], w->P[X][b][i]);
            }
        }
    }
}

/* W (2 nv jets) = the accumulated wrenches in tangent coordinates; d[O]: d_O (D jets);
 * tmp: 3 jets.  W's force rows: F[X] - F[1-X] (each sample force acts on both bodies). */
static void wacc_finish(const contact_t *S, int na, wacc_t *w, double *(*d)[3], double **W,
                        double **tmp)
{
    const sc_jet_ctx *c = &S->c;
    const int D = S->D, nv = S->nv;
    int X, O, a;
    for (X = 0; X < 2; X++) {
        for (a = 0; a < D; a++) {
            sc_jet_lin(c, na, W[X * nv + a], 1.0, w->F[X][a], -1.0, w->F[1 - X][a]);
        }
    }
    /* each body's torque from both owners' samples: T[0] - T[1] and its negative */
    for (a = 0; a < (D == 2 ? 1 : 3); a++) {
        sc_jet_lin(c, na, w->T[0][a], 1.0, w->T[0][a], -1.0, w->T[1][a]);
        sc_jet_lin(c, na, w->T[1][a], -1.0, w->T[0][a], 0.0, NULL);
    }
    for (O = 0; O < 2; O++) {
        double *const *dO = d[O], *const *FO = w->F[O];
        double **TK = w->T[1 - O];
        if (D == 2) {
            sc_jet_madd(c, na, TK[0], -1.0, dO[0], FO[1]);
            sc_jet_madd(c, na, TK[0], 1.0, dO[1], FO[0]);
            continue;
        }
        for (a = 0; a < 3; a++) {
            const int i = (a + 1) % 3, j = (a + 2) % 3;
            sc_jet_madd(c, na, TK[a], -1.0, dO[i], FO[j]);
            sc_jet_madd(c, na, TK[a], 1.0, dO[j], FO[i]);
        }
    }
    for (X = 0; X < 2; X++) {
        if (D == 2) {
            sc_jet_lin(c, na, W[X * nv + 2], 1.0, w->T[X][0], 0.0, NULL);
        } else {
            /* body frame: Exp(-dth_X) R_X^T T_X */
            to_body(S, na, W + X * nv + 3, w->T[X], X, tmp);
        }
    }
}

/* the assembled model: the soft minimum, A and B (and their accumulators) */
typedef struct {
    double *mj;        /* the soft minimum's jet (pose variables) */
    double *A[12];     /* sum wrench(pi G): pose-only jets */
    double *B[12];     /* sum wrench(pi t / |t|_s): full jets */
    double *C[12];     /* sum wrench(pi (nu . u) nu): full jets */
    wacc_t wa, wb, wc; /* their accumulators (forces and moments in K's frame during
                          the sample pass, see wacc_t) */
    /* 3D, against a half-space K: the normal and damping forces of owner O's samples all
       lie along K's constant normal, so the pass sums their magnitudes and first moments,
       fs[term][O] = (sum X, sum p_b X) (term 0: pi_k, 1: pi_k (nu . u)), and flat_expand
       puts n sum X and n (x) sum p X on wa and wc after it (NULL: not used) */
    double *fs[2][2][4];
    double *d[2][3];    /* d_O = t_O + dt_O - t_K - dt_K, per owner (full, linear) */
    double *Om[2][3];   /* w_O - w_K, world angular velocities (full; 2D: [0]) */
    double *cv[2][3];   /* M_K^T (v_O - v_K - w_K x d_O), in K's frame (full; velocity
                           terms) */
    double *N[2][3][3]; /* 3D: M_K^T (Om_O x) L_O, u_K = cv_O + N_O p (full; velocity
                           terms) */
    /* SC_CONTACT_WNUM: Om, cv and N of the friction numerator's velocities S->wv (jets in
       the poses only) */
    double *Omw[2][3], *cvw[2][3], *Nw[2][3][3];
} acc_t;

/* nu = g / sqrt(|g|^2 + tiny) on numbers: the values of the jets' friction direction (the
 * same products in the same order) */
SC_JET_KERNEL void unit_value(int D, const double *g, double *nu)
{
    double gg = g[0] * g[0], iq;
    int a;
    for (a = 1; a < D; a++) {
        gg += g[a] * g[a];
    }
    iq = 1.0 / sqrt(gg + SC_CONTACT_TINY);
    for (a = 0; a < D; a++) {
        nu[a] = iq * g[a];
    }
}

/* one velocity term's sample force X (D numbers, K's frame) on the sums w and its value
   (world) on out (NULL: none) */
SC_JET_KERNEL void velocity_sums(int inl, const contact_t *S, const sc_jet_ctx *c, const int D,
                                 const int ns, ptrdiff_t k, wacc_t *w, const double *p,
                                 double *const *X, double *const *rO, double *out)
{
    const int O = k < S->I ? 0 : 1, K = 1 - O;
    double val[3];
    int a;
    if (out) {
        for (a = 0; a < D; a++) {
            val[a] = X[a][0];
        }
        mat_value(D, S->R[K], 0, val, out + k * D);
    }
    wacc_add(inl, c, D, ns, w, X, O, p, rO);
}

/* the magnitude X of a force along a half-space's constant normal on the sums fs (sum X,
   sum p_b X; see acc_t) */
SC_JET_KERNEL void flat_add(int inl, const sc_jet_ctx *c, int na, double *const *fs,
                            const double *p, const double *X)
{
    SC_CONTACT_JOP(inl, axpy, c, na, fs[0], 1.0, X);
    SC_CONTACT_JOP(inl, axpy3, c, na, fs[1], fs[2], fs[3], p[0], p[1], p[2], X);
}

/* A sample's outputs and sums, the last step of every per-sample pass: its force pi_k G_k
 * (world) on forces, the values of F and Fd (world) on pf and pd, and the wrench sums of
 * piG (A's), F (B's) and Fd (C's), as far as vel asks for them -- against a 3D half-space
 * those of pij (A's) and cd (C's) instead (acc_t.fs).  piG, F, Fd, rO, pij and cd are
 * numbers (jets, or values in a context of order 0) in the pass's variables; rO only read
 * in 2D. */
SC_JET_KERNEL void sample_sums(int inl, const contact_t *S, acc_t *Z, const sc_jet_ctx *c,
                               const int D, const int nq, const int ns, ptrdiff_t k,
                               const double *p, double *const *piG, double *const *F,
                               double *const *Fd, double *const *rO, const double *pij,
                               const double *cd, int vel, double *pf, double *pd, double *forces)
{
    const int O = k < S->I ? 0 : 1, K = 1 - O;
    const int flat = Z->fs[0][O][0] != NULL;
    double val[3];
    int a;
    if (forces) {
        mat_value(D, S->R[K], 0, S->g + k * D, val);
        for (a = 0; a < D; a++) {
            forces[k * D + a] = S->pi[k] * val[a];
            pf[k * D + a] = 0.0;
            pd[k * D + a] = 0.0;
        }
    }
    if (flat) {
        flat_add(inl, c, nq, Z->fs[0][O], p, pij);
    } else {
        wacc_add(inl, c, D, nq, &Z->wa, piG, O, p, rO);
    }
    if ((vel & SC_CONTACT_DAMP) && flat) {
        if (forces) {
            double nu[3];
            unit_value(D, S->g + k * D, nu);
            for (a = 0; a < D; a++) {
                val[a] = nu[a] * cd[0];
            }
            mat_value(D, S->R[K], 0, val, pd + k * D);
        }
        flat_add(inl, c, ns, Z->fs[1][O], p, cd);
    } else if (vel & SC_CONTACT_DAMP) {
        velocity_sums(inl, S, c, D, ns, k, &Z->wc, p, Fd, rO, forces ? pd : NULL);
    }
    if (vel & SC_CONTACT_FRIC) {
        velocity_sums(inl, S, c, D, ns, k, &Z->wb, p, F, rO, forces ? pf : NULL);
    }
}

/* the law's environment: the jets' context, the coefficient rows 1, -1, 1 / eps_c and
 * -1 / eps_c (of the instance's lanes) and v_s^2 */
typedef struct {
    const sc_jet_ctx *c;
    const double *one, *mone, *ie, *mie;
    double vs2;
} law_env;

/* a value's or a jet's handle (sc_contact_law.h, LAW_N) */
typedef double *num_t;

/* ---- the law on values (order 0) ---- */

typedef struct {
    const double *p[3], *pi, *g[3], *y[3];
} sample_values;

#define LAW(name) name##_values
#define LAW_N num_t
#define LAW_VL 1
#define LAW_DERIVS 0
#define LAW_WNUM 0
#define LAW_SAMPLE sample_values
#define L_LIN(na, out, ka, a, kb, b) (*(out) = (ka)[0] * *(a) + (kb)[0] * *(b))
#define L_SCALE(na, out, ka, a) (*(out) = (ka)[0] * *(a))
#define L_LIN3(na, out, k0, a0, k1, a1, k2, a2)                                                    \
    do {                                                                                           \
        double v_ = (k0)[0] * *(a0);                                                               \
        v_ += (k1)[0] * *(a1);                                                                     \
        *(out) = v_ + (k2)[0] * *(a2);                                                             \
    } while (0)
#define L_LIN4(na, out, k0, a0, k1, a1, k2, a2, k3, a3)                                            \
    do {                                                                                           \
        double v_ = (k0)[0] * *(a0);                                                               \
        v_ += (k1)[0] * *(a1);                                                                     \
        v_ += (k2)[0] * *(a2);                                                                     \
        *(out) = v_ + (k3)[0] * *(a3);                                                             \
    } while (0)
#define L_AXPY(na, out, ka, a) (*(out) += (ka)[0] * *(a))
#define L_MUL(na, out, a, b) (*(out) = *(a) * *(b))
#define L_MADD(na, out, s, a, b) (*(out) += (s) * *(a) * *(b))
#define L_FUNC(na, out, a, k0, k1, k2) (*(out) = (k0)[0])
#define L_INVNORM(na, D, out, v, cst) inv_norm_values(D, out, v, cst)
#define L_PROMOTE(na, nb, a) ((void)0)

/* out = 1 / sqrt(|v|^2 + c), the jets' products and sums (a madd's factor 1 is exact) */
SC_JET_KERNEL void inv_norm_values(int D, double *out, double *const *v, double c)
{
    int a;
    *out = *v[0] * *v[0];
    for (a = 1; a < D; a++) {
        *out += 1.0 * *v[a] * *v[a];
    }
    *out = 1.0 / sqrt(*out + c);
}

#include "sc_contact_law.h"
#include "sc_contact_law_undef.h"

/* The pass at order 0: every marked sample's forces, values only; D a constant in each
   copy (below), the helpers inlined. */
SC_JET_KERNEL void pass_values(contact_t *S, acc_t *Z, const int D, const unsigned char *mark,
                               int vel, double vs2, double *pf, double *pd, double *forces)
{
    static const double one = 1.0, mone = -1.0;
    const sc_jet_ctx c0 = {0, 0, 1}; /* order 0: the sums' jet kernels take values */
    const law_env E = {&c0, &one, &mone, NULL, NULL, vs2};
    const ptrdiff_t n = S->I + S->cl[1]->n;
    owner_values ow[2];
    double x[34], gk[3];
    nums_values v;
    ptrdiff_t k;
    unsigned polls = 0;
    int O, a, b, j = 0;
    /* the owners' numbers: the values of their jets (order 0: one entry each) */
    for (O = 0; O < 2; O++) {
        for (a = 0; a < D; a++) {
            for (b = 0; b < D; b++) {
                ow[O].Q[3 * a + b] = S->Q[O][a][b];
                ow[O].N[3 * a + b] = D == 3 ? Z->N[O][a][b] : NULL;
            }
            ow[O].cv[a] = Z->cv[O][a];
        }
        ow[O].Om = Z->Om[O][0];
    }
    /* the sample's numbers: locals */
    for (a = 0; a < 3; a++) {
        v.rO[a] = x + j++;
        v.piG[a] = x + j++;
        v.u[a] = x + j++;
        v.nu[a] = x + j++;
        v.tg[a] = x + j++;
        v.F[a] = x + j++;
        v.Fd[a] = x + j++;
        v.gj[a] = gk + a;
    }
    v.cd = x + j++;
    v.pij = x + j++;
    v.gg = x + j++;
    v.nuu = x + j++;
    v.tt = x + j++;
    v.ct = x + j++;
    for (k = 0; k < n && !SC_CONTACT_STOP(S, polls); k++) {
        const int Ok = k < S->I ? 0 : 1;
        const ptrdiff_t kk = Ok == 0 ? k : k - S->I;
        const int flat = S->cl[1 - Ok]->n == 1;
        double p[3] = {0.0, 0.0, 0.0};
        sample_values s;
        if (!mark[k]) {
            continue;
        }
        for (a = 0; a < D; a++) {
            p[a] = sc__cloud_array(S->cl[Ok], SC_CLOUD_P(a))[kk];
            gk[a] = S->g[k * D + a];
            s.p[a] = p + a;
            s.g[a] = S->g + k * D + a;
        }
        s.pi = S->pi + k;
        geometry_values(&E, D, 0, &s, &ow[Ok], 0, &v);
        forces_values(&E, D, 0, 0, &s, &ow[Ok], flat, vel, &v);
        sample_sums(1, S, Z, &c0, D, 0, 0, k, p, v.piG, v.F, v.Fd, v.rO, v.pij, v.cd, vel, pf, pd,
                    forces);
    }
}

/* ---- the law on jets (order 2; order 1 outside the lane copies) ---- */

typedef struct {
    const double *p[3], *pi, *g[3], *y[3];
    const double *phi, *gk, *hk, *tk; /* the SSDF's value and derivatives at the sample */
} sample_jets;

#define LAW(name) name##_jets
#define LAW_N num_t
#define LAW_VL 1
#define LAW_DERIVS 1
#define LAW_WNUM 1
#define LAW_SAMPLE sample_jets
#define L_LIN(na, out, ka, a, kb, b) sc_jet_lin(E->c, na, out, (ka)[0], a, (kb)[0], b)
#define L_SCALE(na, out, ka, a) sc_jet_lin(E->c, na, out, (ka)[0], a, 0.0, NULL)
#define L_LIN3(na, out, k0, a0, k1, a1, k2, a2)                                                    \
    do {                                                                                           \
        const double cf_[3] = {(k0)[0], (k1)[0], (k2)[0]};                                         \
        sc_jet_lin34(E->c, na, out, cf_, a0, a1, a2, NULL);                                        \
    } while (0)
#define L_LIN4(na, out, k0, a0, k1, a1, k2, a2, k3, a3)                                            \
    do {                                                                                           \
        const double cf_[4] = {(k0)[0], (k1)[0], (k2)[0], (k3)[0]};                                \
        sc_jet_lin34(E->c, na, out, cf_, a0, a1, a2, a3);                                          \
    } while (0)
#define L_AXPY(na, out, ka, a) sc_jet_axpy(E->c, na, out, (ka)[0], a)
#define L_MUL(na, out, a, b) sc_jet_mul(E->c, na, out, a, b)
#define L_MADD(na, out, s, a, b) sc_jet_madd(E->c, na, out, s, a, b)
#define L_FUNC(na, out, a, k0, k1, k2) sc_jet_func(E->c, na, out, a, (k0)[0], (k1)[0], (k2)[0])
#define L_INVNORM(na, D, out, v, cst) inv_norm_jets(E->c, na, D, out, v, cst)
#define L_PROMOTE(na, nb, a) sc_jet_promote(E->c, na, nb, a)
#define L_SETVAL(a, k) ((a)[0] = (k)[0])
#define L_COMPOSE_PHI(na, D, out, s, y) compose(E->c, na, D, out, *(s)->phi, (s)->gk, (s)->hk, y)
#define L_COMPOSE_GRAD(na, D, out, s, a, y)                                                        \
    compose(E->c, na, D, out, (s)->gk[a], (s)->hk + (a) * (D), (s)->tk + (a) * (D) * (D), y)

/* out = 1 / sqrt(|v|^2 + c) and its derivatives, v D jets */
static void inv_norm_jets(const sc_jet_ctx *c, int na, int D, double *out, double *const *v,
                          double cst)
{
    int a;
    sc_jet_mul(c, na, out, v[0], v[0]);
    for (a = 1; a < D; a++) {
        sc_jet_madd(c, na, out, 1.0, v[a], v[a]);
    }
    {
        const double q0 = out[0] + cst, iq = 1.0 / sqrt(q0);
        sc_jet_func(c, na, out, out, iq, -0.5 * iq / q0, 0.75 * iq / (q0 * q0));
    }
}

#include "sc_contact_law.h"
#include "sc_contact_law_undef.h"

/* the owner O's numbers for the jets' law */
static void jets_owner_of(const contact_t *S, const acc_t *Z, int O, double *PhiR, owner_jets *ow)
{
    int a, b;
    for (a = 0; a < S->D; a++) {
        for (b = 0; b < S->D; b++) {
            ow->Q[3 * a + b] = S->Q[O][a][b];
            ow->N[3 * a + b] = S->D == 3 ? Z->N[O][a][b] : NULL;
        }
        ow->y0[a] = S->y0[O][a];
        ow->cv[a] = Z->cv[O][a];
        ow->cvw[a] = Z->cvw[O][a];
        for (b = 0; b < S->D; b++) {
            ow->Nw[3 * a + b] = S->D == 3 ? Z->Nw[O][a][b] : NULL;
        }
    }
    ow->Om = Z->Om[O][0];
    ow->Omw = Z->Omw[O][0];
    ow->PhiR = PhiR;
}

/* sample k's data for the jets' law; p its body-frame position (D) */
static void sample_of(const contact_t *S, ptrdiff_t k, double *p, sample_jets *s)
{
    const int D = S->D, O = k < S->I ? 0 : 1;
    const ptrdiff_t kk = O == 0 ? k : k - S->I;
    int a;
    for (a = 0; a < D; a++) {
        p[a] = sc__cloud_array(S->cl[O], SC_CLOUD_P(a))[kk];
        s->p[a] = p + a;
        s->g[a] = S->g + k * D + a;
        s->y[a] = S->y + k * D + a;
    }
    s->pi = S->pi + k;
    s->phi = S->phi + k;
    s->gk = S->g + k * D;
    s->hk = S->h + k * D * D;
    s->tk = S->t3 + k * D * D * D;
}

/* the jets of one sample's numbers in the arena (the velocity terms' as vel asks) */
static void jets_nums_alloc(contact_t *S, int vel, nums_jets *v)
{
    int a;
    memset(v, 0, sizeof *v);
    for (a = 0; a < S->D; a++) {
        v->rO[a] = sc_jet_alloc(&S->jets);
        v->yy[a] = sc_jet_alloc(&S->jets);
        v->gj[a] = sc_jet_alloc(&S->jets);
        v->piG[a] = sc_jet_alloc(&S->jets);
    }
    v->Phi = sc_jet_alloc(&S->jets);
    v->pij = sc_jet_alloc(&S->jets);
    for (a = 0; vel && a < S->D; a++) {
        v->u[a] = sc_jet_alloc(&S->jets);
        v->nu[a] = sc_jet_alloc(&S->jets);
        v->tg[a] = sc_jet_alloc(&S->jets);
        v->F[a] = vel & SC_CONTACT_FRIC ? sc_jet_alloc(&S->jets) : NULL;
        v->Fd[a] = vel & SC_CONTACT_DAMP ? sc_jet_alloc(&S->jets) : NULL;
        v->uw[a] = vel & SC_CONTACT_WNUM ? sc_jet_alloc(&S->jets) : NULL;
        v->tgw[a] = vel & SC_CONTACT_WNUM ? sc_jet_alloc(&S->jets) : NULL;
    }
    v->nuuw = vel & SC_CONTACT_WNUM ? sc_jet_alloc(&S->jets) : NULL;
    if (vel) {
        v->gg = sc_jet_alloc(&S->jets);
        v->nuu = sc_jet_alloc(&S->jets);
        v->tt = vel & SC_CONTACT_FRIC ? sc_jet_alloc(&S->jets) : NULL;
        v->ct = vel & SC_CONTACT_FRIC ? sc_jet_alloc(&S->jets) : NULL;
        v->cd = vel & SC_CONTACT_DAMP ? sc_jet_alloc(&S->jets) : NULL;
    }
}

/* The reference sample kr's Phi as a jet in PhiR (pose variables; the arena's jets past
   the current ones as scratch) */
static void reference_phi(contact_t *S, const acc_t *Z, ptrdiff_t kr, double *PhiR)
{
    static const double one = 1.0, mone = -1.0;
    const law_env E = {&S->c, &one, &mone, NULL, NULL, 0.0};
    const int base = S->jets.used;
    owner_jets ow;
    nums_jets v;
    sample_jets s;
    double p[3];
    int a;
    jets_owner_of(S, Z, kr < S->I ? 0 : 1, NULL, &ow);
    sample_of(S, kr, p, &s);
    memset(&v, 0, sizeof v);
    for (a = 0; a < S->D; a++) {
        v.rO[a] = sc_jet_alloc(&S->jets);
        v.yy[a] = sc_jet_alloc(&S->jets);
    }
    v.Phi = PhiR;
    geometry_jets(&E, S->D, S->nq, &s, &ow, 0, &v);
    S->jets.used = base;
}

/* The pass on jets: per marked sample, the soft minimum's jet sums and the forces' jets,
 * one sample at a time, each jet operation a call of its sc_jet.h wrapper (dispatched on
 * the variable count).  The sample jets sit at the same arena slots for every sample, so
 * they are allocated once. */
static void pass_jets(contact_t *S, acc_t *Z, const int ord, const int D, const int nq,
                      const int ns, const unsigned char *mark, double *PhiR, double *dphi, int vel,
                      double vs2, double *pf, double *pd, double *forces)
{
    static const double one = 1.0, mone = -1.0;
    const double ie = 1.0 / S->eps_c, mie = -1.0 / S->eps_c;
    sc_jet_ctx cx;
    const sc_jet_ctx *c = &cx;
    const law_env E = {&cx, &one, &mone, &ie, &mie, vs2};
    const ptrdiff_t n = S->I + S->cl[1]->n;
    double *mg = Z->mj + 1, *mh;
    owner_jets ow[2];
    nums_jets v;
    ptrdiff_t k;
    unsigned polls = 0;
    int r;
    sc_jet_ctx_init(&cx, ns, ord);
    mh = Z->mj + 1 + c->n;
    jets_owner_of(S, Z, 0, PhiR, &ow[0]);
    jets_owner_of(S, Z, 1, PhiR, &ow[1]);
    jets_nums_alloc(S, vel, &v);
    for (k = 0; k < n && !SC_CONTACT_STOP(S, polls); k++) {
        const int O = k < S->I ? 0 : 1;
        /* K a half-space: its SSDF gradient is a constant (compose adds nothing to it) */
        const int flat = S->cl[1 - O]->n == 1;
        double p[3];
        sample_jets s;
        if (!mark[k]) {
            continue; /* its outputs were zeroed before the pass */
        }
        sample_of(S, k, p, &s);
        geometry_jets(&E, D, nq, &s, &ow[O], !flat, &v);
        /* the soft minimum: dm = sum pi dPhi, d2m = sum pi d2Phi - (centred, after the
           pass) */
        for (r = 0; r < nq; r++) {
            mg[r] += S->pi[k] * v.Phi[1 + r];
        }
        for (r = 0; ord >= 2 && r < nq; r++) {
            dphi[k * nq + r] = v.Phi[1 + r];
        }
        for (r = 0; r < sc_jet_nh(c, nq); r++) {
            mh[r] += S->pi[k] * v.Phi[1 + c->n + r];
        }
        forces_jets(&E, D, nq, ns, &s, &ow[O], flat, vel, &v);
        sample_sums(0, S, Z, c, D, nq, ns, k, p, v.piG, v.F, v.Fd, v.rO, v.pij, v.cd, vel, pf, pd,
                    forces);
    }
}

/* ---- the law on lanes (order 1) ----
 * The first-order jets are short (7 to 25 entries), so a vector within one jet is mostly
 * remainder; the lane pass instead runs SC_CONTACT_VL marked samples of one owner at a
 * time, one per vector lane.  Each lane does the jets' operations (the same law), so its
 * numbers hold the same bits as pass_jets'; the sums (the soft minimum's gradient, the
 * wrench accumulators) then take the lanes one after the other, in sample order, through
 * the same wacc_add: the results are bitwise those of pass_jets (the tests compare the
 * Jacobians of orders 1 and 2).  Second order keeps pass_jets: its Hessian jets (up to
 * 325 entries) are long enough for vectors within a jet. */
#ifndef SC_CONTACT_VL
    #define SC_CONTACT_VL 4 /* 8 in the AVX-512 variant (sc_contact_avx512.c) */
#endif
typedef double lane_jet[1 + SC_CONTACT_MAXV][SC_CONTACT_VL];
typedef double (*lj_t)[SC_CONTACT_VL]; /* a lane jet's rows */
/* lane jets of the pass in the arena (pass_lanes: PhiR, then the owner's common jets) and
   the room for them past the first-order jets */
#define SC_CONTACT_LANE_JETS 39
_Static_assert((SC_CONTACT_NJETS + 1) * (1 + SC_CONTACT_MAXV) +
                       SC_CONTACT_LANE_JETS * (1 + SC_CONTACT_MAXV) * SC_CONTACT_VL <=
                   (SC_CONTACT_NJETS + 1) * SC_CONTACT_JLEN,
               "the lane jets fit in the arena at first order");

/* a common jet (the same for every sample) in every lane */
SC_JET_KERNEL void lj_bcast(int na, lj_t restrict out, const double *a)
{
    int e, l;
    for (e = 0; e <= na; e++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            out[e][l] = a[e];
        }
    }
}

/* out = ka a + kb b (sc__jet_lin; out may alias a or b) */
SC_JET_KERNEL void lj_lin(int na, lj_t out, const double *ka, lj_t a, const double *kb, lj_t b)
{
    int e, l;
    for (e = 0; e <= na; e++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            out[e][l] = ka[l] * a[e][l] + kb[l] * b[e][l];
        }
    }
}

/* out = ka a (sc__jet_lin with b NULL; no aliasing) */
SC_JET_KERNEL void lj_scale(int na, lj_t restrict out, const double *ka, lj_t a)
{
    int e, l;
    for (e = 0; e <= na; e++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            out[e][l] = ka[l] * a[e][l];
        }
    }
}

/* out = ((k0 a0 + k1 a1) + k2 a2) (+ k3 a3 unless a3 is NULL) (sc__jet_lin34; out must
   not alias an operand) */
SC_JET_KERNEL void lj_lin34(int na, lj_t restrict out, const double *k0, lj_t a0, const double *k1,
                            lj_t a1, const double *k2, lj_t a2, const double *k3, lj_t a3)
{
    int e, l;
    if (a3 == NULL) {
        for (e = 0; e <= na; e++) {
            for (l = 0; l < SC_CONTACT_VL; l++) {
                double v = k0[l] * a0[e][l];
                v += k1[l] * a1[e][l];
                out[e][l] = v + k2[l] * a2[e][l];
            }
        }
        return;
    }
    for (e = 0; e <= na; e++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            double v = k0[l] * a0[e][l];
            v += k1[l] * a1[e][l];
            v += k2[l] * a2[e][l];
            out[e][l] = v + k3[l] * a3[e][l];
        }
    }
}

/* out = a b (sc__jet_mul; out may alias a or b) */
SC_JET_KERNEL void lj_mul(int na, lj_t out, lj_t a, lj_t b)
{
    double a0[SC_CONTACT_VL], b0[SC_CONTACT_VL];
    int i, l;
    for (l = 0; l < SC_CONTACT_VL; l++) {
        a0[l] = a[0][l];
        b0[l] = b[0][l];
    }
    for (i = 1; i <= na; i++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            out[i][l] = a0[l] * b[i][l] + b0[l] * a[i][l];
        }
    }
    for (l = 0; l < SC_CONTACT_VL; l++) {
        out[0][l] = a0[l] * b0[l];
    }
}

/* out += s a b (sc__jet_madd; no aliasing) */
SC_JET_KERNEL void lj_madd(int na, lj_t restrict out, double s, lj_t a, lj_t b)
{
    double a0[SC_CONTACT_VL], b0[SC_CONTACT_VL];
    int i, l;
    for (l = 0; l < SC_CONTACT_VL; l++) {
        a0[l] = s * a[0][l];
        b0[l] = s * b[0][l];
    }
    for (i = 1; i <= na; i++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            out[i][l] += a0[l] * b[i][l] + b0[l] * a[i][l];
        }
    }
    for (l = 0; l < SC_CONTACT_VL; l++) {
        out[0][l] += s * a[0][l] * b[0][l];
    }
}

/* out += ka a (sc__jet_axpy; no aliasing) */
SC_JET_KERNEL void lj_axpy(int na, lj_t restrict out, const double *ka, lj_t a)
{
    int e, l;
    for (e = 0; e <= na; e++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            out[e][l] += ka[l] * a[e][l];
        }
    }
}

/* out = f(a) at first order (sc__jet_func; out may alias a) */
SC_JET_KERNEL void lj_func(int na, lj_t out, lj_t a, const double *f0, const double *f1)
{
    int i, l;
    for (i = 1; i <= na; i++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            out[i][l] = f1[l] * a[i][l];
        }
    }
    for (l = 0; l < SC_CONTACT_VL; l++) {
        out[0][l] = f0[l];
    }
}

/* out = 1 / sqrt(|v|^2 + c), v D lane jets (inv_norm_jets' products, sums and function
   values) */
SC_JET_KERNEL void lj_inv_norm(int na, int D, lj_t out, lj_t const *v, double c)
{
    double f0[SC_CONTACT_VL], f1[SC_CONTACT_VL];
    int a, l;
    lj_mul(na, out, v[0], v[0]);
    for (a = 1; a < D; a++) {
        lj_madd(na, out, 1.0, v[a], v[a]);
    }
    for (l = 0; l < SC_CONTACT_VL; l++) {
        const double q0 = out[0][l] + c, iq = 1.0 / sqrt(q0);
        f0[l] = iq;
        f1[l] = -0.5 * iq / q0;
    }
    lj_func(na, out, out, f0, f1);
}

/* entries na + 1 .. nb zeroed (sc_jet_promote at first order) */
SC_JET_KERNEL void lj_promote(int na, int nb, lj_t a)
{
    int e, l;
    for (e = na + 1; e <= nb; e++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            a[e][l] = 0.0;
        }
    }
}

/* compose_k at first order: out = f(y) with value f0 and gradient f1 (per lane); f1's
   exact zeros are skipped as there (a select here) */
SC_JET_KERNEL void lj_compose(int na, int D, lj_t restrict out, const double *f0,
                              double (*f1)[SC_CONTACT_VL], lj_t const *y)
{
    int a, r, l;
    for (l = 0; l < SC_CONTACT_VL; l++) {
        out[0][l] = f0[l];
    }
    for (r = 1; r <= na; r++) {
        for (l = 0; l < SC_CONTACT_VL; l++) {
            out[r][l] = 0.0;
        }
    }
    for (a = 0; a < D; a++) {
        for (r = 1; r <= na; r++) {
            for (l = 0; l < SC_CONTACT_VL; l++) {
                const double v = out[r][l] + f1[a][l] * y[a][r][l];
                out[r][l] = f1[a][l] == 0.0 ? out[r][l] : v;
            }
        }
    }
}

/* lane l of a lane jet as a jet (entries 0 .. na) */
SC_JET_KERNEL void lj_get(int na, lj_t a, int l, double *restrict out)
{
    int e;
    for (e = 0; e <= na; e++) {
        out[e] = a[e][l];
    }
}

typedef struct {
    const double *p[3], *pi, *g[3], *y[3];
    double (*gv)[SC_CONTACT_VL];    /* the SSDF's gradient (D rows of lanes) */
    double (*hv)[3][SC_CONTACT_VL]; /* and Hessian (D x D rows of lanes) */
    const double *phi;
} sample_lanes;

#define LAW(name) name##_lanes
#define LAW_N lj_t
#define LAW_VL SC_CONTACT_VL
#define LAW_DERIVS 1
#define LAW_WNUM 1
#define LAW_SAMPLE sample_lanes
#define L_LIN(na, out, ka, a, kb, b) lj_lin(na, out, ka, a, kb, b)
#define L_SCALE(na, out, ka, a) lj_scale(na, out, ka, a)
#define L_LIN3(na, out, k0, a0, k1, a1, k2, a2)                                                    \
    lj_lin34(na, out, k0, a0, k1, a1, k2, a2, NULL, NULL)
#define L_LIN4(na, out, k0, a0, k1, a1, k2, a2, k3, a3)                                            \
    lj_lin34(na, out, k0, a0, k1, a1, k2, a2, k3, a3)
#define L_AXPY(na, out, ka, a) lj_axpy(na, out, ka, a)
#define L_MUL(na, out, a, b) lj_mul(na, out, a, b)
#define L_MADD(na, out, s, a, b) lj_madd(na, out, s, a, b)
#define L_FUNC(na, out, a, k0, k1, k2) lj_func(na, out, a, k0, k1)
#define L_INVNORM(na, D, out, v, cst) lj_inv_norm(na, D, out, v, cst)
#define L_PROMOTE(na, nb, a) lj_promote(na, nb, a)
#define L_SETVAL(a, k)                                                                             \
    do {                                                                                           \
        int l_;                                                                                    \
        for (l_ = 0; l_ < SC_CONTACT_VL; l_++) {                                                   \
            (a)[0][l_] = (k)[l_];                                                                  \
        }                                                                                          \
    } while (0)
#define L_COMPOSE_PHI(na, D, out, s, y) lj_compose(na, D, out, (s)->phi, (s)->gv, y)
#define L_COMPOSE_GRAD(na, D, out, s, a, y) lj_compose(na, D, out, (s)->g[a], (s)->hv[a], y)

#include "sc_contact_law.h"
#include "sc_contact_law_undef.h"

/* the next group of up to SC_CONTACT_VL marked samples of [*k, k1) into ks (the unused
   lanes repeat the first sample and are not summed); returns how many */
static int next_lanes(const unsigned char *mark, ptrdiff_t *k, ptrdiff_t k1,
                      ptrdiff_t ks[SC_CONTACT_VL])
{
    int nl = 0, l;
    while (*k < k1 && nl < SC_CONTACT_VL) {
        if (mark[*k]) {
            ks[nl++] = *k;
        }
        (*k)++;
    }
    for (l = nl; l > 0 && l < SC_CONTACT_VL; l++) {
        ks[l] = ks[0];
    }
    return nl;
}

/* the owner's numbers in lanes, LJ (see pass_lanes): Q (D x D), y0 (D), and for the
   velocity terms cv (D), N (3D: 3 x 3) or Om (2D), and those of the numerator's velocities
   (SC_CONTACT_WNUM) */
SC_JET_KERNEL void lanes_owner_of(const contact_t *S, const acc_t *Z, const int D, const int nq,
                                  const int ns, int O, lane_jet *LJ, lane_jet *PhiR, int vel,
                                  owner_lanes *ow)
{
    int a, b;
    for (a = 0; a < D; a++) {
        for (b = 0; b < D; b++) {
            ow->Q[3 * a + b] = LJ[3 * a + b];
            lj_bcast(nq, ow->Q[3 * a + b], S->Q[O][a][b]);
            ow->N[3 * a + b] = LJ[15 + 3 * a + b];
            if (vel && D == 3) {
                lj_bcast(ns, ow->N[3 * a + b], Z->N[O][a][b]);
            }
        }
        ow->y0[a] = LJ[9 + a];
        lj_bcast(nq, ow->y0[a], S->y0[O][a]);
        ow->cv[a] = LJ[12 + a];
        if (vel) {
            lj_bcast(ns, ow->cv[a], Z->cv[O][a]);
        }
    }
    ow->Om = LJ[24];
    if (vel && D == 2) {
        lj_bcast(ns, ow->Om, Z->Om[O][0]);
    }
    for (a = 0; a < 3; a++) {
        ow->cvw[a] = LJ[25 + a];
        for (b = 0; b < 3; b++) {
            ow->Nw[3 * a + b] = LJ[28 + 3 * a + b];
        }
    }
    ow->Omw = LJ[37];
    if (vel & SC_CONTACT_WNUM) {
        for (a = 0; a < D; a++) {
            lj_bcast(ns, ow->cvw[a], Z->cvw[O][a]);
            for (b = 0; D == 3 && b < D; b++) {
                lj_bcast(ns, ow->Nw[3 * a + b], Z->Nw[O][a][b]);
            }
        }
        if (D == 2) {
            lj_bcast(ns, ow->Omw, Z->Omw[O][0]);
        }
    }
    ow->PhiR = *PhiR;
}

/* pass_jets at ord = 1 on the marked samples k0 .. k1 - 1 of one owner O, SC_CONTACT_VL
 * at a time */
SC_JET_KERNEL void owner_pass_lanes(contact_t *S, acc_t *Z, const sc_jet_ctx *c, const int D,
                                    const int nq, const int ns, int O, ptrdiff_t k0, ptrdiff_t k1,
                                    const unsigned char *mark, lane_jet *PhiR, int vel, double vs2,
                                    double *pf, double *pd, double *forces, lane_jet *LJ)
{
    const int flat = S->cl[1 - O]->n == 1;
    const ptrdiff_t I = S->I;
    double *mg = Z->mj + 1, cst[4][SC_CONTACT_VL];
    unsigned polls = 0;
    law_env E;
    owner_lanes ow;
    nums_lanes v;
    /* the samples' lane jets on the stack (~30 KB; there the compiler knows that they
       alias nothing, which it cannot in the arena) */
    lane_jet rO[3], yy[3], gj[3], piG[3], u[3], nu[3], tg[3], F[3], Fd[3], Phi, pij, gg, nuu;
    lane_jet tt, ct, cd, uw[3], tgw[3], nuuw;
    ptrdiff_t ks[SC_CONTACT_VL], k = k0;
    int a, b, l, nl;

    for (l = 0; l < SC_CONTACT_VL; l++) { /* the coefficient rows 1, -1, 1/eps_c, -1/eps_c */
        cst[0][l] = 1.0;
        cst[1][l] = -1.0;
        cst[2][l] = 1.0 / S->eps_c;
        cst[3][l] = -1.0 / S->eps_c;
    }
    E.c = c;
    E.one = cst[0];
    E.mone = cst[1];
    E.ie = cst[2];
    E.mie = cst[3];
    E.vs2 = vs2;
    lanes_owner_of(S, Z, D, nq, ns, O, LJ, PhiR, vel, &ow);
    for (a = 0; a < 3; a++) {
        v.rO[a] = rO[a];
        v.yy[a] = yy[a];
        v.gj[a] = gj[a];
        v.piG[a] = piG[a];
        v.u[a] = u[a];
        v.nu[a] = nu[a];
        v.tg[a] = tg[a];
        v.F[a] = F[a];
        v.Fd[a] = Fd[a];
        v.uw[a] = uw[a];
        v.tgw[a] = tgw[a];
    }
    v.nuuw = nuuw;
    v.Phi = Phi;
    v.pij = pij;
    v.gg = gg;
    v.nuu = nuu;
    v.tt = tt;
    v.ct = ct;
    v.cd = cd;
    while (!SC_CONTACT_STOP(S, polls) && (nl = next_lanes(mark, &k, k1, ks)) > 0) {
        double p[3][SC_CONTACT_VL], gv[3][SC_CONTACT_VL], hv[3][3][SC_CONTACT_VL];
        double pik[SC_CONTACT_VL], phik[SC_CONTACT_VL], yk[3][SC_CONTACT_VL];
        sample_lanes s;
        for (l = 0; l < SC_CONTACT_VL; l++) {
            const ptrdiff_t kk = ks[l] - (O == 0 ? 0 : I);
            pik[l] = S->pi[ks[l]];
            phik[l] = S->phi[ks[l]];
            for (a = 0; a < D; a++) {
                p[a][l] = sc__cloud_array(S->cl[O], SC_CLOUD_P(a))[kk];
                gv[a][l] = S->g[ks[l] * D + a];
                yk[a][l] = S->y[ks[l] * D + a];
                for (b = 0; !flat && b < D; b++) {
                    hv[a][b][l] = S->h[(ks[l] * D + a) * D + b];
                }
            }
        }
        for (a = 0; a < D; a++) {
            s.p[a] = p[a];
            s.g[a] = gv[a];
            s.y[a] = yk[a];
        }
        s.pi = pik;
        s.phi = phik;
        s.gv = gv;
        s.hv = hv;
        geometry_lanes(&E, D, nq, &s, &ow, !flat, &v);
        for (l = 0; l < nl; l++) { /* the soft minimum's gradient, in sample order */
            int r;
            for (r = 0; r < nq; r++) {
                mg[r] += pik[l] * Phi[1 + r][l];
            }
        }
        forces_lanes(&E, D, nq, ns, &s, &ow, flat, vel, &v);
        /* the sums and outputs, lane by lane in sample order */
        for (l = 0; l < nl; l++) {
            double jg[3][1 + SC_CONTACT_MAXV], jf[3][1 + SC_CONTACT_MAXV];
            double jd[3][1 + SC_CONTACT_MAXV], jr[3][1 + SC_CONTACT_MAXV], pl[3];
            double jp[1 + SC_CONTACT_MAXV], jc[1 + SC_CONTACT_MAXV];
            double *gp[3] = {jg[0], jg[1], jg[2]}, *fp[3] = {jf[0], jf[1], jf[2]};
            double *dp[3] = {jd[0], jd[1], jd[2]}, *rp[3] = {jr[0], jr[1], jr[2]};
            /* read only against a half-space, where they are set below (GCC cannot tell
               in the copies without pose variables) */
            jp[0] = jc[0] = 0.0;
            for (a = 0; a < D; a++) {
                pl[a] = p[a][l];
                lj_get(nq, piG[a], l, jg[a]);
                if (vel & SC_CONTACT_FRIC) {
                    lj_get(ns, F[a], l, jf[a]);
                }
                if ((vel & SC_CONTACT_DAMP) && !Z->fs[0][O][0]) {
                    lj_get(ns, Fd[a], l, jd[a]);
                }
                if (D == 2) {
                    lj_get(vel ? ns : nq, rO[a], l, jr[a]);
                }
            }
            if (Z->fs[0][O][0]) {
                lj_get(nq, pij, l, jp);
                if (vel & SC_CONTACT_DAMP) {
                    lj_get(ns, cd, l, jc);
                }
            }
            sample_sums(1, S, Z, c, D, nq, ns, ks[l], pl, gp, fp, dp, rp, jp, jc, vel, pf, pd,
                        forces);
        }
    }
}

/* pass_jets at ord = 1 (constant D, nq, ns): both owners' marked samples in lanes */
SC_JET_KERNEL void pass_lanes(contact_t *S, acc_t *Z, const int D, const int nq, const int ns,
                              const unsigned char *mark, const double *PhiR, int vel, double vs2,
                              double *pf, double *pd, double *forces)
{
    sc_jet_ctx cx; /* a local copy: its order and sizes fold into wacc_add's jet kernels */
    /* PhiR and the owner's common jets in lanes, in the arena's unused tail (not on the
       stack): at first order the arena's jets take (SC_CONTACT_NJETS + 1) (1 + ns) of its
       (SC_CONTACT_NJETS + 1) SC_CONTACT_JLEN doubles */
    lane_jet *LJ =
        (lane_jet *)(void *)(S->jets.base + (ptrdiff_t)(SC_CONTACT_NJETS + 1) * S->c.len);
    const ptrdiff_t n = S->I + S->cl[1]->n;
    sc_jet_ctx_init(&cx, ns, 1);
    lj_bcast(nq, LJ[0], PhiR);
    owner_pass_lanes(S, Z, &cx, D, nq, ns, 0, 0, S->I, mark, LJ, vel, vs2, pf, pd, forces, LJ + 1);
    owner_pass_lanes(S, Z, &cx, D, nq, ns, 1, S->I, n, mark, LJ, vel, vs2, pf, pd, forces, LJ + 1);
}

/* The passes with constant sizes: values in 2D or 3D, and the lane pass at first order
 * (the Jacobians that optimizers ask for most) in 2D or 3D with one moving body or two.
 * Each is a function of its own, not inlined into its caller: one very large function
 * costs the compiler superlinear time.  Second order runs pass_jets with run-time sizes:
 * its long Hessian jets gain little from constant sizes, which would multiply this file's
 * compile time (under ASan too). */
#if defined(__GNUC__) || defined(__clang__)
    #define SC_CONTACT_NOINLINE __attribute__((noinline))
#else
    #define SC_CONTACT_NOINLINE
#endif
#define PASS_VALUES_COPY(D_)                                                                       \
    static SC_CONTACT_NOINLINE void pass_values_##D_(                                              \
        contact_t *S, acc_t *Z, const unsigned char *mark, int vel, double vs2, double *pf,        \
        double *pd, double *forces)                                                                \
    {                                                                                              \
        pass_values(S, Z, D_, mark, vel, vs2, pf, pd, forces);                                     \
    }
PASS_VALUES_COPY(2)
PASS_VALUES_COPY(3)
#undef PASS_VALUES_COPY
#define PASS_LANES_COPY(D_, nq_, ns_)                                                              \
    static SC_CONTACT_NOINLINE void pass_lanes_##D_##_##nq_##_##ns_(                               \
        contact_t *S, acc_t *Z, const unsigned char *mark, const double *PhiR, int vel,            \
        double vs2, double *pf, double *pd, double *forces)                                        \
    {                                                                                              \
        pass_lanes(S, Z, D_, nq_, ns_, mark, PhiR, vel, vs2, pf, pd, forces);                      \
    }
PASS_LANES_COPY(2, 3, 6)
PASS_LANES_COPY(2, 6, 12)
PASS_LANES_COPY(3, 6, 12)
PASS_LANES_COPY(3, 12, 24)
/* SC_FRICTION_FROZEN_VELOCITY: jets in the velocities only */
PASS_LANES_COPY(2, 0, 3)
PASS_LANES_COPY(2, 0, 6)
PASS_LANES_COPY(3, 0, 6)
PASS_LANES_COPY(3, 0, 12)
#undef PASS_LANES_COPY

/* ---- the jets stage: sc_contact after pass 1 (sc__contact_fn) ---- */

/* the relative velocity of owner O's points: Om_O = w_O - w_K (world angular velocities,
   w) and cv_O = v_O - v_K - w_K x d_O */
static void relative_velocity(contact_t *S, acc_t *Z, int O, double *(*w)[3], const double (*v)[6],
                              int vars, double **Om, double **cv)
{
    const sc_jet_ctx *c = &S->c;
    const int D = S->D, ns = S->ns, K = 1 - O;
    /* the velocity variables: the state's (vars), none for the numerator's */
    const int vO = vars ? S->vv[O] : SC_JET_NOVAR, vK = vars ? S->vv[K] : SC_JET_NOVAR;
    int aa;
    for (aa = 0; aa < (D == 2 ? 1 : 3); aa++) {
        sc_jet_lin(c, ns, Om[aa], 1.0, w[O][aa], -1.0, w[K][aa]);
    }
    for (aa = 0; aa < D; aa++) {
        sc_jet_const(c, ns, cv[aa], v[O][aa] - v[K][aa]);
        if (vO < ns) {
            cv[aa][1 + vO + aa] = 1.0;
        }
        if (vK < ns) {
            cv[aa][1 + vK + aa] = -1.0;
        }
    }
    if (D == 2) {
        /* - w_K J d = - w_K (-d1, d0) */
        sc_jet_madd(c, ns, cv[0], 1.0, w[K][0], Z->d[O][1]);
        sc_jet_madd(c, ns, cv[1], -1.0, w[K][0], Z->d[O][0]);
        return;
    }
    for (aa = 0; aa < 3; aa++) {
        const int i1 = (aa + 1) % 3, i2 = (aa + 2) % 3;
        sc_jet_madd(c, ns, cv[aa], -1.0, w[K][i1], Z->d[O][i2]);
        sc_jet_madd(c, ns, cv[aa], 1.0, w[K][i2], Z->d[O][i1]);
    }
}

/* owner O's velocity terms from its relative angular velocity Om and velocity cv (the
   state's, or the friction numerator's): 3D N_O = (Om_O x) L_O into N, then cv and N taken
   to K's frame (M_K^T); w: 3 scratch jets, tmp: 6 */
static void velocity_terms(contact_t *S, int O, double *const *Om, double *const *cv,
                           double *(*N)[3], double **w, double **tmp)
{
    const sc_jet_ctx *c = &S->c;
    const int D = S->D, ns = S->ns, K = 1 - O;
    int aa, cb;
    for (cb = 0; D == 3 && cb < 3; cb++) {
        for (aa = 0; aa < 3; aa++) {
            const int i1 = (aa + 1) % 3, i2 = (aa + 2) % 3;
            double *nab = N[aa][cb];
            sc_jet_const(c, ns, nab, 0.0);
            sc_jet_madd(c, ns, nab, 1.0, Om[i1], S->L[O][i2][cb]);
            sc_jet_madd(c, ns, nab, -1.0, Om[i2], S->L[O][i1][cb]);
        }
    }
    for (cb = 0; cb < (D == 3 ? 4 : 1); cb++) {
        double *v[3] = {NULL, NULL, NULL};
        for (aa = 0; aa < D; aa++) {
            v[aa] = cb == 0 ? cv[aa] : N[aa][cb - 1];
        }
        to_body(S, ns, w, v, K, tmp);
        for (aa = 0; aa < D; aa++) {
            sc_jet_lin(c, ns, v[aa], 1.0, w[aa], 0.0, NULL);
        }
    }
}

/* L_O, whose column b is R_O Exp(dth_O) e_b, 3D: N_O = (Om_O x) L_O (friction), and in K's
   frame the samples' lever arms q = M_K^T L_O p = Q_O p and positions y = Exp(-dth_K)
   R_K^T (L_O p + d_O) = Q_O p + y0_O (y0 for the jets only: the values of y are the
   SSDF's); friction works in K's frame: cv_O and N_O's columns times M_K^T.  w: 3 scratch
   jets, tmp: 6 */
static void lever_arms(contact_t *S, acc_t *Z, int O, double **w, double **tmp)
{
    const sc_jet_ctx *c = &S->c;
    const int D = S->D, nq = S->nq, ns = S->ns, K = 1 - O, vel = S->vel;
    int aa, cb;
    if (S->order >= 1) {
        to_body(S, nq, S->y0[O], Z->d[O], K, tmp);
    }
    for (cb = 0; cb < D; cb++) {
        double *col[3] = {S->L[O][0][cb], S->L[O][1][cb], S->L[O][D - 1][cb]};
        double *qcol[3] = {S->Q[O][0][cb], S->Q[O][1][cb], S->Q[O][D - 1][cb]};
        for (aa = 0; aa < D; aa++) {
            sc_jet_const(c, ns, tmp[3 + aa], aa == cb ? 1.0 : 0.0);
        }
        to_world(S, ns, col, tmp + 3, O, tmp);
        to_body(S, nq, qcol, col, K, tmp);
    }
    if (vel) {
        velocity_terms(S, O, Z->Om[O], Z->cv[O], Z->N[O], w, tmp);
    }
}

/* The jets of the soft minimum (its value), the sums and their accumulators, and the
   per-owner kinematics (relative_velocity, lever_arms); the temporaries are released
   after */
static void kinematics(contact_t *S, acc_t *Z)
{
    const sc_jet_ctx *c = &S->c;
    const int D = S->D, nv = S->nv, nq = S->nq, ns = S->ns;
    double *w[2][3], *tmp[6];
    int aa, j, r, O, X, base;
    Z->mj = sc_jet_alloc(&S->jets);
    for (r = 0; r < 2 * nv; r++) {
        Z->A[r] = sc_jet_alloc(&S->jets);
        Z->B[r] = sc_jet_alloc(&S->jets);
        Z->C[r] = sc_jet_alloc(&S->jets);
    }
    wacc_init(S, nq, &Z->wa);
    wacc_init(S, ns, &Z->wb);
    wacc_init(S, ns, &Z->wc);
    for (O = 0; O < 2; O++) {
        const int flat = D == 3 && S->cl[1 - O]->n == 1; /* as the law's flat */
        for (j = 0; j < 4; j++) {
            Z->fs[0][O][j] = flat ? sc_jet_alloc(&S->jets) : NULL;
            Z->fs[1][O][j] = flat ? sc_jet_alloc(&S->jets) : NULL;
            if (flat) {
                sc_jet_const(c, nq, Z->fs[0][O][j], 0.0);
                sc_jet_const(c, ns, Z->fs[1][O][j], 0.0);
            }
        }
    }
    for (O = 0; O < 2; O++) {
        for (aa = 0; aa < 3; aa++) {
            Z->d[O][aa] = sc_jet_alloc(&S->jets);
            Z->Om[O][aa] = sc_jet_alloc(&S->jets);
            Z->cv[O][aa] = sc_jet_alloc(&S->jets);
            Z->Omw[O][aa] = S->vel & SC_CONTACT_WNUM ? sc_jet_alloc(&S->jets) : NULL;
            Z->cvw[O][aa] = S->vel & SC_CONTACT_WNUM ? sc_jet_alloc(&S->jets) : NULL;
            for (j = 0; j < 3; j++) {
                Z->Nw[O][aa][j] =
                    D == 3 && (S->vel & SC_CONTACT_WNUM) ? sc_jet_alloc(&S->jets) : NULL;
            }
        }
        for (aa = 0; aa < D; aa++) {
            S->y0[O][aa] = sc_jet_alloc(&S->jets);
            for (j = 0; j < D; j++) {
                S->L[O][aa][j] = sc_jet_alloc(&S->jets);
                S->Q[O][aa][j] = sc_jet_alloc(&S->jets);
                if (D == 3) {
                    Z->N[O][aa][j] = sc_jet_alloc(&S->jets);
                }
            }
        }
    }
    base = S->jets.used;
    for (aa = 0; aa < 3; aa++) {
        w[0][aa] = sc_jet_alloc(&S->jets);
        w[1][aa] = sc_jet_alloc(&S->jets);
        tmp[aa] = sc_jet_alloc(&S->jets);
        tmp[3 + aa] = sc_jet_alloc(&S->jets);
    }
    /* d_O = t_O + dt_O - t_K - dt_K */
    for (O = 0; O < 2; O++) {
        const int K = 1 - O;
        for (aa = 0; aa < D; aa++) {
            sc_jet_const(c, ns, Z->d[O][aa], S->t[O][aa] - S->t[K][aa]);
            if (S->pv[O] < ns) {
                Z->d[O][aa][1 + S->pv[O] + aa] = 1.0;
            }
            if (S->pv[K] < ns) {
                Z->d[O][aa][1 + S->pv[K] + aa] = -1.0;
            }
        }
    }
    /* world angular velocities w_X (2D: the scalar omega_X) */
    for (X = 0; X < 2; X++) {
        const int v0 = S->vv[X];
        if (D == 2) {
            sc_jet_var(c, ns, w[X][0], S->v[X][2], v0 + 2);
        } else {
            for (aa = 0; aa < 3; aa++) {
                sc_jet_var(c, ns, tmp[3 + aa], S->v[X][3 + aa], v0 + 3 + aa);
            }
            to_world(S, ns, w[X], tmp + 3, X, tmp);
        }
    }
    relative_velocity(S, Z, 0, w, (const double (*)[6])S->v, 1, Z->Om[0], Z->cv[0]);
    relative_velocity(S, Z, 1, w, (const double (*)[6])S->v, 1, Z->Om[1], Z->cv[1]);
    lever_arms(S, Z, 0, w[0], tmp);
    lever_arms(S, Z, 1, w[0], tmp);
    if (S->vel & SC_CONTACT_WNUM) {
        /* the numerator's world angular velocities (constants rotated by the poses) and
           its relative velocities */
        for (X = 0; X < 2; X++) {
            if (D == 2) {
                sc_jet_const(c, ns, w[X][0], S->wv[X][2]);
            } else {
                for (aa = 0; aa < 3; aa++) {
                    sc_jet_const(c, ns, tmp[3 + aa], S->wv[X][3 + aa]);
                }
                to_world(S, ns, w[X], tmp + 3, X, tmp);
            }
        }
        for (O = 0; O < 2; O++) {
            relative_velocity(S, Z, O, w, (const double (*)[6])S->wv, 0, Z->Omw[O], Z->cvw[O]);
        }
        velocity_terms(S, 0, Z->Omw[0], Z->cvw[0], Z->Nw[0], w[0], tmp);
        velocity_terms(S, 1, Z->Omw[1], Z->cvw[1], Z->Nw[1], w[0], tmp);
    }
    S->jets.used = base;
    sc_jet_const(c, nq, Z->mj, S->m);
}

/* The pass over the samples (pass 2): per kept sample, the soft minimum's jet sums and the
 * forces: values (order 0), lanes (first order; the copies with constant sizes: one or two
 * moving bodies) or jets.
 * pi_k = exp((m - Phi_k) / eps_c) = pi_k(0) E(dR - dPhi_k) E(dm - dR) with E(z) = exp(z /
 * eps_c), d the change from s = 0 and R the sample of smallest Phi (its jet computed
 * first, in PhiR): every accumulated quantity is linear in pi_k, so the samples are summed
 * with pi_k(0) E(dR - dPhi_k), which needs no dm, and the sums are multiplied by E(dm -
 * dR) once at the end (scale_sums; an exact identity of truncated jets).  One pass over
 * the samples instead of two.  The reference R keeps the factors near 1 where the weight
 * sits (dm ~ dR), so the split adds no cancellation of note; the values are those of
 * order 0 bit for bit (both factors have value 1 and pi_k(0)).  Returns PhiR (NULL at
 * order 0), which stays allocated. */
static double *samples_pass(contact_t *S, acc_t *Z, double *forces)
{
    const int D = S->D, order = S->order, nq = S->nq, ns = S->ns, nf = S->vel;
    const ptrdiff_t n = S->n;
    const double vs2 = S->vs2;
    const unsigned char *mark = S->mark;
    double *PhiR = NULL, *pf = S->pf, *pd = S->pd;
    ptrdiff_t k;
    int base;
    if (order >= 1) {
        /* the reference sample: the smallest Phi among those taking part */
        ptrdiff_t kr = S->excl == 0 ? 1 : 0;
        for (k = kr + 1; k < n; k++) {
            kr = k != S->excl && S->phi[k] < S->phi[kr] ? k : kr;
        }
        PhiR = sc_jet_alloc(&S->jets);
        reference_phi(S, Z, kr, PhiR);
    }
    base = S->jets.used; /* PhiR stays; the pass's jets are released after it */
    /* the skipped samples' outputs (pf is read only for forces) */
    for (k = 0; forces && k < n; k++) {
        if (!mark[k]) {
            memset(pf + k * D, 0, sizeof(double) * (size_t)D);
            memset(pd + k * D, 0, sizeof(double) * (size_t)D);
            memset(forces + k * D, 0, sizeof(double) * (size_t)D);
        }
    }
    if (order == 0) {
        (D == 2 ? pass_values_2 : pass_values_3)(S, Z, mark, nf, vs2, pf, pd, forces);
    } else if (order == 1 && D == 2 && nq == 3) {
        pass_lanes_2_3_6(S, Z, mark, PhiR, nf, vs2, pf, pd, forces);
    } else if (order == 1 && D == 2 && nq == 6) {
        pass_lanes_2_6_12(S, Z, mark, PhiR, nf, vs2, pf, pd, forces);
    } else if (order == 1 && D == 3 && nq == 6) {
        pass_lanes_3_6_12(S, Z, mark, PhiR, nf, vs2, pf, pd, forces);
    } else if (order == 1 && D == 3 && nq == 12) {
        pass_lanes_3_12_24(S, Z, mark, PhiR, nf, vs2, pf, pd, forces);
    } else if (order == 1 && D == 2 && nq == 0 && ns == 3) {
        /* SC_FRICTION_FROZEN_VELOCITY (both bodies frozen, ns = 0, takes pass_jets) */
        pass_lanes_2_0_3(S, Z, mark, PhiR, nf, vs2, pf, pd, forces);
    } else if (order == 1 && D == 2 && nq == 0 && ns == 6) {
        pass_lanes_2_0_6(S, Z, mark, PhiR, nf, vs2, pf, pd, forces);
    } else if (order == 1 && D == 3 && nq == 0 && ns == 6) {
        pass_lanes_3_0_6(S, Z, mark, PhiR, nf, vs2, pf, pd, forces);
    } else if (order == 1 && D == 3 && nq == 0 && ns == 12) {
        pass_lanes_3_0_12(S, Z, mark, PhiR, nf, vs2, pf, pd, forces);
    } else {
        pass_jets(S, Z, order, D, nq, ns, mark, PhiR, S->dphi, nf, vs2, pf, pd, forces);
    }
    S->jets.used = base;
    return PhiR;
}

/* the half-space sums (acc_t.fs) onto the accumulators: F[O] += n sum X and P[O][b] +=
   n sum p_b X, with n K's normal in its frame (the gradient of its SSDF, g, for the normal
   force; nu = g / sqrt(|g|^2 + tiny) for damping) */
static void flat_expand(contact_t *S, acc_t *Z)
{
    const sc_jet_ctx *c = &S->c;
    const int nq = S->nq, ns = S->ns;
    int O, a, b;
    for (O = 0; O < 2; O++) {
        const sc_packed_cloud *ck = S->cl[1 - O];
        double g[3], nu[3];
        if (Z->fs[0][O][0] == NULL) {
            continue;
        }
        for (a = 0; a < 3; a++) {
            g[a] = ck->data[(3 + a) * ck->npad];
        }
        unit_value(3, g, nu);
        for (a = 0; a < 3; a++) {
            sc_jet_axpy(c, nq, Z->wa.F[O][a], g[a], Z->fs[0][O][0]);
            for (b = 0; b < 3; b++) {
                sc_jet_axpy(c, nq, Z->wa.P[O][b][a], g[a], Z->fs[0][O][1 + b]);
            }
            if (S->vel & SC_CONTACT_DAMP) {
                sc_jet_axpy(c, ns, Z->wc.F[O][a], nu[a], Z->fs[1][O][0]);
                for (b = 0; b < 3; b++) {
                    sc_jet_axpy(c, ns, Z->wc.P[O][b][a], nu[a], Z->fs[1][O][1 + b]);
                }
            }
        }
    }
}

/* the sums to the world (wacc_to_world), then the owners' torques from the moments
   (wacc_torques) */
static void sums_to_world(contact_t *S, acc_t *Z)
{
    const int base = S->jets.used;
    double *tmp[6];
    int aa;
    for (aa = 0; aa < 6; aa++) {
        tmp[aa] = sc_jet_alloc(&S->jets);
    }
    wacc_to_world(S, S->nq, &Z->wa, tmp);
    if (S->vel & SC_CONTACT_FRIC) {
        wacc_to_world(S, S->ns, &Z->wb, tmp);
    }
    if (S->vel & SC_CONTACT_DAMP) {
        wacc_to_world(S, S->ns, &Z->wc, tmp);
    }
    S->jets.used = base;
    wacc_torques(S, S->nq, &Z->wa, S->L);
    if (S->vel & SC_CONTACT_FRIC) {
        wacc_torques(S, S->ns, &Z->wb, S->L);
    }
    if (S->vel & SC_CONTACT_DAMP) {
        wacc_torques(S, S->ns, &Z->wc, S->L);
    }
}

/* the soft minimum's Hessian term - (1/eps_c) sum pi (dPhi - dm)(dPhi - dm)^T, centred
   (order 2; the diagonal-plus-rank-one Hessian applied, never formed) */
static void centred_term(const contact_t *S, acc_t *Z)
{
    const int nq = S->nq;
    double *mg = Z->mj + 1, *mh = Z->mj + 1 + S->c.n;
    ptrdiff_t k;
    for (k = 0; k < S->n; k++) {
        double d[12], w = S->pi[k] / S->eps_c;
        int i2, j2;
        if (w == 0.0 || !S->mark[k]) {
            continue;
        }
        for (i2 = 0; i2 < nq; i2++) {
            d[i2] = S->dphi[k * nq + i2] - mg[i2];
        }
        for (i2 = 0; i2 < nq; i2++) {
            for (j2 = 0; j2 <= i2; j2++) {
                mh[i2 * (i2 + 1) / 2 + j2] -= w * d[i2] * d[j2];
            }
        }
    }
}

/* the sums times E(dm - dR) (value 1; samples_pass) */
static void scale_sums(contact_t *S, acc_t *Z, const double *PhiR)
{
    const sc_jet_ctx *c = &S->c;
    const int D = S->D, nq = S->nq, ns = S->ns, base = S->jets.used;
    double *e = sc_jet_alloc(&S->jets), *ef = sc_jet_alloc(&S->jets);
    int X, aa;
    sc_jet_lin(c, nq, e, 1.0 / S->eps_c, Z->mj, -1.0 / S->eps_c, PhiR);
    sc_jet_func(c, nq, e, e, 1.0, 1.0, 1.0);
    sc_jet_lin(c, nq, ef, 1.0, e, 0.0, NULL);
    sc_jet_promote(c, nq, ns, ef);
    for (X = 0; X < 2; X++) {
        for (aa = 0; aa < D; aa++) {
            sc_jet_mul(c, nq, Z->wa.F[X][aa], Z->wa.F[X][aa], e);
            if (S->vel & SC_CONTACT_FRIC) {
                sc_jet_mul(c, ns, Z->wb.F[X][aa], Z->wb.F[X][aa], ef);
            }
            if (S->vel & SC_CONTACT_DAMP) {
                sc_jet_mul(c, ns, Z->wc.F[X][aa], Z->wc.F[X][aa], ef);
            }
        }
        for (aa = 0; aa < (D == 2 ? 1 : 3); aa++) {
            sc_jet_mul(c, nq, Z->wa.T[X][aa], Z->wa.T[X][aa], e);
            if (S->vel & SC_CONTACT_FRIC) {
                sc_jet_mul(c, ns, Z->wb.T[X][aa], Z->wb.T[X][aa], ef);
            }
            if (S->vel & SC_CONTACT_DAMP) {
                sc_jet_mul(c, ns, Z->wc.T[X][aa], Z->wc.T[X][aa], ef);
            }
        }
    }
    S->jets.used = base;
}

/* the normal force lambda(m) = k P S and the ramp S = s_b(-m) with their first two
   derivatives in m, P = sp_b(-m) (the energy 0.5 k P^2); S1 = S Sc / b, S2 = (1 - 2 S) S Sc
   / b^2, Sc = 1 - S */
typedef struct {
    double P, Sg, S1, S2, lam[3];
} normal_force;

static normal_force normal_of(double m, const sc_contact_params *prm)
{
    const double zz = -m / prm->beta, kk = prm->stiffness;
    normal_force f;
    double Sc;
    f.P = prm->beta * (zz > 0.0 ? zz + log1p(exp(-zz)) : log1p(exp(zz)));
    f.Sg = zz >= 0.0 ? 1.0 / (1.0 + exp(-zz)) : exp(zz) / (1.0 + exp(zz));
    Sc = zz >= 0.0 ? exp(-zz) / (1.0 + exp(-zz)) : 1.0 / (1.0 + exp(zz));
    f.S1 = f.Sg * Sc / prm->beta;
    f.S2 = (Sc - f.Sg) * f.S1 / prm->beta;
    /* lambda(m) = k P S: d/dm = -k (S^2 + P S1), d2/dm2 = k (3 S S1 + P S2) */
    f.lam[0] = kk * f.P * f.Sg;
    f.lam[1] = -kk * (f.Sg * f.Sg + f.P * f.S1);
    f.lam[2] = kk * (3.0 * f.Sg * f.S1 + f.P * f.S2);
    return f;
}

/* wrench row r's jet q into the outputs: its value, Jacobian and Hessian in the full pair
   coordinates (dq_A, dq_B, v_A, v_B; a frozen body's are zero) */
static void write_row(const contact_t *S, int r, const double *q, const sc_contact_out *out)
{
    const int nv = S->nv, ns = S->ns, nf = 4 * nv;
    int i2, j2;
    if (out->wrench) {
        out->wrench[r] = q[0];
    }
    if (out->jac && S->order >= 1) {
        for (j2 = 0; j2 < nf; j2++) {
            const int cj = full_to_var(S, j2);
            out->jac[r * nf + j2] = cj < ns ? q[1 + cj] : 0.0;
        }
    }
    if (out->hess && S->order >= 2) {
        for (i2 = 0; i2 < nf; i2++) {
            const int ci = full_to_var(S, i2);
            for (j2 = 0; j2 <= i2; j2++) {
                const int cj = full_to_var(S, j2);
                const double v = ci < ns && cj < ns ? q[sc_jet_hidx(&S->c, ci, cj)] : 0.0;
                out->hess[(r * nf + i2) * nf + j2] = v;
                out->hess[(r * nf + j2) * nf + i2] = v;
            }
        }
    }
}

/* Assembly: wrench = lambda A - c s C - mu lambda B, and the per-sample forces */
static void assemble(contact_t *S, acc_t *Z, const sc_contact_params *prm,
                     const sc_contact_out *out)
{
    const sc_jet_ctx *c = &S->c;
    const int nv = S->nv, nq = S->nq, ns = S->ns, vel = S->vel;
    const double mu = prm->friction, cd = prm->damping;
    const normal_force f = normal_of(S->m, prm);
    double *lam, *sig, *q, *tmp[3];
    ptrdiff_t k;
    int r;
    tmp[0] = sc_jet_alloc(&S->jets);
    tmp[1] = sc_jet_alloc(&S->jets);
    tmp[2] = sc_jet_alloc(&S->jets);
    wacc_finish(S, nq, &Z->wa, Z->d, Z->A, tmp);
    if (vel & SC_CONTACT_FRIC) {
        wacc_finish(S, ns, &Z->wb, Z->d, Z->B, tmp);
    }
    if (vel & SC_CONTACT_DAMP) {
        wacc_finish(S, ns, &Z->wc, Z->d, Z->C, tmp);
    }
    lam = sc_jet_alloc(&S->jets);
    sig = sc_jet_alloc(&S->jets);
    q = sc_jet_alloc(&S->jets);
    if (out->scalars) {
        out->scalars[0] = 0.5 * prm->stiffness * f.P * f.P;
        out->scalars[1] = S->m;
        out->scalars[2] = S->phimin;
    }
    sc_jet_func(c, nq, lam, Z->mj, f.lam[0], f.lam[1], f.lam[2]);
    sc_jet_func(c, nq, sig, Z->mj, f.Sg, -f.S1, f.S2);
    sc_jet_promote(c, nq, ns, lam);
    sc_jet_promote(c, nq, ns, sig);
    for (r = 0; r < 2 * nv; r++) {
        sc_jet_promote(c, nq, ns, Z->A[r]);
        sc_jet_mul(c, ns, q, lam, Z->A[r]);
        if (cd > 0.0) {
            sc_jet_madd(c, ns, q, -cd, sig, Z->C[r]);
        }
        if (mu > 0.0) {
            sc_jet_madd(c, ns, q, -mu, lam, Z->B[r]);
        }
        if (out->dw_dprm) {
            /* lambda and the friction force are linear in k, damping in c, friction
             * in mu: W = k (P S) (A - mu B) - c S C */
            out->dw_dprm[r] = f.P * f.Sg * (Z->A[r][0] - mu * Z->B[r][0]);
            out->dw_dprm[2 * nv + r] = -f.Sg * Z->C[r][0];
            out->dw_dprm[4 * nv + r] = -f.lam[0] * Z->B[r][0];
        }
        write_row(S, r, q, out);
    }
    for (k = 0; out->forces && k < S->n * S->D; k++) {
        out->forces[k] =
            f.lam[0] * out->forces[k] - cd * f.Sg * S->pd[k] - mu * f.lam[0] * S->pf[k];
    }
}

static int contact_jets(contact_t *S, const sc_contact_params *prm, const sc_contact_out *out)
{
    acc_t Z;
    double *PhiR;
    kinematics(S, &Z);
    PhiR = samples_pass(S, &Z, out->forces);
    if (S->stopped) {
        return SC_EINTERRUPTED;
    }
    flat_expand(S, &Z);
    sums_to_world(S, &Z);
    if (S->order >= 2) {
        centred_term(S, &Z);
    }
    if (S->order >= 1) {
        scale_sums(S, &Z, PhiR);
    }
    assemble(S, &Z, prm, out);
    return S->jets.overflow ? SC_ENOMEM : SC_OK;
}

const sc__contact_fn SC_CONTACT_VARIANT = contact_jets;
