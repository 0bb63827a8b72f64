/*
 * sc_status.c - status messages and instruction-set detection.
 */
#include "sc_common.h"

const char *sc_status_str(int status)
{
    switch (status) {
    case SC_OK:
        return "success";
    case SC_EINVAL:
        return "invalid argument";
    case SC_ENOMEM:
        return "out of memory";
    case SC_ENONFINITE:
        return "non-finite value";
    case SC_ENOCONV:
        return "did not converge";
    case SC_ESINGULAR:
        return "singular matrix";
    case SC_EUNSUPPORTED:
        return "instruction set not supported by this CPU or build";
    case SC_ETHREAD:
        return "could not start a worker thread";
    default:
        return status > 0 ? "unknown warning" : "unknown error";
    }
}

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #define SC_X86_DISPATCH 1
#else
    #define SC_X86_DISPATCH 0
#endif

int sc_isa_supported(int isa)
{
    switch (isa) {
    case SC_ISA_GENERIC:
        return 1;
#if SC_X86_DISPATCH
    case SC_ISA_AVX2:
        /* __builtin_cpu_supports also checks that the OS saves the YMM state */
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SC_ISA_AVX512:
        return __builtin_cpu_supports("avx512f");
#endif
    default:
        return 0;
    }
}

int sc_isa_best(void)
{
    if (sc_isa_supported(SC_ISA_AVX512)) {
        return SC_ISA_AVX512;
    }
    if (sc_isa_supported(SC_ISA_AVX2)) {
        return SC_ISA_AVX2;
    }
    return SC_ISA_GENERIC;
}

int sc_isa_resolve(int isa)
{
    const int dense = SC_IS_DENSE(isa) ? SC_DENSE : 0;
    isa -= dense;
    if (isa == SC_ISA_AUTO) {
        return sc_isa_best() + dense;
    }
    if (isa != SC_ISA_GENERIC && isa != SC_ISA_AVX2 && isa != SC_ISA_AVX512) {
        return SC_EINVAL;
    }
    return sc_isa_supported(isa) ? isa + dense : SC_EUNSUPPORTED;
}

const char *sc_isa_name(int isa)
{
    if (SC_IS_DENSE(isa)) {
        isa -= SC_DENSE;
    }
    switch (isa) {
    case SC_ISA_GENERIC:
        return "generic";
    case SC_ISA_AVX2:
        return "avx2";
    case SC_ISA_AVX512:
        return "avx512";
    default:
        return "unknown";
    }
}
