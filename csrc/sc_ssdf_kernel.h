/*
 * sc_ssdf_kernel.h - the SSDF kernel template, written once over the vector primitives of
 * sc_vec_*.h and compiled once per instruction set (sc_ssdf_generic.c, sc_ssdf_avx2.c,
 * sc_ssdf_avx512.c).  Internal.
 *
 * Before including: include one sc_vec_*.h and define SC_SSDF_VARIANT as the name of the
 * sc__ssdf_isa table to define (sc_ssdf_internal.h).
 *
 * Two forms of the same passes: below, samples in the VW lanes (a query at a time; the
 * indexed clouds' leaves, dense large clouds); lanes_chunk, queries in the lanes (a
 * whole cloud without an index, VW queries at a time; see there).
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

/* ---- value (passes 1 and 2) ---- */

/* phi = h* + sum_i w_i (h_i - h*) / sum_i w_i with w_i = exp((log a_i - log a*) -
 * (d_i - d*) / eps), * marking the sample of largest weight (passes 1 and 2 above).
 * Returns phi; also h*, phi - h* and 1/S for pass 3.  With `means`, also p_bar, n_bar
 * and the stored weights; the phi arithmetic is the same instruction sequence either way
 * (bitwise identical value). */
/* the arrays of block b: array a at B->ptr[b] + a * B->as, B->bs samples */
#define BLK_ARRAYS(b)                                                                             \
    const double *P0 = B->ptr[b], *P1 = P0 + B->as, *P2 = P0 + 2 * B->as;                        \
    const double *N0 = P0 + D * B->as, *N1 = N0 + B->as, *N2 = N1 + B->as;                        \
    const double *M = P0 + 2 * D * B->as, *LA = M + B->as;                                        \
    const double *Q0 = LA + B->as, *Q1 = Q0 + B->as, *Q2 = Q1 + B->as, *QQ = Q0 + D * B->as;    \
    double *wk = work + (b) * B->bs

SC_VFN double value_pass(const sc__blocks *B, const int D, const int means, double ie,
                         double tcut, const double *xq, double *work, double *pbar,
                         double *nbar, double *inv_s, double *hstar_s, double *dphi_s,
                         ptrdiff_t *nev_s)
{
    const double *hdr = B->hdr; /* c0[D], rho */
    const ptrdiff_t bs = B->bs, sofs = B->n * bs; /* s_i stored after the d_i */
    const int prune = !(tcut == INFINITY); /* not dense (tcut NaN: from tq, below) */
    double y0, y1, y2;
    const vd X0 = vset1(xq[0]), X1 = vset1(xq[1]), X2 = vset1(D == 3 ? xq[2] : 0.0);
    const vd NIE = vset1(-ie);
    vd vmx = vset1(-INFINITY), DS, LS, HS, SCUT, sw, sh, sp0, sp1, sp2, sn0, sn1, sn2;
    vd ps0 = vset1(0.0), ps1 = vset1(0.0), ps2 = vset1(0.0), vidx = vset1(0.0), cur, STEP;
    double smax, S, pstar[3] = {0.0, 0.0, 0.0}, lane[VW], sshift = 0.0;
    ptrdiff_t istar, bb, nev = 0;
    int k0;
    ptrdiff_t i;

    /* pass 1: s_i = log a_i - d_i / eps (near) or log a_i - (d_i - |x - c0|^2) / eps (far);
       d_i and s_i are stored, and the argmax i* of s tracked per lane */
    for (k0 = 0; k0 < VW; k0++) {
        lane[k0] = (double)k0;
    }
    cur = vload(lane);
    STEP = vset1((double)VW);
    y0 = xq[0] - hdr[0];
    y1 = xq[1] - hdr[1];
    y2 = D == 3 ? xq[2] - hdr[2] : 0.0;
    if (y0 * y0 + y1 * y1 + y2 * y2 <= SC_SSDF_FAR * SC_SSDF_FAR * hdr[D] * hdr[D]) {
        for (bb = 0; bb < B->n; bb++) {
        BLK_ARRAYS(bb);
        (void)N0, (void)N1, (void)N2, (void)M, (void)Q0, (void)Q1, (void)Q2, (void)QQ;
        for (i = 0; i < bs; i += VW) {
            vd e = vsub(X0, vload(P0 + i)), d, s;
            d = vmul(e, e);
            e = vsub(X1, vload(P1 + i));
            d = vfma(e, e, d);
            if (D == 3) {
                e = vsub(X2, vload(P2 + i));
                d = vfma(e, e, d);
            }
            s = vfma(d, NIE, vload(LA + i));
            vstore(wk + i, d);
            if (prune) {
                vstore(wk + sofs + i, s);
            }
            vidx = vselect_gt(s, vmx, cur, vidx);
            vmx = vmax(vmx, s);
            cur = vadd(cur, STEP);
        }
        }
    } else {
        /* |q_i|^2 - 2 y.q_i with y = x - c0: s_i less |y|^2 / eps */
        const vd Y0 = vset1(-2.0 * y0), Y1 = vset1(-2.0 * y1), Y2 = vset1(-2.0 * y2);
        sshift = (y0 * y0 + y1 * y1 + y2 * y2) * ie;
        for (bb = 0; bb < B->n; bb++) {
        BLK_ARRAYS(bb);
        (void)P0, (void)P1, (void)P2, (void)N0, (void)N1, (void)N2, (void)M;
        for (i = 0; i < bs; i += VW) {
            vd d = vfma(vload(Q0 + i), Y0, vload(QQ + i)), s;
            d = vfma(vload(Q1 + i), Y1, d);
            if (D == 3) {
                d = vfma(vload(Q2 + i), Y2, d);
            }
            s = vfma(d, NIE, vload(LA + i));
            vstore(wk + i, d);
            if (prune) {
                vstore(wk + sofs + i, s);
            }
            vidx = vselect_gt(s, vmx, cur, vidx);
            vmx = vmax(vmx, s);
            cur = vadd(cur, STEP);
        }
        }
    }
    /* i* = argmax_i s_i, lowest index on ties (lanes hold the first maximum of their own) */
    {
        double bm[VW], bi[VW];
        int k;
        vstore(bm, vmx);
        vstore(bi, vidx);
        smax = bm[0];
        istar = (ptrdiff_t)bi[0];
        for (k = 1; k < VW; k++) {
            if (bm[k] > smax || (bm[k] == smax && (ptrdiff_t)bi[k] < istar)) {
                smax = bm[k];
                istar = (ptrdiff_t)bi[k];
            }
        }
    }
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
    {
    /* the sample of largest weight, in its block */
    const ptrdiff_t ib = istar / bs, io = istar % bs;
    BLK_ARRAYS(ib);
    (void)Q0, (void)Q1, (void)Q2, (void)QQ, (void)LA, (void)wk;
    if (means) {
        /* shift for the mean: the sample of largest weight.  Accumulating w (p - p*)
         * makes p_bar exact when the weight sits on one sample or on coincident ones
         * (box corners), so the centred P = p - p_bar carries no rounding noise there,
         * which (2/eps) E[H P] would otherwise amplify. */
        ps0 = vset1(P0[io]);
        ps1 = vset1(P1[io]);
        ps2 = vset1(D == 3 ? P2[io] : 0.0);
        pstar[0] = P0[io];
        pstar[1] = P1[io];
        pstar[2] = D == 3 ? P2[io] : 0.0;
    }
    /* pass 2: w_i = exp((log a_i - log a*) - (d_i - d*) / eps); S = sum w; sum w h
       (and sum w p, sum w n).  Differences first: d_i - d* is exact for coincident
       samples and relatively accurate for near ties (Sterbenz), where the weights are
       sensitive, instead of carrying the rounding of d_i / eps ~ u d / eps. */
    SCUT = vset1(smax - tcut);
    DS = vset1(work[istar]);
    LS = vset1(B->ptr[ib][(2 * D + 1) * B->as + io]);
    /* h* = n*.x - m*, computed with the lane arithmetic below, so h_i - h* is exactly 0
       wherever h_i == h* (a flat face): phi = h* + E[h - h*] then carries no rounding
       noise into H = h - phi, which (2/eps)^k would amplify in the derivatives */
    {
        vd hn = vmul(vset1(N0[io]), X0);
        hn = vfma(vset1(N1[io]), X1, hn);
        if (D == 3) {
            hn = vfma(vset1(N2[io]), X2, hn);
        }
        HS = vsub(hn, vset1(M[io]));
    }
    }
    sw = sh = sp0 = sp1 = sp2 = sn0 = sn1 = sn2 = vset1(0.0);
    for (bb = 0; bb < B->n; bb++) {
    BLK_ARRAYS(bb);
    (void)Q0, (void)Q1, (void)Q2, (void)QQ;
    for (i = 0; i < bs; i += SC_PAD) {
        /* a group of SC_PAD samples whose s_i all fall below s* - tcut is dropped (tcut:
           +inf for the dense computation, which keeps every sample), tested on pass 1's
           s_i; then t = s_i - s* from the differences.  Groups of SC_PAD whatever the
           vector width: every ISA drops the same samples. */
        vd tg[SC_PAD / VW];
        int u, skip = prune;
        for (u = 0; skip && u < SC_PAD / VW; u++) {
            const ptrdiff_t iu = i + u * VW;
            skip = vall_lt(vload(wk + sofs + iu), SCUT);
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
            tg[u] = vfma(vsub(vload(wk + iu), DS), NIE, vsub(vload(LA + iu), LS));
        }
        for (u = 0; u < SC_PAD / VW; u++) {
        const ptrdiff_t iu = i + u * VW;
        const vd w = vexp_neg(tg[u]);
        vd n0 = vload(N0 + iu), n1 = vload(N1 + iu), n2 = vset1(0.0), nx;
        nx = vmul(n0, X0);
        nx = vfma(n1, X1, nx);
        if (D == 3) {
            n2 = vload(N2 + iu);
            nx = vfma(n2, X2, nx);
        }
        sw = vadd(sw, w);
        sh = vfma(w, vsub(vsub(nx, vload(M + iu)), HS), sh);
        if (means) {
            vstore(wk + iu, w);
            sp0 = vfma(w, vsub(vload(P0 + iu), ps0), sp0);
            sp1 = vfma(w, vsub(vload(P1 + iu), ps1), sp1);
            sn0 = vfma(w, n0, sn0);
            sn1 = vfma(w, n1, sn1);
            if (D == 3) {
                sp2 = vfma(w, vsub(vload(P2 + iu), ps2), sp2);
                sn2 = vfma(w, n2, sn2);
            }
        }
        }
    }
    }
    *nev_s = nev;
    S = vhsum(sw);
    *dphi_s = vhsum(sh) / S; /* phi - h* */
    if (means) {
        double inv = 1.0 / S;
        *inv_s = inv;
        pbar[0] = pstar[0] + vhsum(sp0) * inv;
        pbar[1] = pstar[1] + vhsum(sp1) * inv;
        nbar[0] = vhsum(sn0) * inv;
        nbar[1] = vhsum(sn1) * inv;
        if (D == 3) {
            pbar[2] = pstar[2] + vhsum(sp2) * inv;
            nbar[2] = vhsum(sn2) * inv;
        }
    }
    {
        double b[VW];
        vstore(b, HS);
        *hstar_s = b[0];
    }
    return *hstar_s + *dphi_s;
}

/* ---- derivatives (pass 3) ---- */

/* pass 3's sums for the VW samples at i of one block (arrays P, N, M, weights wk) */
SC_VFN void sweep_vec(const int D, const int order, const int low, const int high,
                      const double *const *P, const double *const *N, const double *M,
                      const double *wk, ptrdiff_t i, const vd *X, const vd *PB, const vd *NB,
                      vd HSV, vd DPHI, vd *ahp, vd (*anp)[3], vd *ahpp, vd *app,
                      vd (*anpp)[6], vd (*ahppp)[6])
{
    vd w = vload(wk + i), Pc[3], Nc[3], wP[3], wHP[3], nx, wH;
    int a, b;
    nx = vmul(vload(N[0] + i), X[0]);
#pragma GCC unroll 4
    for (a = 1; a < D; a++) {
        nx = vfma(vload(N[a] + i), X[a], nx);
    }
    /* H = h - phi = (h - h*) - (phi - h*), wH = w H */
    wH = vmul(w, vsub(vsub(vsub(nx, vload(M + i)), HSV), DPHI));
#pragma GCC unroll 4
    for (a = 0; a < D; a++) {
        Pc[a] = vsub(vload(P[a] + i), PB[a]);
        if (low) {
            ahp[a] = vfma(wH, Pc[a], ahp[a]);
        }
    }
    if (order >= 2) {
#pragma GCC unroll 4
        for (a = 0; a < D; a++) {
            Nc[a] = vsub(vload(N[a] + i), NB[a]);
            wP[a] = vmul(w, Pc[a]);
            wHP[a] = vmul(wH, Pc[a]);
        }
    }
    if (order >= 2 && low) {
#pragma GCC unroll 4
        for (a = 0; a < D; a++) {
#pragma GCC unroll 4
            for (b = 0; b < D; b++) {
                anp[a][b] = vfma(Nc[a], wP[b], anp[a][b]);
                if (b >= a) {
                    ahpp[SYM2(D, a, b)] = vfma(wHP[a], Pc[b], ahpp[SYM2(D, a, b)]);
                }
            }
        }
    }
    if (high) {
#pragma GCC unroll 4
        for (a = 0; a < D; a++) {
#pragma GCC unroll 4
            for (b = a; b < D; b++) {
                vd wPP = vmul(wP[a], Pc[b]), wHPP = vmul(wHP[a], Pc[b]);
                int ab = SYM2(D, a, b), cc;
                app[ab] = vadd(app[ab], wPP);
#pragma GCC unroll 4
                for (cc = 0; cc < D; cc++) {
                    anpp[cc][ab] = vfma(Nc[cc], wPP, anpp[cc][ab]);
                }
                /* sum w H P_a P_b P_c for c >= b, stored at [a][SYM2(b, c)] */
#pragma GCC unroll 4
                for (cc = b; cc < D; cc++) {
                    ahppp[a][SYM2(D, b, cc)] =
                        vfma(wHPP, Pc[cc], ahppp[a][SYM2(D, b, cc)]);
                }
            }
        }
    }
}

/* one sweep of pass 3 over the samples: the order-1/2 sums (low) and/or the order-3 sums
 * (high); see deriv_pass.  A pruned query (B->evl) visits the nev groups of SC_PAD that
 * pass 2 evaluated, listed there; otherwise every vector, skipping those whose weights
 * are all zero.  Either way the same vectors are summed in the same order (an evaluated
 * group's vector of zero weights adds exactly nothing: the sums start at +0 and never
 * reach -0), so the bits are the same. */
SC_VFN void sweep(const sc__blocks *B, const int D, const int order, const int low,
                  const int high, const double *work, ptrdiff_t nev, const vd *X,
                  const vd *PB, const vd *NB, vd HSV, vd DPHI, vd *ahp, vd (*anp)[3],
                  vd *ahpp, vd *app, vd (*anpp)[6], vd (*ahppp)[6])
{
    const double *P[3], *N[3], *M;
    ptrdiff_t i, bb, e;
    int a, u;
    if (B->evl) {
        for (e = 0; e < nev; e++) {
            const ptrdiff_t g = B->evl[e], i0 = g % SC_TREE_LEAF;
            const double *blk = B->ptr[g / SC_TREE_LEAF];
            const double *wk = work + (g - i0);
            M = blk + 2 * D * SC_TREE_LEAF;
#pragma GCC unroll 4
            for (a = 0; a < D; a++) {
                P[a] = blk + a * SC_TREE_LEAF;
                N[a] = blk + (D + a) * SC_TREE_LEAF;
            }
#pragma GCC unroll 4
            for (u = 0; u < SC_PAD / VW; u++) {
                sweep_vec(D, order, low, high, P, N, M, wk, i0 + u * VW, X, PB, NB, HSV, DPHI,
                          ahp, anp, ahpp, app, anpp, ahppp);
            }
        }
        return;
    }
    for (bb = 0; bb < B->n; bb++) {
        const double *wk = work + bb * B->bs;
        M = B->ptr[bb] + 2 * D * B->as;
#pragma GCC unroll 4
        for (a = 0; a < D; a++) {
            P[a] = B->ptr[bb] + a * B->as;
            N[a] = B->ptr[bb] + (D + a) * B->as;
        }
        for (i = 0; i < B->bs; i += VW) {
            if (vall_zero(vload(wk + i))) {
                continue; /* adds exactly nothing */
            }
            sweep_vec(D, order, low, high, P, N, M, wk, i, X, PB, NB, HSV, DPHI, ahp, anp,
                      ahpp, app, anpp, ahppp);
        }
    }
}

/* dphi_a = n_bar_a + c E[H P_a]; d2phi_ab = c (E[N_a P_b] + E[N_b P_a]) + c^2 E[H P_a P_b];
 * d3phi_abc = c^2 sum_cyc E[N_a P_b P_c] + c^3 kappa(h, p_a, p_b, p_c) */
SC_VFN void deriv_pass(const sc__blocks *B, const int D, const int order, double c,
                       const double *xq, const double *work, ptrdiff_t nev, double hstar,
                       double dphi, const double *pbar, const double *nbar, double inv,
                       double *g, double *hs, double *t3)
{
    vd X[3], PB[3], NB[3], HSV = vset1(hstar), DPHI = vset1(dphi);
    /* accumulators: sum w H P_a; sum w N_a P_b; sum w H P_a P_b (a<=b); sum w P_a P_b (a<=b);
       sum w N_a P_b P_c (b<=c); sum w H P_a P_b P_c (a<=b<=c) */
    vd ahp[3], anp[3][3], ahpp[6], app[6], anpp[3][6], ahppp[3][6];
    double ehp[3], enp[3][3], ehpp[6], epp[6], enpp[3][6], ehppp[3][6];
    double c2 = c * c, c3 = c2 * c;
    int a, b, k;

#pragma GCC unroll 4
    for (a = 0; a < D; a++) {
        X[a] = vset1(xq[a]);
        PB[a] = vset1(pbar[a]);
        NB[a] = vset1(nbar[a]);
        ahp[a] = vset1(0.0);
#pragma GCC unroll 4
        for (b = 0; b < D; b++) {
            anp[a][b] = vset1(0.0);
        }
#pragma GCC unroll 8
        for (k = 0; k < 6; k++) {
            anpp[a][k] = ahppp[a][k] = vset1(0.0);
        }
    }
#pragma GCC unroll 8
    for (k = 0; k < 6; k++) {
        ahpp[k] = app[k] = vset1(0.0);
    }

    /* order 3 runs two sweeps, (a) the order-1/2 sums and (b) the order-3 sums, each
       recomputing the centred quantities: fewer live accumulators (no register spills);
       sweep (a) is the same instruction sequence at every order (bitwise equal outputs) */
    sweep(B, D, order, 1, 0, work, nev, X, PB, NB, HSV, DPHI, ahp, anp, ahpp, app, anpp, ahppp);
    if (order >= 3) {
        sweep(B, D, order, 0, 1, work, nev, X, PB, NB, HSV, DPHI, ahp, anp, ahpp, app, anpp,
              ahppp);
    }

    /* normalize: E[.] = sum / S */
    for (a = 0; a < D; a++) {
        ehp[a] = vhsum(ahp[a]) * inv;
    }
    if (g) {
        for (a = 0; a < D; a++) {
            g[a] = nbar[a] + c * ehp[a];
        }
    }
    if (order < 2) {
        return;
    }
    for (a = 0; a < D; a++) {
        for (b = 0; b < D; b++) {
            enp[a][b] = vhsum(anp[a][b]) * inv;
            if (b >= a) {
                ehpp[SYM2(D, a, b)] = vhsum(ahpp[SYM2(D, a, b)]) * inv;
            }
        }
    }
    if (hs) {
        for (a = 0; a < D; a++) {
            for (b = a; b < D; b++) {
                double v = c * (enp[a][b] + enp[b][a]) + c2 * ehpp[SYM2(D, a, b)];
                hs[a * D + b] = hs[b * D + a] = v;
            }
        }
    }
    if (order < 3 || !t3) {
        return;
    }
    for (a = 0; a < D; a++) {
        for (b = a; b < D; b++) {
            int ab = SYM2(D, a, b), cc;
            epp[ab] = vhsum(app[ab]) * inv;
            for (cc = 0; cc < D; cc++) {
                enpp[cc][ab] = vhsum(anpp[cc][ab]) * inv;
            }
            for (cc = b; cc < D; cc++) {
                ehppp[a][SYM2(D, b, cc)] = vhsum(ahppp[a][SYM2(D, b, cc)]) * inv;
            }
        }
    }
    for (a = 0; a < D; a++) {
        for (b = a; b < D; b++) {
            int cc;
            for (cc = b; cc < D; cc++) {
                int ab = SYM2(D, a, b), ac = SYM2(D, a, cc), bc = SYM2(D, b, cc);
                double kap = ehppp[a][bc] - ehp[a] * epp[bc] - ehp[b] * epp[ac] - ehp[cc] * epp[ab];
                double v = c2 * (enpp[a][bc] + enpp[b][ac] + enpp[cc][ab]) + c3 * kap;
                t3[(a * D + b) * D + cc] = t3[(a * D + cc) * D + b] = v;
                t3[(b * D + a) * D + cc] = t3[(b * D + cc) * D + a] = v;
                t3[(cc * D + a) * D + b] = t3[(cc * D + b) * D + a] = v;
            }
        }
    }
}

/* ---- the query-lane kernel: a whole small cloud, VW queries at a time ---- */

/* For a cloud without an index (B->lanes; fewer than SC_TREE_MIN samples, one block) the
 * same three passes run with the lanes holding VW queries instead of VW samples: every
 * sample's data is a broadcast, every per-query quantity (x, s*, d*, h*, p_bar, the
 * sums) a vector, and nothing is reduced across lanes.  The per-(query, sample) numbers
 * -- d_i, s_i, t_i, w_i, h_i - h*, H, P, N -- are the same operations on the same operands
 * as the sample-lane kernel above (the same bits); i* is the same (first maximum); the
 * group skip drops the same groups of SC_PAD samples for each query (a lane's own cut,
 * per lane); the far form is chosen per lane.  Only the sums' order differs: each query's
 * sums run over the samples in order instead of in VW interleaved partial sums, so a
 * result may differ from the other kernel's in its last bits (never within this kernel:
 * lanes never mix, so a query's result does not depend on its neighbours, the batch or
 * the threads, and the value is the same instruction sequence at every order).
 * Why: a small cloud's query is mostly fixed cost in the sample-lane kernel (lane
 * reductions, the argmax across lanes, scalar bookkeeping per query): the push-T pusher
 * (32 samples) at the T's 170 samples, and the T at the pusher's 32.
 * work: npad VW doubles (d_i, then w_i, of each lane). */
SC_VFN void lanes_chunk(const sc__blocks *B, const int D, const int order, double eps,
                        const double *xq, const double *ncut, const double *grp, double *work,
                        double *out_phi, double *out_g, double *out_h, double *out_t)
{
    const double ie = 1.0 / eps, c = 2.0 / eps; /* as rows */
    const double *P0 = B->ptr[0], *P1 = P0 + B->as, *P2 = P0 + 2 * B->as;
    const double *N0 = P0 + D * B->as, *N1 = N0 + B->as, *N2 = N1 + B->as;
    const double *M = P0 + 2 * D * B->as, *LA = M + B->as;
    const double *Q0 = LA + B->as, *Q1 = Q0 + B->as, *Q2 = Q1 + B->as, *QQ = Q0 + D * B->as;
    const double *hdr = B->hdr;
    const ptrdiff_t bs = B->bs;
    const int means = order >= 1;
    const double c2 = c * c, c3 = c2 * c;
    const vd NIE = vset1(-ie), ZERO = vset1(0.0), NCUT = vload(ncut);
    double lx[3][VW], lfar[VW], lidx[VW], tmp[VW];
    vd X[3], vmx = vset1(-INFINITY), vidx = ZERO, DS, LS, HS, PS[3], NS[3], FAR;
    vd sw = ZERO, sh = ZERO, sp[3], sn[3], S, INV, DPHI, PB[3], NB[3];
    int nfar = 0, nkept, nlive, a, b, k, l;
    ptrdiff_t i, kept[SC_TREE_MIN / SC_PAD], live[SC_TREE_MIN / SC_PAD];
    double lslack[VW];

    for (l = 0; l < VW; l++) {
        double r2 = 0.0, r;
        for (a = 0; a < D; a++) {
            lx[a][l] = xq[l * D + a];
            r2 += (xq[l * D + a] - hdr[a]) * (xq[l * D + a] - hdr[a]);
        }
        /* the same test as value_pass, per query */
        lfar[l] = r2 <= SC_SSDF_FAR * SC_SSDF_FAR * hdr[D] * hdr[D] ? 0.0 : 1.0;
        nfar += lfar[l] != 0.0;
        r = sqrt(r2) + hdr[D];
        lslack[l] = 1.0 + 1e-12 * r * r * ie; /* rounding of s_i, t_i and the bounds */
    }
    for (a = 0; a < D; a++) {
        X[a] = vload(lx[a]);
        sp[a] = sn[a] = ZERO;
    }
    for (a = D; a < 3; a++) {
        X[a] = sp[a] = sn[a] = ZERO;
    }
    FAR = vload(lfar);

    /* the groups of SC_PAD samples that some lane may keep.  Every s_i of group g is at
       most ub_g = max log a - dist^2(x, box_g) / eps (its box and largest log a: grp,
       built by sc_cloud_pack), and s* >= best, the largest s_i of the groups' first samples.  A group
       with ub_g below best - cut - slack in every lane has every t_i = s_i - s* below
       -cut there: pass 2 would skip it for every lane, and none of its samples can be
       i*.  So it is left out of pass 1 too, and the results are the same bits (the
       slack, 1 + 1e-12 r^2 / eps, covers the rounding of s_i, t_i and the bounds).  A far
       query's cut is a fraction of a millimetre in distance: most groups drop out.
       Dense (cut +inf): all live. */
    {
        vd ub[SC_TREE_MIN / SC_PAD], best = vset1(-INFINITY), thr;
        const ptrdiff_t ng = bs / SC_PAD;
        ptrdiff_t gg;
        for (gg = 0; gg < ng; gg++) {
            const double *gb = grp + gg * 8; /* lo[3], hi[3], max log a, unused */
            const ptrdiff_t i0 = gg * SC_PAD; /* a sample (the padding is at the end) */
            vd dl = ZERO, d0 = ZERO;
            for (a = 0; a < D; a++) {
                const vd lo = vset1(gb[a]), hi = vset1(gb[3 + a]);
                const vd e = vmax(vmax(vsub(lo, X[a]), vsub(X[a], hi)), ZERO);
                const vd f = vsub(X[a], vset1(P0[a * B->as + i0]));
                dl = vfma(e, e, dl);
                d0 = vfma(f, f, d0);
            }
            ub[gg] = vfma(dl, NIE, vset1(gb[6]));
            best = vmax(best, vfma(d0, NIE, vset1(LA[i0])));
        }
        thr = vsub(vadd(best, NCUT), vload(lslack));
        nlive = 0;
        for (gg = 0; gg < ng; gg++) {
            if (!vall_lt(ub[gg], thr)) {
                live[nlive++] = gg * SC_PAD;
            }
        }
    }

    /* pass 1: d_i (near or far form, per lane) stored, s_i and the first argmax */
    {
        vd Y[3];
        int gi;
        for (a = 0; a < 3; a++) {
            Y[a] = a < D ? vmul(vset1(-2.0), vsub(X[a], vset1(hdr[a]))) : ZERO;
        }
        for (gi = 0; gi < nlive; gi++) {
        vd CUR = vset1((double)live[gi]);
        const vd ONE = vset1(1.0);
        for (i = live[gi]; i < live[gi] + SC_PAD; i++, CUR = vadd(CUR, ONE)) {
            vd d = ZERO, dfar, e, s;
            if (nfar < VW) {
                e = vsub(X[0], vset1(P0[i]));
                d = vmul(e, e);
                e = vsub(X[1], vset1(P1[i]));
                d = vfma(e, e, d);
                if (D == 3) {
                    e = vsub(X[2], vset1(P2[i]));
                    d = vfma(e, e, d);
                }
            }
            if (nfar > 0) {
                /* -2 y is exact, so fma(q, -2 y, |q|^2) is value_pass's far form */
                dfar = vfma(vset1(Q0[i]), Y[0], vset1(QQ[i]));
                dfar = vfma(vset1(Q1[i]), Y[1], dfar);
                if (D == 3) {
                    dfar = vfma(vset1(Q2[i]), Y[2], dfar);
                }
                d = nfar == VW ? dfar : vselect_gt(FAR, vset1(0.5), dfar, d);
            }
            s = vfma(d, NIE, vset1(LA[i]));
            vstore(work + i * VW, d);
            vidx = vselect_gt(s, vmx, CUR, vidx); /* CUR = i, exactly */
            vmx = vmax(vmx, s);
        }
        }
    }
    /* the per-lane sample of largest weight */
    vstore(lidx, vidx);
    {
        double ds[VW], ls[VW], ps[3][VW], ns[3][VW], ms[VW];
        for (l = 0; l < VW; l++) {
            const ptrdiff_t is = (ptrdiff_t)lidx[l];
            ds[l] = work[is * VW + l];
            ls[l] = LA[is];
            ms[l] = M[is];
            for (a = 0; a < D; a++) {
                ps[a][l] = P0[a * B->as + is];
                ns[a][l] = N0[a * B->as + is];
            }
        }
        DS = vload(ds);
        LS = vload(ls);
        for (a = 0; a < 3; a++) {
            PS[a] = a < D ? vload(ps[a]) : ZERO;
            NS[a] = a < D ? vload(ns[a]) : ZERO;
        }
        /* h* = n*.x - m*, as value_pass (n*_0 x_0, then fma) */
        HS = vmul(NS[0], X[0]);
        HS = vfma(NS[1], X[1], HS);
        if (D == 3) {
            HS = vfma(NS[2], X[2], HS);
        }
        HS = vsub(HS, vload(ms));
    }

    /* pass 2: w_i = exp(t_i) by groups of SC_PAD, a group dropped for a lane whose t_i
       are all below its cut; the groups some lane keeps are listed for pass 3 */
    nkept = 0;
    for (k = 0; k < nlive; k++) {
        vd tg[SC_PAD], tmx = vset1(-INFINITY);
        int u;
        i = live[k];
        for (u = 0; u < SC_PAD; u++) {
            const ptrdiff_t iu = i + u;
            tg[u] = vfma(vsub(vload(work + iu * VW), DS), NIE, vsub(vset1(LA[iu]), LS));
            tmx = vmax(tmx, tg[u]);
        }
        if (vall_lt(tmx, NCUT)) {
            continue; /* pass 3 reads the listed groups only */
        }
        kept[nkept++] = i;
        for (u = 0; u < SC_PAD; u++) {
            const ptrdiff_t iu = i + u;
            const vd w = vselect_gt(NCUT, tmx, ZERO, vexp_neg(tg[u]));
            const vd n0 = vset1(N0[iu]), n1 = vset1(N1[iu]);
            vd nx = vmul(n0, X[0]);
            nx = vfma(n1, X[1], nx);
            if (D == 3) {
                nx = vfma(vset1(N2[iu]), X[2], nx);
            }
            sw = vadd(sw, w);
            sh = vfma(w, vsub(vsub(nx, vset1(M[iu])), HS), sh);
            if (means) {
                vstore(work + iu * VW, w);
                sp[0] = vfma(w, vsub(vset1(P0[iu]), PS[0]), sp[0]);
                sp[1] = vfma(w, vsub(vset1(P1[iu]), PS[1]), sp[1]);
                sn[0] = vfma(w, n0, sn[0]);
                sn[1] = vfma(w, n1, sn[1]);
                if (D == 3) {
                    sp[2] = vfma(w, vsub(vset1(P2[iu]), PS[2]), sp[2]);
                    sn[2] = vfma(w, vset1(N2[iu]), sn[2]);
                }
            }
        }
    }
    S = sw;
    DPHI = vdiv(sh, S); /* phi - h* */
    vstore(out_phi, vadd(HS, DPHI));
    if (!means) {
        return;
    }
    INV = vdiv(vset1(1.0), S);
    for (a = 0; a < 3; a++) {
        PB[a] = a < D ? vadd(PS[a], vmul(sp[a], INV)) : ZERO;
        NB[a] = a < D ? vmul(sn[a], INV) : ZERO;
    }

    /* pass 3: the centred moments (sweep's arithmetic, per lane) */
    {
        vd ahp[3], anp[3][3], ahpp[6], app[6], anpp[3][6], ahppp[3][6];
        vd ehp[3], enp[3][3], ehpp[6], epp[6], enpp[3][6], ehppp[3][6];
        int sweep_no;
        for (a = 0; a < 3; a++) {
            ahp[a] = ZERO;
            for (b = 0; b < 3; b++) {
                anp[a][b] = ZERO;
            }
            for (k = 0; k < 6; k++) {
                anpp[a][k] = ahppp[a][k] = ZERO;
            }
        }
        for (k = 0; k < 6; k++) {
            ahpp[k] = app[k] = ZERO;
        }
        /* order 3: two sweeps, (a) the order-1/2 sums, (b) the order-3 sums */
        for (sweep_no = 0; sweep_no < (order >= 3 ? 2 : 1); sweep_no++) {
            const int low = sweep_no == 0, high = sweep_no == 1;
            int gi;
            for (gi = 0; gi < nkept; gi++) {
            for (i = kept[gi]; i < kept[gi] + SC_PAD; i++) {
                const vd w = vload(work + i * VW);
                vd Pc[3], Nc[3], wP[3], wHP[3], nx, wH;
                if (vall_zero(w)) {
                    continue;
                }
                nx = vmul(vset1(N0[i]), X[0]);
                nx = vfma(vset1(N1[i]), X[1], nx);
                if (D == 3) {
                    nx = vfma(vset1(N2[i]), X[2], nx);
                }
                wH = vmul(w, vsub(vsub(vsub(nx, vset1(M[i])), HS), DPHI));
                for (a = 0; a < D; a++) {
                    Pc[a] = vsub(vset1(P0[a * B->as + i]), PB[a]);
                    if (low) {
                        ahp[a] = vfma(wH, Pc[a], ahp[a]);
                    }
                }
                if (order >= 2) {
                    for (a = 0; a < D; a++) {
                        Nc[a] = vsub(vset1(N0[a * B->as + i]), NB[a]);
                        wP[a] = vmul(w, Pc[a]);
                        wHP[a] = vmul(wH, Pc[a]);
                    }
                }
                if (order >= 2 && low) {
                    for (a = 0; a < D; a++) {
                        for (b = 0; b < D; b++) {
                            anp[a][b] = vfma(Nc[a], wP[b], anp[a][b]);
                            if (b >= a) {
                                ahpp[SYM2(D, a, b)] = vfma(wHP[a], Pc[b], ahpp[SYM2(D, a, b)]);
                            }
                        }
                    }
                }
                if (high) {
                    for (a = 0; a < D; a++) {
                        for (b = a; b < D; b++) {
                            const vd wPP = vmul(wP[a], Pc[b]), wHPP = vmul(wHP[a], Pc[b]);
                            const int ab = SYM2(D, a, b);
                            int cc;
                            app[ab] = vadd(app[ab], wPP);
                            for (cc = 0; cc < D; cc++) {
                                anpp[cc][ab] = vfma(Nc[cc], wPP, anpp[cc][ab]);
                            }
                            for (cc = b; cc < D; cc++) {
                                ahppp[a][SYM2(D, b, cc)] =
                                    vfma(wHPP, Pc[cc], ahppp[a][SYM2(D, b, cc)]);
                            }
                        }
                    }
                }
            }
            }
        }
        /* E[.] = sum / S; the outputs of deriv_pass, per lane */
        for (a = 0; a < D; a++) {
            ehp[a] = vmul(ahp[a], INV);
            vstore(tmp, vadd(NB[a], vmul(vset1(c), ehp[a])));
            for (l = 0; l < VW; l++) {
                out_g[l * D + a] = tmp[l];
            }
        }
        if (order < 2) {
            return;
        }
        for (a = 0; a < D; a++) {
            for (b = 0; b < D; b++) {
                enp[a][b] = vmul(anp[a][b], INV);
                if (b >= a) {
                    ehpp[SYM2(D, a, b)] = vmul(ahpp[SYM2(D, a, b)], INV);
                }
            }
        }
        for (a = 0; a < D; a++) {
            for (b = a; b < D; b++) {
                vstore(tmp, vadd(vmul(vset1(c), vadd(enp[a][b], enp[b][a])),
                                 vmul(vset1(c2), ehpp[SYM2(D, a, b)])));
                for (l = 0; l < VW; l++) {
                    out_h[l * D * D + a * D + b] = out_h[l * D * D + b * D + a] = tmp[l];
                }
            }
        }
        if (order < 3) {
            return;
        }
        for (a = 0; a < D; a++) {
            for (b = a; b < D; b++) {
                const int ab = SYM2(D, a, b);
                int cc;
                epp[ab] = vmul(app[ab], INV);
                for (cc = 0; cc < D; cc++) {
                    enpp[cc][ab] = vmul(anpp[cc][ab], INV);
                }
                for (cc = b; cc < D; cc++) {
                    ehppp[a][SYM2(D, b, cc)] = vmul(ahppp[a][SYM2(D, b, cc)], INV);
                }
            }
        }
        for (a = 0; a < D; a++) {
            for (b = a; b < D; b++) {
                int cc;
                for (cc = b; cc < D; cc++) {
                    const int ab = SYM2(D, a, b), ac = SYM2(D, a, cc), bc = SYM2(D, b, cc);
                    const vd kap = vsub(vsub(vsub(ehppp[a][bc], vmul(ehp[a], epp[bc])),
                                             vmul(ehp[b], epp[ac])),
                                        vmul(ehp[cc], epp[ab]));
                    vstore(tmp, vadd(vmul(vset1(c2), vadd(vadd(enpp[a][bc], enpp[b][ac]),
                                                           enpp[cc][ab])),
                                     vmul(vset1(c3), kap)));
                    for (l = 0; l < VW; l++) {
                        double *t3 = out_t + l * D * D * D, v = tmp[l];
                        t3[(a * D + b) * D + cc] = t3[(a * D + cc) * D + b] = v;
                        t3[(b * D + a) * D + cc] = t3[(b * D + cc) * D + a] = v;
                        t3[(cc * D + a) * D + b] = t3[(cc * D + b) * D + a] = v;
                    }
                }
            }
        }
    }
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
        const vd e = vmax(vmax(vsub(vload(C->c[k] + t), X[k]), vsub(X[k], vload(C->c[D + k] + t))), Z);
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
SC_VFN ptrdiff_t list_of(const sc__cands *C, const int D, const double *xq, double ie,
                         double cut, const double **ptr)
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

SC_VFN double best_of(const sc__cands *C, const int D, const double *xq,
                      double ie, double *ub)
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

static double gather_best(const sc__cands *C, int dim, const double *xq, double ie,
                    double *ub)
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
    return B->qbase + (double)sc__frexp_e(v, NULL) * 0.6931471805599453 + 1.0 +
           1e-13 * r * r * ie;
}

/* rows through lanes_chunk, VW queries at a time (the last chunk padded with copies of
   its first query, whose results are dropped); a non-finite query computes at the origin
   in its lane and gets NaN rows */
SC_VFN void rows_lanes(const sc__blocks *B, double eps, ptrdiff_t m, const double *x,
                       double *work, const int D, const int order, double *phi, double *g,
                       double *hs, double *t3)
{
    const double ie = 1.0 / eps;
    double xq[VW * 3], ncut[VW], o_phi[VW];
    double o_g[VW * 3] = {0.0}, o_h[VW * 9] = {0.0}, o_t[VW * 27] = {0.0}; /* once per call */
    const double *grp = B->hdr + SC_PAD; /* the group boxes (sc_cloud_pack) */
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
        lanes_chunk(B, D, order, eps, xq, ncut, grp, work, o_phi, o_g, o_h, o_t);
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

static int kernel_rows(const sc__blocks *B, int dim, double eps, ptrdiff_t m, const double *x,
                 double *work, double *phi, double *g, double *hs, double *t3)
{
    const int order = t3 ? 3 : hs ? 2 : g ? 1 : 0;
    /* one instantiation per (dimension, order): constants fold and loops unroll */
    if (dim == 2) {
        switch (order) {
        case 0:
            rows(B, eps, m, x, work, 2, 0, phi, g, hs, t3);
            break;
        case 1:
            rows(B, eps, m, x, work, 2, 1, phi, g, hs, t3);
            break;
        case 2:
            rows(B, eps, m, x, work, 2, 2, phi, g, hs, t3);
            break;
        default:
            rows(B, eps, m, x, work, 2, 3, phi, g, hs, t3);
            break;
        }
    } else {
        switch (order) {
        case 0:
            rows(B, eps, m, x, work, 3, 0, phi, g, hs, t3);
            break;
        case 1:
            rows(B, eps, m, x, work, 3, 1, phi, g, hs, t3);
            break;
        case 2:
            rows(B, eps, m, x, work, 3, 2, phi, g, hs, t3);
            break;
        default:
            rows(B, eps, m, x, work, 3, 3, phi, g, hs, t3);
            break;
        }
    }
    return SC_OK;
}

const sc__ssdf_isa SC_SSDF_VARIANT = {kernel_rows, gather_best, gather_keep, gather_leafmax, gather_list};
