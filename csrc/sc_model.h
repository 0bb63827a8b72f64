/*
 * sc_model.h - rigid-body scenes (docs/method.md sections 3, 6-7): bodies, contact pairs,
 * the state's layout, and the model's energy and momentum.  Stepping: sc_step.h; batched
 * rollouts: sc_rollout.h; inverse dynamics: sc_inverse.h.
 *
 * State x: the positions of the moving (dynamic and kinematic) bodies in body order, then
 * their velocities: 2D (x, y, theta) / (vx, vy, omega); 3D (p, quaternion w first) /
 * (v world, omega body).  Static bodies are not in the state.  Tangent coordinates of x
 * (size 2 nv): (dq_1 .. dq_n, dv_1 .. dv_n), dq per body as the retraction of docs/method.md
 * section 3.  Controls u, in body order: a generalized force (nv) for each actuated dynamic
 * body (2D (fx, fy, tau); 3D (f world, tau body)), the next velocity (nv) for each
 * kinematic body.  Parameters p (for system identification), in order: each dynamic body's
 * mass and inertia (2D: I; 3D: Ixx, Iyy, Izz, Ixy, Ixz, Iyz), each contact pair's
 * (stiffness, damping, friction), each supported body's support friction.
 *
 * Valid states (docs/method.md, "Valid ranges"): finite, unit quaternions, positions within
 * SC_COORD_MAX, velocity components within SC_SPEED_MAX, and the two bodies of every
 * contact pair within each other's reach (sc_separation, note 3); controls within
 * SC_SPEED_MAX (a kinematic body's velocity) or SC_FORCE_MAX (an actuated body's force and
 * torque).  A step whose new state leaves that range reports SC_EDIVERGED.
 *
 * Step (h = dt), by the model's integrator:
 *   euler     v+ = v + h M^-1 (Q(q, v, u) - gyro),  q+ = q (+) h v+  (dynamic);
 *   implicit  (M - h D_dd) (v+ - v) = h (Q(q, v, u) - gyro + D_dk (u_k - v_k)), the same q+,
 *             with D = dQ/dv the exact Jacobian of the generalized forces with respect to
 *             the velocities (dynamic columns d, kinematic columns k): Q linearized at v+;
 *   both      v+ = u,  q+ = q (+) h u  (kinematic).
 * Q: gravity m g, actuation, the contact wrenches of every pair (sc_contact), and the
 * planar support friction of docs/method.md section 6.  Derivatives are those of the map
 * (dx, du) -> x+(x (+) dx, u + du) (+)^-1 x+(x, u), in the tangent coordinates of x and x+.
 */
#ifndef SC_MODEL_H
#define SC_MODEL_H

#include "sc_contact.h"

enum sc_body_kind { SC_BODY_DYNAMIC = 0, SC_BODY_KINEMATIC = 1, SC_BODY_STATIC = 2 };

/* Time integrators of sc_step (sc_step.h), one function each. */
enum sc_integrator {
    SC_INTEGRATOR_EULER = 0,   /* semi-implicit Euler: v+ = v + h a(q, v, u), q+ = q (+) h v+ */
    SC_INTEGRATOR_IMPLICIT = 1 /* linearly implicit in the velocity-dependent forces:
                                  (M - h dQ/dv) (v+ - v) = h (Q - gyro), q+ = q (+) h v+ */
};

/* Bodies per model.  The step's jets are dense in (dx, du): order-2 memory and time grow
 * like (2 nv + nu)^2 per moving body, which suits scenes of a few moving bodies. */
#define SC_MODEL_MAX_BODIES 64

typedef struct sc_body {
    int kind;              /* SC_BODY_* */
    int actuated;          /* dynamic bodies: controlled by a generalized force */
    double mass;           /* dynamic bodies, in [SC_MASS_MIN, SC_MASS_MAX] (kg) */
    double inertia[9];     /* dynamic bodies: 2D inertia[0] in [SC_MASS_MIN, SC_MASS_MAX]; 3D
                              symmetric positive definite, its diagonal in that range, body
                              frame (kg m^2) */
    double pose[7];        /* static bodies: the fixed pose (3 or 7 numbers) */
    sc_packed_cloud cloud; /* samples in the body frame (origin at the centre of mass), its
                              radius about the origin at most SC_COORD_MAX; cloud.n == 0 for
                              a body without geometry */
    /* planar support friction (2D dynamic bodies; nsupport == 0 for none) */
    ptrdiff_t nsupport;
    const double *support_points;  /* nsupport x 2, body frame, within SC_COORD_MAX: the
                                      caller's contract, not checked by sc_model_check
                                      (which runs at every step; the binding and the
                                      Python layer check it once) */
    const double *support_weights; /* nsupport, > 0, summing to 1 */
    double support_friction;       /* mu_s in [0, SC_FRICTION_MAX] */
    double support_gravity;        /* g in (0, SC_GRAVITY_MAX] normal to the plane (m/s^2) */
    double support_slip;           /* v_s in [SC_SLIP_MIN, SC_SLIP_MAX] (m/s) */
    /* dynamic bodies: sc_step reports SC_EDIVERGED when its new state has this body's
       linear speed above max_speed (m/s) or its angular speed above max_spin (rad/s);
       0 (or inf) for no limit */
    double max_speed, max_spin;
} sc_body;

typedef struct sc_pair {
    int a, b; /* body indices, a != b, not both static */
    sc_contact_params prm;
} sc_pair;

typedef struct sc_model {
    int dim; /* 2 or 3 */
    int nbody, npair;
    const sc_body *bodies;
    const sc_pair *pairs;
    double gravity[3]; /* world gravity (2D: the first two, in the plane), components within
                          SC_GRAVITY_MAX */
    double dt;         /* in [SC_DT_MIN, SC_DT_MAX] (s) */
    int integrator;    /* SC_INTEGRATOR_* */
} sc_model;

typedef struct sc_model_sizes {
    int nmove;  /* moving (non-static) bodies */
    int nq, nv; /* state: nx = nq + nv; tangent 2 nv */
    int nu, np; /* controls, parameters */
} sc_model_sizes;

/*
 * Validate a model and compute its sizes.  Returns SC_OK, or SC_EINVAL (bad dimension,
 * dt, gravity, integrator, body kind, cloud, mass/inertia, support, pair indices, or
 * contact parameters; the ranges of sc_common.h, docs/method.md "Valid ranges").
 */
SC_API int sc_model_check(const sc_model *m, sc_model_sizes *sz);

/*
 * Energies of the dynamic bodies: out[0] kinetic, out[1] gravitational potential
 * (-m g . t), out[2] contact potential (sum of the pairs' U).
 *   work: sc_step_workspace_size(m, 0, 0, nthreads) doubles.
 */
SC_API int sc_energy(const sc_model *m, const double *x, const sc_options *opt, double *work,
                     double *out);

/*
 * Momentum of the dynamic bodies: linear (D, world) then angular about the world origin
 * (2D: 1; 3D: 3, world frame).
 */
SC_API int sc_momentum(const sc_model *m, const double *x, double *out);

#endif /* SC_MODEL_H */
