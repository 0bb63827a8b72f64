"""Separation field between two posed bodies (METHOD.md sections 3-4).

Body A's samples are mapped into B's frame and B's SSDF evaluated there, and vice
versa; ``Phi_k < 0`` means sample k penetrates the other body.  Derivatives are taken
with respect to the tangent coordinates ``(dt_A, dtheta_A, dt_B, dtheta_B)`` of the two
poses (translations in the world frame, rotations in the body frame; see
:func:`softcontact.retract`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _core
from ._validate import as_float_array, as_int, as_num_threads, as_positive_float, shape_str
from .cloud import PointCloud
from .ssdf import _isa_code, _packed

__all__ = ["Separation", "separation"]

_UNIT_TOL = 1e-9


class Separation(NamedTuple):
    """Result of :func:`separation`; fields above the requested order are None.

    Attributes
    ----------
    phi : (I + J,) ndarray
        ``Phi``: A's samples against B's SSDF, then B's samples against A's.
    points : (I + J, D) ndarray
        World positions of the samples (A's, then B's).
    grad : (I + J, D) ndarray
        World gradient ``G_k`` of the other body's SSDF at each sample.
    dphi_dq : (I + J, 2 nv) ndarray or None
        ``dPhi_k / dq`` with ``q = (dt_A, dtheta_A, dt_B, dtheta_B)``; nv = 3 (2D), 6 (3D).
    d2phi_dq2 : (I + J, 2 nv, 2 nv) ndarray or None
        Second derivatives, exactly symmetric.
    """

    phi: np.ndarray
    points: np.ndarray
    grad: np.ndarray
    dphi_dq: np.ndarray | None
    d2phi_dq2: np.ndarray | None


def _as_pose(pose, name, dim):
    q = as_float_array(pose, name)
    want = 3 if dim == 2 else 7
    if q.shape != (want,):
        raise ValueError(f"{name} must have shape ({want},) for {dim}D clouds, "
                         f"got {shape_str(q.shape)}")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} must be finite (NaN or inf found)")
    if dim == 3:
        norm = float(np.linalg.norm(q[3:]))
        if abs(norm - 1.0) > _UNIT_TOL:
            raise ValueError(f"{name} must hold a unit quaternion in [3:7] (norm 1 within "
                             f"{_UNIT_TOL:g}), got norm {norm!r}")
    return q


def separation(cloud_a, pose_a, cloud_b, pose_b, eps, order=0, num_threads=None, *,
               isa="auto") -> Separation:
    """Separation field of two posed oriented point clouds and its pose derivatives.

    Parameters
    ----------
    cloud_a, cloud_b : PointCloud
        The two bodies' clouds in their body frames (same dimension D).
    pose_a, pose_b : (3,) or (7,) array_like of float
        2D ``(x, y, theta)``; 3D ``(px, py, pz, qw, qx, qy, qz)`` with a unit quaternion
        (norm 1 within 1e-9; it is normalized before use).
    eps : float
        SSDF temperature, > 0 (length^2), shared by both bodies.
    order : int, optional
        0: values (``phi``, ``points``, ``grad``); 1: also ``dphi_dq``; 2: also
        ``d2phi_dq2``.
    num_threads : int, optional
        Threads for the SSDF evaluations (None: all cores); results do not depend on it.
    isa : {"auto", "generic", "avx2", "avx512"}, optional
        SIMD variant of the SSDF kernel (keyword only).

    Returns
    -------
    Separation
        ``(phi, points, grad, dphi_dq, d2phi_dq2)``, see :class:`Separation`.

    Raises
    ------
    TypeError
        If a cloud is not a PointCloud, or an argument has the wrong type.
    ValueError
        If the clouds' dimensions differ, a pose has the wrong shape, is not finite or
        (3D) its quaternion is not unit, ``eps`` is not finite and > 0, or ``order`` is
        outside 0..2.

    Notes
    -----
    For sample k of the owner O against the other body K, with
    ``y = R_K^T (R_O p_k + t_O - t_K)``: ``Phi_k = phi_K(y)``, ``G_k = R_K grad phi_K(y)``.
    ``dphi_dq[k]`` is the derivative of ``delta -> Phi_k(q (+) delta)`` at 0 and
    ``d2phi_dq2[k]`` its (symmetric) Hessian, where ``(+)`` is :func:`softcontact.retract`
    applied to each pose.  Because rotations do not commute, central differences of
    ``dphi_dq`` taken through ``retract`` equal the symmetric part of ``d2phi_dq2`` plus a
    skew-symmetric bracket term; Taylor expansions along ``q (+) t v`` use ``d2phi_dq2``
    directly.  The derivative with respect to A's translation is ``G_k`` for A's samples
    and ``-G_k`` for B's: the unit force of METHOD.md section 4.  Cost O(I J), memory
    O(I + J).

    Examples
    --------
    >>> import numpy as np, softcontact as sc
    >>> disk = sc.PointCloud.disk(0.02, 0.002)
    >>> r = sc.separation(disk, [0.0, 0.0, 0.0], disk, [0.035, 0.0, 0.0], eps=1e-6, order=1)
    >>> bool(r.phi.min() < 0)   # the disks overlap by 5 mm
    True
    >>> r.dphi_dq.shape
    (126, 6)
    """
    if not isinstance(cloud_a, PointCloud):
        raise TypeError(f"cloud_a must be a PointCloud, got {type(cloud_a).__name__}")
    if not isinstance(cloud_b, PointCloud):
        raise TypeError(f"cloud_b must be a PointCloud, got {type(cloud_b).__name__}")
    if cloud_a.dim != cloud_b.dim:
        raise ValueError(f"cloud_a and cloud_b must have the same dimension, got "
                         f"{cloud_a.dim}D and {cloud_b.dim}D")
    dim = cloud_a.dim
    qa = _as_pose(pose_a, "pose_a", dim)
    qb = _as_pose(pose_b, "pose_b", dim)
    eps = as_positive_float(eps, "eps")
    order = as_int(order, "order", 0, 2)
    nthreads = as_num_threads(num_threads)
    phi, x, g, d1, d2 = _core.separation(_packed(cloud_a), len(cloud_a), qa, _packed(cloud_b),
                                         len(cloud_b), qb, eps, order, nthreads, _isa_code(isa))
    return Separation(phi, x, g, d1, d2)
