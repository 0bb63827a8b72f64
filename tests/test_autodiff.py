"""The ambient-coordinate derivatives behind softcontact.torch and softcontact.jax
(softcontact/_autodiff.py) and the C adjoint of rollouts (sc_rollout_vjp).

- Step, contact and SSDF: ambient Jacobians and second derivatives against central
  differences of the values (Jacobians), converging as h^2 (the error falls by 4 when h
  halves); quaternion entries perturbed off the unit sphere (the functions read q / |q|).
- Rollouts: the C adjoint against an independent slow reference (the ambient step
  Jacobians chained in NumPy) and central differences; Taylor remainders of the
  objective L = <GX, X> fall as h^2 with the gradient and as h^3 with the Hessian-vector
  product of rollout_second, whose forward tangent matches differences of the states.
- Quaternions within 1e-6 of unit length are normalised (the same results as the unit
  state), beyond it refused naming the argument; inputs are never modified.
"""

import autodiff_cases as cases
import numpy as np
import pytest

from softcontact import _autodiff as ad

# central-difference steps: a sequence halving from 1e-3; the checks look for the regime
# where truncation (h^2) dominates rounding
STEPS = 1e-3 * 0.5 ** np.arange(12)
# the derivatives of a Jacobian are those of the function of the given (not normalised)
# entries: its differences perturb the quaternions within their 1e-6 tolerance only
SMALL_STEPS = 8e-7 * 0.5 ** np.arange(5)


def _fd(f, z, h, quats):
    """Central differences of ``f`` read through unit quaternions: the functions are those
    of ``q / |q|`` (their inputs may differ from unit length by 1e-6 only), so each
    perturbed point is normalised at the quaternions starting at the indices ``quats``."""

    def g(zz):
        zz = zz.copy()
        for a in quats:
            zz[a : a + 4] /= np.linalg.norm(zz[a : a + 4])
        return np.asarray(f(zz))

    cols = []
    for j in range(len(z)):
        e = np.zeros(len(z))
        e[j] = h
        cols.append((g(z + e) - g(z - e)) / (2 * h))
    return np.stack(cols, -1)


def _assert_limit(analytic, f, z, rtol, quats=(), steps=STEPS):
    """Central differences of f approach ``analytic`` as h^2: along the halving steps the
    error falls by 4 (3.5-4.5) from one step to the next somewhere, and the smallest
    error is below ``rtol`` of the largest entry."""
    errors = np.array([np.linalg.norm(_fd(f, z, h, quats) - analytic) for h in steps])
    scale = np.abs(analytic).max()
    assert errors.min() <= rtol * scale, errors / scale
    ratios = errors[:-1] / errors[1:]
    assert np.any((ratios > 3.5) & (ratios < 4.5)), ratios


@pytest.mark.parametrize("case", cases.CASES)
def test_step_derivatives_are_the_limits_of_differences(case):
    model, x0, U = cases.problem(case)
    nx = model.nx
    z = np.concatenate([x0, U[0]])
    fn = ad.step_function(model)
    y, J, H = ad.step_derivatives(model, x0, U[0], 2)
    assert np.array_equal(y, model.step(x0, U[0]).x_next)
    quats = range(3, model.nq, 7) if model.dim == 3 else ()
    _assert_limit(J, fn.value, z, 1e-7, quats)
    _assert_limit(H, fn.jac, z, 1e-6, steps=SMALL_STEPS)
    assert np.abs(H - np.swapaxes(H, 1, 2)).max() <= 1e-14 * np.abs(H).max()
    if model.dim == 3:  # a gradient has no component along a quaternion
        q = x0[3:7]
        assert np.abs(J[:, 3:7] @ q).max() < 1e-12
    assert z[:nx].tolist() == x0.tolist()


def test_contact_and_ssdf_derivatives_are_the_limits_of_differences():
    ball, args = cases.contact_case()
    fn = ad.contact_function(ball, ball, None)
    z = np.concatenate([args[0], args[2], args[1], args[3]])
    _assert_limit(fn.jac(z), fn.value, z, 1e-7, (3, 10))
    _assert_limit(fn.hess(z), fn.jac, z, 1e-6, steps=SMALL_STEPS)
    cloud = cases.sc.PointCloud.t_shape(spacing=0.004)
    fs = ad.ssdf_function(cloud, 1.6e-5)
    x = np.array([-0.012, -0.0813])  # 2 mm outside the corner of the stem
    assert fs.value(x)[0] == cases.sc.ssdf(cloud, x, 1.6e-5).phi
    _assert_limit(fs.jac(x), fs.value, x, 1e-7)
    _assert_limit(fs.hess(x), fs.jac, x, 1e-6)


def _reference_vjp(model, X, U, GX):
    """The adjoint recursion on the ambient step Jacobians, in NumPy."""
    nx = model.nx
    T = U.shape[0]
    lam = GX[T].copy()
    gU = np.empty_like(U)
    for t in range(T - 1, -1, -1):
        _, J = ad.step_derivatives(model, X[t], U[t], 1)
        gU[t] = J[:, nx:].T @ lam
        lam = GX[t] + J[:, :nx].T @ lam
    return ad.state_chart(model).normalize_jac(X[0]).T @ lam, gU


@pytest.mark.parametrize("case", cases.CASES)
def test_rollout_vjp_matches_the_reference_and_differences(case, rng):
    model, x0, U = cases.problem(case)
    X = ad.rollout_forward(model, x0[None], U[None])
    GX = rng.standard_normal(X.shape)
    args = [a.copy() for a in (x0, U, X, GX)]
    gx0, gU = ad.rollout_vjp(model, x0[None], U[None], X, GX)
    for a, b in zip(args, (x0, U, X, GX), strict=True):
        assert np.array_equal(a, b)  # inputs untouched
    rx0, rU = _reference_vjp(model, X[0], U, GX[0])
    scale = max(np.abs(rx0).max(), np.abs(rU).max())
    assert np.abs(gx0[0] - rx0).max() <= 1e-12 * scale
    assert np.abs(gU[0] - rU).max() <= 1e-12 * scale
    nx, nu = model.nx, model.nu

    def L(z):
        Xz = ad.rollout_forward(model, z[None, :nx], z[nx:].reshape(1, -1, nu))
        return float(np.sum(GX * Xz))

    z = np.concatenate([x0, U.ravel()])
    quats = range(3, model.nq, 7) if model.dim == 3 else ()
    _assert_limit(np.concatenate([gx0[0], gU[0].ravel()]), L, z, 1e-7, quats)


@pytest.mark.parametrize("case", cases.CASES)
def test_rollout_taylor_remainders(case, rng):
    """L(z + h d) - L(z) - h g.d is O(h^2); minus h^2/2 d.H d too, O(h^3)."""
    model, x0, U = cases.problem(case)
    nx, nu = model.nx, model.nu
    X = ad.rollout_forward(model, x0[None], U[None])
    GX = rng.standard_normal(X[0].shape)
    d = rng.standard_normal(nx + U.size)
    if model.dim == 3:  # along the sphere's tangent, first order
        d[3:7] -= x0[3:7] * (x0[3:7] @ d[3:7])
    d /= np.linalg.norm(d)
    gx0, gU = ad.rollout_vjp(model, x0[None], U[None], X, GX[None])
    g = np.concatenate([gx0[0], gU[0].ravel()])
    dX, hx0, hU = ad.rollout_second(model, x0, U, GX, d[:nx], d[nx:].reshape(U.shape))
    Hd = np.concatenate([hx0, hU.ravel()])

    def L(z):
        if model.dim == 3:
            z = z.copy()
            z[3:7] /= np.linalg.norm(z[3:7])
        Xz = ad.rollout_forward(model, z[None, :nx], z[nx:].reshape(1, -1, nu))
        return float(np.sum(GX * Xz[0])), Xz[0]

    z = np.concatenate([x0, U.ravel()])
    L0 = L(z)[0]
    r1, r2 = [], []
    for h in STEPS:
        Lh = L(z + h * d)[0]
        r1.append(abs(Lh - L0 - h * g @ d))
        r2.append(abs(Lh - L0 - h * g @ d - 0.5 * h * h * d @ Hd))
    q1 = np.array(r1[:-1]) / np.array(r1[1:])
    q2 = np.array(r2[:-1]) / np.array(r2[1:])
    # halving h divides the first remainder by 4 and the second by 8 (before rounding)
    assert np.any(np.abs(q1 - 4.0) < 0.3), q1
    assert np.any(np.abs(q2 - 8.0) < 0.8), q2
    assert min(r2) < 1e-3 * min(r1[:4])
    # the forward tangent is the states' derivative along d
    Xp, Xm = L(z + 1e-6 * d)[1], L(z - 1e-6 * d)[1]
    np.testing.assert_allclose((Xp - Xm) / 2e-6, dX, atol=1e-7 * np.abs(dX).max())


def test_quaternions_near_unit_are_normalised_beyond_refused():
    model, x0, U = cases.problem("box3d")
    xs = x0.copy()
    xs[3:7] *= 1 + 5e-7
    kept = xs.copy()
    y1, J1 = ad.step_derivatives(model, xs, U[0], 1)
    y0, J0 = ad.step_derivatives(model, x0, U[0], 1)
    assert np.array_equal(xs, kept)
    np.testing.assert_allclose(y1, y0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(J1[:, :3], J0[:, :3], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(J1[:, 3:7] * (1 + 5e-7), J0[:, 3:7], rtol=1e-9, atol=1e-15)
    xs[3:7] = x0[3:7] * (1 + 1e-5)
    with pytest.raises(ValueError, match=r"x: a quaternion is not unit \(norm 1.00001"):
        ad.step_derivatives(model, xs, U[0], 0)
    with pytest.raises(ValueError, match="x0: a quaternion is not unit"):
        ad.rollout_forward(model, xs[None], U[None])
