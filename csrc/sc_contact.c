/*
 * sc_contact.c - the contact model's entry point: argument checks, the parameters' one
 * check, and the choice of the compiled variant (sc_contact_kernel.h).
 */
#include <math.h>

#include "sc_contact_internal.h"
#include "sc_jet.h"
#include "sc_rotation.h"

int sc_contact_params_check(const sc_contact_params *prm)
{
    if (prm == NULL || !(prm->eps > 0.0) || !isfinite(prm->eps) || !(prm->eps_c > 0.0) ||
        !isfinite(prm->eps_c) || !(prm->stiffness > 0.0) || !isfinite(prm->stiffness) ||
        !(prm->beta > 0.0) || !isfinite(prm->beta) || !(prm->damping >= 0.0) ||
        !isfinite(prm->damping) || !(prm->friction >= 0.0) || !isfinite(prm->friction) ||
        !(prm->slip_velocity > 0.0) || !isfinite(prm->slip_velocity)) {
        return SC_EINVAL;
    }
    return SC_OK;
}

ptrdiff_t sc_contact_workspace_size(const sc_packed_cloud *a, const sc_packed_cloud *b,
                                    int nthreads)
{
    ptrdiff_t D, n, npad;
    if (a == NULL || b == NULL || nthreads < 1) {
        return 0;
    }
    D = a->dim;
    n = a->n + b->n;
    npad = sc__ssdf_workspace_pair(a, b);
    /* y, g, h, t3, phi (if not returned), pi (if not returned), dPhi (2 nv), pi f (D);
       pruning: the active marks and list, and compact y, g, h, t3 */
    return n * (D + D + D * D + D * D * D + 2 + 12 + D) +
           n * (2 + D + D + D * D + D * D * D) +
           (ptrdiff_t)(SC_CONTACT_NJETS + 1) * SC_CONTACT_JLEN + (ptrdiff_t)nthreads * npad;
}

/* SC_OK for a body with a cloud of dimension D, a valid pose and a finite velocity */
static int body_check(const sc_contact_body *x, int D)
{
    int j, st;
    if (x == NULL || x->cloud == NULL || x->pose == NULL || x->vel == NULL ||
        x->cloud->dim != D) {
        return SC_EINVAL;
    }
    if ((st = sc__pose_check(D, x->pose)) != SC_OK) {
        return st;
    }
    for (j = 0; j < SC_NV(D); j++) {
        if (!isfinite(x->vel[j])) {
            return SC_ENONFINITE;
        }
    }
    return SC_OK;
}

int sc_contact(const sc_contact_body *a, const sc_contact_body *b,
               const sc_contact_params *prm, int order, const sc_options *opt, double *work,
               const sc_contact_out *out)
{
    sc_options o;
    int st, D;
    if (a == NULL || a->cloud == NULL || work == NULL || out == NULL || order < 0 ||
        order > 2 || (a->cloud->dim != 2 && a->cloud->dim != 3) ||
        sc_contact_params_check(prm) != SC_OK) {
        return SC_EINVAL;
    }
    D = a->cloud->dim;
    if ((st = body_check(a, D)) != SC_OK || (st = body_check(b, D)) != SC_OK ||
        (st = sc_options_resolve(opt, &o)) != SC_OK) {
        return st;
    }
    /* the AVX2 variant for AVX2 and AVX-512 unless the AVX-512 one is asked for */
    switch (o.isa) {
    case SC_ISA_AVX512:
        return sc__contact_avx512(a, b, prm, order, &o, work, out);
    case SC_ISA_AVX2:
        return sc__contact_avx2(a, b, prm, order, &o, work, out);
    default:
        return sc__contact_generic(a, b, prm, order, &o, work, out);
    }
}
