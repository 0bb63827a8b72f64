"""SSDF values and derivatives against the independent NumPy reference
(tests/reference.py), plus the special cases docs/method.md section 2 names.

Tolerances.  C must agree with the reference to 1e-12 relative (normwise per
query and per derivative order) wherever the problem itself is that well
conditioned.  The softmax weights are ill-conditioned at small eps far from the
cloud: perturbing the inputs by one ulp moves the exponents by about
u (|x - c0| + rho) rho / eps (c0, rho: centre and radius of the cloud), and no
double-precision evaluation can do better than that.  Each comparison therefore
allows 1e-12 + 64 u cond with cond = (|x - c0| + rho) rho / eps -- a backward-
error bound, not a loosened tolerance: for the bulk of the range it is 1e-12.
The reference runs in extended precision (np.longdouble, 64-bit mantissa on
x86-64) so that it is the more accurate side of every comparison.
The scale of each comparison is the sum of the magnitudes of the terms that make
up that output (the classic bound for a computed sum is u times that sum), so a
derivative that is exactly zero by symmetry (a box, the T) is compared at the
scale of its terms, not at zero.
Weights below exp(-708) of the largest are exactly zero in C (sc_exp.h); their
contributions are below 1e-250 and are the absolute floor of the comparison.
"""

import numpy as np
import pytest
from conftest import random_cloud
from reference import box_sdf_ref, ssdf_ref

import softcontact as sc

U = np.finfo(float).eps
HP = np.longdouble if np.finfo(np.longdouble).eps < 1e-18 else np.float64
FLUSH_FLOOR = 1e-250
EPS_FACTORS = [1e-8, 1e-6, 1e-4, 1e-2, 1.0, 1e2]


def _cond(cloud, x, eps):
    lo, hi = cloud.bounds
    c0 = 0.5 * (lo + hi)
    rho = np.max(np.linalg.norm(cloud.points - c0, axis=1))
    return (np.linalg.norm(x - c0, axis=-1) + rho) * rho / eps


def term_magnitudes(cloud, x, eps):
    """Per query, the sums of |terms| of phi and of each derivative order (float64 is enough).

    With w the weights, H = h - phi, P = p - E[p], N = n - E[n], c = 2/eps, |H| padded by
    |x| + |p| (the size of the numbers whose difference h is) and |P|, |N| by 4 u |p|, 4 u
    (a computed mean is only defined to that):
    M0 = max |x| + max |p|;  M1 = E|n| + c E[|H| |P|];  M2 = 2 c E[|N| |P|] + c^2 E[|H| |P|^2];
    M3 = 3 c^2 E[|N| |P|^2] + c^3 (E[|H| |P|^3] + 3 E[|H| |P|] E[|P|^2]).
    """
    p, n, a = cloud.points, cloud.normals, cloud.weights
    c = 2.0 / eps
    pmax = np.max(np.abs(p))
    out = np.zeros((4, len(x)))
    for s in range(0, len(x), 256):
        xq = x[s : s + 256]
        d = np.sum((xq[:, None, :] - p[None]) ** 2, axis=-1)
        z = np.log(a) - d / eps
        with np.errstate(under="ignore"):
            w = np.exp(z - z.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        h = np.einsum("mid,id->mi", xq[:, None, :] - p[None], n)
        phi = np.sum(w * h, axis=1)
        pc = np.linalg.norm(p[None] - (w @ p)[:, None, :], axis=-1) + 4 * U * pmax
        nc = np.linalg.norm(n[None] - (w @ n)[:, None, :], axis=-1) + 4 * U
        hc = np.abs(h - phi[:, None]) + np.max(np.abs(xq), axis=1)[:, None] + pmax

        def E(f, w=w):
            return np.sum(w * f, axis=1)

        out[0, s : s + 256] = np.max(np.abs(xq), axis=1) + pmax
        out[1, s : s + 256] = 1.0 + c * E(hc * pc)
        out[2, s : s + 256] = 2 * c * E(nc * pc) + c**2 * E(hc * pc**2)
        out[3, s : s + 256] = 3 * c**2 * E(nc * pc**2) + c**3 * (
            E(hc * pc**3) + 3 * E(hc * pc) * E(pc**2)
        )
    return out


def reference(cloud, x, eps, order):
    return ssdf_ref(cloud.points, cloud.normals, cloud.weights, x, eps, order, dtype=HP)


def prune_floor(eps, order):
    """What pruning may drop (docs/method.md section 10): below 1e-18 of each order's
    natural scale eps^((1 - k) / 2); 1e-17 here.  Dense evaluation: nothing."""
    return 1e-17 * eps ** ((1 - order) / 2)


def assert_matches(out, ref, cond, mags, rtol=1e-12, what="", eps=None):
    """Comparison per query and order, relative to the terms' magnitudes (module docstring);
    with `eps` (a pruned evaluation) plus the pruning floor."""
    for k, (a, b) in enumerate(zip(out, ref, strict=True)):
        if a is None:
            assert b is None
            continue
        b = np.asarray(b, dtype=float)
        axes = tuple(range(1, a.ndim))
        tol = (rtol + 64 * U * cond) * mags[k] + FLUSH_FLOOR
        if eps is not None:
            tol = tol + prune_floor(eps, k)
        err = np.max(np.abs(a - b), axis=axes) if axes else np.abs(a - b)
        bad = np.flatnonzero(~(err <= tol))
        assert bad.size == 0, (
            f"{what} order {k}: {bad.size} queries off, worst index "
            f"{bad[np.argmax(err[bad] / tol[bad])]}, err {err[bad].max():.3g}, "
            f"tol {tol[bad].min():.3g}"
        )


def _queries(rng, cloud, n_near=60, n_far=12):
    L = cloud.size
    lo, hi = cloud.bounds
    c0 = 0.5 * (lo + hi)
    near = c0 + rng.uniform(-1.0, 1.0, size=(n_near, cloud.dim)) * L
    on = cloud.points[rng.choice(len(cloud), 5, replace=False)]  # exactly on samples
    dirs = rng.normal(size=(n_far, cloud.dim))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    far = c0 + dirs * L * np.geomspace(3.0, 1e3, n_far)[:, None]
    return np.concatenate([near, on, far])


@pytest.mark.parametrize("dense", [True, False], ids=["dense", "pruned"])
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("eps_factor", EPS_FACTORS)
def test_random_clouds_match_reference(rng, dim, eps_factor, dense):
    cloud = random_cloud(rng, dim, 150, scale=0.05)
    eps = eps_factor * cloud.size**2
    x = _queries(rng, cloud)
    out = sc.ssdf(cloud, x, eps, order=3, dense=dense)
    assert all(np.all(np.isfinite(a)) for a in out)
    assert_matches(
        out,
        reference(cloud, x, eps, 3),
        _cond(cloud, x, eps),
        term_magnitudes(cloud, x, eps),
        what=f"dim {dim} eps {eps_factor}",
        eps=None if dense else eps,
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: sc.PointCloud.box([0.05, 0.02], 0.004),
        lambda: sc.PointCloud.box([0.05, 0.02, 0.03], 0.008),
        lambda: sc.PointCloud.t_shape(),
        lambda: sc.PointCloud.sphere(0.05, 0.01),
        lambda: sc.PointCloud.capsule(0.02, 0.04, 0.01),
    ],
    ids=["box2", "box3", "T", "sphere", "capsule2"],
)
@pytest.mark.parametrize("eps_factor", [1e-6, 1e-3, 1e-1])
@pytest.mark.parametrize("dense", [True, False], ids=["dense", "pruned"])
def test_constructed_clouds_match_reference(rng, make, eps_factor, dense):
    cloud = make()
    eps = eps_factor * cloud.size**2
    x = _queries(rng, cloud, n_near=40, n_far=4)
    out = sc.ssdf(cloud, x, eps, order=3, dense=dense)
    assert_matches(
        out,
        reference(cloud, x, eps, 3),
        _cond(cloud, x, eps),
        term_magnitudes(cloud, x, eps),
        eps=None if dense else eps,
    )


def test_value_identical_whatever_order_threads_or_batching(rng):
    cloud = random_cloud(rng, 3, 300, scale=0.05)
    x = _queries(rng, cloud)
    eps = 1e-3 * cloud.size**2
    full = sc.ssdf(cloud, x, eps, order=3, num_threads=1)
    for order in range(4):
        for threads in (1, 2, 3):
            r = sc.ssdf(cloud, x, eps, order=order, num_threads=threads)
            for k in range(order + 1):
                np.testing.assert_array_equal(r[k], full[k])
    for i in range(0, len(x), 7):
        one = sc.ssdf(cloud, x[i], eps, order=3)
        for k in range(4):
            np.testing.assert_array_equal(one[k], full[k][i])


def test_large_batch_threads_bitwise(rng):
    cloud = random_cloud(rng, 2, 500, scale=0.05)
    x = rng.uniform(-0.1, 0.1, size=(4000, 2))
    a = sc.ssdf(cloud, x, 1e-4, order=2, num_threads=1)
    b = sc.ssdf(cloud, x, 1e-4, order=2, num_threads=2)
    for u, v in zip(a[:3], b[:3], strict=True):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("dim", [2, 3])
def test_isa_variants_agree(rng, dim):
    supported = sc.build_info()["isa_supported"]
    cloud = random_cloud(rng, dim, 333, scale=0.05)
    x = _queries(rng, cloud)
    for eps_factor in EPS_FACTORS:
        eps = eps_factor * cloud.size**2
        base = sc.ssdf(cloud, x, eps, order=3, isa="generic")
        for name in supported:
            r = sc.ssdf(cloud, x, eps, order=3, isa=name)
            assert_matches(
                r,
                base,
                _cond(cloud, x, eps),
                term_magnitudes(cloud, x, eps),
                rtol=1e-14,
                what=f"{name} vs generic, eps {eps_factor}",
            )


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("eps", [1e-12, 1e-6, 1.0, 1e6])
def test_halfspace_is_exact_plane(rng, dim, eps):
    p = rng.normal(size=dim)
    n = rng.normal(size=dim)
    cloud = sc.PointCloud.halfspace(p, n)
    nn = cloud.normals[0]
    x = rng.normal(size=(50, dim)) * 10
    r = sc.ssdf(cloud, x, eps, order=3)
    exact = (x - cloud.points[0]) @ nn
    np.testing.assert_allclose(r.phi, exact, rtol=1e-15, atol=1e-15 * np.abs(x).max())
    np.testing.assert_array_equal(r.grad, np.broadcast_to(nn, x.shape))
    assert not np.any(r.hess) and not np.any(r.d3)


@pytest.mark.parametrize("half", [[0.05, 0.02], [0.05, 0.02, 0.03]])
def test_small_eps_inside_box_is_exact_box_sdf(rng, half):
    half = np.array(half)
    spacing = 0.0025
    cloud = sc.PointCloud.box(half, spacing)
    eps = 1e-9
    x = rng.uniform(-half, half, size=(4000, len(half)))
    depth = half - np.abs(x)  # depth to the two faces of each axis pair (nearest one)
    order = np.sort(depth, axis=1)
    # unambiguous nearest face: the nearest sample of the nearest face (lateral offset at most
    # spacing/2 per tangent axis) is closer, by a margin of 50 eps, than any other face can be
    lateral = (len(half) - 1) * (spacing / 2) ** 2
    keep = order[:, 1] ** 2 > order[:, 0] ** 2 + lateral + 50 * eps
    x = x[keep]
    assert len(x) > 1000
    r = sc.ssdf(cloud, x, eps, order=1)
    np.testing.assert_allclose(r.phi, box_sdf_ref(half, x), rtol=0, atol=1e-15)


def test_large_eps_zero_set_tends_to_ellipsoid():
    """phi -> -m + Q(x)/eps for eps >> L^2 (Q quadratic): the zero set is a quadric."""
    cloud = sc.PointCloud.box([0.05, 0.02, 0.03], 0.005)
    L = cloud.size
    dirs = np.random.default_rng(7).normal(size=(200, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)

    def zero_set(eps):
        lo = np.zeros(len(dirs))
        hi = np.full(len(dirs), 1e3 * L)
        for _ in range(200):  # bisection on each ray: phi(0) < 0 < phi(far)
            mid = 0.5 * (lo + hi)
            inside = sc.ssdf(cloud, dirs * mid[:, None], eps).phi < 0
            lo = np.where(inside, mid, lo)
            hi = np.where(inside, hi, mid)
        return dirs * lo[:, None]

    def quadric_fit(z):
        x, y, w = z.T
        A = np.stack([x * x, y * y, w * w, x * y, x * w, y * w, x, y, w], axis=1)
        coef, *_ = np.linalg.lstsq(A, np.ones(len(z)), rcond=None)
        resid = np.abs(A @ coef - 1).max()
        Q = np.array(
            [
                [coef[0], coef[3] / 2, coef[4] / 2],
                [coef[3] / 2, coef[1], coef[5] / 2],
                [coef[4] / 2, coef[5] / 2, coef[2]],
            ]
        )
        return resid, np.linalg.eigvalsh(Q)

    resid = []
    for f in (1.0, 1e2, 1e4):
        r, ev = quadric_fit(zero_set(f * L**2))
        resid.append(r)
        if f >= 1e2:
            assert np.all(ev > 0), "zero set is an ellipsoid"
    assert resid[2] < resid[1] < resid[0]
    assert resid[2] < 1e-3


def test_flipped_normals_flip_everything_exactly(rng):
    cloud = random_cloud(rng, 3, 100, scale=0.05)
    flipped = sc.PointCloud(cloud.points, -cloud.normals, cloud.weights)
    x = _queries(rng, cloud)
    a = sc.ssdf(cloud, x, 1e-4, order=3)
    b = sc.ssdf(flipped, x, 1e-4, order=3)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(-u, v)


def test_coincident_samples_and_queries_on_samples(rng):
    """Duplicate samples (a box corner, or repeated points) and queries exactly on them."""
    p = np.array([[0.0, 0.0], [0.0, 0.0], [0.01, 0.0], [0.0, 0.01]])
    n = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    cloud = sc.PointCloud(p, n)
    for eps in (1e-10, 1e-4, 1.0):
        r = sc.ssdf(cloud, p, eps, order=3)
        assert all(np.all(np.isfinite(a)) for a in r)
        assert_matches(
            r, reference(cloud, p, eps, 3), _cond(cloud, p, eps), term_magnitudes(cloud, p, eps)
        )
    # twice the same cloud is the same field (weights are relative)
    twice = sc.PointCloud(np.concatenate([p, p]), np.concatenate([n, n]))
    a = sc.ssdf(cloud, p + 0.003, 1e-4, order=1)
    b = sc.ssdf(twice, p + 0.003, 1e-4, order=1)
    np.testing.assert_allclose(a.phi, b.phi, rtol=1e-14, atol=1e-17)


def test_far_field_finite_over_eps_range(rng):
    cloud = sc.PointCloud.t_shape()
    L = cloud.size
    d = rng.normal(size=(20, 2))
    x = d / np.linalg.norm(d, axis=1, keepdims=True) * 1e3 * L
    for f in EPS_FACTORS:
        r = sc.ssdf(cloud, x, f * L**2, order=3)
        assert all(np.all(np.isfinite(a)) for a in r)
        # far away: outside, and no farther than the distance to the body origin plus L
        assert np.all(r.phi > 0) and np.all(r.phi <= np.linalg.norm(x, axis=1) + L)


@pytest.mark.parametrize("dim", [2, 3])
def test_halfspace_closed_form_for_any_finite_query(rng, dim):
    """A single-sample cloud is evaluated in closed form: exact for every query in the
    valid range (a half-space has no reach limit: rho = 0), NaN only for non-finite x."""
    p, n = rng.normal(size=dim), rng.normal(size=dim)
    n /= np.linalg.norm(n)
    cloud = sc.PointCloud.halfspace(p, n)
    x = np.vstack(
        [
            rng.normal(size=(3, dim)),
            np.clip(1e12 * rng.normal(size=(2, dim)), -1e12, 1e12),
            np.full((1, dim), np.nan),
        ]
    )
    r = sc.ssdf(cloud, x, 1e-4, order=3)
    p, n = cloud.points[0], cloud.normals[0]  # as stored (normalized by the cloud)
    np.testing.assert_allclose(r.phi[:5], (x[:5] - p) @ n, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(r.grad[:5], np.broadcast_to(n, (5, dim)))
    assert not np.any(r.hess[:5]) and not np.any(r.d3[:5])
    assert np.isnan(r.phi[5]) and np.isnan(r.grad[5]).all() and np.isnan(r.d3[5]).all()
    with pytest.raises(ValueError, match=r"x must have coordinates within \[-1e\+12, 1e\+12\]"):
        sc.ssdf(cloud, np.full((1, dim), 2e12), 1e-4)
