/*
 * sc_ssdf.c - the SSDF driver: argument checks, instruction-set dispatch, the threaded
 * batch, half-spaces in closed form, and the pruned queries that walk the spatial index
 * (sc_tree.c).  The arithmetic is the kernel template sc_ssdf_kernel.h, compiled once per
 * ISA.
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
 * with the per-ISA helpers (sc__ssdf_isa) (sc_ssdf.c, query_blocks, shows that what a
 * query keeps does not depend on its group).  The dense kernel then runs on the
 * kept leaves in place: O(log n + kept) per query instead of O(n); within them it
 * also skips every group of SC_PAD samples whose s_i all fall below s* - T (its
 * own exact s*; groups of SC_PAD whatever the vector width, so every ISA drops the
 * same samples).  Queries are taken in Morton order per chunk (for the cache and
 * the shared walks).  The kept set depends only on x, so the value is still
 * bitwise the same whatever the order, the batch or the threads.  Results equal
 * the dense computation (sc_options.dense) to rounding (tests: 1e-13 of each output's scale at
 * every order).  A cloud without an index (n < SC_TREE_MIN) is one block for every query,
 * whose groups of SC_PAD are skipped below the query's far cut (T_f above, its logarithm
 * rounded up to a multiple of ln 2; sc__blocks.qbase).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_parallel_internal.h"
#include "sc_ssdf_internal.h"
#include "sc_work_internal.h"

/* below this many sample-query pairs per thread, starting a thread costs more
 * than it saves (thread start ~20 us ~ 2e4 pairs); results do not depend on it */
#define SC_SSDF_MIN_PAIRS_PER_THREAD ((ptrdiff_t)1 << 16)

/* pruned queries are taken in chunks of at most this many (see ssdf_pruned_range) */
#define SC_PRUNE_CHUNK 4096
/* consecutive queries (in Morton order) that share one tree walk ... */
#define SC_PRUNE_GROUP 64
/* ... and whose bounding box's squared diagonal stays within this many eps.  A wider
   group lists leaves that none of its queries keeps (each member scans every candidate),
   a narrower one walks more often; (64, 128 eps) is the fastest on spheres of 10^3 to
   10^5 samples in light contact and on scattered queries.  The grouping changes the time,
   never a result. */
#define SC_PRUNE_GROUP_WIDTH2 128.0

/* A pruned query's scratch (ssdf_pruned_range), per thread */
typedef struct {
    double *kernel;     /* the kernel's d_i and s_i: 2 x kept leaves x SC_TREE_LEAF */
    const double **ptr; /* the kept leaf blocks (the branch-free list writes up to
                           SC_CAND_PAD past its last) */
    double *cand;       /* the candidates' arrays: lo and hi (D each), max log a, smax */
    const double **blk; /* the candidates' leaf blocks */
    double *ub;         /* their bounds, and the walks' scratch */
    double *gcut;       /* a group's cuts (T_f and slack of each query) */
    uint64_t *keys;     /* a chunk's sort keys and indices, and the sort's second buffer */
    ptrdiff_t *evl;     /* the kernel's list of evaluated groups */
} pruned_ws;

/* the scratch's layout in base (NULL: only its size) for a cloud of n samples (0 without
   an index); returns its size in doubles */
static ptrdiff_t pruned_layout(ptrdiff_t n, double *base, pruned_ws *w)
{
    const ptrdiff_t L = sc__tree_leaves(n), cp = L + SC_CAND_PAD, d = sizeof(double);
    ptrdiff_t off = 0;
    memset(w, 0, sizeof *w);
    if (L == 0) {
        return 0;
    }
    w->kernel = sc__take(base, &off, 2 * L * SC_TREE_LEAF, d);
    w->ptr = sc__take(base, &off, cp, sizeof(const double *));
    w->cand = sc__take(base, &off, 8 * cp, d);
    w->blk = sc__take(base, &off, cp, sizeof(const double *));
    w->ub = sc__take(base, &off, 3 * cp, d);
    w->gcut = sc__take(base, &off, 2 * SC_PRUNE_GROUP, d);
    w->keys = sc__take(base, &off, 4 * SC_PRUNE_CHUNK, sizeof(uint64_t));
    w->evl = sc__take(base, &off, L * (SC_TREE_LEAF / SC_PAD), sizeof(ptrdiff_t));
    return off;
}

ptrdiff_t sc_ssdf_workspace_size(const sc_packed_cloud *pc)
{
    ptrdiff_t w;
    if (pc == NULL) {
        return 0;
    }
    if (sc__cloud_group_boxed(pc->n)) { /* the query-lane kernel: d_i, then w_i, per lane */
        return pc->npad * SC_VW_MAX;
    }
    {
        pruned_ws pw;
        w = pruned_layout(pc->n, NULL, &pw);
    }
    return w > 2 * pc->npad ? w : 2 * pc->npad; /* the kernel's d_i and s_i */
}

ptrdiff_t sc__ssdf_workspace_pair(const sc_packed_cloud *a, const sc_packed_cloud *b)
{
    const ptrdiff_t wa = sc_ssdf_workspace_size(a), wb = sc_ssdf_workspace_size(b);
    return wa > wb ? wa : wb;
}

typedef struct ssdf_job {
    const sc__ssdf_isa *isa;
    const sc_packed_cloud *pc;
    double eps;
    const double *x;
    double *work;
    ptrdiff_t wsize;
    double *phi, *g, *h, *t;
    double qbase;     /* a cloud without an index, pruned: the cut's constant part (else NaN) */
    sc_interrupt *it; /* checked between groups of queries (sc_options.interrupt) */
} ssdf_job;

/* the whole cloud as the kernel's one block; ptr[0] must outlive B */
static void whole_cloud(const sc_packed_cloud *pc, const double **ptr, sc__blocks *B)
{
    ptr[0] = pc->data;
    B->ptr = ptr;
    B->n = 1;
    B->bs = B->as = pc->npad;
    B->hdr = sc__cloud_header(pc);
    B->tcut = INFINITY;
    B->qbase = NAN;
    B->tq = NULL;
    B->star = NULL;
    B->evl = NULL;
    B->lanes = 0;
}

/* Dense (sc_options.dense), or a cloud without an index (fewer than SC_TREE_MIN samples) pruned:
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
    /* queries in steps of about 2^20 sample visits (a millisecond or so), the interrupt
       checked between them; rows depend on their query alone */
    const ptrdiff_t step = j->it ? ((ptrdiff_t)1 << 20) / j->pc->npad + 1 : end - begin;
    sc_interrupt view, *it = tid == 0 ? j->it : sc__interrupt_view(&view, j->it);
    ptrdiff_t b0;
    whole_cloud(j->pc, ptr, &B);
    B.qbase = j->qbase;
    B.lanes = sc__cloud_group_boxed(j->pc->n);
    for (b0 = begin; b0 < end; b0 += step) {
        const ptrdiff_t b1 = end - b0 < step ? end : b0 + step;
        int st;
        if (sc_interrupt_check(it)) {
            return SC_EINTERRUPTED;
        }
        st = j->isa->rows(&B, (int)D, j->eps, b1 - b0, j->x + b0 * D, j->work + tid * j->wsize,
                          j->phi ? j->phi + b0 : NULL, j->g ? j->g + b0 * D : NULL,
                          j->h ? j->h + b0 * D * D : NULL, j->t ? j->t + b0 * D * D * D : NULL);
        if (st != SC_OK) {
            return st;
        }
    }
    return SC_OK;
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
   the candidates with the vectorized per-ISA helpers (sc__ssdf_isa's best, keep, list).
   What a query keeps depends on the query alone, never on the group or on the previous
   query (see query_blocks), so results do not depend on the batch, the order or the
   threads. */

/* ln 128: the factor 8 |H| |P|^3 / eps^2 of a dropped sample's share, with |H| <= 2 r and
   |P| <= 2 rho (see "Pruning" above) */
#define LN_128 4.86

/* the pruning constant without its last term: ln(1e18) + ln 128 + ln n + 1 */
static double cut_base(const sc_packed_cloud *pc)
{
    return SC_LN_1E18 + LN_128 + log((double)pc->n) + 1.0;
}

/* a query's far cut T_f and the rounding slack of its bounds and of s (u r^2 / eps, with
   a wide margin), from r = |x - c0| + rho; returns r */
static double query_cut(const sc_packed_cloud *pc, double ie, double base, const double *xq,
                        double *Tf, double *slack)
{
    const int D = pc->dim;
    const double *hdr = sc__tree_header(pc), rho = hdr[D];
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
static void query_blocks(const ssdf_job *job, double ie, double base, const double *xq, double Tf,
                         double slack, double seed, const sc__cands *C, double *ub,
                         const double **ptr, double *tq, sc__blocks *B)
{
    const sc_packed_cloud *pc = job->pc;
    const int D = pc->dim;
    const double *nodes = sc__tree_nodes(pc), *tc = sc__tree_blocks(pc);
    const double maxla = nodes[SC_TREE_NODE(D) + 2 * D], da = maxla - nodes[0];
    const int seeded = seed == seed;
    /* with a seed the cut is known before the bounds: one pass lists the leaves */
    const double best = seeded ? seed : job->isa->best(C, D, xq, ie, ub);
    double cut, Tq;
    ptrdiff_t kept;
    /* T(L): d*^2 / eps <= max log a - L */
    {
        const double Tn = base + 2.0 * sc__ln_up(fmax(maxla - best, 0.0) + Tf + da + 1.0);
        Tq = Tn < Tf ? Tn : Tf;
    }
    cut = best - Tq - slack - 2.0;
    kept = seeded ? job->isa->list(C, D, xq, ie, cut, ptr) : job->isa->keep(C, ub, cut, ptr);
    if (kept == 0) { /* unreachable unless every bound is NaN; keep leaf 0 */
        ptr[kept++] = tc;
    }
    B->ptr = ptr;
    B->n = kept;
    B->bs = B->as = SC_TREE_LEAF;
    B->hdr = sc__tree_header(pc);
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
    return j->isa->rows(B, (int)D, j->eps, 1, j->x + q * D, wk, j->phi ? j->phi + q : NULL,
                        j->g ? j->g + q * D : NULL, j->h ? j->h + q * D * D : NULL,
                        j->t ? j->t + q * D * D * D : NULL);
}

/* A chunk's queries [c0, c1) in the order of a Morton curve through their bounding box
   (keys: (key, index) pairs, the non-finite queries first with key 0); returns how many */
static ptrdiff_t chunk_order(const ssdf_job *j, ptrdiff_t c0, ptrdiff_t c1, uint64_t *kbuf,
                             uint64_t **keys)
{
    const int D = j->pc->dim;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double sc[3] = {0.0, 0.0, 0.0};
    ptrdiff_t nq = 0, r;
    int k;
    /* the finite queries' bounding box; a non-finite query is marked by key 0 */
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
        if (kbuf[2 * r] != 0) { /* finite: the Morton key + 2^20, whose bits 20 to 52 are not
                                   all zero */
            kbuf[2 * r] = sc__morton_key(D, j->x + (ptrdiff_t)kbuf[2 * r + 1] * D, lo, sc) +
                          ((uint64_t)1 << 20);
        }
    }
    *keys = sc__radix_sort(kbuf, kbuf + 2 * SC_PRUNE_CHUNK, nq);
    return nq;
}

/* A group of the sorted queries from g0: up to SC_PRUNE_GROUP finite queries within a box
   of squared diagonal SC_PRUNE_GROUP_WIDTH2 eps (a wider group would list many leaves
   that none of its queries keeps; results do not depend on it), their box [qlo, qhi],
   each query's cut (gcut: T_f, slack) and the group's (the query of the largest r: the
   largest T_f and slack); returns the group's end */
static ptrdiff_t query_group(const ssdf_job *j, const uint64_t *keys, ptrdiff_t g0, ptrdiff_t nq,
                             double ie, double base, double *gcut, double *qlo, double *qhi,
                             double *Tf, double *slack)
{
    const int D = j->pc->dim;
    double rg = -1.0;
    ptrdiff_t g1;
    int k;
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
            *Tf = qc[0];
            *slack = qc[1];
        }
    }
    return g1;
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
    const ptrdiff_t cp = sc__tree_leaves(j->pc->n) + SC_CAND_PAD;
    const double ie = 1.0 / j->eps, base = cut_base(j->pc);
    pruned_ws w;
    sc__cands C;
    /* the previous query's sample of largest weight (its leaf block and slot): its s_i at
       the next query is that query's seed */
    const double *sblk = NULL;
    ptrdiff_t c0, soff = 0, istar = 0;
    sc_interrupt view, *it = tid == 0 ? j->it : sc__interrupt_view(&view, j->it);
    int k;
    pruned_layout(j->pc->n, j->work + tid * j->wsize, &w);
    for (k = 0; k < 7; k++) {
        C.c[k] = w.cand + k * cp;
    }
    C.smax = w.cand + 7 * cp;
    C.blk = w.blk;
    for (c0 = begin; c0 < end; c0 += SC_PRUNE_CHUNK) {
        const ptrdiff_t c1 = end - c0 < SC_PRUNE_CHUNK ? end : c0 + SC_PRUNE_CHUNK;
        uint64_t *keys;
        const ptrdiff_t nq = chunk_order(j, c0, c1, w.keys, &keys);
        ptrdiff_t g0, g1, i;
        for (g0 = 0; g0 < nq; g0 = g1) {
            double qlo[3], qhi[3], Tf = 0.0, slack = 0.0;
            if (sc_interrupt_check(it)) { /* between groups of at most 64 queries */
                return SC_EINTERRUPTED;
            }
            if (keys[2 * g0] == 0) {
                /* a non-finite query (sorted first): the dense kernel writes its NaN row */
                const double *whole[1];
                sc__blocks B;
                int st;
                whole_cloud(j->pc, whole, &B);
                if ((st = query_rows(j, &B, (ptrdiff_t)keys[2 * g0 + 1], w.kernel)) != SC_OK) {
                    return st;
                }
                g1 = g0 + 1;
                continue;
            }
            g1 = query_group(j, keys, g0, nq, ie, base, w.gcut, qlo, qhi, &Tf, &slack);
            if (g1 - g0 == 1) {
                sc__tree_single_walk(j->pc, j->isa->leafmax, ie,
                                     j->x + (ptrdiff_t)keys[2 * g0 + 1] * D, Tf, slack, w.ub, &C);
            } else {
                sc__tree_group_walk(j->pc, ie, qlo, qhi, Tf, slack, w.ub, &C);
            }
            for (i = g0; i < g1; i++) {
                const ptrdiff_t q = (ptrdiff_t)keys[2 * i + 1];
                const double *xq = j->x + q * D, *qc = w.gcut + 2 * (i - g0);
                double tq[5];
                sc__blocks B;
                int st;
                query_blocks(j, ie, base, xq, qc[0], qc[1],
                             sblk && g1 - g0 > 1 ? seed_value(sblk, soff, D, xq, ie) : NAN, &C,
                             w.ub, w.ptr, tq, &B);
                B.star = &istar;
                B.evl = w.evl;
                if ((st = query_rows(j, &B, q, w.kernel)) != SC_OK) {
                    return st;
                }
                sblk = w.ptr[istar / SC_TREE_LEAF];
                soff = istar % SC_TREE_LEAF;
            }
        }
    }
    return SC_OK;
}

/* Fewer threads for small problems (per-query results never depend on the count): at
   least SC_SSDF_MIN_PAIRS_PER_THREAD sample visits per thread, a pruned query counted as
   about 1000 visits.  In double: m npad may overflow ptrdiff_t on 32-bit platforms. */
static int threads_for(const sc_packed_cloud *pc, ptrdiff_t m, int dense, int nthreads)
{
    const double per = dense || pc->npad < 1000 ? (double)pc->npad : 1000.0;
    if ((double)m * per / (double)nthreads < (double)SC_SSDF_MIN_PAIRS_PER_THREAD) {
        const double want = (double)m * per / (double)SC_SSDF_MIN_PAIRS_PER_THREAD;
        nthreads = want < 1.0 ? 1 : (int)want;
    }
    return nthreads;
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

/* SC_OK for sc_ssdf's arguments, else SC_EINVAL */
static int ssdf_args(const sc_packed_cloud *pc, double eps, ptrdiff_t m, const double *x,
                     const double *work)
{
    if (pc == NULL || pc->data == NULL || (pc->dim != 2 && pc->dim != 3) || pc->n < 1 ||
        pc->npad != sc__padded(pc->n) || !(eps >= SC_EPS_MIN && eps <= SC_EPS_MAX) || m < 0 ||
        (m > 0 && (x == NULL || work == NULL))) {
        return SC_EINVAL;
    }
    return SC_OK;
}

int sc_ssdf(const sc_packed_cloud *pc, double eps, ptrdiff_t m, const double *x,
            const sc_options *opt, double *work, double *phi, double *dphi_dx, double *d2phi_dx2,
            double *d3phi_dx3)
{
    ptrdiff_t i;
    int st;
    if ((st = ssdf_args(pc, eps, m, x, work)) != SC_OK) {
        return st;
    }
    /* the valid ranges (sc_common.h): the cloud's radius, and every finite query's
       coordinates and reach (a non-finite one gets NaN in its row) */
    if (!(sc__cloud_radius(pc) <= SC_COORD_MAX)) {
        return SC_ERANGE;
    }
    for (i = 0; i < m; i++) {
        const double *q = x + i * pc->dim;
        if (sc__finite_query(pc->dim, q) && sc__query_check(pc, eps, q) != SC_OK) {
            return SC_ERANGE;
        }
    }
    return sc__ssdf_run(pc, eps, m, x, opt, work, phi, dphi_dx, d2phi_dx2, d3phi_dx3);
}

int sc__ssdf_run(const sc_packed_cloud *pc, double eps, ptrdiff_t m, const double *x,
                 const sc_options *opt, double *work, double *phi, double *dphi_dx,
                 double *d2phi_dx2, double *d3phi_dx3)
{
    /* the compiled variants, indexed by SC_ISA_GENERIC, SC_ISA_AVX2, SC_ISA_AVX512 */
    static const sc__ssdf_isa *const variants[3] = {&sc__ssdf_generic, &sc__ssdf_avx2,
                                                    &sc__ssdf_avx512};
    ssdf_job job;
    sc_options o;
    int st, nthreads;

    if ((st = ssdf_args(pc, eps, m, x, work)) != SC_OK ||
        (st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    job.isa = variants[o.isa];
    job.pc = pc;
    job.eps = eps;
    job.x = x;
    job.work = work;
    job.wsize = sc_ssdf_workspace_size(pc);
    job.phi = phi;
    job.g = dphi_dx;
    job.h = d2phi_dx2;
    job.t = d3phi_dx3;
    job.it = o.interrupt;
    if (m == 0) {
        return SC_OK;
    }
    if (pc->n == 1) {
        ssdf_halfspace(pc, m, x, phi, dphi_dx, d2phi_dx2, d3phi_dx3);
        return SC_OK;
    }
    nthreads = threads_for(pc, m, o.dense, o.nthreads);
    job.qbase = o.dense ? NAN : cut_base(pc);
    if (o.dense || sc__tree_leaves(pc->n) == 0) {
        return sc__parallel_for_polled(m, nthreads, ssdf_range, &job, o.interrupt);
    }
    return sc__parallel_for_polled(m, nthreads, ssdf_pruned_range, &job, o.interrupt);
}
