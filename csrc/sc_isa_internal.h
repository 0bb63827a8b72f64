/*
 * sc_isa_internal.h - compiling a translation unit for one x86 instruction set (internal).
 *
 * The library is built for the baseline ISA; the per-ISA kernels (sc_ssdf_avx2.c, ...)
 * compile their functions for a wider target between SC_TARGET_BEGIN and SC_TARGET_END,
 * and run only where sc_isa_supported says the CPU can.  Elsewhere (not x86, or another
 * compiler) SC_X86_DISPATCH is 0 and those files define their tables empty; defining
 * SC_PORTABLE_ONLY (-DSC_PORTABLE_ONLY) does the same on x86, for a build of the portable
 * kernels alone (CI's sanitizer build of the extension: the C harness covers the x86
 * variants under the sanitizers).
 */
#ifndef SC_ISA_INTERNAL_H
#define SC_ISA_INTERNAL_H

#if defined(SC_PORTABLE_ONLY)
    #define SC_X86_DISPATCH 0
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
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
