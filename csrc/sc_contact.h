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

#endif /* SC_CONTACT_H */
