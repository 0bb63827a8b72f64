/*
 * sc_ssdf.c - SSDF public entry points: cloud packing, argument checks,
 * instruction-set dispatch and the threaded batch driver.  The arithmetic
 * lives in sc_ssdf_impl.h, compiled once per ISA.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_parallel.h"
#include "sc_ssdf.h"

/* below this many sample-query pairs per thread, starting a thread costs more
 * than it saves (thread start ~20 us ~ 2e4 pairs); results do not depend on it */
#define SC_SSDF_MIN_PAIRS_PER_THREAD ((ptrdiff_t)1 << 16)

static ptrdiff_t padded(ptrdiff_t n)
{
    return (n + SC_PAD - 1) / SC_PAD * SC_PAD;
}

/* ---- the spatial index (layout in sc_ssdf.h) ---- */

/* number of leaves of the complete binary tree (a power of two), or 0 for a cloud
   without an index.  Leaf j holds sorted samples [j SC_TREE_LEAF, (j + 1) SC_TREE_LEAF)
   (clipped to n): full leaves first, then possibly one partial, then empty ones. */
static ptrdiff_t tree_leaves(ptrdiff_t n)
{
    ptrdiff_t L = 1;
    if (n < SC_TREE_MIN) {
        return 0;
    }
    while (L * SC_TREE_LEAF < n) {
        L *= 2;
    }
    return L;
}

/* doubles per node: lo[D], hi[D], max log a */
#define NODE(D) (2 * (D) + 1)
/* doubles per leaf block: the 3 D + 3 arrays of SC_TREE_LEAF slots each */
#define BLOCK(D) ((3 * (D) + 3) * SC_TREE_LEAF)

static ptrdiff_t tree_size(int D, ptrdiff_t n)
{
    const ptrdiff_t L = tree_leaves(n);
    return L == 0 ? 0 : 2 * L * NODE(D) + (3 * D + 3) * L * SC_TREE_LEAF + SC_PAD;
}

/* the index's parts: node array and the leaf-ordered packed cloud */
static const double *tree_nodes(const sc_packed_cloud *pc)
{
    return pc->data + (3 * pc->dim + 3) * pc->npad + SC_PAD;
}

static const double *tree_cloud(const sc_packed_cloud *pc)
{
    return tree_nodes(pc) + 2 * tree_leaves(pc->n) * NODE(pc->dim);
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

static void select_kth(double *idx, ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t k, const double *p,
                       int D, int ax)
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

/* order idx[lo, hi) (the samples of `nleaf` consecutive leaves) so that each half of
   the leaves gets the samples on its side of a cut along the longest axis */
static void split(double *idx, ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t nleaf, const double *p,
                  int D)
{
    double mn[3], mx[3];
    ptrdiff_t i, mid;
    int k, ax = 0;
    if (nleaf <= 1 || hi - lo <= 1) {
        return;
    }
    mid = lo + (nleaf / 2) * SC_TREE_LEAF; /* the left half's leaves are full */
    if (mid >= hi) {
        split(idx, lo, hi, nleaf / 2, p, D);
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
    split(idx, lo, mid, nleaf / 2, p, D);
    split(idx, mid, hi, nleaf / 2, p, D);
}

/* build the index of a packed cloud (main arrays and header already filled) */
static void tree_build(const sc_cloud *c, double *buf, ptrdiff_t npad)
{
    const int D = c->dim;
    const ptrdiff_t n = c->n, L = tree_leaves(n);
    double *nodes = buf + (3 * D + 3) * npad + SC_PAD, *tc = nodes + 2 * L * NODE(D);
    /* the median-sorted order lives in the main |q|^2 array meanwhile (restored below) */
    double *idx = buf + (3 * D + 2) * npad;
    const double *src_hdr = buf + (3 * D + 3) * npad;
    ptrdiff_t i, j, s, a;
    int k;

    for (i = 0; i < n; i++) {
        idx[i] = (double)i;
    }
    split(idx, 0, n, L, c->p, D);
    /* leaf blocks: p, n, m, log a, q copied; |q|^2 from q as in sc_cloud_pack */
    for (j = 0; j < L; j++) {
        ptrdiff_t lo, hi;
        leaf_range(n, j, &lo, &hi);
        for (s = 0; s < SC_TREE_LEAF; s++) {
            double *blk = tc + j * BLOCK(D) + s, qq = 0.0;
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
        tc[L * BLOCK(D) + k] = src_hdr[k];
    }
    /* node boxes: leaves, then parents; node 0 (unused by the tree) keeps the smallest
       log a, for the cut */
    for (k = 0; k < NODE(D); k++) {
        nodes[k] = 0.0;
    }
    nodes[0] = INFINITY;
    for (j = 0; j < L; j++) {
        double *nd = nodes + (L + j) * NODE(D);
        int first = 1;
        for (k = 0; k < 2 * D; k++) {
            nd[k] = 0.0; /* an empty leaf: never visited (max log a = -inf) */
        }
        nd[2 * D] = -INFINITY;
        for (s = 0; s < SC_TREE_LEAF; s++) {
            const double *blk = tc + j * BLOCK(D) + s;
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
        double *nd = nodes + j * NODE(D);
        const double *l = nodes + 2 * j * NODE(D), *r = nodes + (2 * j + 1) * NODE(D);
        if (r[2 * D] == -INFINITY || l[2 * D] == -INFINITY) { /* an empty side */
            memcpy(nd, r[2 * D] == -INFINITY ? l : r, NODE(D) * sizeof(double));
            continue;
        }
        for (k = 0; k < D; k++) {
            nd[k] = l[k] < r[k] ? l[k] : r[k];
            nd[D + k] = l[D + k] > r[D + k] ? l[D + k] : r[D + k];
        }
        nd[2 * D] = l[2 * D] > r[2 * D] ? l[2 * D] : r[2 * D];
    }
}

ptrdiff_t sc_cloud_packed_size(int dim, ptrdiff_t n)
{
    if ((dim != 2 && dim != 3) || n < 1 || n > PTRDIFF_MAX / 64 / (3 * dim + 4)) {
        return -1;
    }
    return (3 * dim + 3) * padded(n) + SC_PAD + tree_size(dim, n);
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
    npad = padded(c->n);
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
    if (tree_leaves(c->n) > 0) {
        tree_build(c, buf, npad);
    }
    if (pc) {
        pc->dim = D;
        pc->n = c->n;
        pc->npad = npad;
        pc->data = buf;
    }
    return SC_OK;
}

/* pruned queries are taken in chunks of at most this many (see ssdf_pruned_range) */
#define SC_PRUNE_CHUNK 4096

/* pruned-query scratch: the kernel's work (tp), the leaf list (2 L: leaf, bound), the
   kept blocks' pointers (L, stored in doubles' space) and a chunk's sort keys (last) */
static ptrdiff_t pruned_workspace(ptrdiff_t n)
{
    const ptrdiff_t L = tree_leaves(n);
    return L == 0 ? 0 : L * SC_TREE_LEAF + 3 * L + 2 * SC_PRUNE_CHUNK;
}

ptrdiff_t sc_ssdf_workspace_size(const sc_packed_cloud *pc)
{
    ptrdiff_t w;
    if (pc == NULL) {
        return 0;
    }
    w = pruned_workspace(pc->n);
    return w > pc->npad ? w : pc->npad;
}

ptrdiff_t sc__ssdf_workspace_pair(const sc_packed_cloud *a, const sc_packed_cloud *b)
{
    const ptrdiff_t wa = sc_ssdf_workspace_size(a), wb = sc_ssdf_workspace_size(b);
    return wa > wb ? wa : wb;
}

typedef struct ssdf_job {
    sc__ssdf_rows_fn fn;
    const sc_packed_cloud *pc;
    double eps;
    const double *x;
    double *work;
    ptrdiff_t wsize;
    double *phi, *g, *h, *t;
} ssdf_job;

/* the whole cloud as the kernel's one block; ptr[0] must outlive B */
static void whole_cloud(const sc_packed_cloud *pc, const double **ptr, sc__blocks *B)
{
    ptr[0] = pc->data;
    B->ptr = ptr;
    B->n = 1;
    B->bs = B->as = pc->npad;
    B->hdr = pc->data + (3 * pc->dim + 3) * pc->npad;
    B->tcut = INFINITY;
}

static int ssdf_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const ssdf_job *j = (const ssdf_job *)ctx;
    const ptrdiff_t D = j->pc->dim;
    const double *ptr[1];
    sc__blocks B;
    whole_cloud(j->pc, ptr, &B);
    return j->fn(&B, (int)D, j->eps, end - begin, j->x + begin * D, j->work + tid * j->wsize,
                 j->phi ? j->phi + begin : NULL, j->g ? j->g + begin * D : NULL,
                 j->h ? j->h + begin * D * D : NULL, j->t ? j->t + begin * D * D * D : NULL);
}

/* upper bound of s_i = log a_i - |x - p_i|^2 / eps over a node */
static double node_bound(const double *nd, int D, const double *x, double ie)
{
    double d2 = 0.0;
    int k;
    for (k = 0; k < D; k++) {
        const double lo = nd[k] - x[k], hi = x[k] - nd[D + k];
        const double e = lo > 0.0 ? lo : hi > 0.0 ? hi : 0.0;
        d2 += e * e;
    }
    return nd[2 * D] - d2 * ie;
}

/* one query against the index: the leaves that can matter, as kernel blocks (pointers
   into the leaf-ordered copy; the list lives in wk), in traversal order.  The cut T is
   per query, the smaller of two bounds on what the dropped samples can contribute
   (sc_ssdf.h, "Pruning"): with r = |x - c0| + rho (no sample is farther),
     far:  T_f = ln(1e18) + ln 128 + ln n + 1 + ln(1 + r rho^3 / eps^2)    (|H| <= 2 r,
           |P| <= 2 rho);
     near: T_n = ln(1e18) + ln 128 + ln n + 1 + 2 ln(d* / eps + T_f + da)   (|H|, |P| <=
           |x - p_i| + |x - p_kept|, |x - p_i|^2 <= d* + (T + da) eps for a dropped
           sample; da = max log a - min log a);
   the walk prunes with T_f (>= T), the leaves are then cut at T = min(T_f, T_n). */
static void gather(const sc_packed_cloud *pc, double eps, const double *xq, double *wk,
                   sc__blocks *B)
{
    const int D = pc->dim;
    const ptrdiff_t L = tree_leaves(pc->n), tp = L * SC_TREE_LEAF;
    const double *nodes = tree_nodes(pc), *tc = tree_cloud(pc), ie = 1.0 / eps;
    const double *hdr = tc + L * BLOCK(D), rho = hdr[D];
    const double base = 41.45 + 4.86 + log((double)pc->n) + 1.0;
    double *list = wk + tp;
    const double **ptr = (const double **)(void *)(list + 2 * L);
    double best = -INFINITY, slack, cut, Tf, Tq, r = 0.0, sb[64];
    ptrdiff_t nlist = 0, kept = 0, t, stk[64];
    int top, k;

    for (k = 0; k < D; k++) {
        r += (xq[k] - hdr[k]) * (xq[k] - hdr[k]);
    }
    r = sqrt(r) + rho;
    /* rounding of the bounds and of s: u r^2 / eps, with a wide margin */
    slack = 1.0 + 1e-13 * r * r * ie;
    Tf = base + log1p(r * rho * rho * rho * ie * ie);
    /* depth-first, the more promising child first; entries (node, its bound) */
    stk[0] = 1;
    sb[0] = node_bound(nodes + NODE(D), D, xq, ie);
    top = 1;
    while (top > 0) {
        const ptrdiff_t node = stk[top - 1];
        const double ub = sb[top - 1];
        top--;
        cut = best - Tf - slack;
        if (ub < cut) {
            continue;
        }
        if (node >= L) {
            /* the leaf's samples raise best (a lower bound of max s: the cut only gets
               more conservative where it is not raised) unless the leaf's bound says
               they cannot raise it by more than 1 */
            if (ub > best + 1.0) {
                const double *blk = tc + (node - L) * BLOCK(D);
                double d2[SC_TREE_LEAF];
                for (t = 0; t < SC_TREE_LEAF; t++) {
                    const double e = xq[0] - blk[t];
                    d2[t] = e * e;
                }
                for (k = 1; k < D; k++) {
                    for (t = 0; t < SC_TREE_LEAF; t++) {
                        const double e = xq[k] - blk[k * SC_TREE_LEAF + t];
                        d2[t] += e * e;
                    }
                }
                for (t = 0; t < SC_TREE_LEAF; t++) {
                    const double sv = blk[(2 * D + 1) * SC_TREE_LEAF + t] - d2[t] * ie;
                    best = sv > best ? sv : best;
                }
            }
            list[2 * nlist] = (double)(node - L);
            list[2 * nlist + 1] = ub;
            nlist++;
        } else {
            const double bl = node_bound(nodes + 2 * node * NODE(D), D, xq, ie);
            const double br = node_bound(nodes + (2 * node + 1) * NODE(D), D, xq, ie);
            const int first = bl >= br ? 1 : 0; /* pushed first = popped last */
            const double b1 = first ? br : bl, b2 = first ? bl : br;
            if (b1 >= cut) {
                stk[top] = 2 * node + first;
                sb[top] = b1;
                top++;
            }
            if (b2 >= cut) {
                stk[top] = 2 * node + 1 - first;
                sb[top] = b2;
                top++;
            }
        }
    }
    /* the per-query cut; best >= max_i s_i - 1, and d* / eps <= max log a - best */
    {
        const double maxla = nodes[NODE(D) + 2 * D], da = maxla - nodes[0];
        const double Tn = base + 2.0 * log(fmax(maxla - best, 0.0) + Tf + da + 1.0);
        Tq = Tn < Tf ? Tn : Tf;
    }
    cut = best - Tq - slack;
    for (t = 0; t < nlist; t++) {
        if (list[2 * t + 1] >= cut) {
            ptr[kept++] = tc + (ptrdiff_t)list[2 * t] * BLOCK(D);
        }
    }
    if (kept == 0) { /* unreachable unless every bound is NaN; keep leaf 0 */
        ptr[kept++] = tc;
    }
    B->ptr = ptr;
    B->n = kept;
    B->bs = B->as = SC_TREE_LEAF;
    B->hdr = hdr;
    /* within the kept leaves, whole groups of SC_PAD samples below the same cut (measured
       from the kernel's own s*, >= best) are skipped too */
    B->tcut = Tq + slack;
}

/* whether a query point's coordinates are all finite */
static int query_finite(int D, const double *xq)
{
    return isfinite(xq[0]) && isfinite(xq[1]) && (D == 2 || isfinite(xq[2]));
}

/* 3 x 17 or 2 x 26 bits of the position in the box [lo, lo + 1 / sc), interleaved: a
   Morton key, exact in a double */
static double morton_key(int D, const double *xq, const double *lo, const double *sc)
{
    const int bits = D == 3 ? 17 : 26;
    const double top = (double)(((int64_t)1 << bits) - 1);
    uint64_t key = 0, v[3] = {0, 0, 0};
    int k, b;
    for (k = 0; k < D; k++) {
        double f = (xq[k] - lo[k]) * sc[k] * top;
        f = f > 0.0 ? (f < top ? f : top) : 0.0;
        v[k] = (uint64_t)f;
    }
    for (b = bits - 1; b >= 0; b--) {
        for (k = 0; k < D; k++) {
            key = (key << 1) | ((v[k] >> b) & 1u);
        }
    }
    return (double)key;
}

static int pair_less(const void *pa, const void *pb)
{
    const double *a = (const double *)pa, *b = (const double *)pb;
    return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : (a[1] > b[1]) - (a[1] < b[1]);
}

/* Queries are taken in chunks of SC_PRUNE_CHUNK, in the order of a Morton curve through
   the chunk's bounding box, so that neighbours follow each other and find the leaves
   they share in cache (a cloud's leaf blocks outgrow L2 from ~10^4 samples).  Each
   query's result depends on its own coordinates alone, so the order changes nothing
   but the time. */
static int ssdf_pruned_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const ssdf_job *j = (const ssdf_job *)ctx;
    const int D = j->pc->dim;
    double *wk = j->work + tid * j->wsize;
    double *keys = wk + pruned_workspace(j->pc->n) - 2 * SC_PRUNE_CHUNK;
    ptrdiff_t c0, r;
    for (c0 = begin; c0 < end; c0 += SC_PRUNE_CHUNK) {
        const ptrdiff_t c1 = end - c0 < SC_PRUNE_CHUNK ? end : c0 + SC_PRUNE_CHUNK;
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        double sc[3] = {0.0, 0.0, 0.0};
        ptrdiff_t nq = 0;
        int k;
        /* the finite queries' bounding box; a non-finite query is marked by key -1 */
        for (r = c0; r < c1; r++) {
            const double *xq = j->x + r * D;
            const int ok = query_finite(D, xq);
            for (k = 0; ok && k < D; k++) {
                lo[k] = xq[k] < lo[k] ? xq[k] : lo[k];
                hi[k] = xq[k] > hi[k] ? xq[k] : hi[k];
            }
            keys[2 * nq] = ok ? 0.0 : -1.0;
            keys[2 * nq + 1] = (double)r;
            nq++;
        }
        for (k = 0; k < D; k++) {
            sc[k] = hi[k] > lo[k] ? 1.0 / (hi[k] - lo[k]) : 0.0;
            sc[k] = isfinite(sc[k]) ? sc[k] : 0.0;
        }
        for (r = 0; r < nq; r++) {
            if (keys[2 * r] == 0.0) {
                keys[2 * r] = morton_key(D, j->x + (ptrdiff_t)keys[2 * r + 1] * D, lo, sc);
            }
        }
        qsort(keys, (size_t)nq, 2 * sizeof(double), pair_less);
        for (r = 0; r < nq; r++) {
            const ptrdiff_t q = (ptrdiff_t)keys[2 * r + 1];
            const double *xq = j->x + q * D, *whole[1];
            sc__blocks B;
            int st;
            if (keys[2 * r] < 0.0) {
                whole_cloud(j->pc, whole, &B); /* the kernel writes the NaN row */
            } else {
                gather(j->pc, j->eps, xq, wk, &B);
            }
            /* the kernel's scratch (kept SC_TREE_LEAF <= tp doubles) at the start of wk */
            st = j->fn(&B, D, j->eps, 1, xq, wk, j->phi ? j->phi + q : NULL,
                       j->g ? j->g + q * D : NULL, j->h ? j->h + q * D * D : NULL,
                       j->t ? j->t + q * D * D * D : NULL);
            if (st != SC_OK) {
                return st;
            }
        }
    }
    return SC_OK;
}

/* a single-sample cloud is a half-space: phi = n.x - n.p, grad = n, no curvature (the
   softmax has one term of weight 1).  Closed form, exact for every finite x. */
static void ssdf_halfspace(const sc_packed_cloud *pc, ptrdiff_t m, const double *x, double *phi,
                           double *g, double *h, double *t)
{
    const int D = pc->dim;
    const ptrdiff_t np = pc->npad;
    const double *nrm = pc->data + D * np, mm = pc->data[2 * D * np];
    ptrdiff_t r;
    int k;
    for (r = 0; r < m; r++) {
        const double *xq = x + r * D;
        const int ok = query_finite(D, xq);
        double v = 0.0;
        for (k = 0; k < D; k++) {
            v += nrm[k * np] * xq[k];
        }
        if (phi) {
            phi[r] = ok ? v - mm : NAN;
        }
        for (k = 0; g && k < D; k++) {
            g[r * D + k] = ok ? nrm[k * np] : NAN;
        }
        for (k = 0; h && k < D * D; k++) {
            h[r * D * D + k] = ok ? 0.0 : NAN;
        }
        for (k = 0; t && k < D * D * D; k++) {
            t[r * D * D * D + k] = ok ? 0.0 : NAN;
        }
    }
}

int sc_ssdf(const sc_packed_cloud *pc, double eps, ptrdiff_t m, const double *x, int isa,
            int nthreads, double *work, double *phi, double *dphi_dx, double *d2phi_dx2,
            double *d3phi_dx3)
{
    ssdf_job job;
    double pairs_per_thread;
    int dense;

    if (pc == NULL || pc->data == NULL || (pc->dim != 2 && pc->dim != 3) || pc->n < 1 ||
        pc->npad != padded(pc->n) || !(eps > 0.0) || !isfinite(eps) || m < 0 || nthreads < 1 ||
        (m > 0 && (x == NULL || work == NULL))) {
        return SC_EINVAL;
    }
    isa = sc_isa_resolve(isa);
    if (isa < 0) {
        return isa;
    }
    dense = SC_IS_DENSE(isa) || tree_leaves(pc->n) == 0;
    isa %= SC_DENSE;
    job.fn = isa == SC_ISA_AVX512 ? sc__ssdf_rows_avx512
             : isa == SC_ISA_AVX2 ? sc__ssdf_rows_avx2
                                  : sc__ssdf_rows_generic;
    job.pc = pc;
    job.eps = eps;
    job.x = x;
    job.work = work;
    job.wsize = sc_ssdf_workspace_size(pc);
    job.phi = phi;
    job.g = dphi_dx;
    job.h = d2phi_dx2;
    job.t = d3phi_dx3;
    if (m == 0) {
        return SC_OK;
    }
    if (pc->n == 1) {
        ssdf_halfspace(pc, m, x, phi, dphi_dx, d2phi_dx2, d3phi_dx3);
        return SC_OK;
    }
    /* fewer threads for small problems; per-query results never depend on it */
    /* in double: m * npad may overflow ptrdiff_t on 32-bit platforms */
    /* pruned: a query costs about as much as ~1000 dense sample visits */
    {
        const double per = dense ? (double)pc->npad : (pc->npad < 1000 ? (double)pc->npad : 1000.0);
        pairs_per_thread = (double)m * per / (double)nthreads;
        if (pairs_per_thread < (double)SC_SSDF_MIN_PAIRS_PER_THREAD) {
            double want = (double)m * per / (double)SC_SSDF_MIN_PAIRS_PER_THREAD;
            nthreads = want < 1.0 ? 1 : (int)want;
        }
    }
    if (dense) {
        return sc_parallel_for(m, nthreads, ssdf_range, &job);
    }
    return sc_parallel_for(m, nthreads, ssdf_pruned_range, &job);
}
