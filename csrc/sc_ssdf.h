/*
 * sc_ssdf.h - soft signed distance function (SSDF) of an oriented point cloud,
 * with closed-form derivatives to third order (METHOD.md section 2).
 *
 * Notation: a cloud holds n samples p_i (body frame, dimension D = 2 or 3),
 * outward unit normals n_i and positive weights a_i.  For a query x:
 *   d_i = |x - p_i|^2,  w_i = a_i exp(-d_i/eps) / sum_j a_j exp(-d_j/eps),
 *   h_i = n_i.(x - p_i),  phi(x) = sum_i w_i h_i.
 */
#ifndef SC_SSDF_H
#define SC_SSDF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sc_common.h"

/* Oriented point cloud as the caller holds it (non-owning view). */
typedef struct sc_cloud {
    int dim;            /* 2 or 3 */
    ptrdiff_t n;        /* number of samples, >= 1 */
    const double *p;    /* n x dim sample points, row-major, body frame */
    const double *nrm;  /* n x dim outward unit normals, row-major */
    const double *wts;  /* n positive weights, or NULL for all ones */
} sc_cloud;

/*
 * Oriented point cloud in the kernels' layout (non-owning view of a buffer
 * filled by sc_cloud_pack).  The buffer holds 3*dim + 3 arrays of npad
 * doubles each (npad = n rounded up to a multiple of SC_PAD), in this order:
 * p (dim arrays), n (dim), m = n.p, log a, q = p - c0 (dim), |q|^2, followed
 * by SC_PAD doubles: c0 (dim; the bounding-box centre), then rho = max |q|.
 * Padding samples have p = n = m = q = 0 and log a = -inf, so they get
 * exactly zero weight.  q and |q|^2 serve far queries (see sc_ssdf_impl.h).
 *
 * Clouds of 2 to SC_TREE_MIN - 1 samples carry after that header the boxes of their
 * groups of SC_PAD samples: per group lo[3], hi[3] (over its samples, not the padding),
 * the largest log a and 0, npad doubles in all (the query-lane kernel's group bounds).
 * Clouds of n >= SC_TREE_MIN samples carry a spatial index after that header
 * (built once by sc_cloud_pack, in the body frame): the samples split by
 * recursive cuts at the median of the longest axis into the leaves of a
 * complete binary tree in heap order, nleaf = 2^L leaves of SC_TREE_LEAF slots,
 * L the smallest depth that fits; leaf j holds the sorted samples
 * [j SC_TREE_LEAF, (j + 1) SC_TREE_LEAF) (full leaves first, then one partial,
 * then empty ones), within the leaf split by the same cuts into its groups of
 * SC_PAD (compact groups, the kernel's unit of skipping).  Layout: 2 nleaf
 * nodes of (lo[dim], hi[dim], max log a) (node 1 the root, nleaf + j leaf j;
 * node 0 holds the smallest log a); then the samples again, leaf by leaf, each
 * leaf a block of the 3*dim + 3 arrays of SC_TREE_LEAF slots (SC_LEAF_BLOCK;
 * padding slots as above); then the SC_PAD header.
 *
 * Pruning.  For a query x, with s_i = log a_i - |x - p_i|^2 / eps and s* its
 * maximum, a sample with s_i < s* - T has relative weight below e^-T.  Its
 * share of phi and of each derivative up to the third, relative to that
 * derivative's natural scale (eps^((1 - k) / 2) for order k), is at most
 * 8 e^-T |H| |P|^3 / eps^2 with H = h_i - phi and P = p_i - E[p]; |H| <= 2 r
 * and |P| <= 2 rho (r = |x - c0| + rho, rho the cloud's radius), and for a
 * near query |H|, |P| <= |x - p_i| + |x - p_kept| with |x - p_i|^2 within
 * (T + da) eps of the nearest (da the spread of log a).  At most n samples
 * are dropped, so the cut
 *   T = ln(1e18) + ln 128 + ln n + 1 + min(ln(1 + r rho^3 / eps^2),
 *                                          2 ln(d* / eps + T_far + da + 1))
 * (+ 1 for the rounding of the bounds) keeps every dropped share below 1e-18
 * of every output's scale.  A leaf is kept when its bound max log a -
 * dist^2(x, box) / eps reaches best - T - slack (best within 1 of s*); one
 * depth-first walk serves up to 64 nearby Morton-consecutive queries (their
 * box), listing every leaf any of them may keep, and each query scans that list
 * with the per-ISA helpers below (sc_ssdf.c, query_blocks, shows that what a
 * query keeps does not depend on its group).  The dense kernel then runs on the
 * kept leaves in place: O(log n + kept) per query instead of O(n); within them it
 * also skips every group of SC_PAD samples whose s_i all fall below s* - T (its
 * own exact s*; groups of SC_PAD whatever the vector width, so every ISA drops the
 * same samples).  Queries are taken in Morton order per chunk (for the cache and
 * the shared walks).  The kept set depends only on x, so the value is still
 * bitwise the same whatever the order, the batch or the threads.  Results equal
 * the dense computation (SC_DENSE) to rounding (tests: 1e-13 of each output's scale at
 * every order).  A cloud without an index (n < SC_TREE_MIN) is one block for every query,
 * whose groups of SC_PAD are skipped below the query's far cut (T_f above, its logarithm
 * rounded up to a multiple of ln 2; sc__blocks.qbase).
 */
typedef struct sc_packed_cloud {
    int dim;
    ptrdiff_t n;
    ptrdiff_t npad;
    const double *data;
} sc_packed_cloud;

/* Spatial index: clouds of at least SC_TREE_MIN samples get one; leaves hold at most
 * SC_TREE_LEAF samples (a multiple of SC_PAD). */
#define SC_TREE_MIN 256
/* far queries (beyond SC_SSDF_FAR cloud radii from the box centre) use q and |q|^2 */
#define SC_SSDF_FAR 4.0
/* Why 32: a larger leaf lists more samples per query (its box is looser), a smaller one
   costs more in the walks and lists.  Against 16 (interleaved, one thread, AVX-512): two
   spheres in light contact, first derivatives, 10^3 samples each +7 %, 10^4 +7 %, 10^5
   +6 %; 2 x 10^4 scattered queries (normal, 0.3 m) around a 10^4-sample sphere +24 %.  64
   was +3 %, +5 %, +18 %, +38 %; 128 and 256 slower at 10^3 and 10^4.  The leaves nest
   (each 32-leaf is two 16-leaves of the same tree), and a query's result does not depend
   on the leaves listed, so the results are bitwise those of 16. */
#define SC_TREE_LEAF 32

/*
 * Size of a packed cloud buffer (with its spatial index, see above).
 *
 * Given:
 *   dim   int         2 or 3
 *   n     ptrdiff_t   number of samples, >= 1
 * Returned (function value):
 *   number of doubles of the buffer, or -1 if dim or n is invalid (or the
 *   size would overflow).
 */
SC_API ptrdiff_t sc_cloud_packed_size(int dim, ptrdiff_t n);

/*
 * Pack a cloud into the kernels' layout and describe it.
 *
 * Given:
 *   c        const sc_cloud*    cloud to pack
 * Returned:
 *   buf      double*            sc_cloud_packed_size(c->dim, c->n) doubles
 *   pc       sc_packed_cloud*   view of buf (may be NULL)
 * Returned (function value):
 *   SC_OK; SC_EINVAL for a bad dim/n/NULL pointer or a weight <= 0;
 *   SC_ENONFINITE if a point, normal or weight is not finite.  On error buf
 *   and pc are left in an unspecified state.
 * Notes:
 *   1) Normals are used as given; unit length is the caller's contract
 *      (checked once in the Python layer).
 */
SC_API int sc_cloud_pack(const sc_cloud *c, double *buf, sc_packed_cloud *pc);

/*
 * Per-thread scratch needed by sc_ssdf, in doubles: npad for a cloud without an
 * index, about (3 dim + 4) 2 n with one (the gathered leaves and their weights).
 */
SC_API ptrdiff_t sc_ssdf_workspace_size(const sc_packed_cloud *pc);

/* The larger of the two clouds' sc_ssdf_workspace_size (internal: the scratch of the
 * separation field and the contact, which evaluate each cloud's SSDF in turn). */
ptrdiff_t sc__ssdf_workspace_pair(const sc_packed_cloud *a, const sc_packed_cloud *b);

/*
 * Soft signed distance of query points to an oriented point cloud, with
 * optional first, second and third derivatives (METHOD.md section 2).
 *
 * Given:
 *   pc         const sc_packed_cloud*  cloud (sc_cloud_pack)
 *   eps        double         softmax temperature on squared distances, > 0 (length^2)
 *   m          ptrdiff_t      number of query points, >= 0
 *   x          const double*  m x dim query points, row-major, body frame
 *   isa        int            SC_ISA_AUTO or a specific supported SC_ISA_*, plus
 *                             SC_DENSE to evaluate every sample (no pruning)
 *   nthreads   int            threads to split the queries over, >= 1
 *   work       double*        nthreads * sc_ssdf_workspace_size(pc) doubles of scratch
 * Returned (any may be NULL to skip):
 *   phi        double*        m                  soft signed distance (> 0 outside)
 *   dphi_dx    double*        m x dim            gradient
 *   d2phi_dx2  double*        m x dim x dim      Hessian, full and exactly symmetric
 *   d3phi_dx3  double*        m x dim^3          third derivative, exactly symmetric
 * Returned (function value):
 *   SC_OK; SC_EINVAL if pc is malformed, eps is not finite and > 0, m < 0,
 *   nthreads < 1 or a needed pointer is NULL; SC_EUNSUPPORTED if isa is not
 *   supported here.  Outputs are untouched on error.
 * Notes:
 *   1) Outputs must not alias inputs, work or each other.
 *   2) phi is bitwise identical whichever derivatives are requested, whatever
 *      nthreads is, and whether a query is evaluated alone or in a batch.
 *      Different ISAs agree to rounding (~1e-15 relative).
 *   3) A query with a NaN or infinite coordinate gets NaN in all its outputs;
 *      other rows are unaffected.  If |x - p_i|^2 / eps overflows for every
 *      sample (|x| beyond ~1e150 sqrt(eps)), that row's outputs are NaN too,
 *      except for a single-sample cloud (a half-space), evaluated in closed
 *      form (phi = n.(x - p), gradient n, zero curvature) for any finite x.
 *   4) Cost O(n) per query and pass (two passes for phi, three for any
 *      derivative) dense, O(log n + kept samples) pruned (see "Pruning");
 *      memory O(n) per thread.  Weights below exp(-708) of the
 *      largest are flushed to zero (see sc_exp.h for why that is exact in
 *      double precision).
 */
SC_API int sc_ssdf(const sc_packed_cloud *pc, double eps, ptrdiff_t m, const double *x, int isa,
                   int nthreads, double *work, double *phi, double *dphi_dx, double *d2phi_dx2,
                   double *d3phi_dx3);

/* Per-ISA row kernels (internal; sc_ssdf validates and dispatches).  They read the
 * samples from n blocks of bs samples each (bs a multiple of SC_PAD), array a of block b
 * at ptr[b] + a as, in the packed layout's array order, and the header (c0, rho) at hdr:
 * a whole packed cloud is one block (bs = as = npad), a pruned query the leaves it keeps.
 * work: n bs doubles (lanes: bs SC_VW_MAX). */
typedef struct sc__blocks {
    const double *const *ptr;
    ptrdiff_t n, bs, as;
    const double *hdr;
    double tcut; /* a group of SC_PAD samples whose s_i are all below s* - tcut is
                    skipped (pruned queries: the query's cut T plus its slack; else +inf) */
    double qbase; /* NaN, or (a cloud without an index, pruned) the cut's constant part:
                     then each query's tcut is the far cut of sc_ssdf.c's query_cut, from
                     qbase, with its logarithm rounded up to a multiple of ln 2 (no libm
                     call per query) */
    const double *tq; /* NULL, or (an indexed cloud, pruned) the query's cut from the
                         kernel's own s*, the largest s_i (sc_ssdf.c, query_blocks):
                         tq = {base, T_f, max log a, T_f + da + 1, slack}, tcut = min(T_f,
                         base + 2 sc__ln_up(max(max log a - s*, 0) + T_f + da + 1)) + slack
                         in place of tcut */
    ptrdiff_t *star; /* NULL, or where the kernel writes the position in its blocks of the
                        sample of largest weight (sample-lane form) */
    ptrdiff_t *evl; /* NULL, or (a pruned query: blocks of SC_TREE_LEAF samples) room for
                       n SC_TREE_LEAF / SC_PAD entries: pass 2 lists there the groups of
                       SC_PAD samples it evaluates (block SC_TREE_LEAF + offset), and the
                       derivative sweeps visit those alone */
    int lanes; /* 1: a whole cloud without an index (one block), evaluated VW queries at a
                  time (the query-lane kernel, sc_ssdf_impl.h); work then npad SC_VW_MAX */
} sc__blocks;
/* the widest vector of any ISA, in doubles (AVX-512) */
#define SC_VW_MAX 8
typedef int (*sc__ssdf_rows_fn)(const sc__blocks *B, int dim, double eps, ptrdiff_t m,
                                const double *x, double *work, double *phi, double *g,
                                double *h, double *t);
int sc__ssdf_rows_generic(const sc__blocks *B, int dim, double eps, ptrdiff_t m,
                          const double *x, double *work, double *phi, double *g, double *h,
                          double *t);
int sc__ssdf_rows_avx2(const sc__blocks *B, int dim, double eps, ptrdiff_t m, const double *x,
                       double *work, double *phi, double *g, double *h, double *t);
int sc__ssdf_rows_avx512(const sc__blocks *B, int dim, double eps, ptrdiff_t m,
                         const double *x, double *work, double *phi, double *g, double *h,
                         double *t);

/* Per-ISA helpers of the pruned gather (sc_ssdf.c), plain multiplies and adds (no FMA), so
 * every ISA computes the same bits.  Candidate leaves as arrays: c[0..D) the boxes' lo,
 * c[D..2D) their hi, c[2D] max log a, and blk their leaf blocks; npad entries (a
 * multiple of SC_CAND_PAD, padding with max log a = -inf and no block).
 *   best: ub[t] = max log a - (squared distance of xq to box t) / eps for every entry;
 *     then, with t0 the first candidate of the largest ub, the largest s_i of leaf t0 and
 *     of every other candidate whose ub exceeds that + 1 (a candidate's largest s_i is
 *     smax[t] when known, else computed as leafmax does): a lower bound of the query's
 *     largest s_i within 1 of it (sc_ssdf.c, query_blocks).  Returns it (-inf without a
 *     candidate).
 *   keep: the candidates t < n with ub[t] >= cut, in order, as their leaf blocks (blk)
 *     in ptr; returns how many.
 *   leafmax: the largest s_i = log a_i - |xq - p_i|^2 / eps over the SC_TREE_LEAF
 *     samples of a leaf block.
 *   list: best's bounds and keep in one pass, for a cut known beforehand; ptr needs room
 *     for n + SC_CAND_PAD entries. */
#define SC_CAND_PAD 8
/* doubles of one leaf block of an index (the 3 dim + 3 arrays of SC_TREE_LEAF slots) */
#define SC_LEAF_BLOCK(D) ((3 * (D) + 3) * SC_TREE_LEAF)
typedef struct sc__cands {
    ptrdiff_t n, npad;
    double *c[7];
    double *smax; /* a candidate leaf's largest s_i when already known (one-query groups),
                     else NaN */
    const double **blk; /* candidate t's leaf block (NULL for the padding) */
} sc__cands;
typedef double (*sc__ssdf_best_fn)(const sc__cands *C, int dim, const double *xq, double ie,
                                   double *ub);
typedef ptrdiff_t (*sc__ssdf_keep_fn)(const sc__cands *C, const double *ub, double cut,
                                      const double **ptr);
typedef double (*sc__ssdf_leafmax_fn)(const double *blk, int dim, const double *xq, double ie);
typedef ptrdiff_t (*sc__ssdf_list_fn)(const sc__cands *C, int dim, const double *xq, double ie,
                                      double cut, const double **ptr);
double sc__ssdf_best_generic(const sc__cands *C, int dim, const double *xq, double ie,
                             double *ub);
double sc__ssdf_best_avx2(const sc__cands *C, int dim, const double *xq, double ie,
                          double *ub);
double sc__ssdf_best_avx512(const sc__cands *C, int dim, const double *xq, double ie,
                            double *ub);
ptrdiff_t sc__ssdf_keep_generic(const sc__cands *C, const double *ub, double cut,
                                const double **ptr);
ptrdiff_t sc__ssdf_keep_avx2(const sc__cands *C, const double *ub, double cut,
                             const double **ptr);
ptrdiff_t sc__ssdf_keep_avx512(const sc__cands *C, const double *ub, double cut,
                               const double **ptr);
double sc__ssdf_leafmax_generic(const double *blk, int dim, const double *xq, double ie);
double sc__ssdf_leafmax_avx2(const double *blk, int dim, const double *xq, double ie);
double sc__ssdf_leafmax_avx512(const double *blk, int dim, const double *xq, double ie);
ptrdiff_t sc__ssdf_list_generic(const sc__cands *C, int dim, const double *xq, double ie,
                                double cut, const double **ptr);
ptrdiff_t sc__ssdf_list_avx2(const sc__cands *C, int dim, const double *xq, double ie,
                             double cut, const double **ptr);
ptrdiff_t sc__ssdf_list_avx512(const sc__cands *C, int dim, const double *xq, double ie,
                               double cut, const double **ptr);

/* the index of the lowest set bit of m != 0 */
static inline int sc__ctz(unsigned m)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctz(m);
#else
    int k = 0;
    while (!(m & 1u)) {
        m >>= 1;
        k++;
    }
    return k;
#endif
}

/* frexp without the libm call, for a normal y > 0: y = f 2^e with f in [0.5, 1), read
   from the bits; returns e (biased exponent - 1022: 1025 for +inf) and stores f unless f
   is NULL */
static inline int sc__frexp_e(double y, double *f)
{
    uint64_t bits, fb;
    memcpy(&bits, &y, sizeof bits);
    if (f) {
        fb = (bits & 0x000FFFFFFFFFFFFFu) | ((uint64_t)1022 << 52);
        memcpy(f, &fb, sizeof *f);
    }
    return (int)((bits >> 52) & 0x7FF) - 1022;
}

/* An upper bound of ln y for y >= 1 (finite), above it by at most ~0.19: y = f 2^e
   (sc__frexp_e), and ln y = e ln 2 + ln f <= e ln 2 + f - 1; 1e-12 covers the rounding
   of the sum.  Non-decreasing in y (a cut from a lower bound of s* is never below the
   cut from s*).  Scalar, so the same bits on every ISA; ~10 instructions against libm's
   ~20 ns for log. */
static inline double sc__ln_up(double y)
{
    double f;
    const int e = sc__frexp_e(y, &f);
    return (double)e * 0.6931471805599453 + (f - 1.0) + 1e-12;
}

/* whether a query point's dim coordinates are all finite (else its rows are NaN): the one
   test of the kernels (sc_ssdf_impl.h) and the pruned driver (sc_ssdf.c) */
static inline int sc__finite_query(int dim, const double *q)
{
    return isfinite(q[0]) && isfinite(q[1]) && (dim == 2 || isfinite(q[2]));
}

#endif /* SC_SSDF_H */
