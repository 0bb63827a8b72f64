/*
 * sc_tree_internal.h - the spatial index of a packed cloud and its walks (internal).
 *
 * Clouds of n >= SC_TREE_MIN samples carry, after the packed layout's header
 * (sc_cloud_internal.h), an index built once by sc_cloud_pack in the body frame: the
 * samples split by recursive cuts at the median of the longest axis into the leaves of a
 * complete binary tree in heap order, nleaf = 2^L leaves of SC_TREE_LEAF slots, L the
 * smallest depth that fits; leaf j holds the sorted samples [j SC_TREE_LEAF, (j + 1)
 * SC_TREE_LEAF) (full leaves first, then one partial, then empty ones), within the leaf
 * split by the same cuts into its groups of SC_PAD (compact groups, the kernel's unit of
 * skipping).  Layout: 2 nleaf nodes of SC_TREE_NODE(D) = (lo[D], hi[D], max log a) (node 1
 * the root, nleaf + j leaf j; node 0 holds the smallest log a); then the samples again,
 * leaf by leaf, each leaf a block of the SC_CLOUD_NARR(D) arrays of SC_TREE_LEAF slots
 * (SC_LEAF_BLOCK; padding slots as in the main arrays); then a copy of the SC_PAD header.
 *
 * The walks list, for a query or a group of nearby queries, the leaves that may hold a
 * sample the SSDF keeps (the candidates; sc_ssdf.c, "Pruning", says which and why), and
 * the Morton keys order a batch of queries so that neighbours share walks and cache.
 */
#ifndef SC_TREE_INTERNAL_H
#define SC_TREE_INTERNAL_H

#include <stdint.h>

#include "sc_cloud_internal.h"

/* Slots per leaf (a multiple of SC_PAD).  A larger leaf lists more samples per query (its
   box is looser), a smaller one costs more in the walks and lists; 32 is the fastest on
   spheres of 10^3 to 10^5 samples and scattered queries.  The leaves nest (each leaf of
   32 is two of 16 of the same tree) and a query's result does not depend on the leaves
   listed, so the leaf size changes the time, never a result. */
#define SC_TREE_LEAF 32

/* doubles per node: lo[D], hi[D], max log a */
#define SC_TREE_NODE(D) (2 * (D) + 1)

/* doubles of one leaf block of an index (the packed arrays of SC_TREE_LEAF slots) */
#define SC_LEAF_BLOCK(D) (SC_CLOUD_NARR(D) * SC_TREE_LEAF)

/* candidate arrays are padded to a multiple of this (the widest vector) */
#define SC_CAND_PAD 8

/* Number of leaves of the index of a cloud of n samples (a power of two), or 0 for a
 * cloud without one. */
static inline ptrdiff_t sc__tree_leaves(ptrdiff_t n)
{
    /* the smallest power of two >= m = ceil(n / SC_TREE_LEAF): a count of leading zeros,
       since the index's parts are located from it several times per query */
    const ptrdiff_t m = (n + SC_TREE_LEAF - 1) / SC_TREE_LEAF;
    if (n < SC_TREE_MIN) {
        return 0;
    }
#if defined(__GNUC__) || defined(__clang__)
    return m <= 1 ? 1 : (ptrdiff_t)1 << (64 - __builtin_clzll((unsigned long long)(m - 1)));
#else
    {
        ptrdiff_t L = 1;
        while (L < m) {
            L *= 2;
        }
        return L;
    }
#endif
}

/* the index's parts: node array, leaf blocks, header copy */
static inline const double *sc__tree_nodes(const sc_packed_cloud *pc)
{
    return sc__cloud_header(pc) + SC_PAD;
}

static inline const double *sc__tree_blocks(const sc_packed_cloud *pc)
{
    return sc__tree_nodes(pc) + 2 * sc__tree_leaves(pc->n) * SC_TREE_NODE(pc->dim);
}

static inline const double *sc__tree_header(const sc_packed_cloud *pc)
{
    return sc__tree_blocks(pc) + sc__tree_leaves(pc->n) * SC_LEAF_BLOCK(pc->dim);
}

/* doubles of the index of a cloud of n samples (0 without one) */
ptrdiff_t sc__tree_size(int D, ptrdiff_t n);

/* Build the index of a packed cloud whose main arrays and header are filled (buf:
 * sc_cloud_pack's buffer). */
void sc__tree_build(const sc_cloud *c, double *buf, ptrdiff_t npad);

/* Candidate leaves as arrays: c[0..D) the boxes' lo, c[D..2D) their hi, c[2D] max log a,
 * smax a candidate's largest s_i when already known (else NaN), blk its leaf block; npad
 * entries (a multiple of SC_CAND_PAD, padding with max log a = -inf and no block). */
typedef struct sc__cands {
    ptrdiff_t n, npad;
    double *c[7];
    double *smax;
    const double **blk;
} sc__cands;

/* the largest s_i = log a_i - |xq - p_i|^2 / eps over a leaf block (ie = 1 / eps) */
typedef double (*sc__leafmax_fn)(const double *blk, int dim, const double *xq, double ie);

/*
 * The candidates of a group of queries, all in the box [qlo, qhi]: every leaf whose box
 * bound reaches best_G - Tf - slack - 2, best_G a lower bound of every member's largest
 * s_i (from the leaf of greatest bound); Tf and slack the group's largest cut and
 * rounding slack.  In increasing leaf order, padded.  gub: scratch of 3 (nleaf +
 * SC_CAND_PAD) doubles.
 */
void sc__tree_group_walk(const sc_packed_cloud *pc, double ie, const double *qlo, const double *qhi,
                         double Tf, double slack, double *gub, sc__cands *C);

/*
 * The same for one query xq, walked depth first with the more promising child first and
 * the cut raised by every leaf that may hold a better sample (its largest s_i, computed by
 * leafmax, is kept in C->smax).
 */
void sc__tree_single_walk(const sc_packed_cloud *pc, sc__leafmax_fn leafmax, double ie,
                          const double *xq, double Tf, double slack, double *gub, sc__cands *C);

/* A Morton key (< 2^52) of xq in the box [lo, lo + 1 / sc): 3 x 17 or 2 x 26 bits of the
 * position, interleaved from the top bit down with coordinate 0 first. */
uint64_t sc__morton_key(int D, const double *xq, const double *lo, const double *sc);

/* The nq (key, index) pairs of ka in increasing key order (stable by the key's bits 20 to
 * 52; up to 32 pairs by the whole key); kb the second buffer; returns the sorted one. */
uint64_t *sc__radix_sort(uint64_t *ka, uint64_t *kb, ptrdiff_t nq);

#endif /* SC_TREE_INTERNAL_H */
