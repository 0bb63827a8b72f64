/*
 * sc_vec_avx2.h - AVX2+FMA primitives (4 doubles) for the kernel template
 * sc_ssdf_kernel.h.  Include only from a translation unit compiled for that
 * target (see sc_ssdf_avx2.c).
 *
 * Contract shared by every sc_vec_*.h: type vd, width VW, vset1, vload/vstore
 * (unaligned), vadd, vsub, vmul, vdiv, vfma(a, b, c) = a*b + c, vmax (never given
 * NaN), vall_lt, vall_zero, vmask_gt/vmask_ge (lane k as bit k), vselect_gt,
 * vkeep_ptrs, vhsum, vexp_neg (sc_exp.h algorithm, t <= 0).
 */
#ifndef SC_VEC_AVX2_H
#define SC_VEC_AVX2_H

#include <immintrin.h>

#include "sc_exp.h"

typedef __m256d vd;
#define VW 4
#define SC_VFN static inline __attribute__((always_inline))

SC_VFN vd vset1(double a)
{
    return _mm256_set1_pd(a);
}
SC_VFN vd vload(const double *p)
{
    return _mm256_loadu_pd(p);
}
SC_VFN void vstore(double *p, vd a)
{
    _mm256_storeu_pd(p, a);
}
SC_VFN vd vadd(vd a, vd b)
{
    return _mm256_add_pd(a, b);
}
SC_VFN vd vsub(vd a, vd b)
{
    return _mm256_sub_pd(a, b);
}
SC_VFN vd vmul(vd a, vd b)
{
    return _mm256_mul_pd(a, b);
}
SC_VFN vd vdiv(vd a, vd b)
{
    return _mm256_div_pd(a, b);
}
SC_VFN vd vfma(vd a, vd b, vd c)
{
    return _mm256_fmadd_pd(a, b, c);
}
SC_VFN vd vmax(vd a, vd b)
{
    return _mm256_max_pd(a, b);
}
/* every lane a < b (false where either is NaN) */
SC_VFN int vall_lt(vd a, vd b)
{
    return _mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_LT_OQ)) == 0xF;
}
/* bit k set where lane k has a > b (gt) or a >= b (ge); clear where either is NaN */
SC_VFN unsigned vmask_gt(vd a, vd b)
{
    return (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_GT_OQ));
}
SC_VFN unsigned vmask_ge(vd a, vd b)
{
    return (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_GE_OQ));
}
/* every lane exactly zero */
SC_VFN int vall_zero(vd a)
{
    return _mm256_movemask_pd(_mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_EQ_OQ)) == 0xF;
}
/* per lane: a > b ? x : y */
SC_VFN vd vselect_gt(vd a, vd b, vd x, vd y)
{
    return _mm256_blendv_pd(y, x, _mm256_cmp_pd(a, b, _CMP_GT_OQ));
}

/* the sum of the lanes in a fixed pairwise order, (a0 + a2) + (a1 + a3): a tree, shorter
   than a chain of three dependent adds */
SC_VFN double vhsum(vd a)
{
    const __m128d b = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    return _mm_cvtsd_f64(_mm_add_sd(b, _mm_unpackhi_pd(b, b)));
}

/* the pointers in[l] of the lanes l set in m, stored contiguously at out; returns how
   many (out has room for VW entries; branch-free) */
SC_VFN int vkeep_ptrs(const double **out, const double *const *in, unsigned m)
{
    int k = 0, l;
    for (l = 0; l < VW; l++) {
        out[k] = in[l];
        k += (int)((m >> l) & 1u);
    }
    return k;
}

SC_VFN vd vexp_neg(vd t)
{
    const vd lo = _mm256_set1_pd(SC_EXP_MIN_ARG);
    vd tc = _mm256_max_pd(t, lo); /* NaN in t -> lo (second operand), masked below */
    vd kd = _mm256_fmadd_pd(tc, _mm256_set1_pd(SC_EXP_LOG2E), _mm256_set1_pd(SC_EXP_MAGIC));
    vd k = _mm256_sub_pd(kd, _mm256_set1_pd(SC_EXP_MAGIC));
    vd r = _mm256_fnmadd_pd(k, _mm256_set1_pd(SC_EXP_LN2HI), tc);
    vd p;
    __m256i e;
    r = _mm256_fnmadd_pd(k, _mm256_set1_pd(SC_EXP_LN2LO), r);
    SC_EXP_POLY(p, r, vfma, vmul, vset1);
    e = _mm256_slli_epi64(_mm256_castpd_si256(kd), 52);
    e = _mm256_add_epi64(e, _mm256_set1_epi64x((long long)1023 << 52));
    return _mm256_and_pd(_mm256_mul_pd(p, _mm256_castsi256_pd(e)),
                         _mm256_cmp_pd(t, lo, _CMP_GE_OQ));
}

#endif /* SC_VEC_AVX2_H */
