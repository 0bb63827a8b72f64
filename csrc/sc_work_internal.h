/*
 * sc_work_internal.h - carving a kernel's typed scratch out of the caller's buffer
 * (internal).
 *
 * Kernels take their scratch as one buffer of doubles (its size from the kernel's
 * *_workspace_size).  Each kernel lays its regions out with one function that serves both
 * its size (base NULL) and its pointers, region by region with sc__take, so the two cannot
 * disagree.  Regions of other types (indices, pointers, keys) start on a double boundary,
 * which is aligned for every type used.
 */
#ifndef SC_WORK_INTERNAL_H
#define SC_WORK_INTERNAL_H

#include "sc_common.h"

/* n items of `size` bytes at *off doubles into base (base NULL: only *off advances) */
static inline void *sc__take(double *base, ptrdiff_t *off, ptrdiff_t n, size_t size)
{
    void *p = base ? (void *)(base + *off) : NULL;
    *off += (n * (ptrdiff_t)size + (ptrdiff_t)sizeof(double) - 1) / (ptrdiff_t)sizeof(double);
    return p;
}

#endif /* SC_WORK_INTERNAL_H */
