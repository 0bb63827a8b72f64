/*
 * sc_contact.h - separation field between two posed oriented point clouds, with its
 * derivatives with respect to the poses' tangent coordinates (METHOD.md sections 3-4).
 *
 * Notation: bodies A (I samples) and B (J samples), poses q_A, q_B (2D (x, y, theta);
 * 3D (p[3], q[4] w first)), nv = 3 (2D) or 6 (3D).  Tangent coordinates, in this
 * order: (dt_A, dtheta_A, dt_B, dtheta_B), size 2 nv: translations in the world frame,
 * rotations in the body frame (q (+) d = (t + dt, R Exp(dtheta))).
 * Sample k (the first I are A's, then B's) has world position x_k and
 *   Phi_k = phi_other(R_other^T (x_k - t_other)),   G_k = R_other grad phi_other,
 * the SSDF of the other body at the sample, and its world gradient.
 */
#ifndef SC_CONTACT_H
#define SC_CONTACT_H

#include "sc_ssdf.h"

/*
 * Scratch needed by sc_separation, in doubles.
 */
SC_API ptrdiff_t sc_separation_workspace_size(const sc_packed_cloud *a, const sc_packed_cloud *b,
                                              int nthreads);

/*
 * Separation field of two posed clouds and its pose derivatives.
 *
 * Given:
 *   a, b       const sc_packed_cloud*  the two clouds (same dimension D), body frames
 *   pose_a     const double*  3 (2D) or 7 (3D) numbers; quaternions are normalized here
 *   pose_b     const double*  as pose_a
 *   eps        double         SSDF temperature, > 0 (length^2)
 *   isa        int            SC_ISA_AUTO or a supported SC_ISA_*
 *   nthreads   int            threads for the SSDF evaluations, >= 1
 *   work       double*        sc_separation_workspace_size(a, b, nthreads) doubles
 * Returned (any may be NULL to skip):
 *   phi        double*        I+J               Phi_k
 *   x_w        double*        (I+J) x D         world positions of the samples
 *   g_w        double*        (I+J) x D         world gradients G_k
 *   dphi_dq    double*        (I+J) x 2nv       d Phi_k / d (tangent coordinates)
 *   d2phi_dq2  double*        (I+J) x 2nv x 2nv second derivatives, exactly symmetric
 * Returned (function value):
 *   SC_OK; SC_EINVAL for NULL clouds/poses/work, different dimensions, eps not finite
 *   and > 0, nthreads < 1, or a zero quaternion; SC_ENONFINITE for a non-finite pose;
 *   SC_EUNSUPPORTED for an unsupported isa.  Outputs are unspecified on error.
 * Notes:
 *   1) Cost: one SSDF evaluation (to order 2 when d2phi_dq2 is requested) per sample,
 *      i.e. O(I J); memory O(I + J).
 *   2) Outputs must not alias inputs, work or each other.
 */
SC_API int sc_separation(const sc_packed_cloud *a, const double *pose_a, const sc_packed_cloud *b,
                         const double *pose_b, double eps, int isa, int nthreads, double *work,
                         double *phi, double *x_w, double *g_w, double *dphi_dq,
                         double *d2phi_dq2);

/* Internal (not exported): world positions x_w (may be NULL) and other-body coordinates y of
 * every sample, A's then B's, given both bodies' rotations and translations. */
void sc_pose_samples(const sc_packed_cloud *a, const double *Ra, const double *ta,
                     const sc_packed_cloud *b, const double *Rb, const double *tb, double *x_w,
                     double *y);

/* ---- soft-minimum contact model (METHOD.md section 5; sc_scm.c) ---- */

/* Parameters, SI units; see softcontact.ContactParams for the documented defaults. */
typedef struct {
    double eps;           /* SSDF temperature, > 0 (m^2) */
    double eps_c;         /* soft-minimum temperature, > 0 (m) */
    double stiffness;     /* k, > 0 (N/m) */
    double beta;          /* ramp smoothing b, > 0 (m) */
    double damping;       /* c, >= 0 (N s/m) */
    double friction;      /* mu, >= 0 */
    double slip_velocity; /* v_s, > 0 (m/s) */
} sc_contact_params;

/* nu_k = G_k / sqrt(|G_k|^2 + SC_CONTACT_TINY): the friction normal (METHOD.md section 5) */
#define SC_CONTACT_TINY 1e-300

/*
 * Scratch needed by sc_contact, in doubles (any order).
 */
SC_API ptrdiff_t sc_contact_workspace_size(const sc_packed_cloud *a, const sc_packed_cloud *b,
                                           int nthreads);

/*
 * Soft-minimum contact between two posed, moving bodies: wrenches, energy, and their first
 * and second derivatives with respect to both bodies' states.
 *
 * Given:
 *   a, b          const sc_packed_cloud*  the two clouds (same dimension D)
 *   pose_a, vel_a const double*  3 and 3 (2D: (x, y, theta), (vx, vy, omega)); 7 and 6 (3D:
 *                                (p, q w first), (v world, omega body)); quaternions are
 *                                normalized here
 *   pose_b, vel_b const double*  as for A
 *   prm           const sc_contact_params*
 *   order         int            0: values; 1: + jac; 2: + hess
 *   frozen        int            bit 0: A, bit 1: B is held fixed (a static body): its
 *                                state's derivatives are not computed (zero in jac and hess),
 *                                which halves the variables of the derivative jets
 *   isa, nthreads int            as sc_separation
 *   work          double*        sc_contact_workspace_size(a, b, nthreads) doubles
 * Returned (any may be NULL to skip, except as noted):
 *   wrench        double*   2 nv       generalized forces on A then B in tangent coordinates
 *                                      (2D (fx, fy, tau); 3D (f world, tau body))
 *   scalars       double*   3          energy U, soft minimum m (depth), Phi_min
 *   phi           double*   I+J        separation field Phi_k
 *   pi            double*   I+J        separation distribution pi_k
 *   forces        double*   (I+J) x D  per-sample world force on the sample's owner
 *   x_w           double*   (I+J) x D  world sample positions
 *   jac           double*   2nv x 4nv  d wrench / d s, s = (dq_A, dq_B, v_A, v_B) (order >= 1)
 *   hess          double*   2nv x 4nv x 4nv   d2 wrench / ds2, symmetric in its last two
 *                                      indices (order 2)
 *   dw_dprm       double*   3 x 2nv    d wrench / d (stiffness, damping, friction), any order
 * Returned (function value):
 *   SC_OK; SC_EINVAL for NULL clouds/poses/velocities/params/work, different dimensions, an
 *   order outside 0..2, a parameter out of range, nthreads < 1 or a zero quaternion;
 *   SC_ENONFINITE for a non-finite pose or velocity; SC_EUNSUPPORTED for an unsupported isa.
 * Notes:
 *   1) Derivatives are those of s -> wrench(q (+) ds_q, v + ds_v) at s = 0, with (+) the
 *      tangent retraction of METHOD.md section 3: translations world, rotations body.
 *   2) Cost: one SSDF evaluation per sample (order + 1 derivatives), O(I J), then O(I + J)
 *      closed-form work; memory O(I + J).  The (I+J)^2 Hessian of the soft minimum is never
 *      formed (it is diagonal plus rank one).
 *   3) Outputs must not alias inputs, work or each other.
 */
SC_API int sc_contact(const sc_packed_cloud *a, const double *pose_a, const double *vel_a,
                      const sc_packed_cloud *b, const double *pose_b, const double *vel_b,
                      const sc_contact_params *prm, int order, int frozen, int isa,
                      int nthreads, double *work, double *wrench, double *scalars, double *phi, double *pi,
                      double *forces, double *x_w, double *jac, double *hess,
                      double *dw_dprm);

/* The three compiled variants of sc_contact (internal; sc_scm.c): portable, AVX2 and
 * AVX-512F, the same bits.  sc_contact dispatches on the resolved ISA; the x86 ones return
 * SC_EUNSUPPORTED where this build has no x86 dispatch. */
typedef int sc__contact_fn(const sc_packed_cloud *a, const double *pose_a, const double *vel_a,
                           const sc_packed_cloud *b, const double *pose_b, const double *vel_b,
                           const sc_contact_params *prm, int order, int frozen, int isa,
                           int nthreads, double *work, double *wrench, double *scalars,
                           double *phi, double *pi, double *forces, double *x_w, double *jac,
                           double *hess, double *dw_dprm);
sc__contact_fn sc__contact_generic, sc__contact_avx2, sc__contact_avx512;
/* the definition of an x86 variant where this build has no x86 dispatch: it only returns
   SC_EUNSUPPORTED (sc_scm_avx2.c, sc_scm_avx512.c) */
#define SC__CONTACT_UNSUPPORTED(name)                                                         \
    int name(const sc_packed_cloud *a, const double *pose_a, const double *vel_a,            \
             const sc_packed_cloud *b, const double *pose_b, const double *vel_b,            \
             const sc_contact_params *prm, int order, int frozen, int isa, int nthreads,     \
             double *work, double *wrench, double *scalars, double *phi, double *pi,         \
             double *forces, double *x_w, double *jac, double *hess, double *dw_dprm)        \
    {                                                                                         \
        (void)a, (void)pose_a, (void)vel_a, (void)b, (void)pose_b, (void)vel_b, (void)prm,    \
            (void)order, (void)frozen, (void)isa, (void)nthreads, (void)work, (void)wrench,   \
            (void)scalars, (void)phi, (void)pi, (void)forces, (void)x_w, (void)jac,          \
            (void)hess, (void)dw_dprm;                                                        \
        return SC_EUNSUPPORTED;                                                               \
    }

#endif /* SC_CONTACT_H */
