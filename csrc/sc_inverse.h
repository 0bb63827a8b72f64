/*
 * sc_inverse.h - inverse dynamics of one step of a model.
 */
#ifndef SC_INVERSE_H
#define SC_INVERSE_H

#include "sc_step.h"

/*
 * The controls u (nu) and the generalized forces f (nv; zero rows for kinematic bodies)
 * that take x to a state with the velocities of x_next:
 *   f = M (v+ - v0+) / h  with v0+ the uncontrolled step's velocities;
 *   u = f for actuated dynamic bodies, u = v+ for kinematic ones.
 * For unactuated bodies f is the force the step would need (0 when x_next is reachable).
 *   work: sc_step_workspace_size(m, 0, 0, nthreads) doubles; u, f may be NULL.
 * Returned (function value): as sc_step.
 */
SC_API int sc_inverse_dynamics(const sc_model *m, const double *x, const double *x_next,
                               const sc_options *opt, double *work, double *u, double *f);

#endif /* SC_INVERSE_H */
