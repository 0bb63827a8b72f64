/*
 * sc_isa_internal.h - compiling a translation unit for one x86 instruction set (internal).
 *
 * The library is built for the baseline ISA; the per-ISA kernels (sc_ssdf_avx2.c, ...)
 * compile their functions for a wider target between SC_TARGET_BEGIN and SC_TARGET_END,
 * and run only where sc_isa_supported says the CPU can.  Elsewhere (not x86, or another
 * compiler) SC_X86_DISPATCH is 0 and those files define their tables empty.
 */
#ifndef SC_ISA_INTERNAL_H
#define SC_ISA_INTERNAL_H

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #define SC_X86_DISPATCH 1
#else
    #define SC_X86_DISPATCH 0
#endif

#define SC__PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
    #define SC_TARGET_BEGIN(t)                                                                     \
        SC__PRAGMA(clang attribute push(__attribute__((target(t))), apply_to = function))
    #define SC_TARGET_END SC__PRAGMA(clang attribute pop)
#else
    #define SC_TARGET_BEGIN(t) SC__PRAGMA(GCC push_options) SC__PRAGMA(GCC target(t))
    #define SC_TARGET_END SC__PRAGMA(GCC pop_options)
#endif

#endif /* SC_ISA_INTERNAL_H */
