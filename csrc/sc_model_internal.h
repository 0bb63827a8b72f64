/*
 * sc_model_internal.h - a model's layout (which state, control and parameter entries
 * belong to which body) and the step's scratch, shared by sc_model.c, sc_step.c,
 * sc_rollout.c and sc_inverse.c (internal).
 */
#ifndef SC_MODEL_INTERNAL_H
#define SC_MODEL_INTERNAL_H

#include "sc_contact_internal.h"
#include "sc_inverse.h"
#include "sc_rollout.h"
#include "sc_rotation.h"
#include "sc_step.h"

/* position of a body among the moving bodies (its slot in the state), or -1 (static) */
int sc__move_index(const sc_model *m, int body);

/* first control of a body, or -1 */
int sc__ctrl_offset(const sc_model *m, int body);

/* first parameter (the mass) of a dynamic body, or -1 */
int sc__body_param(const sc_model *m, int body);

/* the bodies' parameters in all (the pairs' come next) */
int sc__n_body_params(const sc_model *m);

/* the support-friction parameter of a body, or -1 */
int sc__support_param(const sc_model *m, int body);

/* pose (normalized quaternion) and velocity of a body at state x (a static body: its
 * fixed pose, zero velocity) */
void sc__body_state(const sc_model *m, const sc_model_sizes *s, const double *x, int body,
                    double *pose, double *vel);

/* SC_OK for a finite state (3D: unit quaternions within SC_UNIT_TOL) in the valid range
 * (sc_model.h) and, when u_len > 0, finite controls u in theirs; SC_EINVAL, SC_ENONFINITE,
 * SC_ENOTUNIT or SC_ERANGE otherwise */
int sc__state_check(const sc_model *m, const sc_model_sizes *s, const double *x, const double *u,
                    int u_len);

/* SC_EDIVERGED for a state with a non-finite entry, out of the valid range (sc_model.h), or
 * with a dynamic body past its max_speed or max_spin (sc_body), else SC_OK: the divergence
 * test of sc_step's new state */
int sc__state_diverged(const sc_model *m, const sc_model_sizes *s, const double *x);

/* sc_contact of pair `pair` at state x (its bodies' poses and velocities), a static body
 * frozen when `freeze` (no derivatives with respect to it; the contact model's pruning
 * cut then counts no lever arm for it), in the friction mode `mode` (SC_FRICTION_*,
 * sc_contact_internal.h; wv: the numerator's velocities, nv per body of the model, for
 * SC_FRICTION_NUMERATOR, else NULL) */
int sc__pair_contact(const sc_model *m, const sc_model_sizes *s, const double *x, int pair,
                     int order, int freeze, const sc_options *opt, double *cwork,
                     const sc_contact_out *out, int mode, const double *wv);

/* The step's scratch (sc_step_workspace_size): a state and a control of scratch, the
 * contact model's scratch, one pair's wrench and derivatives, the jet arena. */
typedef struct sc__step_ws {
    double *xtmp, *utmp, *cwork, *pairbuf, *arena;
    double *lin;  /* the implicit step's matrix (nd x nd, LU), right sides ((1 + n (+ np)) x
                     nd) and, at order 2, one more right side (nd) and a row of n */
    int *piv;     /* its row pivots (nd) */
    double *amat; /* room for the step's matrix (sc__step_with_matrix; nd x nd), at every
                     order so that the scratch grows with the order */
} sc__step_ws;

/* the velocity coordinates of the dynamic bodies (nv per dynamic body) */
int sc__n_dynamic_velocities(const sc_model *m);

/* sc_step (its new state tested by sc__state_diverged), and with amat non-NULL also the
 * matrix the step solves with, A = M - h D_dd (nd x nd, row-major, the dynamic bodies'
 * velocity coordinates in body order; M for the semi-implicit Euler step), order 0 only
 * then and the new state not tested (the inverse dynamics' inner step) */
int sc__step_with_matrix(const sc_model *m, const double *x, const double *u, int order, int params,
                         const sc_options *opt, double *work, const sc_step_out *out, double *amat);

void sc__step_ws_layout(const sc_model *m, const sc_model_sizes *s, int order, int params,
                        int nthreads, double *work, sc__step_ws *w);

/* doubles of scratch before a step's own (sc_inverse_dynamics runs a step past its
 * state and control, xtmp and utmp) */
ptrdiff_t sc__step_ws_head(const sc_model_sizes *s);

#endif /* SC_MODEL_INTERNAL_H */
