"""SSDF derivatives: every order against central differences of the next lower
analytic order, and Taylor-remainder convergence of orders 0..3."""

import numpy as np
import pytest
from conftest import random_cloud

import softcontact as sc
from softcontact.testing import check_derivatives, taylor_remainders


def _setup(rng, dim, kind):
    if kind == "random":
        cloud = random_cloud(rng, dim, 80, scale=0.05)
    elif dim == 2:
        cloud = sc.PointCloud.t_shape(spacing=0.01)
    else:
        cloud = sc.PointCloud.box([0.05, 0.02, 0.03], 0.01)
    x = rng.uniform(-1.0, 1.0, size=(25, dim)) * cloud.size
    return cloud, x


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("kind", ["random", "shape"])
@pytest.mark.parametrize("eps_factor", [1e-4, 1e-2, 1.0])
def test_each_order_vs_fd_of_the_lower_order(rng, dim, kind, eps_factor):
    cloud, x = _setup(rng, dim, kind)
    eps = eps_factor * cloud.size**2
    # the weights vary on the length eps / (2 |p_i - p_j|) >= eps / (2 L): step 1e-4 eps / L puts
    # the central-difference truncation error (~ (2e-4)^2 relative) well below rtol, and the
    # rounding error (u |f| / step ~ u L^2 / (1e-4 eps) relative) below it too
    step = 1e-4 * eps / cloud.size
    r = sc.ssdf(cloud, x, eps, order=3)
    for k in (1, 2, 3):  # grad, hess, d3

        def lower(z, k=k):
            return sc.ssdf(cloud, z, eps, order=k - 1)[k - 1]

        # the box and the T are symmetric: some queries' true derivatives are exactly zero
        # and computed as rounding noise of O(1) terms, so those are normalized globally
        check_derivatives(
            lower,
            x,
            r[k],
            step=step,
            rtol=1e-6,
            atol=1e-12,
            scale="item" if kind == "random" else "global",
        )
    # exact symmetry
    np.testing.assert_array_equal(r.hess, np.swapaxes(r.hess, -1, -2))
    for perm in ((0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        np.testing.assert_array_equal(r.d3, np.transpose(r.d3, (0,) + tuple(p + 1 for p in perm)))


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("eps_factor", [1e-2, 1e-1])
def test_taylor_remainders_shrink_with_the_right_order(rng, dim, eps_factor):
    cloud, x = _setup(rng, dim, "random")
    eps = eps_factor * cloud.size**2
    v = rng.normal(size=x.shape)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    r = sc.ssdf(cloud, x, eps, order=3)
    derivs = [
        np.einsum("ma,ma->m", r.grad, v),
        np.einsum("mab,ma,mb->m", r.hess, v, v),
        np.einsum("mabc,ma,mb,mc->m", r.d3, v, v, v),
    ]
    steps = eps / cloud.size * np.geomspace(1.0, 1e-2, 6)
    R = taylor_remainders(lambda z: sc.ssdf(cloud, z, eps).phi, x, v, derivs, steps)
    # only where the remainder is above rounding noise (1e5 u (|phi| + L)).  A wrong order-n
    # derivative leaves an error ~ t^n (slope n); a right one ~ t^(n+1), or faster where the
    # next Taylor coefficient happens to be small.  So, per query, the slope over the last
    # two usable step intervals (smoothing over crossovers between the t^(n+1) and t^(n+2)
    # terms) is above n + 1/2, the midpoint between a wrong (n) and a right (n + 1) rate, and
    # over all queries the median slope is n + 1 within 0.3.
    noise = 1e5 * np.finfo(float).eps * (np.abs(r.phi) + cloud.size)
    ls = np.log(steps)
    for n in range(4):
        slopes = []
        for item in range(x.shape[0]):
            idx = np.flatnonzero(R[n, :, item] > noise[item])
            idx = idx[idx >= idx[-1] - 2] if idx.size else idx
            if idx.size == 3 and np.all(np.diff(idx) == 1):
                lr = np.log(R[n, idx, item])
                slopes.append((lr[-1] - lr[0]) / (ls[idx[-1]] - ls[idx[0]]))
        slopes = np.array(slopes)
        assert slopes.size >= 10, (n, slopes.size)
        assert np.all(slopes > n + 0.5), (n, np.sort(slopes)[:4])
        assert abs(np.median(slopes) - (n + 1)) < 0.3, (n, np.median(slopes))


def test_derivatives_continuous_through_a_sharp_feature(rng):
    """Sweeping a query past a box corner at small eps: phi and its derivatives change
    smoothly (every sample of the sweep is checked against FD of the lower order)."""
    cloud = sc.PointCloud.box([0.05, 0.02], 0.005)
    eps = 1e-5
    t = np.linspace(-0.01, 0.01, 201)
    x = np.stack([0.05 + t, 0.02 + 0.5 * t], axis=1)
    r = sc.ssdf(cloud, x, eps, order=3)
    step = 1e-4 * eps / cloud.size
    for k in (1, 2, 3):
        check_derivatives(
            lambda z, k=k: sc.ssdf(cloud, z, eps, order=k - 1)[k - 1],
            x,
            r[k],
            step=step,
            rtol=1e-6,
            atol=1e-12,
        )
