"""Zeroth-order sampling baselines for the gradient-based optimizers."""

from __future__ import annotations

import numpy as np

from .._validate import as_float_array, as_int, as_positive_float, as_real

__all__ = ["cross_entropy", "CrossEntropyResult"]


class CrossEntropyResult:
    """Result of :func:`cross_entropy`.

    Attributes
    ----------
    x : ndarray
        The best sample seen.
    fun : float
        Its objective.
    mean : ndarray
        The final sampling mean.
    nit, nfev : int
        Iterations and objective evaluations (samples; the mean is evaluated too).
    history : list of (nfev, best fun) tuples, one per iteration.
    """

    def __init__(self, x, fun, mean, nit, nfev, history) -> None:
        self.x = x
        self.fun = fun
        self.mean = mean
        self.nit = nit
        self.nfev = nfev
        self.history = history

    def __repr__(self) -> str:
        return f"CrossEntropyResult(fun={self.fun:.6g}, nit={self.nit}, nfev={self.nfev})"


def cross_entropy(
    batch_fun,
    x0,
    sigma0,
    bounds=None,
    samples=64,
    elites=8,
    iterations=50,
    smoothing=0.1,
    min_sigma=0.0,
    seed=0,
    callback=None,
):
    """Minimize with the cross-entropy method (CEM), a zeroth-order sampler.

    Each iteration draws ``samples`` points from a diagonal Gaussian (clipped to
    ``bounds``), evaluates them together with the current mean in one call
    ``batch_fun(X)`` (X (samples + 1, n) -> (samples + 1,); e.g.
    :meth:`TrajectoryProblem.batch_fun`, whose rollouts run in C across threads), and
    refits the mean and standard deviation to the ``elites`` lowest, blended with the
    previous ones by ``smoothing`` (``new = (1 - smoothing) fit + smoothing old``).  The
    best point ever evaluated is returned.  Non-finite objectives count as +inf.

    Parameters
    ----------
    batch_fun : callable
    x0 : array_like (n,)
        Initial mean.
    sigma0 : float or array_like (n,)
        Initial standard deviation (> 0).
    bounds : (lo, hi), optional
        Scalars or (n,) arrays; samples are clipped to them.
    samples, elites, iterations : int
        ``1 <= elites <= samples``.
    smoothing : float in [0, 1)
    min_sigma : float >= 0
        Floor of the standard deviation (keeps exploring).
    seed : int
        Seed of the sampler (``numpy.random.default_rng``).
    callback : callable, optional
        ``callback(result_so_far)`` after each iteration; returning True stops.

    Returns
    -------
    CrossEntropyResult
    """
    x = as_float_array(x0, "x0")
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("x0 must be a finite, non-empty 1-D array")
    n = x.size
    sig = np.broadcast_to(as_float_array(sigma0, "sigma0"), (n,)).astype(float)
    if not np.all(np.isfinite(sig)) or np.any(sig <= 0):
        raise ValueError("sigma0 must be finite and > 0")
    samples = as_int(samples, "samples", 1)
    elites = as_int(elites, "elites", 1, samples)
    iterations = as_int(iterations, "iterations", 1)
    smoothing = as_real(smoothing, "smoothing")
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing!r}")
    min_sigma = as_positive_float(min_sigma, "min_sigma", allow_zero=True)
    lo, hi = -np.inf, np.inf
    if bounds is not None:
        try:
            lo_, hi_ = bounds
        except (TypeError, ValueError):
            raise ValueError("bounds must be a pair (lo, hi)") from None
        lo = np.broadcast_to(as_float_array(lo_, "bounds"), (n,))
        hi = np.broadcast_to(as_float_array(hi_, "bounds"), (n,))
        if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
            raise ValueError("bounds must satisfy lo <= hi (no NaN)")
    rng = np.random.default_rng(as_int(seed, "seed", 0))
    mean = np.clip(x, lo, hi)
    best_x, best_f = mean.copy(), np.inf
    nfev = 0
    history = []
    res = CrossEntropyResult(best_x, best_f, mean, 0, 0, history)
    for it in range(iterations):
        X = np.clip(mean + sig * rng.standard_normal((samples, n)), lo, hi)
        X = np.vstack([mean[None], X])
        f = np.asarray(batch_fun(X), dtype=float).reshape(-1)
        if f.shape != (samples + 1,):
            raise ValueError(f"batch_fun must return {samples + 1} values, got {f.shape}")
        f = np.where(np.isfinite(f), f, np.inf)
        nfev += samples + 1
        k = int(np.argmin(f))
        if f[k] < best_f:
            best_f, best_x = float(f[k]), X[k].copy()
        order = np.argsort(f[1:], kind="stable")[:elites] + 1
        E = X[order]
        mean = (1 - smoothing) * E.mean(axis=0) + smoothing * mean
        sig = np.maximum((1 - smoothing) * E.std(axis=0) + smoothing * sig, min_sigma)
        history.append((nfev, best_f))
        res = CrossEntropyResult(best_x, best_f, mean, it + 1, nfev, history)
        if callback is not None and callback(res):
            break
    return res
