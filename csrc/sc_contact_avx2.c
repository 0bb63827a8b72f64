/*
 * sc_contact_avx2.c - the contact model compiled for x86-64 AVX2.  No FMA and -ffp-contract=off:
 * the same operations in the same order as the portable variant on wider vectors, hence
 * the same bits (the C harness checks it); sc_contact selects it only where
 * sc_isa_supported(SC_ISA_AVX2).
 */
#include "sc_contact_internal.h"
#include "sc_isa_internal.h"

#if SC_X86_DISPATCH

SC_TARGET_BEGIN("avx2")
    #define SC_CONTACT_VARIANT sc__contact_avx2
    #include "sc_contact_kernel.h"
SC_TARGET_END

#else

const sc__contact_fn sc__contact_avx2 = NULL;

#endif
