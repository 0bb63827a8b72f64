/*
 * sc_step.h - one time step of a model (sc_model.h) and its closed-form first and second
 * derivatives (docs/method.md section 7), by the model's integrator.
 *
 * Derivatives are those of the map (dx, du) -> x+(x (+) dx, u + du) (+)^-1 x+(x, u), in
 * the tangent coordinates of x and x+ (sc_model.h), and, for parameters, of x+ with
 * respect to the model's parameters p (sc_model.h, "Parameters").
 */
#ifndef SC_STEP_H
#define SC_STEP_H

#include "sc_model.h"

/* The outputs of sc_step (NULL to skip; those above the requested order are not
 * written).  n = 2 nv tangent coordinates, nu controls, np parameters. */
typedef struct sc_step_out {
    double *x_next;   /* nq + nv */
    double *dx_dx;    /* n x n */
    double *dx_du;    /* n x nu */
    double *d2x_dx2;  /* n x n x n */
    double *d2x_dxdu; /* n x n x nu */
    double *d2x_du2;  /* n x nu x nu */
    double *dx_dp;    /* n x np (params) */
} sc_step_out;

/* Scratch of sc_step (order 0..2, params 0/1) and of sc_inverse_dynamics and sc_energy
 * (order 0, params 0), in doubles */
SC_API ptrdiff_t sc_step_workspace_size(const sc_model *m, int order, int params, int nthreads);

/*
 * One step and its derivatives.
 *
 * Given:
 *   m        const sc_model*     a model that passed sc_model_check
 *   x        const double*       nq + nv state (quaternions of unit norm within
 *                                SC_UNIT_TOL, normalized here)
 *   u        const double*       nu controls (may be NULL when nu == 0)
 *   order    int                 0, 1 or 2
 *   params   int                 1: also dx_dp (first order)
 *   opt      const sc_options*   the SSDF evaluations' options; NULL: SC_OPTIONS_DEFAULT
 *                                (results do not depend on the threads)
 *   work     double*             sc_step_workspace_size(m, order, params, nthreads) doubles
 * Returned:
 *   out      const sc_step_out*  where to write
 * Returned (function value): SC_OK; SC_EINVAL; SC_ENONFINITE for a non-finite x or u (or
 *   an implicit step whose matrix M - h dQ/dv is singular);
 *   SC_ENOTUNIT for a quaternion not of unit norm; SC_ERANGE for x or u outside the valid
 *   range (sc_model.h); SC_EDIVERGED when the new state is not finite, leaves the valid
 *   range or passes a body's speed limits (its outputs are written); any status of
 *   sc_contact.
 */
SC_API int sc_step(const sc_model *m, const double *x, const double *u, int order, int params,
                   const sc_options *opt, double *work, const sc_step_out *out);

#endif /* SC_STEP_H */
