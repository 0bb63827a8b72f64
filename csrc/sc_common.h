/*
 * sc_common.h - status codes, instruction sets, run options and the tolerances shared by
 * the softcontact C core.  Pure C11: no Python, no NumPy, no global state.
 */
#ifndef SC_COMMON_H
#define SC_COMMON_H

#include <assert.h>
#include <stddef.h>

/* Public symbols.  The library is linked statically into the extension module,
 * which is built with -fvisibility=hidden, so this stays empty. */
#define SC_API

/* Developer assumptions (not user errors): active unless NDEBUG. */
#define SC_ASSERT(cond) assert(cond)

/* Status codes (ERFA convention): 0 OK, < 0 error, > 0 warning. */
enum sc_status {
    SC_OK = 0,
    SC_EINVAL = -1,       /* invalid argument (size, range, NULL) */
    SC_ENOMEM = -2,       /* out of memory */
    SC_ENONFINITE = -3,   /* non-finite value where a finite one is required */
    SC_ENOTUNIT = -4,     /* a quaternion whose norm is not 1 within SC_UNIT_TOL */
    SC_EUNSUPPORTED = -5, /* requested instruction set not supported by this CPU/build */
    SC_EDIVERGED = -6,    /* a step's new state is non-finite or past the model's speed
                             limits (sc_model.h, sc_body.max_speed); its outputs are written */
    SC_EINTERRUPTED = -7, /* stopped by the caller's interrupt poll (sc_options.interrupt) */
    SC_ERANGE = -8        /* a finite coordinate, speed, control or distance outside its valid
                             range (SC_COORD_MAX and below) */
};

/* Instruction-set variants of the SIMD kernels (runtime dispatch). */
enum sc_isa {
    SC_ISA_AUTO = -1,   /* best supported by the running CPU */
    SC_ISA_GENERIC = 0, /* portable C, one lane */
    SC_ISA_AVX2 = 1,    /* x86-64 AVX2 + FMA, 4 lanes */
    SC_ISA_AVX512 = 2   /* x86-64 AVX-512F, 8 lanes */
};

/*
 * A caller's way to stop a long call (sc_options.interrupt).  The long loops (the SSDF's
 * queries, a rollout's steps, the wait for worker threads) check it at points a few
 * microseconds to a millisecond apart.  The thread that made the call calls poll(ctx)
 * there once `period` seconds have passed since the last poll (or since
 * sc_interrupt_init); the threads a kernel starts only read `stop` (through a view of
 * the caller's interrupt, sc__interrupt_view).  When poll returns nonzero every thread
 * stops at its next check and the call returns SC_EINTERRUPTED (its outputs then hold no
 * result).  The Python binding polls for pending signals (Ctrl-C) this way.
 */
typedef struct sc_interrupt {
    int (*poll)(void *ctx); /* nonzero: stop; NULL in a view */
    void *ctx;
    double period; /* seconds between polls, >= 0 */
    /* state, set by sc_interrupt_init */
    volatile int stop;           /* written once (0 -> 1) by the calling thread */
    double last;                 /* time of the last poll (s); the calling thread's alone */
    struct sc_interrupt *caller; /* a worker thread's view: the interrupt it reads; else NULL */
} sc_interrupt;

/* Prepare `it` for one call: no stop, the first poll `period` seconds from now. */
SC_API void sc_interrupt_init(sc_interrupt *it, int (*poll)(void *ctx), void *ctx, double period);

/* 1 when the call must stop (now, or an earlier poll said so), else 0; NULL: 0.  Polls on
 * the calling thread's interrupt, reads its stop through a view. */
SC_API int sc_interrupt_check(sc_interrupt *it);

/* How a kernel runs.  Results never depend on isa's lane width in the contact model, and
 * never on nthreads anywhere; the SSDF's variants agree to rounding (sc_ssdf.h). */
typedef struct sc_options {
    int isa;                 /* SC_ISA_AUTO or a specific SC_ISA_* supported here */
    int dense;               /* 1: evaluate every sample of every cloud (no pruning, sc_ssdf.h) */
    int nthreads;            /* threads to split a batch over, >= 1 */
    sc_interrupt *interrupt; /* NULL, or the caller's interrupt (sc_interrupt) */
} sc_options;

/* the most threads a kernel starts (more requested run as this many) */
#define SC_MAX_THREADS 256

/* the options used where a kernel is given NULL: best ISA, pruned, one thread, no
 * interrupt */
#define SC_OPTIONS_DEFAULT {SC_ISA_AUTO, 0, 1, NULL}

/* numbers of a pose of dimension D (2D (x, y, theta), 3D (p, q w first)) and of a velocity
 * or tangent vector (2D (vx, vy, omega), 3D (v, omega)) */
#define SC_NQ(D) ((D) == 2 ? 3 : 7)
#define SC_NV(D) ((D) == 2 ? 3 : 6)

/* Allowed | |q| - 1 | of a pose's quaternion (and of a cloud's normals, checked by the
 * Python layer).  Quaternions within it are normalized before use. */
#define SC_UNIT_TOL 1e-9

/* Valid ranges (SI units; docs/method.md, "Valid ranges").  Within them every output of
 * every kernel is finite at every derivative order; the kernels refuse values outside them
 * (SC_EINVAL for a parameter, SC_ERANGE for a coordinate, speed, control or reach). */
#define SC_COORD_MAX                                                                               \
    1e12 /* |component| of a query point, a pose's translation or a                                \
            position, and a cloud's radius about its origin, |c0| + rho (m) */
#define SC_REACH_MAX                                                                               \
    1e14                 /* (|x - c0| + rho) rho / eps of a query x of a cloud of bounding         \
                            sphere (c0, rho): the SSDF's conditioning (sc_ssdf.h) */
#define SC_EPS_MIN 1e-30 /* SSDF temperature eps (m^2) */
#define SC_EPS_MAX 1e24
#define SC_LENGTH_MIN 1e-15 /* the contact model's eps_c and beta (m) */
#define SC_LENGTH_MAX 1e12
#define SC_STIFFNESS_MIN 1e-20 /* contact stiffness k (N/m) */
#define SC_STIFFNESS_MAX 1e20
#define SC_DAMPING_MAX 1e20 /* contact damping c >= 0 (N s/m) */
#define SC_FRICTION_MAX 1e3 /* friction coefficients mu >= 0 (contact and support) */
#define SC_SLIP_MIN 1e-12   /* slip velocities v_s (m/s) */
#define SC_SLIP_MAX 1e8
#define SC_SPEED_MAX 1e8   /* |component| of a velocity (m/s) or angular velocity (rad/s) */
#define SC_FORCE_MAX 1e30  /* |component| of a force or torque control (N, N m) */
#define SC_MASS_MIN 1e-100 /* a dynamic body's mass (kg) and inertia (kg m^2) */
#define SC_MASS_MAX 1e100
#define SC_DT_MIN 1e-12 /* time step (s) */
#define SC_DT_MAX 1e3
#define SC_GRAVITY_MAX 1e12 /* |component| of gravity, and a support's gravity (m/s^2) */

/*
 * Message for a status code (static string, never NULL).
 */
SC_API const char *sc_status_str(int status);

/*
 * Whether this build and the running CPU support an instruction set.
 *
 * Given:
 *   isa   int   one of SC_ISA_GENERIC, SC_ISA_AVX2, SC_ISA_AVX512
 * Returned (function value):
 *   1 if kernels can run with it, 0 otherwise (including unknown values).
 */
SC_API int sc_isa_supported(int isa);

/*
 * The best instruction set supported by this build and CPU.
 */
SC_API int sc_isa_best(void);

/*
 * Resolve a requested ISA: SC_ISA_AUTO becomes sc_isa_best().
 *
 * Returned (function value):
 *   the ISA to run, or SC_EINVAL for an unknown value, or SC_EUNSUPPORTED.
 */
SC_API int sc_isa_resolve(int isa);

/* Name of an ISA ("generic", "avx2", "avx512") or "unknown". */
SC_API const char *sc_isa_name(int isa);

/*
 * Check run options (NULL: SC_OPTIONS_DEFAULT) and resolve their ISA.
 *
 * Returned:
 *   out   sc_options*   the options with isa resolved (sc_isa_resolve); not NULL
 * Returned (function value):
 *   SC_OK; SC_EINVAL for an unknown isa, nthreads < 1 or out NULL; SC_EUNSUPPORTED.
 */
SC_API int sc_options_resolve(const sc_options *opt, sc_options *out);

#endif /* SC_COMMON_H */
