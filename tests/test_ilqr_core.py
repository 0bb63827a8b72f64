"""The compiled inner loops of softcontact.optimize.ilqr (sc_ilqr.c) against the pure-NumPy
reference of tests/ilqr_reference.py.

- The backward pass (Gauss-Newton and DDP, with and without regularization, with bounds
  that hold some controls) on the expansions of the contact problems of test_optimize (a
  2D push and a 3D box): the same feedforward steps, gains and predicted decrease.
- On random expansions whose Quu is indefinite: both report no definite policy, and DDP's
  eigenvalue fixes give the same policy.
- The closed-loop forward rollout on both problems (3D: the quaternion difference of the
  feedback): the same states and controls; a rollout whose controls leave their valid
  range fails at the same step in both.
- Bad arguments raise ValueError / TypeError naming them; inputs are never modified.
"""

import ilqr_reference as ref
import numpy as np
import pytest
import test_optimize as base

from softcontact import _core
from softcontact.optimize import ddp

pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")

CASES = ("push-contact", "box3d")
METHODS = ("gauss-newton", "ddp")


def _setup(case, method):
    # the implicit step: the explicit 3D box at 10 ms is past its stability limit, where
    # rounding differences grow from step to step
    prob, U0, _ = base._problem(case, integrator="implicit")
    U = prob._as_U(U0)
    e = ddp._expansions(prob, U, method)
    # bounds about U that hold some controls: 30 % of the unbounded step's largest
    free = np.full(U.shape, np.inf)
    k0 = _core.ilqr_backward(*e, U, -free, free, 1e-6)[0]
    width = 0.3 * np.abs(k0).max(axis=0)
    return prob, U, e, U - width, U + width


def _assert_policies_equal(got, want, rtol=1e-9):
    k, K, dv1, dv2 = got
    k_ref, K_ref, dv1_ref, dv2_ref = want
    np.testing.assert_allclose(k, k_ref, rtol=rtol, atol=rtol * np.abs(k_ref).max())
    np.testing.assert_allclose(K, K_ref, rtol=rtol, atol=rtol * np.abs(K_ref).max())
    assert dv1 == pytest.approx(dv1_ref, rel=rtol)
    assert dv2 == pytest.approx(dv2_ref, rel=rtol)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mu", [0.0, 1e-3])
def test_backward_pass_matches_the_reference(case, method, mu):
    _, U, e, lo, hi = _setup(case, method)
    A, B, g, H, fxx, fxu, fuu = e
    F2 = None if fxx is None else (fxx, fxu, fuu)
    want = ref.backward(A, B, g, H, F2, U, lo, hi, mu)
    copies = [None if a is None else a.copy() for a in (*e, U, lo, hi)]
    got = _core.ilqr_backward(*e, U, lo, hi, mu)
    for a, c in zip((*e, U, lo, hi), copies, strict=True):
        if a is not None:
            np.testing.assert_array_equal(a, c)  # inputs unchanged
    assert want is not None and got is not None
    _assert_policies_equal(got, want)
    k, K = got[0], got[1]
    # bounds hold, and some controls sit at them (the box QP's active set is exercised)
    assert np.all(U + k <= hi + 1e-12) and np.all(U + k >= lo - 1e-12)
    at_bound = np.isclose(U + k, hi, rtol=0, atol=1e-12) | np.isclose(U + k, lo, rtol=0, atol=1e-12)
    assert at_bound.any()
    # a control held at its bound gets no feedback
    np.testing.assert_array_equal(K[at_bound & (np.abs(k) > 0)], 0.0)
    assert got[2] < 0.0  # a descent direction


def _random_expansion(rng, T, n, nu, ddp_terms, indefinite):
    nz = n + nu
    A = np.eye(n) + 0.1 * rng.standard_normal((T, n, n))
    B = 0.1 * rng.standard_normal((T, n, nu))
    g = rng.standard_normal((T + 1, nz))
    M = rng.standard_normal((T + 1, nz, nz))
    H = np.einsum("tij,tkj->tik", M, M) + 0.1 * np.eye(nz)
    if indefinite:
        H[T // 2, n:, n:] -= 50.0 * np.eye(nu)
    F2 = None
    if ddp_terms:
        F2 = [0.3 * rng.standard_normal((T, n, *s)) for s in ((n, n), (n, nu), (nu, nu))]
        for f in (F2[0], F2[2]):
            f += np.swapaxes(f, -1, -2)
    U = rng.standard_normal((T, nu))
    lo, hi = U - 0.5, U + 0.5
    return A, B, g, H, F2, U, lo, hi


def test_backward_pass_on_random_expansions(rng):
    for trial in range(20):
        T, n, nu = int(rng.integers(1, 6)), int(rng.integers(1, 7)), int(rng.integers(1, 4))
        ddp_terms = trial % 2 == 1
        A, B, g, H, F2, U, lo, hi = _random_expansion(rng, T, n, nu, ddp_terms, trial % 4 == 0)
        mu = 0.0 if trial % 3 else 1e-2
        want = ref.backward(A, B, g, H, F2, U, lo, hi, mu)
        f = (None, None, None) if F2 is None else F2
        got = _core.ilqr_backward(A, B, g, H, *f, U, lo, hi, mu)
        if want is None:
            assert got is None, trial
        else:
            assert got is not None, trial
            _assert_policies_equal(got, want, rtol=1e-8)


def test_indefinite_quu_is_reported_and_regularization_fixes_it(rng):
    A, B, g, H, _, U, lo, hi = _random_expansion(rng, 4, 3, 2, False, True)
    lo, hi = np.full_like(U, -np.inf), np.full_like(U, np.inf)
    assert _core.ilqr_backward(A, B, g, H, None, None, None, U, lo, hi, 0.0) is None
    assert ref.backward(A, B, g, H, None, U, lo, hi, 0.0) is None
    got = _core.ilqr_backward(A, B, g, H, None, None, None, U, lo, hi, 1e3)
    want = ref.backward(A, B, g, H, None, U, lo, hi, 1e3)
    assert got is not None
    _assert_policies_equal(got, want)


def test_no_controls_and_no_steps():
    n = 3
    g = np.ones((1, n))
    H = np.eye(n)[None]
    k, K, dv1, dv2 = _core.ilqr_backward(
        np.zeros((0, n, n)), np.zeros((0, n, 0)), g, H, None, None, None,
        np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), 0.0,
    )  # fmt: skip
    assert k.shape == (0, 0) and K.shape == (0, 0, n) and dv1 == dv2 == 0.0


@pytest.mark.parametrize("case", CASES)
def test_closed_loop_rollout_matches_the_reference(case, rng):
    prob, U, e, lo, hi = _setup(case, "gauss-newton")
    X = prob.states(U)
    k, K, _, _ = _core.ilqr_backward(*e, U, lo, hi, 0.0)
    # gains perturbed and one on every state coordinate, so that the state difference (3D:
    # quaternions) enters everywhere; small enough that the closed loop stays stable (an
    # unstable one amplifies rounding differences step by step)
    K = K * (1.0 + 0.2 * rng.standard_normal(K.shape)) + 1e-3 * rng.standard_normal(K.shape)
    for alpha in (1.0, 0.5, 0.0):
        copies = [a.copy() for a in (X, U, k, K, lo, hi)]
        Xn, Un, status, failed = _core.rollout_policy(prob.model._cap, X, U, k, K, alpha, lo, hi)
        for a, c in zip((X, U, k, K, lo, hi), copies, strict=True):
            np.testing.assert_array_equal(a, c)
        assert status == 0 and failed == -1
        want_X, want_U = ref.rollout_policy(prob.model, X, U, k, K, alpha, lo, hi)
        np.testing.assert_allclose(Un, want_U, rtol=1e-11, atol=1e-11 * np.abs(want_U).max())
        np.testing.assert_allclose(Xn, want_X, rtol=1e-11, atol=1e-12)
        assert np.all(Un >= lo) and np.all(Un <= hi)
        if alpha == 0.0:  # no step: the reference trajectory itself
            np.testing.assert_array_equal(Un, U)
            np.testing.assert_array_equal(Xn, X)


def test_closed_loop_rollout_fails_where_the_reference_does():
    prob, U, e, _, _ = _setup("push-contact", "gauss-newton")
    X = prob.states(U)
    lo, hi = np.full_like(U, -np.inf), np.full_like(U, np.inf)
    k = np.zeros_like(U)
    k[3] = 1e9  # a kinematic pusher's velocity beyond the valid range at step 3
    K = np.zeros((prob.T, prob.nu, prob.n))
    Xn, Un, status, failed = _core.rollout_policy(prob.model._cap, X, U, k, K, 1.0, lo, hi)
    assert status == _core.SC_ERANGE and failed == 3
    assert np.all(np.isfinite(Xn[:4])) and np.all(np.isnan(Xn[4:])) and np.all(np.isnan(Un[4:]))
    assert ref.rollout_policy(prob.model, X, U, k, K, 1.0, lo, hi) is None
    assert ddp._forward(prob, X, U, k, K, 1.0, lo, hi) is None


def test_bad_arguments_name_them():
    prob, U, e, lo, hi = _setup("push-contact", "gauss-newton")
    A, B, g, H = e[:4]
    with pytest.raises(ValueError, match="B"):
        _core.ilqr_backward(A, B[:, :-1], g, H, None, None, None, U, lo, hi, 0.0)
    with pytest.raises(ValueError, match="H"):
        _core.ilqr_backward(A, B, g, H[:-1], None, None, None, U, lo, hi, 0.0)
    with pytest.raises(ValueError, match="lo"):
        _core.ilqr_backward(A, B, g, H, None, None, None, U, lo[:-1], hi, 0.0)
    with pytest.raises(ValueError, match="all or none"):
        _core.ilqr_backward(A, B, g, H, A, None, None, U, lo, hi, 0.0)
    for mu in (-1.0, np.nan):
        with pytest.raises(ValueError, match="mu"):
            _core.ilqr_backward(A, B, g, H, None, None, None, U, lo, hi, mu)
    with pytest.raises(TypeError):
        _core.ilqr_backward(A, B, g, H, None, None, None, U, lo, hi, "0")
    X = prob.states(U)
    k, K = np.zeros_like(U), np.zeros((prob.T, prob.nu, prob.n))
    cap = prob.model._cap
    with pytest.raises(ValueError, match="X"):
        _core.rollout_policy(cap, X[:, :-1], U, k, K, 1.0, lo, hi)
    with pytest.raises(ValueError, match="K"):
        _core.rollout_policy(cap, X, U, k, K[:, :, :-1], 1.0, lo, hi)
    with pytest.raises(ValueError, match="hi"):
        _core.rollout_policy(cap, X, U, k, K, 1.0, lo, hi[:-1])
    with pytest.raises(ValueError, match="alpha"):
        _core.rollout_policy(cap, X, U, k, K, np.inf, lo, hi)
    with pytest.raises(TypeError, match="model"):
        _core.rollout_policy(object(), X, U, k, K, 1.0, lo, hi)
