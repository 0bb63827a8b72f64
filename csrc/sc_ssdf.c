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
    /* the smallest power of two >= m = ceil(n / SC_TREE_LEAF).  Called several times per
       pruned query (the index's parts are located from it): one count-leading-zeros
       instead of a loop of ~10 doublings (~660 instructions per query in all) */
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

/* doubles per node: lo[D], hi[D], max log a */
#define NODE(D) (2 * (D) + 1)

/* whether a cloud of n samples carries group boxes (no index; a single sample is a
   half-space, evaluated in closed form): then the query-lane kernel evaluates it */
static int group_boxed(ptrdiff_t n)
{
    return n >= 2 && tree_leaves(n) == 0;
}

/* after the header: the index, or the group boxes (8 doubles per group of SC_PAD
   samples: npad in all) */
static ptrdiff_t index_size(int D, ptrdiff_t n)
{
    const ptrdiff_t L = tree_leaves(n);
    if (L == 0) {
        return group_boxed(n) ? padded(n) : 0;
    }
    return 2 * L * NODE(D) + (3 * D + 3) * L * SC_TREE_LEAF + SC_PAD;
}

/* each group of SC_PAD samples' box and largest log a over its samples (not the padding,
   whose log a is -inf): lo[3], hi[3], max log a, 0 (2D: lo[2] = hi[2] = 0); a group of
   padding only, none in a packed cloud, would get an empty box at 0 and -inf.  Read by
   the query-lane kernel (sc_ssdf_impl.h, lanes_chunk) */
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
    return (3 * dim + 3) * padded(n) + SC_PAD + index_size(dim, n);
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
    } else if (group_boxed(c->n)) {
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

/* pruned queries are taken in chunks of at most this many (see ssdf_pruned_range) */
#define SC_PRUNE_CHUNK 4096
/* consecutive queries (in Morton order) that share one tree walk ... */
#define SC_PRUNE_GROUP 64
/* ... and whose bounding box's squared diagonal stays within this many eps.  A wider
   group lists leaves that none of its queries keeps (each member scans every candidate),
   a narrower one walks more often.  Measured against (16, 16 eps), two spheres in light
   contact, one thread: 10^3 samples each -23 %, 10^4 -15 %, 10^5 -4 %; 2 x 10^4
   scattered queries (normal, 0.3 m) +3 % ((64, 64 eps): -13 %, -12 %, -8 %, +4 %) */
#define SC_PRUNE_GROUP_WIDTH2 128.0

/* pruned-query scratch (ssdf_pruned_range): the kernel's work (2 L SC_TREE_LEAF: its d_i
   and s_i), the kept blocks' pointers (L + SC_CAND_PAD, stored in doubles' space), the
   candidates (7 arrays, their known largest s_i and their leaf blocks; each L +
   SC_CAND_PAD), their bounds (3 (L + SC_CAND_PAD): also the walks' scratch), the group's
   cuts, a chunk's sort keys (twice: the radix sort's two buffers) and the kernel's list
   of evaluated groups (L SC_TREE_LEAF / SC_PAD) */
static ptrdiff_t pruned_workspace(ptrdiff_t n)
{
    const ptrdiff_t L = tree_leaves(n);
    return L == 0 ? 0
                  : 2 * L * SC_TREE_LEAF + 13 * (L + SC_CAND_PAD) + 2 * SC_PRUNE_GROUP +
                        4 * SC_PRUNE_CHUNK + L * (SC_TREE_LEAF / SC_PAD);
}

ptrdiff_t sc_ssdf_workspace_size(const sc_packed_cloud *pc)
{
    ptrdiff_t w;
    if (pc == NULL) {
        return 0;
    }
    if (group_boxed(pc->n)) { /* the query-lane kernel: d_i, then w_i, per lane */
        return pc->npad * SC_VW_MAX;
    }
    w = pruned_workspace(pc->n);
    return w > 2 * pc->npad ? w : 2 * pc->npad; /* the kernel's d_i and s_i */
}

ptrdiff_t sc__ssdf_workspace_pair(const sc_packed_cloud *a, const sc_packed_cloud *b)
{
    const ptrdiff_t wa = sc_ssdf_workspace_size(a), wb = sc_ssdf_workspace_size(b);
    return wa > wb ? wa : wb;
}

typedef struct ssdf_job {
    sc__ssdf_rows_fn fn;
    sc__ssdf_best_fn best;
    sc__ssdf_keep_fn keep;
    sc__ssdf_leafmax_fn leafmax;
    sc__ssdf_list_fn list;
    const sc_packed_cloud *pc;
    double eps;
    const double *x;
    double *work;
    ptrdiff_t wsize;
    double *phi, *g, *h, *t;
    double qbase; /* a cloud without an index, pruned: the cut's constant part (else NaN) */
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
    B->qbase = NAN;
    B->tq = NULL;
    B->star = NULL;
    B->evl = NULL;
    B->lanes = 0;
}

/* Dense (SC_DENSE), or a cloud without an index (fewer than SC_TREE_MIN samples) pruned:
   there the kernel gives each query a far cut (job qbase; sc__blocks) and skips every group of
   SC_PAD samples whose s_i all fall below s* - cut.  A small body near a large one (the
   push-T pusher, 32 samples, seen from the T's 170) keeps one or two of its four groups
   for most queries.  The cut depends on the query alone. */
static int ssdf_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const ssdf_job *j = (const ssdf_job *)ctx;
    const ptrdiff_t D = j->pc->dim;
    const double *ptr[1];
    sc__blocks B;
    whole_cloud(j->pc, ptr, &B);
    B.qbase = j->qbase;
    B.lanes = group_boxed(j->pc->n);
    return j->fn(&B, (int)D, j->eps, end - begin, j->x + begin * D, j->work + tid * j->wsize,
                 j->phi ? j->phi + begin : NULL, j->g ? j->g + begin * D : NULL,
                 j->h ? j->h + begin * D * D : NULL, j->t ? j->t + begin * D * D * D : NULL);
}

/* Pruned queries (sc_ssdf.h, "Pruning").  For a query x, with r = |x - c0| + rho (no
   sample is farther), the cut T is the smaller of two bounds on what the dropped samples
   can contribute:
     far:  T_f = ln(1e18) + ln 128 + ln n + 1 + ln(1 + r rho^3 / eps^2)    (|H| <= 2 r,
           |P| <= 2 rho);
     near: T_n = ln(1e18) + ln 128 + ln n + 1 + 2 ln(d* / eps + T_f + da + 1)   (|H|,
           |P| <= |x - p_i| + |x - p_kept|, |x - p_i|^2 <= d* + (T + da) eps for a
           dropped sample; da = max log a - min log a).
   The kernel drops every group of SC_PAD samples whose s_i all fall below s* - T(s*) -
   slack, with s* = max_i s_i its own and T(s*) the cut above taken from it (sc__blocks
   tq): what a query drops depends on x alone.  The gather lists a superset of the leaves
   that can hold a kept group (query_blocks); a listed leaf below s* - T(s*) - slack - 1
   adds exact zeros.

   Consecutive queries in Morton order (up to SC_PRUNE_GROUP of them, within a box of
   squared diagonal SC_PRUNE_GROUP_WIDTH2 eps) share one tree walk, for the bounding box of
   the group: it lists every leaf that any of them may keep (the candidates, with their
   boxes as arrays).  A query alone (scattered queries) gets a per-query walk instead,
   which also records the largest s_i of the leaves it evaluates.  Each query then scans
   the candidates with the vectorized per-ISA helpers (sc__ssdf_best_*, sc__ssdf_keep_*).
   What a query keeps depends on the query alone, never on the group or on the previous
   query (see query_blocks), so results do not depend on the batch, the order or the
   threads.
   Measured against the per-query walk alone: two 10^4-sample spheres in contact 1.4x
   faster, 2 x 10^4 scattered queries (normal, 0.3 m, around one of them) the same. */

/* the pruning constant without its last term: ln(1e18) + ln 128 + ln n + 1 */
static double cut_base(const sc_packed_cloud *pc)
{
    return 41.45 + 4.86 + log((double)pc->n) + 1.0;
}

/* a query's far cut T_f and the rounding slack of its bounds and of s (u r^2 / eps, with
   a wide margin), from r = |x - c0| + rho; returns r */
static double query_cut(const sc_packed_cloud *pc, double ie, double base, const double *xq,
                        double *Tf, double *slack)
{
    const int D = pc->dim;
    const double *hdr = tree_cloud(pc) + tree_leaves(pc->n) * SC_LEAF_BLOCK(D), rho = hdr[D];
    double r = 0.0;
    int k;
    for (k = 0; k < D; k++) {
        r += (xq[k] - hdr[k]) * (xq[k] - hdr[k]);
    }
    r = sqrt(r) + rho;
    *slack = 1.0 + 1e-13 * r * r * ie;
    *Tf = base + sc__ln_up(1.0 + r * rho * rho * rho * ie * ie);
    return r;
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
static void group_walk(const sc_packed_cloud *pc, double ie, const double *qlo, const double *qhi,
                       double Tf, double slack, double *gub, sc__cands *C)
{
    const int D = pc->dim;
    const ptrdiff_t L = tree_leaves(pc->n);
    const double *nodes = tree_nodes(pc), *tc = tree_cloud(pc);
    double best, cut;
    ptrdiff_t node = 1, stk[64], nc = 0, t;
    int top, k;

    while (node < L) {
        const double bl = box_bound(nodes + 2 * node * NODE(D), D, qlo, qhi, ie);
        const double br = box_bound(nodes + (2 * node + 1) * NODE(D), D, qlo, qhi, ie);
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
        nd = nodes + node * NODE(D);
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
static void single_walk(const sc_packed_cloud *pc, sc__ssdf_leafmax_fn leafmax, double ie,
                        const double *xq, double Tf, double slack, double *gub, sc__cands *C)
{
    const int D = pc->dim;
    const ptrdiff_t L = tree_leaves(pc->n);
    const double *nodes = tree_nodes(pc), *tc = tree_cloud(pc);
    double best = -INFINITY, cut = -INFINITY, sb[64];
    ptrdiff_t stk[64], nc = 0, t, w;
    int top = 1, k;

    stk[0] = 1;
    sb[0] = box_bound(nodes + NODE(D), D, xq, xq, ie);
    while (top > 0) {
        const ptrdiff_t node = stk[top - 1];
        const double ub = sb[top - 1];
        top--;
        if (!(ub >= cut)) {
            continue;
        }
        if (node < L) {
            const double *l = nodes + 2 * node * NODE(D), *r = l + NODE(D);
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
            const double *nd = nodes + (L + lf) * NODE(D);
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

/* One query's listed leaves, as kernel blocks (pointers into the leaf-ordered copy) in
   increasing leaf order, and the parameters of its cut (tq, for the kernel).
   The kernel finds s* = max_i s_i among the listed leaves and skips every group of
   SC_PAD samples whose s_i all fall below s* - T(s*) - slack (T decreasing in its
   argument: T(s) = min(T_f, T_n(s)), T_n from d*^2 / eps <= max log a - s).  A leaf
   whose bound is below s* - T(s*) - slack - 1 holds no sample above that cut, even after
   the rounding of s_i (what the slack covers), so it adds exact zeros: the result is the
   same for every list that contains the others (in leaf order).  This lists the
   candidates whose bound reaches L - T(L) - slack - 2 for a lower bound L of s*: it
   contains them (L <= s* up to rounding, which the extra 1 covers), and so does the
   candidate list (group_walk: a leaf outside it has bound < s* - T_f - slack - 2).
   seed: a lower bound of s* (the previous query's sample of largest weight, at x), or
   NaN: then L = best_of's (the largest s_i of the leaf of greatest bound, the first such,
   then of every leaf whose bound exceeds that + 1, so L >= s* - 1). */
static void query_blocks(const ssdf_job *job, double ie, double base, const double *xq,
                         double Tf, double slack, double seed, const sc__cands *C, double *ub,
                         const double **ptr, double *tq, sc__blocks *B)
{
    const sc_packed_cloud *pc = job->pc;
    const int D = pc->dim;
    const ptrdiff_t L = tree_leaves(pc->n);
    const double *nodes = tree_nodes(pc), *tc = tree_cloud(pc);
    const double maxla = nodes[NODE(D) + 2 * D], da = maxla - nodes[0];
    const int seeded = seed == seed;
    /* with a seed the cut is known before the bounds: one pass lists the leaves */
    const double best = seeded ? seed : job->best(C, D, xq, ie, ub);
    double cut, Tq;
    ptrdiff_t kept;
    /* T(L): d*^2 / eps <= max log a - L */
    {
        const double Tn = base + 2.0 * sc__ln_up(fmax(maxla - best, 0.0) + Tf + da + 1.0);
        Tq = Tn < Tf ? Tn : Tf;
    }
    cut = best - Tq - slack - 2.0;
    kept = seeded ? job->list(C, D, xq, ie, cut, ptr) : job->keep(C, ub, cut, ptr);
    if (kept == 0) { /* unreachable unless every bound is NaN; keep leaf 0 */
        ptr[kept++] = tc;
    }
    B->ptr = ptr;
    B->n = kept;
    B->bs = B->as = SC_TREE_LEAF;
    B->hdr = tc + L * SC_LEAF_BLOCK(D);
    /* the kernel's cut, from its own s* */
    tq[0] = base;
    tq[1] = Tf;
    tq[2] = maxla;
    tq[3] = Tf + da + 1.0;
    tq[4] = slack;
    B->tq = tq;
    B->tcut = NAN; /* the kernel's, from tq */
    B->qbase = NAN;
    B->star = NULL;
    B->evl = NULL;
    B->lanes = 0;
}

/* s_i = log a_i - |x - p_i|^2 / eps of slot o of a leaf block: a lower bound of the
   largest s_i at x (up to its rounding, which query_blocks' margin covers) */
static double seed_value(const double *blk, ptrdiff_t o, int D, const double *xq, double ie)
{
    double d2 = 0.0;
    int k;
    for (k = 0; k < D; k++) {
        const double e = xq[k] - blk[k * SC_TREE_LEAF + o];
        d2 += e * e;
    }
    return blk[(2 * D + 1) * SC_TREE_LEAF + o] - d2 * ie;
}

/* the kernel on one query q (row q of the outputs) over the blocks B */
static int query_rows(const ssdf_job *j, const sc__blocks *B, ptrdiff_t q, double *wk)
{
    const ptrdiff_t D = j->pc->dim;
    return j->fn(B, (int)D, j->eps, 1, j->x + q * D, wk, j->phi ? j->phi + q : NULL,
                 j->g ? j->g + q * D : NULL, j->h ? j->h + q * D * D : NULL,
                 j->t ? j->t + q * D * D * D : NULL);
}

/* bit i of x (i < 32) to bit 2 i, and (i < 21) to bit 3 i: the usual shift-and-mask
   spreads (the bit-by-bit loop they replace took ~400 instructions per query) */
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
static uint64_t morton_key(int D, const double *xq, const double *lo, const double *sc)
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
   neighbours together (results do not depend on it); this replaced a qsort that took
   ~5 % of a pruned separation field. */
static uint64_t *radix_sort(uint64_t *ka, uint64_t *kb, ptrdiff_t nq)
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

/* Queries are taken in chunks of SC_PRUNE_CHUNK, in the order of a Morton curve through
   the chunk's bounding box, so that neighbours follow each other and find the leaves
   they share in cache (a cloud's leaf blocks outgrow L2 from ~10^4 samples).  Each
   query's result depends on its own coordinates alone, so the order changes nothing
   but the time. */
static int ssdf_pruned_range(void *ctx, ptrdiff_t begin, ptrdiff_t end, int tid)
{
    const ssdf_job *j = (const ssdf_job *)ctx;
    const int D = j->pc->dim;
    const ptrdiff_t L = tree_leaves(j->pc->n), cp = L + SC_CAND_PAD;
    const double ie = 1.0 / j->eps, base = cut_base(j->pc);
    double *wk = j->work + tid * j->wsize;
    /* workspace (pruned_workspace): the kernel's scratch (d_i and s_i: 2 x kept leaves x
       SC_TREE_LEAF <= 2 L SC_TREE_LEAF), the kept pointers (cp: the branch-free list
       writes up to SC_CAND_PAD past its last), the candidates (9 arrays of cp), their
       bounds and the walks' scratch (3 cp), the group's cuts (2 SC_PRUNE_GROUP), the
       Morton keys and the sort's second buffer (2 x 2 SC_PRUNE_CHUNK, as uint64), the
       kernel's list of evaluated groups (L SC_TREE_LEAF / SC_PAD) */
    const double **ptr = (const double **)(void *)(wk + 2 * L * SC_TREE_LEAF);
    double *cand = wk + 2 * L * SC_TREE_LEAF + cp, *ub = cand + 9 * cp, *gcut = ub + 3 * cp;
    uint64_t *const kbuf = (uint64_t *)(void *)(gcut + 2 * SC_PRUNE_GROUP), *keys;
    ptrdiff_t *const evl = (ptrdiff_t *)(void *)(kbuf + 4 * SC_PRUNE_CHUNK);
    sc__cands C;
    /* the previous query's sample of largest weight (its leaf block and slot): its s_i at
       the next query is that query's seed */
    const double *sblk = NULL;
    ptrdiff_t c0, r, soff = 0, istar = 0;
    int k;
    for (k = 0; k < 7; k++) {
        C.c[k] = cand + k * cp;
    }
    C.smax = cand + 7 * cp;
    C.blk = (const double **)(void *)(cand + 8 * cp);
    for (c0 = begin; c0 < end; c0 += SC_PRUNE_CHUNK) {
        const ptrdiff_t c1 = end - c0 < SC_PRUNE_CHUNK ? end : c0 + SC_PRUNE_CHUNK;
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        double sc[3] = {0.0, 0.0, 0.0};
        ptrdiff_t nq = 0, g0, g1;
        /* the finite queries' bounding box; a non-finite query is marked by key -1 */
        for (r = c0; r < c1; r++) {
            const double *xq = j->x + r * D;
            const int ok = sc__finite_query(D, xq);
            for (k = 0; ok && k < D; k++) {
                lo[k] = xq[k] < lo[k] ? xq[k] : lo[k];
                hi[k] = xq[k] > hi[k] ? xq[k] : hi[k];
            }
            kbuf[2 * nq] = ok; /* 0: non-finite, sorted strictly first (below) */
            kbuf[2 * nq + 1] = (uint64_t)r;
            nq++;
        }
        for (k = 0; k < D; k++) {
            sc[k] = hi[k] > lo[k] ? 1.0 / (hi[k] - lo[k]) : 0.0;
            sc[k] = isfinite(sc[k]) ? sc[k] : 0.0;
        }
        for (r = 0; r < nq; r++) {
            if (kbuf[2 * r] != 0) { /* finite: the Morton key + 2^20, whose bits 20 to 52 are
                                       not all zero */
                kbuf[2 * r] = morton_key(D, j->x + (ptrdiff_t)kbuf[2 * r + 1] * D, lo, sc) +
                              ((uint64_t)1 << 20);
            }
        }
        keys = radix_sort(kbuf, kbuf + 2 * SC_PRUNE_CHUNK, nq);
        for (g0 = 0; g0 < nq; g0 = g1) {
            double qlo[3], qhi[3], Tf = 0.0, slack = 0.0, rg = -1.0;
            ptrdiff_t i;
            if (keys[2 * g0] == 0) {
                /* a non-finite query (sorted first): the dense kernel writes its NaN row */
                const ptrdiff_t q = (ptrdiff_t)keys[2 * g0 + 1];
                const double *whole[1];
                sc__blocks B;
                int st;
                whole_cloud(j->pc, whole, &B);
                st = query_rows(j, &B, q, wk);
                if (st != SC_OK) {
                    return st;
                }
                g1 = g0 + 1;
                continue;
            }
            /* a group: up to SC_PRUNE_GROUP finite queries (the non-finite ones sort first),
               their box, their cuts and the cut of the largest r (the largest T_f and
               slack) */
            for (k = 0; k < D; k++) {
                qlo[k] = INFINITY;
                qhi[k] = -INFINITY;
            }
            for (g1 = g0; g1 < nq && g1 - g0 < SC_PRUNE_GROUP; g1++) {
                const double *xq = j->x + (ptrdiff_t)keys[2 * g1 + 1] * D;
                double *qc = gcut + 2 * (g1 - g0), nlo[3], nhi[3], w2 = 0.0, rq;
                for (k = 0; k < D; k++) {
                    nlo[k] = xq[k] < qlo[k] ? xq[k] : qlo[k];
                    nhi[k] = xq[k] > qhi[k] ? xq[k] : qhi[k];
                    w2 += (nhi[k] - nlo[k]) * (nhi[k] - nlo[k]);
                }
                /* a group wider than a few smoothing lengths would list many leaves that
                   none of its queries keeps: close it (results do not depend on it) */
                if (g1 > g0 && w2 > SC_PRUNE_GROUP_WIDTH2 * j->eps) {
                    break;
                }
                for (k = 0; k < D; k++) {
                    qlo[k] = nlo[k];
                    qhi[k] = nhi[k];
                }
                rq = query_cut(j->pc, ie, base, xq, qc, qc + 1);
                if (rq > rg) {
                    rg = rq;
                    Tf = qc[0];
                    slack = qc[1];
                }
            }
            if (g1 - g0 == 1) {
                single_walk(j->pc, j->leafmax, ie, j->x + (ptrdiff_t)keys[2 * g0 + 1] * D, Tf, slack, ub, &C);
            } else {
                group_walk(j->pc, ie, qlo, qhi, Tf, slack, ub, &C);
            }
            for (i = g0; i < g1; i++) {
                const ptrdiff_t q = (ptrdiff_t)keys[2 * i + 1];
                const double *xq = j->x + q * D, *qc = gcut + 2 * (i - g0);
                double tq[5];
                sc__blocks B;
                int st;
                query_blocks(j, ie, base, xq, qc[0], qc[1],
                             sblk && g1 - g0 > 1 ? seed_value(sblk, soff, D, xq, ie) : NAN, &C,
                             ub, ptr, tq, &B);
                B.star = &istar;
                B.evl = evl;
                st = query_rows(j, &B, q, wk); /* its scratch: the start of wk */
                if (st != SC_OK) {
                    return st;
                }
                sblk = ptr[istar / SC_TREE_LEAF];
                soff = istar % SC_TREE_LEAF;
            }
        }
    }
    return SC_OK;
}

/* a single-sample cloud is a half-space: phi = n.x - n.p, grad = n, no curvature (the
   softmax has one term of weight 1).  Closed form, exact for every finite x. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void halfspace_rows(const int D, const sc_packed_cloud *pc, ptrdiff_t m,
                                  const double *x, double *phi, double *g, double *h, double *t)
{
    const ptrdiff_t np = pc->npad;
    const double *nrm = pc->data + D * np, mm = pc->data[2 * D * np];
    ptrdiff_t r;
    int k;
    for (r = 0; r < m; r++) {
        const double *xq = x + r * D;
        const int ok = sc__finite_query(D, xq);
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

/* D a constant in each copy: the loops unroll (the same operations) */
static void ssdf_halfspace(const sc_packed_cloud *pc, ptrdiff_t m, const double *x, double *phi,
                           double *g, double *h, double *t)
{
    if (pc->dim == 2) {
        halfspace_rows(2, pc, m, x, phi, g, h, t);
    } else {
        halfspace_rows(3, pc, m, x, phi, g, h, t);
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
    dense = SC_IS_DENSE(isa);
    isa %= SC_DENSE;
    {
        /* the per-ISA functions, indexed by SC_ISA_GENERIC, SC_ISA_AVX2, SC_ISA_AVX512 */
        static const sc__ssdf_rows_fn rows[3] = {sc__ssdf_rows_generic, sc__ssdf_rows_avx2,
                                                 sc__ssdf_rows_avx512};
        static const sc__ssdf_best_fn best[3] = {sc__ssdf_best_generic, sc__ssdf_best_avx2,
                                                 sc__ssdf_best_avx512};
        static const sc__ssdf_keep_fn keep[3] = {sc__ssdf_keep_generic, sc__ssdf_keep_avx2,
                                                 sc__ssdf_keep_avx512};
        static const sc__ssdf_leafmax_fn leafmax[3] = {
            sc__ssdf_leafmax_generic, sc__ssdf_leafmax_avx2, sc__ssdf_leafmax_avx512};
        static const sc__ssdf_list_fn list[3] = {sc__ssdf_list_generic, sc__ssdf_list_avx2,
                                                 sc__ssdf_list_avx512};
        job.fn = rows[isa];
        job.best = best[isa];
        job.keep = keep[isa];
        job.leafmax = leafmax[isa];
        job.list = list[isa];
    }
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
    job.qbase = dense ? NAN : cut_base(pc);
    if (dense || tree_leaves(pc->n) == 0) {
        return sc_parallel_for(m, nthreads, ssdf_range, &job);
    }
    return sc_parallel_for(m, nthreads, ssdf_pruned_range, &job);
}
