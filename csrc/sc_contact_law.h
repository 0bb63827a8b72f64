/*
 * sc_contact_law.h - the contact model's per-sample law, written once and instantiated by
 * sc_contact_kernel.h for three kinds of number:
 *   values  plain doubles (order 0);
 *   jets    second-order jets of sc_jet.h, one sample at a time (order 2, and order 1
 *           outside the lane copies);
 *   lanes   first-order jets of SC_CONTACT_VL samples of one owner at once, one per
 *           vector lane (entry e of lane l at [e][l]; order 1).
 * Every kind does the same arithmetic operations in the same order on each number (no
 * reassociation, no contraction), so the values, each jet's value and each lane are the
 * same bits, and the lanes' first derivatives those of the jets.
 *
 * For sample k of owner O against the other body K (docs/method.md section 5; the names
 * of sc_contact_kernel.h), with p its body-frame position:
 *   geometry: q = Q_O p (the lever arm in K's frame), y = q + y0_O (its position there;
 *     its value the SSDF's, so that Phi and grad phi are evaluated exactly there),
 *     Phi_k = phi_K(y) and g = grad phi_K(y) (K's frame) by the chain rule from the SSDF's
 *     derivatives (composed only where numbers carry derivatives: values take the SSDF's);
 *   forces: pi_k(0) E(dR - dPhi_k) (E(z) = exp(z / eps_c): the sums are multiplied by
 *     E(dm - dR) once after the pass), the normal force pi G, and with friction the
 *     relative velocity u = cv_O + Om_O x q (2D) or cv_O + N_O p (3D), in K's frame, its
 *     part t = u - (nu . u) nu tangent to nu = g / sqrt(|g|^2 + tiny), the damping force
 *     per unit c s_b(-m), Fd = pi (nu . u) nu (the sample's normal velocity; against a 3D
 *     half-space only its magnitude cd = pi (nu . u), along the constant nu), and the
 *     friction force F = pi t / sqrt(|t|^2 + v_s^2).  A half-space K has a constant
 *     gradient: its g is the numbers of the sample, and nu is constant.
 *   the implicit step's lagged friction (sc_step.c): with SC_CONTACT_FREEZE the normalizer
 *     1 / sqrt(|t|^2 + v_s^2) has no velocity derivatives; with SC_CONTACT_WNUM the
 *     damping's normal velocity and the friction's numerator t are those of other, given
 *     velocities (the owner's cvw, Omw / Nw), the normalizer that of the state's.
 *
 * Before including, define:
 *   LAW(name)    the instance's name of `name` (name##_values, ...)
 *   LAW_N        a number's handle, a type name (num_t for values and jets, lj_t for
 *                lanes)
 *   LAW_VL       lanes per number (1 for values and jets)
 *   LAW_DERIVS   1 where numbers carry derivatives (jets, lanes), 0 for values
 *   LAW_WNUM     1 where the friction's numerator may come from other velocities
 *                (SC_CONTACT_WNUM: the jets and the lanes), else 0
 *   LAW_SAMPLE   the instance's sample type, with members p[3], pi, g[3], y[3]: pointers
 *                to LAW_VL doubles (one per lane), and what its L_COMPOSE reads
 * and the operations on numbers (na: the leading variables the operands depend on; the
 * coefficients k are rows of LAW_VL doubles, one per lane; s a plain double):
 *   L_LIN(na, out, ka, a, kb, b)    out = ka a + kb b (out may alias an operand)
 *   L_SCALE(na, out, ka, a)         out = ka a
 *   L_LIN3(na, out, k0, a0, k1, a1, k2, a2)          ((k0 a0 + k1 a1) + k2 a2)
 *   L_LIN4(na, out, k0, a0, k1, a1, k2, a2, k3, a3)  (((k0 a0 + k1 a1) + k2 a2) + k3 a3)
 *   L_AXPY(na, out, ka, a)          out += ka a
 *   L_MUL(na, out, a, b)            out = a b (out may alias a or b)
 *   L_MADD(na, out, s, a, b)        out += s a b (no aliasing)
 *   L_FUNC(na, out, a, k0, k1, k2)  out = f(a), f with value k0, derivatives k1, k2 at a
 *   L_INVNORM(na, D, out, v, cst)   out = 1 / sqrt(|v|^2 + cst), v D numbers
 *   L_PROMOTE(na, nb, a)            a's entries na .. nb zeroed (a pose-only jet made full)
 *   L_SETVAL(a, k)                  a's value := k
 *   L_COMPOSE_PHI(na, D, out, s, y)     out = phi_K of the numbers y, from sample s's SSDF
 *                                       derivatives (chain rule)
 *   L_COMPOSE_GRAD(na, D, out, s, a, y) out = component a of grad phi_K, the same way
 */

/* the owner's numbers shared by its samples (sc_contact_kernel.h, acc_t and contact_t) */
typedef struct {
    LAW_N Q[9];  /* Q_O, row-major 3 x 3 (D x D used) */
    LAW_N y0[3]; /* y0_O */
    LAW_N cv[3]; /* cv_O (friction) */
    LAW_N Om;    /* 2D: Om_O (friction) */
    LAW_N N[9];  /* 3D: N_O, row-major (friction) */
    LAW_N PhiR;  /* the reference sample's Phi (numbers with derivatives) */
    /* SC_CONTACT_WNUM: cv_O, Om_O, N_O of the friction's numerator velocities (jets: pose
       dependence only) */
    LAW_N cvw[3];
    LAW_N Omw;
    LAW_N Nw[9];
} LAW(owner);

/* a sample's numbers: its geometry, then its forces' intermediates */
typedef struct {
    LAW_N rO[3], yy[3], Phi, gj[3], pij, piG[3];
    LAW_N u[3], nu[3], gg, nuu, tg[3], tt, ct, F[3], cd, Fd[3];
    LAW_N uw[3], nuuw, tgw[3]; /* SC_CONTACT_WNUM: the numerator's u, nu . u and t */
} LAW(nums);

/* q = Q_O p, y = q + y0_O, and (with derivatives) Phi and, when grad, g (K is not a
   half-space) */
SC_JET_KERNEL void LAW(geometry)(const law_env *E, const int D, const int nq, const LAW_SAMPLE *s,
                                 const LAW(owner) *ow, int grad, const LAW(nums) *v)
{
    int a;
    (void)E, (void)nq, (void)grad;
    for (a = 0; a < D; a++) {
        if (D == 2) {
            L_LIN(nq, v->rO[a], s->p[0], ow->Q[3 * a], s->p[1], ow->Q[3 * a + 1]);
        } else {
            L_LIN3(nq, v->rO[a], s->p[0], ow->Q[3 * a], s->p[1], ow->Q[3 * a + 1], s->p[2],
                   ow->Q[3 * a + 2]);
        }
#if LAW_DERIVS
        L_LIN(nq, v->yy[a], E->one, v->rO[a], E->one, ow->y0[a]);
        L_SETVAL(v->yy[a], s->y[a]);
#endif
    }
#if LAW_DERIVS
    L_COMPOSE_PHI(nq, D, v->Phi, s, v->yy);
    for (a = 0; grad && a < D; a++) {
        L_COMPOSE_GRAD(nq, D, v->gj[a], s, a, v->yy);
    }
#endif
}

/* a sample's relative velocity u = cv + Om x q (2D: q the lever arm rO, promoted) or
   cv + N p (3D), from an owner's cv, Om / N (the state's, or the numerator's) */
SC_JET_KERNEL void LAW(velocity)(const law_env *E, const int D, const int ns, const LAW_SAMPLE *s,
                                 const LAW(nums) *v, LAW_N const *cv, LAW_N Om, LAW_N const *N,
                                 LAW_N const *u)
{
    int a;
    (void)ns;
    if (D == 2) {
        L_SCALE(ns, u[0], E->one, cv[0]);
        L_SCALE(ns, u[1], E->one, cv[1]);
        L_MADD(ns, u[0], -1.0, Om, v->rO[1]);
        L_MADD(ns, u[1], 1.0, Om, v->rO[0]);
    } else {
        for (a = 0; a < 3; a++) {
            L_LIN4(ns, u[a], E->one, cv[a], s->p[0], N[3 * a], s->p[1], N[3 * a + 1], s->p[2],
                   N[3 * a + 2]);
        }
    }
}

/* u's normal part nuu = nu . u and tangential part t = u - nuu nu, with nu the constant
   nv0 (mnv0 = -nv0) against a plane (flat), else the sample's nu */
SC_JET_KERNEL void LAW(split)(const law_env *E, const int D, const int ns, int flat,
                              double (*nv0)[LAW_VL], double (*mnv0)[LAW_VL], const LAW(nums) *v,
                              LAW_N const *u, LAW_N nuu, LAW_N const *tg)
{
    int a;
    (void)ns;
    if (flat) {
        L_SCALE(ns, nuu, nv0[0], u[0]);
        for (a = 1; a < D; a++) {
            L_AXPY(ns, nuu, nv0[a], u[a]);
        }
        for (a = 0; a < D; a++) {
            L_LIN(ns, tg[a], E->one, u[a], mnv0[a], nuu);
        }
        return;
    }
    L_MUL(ns, nuu, v->nu[0], u[0]);
    for (a = 1; a < D; a++) {
        L_MADD(ns, nuu, 1.0, v->nu[a], u[a]);
    }
    for (a = 0; a < D; a++) {
        L_MUL(ns, tg[a], nuu, v->nu[a]);
        L_LIN(ns, tg[a], E->one, u[a], E->mone, tg[a]);
    }
}

/* the normal force pi G (piG) and, as vel asks (SC_CONTACT_FRIC, SC_CONTACT_DAMP), the
   friction F and the damping Fd, in K's frame */
SC_JET_KERNEL void LAW(forces)(const law_env *E, const int D, const int nq, const int ns,
                               const LAW_SAMPLE *s, const LAW(owner) *ow, int flat, int vel,
                               const LAW(nums) *v)
{
    /* against a plane, nu is a constant (the values of the general branch, so the same
       bits), and t = u - (nu . u) nu is linear in u */
    double nv0[3][LAW_VL], mnv0[3][LAW_VL];
    int a;
    (void)nq, (void)ns;
#if LAW_DERIVS
    L_LIN(nq, v->pij, E->ie, ow->PhiR, E->mie, v->Phi);
#endif
    L_FUNC(nq, v->pij, v->pij, s->pi, s->pi, s->pi);
    for (a = 0; a < D; a++) {
        if (flat) {
            L_SCALE(nq, v->piG[a], s->g[a], v->pij);
        } else {
            L_MUL(nq, v->piG[a], v->pij, v->gj[a]);
        }
    }
    if (!vel) {
        return;
    }
    L_PROMOTE(nq, ns, v->pij);
    if (D == 2) {
        L_PROMOTE(nq, ns, v->rO[0]);
        L_PROMOTE(nq, ns, v->rO[1]);
    }
    LAW(velocity)(E, D, ns, s, v, ow->cv, ow->Om, ow->N, v->u);
    if (flat) {
        int l;
        for (l = 0; l < LAW_VL; l++) {
            double gl[3] = {0.0, 0.0, 0.0}, nl[3];
            for (a = 0; a < D; a++) {
                gl[a] = s->g[a][l];
            }
            unit_value(D, gl, nl);
            for (a = 0; a < D; a++) {
                nv0[a][l] = nl[a];
                mnv0[a][l] = -nl[a];
            }
        }
    } else {
        L_INVNORM(nq, D, v->gg, v->gj, SC_CONTACT_TINY);
        for (a = 0; a < D; a++) {
            L_MUL(nq, v->nu[a], v->gg, v->gj[a]);
            L_PROMOTE(nq, ns, v->nu[a]);
        }
    }
    LAW(split)(E, D, ns, flat, nv0, mnv0, v, v->u, v->nuu, v->tg);
#if LAW_WNUM
    if (vel & SC_CONTACT_WNUM) {
        /* the numerator velocities' u, nu . u and t, from the owner's cvw, Omw / Nw: the
           damping's and the friction numerator's */
        LAW(velocity)(E, D, ns, s, v, ow->cvw, ow->Omw, ow->Nw, v->uw);
        LAW(split)(E, D, ns, flat, nv0, mnv0, v, v->uw, v->nuuw, v->tgw);
    }
#endif
    if (vel & SC_CONTACT_DAMP) {
#if LAW_WNUM
        L_MUL(ns, v->cd, v->pij, (vel & SC_CONTACT_WNUM) ? v->nuuw : v->nuu);
#else
        L_MUL(ns, v->cd, v->pij, v->nuu);
#endif
        for (a = 0; a < D; a++) {
            if (!flat) {
                L_MUL(ns, v->Fd[a], v->cd, v->nu[a]);
            } else if (D == 2) {
                /* 3D: along the constant normal, its magnitude cd is what the sums take */
                L_SCALE(ns, v->Fd[a], nv0[a], v->cd);
            }
        }
    }
    if (!(vel & SC_CONTACT_FRIC)) {
        return;
    }
    L_INVNORM(ns, D, v->tt, v->tg, E->vs2);
    if (vel & SC_CONTACT_FREEZE) {
        /* the normalizer 1 / |t|_s held at the current velocities: zero its velocity
           derivatives (the lagged friction's B = dF/du at fixed normalizer) */
        L_PROMOTE(nq, ns, v->tt);
    }
    L_MUL(ns, v->ct, v->tt, v->pij);
#if LAW_WNUM
    if (vel & SC_CONTACT_WNUM) {
        for (a = 0; a < D; a++) {
            L_MUL(ns, v->F[a], v->ct, v->tgw[a]);
        }
        return;
    }
#endif
    for (a = 0; a < D; a++) {
        L_MUL(ns, v->F[a], v->ct, v->tg[a]);
    }
}
