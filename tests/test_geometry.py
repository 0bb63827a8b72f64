"""The check that a polygon is simple (softcontact.geometry): the sweep line of
crossing_edges against a test of every pair of edges, on large polygons and on small
random ones, degenerate ones (collinear, touching, repeated vertices) included."""

import numpy as np
import pytest

import softcontact as sc
from softcontact import geometry
from softcontact.geometry import crossing_edges, segments_intersect, simple_polygon_ccw


def pairwise_hits(v, tol, slack):
    """Every pair (i, j), i < j, of non-adjacent edges that meet: the O(K^2) reference (the
    test simple_polygon_ccw made before the sweep line)."""
    k = len(v)
    a, b = v, np.roll(v, -1, axis=0)
    hits = set()
    for i in range(k - 2):
        j = np.arange(i + 2, k if i > 0 else k - 1)  # edge k-1 is adjacent to edge 0
        if j.size:
            hit = segments_intersect(a[i], b[i], a[j], b[j], tol, slack)
            hits.update((i, int(jj)) for jj in j[hit])
    return hits


def tolerances(v):
    size = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))
    return 1e-12 * size * size, 1e-12 * size


def simple_by_reference(v, monkeypatch):
    """simple_polygon_ccw's verdict with the pairwise test in place of the sweep."""

    def pairwise(w, tol, slack):
        hits = pairwise_hits(w, tol, slack)
        return min(hits) if hits else None

    with monkeypatch.context() as m:
        m.setattr(geometry, "crossing_edges", pairwise)
        return verdict(v)


def prechecks_fail(v):
    """Whether simple_polygon_ccw refuses ``v`` before it looks for crossing edges."""
    orig = geometry.crossing_edges
    geometry.crossing_edges = lambda w, tol, slack: None
    try:
        return verdict(v) != "simple"
    finally:
        geometry.crossing_edges = orig


def verdict(v):
    try:
        simple_polygon_ccw(v)
    except ValueError as exc:
        return str(exc).split(",")[0]  # the kind of fault, not which edges
    return "simple"


def star(k, inner=0.5):
    """A star of k vertices alternating between radius 1 and ``inner``: simple, k edges
    crossing any line through its centre."""
    i = np.arange(k)
    r = np.where(i % 2 == 0, 1.0, inner)
    t = 2 * np.pi * i / k
    return np.column_stack([r * np.cos(t), r * np.sin(t)])


def comb(k):
    """A comb of about k vertices with vertical teeth on a common base: many vertices share
    an x coordinate, many edges are vertical."""
    n = k // 4
    x = np.repeat(np.arange(n, dtype=float), 2) * 2.0
    x[1::2] += 1.0
    top = np.column_stack([np.repeat(x, 2), np.tile([0.0, 10.0, 10.0, 0.0], n)[: 2 * x.size]])
    top = top[np.r_[True, np.any(top[1:] != top[:-1], axis=1)]]
    return np.concatenate([[[top[0, 0], -1.0]], top, [[top[-1, 0], -1.0]]])


# --------------------------------------------------------------------------------------------
# large polygons: O(K log K)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [star, comb], ids=["star", "comb"])
def test_large_simple_polygons(make):
    """20,000 vertices (the pairwise test took 30 s on the star): accepted, sampled right."""
    v = make(20_000)
    assert len(v) >= 19_990
    tol, slack = tolerances(v)
    assert crossing_edges(v, tol, slack) is None
    cloud = sc.PointCloud.polygon(v, 1.0)
    perimeter = float(np.sum(np.linalg.norm(np.roll(v, -1, axis=0) - v, axis=1)))
    assert cloud.area == pytest.approx(perimeter, rel=1e-12)


@pytest.mark.parametrize("where", [5, 10_000, 19_995])
def test_large_polygon_crossing_itself(where):
    v = star(20_000)
    v[where] = -1.5 * v[where]  # a spike through the centre and out: it crosses the far side
    tol, slack = tolerances(v)
    i, j = crossing_edges(v, tol, slack)
    a, b = v, np.roll(v, -1, axis=0)
    assert (j - i) % len(v) not in (0, 1, len(v) - 1)
    assert segments_intersect(a[i], b[i], a[j : j + 1], b[j : j + 1], tol, slack)[0]
    with pytest.raises(ValueError, match=rf"edge {i} \({i} -> {i + 1}\) intersects edge {j} "):
        sc.PointCloud.polygon(v, 0.1)


# --------------------------------------------------------------------------------------------
# small polygons against the pairwise test
# --------------------------------------------------------------------------------------------


def random_polygons(family, seed, n):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        k = int(rng.integers(3, 13))
        if family == "grid":  # collinear, touching and overlapping edges, repeated vertices
            v = rng.integers(0, 4, size=(k, 2)).astype(float)
        elif family == "near grid":  # the same within the tolerance (1e-12 of the size)
            v = rng.integers(0, 6, size=(k, 2)).astype(float)
            noise = rng.normal(size=v.shape) * 10.0 ** rng.uniform(-14, -11.5)
            v += noise * (rng.random(v.shape) < 0.5)
        elif family == "star-shaped":  # simple
            t = np.sort(rng.uniform(0, 2 * np.pi, k))
            r = rng.uniform(0.2, 1.0, k)
            v = np.column_stack([r * np.cos(t), r * np.sin(t)])
        else:  # uniform: mostly crossing itself
            v = rng.uniform(-1, 1, size=(k, 2))
        if np.all(np.any(np.roll(v, -1, axis=0) != v, axis=1)):  # no zero-length edge
            out.append(v)
    return out


FAMILIES = ["grid", "near grid", "star-shaped", "uniform"]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("family", FAMILIES)
def test_sweep_finds_what_the_pairwise_test_finds(family, seed):
    found = 0
    for v in random_polygons(family, seed, 400):
        if prechecks_fail(v):
            continue  # the sweep runs on polygons without zero-length edges, folds, zero area
        tol, slack = tolerances(v)
        hits = pairwise_hits(v, tol, slack)
        got = crossing_edges(v, tol, slack)
        if hits:
            assert got in hits, (v.tolist(), sorted(hits), got)
            found += 1
        else:
            assert got is None, (v.tolist(), got)
    if family != "star-shaped":
        assert found > 50  # the families do cross themselves


@pytest.mark.parametrize("family", FAMILIES)
def test_polygon_verdicts_match_the_pairwise_test(family, monkeypatch):
    kinds = set()
    for v in random_polygons(family, 10, 400):
        want = simple_by_reference(v, monkeypatch)
        assert verdict(v) == want, v.tolist()
        kinds.add(want)
    if family in ("grid", "near grid"):  # a check before the sweep is reached too
        assert {"simple", "vertices must form a simple polygon"} < kinds


@pytest.mark.parametrize(
    ("vertices", "simple"),
    [
        # a vertex visited twice (a pinch): two non-adjacent edges touch there
        ([[0, 0], [2, 0], [1, 1], [2, 2], [0, 2], [1, 1]], False),
        ([[0, 0], [1, 1], [2, 0], [2, 2], [1, 1], [0, 2]], False),
        # a vertex on a non-adjacent edge, from either side, on vertical and sloped edges
        ([[0, 0], [4, 0], [4, 4], [2, 0], [0, 4]], False),
        ([[0, 0], [4, 0], [4, 4], [0, 4], [0, 2.0], [2, 2], [0, 2.0001]], False),
        ([[0, 0], [4, 4], [0, 4], [2, 2.0], [1, 3]], False),
        # collinear edges overlapping, and collinear edges meeting end to end
        ([[0, 0], [4, 0], [4, 1], [3, 1], [3, 0], [1, 0], [1, 2], [0, 2]], False),
        ([[0, 0], [2, 0], [2, 1], [3, 1], [3, 0], [4, 0], [4, 2], [0, 2]], True),
        # vertical edges and vertices sharing an x coordinate
        ([[0, 0], [1, 0], [1, 1], [2, 1], [2, 2], [1, 2], [1, 3], [0, 3]], True),
        ([[0, 0], [1, 0], [1, 3], [0, 3], [0, 2], [0.5, 2], [0.5, 1], [0, 1]], True),
        ([[0, 0], [1, 0], [1, 3], [0, 3], [0, 2], [1, 2], [1, 1], [0, 1]], False),
        # a spike back along its own edge, and a bow-tie
        ([[0, 0], [2, 0], [2, 2], [0, 2], [0, 1], [1, 1], [0, 1.0]], False),
        ([[0, 0], [2, 2], [2, 0], [0, 2]], False),
        # crossing at points that are no vertex, left of every vertex of one edge
        ([[0, 0], [10, 0], [10, 1], [5, -1], [0, 1]], False),
    ],
)
def test_degenerate_polygons(vertices, simple, monkeypatch):
    v = np.array(vertices, dtype=float)
    for w in (v, v[::-1], np.roll(v, 2, axis=0), v[:, ::-1], -v):
        w = np.ascontiguousarray(w)
        got = verdict(w)
        assert got == simple_by_reference(w, monkeypatch)
        assert (got == "simple") == simple, (w.tolist(), got)
