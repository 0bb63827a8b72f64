"""Trajectory optimization with exact first and second derivatives through contact.

:class:`TrajectoryProblem` turns a :class:`~softcontact.Model`, an initial state and a
horizon into the objective ``J(U) = sum_t l_t(x_t, u_t) + l_T(x_T)`` of the controls
``U`` (T, nu), with

* ``fun(U)`` and ``jac(U)``: the value and the exact gradient (the adjoint of the step's
  Jacobians, METHOD.md section 7);
* ``hessp(U, p)`` and ``hess(U)``: exact Hessian-vector products and the full Hessian (the
  second-order adjoint, using the step's second derivatives);
* ``residuals(U)`` and ``residual_jac(U)``: every cost here is a sum of squares
  ``l = |r|^2 / 2``, so Gauss-Newton / ``scipy.optimize.least_squares`` can be used too.

All derivatives are with respect to the flattened ``U`` (T * nu), so
``scipy.optimize.minimize(problem.fun, U0, jac=problem.jac, hessp=problem.hessp,
method="trust-ncg")`` and ``method="L-BFGS-B"`` with ``bounds`` work directly.

States live on a manifold (3D rotations); every derivative is taken in the tangent charts of
:meth:`Model.retract`.  The composition is exact: ``x_{t+1}(U + e V) (-) x_{t+1}(U)`` is the
step's chart map applied to ``x_t(U + e V) (-) x_t(U)``, so the chain rule to second order
holds with the step's tensors and each cost's Hessian in its own chart.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_float_array, as_int, as_positive_float
from .cloud import PointCloud
from .contact import _as_pose, separation

__all__ = ["TrajectoryProblem", "PoseResidual", "ControlResidual", "ApproachResidual",
           "trajectory_residuals", "fit_parameters", "cross_entropy", "CrossEntropyResult"]


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
    return x[nqb * slot:nqb * (slot + 1)], nvb * slot


def _model_shape(model):
    return (model.dim, model.nx, model.nu)


def _body_slot(model, body):
    if not isinstance(body, str):
        raise TypeError(f"body must be a body name, got {type(body).__name__}")
    if body not in model.moving:
        raise ValueError(f"body {body!r} is not a moving body of the model "
                         f"(moving: {list(model.moving)})")
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
    """

    def __init__(self, model, body, goal, position_weight=1.0, angle_weight=1.0, *,
                 stages=False, terminal=True):
        self._model_shape = _model_shape(model)
        self.slot = _body_slot(model, body)
        self.goal = _as_pose(goal, "goal", model.dim).copy()
        self.wp = as_positive_float(position_weight, "position_weight", allow_zero=True)
        self.wa = as_positive_float(angle_weight, "angle_weight", allow_zero=True)
        self.stages, self.terminal = _when(stages, terminal)
        self.dim = model.dim

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
        r[:D] = sp * (pose[:D] - self.goal[:D])
        if J is not None:
            J[np.arange(D), c0 + np.arange(D)] = sp
        if D == 2:
            h = 0.5 * (pose[2] - self.goal[2])
            r[2] = 2.0 * sa * np.sin(h)
            if J is not None:
                J[2, c0 + 2] = sa * np.cos(h)
            if H is not None:
                H[2, c0 + 2, c0 + 2] = -0.5 * sa * np.sin(h)
            return r, J, H
        # 3D: e = q_goal^-1 (x) q (x) Exp(dth/2), vec(e) to second order in dth
        from .spatial import quat_mul

        qg = self.goal[3:] / np.linalg.norm(self.goal[3:])
        q = pose[3:] / np.linalg.norm(pose[3:])
        e = quat_mul(qg * np.array([1.0, -1.0, -1.0, -1.0]), q)
        if e[0] < 0:
            e = -e
        w, v = e[0], e[1:]
        r[3:] = 2.0 * sa * v
        if J is not None:
            vx = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
            J[3:, c0 + 3:c0 + 6] = sa * (w * np.eye(3) + vx)
        if H is not None:
            # d2 vec_c / dth_i dth_j = -v_c delta_ij / 4
            for cc in range(3):
                H[3 + cc, c0 + 3:c0 + 6, c0 + 3:c0 + 6] = -0.5 * sa * v[cc] * np.eye(3)
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

    def __init__(self, model, probe, target, target_cloud, weight=1.0, offset=0.0, eps=1e-4,
                 *, stages=True, terminal=False):
        self._model_shape = _model_shape(model)
        self.probe = _body_slot(model, probe)
        self.target = _body_slot(model, target)
        if self.probe == self.target:
            raise ValueError("probe and target must be different bodies")
        if not isinstance(target_cloud, PointCloud) or target_cloud.dim != model.dim:
            raise TypeError("target_cloud must be a PointCloud of the model's dimension: the "
                            "target body's samples in its body frame")
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


class TrajectoryProblem:
    """The objective of an open-loop control sequence, with exact derivatives.

    Parameters
    ----------
    model : Model
    x0 : array_like
        Initial state (nx,).
    horizon : int
        Number of steps T >= 1; the controls are ``U`` (T, nu), flattened for SciPy.
    cost : residual or sequence of residuals
        :class:`PoseResidual`, :class:`ControlResidual`, :class:`ApproachResidual` (or
        any object with their ``size``/``evaluate``/``active`` methods); the objective is
        the sum over stages of ``|r|^2 / 2``.
    num_threads : int, optional
        Threads of the step's contact kernels.

    Notes
    -----
    Results for the last ``U`` are cached (one order-1 rollout serves ``fun`` and ``jac``;
    ``hessp``/``hess`` add one order-2 pass and precompute the adjoint-weighted second
    derivatives of each step, after which each ``hessp`` costs O(T nv^2) and no dynamics).
    ``n_steps`` counts the step evaluations by order, for comparisons.
    """

    def __init__(self, model, x0, horizon, cost, num_threads=1) -> None:
        from .scene import Model

        if not isinstance(model, Model):
            raise TypeError(f"model must be a Model, got {type(model).__name__}")
        self.model = model
        self.x0 = model._as_state(x0, "x0").copy()
        self.T = as_int(horizon, "horizon", 1)
        if isinstance(cost, _Residual):
            cost = [cost]
        cost = list(cost)
        if not cost:
            raise ValueError("cost must hold at least one residual")
        for c in cost:
            if not all(hasattr(c, a) for a in ("size", "evaluate", "active")):
                raise TypeError(f"cost entries must be residuals, got {type(c).__name__}")
            built = getattr(c, "_model_shape", None)
            if built is not None and built != _model_shape(model):
                raise ValueError(f"a {type(c).__name__} was built for another model (dim, nx, "
                                 f"nu = {built}; this one has {_model_shape(model)})")
        self.cost = cost
        self.num_threads = as_int(num_threads, "num_threads", 1, 256)
        self.n = 2 * model.nv
        self.nu = model.nu
        self.size = self.T * self.nu
        self.n_steps = {0: 0, 1: 0, 2: 0}
        self._key = None
        self._fwd: dict = {}

    # -- helpers -----------------------------------------------------------------------------

    def _as_U(self, U):
        a = as_float_array(U, "U")
        if a.size != self.size:
            raise ValueError(f"U must have T * nu = {self.size} entries, got {a.size}")
        a = a.reshape(self.T, self.nu)
        if not np.all(np.isfinite(a)):
            raise ValueError("U must be finite (NaN or inf found)")
        return a

    def _forward(self, U, order):
        """States, step derivatives and stage-cost derivatives for U at `order` (cached)."""
        Ua = self._as_U(U)
        key = Ua.tobytes()
        if key != self._key:
            self._key, self._fwd = key, {}
        for o in range(order, 3):  # a pass of a higher order serves the lower ones
            if o in self._fwd:
                return self._fwd[o]
        m = self.model
        T = self.T
        X = np.empty((T + 1, m.nx))
        X[0] = self.x0
        A = np.empty((T, self.n, self.n)) if order >= 1 else None
        B = np.empty((T, self.n, self.nu)) if order >= 1 else None
        F2 = [] if order >= 2 else None
        if order <= 1:
            ro = m.rollout(self.x0, Ua[None], order=order, num_threads=1)
            if ro.status[0] != 0:
                raise FloatingPointError("the rollout became non-finite (status "
                                         f"{int(ro.status[0])})")
            X[:] = ro.states[0]
            if order == 1:
                A[:] = ro.dx_dx[0]
                B[:] = ro.dx_du[0]
        else:
            for t in range(T):
                s = m.step(X[t], Ua[t], order=2, num_threads=self.num_threads)
                X[t + 1] = s.x_next
                A[t], B[t] = s.dx_dx, s.dx_du
                F2.append((s.d2x_dx2, s.d2x_dxdu, s.d2x_du2))
        self.n_steps[order] += T
        # stage costs
        value = 0.0
        stages = []
        for t in range(T + 1):
            u = Ua[t] if t < T else None
            ut = u if u is not None else np.zeros(self.nu)
            r_all, J_all, H_all = [], [], []
            for c in self.cost:
                if not c.active(t, T):
                    continue
                r, J, H = c.evaluate(m, X[t], ut, order)
                r_all.append(r)
                J_all.append(J)
                H_all.append(H)
            if r_all:
                r = np.concatenate(r_all)
                J = np.concatenate(J_all) if order >= 1 else None
                H = np.concatenate(H_all) if order >= 2 else None
            else:
                nz = self.n + self.nu
                r = np.zeros(0)
                J = np.zeros((0, nz)) if order >= 1 else None
                H = np.zeros((0, nz, nz)) if order >= 2 else None
            value += 0.5 * float(r @ r)
            stages.append((r, J, H))
        out = {"X": X, "A": A, "B": B, "F2": F2, "stages": stages, "value": value, "U": Ua}
        self._fwd[order] = out
        return out

    def _gradient(self, f):
        T, n = self.T, self.n
        g = np.zeros((T, self.nu))
        lam = np.zeros((T + 1, n))
        r, J, _ = f["stages"][T]
        lam[T] = J[:, :n].T @ r
        for t in range(T - 1, -1, -1):
            r, J, _ = f["stages"][t]
            gz = J.T @ r
            g[t] = gz[n:] + f["B"][t].T @ lam[t + 1]
            lam[t] = gz[:n] + f["A"][t].T @ lam[t + 1]
        return g, lam

    def _second_order(self, U):
        """Per-stage Hessian blocks of the Lagrangian (cost + adjoint-weighted dynamics)."""
        f = self._forward(U, 2)
        if "lag" in f:
            return f
        _, lam = self._gradient(f)
        T, n = self.T, self.n
        lag = []
        for t in range(T + 1):
            r, J, H = f["stages"][t]
            # Hessian of |r|^2/2 in z: J^T J + sum_i r_i H_i
            Hz = J.T @ J + np.tensordot(r, H, axes=1)
            if t < T:
                fxx, fxu, fuu = f["F2"][t]
                lt = lam[t + 1]
                Hz = Hz.copy()
                Hz[:n, :n] += np.tensordot(lt, fxx, axes=1)
                Hz[:n, n:] += np.tensordot(lt, fxu, axes=1)
                Hz[n:, :n] += np.tensordot(lt, fxu, axes=1).T
                Hz[n:, n:] += np.tensordot(lt, fuu, axes=1)
            lag.append(Hz)
        f["lag"] = lag
        return f

    # -- SciPy interface ---------------------------------------------------------------------

    def _cached(self, U):
        """The richest cached pass for U, or None."""
        if self._fwd and self._key == self._as_U(U).tobytes():
            return self._fwd[max(self._fwd)]
        return None

    def fun(self, U) -> float:
        """``J(U)``."""
        # at order 1: SciPy asks for jac(U) right after fun(U), which then costs nothing
        f = self._cached(U) or self._forward(U, 1)
        return f["value"]

    def batch_fun(self, U_batch, num_threads=None) -> np.ndarray:
        """``J`` of many control sequences at once: ``U_batch`` (B, T * nu) or (B, T, nu);
        the B rollouts run in C across threads (:meth:`Model.rollout`), the costs in
        Python.  A trajectory that becomes non-finite gets ``inf``.  Equals ``fun`` row by
        row (bitwise: the same steps and the same cost code).  For sampling-based initial
        guesses and zeroth-order baselines; counted in ``n_steps[0]``."""
        from ._validate import as_num_threads

        Ub = as_float_array(U_batch, "U_batch")
        if not ((Ub.ndim == 2 and Ub.shape[1] == self.size)
                or (Ub.ndim == 3 and Ub.shape[1:] == (self.T, self.nu))):
            raise ValueError(f"U_batch must have shape (B, {self.size}) or "
                             f"(B, {self.T}, {self.nu}), got {Ub.shape}")
        B = Ub.shape[0]
        Ub = Ub.reshape(B, self.T, self.nu)
        if not np.all(np.isfinite(Ub)):
            raise ValueError("U_batch must be finite (NaN or inf found)")
        ro = self.model.rollout(self.x0, Ub, order=0, num_threads=as_num_threads(num_threads))
        self.n_steps[0] += B * self.T
        out = np.full(B, np.inf)
        zeros = np.zeros(self.nu)
        for b in np.flatnonzero(ro.status == 0):
            total = 0.0
            # a finite trajectory can still overflow the cost (a control of 1e300): inf
            with np.errstate(over="ignore", invalid="ignore"):
                for t in range(self.T + 1):
                    u = Ub[b, t] if t < self.T else zeros
                    rs = [c.evaluate(self.model, ro.states[b, t], u, 0)[0]
                          for c in self.cost if c.active(t, self.T)]
                    r = np.concatenate(rs) if rs else np.zeros(0)
                    total += 0.5 * float(r @ r)  # as in _forward, term by term
            out[b] = total if np.isfinite(total) else np.inf
        return out

    def jac(self, U) -> np.ndarray:
        """Exact gradient ``dJ/dU`` (T * nu,), by the adjoint of the step Jacobians."""
        f = self._forward(U, 1)
        return self._gradient(f)[0].reshape(-1)

    def value_and_grad(self, U):
        """``(fun(U), jac(U))`` from one order-1 rollout."""
        f = self._forward(U, 1)
        return f["value"], self._gradient(f)[0].reshape(-1)

    def hessp(self, U, p) -> np.ndarray:
        """Exact Hessian-vector product ``d2J/dU2 p`` (second-order adjoint)."""
        P = as_float_array(p, "p")
        if P.size != self.size:
            raise ValueError(f"p must have T * nu = {self.size} entries, got {P.size}")
        if not np.all(np.isfinite(P)):
            raise ValueError("p must be finite (NaN or inf found)")
        return self._hess_batch(U, P.reshape(self.size, 1))[:, 0]

    def hess(self, U) -> np.ndarray:
        """Exact Hessian ``d2J/dU2`` (T nu, T nu), symmetric."""
        Hm = self._hess_batch(U, np.eye(self.size))
        return 0.5 * (Hm + Hm.T)

    def _hess_batch(self, U, P):
        f = self._second_order(U)
        T, n, nu = self.T, self.n, self.nu
        K = P.shape[1]
        Pt = P.reshape(T, nu, K)
        dX = np.zeros((T + 1, n, K))
        for t in range(T):
            dX[t + 1] = f["A"][t] @ dX[t] + f["B"][t] @ Pt[t]
        out = np.zeros((T, nu, K))
        mu = f["lag"][T][:n, :n] @ dX[T]
        for t in range(T - 1, -1, -1):
            Hz = f["lag"][t]
            out[t] = Hz[n:, :n] @ dX[t] + Hz[n:, n:] @ Pt[t] + f["B"][t].T @ mu
            mu = Hz[:n, :n] @ dX[t] + Hz[:n, n:] @ Pt[t] + f["A"][t].T @ mu
        return out.reshape(T * nu, K)

    # -- least squares -------------------------------------------------------------------

    def residuals(self, U) -> np.ndarray:
        """All stage residuals stacked (``J = |r|^2 / 2``)."""
        f = self._cached(U) or self._forward(U, 1)  # residual_jac(U) usually follows
        return np.concatenate([s[0] for s in f["stages"]])

    def residual_jac(self, U) -> np.ndarray:
        """``dr/dU`` (m, T * nu) by forward sensitivities (for Gauss-Newton / least_squares)."""
        f = self._forward(U, 1)
        T, n, nu = self.T, self.n, self.nu
        S = np.zeros((n, T * nu))
        rows = []
        for t in range(T + 1):
            _, J, _ = f["stages"][t]
            Jt = J[:, :n] @ S
            if t < T:
                Jt[:, t * nu:(t + 1) * nu] += J[:, n:]
                S = f["A"][t] @ S
                S[:, t * nu:(t + 1) * nu] += f["B"][t]
            rows.append(Jt)
        return np.concatenate(rows)

    def states(self, U) -> np.ndarray:
        """The rolled-out states (T + 1, nx) for U."""
        return self._forward(U, 0)["X"].copy()


# --------------------------------------------------------------------------------------------
# system identification
# --------------------------------------------------------------------------------------------
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
    model = build(np.asarray(p, dtype=float))
    try:
        cols = [model.param_names.index(nm) for nm in names]
    except ValueError:
        raise ValueError(f"names must be model parameters, got {list(names)}; the model has "
                         f"{list(model.param_names)}") from None
    Ua = as_float_array(U, "U")
    T = Ua.shape[0]
    obs = as_float_array(observed, "observed")
    k = _observed_coords(model)
    if obs.shape != (T, len(k)):
        raise ValueError(f"observed must have shape ({T}, {len(k)}) (the observed coordinates "
                         f"of x_1..x_T), got {obs.shape}")
    x = model._as_state(x0, "x0")
    S = np.zeros((2 * model.nv, len(cols)))
    r = np.empty((T, len(k)))
    J = np.empty((T, len(k), len(cols)))
    for t in range(T):
        s = model.step(x, Ua[t], order=1, params=True)
        S = s.dx_dx @ S + s.dx_dp[:, cols]
        x = s.x_next
        r[t] = _observed_values(model, x) - obs[t]
        J[t] = S[k]
    return r.reshape(-1), J.reshape(T * len(k), len(cols))


def fit_parameters(build, names, p0, x0, U, observed, **least_squares_options):
    """Identify model parameters from an observed trajectory with
    ``scipy.optimize.least_squares`` and the analytic parameter Jacobians.

    Parameters
    ----------
    build : callable
        ``build(p) -> Model`` for a parameter vector ``p`` (the entries named ``names``;
        every other parameter must not depend on ``p`` -- e.g. give the inertia explicitly
        when identifying the mass).
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
    """
    from scipy.optimize import least_squares  # type: ignore[import-untyped]

    cache = {}  # the last parameter vector's (residuals, Jacobian)

    def evaluate(p):
        key = np.asarray(p, dtype=float).tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = trajectory_residuals(build, names, p, x0, U, observed)
        return cache[key]

    return least_squares(lambda p: evaluate(p)[0], np.asarray(p0, dtype=float),
                         jac=lambda p: evaluate(p)[1], **least_squares_options)


# --------------------------------------------------------------------------------------------
# zeroth-order baseline
# --------------------------------------------------------------------------------------------

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


def cross_entropy(batch_fun, x0, sigma0, bounds=None, samples=64, elites=8, iterations=50,
                  smoothing=0.1, min_sigma=0.0, seed=0, callback=None):
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
    smoothing = float(as_float_array(smoothing, "smoothing"))
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
