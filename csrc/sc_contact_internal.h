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
 * vanishes, and its jet finite there: the second derivative of 1 / sqrt(s) is 0.75
 * s^(-5/2), which overflows below s ~ 1e-123 (docs/method.md section 5) */
#define SC_CONTACT_TINY 1e-30

/* The contact model's jets (sc_jet.h): at most SC_CONTACT_MAXV = 4 nv (3D) variables, and
 * SC_CONTACT_NJETS of them in the arena plus a sink: 164 persistent jets in 3D (the soft
 * minimum, its reference sample's Phi, A, B, their accumulators with the moments, the
 * per-owner kinematics with L, N, Q and y0) + 8 D + 6 per sample = 194 at most (up to
 * 229 with the kinematics' temporaries), and 30 + 7 more with SC_CONTACT_WNUM (the
 * numerator's kinematics and per-sample velocities). */
#define SC_CONTACT_MAXV 24
#define SC_CONTACT_NJETS 288
#define SC_CONTACT_JLEN SC_JET_LEN(SC_CONTACT_MAXV)

/* World positions x_w (may be NULL) and other-body coordinates y of every sample, A's then
 * B's, given both bodies' rotations and translations. */
void sc__pose_samples(const sc_packed_cloud *a, const double *Ra, const double *ta,
                      const sc_packed_cloud *b, const double *Rb, const double *tb, double *x_w,
                      double *y);

/* A pair of bodies in contact while the model is evaluated: what the driver (sc_contact.c:
 * frames, the SSDF at every sample, the soft minimum, the samples kept) hands to the
 * jets of the compiled variant (sc_contact_kernel.h). */
/* the velocity-dependent terms of a pass (sc__contact.vel) */
#define SC_CONTACT_FRIC 1 /* friction */
#define SC_CONTACT_DAMP 2 /* damping */
/* with FRIC: the friction's normalizer without velocity derivatives (sc_contact_law.h) */
#define SC_CONTACT_FREEZE 4
/* the damping's normal velocity and the friction's numerator from the velocities wv */
#define SC_CONTACT_WNUM 8

typedef struct sc__contact {
    int D, nv;
    int order, vel; /* SC_CONTACT_FRIC | SC_CONTACT_DAMP: which velocity
                       terms the pass computes (none: 0) */
    const sc_packed_cloud *cl[2];
    ptrdiff_t I, n;                   /* A's samples; all samples (A's then B's) */
    ptrdiff_t excl;                   /* a half-space's own sample, left out of the soft
                                         minimum and the forces (pi 0), or -1 */
    double R[2][9], t[2][3], v[2][6]; /* each body's frame and velocity */
    double wv[2][6];                  /* SC_CONTACT_WNUM: the friction numerator's
                                         velocities */
    double eps_c, vs2;                /* soft-minimum temperature; v_s^2 */
    double m, phimin;                 /* the soft minimum (depth) and the smallest Phi */
    /* per sample: other-body coordinates y (D), the SSDF there (phi, g (D), h (D x D), t3
       (D^3), the derivatives up to order + 1, for the kept samples), pi; kept samples
       (mark); the order-2 pass's dPhi (2 nv) and the friction forces' values (D) */
    const double *y, *g, *h, *t3, *phi, *pi;
    const unsigned char *mark;
    double *dphi, *pf, *pd; /* ... and the damping forces' values (D) */
    /* the jets (sc_jet.h): their context in the variables of the moving bodies' poses and
       velocities (nq pose-only, ns in all), each body's first pose / velocity variable
       (SC_JET_NOVAR: frozen), the arena */
    sc_jet_ctx c;
    int nq, ns, pv[2], vv[2];
    sc_jet_arena jets;
    /* per owner O, shared by its samples p: the world lever arm r_O = L[O] p, L_O = R_O
       Exp(dth_O) (full jets), and in the other body K's frame the lever arm q = Q[O] p =
       M_K^T r_O (M_K = R_K Exp(dth_K)) and the position y = q + y0[O] (pose-only jets;
       sc_contact_law.h) */
    double *L[2][3][3], *Q[2][3][3], *y0[2][3];
} sc__contact;

/* The contact model's jets compiled for one ISA (sc_contact_kernel.h): the wrench and its
 * derivatives (and the forces) of a pair whose SSDF, soft minimum and kept samples the
 * driver has evaluated.  The variants give the same bits; the wider ones are faster (a
 * variant this build cannot run is NULL and never selected). */
typedef int (*sc__contact_fn)(sc__contact *S, const sc_contact_params *prm,
                              const sc_contact_out *out);
extern const sc__contact_fn sc__contact_generic, sc__contact_avx2, sc__contact_avx512;

/* sc_contact with the jets of the variant of variant_isa (a supported SC_ISA_*, else
 * SC_EINVAL) whatever opt's ISA, which the SSDF evaluations use: the variants compared on
 * the same SSDF (the C harness) */
int sc__contact_with(int variant_isa, const sc_contact_body *a, const sc_contact_body *b,
                     const sc_contact_params *prm, int order, const sc_options *opt, double *work,
                     const sc_contact_out *out);

/* The friction modes of the implicit step's lagged friction (sc_step.c) */
enum {
    SC_FRICTION_FULL = 0,           /* the model's wrench (sc_contact) */
    SC_FRICTION_FROZEN = 1,         /* the same values; the friction's normalizer 1 / |t|_s without
                                       velocity derivatives */
    SC_FRICTION_NUMERATOR = 2,      /* the wrench at the velocities wa, wb (constants) with the
                                       friction's normalizer at the bodies' own: the damping
                                       -c s pi_k (nu_k . u_k(w)) nu_k and the friction
                                       -mu lambda pi_k t_k(w) / |t_k|_s (affine in w); wrench,
                                       Jacobian and parameter derivatives only, order 1 or 2 */
    SC_FRICTION_FROZEN_VELOCITY = 3 /* SC_FRICTION_FROZEN's values and velocity derivatives,
                                       the same bits, with the poses' derivatives zero (not
                                       computed: jets in the velocities only); order 0 or 1,
                                       no parameter derivatives */
};

/* sc__contact_with in a friction mode (wa, wb: the numerator's velocities, nv each, for
   SC_FRICTION_NUMERATOR, else NULL) */
int sc__contact_mode(int variant_isa, const sc_contact_body *a, const sc_contact_body *b,
                     const sc_contact_params *prm, int order, const sc_options *opt, double *work,
                     const sc_contact_out *out, int mode, const double *wa, const double *wb);

#endif /* SC_CONTACT_INTERNAL_H */
