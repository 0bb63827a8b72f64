/*
 * sc_scm_avx512.c - the contact model (sc_scm.c) compiled again for x86-64 AVX-512F, as
 * sc__contact_avx512, with 8 samples per lane group in the first-order lane pass (4 in
 * the other variants: one AVX-512 vector instead of two AVX2 ones).  -ffp-contract=off and
 * each lane doing the scalar pass's operations in its order: the same bits as the
 * portable variant (the C harness checks it).  sc_contact calls it only when the
 * resolved ISA is AVX-512 and sc_isa_supported(SC_ISA_AVX512).
 */
#include "sc_contact.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))

    #if defined(__clang__)
        #pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
    #else
        #pragma GCC push_options
        #pragma GCC target("avx512f")
    #endif

    #define SC_SCM_VARIANT 2
    #define SC_SCM_VL 8
    #define SC_SCM_CONTACT sc__contact_avx512
    #include "sc_scm.c"

    #if defined(__clang__)
        #pragma clang attribute pop
    #else
        #pragma GCC pop_options
    #endif

#else

SC__CONTACT_UNSUPPORTED(sc__contact_avx512)

#endif
