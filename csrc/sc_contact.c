/*
 * sc_contact.c - the contact model's driver (docs/method.md sections 5 and 10): checks, the
 * pair's frames and variables, the exact pruning of far pairs and negligible samples, the
 * SSDF of the other body at every sample (pass 1), the soft minimum, then the compiled
 * variant's jets (sc_contact_kernel.h: the wrench and its derivatives).
 */
#include <math.h>
#include <string.h>

#include "sc_contact_internal.h"
#include "sc_rotation.h"
#include "sc_work_internal.h"

/* ln 4: dropping samples of relative share e changes a product of two sums by at most
   4 e times as much */
#define LN_4 1.39
/* ln 67, the largest constant factor of a sample's share in the sums (sample_cut) */
#define SAMPLE_MARGIN 4.2
/* the share of samples likely kept above which pass 1 evaluates every sample's
   derivatives at once (the results do not depend on it, only the time) */
#define LIKELY_MARKED 0.35

/* lo <= v <= hi (false for NaN) */
static int within(double v, double lo, double hi)
{
    return v >= lo && v <= hi;
}

int sc_contact_params_check(const sc_contact_params *prm)
{
    if (prm == NULL || !within(prm->eps, SC_EPS_MIN, SC_EPS_MAX) ||
        !within(prm->eps_c, SC_LENGTH_MIN, SC_LENGTH_MAX) ||
        !within(prm->stiffness, SC_STIFFNESS_MIN, SC_STIFFNESS_MAX) ||
        !within(prm->beta, SC_LENGTH_MIN, SC_LENGTH_MAX) ||
        !within(prm->damping, 0.0, SC_DAMPING_MAX) ||
        !within(prm->friction, 0.0, SC_FRICTION_MAX) ||
        !within(prm->slip_velocity, SC_SLIP_MIN, SC_SLIP_MAX)) {
        return SC_EINVAL;
    }
    return SC_OK;
}

/* ---- scratch ---- */

/* the scratch of a pair (sc_contact_workspace_size) */
typedef struct {
    double *y, *g, *h, *t3;    /* per sample: other-body coordinates, the SSDF's derivatives */
    double *phi, *pi;          /* when the caller does not ask for them */
    double *dphi, *pf, *pd;    /* order 2: dPhi (2 nv); the friction and damping forces'
                                  values (D) */
    unsigned char *mark;       /* the kept samples */
    ptrdiff_t *kept;           /* their indices */
    double *yc, *gc, *hc, *tc; /* their coordinates and SSDF derivatives, compact */
    double *ssdf;              /* the SSDF's scratch (nthreads of it) */
    double *arena;             /* the jets, last (an overrun, a bug, shows under ASan) */
} contact_ws;

/* the scratch's layout in base (NULL: only its size); returns its size in doubles */
static ptrdiff_t workspace(const sc_packed_cloud *a, const sc_packed_cloud *b, int nthreads,
                           double *base, contact_ws *w)
{
    const ptrdiff_t D = a->dim, n = a->n + b->n, d = sizeof(double);
    ptrdiff_t off = 0;
    w->y = sc__take(base, &off, n * D, d);
    w->g = sc__take(base, &off, n * D, d);
    w->h = sc__take(base, &off, n * D * D, d);
    w->t3 = sc__take(base, &off, n * D * D * D, d);
    w->phi = sc__take(base, &off, n, d);
    w->pi = sc__take(base, &off, n, d);
    w->dphi = sc__take(base, &off, n * 2 * SC_NV(3), d);
    w->pf = sc__take(base, &off, n * D, d);
    w->pd = sc__take(base, &off, n * D, d);
    w->mark = sc__take(base, &off, n, sizeof(unsigned char));
    w->kept = sc__take(base, &off, n, sizeof(ptrdiff_t));
    w->yc = sc__take(base, &off, n * D, d);
    w->gc = sc__take(base, &off, n * D, d);
    w->hc = sc__take(base, &off, n * D * D, d);
    w->tc = sc__take(base, &off, n * D * D * D, d);
    w->ssdf = sc__take(base, &off, (ptrdiff_t)nthreads * sc__ssdf_workspace_pair(a, b), d);
    w->arena = sc__take(base, &off, (ptrdiff_t)(SC_CONTACT_NJETS + 1) * SC_CONTACT_JLEN, d);
    return off;
}

ptrdiff_t sc_contact_workspace_size(const sc_packed_cloud *a, const sc_packed_cloud *b,
                                    int nthreads)
{
    contact_ws w;
    if (a == NULL || b == NULL || nthreads < 1) {
        return 0;
    }
    return workspace(a, b, nthreads, NULL, &w);
}

/* ---- pruning (docs/method.md section 10) ---- */

/* The pair's cut (docs/method.md section 10): a pair whose soft minimum m exceeds
 * beta Tp has forces and derivatives below 1e-18 of their scale.  Every force and
 * derivative carries e^(-m / beta) (damping; the spring e^(-2 m / beta)) times at most
 * (Lsc / beta)^2 (Lsc / eps_c)^2 and, for damping, c vrel / (k beta) against the spring's
 * scale k beta, with displacements measured in the pair's own length *Lsc: the lever arms
 * of its moving bodies (their radii about their origins; a frozen body, a wall or a floor,
 * has no variables and adds none) plus beta + eps_c.  Measured in a fixed metre instead,
 * the cut would change with the unit of length. */
static double pair_cut(const sc__contact *S, const sc_contact_params *prm, ptrdiff_t n, double *Lsc)
{
    const int D = S->D, nv = S->nv;
    double rad[2], vrel = 0.0;
    int X, j;
    for (X = 0; X < 2; X++) {
        const sc_packed_cloud *cl = S->cl[X];
        const double *hdr = cl->data + (3 * D + 3) * cl->npad;
        double c2 = 0.0, v2 = 0.0, w2 = 0.0;
        for (j = 0; j < D; j++) {
            c2 += hdr[j] * hdr[j];
            v2 += S->v[X][j] * S->v[X][j];
        }
        for (j = D; j < nv; j++) {
            w2 += S->v[X][j] * S->v[X][j];
        }
        rad[X] = sqrt(c2) + hdr[D];
        vrel += sqrt(v2) + sqrt(w2) * rad[X];
        if (S->vv[X] == SC_JET_NOVAR) {
            rad[X] = 0.0; /* frozen: no lever arm among the variables */
        }
    }
    *Lsc = rad[0] + rad[1] + prm->beta + prm->eps_c;
    return SC_LN_1E18 + log((double)n) + 2.0 * log1p(*Lsc / prm->beta) +
           2.0 * log1p(*Lsc / prm->eps_c) +
           log1p(prm->damping * vrel * *Lsc / (prm->stiffness * prm->beta)) + 1.0;
}

/* a sample is kept (SSDF derivatives, forces) when (Phi_k - min Phi) / eps_c <= this: its
   pi_k <= e^(-(Phi_k - min Phi) / eps_c), times at most (Lsc / eps_c)^2 from the
   derivatives of pi and a factor SAMPLE_MARGIN from the sums' constants, over at most n
   samples */
static double sample_cut(ptrdiff_t n, double Lsc, double eps_c)
{
    return SC_LN_1E18 + log((double)n) + 2.0 * log1p(Lsc / eps_c) + SAMPLE_MARGIN + 1.0;
}

/* a skipped pair's outputs: an exactly zero wrench and derivatives */
static void zero_wrench(int nv, int order, double *wrench, double *jac, double *hess,
                        double *dw_dprm)
{
    const int nf = 4 * nv;
    int r;
    for (r = 0; wrench && r < 2 * nv; r++) {
        wrench[r] = 0.0;
    }
    if (jac && order >= 1) {
        memset(jac, 0, sizeof(double) * (size_t)(2 * nv * nf));
    }
    if (hess && order >= 2) {
        memset(hess, 0, sizeof(double) * (size_t)(2 * nv * nf * nf));
    }
    if (dw_dprm) {
        memset(dw_dprm, 0, sizeof(double) * (size_t)(6 * nv));
    }
}

/* A guess, before any SSDF value, of the fraction of the samples that will be kept: those
   within the sample cut (in distance) of the other body's bounding sphere, or of its
   plane for a half-space.  Only the choice between one pass over all samples and two
   (values, then the kept samples' derivatives) depends on it: not the results. */
static double likely_marked(const sc__contact *S, ptrdiff_t n, const double *y, double reach)
{
    const int D = S->D;
    double cnt = 0.0;
    int side;
    /* each side's samples against the other cloud (its constants hoisted): its plane
       (a half-space), or its bounding sphere, compared squared (no root per sample) */
    for (side = 0; side < 2; side++) {
        const sc_packed_cloud *ck = S->cl[1 - side];
        const ptrdiff_t k0 = side == 0 ? 0 : S->I, k1 = side == 0 ? S->I : n;
        const double *hdr = ck->data + (3 * D + 3) * ck->npad;
        double c[3] = {0.0, 0.0, 0.0}, nr[3] = {0.0, 0.0, 0.0}, off = 0.0, r2 = 0.0;
        ptrdiff_t k;
        int a;
        if (ck->n == 1) {
            for (a = 0; a < D; a++) {
                nr[a] = ck->data[(D + a) * ck->npad];
                off += nr[a] * ck->data[a * ck->npad];
            }
            for (k = k0; k < k1; k++) {
                const double *yk = y + k * D;
                double d = nr[0] * yk[0] + nr[1] * yk[1] - off;
                if (D == 3) {
                    d += nr[2] * yk[2];
                }
                cnt += d <= reach;
            }
            continue;
        }
        for (a = 0; a < D; a++) {
            c[a] = hdr[a];
        }
        /* sqrt(d2) - rho <= reach  <=>  d2 <= (reach + rho)^2 (reach + rho >= 0) */
        r2 = reach + hdr[D] >= 0.0 ? (reach + hdr[D]) * (reach + hdr[D]) : -1.0;
        for (k = k0; k < k1; k++) {
            const double *yk = y + k * D;
            double d2 = (yk[0] - c[0]) * (yk[0] - c[0]) + (yk[1] - c[1]) * (yk[1] - c[1]);
            if (D == 3) {
                d2 += (yk[2] - c[2]) * (yk[2] - c[2]);
            }
            cnt += d2 <= r2;
        }
    }
    return cnt / (double)n;
}

/* A lower bound of the soft minimum of a pair of a half-space K (one sample, which takes
 * no part) and a cloud O, before any sample is posed: O's samples see K's exact plane
 * distance, at least that of O's bounding sphere's centre minus its radius or, when that
 * alone would not reach `cut`, the smallest of their own plane distances (one dot product
 * per sample, no pose written; sw holds them); and m >= min_k Phi_k - eps_c ln n. */
static void halfspace_bound(const sc__contact *S, int K, const sc_contact_params *prm, ptrdiff_t n,
                            double cut, double *sw, double *m_lb)
{
    const int D = S->D, O = 1 - K;
    const sc_packed_cloud *ck = S->cl[K], *co = S->cl[O];
    const double *hdr = co->data + (3 * D + 3) * co->npad, lnn = prm->eps_c * log((double)n);
    double cw[3], xk[3], nk[3], dist = 0.0;
    int a, j;
    for (a = 0; a < D; a++) {
        cw[a] = S->t[O][a];
        xk[a] = S->t[K][a];
        nk[a] = 0.0;
        for (j = 0; j < D; j++) {
            cw[a] += S->R[O][a * D + j] * hdr[j];
            xk[a] += S->R[K][a * D + j] * ck->data[j * ck->npad];
            nk[a] += S->R[K][a * D + j] * ck->data[(D + j) * ck->npad];
        }
    }
    for (a = 0; a < D; a++) {
        dist += nk[a] * (cw[a] - xk[a]);
    }
    dist -= hdr[D];
    if (dist - lnn <= cut) {
        /* the sphere is not enough (a long body, a T, along a wall): the samples' own plane
           distances, less a rounding margin far above the posing's (u |x| per sample) */
        const sc_packed_cloud *c = co;
        double scale = hdr[D], dmin = INFINITY, off = 0.0, *dk = sw, sum = 0.0;
        double nb[3] = {0.0, 0.0, 0.0};
        ptrdiff_t k, nfar = 0;
        for (a = 0; a < D; a++) {
            scale += fabs(S->t[O][a]) + fabs(xk[a]) + fabs(hdr[a]); /* |p_k| <= |c0| + rho */
            off += nk[a] * (S->t[O][a] - xk[a]);
        }
        /* d_k = off + n_K . (R_O p_k) = off + (R_O^T n_K) . p_k: the rotated normal once */
        for (a = 0; a < D; a++) {
            for (j = 0; j < D; j++) {
                nb[j] += nk[a] * S->R[O][a * D + j];
            }
        }
        for (k = 0; k < c->n; k++) {
            double d = off + nb[0] * c->data[k] + nb[1] * c->data[c->npad + k];
            if (D == 3) {
                d += nb[2] * c->data[2 * c->npad + k];
            }
            if (d <= cut) {
                /* m <= min d <= cut: no skip (a body in contact) */
                *m_lb = -INFINITY;
                return;
            }
            dk[k] = d;
            dmin = d < dmin ? d : dmin;
        }
        /* m >= min(Phi) - eps_c ln sum_k e^(-(Phi_k - min Phi) / eps_c), the sum over O's
           samples: those beyond 10 eps_c count e^-10 each */
        for (k = 0; k < c->n; k++) {
            const double z = (dk[k] - dmin) / prm->eps_c;
            if (z < 10.0) {
                sum += exp(-z);
            } else {
                nfar++;
            }
        }
        sum = (sum + (double)nfar * 4.6e-5) * (1.0 + 1e-12);
        dmin -= 1e-12 * scale;
        *m_lb = dmin - prm->eps_c * log(sum);
        return;
    }
    *m_lb = dist - lnn;
}

/* ---- the driver ---- */

/* SC_OK for a body with a cloud of dimension D, a valid pose and a finite velocity in the
   valid range (|v_j| <= SC_SPEED_MAX) */
static int body_check(const sc_contact_body *x, int D)
{
    int j, st;
    if (x == NULL || x->cloud == NULL || x->pose == NULL || x->vel == NULL || x->cloud->dim != D) {
        return SC_EINVAL;
    }
    if ((st = sc__pose_check(D, x->pose)) != SC_OK) {
        return st;
    }
    for (j = 0; j < SC_NV(D); j++) {
        if (!isfinite(x->vel[j])) {
            return SC_ENONFINITE;
        }
    }
    for (j = 0; j < SC_NV(D); j++) {
        if (!(fabs(x->vel[j]) <= SC_SPEED_MAX)) {
            return SC_ERANGE;
        }
    }
    return SC_OK;
}

/* the pair's frames, velocities and jet variables: the moving bodies' poses, then their
   velocities (a frozen body has none) */
static void pair_setup(sc__contact *S, const sc_contact_body *A, const sc_contact_body *B,
                       const sc_contact_params *prm, int order, int vel, int velocity_only)
{
    const sc_contact_body *bodies[2] = {A, B};
    const int D = A->cloud->dim, nv = SC_NV(D), fa = A->frozen != 0, fb = B->frozen != 0;
    const int nm = 2 - fa - fb;
    int X, j;
    memset(S, 0, sizeof *S);
    S->D = D;
    S->nv = nv;
    S->order = order;
    S->vel = vel;
    S->cl[0] = A->cloud;
    S->cl[1] = B->cloud;
    S->I = A->cloud->n;
    S->n = A->cloud->n + B->cloud->n;
    /* a half-space against a cloud: its one sample does not take part (docs/method.md
       section 5), so that where its anchor point lies changes no force */
    S->excl = S->I == 1 && S->n > 2 ? 0 : S->n - S->I == 1 && S->I > 1 ? S->n - 1 : -1;
    S->eps_c = prm->eps_c;
    S->vs2 = prm->slip_velocity * prm->slip_velocity;
    for (X = 0; X < 2; X++) {
        sc__pose_frame(D, bodies[X]->pose, S->R[X], S->t[X]);
        for (j = 0; j < nv; j++) {
            S->v[X][j] = bodies[X]->vel[j];
        }
    }
    /* velocity_only: the poses are no variables (nq = 0), the velocities the only ones */
    const int np = velocity_only ? 0 : nm * nv;
    S->pv[0] = fa || velocity_only ? SC_JET_NOVAR : 0;
    S->pv[1] = fb || velocity_only ? SC_JET_NOVAR : (fa ? 0 : nv);
    S->vv[0] = fa ? SC_JET_NOVAR : np;
    S->vv[1] = fb ? SC_JET_NOVAR : np + (fa ? 0 : nv);
    sc_jet_ctx_init(&S->c, np + nm * nv, order);
    S->nq = order > 0 ? np : 0;
    S->ns = order > 0 ? np + nm * nv : 0;
}

/* Pass 1: the SSDF of the other body at every sample, phi (and, with all, the derivatives
   up to order + 1) */
static int pass1(const sc__contact *S, const sc_contact_params *prm, const sc_options *opt,
                 const contact_ws *w, int all, double *phi)
{
    const int D = S->D, order = S->order;
    const ptrdiff_t I = S->I, J = S->n - S->I;
    int st;
    st = sc__ssdf_run(S->cl[1], prm->eps, I, w->y, opt, w->ssdf, phi, all ? w->g : NULL,
                      all && order >= 1 ? w->h : NULL, all && order >= 2 ? w->t3 : NULL);
    if (st == SC_OK) {
        st = sc__ssdf_run(S->cl[0], prm->eps, J, w->y + I * D, opt, w->ssdf, phi + I,
                          all ? w->g + I * D : NULL, all && order >= 1 ? w->h + I * D * D : NULL,
                          all && order >= 2 ? w->t3 + I * D * D * D : NULL);
    }
    return st;
}

/* The soft minimum m = -eps_c log sum exp(-Phi_k / eps_c) and the distribution pi (shifted
   by the largest exponent) over every sample but `excl` (a half-space's own sample, or -1:
   none; its pi is 0); *phimin the smallest Phi among them */
static double soft_minimum(ptrdiff_t n, double eps_c, const double *phi, ptrdiff_t excl, double *pi,
                           double *phimin)
{
    double zmax, sum = 0.0, pmin = INFINITY;
    ptrdiff_t k;
    for (k = 0; k < n; k++) {
        if (k != excl && !(phi[k] >= pmin)) {
            pmin = phi[k];
        }
    }
    zmax = -pmin / eps_c;
    for (k = 0; k < n; k++) {
        pi[k] = k == excl ? 0.0 : exp(-phi[k] / eps_c - zmax);
        sum += pi[k];
    }
    for (k = 0; k < n; k++) {
        pi[k] /= sum;
    }
    *phimin = pmin;
    return -eps_c * (zmax + log(sum));
}

/* the samples kept within Tc of the smallest Phi, and (unless pass 1 computed every
   sample's) their SSDF derivatives, evaluated compact and scattered to their rows */
static int keep_samples(const sc__contact *S, const sc_contact_params *prm, const sc_options *opt,
                        const contact_ws *w, const double *phi, double phimin, double Tc, int all)
{
    const int D = S->D, order = S->order;
    ptrdiff_t k, na = 0, nA = 0;
    int st;
    for (k = 0; k < S->n; k++) {
        w->mark[k] = k != S->excl && (phi[k] - phimin) / S->eps_c <= Tc;
        if (w->mark[k]) {
            int j;
            w->kept[na] = k;
            for (j = 0; j < D; j++) {
                w->yc[na * D + j] = w->y[k * D + j];
            }
            nA += k < S->I;
            na++;
        }
    }
    if (all) {
        return SC_OK;
    }
    st = sc__ssdf_run(S->cl[1], prm->eps, nA, w->yc, opt, w->ssdf, NULL, w->gc,
                      order >= 1 ? w->hc : NULL, order >= 2 ? w->tc : NULL);
    if (st == SC_OK) {
        st = sc__ssdf_run(S->cl[0], prm->eps, na - nA, w->yc + nA * D, opt, w->ssdf, NULL,
                          w->gc + nA * D, order >= 1 ? w->hc + nA * D * D : NULL,
                          order >= 2 ? w->tc + nA * D * D * D : NULL);
    }
    for (k = 0; st == SC_OK && k < na; k++) {
        const ptrdiff_t ka = w->kept[k];
        memcpy(w->g + ka * D, w->gc + k * D, sizeof(double) * (size_t)D);
        if (order >= 1) {
            memcpy(w->h + ka * D * D, w->hc + k * D * D, sizeof(double) * (size_t)(D * D));
        }
        if (order >= 2) {
            memcpy(w->t3 + ka * D * D * D, w->tc + k * D * D * D,
                   sizeof(double) * (size_t)(D * D * D));
        }
    }
    return st;
}

/* a pair beyond the contact range (m > beta Tp): its energy, depth and smallest Phi, and
   exactly zero wrench, derivatives and forces */
static void far_pair(const sc__contact *S, const sc_contact_params *prm, const sc_contact_out *out)
{
    const double zz = -S->m / prm->beta;
    const double Pz = prm->beta * (zz > 0.0 ? zz + log1p(exp(-zz)) : log1p(exp(zz)));
    if (out->scalars) {
        out->scalars[0] = 0.5 * prm->stiffness * Pz * Pz;
        out->scalars[1] = S->m;
        out->scalars[2] = S->phimin;
    }
    zero_wrench(S->nv, S->order, out->wrench, out->jac, out->hess, out->dw_dprm);
    if (out->forces) {
        memset(out->forces, 0, sizeof(double) * (size_t)(S->n * S->D));
    }
}

/* the variant of the resolved ISA (the AVX2 one for AVX2, the AVX-512 one for AVX-512) */
static sc__contact_fn variant(int isa)
{
    return isa == SC_ISA_AVX512 ? sc__contact_avx512
           : isa == SC_ISA_AVX2 ? sc__contact_avx2
                                : sc__contact_generic;
}

int sc_contact(const sc_contact_body *a, const sc_contact_body *b, const sc_contact_params *prm,
               int order, const sc_options *opt, double *work, const sc_contact_out *out)
{
    sc_options o;
    int st = sc_options_resolve(opt, &o);
    return st != SC_OK ? st : sc__contact_with(o.isa, a, b, prm, order, &o, work, out);
}

int sc__contact_with(int variant_isa, const sc_contact_body *a, const sc_contact_body *b,
                     const sc_contact_params *prm, int order, const sc_options *opt, double *work,
                     const sc_contact_out *out)
{
    return sc__contact_mode(variant_isa, a, b, prm, order, opt, work, out, SC_FRICTION_FULL, NULL,
                            NULL);
}

int sc__contact_mode(int variant_isa, const sc_contact_body *a, const sc_contact_body *b,
                     const sc_contact_params *prm, int order, const sc_options *opt, double *work,
                     const sc_contact_out *out, int mode, const double *wa, const double *wb)
{
    sc__contact S;
    contact_ws w;
    sc_options o;
    double *phi, *pi, Lsc = 1.0, Tp = 0.0, Tc = 0.0; /* the cuts (unless dense) */
    int st, D, all, wrench_only, vel, j;
    if (a == NULL || a->cloud == NULL || work == NULL || out == NULL || order < 0 || order > 2 ||
        (a->cloud->dim != 2 && a->cloud->dim != 3) || sc_contact_params_check(prm) != SC_OK ||
        sc_isa_resolve(variant_isa) != variant_isa || mode < SC_FRICTION_FULL ||
        mode > SC_FRICTION_FROZEN_VELOCITY ||
        (mode == SC_FRICTION_NUMERATOR && (wa == NULL || wb == NULL || order < 1 || out->scalars ||
                                           out->phi || out->pi || out->forces || out->x_w)) ||
        (mode == SC_FRICTION_FROZEN_VELOCITY && (order > 1 || out->dw_dprm || out->hess))) {
        return SC_EINVAL;
    }
    D = a->cloud->dim;
    if ((st = body_check(a, D)) != SC_OK || (st = body_check(b, D)) != SC_OK ||
        (st = sc__pair_reach_check(D, a->cloud, a->pose, b->cloud, b->pose, prm->eps)) != SC_OK ||
        (st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    vel = (prm->friction > 0.0 || out->dw_dprm != NULL ? SC_CONTACT_FRIC : 0) |
          (prm->damping > 0.0 || out->dw_dprm != NULL ? SC_CONTACT_DAMP : 0);
    if ((mode == SC_FRICTION_FROZEN || mode == SC_FRICTION_FROZEN_VELOCITY) &&
        (vel & SC_CONTACT_FRIC)) {
        vel |= SC_CONTACT_FREEZE;
    } else if (mode == SC_FRICTION_NUMERATOR && vel) {
        vel |= SC_CONTACT_WNUM;
    }
    pair_setup(&S, a, b, prm, order, vel, mode == SC_FRICTION_FROZEN_VELOCITY);
    S.it = o.interrupt;
    S.stopped = 0;
    for (j = 0; mode == SC_FRICTION_NUMERATOR && j < SC_NV(D); j++) {
        if (!isfinite(wa[j]) || !isfinite(wb[j])) {
            return SC_ENONFINITE;
        }
        S.wv[0][j] = wa[j];
        S.wv[1][j] = wb[j];
    }
    workspace(a->cloud, b->cloud, o.nthreads, work, &w);
    phi = out->phi ? out->phi : w.phi;
    pi = out->pi ? out->pi : w.pi;
    /* only the wrench and its derivatives asked for (a model step) */
    wrench_only = out->scalars == NULL && out->phi == NULL && out->pi == NULL &&
                  out->forces == NULL && out->x_w == NULL;
    if (!o.dense) {
        Tp = pair_cut(&S, prm, S.n, &Lsc);
        Tc = sample_cut(S.n, Lsc, S.eps_c);
    }
    /* a half-space pair beyond the contact range is skipped before its samples are posed */
    if (!o.dense && wrench_only && (S.I == 1) != (S.n - S.I == 1)) {
        double m_lb;
        halfspace_bound(&S, S.I == 1 ? 0 : 1, prm, S.n, prm->beta * Tp, w.ssdf, &m_lb);
        if (m_lb > prm->beta * Tp) {
            zero_wrench(S.nv, order, out->wrench, out->jac, out->hess, out->dw_dprm);
            return SC_OK;
        }
    }
    sc__pose_samples(a->cloud, S.R[0], S.t[0], b->cloud, S.R[1], S.t[1], out->x_w, w.y);
    /* dense, or pruned with most samples likely to matter: every sample's derivatives in
       pass 1 (each query's results are the same bits either way; only the time differs) */
    all = o.dense || likely_marked(&S, S.n, w.y, Tc * S.eps_c) >= LIKELY_MARKED;
    if ((st = pass1(&S, prm, &o, &w, all, phi)) != SC_OK) {
        return st;
    }
    S.m = soft_minimum(S.n, S.eps_c, phi, S.excl, pi, &S.phimin);
    if (o.dense) {
        memset(w.mark, 1, (size_t)S.n);
        if (S.excl >= 0) {
            w.mark[S.excl] = 0;
        }
    } else {
        if (S.m > prm->beta * Tp) {
            far_pair(&S, prm, out);
            return SC_OK;
        }
        if (wrench_only) {
            /* In a model step the standard is the pair skip's: below 1e-18 of the spring's
               scale k beta (with the derivative factors), not of this pair's own wrench.  The
               pair's wrench and its derivatives are at most e^(-m / beta + Tp - ln 1e18) of
               that scale, and dropping samples of relative share e_s changes them by at most
               4 e_s times as much (product rule), so the cut may come down by
               m / beta - (Tp - ln 1e18) - ln 4 when that is positive: a weak pair (a wall a
               few cm away) keeps only its nearest samples. */
            const double slack_p = S.m / prm->beta - (Tp - SC_LN_1E18) - LN_4;
            if (slack_p > 0.0) {
                Tc -= slack_p;
            }
        }
        if ((st = keep_samples(&S, prm, &o, &w, phi, S.phimin, Tc, all)) != SC_OK) {
            return st;
        }
    }
    S.y = w.y;
    S.g = w.g;
    S.h = w.h;
    S.t3 = w.t3;
    S.phi = phi;
    S.pi = pi;
    S.mark = w.mark;
    S.dphi = w.dphi;
    S.pf = w.pf;
    S.pd = w.pd;
    sc_jet_arena_init(&S.jets, w.arena, S.c.len, SC_CONTACT_NJETS);
    return variant(variant_isa)(&S, prm, out);
}
