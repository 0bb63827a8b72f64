"""Sampling surfaces into oriented samples, for the shape constructors.

The sample budget (:data:`MAX_SAMPLES`) and the checks every constructor applies to its
arguments and samples; sampling the edges of a polygon and the faces of a triangle mesh
(a barycentric lattice per face, with the samples that faces share merged).  Each sampler
returns ``(points, normals, weights)``, with normals outward and weights the length (2D)
or area (3D) each sample stands for.
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import as_positive_float

__all__ = [
    "MAX_SAMPLES",
    "LENGTH_RANGE",
    "ZERO_NORM",
    "check_finite",
    "as_length",
    "check_extent",
    "as_spacing",
    "too_many",
    "check_count",
    "n_segments",
    "sample_polygon_edges",
    "triangle_lattice",
    "sample_mesh",
    "merge_duplicates",
]

#: Largest number of samples a constructor may create; a smaller ``spacing`` is an error.
MAX_SAMPLES = 5_000_000

ZERO_NORM = 1e-12  # a normal shorter than this cannot be normalized

#: Lengths the shape constructors accept, in metres: radii, half extents, half lengths and
#: the size of a polygon or a mesh (the diagonal of its vertices' bounding box) at least
#: the first, and every coordinate, radius and half extent at most the second in absolute
#: value.  Within it, lengths to the fifth power (a face's squared area while sampling, the
#: inertia of a solid of unit density) are normal floats: nothing overflows or underflows.
LENGTH_RANGE = (1e-60, 1e60)


def check_finite(a: np.ndarray, name: str) -> None:
    """Raise ValueError naming ``name`` and the first non-finite entry's index or row."""
    bad = ~np.isfinite(a)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        if a.ndim == 1:
            loc = f" at index {where[0]}"
        elif a.ndim == 2:
            loc = f" in row {where[0]}"
        else:
            loc = ""
        raise ValueError(f"{name} must be finite, got {float(a[where])!r}{loc}")


def as_length(v, name: str, *, allow_zero: bool = False) -> float:
    """A length argument (a radius, a half extent) as a float in :data:`LENGTH_RANGE` (or
    0 with ``allow_zero``)."""
    f = as_positive_float(v, name, allow_zero=allow_zero)
    lo, hi = LENGTH_RANGE
    if (f < lo and not (allow_zero and f == 0)) or f > hi:
        zero = "0 or " if allow_zero else ""
        raise ValueError(f"{name} must be {zero}in [{lo:g}, {hi:g}] (metres), got {f!r}")
    return f


def check_extent(v: np.ndarray, name: str) -> None:
    """Vertices (finite, (K, D)) whose coordinates are at most ``LENGTH_RANGE[1]`` in
    absolute value and whose bounding-box diagonal is at least ``LENGTH_RANGE[0]``."""
    lo, hi = LENGTH_RANGE
    big = float(np.max(np.abs(v)))
    if big > hi:
        raise ValueError(
            f"{name} must have coordinates within [-{hi:g}, {hi:g}] (metres), got {big:.6g}"
        )
    span = np.max(v, axis=0) - np.min(v, axis=0)
    top = float(np.max(span))
    size = top * float(np.linalg.norm(span / top)) if top > 0 else 0.0  # no underflow
    if size < lo:
        raise ValueError(
            f"{name} must span at least {lo:g} (metres; the diagonal of their bounding box), "
            f"got {size:.6g}"
        )


def as_spacing(spacing) -> float:
    """The ``spacing`` argument of a constructor as a finite float > 0."""
    return as_positive_float(spacing, "spacing")


def too_many(count, spacing):
    """Refuse a ``spacing`` that would give ``count`` samples, beyond the budget."""
    raise ValueError(
        f"spacing={spacing!r} is too small: it would give about {count:.3g} samples "
        f"(at most {MAX_SAMPLES} allowed)"
    )


def check_count(count: float, spacing: float) -> None:
    """Refuse ``count`` samples if it exceeds the budget."""
    if count > MAX_SAMPLES:
        too_many(count, spacing)


def n_segments(length: float, spacing: float) -> int:
    """``max(1, ceil(length / spacing))``, refusing counts beyond MAX_SAMPLES."""
    ratio = length / spacing
    if not math.isfinite(ratio) or ratio > MAX_SAMPLES:
        too_many(ratio, spacing)
    return max(1, math.ceil(ratio))


def sample_polygon_edges(
    v: np.ndarray, spacing: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample each edge of a counter-clockwise polygon, endpoints included, trapezoid weights."""
    k = len(v)
    segs = []
    for i in range(k):
        segs.append(n_segments(float(np.linalg.norm(v[(i + 1) % k] - v[i])), spacing))
    check_count(sum(segs) + k, spacing)
    pts, nrms, wts = [], [], []
    for i, m in enumerate(segs):
        a, b = v[i], v[(i + 1) % k]
        e = b - a
        length = math.hypot(e[0], e[1])
        t = np.arange(m + 1) / m
        pts.append((1.0 - t)[:, None] * a + t[:, None] * b)
        nrms.append(np.tile([e[1] / length, -e[0] / length], (m + 1, 1)))
        w = np.full(m + 1, length / m)
        w[[0, -1]] *= 0.5
        wts.append(w)
    return np.concatenate(pts), np.concatenate(nrms), np.concatenate(wts)


def triangle_lattice(k: int):
    """Barycentric lattice of a triangle subdivided k times.

    Returns the indices ``i, j`` (``i + j <= k``) of the lattice points, the number of the
    ``k^2`` sub-triangles touching each (1 at corners, 3 on edges, 6 inside), and for each
    triangle edge (ab, bc, ca) the positions of its ``k - 1`` inner points, ordered from the
    edge's first vertex.
    """
    i = np.repeat(np.arange(k + 1), k + 1 - np.arange(k + 1))
    start = np.concatenate([[0], np.cumsum(k + 1 - np.arange(k))])
    j = np.arange(i.size) - start[i]
    on_edge = (i == 0) | (j == 0) | (i + j == k)
    corner = ((i == 0) & (j == 0)) | (i == k) | (j == k)
    touching = np.where(corner, 1, np.where(on_edge, 3, 6))
    m = np.arange(1, k)

    def pos(ii, jj):
        return start[ii] + jj

    edges = (pos(m, 0 * m), pos(k - m, m), pos(0 * m, k - m))
    return i, j, touching, edges


def sample_mesh(verts: np.ndarray, f: np.ndarray, spacing: float, size: float):
    """Lattice samples of every nonzero-area face, duplicates merged."""
    a, b, c = verts[f[:, 0]], verts[f[:, 1]], verts[f[:, 2]]
    cr = np.cross(b - a, c - a)
    dbl_area = np.linalg.norm(cr, axis=1)
    keep = dbl_area > 2e-14 * size * size  # area > 1e-14 L^2
    f, a, b, c, cr, dbl_area = f[keep], a[keep], b[keep], c[keep], cr[keep], dbl_area[keep]
    normal = cr / dbl_area[:, None]
    longest = np.sqrt(
        np.max([np.sum((b - a) ** 2, 1), np.sum((c - b) ** 2, 1), np.sum((a - c) ** 2, 1)], axis=0)
    )
    with np.errstate(over="ignore"):  # a spacing as small as 5e-324: inf, refused below
        ratio = longest / spacing
    if not np.all(np.isfinite(ratio)) or ratio.max() > MAX_SAMPLES:
        too_many(float(ratio.max()), spacing)
    ks = np.maximum(1, np.ceil(ratio)).astype(np.int64)
    check_count(int(np.sum((ks + 1) * (ks + 2) // 2)), spacing)

    pts, nrms, wts = [], [], []
    corners = (a, b, c)
    for k in np.unique(ks):
        k = int(k)
        sel = np.flatnonzero(ks == k)
        i, j, touching, edge_pos = triangle_lattice(k)
        l0, l1, l2 = (k - i - j) / k, i / k, j / k
        ca, cb, cc = (x[sel] for x in corners)
        p = l0[None, :, None] * ca[:, None] + l1[None, :, None] * cb[:, None]
        p += l2[None, :, None] * cc[:, None]
        # inner points of each edge, computed from the lower-index endpoint so that the two
        # faces sharing the edge give bitwise identical points
        steps_fwd = np.arange(1, k)[None, :]
        for e, (s, t) in enumerate(((0, 1), (1, 2), (2, 0)) if k > 1 else ()):
            fwd = (f[sel, s] < f[sel, t])[:, None]
            lo = np.where(fwd, corners[s][sel], corners[t][sel])[:, None, :]
            hi = np.where(fwd, corners[t][sel], corners[s][sel])[:, None, :]
            steps = np.where(fwd, steps_fwd, k - steps_fwd)[..., None]
            p[:, edge_pos[e]] = ((k - steps) / k) * lo + (steps / k) * hi
        pts.append(p.reshape(-1, 3))
        nrms.append(np.repeat(normal[sel], i.size, axis=0))
        wts.append((0.5 * dbl_area[sel] / (3 * k * k))[:, None] * touching[None, :])
    all_pts = np.concatenate(pts)
    all_nrms = np.concatenate(nrms)
    all_wts = np.concatenate([w.ravel() for w in wts])
    return merge_duplicates(all_pts, all_nrms, all_wts, 1e-12 * size, 1e-12)


def merge_duplicates(p: np.ndarray, n: np.ndarray, w: np.ndarray, tol_p: float, tol_n: float):
    """Merge samples with the same point (within tol_p) and normal (within tol_n).

    Points are grouped by rounding to a grid of step ``tol_p``; within a group, each sample
    joins the first earlier sample whose normal agrees within ``tol_n`` in every component.
    The merged sample keeps the first one's point and normal and the sum of the weights.
    """
    centre = 0.5 * (p.min(axis=0) + p.max(axis=0))
    keys = np.rint((p - centre) / tol_p).astype(np.int64)
    _, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.ravel()
    order = np.argsort(group, kind="stable")
    gs = group[order]
    first = np.arange(p.shape[0])  # in sorted positions: the earliest equal sample
    shift = 1
    active = np.flatnonzero(gs[1:] == gs[:-1])  # positions whose successor is in the group
    while active.size:
        later = active + shift
        same = np.all(np.abs(n[order[active]] - n[order[later]]) <= tol_n, axis=1)
        np.minimum.at(first, later[same], active[same])
        shift += 1
        active = active[active + shift < p.shape[0]]
        active = active[gs[active + shift] == gs[active]]
    while True:  # follow chains to the earliest representative
        nxt = first[first]
        if np.array_equal(nxt, first):
            break
        first = nxt
    rep = np.empty_like(order)
    rep[order] = order[first]
    reps, inverse = np.unique(rep, return_inverse=True)
    return p[reps], n[reps], np.bincount(inverse.ravel(), weights=w, minlength=reps.size)
