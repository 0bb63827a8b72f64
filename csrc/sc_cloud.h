/*
 * sc_cloud.h - oriented point clouds: the caller's view and the kernels' packed layout.
 *
 * A cloud holds n samples p_i (body frame, dimension D = 2 or 3) with outward unit normals
 * n_i and positive weights a_i.  sc_cloud_pack copies it once into the layout every kernel
 * reads (structure of arrays, padded, with a spatial index for large clouds; see
 * sc_cloud_internal.h); the packed buffer is the caller's and is never modified after.
 */
#ifndef SC_CLOUD_H
#define SC_CLOUD_H

#include "sc_common.h"

/* Oriented point cloud as the caller holds it (non-owning view). */
typedef struct sc_cloud {
    int dim;           /* 2 or 3 */
    ptrdiff_t n;       /* number of samples, >= 1 */
    const double *p;   /* n x dim sample points, row-major, body frame */
    const double *nrm; /* n x dim outward unit normals, row-major */
    const double *wts; /* n positive weights, or NULL for all ones */
} sc_cloud;

/* A packed cloud (non-owning view of a buffer filled by sc_cloud_pack). */
typedef struct sc_packed_cloud {
    int dim;
    ptrdiff_t n;
    ptrdiff_t npad; /* n rounded up to the SIMD padding */
    const double *data;
} sc_packed_cloud;

/*
 * Size of a packed cloud buffer (with its spatial index).
 *
 * Given:
 *   dim   int         2 or 3
 *   n     ptrdiff_t   number of samples, >= 1
 * Returned (function value):
 *   number of doubles of the buffer, or -1 if dim or n is invalid (or the
 *   size would overflow).
 */
SC_API ptrdiff_t sc_cloud_packed_size(int dim, ptrdiff_t n);

/*
 * Pack a cloud into the kernels' layout and describe it.
 *
 * Given:
 *   c        const sc_cloud*    cloud to pack
 * Returned:
 *   buf      double*            sc_cloud_packed_size(c->dim, c->n) doubles
 *   pc       sc_packed_cloud*   view of buf (may be NULL)
 * Returned (function value):
 *   SC_OK; SC_EINVAL for a bad dim/n/NULL pointer or a weight <= 0;
 *   SC_ENONFINITE if a point, normal or weight is not finite.  On error buf
 *   and pc are left in an unspecified state.
 * Notes:
 *   1) Normals are used as given; unit length is the caller's contract
 *      (checked once in the Python layer).
 *   2) Cost O(n log n) (the spatial index); memory about 3 (3 dim + 3) n doubles.
 */
SC_API int sc_cloud_pack(const sc_cloud *c, double *buf, sc_packed_cloud *pc);

/*
 * Describe a buffer that sc_cloud_pack filled for a cloud of n samples of dimension dim
 * (a buffer kept by the caller, e.g. across calls).
 *
 * Returned (function value):
 *   SC_OK; SC_EINVAL for a bad dim or n, or a NULL pointer.
 */
SC_API int sc_cloud_view(int dim, ptrdiff_t n, const double *buf, sc_packed_cloud *pc);

#endif /* SC_CLOUD_H */
