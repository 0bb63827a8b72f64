/*
 * sc_contact_avx512.c - the contact model compiled for x86-64 AVX-512F, with 8 samples per
 * lane group in the first-order pass (one AVX-512 vector).  -ffp-contract=off: the same
 * operations in the same order as the portable variant on wider vectors, hence the same
 * bits (the C harness checks it); sc_contact selects it only where
 * sc_isa_supported(SC_ISA_AVX512).
 */
#include "sc_isa_internal.h"

#if SC_X86_DISPATCH

/* every header of the kernel first included in the target region, so that their inline
   functions (the jets' operations) are compiled for it too */

SC_TARGET_BEGIN("avx512f")
    #define SC_CONTACT_VL 8
    #define SC_CONTACT_VARIANT sc__contact_avx512
    #include "sc_contact_kernel.h"
SC_TARGET_END

#else

    #include "sc_contact_internal.h"

const sc__contact_fn sc__contact_avx512 = NULL;

#endif
