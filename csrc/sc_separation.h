/*
 * sc_separation.h - separation field between two posed oriented point clouds, with its
 * derivatives with respect to the poses' tangent coordinates (docs/method.md sections 3-4).
 *
 * Notation: bodies A (I samples) and B (J samples), poses q_A, q_B (2D (x, y, theta);
 * 3D (p[3], q[4] w first)), nv = 3 (2D) or 6 (3D).  Tangent coordinates, in this
 * order: (dt_A, dtheta_A, dt_B, dtheta_B), size 2 nv: translations in the world frame,
 * rotations in the body frame (q (+) d = (t + dt, R Exp(dtheta))).
 * Sample k (the first I are A's, then B's) has world position x_k and
 *   Phi_k = phi_other(R_other^T (x_k - t_other)),   G_k = R_other grad phi_other,
 * the SSDF of the other body at the sample, and its world gradient.
 */
#ifndef SC_SEPARATION_H
#define SC_SEPARATION_H

#include "sc_ssdf.h"

/* The outputs of sc_separation (any member may be NULL to skip). */
typedef struct sc_separation_out {
    double *phi;       /* I+J               Phi_k */
    double *x_w;       /* (I+J) x D         world positions of the samples */
    double *g_w;       /* (I+J) x D         world gradients G_k */
    double *dphi_dq;   /* (I+J) x 2nv       d Phi_k / d (tangent coordinates) */
    double *d2phi_dq2; /* (I+J) x 2nv x 2nv second derivatives, exactly symmetric */
} sc_separation_out;

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
 *   pose_a     const double*  3 (2D) or 7 (3D) numbers; a quaternion of unit norm within
 *                             SC_UNIT_TOL, normalized here
 *   pose_b     const double*  as pose_a
 *   eps        double         SSDF temperature (m^2), in [SC_EPS_MIN, SC_EPS_MAX]
 *   opt        const sc_options*  the SSDF evaluations' options (sc_ssdf); NULL: defaults
 *   work       double*        sc_separation_workspace_size(a, b, nthreads) doubles
 * Returned:
 *   out        const sc_separation_out*  where to write (members NULL to skip)
 * Returned (function value):
 *   SC_OK; SC_EINVAL for NULL clouds/poses/work/out, different dimensions, eps outside
 *   its range or invalid options; SC_ENONFINITE for a non-finite pose; SC_ENOTUNIT for a
 *   quaternion not of unit norm; SC_ERANGE for a translation beyond SC_COORD_MAX, a cloud
 *   whose radius about its origin exceeds it, or clouds beyond each other's reach (note
 *   3); SC_EUNSUPPORTED for an unsupported isa.  Outputs are unspecified on error.
 * Notes:
 *   1) Cost: one SSDF evaluation (to order 2 when d2phi_dq2 is requested) per sample,
 *      i.e. O(I J); memory O(I + J).
 *   2) Outputs must not alias inputs, work or each other.
 *   3) The valid range of the poses (docs/method.md, "Valid ranges"): with d = |t_a - t_b|
 *      and r = |c0| + rho each cloud's radius about its origin (c0, rho its bounding
 *      sphere), (d + r_a + r_b) rho <= SC_REACH_MAX eps for both clouds' rho, which bounds
 *      the reach of every SSDF query (sc_ssdf, note 3).
 */
SC_API int sc_separation(const sc_packed_cloud *a, const double *pose_a, const sc_packed_cloud *b,
                         const double *pose_b, double eps, const sc_options *opt, double *work,
                         const sc_separation_out *out);

#endif /* SC_SEPARATION_H */
