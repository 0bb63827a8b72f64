/*
 * sc_common.h - status codes, ISA identifiers and small macros shared by the
 * softcontact C core.  Pure C11: no Python, no NumPy, no global state.
 */
#ifndef SC_COMMON_H
#define SC_COMMON_H

#include <assert.h>
#include <stddef.h>

/* Public symbols.  The library is linked statically into the extension module,
 * which is built with -fvisibility=hidden, so this stays empty. */
#define SC_API

/* Developer assumptions (not user errors): active unless NDEBUG. */
#define SC_ASSERT(cond) assert(cond)

/* Status codes (ERFA convention): 0 OK, < 0 error, > 0 warning. */
enum sc_status {
    SC_OK = 0,
    SC_EINVAL = -1,       /* invalid argument (size, range, NULL) */
    SC_ENOMEM = -2,       /* out of memory */
    SC_ENONFINITE = -3,   /* non-finite value where a finite one is required */
    SC_ENOCONV = -4,      /* iteration did not converge */
    SC_ESINGULAR = -5,    /* singular matrix */
    SC_EUNSUPPORTED = -6, /* requested instruction set not supported by this CPU/build */
    SC_ETHREAD = -7       /* a worker thread could not be started */
};

/* Instruction-set variants of the SIMD kernels (runtime dispatch). */
enum sc_isa {
    SC_ISA_AUTO = -1,   /* best supported by the running CPU */
    SC_ISA_GENERIC = 0, /* portable C, one lane */
    SC_ISA_AVX2 = 1,    /* x86-64 AVX2 + FMA, 4 lanes */
    SC_ISA_AVX512 = 2   /* x86-64 AVX-512F, 8 lanes */
};

/* Added to an ISA code (SC_ISA_AUTO .. SC_ISA_AVX512) to ask for the dense computation:
 * every sample of every cloud, no pruning (see sc_ssdf.h, "Pruning").  sc_isa_resolve
 * keeps it: it returns the resolved ISA plus SC_DENSE. */
#define SC_DENSE 16
/* whether an ISA code (requested or resolved) asks for the dense computation */
#define SC_IS_DENSE(isa) ((isa) >= SC_ISA_AUTO + SC_DENSE)

/* Largest SIMD width in doubles; packed clouds are padded to a multiple. */
#define SC_PAD 8

/*
 * Message for a status code (static string, never NULL).
 */
SC_API const char *sc_status_str(int status);

/*
 * Whether this build and the running CPU support an instruction set.
 *
 * Given:
 *   isa   int   one of SC_ISA_GENERIC, SC_ISA_AVX2, SC_ISA_AVX512
 * Returned (function value):
 *   1 if kernels can run with it, 0 otherwise (including unknown values).
 */
SC_API int sc_isa_supported(int isa);

/*
 * The best instruction set supported by this build and CPU.
 */
SC_API int sc_isa_best(void);

/*
 * Resolve a requested ISA: SC_ISA_AUTO becomes sc_isa_best().  A code plus SC_DENSE
 * resolves to the ISA plus SC_DENSE.
 *
 * Returned (function value):
 *   the ISA to run (plus SC_DENSE if asked), or SC_EINVAL for an unknown value, or
 *   SC_EUNSUPPORTED.
 */
SC_API int sc_isa_resolve(int isa);

/* Name of an ISA ("generic", "avx2", "avx512") or "unknown". */
SC_API const char *sc_isa_name(int isa);

#endif /* SC_COMMON_H */
