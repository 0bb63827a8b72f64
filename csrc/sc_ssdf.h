/*
 * sc_ssdf.h - soft signed distance function (SSDF) of an oriented point cloud,
 * with closed-form derivatives to third order (docs/method.md section 2).
 *
 * Notation: a cloud holds n samples p_i (body frame, dimension D = 2 or 3),
 * outward unit normals n_i and positive weights a_i.  For a query x:
 *   d_i = |x - p_i|^2,  w_i = a_i exp(-d_i/eps) / sum_j a_j exp(-d_j/eps),
 *   h_i = n_i.(x - p_i),  phi(x) = sum_i w_i h_i.
 */
#ifndef SC_SSDF_H
#define SC_SSDF_H

#include "sc_cloud.h"

/*
 * Per-thread scratch needed by sc_ssdf, in doubles: 8 npad for a cloud without an index
 * (a distance and a weight per sample and query of 8 at once), about 2 n + n / 2 with one
 * (the kept leaves' distances and weights, the candidate leaves).
 */
SC_API ptrdiff_t sc_ssdf_workspace_size(const sc_packed_cloud *pc);

/*
 * Soft signed distance of query points to an oriented point cloud, with
 * optional first, second and third derivatives (docs/method.md section 2).
 *
 * Given:
 *   pc         const sc_packed_cloud*  cloud (sc_cloud_pack)
 *   eps        double         softmax temperature on squared distances (m^2), in
 *                             [SC_EPS_MIN, SC_EPS_MAX]
 *   m          ptrdiff_t      number of query points, >= 0
 *   x          const double*  m x dim query points, row-major, body frame
 *   opt        const sc_options*  ISA, dense (every sample: no pruning) and threads to
 *                             split the queries over; NULL: SC_OPTIONS_DEFAULT
 *   work       double*        nthreads * sc_ssdf_workspace_size(pc) doubles of scratch
 * Returned (any may be NULL to skip):
 *   phi        double*        m                  soft signed distance (> 0 outside)
 *   dphi_dx    double*        m x dim            gradient
 *   d2phi_dx2  double*        m x dim x dim      Hessian, full and exactly symmetric
 *   d3phi_dx3  double*        m x dim^3          third derivative, exactly symmetric
 * Returned (function value):
 *   SC_OK; SC_EINVAL if pc is malformed, eps is outside [SC_EPS_MIN, SC_EPS_MAX], m < 0,
 *   the options are invalid or a needed pointer is NULL; SC_ERANGE if the cloud's radius
 *   about its origin exceeds SC_COORD_MAX or a finite query is outside the valid range (a
 *   coordinate beyond SC_COORD_MAX, or a reach (|x - c0| + rho) rho / eps above
 *   SC_REACH_MAX: note 3); SC_EUNSUPPORTED if the ISA is not supported here.  Outputs are
 *   untouched on error.
 * Notes:
 *   1) Outputs must not alias inputs, work or each other.
 *   2) phi is bitwise identical whichever derivatives are requested, whatever
 *      nthreads is, and whether a query is evaluated alone or in a batch.
 *      Different ISAs agree to rounding (~1e-15 relative).
 *   3) A query with a NaN or infinite coordinate gets NaN in all its outputs;
 *      other rows are unaffected.  Finite queries must be in the valid range: the
 *      softmax's arguments round by about 15 u (|x - c0| + rho) rho / eps (c0, rho
 *      the cloud's bounding sphere), which past SC_REACH_MAX no longer determines the
 *      weights and past ~4e17 overflows the exponential; within it every output is
 *      finite (docs/method.md, "Valid ranges").  A single-sample cloud (a half-space)
 *      is evaluated in closed form (phi = n.(x - p), gradient n, zero curvature).
 *   4) Cost O(n) per query and pass (two passes for phi, three for any
 *      derivative) dense, O(log n + kept samples) pruned (sc_ssdf.c, "Pruning");
 *      memory O(n) per thread.  Weights below exp(-708) of the
 *      largest are flushed to zero (see sc_exp.h for why that is exact in
 *      double precision).
 */
SC_API int sc_ssdf(const sc_packed_cloud *pc, double eps, ptrdiff_t m, const double *x,
                   const sc_options *opt, double *work, double *phi, double *dphi_dx,
                   double *d2phi_dx2, double *d3phi_dx3);

#endif /* SC_SSDF_H */
