/*
 * sc_cloud_internal.h - the packed cloud layout that every kernel reads (internal).
 *
 * A packed cloud (sc_cloud_pack) is a structure of arrays: SC_CLOUD_NARR(D) = 3 D + 3
 * arrays of npad doubles each (npad = n rounded up to a multiple of SC_PAD), in this
 * order: p (D arrays), n (D), m = n.p, log a, q = p - c0 (D), |q|^2; then a header of
 * SC_PAD doubles: c0 (D; the bounding-box centre), then rho = max |q|.  Padding samples
 * have p = n = m = q = 0 and log a = -inf, so they get exactly zero weight.  q and |q|^2
 * serve far queries (sc_ssdf_kernel.h, pass 1).
 *
 * After the header comes one of:
 * - clouds of 2 to SC_TREE_MIN - 1 samples: the boxes of their groups of SC_PAD samples,
 *   per group lo[3], hi[3] (over its samples, not the padding), the largest log a and 0,
 *   npad doubles in all (the query-lane kernel's group bounds);
 * - clouds of n >= SC_TREE_MIN samples: a spatial index (sc_tree_internal.h);
 * - a single sample (a half-space, evaluated in closed form): nothing.
 */
#ifndef SC_CLOUD_INTERNAL_H
#define SC_CLOUD_INTERNAL_H

#include <math.h>

#include "sc_cloud.h"

/* Largest SIMD width in doubles: packed arrays are padded to a multiple, and groups of
 * SC_PAD samples are the kernels' unit of skipping whatever the vector width (so every ISA
 * skips the same samples). */
#define SC_PAD 8

/* clouds of at least SC_TREE_MIN samples get a spatial index */
#define SC_TREE_MIN 256

/* the arrays of the layout, by index (each npad doubles; or, in an index's leaf blocks,
 * SC_TREE_LEAF) */
#define SC_CLOUD_P(a) (a)                    /* coordinate a of p */
#define SC_CLOUD_N(D, a) ((D) + (a))         /* coordinate a of the normal */
#define SC_CLOUD_M(D) (2 * (D))              /* m = n.p */
#define SC_CLOUD_LA(D) (2 * (D) + 1)         /* log a */
#define SC_CLOUD_Q(D, a) (2 * (D) + 2 + (a)) /* coordinate a of q = p - c0 */
#define SC_CLOUD_QQ(D) (3 * (D) + 2)         /* |q|^2 */
#define SC_CLOUD_NARR(D) (3 * (D) + 3)       /* arrays in all */

/* n rounded up to a multiple of SC_PAD */
static inline ptrdiff_t sc__padded(ptrdiff_t n)
{
    return (n + SC_PAD - 1) / SC_PAD * SC_PAD;
}

/* array a of a packed cloud */
static inline const double *sc__cloud_array(const sc_packed_cloud *pc, int a)
{
    return pc->data + (ptrdiff_t)a * pc->npad;
}

/* the header: c0[dim], then rho */
static inline const double *sc__cloud_header(const sc_packed_cloud *pc)
{
    return sc__cloud_array(pc, SC_CLOUD_NARR(pc->dim));
}

/* the cloud's radius about its frame's origin, |c0| + rho (its bounding sphere's): the
   largest lever arm of its samples, at most SC_COORD_MAX in a valid cloud */
static inline double sc__cloud_radius(const sc_packed_cloud *pc)
{
    const double *h = sc__cloud_header(pc);
    double c2 = h[0] * h[0];
    int a;
    for (a = 1; a < pc->dim; a++) {
        c2 += h[a] * h[a];
    }
    return sqrt(c2) + h[pc->dim];
}

/* SC_OK if a finite query x of the cloud is in the valid range (docs/method.md, "Valid
   ranges"): every |x_a| <= SC_COORD_MAX and its reach (|x - c0| + rho) rho at most
   SC_REACH_MAX eps; SC_ERANGE otherwise.  Python's checks (softcontact/ssdf.py,
   _check_queries) do the same arithmetic. */
static inline int sc__query_check(const sc_packed_cloud *pc, double eps, const double *x)
{
    const double *h = sc__cloud_header(pc);
    double e = x[0] - h[0], e2 = e * e;
    int a;
    for (a = 0; a < pc->dim; a++) {
        if (!(fabs(x[a]) <= SC_COORD_MAX)) {
            return SC_ERANGE;
        }
    }
    for (a = 1; a < pc->dim; a++) {
        e = x[a] - h[a];
        e2 += e * e;
    }
    return (sqrt(e2) + h[pc->dim]) * h[pc->dim] <= SC_REACH_MAX * eps ? SC_OK : SC_ERANGE;
}

/* SC_OK if clouds a and b, their frames' origins at ta and tb (D numbers each), are in
   the valid range as a pair: each cloud's radius about its origin r = |c0| + rho at most
   SC_COORD_MAX, and within each other's reach, (d + r_a + r_b) rho <= SC_REACH_MAX eps for
   the rho of both with d = |ta - tb|, which bounds the reach of every sample of either
   posed in the other's frame (|y - c0| <= d + r_a + |c0_b|); SC_ERANGE otherwise.
   Python's checks (softcontact/contact.py, _check_pair_reach; Model._out_of_range) do the
   same arithmetic. */
static inline int sc__pair_reach_check(int D, const sc_packed_cloud *a, const double *ta,
                                       const sc_packed_cloud *b, const double *tb, double eps)
{
    const double lim = SC_REACH_MAX * eps, ra = sc__cloud_radius(a), rb = sc__cloud_radius(b);
    double d2 = 0.0, s;
    int k;
    if (!(ra <= SC_COORD_MAX && rb <= SC_COORD_MAX)) {
        return SC_ERANGE;
    }
    for (k = 0; k < D; k++) {
        const double e = ta[k] - tb[k];
        d2 += e * e;
    }
    s = sqrt(d2) + ra + rb;
    return s * sc__cloud_header(a)[D] <= lim && s * sc__cloud_header(b)[D] <= lim ? SC_OK
                                                                                  : SC_ERANGE;
}

/* whether a cloud of n samples carries group boxes (no index; a single sample is a
 * half-space, evaluated in closed form): then the query-lane kernel evaluates it */
static inline int sc__cloud_group_boxed(ptrdiff_t n)
{
    return n >= 2 && n < SC_TREE_MIN;
}

#endif /* SC_CLOUD_INTERNAL_H */
