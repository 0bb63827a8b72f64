"""Computational geometry of plane polygons, for the shape constructors.

Orientation, area and centroid of a polygon, the check that it is simple (a sweep line over
its edges, O(K log K)), intersection of segments, ear-clipping triangulation and extrusion of
a polygon into a closed prism mesh.  Inputs are plain float64 arrays, already validated by
the caller.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "cross2",
    "signed_area",
    "polygon_centroid",
    "simple_polygon_ccw",
    "segments_intersect",
    "crossing_edges",
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
    # every pair of non-adjacent edges must be disjoint (O(K log K) time, O(K) memory)
    hit = crossing_edges(v, tol, 1e-12 * size)
    if hit is not None:
        i, j = hit
        raise ValueError(
            f"vertices must form a simple polygon, but edge {i} ({i} -> {i + 1}) "
            f"intersects edge {j} ({j} -> {(j + 1) % k})"
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


_CHECK_EVERY = 4096  # candidate pairs gathered between two vectorized checks of them


def crossing_edges(v: np.ndarray, tol: float, slack: float) -> tuple[int, int] | None:
    """Two non-adjacent edges ``(i, j)``, ``i < j``, of the closed polygon ``v`` (K, 2) that
    meet by :func:`segments_intersect` (with ``tol`` and ``slack``), or None if none do.
    The polygon has passed the checks :func:`simple_polygon_ccw` makes first (no edge
    shorter than ``slack``, no fold, a nonzero area).

    A sweep line in the manner of Shamos and Hoey, O(K log K): the vertices in
    lexicographic order (x, then y: a sweep line turned infinitesimally, so vertical edges
    need no special case) are the events; the edges the line crosses are kept ordered
    from below to above (by the orientation of an event point against each edge, ties
    broken by direction); each edge is tested against its neighbours when it enters, and
    the two edges that become neighbours when one leaves are tested.  If any two edges
    cross, the leftmost crossing is between two edges that were neighbours at an earlier
    event.  Touching is found the same way: at every event point the edges through it
    (a run of the order) are tested with each other (each with the next three: among four
    edges through one point two are not adjacent in the polygon) and with the edges just
    below and above the run, which also finds an edge passing within the tolerance of a
    vertex.  A second sweep with x and y exchanged finds an edge within the tolerance of
    a vertex just beyond the edge's x-extent (a near-vertical edge), which the first
    does not see.  The pairs are gathered and tested in batches with the same predicate
    as a test of every pair uses, so every pair returned meets by it; past the first
    crossing the order may be wrong, which costs time until the next batch but changes no
    result.

    The two sweeps find a pair whenever a test of every pair finds one, where the polygon
    touches or crosses itself exactly and in every randomized comparison of the tests
    (tests/test_geometry.py, near-touching polygons included); no proof covers touching
    within the tolerance (1e-12 of the polygon's size), where a test of every pair could
    still find a pair they miss.
    """
    for w in (v, np.ascontiguousarray(v[:, ::-1])):
        hit = _sweep(w, v, tol, slack)
        if hit is not None:
            return hit
    return None


def _sweep(w: np.ndarray, v: np.ndarray, tol: float, slack: float) -> tuple[int, int] | None:
    """One sweep of :func:`crossing_edges` in the coordinates ``w`` (``v``'s, or with x and
    y exchanged), testing the pairs it gathers on ``v``."""
    k = len(v)
    a = v
    b = np.roll(v, -1, axis=0)
    wa = w
    wb = np.roll(w, -1, axis=0)
    # each edge from its lexicographically smaller end (L) to its larger (R)
    flip = (wb[:, 0] < wa[:, 0]) | ((wb[:, 0] == wa[:, 0]) & (wb[:, 1] < wa[:, 1]))
    lo_end = np.where(flip[:, None], wb, wa)
    hi_end = np.where(flip[:, None], wa, wb)
    LX, LY = lo_end[:, 0].tolist(), lo_end[:, 1].tolist()
    DX, DY = (hi_end[:, 0] - lo_end[:, 0]).tolist(), (hi_end[:, 1] - lo_end[:, 1]).tolist()
    flips = flip.tolist()
    order = np.lexsort((w[:, 1], w[:, 0]))
    sv = w[order]
    # the first vertex of each run of equal points (a vertex repeated is one event)
    new_point = np.ones(k, dtype=bool)
    new_point[1:] = np.any(sv[1:] != sv[:-1], axis=1)
    starts = np.flatnonzero(new_point).tolist() + [k]
    order_l, xs, ys = order.tolist(), sv[:, 0].tolist(), sv[:, 1].tolist()

    status: list[int] = []  # edges crossing the sweep line, from below to above
    ci: list[int] = []  # candidate pairs
    cj: list[int] = []

    def check():
        i = np.array(ci, dtype=np.int64)
        j = np.array(cj, dtype=np.int64)
        ci.clear()
        cj.clear()
        gap = (i - j) % k
        keep = (gap != 0) & (gap != 1) & (gap != k - 1)  # neither the same nor adjacent
        i, j = np.minimum(i[keep], j[keep]), np.maximum(i[keep], j[keep])
        hit = segments_intersect(a[i], b[i], a[j], b[j], tol, slack)
        if not hit.any():
            return None
        pairs = sorted(zip(i[hit].tolist(), j[hit].tolist(), strict=True))
        return pairs[0]

    for g in range(len(starts) - 1):
        first, end = starts[g], starts[g + 1]
        px, py = xs[first], ys[first]
        entering: list[int] = []
        leaving: list[int] = []
        for m in range(first, end):
            j = order_l[m]  # vertex j ends edge j - 1 and starts edge j
            for e, starts_here in (((j - 1) % k, flips[(j - 1) % k]), (j, not flips[j])):
                (entering if starts_here else leaving).append(e)
        for s in entering:
            sdx, sdy = DX[s], DY[s]
            lo, hi = 0, len(status)
            while lo < hi:
                mid = (lo + hi) >> 1
                u = status[mid]
                o = DX[u] * (py - LY[u]) - DY[u] * (px - LX[u])
                if o > 0 or (o == 0 and DX[u] * sdy - DY[u] * sdx >= 0):
                    lo = mid + 1  # s enters above u
                else:
                    hi = mid
            status.insert(lo, s)
            if lo > 0:
                ci.append(status[lo - 1])
                cj.append(s)
            if lo + 1 < len(status):
                ci.append(s)
                cj.append(status[lo + 1])
        # the run of edges through the point, and the edges just below and above it
        n = len(status)
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) >> 1
            u = status[mid]
            if DX[u] * (py - LY[u]) - DY[u] * (px - LX[u]) > 0:
                lo = mid + 1
            else:
                hi = mid
        top = lo
        while top < n and top - lo < 16:  # four edges through a point already give a pair
            u = status[top]
            if DX[u] * (py - LY[u]) - DY[u] * (px - LX[u]) != 0:
                break
            top += 1
        run = status[lo:top]
        for r, u in enumerate(run):
            for u2 in run[r + 1 : r + 4]:
                ci.append(u)
                cj.append(u2)
            if lo > 0:
                ci.append(status[lo - 1])
                cj.append(u)
            if top < n:
                ci.append(u)
                cj.append(status[top])
        for t in leaving:
            if t in run:
                r = run.index(t)
                del run[r]
                pos = lo + r
            else:  # not in the run: the order is off (past a crossing, or rounding)
                try:
                    pos = status.index(t)
                except ValueError:  # pragma: no cover - every edge enters before it leaves
                    continue
                if pos < lo:
                    lo -= 1
            del status[pos]
            if 0 < pos < len(status):
                ci.append(status[pos - 1])
                cj.append(status[pos])
        if len(ci) >= _CHECK_EVERY:
            hit = check()
            if hit is not None:
                return hit
    return check() if ci else None


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
