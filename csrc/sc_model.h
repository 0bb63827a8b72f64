/*
 * sc_model.h - rigid-body scenes: forward and inverse dynamics, one semi-implicit Euler step
 * with closed-form first and second derivatives, batched rollouts (METHOD.md sections 3, 6-7).
 *
 * State x: the positions of the moving (dynamic and kinematic) bodies in body order, then
 * their velocities: 2D (x, y, theta) / (vx, vy, omega); 3D (p, quaternion w first) /
 * (v world, omega body).  Static bodies are not in the state.  Tangent coordinates of x
 * (size 2 nv): (dq_1 .. dq_n, dv_1 .. dv_n), dq per body as the retraction of METHOD.md
 * section 3.  Controls u, in body order: a generalized force (nv) for each actuated dynamic
 * body (2D (fx, fy, tau); 3D (f world, tau body)), the next velocity (nv) for each
 * kinematic body.  Parameters p (for system identification), in order: each dynamic body's
 * mass and inertia (2D: I; 3D: Ixx, Iyy, Izz, Ixy, Ixz, Iyz), each contact pair's
 * (stiffness, damping, friction), each supported body's support friction.
 *
 * Step (h = dt):  v+ = v + h M^-1 (Q(q, v, u) - gyro),  q+ = q (+) h v+  (dynamic);
 *                 v+ = u,  q+ = q (+) h u  (kinematic).
 * Q: gravity m g, actuation, the contact wrenches of every pair (sc_contact), and the
 * planar support friction of METHOD.md section 6.  Derivatives are those of the map
 * (dx, du) -> x+(x (+) dx, u + du) (+)^-1 x+(x, u), in the tangent coordinates of x and x+.
 */
#ifndef SC_MODEL_H
#define SC_MODEL_H

#include "sc_contact.h"

enum { SC_BODY_DYNAMIC = 0, SC_BODY_KINEMATIC = 1, SC_BODY_STATIC = 2 };

/* Bodies per model.  The step's jets are dense in (dx, du): order-2 memory and time grow
 * like (2 nv + nu)^2 per moving body, which suits scenes of a few moving bodies. */
#define SC_MODEL_MAX_BODIES 64

typedef struct {
    int kind;              /* SC_BODY_* */
    int actuated;          /* dynamic bodies: controlled by a generalized force */
    double mass;           /* dynamic bodies, > 0 (kg) */
    double inertia[9];     /* dynamic bodies: 2D inertia[0] > 0; 3D symmetric positive
                              definite, body frame (kg m^2) */
    double pose[7];        /* static bodies: the fixed pose (3 or 7 numbers) */
    sc_packed_cloud cloud; /* samples in the body frame (origin at the centre of mass);
                              cloud.n == 0 for a body without geometry */
    /* planar support friction (2D dynamic bodies; nsupport == 0 for none) */
    ptrdiff_t nsupport;
    const double *support_points;  /* nsupport x 2, body frame */
    const double *support_weights; /* nsupport, > 0, summing to 1 */
    double support_friction;       /* mu_s >= 0 */
    double support_gravity;        /* g > 0 normal to the plane (m/s^2) */
    double support_slip;           /* v_s > 0 (m/s) */
} sc_body;

typedef struct {
    int a, b; /* body indices, a != b, not both static */
    sc_contact_params prm;
} sc_pair;

typedef struct {
    int dim; /* 2 or 3 */
    int nbody, npair;
    const sc_body *bodies;
    const sc_pair *pairs;
    double gravity[3]; /* world gravity (2D: the first two, in the plane) */
    double dt;         /* > 0 (s) */
} sc_model;

typedef struct {
    int nmove;  /* moving (non-static) bodies */
    int nq, nv; /* state: nx = nq + nv; tangent 2 nv */
    int nu, np; /* controls, parameters */
} sc_model_sizes;

/*
 * Validate a model and compute its sizes.  Returns SC_OK, or SC_EINVAL (bad dimension,
 * dt, body kind, mass/inertia, support, pair indices, or contact parameters).
 */
SC_API int sc_model_check(const sc_model *m, sc_model_sizes *sz);

/* Scratch of sc_step (order 0..2, params 0/1) and of the other sc_model functions, doubles */
SC_API ptrdiff_t sc_step_workspace_size(const sc_model *m, int order, int params, int nthreads);

/*
 * One step and its derivatives.
 *
 * Given:
 *   m        const sc_model*   a model that passed sc_model_check
 *   x        const double*     nq + nv state (quaternions normalized here)
 *   u        const double*     nu controls (may be NULL when nu == 0)
 *   order    int               0, 1 or 2
 *   params   int               1: also dx_dp (first order)
 *   isa, nthreads              SSDF variant and threads (results independent of nthreads)
 *   work     double*           sc_step_workspace_size(m, order, params, nthreads) doubles
 * Returned (NULL to skip; derivative outputs above `order` are not written):
 *   x_next   nq + nv
 *   dx_dx    2nv x 2nv         dx_du  2nv x nu
 *   d2x_dx2  2nv x 2nv x 2nv   d2x_dxdu  2nv x 2nv x nu   d2x_du2  2nv x nu x nu
 *   dx_dp    2nv x np          (params)
 * Returned (function value): SC_OK; SC_EINVAL; SC_ENONFINITE for a non-finite x or u;
 *   any status of sc_contact.
 */
SC_API int sc_step(const sc_model *m, const double *x, const double *u, int order, int params,
                   int isa, int nthreads, double *work, double *x_next, double *dx_dx,
                   double *dx_du, double *d2x_dx2, double *d2x_dxdu, double *d2x_du2,
                   double *dx_dp);

/*
 * B independent rollouts of T steps, in parallel over trajectories (one thread each).
 *
 *   x0 (B x nx), U (B x T x nu); order 0 or 1; work: nthreads x
 *   sc_step_workspace_size(m, order, 0, 1) doubles.
 * Returned: X (B x (T+1) x nx), A (B x T x 2nv x 2nv), Bu (B x T x 2nv x nu) (order 1, may
 *   be NULL), status (B): SC_OK or the step's error; a failed trajectory's remaining states
 *   (and Jacobians) are NaN.  Function value: SC_OK, or SC_EINVAL for bad arguments.
 * Each trajectory is computed exactly as the same sequence of sc_step calls would.
 */
SC_API int sc_rollout(const sc_model *m, ptrdiff_t B, ptrdiff_t T, const double *x0,
                      const double *U, int order, int isa, int nthreads, double *work,
                      double *X, double *A, double *Bu, int *status);

/*
 * Inverse dynamics: the controls u (nu) and the generalized forces f (nv; zero rows for
 * kinematic bodies) that take x to a state with the velocities of x_next:
 *   f = M (v+ - v0+) / h  with v0+ the uncontrolled step's velocities;
 *   u = f for actuated dynamic bodies, u = v+ for kinematic ones.
 * For unactuated bodies f is the force the step would need (0 when x_next is reachable).
 */
SC_API int sc_inverse_dynamics(const sc_model *m, const double *x, const double *x_next,
                               int isa, int nthreads, double *work, double *u, double *f);

/*
 * Energies of the dynamic bodies: out[0] kinetic, out[1] gravitational potential
 * (-m g . t), out[2] contact potential (sum of the pairs' U).
 */
SC_API int sc_energy(const sc_model *m, const double *x, int isa, int nthreads, double *work,
                     double *out);

/*
 * Momentum of the dynamic bodies: linear (D, world) then angular about the world origin
 * (2D: 1; 3D: 3, world frame).
 */
SC_API int sc_momentum(const sc_model *m, const double *x, double *out);

#endif /* SC_MODEL_H */
