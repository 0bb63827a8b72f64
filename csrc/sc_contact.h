/*
 * sc_contact.h - the soft-minimum contact model between two posed, moving bodies
 * (docs/method.md section 5): wrenches, energy, and their first and second derivatives
 * with respect to both bodies' states.
 *
 * Notation as sc_separation.h: bodies A (I samples) and B (J samples), nv = 3 (2D) or 6
 * (3D), the separation field Phi_k of sample k against the other body.  Then
 *   m = -eps_c log sum exp(-Phi_k / eps_c) (the soft minimum: a smooth depth),
 *   pi = softmax(-Phi / eps_c), lambda(m) = k sp_b(-m) s_b(-m) (the normal force),
 * and sample k's force on its owner is
 *   pi_k [lambda G_k - c s_b(-m) (nu_k . u_k) nu_k - mu lambda t_k / sqrt(|t_k|^2 + v_s^2)]
 * at its point (u_k the velocity of the point on its owner minus on the other body, nu_k
 * the unit normal G_k / |G_k|, t_k the part of u_k tangent to it).  A half-space (one
 * sample) against a cloud of several samples takes no part with its own sample (pi 0).
 */
#ifndef SC_CONTACT_H
#define SC_CONTACT_H

#include "sc_separation.h"

/* Parameters, SI units; see softcontact.ContactParams for the documented defaults.  Their
 * valid ranges (sc_common.h; docs/method.md, "Valid ranges"): */
typedef struct sc_contact_params {
    double eps;           /* SSDF temperature (m^2), in [SC_EPS_MIN, SC_EPS_MAX] */
    double eps_c;         /* soft-minimum temperature (m), in [SC_LENGTH_MIN, SC_LENGTH_MAX] */
    double stiffness;     /* k (N/m), in [SC_STIFFNESS_MIN, SC_STIFFNESS_MAX] */
    double beta;          /* ramp smoothing b (m), in [SC_LENGTH_MIN, SC_LENGTH_MAX] */
    double damping;       /* c (N s/m), in [0, SC_DAMPING_MAX] */
    double friction;      /* mu, in [0, SC_FRICTION_MAX] */
    double slip_velocity; /* v_s (m/s), in [SC_SLIP_MIN, SC_SLIP_MAX] */
} sc_contact_params;

/*
 * Check contact parameters: SC_OK, or SC_EINVAL if prm is NULL or a field is NaN or
 * outside its valid range (above).
 */
SC_API int sc_contact_params_check(const sc_contact_params *prm);

/* One body of a contact pair. */
typedef struct sc_contact_body {
    const sc_packed_cloud *cloud; /* its samples, body frame (origin: the centre of mass) */
    const double *pose;           /* 2D (x, y, theta); 3D (p, q w first), q of unit norm
                                     within SC_UNIT_TOL (normalized here) */
    const double *vel;            /* 2D (vx, vy, omega); 3D (v world, omega body) */
    int frozen;                   /* nonzero: held fixed (a static body): the derivatives
                                     with respect to its state are not computed (zero in jac
                                     and hess), which halves the variables of the jets */
} sc_contact_body;

/* The outputs of sc_contact (any member may be NULL to skip). */
typedef struct sc_contact_out {
    double *wrench;  /* 2 nv: generalized forces on A then B in tangent coordinates (2D (fx,
                        fy, tau); 3D (f world, tau body)) */
    double *scalars; /* 3: energy U, soft minimum m (depth), Phi_min */
    double *phi;     /* I+J: separation field Phi_k */
    double *pi;      /* I+J: separation distribution pi_k */
    double *forces;  /* (I+J) x D: per-sample world force on the sample's owner */
    double *x_w;     /* (I+J) x D: world sample positions */
    double *jac;     /* 2nv x 4nv: d wrench / d s, s = (dq_A, dq_B, v_A, v_B) (order >= 1) */
    double *hess;    /* 2nv x 4nv x 4nv: d2 wrench / ds2, symmetric in its last two indices
                        (order 2) */
    double *dw_dprm; /* 3 x 2nv: d wrench / d (stiffness, damping, friction), any order */
} sc_contact_out;

/*
 * Scratch needed by sc_contact, in doubles (any order).
 */
SC_API ptrdiff_t sc_contact_workspace_size(const sc_packed_cloud *a, const sc_packed_cloud *b,
                                           int nthreads);

/*
 * Soft-minimum contact between two posed, moving bodies.
 *
 * Given:
 *   a, b     const sc_contact_body*    the two bodies (clouds of the same dimension D)
 *   prm      const sc_contact_params*  the model's parameters
 *   order    int                       0: values; 1: + jac; 2: + hess
 *   opt      const sc_options*         the SSDF evaluations' options (sc_ssdf); NULL:
 *                                      SC_OPTIONS_DEFAULT
 *   work     double*                   sc_contact_workspace_size(a, b, nthreads) doubles
 * Returned:
 *   out      const sc_contact_out*     where to write (members NULL to skip)
 * Returned (function value):
 *   SC_OK; SC_EINVAL for NULL arguments, different dimensions, an order outside 0..2,
 *   invalid parameters (sc_contact_params_check) or options; SC_ENONFINITE for a
 *   non-finite pose or velocity; SC_ENOTUNIT for a quaternion not of unit norm;
 *   SC_ERANGE for a translation beyond SC_COORD_MAX, a velocity component beyond
 *   SC_SPEED_MAX, a cloud whose radius about its origin exceeds SC_COORD_MAX, or bodies
 *   beyond each other's reach (sc_separation, note 3); SC_EUNSUPPORTED for an unsupported
 *   isa.
 * Notes:
 *   1) Derivatives are those of s -> wrench(q (+) ds_q, v + ds_v) at s = 0, with (+) the
 *      tangent retraction of docs/method.md section 3: translations world, rotations body.
 *   2) Cost: one SSDF evaluation per sample (order + 1 derivatives), O(I J), then O(I + J)
 *      closed-form work; memory O(I + J).  The (I+J)^2 Hessian of the soft minimum is never
 *      formed (it is diagonal plus rank one).
 *   3) Outputs must not alias inputs, work or each other.
 *   4) The results do not depend on the number of threads; the contact model's compiled
 *      variants give the same bits (the SSDF's agree to rounding, sc_ssdf.h).
 */
SC_API int sc_contact(const sc_contact_body *a, const sc_contact_body *b,
                      const sc_contact_params *prm, int order, const sc_options *opt, double *work,
                      const sc_contact_out *out);

#endif /* SC_CONTACT_H */
