/*
 * sc_status.c - status messages and instruction-set detection.
 */
#include "sc_common.h"
#include "sc_isa_internal.h"

const char *sc_status_str(int status)
{
    switch (status) {
    case SC_OK: return "success";
    case SC_EINVAL: return "invalid argument";
    case SC_ENOMEM: return "out of memory";
    case SC_ENONFINITE: return "non-finite value";
    case SC_ENOTUNIT: return "quaternion not of unit norm";
    case SC_EUNSUPPORTED: return "instruction set not supported by this CPU or build";
    case SC_EDIVERGED: return "the simulation diverged";
    case SC_EINTERRUPTED: return "interrupted";
    case SC_ERANGE: return "value outside its valid range";
    default: return status > 0 ? "unknown warning" : "unknown error";
    }
}

int sc_isa_supported(int isa)
{
    switch (isa) {
    case SC_ISA_GENERIC: return 1;
#if SC_X86_DISPATCH
    case SC_ISA_AVX2:
        /* __builtin_cpu_supports also checks that the OS saves the YMM state */
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SC_ISA_AVX512: return __builtin_cpu_supports("avx512f");
#endif
    default: return 0;
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
    if (isa == SC_ISA_AUTO) {
        return sc_isa_best();
    }
    if (isa != SC_ISA_GENERIC && isa != SC_ISA_AVX2 && isa != SC_ISA_AVX512) {
        return SC_EINVAL;
    }
    return sc_isa_supported(isa) ? isa : SC_EUNSUPPORTED;
}

const char *sc_isa_name(int isa)
{
    switch (isa) {
    case SC_ISA_GENERIC: return "generic";
    case SC_ISA_AVX2: return "avx2";
    case SC_ISA_AVX512: return "avx512";
    default: return "unknown";
    }
}

int sc_options_resolve(const sc_options *opt, sc_options *out)
{
    static const sc_options defaults = SC_OPTIONS_DEFAULT;
    const sc_options *o = opt ? opt : &defaults;
    const int isa = sc_isa_resolve(o->isa);
    if (out == NULL) {
        return SC_EINVAL;
    }
    if (isa < 0) {
        return isa;
    }
    if (o->nthreads < 1) {
        return SC_EINVAL;
    }
    out->isa = isa;
    out->dense = o->dense != 0;
    out->nthreads = o->nthreads;
    out->interrupt = o->interrupt;
    return SC_OK;
}
