"""Derivative-checking helpers used by the test suite, public for users who
write their own costs on top of softcontact.

All checks compare an analytic derivative with central finite differences of
the next lower analytic order (never of the value twice), and print the
failing index, analytic value, FD value and difference, as MuJoCo's tests do.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "check_derivatives",
    "fd_jacobian",
    "step_hessian",
    "step_jacobian",
    "taylor_remainders",
    "taylor_slopes",
]


def step_jacobian(result):
    """``[dx_dx | dx_du]`` (n, n + nu) of a :class:`~softcontact.StepResult` of order >= 1:
    the first derivative of the step over ``z = (dx, du)``."""
    return np.concatenate([result.dx_dx, result.dx_du], axis=1)


def step_hessian(result):
    """The second derivative (n, n + nu, n + nu) of a :class:`~softcontact.StepResult` of
    order 2 over ``z = (dx, du)``, assembled from ``d2x_dx2``, ``d2x_dxdu`` (and its
    transpose) and ``d2x_du2``; symmetric in its last two indices."""
    n, nu = result.dx_du.shape
    H = np.empty((n, n + nu, n + nu))
    H[:, :n, :n] = result.d2x_dx2
    H[:, :n, n:] = result.d2x_dxdu
    H[:, n:, :n] = np.swapaxes(result.d2x_dxdu, 1, 2)
    H[:, n:, n:] = result.d2x_du2
    return H


def fd_jacobian(fun, x, step, *, retract=None):
    """Central-difference Jacobian of a pointwise batched function.

    Parameters
    ----------
    fun : callable
        ``fun(x)`` with ``x`` of shape ``(..., n)`` returns ``(..., *out)``
        and acts on each batch item independently.
    x : (..., n) array_like
        Points at which to differentiate.
    step : float
        Finite-difference step (in the coordinates of ``retract``).
    retract : callable, optional
        ``retract(x, dx)`` giving the point at tangent offset ``dx`` (default
        ``x + dx``).  Use it for derivatives on a manifold.

    Returns
    -------
    (..., *out, n) ndarray
        ``J[..., i, j] = (fun(x (+) h e_j) - fun(x (+) -h e_j))[..., i] / (2 h)``.
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    retract = retract or (lambda a, d: a + d)
    cols = []
    for j in range(n):
        e = np.zeros(n)
        e[j] = step
        fp = np.asarray(fun(retract(x, e)), dtype=float)
        fm = np.asarray(fun(retract(x, -e)), dtype=float)
        cols.append((fp - fm) / (2.0 * step))
    return np.stack(cols, axis=-1)


def check_derivatives(
    fun, x, jac, *, step=1e-6, rtol=1e-6, atol=1e-8, retract=None, batch_ndim=None, scale="item"
):
    """Assert that ``jac`` is the derivative of ``fun`` at ``x``.

    Parameters
    ----------
    fun, x, step, retract
        As in :func:`fd_jacobian`.
    jac : (..., *out, n) array_like
        The analytic derivative to check.
    rtol, atol : float
        Entry ``(b, i, j)`` passes when
        ``|jac - fd| <= atol + rtol * max(|jac[b]|) + 16 u max(|fun(x)[b]|) / step``:
        the tolerance is relative to the largest entry of that batch item, since
        central differences have an error proportional to the function's scale,
        not each entry's; the last term is the rounding floor of a central
        difference (u = 2.2e-16), below which no finite difference resolves.
    batch_ndim : int, optional
        Number of leading batch dimensions (default ``x.ndim - 1``).
    scale : {"item", "global"}
        Normalize per batch item (default), or by the largest entry of the whole
        array.  Use "global" where exact symmetries make some items' true
        derivative exactly zero: their computed values are then rounding noise of
        terms as large as elsewhere, which no per-item scale can measure.

    Returns
    -------
    float
        The largest ``|jac - fd| / (atol + rtol * scale)`` (<= 1 on success).

    Raises
    ------
    AssertionError
        With the worst index, analytic value, FD value and difference.
    """
    x = np.asarray(x, dtype=float)
    jac = np.asarray(jac, dtype=float)
    fd = fd_jacobian(fun, x, step, retract=retract)
    if fd.shape != jac.shape:
        raise AssertionError(f"jacobian shape {jac.shape} != finite-difference shape {fd.shape}")
    nb = x.ndim - 1 if batch_ndim is None else batch_ndim
    axes = tuple(range(nb, jac.ndim))
    if jac.size == 0:
        return 0.0
    if scale not in ("item", "global"):
        raise ValueError(f"scale must be 'item' or 'global', got {scale!r}")
    f0 = np.abs(np.asarray(fun(x), dtype=float))
    if scale == "global":
        axes = None
        f_axes = None
    else:
        f_axes = tuple(range(nb, f0.ndim))
    scale = np.max(np.abs(jac), axis=axes, keepdims=True)
    fmag = np.max(f0, axis=f_axes, keepdims=True) if f0.ndim > nb else f0
    fmag = fmag.reshape(fmag.shape + (1,) * (jac.ndim - fmag.ndim))
    floor = 16 * np.finfo(float).eps * fmag / step
    bound = atol + rtol * scale + floor
    ratio = np.abs(jac - fd) / bound
    worst = np.unravel_index(np.argmax(ratio), ratio.shape)
    allowed = np.broadcast_to(bound, ratio.shape)[worst]
    if not np.all(ratio <= 1.0):
        raise AssertionError(
            f"derivative mismatch at index {tuple(int(i) for i in worst)}: analytic "
            f"{jac[worst]!r}, finite difference {fd[worst]!r}, difference "
            f"{jac[worst] - fd[worst]!r} (allowed {allowed!r}; "
            f"{int(np.sum(ratio > 1))} of {ratio.size} entries fail)"
        )
    return float(ratio[worst])


def taylor_remainders(fun, x, v, derivs, steps):
    """Errors of the Taylor expansions of ``t -> fun(x + t v)`` at several steps.

    Parameters
    ----------
    fun : callable
        Scalar-per-item function of ``x``.
    x, v : array_like
        Expansion point and direction (same shape).
    derivs : sequence of array_like
        ``derivs[k]`` is the (k+1)-th directional derivative at ``x`` along
        ``v`` (e.g. ``g.v``, ``v.H.v``, ``T[v, v, v]``).
    steps : sequence of float
        Decreasing step sizes.

    Returns
    -------
    (len(derivs) + 1, len(steps), ...) ndarray
        ``R[n, s] = |fun(x + t v) - sum_{k<=n} t^k f^(k) / k!|`` for the
        order-n expansion (n = 0 uses only the value), which shrinks like
        ``t^(n+1)``.
    """
    x = np.asarray(x, dtype=float)
    v = np.asarray(v, dtype=float)
    f0 = np.asarray(fun(x), dtype=float)
    out = []
    for t in steps:
        ft = np.asarray(fun(x + t * v), dtype=float)
        approx = f0.copy()
        row = [np.abs(ft - approx)]
        fact = 1.0
        for k, d in enumerate(derivs, start=1):
            fact *= k
            approx = approx + t**k * np.asarray(d, dtype=float) / fact
            row.append(np.abs(ft - approx))
        out.append(row)
    return np.moveaxis(np.array(out), 0, 1)


def taylor_slopes(remainders, steps):
    """Log-log slopes between consecutive steps of :func:`taylor_remainders` output."""
    r = np.asarray(remainders, dtype=float)
    s = np.asarray(steps, dtype=float)
    ls = np.log(s)
    shape = (1, len(s) - 1) + (1,) * (r.ndim - 2)
    with np.errstate(divide="ignore", invalid="ignore"):  # exact zeros give -inf logs
        return np.diff(np.log(r), axis=1) / np.diff(ls).reshape(shape)
