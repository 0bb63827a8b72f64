"""Separation field between two posed bodies (docs/method.md sections 3-4): values against the
NumPy reference, pose derivatives against central differences on the manifold (through
softcontact.retract) and Taylor remainders, invariances and the boundary contract."""

import numpy as np
import pytest
from reference import separation_ref

import softcontact as sc
from softcontact.testing import taylor_remainders

EPS = 1e-4


def _unit(q):
    return q / np.linalg.norm(q)


def _scene(rng, dim):
    if dim == 2:
        a = sc.PointCloud.t_shape(spacing=0.006)
        b = sc.PointCloud.disk(0.02, 0.004)
        # the disk (radius 2 cm) overlaps the T's bar by ~5 mm
        return a, np.array([0.01, -0.02, 0.3]), b, np.array([0.0, 0.03, -0.7])
    a = sc.PointCloud.box([0.05, 0.03, 0.02], 0.01)
    b = sc.PointCloud.sphere(0.02, 0.006)
    pa = np.concatenate([[0.01, 0.0, 0.0], _unit(rng.normal(size=4))])
    pb = np.concatenate([[0.01, -0.005, 0.036], _unit(rng.normal(size=4))])
    return a, pa, b, pb


def _triple(c):
    return c.points, c.normals, c.weights


@pytest.mark.parametrize("dim", [2, 3])
def test_values_match_reference(rng, dim):
    a, pa, b, pb = _scene(rng, dim)
    r = sc.separation(a, pa, b, pb, EPS, order=0)
    phi, x, G = separation_ref(_triple(a), pa, _triple(b), pb, EPS)
    assert r.phi.shape == (len(a) + len(b),) and r.dphi_dq is None and r.d2phi_dq2 is None
    assert np.any(r.phi < 0) and np.any(r.phi > 0)  # the bodies overlap
    L = max(a.size, b.size)
    np.testing.assert_allclose(r.phi, phi, rtol=0, atol=1e-12 * L)
    np.testing.assert_allclose(r.points, x, rtol=0, atol=1e-12 * L)
    np.testing.assert_allclose(r.grad, G, rtol=0, atol=1e-12 * np.abs(G).max())


def _fd(a, pa, b, pb, order, h):
    """Central differences through retract of the order-`order` output, columns = tangent."""
    nv = len(pa) - 1 if len(pa) == 7 else 3
    cols = []
    for j in range(2 * nv):
        e = np.zeros(nv)
        e[j % nv] = h
        if j < nv:
            up = sc.separation(a, sc.retract(pa, e), b, pb, EPS, order=order)
            dn = sc.separation(a, sc.retract(pa, -e), b, pb, EPS, order=order)
        else:
            up = sc.separation(a, pa, b, sc.retract(pb, e), EPS, order=order)
            dn = sc.separation(a, pa, b, sc.retract(pb, -e), EPS, order=order)
        f = (lambda r: r.phi) if order == 0 else (lambda r: r.dphi_dq)
        cols.append((f(up) - f(dn)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("dim", [2, 3])
def test_derivatives_vs_finite_differences_on_the_manifold(rng, dim):
    a, pa, b, pb = _scene(rng, dim)
    r = sc.separation(a, pa, b, pb, EPS, order=2)
    # the field varies on lengths ~ eps / L = 1e-3 m and angles ~ 1e-3 / L: step 1e-7 keeps the
    # central-difference truncation ~1e-8 relative, rounding ~ u / 1e-7 ~ 2e-9 relative
    h = 1e-7
    d1 = _fd(a, pa, b, pb, 0, h)
    scale1 = np.abs(r.dphi_dq).max()
    np.testing.assert_allclose(r.dphi_dq, d1, rtol=0, atol=1e-6 * scale1)
    # differences of dphi_dq through retract give the symmetric Hessian plus a skew bracket
    # term (rotations do not commute): compare symmetric parts, and the Hessian is symmetric
    d2 = _fd(a, pa, b, pb, 1, h)
    sym = 0.5 * (d2 + np.swapaxes(d2, 1, 2))
    scale2 = np.abs(r.d2phi_dq2).max()
    np.testing.assert_allclose(r.d2phi_dq2, sym, rtol=0, atol=1e-6 * scale2)
    np.testing.assert_array_equal(r.d2phi_dq2, np.swapaxes(r.d2phi_dq2, 1, 2))
    # translations: dPhi/dt_A = G for A's samples, -G for B's (the unit force of
    # docs/method.md section 4)
    D, nv = dim, (3 if dim == 2 else 6)
    na = len(a)
    np.testing.assert_allclose(r.dphi_dq[:na, :D], r.grad[:na], atol=1e-15)
    np.testing.assert_allclose(r.dphi_dq[na:, :D], -r.grad[na:], atol=1e-15)
    np.testing.assert_allclose(r.dphi_dq[:, nv : nv + D], -r.dphi_dq[:, :D], atol=1e-15)


@pytest.mark.parametrize("dim", [2, 3])
def test_taylor_remainders_on_the_manifold(rng, dim):
    """Phi(q (+) t v) against its expansion with dphi_dq and d2phi_dq2: errors shrink like
    t^2 and t^3 (exp coordinates: t -> q (+) t v is a one-parameter curve)."""
    a, pa, b, pb = _scene(rng, dim)
    nv = 3 if dim == 2 else 6
    r = sc.separation(a, pa, b, pb, EPS, order=2)
    v = rng.normal(size=2 * nv)
    v[:nv] /= np.linalg.norm(v[:nv]) * 1e3  # ~1 mm and ~1 mrad per unit t
    v[nv:] /= np.linalg.norm(v[nv:]) * 1e3

    def phi_at(t):
        t = float(np.asarray(t).ravel()[0])
        return sc.separation(a, sc.retract(pa, t * v[:nv]), b, sc.retract(pb, t * v[nv:]), EPS).phi

    steps = np.geomspace(0.3, 3e-3, 5)
    derivs = [r.dphi_dq @ v, np.einsum("kij,i,j->k", r.d2phi_dq2, v, v)]
    R = taylor_remainders(lambda t: phi_at(t), np.zeros(1), np.ones(1), derivs, steps)
    noise = 1e4 * np.finfo(float).eps * (np.abs(r.phi) + a.size)
    ls = np.log(steps)
    for n in (1, 2):
        slopes = []
        for k in range(R.shape[2]):
            usable = np.flatnonzero(R[n, :, k] > noise[k])
            if usable.size >= 3 and usable[0] == 0 and np.all(np.diff(usable) == 1):
                last = usable[-1]
                slopes.append(np.log(R[n, 0, k] / R[n, last, k]) / (ls[0] - ls[last]))
        slopes = np.array(slopes)
        assert slopes.size > 10, (n, slopes.size)
        assert np.all(slopes > n + 0.5), (n, np.sort(slopes)[:4])
        assert abs(np.median(slopes) - (n + 1)) < 0.3, (n, np.median(slopes))


@pytest.mark.parametrize("dim", [2, 3])
def test_swap_and_orders_bitwise(rng, dim):
    a, pa, b, pb = _scene(rng, dim)
    r0 = sc.separation(a, pa, b, pb, EPS, order=0)
    r2 = sc.separation(a, pa, b, pb, EPS, order=2, num_threads=2)
    for u, w in zip(r0[:3], r2[:3], strict=True):
        np.testing.assert_array_equal(u, w)
    s = sc.separation(b, pb, a, pa, EPS, order=1)
    na = len(a)
    np.testing.assert_array_equal(s.phi, np.concatenate([r0.phi[na:], r0.phi[:na]]))
    nv = 3 if dim == 2 else 6
    r1 = sc.separation(a, pa, b, pb, EPS, order=1)
    swapped = np.concatenate([r1.dphi_dq[:, nv:], r1.dphi_dq[:, :nv]], axis=1)
    np.testing.assert_allclose(
        s.dphi_dq,
        np.concatenate([swapped[na:], swapped[:na]]),
        rtol=0,
        atol=1e-12 * np.abs(swapped).max(),
    )


def test_rigid_motion_of_both_bodies_leaves_phi_unchanged(rng):
    a, pa, b, pb = _scene(rng, 3)
    g = np.concatenate([[0.3, -0.1, 0.2], _unit(rng.normal(size=4))])
    from softcontact.spatial import quat_mul, quat_to_matrix

    def compose(pose):
        R = quat_to_matrix(g[3:])
        return np.concatenate([R @ pose[:3] + g[:3], quat_mul(g[3:], pose[3:])])

    r = sc.separation(a, pa, b, pb, EPS)
    m = sc.separation(a, compose(pa), b, compose(pb), EPS)
    np.testing.assert_allclose(m.phi, r.phi, rtol=0, atol=1e-12)
    np.testing.assert_allclose(m.grad, r.grad @ quat_to_matrix(g[3:]).T, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        ({"pose_a": [0, 0]}, ValueError, r"pose_a must have shape \(3,\) for 2D clouds"),
        ({"pose_b": [0, 0, np.nan]}, ValueError, "pose_b must be finite"),
        ({"eps": 0}, ValueError, "eps must be finite and > 0"),
        ({"order": 3}, ValueError, r"order must be in 0\.\.2, got 3"),
        ({"cloud_a": np.zeros((3, 2))}, TypeError, "cloud_a must be a PointCloud"),
        ({"cloud_b": sc.PointCloud.sphere(0.02, 0.01)}, ValueError, "same dimension"),
    ],
)
def test_bad_input(kw, exc, match):
    args = {
        "cloud_a": sc.PointCloud.disk(0.02, 0.005),
        "pose_a": [0, 0, 0],
        "cloud_b": sc.PointCloud.disk(0.02, 0.005),
        "pose_b": [0.03, 0, 0],
        "eps": EPS,
    }
    args.update(kw)
    with pytest.raises(exc, match=match):
        sc.separation(**args)


def test_non_unit_quaternion_refused():
    s = sc.PointCloud.sphere(0.02, 0.01)
    with pytest.raises(ValueError, match="pose_b must hold a unit quaternion"):
        sc.separation(s, [0, 0, 0, 1, 0, 0, 0], s, [0, 0, 0.03, 1, 0.1, 0, 0], EPS)
