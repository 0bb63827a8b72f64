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

/* whether a cloud of n samples carries group boxes (no index; a single sample is a
 * half-space, evaluated in closed form): then the query-lane kernel evaluates it */
static inline int sc__cloud_group_boxed(ptrdiff_t n)
{
    return n >= 2 && n < SC_TREE_MIN;
}

#endif /* SC_CLOUD_INTERNAL_H */
