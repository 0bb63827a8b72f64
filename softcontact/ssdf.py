"""Soft signed distance function (SSDF) of an oriented point cloud.

``phi(x) = sum_i w_i n_i . (x - p_i)`` with ``w = softmax(log a - |x - p|^2 / eps)``
(docs/method.md section 2).  Values and closed-form
derivatives to third order come from one fused C kernel.

Properties that hold exactly (and are tested): invariance under a rigid motion
of cloud and query together (the gradient rotates with the cloud); flipping
every normal flips the sign of phi and of all derivatives; a single-sample
cloud is the exact plane distance for every eps; the Hessian and third
derivative are exactly symmetric; phi is bitwise identical whichever order is
requested, whatever the thread count, and whether a query is evaluated alone
or in a batch.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import _core
from ._validate import (
    COORD_MAX,
    EPS_RANGE,
    REACH_MAX,
    as_batch,
    as_in_range,
    as_int,
    as_num_threads,
    check_within,
)
from .cloud import PointCloud

__all__ = ["SSDF", "ssdf"]

_ISA_BY_NAME = {
    "auto": _core.ISA_AUTO,
    "generic": _core.ISA_GENERIC,
    "avx2": _core.ISA_AVX2,
    "avx512": _core.ISA_AVX512,
}


class SSDF(NamedTuple):
    """Result of :func:`ssdf`; fields above the requested order are None.

    Attributes
    ----------
    phi : (...) ndarray
        Soft signed distance (> 0 outside, < 0 inside).
    grad : (..., D) ndarray or None
        ``grad[..., a] = d phi / d x_a``.
    hess : (..., D, D) ndarray or None
        ``hess[..., a, b] = d2 phi / d x_a d x_b``, exactly symmetric.
    d3 : (..., D, D, D) ndarray or None
        Third derivative, exactly symmetric in its three indices.
    """

    phi: np.ndarray
    grad: np.ndarray | None
    hess: np.ndarray | None
    d3: np.ndarray | None


def _run_options(isa, dense) -> tuple[int, int]:
    """The binding's ``(isa, dense)`` codes of ``isa=`` and ``dense=`` arguments.  "auto" is
    -1, which the binding resolves: the ``SOFTCONTACT_ISA`` environment variable when set,
    else the best instruction set this CPU runs."""
    if isa == "auto" and dense is False:
        return -1, 0  # the common case, first (Model.step is called in loops)
    if not isinstance(dense, (bool, np.bool_)):
        raise TypeError(f"dense must be a bool, got {type(dense).__name__}")
    code = _ISA_BY_NAME.get(isa) if isinstance(isa, str) else None
    if code is None:
        raise ValueError(f"isa must be one of {sorted(_ISA_BY_NAME)}, got {isa!r}")
    return code, int(dense)


def _packed(cloud: PointCloud) -> np.ndarray:
    """The kernel layout of a cloud, built once and cached on the (immutable) cloud."""
    buf = cloud._cache.get("packed")
    if buf is None:
        buf = _core.pack_cloud(cloud.points, cloud.normals, cloud.weights)
        buf.flags.writeable = False
        cloud._cache["packed"] = buf
    return buf


def _sphere(cloud: PointCloud) -> tuple[tuple[float, ...], float, float]:
    """``(c0, rho, r)``: the bounding sphere the C core stores with a cloud (its packed
    header: ``c0`` the bounding-box centre, ``rho`` the largest ``|p - c0|``) and the cloud's
    radius about its frame's origin, ``r = |c0| + rho``, with the C core's arithmetic
    (``sc__cloud_radius``); cached on the cloud."""
    s = cloud._cache.get("sphere")
    if s is None:
        D, n = cloud.dim, len(cloud)
        at = (3 * D + 3) * (-(-n // 8) * 8)  # after the 3 D + 3 arrays of npad doubles
        h = _packed(cloud)[at : at + D + 1].tolist()
        c2 = h[0] * h[0]
        for a in range(1, D):
            c2 += h[a] * h[a]
        s = (tuple(h[:D]), h[D], math.sqrt(c2) + h[D])
        cloud._cache["sphere"] = s
    return s


def _check_cloud(cloud: PointCloud, name: str) -> None:
    """``ValueError`` naming ``name`` unless the cloud lies within :data:`COORD_MAX` of its
    frame's origin (its radius about the origin, ``|c0| + rho``)."""
    r = _sphere(cloud)[2]
    if not r <= COORD_MAX:
        raise ValueError(
            f"{name} must lie within {COORD_MAX:g} m of its frame's origin (the radius |c0| + "
            f"rho of its bounding sphere about the origin), got {r:.6g} m"
        )


def _reach_eps(rho: float, r: float) -> float:
    """The smallest eps for which a query at distance 0 from c0 of clouds of radius ``rho``
    reaches ``r`` (``r rho <= REACH_MAX eps``)."""
    return r * rho / REACH_MAX


def _check_queries(cloud: PointCloud, x: np.ndarray, eps: float) -> None:
    """ValueError naming ``x`` (or ``eps``) unless every finite query (rows of the (m, D)
    ``x``) is in the valid range: coordinates within :data:`COORD_MAX` and the reach
    ``(|x - c0| + rho) rho <= REACH_MAX eps`` (the C core's test, sc__query_check, with
    its arithmetic).  Rows with a non-finite coordinate pass: they get NaN rows
    (documented)."""
    if len(x) == 0:
        return
    c0, rho, _ = _sphere(cloud)
    finite = np.isfinite(x).all(axis=1)
    if not finite.all():
        x = np.where(finite[:, None], x, np.asarray(c0))  # c0 is in range (_check_cloud)
    check_within(x, "x", COORD_MAX)
    if rho == 0.0:
        return
    e = x[:, 0] - c0[0]
    e2 = e * e
    for a in range(1, cloud.dim):
        e = x[:, a] - c0[a]
        e2 = e2 + e * e
    lim = REACH_MAX * eps
    bad = np.flatnonzero((np.sqrt(e2) + rho) * rho > lim)
    if bad.size == 0:
        return
    if rho * rho > lim:
        raise ValueError(
            f"eps must be at least rho^2 / {REACH_MAX:g} = {_reach_eps(rho, rho):.3g} m^2 for "
            f"this cloud (radius rho = {rho:.6g} m about its centre c0): the SSDF's reach "
            f'(|x - c0| + rho) rho <= {REACH_MAX:g} eps (docs/method.md, "Valid ranges"), '
            f"got {eps!r}"
        )
    i = int(bad[0])
    raise ValueError(
        f"x must lie within the SSDF's reach of the cloud, (|x - c0| + rho) rho <= "
        f"{REACH_MAX:g} eps (c0, rho its bounding sphere: here |x - c0| <= "
        f"{lim / rho - rho:.6g} m); row {i} is {math.sqrt(float(e2[i])):.6g} m from c0"
    )


def ssdf(cloud, x, eps, order=0, num_threads=None, *, isa="auto", dense=False) -> SSDF:
    """Soft signed distance of query points to an oriented point cloud.

    Parameters
    ----------
    cloud : PointCloud
        The oriented point cloud (dimension D = 2 or 3), in its body frame.
    x : (..., D) array_like of float
        Query points in the cloud's frame.  Any leading shape, including
        empty batches.  Lists, integer and float32 arrays are converted.
        Finite queries must be in the valid range: coordinates within 1e12 m, and
        within the SSDF's reach of the cloud, ``(|x - c0| + rho) rho <= 1e14 eps``
        with ``(c0, rho)`` the cloud's bounding sphere (beyond it the rounding of the
        weights' exponents outgrows what determines them; docs/method.md, "Valid
        ranges").
    eps : float
        Softmax temperature on squared distances, in m^2, within [1e-30, 1e24]
        (docs/method.md, "Valid ranges").  Small eps follows the nearest sample's
        tangent plane (sharp features kept); large eps inflates the zero set towards
        an ellipsoid.  A good start is ``(spacing)^2``; the kernel is accurate for eps
        from 1e-8 L^2 to 1e2 L^2 (L = ``cloud.size``).
    order : int, optional
        Highest derivative returned, 0..3 (default 0).
    num_threads : int, optional
        Threads to split the queries over; None (default) uses every core
        this process may run on (its CPU affinity, read again at most once a
        second).  Results are bitwise identical for any value.
    isa : {"auto", "generic", "avx2", "avx512"}, optional
        Instruction-set variant of the kernel (keyword only; default "auto",
        the best this CPU supports, or the ``SOFTCONTACT_ISA`` environment
        variable).  Variants agree to ~1e-15 relative.
    dense : bool, optional
        Evaluate every sample (keyword only; default False).  By default a cloud
        of 256 samples or more is pruned through its spatial index: per query only
        the samples whose weight can exceed ~1e-18 of the largest, once the
        polynomial factors of the derivatives are accounted for, are visited.
        Both agree to rounding (tested to 1e-13 relative at every order); see
        docs/method.md section 10.

    Returns
    -------
    SSDF
        ``(phi, grad, hess, d3)`` with shapes ``(...)``, ``(..., D)``,
        ``(..., D, D)`` and ``(..., D, D, D)``; fields above ``order`` are None.

    Raises
    ------
    TypeError
        If ``cloud`` is not a PointCloud, ``x`` is not real-valued (complex,
        object, strings), or ``eps``/``order``/``num_threads`` have the wrong type.
    ValueError
        If ``x`` does not have shape ``(..., D)``, a finite query is outside the
        valid range, ``eps`` is outside [1e-30, 1e24], the cloud lies farther than
        1e12 m from its origin, ``order`` is outside 0..3, ``num_threads < 1``, or
        ``isa`` is unknown or not supported by this CPU.

    Notes
    -----
    With ``d_i = |x - p_i|^2``, ``w_i = a_i exp(-d_i/eps) / sum_j a_j exp(-d_j/eps)``,
    ``h_i = n_i . (x - p_i)``, ``c = 2/eps``, and centred quantities
    ``H = h - phi``, ``P = p - E[p]``, ``N = n - E[n]`` under the weights:

    - ``grad_a = E[n_a] + c E[H P_a]``
    - ``hess_ab = c (E[N_a P_b] + E[N_b P_a]) + c^2 E[H P_a P_b]``
    - ``d3_abc = c^2 (E[N_a P_b P_c] + E[N_b P_a P_c] + E[N_c P_a P_b])
      + c^3 kappa(h, p_a, p_b, p_c)`` (fourth joint cumulant).

    Derivative layout: ``grad[..., a] = d phi / d x_a`` and so on, batch
    dimensions first.  Cost is O(I) per query dense, O(log I + kept samples)
    pruned, and memory O(I + N): the I x N distance matrix is never formed.  A
    query with a NaN or infinite coordinate gets NaN in every output of its row;
    other rows are unaffected.  Within the valid ranges every output is finite at
    every order.
    Inputs are never modified.

    Examples
    --------
    >>> import numpy as np, softcontact as sc
    >>> box = sc.PointCloud.box([0.05, 0.02], spacing=0.005)
    >>> r = sc.ssdf(box, [[0.08, 0.0], [0.0, 0.0]], eps=1e-6, order=1)
    >>> np.round(r.phi, 6)
    array([ 0.03, -0.02])
    >>> np.round(r.grad[0], 6) + 0.0  # (+ 0.0 turns a -0.0 into 0.0)
    array([1., 0.])
    """
    if not isinstance(cloud, PointCloud):
        raise TypeError(f"cloud must be a PointCloud, got {type(cloud).__name__}")
    D = cloud.dim
    xa = as_batch(x, "x", D)
    eps = as_in_range(eps, "eps", *EPS_RANGE, " m^2")
    order = as_int(order, "order", 0, 3)
    nthreads = as_num_threads(num_threads)
    isa_code, dense_code = _run_options(isa, dense)
    batch = xa.shape[:-1]
    xf = xa.reshape(-1, D)
    _check_cloud(cloud, "cloud")
    try:
        phi, g, h, t = _core.ssdf(
            _packed(cloud), len(cloud), xf, eps, order, nthreads, isa_code, dense_code
        )
    except ValueError:
        # the C core checks every query's range (sc__query_check) in one cheap pass; the
        # same test in NumPy, run only when it refused one, names the row
        _check_queries(cloud, xf, eps)
        raise
    return SSDF(
        phi.reshape(batch),
        None if g is None else g.reshape(batch + (D,)),
        None if h is None else h.reshape(batch + (D, D)),
        None if t is None else t.reshape(batch + (D, D, D)),
    )
