"""Hypothesis property suite for the SSDF: invariances, symmetry, batch == loop."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import softcontact as sc

U = np.finfo(float).eps
coords = st.floats(-0.1, 0.1, allow_nan=False, allow_infinity=False)


@st.composite
def clouds(draw, dim=None):
    dim = dim or draw(st.sampled_from([2, 3]))
    n = draw(st.integers(1, 64))
    p = draw(arrays(np.float64, (n, dim), elements=coords))
    nrm = draw(
        arrays(np.float64, (n, dim), elements=st.floats(-1, 1)).filter(
            lambda a: np.all(np.linalg.norm(a, axis=1) > 1e-3)
        )
    )
    w = draw(arrays(np.float64, (n,), elements=st.floats(0.1, 10)))
    return sc.PointCloud(p, nrm, w, normalize=True)


def _rotation(dim, angles):
    if dim == 2:
        c, s = np.cos(angles[0]), np.sin(angles[0])
        return np.array([[c, -s], [s, c]])
    q = np.array(angles[:4]) + np.array([1.0, 0, 0, 0])
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


@given(cloud=clouds(), data=st.data(), eps_exp=st.floats(-4, -1))
def test_rigid_motion_invariance(cloud, data, eps_exp):
    dim = cloud.dim
    angles = data.draw(st.lists(st.floats(-3, 3), min_size=4, max_size=4))
    t = np.array(data.draw(st.lists(coords, min_size=dim, max_size=dim)))
    R = _rotation(dim, angles)
    x = data.draw(arrays(np.float64, (5, dim), elements=coords))
    eps = 10.0**eps_exp * 0.01
    moved = sc.PointCloud(
        cloud.points @ R.T + t, cloud.normals @ R.T, cloud.weights, normalize=True
    )
    a = sc.ssdf(cloud, x, eps, order=1)
    b = sc.ssdf(moved, x @ R.T + t, eps, order=1)
    # rounding of the moved data perturbs exponents by ~u 0.3^2/eps (conditioning, as in
    # test_ssdf.py); phi is a length of scale 0.3, grad of scale 1
    cond = 0.3**2 / eps
    tol = 1e-12 + 64 * U * cond
    np.testing.assert_allclose(b.phi, a.phi, rtol=0, atol=tol * 0.3)
    np.testing.assert_allclose(b.grad, a.grad @ R.T, rtol=0, atol=tol * (1 + np.abs(a.grad).max()))


@given(cloud=clouds(), data=st.data(), eps_exp=st.floats(-6, 0))
def test_flipping_normals_negates_exactly(cloud, data, eps_exp):
    x = data.draw(arrays(np.float64, (4, cloud.dim), elements=coords))
    flipped = sc.PointCloud(cloud.points, -cloud.normals, cloud.weights)
    a = sc.ssdf(cloud, x, 10.0**eps_exp, order=3)
    b = sc.ssdf(flipped, x, 10.0**eps_exp, order=3)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(-u, v)


@given(dim=st.sampled_from([2, 3]), data=st.data(), eps_exp=st.floats(-12, 6))
def test_halfspace_exact_for_every_eps(dim, data, eps_exp):
    p = np.array(data.draw(st.lists(coords, min_size=dim, max_size=dim)))
    n = data.draw(
        arrays(np.float64, (dim,), elements=st.floats(-1, 1)).filter(
            lambda a: np.linalg.norm(a) > 1e-3
        )
    )
    cloud = sc.PointCloud.halfspace(p, n)
    x = data.draw(arrays(np.float64, (6, dim), elements=st.floats(-1e3, 1e3)))
    r = sc.ssdf(cloud, x, 10.0**eps_exp, order=3)
    exact = (x - cloud.points[0]) @ cloud.normals[0]
    np.testing.assert_allclose(r.phi, exact, rtol=0, atol=4 * U * (np.abs(x).max() + 1))
    np.testing.assert_array_equal(r.grad, np.broadcast_to(cloud.normals[0], x.shape))
    assert not np.any(r.hess) and not np.any(r.d3)


@given(cloud=clouds(), data=st.data(), nb=st.integers(0, 9), order=st.integers(0, 3))
def test_batch_equals_loop_and_symmetry(cloud, data, nb, order):
    x = data.draw(arrays(np.float64, (nb, cloud.dim), elements=coords))
    eps = 1e-4
    r = sc.ssdf(cloud, x, eps, order=order)
    for i in range(nb):
        one = sc.ssdf(cloud, x[i], eps, order=order)
        for k in range(order + 1):
            np.testing.assert_array_equal(one[k], r[k][i])
    if order >= 2:
        np.testing.assert_array_equal(r.hess, np.swapaxes(r.hess, -1, -2))
    if order >= 3:
        np.testing.assert_array_equal(r.d3, np.swapaxes(r.d3, -1, -2))
        np.testing.assert_array_equal(r.d3, np.swapaxes(r.d3, -3, -2))
