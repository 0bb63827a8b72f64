/*
 * sc_ilqr.c - the backward Riccati pass with box-constrained controls and the closed-loop
 * forward rollout of iLQR / DDP (see sc_ilqr.h).  Small dense linear algebra: Cholesky
 * factors, cyclic Jacobi eigendecompositions (DDP's curvature fixes), a projected-Newton
 * box QP per stage.
 */
#include <math.h>
#include <string.h>

#include "sc_ilqr.h"
#include "sc_step.h"

#define ARMIJO 1e-4
#define QP_ITERS 100

/* ---- small dense helpers (row-major) ------------------------------------------------ */

/* Cholesky factor L (lower, n x n, row-major) of the symmetric a; 0 if a is not
 * positive definite (a non-positive or NaN pivot). */
static int cholesky(int n, const double *a, double *L)
{
    int i, j, k;
    memset(L, 0, sizeof(double) * (size_t)n * (size_t)n);
    for (j = 0; j < n; j++) {
        double d = a[j * n + j];
        for (k = 0; k < j; k++) {
            d -= L[j * n + k] * L[j * n + k];
        }
        if (!(d > 0.0)) {
            return 0;
        }
        d = sqrt(d);
        L[j * n + j] = d;
        for (i = j + 1; i < n; i++) {
            double s = a[i * n + j];
            for (k = 0; k < j; k++) {
                s -= L[i * n + k] * L[j * n + k];
            }
            L[i * n + j] = s / d;
        }
    }
    return 1;
}

/* x = (L L')^-1 b in place */
static void chol_solve(int n, const double *L, double *x)
{
    int i, k;
    for (i = 0; i < n; i++) {
        double s = x[i];
        for (k = 0; k < i; k++) {
            s -= L[i * n + k] * x[k];
        }
        x[i] = s / L[i * n + i];
    }
    for (i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (k = i + 1; k < n; k++) {
            s -= L[k * n + i] * x[k];
        }
        x[i] = s / L[i * n + i];
    }
}

/* eigenvalues w and eigenvectors (columns of V) of the symmetric a (n x n, destroyed),
 * by cyclic Jacobi rotations until the off-diagonal part is negligible */
static void sym_eig(int n, double *a, double *w, double *V)
{
    int i, j, k, sweep;
    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
            V[i * n + j] = i == j ? 1.0 : 0.0;
        }
    }
    for (sweep = 0; sweep < 100; sweep++) {
        double off = 0.0, diag = 0.0;
        for (i = 0; i < n; i++) {
            diag += a[i * n + i] * a[i * n + i];
            for (j = i + 1; j < n; j++) {
                off += a[i * n + j] * a[i * n + j];
            }
        }
        if (!(off > 1e-30 * diag) || !isfinite(off)) {
            break;
        }
        for (i = 0; i < n - 1; i++) {
            for (j = i + 1; j < n; j++) {
                double apq = a[i * n + j], theta, t, c, s;
                if (apq == 0.0) {
                    continue;
                }
                theta = (a[j * n + j] - a[i * n + i]) / (2.0 * apq);
                t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                c = 1.0 / sqrt(t * t + 1.0);
                s = t * c;
                for (k = 0; k < n; k++) { /* columns i, j */
                    double aki = a[k * n + i], akj = a[k * n + j];
                    a[k * n + i] = c * aki - s * akj;
                    a[k * n + j] = s * aki + c * akj;
                }
                for (k = 0; k < n; k++) { /* rows i, j */
                    double aik = a[i * n + k], ajk = a[j * n + k];
                    a[i * n + k] = c * aik - s * ajk;
                    a[j * n + k] = s * aik + c * ajk;
                }
                for (k = 0; k < n; k++) {
                    double vki = V[k * n + i], vkj = V[k * n + j];
                    V[k * n + i] = c * vki - s * vkj;
                    V[k * n + j] = s * vki + c * vkj;
                }
            }
        }
    }
    for (i = 0; i < n; i++) {
        w[i] = a[i * n + i];
    }
}

/* out = V diag(w) V' (n x n) */
static void eig_rebuild(int n, const double *V, const double *w, double *out)
{
    int i, j, k;
    for (i = 0; i < n; i++) {
        for (j = i; j < n; j++) {
            double s = 0.0;
            for (k = 0; k < n; k++) {
                s += V[i * n + k] * w[k] * V[j * n + k];
            }
            out[i * n + j] = out[j * n + i] = s;
        }
    }
}

/* DDP's fixes of a symmetric matrix a (n x n) in place, with scratch 2 n^2 + n:
 * floor_rel > 0: eigenvalues below floor_rel times the largest magnitude replaced by
 * max(|w|, that floor); floor_rel == 0: negative eigenvalues replaced by 0.  a is left
 * as it is when no eigenvalue needs the change. */
static void eig_fix(int n, double *a, double floor_rel, double *scratch)
{
    double *c = scratch, *V = c + n * n, *w = V + n * n, big = 0.0, lo, floor;
    int i;
    memcpy(c, a, sizeof(double) * (size_t)n * (size_t)n);
    sym_eig(n, c, w, V);
    lo = w[0];
    for (i = 0; i < n; i++) {
        big = fmax(big, fabs(w[i]));
        lo = fmin(lo, w[i]);
    }
    if (floor_rel > 0.0) {
        floor = floor_rel * fmax(big, 1e-300);
        if (!(lo < floor)) {
            return;
        }
        for (i = 0; i < n; i++) {
            w[i] = fmax(fabs(w[i]), floor);
        }
    } else {
        if (!(lo < 0.0)) {
            return;
        }
        for (i = 0; i < n; i++) {
            w[i] = fmax(w[i], 0.0);
        }
    }
    eig_rebuild(n, V, w, a);
}

static double quad(int n, const double *H, const double *g, const double *x)
{
    double f = 0.0;
    int i, j;
    for (i = 0; i < n; i++) {
        double hx = 0.0;
        for (j = 0; j < n; j++) {
            hx += H[i * n + j] * x[j];
        }
        f += g[i] * x[i] + 0.5 * x[i] * hx;
    }
    return f;
}

static void qp_grad(int n, const double *H, const double *g, const double *x, double *grad)
{
    int i, j;
    for (i = 0; i < n; i++) {
        double s = g[i];
        for (j = 0; j < n; j++) {
            s += H[i * n + j] * x[j];
        }
        grad[i] = s;
    }
}

/* the free set at x (controls not held at a bound by the gradient): their indices in idx
 * (as doubles: the scratch is all doubles); returns its size */
static int free_set(int n, const double *x, const double *grad, const double *lo, const double *hi,
                    double *idx)
{
    int i, nf = 0;
    for (i = 0; i < n; i++) {
        if (!((x[i] <= lo[i] && grad[i] > 0.0) || (x[i] >= hi[i] && grad[i] < 0.0))) {
            idx[nf++] = (double)i;
        }
    }
    return nf;
}

/* Cholesky factor of H on the free set idx (nf), in L (nf x nf); 0 if not definite */
static int free_factor(int n, const double *H, const double *idx, int nf, double *Hf, double *L)
{
    int i, j;
    for (i = 0; i < nf; i++) {
        for (j = 0; j < nf; j++) {
            Hf[i * nf + j] = H[(int)idx[i] * n + (int)idx[j]];
        }
    }
    return cholesky(nf, Hf, L);
}

static double clip(double v, double lo, double hi)
{
    return fmin(fmax(v, lo), hi);
}

/* min g.x + x.H.x / 2 within [lo, hi] by projected Newton from x = clip(0): x, the free
 * set idx (returned size, -1 when H is not definite on it) and its factor L.  Scratch:
 * 4 n + 2 n^2 doubles. */
static int box_qp(int n, const double *H, const double *g, const double *lo, const double *hi,
                  double *x, double *idx, double *L, double *scratch)
{
    double *grad = scratch, *d = grad + n, *xn = d + n, *rhs = xn + n, *Hf = rhs + n;
    double f, fn = 0.0;
    int i, it, nf;
    for (i = 0; i < n; i++) {
        x[i] = clip(0.0, lo[i], hi[i]);
    }
    f = quad(n, H, g, x);
    for (it = 0; it < QP_ITERS; it++) {
        double dmax = 0.0, xmax = 0.0, step, slope;
        int ok = 0;
        qp_grad(n, H, g, x, grad);
        nf = free_set(n, x, grad, lo, hi, idx);
        if (nf == 0) {
            return 0;
        }
        if (!free_factor(n, H, idx, nf, Hf, L)) {
            return -1;
        }
        for (i = 0; i < nf; i++) {
            rhs[i] = grad[(int)idx[i]];
        }
        chol_solve(nf, L, rhs);
        memset(d, 0, sizeof(double) * (size_t)n);
        for (i = 0; i < nf; i++) {
            d[(int)idx[i]] = -rhs[i];
        }
        for (i = 0; i < n; i++) {
            dmax = fmax(dmax, fabs(d[i]));
            xmax = fmax(xmax, fabs(x[i]));
        }
        if (dmax < 1e-13 * (1.0 + xmax)) {
            break;
        }
        for (step = 1.0; step > 1e-10; step *= 0.5) { /* Armijo on the projected step */
            for (i = 0; i < n; i++) {
                xn[i] = clip(x[i] + step * d[i], lo[i], hi[i]);
            }
            fn = quad(n, H, g, xn);
            slope = 0.0;
            for (i = 0; i < n; i++) {
                slope += grad[i] * (xn[i] - x[i]);
            }
            if (fn <= f + ARMIJO * slope) {
                ok = 1;
                break;
            }
        }
        if (!ok) {
            break;
        }
        memcpy(x, xn, sizeof(double) * (size_t)n);
        if (f - fn <= 1e-15 * (1.0 + fabs(f))) {
            f = fn;
            break;
        }
        f = fn;
    }
    /* the final free set and its factor, for the feedback gains */
    qp_grad(n, H, g, x, grad);
    nf = free_set(n, x, grad, lo, hi, idx);
    if (nf > 0 && !free_factor(n, H, idx, nf, Hf, L)) {
        return -1;
    }
    return nf;
}

/* ---- the backward pass ---------------------------------------------------------------- */

typedef struct {
    double *Vx, *Vxx, *Qx, *Qu, *Qxx, *Qux, *Quu, *Qreg, *VA, *VB, *L, *lo, *hi, *eig, *qp;
    double *idx; /* the free controls' indices */
} backward_work;

/* the scratch's layout; returns its size in doubles (work may be NULL to size it) */
static ptrdiff_t backward_layout(int n, int nu, double *work, backward_work *w)
{
    const ptrdiff_t nn = (ptrdiff_t)n * n, uu = (ptrdiff_t)nu * nu, un = (ptrdiff_t)nu * n;
    const int big = n > nu ? n : nu;
    ptrdiff_t sizes[16], off = 0;
    double **ptrs[15];
    int i;
    ptrs[0] = &w->Vx, sizes[0] = n;
    ptrs[1] = &w->Vxx, sizes[1] = nn;
    ptrs[2] = &w->Qx, sizes[2] = n;
    ptrs[3] = &w->Qu, sizes[3] = nu;
    ptrs[4] = &w->Qxx, sizes[4] = nn;
    ptrs[5] = &w->Qux, sizes[5] = un;
    ptrs[6] = &w->Quu, sizes[6] = uu;
    ptrs[7] = &w->Qreg, sizes[7] = uu;
    ptrs[8] = &w->VA, sizes[8] = nn;
    ptrs[9] = &w->VB, sizes[9] = (ptrdiff_t)n * nu;
    ptrs[10] = &w->L, sizes[10] = uu;
    ptrs[11] = &w->lo, sizes[11] = nu;
    ptrs[12] = &w->hi, sizes[12] = nu;
    ptrs[13] = &w->eig, sizes[13] = 2 * (ptrdiff_t)big * big + big;
    ptrs[14] = &w->qp, sizes[14] = 4 * (ptrdiff_t)nu + 2 * uu + un;
    for (i = 0; i < 15; i++) {
        if (work != NULL) {
            *ptrs[i] = work + off;
        }
        off += sizes[i];
    }
    if (work != NULL) {
        w->idx = work + off;
    }
    off += nu;
    return off;
}

SC_API ptrdiff_t sc_ilqr_backward_workspace_size(int n, int nu)
{
    backward_work w;
    if (n < 1 || nu < 0) {
        return 0;
    }
    return backward_layout(n, nu, NULL, &w);
}

/* the second-order expansion Q of stage t into w (Qx, Qu, Qxx, Qux, Quu) */
static void stage_q(const sc_ilqr_expansion *e, ptrdiff_t t, backward_work *w)
{
    const int n = e->n, nu = e->nu, nz = n + nu;
    const double *A = e->A + t * n * n, *B = e->B + t * n * nu, *g = e->g + t * nz;
    const double *H = e->H + t * nz * nz;
    int a, b, i, j;
    for (a = 0; a < n; a++) {
        double s = g[a];
        for (i = 0; i < n; i++) {
            s += A[i * n + a] * w->Vx[i];
        }
        w->Qx[a] = s;
    }
    for (j = 0; j < nu; j++) {
        double s = g[n + j];
        for (i = 0; i < n; i++) {
            s += B[i * nu + j] * w->Vx[i];
        }
        w->Qu[j] = s;
    }
    for (i = 0; i < n; i++) { /* VA = Vxx A, VB = Vxx B */
        for (b = 0; b < n; b++) {
            double s = 0.0;
            for (j = 0; j < n; j++) {
                s += w->Vxx[i * n + j] * A[j * n + b];
            }
            w->VA[i * n + b] = s;
        }
        for (b = 0; b < nu; b++) {
            double s = 0.0;
            for (j = 0; j < n; j++) {
                s += w->Vxx[i * n + j] * B[j * nu + b];
            }
            w->VB[i * nu + b] = s;
        }
    }
    for (a = 0; a < n; a++) {
        for (b = 0; b < n; b++) {
            double s = H[a * nz + b];
            for (i = 0; i < n; i++) {
                s += A[i * n + a] * w->VA[i * n + b];
            }
            w->Qxx[a * n + b] = s;
        }
    }
    for (j = 0; j < nu; j++) {
        for (b = 0; b < n; b++) {
            double s = H[(n + j) * nz + b];
            for (i = 0; i < n; i++) {
                s += B[i * nu + j] * w->VA[i * n + b];
            }
            w->Qux[j * n + b] = s;
        }
        for (b = 0; b < nu; b++) {
            double s = H[(n + j) * nz + n + b];
            for (i = 0; i < n; i++) {
                s += B[i * nu + j] * w->VB[i * nu + b];
            }
            w->Quu[j * nu + b] = s;
        }
    }
    if (e->fxx != NULL) { /* DDP: + Vx . f'' */
        const double *fxx = e->fxx + t * n * n * n, *fxu = e->fxu + t * n * n * nu;
        const double *fuu = e->fuu + t * n * nu * nu;
        for (i = 0; i < n; i++) {
            const double v = w->Vx[i];
            for (a = 0; a < n * n; a++) {
                w->Qxx[a] += v * fxx[i * n * n + a];
            }
            for (a = 0; a < n; a++) {
                for (j = 0; j < nu; j++) {
                    w->Qux[j * n + a] += v * fxu[(i * n + a) * nu + j];
                }
            }
            for (a = 0; a < nu * nu; a++) {
                w->Quu[a] += v * fuu[i * nu * nu + a];
            }
        }
    }
    for (j = 0; j < nu; j++) {
        for (b = j + 1; b < nu; b++) {
            const double s = 0.5 * (w->Quu[j * nu + b] + w->Quu[b * nu + j]);
            w->Quu[j * nu + b] = w->Quu[b * nu + j] = s;
        }
    }
}

/* V from Q and the stage's policy (k, K) */
static void stage_value(int n, int nu, const double *k, const double *K, backward_work *w)
{
    double *Quk = w->qp; /* Quu k (nu), then K' Quu rows: Quu K (nu x n) */
    double *QK = Quk + nu;
    int a, b, i, j;
    for (i = 0; i < nu; i++) {
        double s = 0.0;
        for (j = 0; j < nu; j++) {
            s += w->Quu[i * nu + j] * k[j];
        }
        Quk[i] = s;
        for (b = 0; b < n; b++) {
            double q = 0.0;
            for (j = 0; j < nu; j++) {
                q += w->Quu[i * nu + j] * K[j * n + b];
            }
            QK[i * n + b] = q;
        }
    }
    for (a = 0; a < n; a++) {
        double s = w->Qx[a];
        for (i = 0; i < nu; i++) {
            s += K[i * n + a] * (Quk[i] + w->Qu[i]) + w->Qux[i * n + a] * k[i];
        }
        w->Vx[a] = s;
    }
    for (a = 0; a < n; a++) {
        for (b = 0; b < n; b++) {
            double s = w->Qxx[a * n + b];
            for (i = 0; i < nu; i++) {
                s += K[i * n + a] * (QK[i * n + b] + w->Qux[i * n + b]) +
                     w->Qux[i * n + a] * K[i * n + b];
            }
            w->Vxx[a * n + b] = s;
        }
    }
    for (a = 0; a < n; a++) {
        for (b = a + 1; b < n; b++) {
            const double s = 0.5 * (w->Vxx[a * n + b] + w->Vxx[b * n + a]);
            w->Vxx[a * n + b] = w->Vxx[b * n + a] = s;
        }
    }
}

SC_API int sc_ilqr_backward(const sc_ilqr_expansion *e, double mu, double *work,
                            sc_ilqr_policy *out)
{
    backward_work w;
    int n, nu, nz, a, b, i, j, ddp;
    ptrdiff_t t;
    if (e == NULL || out == NULL || work == NULL || e->T < 0 || e->n < 1 || e->nu < 0 ||
        e->g == NULL || e->H == NULL || (e->T > 0 && (e->A == NULL || e->B == NULL)) ||
        (e->T > 0 && e->nu > 0 && (e->U == NULL || e->lo == NULL || e->hi == NULL)) ||
        (e->T > 0 && e->nu > 0 && (out->k == NULL || out->K == NULL)) ||
        !((e->fxx == NULL) == (e->fxu == NULL) && (e->fxx == NULL) == (e->fuu == NULL))) {
        return SC_EINVAL;
    }
    if (!isfinite(mu) || mu < 0.0) {
        return isfinite(mu) ? SC_EINVAL : SC_ENONFINITE;
    }
    n = e->n, nu = e->nu, nz = n + nu, ddp = e->fxx != NULL;
    backward_layout(n, nu, work, &w);
    out->dv1 = out->dv2 = 0.0;
    out->definite = 0;
    {
        const double *g = e->g + e->T * nz, *H = e->H + e->T * nz * nz;
        for (a = 0; a < n; a++) {
            w.Vx[a] = g[a];
            for (b = 0; b < n; b++) {
                w.Vxx[a * n + b] = H[a * nz + b];
            }
        }
    }
    for (t = e->T - 1; t >= 0; t--) {
        double *k = out->k + t * nu, *K = out->K + t * nu * n;
        int nf = 0;
        stage_q(e, t, &w);
        if (ddp && nu > 0) {
            eig_fix(nu, w.Quu, 1e-6, w.eig);
        }
        for (i = 0; i < nu * nu; i++) {
            w.Qreg[i] = w.Quu[i];
        }
        for (i = 0; i < nu; i++) {
            w.Qreg[i * nu + i] += mu;
            w.lo[i] = e->lo[t * nu + i] - e->U[t * nu + i];
            w.hi[i] = e->hi[t * nu + i] - e->U[t * nu + i];
        }
        if (nu > 0) {
            nf = box_qp(nu, w.Qreg, w.Qu, w.lo, w.hi, k, w.idx, w.L, w.qp);
            if (nf < 0) {
                return SC_OK;
            }
        }
        memset(K, 0, sizeof(double) * (size_t)nu * (size_t)n);
        for (b = 0; b < n; b++) { /* K_f = -(Qreg_ff)^-1 Qux_f, column by column */
            double *col = w.qp;   /* nf */
            for (i = 0; i < nf; i++) {
                col[i] = w.Qux[(int)w.idx[i] * n + b];
            }
            chol_solve(nf, w.L, col);
            for (i = 0; i < nf; i++) {
                K[(int)w.idx[i] * n + b] = -col[i];
            }
        }
        for (i = 0; i < nu; i++) {
            double s = 0.0;
            for (j = 0; j < nu; j++) {
                s += w.Quu[i * nu + j] * k[j];
            }
            out->dv1 += k[i] * w.Qu[i];
            out->dv2 += 0.5 * k[i] * s;
        }
        stage_value(n, nu, k, K, &w);
        if (ddp) {
            eig_fix(n, w.Vxx, 0.0, w.eig);
        }
    }
    out->definite = 1;
    return SC_OK;
}

/* ---- the closed-loop forward rollout -------------------------------------------------- */

SC_API void sc_state_difference(const sc_model *m, const sc_model_sizes *s, const double *x1,
                                const double *x0, double *out)
{
    int j, i;
    for (j = 0; j < s->nmove; j++) {
        if (m->dim == 2) {
            for (i = 0; i < 3; i++) {
                out[3 * j + i] = x1[3 * j + i] - x0[3 * j + i];
            }
        } else {
            const double *p1 = x1 + 7 * j, *p0 = x0 + 7 * j, *q1 = p1 + 3, *q0 = p0 + 3;
            double w, v[3], sn, f;
            /* conj(q0) q1, Hamilton product, w first */
            w = q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3];
            v[0] = q0[0] * q1[1] - q1[0] * q0[1] - (q0[2] * q1[3] - q0[3] * q1[2]);
            v[1] = q0[0] * q1[2] - q1[0] * q0[2] - (q0[3] * q1[1] - q0[1] * q1[3]);
            v[2] = q0[0] * q1[3] - q1[0] * q0[3] - (q0[1] * q1[2] - q0[2] * q1[1]);
            if (w < 0.0) {
                w = -w, v[0] = -v[0], v[1] = -v[1], v[2] = -v[2];
            }
            sn = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            f = sn < 1e-8 ? (2.0 / w) * (1.0 - sn * sn / (3.0 * w * w)) : 2.0 * atan2(sn, w) / sn;
            for (i = 0; i < 3; i++) {
                out[6 * j + i] = p1[i] - p0[i];
                out[6 * j + 3 + i] = f * v[i];
            }
        }
    }
    for (i = 0; i < s->nv; i++) {
        out[s->nv + i] = x1[s->nq + i] - x0[s->nq + i];
    }
}

SC_API int sc_rollout_policy(const sc_model *m, ptrdiff_t T, const double *X, const double *U,
                             const double *k, const double *K, double alpha, const double *lo,
                             const double *hi, const sc_options *opt, double *work, double *Xn,
                             double *Un, ptrdiff_t *failed)
{
    sc_model_sizes s;
    sc_options o;
    sc_step_out so;
    double *dx;
    int st, nx, n, nu, i, j;
    ptrdiff_t t, r;
    if (m == NULL || X == NULL || work == NULL || Xn == NULL || failed == NULL || T < 0 ||
        sc_model_check(m, &s) != SC_OK || !isfinite(alpha)) {
        return SC_EINVAL;
    }
    nx = s.nq + s.nv, n = 2 * s.nv, nu = s.nu;
    if (T > 0 && nu > 0 &&
        (U == NULL || k == NULL || K == NULL || lo == NULL || hi == NULL || Un == NULL)) {
        return SC_EINVAL;
    }
    if ((st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    dx = work + sc_step_workspace_size(m, 0, 0, o.nthreads);
    *failed = -1;
    memcpy(Xn, X, sizeof(double) * (size_t)nx);
    memset(&so, 0, sizeof so);
    for (t = 0; t < T; t++) {
        double *u = Un + t * nu;
        sc_state_difference(m, &s, Xn + t * nx, X + t * nx, dx);
        for (i = 0; i < nu; i++) {
            double v = U[t * nu + i] + alpha * k[t * nu + i];
            for (j = 0; j < n; j++) {
                v += K[(t * nu + i) * n + j] * dx[j];
            }
            u[i] = clip(v, lo[t * nu + i], hi[t * nu + i]);
        }
        so.x_next = Xn + (t + 1) * nx;
        st = SC_OK;
        for (i = 0; i < nu; i++) {
            if (!isfinite(u[i])) {
                st = SC_ENONFINITE;
            }
        }
        if (st == SC_OK) {
            st = sc_step(m, Xn + t * nx, nu > 0 ? u : NULL, 0, 0, &o, work, &so);
        }
        if (st != SC_OK) {
            *failed = t;
            for (r = (t + 1) * nx; r < (T + 1) * nx; r++) {
                Xn[r] = NAN;
            }
            for (r = (t + 1) * nu; r < T * nu; r++) {
                Un[r] = NAN;
            }
            return st;
        }
    }
    return SC_OK;
}
