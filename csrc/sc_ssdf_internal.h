/*
 * sc_ssdf_internal.h - what the SSDF driver (sc_ssdf.c) and its kernel template
 * (sc_ssdf_kernel.h, compiled once per instruction set) share (internal).
 */
#ifndef SC_SSDF_INTERNAL_H
#define SC_SSDF_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sc_ssdf.h"
#include "sc_tree_internal.h"

/* A query is "far" beyond SC_SSDF_FAR cloud radii from the bounding-box centre; pass 1
 * then drops the term |x - c0|^2 common to all samples (sc_ssdf_kernel.h).  Both forms are
 * accurate to rounding at the switch (the direct form's error u |x - p|^2 exceeds the
 * expanded form's u (|q|^2 + 2 |x - c0| rho) by at most ~2x there), and beyond it the
 * direct form would lose accuracy quadratically with distance. */
#define SC_SSDF_FAR 4.0

/* the widest vector of any ISA, in doubles (AVX-512) */
#define SC_VW_MAX 8

/* ln(1e18): dropped weights and pairs stay below 1e-18 of every output's scale
 * (sc_ssdf.c, "Pruning"; docs/method.md section 10) */
#define SC_LN_1E18 41.45

/* The samples a kernel call reads: n blocks of bs samples each (bs a multiple of SC_PAD),
 * array a of block b at ptr[b] + a as, in the packed layout's array order, and the header
 * (c0, rho) at hdr.  A whole packed cloud is one block (bs = as = npad), a pruned query the
 * leaves it keeps.  work: n bs doubles (lanes: bs SC_VW_MAX). */
typedef struct sc__blocks {
    const double *const *ptr;
    ptrdiff_t n, bs, as;
    const double *hdr;
    double tcut;      /* a group of SC_PAD samples whose s_i are all below s* - tcut is
                         skipped (pruned queries: the query's cut T plus its slack; else +inf) */
    double qbase;     /* NaN, or (a cloud without an index, pruned) the cut's constant part:
                         then each query's tcut is the far cut of sc_ssdf.c's query_cut, from
                         qbase, with its logarithm rounded up to a multiple of ln 2 */
    const double *tq; /* NULL, or (an indexed cloud, pruned) the query's cut from the
                         kernel's own s*, the largest s_i (sc_ssdf.c, query_blocks):
                         tq = {base, T_f, max log a, T_f + da + 1, slack}, tcut = min(T_f,
                         base + 2 sc__ln_up(max(max log a - s*, 0) + T_f + da + 1)) + slack
                         in place of tcut */
    ptrdiff_t *star;  /* NULL, or where the kernel writes the position in its blocks of the
                         sample of largest weight */
    ptrdiff_t *evl;   /* NULL, or (a pruned query: blocks of SC_TREE_LEAF samples) room for
                         n SC_TREE_LEAF / SC_PAD entries: pass 2 lists there the groups of
                         SC_PAD samples it evaluates (block SC_TREE_LEAF + offset), and the
                         derivative sweeps visit those alone */
    int lanes;        /* 1: a whole cloud without an index (one block), evaluated VW queries at a
                         time (the query-lane form of the kernel); work then npad SC_VW_MAX */
} sc__blocks;

/* One instruction set's compiled kernel (sc_ssdf_kernel.h) and pruned-gather helpers, all
 * plain multiplies and adds in the helpers (no FMA), so every ISA lists the same leaves.
 *   rows: the SSDF of m queries over the blocks B (outputs as sc_ssdf's; NULL to skip).
 *   best: ub[t] = max log a - (squared distance of xq to box t) / eps for every
 *     candidate; then, with t0 the first candidate of the largest ub, the largest s_i of
 *     leaf t0 and of every other candidate whose ub exceeds that + 1: a lower bound of the
 *     query's largest s_i within 1 of it (sc_ssdf.c, query_blocks).  -inf without one.
 *   keep: the candidates t < n with ub[t] >= cut, in order, as their leaf blocks in ptr;
 *     returns how many.
 *   leafmax: the largest s_i = log a_i - |xq - p_i|^2 / eps over a leaf block.
 *   list: best's bounds and keep in one pass, for a cut known beforehand; ptr needs room
 *     for n + SC_CAND_PAD entries.
 * A variant this build cannot run (an x86 ISA elsewhere) has NULL members; sc_ssdf never
 * selects it (sc_isa_supported). */
typedef struct sc__ssdf_isa {
    int (*rows)(const sc__blocks *B, int dim, double eps, ptrdiff_t m, const double *x,
                double *work, double *phi, double *g, double *h, double *t);
    double (*best)(const sc__cands *C, int dim, const double *xq, double ie, double *ub);
    ptrdiff_t (*keep)(const sc__cands *C, const double *ub, double cut, const double **ptr);
    sc__leafmax_fn leafmax;
    ptrdiff_t (*list)(const sc__cands *C, int dim, const double *xq, double ie, double cut,
                      const double **ptr);
} sc__ssdf_isa;

extern const sc__ssdf_isa sc__ssdf_generic, sc__ssdf_avx2, sc__ssdf_avx512;

/* The larger of the two clouds' sc_ssdf_workspace_size (the scratch of the separation
 * field and the contact model, which evaluate each cloud's SSDF in turn). */
ptrdiff_t sc__ssdf_workspace_pair(const sc_packed_cloud *a, const sc_packed_cloud *b);

/* sc_ssdf without its range checks of the cloud and the queries (the arguments' other
   checks are kept): for the separation field and the contact model, which check the pair
   (sc__pair_reach_check) instead -- their posed samples may lie up to ~5 SC_COORD_MAX from
   the other body's origin, and the pair's reach bounds every one's */
int sc__ssdf_run(const sc_packed_cloud *pc, double eps, ptrdiff_t m, const double *x,
                 const sc_options *opt, double *work, double *phi, double *dphi_dx,
                 double *d2phi_dx2, double *d3phi_dx3);

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
   cut from s*).  Scalar, so the same bits on every ISA, and no libm call per query. */
static inline double sc__ln_up(double y)
{
    double f;
    const int e = sc__frexp_e(y, &f);
    return (double)e * 0.6931471805599453 + (f - 1.0) + 1e-12;
}

/* whether a query point's dim coordinates are all finite (else its rows are NaN) */
static inline int sc__finite_query(int dim, const double *q)
{
    return isfinite(q[0]) && isfinite(q[1]) && (dim == 2 || isfinite(q[2]));
}

#endif /* SC_SSDF_INTERNAL_H */
