/*
 * sc_ssdf_avx2.c - the SSDF kernel compiled for x86-64 AVX2 + FMA.  Only this translation unit is
 * compiled for that target, so the library stays runnable on any x86-64 CPU; sc_ssdf
 * selects it only where sc_isa_supported(SC_ISA_AVX2).
 */
#include "sc_isa_internal.h"
#include "sc_ssdf_internal.h"

#if SC_X86_DISPATCH

SC_TARGET_BEGIN("avx2,fma")
    #include "sc_vec_avx2.h"
    #define SC_SSDF_VARIANT sc__ssdf_avx2
    #include "sc_ssdf_kernel.h"
SC_TARGET_END

#else

const sc__ssdf_isa sc__ssdf_avx2 = {NULL, NULL, NULL, NULL, NULL};

#endif
