/*
 * sc_batch.h - batched steps and rollouts over one or several models of the same
 * structure, with index maps (NumPy broadcasting without copies): item b runs model
 * models[model[b]] from row x[b] of the states and row u[b] of the controls.
 */
#ifndef SC_BATCH_H
#define SC_BATCH_H

#include "sc_rollout.h"

/* Which model, state row and control row each item of a batch uses. */
typedef struct sc_batch_map {
    const sc_model *const *models; /* nmodel models of one structure (sc_models_alike) */
    ptrdiff_t nmodel;              /* >= 1 */
    const ptrdiff_t *model;        /* B entries in [0, nmodel), or NULL: model b for item b
                                      (nmodel >= B), or model 0 for all when nmodel == 1 */
    const ptrdiff_t *x;            /* B rows of the states (>= 0), or NULL: row b */
    const ptrdiff_t *u;            /* B rows of the controls (>= 0), or NULL: row b */
} sc_batch_map;

/* 1 if the two models (each passing sc_model_check) have the same structure: dimension,
 * bodies (number, kinds, actuation) and sizes (nq, nv, nu, np); else 0.  Masses,
 * inertias, clouds, contact parameters, supports, dt and integrators may differ. */
SC_API int sc_models_alike(const sc_model *a, const sc_model *b);

/* Scratch of sc_step_batch (order 0..2, params 0/1; sc_rollout_batch: order 0..1, params
 * 0), in doubles: nthreads times the largest sc_step_workspace_size(m, order, params, 1)
 * of the map's models; 0 for a bad map or argument. */
SC_API ptrdiff_t sc_batch_workspace_size(const sc_batch_map *map, int order, int params,
                                         int nthreads);

/*
 * B independent steps, one thread per item at a time.
 *
 * Given:
 *   map      const sc_batch_map*  the items' models and rows
 *   B        ptrdiff_t            items, >= 0
 *   x, u     const double*        states (rows of nx) and controls (rows of nu; may be NULL
 *                                 when nu == 0), indexed through the map
 *   order, params                 as sc_step
 *   opt      const sc_options*    options of every step, nthreads the items' threads
 *   work     double*              sc_batch_workspace_size(map, order, params, nthreads)
 * Returned:
 *   out      const sc_step_out*   B consecutive outputs of sc_step in each array given
 *   status   int*                 B: the status of each item's sc_step
 * Returned (function value): SC_OK (the items' own statuses in `status`), SC_EINVAL for bad
 *   arguments, or SC_EINTERRUPTED (opt->interrupt; the outputs then hold no result).
 * Notes:
 *   1) Each item is computed exactly as sc_step with one thread computes it, so the
 *      results do not depend on nthreads.
 */
SC_API int sc_step_batch(const sc_batch_map *map, ptrdiff_t B, const double *x, const double *u,
                         int order, int params, const sc_options *opt, double *work,
                         const sc_step_out *out, int *status);

/*
 * B independent rollouts of T steps (sc_rollout), trajectory b of model models[model[b]]
 * from row x[b] of x0 (rows of nx) with controls row u[b] of U (rows of T x nu).  The
 * outputs, statuses and failures are sc_rollout's; work is
 * sc_batch_workspace_size(map, order, 0, nthreads) doubles.  Each trajectory equals
 * sc_rollout of its model on its rows (bit for bit, for any nthreads).
 */
SC_API int sc_rollout_batch(const sc_batch_map *map, ptrdiff_t B, ptrdiff_t T, const double *x0,
                            const double *U, int order, const sc_options *opt, double *work,
                            const sc_rollout_out *out);

#endif /* SC_BATCH_H */
