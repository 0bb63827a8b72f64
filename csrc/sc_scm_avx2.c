/*
 * sc_scm_avx2.c - the contact model (sc_scm.c) compiled again for x86-64 AVX2, as
 * sc__contact_avx2.  No FMA in the target and -ffp-contract=off: the same operations in
 * the same order as the portable variant, on wider vectors, hence the same bits (the C
 * harness checks it).  sc_contact calls it only when sc_isa_supported(SC_ISA_AVX2).
 */
#include "sc_contact.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))

    #if defined(__clang__)
        #pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
    #else
        #pragma GCC push_options
        #pragma GCC target("avx2")
    #endif

    #define SC_SCM_VARIANT 1
    #define SC_SCM_CONTACT sc__contact_avx2
    #include "sc_scm.c"

    #if defined(__clang__)
        #pragma clang attribute pop
    #else
        #pragma GCC pop_options
    #endif

#else

SC__CONTACT_UNSUPPORTED(sc__contact_avx2)

#endif
