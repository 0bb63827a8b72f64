/*
 * sc_jet.h - second-order forward-mode jets (truncated Taylor expansions) used by the
 * contact model to propagate first and second derivatives in closed form.
 *
 * A jet of a scalar f(s) at s = 0 in n variables is stored as L = 1 + n + n (n + 1) / 2
 * doubles: [f, df/ds_0 .. df/ds_{n-1}, d2f/ds_i ds_j for j <= i, row by row], i.e. the
 * packed lower triangle with entry (i, j) at n + 1 + i (i + 1) / 2 + j.  Every operation is
 * the exact chain / product rule truncated at `order` (0: value, 1: + gradient, 2: +
 * Hessian), so results are closed-form derivatives, not approximations.
 *
 * The operations take `na`, the number of leading variables the operands depend on
 * (entries past na are neither read nor written): the contact model orders its
 * variables so that configuration-only quantities use the first 2 nv of them and
 * cost (2 nv)^2 instead of (4 nv)^2 per product.  sc_jet_promote zero-fills such a jet
 * up to the full count before it meets velocity-dependent jets.
 *
 * Aliasing: sc_jet_mul, sc_jet_func and sc_jet_lin allow out to alias an operand;
 * the accumulating forms (madd, var_madd) do not.
 */
#ifndef SC_JET_H
#define SC_JET_H

#include <stddef.h>
#include <string.h>

/* The operations' loops run over na variables.  The counts of the contact model's jets
 * (2 nv and 4 nv with one or two moving bodies: 3, 6, 12, 24) are dispatched to copies of
 * each kernel with na a compile-time constant, whose triangular Hessian loops the compiler
 * unrolls and vectorizes without per-row trip-count and overlap logic: ~1.5x on a
 * 12-variable madd.  Every copy does the same operations in the same order, so the bits do
 * not depend on the copy. */
#if defined(__GNUC__) || defined(__clang__)
    #define SC_JET_KERNEL static inline __attribute__((always_inline))
#else
    #define SC_JET_KERNEL static inline
#endif
#define SC_JET_SPECIALIZE(kernel, c, na, ...)                                                      \
    switch (na) {                                                                                  \
    case 3: kernel(c, 3, __VA_ARGS__); break;                                                      \
    case 6: kernel(c, 6, __VA_ARGS__); break;                                                      \
    case 12: kernel(c, 12, __VA_ARGS__); break;                                                    \
    case 24: kernel(c, 24, __VA_ARGS__); break;                                                    \
    default: kernel(c, na, __VA_ARGS__); break;                                                    \
    }

/* a variable index past every jet: a jet of "variable" SC_JET_NOVAR is a constant (a
 * frozen body's state, an undifferentiated parameter) */
#define SC_JET_NOVAR 1000000

/* doubles of a second-order jet in n variables */
#define SC_JET_LEN(n) (1 + (n) + (n) * ((n) + 1) / 2)

typedef struct {
    int n;     /* variables of a full jet */
    int order; /* 0, 1 or 2 */
    int len;   /* doubles per jet: 1 + n + n (n + 1) / 2 (order 2), 1 + n (order 1), 1 */
} sc_jet_ctx;

static inline void sc_jet_ctx_init(sc_jet_ctx *c, int n, int order)
{
    c->order = order;
    c->n = order > 0 ? n : 0;
    c->len = 1 + c->n + (order >= 2 ? c->n * (c->n + 1) / 2 : 0);
}

/* index of the Hessian entry (i, j) in a jet, i and j < n of the context */
static inline int sc_jet_hidx(const sc_jet_ctx *c, int i, int j)
{
    return i >= j ? 1 + c->n + i * (i + 1) / 2 + j : 1 + c->n + j * (j + 1) / 2 + i;
}

/* number of Hessian entries used by the first na variables */
static inline int sc_jet_nh(const sc_jet_ctx *c, int na)
{
    return c->order >= 2 ? na * (na + 1) / 2 : 0;
}

/* out = constant v */
static inline void sc_jet_const(const sc_jet_ctx *c, int na, double *out, double v)
{
    out[0] = v;
    if (c->order >= 1) {
        memset(out + 1, 0, sizeof(double) * (size_t)na);
        memset(out + 1 + c->n, 0, sizeof(double) * (size_t)sc_jet_nh(c, na));
    }
}

/* out = v + s_k (a coordinate variable with value v), or a constant when k >= na */
static inline void sc_jet_var(const sc_jet_ctx *c, int na, double *out, double v, int k)
{
    sc_jet_const(c, na, out, v);
    if (c->order >= 1 && k < na) {
        out[1 + k] = 1.0;
    }
}

/* zero the entries of a jet that depends on the first na variables up to nb >= na */
static inline void sc_jet_promote(const sc_jet_ctx *c, int na, int nb, double *a)
{
    if (c->order >= 1 && nb > na) {
        memset(a + 1 + na, 0, sizeof(double) * (size_t)(nb - na));
        if (c->order >= 2) {
            int h0 = sc_jet_nh(c, na), h1 = sc_jet_nh(c, nb);
            memset(a + 1 + c->n + h0, 0, sizeof(double) * (size_t)(h1 - h0));
        }
    }
}

/* the kernels of sc_jet_lin, _axpy, _mul, _madd and _func (below) */
SC_JET_KERNEL void sc__jet_lin(const sc_jet_ctx *c, int na, double *out, double ca, const double *a,
                               double cb, const double *b)
{
    int k, m = c->order >= 1 ? 1 + na : 1;
    if (b == NULL) {
        for (k = 0; k < m; k++) {
            out[k] = ca * a[k];
        }
        for (k = 1 + c->n; k < 1 + c->n + sc_jet_nh(c, na); k++) {
            out[k] = ca * a[k];
        }
        return;
    }
    for (k = 0; k < m; k++) {
        out[k] = ca * a[k] + cb * b[k];
    }
    for (k = 1 + c->n; k < 1 + c->n + sc_jet_nh(c, na); k++) {
        out[k] = ca * a[k] + cb * b[k];
    }
}

SC_JET_KERNEL void sc__jet_axpy(const sc_jet_ctx *c, int na, double *out, double ca,
                                const double *a)
{
    int k, m = c->order >= 1 ? 1 + na : 1;
    for (k = 0; k < m; k++) {
        out[k] += ca * a[k];
    }
    for (k = 1 + c->n; k < 1 + c->n + sc_jet_nh(c, na); k++) {
        out[k] += ca * a[k];
    }
}

/* out = ((c0 a0 + c1 a1) + c2 a2) (+ c3 a3 when a3 is not NULL): entry by entry the
 * operations of sc_jet_lin followed by sc_jet_axpy calls, in one pass (same bits); out must
 * not alias an operand */
SC_JET_KERNEL void sc__jet_lin34(const sc_jet_ctx *c, int na, double *restrict out,
                                 const double *cf, const double *a0, const double *a1,
                                 const double *a2, const double *a3)
{
    const double c0 = cf[0], c1 = cf[1], c2 = cf[2], c3 = a3 ? cf[3] : 0.0; /* cf: 3 or 4 */
    int k, m = c->order >= 1 ? 1 + na : 1, h0 = 1 + c->n, h1 = 1 + c->n + sc_jet_nh(c, na);
    if (a3 == NULL) {
        for (k = 0; k < m; k++) {
            double v = c0 * a0[k];
            v += c1 * a1[k];
            out[k] = v + c2 * a2[k];
        }
        for (k = h0; k < h1; k++) {
            double v = c0 * a0[k];
            v += c1 * a1[k];
            out[k] = v + c2 * a2[k];
        }
        return;
    }
    for (k = 0; k < m; k++) {
        double v = c0 * a0[k];
        v += c1 * a1[k];
        v += c2 * a2[k];
        out[k] = v + c3 * a3[k];
    }
    for (k = h0; k < h1; k++) {
        double v = c0 * a0[k];
        v += c1 * a1[k];
        v += c2 * a2[k];
        out[k] = v + c3 * a3[k];
    }
}

/* out_i += c_i a for i = 0, 1, 2 (the 3D moments: one pass over a, the same operations as
 * three sc_jet_axpy calls); the outs must not alias a or each other */
SC_JET_KERNEL void sc__jet_axpy3(const sc_jet_ctx *c, int na, double *restrict o0,
                                 double *restrict o1, double *restrict o2, double c0, double c1,
                                 double c2, const double *restrict a)
{
    int k, m = c->order >= 1 ? 1 + na : 1;
    for (k = 0; k < m; k++) {
        o0[k] += c0 * a[k];
        o1[k] += c1 * a[k];
        o2[k] += c2 * a[k];
    }
    for (k = 1 + c->n; k < 1 + c->n + sc_jet_nh(c, na); k++) {
        o0[k] += c0 * a[k];
        o1[k] += c1 * a[k];
        o2[k] += c2 * a[k];
    }
}

/* each entry is written after its last read, so out may alias a or b */
SC_JET_KERNEL void sc__jet_mul(const sc_jet_ctx *c, int na, double *out, const double *a,
                               const double *b)
{
    const double a0 = a[0], b0 = b[0];
    const double *ag = a + 1, *bg = b + 1;
    int i, j;
    if (c->order >= 2) {
        double *oh = out + 1 + c->n;
        const double *ah = a + 1 + c->n, *bh = b + 1 + c->n;
        for (i = 0; i < na; i++) {
            const double ai = ag[i], bi = bg[i];
            const int r = i * (i + 1) / 2;
            for (j = 0; j <= i; j++) {
                oh[r + j] = a0 * bh[r + j] + b0 * ah[r + j] + ai * bg[j] + ag[j] * bi;
            }
        }
    }
    if (c->order >= 1) {
        for (i = 0; i < na; i++) {
            out[1 + i] = a0 * bg[i] + b0 * ag[i];
        }
    }
    out[0] = a0 * b0;
}

/* out must not alias a or b: restrict lets the compiler skip its overlap checks */
SC_JET_KERNEL void sc__jet_madd(const sc_jet_ctx *c, int na, double *restrict out, double s,
                                const double *a, const double *b)
{
    const double a0 = s * a[0], b0 = s * b[0];
    const double *ag = a + 1, *bg = b + 1;
    int i, j;
    if (c->order >= 2) {
        double *oh = out + 1 + c->n;
        const double *ah = a + 1 + c->n, *bh = b + 1 + c->n;
        for (i = 0; i < na; i++) {
            const double ai = s * ag[i], bi = s * bg[i];
            const int r = i * (i + 1) / 2;
            for (j = 0; j <= i; j++) {
                oh[r + j] += a0 * bh[r + j] + b0 * ah[r + j] + ai * bg[j] + ag[j] * bi;
            }
        }
    }
    if (c->order >= 1) {
        for (i = 0; i < na; i++) {
            out[1 + i] += a0 * bg[i] + b0 * ag[i];
        }
    }
    out[0] += s * a[0] * b[0];
}

SC_JET_KERNEL void sc__jet_func(const sc_jet_ctx *c, int na, double *out, const double *a,
                                double f0, double f1, double f2)
{
    const double *ag = a + 1;
    int i, j;
    if (c->order >= 2) {
        double *oh = out + 1 + c->n;
        const double *ah = a + 1 + c->n;
        for (i = 0; i < na; i++) {
            const double fi = f2 * ag[i];
            const int r = i * (i + 1) / 2;
            for (j = 0; j <= i; j++) {
                oh[r + j] = f1 * ah[r + j] + fi * ag[j];
            }
        }
    }
    if (c->order >= 1) {
        for (i = 0; i < na; i++) {
            out[1 + i] = f1 * ag[i];
        }
    }
    out[0] = f0;
}

/* out = ca a + cb b (b may be NULL; out may alias a or b) */
static inline void sc_jet_lin(const sc_jet_ctx *c, int na, double *out, double ca, const double *a,
                              double cb, const double *b)
{
    SC_JET_SPECIALIZE(sc__jet_lin, c, na, out, ca, a, cb, b)
}

/* out += ca a */
static inline void sc_jet_axpy(const sc_jet_ctx *c, int na, double *out, double ca, const double *a)
{
    SC_JET_SPECIALIZE(sc__jet_axpy, c, na, out, ca, a)
}

/* out = c[0] a0 + c[1] a1 + c[2] a2 (+ c[3] a3; a3 may be NULL, and then cf holds 3
 * coefficients), summed left to right as
 * sc_jet_lin + sc_jet_axpy would (out must not alias an operand) */
static inline void sc_jet_lin34(const sc_jet_ctx *c, int na, double *out, const double *cf,
                                const double *a0, const double *a1, const double *a2,
                                const double *a3)
{
    SC_JET_SPECIALIZE(sc__jet_lin34, c, na, out, cf, a0, a1, a2, a3)
}

/* out_i += c_i a, i = 0, 1, 2 (no aliasing) */
static inline void sc_jet_axpy3(const sc_jet_ctx *c, int na, double *o0, double *o1, double *o2,
                                double c0, double c1, double c2, const double *a)
{
    SC_JET_SPECIALIZE(sc__jet_axpy3, c, na, o0, o1, o2, c0, c1, c2, a)
}

/* out = a b (out may alias a or b) */
static inline void sc_jet_mul(const sc_jet_ctx *c, int na, double *out, const double *a,
                              const double *b)
{
    SC_JET_SPECIALIZE(sc__jet_mul, c, na, out, a, b)
}

/* out += s a b (out must not alias a or b) */
static inline void sc_jet_madd(const sc_jet_ctx *c, int na, double *out, double s, const double *a,
                               const double *b)
{
    SC_JET_SPECIALIZE(sc__jet_madd, c, na, out, s, a, b)
}

/* out = f(a) given f0 = f(a0), f1 = f'(a0), f2 = f''(a0) (out may alias a) */
static inline void sc_jet_func(const sc_jet_ctx *c, int na, double *out, const double *a, double f0,
                               double f1, double f2){
    SC_JET_SPECIALIZE(sc__jet_func, c, na, out, a, f0, f1, f2)}

SC_JET_KERNEL void sc__jet_var_madd(const sc_jet_ctx *c, int na, double *restrict out, double s,
                                    int k, const double *b)
{
    int j;
    if (c->order < 1 || k >= na) {
        return;
    }
    out[1 + k] += s * b[0];
    if (c->order >= 2) {
        /* entries (k, j): row k of the triangle for j <= k, column k below it */
        double *row = out + 1 + c->n + k * (k + 1) / 2;
        for (j = 0; j < k; j++) {
            row[j] += s * b[1 + j];
        }
        row[k] += 2.0 * s * b[1 + k];
        for (j = k + 1; j < na; j++) {
            out[1 + c->n + j * (j + 1) / 2 + k] += s * b[1 + j];
        }
    }
}

/* out += s * s_k * b, s_k a coordinate variable whose value is 0 (a tangent-space
 * perturbation); no-op when k >= na.  out must not alias b. */
static inline void sc_jet_var_madd(const sc_jet_ctx *c, int na, double *out, double s, int k,
                                   const double *b)
{
    SC_JET_SPECIALIZE(sc__jet_var_madd, c, na, out, s, k, b)
}

/* out's Hessian entry (i, j) += v (order 2, i and j < na; else no-op) */
static inline void sc_jet_hadd(const sc_jet_ctx *c, int na, double *out, int i, int j, double v)
{
    if (c->order >= 2 && i < na && j < na) {
        out[sc_jet_hidx(c, i, j)] += v;
    }
}

/* A bump allocator of jets (of one context's length) in caller scratch: cap jets, then one
 * sink slot.  Past cap (a bug: the callers count their jets), every request gets the
 * sink and overflow is set, which the caller reports as SC_ENOMEM instead of writing out
 * of bounds.  Jets are released by restoring `used` to an earlier value. */
typedef struct sc_jet_arena {
    double *base;
    ptrdiff_t len; /* doubles per jet */
    int used, cap, overflow;
} sc_jet_arena;

static inline void sc_jet_arena_init(sc_jet_arena *A, double *base, int len, int cap)
{
    A->base = base;
    A->len = len;
    A->used = 0;
    A->cap = cap;
    A->overflow = 0;
}

static inline double *sc_jet_alloc(sc_jet_arena *A)
{
    if (A->used >= A->cap) {
        A->overflow = 1;
        return A->base + (ptrdiff_t)A->cap * A->len;
    }
    return A->base + (ptrdiff_t)(A->used++) * A->len;
}

/* doubles of a jet in at most 4 variables (any order): local jets on the stack */
#define SC_JET4_LEN 15

/* dst (context cd, first nd variables) = src (context cs, whose variable i is cd's variable
 * map[i]; variables mapped to >= nd are constants there).  The map must be one-to-one. */
static inline void sc_jet_expand(const sc_jet_ctx *cs, const double *src, const int *map,
                                 const sc_jet_ctx *cd, int nd, double *dst)
{
    int i, j;
    sc_jet_const(cd, nd, dst, src[0]);
    if (cd->order < 1) {
        return;
    }
    for (i = 0; i < cs->n; i++) {
        if (map[i] < nd) {
            dst[1 + map[i]] = src[1 + i];
        }
    }
    if (cd->order < 2) {
        return;
    }
    for (i = 0; i < cs->n; i++) {
        for (j = 0; j <= i; j++) {
            if (map[i] < nd && map[j] < nd) {
                dst[sc_jet_hidx(cd, map[i], map[j])] = src[sc_jet_hidx(cs, i, j)];
            }
        }
    }
}

#endif /* SC_JET_H */
