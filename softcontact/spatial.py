"""Poses and their tangent spaces (docs/method.md section 3).

A 2D pose is ``(x, y, theta)``; a 3D pose is ``(px, py, pz, qw, qx, qy, qz)`` with a unit
quaternion, scalar first (MuJoCo's free-joint convention).  Derivatives with respect to a
pose are taken in its tangent space, of size 3 (2D) or 6 (3D), through the retraction

    q (+) dq = (t + dt, R exp([dtheta]))

- the translation perturbed in the world frame, the rotation on the right (in the body
frame), as MuJoCo (``mju_quatIntegrate``) and Pinocchio (``integrate``) do.  Every
derivative test of the library perturbs poses with :func:`retract`.
"""

from __future__ import annotations

import numpy as np

from ._validate import UNIT_TOL, as_float_array, first_non_unit, shape_str

__all__ = ["retract", "pose_difference"]

# below this rotation-vector norm the log map uses its Taylor series: atan2(s, w)/s =
# (1/w)(1 - s^2/(3 w^2) + ...) with error ~ s^4 ~ 1e-32 there, while the closed form would
# divide rounding noise of s by s
_SMALL = 1e-8


def _check_pose(pose, name):
    q = as_float_array(pose, name)
    if q.ndim < 1 or q.shape[-1] not in (3, 7):
        raise ValueError(
            f"{name} must have shape (..., 3) for 2D or (..., 7) for 3D poses, "
            f"got {shape_str(q.shape)}"
        )
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} must be finite (NaN or inf found)")
    bad = first_non_unit(q[..., 3:]) if q.shape[-1] == 7 else None
    if bad is not None:
        raise ValueError(
            f"{name} must hold unit quaternions in [..., 3:7] (norm 1 within "
            f"{UNIT_TOL:g}), got norm {bad[1]!r}"
        )
    return q


def _join(a, b):
    """Concatenate along the last axis after broadcasting the leading dimensions."""
    lead = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    return np.concatenate(
        [np.broadcast_to(a, lead + a.shape[-1:]), np.broadcast_to(b, lead + b.shape[-1:])], axis=-1
    )


def quat_mul(a, b):
    """Hamilton product of quaternions ``(w, x, y, z)``, batched over leading dimensions."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def quat_exp(v):
    """Unit quaternion of the rotation vector ``v`` (angle |v| about v/|v|): exp(v/2)."""
    with np.errstate(over="ignore", invalid="ignore"):
        theta = np.linalg.norm(v, axis=-1)
        # sin(theta/2)/theta = sinc(theta/(2 pi))/2, exact at theta = 0 (no branch needed)
        s = 0.5 * np.sinc(theta / (2.0 * np.pi))
    huge = np.isinf(theta) & np.all(np.isfinite(v), axis=-1)
    if np.any(huge):
        # |v| beyond ~1e154 overflows the sum of squares: the norm of v scaled by its
        # largest entry, and sin(theta/2)/theta directly (theta/(2 pi) pi is not theta/2
        # at these magnitudes).  The angle is then known only modulo its rounding (an ulp
        # is far beyond 2 pi), but the rotation is a unit quaternion.
        big = v[huge]
        scale = np.max(np.abs(big), axis=-1)
        theta = np.array(theta, dtype=float)
        s = np.array(s, dtype=float)
        t = scale * np.linalg.norm(big / scale[:, None], axis=-1)
        theta[huge] = t
        s[huge] = np.sin(0.5 * t) / t
    return np.concatenate([np.cos(0.5 * theta)[..., None], s[..., None] * v], axis=-1)


def quat_log(q):
    """Rotation vector of the unit quaternion ``q`` (angle in [0, pi]): inverse of quat_exp."""
    q = np.where(q[..., :1] < 0, -q, q)  # q and -q are the same rotation: take w >= 0
    w = q[..., 0]
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1)
    small = s < _SMALL
    with np.errstate(divide="ignore", invalid="ignore"):
        big = 2.0 * np.arctan2(s, w) / s
    series = (2.0 / w) * (1.0 - s * s / (3.0 * w * w))
    return np.where(small, series, big)[..., None] * v


def quat_to_matrix(q):
    """Rotation matrix ``R`` (..., 3, 3) of unit quaternions (..., 4), ``x_world = R x_body``."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=-2,
    )


def retract(pose, dq):
    """Move a pose along a tangent vector: ``pose (+) dq``.

    Parameters
    ----------
    pose : (..., 3) or (..., 7) array_like of float
        2D ``(x, y, theta)`` or 3D ``(px, py, pz, qw, qx, qy, qz)`` poses (unit quaternion).
    dq : (..., 3) or (..., 6) array_like of float
        Tangent vectors: 2D ``(dx, dy, dtheta)``; 3D ``(dp (3, world frame), dtheta (3,
        body frame))``.  Broadcast against ``pose``'s leading dimensions.

    Returns
    -------
    ndarray
        2D: ``(x + dx, y + dy, theta + dtheta)``.  3D: ``(p + dp, q * exp(dtheta / 2))``,
        the quaternion renormalized.

    Raises
    ------
    TypeError
        If an argument is not an array of real numbers.
    ValueError
        If the shapes do not match (``dq`` of size 3 for 2D poses, 6 for 3D), a value is
        not finite, or a quaternion does not have unit norm within 1e-9.
    """
    q = _check_pose(pose, "pose")
    want = 3 if q.shape[-1] == 3 else 6
    d = as_float_array(dq, "dq")
    if d.ndim < 1 or d.shape[-1] != want:
        raise ValueError(
            f"dq must have shape (..., {want}) for these poses, got {shape_str(d.shape)}"
        )
    if not np.all(np.isfinite(d)):
        raise ValueError("dq must be finite (NaN or inf found)")
    if want == 3:
        return q + d
    quat = quat_mul(q[..., 3:], quat_exp(d[..., 3:]))
    quat = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
    return _join(q[..., :3] + d[..., :3], quat)


def pose_difference(pose1, pose0):
    """The tangent vector from ``pose0`` to ``pose1``: ``pose1 (-) pose0``.

    The inverse of :func:`retract`: ``retract(pose0, pose_difference(pose1, pose0))``
    equals ``pose1`` (the same rotation, with the quaternion's sign of ``pose1``'s
    hemisphere), for rotations between the two of less than pi.

    Parameters
    ----------
    pose1, pose0 : (..., 3) or (..., 7) array_like of float
        Poses of the same dimension, broadcast against each other.

    Returns
    -------
    ndarray
        2D ``(x1 - x0, y1 - y0, theta1 - theta0)`` (angles are coordinates on the real
        line, not wrapped, so that the difference exactly inverts :func:`retract`); 3D
        ``(p1 - p0, log(q0^-1 q1))`` with the rotation vector in ``pose0``'s body frame and
        of angle in [0, pi].

    Raises
    ------
    TypeError, ValueError
        As :func:`retract`; also if the poses have different dimensions.
    """
    q1 = _check_pose(pose1, "pose1")
    q0 = _check_pose(pose0, "pose0")
    if q1.shape[-1] != q0.shape[-1]:
        raise ValueError(
            f"pose1 and pose0 must both be 2D or both 3D, got "
            f"{shape_str(q1.shape)} and {shape_str(q0.shape)}"
        )
    if q1.shape[-1] == 3:
        return q1 - q0
    conj = q0[..., 3:] * np.array([1.0, -1.0, -1.0, -1.0])
    rel = quat_mul(conj, q1[..., 3:])
    return _join(q1[..., :3] - q0[..., :3], quat_log(rel))
