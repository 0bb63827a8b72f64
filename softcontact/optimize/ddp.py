"""iLQR and DDP with box-constrained controls, on the exact step derivatives.

:func:`ilqr` minimizes a :class:`~softcontact.optimize.TrajectoryProblem` over its controls
by iterating a backward Riccati pass and a closed-loop forward pass (Li and Todorov 2004;
Tassa, Mansard and Todorov 2014 for the control limits):

1. From the current trajectory (states ``x_t``, controls ``u_t``) it takes the exact step
   Jacobians ``A_t, B_t`` and each stage cost's gradient; ``method="gauss-newton"``
   (iLQR) uses the Gauss-Newton Hessians ``J^T J`` of the costs ``|r|^2 / 2``,
   ``method="ddp"`` the exact ones plus the step's second derivatives contracted with the
   value function's gradient (the full second-order DDP expansion); where contact makes a
   stage's ``Quu`` indefinite its eigenvalues are replaced by their magnitudes (at least
   1e-6 of the largest: the saddle-free Newton step).
2. Backward pass: ``Q = l + V' o f`` expanded to second order at each stage; the
   control step minimizes the quadratic model within the bounds (a projected-Newton box
   QP), giving a feedforward ``k_t`` and a feedback gain ``K_t`` on the free controls
   (zero on the clamped ones).  ``Quu`` (on the free controls) must be positive
   definite: otherwise a regularization ``mu I`` (from 1e-6, x10 per failure) is added to
   it and the pass repeated; after successful iterations it decays back to none, so
   that steps are exact Newton steps of the model when they can be.
3. Forward pass: ``u_t = clip(u_t + a k_t + K_t (x'_t (-) x_t))`` along the new
   trajectory ``x'``, for step sizes ``a = 1, 1/2, 1/4, ...``, accepting the first that
   lowers the cost by at least ``1e-4`` of the predicted decrease; the regularization
   shrinks after a success and grows after a failure.

It stops when an iteration lowers the cost, or the quadratic model predicts it would, by
less than ``ftol`` (relative), the step's largest change of a control is below ``xtol``
times the control's scale, ``max_iter`` is
reached, the regularization cannot make ``Quu`` definite, or ``deadline`` seconds of wall
time have passed (it then returns the best controls found, which is what a real-time
controller needs).  Each iteration costs one pass with first derivatives (and, for DDP,
second derivatives) of the dynamics, plus one value pass per trial step size.  The
backward pass and the closed-loop rollout of the forward pass run in C (``sc_ilqr.c``,
with the GIL released); the stage costs and their derivatives come from the problem's
residuals in Python.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from .. import _core
from .._validate import as_float_array, as_int, as_positive_float
from .trajectory import TrajectoryProblem

__all__ = ["ilqr", "TrajectoryResult"]

_METHODS = ("gauss-newton", "ddp")
# the regularization of Quu: none while the steps succeed (exact Newton steps), 1e-6
# (relative to nothing: Quu has the cost's units per control squared) after a failure,
# x10 per further failure, /10 per success down to 1e-9 and then none
_MU0, _MU_MIN, _MU_MAX = 1e-6, 1e-9, 1e10
_ARMIJO = 1e-4


@dataclasses.dataclass(frozen=True)
class TrajectoryResult:
    """The result of :func:`ilqr`, with SciPy's ``OptimizeResult`` field names.

    Attributes
    ----------
    x : (T * nu,) ndarray
        The best controls found, flattened (as SciPy's ``x``).
    U : (T, nu) ndarray
        The same, per step.
    X : (T + 1, nx) ndarray
        Their states.
    fun : float
        Their cost.
    nit : int
        Iterations done (backward and accepted forward passes).
    nfev : int
        Cost evaluations (trial step sizes included).
    status : int
        0: converged (``ftol`` or ``xtol``); 1: ``max_iter`` reached; 2: ``deadline``
        reached; 3: no descent (the regularization reached its bound, or no step size
        lowered the cost).
    message : str
    success : bool
        ``status`` is 0.
    k, K : (T, nu), (T, nu, 2 nv) ndarray
        The last backward pass's feedforward steps and feedback gains (tangent
        coordinates of the states), e.g. for a controller that tracks ``X``.
    history : (nit + 1,) ndarray
        The cost before the first iteration and after each.
    wall : float
        Seconds spent.
    """

    x: np.ndarray
    U: np.ndarray
    X: np.ndarray
    fun: float
    nit: int
    nfev: int
    status: int
    message: str
    success: bool
    k: np.ndarray
    K: np.ndarray
    history: np.ndarray
    wall: float


def _bounds(bounds, T, nu):
    """(lower, upper), each (T, nu), from None or a pair of array_likes (None: unbounded)."""
    lo = np.full((T, nu), -np.inf)
    hi = np.full((T, nu), np.inf)
    if bounds is None:
        return lo, hi
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise TypeError("bounds must be None or a pair (lower, upper)")
    for side, out in zip(("lower", "upper"), (lo, hi), strict=True):
        b = bounds[0 if side == "lower" else 1]
        if b is None:
            continue
        a = as_float_array(b, f"bounds ({side})")
        try:
            out[...] = np.broadcast_to(a, (T, nu))
        except ValueError:
            raise ValueError(
                f"bounds ({side}) must broadcast to (T, nu) = ({T}, {nu}), got shape {a.shape}"
            ) from None
        if np.any(np.isnan(out)):
            raise ValueError(f"bounds ({side}) must not hold NaN")
    if np.any(lo > hi):
        raise ValueError("bounds: lower must be <= upper everywhere")
    return lo, hi


def _expansions(problem, U, method):
    """Per-stage derivatives at U: the stacked arrays of the C backward pass (A, B, each
    stage cost's gradient and Hessian in z = (dx, du), and for DDP the step's second
    derivatives)."""
    f = problem._finite(problem._forward(U, 2 if method == "ddp" else 1))
    T, n, nu = problem.T, problem.n, problem.nu
    nz = n + nu
    g = np.empty((T + 1, nz))
    H = np.empty((T + 1, nz, nz))
    for t, (r, J, Hr) in enumerate(f["stages"]):
        g[t] = J.T @ r
        H[t] = J.T @ J
        if method == "ddp":
            H[t] += np.tensordot(r, Hr, axes=1)
    if method == "ddp":
        F2 = tuple(
            np.array([s[i] for s in f["F2"]]).reshape(shape)
            for i, shape in enumerate(((T, n, n, n), (T, n, n, nu), (T, n, nu, nu)))
        )
    else:
        F2 = (None, None, None)
    return (f["A"], f["B"], g, H, *F2)


def _backward(expansion, mu, U, lo, hi):
    """The backward pass (sc_ilqr_backward in C) with regularization mu on Quu:
    ``(k, K, dv1, dv2)``, or None if some stage's Quu is not definite."""
    return _core.ilqr_backward(*expansion, U, lo, hi, mu)


def _forward(problem, X, U, k, K, alpha, lo, hi):
    """Closed-loop rollout of ``u = clip(U + alpha k + K (x' (-) X))`` (sc_rollout_policy
    in C): the new states and controls, or None if the rollout diverged or left the
    controls' valid ranges (a huge unbounded trial step)."""
    Xn, Un, status, failed = _core.rollout_policy(
        problem.model._cap, X, U, k, K, alpha, lo, hi, problem.num_threads
    )
    with problem._lock:
        problem.n_steps[0] += problem.T if status == 0 else failed + 1
    return None if status != 0 else (Xn, Un)


def ilqr(
    problem,
    U0,
    *,
    bounds=None,
    method="gauss-newton",
    max_iter=100,
    ftol=1e-9,
    xtol=1e-10,
    deadline=None,
    callback=None,
) -> TrajectoryResult:
    """Minimize a trajectory problem's cost over its controls by iLQR or DDP.

    See the module docstring for the algorithm.

    Parameters
    ----------
    problem : TrajectoryProblem
    U0 : array_like
        Initial controls, (T, nu) or flattened (T * nu,): a warm start, e.g. the previous
        plan shifted.  Clipped to ``bounds``.
    bounds : (lower, upper), optional
        Control limits, each None (unbounded) or broadcastable to (T, nu).
    method : {"gauss-newton", "ddp"}
        Gauss-Newton iLQR (first derivatives of the dynamics), or DDP with the step's
        second derivatives and the costs' exact Hessians.
    max_iter : int
        Iterations at most (>= 0).
    ftol : float
        Stop when an iteration lowers the cost, or the backward pass predicts it would,
        by less than ``ftol * max(1, |J|)``.
    xtol : float
        Stop when an accepted step changes no control by more than ``xtol`` times
        ``max(1, |U|)``.
    deadline : float, optional
        Wall-clock budget in seconds: no backward pass or trial step starts that its last
        measured duration (at first, the initial evaluation's) says would end after it,
        and the best controls found so far are returned (``status`` 2).  The initial
        evaluation always runs.
    callback : callable, optional
        ``callback(nit, fun, U)`` after each iteration; returning True stops (status 2).

    Returns
    -------
    TrajectoryResult

    Raises
    ------
    TypeError
        If ``problem`` is not a TrajectoryProblem, or ``bounds`` is not a pair.
    ValueError
        For bad ``U0`` (shape, NaN, outside the model's valid ranges), ``bounds``
        (shape, NaN, lower > upper), ``method``, ``max_iter``, ``ftol``, ``xtol`` or
        ``deadline``.
    DivergenceError
        If the rollout of ``U0`` (clipped) diverges.
    """
    t_start = time.perf_counter()
    if not isinstance(problem, TrajectoryProblem):
        raise TypeError(f"problem must be a TrajectoryProblem, got {type(problem).__name__}")
    if not isinstance(method, str) or method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    max_iter = as_int(max_iter, "max_iter", 0)
    ftol = as_positive_float(ftol, "ftol", allow_zero=True)
    xtol = as_positive_float(xtol, "xtol", allow_zero=True)
    if deadline is not None:
        deadline = as_positive_float(deadline, "deadline")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")
    T, nu = problem.T, problem.nu
    lo, hi = _bounds(bounds, T, nu)
    U = np.clip(problem._as_U(U0), lo, hi)
    U = problem._as_U(U)  # the clipped controls are checked too
    t_init = time.perf_counter()
    J = problem.fun(U)
    if not math.isfinite(J):
        problem.jac(U)  # raises the rollout's DivergenceError
    X = problem.states(U)
    nfev = 1
    mu = 0.0
    history = [J]
    k = np.zeros((T, nu))
    K = np.zeros((T, nu, problem.n))
    status, message = 1, "maximum number of iterations reached"
    nit = 0

    def elapsed():
        return time.perf_counter() - t_start

    # the expected duration of an expansion + backward pass and of a trial step: the
    # initial pass's (an order-1 pass, about 5x that at order 2), then the last measured
    t_expand = (time.perf_counter() - t_init) * (5.0 if method == "ddp" else 1.0)
    t_trial = t_expand / (5.0 if method == "ddp" else 1.0)
    while nit < max_iter:
        if deadline is not None and elapsed() + t_expand > deadline:
            status, message = 2, "deadline reached"
            break
        t0 = time.perf_counter()
        expansion = _expansions(problem, U, method)
        back = None
        while back is None:
            back = _backward(expansion, mu, U, lo, hi)
            if back is None:
                mu = max(mu * 10.0, _MU0)
                if mu > _MU_MAX:
                    break
        t_expand = time.perf_counter() - t0
        if back is None:
            status, message = 3, "Quu not positive definite at the largest regularization"
            break
        k, K, dv1, dv2 = back
        if -(dv1 + dv2) <= ftol * max(1.0, abs(J)):
            # the model predicts less than ftol to gain: a (bounded) stationary point
            status, message = 0, "converged"
            break
        accepted = None
        alpha = 1.0
        while alpha >= 2.0**-10:
            if deadline is not None and elapsed() + t_trial > deadline:
                break
            t0 = time.perf_counter()
            trial = _forward(problem, X, U, k, K, alpha, lo, hi)
            if trial is not None:
                Jn = problem._cost_of(*trial)
                nfev += 1
                predicted = alpha * dv1 + alpha * alpha * dv2
                if math.isfinite(Jn) and Jn < J and J - Jn >= -_ARMIJO * predicted:
                    accepted = (*trial, Jn)
            t_trial = time.perf_counter() - t0
            if accepted is not None:
                break
            alpha *= 0.5
        if accepted is None:
            if deadline is not None and elapsed() + t_trial > deadline:
                status, message = 2, "deadline reached"
                break
            mu = max(mu * 10.0, _MU0)
            if mu > _MU_MAX:
                status, message = 3, "no step size lowered the cost"
                break
            continue
        Xn, Un, Jn = accepted
        change = float(np.max(np.abs(Un - U))) if U.size else 0.0
        scale = max(1.0, float(np.max(np.abs(U))) if U.size else 1.0)
        decrease = J - Jn
        X, U, J = Xn, Un, Jn
        nit += 1
        history.append(J)
        mu = mu / 10.0 if mu > _MU_MIN else 0.0
        if callback is not None and callback(nit, J, U.copy()):
            status, message = 2, "stopped by the callback"
            break
        if decrease < ftol * max(1.0, abs(J)) or change <= xtol * scale:
            status, message = 0, "converged"
            break
    return TrajectoryResult(
        x=U.reshape(-1).copy(),
        U=U.copy(),
        X=X,
        fun=float(J),
        nit=nit,
        nfev=nfev,
        status=status,
        message=message,
        success=status == 0,
        k=k,
        K=K,
        history=np.array(history),
        wall=time.perf_counter() - t_start,
    )
