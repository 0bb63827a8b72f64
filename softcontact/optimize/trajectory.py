"""Trajectory problems: the objective of a control sequence with exact adjoint derivatives."""

from __future__ import annotations

import threading

import numpy as np

from .._core import DivergenceError
from .._validate import as_float_array, as_int
from .residuals import _model_shape, _Residual

__all__ = ["TrajectoryProblem"]


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

    A control sequence whose rollout diverges (:class:`~softcontact.DivergenceError`: a
    non-finite state, one out of the valid ranges, or a body past the model's speed
    limits) costs ``inf`` in ``fun``, ``batch_fun`` and ``residuals``; its derivatives
    raise the DivergenceError.  Controls must be finite and within their valid ranges
    (:meth:`Model.step`): ``ValueError`` naming ``U`` (``U_batch``) otherwise.

    A problem is safe to share between threads: its cache is locked, the rollouts run in
    parallel (without the GIL), and every call returns the result of its own ``U``.  It
    pickles (for worker processes): the copy has the same model, start, horizon and cost,
    an empty cache, and gives the same results bit for bit.
    """

    def __init__(self, model, x0, horizon, cost, num_threads=1) -> None:
        from ..scene import Model

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
                raise ValueError(
                    f"a {type(c).__name__} was built for another model (dim, nx, "
                    f"nu = {built}; this one has {_model_shape(model)})"
                )
        self.cost = cost
        self.num_threads = as_int(num_threads, "num_threads", 1, 256)
        self.n = 2 * model.nv
        self.nu = model.nu
        self.size = self.T * self.nu
        self.n_steps = {0: 0, 1: 0, 2: 0}
        self._lock = threading.Lock()
        self._key = None
        self._fwd: dict = {}

    # -- pickling (worker processes, Dask) ------------------------------------------------

    def __getstate__(self):
        """The problem's definition (model, start, horizon, cost, threads) and its step
        counters; not its lock nor its cache of the last pass."""
        state = self.__dict__.copy()
        for k in ("_lock", "_key", "_fwd"):
            state.pop(k)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._key = None
        self._fwd = {}

    # -- helpers -----------------------------------------------------------------------------

    def _as_U(self, U):
        a = as_float_array(U, "U")
        if a.size != self.size:
            raise ValueError(f"U must have T * nu = {self.size} entries, got {a.size}")
        a = a.reshape(self.T, self.nu)
        if not np.all(np.isfinite(a)):
            raise ValueError("U must be finite (NaN or inf found)")
        bad = self.model._control_out_of_range(a)
        if bad is not None:
            raise ValueError(f"U: {bad}")
        return a

    def _forward(self, U, order):
        """States, step derivatives and stage-cost derivatives for U at `order` (cached).

        The cache is read and written under the problem's lock; the rollout itself runs
        outside it (without the GIL), so threads sharing a problem evaluate in parallel
        and each gets the pass of its own U."""
        Ua = self._as_U(U)
        key = Ua.tobytes()
        with self._lock:
            if key == self._key:
                for o in range(order, 3):  # a pass of a higher order serves the lower ones
                    if o in self._fwd:
                        return self._fwd[o]
        out = self._evaluate(Ua, order)
        with self._lock:
            if key != self._key:
                self._key, self._fwd = key, {}
            self._fwd[order] = out
            self.n_steps[order] += self.T
        return out

    def _diverged(self, Ua, error):
        """The pass of a control sequence whose rollout diverged (or whose cost overflows):
        an infinite cost, and the error that every derivative raises."""
        return {"value": np.inf, "error": error, "U": Ua}

    @staticmethod
    def _finite(f):
        """``f`` when its rollout completed; else raise its DivergenceError."""
        if "error" in f:
            raise f["error"]
        return f

    def _evaluate(self, Ua, order):
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
                t = int(ro.failed_step[0])
                return self._diverged(Ua, m._divergence(ro.states[0, t + 1], step=t))
            X[:] = ro.states[0]
            if order == 1:
                A[:] = ro.dx_dx[0]
                B[:] = ro.dx_du[0]
        else:
            for t in range(T):
                try:
                    s = m.step(X[t], Ua[t], order=2, num_threads=self.num_threads)
                except DivergenceError as e:
                    return self._diverged(Ua, m._divergence(e.x_next, step=t))
                X[t + 1] = s.x_next
                A[t], B[t] = s.dx_dx, s.dx_du
                F2.append((s.d2x_dx2, s.d2x_dxdu, s.d2x_du2))
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
            with np.errstate(over="ignore", invalid="ignore"):  # beyond the float range: inf
                value += 0.5 * float(r @ r)
            stages.append((r, J, H))
        if not np.isfinite(value):
            # as batch_fun: an infinite cost (its residuals are finite); no derivative of it
            f = self._diverged(
                Ua,
                ValueError(
                    "the objective is beyond the float range at this U (a residual of "
                    f"{max(float(np.max(np.abs(s[0]), initial=0.0)) for s in stages):.3g})"
                ),
            )
            f["stages"] = stages
            return f
        return {"X": X, "A": A, "B": B, "F2": F2, "stages": stages, "value": value, "U": Ua}

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
        f = self._finite(self._forward(U, 2))
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
        key = self._as_U(U).tobytes()
        with self._lock:
            if self._fwd and self._key == key:
                return self._fwd[max(self._fwd)]
        return None

    def fun(self, U) -> float:
        """``J(U)``; ``inf`` when the rollout diverges (:class:`~softcontact.DivergenceError`'s
        test), which SciPy's line searches and trust regions treat as a rejected step."""
        # at order 1: SciPy asks for jac(U) right after fun(U), which then costs nothing
        f = self._cached(U) or self._forward(U, 1)
        return f["value"]

    def batch_fun(self, U_batch, num_threads=None) -> np.ndarray:
        """``J`` of many control sequences at once: ``U_batch`` (B, T * nu) or (B, T, nu);
        the B rollouts run in C across threads (:meth:`Model.rollout`), the costs in
        Python.  A trajectory that diverges gets ``inf``.  Equals ``fun`` row by row
        (bitwise: the same steps and the same cost code), diverging rows included.  For
        sampling-based initial guesses and zeroth-order baselines; counted in
        ``n_steps[0]``."""
        Ub = as_float_array(U_batch, "U_batch")
        if not (
            (Ub.ndim == 2 and Ub.shape[1] == self.size)
            or (Ub.ndim == 3 and Ub.shape[1:] == (self.T, self.nu))
        ):
            raise ValueError(
                f"U_batch must have shape (B, {self.size}) or "
                f"(B, {self.T}, {self.nu}), got {Ub.shape}"
            )
        B = Ub.shape[0]
        Ub = Ub.reshape(B, self.T, self.nu)
        if not np.all(np.isfinite(Ub)):
            raise ValueError("U_batch must be finite (NaN or inf found)")
        bad = self.model._control_out_of_range(Ub)
        if bad is not None:
            raise ValueError(f"U_batch: {bad}")
        ro = self.model.rollout(self.x0, Ub, order=0, num_threads=num_threads)
        with self._lock:
            self.n_steps[0] += B * self.T
        out = np.full(B, np.inf)
        for b in np.flatnonzero(ro.status == 0):
            out[b] = self._cost_of(ro.states[b], Ub[b])
        return out

    def _cost_of(self, X, U) -> float:
        """The cost of states X (T + 1, nx) under controls U (T, nu), term by term as in
        ``_forward`` (so equal to ``fun`` bitwise); inf where it overflows."""
        total = 0.0
        zeros = np.zeros(self.nu)
        # a finite trajectory can still overflow the cost (a control of 1e300): inf
        with np.errstate(over="ignore", invalid="ignore"):
            for t in range(self.T + 1):
                u = U[t] if t < self.T else zeros
                rs = [
                    c.evaluate(self.model, X[t], u, 0)[0] for c in self.cost if c.active(t, self.T)
                ]
                r = np.concatenate(rs) if rs else np.zeros(0)
                total += 0.5 * float(r @ r)
        return total if np.isfinite(total) else np.inf

    def jac(self, U) -> np.ndarray:
        """Exact gradient ``dJ/dU`` (T * nu,), by the adjoint of the step Jacobians.
        Raises :class:`~softcontact.DivergenceError` (naming the step and body) where the
        rollout diverges, as do every other derivative and ``residual_jac``."""
        f = self._finite(self._forward(U, 1))
        return self._gradient(f)[0].reshape(-1)

    def value_and_grad(self, U):
        """``(fun(U), jac(U))`` from one order-1 rollout."""
        f = self._finite(self._forward(U, 1))
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
        """All stage residuals stacked (``J = |r|^2 / 2``); all ``inf`` when the rollout
        diverges (``scipy.optimize.least_squares`` then rejects the step)."""
        f = self._cached(U) or self._forward(U, 1)  # residual_jac(U) usually follows
        if "error" in f and "stages" not in f:
            size = sum(
                c.size(self.model)
                for t in range(self.T + 1)
                for c in self.cost
                if c.active(t, self.T)
            )
            return np.full(size, np.inf)
        return np.concatenate([s[0] for s in f["stages"]])

    def residual_jac(self, U) -> np.ndarray:
        """``dr/dU`` (m, T * nu) by forward sensitivities (for Gauss-Newton / least_squares)."""
        f = self._finite(self._forward(U, 1))
        T, n, nu = self.T, self.n, self.nu
        S = np.zeros((n, T * nu))
        rows = []
        for t in range(T + 1):
            _, J, _ = f["stages"][t]
            Jt = J[:, :n] @ S
            if t < T:
                Jt[:, t * nu : (t + 1) * nu] += J[:, n:]
                S = f["A"][t] @ S
                S[:, t * nu : (t + 1) * nu] += f["B"][t]
            rows.append(Jt)
        return np.concatenate(rows)

    def states(self, U) -> np.ndarray:
        """The rolled-out states (T + 1, nx) for U (DivergenceError where they diverge)."""
        return self._finite(self._forward(U, 0))["X"].copy()
