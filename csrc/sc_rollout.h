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

#endif /* SC_ROLLOUT_H */
