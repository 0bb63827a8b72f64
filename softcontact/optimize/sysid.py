"""System identification: fitting model parameters to an observed trajectory.

The residuals are the observed coordinates' prediction errors; their Jacobian with respect
to the parameters comes from forward sensitivities of the analytic step derivatives.
"""

from __future__ import annotations

import numpy as np

from .._core import DivergenceError
from .._optional import require
from .._validate import as_float_array
from ..sampling import check_finite

__all__ = ["trajectory_residuals", "fit_parameters"]


def _observed_coords(model):
    """Tangent coordinates that are plain coordinates of the state: every moving body's
    position and, in 2D, its angle (additive charts)."""
    nvb = 3 if model.dim == 2 else 6
    return np.array([nvb * j + c for j in range(len(model.moving)) for c in range(3)])


def _observed_values(model, X):
    nqb = 3 if model.dim == 2 else 7
    cols = [nqb * j + c for j in range(len(model.moving)) for c in range(3)]
    return X[..., cols]


def trajectory_residuals(build, names, p, x0, U, observed):
    """Residuals ``predicted - observed`` of the observed coordinates (every moving body's
    position, and its angle in 2D) at steps 1..T, and their Jacobian with respect to the
    parameters ``names`` (model parameter names, see ``Model.param_names``), by forward
    parameter sensitivities ``S_{t+1} = A_t S_t + dx_dp_t`` of the analytic step
    derivatives.  ``build(p)`` must return the model with those parameters set to ``p``.
    Returns ``(r, J)`` with r (T * k,), J (T * k, len(names))."""
    model = _built(build, as_float_array(p, "p"))
    try:
        cols = [model.param_names.index(nm) for nm in names]
    except ValueError:
        raise ValueError(
            f"names must be model parameters, got {list(names)}; the model has "
            f"{list(model.param_names)}"
        ) from None
    Ua = as_float_array(U, "U")
    if Ua.ndim != 2 or Ua.shape[1] != model.nu:
        raise ValueError(f"U must have shape (T, {model.nu}), got {Ua.shape}")
    check_finite(Ua, "U")
    T = Ua.shape[0]
    obs = as_float_array(observed, "observed")
    k = _observed_coords(model)
    if obs.shape != (T, len(k)):
        raise ValueError(
            f"observed must have shape ({T}, {len(k)}) (the observed coordinates "
            f"of x_1..x_T), got {obs.shape}"
        )
    check_finite(obs, "observed")
    x = model._as_state(x0, "x0")
    S = np.zeros((2 * model.nv, len(cols)))
    r = np.empty((T, len(k)))
    J = np.empty((T, len(k), len(cols)))
    for t in range(T):
        try:
            s = model.step(x, Ua[t], order=1, params=True)
        except DivergenceError as e:
            raise model._divergence(e.x_next, step=t) from None
        S = s.dx_dx @ S + s.dx_dp[:, cols]
        x = s.x_next
        r[t] = _observed_values(model, x) - obs[t]
        J[t] = S[k]
    return r.reshape(-1), J.reshape(T * len(k), len(cols))


def _built(build, p):
    """``build(p)``, which must be a Model (TypeError naming ``build`` otherwise)."""
    from ..scene import Model

    if not callable(build):
        raise TypeError(f"build must be a callable returning a Model, got {type(build).__name__}")
    model = build(p)
    if not isinstance(model, Model):
        raise TypeError(f"build must return a Model, but build(p) returned {model!r:.80}")
    return model


def fit_parameters(build, names, p0, x0, U, observed, **least_squares_options):
    """Identify model parameters from an observed trajectory with
    ``scipy.optimize.least_squares`` and the analytic parameter Jacobians.

    Parameters
    ----------
    build : callable
        ``build(p) -> Model`` for a parameter vector ``p`` (the entries named ``names``;
        every other parameter must not depend on ``p`` -- e.g. give the inertia explicitly
        when identifying the mass, and contact parameters explicitly (``params=``): those
        fitted to the bodies depend on their masses).
    names : sequence of str
        The model parameters in ``p`` (entries of ``Model.param_names``).
    p0 : array_like
        Initial guess.
    x0, U : array_like
        Initial state (nx,) and controls (T, nu) of the observed trajectory.
    observed : array_like
        (T, k): observed positions (and 2D angles) of every moving body at steps 1..T.
    **least_squares_options
        Passed to ``scipy.optimize.least_squares`` (e.g. ``bounds``, ``x_scale``).

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x`` holds the identified parameters.

    Raises
    ------
    DivergenceError
        If the simulation diverges at ``p0``.  At a trial point where it diverges the
        residuals are ``inf`` and ``least_squares`` rejects the step.
    TypeError
        If ``build`` is not callable or ``build(p)`` does not return a Model (the message
        shows what it returned), or an array argument is not real.
    ValueError
        If ``p0``, ``U`` or ``observed`` has the wrong shape or is not finite, or ``names``
        are not parameters of the model.
    """
    least_squares = require("scipy.optimize", "optimize", "fit_parameters").least_squares

    from ..scene import _divergence_error

    p0 = as_float_array(p0, "p0")
    if p0.ndim != 1:
        raise ValueError(f"p0 must have shape (n,), got {p0.shape}")
    check_finite(p0, "p0")
    cache = {}  # the last parameter vector's (residuals, Jacobian or the DivergenceError)

    def evaluate(p):
        key = np.asarray(p, dtype=float).tobytes()
        if key not in cache:
            cache.clear()
            try:
                cache[key] = trajectory_residuals(build, names, p, x0, U, observed)
            except DivergenceError as e:
                # a trial point whose simulation diverges: infinite residuals, which
                # least_squares rejects (it shrinks its trust region)
                cache[key] = (np.full(np.size(observed), np.inf), e)
        return cache[key]

    def jac(p):
        J = evaluate(p)[1]
        if isinstance(J, DivergenceError):
            raise J
        return J

    if isinstance(evaluate(p0)[1], DivergenceError):
        e = evaluate(p0)[1]
        raise _divergence_error(
            f"fit_parameters: the simulation diverges at the initial guess p0: {e}",
            **{k: getattr(e, k) for k in ("body", "quantity", "value", "limit", "x_next")},
        )
    return least_squares(lambda p: evaluate(p)[0], p0, jac=jac, **least_squares_options)
