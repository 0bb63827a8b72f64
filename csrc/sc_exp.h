/*
 * sc_exp.h - constants of the vectorizable exponential used by the SSDF
 * kernels (one algorithm, written once per instruction set in sc_vec_*.h).
 *
 * exp(t) for t <= 0, the only range the softmax needs (t = s_i - max_j s_j):
 *   k = round(t / ln 2)            via the 1.5 * 2^52 "magic" addition, whose
 *                                  low mantissa bits then hold k in two's complement
 *   r = t - k ln2_hi - k ln2_lo    Cody-Waite reduction, |r| <= ln(2)/2 (+ rounding)
 *   exp(r) = sum_{j=0}^{13} r^j / j!   Estrin; truncation error
 *                                  <= (ln2/2)^14 / 14! ~ 4e-18 relative
 *   exp(t) = exp(r) * 2^k          2^k built from the exponent bits of k + 1023
 * Accuracy: within ~2 ulp of the correctly rounded value on [-708, 0] (tested
 * against libm in tests/c/test_core.c).
 *
 * SC_EXP_MIN_ARG: arguments below it give exactly 0.  Why this threshold:
 * exp(-708) ~ 3.3e-308 is the smallest value whose 2^k is still a normal
 * number (k >= -1021), so the exponent-bit construction stays valid; and a
 * softmax weight below 3.3e-308 of the largest (which is exactly 1) contributes
 * nothing representable to any sum that also contains the largest weight,
 * even after the at most (2/eps)^3 * L^4-type polynomial factors of the third
 * derivative (those factors multiply every weight alike).  NaN arguments give
 * 0 too (the kernels never pass NaN: non-finite queries are handled before).
 */
#ifndef SC_EXP_H
#define SC_EXP_H

#define SC_EXP_MIN_ARG (-708.0)
#define SC_EXP_LOG2E 1.4426950408889634074
#define SC_EXP_MAGIC 6755399441055744.0 /* 1.5 * 2^52 */
#define SC_EXP_LN2HI 6.93147180369123816490e-01
#define SC_EXP_LN2LO 1.90821492927058770002e-10

/* Degree-13 Taylor polynomial of exp at r, evaluated by Estrin's scheme
 * (dependency depth 5 instead of Horner's 13: the kernels are latency-bound
 * on this chain), written with the vector primitives FMA(a, b, c) = a*b + c,
 * MUL and SET1.  Declares locals; use as a statement block that assigns OUT. */
#define SC_EXP_POLY(OUT, r, FMA, MUL, SET1)                                                        \
    do {                                                                                           \
        vd r2_ = MUL((r), (r)), r4_, r8_, q0_, q1_, q2_, q3_, q4_, q5_, q6_;                       \
        r4_ = MUL(r2_, r2_);                                                                       \
        r8_ = MUL(r4_, r4_);                                                                       \
        q0_ = FMA((r), SET1(1.0), SET1(1.0));                                                      \
        q1_ = FMA((r), SET1(1.0 / 6.0), SET1(0.5));                                                \
        q2_ = FMA((r), SET1(1.0 / 120.0), SET1(1.0 / 24.0));                                       \
        q3_ = FMA((r), SET1(1.0 / 5040.0), SET1(1.0 / 720.0));                                     \
        q4_ = FMA((r), SET1(1.0 / 362880.0), SET1(1.0 / 40320.0));                                 \
        q5_ = FMA((r), SET1(1.0 / 39916800.0), SET1(1.0 / 3628800.0));                             \
        q6_ = FMA((r), SET1(1.0 / 6227020800.0), SET1(1.0 / 479001600.0));                         \
        q0_ = FMA(q1_, r2_, q0_);                                                                  \
        q2_ = FMA(q3_, r2_, q2_);                                                                  \
        q4_ = FMA(q5_, r2_, q4_);                                                                  \
        q0_ = FMA(q2_, r4_, q0_);                                                                  \
        q4_ = FMA(q6_, r4_, q4_);                                                                  \
        (OUT) = FMA(q4_, r8_, q0_);                                                                \
    } while (0)

#endif /* SC_EXP_H */
