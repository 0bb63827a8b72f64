"""Tests for softcontact.cloud.PointCloud: construction contract, immutability, rigid
motions, pickling, plotting and every shape constructor (geometry checked against exact
formulas: sample placement, normals, weights, spacing, sharp features)."""

from __future__ import annotations

import copy
import math
import pickle
import sys

import numpy as np
import pytest
from conftest import raises_naming

from softcontact.cloud import PointCloud

TAU = 2.0 * math.pi


@pytest.fixture
def rng():
    return np.random.default_rng(20250607)


# --------------------------------------------------------------------------------------------
# helpers (independent of the implementation)
# --------------------------------------------------------------------------------------------


def unit_rows(rng, n, d):
    v = rng.normal(size=(n, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def nn_distance(points):
    """Distance from each point to its nearest other point, shape (N,)."""
    points = np.asarray(points)
    out = np.empty(len(points))
    for s in range(0, len(points), 512):
        d2 = np.sum((points[s : s + 512, None, :] - points[None, :, :]) ** 2, axis=-1)
        d2[np.arange(d2.shape[0]), np.arange(s, s + d2.shape[0])] = np.inf
        out[s : s + 512] = np.sqrt(d2.min(axis=1))
    return out


def assert_unit_normals(cloud):
    np.testing.assert_allclose(np.linalg.norm(cloud.normals, axis=1), 1.0, rtol=0, atol=1e-14)


def assert_spacing_per_normal(cloud, spacing):
    """Samples sharing a normal (one face, or parallel faces) are at most spacing apart."""
    keys = np.round(cloud.normals, 9)
    _, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.ravel()
    for g in np.unique(group):
        pts = cloud.points[group == g]
        assert len(pts) >= 2
        assert nn_distance(pts).max() <= spacing * (1 + 1e-12)


def samples_at(cloud, point, tol=1e-12):
    """Indices of the samples located at ``point``."""
    return np.flatnonzero(np.linalg.norm(cloud.points - point, axis=1) <= tol)


def sorted_rows(*arrays):
    """Stack arrays column-wise and sort rows lexicographically."""
    m = np.column_stack(arrays)
    return m[np.lexsort(m.T[::-1])]


def polygon_area(v):
    w = np.roll(v, -1, axis=0)
    return 0.5 * np.sum(v[:, 0] * w[:, 1] - v[:, 1] * w[:, 0])


def polygon_perimeter(v):
    return np.sum(np.linalg.norm(np.roll(v, -1, axis=0) - v, axis=1))


def point_segment_distance(q, a, b):
    """Distance of each row of q (M, D) to each segment a[k] b[k] (K, D): shape (M, K)."""
    ab = b - a
    t = np.einsum("mkd,kd->mk", q[:, None, :] - a[None], ab) / np.sum(ab * ab, axis=1)
    t = np.clip(t, 0.0, 1.0)
    closest = a[None] + t[..., None] * ab[None]
    return np.linalg.norm(q[:, None, :] - closest, axis=-1)


def distance_to_polygon_boundary(q, v):
    return point_segment_distance(q, v, np.roll(v, -1, axis=0)).min(axis=1)


def inside_polygon(q, v):
    """Even-odd ray casting; q (M, 2), v (K, 2)."""
    x, y = q[:, 0][:, None], q[:, 1][:, None]
    ax, ay = v[:, 0][None], v[:, 1][None]
    bx, by = np.roll(v[:, 0], -1)[None], np.roll(v[:, 1], -1)[None]
    crosses = (ay > y) != (by > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        xint = ax + (y - ay) * (bx - ax) / (by - ay)
    return np.sum(crosses & (x < xint), axis=1) % 2 == 1


def edge_normals_ccw(v):
    e = np.roll(v, -1, axis=0) - v
    return np.column_stack([e[:, 1], -e[:, 0]]) / np.linalg.norm(e, axis=1, keepdims=True)


def assert_polygon_cloud(cloud, v_ccw, spacing):
    """Full geometric check of a sampled counter-clockwise polygon boundary."""
    size = np.linalg.norm(v_ccw.max(0) - v_ccw.min(0))
    assert cloud.dim == 2
    assert_unit_normals(cloud)
    assert cloud.area == pytest.approx(polygon_perimeter(v_ccw), rel=1e-12)
    assert distance_to_polygon_boundary(cloud.points, v_ccw).max() < 1e-12 * size
    # every vertex: exactly one sample per adjacent edge, with that edge's normal
    en = edge_normals_ccw(v_ccw)
    k = len(v_ccw)
    is_vertex = np.zeros(len(cloud), dtype=bool)
    for i in range(k):
        at = samples_at(cloud, v_ccw[i], 1e-12 * size)
        assert len(at) == 2
        is_vertex[at] = True
        got = sorted_rows(cloud.normals[at])
        want = sorted_rows(np.array([en[i - 1], en[i]]))
        np.testing.assert_allclose(got, want, atol=1e-14)
    # normals point outward: just outside along +n, just inside along -n
    q = cloud.points[~is_vertex]
    n = cloud.normals[~is_vertex]
    delta = 1e-6 * size
    assert not inside_polygon(q + delta * n, v_ccw).any()
    assert inside_polygon(q - delta * n, v_ccw).all()
    # the normal of each sample is the normal of an edge that contains it
    d = point_segment_distance(cloud.points, v_ccw, np.roll(v_ccw, -1, axis=0))
    on_edge = d < 1e-12 * size
    agree = np.abs(cloud.normals @ en.T - 1.0) < 1e-12
    assert (on_edge & agree).any(axis=1).all()
    # spacing along each edge
    for i in range(k):
        a, b = v_ccw[i], v_ccw[(i + 1) % k]
        sel = on_edge[:, i] & agree[:, i]
        t = np.sort((cloud.points[sel] - a) @ (b - a)) / np.linalg.norm(b - a)
        assert t[0] == pytest.approx(0.0, abs=1e-12 * size)
        assert t[-1] == pytest.approx(np.linalg.norm(b - a), rel=1e-12)
        assert np.diff(t).max() <= spacing * (1 + 1e-12)


def cube_mesh(a):
    """Closed outward cube [-a, a]^3 as 12 triangles."""
    v = np.array(
        [[x, y, z] for x in (-a, a) for y in (-a, a) for z in (-a, a)],
        dtype=float,
    )  # index = 4 * ix + 2 * iy + iz
    quads = [
        (0, 1, 3, 2),  # x = -a
        (4, 6, 7, 5),  # x = +a
        (0, 4, 5, 1),  # y = -a
        (2, 3, 7, 6),  # y = +a
        (0, 2, 6, 4),  # z = -a
        (1, 5, 7, 3),  # z = +a
    ]
    f = []
    for q0, q1, q2, q3 in quads:
        f += [(q0, q1, q2), (q0, q2, q3)]
    return v, np.array(f, dtype=np.int64)


def torus_mesh(big_r, small_r, nu, nv):
    """Closed outward torus around the z axis, nu x nv quads split into triangles."""
    u = TAU * np.arange(nu) / nu
    w = TAU * np.arange(nv) / nv
    uu, ww = np.meshgrid(u, w, indexing="ij")
    rho = big_r + small_r * np.cos(ww)
    v = np.column_stack(
        [(rho * np.cos(uu)).ravel(), (rho * np.sin(uu)).ravel(), (small_r * np.sin(ww)).ravel()]
    )
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    i, j = i.ravel(), j.ravel()
    ip, jp = (i + 1) % nu, (j + 1) % nv
    a, b, c, d = i * nv + j, ip * nv + j, ip * nv + jp, i * nv + jp
    return v, np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])


def mesh_area(v, f):
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    return 0.5 * np.sum(np.linalg.norm(np.cross(b - a, c - a), axis=1))


def assert_samples_on_mesh(cloud, v, f):
    """Each sample lies inside a triangle whose outward normal equals the sample's normal."""
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    fn = np.cross(b - a, c - a)
    fn /= np.linalg.norm(fn, axis=1, keepdims=True)
    size = np.linalg.norm(v.max(0) - v.min(0))
    tol = 1e-12 * size
    s, k = np.nonzero(cloud.normals @ fn.T > 1 - 1e-12)
    p, n = cloud.points[s], fn[k]
    ok = np.abs(np.einsum("ij,ij->i", p - a[k], n)) <= tol
    for x, y in ((a, b), (b, c), (c, a)):
        side = np.einsum("ij,ij->i", np.cross(y[k] - x[k], p - x[k]), n)
        ok &= side >= -tol * size
    assert np.bincount(s[ok], minlength=len(cloud)).min() >= 1


# --------------------------------------------------------------------------------------------
# the constructor contract
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 3])
def test_construction_basics(rng, dim):
    p = rng.normal(size=(7, dim))
    n = unit_rows(rng, 7, dim)
    w = rng.uniform(0.5, 2.0, size=7)
    c = PointCloud(p, n, w)
    assert c.dim == dim and len(c) == 7
    for got, want in ((c.points, p), (c.normals, n), (c.weights, w)):
        assert got.dtype == np.float64 and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
    assert c.area == pytest.approx(w.sum(), rel=1e-15)
    lo, hi = c.bounds
    np.testing.assert_array_equal(lo, p.min(0))
    np.testing.assert_array_equal(hi, p.max(0))
    assert c.size == pytest.approx(np.linalg.norm(p.max(0) - p.min(0)), rel=1e-15)
    assert c.kind is None
    assert isinstance(c._cache, dict) and not c._cache


def test_default_weights_and_accepted_dtypes(rng):
    n = unit_rows(rng, 4, 3)
    c = PointCloud(
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], n.astype(np.float32), None, normalize=True
    )
    np.testing.assert_array_equal(c.weights, np.ones(4))
    assert c.area == 4.0
    assert c.points.dtype == np.float64
    f_order = np.asfortranarray(rng.normal(size=(4, 3)))
    c2 = PointCloud(f_order, n.astype(">f8"))
    assert c2.points.flags.c_contiguous
    np.testing.assert_array_equal(c2.points, f_order)


def test_single_sample_cloud():
    c = PointCloud([[1.0, 2.0]], [[0.0, 1.0]])
    assert len(c) == 1 and c.size == 0.0


GOOD_P = np.zeros((5, 3))
GOOD_N = np.tile([0.0, 0.0, 1.0], (5, 1))


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"points": np.zeros((5, 4)), "normals": np.zeros((5, 4))}, ValueError,
         r"points must have shape \(N, 2\) or \(N, 3\), got \(5, 4\)"),
        ({"points": np.zeros(6), "normals": np.zeros(6)}, ValueError,
         r"points must have shape \(N, 2\) or \(N, 3\), got \(6,\)"),
        ({"points": np.zeros((2, 2, 3)), "normals": np.zeros((2, 2, 3))}, ValueError,
         r"points must have shape .*got \(2, 2, 3\)"),
        ({"points": np.zeros((5, 1)), "normals": np.zeros((5, 1))}, ValueError,
         r"points must have shape"),
        ({"points": np.zeros((0, 3)), "normals": np.zeros((0, 3))}, ValueError,
         r"points must hold at least one sample.*got \(0, 3\)"),
        ({"normals": np.tile([0.0, 1.0], (5, 1))}, ValueError,
         r"normals must have shape \(5, 3\) to match points, got \(5, 2\)"),
        ({"normals": GOOD_N[:4]}, ValueError, r"normals must have shape \(5, 3\)"),
        ({"weights": np.ones(4)}, ValueError,
         r"weights must have shape \(5,\) to match points, got \(4,\)"),
        ({"weights": np.ones((5, 1))}, ValueError, r"weights must have shape \(5,\)"),
        ({"points": np.where(np.arange(15).reshape(5, 3) == 4, np.nan, 0.0)}, ValueError,
         r"points must be finite, got nan in row 1"),
        ({"points": np.where(np.arange(15).reshape(5, 3) == 0, -np.inf, 0.0)}, ValueError,
         r"points must be finite"),
        ({"normals": np.where(np.arange(15).reshape(5, 3) == 14, np.inf, GOOD_N)}, ValueError,
         r"normals must be finite"),
        ({"weights": [1, 1, np.nan, 1, 1]}, ValueError,
         r"weights must be finite, got nan at index 2"),
        ({"weights": [1, 1, 1, np.inf, 1]}, ValueError, r"weights must be finite"),
        ({"weights": [1, 1, 1, 0, 1]}, ValueError, r"weights must be > 0, got 0.0 at index 3"),
        ({"weights": [1, -2, 1, 1, 1]}, ValueError, r"weights must be > 0"),
        ({"normals": 2 * GOOD_N}, ValueError,
         r"normals must have unit length .*normalize=True.*row 0"),
        ({"normals": GOOD_N * (1 + 1e-8)}, ValueError, r"normals must have unit length"),
        ({"normals": np.where(np.arange(15).reshape(5, 3) == 8, 0.0, GOOD_N)}, ValueError,
         r"normals must be nonzero vectors .*row 2"),
        ({"points": GOOD_P.astype(complex)}, TypeError,
         r"points must be an array of real numbers .*complex128"),
        ({"normals": GOOD_N.astype(complex)}, TypeError, r"normals must be an array of real"),
        ({"weights": np.ones(5, dtype=complex)}, TypeError, r"weights must be an array of real"),
        ({"points": np.full((5, 3), "a")}, TypeError, r"points must be an array of real"),
        ({"points": [[0, 0, 0], [0, 0]]}, TypeError, r"points must be an array of real"),
        ({"normals": GOOD_N.astype(object)}, TypeError, r"normals must be an array of real"),
        ({"normalize": 1}, TypeError, r"normalize must be a bool, got int"),
    ],
)  # fmt: skip
def test_constructor_errors(kwargs, exc, match):
    args = {"points": GOOD_P, "normals": GOOD_N, "weights": None} | kwargs
    with pytest.raises(exc, match=match):
        PointCloud(**args)


def test_zero_normal_rejected_even_with_normalize():
    n = GOOD_N.copy()
    n[3] = 1e-13
    with pytest.raises(ValueError, match=r"normals must be nonzero vectors .*row 3"):
        PointCloud(GOOD_P, n, normalize=True)


def test_normalize_fixes_normals_without_touching_input(rng):
    n = unit_rows(rng, 6, 3) * rng.uniform(0.1, 10.0, size=(6, 1))
    before = n.copy()
    c = PointCloud(rng.normal(size=(6, 3)), n, normalize=True)
    np.testing.assert_array_equal(n, before)
    assert_unit_normals(c)
    np.testing.assert_allclose(c.normals, n / np.linalg.norm(n, axis=1, keepdims=True), atol=1e-15)
    # nearly unit normals (within 1e-9) are accepted as they are
    m = unit_rows(rng, 6, 3) * (1 + 5e-10)
    np.testing.assert_array_equal(PointCloud(np.zeros((6, 3)), m).normals, m)


# --------------------------------------------------------------------------------------------
# immutability, copies, pickling, repr
# --------------------------------------------------------------------------------------------


def test_arrays_are_read_only_copies(rng):
    p = rng.normal(size=(5, 3))
    n = unit_rows(rng, 5, 3)
    w = rng.uniform(1, 2, size=5)
    originals = (p.copy(), n.copy(), w.copy())
    c = PointCloud(p, n, w)
    for arr, src in ((c.points, p), (c.normals, n), (c.weights, w)):
        assert not arr.flags.writeable
        assert not np.shares_memory(arr, src)
        with pytest.raises(ValueError):
            arr[0] = 1.0
        with pytest.raises(ValueError):
            arr.flags.writeable = True
    # the inputs were not modified, and modifying them now does not reach the cloud
    for src, orig in zip((p, n, w), originals, strict=True):
        np.testing.assert_array_equal(src, orig)
    p[:] = 7.0
    n[:] = 0.0
    w[:] = 3.0
    np.testing.assert_array_equal(c.points, originals[0])
    np.testing.assert_array_equal(c.normals, originals[1])
    np.testing.assert_array_equal(c.weights, originals[2])


def test_attributes_cannot_be_set_or_deleted():
    c = PointCloud.disk(1.0, 0.5)
    for name in ("points", "normals", "weights", "dim", "area", "_points", "anything"):
        with pytest.raises(AttributeError):
            setattr(c, name, None)
    with pytest.raises(AttributeError):
        del c._points
    assert not hasattr(c, "__dict__")
    # the cache dict is for derived data: it may be filled, the cloud stays the same
    c._cache["key"] = 1
    assert c._cache == {"key": 1}


@pytest.mark.parametrize(
    "cloud",
    [
        PointCloud.box([0.05, 0.02], 0.01),
        PointCloud.t_shape(dim=3, spacing=0.01),
        PointCloud([[0.0, 1.0]], [[1.0, 0.0]], [2.5]),
    ],
    ids=["box2", "t3", "raw"],
)
def test_pickle_and_copy_round_trip(cloud):
    cloud._cache["derived"] = object()
    for clone in (pickle.loads(pickle.dumps(cloud)), copy.deepcopy(cloud), copy.copy(cloud)):
        for name in ("points", "normals", "weights"):
            got, want = getattr(clone, name), getattr(cloud, name)
            np.testing.assert_array_equal(got, want)
            assert not got.flags.writeable
        assert clone.kind == cloud.kind and repr(clone) == repr(cloud)
    clone = pickle.loads(pickle.dumps(cloud, protocol=0))
    np.testing.assert_array_equal(clone.points, cloud.points)
    assert pickle.loads(pickle.dumps(cloud))._cache == {}


def test_repr():
    r = repr(PointCloud.box([0.05, 0.02], 0.01))
    assert r.startswith("PointCloud(") and "dim=2" in r and "n=32" in r
    assert "kind='box'" in r and "area=0.28" in r and "[[-0.05, -0.02], [0.05, 0.02]]" in r
    r = repr(PointCloud(np.zeros((3, 3)), np.tile([1.0, 0, 0], (3, 1))))
    assert "dim=3" in r and "n=3" in r and "kind" not in r


# --------------------------------------------------------------------------------------------
# rigid motions
# --------------------------------------------------------------------------------------------


def rotation_from_axis_angle(axis, angle):
    """Rodrigues' formula (independent of the quaternion code)."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def test_transformed_2d_by_hand():
    c = PointCloud([[1.0, 0.0], [0.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]], [0.5, 2.0])
    t = c.transformed([1.0, 2.0, math.pi / 2])
    np.testing.assert_allclose(t.points, [[1.0, 3.0], [-1.0, 2.0]], atol=1e-15)
    np.testing.assert_allclose(t.normals, [[0.0, 1.0], [-1.0, 0.0]], atol=1e-15)
    np.testing.assert_array_equal(t.weights, c.weights)
    assert t is not c and t._cache is not c._cache


def test_transformed_3d_by_hand(rng):
    c = PointCloud(np.eye(3), np.eye(3), [1.0, 2.0, 3.0])
    # 120 degrees about (1, 1, 1): x -> y -> z -> x
    t = c.transformed([1.0, -2.0, 3.0, 0.5, 0.5, 0.5, 0.5])
    np.testing.assert_allclose(t.normals, [[0, 1, 0], [0, 0, 1], [1, 0, 0]], atol=1e-15)
    np.testing.assert_allclose(
        t.points, np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]]) + [1.0, -2.0, 3.0], atol=1e-15
    )
    np.testing.assert_array_equal(t.weights, c.weights)
    # a general rotation against Rodrigues' formula
    axis, angle = rng.normal(size=3), 2.1
    q = np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis / np.linalg.norm(axis)])
    cloud = PointCloud.box([0.1, 0.2, 0.3], 0.1)
    moved = cloud.transformed(np.concatenate([[0.3, 0.2, 0.1], q]))
    rot = rotation_from_axis_angle(axis, angle)
    np.testing.assert_allclose(moved.points, cloud.points @ rot.T + [0.3, 0.2, 0.1], atol=1e-15)
    np.testing.assert_allclose(moved.normals, cloud.normals @ rot.T, atol=1e-15)
    assert_unit_normals(moved)


def test_transformed_inverse_round_trip(rng):
    c2 = PointCloud.t_shape()
    x, y, th = rng.normal(size=3)
    rot = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    inv = np.concatenate([-rot.T @ [x, y], [-th]])
    back = c2.transformed([x, y, th]).transformed(inv)
    np.testing.assert_allclose(back.points, c2.points, atol=1e-15)
    np.testing.assert_allclose(back.normals, c2.normals, atol=1e-15)

    c3 = PointCloud.capsule(0.02, 0.05, 0.01)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    t = rng.normal(size=3)
    moved = c3.transformed(np.concatenate([t, q]))
    rot = rotation_from_axis_angle(q[1:], 2 * math.atan2(np.linalg.norm(q[1:]), q[0]))
    inv = np.concatenate([-rot.T @ t, [q[0], -q[1], -q[2], -q[3]]])
    back = moved.transformed(inv)
    np.testing.assert_allclose(back.points, c3.points, atol=1e-14)
    np.testing.assert_allclose(back.normals, c3.normals, atol=1e-15)
    np.testing.assert_array_equal(back.weights, c3.weights)


def test_transformed_errors():
    c2 = PointCloud.disk(1.0, 0.5)
    c3 = PointCloud.sphere(1.0, 0.5)
    with pytest.raises(ValueError, match=r"pose must have shape \(3,\) for a 2D cloud, got \(7,\)"):
        c2.transformed([0, 0, 0, 1, 0, 0, 0])
    with pytest.raises(ValueError, match=r"pose must have shape \(7,\) for a 3D cloud, got \(3,\)"):
        c3.transformed([0, 0, 0])
    with pytest.raises(ValueError, match=r"pose must have shape \(3,\) .*got \(1, 3\)"):
        c2.transformed([[0, 0, 0]])
    with pytest.raises(ValueError, match=r"pose must hold a unit quaternion"):
        c3.transformed([0, 0, 0, 1, 0, 0, 1e-4])
    with pytest.raises(ValueError, match=r"pose must hold a unit quaternion"):
        c3.transformed([0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match=r"pose must be finite"):
        c2.transformed([0, np.nan, 0])
    with pytest.raises(TypeError, match=r"pose must be an array of real numbers"):
        c2.transformed(np.zeros(3, dtype=complex))
    # within 1e-9 of unit norm is accepted and gives unit normals
    moved = c3.transformed([0, 0, 0, 1 + 5e-10, 0, 0, 0])
    assert_unit_normals(moved)


# --------------------------------------------------------------------------------------------
# box
# --------------------------------------------------------------------------------------------


def test_box_2d():
    a, b, s = 0.05, 0.02, 0.0075
    c = PointCloud.box([a, b], s)
    v = np.array([[-a, -b], [a, -b], [a, b], [-a, b]])
    assert c.kind == "box"
    assert len(c) == 2 * (math.ceil(2 * a / s) + 1) + 2 * (math.ceil(2 * b / s) + 1)
    assert_polygon_cloud(c, v, s)
    assert c.area == pytest.approx(4 * (a + b), rel=1e-12)
    np.testing.assert_array_equal(c.bounds[0], [-a, -b])
    np.testing.assert_array_equal(c.bounds[1], [a, b])
    # trapezoid weights on the bottom edge: half segments at both ends
    bottom = np.flatnonzero(c.normals[:, 1] == -1.0)
    seg = 2 * a / math.ceil(2 * a / s)
    w = c.weights[bottom][np.argsort(c.points[bottom, 0])]
    np.testing.assert_allclose(w[[0, -1]], seg / 2, rtol=1e-14)
    np.testing.assert_allclose(w[1:-1], seg, rtol=1e-14)


def test_box_3d():
    he = np.array([0.05, 0.02, 0.03])
    s = 0.007
    c = PointCloud.box(he, s)
    size = np.linalg.norm(2 * he)
    assert c.dim == 3 and c.size == pytest.approx(size, rel=1e-15)
    assert_unit_normals(c)
    assert c.area == pytest.approx(8 * (he[0] * he[1] + he[1] * he[2] + he[0] * he[2]), rel=1e-12)
    # each normal is an axis direction and its sample lies on that face, inside the box
    axis = np.argmax(np.abs(c.normals), axis=1)
    rows = np.arange(len(c))
    np.testing.assert_array_equal(np.abs(c.normals[rows, axis]), 1.0)
    assert np.count_nonzero(c.normals) == len(c)
    assert np.all(np.abs(c.points[rows, axis] - c.normals[rows, axis] * he[axis]) <= 1e-12 * size)
    assert np.all(np.abs(c.points) <= he * (1 + 1e-15))
    assert_spacing_per_normal(c, s)
    # every corner once per adjacent face, each copy with that face's normal
    for corner in np.array(np.meshgrid(*[[-h, h] for h in he])).reshape(3, -1).T:
        at = samples_at(c, corner, 1e-12 * size)
        assert len(at) == 3
        np.testing.assert_array_equal(
            sorted_rows(c.normals[at]), sorted_rows(np.diag(np.sign(corner)))
        )
    # a sample on k faces (k = 1 inside a face, 2 on an edge, 3 at a corner) appears k times
    _, inverse, counts = np.unique(c.points, axis=0, return_inverse=True, return_counts=True)
    on_faces = np.sum(np.abs(c.points) == he, axis=1)
    np.testing.assert_array_equal(counts[inverse.ravel()], on_faces)
    # trapezoid weights on the +z face
    face = np.flatnonzero(c.normals[:, 2] == 1.0)
    mx, my = math.ceil(2 * he[0] / s), math.ceil(2 * he[1] / s)
    assert len(face) == (mx + 1) * (my + 1)
    cell = (2 * he[0] / mx) * (2 * he[1] / my)
    px, py = c.points[face, 0], c.points[face, 1]
    border = (np.abs(px) == he[0]).astype(int) + (np.abs(py) == he[1]).astype(int)
    np.testing.assert_allclose(c.weights[face], cell / 2.0**border, rtol=1e-13)


@pytest.mark.parametrize(
    ("he", "exc", "match"),
    [
        ([1.0], ValueError, r"half_extents must have shape \(2,\) or \(3,\), got \(1,\)"),
        ([1.0, 1, 1, 1], ValueError, r"half_extents must have shape .*got \(4,\)"),
        ([[1.0, 1.0]], ValueError, r"half_extents must have shape"),
        ([1.0, 0.0], ValueError, r"half_extents must be finite and > 0, got \[1.0, 0.0\]"),
        ([1.0, -1.0, 1.0], ValueError, r"half_extents must be finite and > 0"),
        ([1.0, np.inf], ValueError, r"half_extents must be finite and > 0"),
        ([1j, 1.0], TypeError, r"half_extents must be an array of real numbers"),
    ],
)
def test_box_errors(he, exc, match):
    with pytest.raises(exc, match=match):
        PointCloud.box(he, 0.1)


# --------------------------------------------------------------------------------------------
# disk, sphere, capsule
# --------------------------------------------------------------------------------------------


def test_disk():
    r, s = 0.07, 0.004
    c = PointCloud.disk(r, s)
    assert c.kind == "disk" and c.dim == 2
    assert len(c) == math.ceil(TAU * r / s)
    assert_unit_normals(c)
    assert c.area == pytest.approx(TAU * r, rel=1e-12)
    np.testing.assert_allclose(np.linalg.norm(c.points, axis=1), r, rtol=1e-14)
    np.testing.assert_allclose(c.normals, c.points / r, atol=1e-14)
    assert nn_distance(c.points).max() <= s
    np.testing.assert_allclose(c.weights, TAU * r / len(c), rtol=1e-15)
    assert len(PointCloud.disk(1.0, 10.0)) == 8


def test_sphere():
    r, s = 0.05, 0.005
    c = PointCloud.sphere(r, s)
    assert c.kind == "sphere" and c.dim == 3
    assert len(c) == math.ceil(4 * math.pi * r * r / s**2)
    assert_unit_normals(c)
    assert c.area == pytest.approx(4 * math.pi * r * r, rel=1e-12)
    np.testing.assert_allclose(np.linalg.norm(c.points, axis=1), r, rtol=1e-14)
    np.testing.assert_allclose(c.normals, c.points / r, atol=1e-14)
    assert nn_distance(c.points).max() <= s
    # the samples cover the sphere evenly: their mean is near the centre
    assert np.linalg.norm(c.points.mean(axis=0)) < 0.01 * r
    assert len(PointCloud.sphere(1.0, 10.0)) == 12


def closest_on_axis(points, h, axis):
    c = np.zeros_like(points)
    c[:, axis] = np.clip(points[:, axis], -h, h)
    return c


@pytest.mark.parametrize("half_length", [0.0, 0.04, 0.0013])
@pytest.mark.parametrize("dim", [2, 3])
def test_capsule(dim, half_length):
    r, s = 0.02, 0.003
    c = PointCloud.capsule(r, half_length, s, dim=dim)
    assert c.kind == "capsule" and c.dim == dim
    assert_unit_normals(c)
    exact = 4 * half_length + TAU * r if dim == 2 else 4 * math.pi * r * (half_length + r)
    assert c.area == pytest.approx(exact, rel=1e-12)
    # on the surface, with the radial normal from the axis segment
    axis = 0 if dim == 2 else 2
    radial = c.points - closest_on_axis(c.points, half_length, axis)
    size = c.size
    assert np.abs(np.linalg.norm(radial, axis=1) - r).max() < 1e-12 * size
    np.testing.assert_allclose(c.normals, radial / r, atol=1e-12)
    # bounds: within the capsule's box; the junctions (2D) and poles (3D) reach it exactly
    lo, hi = c.bounds
    ext = np.full(dim, r)
    ext[axis] += half_length
    assert np.all(hi <= ext * (1 + 1e-15)) and np.all(lo >= -ext * (1 + 1e-15))
    exact = 1 if dim == 2 else 2
    assert hi[exact] == pytest.approx(ext[exact], rel=1e-15)
    assert lo[exact] == pytest.approx(-ext[exact], rel=1e-15)
    # spacing, and the smooth junctions are not duplicated: no two samples coincide
    nn = nn_distance(c.points)
    assert nn.max() <= s * (1 + 1e-12)
    assert nn.min() > 1e-6 * s
    assert (c.weights > 0).all()


def test_capsule_reduces_to_disk_and_sphere():
    c = PointCloud.capsule(1.0, 0.0, 0.1, dim=2)
    assert c.area == pytest.approx(TAU, rel=1e-12)
    c3 = PointCloud.capsule(1.0, 0.0, 0.1)
    assert c3.area == pytest.approx(4 * math.pi, rel=1e-12)
    # coarse spacing still gives a usable closed curve / surface
    assert len(PointCloud.capsule(1.0, 0.0, 100.0, dim=2)) == 8
    coarse = PointCloud.capsule(1.0, 1.0, 100.0)
    assert coarse.area == pytest.approx(4 * math.pi * 2, rel=1e-12)
    assert (np.abs(coarse.normals[:, 2]) == 1).sum() == 2  # the two poles


def test_round_shape_errors():
    with pytest.raises(ValueError, match=r"radius must be finite and > 0, got -1.0"):
        PointCloud.disk(-1.0, 0.1)
    with pytest.raises(TypeError, match=r"radius must be a real number, got str"):
        PointCloud.sphere("1", 0.1)
    with pytest.raises(ValueError, match=r"half_length must be finite and >= 0"):
        PointCloud.capsule(1.0, -0.1, 0.1)
    with pytest.raises(ValueError, match=r"dim must be in 2..3, got 4"):
        PointCloud.capsule(1.0, 0.1, 0.1, dim=4)
    with pytest.raises(TypeError, match=r"dim must be an integer, got float"):
        PointCloud.capsule(1.0, 0.1, 0.1, dim=3.0)


# --------------------------------------------------------------------------------------------
# polygon and the T
# --------------------------------------------------------------------------------------------

# a non-convex "arrow" polygon, counter-clockwise, with a reflex vertex
ARROW = np.array([[0.0, 0.0], [0.1, 0.03], [0.2, 0.0], [0.1, 0.12], [0.07, 0.05]])


def test_polygon_nonconvex():
    s = 0.004
    assert polygon_area(ARROW) > 0
    c = PointCloud.polygon(ARROW, s)
    assert c.kind == "polygon"
    assert_polygon_cloud(c, ARROW, s)


def test_polygon_orientation_independent():
    s = 0.01
    ccw = PointCloud.polygon(ARROW, s)
    cw = PointCloud.polygon(ARROW[::-1], s)
    rolled = PointCloud.polygon(np.roll(ARROW[::-1], 2, axis=0), s)
    want = sorted_rows(ccw.points, ccw.normals, ccw.weights)
    np.testing.assert_allclose(sorted_rows(cw.points, cw.normals, cw.weights), want, atol=1e-15)
    np.testing.assert_allclose(
        sorted_rows(rolled.points, rolled.normals, rolled.weights), want, atol=1e-15
    )
    assert_polygon_cloud(cw, ARROW, s)


def test_polygon_triangle_accepts_lists_and_ints():
    c = PointCloud.polygon([[0, 0], [3, 0], [0, 4]], 1)
    assert c.area == pytest.approx(12.0, rel=1e-15)
    assert_polygon_cloud(c, np.array([[0.0, 0], [3, 0], [0, 4]]), 1.0)


@pytest.mark.parametrize(
    ("vertices", "exc", "match"),
    [
        ([[0, 0], [1, 0]], ValueError,
         r"vertices must have shape \(K, 2\) with K >= 3, got \(2, 2\)"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], ValueError, r"vertices must have shape .*got \(3, 3\)"),
        ([0, 1, 2], ValueError, r"vertices must have shape"),
        ([[0, 0], [1, 0], [1, 0], [0, 1]], ValueError, r"vertices must not repeat consecutively"),
        ([[0, 0], [1, 0], [0, 1], [0, 0]], ValueError, r"repeat the first vertex at the end"),
        ([[0, 0], [1, 1], [2, 2]], ValueError, r"vertices must enclose a nonzero area"),
        ([[0, 0], [2, 2], [2, 0], [0, 1]], ValueError,
         r"vertices must form a simple polygon, but edge 0 .* intersects edge 2"),  # bow-tie
        ([[0, 0], [1, 1], [1, 0], [0, 1]], ValueError, r"vertices must"),  # zero-area bow-tie
        ([[0, 0], [2, 0], [2, 2], [1, 0], [0, 2]], ValueError,
         r"vertices must form a simple polygon"),  # vertex touching a non-adjacent edge
        ([[0, 0], [2, 0], [1, 0], [1, 1]], ValueError, r"fold back onto each other"),
        ([[0, 0], [4, 0], [4, 4], [0, 4], [2, 5], [2, -1]], ValueError,
         r"vertices must form a simple polygon"),
        ([[0, 0], [1, 0], [np.nan, 1]], ValueError, r"vertices must be finite"),
        ([[0, 0], [1, 0], [1j, 1]], TypeError, r"vertices must be an array of real numbers"),
    ],
)  # fmt: skip
def test_polygon_errors(vertices, exc, match):
    with pytest.raises(exc, match=match):
        PointCloud.polygon(vertices, 0.1)


def test_t_shape_vertices():
    scale = 1e-3
    v = PointCloud.t_shape_vertices()
    assert v.shape == (8, 2) and v.flags.writeable
    assert polygon_area(v) == pytest.approx(6300 * scale**2, rel=1e-12)  # counter-clockwise
    # centroid of the region (bar and stem rectangles), not of the vertices: at the origin
    bar_c = np.array([0.0, v[:, 1].max() - 15 * scale])
    stem_c = np.array([0.0, v[:, 1].min() + 45 * scale])
    centroid = (3600 * bar_c + 2700 * stem_c) / 6300
    np.testing.assert_allclose(centroid, 0.0, atol=1e-15)
    # the region's centroid by the shoelace formula too
    w = np.roll(v, -1, axis=0)
    cr = v[:, 0] * w[:, 1] - v[:, 1] * w[:, 0]
    np.testing.assert_allclose(
        np.sum((v + w) * cr[:, None], axis=0) / (3 * cr.sum()), 0.0, atol=1e-15
    )
    # dimensions: 120 x 30 bar over a 30 x 90 stem
    ys = np.unique(v[:, 1]) / scale
    np.testing.assert_allclose(np.diff(ys), [90, 30], rtol=1e-12)
    np.testing.assert_allclose(ys, [-90 + 67.5 / 6.3, 67.5 / 6.3, 30 + 67.5 / 6.3], rtol=1e-12)
    bar_x = v[np.isclose(v[:, 1], v[:, 1].max()), 0]
    stem_x = v[np.isclose(v[:, 1], v[:, 1].min()), 0]
    np.testing.assert_allclose(np.sort(bar_x), [-0.06, 0.06], rtol=1e-15)
    np.testing.assert_allclose(np.sort(stem_x), [-0.015, 0.015], rtol=1e-15)
    np.testing.assert_allclose(PointCloud.t_shape_vertices(2.0), v * 2000, rtol=1e-12)


def test_t_shape_2d():
    c = PointCloud.t_shape()
    v = PointCloud.t_shape_vertices()
    assert c.kind == "t_shape" and c.dim == 2
    assert c.area == pytest.approx(0.48, rel=1e-12)
    assert_polygon_cloud(c, v, 0.005)
    np.testing.assert_allclose(c.bounds[1] - c.bounds[0], [0.12, 0.12], rtol=1e-12)
    c2 = PointCloud.t_shape(scale=1.0, spacing=7.0)
    assert c2.area == pytest.approx(480.0, rel=1e-12)
    assert_polygon_cloud(c2, PointCloud.t_shape_vertices(1.0), 7.0)


def test_t_shape_3d():
    thickness, scale, s = 20.0, 1e-3, 0.006
    c = PointCloud.t_shape(scale=scale, spacing=s, dim=3, thickness=thickness)
    v = PointCloud.t_shape_vertices(scale)
    hz = 0.5 * thickness * scale
    size = c.size
    assert c.kind == "t_shape" and c.dim == 3
    assert_unit_normals(c)
    assert c.area == pytest.approx((2 * 6300 + 480 * thickness) * scale**2, rel=1e-12)
    np.testing.assert_allclose(c.bounds[0][2], -hz, rtol=1e-15)
    np.testing.assert_allclose(c.bounds[1][2], hz, rtol=1e-15)
    p, n = c.points, c.normals
    cap = np.abs(n[:, 2]) == 1.0
    # caps: at z = +-hz with the matching normal, inside or on the polygon
    assert np.all(np.abs(p[cap, 2] - n[cap, 2] * hz) <= 1e-12 * size)
    xy = p[cap, :2]
    assert np.all(inside_polygon(xy, v) | (distance_to_polygon_boundary(xy, v) < 1e-12 * size))
    # walls: on the outline, horizontal normal of an edge containing the sample
    wall = ~cap
    assert np.all(n[wall, 2] == 0.0) and np.all(np.abs(p[wall, 2]) <= hz * (1 + 1e-15))
    en = edge_normals_ccw(v)
    d = point_segment_distance(p[wall, :2], v, np.roll(v, -1, axis=0))
    agree = np.abs(n[wall, :2] @ en.T - 1.0) < 1e-12
    assert ((d < 1e-12 * size) & agree).any(axis=1).all()
    # each prism corner: one sample per adjacent face (cap and two walls)
    for i in range(8):
        for z in (-hz, hz):
            at = samples_at(c, [*v[i], z], 1e-12 * size)
            assert len(at) == 3
            want = np.array([[*en[i - 1], 0.0], [*en[i], 0.0], [0.0, 0.0, np.sign(z)]])
            np.testing.assert_allclose(sorted_rows(n[at]), sorted_rows(want), atol=1e-14)
    assert_spacing_per_normal(c, s)
    # no two samples share both point and normal (coplanar duplicates were merged)
    key = np.round(np.column_stack([p / size, n]), 10)
    assert len(np.unique(key, axis=0)) == len(c)


def test_t_shape_errors():
    with pytest.raises(ValueError, match=r"dim must be in 2..3, got 1"):
        PointCloud.t_shape(dim=1)
    with pytest.raises(ValueError, match=r"scale must be finite and > 0"):
        PointCloud.t_shape(scale=0.0)
    with pytest.raises(ValueError, match=r"thickness must be finite and > 0"):
        PointCloud.t_shape(dim=3, thickness=-1.0)
    with pytest.raises(ValueError, match=r"spacing must be finite and > 0"):
        PointCloud.t_shape(spacing=np.nan)


# --------------------------------------------------------------------------------------------
# meshes
# --------------------------------------------------------------------------------------------


def test_from_mesh_cube():
    a, s = 0.05, 0.012
    v, f = cube_mesh(a)
    c = PointCloud.from_mesh(v, f, s)
    assert c.kind == "mesh" and c.dim == 3
    assert_unit_normals(c)
    assert c.area == pytest.approx(24 * a * a, rel=1e-12)
    assert_samples_on_mesh(c, v, f)
    # per-face normals: each normal is an axis direction, and the sample lies on that face
    axis = np.argmax(np.abs(c.normals), axis=1)
    rows = np.arange(len(c))
    np.testing.assert_array_equal(np.abs(c.normals[rows, axis]), 1.0)
    np.testing.assert_allclose(c.points[rows, axis], a * c.normals[rows, axis], atol=1e-15)
    assert sorted(np.unique(np.round(c.normals, 12), axis=0).tolist()) == sorted(
        np.concatenate([np.eye(3), -np.eye(3)]).tolist()
    )
    # six equal faces
    for k in range(3):
        for sign in (-1.0, 1.0):
            assert c.weights[c.normals[:, k] == sign].sum() == pytest.approx(4 * a * a, rel=1e-12)
    # corners once per adjacent face (the two triangles of a face were merged there)
    for corner in v:
        at = samples_at(c, corner, 1e-15)
        assert len(at) == 3
        np.testing.assert_array_equal(
            sorted_rows(c.normals[at]), sorted_rows(np.diag(np.sign(corner)))
        )
    # the face diagonal is shared by two coplanar triangles: sampled once
    key = np.round(np.column_stack([c.points / a, c.normals]), 10)
    assert len(np.unique(key, axis=0)) == len(c)
    assert_spacing_per_normal(c, s)


def subdivided_cube_mesh(n):
    """Closed outward cube [-1, 1]^3, each face an n x n grid of quads split the same way."""
    index = {}
    faces = []

    def vid(x):
        key = tuple(int(c) for c in x)
        return index.setdefault(key, len(index))

    for axis in range(3):
        u, v = (axis + 1) % 3, (axis + 2) % 3  # (u, v, axis) is right-handed
        for sign in (-1, 1):
            for i in range(n):
                for j in range(n):
                    corners = []
                    for di, dj in ((0, 0), (1, 0), (1, 1), (0, 1)):
                        x = np.zeros(3, dtype=int)
                        x[axis] = sign * n
                        x[u] = 2 * (i + di) - n
                        x[v] = 2 * (j + dj) - n
                        corners.append(vid(x))
                    q = corners if sign > 0 else corners[::-1]
                    faces += [(q[0], q[1], q[2]), (q[0], q[2], q[3])]
    verts = np.array(sorted(index, key=index.get), dtype=float) / n
    return verts, np.array(faces, dtype=np.int64)


def test_from_mesh_merges_coplanar_lattices():
    # every triangle has the same k, so the lattices of all triangles of a face form one
    # regular grid of step 2 / (n k): interior weight one cell, face-edge weight half a cell
    n, s = 3, 0.3
    v, f = subdivided_cube_mesh(n)
    c = PointCloud.from_mesh(v, f, s)
    k = math.ceil((2 / n) * math.sqrt(2) / s)
    side = n * k + 1
    assert len(c) == 6 * side * side
    assert c.area == pytest.approx(24.0, rel=1e-12)
    assert_samples_on_mesh(c, v, f)
    cell = (2 / (n * k)) ** 2
    axis = np.argmax(np.abs(c.normals), axis=1)
    boundary = np.sum(np.isclose(np.abs(c.points), 1.0, rtol=0, atol=1e-12), axis=1) - 1
    np.testing.assert_allclose(c.weights[boundary == 0], cell, rtol=1e-12)
    np.testing.assert_allclose(c.weights[boundary == 1], cell / 2, rtol=1e-12)
    for a in range(3):
        for sign in (-1.0, 1.0):
            face = (axis == a) & (c.normals[np.arange(len(c)), axis] == sign)
            assert face.sum() == side * side
            assert c.weights[face].sum() == pytest.approx(4.0, rel=1e-12)
    assert_spacing_per_normal(c, s)


def test_from_mesh_inward_cube_is_flipped():
    v, f = cube_mesh(1.0)
    out = PointCloud.from_mesh(v, f, 0.3)
    inward = PointCloud.from_mesh(v, f[:, ::-1], 0.3)
    assert (np.einsum("ij,ij->i", inward.normals, inward.points) > 0).all()
    # the same samples up to rounding (the lattice of (c, a, b) is that of (a, b, c))
    assert len(inward) == len(out)
    np.testing.assert_allclose(
        sorted_rows(np.round(inward.points, 9), inward.normals, inward.weights),
        sorted_rows(np.round(out.points, 9), out.normals, out.weights),
        rtol=1e-12,
        atol=1e-15,
    )


def test_from_mesh_single_lattice_cell():
    # tetrahedron, spacing larger than every edge: k = 1, the corners only, area / 3 each
    v = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    f = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    c = PointCloud.from_mesh(v, f, 10.0)
    assert len(c) == 12
    areas = 0.5 * np.linalg.norm(np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]]), axis=1)
    np.testing.assert_allclose(np.sort(c.weights), np.sort(np.repeat(areas / 3, 3)), rtol=1e-14)
    assert c.area == pytest.approx(1.5 + math.sqrt(3) / 2, rel=1e-14)
    assert (np.einsum("ij,ij->i", c.normals, c.points - 0.25) > 0).all()


def test_from_mesh_torus():
    big_r, small_r, s = 0.1, 0.03, 0.006
    v, f = torus_mesh(big_r, small_r, 64, 32)
    c = PointCloud.from_mesh(v, f.tolist(), s)
    assert_unit_normals(c)
    assert c.area == pytest.approx(mesh_area(v, f), rel=1e-12)
    assert c.area == pytest.approx(4 * math.pi**2 * big_r * small_r, rel=1e-2)
    assert_samples_on_mesh(c, v, f)
    # on the tube (up to the mesh's chord error) with outward normals, whichever orientation
    # the mesh came in
    inward = PointCloud.from_mesh(v, f[:, ::-1], s)
    assert inward.area == pytest.approx(c.area, rel=1e-12)
    for cloud in (c, inward):
        radial = tube_radial(cloud.points, big_r)
        assert np.abs(np.linalg.norm(radial, axis=1) - small_r).max() < 0.02 * small_r
        assert (np.einsum("ij,ij->i", cloud.normals, radial) > 0.9 * small_r).all()


def tube_radial(points, big_r):
    """Vector from the torus core circle (radius big_r in the xy plane) to each point."""
    xy = points[:, :2]
    core = big_r * xy / np.linalg.norm(xy, axis=1, keepdims=True)
    return points - np.column_stack([core, np.zeros(len(points))])


def test_from_mesh_skips_zero_area_faces():
    # square pyramid whose front side is split at vertex 5, the midpoint of the base edge
    # 0-1; the zero-area triangle (0, 1, 5) joins the unsplit base edge to the split side
    v = np.array([[0.0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [1, 1, 1], [1, 0, 0]])
    f = np.array(
        [
            [0, 2, 1],
            [0, 3, 2],  # base, facing -z
            [0, 5, 4],
            [5, 1, 4],
            [1, 2, 4],
            [2, 3, 4],
            [3, 0, 4],  # sides (front split)
            [0, 1, 5],  # zero area: collinear
        ]
    )
    c = PointCloud.from_mesh(v, f, 0.25)
    expected = 4.0 + 4 * 0.5 * 2 * math.sqrt(2)
    assert c.area == pytest.approx(expected, rel=1e-12)
    assert_unit_normals(c)
    assert (np.einsum("ij,ij->i", c.normals, c.points - [1.0, 1.0, 0.3]) > 0).all()


def two_tetrahedra_sharing_an_edge():
    v = np.array([[0.0, 0, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0]])
    tet1 = [[0, 2, 3], [0, 1, 2], [0, 3, 1], [1, 3, 2]]
    tet2 = [[0, 4, 5], [0, 1, 4], [0, 5, 1], [1, 5, 4]]
    return v, np.array(tet1 + tet2)


@pytest.mark.parametrize(
    ("make", "exc", "match"),
    [
        (lambda v, f: (v, f[1:]), ValueError,
         r"faces: mesh is not closed: 3 edges belong to a single face, e\.g\. \("),
        (lambda v, f: (v, np.vstack([f[:1, ::-1], f[1:]])), ValueError,
         r"faces: mesh is not consistently oriented: 3 edges are traversed twice"),
        (lambda v, f: (v, np.where(f == 7, 8, f)), ValueError,
         r"faces must index vertices 0\.\.7, got face \d+ = \["),
        (lambda v, f: (v, np.where(f == 7, -1, f)), ValueError, r"faces must index vertices"),
        (lambda v, f: (v, np.vstack([[[1, 1, 2]], f])), ValueError,
         r"faces must not repeat a vertex within a face, got face 0 = \[1, 1, 2\]"),
        (lambda v, f: (v, f.astype(float)), TypeError,
         r"faces must be an array of integers, got dtype float64"),
        (lambda v, f: (v, f.astype(bool)), TypeError, r"faces must be an array of integers"),
        (lambda v, f: (v, f[:, :2]), ValueError, r"faces must have shape \(F, 3\) with F >= 1"),
        (lambda v, f: (v, f.ravel()), ValueError, r"faces must have shape \(F, 3\)"),
        (lambda v, f: (v, []), ValueError, r"faces must have shape \(F, 3\)"),
        (lambda v, f: (v[:, :2], f), ValueError, r"vertices must have shape \(V, 3\)"),
        (lambda v, f: (v.astype(complex), f), TypeError, r"vertices must be an array of real"),
        (lambda v, f: (np.where(v == v.max(), np.nan, v), f), ValueError,
         r"vertices must be finite"),
        (lambda v, f: two_tetrahedra_sharing_an_edge(), ValueError,
         r"faces: mesh is not a 2-manifold: 1 edges belong to more than two faces, "
         r"e\.g\. \(0, 1\)"),
        (lambda v, f: (v, np.array([[0, 1, 2], [0, 2, 1]])), ValueError,
         r"faces: mesh encloses no volume"),
    ],
)  # fmt: skip
def test_from_mesh_errors(make, exc, match):
    v, f = make(*cube_mesh(1.0))
    with pytest.raises(exc, match=match):
        PointCloud.from_mesh(v, f, 0.5)


def test_from_mesh_does_not_modify_inputs():
    v, f = cube_mesh(1.0)
    v0, f0 = v.copy(), f.copy()
    PointCloud.from_mesh(v, f[:, ::-1], 0.4)
    np.testing.assert_array_equal(v, v0)
    np.testing.assert_array_equal(f, f0)


# --------------------------------------------------------------------------------------------
# spacing validation (all constructors), halfspace
# --------------------------------------------------------------------------------------------

CONSTRUCTORS = {
    "box2": lambda s: PointCloud.box([1.0, 1.0], s),
    "box3": lambda s: PointCloud.box([1.0, 1.0, 1.0], s),
    "disk": lambda s: PointCloud.disk(1.0, s),
    "sphere": lambda s: PointCloud.sphere(1.0, s),
    "capsule2": lambda s: PointCloud.capsule(1.0, 1.0, s, dim=2),
    "capsule3": lambda s: PointCloud.capsule(1.0, 1.0, s),
    "polygon": lambda s: PointCloud.polygon([[0, 0], [1, 0], [0, 1]], s),
    "t2": lambda s: PointCloud.t_shape(scale=0.01, spacing=s),
    "t3": lambda s: PointCloud.t_shape(scale=0.01, spacing=s, dim=3),
    "mesh": lambda s: PointCloud.from_mesh(*cube_mesh(1.0), s),
}


@pytest.mark.parametrize("make", CONSTRUCTORS.values(), ids=CONSTRUCTORS.keys())
@pytest.mark.parametrize(
    ("spacing", "exc", "match"),
    [
        (0.0, ValueError, r"spacing must be finite and > 0, got 0.0"),
        (-0.1, ValueError, r"spacing must be finite and > 0"),
        (np.nan, ValueError, r"spacing must be finite and > 0"),
        (np.inf, ValueError, r"spacing must be finite and > 0"),
        ("0.1", TypeError, r"spacing must be a real number, got str"),
        (1e-9, ValueError, r"spacing=1e-09 is too small: it would give about .* samples"),
        (1e-300, ValueError, r"spacing=1e-300 is too small"),
    ],
)
def test_spacing_validation(make, spacing, exc, match):
    with pytest.raises(exc, match=match):
        make(spacing)


@pytest.mark.parametrize("make", CONSTRUCTORS.values(), ids=CONSTRUCTORS.keys())
def test_constructors_give_valid_clouds(make):
    c = make(0.2)
    assert_unit_normals(c)
    assert (c.weights > 0).all() and c.kind is not None
    assert not c.points.flags.writeable


def test_halfspace():
    c = PointCloud.halfspace([0.0, 0.0, -0.5], [0.0, 0.0, 3.0])
    assert c.kind == "halfspace" and len(c) == 1 and c.dim == 3
    np.testing.assert_array_equal(c.normals, [[0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(c.points, [[0.0, 0.0, -0.5]])
    np.testing.assert_array_equal(c.weights, [1.0])
    assert c.size == 0.0 and c.area == 1.0
    c2 = PointCloud.halfspace([1, 2], [1, 1])
    assert c2.dim == 2
    np.testing.assert_allclose(c2.normals, [[math.sqrt(0.5), math.sqrt(0.5)]], rtol=1e-15)
    with pytest.raises(ValueError, match=r"normal must be a nonzero vector"):
        PointCloud.halfspace([0, 0], [0, 0])
    with pytest.raises(ValueError, match=r"point must have shape \(2,\) or \(3,\), got \(4,\)"):
        PointCloud.halfspace([0, 0, 0, 0], [0, 0, 0, 1])
    with pytest.raises(
        ValueError, match=r"normal must have shape \(2,\) to match point, got \(3,\)"
    ):
        PointCloud.halfspace([0, 0], [0, 0, 1])
    with pytest.raises(ValueError, match=r"point must be finite"):
        PointCloud.halfspace([0, np.inf], [0, 1])
    with pytest.raises(TypeError, match=r"normal must be an array of real numbers"):
        PointCloud.halfspace([0, 0], [0, 1j])


# --------------------------------------------------------------------------------------------
# plotting
# --------------------------------------------------------------------------------------------


def test_plot_2d(pyplot):
    c = PointCloud.t_shape()
    ax = c.plot()
    assert ax.name == "rectilinear"
    assert ax.get_aspect() == 1.0
    assert len(ax.collections) == 2  # scatter + quiver
    _, ax2 = pyplot.subplots()
    assert c.plot(ax=ax2, normals=False, scale=0.01, color="k") is ax2
    assert len(ax2.collections) == 1
    assert PointCloud.halfspace([0, 0], [0, 1]).plot() is not None


def test_plot_3d(pyplot):
    c = PointCloud.box([0.05, 0.02, 0.03], 0.01)
    ax = c.plot()
    assert ax.name == "3d"
    ax3 = pyplot.figure().add_subplot(projection="3d")
    assert c.plot(ax=ax3, scale=0.005) is ax3
    _, flat = pyplot.subplots()
    with pytest.raises(ValueError, match=r"ax must be a 3D axes"):
        c.plot(ax=flat)
    with pytest.raises(ValueError, match=r"scale must be finite and > 0"):
        c.plot(scale=-1.0)
    with pytest.raises(TypeError, match=r"normals must be a bool"):
        c.plot(normals="yes")


def test_plot_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install matplotlib"):
        PointCloud.disk(1.0, 0.5).plot()


def test_concatenate_clouds():
    a = PointCloud.box([0.05, 0.04, 0.03], 0.02)
    b = PointCloud.sphere(0.02, 0.02).transformed([0, 0, 0.1, 1, 0, 0, 0])
    c = PointCloud.concatenate([a, b])
    assert len(c) == len(a) + len(b) and c.kind is None
    assert np.array_equal(c.points, np.concatenate([a.points, b.points]))
    assert np.array_equal(c.normals, np.concatenate([a.normals, b.normals]))
    assert c.area == pytest.approx(a.area + b.area, rel=1e-15)
    assert PointCloud.concatenate((a,)) is a
    raises_naming(ValueError, "clouds", lambda: PointCloud.concatenate([]))
    raises_naming(TypeError, "clouds", lambda: PointCloud.concatenate(a))
    raises_naming(TypeError, "clouds[1]", lambda: PointCloud.concatenate([a, "b"]))
    raises_naming(
        ValueError, "clouds", lambda: PointCloud.concatenate([a, PointCloud.disk(1, 0.5)])
    )
    floor = PointCloud.halfspace([0, 0, 0], [0, 0, 1])
    raises_naming(ValueError, "clouds[1]", lambda: PointCloud.concatenate([a, floor]))
