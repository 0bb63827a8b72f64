/*
 * sc_vec_avx512.h - AVX-512F primitives (8 doubles) for the kernel template
 * sc_ssdf_kernel.h.  Include only from a translation unit compiled for that
 * target (see sc_ssdf_avx512.c).
 *
 * Contract shared by every sc_vec_*.h: type vd, width VW, vset1, vload/vstore
 * (unaligned), vadd, vsub, vmul, vdiv, vfma(a, b, c) = a*b + c, vmax (never given
 * NaN), vall_lt, vall_zero, vmask_gt/vmask_ge (lane k as bit k), vselect_gt,
 * vkeep_ptrs, vhsum, vexp_neg (sc_exp.h algorithm, t <= 0).
 */
#ifndef SC_VEC_AVX512_H
#define SC_VEC_AVX512_H

#include <immintrin.h>

#include "sc_exp.h"

typedef __m512d vd;
#define VW 8
#define SC_VFN static inline __attribute__((always_inline))

SC_VFN vd vset1(double a)
{
    return _mm512_set1_pd(a);
}
SC_VFN vd vload(const double *p)
{
    return _mm512_loadu_pd(p);
}
SC_VFN void vstore(double *p, vd a)
{
    _mm512_storeu_pd(p, a);
}
SC_VFN vd vadd(vd a, vd b)
{
    return _mm512_add_pd(a, b);
}
SC_VFN vd vsub(vd a, vd b)
{
    return _mm512_sub_pd(a, b);
}
SC_VFN vd vmul(vd a, vd b)
{
    return _mm512_mul_pd(a, b);
}
SC_VFN vd vdiv(vd a, vd b)
{
    return _mm512_div_pd(a, b);
}
SC_VFN vd vfma(vd a, vd b, vd c)
{
    return _mm512_fmadd_pd(a, b, c);
}
SC_VFN vd vmax(vd a, vd b)
{
    return _mm512_max_pd(a, b);
}
/* every lane a < b (false where either is NaN) */
SC_VFN int vall_lt(vd a, vd b)
{
    return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ) == 0xFF;
}
/* bit k set where lane k has a > b (gt) or a >= b (ge); clear where either is NaN */
SC_VFN unsigned vmask_gt(vd a, vd b)
{
    return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ);
}
SC_VFN unsigned vmask_ge(vd a, vd b)
{
    return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ);
}
/* every lane exactly zero */
SC_VFN int vall_zero(vd a)
{
    return _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_EQ_OQ) == 0xFF;
}
/* per lane: a > b ? x : y */
SC_VFN vd vselect_gt(vd a, vd b, vd x, vd y)
{
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_GT_OQ), y, x);
}

/* the sum of the lanes in a fixed pairwise order, ((a0 + a4) + (a2 + a6)) + ((a1 + a5) +
   (a3 + a7)): a tree, shorter than a chain of seven dependent adds (a pruned query takes
   eleven such sums) */
SC_VFN double vhsum(vd a)
{
    const __m256d b = _mm256_add_pd(_mm512_castpd512_pd256(a), _mm512_extractf64x4_pd(a, 1));
    const __m128d c = _mm_add_pd(_mm256_castpd256_pd128(b), _mm256_extractf128_pd(b, 1));
    return _mm_cvtsd_f64(_mm_add_sd(c, _mm_unpackhi_pd(c, c)));
}

/* the pointers in[l] of the lanes l set in m, stored contiguously at out; returns how
   many (out has room for VW entries: all VW are written) */
SC_VFN int vkeep_ptrs(const double **out, const double *const *in, unsigned m)
{
    const __m512i p = _mm512_loadu_si512((const void *)in);
    _mm512_storeu_si512((void *)out, _mm512_maskz_compress_epi64((__mmask8)m, p));
    return __builtin_popcount(m);
}

SC_VFN vd vexp_neg(vd t)
{
    const vd lo = _mm512_set1_pd(SC_EXP_MIN_ARG);
    vd tc = _mm512_max_pd(t, lo); /* NaN in t -> lo (second operand), masked below */
    vd kd = _mm512_fmadd_pd(tc, _mm512_set1_pd(SC_EXP_LOG2E), _mm512_set1_pd(SC_EXP_MAGIC));
    vd k = _mm512_sub_pd(kd, _mm512_set1_pd(SC_EXP_MAGIC));
    vd r = _mm512_fnmadd_pd(k, _mm512_set1_pd(SC_EXP_LN2HI), tc);
    vd p;
    __m512i e;
    r = _mm512_fnmadd_pd(k, _mm512_set1_pd(SC_EXP_LN2LO), r);
    SC_EXP_POLY(p, r, vfma, vmul, vset1);
    e = _mm512_slli_epi64(_mm512_castpd_si512(kd), 52);
    e = _mm512_add_epi64(e, _mm512_set1_epi64((long long)1023 << 52));
    /* AVX-512F has no _mm512_and_pd (that is AVX512DQ): zero by mask instead */
    return _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(t, lo, _CMP_GE_OQ),
                               _mm512_mul_pd(p, _mm512_castsi512_pd(e)));
}

#endif /* SC_VEC_AVX512_H */
