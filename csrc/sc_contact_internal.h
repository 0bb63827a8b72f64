/*
 * sc_contact_internal.h - what the separation field and the contact model's driver and
 * per-ISA kernel share (internal).
 */
#ifndef SC_CONTACT_INTERNAL_H
#define SC_CONTACT_INTERNAL_H

#include "sc_contact.h"
#include "sc_jet.h"
#include "sc_ssdf_internal.h"

/* nu_k = G_k / sqrt(|G_k|^2 + SC_CONTACT_TINY): the friction normal, defined where G_k
 * vanishes (docs/method.md section 5) */
#define SC_CONTACT_TINY 1e-300

/* The contact model's jets (sc_jet.h): at most SC_CONTACT_MAXV = 4 nv (3D) variables, and
 * SC_CONTACT_NJETS of them in the arena plus a sink: 164 persistent jets in 3D (the soft
 * minimum, its reference sample's Phi, A, B, their accumulators with the moments, the
 * per-owner kinematics with L, N, Q and y0) + 8 D + 6 per sample = 194 at most. */
#define SC_CONTACT_MAXV 24
#define SC_CONTACT_NJETS 216
#define SC_CONTACT_JLEN SC_JET_LEN(SC_CONTACT_MAXV)

/* World positions x_w (may be NULL) and other-body coordinates y of every sample, A's then
 * B's, given both bodies' rotations and translations. */
void sc__pose_samples(const sc_packed_cloud *a, const double *Ra, const double *ta,
                      const sc_packed_cloud *b, const double *Rb, const double *tb, double *x_w,
                      double *y);

/* The contact model compiled for one ISA (sc_contact_kernel.h): sc_contact after its
 * checks, with the options resolved.  The variants give the same bits; the wider ones
 * are faster (a variant this build cannot run is NULL and never selected). */
typedef int (*sc__contact_fn)(const sc_contact_body *a, const sc_contact_body *b,
                              const sc_contact_params *prm, int order, const sc_options *opt,
                              double *work, const sc_contact_out *out);
extern const sc__contact_fn sc__contact_generic, sc__contact_avx2, sc__contact_avx512;

#endif /* SC_CONTACT_INTERNAL_H */
