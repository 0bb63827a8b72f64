/*
 * sc_ilqr.h - the inner loops of iLQR and DDP with box-constrained controls
 * (softcontact.optimize.ilqr): the backward Riccati pass over given expansions, and the
 * closed-loop forward rollout of a model under the pass's affine policy.
 *
 * Tangent coordinates of the states (n = 2 nv) as sc_model.h; a stage's variables are
 * z = (dx, du), of size n + nu.
 */
#ifndef SC_ILQR_H
#define SC_ILQR_H

#include "sc_model.h"

/* The expansions of a trajectory of T steps, the inputs of sc_ilqr_backward. */
typedef struct sc_ilqr_expansion {
    ptrdiff_t T;     /* steps, >= 0 */
    int n, nu;       /* tangent size (>= 1) and controls (>= 0) */
    const double *A; /* T x n x n: dx_{t+1} / dx_t */
    const double *B; /* T x n x nu: dx_{t+1} / du_t */
    const double *g; /* (T + 1) x (n + nu): each stage cost's gradient in z (the terminal
                        stage's control part is not read) */
    const double *H; /* (T + 1) x (n + nu) x (n + nu): each stage cost's Hessian in z,
                        symmetric (the terminal stage's control rows and columns are not
                        read) */
    /* DDP: the step's second derivatives, each NULL for Gauss-Newton (all or none):
       fxx[t][i][a][b] = d2 x_i / dx_a dx_b, fxu (T x n x n x nu), fuu (T x n x nu x nu) */
    const double *fxx, *fxu, *fuu;
    const double *U;       /* T x nu: the trajectory's controls */
    const double *lo, *hi; /* T x nu: control bounds (may be -inf / inf), lo <= hi */
} sc_ilqr_expansion;

/* The outputs of sc_ilqr_backward. */
typedef struct sc_ilqr_policy {
    double *k;  /* T x nu: feedforward control steps (within lo - U, hi - U) */
    double *K;  /* T x nu x n: feedback gains (rows of the controls held at a bound: 0) */
    double dv1; /* predicted change of the cost for a step size a: a dv1 + a^2 dv2 */
    double dv2;
    int definite; /* 1: every stage's regularized Quu (on its free controls) is positive
                     definite and the outputs hold the policy; 0: some stage's was not
                     (raise mu), and the outputs hold no result */
} sc_ilqr_policy;

/* Scratch of sc_ilqr_backward, in doubles. */
SC_API ptrdiff_t sc_ilqr_backward_workspace_size(int n, int nu);

/*
 * The backward pass of iLQR (Gauss-Newton: e->fxx == NULL) or DDP from the stage
 * expansions, with regularization mu on Quu:
 *
 *   Q = l_t + V_{t+1} o f_t to second order:  Qx = lx + A'Vx,  Qu = lu + B'Vx,
 *   Qxx = lxx + A'Vxx A (+ Vx . fxx),  Qux = lux + B'Vxx A (+ Vx . fxu),
 *   Quu = luu + B'Vxx B (+ Vx . fuu);
 *   DDP: the eigenvalues of Quu below 1e-6 of its largest magnitude replaced by their
 *   magnitudes (at least that floor): the saddle-free Newton step;
 *   k_t = argmin of Qu.du + du.(Quu + mu I).du / 2 within lo_t - U_t <= du <= hi_t - U_t
 *   (projected Newton from du = 0), K_t = -(Quu + mu I)_ff^-1 Qux_f on the free controls
 *   f (those the gradient does not hold at a bound), 0 on the others;
 *   Vx = Qx + K'Quu k + K'Qu + Qux'k,  Vxx = Qxx + K'Quu K + K'Qux + Qux'K (symmetrized;
 *   DDP: its negative eigenvalues dropped), from V_T = the terminal stage's (lx, lxx);
 *   dv1 = sum k.Qu, dv2 = sum k.Quu.k / 2.
 *
 * Given:
 *   e     const sc_ilqr_expansion*
 *   mu    double    >= 0, finite
 *   work  double*   sc_ilqr_backward_workspace_size(n, nu) doubles
 * Returned:
 *   out   sc_ilqr_policy*
 * Returned (function value): SC_OK (out->definite says whether a policy was found),
 *   SC_EINVAL for bad sizes or NULL pointers, SC_ENONFINITE for a non-finite mu.
 * Notes:
 *   1) Computed in this order and precision for any inputs; no allocation, no threads.
 */
SC_API int sc_ilqr_backward(const sc_ilqr_expansion *e, double mu, double *work,
                            sc_ilqr_policy *out);

/*
 * x1 (-) x0: the tangent vector of sc_model.h from state x0 to x1 (2D pose differences,
 * 3D (p1 - p0, log(q0^-1 q1)) with the rotation vector in x0's body frame and its angle
 * in [0, pi]; velocity differences).  out: 2 nv doubles.
 */
SC_API void sc_state_difference(const sc_model *m, const sc_model_sizes *s, const double *x1,
                                const double *x0, double *out);

/*
 * The closed-loop rollout of the forward pass: from Xn_0 = X_0,
 *   Un_t = clip(U_t + alpha k_t + K_t (Xn_t (-) X_t), lo_t, hi_t),  Xn_{t+1} = step(Xn_t, Un_t)
 * for t = 0 .. T - 1, on the calling thread.
 *
 * Given:
 *   m      const sc_model*   a model that passed sc_model_check (sizes s)
 *   T      ptrdiff_t         steps, >= 0
 *   X      const double*     (T + 1) x nx reference states
 *   U      const double*     T x nu reference controls
 *   k, K   const double*     T x nu, T x nu x 2nv (sc_ilqr_backward)
 *   alpha  double            step size, finite
 *   lo, hi const double*     T x nu bounds
 *   opt    const sc_options* every step's options (NULL: SC_OPTIONS_DEFAULT)
 *   work   double*           sc_step_workspace_size(m, 0, 0, opt's threads) + 2 nv doubles
 * Returned:
 *   Xn, Un double*           (T + 1) x nx and T x nu
 *   failed ptrdiff_t*        -1, or the step t that failed (its status returned; Xn after
 *                            state t and Un after control t hold NaN)
 * Returned (function value): SC_OK, SC_EINVAL, SC_ENONFINITE (a non-finite control), or
 *   the failed step's status (sc_step: SC_ERANGE for a control outside its valid range,
 *   SC_EDIVERGED, ...).
 */
SC_API int sc_rollout_policy(const sc_model *m, ptrdiff_t T, const double *X, const double *U,
                             const double *k, const double *K, double alpha, const double *lo,
                             const double *hi, const sc_options *opt, double *work, double *Xn,
                             double *Un, ptrdiff_t *failed);

#endif /* SC_ILQR_H */
