/*
 * sc_cloud.c - packing an oriented point cloud into the kernels' layout
 * (sc_cloud_internal.h), with its group boxes or its spatial index (sc_tree.c).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sc_tree_internal.h"

/* after the header: the index, or the group boxes (8 doubles per group of SC_PAD
   samples: npad in all) */
static ptrdiff_t index_size(int D, ptrdiff_t n)
{
    if (sc__tree_leaves(n) == 0) {
        return sc__cloud_group_boxed(n) ? sc__padded(n) : 0;
    }
    return sc__tree_size(D, n);
}

/* each group of SC_PAD samples' box and largest log a over its samples (not the padding,
   whose log a is -inf): lo[3], hi[3], max log a, 0 (2D: lo[2] = hi[2] = 0); a group of
   padding only, none in a packed cloud, would get an empty box at 0 and -inf.  Read by
   the query-lane form of the kernel (sc_ssdf_kernel.h, live_groups) */
static void group_boxes(int D, ptrdiff_t npad, double *buf)
{
    const double *LA = buf + (2 * D + 1) * npad;
    double *grp = buf + (3 * D + 3) * npad + SC_PAD;
    ptrdiff_t g, i;
    int a;
    for (g = 0; g < npad / SC_PAD; g++) {
        double *gb = grp + g * 8;
        for (a = 0; a < 3; a++) {
            gb[a] = a < D ? INFINITY : 0.0;
            gb[3 + a] = a < D ? -INFINITY : 0.0;
        }
        gb[6] = -INFINITY;
        gb[7] = 0.0;
        for (i = g * SC_PAD; i < (g + 1) * SC_PAD; i++) {
            if (LA[i] == -INFINITY) {
                continue;
            }
            for (a = 0; a < D; a++) {
                const double p = buf[a * npad + i];
                gb[a] = p < gb[a] ? p : gb[a];
                gb[3 + a] = p > gb[3 + a] ? p : gb[3 + a];
            }
            gb[6] = LA[i] > gb[6] ? LA[i] : gb[6];
        }
        if (gb[6] == -INFINITY) {
            for (a = 0; a < 6; a++) {
                gb[a] = 0.0;
            }
        }
    }
}

ptrdiff_t sc_cloud_packed_size(int dim, ptrdiff_t n)
{
    if ((dim != 2 && dim != 3) || n < 1 || n > PTRDIFF_MAX / 64 / (3 * dim + 4)) {
        return -1;
    }
    return (3 * dim + 3) * sc__padded(n) + SC_PAD + index_size(dim, n);
}

int sc_cloud_pack(const sc_cloud *c, double *buf, sc_packed_cloud *pc)
{
    ptrdiff_t i, npad;
    int D, k;
    double *M, *LA, *Q, *QQ, *hdr, lo[3], hi[3], rho2 = 0.0;

    if (c == NULL || buf == NULL || c->p == NULL || c->nrm == NULL ||
        sc_cloud_packed_size(c->dim, c->n) < 0) {
        return SC_EINVAL;
    }
    D = c->dim;
    npad = sc__padded(c->n);
    M = buf + 2 * D * npad;
    LA = M + npad;
    Q = LA + npad;
    QQ = Q + D * npad;
    hdr = QQ + npad;
    for (i = 0; i < c->n; i++) {
        double m = 0.0, a = c->wts ? c->wts[i] : 1.0;
        if (!isfinite(a)) {
            return SC_ENONFINITE;
        }
        if (!(a > 0.0)) {
            return SC_EINVAL;
        }
        for (k = 0; k < D; k++) {
            double p = c->p[i * D + k], nk = c->nrm[i * D + k];
            if (!isfinite(p) || !isfinite(nk)) {
                return SC_ENONFINITE;
            }
            buf[k * npad + i] = p;
            buf[(D + k) * npad + i] = nk;
            m += nk * p;
        }
        M[i] = m;
        LA[i] = log(a);
    }
    /* c0 = bounding-box centre; q_i = p_i - c0; rho = max |q_i| */
    for (k = 0; k < D; k++) {
        lo[k] = hi[k] = c->p[k];
        for (i = 1; i < c->n; i++) {
            double p = c->p[i * D + k];
            lo[k] = p < lo[k] ? p : lo[k];
            hi[k] = p > hi[k] ? p : hi[k];
        }
        hdr[k] = 0.5 * (lo[k] + hi[k]);
    }
    for (i = 0; i < c->n; i++) {
        double qq = 0.0;
        for (k = 0; k < D; k++) {
            double q = c->p[i * D + k] - hdr[k];
            Q[k * npad + i] = q;
            qq += q * q;
        }
        QQ[i] = qq;
        rho2 = qq > rho2 ? qq : rho2;
    }
    for (k = D; k < SC_PAD; k++) {
        hdr[k] = 0.0;
    }
    hdr[D] = sqrt(rho2);
    for (i = c->n; i < npad; i++) {
        for (k = 0; k < 2 * D; k++) {
            buf[k * npad + i] = 0.0;
        }
        for (k = 0; k < D; k++) {
            Q[k * npad + i] = 0.0;
        }
        M[i] = QQ[i] = 0.0;
        LA[i] = -INFINITY;
    }
    if (sc__tree_leaves(c->n) > 0) {
        sc__tree_build(c, buf, npad);
    } else if (sc__cloud_group_boxed(c->n)) {
        group_boxes(D, npad, buf);
    }
    if (pc) {
        pc->dim = D;
        pc->n = c->n;
        pc->npad = npad;
        pc->data = buf;
    }
    return SC_OK;
}

int sc_cloud_view(int dim, ptrdiff_t n, const double *buf, sc_packed_cloud *pc)
{
    if (buf == NULL || pc == NULL || sc_cloud_packed_size(dim, n) < 0) {
        return SC_EINVAL;
    }
    pc->dim = dim;
    pc->n = n;
    pc->npad = sc__padded(n);
    pc->data = buf;
    return SC_OK;
}
