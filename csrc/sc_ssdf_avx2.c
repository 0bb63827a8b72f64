/*
 * sc_ssdf_avx2.c - the SSDF row kernel compiled for x86-64 AVX2 + FMA.
 * Only this translation unit is compiled for that target (function-level
 * target pragma), so the library stays runnable on any x86-64 CPU; sc_ssdf
 * calls it only when sc_isa_supported(SC_ISA_AVX2).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sc_ssdf.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))

    #if defined(__clang__)
        #pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
    #else
        #pragma GCC push_options
        #pragma GCC target("avx2,fma")
    #endif

    #include "sc_vec_avx2.h"
    #define SC_SSDF_ROWS sc__ssdf_rows_avx2
    #define SC_SSDF_BEST sc__ssdf_best_avx2
    #define SC_SSDF_KEEP sc__ssdf_keep_avx2
    #define SC_SSDF_LEAFMAX sc__ssdf_leafmax_avx2
    #define SC_SSDF_LIST sc__ssdf_list_avx2
    #include "sc_ssdf_impl.h"

    #if defined(__clang__)
        #pragma clang attribute pop
    #else
        #pragma GCC pop_options
    #endif

#else

int sc__ssdf_rows_avx2(const sc__blocks *B, int dim, double eps, ptrdiff_t m,
                       const double *x, double *work, double *phi, double *g, double *h,
                       double *t)
{
    (void)B, (void)dim, (void)eps, (void)m, (void)x, (void)work, (void)phi, (void)g, (void)h,
        (void)t;
    return SC_EUNSUPPORTED;
}

double sc__ssdf_best_avx2(const sc__cands *C, int dim, const double *xq, double ie,
                          double *ub)
{
    (void)C, (void)dim, (void)xq, (void)ie, (void)ub;
    return NAN;
}

ptrdiff_t sc__ssdf_keep_avx2(const sc__cands *C, const double *ub, double cut,
                             const double **ptr)
{
    (void)C, (void)ub, (void)cut, (void)ptr;
    return 0;
}

double sc__ssdf_leafmax_avx2(const double *blk, int dim, const double *xq, double ie)
{
    (void)blk, (void)dim, (void)xq, (void)ie;
    return NAN;
}

ptrdiff_t sc__ssdf_list_avx2(const sc__cands *C, int dim, const double *xq, double ie,
                             double cut, const double **ptr)
{
    (void)C, (void)dim, (void)xq, (void)ie, (void)cut, (void)ptr;
    return 0;
}

#endif
