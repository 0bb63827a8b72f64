"""Stage residuals of a trajectory problem: ``r(x, u)`` with exact derivatives.

Each cost of :class:`~softcontact.optimize.TrajectoryProblem` is ``|r|^2 / 2`` of a
residual that returns its value, its Jacobian and its second derivatives with respect to
``z = (dx, du)``, ``dx`` in the tangent chart of ``x`` (:meth:`Model.retract`).
"""

from __future__ import annotations

import numpy as np

from .._validate import as_float_array, as_positive_float
from ..cloud import PointCloud
from ..contact import _as_pose, separation

__all__ = ["PoseResidual", "ControlResidual", "ApproachResidual"]


class _Residual:
    """A stage residual ``r(x, u)``; its cost is ``|r|^2 / 2``.

    ``evaluate(model, x, u, order)`` returns ``(r, J, H)``: ``r`` (m,), ``J`` (m, n + nu)
    the derivative with respect to ``z = (dx, du)`` (n = 2 nv, dx in the chart of x), and
    ``H`` (m, n + nu, n + nu) its second derivatives (symmetric), at ``order`` 0, 1, 2 (J and
    H None below).  ``u`` is None at the terminal stage.
    """

    terminal: bool
    stages: bool

    def size(self, model) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def evaluate(self, model, x, u, order):  # pragma: no cover - abstract
        raise NotImplementedError

    def active(self, t, T) -> bool:
        return (t == T and self.terminal) or (t < T and self.stages)


def _body_pose(model, x, slot):
    """A moving body's pose in the state x, and the index of its first tangent coordinate."""
    nvb, nqb = (3, 3) if model.dim == 2 else (6, 7)
    return x[nqb * slot : nqb * (slot + 1)], nvb * slot


def _model_shape(model):
    return (model.dim, model.nx, model.nu)


def _body_slot(model, body):
    if not isinstance(body, str):
        raise TypeError(f"body must be a body name, got {type(body).__name__}")
    if body not in model.moving:
        raise ValueError(
            f"body {body!r} is not a moving body of the model (moving: {list(model.moving)})"
        )
    return model.moving.index(body)


def _when(stages, terminal):
    if not isinstance(stages, (bool, np.bool_)) or not isinstance(terminal, (bool, np.bool_)):
        raise TypeError("stages and terminal must be bools")
    if not (stages or terminal):
        raise ValueError("a residual must be active at the stages or at the terminal state")
    return bool(stages), bool(terminal)


class PoseResidual(_Residual):
    """Distance of a body's pose to a goal pose.

    ``r = (sqrt(wp) (p - p_goal), angle part)`` with the smooth angle part
    ``2 sqrt(wa) sin((theta - theta_goal) / 2)`` in 2D (so ``|r|^2 / 2`` has
    ``wa (1 - cos(theta - theta_goal))``) and ``2 sqrt(wa) vec(q_goal^-1 q)`` in 3D
    (``wa (1 - cos angle)``, with the quaternion sign chosen so that its w >= 0).

    Parameters
    ----------
    model : Model
    body : str
        A moving body.
    goal : array_like
        Goal pose (3,) or (7,).
    position_weight, angle_weight : float
        ``wp`` (1/m^2) and ``wa`` (dimensionless), >= 0.
    stages, terminal : bool
        Whether the residual applies at every stage t < T and/or at the final state.
    coast : float
        2D only: measure the pose the body would reach coasting on at its current
        velocity for ``coast`` seconds, ``(p + coast v, theta + coast omega)`` (s, >= 0;
        default 0: the pose itself).  For a body whose velocity decays at a rate
        ``lambda`` (viscous drag), ``coast = 1 / lambda`` gives the pose where it comes
        to rest.
    """

    def __init__(
        self,
        model,
        body,
        goal,
        position_weight=1.0,
        angle_weight=1.0,
        *,
        stages=False,
        terminal=True,
        coast=0.0,
    ):
        self._model_shape = _model_shape(model)
        self.slot = _body_slot(model, body)
        self.goal = _as_pose(goal, "goal", model.dim).copy()
        self.wp = as_positive_float(position_weight, "position_weight", allow_zero=True)
        self.wa = as_positive_float(angle_weight, "angle_weight", allow_zero=True)
        self.stages, self.terminal = _when(stages, terminal)
        self.dim = model.dim
        self.coast = as_positive_float(coast, "coast", allow_zero=True)
        if self.coast and self.dim != 2:
            raise ValueError(f"coast is for 2D models, got coast={coast!r} in 3D")

    def size(self, model) -> int:
        return 3 if self.dim == 2 else 6

    def evaluate(self, model, x, u, order):
        D = self.dim
        nz = 2 * model.nv + model.nu
        pose, c0 = _body_pose(model, x, self.slot)
        m = self.size(model)
        r = np.zeros(m)
        J = np.zeros((m, nz)) if order >= 1 else None
        H = np.zeros((m, nz, nz)) if order >= 2 else None
        sp, sa = np.sqrt(self.wp), np.sqrt(self.wa)
        if D == 2:
            # the (coasted) pose is linear in x: p + c v, its tangent columns (pose, velocity)
            c, v0 = self.coast, model.nq + c0
            cols = [c0] if not c else [c0, model.nv + c0]
            wts = np.array([1.0] if not c else [1.0, c])
            q = pose + c * x[v0 : v0 + 3] if c else pose
            r[:2] = sp * (q[:2] - self.goal[:2])
            h = 0.5 * (q[2] - self.goal[2])
            r[2] = 2.0 * sa * np.sin(h)
            for col, w in zip(cols, wts, strict=True):
                if J is not None:
                    J[[0, 1], [col, col + 1]] = sp * w
                    J[2, col + 2] = sa * np.cos(h) * w
                if H is not None:
                    for col2, w2 in zip(cols, wts, strict=True):
                        H[2, col + 2, col2 + 2] = -0.5 * sa * np.sin(h) * w * w2
            return r, J, H
        r[:D] = sp * (pose[:D] - self.goal[:D])
        if J is not None:
            J[np.arange(D), c0 + np.arange(D)] = sp
        # 3D: e = q_goal^-1 (x) q (x) Exp(dth/2), vec(e) to second order in dth
        from ..spatial import quat_mul

        qg = self.goal[3:] / np.linalg.norm(self.goal[3:])
        q = pose[3:] / np.linalg.norm(pose[3:])
        e = quat_mul(qg * np.array([1.0, -1.0, -1.0, -1.0]), q)
        if e[0] < 0:
            e = -e
        w, v = e[0], e[1:]
        r[3:] = 2.0 * sa * v
        if J is not None:
            vx = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
            J[3:, c0 + 3 : c0 + 6] = sa * (w * np.eye(3) + vx)
        if H is not None:
            # d2 vec_c / dth_i dth_j = -v_c delta_ij / 4
            for cc in range(3):
                H[3 + cc, c0 + 3 : c0 + 6, c0 + 3 : c0 + 6] = -0.5 * sa * v[cc] * np.eye(3)
        return r, J, H


class ControlResidual(_Residual):
    """Control effort ``r = sqrt(w) u`` at every stage (``w`` >= 0, per control or scalar)."""

    def __init__(self, model, weight=1.0):
        w = as_float_array(weight, "weight")
        if w.ndim == 0:
            w = np.full(model.nu, float(w))
        if w.shape != (model.nu,):
            raise ValueError(f"weight must be a scalar or have shape ({model.nu},)")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("weight must be finite and >= 0")
        self.sw = np.sqrt(w)
        self.stages, self.terminal = True, False
        self._model_shape = _model_shape(model)

    def size(self, model) -> int:
        return model.nu

    def evaluate(self, model, x, u, order):
        n = 2 * model.nv
        nz = n + model.nu
        r = self.sw * u
        J = None
        if order >= 1:
            J = np.zeros((model.nu, nz))
            J[np.arange(model.nu), n + np.arange(model.nu)] = self.sw
        H = np.zeros((model.nu, nz, nz)) if order >= 2 else None
        return r, J, H


class ApproachResidual(_Residual):
    """``r = sqrt(w) (phi - offset)``: the SSDF of ``target`` at ``probe``'s position.

    Drives a pusher (``probe``) towards the surface of ``target`` (``offset`` > 0 keeps it
    that far outside).  Uses :func:`softcontact.separation` with a one-sample probe cloud,
    so the derivatives with respect to both bodies' poses are exact to second order.
    ``eps`` (m^2) is the SSDF temperature of the target's field.
    """

    def __init__(
        self,
        model,
        probe,
        target,
        target_cloud,
        weight=1.0,
        offset=0.0,
        eps=1e-4,
        *,
        stages=True,
        terminal=False,
    ):
        self._model_shape = _model_shape(model)
        self.probe = _body_slot(model, probe)
        self.target = _body_slot(model, target)
        if self.probe == self.target:
            raise ValueError("probe and target must be different bodies")
        if not isinstance(target_cloud, PointCloud) or target_cloud.dim != model.dim:
            raise TypeError(
                "target_cloud must be a PointCloud of the model's dimension: the "
                "target body's samples in its body frame"
            )
        self.cloud = target_cloud
        self.w = as_positive_float(weight, "weight", allow_zero=True)
        off = as_float_array(offset, "offset")
        if off.shape != () or not np.isfinite(off):
            raise ValueError(f"offset must be a finite scalar, got {offset!r}")
        self.offset = float(off)
        self.eps = as_positive_float(eps, "eps")
        self.stages, self.terminal = _when(stages, terminal)
        D = model.dim
        self._point = PointCloud(np.zeros((1, D)), np.eye(D)[:1])

    def size(self, model) -> int:
        return 1

    def evaluate(self, model, x, u, order):
        nvb = 3 if model.dim == 2 else 6
        nz = 2 * model.nv + model.nu
        pa, ca = _body_pose(model, x, self.probe)
        pb, cb = _body_pose(model, x, self.target)
        s = separation(self._point, pa, self.cloud, pb, self.eps, order=order, num_threads=1)
        sw = np.sqrt(self.w)
        r = np.array([sw * (s.phi[0] - self.offset)])
        idx = np.concatenate([ca + np.arange(nvb), cb + np.arange(nvb)])
        J = H = None
        if order >= 1:
            J = np.zeros((1, nz))
            J[0, idx] = sw * s.dphi_dq[0]
        if order >= 2:
            H = np.zeros((1, nz, nz))
            H[0][np.ix_(idx, idx)] = sw * s.d2phi_dq2[0]
        return r, J, H
