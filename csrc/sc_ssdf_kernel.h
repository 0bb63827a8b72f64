/*
 * sc_ssdf_kernel.h - the SSDF kernel template, written once over the vector primitives of
 * sc_vec_*.h and compiled once per instruction set (sc_ssdf_generic.c, sc_ssdf_avx2.c,
 * sc_ssdf_avx512.c).  Internal.
 *
 * Before including: include one sc_vec_*.h and define SC_SSDF_VARIANT as the name of the
 * sc__ssdf_isa table to define (sc_ssdf_internal.h).
 *
 * Two forms of the same passes over one set of per-(query, sample) functions: the
 * sample-lane form, VW samples in the lanes (a query at a time; the indexed clouds'
 * leaves, dense large clouds), and the query-lane form, VW queries in the lanes (a whole
 * cloud without an index, VW queries at a time; see lanes_chunk).
 *
 * Algorithm for one query x (samples vectorized, VW lanes at a time):
 *   pass 1: d_i = |x - p_i|^2 stored; i* = argmax_i s_i, s_i = log a_i - d_i / eps.
 *           For a far query (|x - c0| > SC_SSDF_FAR rho) the term |x - c0|^2,
 *           common to all samples, is dropped and s_i = log a_i -
 *           (|q_i|^2 - 2 (x - c0).q_i) / eps with q_i = p_i - c0: its rounding
 *           error is u |x| rho / eps instead of u |x|^2 / eps, which is the
 *           conditioning of the weights themselves (differences of squared
 *           distances are O(|x| rho)).  Near the cloud the direct form is the
 *           accurate one (u |x - p_i|^2 / eps).
 *   pass 2: w_i = exp((log a_i - log a*) - (d_i - d*) / eps) (w* = 1 exactly);
 *           S = sum w_i, phi = h* + sum w_i (h_i - h*) / S, h_i = n_i.x - m_i, m_i = n_i.p_i;
 *           for derivatives also p_bar = p* + E[p - p*] (p* a sample of largest
 *           weight), n_bar = E[n], and w_i is stored
 *   pass 3: centred moments with H = h - phi, P = p - p_bar, N = n - n_bar
 *           (never raw moments: at small eps E[hp] - E[h]E[p] cancels
 *           catastrophically, the centred sums do not).
 * With c = 2/eps (the weights are an exponential family in c x with
 * sufficient statistic p, so d/dx E[f] = E[df/dx] + c Cov(f, p)), and
 * kappa the joint cumulants under w:
 *   dphi_a      = n_bar_a + c E[H P_a]
 *   d2phi_ab    = c (E[N_a P_b] + E[N_b P_a]) + c^2 E[H P_a P_b]
 *   d3phi_abc   = c^2 (E[N_a P_b P_c] + E[N_b P_a P_c] + E[N_c P_a P_b])
 *               + c^3 (E[H P_a P_b P_c] - E[H P_a] E[P_b P_c]
 *                      - E[H P_b] E[P_a P_c] - E[H P_c] E[P_a P_b])
 * (the last bracket is the fourth joint cumulant kappa(h, p_a, p_b, p_c)).
 * Symmetric outputs are computed once per index set and copied, so they are
 * exactly symmetric.
 */
#include <math.h>

#include "sc_ssdf_internal.h"

/* index of the pair (a, b), a <= b, in packed symmetric storage */
#define SYM2(D, a, b) ((a) * (D) - ((a) * ((a) - 1)) / 2 + ((b) - (a)))

/* ---- the arithmetic of one (query, sample) pair, shared by both forms ----
 * Each takes vectors: in the sample-lane form VW samples of one query (loaded), in the
 * query-lane form VW queries of one sample (the sample's numbers broadcast).  The same
 * operations on the same operands, so a pair's numbers are the same bits in both. */

/* the arrays of block b of B (array a at B->ptr[b] + a B->as) */
typedef struct {
    const double *P[3], *N[3], *M, *LA, *Q[3], *QQ;
} blk_arrays;

SC_VFN blk_arrays block_arrays(const sc__blocks *B, const int D, ptrdiff_t b)
{
    const double *base = B->ptr[b];
    blk_arrays A;
    int a;
    for (a = 0; a < 3; a++) {
        A.P[a] = base + SC_CLOUD_P(a < D ? a : 0) * B->as;
        A.N[a] = base + SC_CLOUD_N(D, a < D ? a : 0) * B->as;
        A.Q[a] = base + SC_CLOUD_Q(D, a < D ? a : 0) * B->as;
    }
    A.M = base + SC_CLOUD_M(D) * B->as;
    A.LA = base + SC_CLOUD_LA(D) * B->as;
    A.QQ = base + SC_CLOUD_QQ(D) * B->as;
    return A;
}

/* d = |x - p|^2, the near form (X the query, P the sample) */
SC_VFN vd dist2_near(const int D, const vd *X, const vd *P)
{
    vd e = vsub(X[0], P[0]), d = vmul(e, e);
    e = vsub(X[1], P[1]);
    d = vfma(e, e, d);
    if (D == 3) {
        e = vsub(X[2], P[2]);
        d = vfma(e, e, d);
    }
    return d;
}

/* d = |q|^2 - 2 y.q, the far form (Y = -2 (x - c0), exact; q = p - c0): |x - p|^2 less
   |x - c0|^2 */
SC_VFN vd dist2_far(const int D, const vd *Y, const vd *Q, vd QQ)
{
    vd d = vfma(Q[0], Y[0], QQ);
    d = vfma(Q[1], Y[1], d);
    if (D == 3) {
        d = vfma(Q[2], Y[2], d);
    }
    return d;
}

/* n.x */
SC_VFN vd ndotx(const int D, const vd *X, const vd *N)
{
    vd nx = vmul(N[0], X[0]);
    nx = vfma(N[1], X[1], nx);
    if (D == 3) {
        nx = vfma(N[2], X[2], nx);
    }
    return nx;
}

/* t = (log a - log a*) - (d - d*) / eps, from the differences: d - d* is exact for
   coincident samples and relatively accurate for near ties (Sterbenz), where the weights
   are sensitive, instead of carrying the rounding of d / eps ~ u d / eps */
SC_VFN vd logit(vd d, vd DS, vd LA, vd LS, vd NIE)
{
    return vfma(vsub(d, DS), NIE, vsub(LA, LS));
}

/* pass 2's sums of a weight w: S += w, sum w (h - h*) with h = n.x - m; with means, sum
   w (p - p*) and sum w n */
SC_VFN void sums_value(const int D, const int means, vd w, const vd *X, const vd *P, const vd *N,
                       vd M, vd HS, const vd *PS, vd *sw, vd *sh, vd *sp, vd *sn)
{
    const vd nx = ndotx(D, X, N);
    int a;
    *sw = vadd(*sw, w);
    *sh = vfma(w, vsub(vsub(nx, M), HS), *sh);
    for (a = 0; means && a < D; a++) {
        sp[a] = vfma(w, vsub(P[a], PS[a]), sp[a]);
        sn[a] = vfma(w, N[a], sn[a]);
    }
}

/* pass 3's sums (centred moments): pointers to the caller's local arrays (each array on
   its own, so that the compiler keeps the ones an order uses in registers; MOMENTS
   declares them) */
typedef struct {
    vd *hp;        /* [3] sum w H P_a */
    vd (*np)[3];   /* [3][3] sum w N_a P_b */
    vd *hpp;       /* [6] sum w H P_a P_b (a <= b) */
    vd *pp;        /* [6] sum w P_a P_b (a <= b) */
    vd (*npp)[6];  /* [3][6] sum w N_a P_b P_c (b <= c) */
    vd (*hppp)[6]; /* [3][6] sum w H P_a P_b P_c (a <= b <= c), at [a][SYM2(b, c)] */
} moments;

#define MOMENTS(S)                                                                                 \
    vd S##_hp[3], S##_np[3][3], S##_hpp[6], S##_pp[6], S##_npp[3][6], S##_hppp[3][6];              \
    const moments S = {S##_hp, S##_np, S##_hpp, S##_pp, S##_npp, S##_hppp}

SC_VFN void moments_zero(const moments *S)
{
    const vd Z = vset1(0.0);
    int a, b;
    for (a = 0; a < 3; a++) {
        S->hp[a] = Z;
        for (b = 0; b < 3; b++) {
            S->np[a][b] = Z;
        }
        for (b = 0; b < 6; b++) {
            S->npp[a][b] = S->hppp[a][b] = Z;
        }
    }
    for (b = 0; b < 6; b++) {
        S->hpp[b] = S->pp[b] = Z;
    }
}

/* One vector of pass 3: the order-1/2 sums (low) and/or the order-3 sums (high) of the
   weights w at samples (P, N, M), with H = h - phi = (h - h*) - (phi - h*), P - p_bar,
   N - n_bar.  Order 3 runs it twice, (a) low then (b) high, each recomputing the centred
   quantities: fewer live accumulators (no register spills); (a) is the same instruction
   sequence at every order (bitwise equal outputs). */
SC_VFN void moments_add(const int D, const int order, const int low, const int high, vd w,
                        const vd *P, const vd *N, vd M, const vd *X, const vd *PB, const vd *NB,
                        vd HSV, vd DPHI, const moments *S)
{
    vd Pc[3], Nc[3], wP[3], wHP[3], wH;
    int a, b;
    /* H = h - phi = (h - h*) - (phi - h*), wH = w H */
    wH = vmul(w, vsub(vsub(vsub(ndotx(D, X, N), M), HSV), DPHI));
#pragma GCC unroll 4
    for (a = 0; a < D; a++) {
        Pc[a] = vsub(P[a], PB[a]);
        if (low) {
            S->hp[a] = vfma(wH, Pc[a], S->hp[a]);
        }
    }
    if (order >= 2) {
#pragma GCC unroll 4
        for (a = 0; a < D; a++) {
            Nc[a] = vsub(N[a], NB[a]);
            wP[a] = vmul(w, Pc[a]);
            wHP[a] = vmul(wH, Pc[a]);
        }
    }
    if (order >= 2 && low) {
#pragma GCC unroll 4
        for (a = 0; a < D; a++) {
#pragma GCC unroll 4
            for (b = 0; b < D; b++) {
                S->np[a][b] = vfma(Nc[a], wP[b], S->np[a][b]);
                if (b >= a) {
                    S->hpp[SYM2(D, a, b)] = vfma(wHP[a], Pc[b], S->hpp[SYM2(D, a, b)]);
                }
            }
        }
    }
    if (high) {
#pragma GCC unroll 4
        for (a = 0; a < D; a++) {
#pragma GCC unroll 4
            for (b = a; b < D; b++) {
                const vd wPP = vmul(wP[a], Pc[b]), wHPP = vmul(wHP[a], Pc[b]);
                const int ab = SYM2(D, a, b);
                int cc;
                S->pp[ab] = vadd(S->pp[ab], wPP);
#pragma GCC unroll 4
                for (cc = 0; cc < D; cc++) {
                    S->npp[cc][ab] = vfma(Nc[cc], wPP, S->npp[cc][ab]);
                }
#pragma GCC unroll 4
                for (cc = b; cc < D; cc++) {
                    S->hppp[a][SYM2(D, b, cc)] = vfma(wHPP, Pc[cc], S->hppp[a][SYM2(D, b, cc)]);
                }
            }
        }
    }
}

/* the derivatives from the sums: E[.] = sum / S (INV = 1 / S), then
 *   dphi_a = n_bar_a + c E[H P_a];  d2phi_ab = c (E[N_a P_b] + E[N_b P_a]) + c^2 E[H P_a P_b];
 *   d3phi_abc = c^2 sum_cyc E[N_a P_b P_c] + c^3 kappa(h, p_a, p_b, p_c)
 * as vectors (per lane: a query of the query-lane form, or every lane the one query of
 * the sample-lane form, its sums reduced and broadcast); G (D), H (D x D) and T (D^3)
 * exactly symmetric */
SC_VFN void derivatives(const int D, const int order, double c, vd INV, const vd *NB,
                        const moments *S, vd *G, vd *H, vd *T)
{
    const vd C = vset1(c), C2 = vset1(c * c), C3 = vset1(c * c * c);
    vd ehp[3], enp[3][3], ehpp[6], epp[6], enpp[3][6], ehppp[3][6];
    int a, b, cc;
    for (a = 0; a < D; a++) {
        ehp[a] = vmul(S->hp[a], INV);
        G[a] = vadd(NB[a], vmul(C, ehp[a]));
    }
    if (order < 2) {
        return;
    }
    for (a = 0; a < D; a++) {
        for (b = 0; b < D; b++) {
            enp[a][b] = vmul(S->np[a][b], INV);
            if (b >= a) {
                ehpp[SYM2(D, a, b)] = vmul(S->hpp[SYM2(D, a, b)], INV);
            }
        }
    }
    for (a = 0; a < D; a++) {
        for (b = a; b < D; b++) {
            H[a * D + b] = H[b * D + a] =
                vadd(vmul(C, vadd(enp[a][b], enp[b][a])), vmul(C2, ehpp[SYM2(D, a, b)]));
        }
    }
    if (order < 3) {
        return;
    }
    for (a = 0; a < D; a++) {
        for (b = a; b < D; b++) {
            const int ab = SYM2(D, a, b);
            epp[ab] = vmul(S->pp[ab], INV);
            for (cc = 0; cc < D; cc++) {
                enpp[cc][ab] = vmul(S->npp[cc][ab], INV);
            }
            for (cc = b; cc < D; cc++) {
                ehppp[a][SYM2(D, b, cc)] = vmul(S->hppp[a][SYM2(D, b, cc)], INV);
            }
        }
    }
    for (a = 0; a < D; a++) {
        for (b = a; b < D; b++) {
            for (cc = b; cc < D; cc++) {
                const int ab = SYM2(D, a, b), ac = SYM2(D, a, cc), bc = SYM2(D, b, cc);
                const vd kap =
                    vsub(vsub(vsub(ehppp[a][bc], vmul(ehp[a], epp[bc])), vmul(ehp[b], epp[ac])),
                         vmul(ehp[cc], epp[ab]));
                const vd v = vadd(vmul(C2, vadd(vadd(enpp[a][bc], enpp[b][ac]), enpp[cc][ab])),
                                  vmul(C3, kap));
                T[(a * D + b) * D + cc] = T[(a * D + cc) * D + b] = v;
                T[(b * D + a) * D + cc] = T[(b * D + cc) * D + a] = v;
                T[(cc * D + a) * D + b] = T[(cc * D + b) * D + a] = v;
            }
        }
    }
}

/* out[l stride] = lane l of v, l < nl */
SC_VFN void store_lanes(vd v, int nl, double *out, ptrdiff_t stride)
{
    double b[VW];
    int l;
    vstore(b, v);
    for (l = 0; l < nl; l++) {
        out[l * stride] = b[l];
    }
}

/* the derivatives of order >= 1 of nl lanes (queries) into rows of g, hs and t3 (any NULL
   to skip) */
SC_VFN void store_derivatives(const int D, const int order, const vd *G, const vd *H, const vd *T,
                              int nl, double *g, double *hs, double *t3)
{
    int k;
    for (k = 0; g && k < D; k++) {
        store_lanes(G[k], nl, g + k, D);
    }
    for (k = 0; order >= 2 && hs && k < D * D; k++) {
        store_lanes(H[k], nl, hs + k, D * D);
    }
    for (k = 0; order >= 3 && t3 && k < D * D * D; k++) {
        store_lanes(T[k], nl, t3 + k, D * D * D);
    }
}

/* ---- the sample-lane form: one query, VW samples at a time ---- */

/* pass 1 over one block: d_i (near or far form) stored at wk and, when prune, s_i at ws;
   the running maximum of s_i per lane (vmx) and its position (vidx; cur the lanes'
   positions) */
SC_VFN void pass1_block(const blk_arrays *A, const int D, const int far, const int prune,
                        ptrdiff_t bs, const vd *X, const vd *Y, vd NIE, vd STEP, double *wk,
                        double *ws, vd *vmx, vd *vidx, vd *cur)
{
    ptrdiff_t i;
    for (i = 0; i < bs; i += VW) {
        vd d, s;
        if (far) {
            const vd Q[3] = {vload(A->Q[0] + i), vload(A->Q[1] + i), vload(A->Q[2] + i)};
            d = dist2_far(D, Y, Q, vload(A->QQ + i));
        } else {
            const vd P[3] = {vload(A->P[0] + i), vload(A->P[1] + i), vload(A->P[2] + i)};
            d = dist2_near(D, X, P);
        }
        s = vfma(d, NIE, vload(A->LA + i));
        vstore(wk + i, d);
        if (prune) {
            vstore(ws + i, s);
        }
        *vidx = vselect_gt(s, *vmx, *cur, *vidx);
        *vmx = vmax(*vmx, s);
        *cur = vadd(*cur, STEP);
    }
}

/* The first sample of largest s_i = log a_i - d_i / eps over the blocks (the lowest
   position on ties; lanes hold the first maximum of their own): its position, and s*.
   Pass 1: d_i is stored in work, and s_i after them when pruning (prune).  For a far query
   (beyond SC_SSDF_FAR cloud radii from c0) d_i less |x - c0|^2 (dist2_far), and sshift =
   |x - c0|^2 / eps. */
SC_VFN double pass1_samples(const sc__blocks *B, const int D, const int prune, double ie,
                            const double *xq, const vd *X, double *work, ptrdiff_t *istar,
                            double *sshift)
{
    const double *hdr = B->hdr;                   /* c0[D], rho */
    const ptrdiff_t bs = B->bs, sofs = B->n * bs; /* s_i stored after the d_i */
    const double y0 = xq[0] - hdr[0], y1 = xq[1] - hdr[1], y2 = D == 3 ? xq[2] - hdr[2] : 0.0;
    const int far = !(y0 * y0 + y1 * y1 + y2 * y2 <= SC_SSDF_FAR * SC_SSDF_FAR * hdr[D] * hdr[D]);
    const vd NIE = vset1(-ie), STEP = vset1((double)VW);
    const vd Y[3] = {vset1(-2.0 * y0), vset1(-2.0 * y1), vset1(-2.0 * y2)};
    vd vmx = vset1(-INFINITY), vidx = vset1(0.0), cur;
    double lane[VW], bm[VW], bi[VW], smax;
    ptrdiff_t bb;
    int k;
    for (k = 0; k < VW; k++) {
        lane[k] = (double)k;
    }
    cur = vload(lane);
    *sshift = far ? (y0 * y0 + y1 * y1 + y2 * y2) * ie : 0.0;
    for (bb = 0; bb < B->n; bb++) {
        const blk_arrays A = block_arrays(B, D, bb);
        double *wk = work + bb * bs;
        /* the form and the storing of s_i constant in each copy of the loop */
        if (far && prune) {
            pass1_block(&A, D, 1, 1, bs, X, Y, NIE, STEP, wk, wk + sofs, &vmx, &vidx, &cur);
        } else if (far) {
            pass1_block(&A, D, 1, 0, bs, X, Y, NIE, STEP, wk, wk + sofs, &vmx, &vidx, &cur);
        } else if (prune) {
            pass1_block(&A, D, 0, 1, bs, X, Y, NIE, STEP, wk, wk + sofs, &vmx, &vidx, &cur);
        } else {
            pass1_block(&A, D, 0, 0, bs, X, Y, NIE, STEP, wk, wk + sofs, &vmx, &vidx, &cur);
        }
    }
    vstore(bm, vmx);
    vstore(bi, vidx);
    smax = bm[0];
    *istar = (ptrdiff_t)bi[0];
    for (k = 1; k < VW; k++) {
        if (bm[k] > smax || (bm[k] == smax && (ptrdiff_t)bi[k] < *istar)) {
            smax = bm[k];
            *istar = (ptrdiff_t)bi[k];
        }
    }
    return smax;
}

/* what pass 2 and 3 of the sample-lane form know of the sample of largest weight and the
   sums */
typedef struct {
    vd DS, LS, HS; /* d*, log a*, h* = n*.x - m* (broadcast) */
    vd PS[3];      /* p* (broadcast) */
    double pstar[3];
} star_t;

/* the sample of largest weight at position istar of the blocks.  h* is computed with the
   lanes' arithmetic, so h_i - h* is exactly 0 wherever h_i == h* (a flat face): phi = h*
   + E[h - h*] then carries no rounding noise into H = h - phi, which (2/eps)^k would
   amplify in the derivatives. */
SC_VFN star_t star_sample(const sc__blocks *B, const int D, ptrdiff_t istar, const vd *X,
                          const double *work)
{
    const ptrdiff_t ib = istar / B->bs, io = istar % B->bs;
    const blk_arrays A = block_arrays(B, D, ib);
    const vd N[3] = {vset1(A.N[0][io]), vset1(A.N[1][io]), vset1(A.N[2][io])};
    star_t st;
    int a;
    st.DS = vset1(work[istar]);
    st.LS = vset1(A.LA[io]);
    st.HS = vsub(ndotx(D, X, N), vset1(A.M[io]));
    for (a = 0; a < 3; a++) {
        st.pstar[a] = a < D ? A.P[a][io] : 0.0;
        st.PS[a] = vset1(st.pstar[a]);
    }
    return st;
}

/* Pass 2 of the sample-lane form: w_i = exp(t_i) by groups of SC_PAD samples and the sums
   (sums_value); with means, w_i is stored (over d_i).  A group whose s_i all fall below
   s* - tcut is dropped (tcut +inf: the dense computation, which keeps every sample),
   tested on pass 1's s_i: groups of SC_PAD whatever the vector width, so every ISA drops
   the same samples.  B->evl: a pruned query lists the groups it evaluates, for pass 3;
   else a dropped group's weights are stored as zeros.  Returns how many were listed. */
SC_VFN ptrdiff_t pass2_samples(const sc__blocks *B, const int D, const int means, const int prune,
                               double ie, double tcut, double smax, const vd *X, const star_t *st,
                               double *work, vd *sw, vd *sh, vd *sp, vd *sn)
{
    const ptrdiff_t bs = B->bs, sofs = B->n * bs;
    const vd NIE = vset1(-ie), SCUT = vset1(smax - tcut);
    ptrdiff_t bb, i, nev = 0;
    for (bb = 0; bb < B->n; bb++) {
        const blk_arrays A = block_arrays(B, D, bb);
        double *wk = work + bb * bs;
        for (i = 0; i < bs; i += SC_PAD) {
            vd tg[SC_PAD / VW];
            int u, skip = prune;
            for (u = 0; skip && u < SC_PAD / VW; u++) {
                skip = vall_lt(vload(wk + sofs + i + u * VW), SCUT);
            }
            if (skip) {
                for (u = 0; means && !B->evl && u < SC_PAD / VW; u++) {
                    vstore(wk + i + u * VW, vset1(0.0));
                }
                continue;
            }
            if (means && B->evl) {
                B->evl[nev++] = bb * SC_TREE_LEAF + i;
            }
            for (u = 0; u < SC_PAD / VW; u++) {
                const ptrdiff_t iu = i + u * VW;
                tg[u] = logit(vload(wk + iu), st->DS, vload(A.LA + iu), st->LS, NIE);
            }
            for (u = 0; u < SC_PAD / VW; u++) {
                const ptrdiff_t iu = i + u * VW;
                const vd w = vexp_neg(tg[u]);
                const vd P[3] = {vload(A.P[0] + iu), vload(A.P[1] + iu), vload(A.P[2] + iu)};
                const vd N[3] = {vload(A.N[0] + iu), vload(A.N[1] + iu), vload(A.N[2] + iu)};
                sums_value(D, means, w, X, P, N, vload(A.M + iu), st->HS, st->PS, sw, sh, sp, sn);
                if (means) {
                    vstore(wk + iu, w);
                }
            }
        }
    }
    return nev;
}

/* The value of one query (passes 1 and 2): phi = h* + sum_i w_i (h_i - h*) / sum_i w_i
 * with w_i = exp((log a_i - log a*) - (d_i - d*) / eps), * marking the sample of largest
 * weight.  Returns phi; also h*, phi - h*, 1/S and how many groups pass 2 listed, for pass
 * 3.  With `means`, also p_bar, n_bar and the stored weights; the phi arithmetic is the
 * same instruction sequence either way (bitwise identical value). */
SC_VFN double value_pass(const sc__blocks *B, const int D, const int means, double ie, double tcut,
                         const double *xq, double *work, double *pbar, double *nbar, double *inv_s,
                         double *hstar_s, double *dphi_s, ptrdiff_t *nev_s)
{
    const int prune = !(tcut == INFINITY); /* not dense (tcut NaN: from tq, below) */
    const vd X[3] = {vset1(xq[0]), vset1(xq[1]), vset1(D == 3 ? xq[2] : 0.0)};
    vd sw = vset1(0.0), sh = sw, sp[3] = {sw, sw, sw}, sn[3] = {sw, sw, sw};
    double smax, sshift, S, b[VW];
    ptrdiff_t istar;
    star_t st;
    int a;
    smax = pass1_samples(B, D, prune, ie, xq, X, work, &istar, &sshift);
    if (B->tq) {
        /* a pruned query's cut from its own s* (exact up to the rounding that the slack
           covers; sc_ssdf.c, query_blocks) */
        const double *tq = B->tq;
        const double tn = tq[0] + 2.0 * sc__ln_up(fmax(tq[2] - (smax - sshift), 0.0) + tq[3]);
        tcut = (tn < tq[1] ? tn : tq[1]) + tq[4];
    }
    if (B->star) {
        *B->star = istar;
    }
    st = star_sample(B, D, istar, X, work);
    *nev_s = pass2_samples(B, D, means, prune, ie, tcut, smax, X, &st, work, &sw, &sh, sp, sn);
    S = vhsum(sw);
    *dphi_s = vhsum(sh) / S; /* phi - h* */
    if (means) {
        const double inv = 1.0 / S;
        *inv_s = inv;
        for (a = 0; a < D; a++) {
            pbar[a] = st.pstar[a] + vhsum(sp[a]) * inv;
            nbar[a] = vhsum(sn[a]) * inv;
        }
    }
    vstore(b, st.HS);
    *hstar_s = b[0];
    return *hstar_s + *dphi_s;
}

/* One sweep of pass 3 over the samples: the order-1/2 sums (low) and/or the order-3 sums
 * (high).  A pruned query (B->evl) visits the nev groups of SC_PAD that pass 2 evaluated,
 * listed there; otherwise every vector, skipping those whose weights are all zero.  Either
 * way the same vectors are summed in the same order (an evaluated group's vector of zero
 * weights adds exactly nothing: the sums start at +0 and never reach -0), so the bits are
 * the same. */
SC_VFN void sweep_samples(const sc__blocks *B, const int D, const int order, const int low,
                          const int high, const double *work, ptrdiff_t nev, const vd *X,
                          const vd *PB, const vd *NB, vd HSV, vd DPHI, const moments *S)
{
    ptrdiff_t i, bb, e;
    int u;
    if (B->evl) {
        for (e = 0; e < nev; e++) {
            const ptrdiff_t g = B->evl[e], i0 = g % SC_TREE_LEAF;
            const blk_arrays A = block_arrays(B, D, g / SC_TREE_LEAF);
            const double *wk = work + (g - i0);
#pragma GCC unroll 4
            for (u = 0; u < SC_PAD / VW; u++) {
                const ptrdiff_t iu = i0 + u * VW;
                const vd P[3] = {vload(A.P[0] + iu), vload(A.P[1] + iu), vload(A.P[2] + iu)};
                const vd N[3] = {vload(A.N[0] + iu), vload(A.N[1] + iu), vload(A.N[2] + iu)};
                moments_add(D, order, low, high, vload(wk + iu), P, N, vload(A.M + iu), X, PB, NB,
                            HSV, DPHI, S);
            }
        }
        return;
    }
    for (bb = 0; bb < B->n; bb++) {
        const blk_arrays A = block_arrays(B, D, bb);
        const double *wk = work + bb * B->bs;
        for (i = 0; i < B->bs; i += VW) {
            const vd w = vload(wk + i);
            if (vall_zero(w)) {
                continue; /* adds exactly nothing */
            }
            {
                const vd P[3] = {vload(A.P[0] + i), vload(A.P[1] + i), vload(A.P[2] + i)};
                const vd N[3] = {vload(A.N[0] + i), vload(A.N[1] + i), vload(A.N[2] + i)};
                moments_add(D, order, low, high, w, P, N, vload(A.M + i), X, PB, NB, HSV, DPHI, S);
            }
        }
    }
}

/* pass 3 of one query and its derivatives (the sums reduced across the lanes and
   broadcast, so derivatives() gives the query's numbers in every lane) */
SC_VFN void deriv_pass(const sc__blocks *B, const int D, const int order, double c,
                       const double *xq, const double *work, ptrdiff_t nev, double hstar,
                       double dphi, const double *pbar, const double *nbar, double inv, double *g,
                       double *hs, double *t3)
{
    const vd X[3] = {vset1(xq[0]), vset1(xq[1]), vset1(D == 3 ? xq[2] : 0.0)};
    vd PB[3], NB[3], G[3], H[9], T[27];
    MOMENTS(S);
    MOMENTS(R);
    int a, b;
    for (a = 0; a < 3; a++) {
        PB[a] = vset1(a < D ? pbar[a] : 0.0);
        NB[a] = vset1(a < D ? nbar[a] : 0.0);
    }
    moments_zero(&S);
    sweep_samples(B, D, order, 1, 0, work, nev, X, PB, NB, vset1(hstar), vset1(dphi), &S);
    if (order >= 3) {
        sweep_samples(B, D, order, 0, 1, work, nev, X, PB, NB, vset1(hstar), vset1(dphi), &S);
    }
    /* the sums of the lanes, broadcast (those the order reads) */
    for (a = 0; a < 3; a++) {
        R.hp[a] = vset1(vhsum(S.hp[a]));
        for (b = 0; order >= 2 && b < 3; b++) {
            R.np[a][b] = vset1(vhsum(S.np[a][b]));
        }
        for (b = 0; order >= 3 && b < 6; b++) {
            R.npp[a][b] = vset1(vhsum(S.npp[a][b]));
            R.hppp[a][b] = vset1(vhsum(S.hppp[a][b]));
        }
    }
    for (b = 0; b < 6; b++) {
        R.hpp[b] = order >= 2 ? vset1(vhsum(S.hpp[b])) : S.hpp[b];
        R.pp[b] = order >= 3 ? vset1(vhsum(S.pp[b])) : S.pp[b];
    }
    derivatives(D, order, c, vset1(inv), NB, &R, G, H, T);
    store_derivatives(D, order, G, H, T, 1, g, hs, t3);
}

/* ---- the query-lane form: a whole small cloud, VW queries at a time ---- */

/* For a cloud without an index (B->lanes; fewer than SC_TREE_MIN samples, one block) the
 * same three passes run with the lanes holding VW queries instead of VW samples: every
 * sample's data is a broadcast, every per-query quantity (x, s*, d*, h*, p_bar, the
 * sums) a vector, and nothing is reduced across lanes.  The per-(query, sample) numbers
 * -- d_i, s_i, t_i, w_i, h_i - h*, H, P, N -- are the same operations on the same operands
 * as the sample-lane form (the shared functions above: the same bits); i* is the same
 * (first maximum); the group skip drops the same groups of SC_PAD samples for each query
 * (a lane's own cut, per lane); the far form is chosen per lane.  Only the sums' order
 * differs: each query's sums run over the samples in order instead of in VW interleaved
 * partial sums, so a result may differ from the other form's in its last bits (never
 * within this form: lanes never mix, so a query's result does not depend on its
 * neighbours, the batch or the threads, and the value is the same instruction sequence at
 * every order).  Why: a small cloud's query is mostly fixed cost in the sample-lane form
 * (lane reductions, the argmax across lanes, scalar bookkeeping per query): the push-T
 * pusher (32 samples) at the T's 170 samples, and the T at the pusher's 32.
 * work: npad VW doubles (d_i, then w_i, of each lane). */

/* the VW queries of a chunk: coordinates, the far form per lane, the rounding slack */
typedef struct {
    vd X[3], Y[3];    /* the queries; Y = -2 (x - c0) */
    vd FAR;           /* 1 in the lanes of far queries */
    int nfar;         /* how many */
    double slack[VW]; /* 1 + 1e-12 r^2 / eps: the rounding of s_i, t_i and the bounds */
} lane_queries;

SC_VFN void lane_setup(const sc__blocks *B, const int D, double ie, const double *xq,
                       lane_queries *q)
{
    const double *hdr = B->hdr;
    double lx[3][VW], lfar[VW];
    int a, l;
    q->nfar = 0;
    for (l = 0; l < VW; l++) {
        double r2 = 0.0, r;
        for (a = 0; a < 3; a++) {
            lx[a][l] = a < D ? xq[l * D + a] : 0.0;
        }
        for (a = 0; a < D; a++) {
            r2 += (xq[l * D + a] - hdr[a]) * (xq[l * D + a] - hdr[a]);
        }
        /* the same test as pass1_samples, per query */
        lfar[l] = r2 <= SC_SSDF_FAR * SC_SSDF_FAR * hdr[D] * hdr[D] ? 0.0 : 1.0;
        q->nfar += lfar[l] != 0.0;
        r = sqrt(r2) + hdr[D];
        q->slack[l] = 1.0 + 1e-12 * r * r * ie;
    }
    for (a = 0; a < 3; a++) {
        q->X[a] = vload(lx[a]);
        /* -2 y is exact, so fma(q, -2 y, |q|^2) is pass1_samples' far form */
        q->Y[a] = a < D ? vmul(vset1(-2.0), vsub(q->X[a], vset1(hdr[a]))) : vset1(0.0);
    }
    q->FAR = vload(lfar);
}

/* The groups of SC_PAD samples that some lane may keep, as their first samples in live;
   returns how many.  Every s_i of group g is at most ub_g = max log a - dist^2(x, box_g) /
   eps (its box and largest log a: the group boxes of sc_cloud_pack), and s* >= best, the
   largest s_i of the groups' first samples.  A group with ub_g below best - cut - slack in
   every lane has every t_i = s_i - s* below -cut there: pass 2 would skip it for every
   lane, and none of its samples can be i*.  So it is left out of pass 1 too, and the
   results are the same bits.  A far query's cut is a fraction of a millimetre in distance:
   most groups drop out.  Dense (cut +inf): all live. */
SC_VFN int live_groups(const sc__blocks *B, const blk_arrays *A, const int D, double ie,
                       const lane_queries *q, vd NCUT, ptrdiff_t *live)
{
    const double *grp = B->hdr + SC_PAD; /* per group lo[3], hi[3], max log a, unused */
    const vd NIE = vset1(-ie), ZERO = vset1(0.0);
    const ptrdiff_t ng = B->bs / SC_PAD;
    vd ub[SC_TREE_MIN / SC_PAD], best = vset1(-INFINITY), thr;
    ptrdiff_t gg;
    int a, nlive = 0;
    for (gg = 0; gg < ng; gg++) {
        const double *gb = grp + gg * 8;
        const ptrdiff_t i0 = gg * SC_PAD; /* a sample (the padding is at the end) */
        vd dl = ZERO, d0 = ZERO;
        for (a = 0; a < D; a++) {
            const vd lo = vset1(gb[a]), hi = vset1(gb[3 + a]);
            const vd e = vmax(vmax(vsub(lo, q->X[a]), vsub(q->X[a], hi)), ZERO);
            const vd f = vsub(q->X[a], vset1(A->P[a][i0]));
            dl = vfma(e, e, dl);
            d0 = vfma(f, f, d0);
        }
        ub[gg] = vfma(dl, NIE, vset1(gb[6]));
        best = vmax(best, vfma(d0, NIE, vset1(A->LA[i0])));
    }
    thr = vsub(vadd(best, NCUT), vload(q->slack));
    for (gg = 0; gg < ng; gg++) {
        if (!vall_lt(ub[gg], thr)) {
            live[nlive++] = gg * SC_PAD;
        }
    }
    return nlive;
}

/* pass 1 per lane over the live groups: d_i (near or far form, per lane) stored in work,
   and the first argmax of s_i; returns i* per lane (exact small integers in doubles) */
SC_VFN vd pass1_queries(const blk_arrays *A, const int D, double ie, const lane_queries *q,
                        const ptrdiff_t *live, int nlive, double *work)
{
    const vd NIE = vset1(-ie), ONE = vset1(1.0);
    vd vmx = vset1(-INFINITY), vidx = vset1(0.0);
    ptrdiff_t i;
    int gi;
    for (gi = 0; gi < nlive; gi++) {
        vd CUR = vset1((double)live[gi]);
        for (i = live[gi]; i < live[gi] + SC_PAD; i++, CUR = vadd(CUR, ONE)) {
            vd d = vset1(0.0), s;
            if (q->nfar < VW) {
                const vd P[3] = {vset1(A->P[0][i]), vset1(A->P[1][i]), vset1(A->P[2][i])};
                d = dist2_near(D, q->X, P);
            }
            if (q->nfar > 0) {
                const vd Q[3] = {vset1(A->Q[0][i]), vset1(A->Q[1][i]), vset1(A->Q[2][i])};
                const vd dfar = dist2_far(D, q->Y, Q, vset1(A->QQ[i]));
                d = q->nfar == VW ? dfar : vselect_gt(q->FAR, vset1(0.5), dfar, d);
            }
            s = vfma(d, NIE, vset1(A->LA[i]));
            vstore(work + i * VW, d);
            vidx = vselect_gt(s, vmx, CUR, vidx); /* CUR = i, exactly */
            vmx = vmax(vmx, s);
        }
    }
    return vidx;
}

/* the per-lane sample of largest weight (star_sample's numbers, per lane) */
SC_VFN star_t star_queries(const blk_arrays *A, const int D, vd vidx, const lane_queries *q,
                           const double *work)
{
    double lidx[VW], ds[VW], ls[VW], ps[3][VW], ns[3][VW], ms[VW];
    vd N[3];
    star_t st;
    int a, l;
    vstore(lidx, vidx);
    for (l = 0; l < VW; l++) {
        const ptrdiff_t is = (ptrdiff_t)lidx[l];
        ds[l] = work[is * VW + l];
        ls[l] = A->LA[is];
        ms[l] = A->M[is];
        for (a = 0; a < 3; a++) {
            ps[a][l] = a < D ? A->P[a][is] : 0.0;
            ns[a][l] = a < D ? A->N[a][is] : 0.0;
        }
    }
    st.DS = vload(ds);
    st.LS = vload(ls);
    for (a = 0; a < 3; a++) {
        st.PS[a] = vload(ps[a]);
        N[a] = vload(ns[a]);
        st.pstar[a] = 0.0;
    }
    st.HS = vsub(ndotx(D, q->X, N), vload(ms));
    return st;
}

/* pass 2 per lane: w_i = exp(t_i) by groups of SC_PAD, a group dropped for a lane whose
   t_i are all below its cut; the groups some lane keeps are listed in kept for pass 3
   (with means, their weights stored over d_i); returns how many */
SC_VFN int pass2_queries(const blk_arrays *A, const int D, const int means, double ie, vd NCUT,
                         const lane_queries *q, const star_t *st, const ptrdiff_t *live, int nlive,
                         double *work, ptrdiff_t *kept, vd *sw, vd *sh, vd *sp, vd *sn)
{
    const vd NIE = vset1(-ie), ZERO = vset1(0.0);
    int k, nkept = 0;
    for (k = 0; k < nlive; k++) {
        const ptrdiff_t i = live[k];
        vd tg[SC_PAD], tmx = vset1(-INFINITY);
        int u;
        for (u = 0; u < SC_PAD; u++) {
            const ptrdiff_t iu = i + u;
            tg[u] = logit(vload(work + iu * VW), st->DS, vset1(A->LA[iu]), st->LS, NIE);
            tmx = vmax(tmx, tg[u]);
        }
        if (vall_lt(tmx, NCUT)) {
            continue; /* pass 3 reads the listed groups only */
        }
        kept[nkept++] = i;
        for (u = 0; u < SC_PAD; u++) {
            const ptrdiff_t iu = i + u;
            const vd w = vselect_gt(NCUT, tmx, ZERO, vexp_neg(tg[u]));
            const vd P[3] = {vset1(A->P[0][iu]), vset1(A->P[1][iu]), vset1(A->P[2][iu])};
            const vd N[3] = {vset1(A->N[0][iu]), vset1(A->N[1][iu]), vset1(A->N[2][iu])};
            sums_value(D, means, w, q->X, P, N, vset1(A->M[iu]), st->HS, st->PS, sw, sh, sp, sn);
            if (means) {
                vstore(work + iu * VW, w);
            }
        }
    }
    return nkept;
}

/* pass 3 per lane over the kept groups (sweep_samples' arithmetic) */
SC_VFN void sweep_queries(const blk_arrays *A, const int D, const int order, const int low,
                          const int high, const double *work, const ptrdiff_t *kept, int nkept,
                          const vd *X, const vd *PB, const vd *NB, vd HSV, vd DPHI,
                          const moments *S)
{
    ptrdiff_t i;
    int gi;
    for (gi = 0; gi < nkept; gi++) {
        for (i = kept[gi]; i < kept[gi] + SC_PAD; i++) {
            const vd w = vload(work + i * VW);
            if (vall_zero(w)) {
                continue;
            }
            {
                const vd P[3] = {vset1(A->P[0][i]), vset1(A->P[1][i]), vset1(A->P[2][i])};
                const vd N[3] = {vset1(A->N[0][i]), vset1(A->N[1][i]), vset1(A->N[2][i])};
                moments_add(D, order, low, high, w, P, N, vset1(A->M[i]), X, PB, NB, HSV, DPHI, S);
            }
        }
    }
}

/* The three passes for VW queries xq (VW x D) with their cuts ncut (-cut per lane): phi
   and the derivatives of orders 1 .. order into out_* (VW rows each). */
SC_VFN void lanes_chunk(const sc__blocks *B, const int D, const int order, double eps,
                        const double *xq, const double *ncut, double *work, double *out_phi,
                        double *out_g, double *out_h, double *out_t)
{
    const double ie = 1.0 / eps, c = 2.0 / eps; /* as rows */
    const blk_arrays A = block_arrays(B, D, 0);
    const int means = order >= 1;
    const vd NCUT = vload(ncut), ZERO = vset1(0.0);
    vd sw = ZERO, sh = ZERO, sp[3] = {ZERO, ZERO, ZERO}, sn[3] = {ZERO, ZERO, ZERO};
    vd INV, DPHI, PB[3], NB[3], G[3], H[9], T[27];
    ptrdiff_t kept[SC_TREE_MIN / SC_PAD], live[SC_TREE_MIN / SC_PAD];
    lane_queries q;
    star_t st;
    MOMENTS(S);
    int nlive, nkept, a;

    lane_setup(B, D, ie, xq, &q);
    nlive = live_groups(B, &A, D, ie, &q, NCUT, live);
    st = star_queries(&A, D, pass1_queries(&A, D, ie, &q, live, nlive, work), &q, work);
    nkept =
        pass2_queries(&A, D, means, ie, NCUT, &q, &st, live, nlive, work, kept, &sw, &sh, sp, sn);
    DPHI = vdiv(sh, sw); /* phi - h* */
    vstore(out_phi, vadd(st.HS, DPHI));
    if (!means) {
        return;
    }
    INV = vdiv(vset1(1.0), sw);
    for (a = 0; a < 3; a++) {
        PB[a] = a < D ? vadd(st.PS[a], vmul(sp[a], INV)) : ZERO;
        NB[a] = a < D ? vmul(sn[a], INV) : ZERO;
    }
    moments_zero(&S);
    sweep_queries(&A, D, order, 1, 0, work, kept, nkept, q.X, PB, NB, st.HS, DPHI, &S);
    if (order >= 3) {
        sweep_queries(&A, D, order, 0, 1, work, kept, nkept, q.X, PB, NB, st.HS, DPHI, &S);
    }
    derivatives(D, order, c, INV, NB, &S, G, H, T);
    store_derivatives(D, order, G, H, T, VW, out_g, out_h, out_t);
}

/* ---- pruned gather helpers (sc__ssdf_isa) ---- */

SC_VFN double vmax_lanes(vd v)
{
    double b[VW], m;
    int k;
    vstore(b, v);
    m = b[0];
    for (k = 1; k < VW; k++) {
        m = b[k] > m ? b[k] : m;
    }
    return m;
}

/* the bounds max log a - dist^2(x, box) / eps of candidates t .. t + VW - 1 (X: the
   query broadcast, IE: 1 / eps) */
SC_VFN vd cand_bounds(const sc__cands *C, const int D, const vd *X, vd IE, ptrdiff_t t)
{
    const vd Z = vset1(0.0);
    vd d2 = Z;
    int k;
    for (k = 0; k < D; k++) {
        const vd e =
            vmax(vmax(vsub(vload(C->c[k] + t), X[k]), vsub(X[k], vload(C->c[D + k] + t))), Z);
        d2 = k == 0 ? vmul(e, e) : vadd(d2, vmul(e, e));
    }
    return vsub(vload(C->c[2 * D] + t), vmul(d2, IE));
}

SC_VFN double bounds(const sc__cands *C, const int D, const double *xq, double ie, double *ub)
{
    const vd IE = vset1(ie);
    vd X[3], mx = vset1(-INFINITY);
    ptrdiff_t t;
    int k;
    for (k = 0; k < D; k++) {
        X[k] = vset1(xq[k]);
    }
    for (t = 0; t < C->npad; t += VW) {
        const vd u = cand_bounds(C, D, X, IE, t);
        vstore(ub + t, u);
        mx = vmax(u, mx);
    }
    return vmax_lanes(mx);
}

/* mx raised lane-wise by s_i = log a_i - |x - p_i|^2 / eps over the SC_TREE_LEAF samples of
   a leaf block (X: the query broadcast, IE: 1 / eps; plain multiplies and adds) */
SC_VFN vd leaf_acc(const double *blk, const int D, const vd *X, vd IE, vd mx)
{
    ptrdiff_t t;
    int k;
    for (t = 0; t < SC_TREE_LEAF; t += VW) {
        vd d2 = vset1(0.0);
        for (k = 0; k < D; k++) {
            const vd e = vsub(X[k], vload(blk + k * SC_TREE_LEAF + t));
            d2 = k == 0 ? vmul(e, e) : vadd(d2, vmul(e, e));
        }
        mx = vmax(vsub(vload(blk + (2 * D + 1) * SC_TREE_LEAF + t), vmul(d2, IE)), mx);
    }
    return mx;
}

SC_VFN double leafmax(const double *blk, const int D, const double *xq, double ie)
{
    vd X[3];
    int k;
    for (k = 0; k < D; k++) {
        X[k] = vset1(xq[k]);
    }
    return vmax_lanes(leaf_acc(blk, D, X, vset1(ie), vset1(-INFINITY)));
}

/* bounds and keep in one pass, for a cut known beforehand: the blocks of the candidates
   whose bound (bounds' arithmetic) reaches cut, in order, with a lane mask per vector and
   no branch per candidate */
SC_VFN ptrdiff_t list_of(const sc__cands *C, const int D, const double *xq, double ie, double cut,
                         const double **ptr)
{
    const vd IE = vset1(ie), CUT = vset1(cut);
    vd X[3];
    ptrdiff_t t, k = 0;
    int a;
    for (a = 0; a < D; a++) {
        X[a] = vset1(xq[a]);
    }
    for (t = 0; t < C->npad; t += VW) {
        unsigned m = vmask_ge(cand_bounds(C, D, X, IE, t), CUT);
        if (t + VW > C->n) { /* padding entries are never listed */
            m = t >= C->n ? 0u : m & ((1u << (C->n - t)) - 1u);
        }
        k += vkeep_ptrs(ptr + k, C->blk + t, m);
    }
    return k;
}

SC_VFN double best_of(const sc__cands *C, const int D, const double *xq, double ie, double *ub)
{
    const double umax = bounds(C, D, xq, ie, ub);
    const vd UM = vset1(umax);
    const vd IE = vset1(ie);
    ptrdiff_t t, im = C->n;
    double best, thr;
    vd THR, X[3], mx = vset1(-INFINITY);
    int k;
    /* the first entry equal to the largest (>= it: NaN bounds never equal it) */
    for (t = 0; t < C->n; t += VW) {
        const unsigned m = vmask_ge(vload(ub + t), UM);
        if (m) {
            im = t + sc__ctz(m);
            break;
        }
    }
    if (im >= C->n) {
        return -INFINITY;
    }
    /* a candidate's largest s_i: known (a one-query walk), else computed (the same bits) */
    best = C->smax[im];
    if (!(best == best)) {
        best = leafmax(C->blk[im], D, xq, ie);
    }
    thr = best + 1.0;
    THR = vset1(thr);
    /* the other leaves above thr: known maxima taken as they are, the others' samples
       into one running vector maximum (leafmax's arithmetic, one reduction at the end) */
    for (k = 0; k < D; k++) {
        X[k] = vset1(xq[k]);
    }
    for (t = 0; t < C->n; t += VW) {
        unsigned m = vmask_gt(vload(ub + t), THR);
        while (m) {
            const ptrdiff_t u = t + sc__ctz(m);
            const double sm = C->smax[u];
            m &= m - 1;
            if (u == im || u >= C->n) {
                continue;
            }
            if (sm == sm) {
                best = sm > best ? sm : best;
                continue;
            }
            mx = leaf_acc(C->blk[u], D, X, IE, mx);
        }
    }
    {
        const double bt = vmax_lanes(mx);
        return bt > best ? bt : best;
    }
}

static double gather_best(const sc__cands *C, int dim, const double *xq, double ie, double *ub)
{
    return dim == 2 ? best_of(C, 2, xq, ie, ub) : best_of(C, 3, xq, ie, ub);
}

static ptrdiff_t gather_keep(const sc__cands *C, const double *ub, double cut, const double **ptr)
{
    const vd CUT = vset1(cut);
    ptrdiff_t t, k = 0;
    for (t = 0; t < C->n; t += VW) {
        unsigned m = vmask_ge(vload(ub + t), CUT);
        while (m) {
            const ptrdiff_t u = t + sc__ctz(m);
            m &= m - 1;
            if (u < C->n) {
                ptr[k++] = C->blk[u];
            }
        }
    }
    return k;
}

static ptrdiff_t gather_list(const sc__cands *C, int dim, const double *xq, double ie, double cut,
                             const double **ptr)
{
    return dim == 2 ? list_of(C, 2, xq, ie, cut, ptr) : list_of(C, 3, xq, ie, cut, ptr);
}

static double gather_leafmax(const double *blk, int dim, const double *xq, double ie)
{
    return dim == 2 ? leafmax(blk, 2, xq, ie) : leafmax(blk, 3, xq, ie);
}

/* ---- batch drivers ---- */

/* A finite query's cut on a cloud without an index (B->qbase set; sc_ssdf.c, "Pruned
 * queries"): T_f = qbase + ln(1 + r rho^3 / eps^2), r = |x - c0| + rho, plus the slack
 * 1 + 1e-13 r^2 / eps, with the logarithm replaced by the upper bound e ln 2 (1 + z =
 * f 2^e, f in [0.5, 1)): a cut at most ln 2 looser than query_cut's, for the exponent
 * bits instead of a log1p.  e is frexp's for every finite 1 + z >= 1 (a normal number),
 * read from the bits (sc__frexp_e, ~25 instructions per query with the rest); 1025 if
 * 1 + z overflows, a cut above 708, where every weight it could drop flushes to zero
 * anyway (frexp leaves e unspecified there).  Scalar arithmetic, the same on every ISA. */
SC_VFN double small_cut(const sc__blocks *B, const int D, double ie, const double *xq)
{
    const double *hdr = B->hdr, rho = hdr[D];
    double r = 0.0, v;
    int k;
    for (k = 0; k < D; k++) {
        r += (xq[k] - hdr[k]) * (xq[k] - hdr[k]);
    }
    r = sqrt(r) + rho;
    v = 1.0 + r * rho * rho * rho * ie * ie;
    return B->qbase + (double)sc__frexp_e(v, NULL) * 0.6931471805599453 + 1.0 + 1e-13 * r * r * ie;
}

/* rows through lanes_chunk, VW queries at a time (the last chunk padded with copies of
   its first query, whose results are dropped); a non-finite query computes at the origin
   in its lane and gets NaN rows */
SC_VFN void rows_lanes(const sc__blocks *B, double eps, ptrdiff_t m, const double *x, double *work,
                       const int D, const int order, double *phi, double *g, double *hs, double *t3)
{
    const double ie = 1.0 / eps;
    double xq[VW * 3], ncut[VW], o_phi[VW];
    double o_g[VW * 3] = {0.0}, o_h[VW * 9] = {0.0}, o_t[VW * 27] = {0.0}; /* once per call */
    int bad[VW];
    ptrdiff_t r0;
    for (r0 = 0; r0 < m; r0 += VW) {
        const int nl = m - r0 < VW ? (int)(m - r0) : VW;
        int l, k;
        for (l = 0; l < VW; l++) {
            const double *q = x + (r0 + (l < nl ? l : 0)) * D;
            const int ok = sc__finite_query(D, q);
            bad[l] = !ok;
            for (k = 0; k < D; k++) {
                xq[l * D + k] = ok ? q[k] : 0.0;
            }
            ncut[l] = -(isnan(B->qbase) ? B->tcut : small_cut(B, D, ie, xq + l * D));
        }
        lanes_chunk(B, D, order, eps, xq, ncut, work, o_phi, o_g, o_h, o_t);
        for (l = 0; l < nl; l++) {
            const ptrdiff_t r = r0 + l;
            const double nan = NAN;
            if (phi) {
                phi[r] = bad[l] ? nan : o_phi[l];
            }
            for (k = 0; order >= 1 && g && k < D; k++) {
                g[r * D + k] = bad[l] ? nan : o_g[l * D + k];
            }
            for (k = 0; order >= 2 && hs && k < D * D; k++) {
                hs[r * D * D + k] = bad[l] ? nan : o_h[l * D * D + k];
            }
            for (k = 0; order >= 3 && t3 && k < D * D * D; k++) {
                t3[r * D * D * D + k] = bad[l] ? nan : o_t[l * D * D * D + k];
            }
        }
    }
}

SC_VFN void rows(const sc__blocks *B, double eps, ptrdiff_t m, const double *x, double *work,
                 const int D, const int order, double *phi, double *g, double *hs, double *t3)
{
    const double ie = 1.0 / eps, c = 2.0 / eps;
    ptrdiff_t r;
    int k;
    if (B->lanes) {
        rows_lanes(B, eps, m, x, work, D, order, phi, g, hs, t3);
        return;
    }
    for (r = 0; r < m; r++) {
        const double *xq = x + r * D;
        double pbar[3], nbar[3], inv = 0.0, hstar = 0.0, dphi = 0.0, v;
        ptrdiff_t nev = 0;
        if (!sc__finite_query(D, xq)) {
            if (phi) {
                phi[r] = NAN;
            }
            for (k = 0; g && k < D; k++) {
                g[r * D + k] = NAN;
            }
            for (k = 0; hs && k < D * D; k++) {
                hs[r * D * D + k] = NAN;
            }
            for (k = 0; t3 && k < D * D * D; k++) {
                t3[r * D * D * D + k] = NAN;
            }
            continue;
        }
        v = value_pass(B, D, order >= 1, ie, isnan(B->qbase) ? B->tcut : small_cut(B, D, ie, xq),
                       xq, work, pbar, nbar, &inv, &hstar, &dphi, &nev);
        if (phi) {
            phi[r] = v;
        }
        if (order >= 1) {
            deriv_pass(B, D, order, c, xq, work, nev, hstar, dphi, pbar, nbar, inv,
                       g ? g + r * D : NULL, hs ? hs + r * D * D : NULL,
                       t3 ? t3 + r * D * D * D : NULL);
        }
    }
}

/* one instantiation of rows per (dimension, order): constants fold and loops unroll */
SC_VFN void rows_of_order(const sc__blocks *B, double eps, ptrdiff_t m, const double *x,
                          double *work, const int D, int order, double *phi, double *g, double *hs,
                          double *t3)
{
    switch (order) {
    case 0: rows(B, eps, m, x, work, D, 0, phi, g, hs, t3); break;
    case 1: rows(B, eps, m, x, work, D, 1, phi, g, hs, t3); break;
    case 2: rows(B, eps, m, x, work, D, 2, phi, g, hs, t3); break;
    default: rows(B, eps, m, x, work, D, 3, phi, g, hs, t3); break;
    }
}

static int kernel_rows(const sc__blocks *B, int dim, double eps, ptrdiff_t m, const double *x,
                       double *work, double *phi, double *g, double *hs, double *t3)
{
    const int order = t3 ? 3 : hs ? 2 : g ? 1 : 0;
    if (dim == 2) {
        rows_of_order(B, eps, m, x, work, 2, order, phi, g, hs, t3);
    } else {
        rows_of_order(B, eps, m, x, work, 3, order, phi, g, hs, t3);
    }
    return SC_OK;
}

const sc__ssdf_isa SC_SSDF_VARIANT = {kernel_rows, gather_best, gather_keep, gather_leafmax,
                                      gather_list};
