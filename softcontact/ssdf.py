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

from typing import NamedTuple

import numpy as np

from . import _core
from ._validate import as_batch, as_int, as_num_threads, as_positive_float
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


def ssdf(cloud, x, eps, order=0, num_threads=None, *, isa="auto", dense=False) -> SSDF:
    """Soft signed distance of query points to an oriented point cloud.

    Parameters
    ----------
    cloud : PointCloud
        The oriented point cloud (dimension D = 2 or 3), in its body frame.
    x : (..., D) array_like of float
        Query points in the cloud's frame.  Any leading shape, including
        empty batches.  Lists, integer and float32 arrays are converted.
    eps : float
        Softmax temperature on squared distances, > 0, in length^2.  Small
        eps follows the nearest sample's tangent plane (sharp features kept);
        large eps inflates the zero set towards an ellipsoid.  A good start
        is ``(spacing)^2``; the kernel is accurate for eps from 1e-8 L^2 to
        1e2 L^2 (L = ``cloud.size``).
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
        If ``x`` does not have shape ``(..., D)``, ``eps`` is not finite and
        > 0, ``order`` is outside 0..3, ``num_threads < 1``, or ``isa`` is
        unknown or not supported by this CPU.

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
    other rows are unaffected.
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
    eps = as_positive_float(eps, "eps")
    order = as_int(order, "order", 0, 3)
    nthreads = as_num_threads(num_threads)
    isa_code, dense_code = _run_options(isa, dense)
    batch = xa.shape[:-1]
    phi, g, h, t = _core.ssdf(
        _packed(cloud), len(cloud), xa.reshape(-1, D), eps, order, nthreads, isa_code, dense_code
    )
    return SSDF(
        phi.reshape(batch),
        None if g is None else g.reshape(batch + (D,)),
        None if h is None else h.reshape(batch + (D, D)),
        None if t is None else t.reshape(batch + (D, D, D)),
    )
