"""softcontact.optimize.ilqr: iLQR (Gauss-Newton) and DDP with box-constrained controls.

- On a linear-quadratic problem (a planar puck pushed by forces, no contact, a quadratic
  cost) both methods land on the exact minimizer -- the Newton step of the exact Hessian
  -- in one iteration, and stop.
- With control bounds the result satisfies the KKT conditions of the bounded problem
  (projected gradient zero) and equals L-BFGS-B's optimum.
- Through contact (the 2D push and the 3D box of test_optimize) the cost decreases at every
  iteration, the controls stay in their bounds, and the result's fields agree with the
  problem (cost, states, controls).
- Warm start, deadline, callback, and argument errors.
"""

import numpy as np
import pytest
import scipy.optimize
import test_optimize as base

import softcontact as sc
from softcontact.optimize import ControlResidual, PoseResidual, TrajectoryProblem, ilqr

pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")

METHODS = ("gauss-newton", "ddp")
LQ_T = 20


def _lq_problem():
    scene = sc.Scene(dim=2)
    scene.add_body(
        sc.PointCloud.disk(0.02, 0.005), mass=0.5, pose=[0.1, 0.1, 0.0], actuated=True, name="p"
    )
    model = scene.build(0.01)
    cost = [
        PoseResidual(model, "p", [0.3, 0.2, 0.0], 100.0, 0.0),  # no angle term: quadratic
        PoseResidual(model, "p", [0.3, 0.2, 0.0], 1.0, 0.0, stages=True, terminal=False),
        ControlResidual(model, [0.1, 0.2, 0.5]),
    ]
    return TrajectoryProblem(model, model.initial_state(), LQ_T, cost)


@pytest.mark.parametrize("method", METHODS)
def test_linear_quadratic_problem_solved_in_one_iteration(method):
    prob = _lq_problem()
    U0 = np.zeros((LQ_T, 3))
    exact = U0.ravel() - np.linalg.solve(prob.hess(U0), prob.jac(U0))
    res = ilqr(prob, U0, method=method)
    assert res.success and res.status == 0
    # the first step is exact; the second finds nothing left to gain
    assert res.history[1] == pytest.approx(prob.fun(exact), rel=1e-13)
    assert res.nit <= 2
    np.testing.assert_allclose(res.x, exact, rtol=0, atol=1e-12 * np.abs(exact).max())
    np.testing.assert_allclose(prob.jac(res.x), 0.0, atol=1e-13)


def _kkt_residual(prob, x, lo, hi):
    """The largest violation of the bounded problem's first-order conditions at x."""
    g = prob.jac(x)
    at_lo = x <= lo + 1e-12
    at_hi = x >= hi - 1e-12
    free = ~(at_lo | at_hi)
    return max(
        float(np.max(np.abs(g[free]), initial=0.0)),
        float(np.max(-g[at_lo], initial=0.0)),
        float(np.max(g[at_hi], initial=0.0)),
    )


@pytest.mark.parametrize("method", METHODS)
def test_bounded_optimum_matches_lbfgsb(method):
    prob = _lq_problem()
    U0 = np.zeros((LQ_T, 3))
    lo = np.array([-0.5, -0.3, -0.1])
    hi = np.array([0.5, 0.3, 0.1])
    res = ilqr(prob, U0, bounds=(lo, hi), method=method)
    assert res.success
    L, H = np.tile(lo, LQ_T), np.tile(hi, LQ_T)
    assert np.all(res.x >= L) and np.all(res.x <= H)
    assert np.any(res.x == H) or np.any(res.x == L)  # the bounds are active
    assert _kkt_residual(prob, res.x, L, H) < 1e-9
    ref = scipy.optimize.minimize(
        prob.fun,
        U0.ravel(),
        jac=prob.jac,
        method="L-BFGS-B",
        bounds=list(zip(L, H, strict=True)),
        options={"maxiter": 5000, "ftol": 1e-16, "gtol": 1e-12},
    )
    assert res.fun <= ref.fun + 1e-12
    np.testing.assert_allclose(res.x, ref.x, atol=1e-7)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", ["push-contact", "box3d"])
def test_through_contact_the_cost_decreases_at_every_iteration(case, method):
    prob, U0, scale = base._problem(case)
    T, nu = prob.T, prob.nu
    width = 3.0 * np.abs(U0).reshape(T, nu).max(axis=0) + 1e-3
    bounds = (-width, width)
    before = np.array(U0, copy=True)
    res = ilqr(prob, U0, bounds=bounds, method=method, max_iter=8)
    np.testing.assert_array_equal(U0, before)  # input unchanged
    assert res.nit >= 3
    assert np.all(np.diff(res.history) < 0)
    assert res.fun < 0.8 * res.history[0]
    assert np.all(np.abs(res.U) <= width)
    # the result is what it says
    assert res.fun == prob.fun(res.x)
    np.testing.assert_array_equal(res.X, prob.states(res.x))
    np.testing.assert_array_equal(res.U.reshape(-1), res.x)
    assert res.history[-1] == res.fun and len(res.history) == res.nit + 1
    assert res.k.shape == (T, nu) and res.K.shape == (T, nu, prob.n)
    assert res.nfev >= res.nit + 1 and res.wall > 0


def test_ddp_uses_the_step_second_derivatives():
    """DDP's expansion differs from Gauss-Newton's (the step's second derivatives enter),
    and through contact it needs fewer trial steps per iteration."""
    prob, U0, _ = base._problem("push-contact")
    gn = ilqr(prob, U0, method="gauss-newton", max_iter=6)
    prob2, _, _ = base._problem("push-contact")
    ddp = ilqr(prob2, U0, method="ddp", max_iter=6)
    assert not np.array_equal(gn.history, ddp.history)
    assert prob2.n_steps[2] > 0 and prob.n_steps[2] == 0


def test_warm_start_from_the_optimum_stops_at_once():
    prob = _lq_problem()
    res = ilqr(prob, np.zeros((LQ_T, 3)))
    again = ilqr(prob, res.x)
    assert again.success and again.nit <= 1 and again.fun <= res.fun


def test_deadline_and_callback_return_the_best_found():
    prob, U0, _ = base._problem("push-contact")
    first = prob.fun(U0)
    res = ilqr(prob, U0, deadline=1e-9)  # no time for an iteration
    assert res.status == 2 and res.message == "deadline reached" and not res.success
    assert res.nit == 0 and res.fun == first
    np.testing.assert_array_equal(res.x, np.asarray(U0).reshape(-1))
    seen = []
    res = ilqr(prob, U0, callback=lambda nit, fun, U: seen.append((nit, fun)) or nit == 2)
    assert res.status == 2 and res.message == "stopped by the callback" and res.nit == 2
    assert [s[0] for s in seen] == [1, 2] and seen[-1][1] == res.fun < first


def test_initial_controls_outside_the_bounds_are_clipped():
    prob = _lq_problem()
    res = ilqr(prob, np.full((LQ_T, 3), 5.0), bounds=(None, 1.0), max_iter=0)
    assert res.status == 1 and np.all(res.U == 1.0)


def test_errors():
    prob = _lq_problem()
    U0 = np.zeros((LQ_T, 3))
    with pytest.raises(TypeError, match="problem must be a TrajectoryProblem"):
        ilqr(object(), U0)
    with pytest.raises(ValueError, match="method must be one of"):
        ilqr(prob, U0, method="newton")
    with pytest.raises(ValueError, match=r"\bU\b"):
        ilqr(prob, np.zeros((LQ_T, 2)))
    with pytest.raises(ValueError, match=r"\bU\b"):
        ilqr(prob, np.full((LQ_T, 3), np.nan))
    with pytest.raises(TypeError, match="bounds must be None or a pair"):
        ilqr(prob, U0, bounds=1.0)
    with pytest.raises(ValueError, match=r"bounds \(lower\) must broadcast"):
        ilqr(prob, U0, bounds=(np.zeros(4), None))
    with pytest.raises(ValueError, match=r"bounds \(upper\) must not hold NaN"):
        ilqr(prob, U0, bounds=(None, np.nan))
    with pytest.raises(ValueError, match="lower must be <= upper"):
        ilqr(prob, U0, bounds=(1.0, -1.0))
    for name, value in (("max_iter", -1), ("ftol", -1.0), ("xtol", np.nan), ("deadline", 0.0)):
        with pytest.raises(ValueError, match=name):
            ilqr(prob, U0, **{name: value})
    with pytest.raises(TypeError, match="callback must be callable"):
        ilqr(prob, U0, callback=3)
