"""Computational geometry of plane polygons, for the shape constructors.

Orientation, area and centroid of a polygon, the check that it is simple, intersection of
segments, ear-clipping triangulation and extrusion of a polygon into a closed prism mesh.
Inputs are plain float64 arrays, already validated by the caller.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "cross2",
    "signed_area",
    "polygon_centroid",
    "simple_polygon_ccw",
    "segments_intersect",
    "ear_clip",
    "extrude",
]


def cross2(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """z component of the cross product of 2D vectors, batched over leading dimensions."""
    return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]


def signed_area(v: np.ndarray) -> float:
    """Shoelace area, > 0 for counter-clockwise vertices."""
    return 0.5 * float(np.sum(cross2(v, np.roll(v, -1, axis=0))))


def polygon_centroid(v: np.ndarray) -> np.ndarray:
    """Centroid of the region bounded by a simple polygon."""
    w = np.roll(v, -1, axis=0)
    cr = cross2(v, w)
    return np.sum((v + w) * cr[:, None], axis=0) / (3.0 * np.sum(cr))


def simple_polygon_ccw(v: np.ndarray) -> np.ndarray:
    """Check that ``v`` is a simple polygon; return its vertices counter-clockwise.

    Raises ValueError (naming ``vertices``) for a zero-length edge, a zero area, two
    adjacent edges folding back onto each other, or two non-adjacent edges that meet.
    """
    k = len(v)
    size = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))
    e = np.roll(v, -1, axis=0) - v
    length = np.linalg.norm(e, axis=1)
    short = np.flatnonzero(length <= 1e-12 * size)
    if short.size:
        i = int(short[0])
        raise ValueError(
            f"vertices must not repeat consecutively (zero-length edge {i} -> {(i + 1) % k}); "
            "do not repeat the first vertex at the end"
        )
    area = signed_area(v)
    if abs(area) <= 1e-12 * size * size:
        raise ValueError(f"vertices must enclose a nonzero area, got signed area {area!r}")

    tol = 1e-12 * size * size  # cross products have units of length^2
    # adjacent edges fold back onto each other if collinear and opposite
    nxt = np.roll(e, -1, axis=0)
    fold = np.flatnonzero((np.abs(cross2(e, nxt)) <= tol) & (np.einsum("ij,ij->i", e, nxt) < 0))
    if fold.size:
        i = int(fold[0])
        raise ValueError(
            f"vertices must form a simple polygon, but edges {i} and {(i + 1) % k} "
            "fold back onto each other"
        )
    # every pair of non-adjacent edges must be disjoint (O(K^2) time, O(K) memory)
    a_all, b_all = v, v + e
    for i in range(k - 2):
        j = np.arange(i + 2, k if i > 0 else k - 1)  # edge k-1 is adjacent to edge 0
        if j.size == 0:
            continue
        hit = segments_intersect(a_all[i], b_all[i], a_all[j], b_all[j], tol, 1e-12 * size)
        if hit.any():
            jj = int(j[np.argmax(hit)])
            raise ValueError(
                f"vertices must form a simple polygon, but edge {i} ({i} -> {i + 1}) "
                f"intersects edge {jj} ({jj} -> {(jj + 1) % k})"
            )
    return v if area > 0 else v[::-1].copy()


def segments_intersect(a, b, c, d, tol, slack):
    """Whether segment ``ab`` meets each segment ``c[m] d[m]`` (touching counts).

    ``tol`` (length^2) decides when an orientation is zero, ``slack`` (length) pads the
    bounding-box test of touching points.
    """

    def on_segment(p, q, r):  # r within the bounding box of pq (collinearity checked apart)
        lo, hi = np.minimum(p, q), np.maximum(p, q)
        return np.all((r >= lo - slack) & (r <= hi + slack), axis=-1)

    d1 = cross2(b - a, c - a)
    d2 = cross2(b - a, d - a)
    d3 = cross2(d - c, a - c)
    d4 = cross2(d - c, b - c)
    proper = (((d1 > tol) & (d2 < -tol)) | ((d1 < -tol) & (d2 > tol))) & (
        ((d3 > tol) & (d4 < -tol)) | ((d3 < -tol) & (d4 > tol))
    )
    touch = (
        ((np.abs(d1) <= tol) & on_segment(a, b, c))
        | ((np.abs(d2) <= tol) & on_segment(a, b, d))
        | ((np.abs(d3) <= tol) & on_segment(c, d, a))
        | ((np.abs(d4) <= tol) & on_segment(c, d, b))
    )
    return proper | touch


def ear_clip(v: np.ndarray) -> np.ndarray:
    """Triangulate a simple counter-clockwise polygon; (K-2, 3) counter-clockwise triangles."""
    idx = list(range(len(v)))
    tris: list[tuple[int, ...]] = []
    while len(idx) > 3:
        for pos in range(len(idx)):
            i0, i1, i2 = idx[pos - 1], idx[pos], idx[(pos + 1) % len(idx)]
            a, b, c = v[i0], v[i1], v[i2]
            if cross2(b - a, c - a) <= 0:  # reflex or flat corner: not an ear
                continue
            others = [j for j in idx if j not in (i0, i1, i2)]
            q = v[others]
            inside = (
                (cross2(b - a, q - a) >= 0)
                & (cross2(c - b, q - b) >= 0)
                & (cross2(a - c, q - c) >= 0)
            )
            if not inside.any():
                tris.append((i0, i1, i2))
                del idx[pos]
                break
        else:  # cannot happen for a simple polygon without flat corners (two-ears theorem)
            raise RuntimeError("ear clipping found no ear; the polygon is not simple")
    tris.append(tuple(idx))
    return np.array(tris, dtype=np.int64)


def extrude(v: np.ndarray, half_height: float) -> tuple[np.ndarray, np.ndarray]:
    """Closed triangle mesh of the prism over a counter-clockwise polygon, outward faces.

    Returns ``(vertices, faces)``: the polygon at ``z = -half_height`` then at
    ``z = +half_height``, caps by :func:`ear_clip`, two triangles per side.
    """
    k = len(v)
    verts = np.concatenate(
        [
            np.column_stack([v, np.full(k, -half_height)]),
            np.column_stack([v, np.full(k, half_height)]),
        ]
    )
    cap = ear_clip(v)
    faces = [cap[:, ::-1], cap + k]  # bottom faces down, top faces up
    i = np.arange(k)
    j = (i + 1) % k
    faces.append(np.column_stack([i, j, j + k]))
    faces.append(np.column_stack([i, j + k, i + k]))
    return verts, np.concatenate(faces)
