/*
 * sc_tree.c - the spatial index of large clouds: its build (median cuts), the walks that
 * list a query's candidate leaves, and the Morton order of query batches (layout and
 * contracts in sc_tree_internal.h).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sc_tree_internal.h"

ptrdiff_t sc__tree_size(int D, ptrdiff_t n)
{
    const ptrdiff_t L = sc__tree_leaves(n);
    return L == 0 ? 0 : 2 * L * SC_TREE_NODE(D) + L * SC_LEAF_BLOCK(D) + SC_PAD;
}

/* leaf j's range [lo, hi) of the sorted index list (empty past the last sample) */
static void leaf_range(ptrdiff_t n, ptrdiff_t j, ptrdiff_t *lo, ptrdiff_t *hi)
{
    *lo = j * SC_TREE_LEAF < n ? j * SC_TREE_LEAF : n;
    *hi = (j + 1) * SC_TREE_LEAF < n ? (j + 1) * SC_TREE_LEAF : n;
}

/* partial sort of idx[lo, hi) so that idx[k] has the k-th smallest coordinate `ax`
 * (quickselect, median-of-three pivot; ties broken by sample index: deterministic) */
static int key_less(const double *p, int D, int ax, double i, double j)
{
    const double a = p[(ptrdiff_t)i * D + ax], b = p[(ptrdiff_t)j * D + ax];
    return a < b || (a == b && i < j);
}

static void select_kth(double *idx, ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t k, const double *p, int D,
                       int ax)
{
    while (hi - lo > 1) {
        const ptrdiff_t mid = lo + (hi - lo) / 2;
        double a = idx[lo], b = idx[mid], c = idx[hi - 1], pv, t;
        ptrdiff_t i, store;
        /* median of three as the pivot value */
        if (key_less(p, D, ax, b, a)) {
            t = a, a = b, b = t;
        }
        if (key_less(p, D, ax, c, b)) {
            b = c;
            if (key_less(p, D, ax, b, a)) {
                b = a;
            }
        }
        pv = b;
        /* Lomuto partition around pv: [lo, store) < pv, then pv, then >= */
        for (i = lo; i < hi; i++) {
            if (idx[i] == pv) {
                idx[i] = idx[hi - 1];
                idx[hi - 1] = pv;
                break;
            }
        }
        store = lo;
        for (i = lo; i < hi - 1; i++) {
            if (key_less(p, D, ax, idx[i], pv)) {
                t = idx[i], idx[i] = idx[store], idx[store] = t;
                store++;
            }
        }
        idx[hi - 1] = idx[store];
        idx[store] = pv;
        if (k == store) {
            return;
        }
        if (k < store) {
            hi = store;
        } else {
            lo = store + 1;
        }
    }
}

/* order idx[lo, hi) (the samples of `nleaf` consecutive leaves of `unit` slots) so that
   each half of the leaves gets the samples on its side of a cut along the longest axis */
static void split(double *idx, ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t nleaf, ptrdiff_t unit,
                  const double *p, int D)
{
    double mn[3], mx[3];
    ptrdiff_t i, mid;
    int k, ax = 0;
    if (nleaf <= 1 || hi - lo <= 1) {
        return;
    }
    mid = lo + (nleaf / 2) * unit; /* the left half's leaves are full */
    if (mid >= hi) {
        split(idx, lo, hi, nleaf / 2, unit, p, D);
        return;
    }
    for (k = 0; k < D; k++) {
        mn[k] = mx[k] = p[(ptrdiff_t)idx[lo] * D + k];
    }
    for (i = lo + 1; i < hi; i++) {
        for (k = 0; k < D; k++) {
            const double v = p[(ptrdiff_t)idx[i] * D + k];
            mn[k] = v < mn[k] ? v : mn[k];
            mx[k] = v > mx[k] ? v : mx[k];
        }
    }
    for (k = 1; k < D; k++) {
        if (mx[k] - mn[k] > mx[ax] - mn[ax]) {
            ax = k;
        }
    }
    select_kth(idx, lo, hi, mid, p, D, ax);
    split(idx, lo, mid, nleaf / 2, unit, p, D);
    split(idx, mid, hi, nleaf / 2, unit, p, D);
}

/* build the index of a packed cloud (main arrays and header already filled) */
void sc__tree_build(const sc_cloud *c, double *buf, ptrdiff_t npad)
{
    const int D = c->dim;
    const ptrdiff_t n = c->n, L = sc__tree_leaves(n);
    double *nodes = buf + (3 * D + 3) * npad + SC_PAD, *tc = nodes + 2 * L * SC_TREE_NODE(D);
    /* the median-sorted order lives in the main |q|^2 array meanwhile (restored below) */
    double *idx = buf + (3 * D + 2) * npad;
    const double *src_hdr = buf + (3 * D + 3) * npad;
    ptrdiff_t i, j, s, a;
    int k;

    for (i = 0; i < n; i++) {
        idx[i] = (double)i;
    }
    split(idx, 0, n, L, SC_TREE_LEAF, c->p, D);
    /* within each leaf, its groups of SC_PAD samples (the kernel's unit of skipping) by
       the same cuts: compact groups fall below a query's cut whole more often */
    for (j = 0; j < L; j++) {
        ptrdiff_t lo, hi;
        leaf_range(n, j, &lo, &hi);
        split(idx, lo, hi, SC_TREE_LEAF / SC_PAD, SC_PAD, c->p, D);
    }
    /* leaf blocks: p, n, m, log a, q copied; |q|^2 from q as in sc_cloud_pack */
    for (j = 0; j < L; j++) {
        ptrdiff_t lo, hi;
        leaf_range(n, j, &lo, &hi);
        for (s = 0; s < SC_TREE_LEAF; s++) {
            double *blk = tc + j * SC_LEAF_BLOCK(D) + s, qq = 0.0;
            if (s < hi - lo) {
                const ptrdiff_t src = (ptrdiff_t)idx[lo + s];
                for (a = 0; a < 3 * D + 2; a++) {
                    blk[a * SC_TREE_LEAF] = buf[a * npad + src];
                }
            } else {
                for (a = 0; a < 3 * D + 2; a++) {
                    blk[a * SC_TREE_LEAF] = 0.0;
                }
                blk[(2 * D + 1) * SC_TREE_LEAF] = -INFINITY; /* log a of padding */
            }
            for (k = 0; k < D; k++) {
                const double q = blk[(2 * D + 2 + k) * SC_TREE_LEAF];
                qq += q * q;
            }
            blk[(3 * D + 2) * SC_TREE_LEAF] = qq;
        }
    }
    for (i = 0; i < npad; i++) {
        double qq = 0.0;
        for (k = 0; k < D; k++) {
            const double q = buf[(2 * D + 2 + k) * npad + i];
            qq += q * q;
        }
        idx[i] = qq;
    }
    for (k = 0; k < SC_PAD; k++) {
        tc[L * SC_LEAF_BLOCK(D) + k] = src_hdr[k];
    }
    /* node boxes: leaves, then parents; node 0 (unused by the tree) keeps the smallest
       log a, for the cut */
    for (k = 0; k < SC_TREE_NODE(D); k++) {
        nodes[k] = 0.0;
    }
    nodes[0] = INFINITY;
    for (j = 0; j < L; j++) {
        double *nd = nodes + (L + j) * SC_TREE_NODE(D);
        int first = 1;
        for (k = 0; k < 2 * D; k++) {
            nd[k] = 0.0; /* an empty leaf: never visited (max log a = -inf) */
        }
        nd[2 * D] = -INFINITY;
        for (s = 0; s < SC_TREE_LEAF; s++) {
            const double *blk = tc + j * SC_LEAF_BLOCK(D) + s;
            const double la = blk[(2 * D + 1) * SC_TREE_LEAF];
            if (la == -INFINITY) {
                continue;
            }
            for (k = 0; k < D; k++) {
                const double v = blk[k * SC_TREE_LEAF];
                nd[k] = first || v < nd[k] ? v : nd[k];
                nd[D + k] = first || v > nd[D + k] ? v : nd[D + k];
            }
            nd[2 * D] = la > nd[2 * D] ? la : nd[2 * D];
            nodes[0] = la < nodes[0] ? la : nodes[0];
            first = 0;
        }
    }
    for (j = L - 1; j >= 1; j--) {
        double *nd = nodes + j * SC_TREE_NODE(D);
        const double *l = nodes + 2 * j * SC_TREE_NODE(D),
                     *r = nodes + (2 * j + 1) * SC_TREE_NODE(D);
        if (r[2 * D] == -INFINITY || l[2 * D] == -INFINITY) { /* an empty side */
            memcpy(nd, r[2 * D] == -INFINITY ? l : r, SC_TREE_NODE(D) * sizeof(double));
            continue;
        }
        for (k = 0; k < D; k++) {
            nd[k] = l[k] < r[k] ? l[k] : r[k];
            nd[D + k] = l[D + k] > r[D + k] ? l[D + k] : r[D + k];
        }
        nd[2 * D] = l[2 * D] > r[2 * D] ? l[2 * D] : r[2 * D];
    }
}

/* upper bound of s_i over a node for every query in the box [qlo, qhi]: rounding is
   monotone, so it is at least the bound of each query in the box */
static double box_bound(const double *nd, int D, const double *qlo, const double *qhi, double ie)
{
    double d2 = 0.0;
    int k;
    for (k = 0; k < D; k++) {
        const double lo = nd[k] - qhi[k], hi = qlo[k] - nd[D + k];
        const double e = lo > 0.0 ? lo : hi > 0.0 ? hi : 0.0;
        d2 += e * e;
    }
    return nd[2 * D] - d2 * ie;
}

/* lower bound of a leaf's max_i s_i for every query in the box: each sample's largest
   distance to the box (again monotone in rounding) */
static double leaf_best_box(const double *blk, int D, const double *qlo, const double *qhi,
                            double ie)
{
    double best = -INFINITY;
    ptrdiff_t t;
    int k;
    for (t = 0; t < SC_TREE_LEAF; t++) {
        double d2 = 0.0, sv;
        for (k = 0; k < D; k++) {
            const double p = blk[k * SC_TREE_LEAF + t], a = p - qlo[k], b = qhi[k] - p;
            const double e = a > b ? a : b;
            d2 += e * e;
        }
        sv = blk[(2 * D + 1) * SC_TREE_LEAF + t] - d2 * ie;
        best = sv > best ? sv : best;
    }
    return best;
}

/* n candidates listed: pad the arrays to a multiple of SC_CAND_PAD with empty entries
   (max log a = -inf: bound -inf) */
static void cands_close(sc__cands *C, int D, ptrdiff_t n)
{
    ptrdiff_t t;
    int k;
    C->n = n;
    C->npad = (n + SC_CAND_PAD - 1) / SC_CAND_PAD * SC_CAND_PAD;
    for (t = n; t < C->npad; t++) {
        for (k = 0; k < 2 * D; k++) {
            C->c[k][t] = 0.0;
        }
        C->c[2 * D][t] = -INFINITY;
        C->blk[t] = NULL;
    }
}

/* The candidates of a group of queries (all in the box [qlo, qhi]; Tf and slack the
   group's largest), in increasing leaf order, padded with empty entries (max log a =
   -inf) to a multiple of SC_CAND_PAD.  best_G, from the leaf of greatest box bound (a
   greedy descent), is a lower bound of every member's max s; a leaf is left out when its
   box bound is below best_G - Tf - slack - 2.  For a member query that bound is then
   below best - T - slack - 1 (best >= max s - 1 >= best_G - 1, T <= T_f), one more
   than it needs: rounding cannot bring it back. */
void sc__tree_group_walk(const sc_packed_cloud *pc, double ie, const double *qlo, const double *qhi,
                         double Tf, double slack, double *gub, sc__cands *C)
{
    const int D = pc->dim;
    const ptrdiff_t L = sc__tree_leaves(pc->n);
    const double *nodes = sc__tree_nodes(pc), *tc = sc__tree_blocks(pc);
    double best, cut;
    ptrdiff_t node = 1, stk[64], nc = 0, t;
    int top, k;

    while (node < L) {
        const double bl = box_bound(nodes + 2 * node * SC_TREE_NODE(D), D, qlo, qhi, ie);
        const double br = box_bound(nodes + (2 * node + 1) * SC_TREE_NODE(D), D, qlo, qhi, ie);
        node = bl >= br ? 2 * node : 2 * node + 1;
    }
    best = leaf_best_box(tc + (node - L) * SC_LEAF_BLOCK(D), D, qlo, qhi, ie);
    cut = best - Tf - slack - 2.0;
    /* depth first, left first: candidates come out in leaf order */
    stk[0] = 1;
    top = 1;
    while (top > 0) {
        const double *nd;
        double ub;
        node = stk[--top];
        nd = nodes + node * SC_TREE_NODE(D);
        if (nd[2 * D] == -INFINITY) {
            continue; /* an empty subtree */
        }
        ub = box_bound(nd, D, qlo, qhi, ie);
        if (!(ub >= cut)) {
            continue; /* too far for every query of the group */
        }
        if (node < L) {
            stk[top++] = 2 * node + 1;
            stk[top++] = 2 * node;
            continue;
        }
        for (k = 0; k < 2 * D + 1; k++) {
            C->c[k][nc] = nd[k];
        }
        C->blk[nc] = tc + (node - L) * SC_LEAF_BLOCK(D);
        gub[nc] = ub;
        nc++;
    }
    /* the cut rose during the walk: drop the early candidates below its final value */
    {
        ptrdiff_t w = 0;
        for (t = 0; t < nc; t++) {
            if (gub[t] >= cut) {
                for (k = 0; k < 2 * D + 1; k++) {
                    C->c[k][w] = C->c[k][t];
                }
                C->blk[w] = C->blk[t];
                C->smax[w] = NAN; /* not known for a box */
                w++;
            }
        }
        nc = w;
    }
    cands_close(C, D, nc);
}

/* group_walk for a group of one query: depth first, the more promising child first, the
   cut raised by every leaf that may hold a better sample (whose exact largest s_i is
   kept for query_blocks), as a per-query walk; then the candidates sorted by leaf.  The
   same candidate condition as group_walk (bound >= best - T_f - slack - 2), so the same
   proof holds. */
void sc__tree_single_walk(const sc_packed_cloud *pc, sc__leafmax_fn leafmax, double ie,
                          const double *xq, double Tf, double slack, double *gub, sc__cands *C)
{
    const int D = pc->dim;
    const ptrdiff_t L = sc__tree_leaves(pc->n);
    const double *nodes = sc__tree_nodes(pc), *tc = sc__tree_blocks(pc);
    double best = -INFINITY, cut = -INFINITY, sb[64];
    ptrdiff_t stk[64], nc = 0, t, w;
    int top = 1, k;

    stk[0] = 1;
    sb[0] = box_bound(nodes + SC_TREE_NODE(D), D, xq, xq, ie);
    while (top > 0) {
        const ptrdiff_t node = stk[top - 1];
        const double ub = sb[top - 1];
        top--;
        if (!(ub >= cut)) {
            continue;
        }
        if (node < L) {
            const double *l = nodes + 2 * node * SC_TREE_NODE(D), *r = l + SC_TREE_NODE(D);
            const double bl = l[2 * D] == -INFINITY ? -INFINITY : box_bound(l, D, xq, xq, ie);
            const double br = r[2 * D] == -INFINITY ? -INFINITY : box_bound(r, D, xq, xq, ie);
            const int first = bl >= br ? 1 : 0; /* pushed first = popped last */
            const double b1 = first ? br : bl, b2 = first ? bl : br;
            if (b1 >= cut) {
                stk[top] = 2 * node + first;
                sb[top++] = b1;
            }
            if (b2 >= cut) {
                stk[top] = 2 * node + 1 - first;
                sb[top++] = b2;
            }
            continue;
        }
        {
            double sm = NAN;
            if (ub > best + 1.0) {
                sm = leafmax(tc + (node - L) * SC_LEAF_BLOCK(D), D, xq, ie);
                if (sm > best) {
                    best = sm;
                    cut = best - Tf - slack - 2.0;
                }
            }
            /* (leaf, bound, largest s_i) kept in leaf order, by insertion, in gub */
            for (t = nc; t > 0 && gub[3 * (t - 1)] > (double)(node - L); t--) {
                gub[3 * t] = gub[3 * (t - 1)];
                gub[3 * t + 1] = gub[3 * (t - 1) + 1];
                gub[3 * t + 2] = gub[3 * (t - 1) + 2];
            }
            gub[3 * t] = (double)(node - L);
            gub[3 * t + 1] = ub;
            gub[3 * t + 2] = sm;
            nc++;
        }
    }
    for (t = 0, w = 0; t < nc; t++) {
        if (gub[3 * t + 1] >= cut) {
            const ptrdiff_t lf = (ptrdiff_t)gub[3 * t];
            const double *nd = nodes + (L + lf) * SC_TREE_NODE(D);
            for (k = 0; k < 2 * D + 1; k++) {
                C->c[k][w] = nd[k];
            }
            C->blk[w] = tc + lf * SC_LEAF_BLOCK(D);
            C->smax[w] = gub[3 * t + 2];
            w++;
        }
    }
    cands_close(C, D, w);
}

/* bit i of x (i < 32) to bit 2 i, and (i < 21) to bit 3 i: the usual shift-and-mask
   spreads (a few dozen instructions a key, not a loop over the bits) */
static uint64_t spread2(uint64_t x)
{
    x &= 0xFFFFFFFFu;
    x = (x | x << 16) & 0x0000FFFF0000FFFFu;
    x = (x | x << 8) & 0x00FF00FF00FF00FFu;
    x = (x | x << 4) & 0x0F0F0F0F0F0F0F0Fu;
    x = (x | x << 2) & 0x3333333333333333u;
    return (x | x << 1) & 0x5555555555555555u;
}

static uint64_t spread3(uint64_t x)
{
    x &= 0x1FFFFFu;
    x = (x | x << 32) & 0x001F00000000FFFFu;
    x = (x | x << 16) & 0x001F0000FF0000FFu;
    x = (x | x << 8) & 0x100F00F00F00F00Fu;
    x = (x | x << 4) & 0x10C30C30C30C30C3u;
    return (x | x << 2) & 0x1249249249249249u;
}

/* 3 x 17 or 2 x 26 bits of the position in the box [lo, lo + 1 / sc), interleaved from
   the top bit down with coordinate 0 first: a Morton key (< 2^52) */
uint64_t sc__morton_key(int D, const double *xq, const double *lo, const double *sc)
{
    const int bits = D == 3 ? 17 : 26;
    const double top = (double)(((int64_t)1 << bits) - 1);
    uint64_t v[3] = {0, 0, 0};
    int k;
    for (k = 0; k < D; k++) {
        double f = (xq[k] - lo[k]) * sc[k] * top;
        f = f > 0.0 ? (f < top ? f : top) : 0.0;
        v[k] = (uint64_t)f;
    }
    if (D == 3) {
        return spread3(v[0]) << 2 | spread3(v[1]) << 1 | spread3(v[2]);
    }
    return spread2(v[0]) << 1 | spread2(v[1]);
}

/* the nq (key, index) pairs of ka in increasing key order, by the key's bits 20 to 52
   (three stable passes of 11 bits; within a cell of the low 20 bits, ~7 of the 17 bits
   per axis in 3D, 10 of 26 in 2D, the order is the input's; up to 32 pairs, by the
   whole key); kb the second buffer; returns the sorted one.  The order only places
   neighbours together (results do not depend on it), so a partial radix sort, linear in
   nq, is enough. */
uint64_t *sc__radix_sort(uint64_t *ka, uint64_t *kb, ptrdiff_t nq)
{
    uint32_t cnt[1 << 11];
    int pass;
    if (nq <= 32) {
        /* a few queries (a half-space's single sample against a box, a pusher's 32):
           insertion sort by the whole key, stable, instead of three passes over 2^11
           buckets each */
        ptrdiff_t i, a;
        for (i = 1; i < nq; i++) {
            const uint64_t key = ka[2 * i], idx = ka[2 * i + 1];
            for (a = i; a > 0 && ka[2 * (a - 1)] > key; a--) {
                ka[2 * a] = ka[2 * (a - 1)];
                ka[2 * a + 1] = ka[2 * (a - 1) + 1];
            }
            ka[2 * a] = key;
            ka[2 * a + 1] = idx;
        }
        return ka;
    }
    for (pass = 0; pass < 3; pass++) {
        const int sh = 20 + 11 * pass;
        uint32_t sum = 0;
        ptrdiff_t i;
        uint64_t *t;
        memset(cnt, 0, sizeof cnt);
        for (i = 0; i < nq; i++) {
            cnt[(ka[2 * i] >> sh) & 0x7FF]++;
        }
        for (i = 0; i < (1 << 11); i++) {
            const uint32_t c = cnt[i];
            cnt[i] = sum;
            sum += c;
        }
        for (i = 0; i < nq; i++) {
            const uint32_t o = cnt[(ka[2 * i] >> sh) & 0x7FF]++;
            kb[2 * o] = ka[2 * i];
            kb[2 * o + 1] = ka[2 * i + 1];
        }
        t = ka, ka = kb, kb = t;
    }
    return ka;
}
