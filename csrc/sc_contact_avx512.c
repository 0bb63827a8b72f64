/*
 * sc_contact_avx512.c - the contact model compiled for x86-64 AVX-512F, with 8 samples per
 * lane group in the first-order pass (one AVX-512 vector).  -ffp-contract=off: the same
 * operations in the same order as the portable variant on wider vectors, hence the same
 * bits (the C harness checks it); sc_contact selects it only where
 * sc_isa_supported(SC_ISA_AVX512).
 */
#include "sc_contact_internal.h"
#include "sc_isa_internal.h"

#if SC_X86_DISPATCH

SC_TARGET_BEGIN("avx512f")
    #define SC_SCM_VL 8
    #define SC_CONTACT_VARIANT sc__contact_avx512
    #include "sc_contact_kernel.h"
SC_TARGET_END

#else

const sc__contact_fn sc__contact_avx512 = NULL;

#endif
