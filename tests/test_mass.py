"""Tests for PointCloud.mass_properties: mass, centre of mass and inertia of the solid a
cloud bounds, checked against textbook formulas and independent numerical integrations
(slicing with Gauss-Legendre, scanlines), under rigid motions, pickling, and for the
sample-quadrature fallback of clouds built from raw arrays."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import softcontact
from softcontact.cloud import MassProperties, PointCloud

PI = math.pi


@pytest.fixture
def rng():
    return np.random.default_rng(20260131)


# --------------------------------------------------------------------------------------------
# independent references
# --------------------------------------------------------------------------------------------


def gauss(f, a, b, n=40):
    """Gauss-Legendre quadrature of f over [a, b] (f vectorized)."""
    x, w = np.polynomial.legendre.leggauss(n)
    t = 0.5 * (b - a) * x + 0.5 * (a + b)
    return 0.5 * (b - a) * float(np.sum(w * f(t)))


def scanline_moments(v, lines=20000):
    """Area, centroid and central (Sxx, Syy, Sxy) of a polygon by horizontal scanlines.

    Each scanline at a cell midpoint y crosses the edges at exact x's; the x-integrals of
    1, x, x^2 over the inside intervals are exact, the y-integral is the midpoint rule
    (O(dy^2) error).  Independent of Green's-theorem formulas.
    """
    v = np.asarray(v, dtype=float)
    lo, hi = v[:, 1].min(), v[:, 1].max()
    dy = (hi - lo) / lines
    y = lo + (np.arange(lines) + 0.5) * dy
    a, b = v, np.roll(v, -1, axis=0)
    y0, y1 = a[:, 1], b[:, 1]
    crosses = ((y0[None] <= y[:, None]) & (y[:, None] < y1[None])) | (
        (y1[None] <= y[:, None]) & (y[:, None] < y0[None])
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        x = a[:, 0][None] + (y[:, None] - y0[None]) * ((b[:, 0] - a[:, 0]) / (y1 - y0))[None]
    x = np.sort(np.where(crosses, x, np.inf), axis=1)
    if x.shape[1] % 2:
        x = np.column_stack([x, np.full(lines, np.inf)])
    assert np.all(crosses.sum(axis=1) % 2 == 0)
    xl, xr = x[:, 0::2], x[:, 1::2]
    inside = np.isfinite(xl) & np.isfinite(xr)
    xl, xr = np.where(inside, xl, 0.0), np.where(inside, xr, 0.0)
    i0 = np.sum(xr - xl, axis=1)
    i1 = np.sum(xr**2 - xl**2, axis=1) / 2
    i2 = np.sum(xr**3 - xl**3, axis=1) / 3
    area = np.sum(i0) * dy
    cx, cy = np.sum(i1) * dy / area, np.sum(i0 * y) * dy / area
    sxx = np.sum(i2) * dy - area * cx * cx
    syy = np.sum(i0 * y * y) * dy - area * cy * cy
    sxy = np.sum(i1 * y) * dy - area * cx * cy
    return area, np.array([cx, cy]), sxx, syy, sxy


def t_rectangle_moments(scale=1.0):
    """The T as two rectangles (bar 120 x 30 over stem 30 x 90), parallel-axis theorem.

    Returns the area, the centroid in the *uncentred* frame and the central Sxx, Syy.
    """
    rects = [(120.0, 30.0, 0.0, 15.0), (30.0, 90.0, 0.0, -45.0)]  # w, h, cx, cy
    area = sum(w * h for w, h, _, _ in rects)
    cy = sum(w * h * y for w, h, _, y in rects) / area
    sxx = sum(w * h * w * w / 12 for w, h, _, _ in rects)  # int (x - cx)^2, cx = 0
    syy = sum(w * h * (h * h / 12 + (y - cy) ** 2) for w, h, _, y in rects)
    return area * scale**2, np.array([0.0, cy]) * scale, sxx * scale**4, syy * scale**4


def star_polygon(rng, k=15, centre=(0.3, -0.2)):
    """A random non-convex polygon, star-shaped about ``centre`` (hence simple), ccw."""
    ang = np.sort(rng.uniform(0, 2 * PI, k))
    ang += np.arange(k) * 1e-3  # keep the angles distinct
    rad = rng.uniform(0.3, 1.0, k)
    return np.column_stack([rad * np.cos(ang), rad * np.sin(ang)]) + centre


def box_mesh(he, centre=(0.0, 0.0, 0.0)):
    """The 12-triangle mesh of an axis-aligned box, outward faces."""
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    verts = corners * np.asarray(he, float) + centre
    idx = {tuple(c): i for i, c in enumerate(corners.astype(int))}
    faces = []
    for axis in range(3):
        u, w = [k for k in range(3) if k != axis]
        for s in (-1, 1):
            quad = []
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                c = [0, 0, 0]
                c[axis], c[u], c[w] = s, a, b
                quad.append(idx[tuple(c)])
            # (u, w) counter-clockwise seen from +axis is outward when e_u x e_w = +e_axis
            sign = s * np.cross(np.eye(3)[u], np.eye(3)[w])[axis]
            q = quad if sign > 0 else quad[::-1]
            faces += [[q[0], q[1], q[2]], [q[0], q[2], q[3]]]
    return verts, np.array(faces)


def torus_mesh(big_r, small_r, nu, nv):
    """Polyhedral torus about the z axis (inscribed: vertices on the smooth torus)."""
    u = 2 * PI * np.arange(nu) / nu
    w = 2 * PI * np.arange(nv) / nv
    uu, ww = np.meshgrid(u, w, indexing="ij")
    rho = big_r + small_r * np.cos(ww)
    verts = np.column_stack(
        [(rho * np.cos(uu)).ravel(), (rho * np.sin(uu)).ravel(), (small_r * np.sin(ww)).ravel()]
    )
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    a = (i * nv + j).ravel()
    b = (((i + 1) % nu) * nv + j).ravel()
    c = (((i + 1) % nu) * nv + (j + 1) % nv).ravel()
    d = (i * nv + (j + 1) % nv).ravel()
    return verts, np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])


def octahedron_mesh(a):
    verts = a * np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]])
    faces = [[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]]
    return verts.astype(float), np.array(faces)


def random_pose(rng, dim):
    if dim == 2:
        theta = rng.uniform(-PI, PI)
        c, s = math.cos(theta), math.sin(theta)
        t = rng.normal(size=2)
        return np.array([*t, theta]), np.array([[c, -s], [s, c]]), t
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    rot = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )
    t = rng.normal(size=3)
    return np.concatenate([t, q]), rot, t


def assert_props(mp, mass, com, inertia, rtol=1e-12, length=1.0):
    """Mass and inertia to rtol; com to rtol * (length + |com|) (length: the object size)."""
    assert mp.mass == pytest.approx(mass, rel=rtol)
    scale = length + float(np.max(np.abs(com)))
    np.testing.assert_allclose(mp.com, com, rtol=0, atol=rtol * scale)
    np.testing.assert_allclose(mp.inertia, inertia, rtol=0, atol=rtol * np.max(np.abs(inertia)))


def assert_physical_inertia(inertia):
    """Symmetric positive definite, principal moments satisfy the triangle inequalities."""
    inertia = np.asarray(inertia)
    np.testing.assert_array_equal(inertia, inertia.T)
    ev = np.linalg.eigvalsh(inertia)
    assert ev.min() > 0
    tol = 1e-12 * ev.max()
    assert ev[0] + ev[1] >= ev[2] - tol


# --------------------------------------------------------------------------------------------
# primitives against textbook formulas
# --------------------------------------------------------------------------------------------


def test_returns_named_tuple_exported():
    mp = PointCloud.box([0.5, 0.25], 0.1).mass_properties()
    assert isinstance(mp, MassProperties) and softcontact.MassProperties is MassProperties
    assert mp._fields == ("mass", "com", "inertia")
    mass, com, inertia = mp
    assert type(mass) is float and type(inertia) is float
    assert isinstance(com, np.ndarray) and com.shape == (2,) and com.dtype == np.float64
    mp3 = PointCloud.box([0.5, 0.25, 0.1], 0.1).mass_properties()
    assert mp3.com.shape == (3,) and mp3.inertia.shape == (3, 3)


def test_box_2d_and_3d():
    a, b, c, rho = 0.05, 0.02, 0.03, 7.0
    m = rho * 4 * a * b
    w, h = 2 * a, 2 * b
    assert_props(
        PointCloud.box([a, b], 0.01).mass_properties(rho), m, [0, 0], m * (w * w + h * h) / 12
    )
    m = rho * 8 * a * b * c
    w, h, d = 2 * a, 2 * b, 2 * c
    want = np.diag([m * (h * h + d * d), m * (w * w + d * d), m * (w * w + h * h)]) / 12
    assert_props(PointCloud.box([a, b, c], 0.01).mass_properties(rho), m, [0, 0, 0], want)


def test_disk_and_sphere():
    r, rho = 0.3, 2.5
    m = rho * PI * r * r
    assert_props(PointCloud.disk(r, 0.05).mass_properties(rho), m, [0, 0], m * r * r / 2)
    m = rho * 4 / 3 * PI * r**3
    mp = PointCloud.sphere(r, 0.1).mass_properties(rho)
    assert_props(mp, m, [0, 0, 0], np.eye(3) * 2 / 5 * m * r * r)


@pytest.mark.parametrize("h", [0.0, 0.07, 0.4])
def test_capsule_3d_against_slicing(h):
    """Slices normal to the axis are disks of radius rho(z): area pi rho^2, polar moment
    pi rho^4 / 2, diametral pi rho^4 / 4; integrated over z (caps exactly by Gauss)."""
    r, rho = 0.1, 3.0
    pieces = [
        (-h - r, -h, lambda z: r * r - (z + h) ** 2),
        (-h, h, lambda z: np.full_like(z, r * r)),
        (h, h + r, lambda z: r * r - (z - h) ** 2),
    ]
    pieces = [p for p in pieces if p[1] > p[0]]

    def integral(f):
        return sum(gauss(lambda z, g=g: f(z, g(z)), lo, hi) for lo, hi, g in pieces)

    mass = rho * integral(lambda z, r2: PI * r2)
    axial = rho * integral(lambda z, r2: PI * r2 * r2 / 2)
    transverse = rho * integral(lambda z, r2: PI * r2 * r2 / 4 + PI * r2 * z * z)
    mp = PointCloud.capsule(r, h, 0.02).mass_properties(rho)
    assert_props(mp, mass, [0, 0, 0], np.diag([transverse, transverse, axial]))
    if h == 0:
        assert_props(mp, *PointCloud.sphere(r, 0.05).mass_properties(rho))


@pytest.mark.parametrize("h", [0.0, 0.07, 0.4])
def test_capsule_2d_against_slicing(h):
    """Slices normal to x: a segment of half height y(x); int y^2 over it is 2 y^3 / 3.
    The caps are integrated in theta (x = h + r sin theta, y = r cos theta)."""
    r, rho = 0.1, 3.0

    def cap(f):  # both caps (symmetric), x = +-(h + r sin t), dx = r cos t dt
        return 2 * gauss(lambda t: f(h + r * np.sin(t), r * np.cos(t)) * r * np.cos(t), 0, PI / 2)

    def total(f):
        mid = gauss(lambda x: f(x, np.full_like(x, r)), -h, h) if h > 0 else 0.0
        return mid + cap(f)

    mass = rho * total(lambda x, y: 2 * y)
    polar = rho * total(lambda x, y: 2 * y * x * x + 2 * y**3 / 3)
    mp = PointCloud.capsule(r, h, 0.02, dim=2).mass_properties(rho)
    assert_props(mp, mass, [0, 0], polar)
    if h == 0:
        assert_props(mp, *PointCloud.disk(r, 0.05).mass_properties(rho))


def test_capsule_axis_convention():
    """The 3D capsule lies along z, like its samples: the smallest moment is about z."""
    c = PointCloud.capsule(0.1, 0.3, 0.05)
    lo, hi = c.bounds
    assert np.argmax(hi - lo) == 2
    assert np.argmin(np.diag(c.mass_properties().inertia)) == 2


def test_density_scales_mass_and_inertia_only():
    c = PointCloud.t_shape(dim=3)
    one, many = c.mass_properties(), c.mass_properties(density=1250.0)
    assert many.mass == pytest.approx(1250.0 * one.mass, rel=1e-15)
    np.testing.assert_array_equal(many.com, one.com)
    np.testing.assert_allclose(many.inertia, 1250.0 * one.inertia, rtol=1e-15)
    np.testing.assert_array_equal(c.mass_properties(np.float32(2.0)).inertia, 2.0 * one.inertia)


# --------------------------------------------------------------------------------------------
# polygons and the T
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("clockwise", [False, True])
def test_polygon_rectangle(clockwise):
    w, h, rho = 0.3, 0.1, 4.0
    theta, centre = 0.7, np.array([1.5, -0.4])
    rot = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    v = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) / 2 @ rot.T + centre
    if clockwise:
        v = v[::-1]
    m = rho * w * h
    mp = PointCloud.polygon(v, 0.02).mass_properties(rho)
    assert_props(mp, m, centre, m * (w * w + h * h) / 12)
    # the same rectangle as a box primitive
    box = PointCloud.box([w / 2, h / 2], 0.02).transformed([*centre, theta]).mass_properties(rho)
    assert_props(mp, *box)


def test_t_shape_2d_against_rectangles_and_scanlines():
    scale, rho = 1e-3, 800.0
    c = PointCloud.t_shape(scale=scale)
    mp = c.mass_properties(rho)
    area, _, sxx, syy = t_rectangle_moments(scale)
    assert_props(mp, rho * area, [0, 0], rho * (sxx + syy))
    a, com, sxx2, syy2, sxy2 = scanline_moments(PointCloud.t_shape_vertices(scale))
    assert a == pytest.approx(area, rel=1e-9)
    np.testing.assert_allclose(com, 0, atol=1e-9 * scale)
    assert sxx2 == pytest.approx(sxx, rel=1e-7) and syy2 == pytest.approx(syy, rel=1e-7)
    assert abs(sxy2) < 1e-9 * sxx


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_polygon_random_star_against_scanlines(seed):
    v = star_polygon(np.random.default_rng(seed))
    e = np.roll(v, -1, axis=0) - v
    turn = e[:, 0] * np.roll(e[:, 1], -1) - e[:, 1] * np.roll(e[:, 0], -1)
    assert (turn < 0).any() and (turn > 0).any()  # not convex
    area, com, sxx, syy, _ = scanline_moments(v)
    for verts in (v, v[::-1]):  # either orientation
        mp = PointCloud.polygon(verts, 0.05).mass_properties(2.0)
        assert mp.mass == pytest.approx(2.0 * area, rel=1e-7)
        np.testing.assert_allclose(mp.com, com, rtol=0, atol=1e-7)
        assert mp.inertia == pytest.approx(2.0 * (sxx + syy), rel=1e-6)


@pytest.mark.parametrize("thickness, scale", [(30.0, 1e-3), (12.5, 2e-3)])
def test_t_shape_3d_prism(thickness, scale):
    """Prism over the T: m = rho A T; I_xx = rho (T Syy + A T^3/12), I_yy = rho (T Sxx +
    A T^3/12), I_zz = rho T (Sxx + Syy), with thickness in units of scale."""
    rho = 1100.0
    t = thickness * scale
    area, _, sxx, syy = t_rectangle_moments(scale)
    want = rho * np.diag([t * syy + area * t**3 / 12, t * sxx + area * t**3 / 12, t * (sxx + syy)])
    c = PointCloud.t_shape(scale=scale, dim=3, thickness=thickness, spacing=0.01)
    mp = c.mass_properties(rho)
    assert_props(mp, rho * area * t, [0, 0, 0], want)
    # the same prism as a triangle mesh: the exact integrals agree
    v = PointCloud.t_shape_vertices(scale)
    top, bottom = np.column_stack([v, np.full(8, t / 2)]), np.column_stack([v, np.full(8, -t / 2)])
    verts = np.concatenate([bottom, top])
    faces = []
    for i in range(8):  # walls
        j = (i + 1) % 8
        faces += [[i, j, j + 8], [i, j + 8, i + 8]]
    # caps, triangulated by hand: the stem (0 1 2 7) and the bar (6 7 2 3 4 5)
    cap = [[0, 1, 2], [0, 2, 7], [6, 7, 5], [7, 4, 5], [7, 2, 4], [2, 3, 4]]
    faces += [[a + 8, b + 8, c + 8] for a, b, c in cap] + [[a, c, b] for a, b, c in cap]
    mesh = PointCloud.from_mesh(verts, np.array(faces), 0.01).mass_properties(rho)
    assert_props(mesh, *mp)


# --------------------------------------------------------------------------------------------
# meshes
# --------------------------------------------------------------------------------------------


def test_mesh_box_against_formula_and_primitive():
    he, centre, rho = np.array([0.2, 0.1, 0.05]), np.array([1.0, -2.0, 0.5]), 3.0
    verts, faces = box_mesh(he, centre)
    mp = PointCloud.from_mesh(verts, faces, 0.05).mass_properties(rho)
    m = rho * 8 * np.prod(he)
    w, h, d = 2 * he
    want = np.diag([h * h + d * d, w * w + d * d, w * w + h * h]) * m / 12
    assert_props(mp, m, centre, want)
    pose = np.array([*centre, 1.0, 0, 0, 0])
    assert_props(mp, *PointCloud.box(he, 0.05).transformed(pose).mass_properties(rho))
    # inward-oriented input is flipped by the constructor: same solid
    inward = PointCloud.from_mesh(verts, faces[:, ::-1], 0.05).mass_properties(rho)
    assert_props(inward, *mp)


def test_mesh_octahedron():
    a, rho = 0.3, 2.0
    mp = PointCloud.from_mesh(*octahedron_mesh(a), 0.1).mass_properties(rho)
    m = rho * 4 / 3 * a**3
    assert_props(mp, m, [0, 0, 0], np.eye(3) * m * a * a / 5)  # E[x^2] = a^2/10


def test_mesh_torus_converges_to_analytic():
    big_r, small_r, rho = 0.3, 0.1, 1.0
    m = rho * 2 * PI**2 * big_r * small_r**2
    axis, diam = m * (big_r**2 + 0.75 * small_r**2), m * (big_r**2 / 2 + 5 / 8 * small_r**2)
    errors = []
    for n in (48, 96):
        verts, faces = torus_mesh(big_r, small_r, 2 * n, n)
        mp = PointCloud.from_mesh(verts, faces, 1.0).mass_properties(rho)
        np.testing.assert_allclose(mp.com, 0, atol=1e-15)
        i = mp.inertia
        assert abs(i[0, 1]) < 1e-14 * axis and abs(i[0, 2]) < 1e-14 * axis
        assert i[0, 0] == pytest.approx(i[1, 1], rel=1e-12)
        errors.append([mp.mass / m - 1, i[2, 2] / axis - 1, i[0, 0] / diam - 1])
    errors = np.array(errors)
    # the inscribed polyhedron converges at second order: 4x per halving, and
    # Richardson extrapolation of the two leaves only the fourth-order term
    assert np.abs(errors[1]).max() < 2e-3
    np.testing.assert_allclose(errors[0] / errors[1], 4.0, rtol=0.01)
    assert np.abs((4 * errors[1] - errors[0]) / 3).max() < 1e-5


def test_mesh_offset_and_shell():
    """Exact for any placement (far from the origin) and for a hollow shell."""
    outer, rho = np.array([0.2, 0.2, 0.2]), 1.0
    far = np.array([1e3, -2e3, 5e2])
    vo, fo = box_mesh(outer, far)
    vi, fi = box_mesh(outer / 2, far)
    shell = PointCloud.from_mesh(
        np.concatenate([vo, vi]), np.concatenate([fo, fi[:, ::-1] + 8]), 1.0
    )
    mp = shell.mass_properties(rho)
    m_o, m_i = 8 * np.prod(outer), np.prod(outer)
    i_o, i_i = m_o * (0.4**2 + 0.4**2) / 12, m_i * (0.2**2 + 0.2**2) / 12
    assert mp.mass == pytest.approx(m_o - m_i, rel=1e-12)
    np.testing.assert_allclose(mp.com, far, rtol=1e-14)
    np.testing.assert_allclose(mp.inertia, np.eye(3) * (i_o - i_i), rtol=1e-9, atol=1e-12 * i_o)


@pytest.mark.parametrize("half", [0.05, 0.19])
def test_mesh_with_a_distant_inverted_component_is_refused(half):
    """from_mesh accepts it (each component is consistently oriented, the total volume is
    positive), but no positive mass distribution has these moments."""
    vo, fo = box_mesh([0.2, 0.2, 0.2])
    vi, fi = box_mesh([half] * 3, [1.0, 0.0, 0.0])  # disjoint, inside-out
    verts, faces = np.concatenate([vo, vi]), np.concatenate([fo, fi[:, ::-1] + 8])
    cloud = PointCloud.from_mesh(verts, faces, 1.0)
    with pytest.raises(ValueError, match="positive mass"):
        cloud.mass_properties()


# --------------------------------------------------------------------------------------------
# rigid motions
# --------------------------------------------------------------------------------------------

CLOUDS_2D = [
    ("box", lambda: PointCloud.box([0.05, 0.02], 0.01)),
    ("disk", lambda: PointCloud.disk(0.1, 0.02)),
    ("capsule", lambda: PointCloud.capsule(0.05, 0.1, 0.02, dim=2)),
    ("polygon", lambda: PointCloud.polygon(star_polygon(np.random.default_rng(5)), 0.1)),
    ("t_shape", lambda: PointCloud.t_shape()),
]
CLOUDS_3D = [
    ("box", lambda: PointCloud.box([0.05, 0.02, 0.03], 0.01)),
    ("sphere", lambda: PointCloud.sphere(0.1, 0.03)),
    ("capsule", lambda: PointCloud.capsule(0.05, 0.1, 0.03)),
    ("t_shape", lambda: PointCloud.t_shape(dim=3, spacing=0.01)),
    ("torus", lambda: PointCloud.from_mesh(*torus_mesh(0.3, 0.1, 24, 12), 1.0)),
    ("offset box mesh", lambda: PointCloud.from_mesh(*box_mesh([0.1, 0.2, 0.3], [1, 2, 3]), 1.0)),
]
ALL = [(f"{d}d-{n}", f) for d, group in ((2, CLOUDS_2D), (3, CLOUDS_3D)) for n, f in group]


@pytest.mark.parametrize("make", [f for _, f in ALL], ids=[n for n, _ in ALL])
def test_transformed_moves_com_and_rotates_inertia(rng, make):
    cloud = make()
    base = cloud.mass_properties(3.0)
    for _ in range(3):
        pose, rot, t = random_pose(rng, cloud.dim)
        moved = cloud.transformed(pose).mass_properties(3.0)
        assert moved.mass == pytest.approx(base.mass, rel=1e-14)
        np.testing.assert_allclose(moved.com, rot @ base.com + t, rtol=0, atol=1e-12)
        want = base.inertia if cloud.dim == 2 else rot @ base.inertia @ rot.T
        np.testing.assert_allclose(moved.inertia, want, rtol=0, atol=1e-12 * np.max(want))
        # moving back recovers the original
        back = cloud.transformed(pose).transformed(_inverse(pose, rot, t)).mass_properties(3.0)
        assert_props(back, *base, rtol=1e-10)


def _inverse(pose, rot, t):
    if len(pose) == 3:
        return np.array([*(-rot.T @ t), -pose[2]])
    return np.concatenate([-rot.T @ t, [pose[3], *(-pose[4:])]])


def test_transformed_agrees_with_moved_vertices(rng):
    v = star_polygon(rng)
    pose, rot, t = random_pose(rng, 2)
    moved = PointCloud.polygon(v, 0.1).transformed(pose).mass_properties()
    assert_props(moved, *PointCloud.polygon(v @ rot.T + t, 0.1).mass_properties(), rtol=1e-11)
    verts, faces = torus_mesh(0.3, 0.1, 16, 8)
    pose, rot, t = random_pose(rng, 3)
    moved = PointCloud.from_mesh(verts, faces, 1.0).transformed(pose).mass_properties()
    direct = PointCloud.from_mesh(verts @ rot.T + t, faces, 1.0).mass_properties()
    assert_props(moved, *direct, rtol=1e-11)


# --------------------------------------------------------------------------------------------
# physical sanity, pickling, immutability
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [f for _, f in CLOUDS_3D], ids=[n for n, _ in CLOUDS_3D])
def test_inertia_spd_and_triangle_inequalities(rng, make):
    cloud = make()
    pose, _, _ = random_pose(rng, 3)
    for c in (cloud, cloud.transformed(pose)):
        mp = c.mass_properties(7.0)
        assert mp.mass > 0
        assert_physical_inertia(mp.inertia)


@pytest.mark.parametrize("make", [f for _, f in ALL], ids=[n for n, _ in ALL])
def test_pickle_keeps_geometry(rng, make):
    cloud = make()
    pose, _, _ = random_pose(rng, cloud.dim)
    for c in (cloud, cloud.transformed(pose)):
        want = c.mass_properties(2.0)
        for clone in (
            pickle.loads(pickle.dumps(c)),
            pickle.loads(pickle.dumps(c, protocol=0)),
            copy.deepcopy(c),
        ):
            got = clone.mass_properties(2.0)
            assert got.mass == want.mass
            np.testing.assert_array_equal(got.com, want.com)
            np.testing.assert_array_equal(got.inertia, want.inertia)
            assert clone._geometry.shape == c._geometry.shape


def test_geometry_is_private_and_immutable():
    c = PointCloud.from_mesh(*box_mesh([0.1, 0.1, 0.1]), 0.1)
    with pytest.raises(AttributeError, match="immutable"):
        c._geometry = None
    g = c._geometry
    with pytest.raises(AttributeError):
        g.shape = "sphere"
    with pytest.raises(TypeError):
        g.params["vertices"] = None
    assert not g.params["vertices"].flags.writeable and not g.rot.flags.writeable
    assert PointCloud(c.points, c.normals, c.weights)._geometry is None


def test_geometry_does_not_alias_caller_arrays():
    verts, faces = box_mesh([0.1, 0.2, 0.3])
    c = PointCloud.from_mesh(verts, faces, 0.1)
    want = c.mass_properties()
    verts *= 10.0
    faces[:] = 0
    got = c.mass_properties()
    assert got.mass == want.mass
    v = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    p = PointCloud.polygon(v, 0.5)
    v[1, 0] = 5.0
    assert p.mass_properties().mass == pytest.approx(0.5)


def test_old_pickle_state_without_geometry_falls_back():
    c = PointCloud.box([0.1, 0.1, 0.1], 0.05)
    state = c.__getstate__()
    del state["geometry"]
    old = PointCloud.__new__(PointCloud)
    old.__setstate__(state)
    assert old._geometry is None and old.mass_properties().mass == pytest.approx(0.008, rel=1e-12)


# --------------------------------------------------------------------------------------------
# the sample-quadrature fallback
# --------------------------------------------------------------------------------------------


def raw(cloud):
    return PointCloud(cloud.points, cloud.normals, cloud.weights)


def test_fallback_converges_like_spacing_squared():
    he = np.array([0.25, 0.125, 0.375])  # spacings divide the sides exactly
    exact = PointCloud.box(he, 0.1).mass_properties(5.0)
    errors = []
    for spacing in (0.125, 0.0625, 0.03125):
        mp = raw(PointCloud.box(he, spacing)).mass_properties(5.0)
        # trapezoid samples of flat faces: volume and centroid exact (integrands linear)
        assert mp.mass == pytest.approx(exact.mass, rel=1e-13)
        np.testing.assert_allclose(mp.com, 0, atol=1e-15)
        assert_physical_inertia(mp.inertia)
        errors.append(np.linalg.norm(mp.inertia - exact.inertia) / np.linalg.norm(exact.inertia))
    np.testing.assert_allclose(np.array(errors[:-1]) / errors[1:], 4.0, rtol=1e-6)
    assert errors[-1] < 1e-2


def test_fallback_2d_and_curved():
    he = [0.25, 0.125]
    exact = PointCloud.box(he, 0.05).mass_properties()
    e = [
        abs(raw(PointCloud.box(he, s)).mass_properties().inertia / exact.inertia - 1)
        for s in (0.0625, 0.03125)
    ]
    assert e[0] / e[1] == pytest.approx(4.0, rel=1e-6)
    pose = np.array([0.3, -0.1, 0.4, 0.5, 0.5, 0.5, 0.5])
    c = PointCloud.capsule(0.1, 0.2, 0.005).transformed(pose)
    assert_props(raw(c).mass_properties(), *c.mass_properties(), rtol=2e-3)
    c = PointCloud.sphere(0.1, 0.005)
    assert_props(raw(c).mass_properties(), *c.mass_properties(), rtol=1e-3)


def test_fallback_refuses_what_is_not_a_closed_surface(rng):
    box = PointCloud.box([0.1, 0.1, 0.1], 0.02)
    open_box = box.normals[:, 2] < 0.5  # drop the top face
    with pytest.raises(ValueError, match=r"closed surface.*mass and inertia must be given"):
        PointCloud(
            box.points[open_box], box.normals[open_box], box.weights[open_box]
        ).mass_properties()
    with pytest.raises(ValueError, match=r"volume .* is not > 0"):
        PointCloud(box.points, -box.normals, box.weights).mass_properties()  # inward normals
    with pytest.raises(ValueError, match="mass and inertia must be given"):
        PointCloud([[0.0, 0.0]], [[0.0, 1.0]]).mass_properties()
    p = rng.normal(size=(4000, 3))
    n = rng.normal(size=(4000, 3))
    with pytest.raises(ValueError, match="mass and inertia must be given"):
        PointCloud(p, n, normalize=True).mass_properties()


# --------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 3])
def test_halfspace_is_unbounded(dim):
    h = PointCloud.halfspace(np.zeros(dim), np.eye(dim)[-1])
    with pytest.raises(ValueError, match="unbounded: give mass and inertia, or make it static"):
        h.mass_properties()
    moved = h.transformed(
        np.array([1.0, 2.0, 0.3]) if dim == 2 else np.array([1, 2, 3, 1, 0, 0, 0.0])
    )
    with pytest.raises(ValueError, match="unbounded"):
        pickle.loads(pickle.dumps(moved)).mass_properties()


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, -math.inf])
def test_bad_density_value(bad):
    with pytest.raises(ValueError, match="density must be finite and > 0"):
        PointCloud.disk(0.1, 0.05).mass_properties(bad)


@pytest.mark.parametrize("bad", ["1", None, 1j, True, [1.0], np.array([1.0])])
def test_bad_density_type(bad):
    with pytest.raises(TypeError, match="density must be a real number"):
        PointCloud.box([0.1, 0.1, 0.1], 0.05).mass_properties(bad)
