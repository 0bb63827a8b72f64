/*
 * sc_vec_generic.h - one-lane "vector" primitives in portable C for the
 * kernel template sc_ssdf_kernel.h (see sc_vec_avx2.h for the contract).
 * vfma is a separate multiply and add here: without hardware FMA, libm's
 * fma() is a slow software routine.
 */
#ifndef SC_VEC_GENERIC_H
#define SC_VEC_GENERIC_H

#include <stdint.h>
#include <string.h>

#include "sc_exp.h"

typedef double vd;
#define VW 1
#if defined(__GNUC__) || defined(__clang__)
    #define SC_VFN static inline __attribute__((always_inline))
#else
    #define SC_VFN static inline
#endif

SC_VFN vd vset1(double a)
{
    return a;
}
SC_VFN vd vload(const double *p)
{
    return *p;
}
SC_VFN void vstore(double *p, vd a)
{
    *p = a;
}
SC_VFN vd vadd(vd a, vd b)
{
    return a + b;
}
SC_VFN vd vsub(vd a, vd b)
{
    return a - b;
}
SC_VFN vd vmul(vd a, vd b)
{
    return a * b;
}
SC_VFN vd vdiv(vd a, vd b)
{
    return a / b;
}
/* a * b + c */
SC_VFN vd vfma(vd a, vd b, vd c)
{
    return a * b + c;
}
SC_VFN vd vmax(vd a, vd b)
{
    return a > b ? a : b;
}
/* every lane a < b (false where either is NaN) */
SC_VFN int vall_lt(vd a, vd b)
{
    return a < b;
}
/* bit k set where lane k has a > b (gt) or a >= b (ge); clear where either is NaN */
SC_VFN unsigned vmask_gt(vd a, vd b)
{
    return a > b;
}
SC_VFN unsigned vmask_ge(vd a, vd b)
{
    return a >= b;
}
/* every lane exactly zero */
SC_VFN int vall_zero(vd a)
{
    return a == 0.0;
}
/* a > b ? x : y */
SC_VFN vd vselect_gt(vd a, vd b, vd x, vd y)
{
    return a > b ? x : y;
}

/* the sum of the lanes (one lane) */
SC_VFN double vhsum(vd a)
{
    return a;
}

/* the pointers in[l] of the lanes l set in m, stored contiguously at out; returns how
   many (out has room for VW entries) */
SC_VFN int vkeep_ptrs(const double **out, const double *const *in, unsigned m)
{
    out[0] = in[0];
    return (int)(m & 1u);
}

/* exp(t) for t <= 0 (see sc_exp.h), one lane */
SC_VFN vd vexp_neg(vd t)
{
    double tc = t > SC_EXP_MIN_ARG ? t : SC_EXP_MIN_ARG; /* NaN -> cutoff, masked below */
    double kd = tc * SC_EXP_LOG2E + SC_EXP_MAGIC;        /* round(t / ln 2) + magic */
    double k = kd - SC_EXP_MAGIC;
    double r = (tc - k * SC_EXP_LN2HI) - k * SC_EXP_LN2LO;
    double p, scale;
    uint64_t bits, ebits;
    SC_EXP_POLY(p, r, vfma, vmul, vset1);
    memcpy(&bits, &kd, sizeof bits);
    ebits = (bits << 52) + ((uint64_t)1023 << 52); /* 2^k from the low bits of kd */
    memcpy(&scale, &ebits, sizeof scale);
    return t >= SC_EXP_MIN_ARG ? p * scale : 0.0;
}

#endif /* SC_VEC_GENERIC_H */
