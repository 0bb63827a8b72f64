/*
 * sc_separation.c - separation field and its pose derivatives (see sc_separation.h).
 *
 * For a sample p of the owner O (pose R_O, t_O) against the other body K (R_K, t_K):
 *   y = Exp(dth_K)^T R_K^T (R_O Exp(dth_O) p + t_O + dt_O - t_K - dt_K),  Phi = phi_K(y).
 * With g = grad phi_K(y), H = hess phi_K(y):
 *   dPhi/dq = g^T Y1,   d2Phi/dq2 = Y1^T H Y1 + sum_c g_c Y2_c,
 * Y1 = dy/dq and Y2 = d2y/dq2 the first and second derivatives of y at zero perturbation.
 * 3D, with M = R_K^T R_O, [v]x the cross-product matrix and E_a = [e_a]x:
 *   Y1 = [ R_K^T | -M [p]x | -R_K^T | [y]x ]                      (blocks t_O, th_O, t_K, th_K)
 *   Y2(th_O a, th_O b) = M (E_a E_b + E_b E_a) p / 2,  Y2(th_K a, th_K b) = (E_a E_b + E_b E_a) y /
 * 2, Y2(th_K a, t_O b) = -E_a R_K^T e_b,  Y2(th_K a, th_O b) = -E_a M E_b p, Y2(th_K a, t_K b) =
 * E_a R_K^T e_b,  all other blocks zero. 2D, with J the rotation by +90 degrees (J^2 = -I): Y1 = [
 * R_K^T | M J p | -R_K^T | -J y ], Y2(th_O, th_O) = -M p,  Y2(th_K, th_K) = -y,  Y2(th_K, t_O b) =
 * -J R_K^T e_b, Y2(th_K, th_O) = -J M J p,  Y2(th_K, t_K b) = J R_K^T e_b.
 */
#include <math.h>
#include <string.h>

#include "sc_contact_internal.h"
#include "sc_rotation.h"

ptrdiff_t sc_separation_workspace_size(const sc_packed_cloud *a, const sc_packed_cloud *b,
                                       int nthreads)
{
    ptrdiff_t D, n, npad;
    if (a == NULL || b == NULL || nthreads < 1) {
        return 0;
    }
    D = a->dim;
    n = a->n + b->n;
    npad = sc__ssdf_workspace_pair(a, b);
    return n * (2 * D + D * D) + (ptrdiff_t)nthreads * npad;
}

/* the cross product c = u x v */
static void cross3(const double u[3], const double v[3], double c[3])
{
    c[0] = u[1] * v[2] - u[2] * v[1];
    c[1] = u[2] * v[0] - u[0] * v[2];
    c[2] = u[0] * v[1] - u[1] * v[0];
}

/* ---- first and second derivatives of one sample ---- */

/* M = R_K^T R_O (the same for all of an owner's samples) */
static void rel_rotation(int D, const double *RK, const double *RO, double *M)
{
    int r, c, j;
    for (r = 0; r < D; r++) {
        for (c = 0; c < D; c++) {
            double s = 0.0;
            for (j = 0; j < D; j++) {
                s += RK[j * D + r] * RO[j * D + c];
            }
            M[r * D + c] = s;
        }
    }
}

/* Y1 (D x nq) and g.Y2 (nq x nq, symmetric; skipped when gY2 is NULL) for one sample;
 * see the file comment.  RK: K's rotation, M = R_K^T R_O (rel_rotation); p: sample in
 * O's frame; y: it in K's frame; g: gradient there; oO, oK: column offsets of O's and
 * K's tangent blocks.  Every entry of Y1 is written below (translation and rotation
 * blocks of both bodies), so it is not cleared first. */
static inline void sample_jacobians(const int D, const double *RK, const double *M, const double *p,
                                    const double *y, const double *g, int oO, int oK, double *Y1,
                                    double *gY2)
{
    const int nv = D == 2 ? 3 : 6, nq = 2 * nv;
    int r, c, a, b;

    if (gY2) {
        memset(gY2, 0, sizeof(double) * (size_t)(nq * nq));
    }
    /* translation blocks: R_K^T and -R_K^T */
    for (r = 0; r < D; r++) {
        for (c = 0; c < D; c++) {
            Y1[r * nq + oO + c] = RK[c * D + r];
            Y1[r * nq + oK + c] = -RK[c * D + r];
        }
    }
    if (D == 2) {
        /* J v = (-v1, v0) */
        double Jp[2] = {-p[1], p[0]}, MJp[2], Mp[2], JMJp[2], gJc;
        MJp[0] = M[0] * Jp[0] + M[1] * Jp[1];
        MJp[1] = M[2] * Jp[0] + M[3] * Jp[1];
        Mp[0] = M[0] * p[0] + M[1] * p[1];
        Mp[1] = M[2] * p[0] + M[3] * p[1];
        JMJp[0] = -MJp[1];
        JMJp[1] = MJp[0];
        Y1[0 * nq + oO + 2] = MJp[0];
        Y1[1 * nq + oO + 2] = MJp[1];
        Y1[0 * nq + oK + 2] = y[1]; /* -J y = (y1, -y0) */
        Y1[1 * nq + oK + 2] = -y[0];
        if (!gY2) {
            return;
        }
        gY2[(oO + 2) * nq + oO + 2] = -(g[0] * Mp[0] + g[1] * Mp[1]);
        gY2[(oK + 2) * nq + oK + 2] = -(g[0] * y[0] + g[1] * y[1]);
        for (b = 0; b < 2; b++) {
            /* c_b = R_K^T e_b; g.(J c_b) = -g0 c_b1 + g1 c_b0 */
            double cb0 = RK[b * 2 + 0], cb1 = RK[b * 2 + 1];
            gJc = -g[0] * cb1 + g[1] * cb0;
            gY2[(oK + 2) * nq + oO + b] = gY2[(oO + b) * nq + oK + 2] = -gJc;
            gY2[(oK + 2) * nq + oK + b] = gY2[(oK + b) * nq + oK + 2] = gJc;
        }
        gY2[(oK + 2) * nq + oO + 2] = gY2[(oO + 2) * nq + oK + 2] =
            -(g[0] * JMJp[0] + g[1] * JMJp[1]);
        return;
    }
    /* rotation blocks: -M [p]x (column b: M (e_b x p)) and [y]x (column b: -(e_b x y)) */
    for (b = 0; b < 3; b++) {
        double e[3] = {0.0, 0.0, 0.0}, ep[3], ey[3];
        e[b] = 1.0;
        cross3(e, p, ep);
        cross3(e, y, ey);
        for (r = 0; r < 3; r++) {
            Y1[r * nq + oO + 3 + b] =
                M[r * 3 + 0] * ep[0] + M[r * 3 + 1] * ep[1] + M[r * 3 + 2] * ep[2];
            Y1[r * nq + oK + 3 + b] = -ey[r];
        }
    }
    if (!gY2) {
        return;
    }
    {
        /* u = M^T g; th_O th_O: (u_b p_a + u_a p_b)/2 - (u.p) delta_ab; same for th_K with g, y */
        double u[3], up, gy;
        for (a = 0; a < 3; a++) {
            u[a] = M[0 * 3 + a] * g[0] + M[1 * 3 + a] * g[1] + M[2 * 3 + a] * g[2];
        }
        up = u[0] * p[0] + u[1] * p[1] + u[2] * p[2];
        gy = g[0] * y[0] + g[1] * y[1] + g[2] * y[2];
        for (a = 0; a < 3; a++) {
            for (b = 0; b < 3; b++) {
                gY2[(oO + 3 + a) * nq + oO + 3 + b] =
                    0.5 * (u[b] * p[a] + u[a] * p[b]) - (a == b ? up : 0.0);
                gY2[(oK + 3 + a) * nq + oK + 3 + b] =
                    0.5 * (g[b] * y[a] + g[a] * y[b]) - (a == b ? gy : 0.0);
            }
        }
        for (b = 0; b < 3; b++) {
            /* c_b = R_K^T e_b (row b of R_K); v_b = M (e_b x p) */
            double cb[3] = {RK[b * 3 + 0], RK[b * 3 + 1], RK[b * 3 + 2]}, e[3] = {0, 0, 0};
            double ep[3], vb[3], cxg[3], vxg[3];
            e[b] = 1.0;
            cross3(e, p, ep);
            for (r = 0; r < 3; r++) {
                vb[r] = M[r * 3 + 0] * ep[0] + M[r * 3 + 1] * ep[1] + M[r * 3 + 2] * ep[2];
            }
            cross3(cb, g, cxg);
            cross3(vb, g, vxg);
            for (a = 0; a < 3; a++) {
                /* g.(-e_a x c) = -(c x g)_a; g.(e_a x c) = (c x g)_a */
                gY2[(oK + 3 + a) * nq + oO + b] = gY2[(oO + b) * nq + oK + 3 + a] = -cxg[a];
                gY2[(oK + 3 + a) * nq + oO + 3 + b] = gY2[(oO + 3 + b) * nq + oK + 3 + a] = -vxg[a];
                gY2[(oK + 3 + a) * nq + oK + b] = gY2[(oK + b) * nq + oK + 3 + a] = cxg[a];
            }
        }
    }
}

/* ---- posing ---- */

/* one side's samples; D a constant in each copy (inlined below), so the 2x2 / 3x3 loops
   unroll: the same operations in the same order as a run-time D, a third of the
   instructions (push-T step: ~20k of ~450k) */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void pose_side(const int D, const sc_packed_cloud *own, const double *RO,
                             const double *tO, const double *RK, const double *tK, ptrdiff_t off,
                             double *x_w, double *y)
{
    ptrdiff_t k;
    for (k = 0; k < own->n; k++) {
        double p[3], x[3], r;
        int c, i2;
        for (c = 0; c < D; c++) {
            p[c] = sc__cloud_array(own, SC_CLOUD_P(c))[k];
        }
        for (c = 0; c < D; c++) {
            x[c] = tO[c];
            for (i2 = 0; i2 < D; i2++) {
                x[c] += RO[c * D + i2] * p[i2];
            }
            if (x_w) {
                x_w[(off + k) * D + c] = x[c];
            }
        }
        /* y = R_K^T (x - t_K) */
        for (c = 0; c < D; c++) {
            r = 0.0;
            for (i2 = 0; i2 < D; i2++) {
                r += RK[i2 * D + c] * (x[i2] - tK[i2]);
            }
            y[(off + k) * D + c] = r;
        }
    }
}

void sc__pose_samples(const sc_packed_cloud *a, const double *Ra, const double *ta,
                      const sc_packed_cloud *b, const double *Rb, const double *tb, double *x_w,
                      double *y)
{
    if (a->dim == 2) {
        pose_side(2, a, Ra, ta, Rb, tb, 0, x_w, y);
        pose_side(2, b, Rb, tb, Ra, ta, a->n, x_w, y);
    } else {
        pose_side(3, a, Ra, ta, Rb, tb, 0, x_w, y);
        pose_side(3, b, Rb, tb, Ra, ta, a->n, x_w, y);
    }
}

/* sc_separation's world gradients and pose derivatives, row by row (D constant in each
   call: the small loops unroll); Ma = R_B^T R_A, Mb = R_A^T R_B */
static inline void separation_rows(const int D, const sc_packed_cloud *a, const sc_packed_cloud *b,
                                   const double *Ra, const double *Rb, const double *Ma,
                                   const double *Mb, const double *y, const double *g,
                                   const double *h, double *g_w, double *dphi_dq, double *d2phi_dq2)
{
    const int nv = D == 2 ? 3 : 6, nq = 2 * nv;
    const ptrdiff_t I = a->n, n = a->n + b->n;
    ptrdiff_t k;
    for (k = 0; k < n; k++) {
        const int mine = k < I; /* owner is A */
        const sc_packed_cloud *own = mine ? a : b;
        const double *RK = mine ? Rb : Ra, *M = mine ? Ma : Mb;
        const double *gk = g + k * D, *yk = y + k * D, *hk = h + k * D * D;
        const ptrdiff_t kk = mine ? k : k - I;
        const int oO = mine ? 0 : nv, oK = mine ? nv : 0;
        double p[3], Y1[3 * 12], gY2[12 * 12];
        int r, c, i2, j2;
        for (c = 0; c < D; c++) {
            p[c] = sc__cloud_array(own, SC_CLOUD_P(c))[kk];
        }
        if (g_w) {
            for (r = 0; r < D; r++) {
                double s = 0.0;
                for (c = 0; c < D; c++) {
                    s += RK[r * D + c] * gk[c];
                }
                g_w[k * D + r] = s;
            }
        }
        if (!dphi_dq && !d2phi_dq2) {
            continue;
        }
        sample_jacobians(D, RK, M, p, yk, gk, oO, oK, Y1, d2phi_dq2 ? gY2 : NULL);
        if (dphi_dq) {
            for (c = 0; c < nq; c++) {
                double s = 0.0;
                for (r = 0; r < D; r++) {
                    s += gk[r] * Y1[r * nq + c];
                }
                dphi_dq[k * nq + c] = s;
            }
        }
        if (d2phi_dq2) {
            double HY[3 * 12];
            /* HY = H Y1; d2 = Y1^T HY + g.Y2, upper triangle then mirrored */
            for (r = 0; r < D; r++) {
                for (c = 0; c < nq; c++) {
                    double s = 0.0;
                    for (i2 = 0; i2 < D; i2++) {
                        s += hk[r * D + i2] * Y1[i2 * nq + c];
                    }
                    HY[r * nq + c] = s;
                }
            }
            for (i2 = 0; i2 < nq; i2++) {
                for (j2 = i2; j2 < nq; j2++) {
                    double s = gY2[i2 * nq + j2];
                    for (r = 0; r < D; r++) {
                        s += Y1[r * nq + i2] * HY[r * nq + j2];
                    }
                    d2phi_dq2[(k * nq + i2) * nq + j2] = d2phi_dq2[(k * nq + j2) * nq + i2] = s;
                }
            }
        }
    }
}

/* ---- batch driver ---- */

int sc_separation(const sc_packed_cloud *a, const double *pose_a, const sc_packed_cloud *b,
                  const double *pose_b, double eps, const sc_options *opt, double *work,
                  const sc_separation_out *out)
{
    double Ra[9], ta[3], Rb[9], tb[3], Ma[9], Mb[9];
    double *y, *g, *h, *sw;
    int need_g, need_h;
    ptrdiff_t I, J, n;
    int D, st;

    if (a == NULL || b == NULL || pose_a == NULL || pose_b == NULL || work == NULL || out == NULL ||
        a->dim != b->dim || (a->dim != 2 && a->dim != 3) ||
        !(eps >= SC_EPS_MIN && eps <= SC_EPS_MAX)) {
        return SC_EINVAL;
    }
    D = a->dim;
    if ((st = sc__pose_check(D, pose_a)) != SC_OK || (st = sc__pose_check(D, pose_b)) != SC_OK ||
        (st = sc__pair_reach_check(D, a, pose_a, b, pose_b, eps)) != SC_OK) {
        return st;
    }
    need_g = out->g_w || out->dphi_dq || out->d2phi_dq2;
    need_h = out->d2phi_dq2 != NULL;
    I = a->n;
    J = b->n;
    n = I + J;
    y = work;
    g = y + n * D;
    h = g + n * D;
    sw = h + n * D * D;
    sc__pose_frame(D, pose_a, Ra, ta);
    sc__pose_frame(D, pose_b, Rb, tb);

    sc__pose_samples(a, Ra, ta, b, Rb, tb, out->x_w, y);
    st = sc__ssdf_run(b, eps, I, y, opt, sw, out->phi, need_g ? g : NULL, need_h ? h : NULL, NULL);
    if (st == SC_OK) {
        st = sc__ssdf_run(a, eps, J, y + I * D, opt, sw, out->phi ? out->phi + I : NULL,
                          need_g ? g + I * D : NULL, need_h ? h + I * D * D : NULL, NULL);
    }
    if (st != SC_OK || !need_g) {
        return st;
    }

    /* world gradients and pose derivatives */
    rel_rotation(D, Rb, Ra, Ma);
    rel_rotation(D, Ra, Rb, Mb);
    if (D == 2) {
        separation_rows(2, a, b, Ra, Rb, Ma, Mb, y, g, h, out->g_w, out->dphi_dq, out->d2phi_dq2);
    } else {
        separation_rows(3, a, b, Ra, Rb, Ma, Mb, y, g, h, out->g_w, out->dphi_dq, out->d2phi_dq2);
    }
    return SC_OK;
}
