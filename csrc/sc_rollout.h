/*
 * sc_rollout.h - batched rollouts: B independent trajectories of T steps of a model, in
 * parallel over trajectories.
 */
#ifndef SC_ROLLOUT_H
#define SC_ROLLOUT_H

#include "sc_step.h"

/* The outputs of sc_rollout. */
typedef struct sc_rollout_out {
    double *X;         /* B x (T+1) x nx states (required) */
    double *A;         /* B x T x 2nv x 2nv per-step dx_dx (order 1; may be NULL) */
    double *Bu;        /* B x T x 2nv x nu per-step dx_du (order 1; may be NULL) */
    int *status;       /* B: SC_OK, or the status of the step that failed (required) */
    ptrdiff_t *failed; /* B: that step's index t (0 <= t < T), -1 for a trajectory that
                          completed (may be NULL) */
} sc_rollout_out;

/*
 * B independent rollouts of T steps, one thread per trajectory at a time.
 *
 * Given:
 *   m        const sc_model*   a model that passed sc_model_check
 *   B, T     ptrdiff_t         trajectories and steps, >= 0
 *   x0       const double*     B x nx initial states
 *   U        const double*     B x T x nu controls (may be NULL when nu == 0)
 *   order    int               0 or 1
 *   opt      const sc_options* options of every step, nthreads the trajectories' threads
 *   work     double*           nthreads x sc_step_workspace_size(m, order, 0, 1) doubles
 * Returned:
 *   out      const sc_rollout_out*  a trajectory stops at its first failed step t:
 *                                   SC_EDIVERGED (sc_step) keeps that step's outputs
 *                                   (state t + 1, Jacobians t) and NaN after them; any
 *                                   other status (a non-finite x0 or control) NaN from
 *                                   state t + 1 and Jacobians t on
 * Returned (function value): SC_OK, SC_EINVAL for bad arguments, or SC_EINTERRUPTED
 *   (opt->interrupt; the outputs then hold no result).
 * Notes:
 *   1) Each trajectory is computed exactly as the same sequence of sc_step calls would
 *      (one thread each), so the results do not depend on nthreads.
 */
SC_API int sc_rollout(const sc_model *m, ptrdiff_t B, ptrdiff_t T, const double *x0,
                      const double *U, int order, const sc_options *opt, double *work,
                      const sc_rollout_out *out);

/*
 * Reverse-mode derivative (vector-Jacobian product) of B rollouts: for each trajectory
 * with states X (from sc_rollout) and controls U, and a cotangent GX on its states, the
 * gradient of L = sum_t <GX_t, X_t> with respect to its start state x0 = X_0 and its
 * controls U, by the adjoint recursion
 *     lam_T = P_T' GX_T,   lam_t = P_t' GX_t + A_t' lam_{t+1},   gU_t = B_t' lam_{t+1},
 *     gx0 = E_0' lam_0,
 * with A_t, B_t the step's tangent Jacobians at (X_t, U_t), recomputed during the sweep
 * (one order-1 step per stage; nothing per stage is stored), P_t = d X_t / d (tangent)
 * (the quaternion of a 3D body: q (x) exp(dtheta / 2), so P = Q(q)[:, 1:] / 2) and E_0 =
 * d (tangent) / d x0 (2 Q(q)[:, 1:]' for a unit q): every derivative is in the states'
 * own (ambient) coordinates; 2D states are their tangent coordinates.  A 3D x0 is read
 * as a point on the unit sphere: gx0 has no component along its quaternion (GX_0 enters
 * as (I - q q') GX_0), the gradient of the function of q / |q|.
 *
 * Given:
 *   m        const sc_model*   a model that passed sc_model_check
 *   B, T     ptrdiff_t         trajectories and steps, >= 0
 *   X        const double*     B x (T+1) x nx states (unit quaternions)
 *   U        const double*     B x T x nu controls (may be NULL when nu == 0)
 *   GX       const double*     B x (T+1) x nx cotangents
 *   opt      const sc_options* options of every step, nthreads the trajectories' threads
 *   work     double*           nthreads x sc_rollout_vjp_workspace_size(m) doubles
 * Returned:
 *   gx0      double*           B x nx
 *   gU       double*           B x T x nu (may be NULL when nu == 0)
 *   status   int*              B: SC_OK, or the status of a step that failed or of the
 *                              last state's check (sc_step's: finite, unit quaternions,
 *                              valid range); that trajectory's gx0 and gU are then NaN
 * Returned (function value): SC_OK, SC_EINVAL for bad arguments, or SC_EINTERRUPTED.
 * Notes:
 *   1) Results do not depend on nthreads (one trajectory per thread at a time).
 */
SC_API ptrdiff_t sc_rollout_vjp_workspace_size(const sc_model *m);
SC_API int sc_rollout_vjp(const sc_model *m, ptrdiff_t B, ptrdiff_t T, const double *X,
                          const double *U, const double *GX, const sc_options *opt, double *work,
                          double *gx0, double *gU, int *status);

#endif /* SC_ROLLOUT_H */
