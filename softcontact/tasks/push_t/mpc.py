"""Model-predictive control of push-T with exact gradients (:class:`Controller`).

What the controller does, exactly.  Every ``replan`` steps (a *tick*, 0.1 s by default)
it returns the pusher's controls for the next ``replan`` steps:

1. **Push selection** (sampling, used only to pick an initial guess).  On the first tick,
   every ``select_every`` ticks, and whenever the last solve lowered the objective by less
   than 3 % (stalled), it enumerates *pushes*: contact points spread along the T's outline
   (1-3 per edge, by length), the pusher placed ``standoff`` off the surface and moving
   along the inward normal at the speed that covers one of ``push_distances`` in 80 % of
   the horizon, then stopping.  Standoff points outside the workspace or too close to the
   T are dropped.  All pushes are rolled out in one batched, threaded C rollout
   (:meth:`Model.rollout`) from the current state with only the pusher moved to the
   push's standoff point, and scored by the MPC objective below (on ``select_model``
   when one is given, e.g. a coarser model of the same scene).  With ``select_top``,
   only the pushes of the ``select_top`` lowest quasi-static estimates of that objective
   (:meth:`Controller.estimates`, no rollout) are rolled out.  The best push the pusher
   can reach (step 2) replaces the current plan if its objective is below ``switch``
   (0.8; 0.98 when stalled) times that of the current plan's warm start; at most 7
   standoff points are tried for a path, and with a ``deadline`` none after the first
   once the tick's deadline has passed, before the current plan is kept.  Standoff
   points found unreachable are left out of later selections while the T and the pusher
   stay within 1 mm (and 1 mrad) of where they were.  A selection has no current plan to
   beat after a tick that found no reachable push and had no plan (it stood still), and
   after 5 ticks in which neither the T nor the pusher moved 1 mm (1 mrad): a plan under
   which nothing moves is a local minimum of the objective that waiting does not leave.
2. **Repositioning**.  If the chosen push starts more than 3 mm from the pusher, the
   pusher first travels to the standoff point at ``move_speed`` along a path that keeps
   it clear of the T: straight if the segment clears the T by the pusher's radius,
   otherwise out to a circle about the T's centre, around it the shorter feasible way,
   and in; where the circle leaves the workspace, along the T's convex hull grown by the
   radius + 4 mm.  A pusher that overlaps the T (or sits in the pocket between bar and
   stem) first backs off in a straight line that does not approach the T.  This move is
   planned geometrically, not optimized; it does not touch the T.  The objective does
   not see the time it takes.  The tick in which the move ends fills its remaining
   whole blocks with the push's first blocks, so that the push starts on arrival; the
   next tick refines the push from its first block not yet executed (and selects
   nothing unless the solve stalls).
3. **Refinement** (every tick that is not a move), by ``method``:

   - ``"lbfgs"`` (default): ``scipy.optimize.minimize`` with L-BFGS-B, the exact
     gradient of the objective (the adjoint of the analytic step Jacobians,
     :class:`~softcontact.optimize.TrajectoryProblem`), ``iterations`` iterations, over
     block-constant controls (blocks of ``block`` steps; ``omega`` = 0);
   - ``"ilqr"`` / ``"ddp"``: :func:`softcontact.optimize.ilqr` (Gauss-Newton iLQR, or
     DDP with the step Hessians), ``iterations`` iterations at most, over per-step
     controls (``block`` = 1);
   - ``"sampling"``: predictive sampling as hydrax runs it, the gradient-free baseline:
     ``samples`` - 1 Gaussian perturbations (std ``sigma``) of the plan at ``knots``
     evenly spaced times, linearly interpolated, and the plan itself, rolled out in one
     batch on the selection's model; the best is kept; ``iterations`` rounds;

   each within the box ``|vx|, |vy| <= u_max / sqrt(2)`` (so the speed bound holds),
   warm started from the previous solution shifted by the executed steps (or from the
   newly selected push).  With a ``deadline`` (s per tick), iLQR/DDP and sampling stop
   when the next iteration would end past it; a push selected after 75 % of it runs
   unrefined this tick, and a kept plan is refined for at least 30 % of it.
4. It returns the first ``replan`` steps of the refined plan.

The objective over the horizon of ``horizon`` steps from the current state is
``J = wp |p_T - g|^2 / 2 + wa (1 - cos(theta_T - theta_g))`` at the final state, plus
``stage / horizon`` times the same at every step before (progress), plus
``effort |u|^2 / 2`` per step.  With ``coast`` > 0 the final state's term is taken at the
pose the T would reach coasting on at its final velocity for ``coast`` seconds, ``(p_T +
coast v_T, theta_T + coast omega_T)``, which for a T that keeps its momentum scores where
it will come to rest.  The controller plans on the task's own model (a perfect-model MPC:
no noise, no model mismatch).

:func:`run_episode` runs one seeded task to success (coverage >= 0.95) or the 30 s time
limit; :func:`evaluate` runs many seeds (optionally in worker processes) and summarizes.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import threading
import time
from typing import Any

import numpy as np

from ..._optional import require
from ..._validate import as_int, as_positive_float
from ...optimize import ControlResidual, PoseResidual, TrajectoryProblem, ilqr
from ...scene import Model
from .. import push_t

logger = logging.getLogger(__name__)

__all__ = [
    "Controller",
    "Episode",
    "Evaluation",
    "run_episode",
    "evaluate",
    "DEFAULTS",
    "realtime_settings",
]

#: Default settings of :class:`Controller`.
DEFAULTS: dict[str, Any] = {
    "horizon": 100,  # steps (0.5 s at dt = 5 ms)
    "block": 10,  # steps per control block
    "replan": 20,  # steps executed per tick
    "iterations": 10,  # L-BFGS-B iterations per tick
    "position_weight": 200.0,  # wp, 1/m^2
    "angle_weight": 1.0,  # wa
    "stage": 0.3,
    "effort": 1e-3,
    "standoff": 0.006,  # m
    "push_distances": (0.004, 0.01, 0.03, 0.06, 0.1),  # m
    "select_every": 5,
    "switch": 0.8,
    "move_speed": 0.35,  # m/s
    "num_threads": 2,
    "method": "lbfgs",  # refinement: "lbfgs", "ilqr" (Gauss-Newton), "ddp" or "sampling"
    "deadline": None,  # s per tick (selection + refinement), or None
    "samples": 128,  # method "sampling": rollouts per round
    "knots": 6,  # method "sampling": spline knots over the horizon
    "sigma": 0.1,  # method "sampling": knot perturbation std, m/s
    "seed": 0,  # method "sampling": seed of the perturbations (reset by reset())
    "select_model": None,  # Model of the push selection's rollouts (default: the task's)
    "select_top": None,  # pushes rolled out per selection, best estimated first (None: all)
    "coast": 0.0,  # s: the final pose term scores the T's pose coasted on for this long
}
_METHODS = ("lbfgs", "ilqr", "ddp", "sampling")
# realtime_settings(): iLQR over 0.3 s horizons of the default 5 ms steps, 40 ms per tick,
# the 12 best-estimated pushes scored on a 6 mm model
_REALTIME = {
    "method": "ilqr",
    "block": 1,
    "horizon": 60,
    "deadline": 0.04,
    "select_top": 12,
    "num_threads": 1,
}
_REALTIME_SELECT = {"spacing": 0.006, "pusher_spacing": 0.006, "eps": 3.6e-5}
_STALL = 0.97  # a solve that keeps J above this fraction of the previous one: stalled
_STALL_SWITCH = 0.98
_REACHED = 0.003  # m: a push whose standoff point is this close needs no move
_PATH_TRIES = 6  # more standoff points than this tried for a path: keep the current plan
_SKIP = 0.75  # a push selected after this fraction of the deadline runs unrefined
_MIN_REFINE = 0.3  # a kept plan's refinement gets at least this fraction of the deadline
_SAME_POSE = 1e-3  # m and rad: a T and pusher moved less keep their unreachable standoffs
_IDLE = 5  # ticks with the T and the pusher within _SAME_POSE: select with no incumbent


def _still_at(ref, here) -> bool:
    """Whether the T's pose and the pusher's position ``here`` (5,) are within
    ``_SAME_POSE`` of ``ref`` (None: no reference): the test of the unreachable-standoff
    memory and of the idle count."""
    return ref is not None and float(np.max(np.abs(ref - here))) <= _SAME_POSE


class Controller:
    """Receding-horizon controller of a :mod:`~softcontact.tasks.push_t` task.

    See the module docstring for exactly what it does.  Settings (keywords, defaults in
    :data:`DEFAULTS`): ``horizon``, ``block``, ``replan`` (steps; ``block`` divides both
    others, ``replan <= horizon``), ``iterations`` (L-BFGS-B iterations per tick),
    ``position_weight``, ``angle_weight``, ``stage``, ``effort`` (objective),
    ``standoff`` (m), ``push_distances`` (m, candidate push lengths), ``select_every``
    (ticks), ``switch`` (in (0, 1]), ``move_speed`` (m/s, <= u_max), ``num_threads``
    (threads of the candidates' batched rollout), ``method`` (``"lbfgs"``, ``"ilqr"``,
    ``"ddp"`` or ``"sampling"``), ``deadline`` (s per tick, or None), ``samples``,
    ``knots``, ``sigma`` (m/s) and ``seed`` (``"sampling"``), ``select_model`` (a
    :class:`~softcontact.Model` of the same bodies that scores the candidate pushes),
    ``select_top`` (pushes rolled out per selection, or None for all), ``coast`` (s: the
    objective's final pose term scores the T's pose coasted on at its final velocity for
    this long, ``(p + coast v, theta + coast omega)``; for a T whose velocity decays at
    a rate ``lambda``, ``1 / lambda`` scores where it comes to rest).

    Attributes
    ----------
    solve_times : list of float
        Wall time of each tick's planning (selection + refinement), s.
    settings : dict
        Every setting, defaults applied.
    n_solves, n_selections, n_moves : int
        Refinements, push selections and repositioning moves so far.
    """

    def __init__(self, task, **settings) -> None:
        if not isinstance(task, push_t.PushT):
            raise TypeError(
                f"task must be a push_t.PushT (from push_t.make), got {type(task).__name__}"
            )
        unknown = sorted(set(settings) - set(DEFAULTS))
        if unknown:
            raise TypeError(
                f"unknown setting(s) {', '.join(map(repr, unknown))}; known: {', '.join(DEFAULTS)}"
            )
        s = {**DEFAULTS, **settings}
        self.task = task
        self.model = task.model
        self.horizon = as_int(s["horizon"], "horizon", 1)
        self.block = as_int(s["block"], "block", 1)
        self.replan = as_int(s["replan"], "replan", 1)
        if self.horizon % self.block or self.replan % self.block or self.replan > self.horizon:
            raise ValueError(
                f"block ({self.block}) must divide horizon ({self.horizon}) and "
                f"replan ({self.replan}), and replan must be <= horizon"
            )
        self.iterations = as_int(s["iterations"], "iterations", 1)
        self.wp = as_positive_float(s["position_weight"], "position_weight")
        self.wa = as_positive_float(s["angle_weight"], "angle_weight", allow_zero=True)
        self.stage = as_positive_float(s["stage"], "stage", allow_zero=True)
        self.effort = as_positive_float(s["effort"], "effort", allow_zero=True)
        self.standoff = as_positive_float(s["standoff"], "standoff", allow_zero=True)
        d = np.asarray(s["push_distances"], dtype=float)
        if d.ndim != 1 or d.size == 0 or not np.all(np.isfinite(d)) or np.any(d <= 0):
            raise ValueError(
                f"push_distances must be a non-empty sequence of finite "
                f"lengths > 0, got {s['push_distances']!r}"
            )
        self.push_distances = tuple(float(v) for v in d)
        self.select_every = as_int(s["select_every"], "select_every", 1)
        self.switch = as_positive_float(s["switch"], "switch")
        if self.switch > 1.0:
            raise ValueError(f"switch must be in (0, 1], got {self.switch!r}")
        self.move_speed = as_positive_float(s["move_speed"], "move_speed")
        if self.move_speed > task.u_max:
            raise ValueError(f"move_speed must be <= u_max ({task.u_max}), got {self.move_speed!r}")
        self.num_threads = as_int(s["num_threads"], "num_threads", 1, 256)
        if not isinstance(s["method"], str) or s["method"] not in _METHODS:
            raise ValueError(f"method must be one of {', '.join(_METHODS)}; got {s['method']!r}")
        self.method = s["method"]
        if self.method != "lbfgs" and self.block != 1:
            raise ValueError(
                f"method {self.method!r} refines per-step controls: block must be 1, "
                f"got {self.block}"
            )
        self.deadline = (
            None if s["deadline"] is None else as_positive_float(s["deadline"], "deadline")
        )
        self.samples = as_int(s["samples"], "samples", 2)
        self.knots = as_int(s["knots"], "knots", 2)
        if self.method == "sampling" and self.knots > self.horizon // self.block:
            raise ValueError(
                f"knots must be <= horizon / block ({self.horizon // self.block}), got {self.knots}"
            )
        self.sigma = as_positive_float(s["sigma"], "sigma")
        self.seed = as_int(s["seed"], "seed", 0)
        sm = s["select_model"]
        if sm is not None and not (
            isinstance(sm, Model)
            and (sm.nx, sm.nu, sm.body_names)
            == (task.model.nx, task.model.nu, task.model.body_names)
        ):
            raise TypeError(
                "select_model must be a Model with the task's bodies, states and controls "
                f"(e.g. push_t.make with coarser spacings), got {sm!r}"
            )
        self.select_model = task.model if sm is None else sm
        self.coast = as_positive_float(s["coast"], "coast", allow_zero=True)
        self.select_top = (
            None if s["select_top"] is None else as_int(s["select_top"], "select_top", 1)
        )
        self.settings = {k: getattr(self, _ATTR.get(k, k)) for k in DEFAULTS}
        self.settings["select_model"] = sm
        self.u_box = task.u_max / math.sqrt(2.0)
        self._support = _support_ellipse(task)
        self.radius = task.pusher_radius
        m = self.model
        self.cost = [
            PoseResidual(m, task.t_name, task.goal, self.wp, self.wa, coast=self.coast),
            PoseResidual(
                m,
                task.t_name,
                task.goal,
                self.wp * self.stage / self.horizon,
                self.wa * self.stage / self.horizon,
                stages=True,
                terminal=False,
            ),
            ControlResidual(m, self.effort),
        ]
        self.reset()

    def reset(self) -> None:
        """Forget the current plan (call before a new episode)."""
        self.plan: np.ndarray | None = None  # (K, 2) block velocities
        self.path: list[np.ndarray] = []
        self.history: list[float] = []  # objective after each solve since a switch
        self.ticks = 0
        self.solve_times: list[float] = []
        self.n_solves = self.n_selections = self.n_moves = 0
        self._rng = np.random.default_rng(self.seed)
        # (T pose and pusher position, standoff points found unreachable from there)
        self._unreachable: tuple = (None, [])
        # (T pose and pusher position, ticks since which neither has moved)
        self._still: tuple = (None, 0)
        # blocks of the current plan executed at the end of a move (None: a tick's worth)
        self._executed: int | None = None
        self._busy = threading.Lock()

    # -- objective ---------------------------------------------------------------------

    def problem(self, x) -> TrajectoryProblem:
        """The trajectory problem of one tick from state ``x``."""
        return TrajectoryProblem(self.model, x, self.horizon, self.cost)

    def controls(self, z) -> np.ndarray:
        """Block velocities ``z`` (K, 2) as controls (horizon, 3)."""
        z = np.asarray(z, dtype=float)
        if z.ndim == 1:
            z = z.reshape(-1, 2)
        U = np.zeros(z.shape[:-2] + (self.horizon, 3))
        U[..., :2] = np.repeat(z, self.block, axis=-2)
        return U

    def batch_objective(self, X, U) -> np.ndarray:
        """The objective of rollouts ``X`` (B, horizon + 1, 12) under ``U`` (B, horizon, 3),
        vectorized (equals :meth:`problem`'s ``fun`` to rounding)."""
        g = self.task.goal

        def per(q):
            dp2 = np.sum((q[..., :2] - g[:2]) ** 2, axis=-1)
            return 0.5 * self.wp * dp2 + self.wa * (1.0 - np.cos(q[..., 2] - g[2]))

        final = X[:, -1, :3] + self.coast * X[:, -1, 6:9] if self.coast else X[:, -1, :3]
        return (
            per(final)
            + (self.stage / self.horizon) * per(X[:, :-1, :3]).sum(axis=1)
            + 0.5 * self.effort * np.sum(U * U, axis=(1, 2))
        )

    def objective(self, x, z) -> float:
        """The objective of block velocities ``z`` (K, 2) from state ``x``: one rollout
        of the task's model scored by :meth:`batch_objective` (inf if it diverges)."""
        U = self.controls(z)[None]
        ro = self.model.rollout(np.asarray(x, dtype=float)[None], U, order=0, num_threads=1)
        return float(self.batch_objective(ro.states, U)[0]) if ro.status[0] == 0 else math.inf

    def _solve(self, x, z0, t_end=None):
        """Refine the plan ``z0`` from ``x``; ``t_end``: the ``time.perf_counter()`` by
        which to return (None: ``iterations`` iterations whatever they take)."""
        if self.method == "sampling":
            return self._sample(x, z0, t_end)
        prob = self.problem(x)
        K = self.horizon // self.block
        if self.method != "lbfgs":
            left = None if t_end is None else t_end - time.perf_counter()
            lim = np.zeros((self.horizon, 3))
            lim[:, :2] = self.u_box
            res = ilqr(
                prob,
                self.controls(z0),
                bounds=(-lim, lim),
                method="gauss-newton" if self.method == "ilqr" else "ddp",
                max_iter=self.iterations,
                deadline=max(left, 1e-6) if left is not None else None,
            )
            self.n_solves += 1
            return res.U[:, :2].copy(), float(res.fun)
        minimize = require("scipy.optimize", "optimize", "the push-T controller").minimize

        def fg(zf):
            v, g = prob.value_and_grad(self.controls(zf))
            g = g.reshape(self.horizon, 3)[:, :2].reshape(K, self.block, 2).sum(axis=1)
            return v, g.reshape(-1)

        res = minimize(
            fg,
            np.asarray(z0, dtype=float).reshape(-1),
            jac=True,
            method="L-BFGS-B",
            bounds=[(-self.u_box, self.u_box)] * (2 * K),
            options={"maxiter": self.iterations},
        )
        self.n_solves += 1
        return res.x.reshape(K, 2), float(res.fun)

    def _sample(self, x, z0, t_end):
        """Predictive sampling (as hydrax runs it): ``samples`` - 1 perturbations of the
        plan's values at ``knots`` evenly spaced times (Gaussian, std ``sigma``, clipped to
        the box), linearly interpolated between knots, and the plan itself, rolled out in
        one batch on ``select_model``; the best becomes the plan.  ``iterations`` rounds,
        fewer when the next round would pass the deadline."""
        K = self.horizon // self.block
        tk = np.linspace(0.0, K - 1, self.knots)
        steps = np.arange(K)
        best = np.asarray(z0, dtype=float)
        Jbest = math.inf
        last = 0.0
        for _ in range(self.iterations):
            t1 = time.perf_counter()
            if t_end is not None and t1 + last > t_end and last > 0:
                break
            knots = np.stack([np.interp(tk, steps, best[:, j]) for j in range(2)], -1)
            dk = self._rng.normal(0.0, self.sigma, size=(self.samples - 1, self.knots, 2))
            kv = np.clip(knots + dk, -self.u_box, self.u_box)
            Z = np.empty((self.samples, K, 2))
            Z[0] = best
            for j in range(2):
                Z[1:, :, j] = np.stack([np.interp(steps, tk, k) for k in kv[..., j]])
            U = self.controls(Z)
            ro = self.select_model.rollout(
                np.broadcast_to(x, (self.samples, x.size)).copy(),
                U,
                order=0,
                num_threads=self.num_threads,
            )
            J = self.batch_objective(ro.states, U)
            J[ro.status != 0] = np.inf
            k = int(np.argmin(J))
            if J[k] < Jbest:
                best, Jbest = Z[k].copy(), float(J[k])
            last = time.perf_counter() - t1
        self.n_solves += 1
        return best, Jbest

    # -- candidate pushes ----------------------------------------------------------------

    def pushes(self, x):
        """Candidate pushes from state ``x``: a list of ``(standoff point (2,), inward
        direction (2,))`` in the world frame."""
        pose = np.asarray(x[:3], dtype=float)
        V = self.task.t_outline(pose)
        poly = self.task.t_polygon(pose)
        import shapely  # type: ignore[import-untyped]

        lo, hi = self._bounds()
        out = []
        for i in range(len(V)):
            a, b = V[i], V[(i + 1) % len(V)]
            e = b - a
            L = float(np.hypot(*e))
            n = np.array([e[1], -e[0]]) / L  # outward (counter-clockwise outline)
            fr = (0.2, 0.5, 0.8) if L > 0.06 else ((0.3, 0.7) if L > 0.035 else (0.5,))
            for f in fr:
                s = a + f * e + n * (self.radius + self.standoff)
                if (
                    lo <= s[0] <= hi
                    and lo <= s[1] <= hi
                    and poly.distance(shapely.Point(s)) >= self.radius + 0.002
                ):
                    out.append((s, -n))
        return out

    def select(self, x):
        """The best push from ``x`` (of those :meth:`ranked` rolls out: all, or the
        ``select_top`` best estimated): ``(objective, standoff point, plan (K, 2))``, or
        None when no push is feasible."""
        ranked = self.ranked(x, top=self.select_top)
        return ranked[0] if ranked else None

    def ranked(self, x, top=None, skip=()):
        """Every feasible push from ``x`` as ``(objective, standoff point, plan (K, 2))``,
        best first (the pushes whose rollout diverged left out); with ``top``, only that
        many pushes, those of the best :meth:`estimates`, are rolled out and ranked.
        ``skip``: standoff points (2,) whose pushes (those within 1 mm) are left out."""
        if top is not None:
            top = as_int(top, "top", 1)
        S = np.asarray(skip, dtype=float)
        if S.size and (S.ndim != 2 or S.shape[1] != 2):
            raise ValueError(f"skip must be standoff points of shape (n, 2), got {S.shape}")
        cands = self.pushes(x)
        if S.size:
            cands = [c for c in cands if np.min(np.hypot(*(S - c[0]).T)) > 1e-3]
        self.n_selections += 1
        if not cands:
            return []
        K = self.horizon // self.block
        nb, speeds = self._push_speeds()
        X0, Z, S = [], [], []
        for s, d in cands:
            xs = np.array(x, dtype=float)
            xs[3:5] = s
            xs[9:12] = 0.0
            for v in speeds:
                z = np.zeros((K, 2))
                z[:nb] = d * v
                X0.append(xs)
                Z.append(z)
                S.append(s)
        keep = np.arange(len(Z))
        if top is not None and top < len(Z):  # the pushes of the top lowest estimates
            est = self.estimates(x, cands)
            keep = np.sort(np.argsort(est, kind="stable")[:top])
        Za = np.array(Z)[keep]
        S = [S[k] for k in keep]
        U = self.controls(Za)
        ro = self.select_model.rollout(np.array(X0)[keep], U, order=0, num_threads=self.num_threads)
        J = self.batch_objective(ro.states, U)
        J[ro.status != 0] = np.inf
        return [
            (float(J[k]), S[k], Za[k]) for k in np.argsort(J, kind="stable") if np.isfinite(J[k])
        ]

    def estimates(self, x, cands) -> np.ndarray:
        """A quasi-static estimate of the objective after each push of ``cands`` (as
        :meth:`pushes` returns them) and each of ``push_distances``, in :meth:`ranked`'s
        order (standoff points outer, distances inner).

        The T is taken to move as a slow push on a table support moves it: a force along
        the push direction ``d`` at contact point ``r`` (from the support's centre) turns
        and translates it as ``(d, (r x d) / rho^2)``, with ``rho`` the support's radius
        of gyration, until the contact point has advanced by the pusher's travel (the
        push's length at the speed :meth:`ranked` caps; the standoff gap, which the soft
        contact's onset partly closes, is not taken off).  Only the final pose's terms
        of the objective are scored.  Cheap (no rollout); it orders
        the pushes for ``select_top``."""
        if not len(cands):
            return np.zeros(0)
        centre, rho2 = self._support
        pose = np.asarray(x[:3], dtype=float)
        c, s = math.cos(pose[2]), math.sin(pose[2])
        ctr = pose[:2] + np.array([c * centre[0] - s * centre[1], s * centre[0] + c * centre[1]])
        st = np.array([p for p, _ in cands])
        d = np.array([n for _, n in cands])
        r = st + d * (self.radius + self.standoff) - ctr
        rxd = r[:, 0] * d[:, 1] - r[:, 1] * d[:, 0]
        # the contact point's advance: the pusher's travel as ranked() moves it (speed
        # capped).  The standoff gap is not taken off: the soft contact's onset closes
        # part of it, and on the gym env (40 seeds) taking it off lowered success at 0.98
        # coverage from 35-38 % to 10-18 % and with a moved centre of gravity from 97.5
        # to 92.5 %, though it ranked the selection model's best push higher
        nb, speeds = self._push_speeds()
        push = speeds * (nb * self.block * self.task.dt)
        adv = push[None, :] / (1.0 + rxd[:, None] ** 2 / rho2)  # (points, distances)
        th_d = (rxd / rho2)[:, None] * adv
        # the pose's origin turns about the support's centre while that centre translates
        o = pose[:2] - ctr
        cd, sd = np.cos(th_d), np.sin(th_d)
        q = ctr + d[:, None, :] * adv[..., None]
        q = q + np.stack([cd * o[0] - sd * o[1], sd * o[0] + cd * o[1]], axis=-1)
        th = pose[2] + th_d
        g = self.task.goal
        J = 0.5 * self.wp * np.sum((q - g[:2]) ** 2, axis=-1) + self.wa * (1.0 - np.cos(th - g[2]))
        return J.reshape(-1)

    def _push_speeds(self):
        """``(nb, speeds)``: a candidate push moves the pusher for its first ``nb`` blocks
        (80 % of the horizon) at the speed (m/s) that covers each of ``push_distances``
        in that time, capped by the speed box."""
        nb = max(1, int(round(0.8 * (self.horizon // self.block))))
        span = nb * self.block * self.task.dt
        return nb, np.minimum(np.asarray(self.push_distances) / span, self.u_box)

    def _bounds(self):
        """The box of the pusher's centre in standoff points and moves: 5 mm off the
        walls' inner faces."""
        inset = self.task.params.get("wall_inset", 0.0)
        return inset + self.radius + 0.005, self.task.workspace - inset - self.radius - 0.005

    def path_to(self, p, s, pose):
        """Waypoints from the pusher at ``p`` to ``s`` clear of the T at ``pose`` (the last
        is ``s``), or None if neither way around stays in the workspace.  A pusher closer
        to the T than its radius first backs off (:meth:`_backoffs`)."""
        import shapely  # type: ignore[import-untyped]

        poly = self.task.t_polygon(pose)
        clear = self.radius + 0.001
        p = np.asarray(p, dtype=float)
        if poly.distance(shapely.Point(p)) < self.radius:
            for b in self._backoffs(p, pose, poly):
                rest = self.path_to(b, s, pose)
                if rest is not None:
                    return [b, *rest]
            return None

        def ok(a, b):
            return poly.distance(shapely.LineString([a, b])) >= clear

        if ok(p, s):
            return [np.asarray(s, dtype=float)]
        c = np.asarray(pose[:2], dtype=float)
        R = float(np.max(np.hypot(*(self.task.t_outline(pose) - c).T))) + self.radius + 0.012
        lo, hi = self._bounds()
        a0 = math.atan2(p[1] - c[1], p[0] - c[0])
        a1 = math.atan2(s[1] - c[1], s[0] - c[0])
        best = None
        for ccw in (True, False):
            da = (a1 - a0) % (2 * math.pi)
            if not ccw:
                da -= 2 * math.pi
            n = max(2, int(abs(da) / (math.pi / 12)) + 1)
            pts = [
                np.clip(
                    c + R * np.array([math.cos(a0 + da * i / n), math.sin(a0 + da * i / n)]), lo, hi
                )
                for i in range(n + 1)
            ] + [np.asarray(s, dtype=float)]
            # the first leg starts where the pusher is (clear of the T, maybe close to it)
            good = all(ok(pts[i], pts[i + 1]) for i in range(len(pts) - 1))
            good = good and (ok(p, pts[0]) or poly.distance(shapely.Point(p)) >= self.radius)
            length = float(np.hypot(*(pts[0] - p))) + sum(
                float(np.hypot(*(pts[i + 1] - pts[i]))) for i in range(len(pts) - 1)
            )
            if good and (best is None or length < best[0]):
                best = (length, pts)
        if best is None:  # near a wall: follow the T's convex hull, grown by the radius
            best = self._hull_path(p, s, poly, ok)
        return None if best is None else best[1]

    def _backoffs(self, p, pose, poly):
        """Points 4 mm clear of the T to which a pusher at ``p``, closer to the T than its
        radius, backs off in a straight line that does not approach the T: away from the
        T's nearest point (out through the nearest edge when the centre is inside the T),
        away from its centre, and between the two."""
        import shapely  # type: ignore[import-untyped]

        q = np.asarray(shapely.shortest_line(poly.exterior, shapely.Point(p)).coords[0])
        d0 = poly.distance(shapely.Point(p))
        lo, hi = self._bounds()
        dirs = []
        out_edge = q - p if poly.contains(shapely.Point(p)) else p - q
        for d in (out_edge, p - np.asarray(pose[:2], dtype=float)):
            n = float(np.hypot(*d))
            if n > 1e-9:
                dirs.append(d / n)
        if len(dirs) == 2:
            dirs.append(dirs[0] + dirs[1])
        out = []
        for d in dirs:
            d = d / max(float(np.hypot(*d)), 1e-12)
            for step in np.arange(0.005, 0.08, 0.005):
                b = np.clip(p + d * step, lo, hi)
                if poly.distance(shapely.Point(b)) >= self.radius + 0.004:
                    if poly.distance(shapely.LineString([p, b])) >= d0 - 1e-6:
                        out.append(b)
                    break
        return out

    def _hull_path(self, p, s, poly, ok):
        """``(length, waypoints)`` from ``p`` to ``s`` along the boundary of the T's convex
        hull grown by the pusher's radius + 4 mm, the shorter way that stays within the
        pusher's bounds, or None."""
        import shapely  # type: ignore[import-untyped]

        ring = poly.convex_hull.buffer(self.radius + 0.004, quad_segs=3).exterior
        total = ring.length
        verts = np.asarray(ring.coords)[:-1]
        at = np.array([ring.project(shapely.Point(v)) for v in verts])
        a, b = ring.project(shapely.Point(p)), ring.project(shapely.Point(s))
        pa = np.asarray(ring.interpolate(a).coords[0])
        pb = np.asarray(ring.interpolate(b).coords[0])
        lo, hi = self._bounds()
        best = None
        for sign in (1.0, -1.0):
            span = ((b - a) * sign) % total
            ahead = ((at - a) * sign) % total
            mid = [verts[i] for i in np.argsort(ahead) if 0 < ahead[i] < span]
            pts = [pa, *mid, pb, np.asarray(s, dtype=float)]
            if not all(np.all((lo <= q) & (q <= hi)) for q in pts):
                continue
            if not (ok(p, pa) or poly.distance(shapely.Point(p)) >= self.radius):
                continue
            if not ok(pb, pts[-1]):
                continue
            length = float(np.hypot(*(pa - p))) + span + float(np.hypot(*(pts[-1] - pb)))
            if best is None or length < best[0]:
                best = (length, pts)
        return best

    def _move(self, x):
        dt = self.task.dt
        q = np.array(x[3:5], dtype=float)
        U = []
        step = self.move_speed * dt
        while self.path and len(U) < self.replan:
            d = self.path[0] - q
            L = float(np.hypot(*d))
            if L <= step:
                U.append([d[0] / dt, d[1] / dt, 0.0])
                q = self.path.pop(0)
            else:
                U.append([d[0] / L * self.move_speed, d[1] / L * self.move_speed, 0.0])
                q = q + d / L * step
        return np.array(U)

    def _moving(self, x):
        """The tick's controls while a move is under way: the move's steps, and when it
        ends within the tick the selected push's first steps after it, so that the
        push starts on arrival (the next tick warm starts from the rest of the push)."""
        U = self._move(x)
        if self.path or self.plan is None or len(U) == self.replan:
            self._executed = 0 if not self.path else None
            return U
        k = (self.replan - len(U)) // self.block  # whole blocks of the push this tick
        self._executed = k
        if not k:
            return U
        self.ticks += 1  # a tick of the push: the next one refines it, selects nothing
        return np.vstack([U, self.controls(self.plan)[: k * self.block]])

    # -- the control loop ------------------------------------------------------------------

    def act(self, x):
        """Controls ``U`` (k, 3) for the next ``k <= replan`` steps from state ``x`` (12,),
        and the phase: ``"move"`` (repositioning) or ``"push"`` (a refined plan).

        A controller carries one episode's plan from tick to tick, so it refuses a call
        while another thread is inside ``act`` (RuntimeError): use one controller per
        episode and thread."""
        if not self._busy.acquire(blocking=False):
            raise RuntimeError(
                "Controller.act is already running in another thread: a controller holds "
                "one episode's plan; use one controller per thread"
            )
        try:
            return self._act(x)
        finally:
            self._busy.release()

    def _choose(self, x, bound, t_end=None):
        """The best push from ``x`` whose objective is below ``bound`` and whose standoff
        point the pusher can reach, and its path (None: it is reached already), or
        ``(None, None)``.  Pushes are taken best first; at most ``_PATH_TRIES`` + 1
        standoff points are tried for a path, and no further one once
        ``time.perf_counter()`` has passed ``t_end`` (the tick's deadline).  Standoff
        points found unreachable are remembered while the T and the pusher stay within
        ``_SAME_POSE`` of where they were when the first of them was found, and left out
        of the next selections' rankings: with ``select_top``, a T whose best-estimated
        pushes cannot be reached gets other pushes ranked on the next tick."""
        here = np.array(x[:5], dtype=float)  # the T's pose and the pusher's position
        known = self._unreachable
        if not _still_at(known[0], here):
            known = (here, [])
        skip = list(known[1])
        tried: dict[tuple, Any] = {}  # standoff point: its path (None: unreachable)
        sel = path = None
        for cand in self.ranked(x, top=self.select_top, skip=skip):
            if cand[0] >= bound or len(tried) > _PATH_TRIES:
                break
            if float(np.hypot(*(cand[1] - x[3:5]))) <= _REACHED:
                sel = cand
                break
            key = tuple(cand[1])
            if key not in tried:
                if tried and t_end is not None and time.perf_counter() > t_end:
                    break  # out of time: as if no other standoff point were reachable
                tried[key] = self.path_to(x[3:5], cand[1], x[:3])
            if tried[key] is not None:
                sel, path = cand, tried[key]
                break
        skip += [np.array(k) for k, v in tried.items() if v is None]
        self._unreachable = (known[0], skip)
        return sel, path

    def _act(self, x):
        x = self.model._as_state(x, "x")
        if self.path:
            return self._moving(x), "move"
        t0 = time.perf_counter()
        shift = self.replan // self.block if self._executed is None else self._executed
        self._executed = None
        z0 = None
        if self.plan is not None:
            z0 = np.vstack([self.plan[shift:], np.repeat(self.plan[-1:], shift, axis=0)])
        stalled = len(self.history) >= 2 and self.history[-1] > _STALL * self.history[-2]
        # a plan under which nothing moves for _IDLE ticks is a local minimum of the
        # objective (every push looks worse over one horizon than standing still, e.g. a
        # T that must first be pushed away from the goal to be turned): the next
        # selection takes the best reachable push with no incumbent to beat
        here = np.array(x[:5], dtype=float)  # the T's pose and the pusher's position
        ref, still = self._still
        if _still_at(ref, here):
            still += 1
        else:
            ref, still = here, 0
        idle = still >= _IDLE
        self._still = (None, 0) if idle else (ref, still)
        fresh = False  # a new push selected this tick
        if self.plan is None or self.ticks % self.select_every == 0 or stalled or idle:
            current = self.objective(x, z0) if z0 is not None and not idle else math.inf
            factor = _STALL_SWITCH if stalled else self.switch
            t_sel = None if self.deadline is None else t0 + self.deadline
            sel, path = self._choose(x, factor * current, t_sel)
            if sel is not None:
                _, s, z0 = sel
                fresh = True
                self.history = []
                self.ticks = 0
                logger.debug(
                    "push selected at (%.4f, %.4f): objective %.4g (current plan %.4g)%s",
                    s[0],
                    s[1],
                    sel[0],
                    current,
                    ", stalled" if stalled else "",
                )
                if path is not None:
                    logger.debug("moving the pusher around the T: %d waypoints", len(path))
                    self.path = path
                    self.plan = z0
                    self.n_moves += 1
                    U = self._moving(x)
                    self.solve_times.append(time.perf_counter() - t0)
                    return U, "move"
        if z0 is None:
            # nothing reachable to select and no plan: stand still this tick and select
            # again, unbounded, next tick (the standoff points found unreachable skipped).
            # A still plan kept as the incumbent would bound the later selections by the
            # objective of standing still, which no push beats that must first turn or
            # move the T away from the goal (a T against a wall, pushed from its far side)
            self.solve_times.append(time.perf_counter() - t0)
            return np.zeros((self.replan, 3)), "push"
        t_end = None
        if self.deadline is not None:
            now = time.perf_counter()
            t_end = max(t0 + self.deadline, now + _MIN_REFINE * self.deadline)
        if fresh and self.deadline is not None and now - t0 > _SKIP * self.deadline:
            # the selection used the tick's budget: execute its new push unrefined
            self.plan = np.asarray(z0, dtype=float)
            J = self.objective(x, self.plan)
        else:  # a kept plan is always refined, within the budget's rest or a floor
            self.plan, J = self._solve(x, z0, t_end)
        self.history.append(J)
        self.ticks += 1
        self.solve_times.append(time.perf_counter() - t0)
        return self.controls(self.plan)[: self.replan], "push"


def _support_ellipse(task):
    """The centre of the T's table support in its body frame (m) and its squared radius
    of gyration about that centre (m^2): the ring of ``support_radius`` about
    ``(support_x, support_y)`` when one is set, otherwise the T's area."""
    p = task.params
    if p.get("support_radius", 0.0) > 0 or p.get("support_x", 0.0) or p.get("support_y", 0.0):
        return (p["support_x"], p["support_y"]), max(p["support_radius"] ** 2, 1e-6)
    V = np.asarray(task.vertices, dtype=float)  # counter-clockwise, centroid at the origin
    x, y = V[:, 0], V[:, 1]
    x1, y1 = np.roll(x, -1), np.roll(y, -1)
    cr = x * y1 - x1 * y
    area = cr.sum() / 2.0
    polar = (((x * x + x * x1 + x1 * x1) + (y * y + y * y1 + y1 * y1)) * cr).sum() / 12.0
    return (0.0, 0.0), float(polar / area)


@functools.lru_cache(maxsize=1)
def _realtime_select_model():
    return push_t.make(**_REALTIME_SELECT).model


def realtime_settings() -> dict[str, Any]:
    """:class:`Controller` settings for hard real time on the default push-T task: iLQR
    (Gauss-Newton, C passes) over 0.3 s horizons, a 40 ms deadline per tick, and push
    selection that rolls out only the 12 pushes of the best quasi-static estimates on a
    model sampled every 6 mm (``eps`` = spacing^2).  On one core of the machine of
    docs/gym_pusht.md every decision of 50 seeded episodes stays well within 100 ms
    (that page's last table, regenerated by benchmarks/gym_env.py)."""
    return {**_REALTIME, "select_model": _realtime_select_model()}


_ATTR = {"position_weight": "wp", "angle_weight": "wa", "iterations": "iterations"}


@dataclasses.dataclass(frozen=True)
class Episode:
    """One closed-loop run (:func:`run_episode`).

    Attributes
    ----------
    seed : int
    success : bool
        Coverage reached ``task.success_coverage`` within the time limit.
    time : float
        Simulated time to success (or of the whole run), s.
    coverage : float
        Coverage at the end (at the step of success, if any).
    wall : float
        Wall time of the run, s.
    states : (N + 1, 12) ndarray
    controls : (N, 3) ndarray
    phases : (N,) ndarray of str
        ``"move"`` or ``"push"`` per step.
    solve_times : (k,) ndarray
        Planning wall time of each tick, s.
    """

    seed: int
    success: bool
    time: float
    coverage: float
    wall: float
    states: np.ndarray
    controls: np.ndarray
    phases: np.ndarray
    solve_times: np.ndarray

    def __repr__(self) -> str:
        return (
            f"Episode(seed={self.seed}, success={self.success}, time={self.time:.2f} s, "
            f"coverage={self.coverage:.3f}, wall={self.wall:.1f} s, "
            f"solves={self.solve_times.size})"
        )


def run_episode(task, controller=None, time_limit=None, callback=None, **settings) -> Episode:
    """Run ``controller`` (default: ``Controller(task, **settings)``) on ``task`` from
    ``task.x0`` until the T's coverage reaches ``task.success_coverage`` or
    ``time_limit`` (default ``task.time_limit``, 30 s) of simulated time.

    The controls are made admissible by ``task.project_controls`` and simulated with the
    task's model.  ``callback(t, x, coverage, phase)`` is called after every tick (for
    progress logs); it may return True to stop early."""
    if not isinstance(task, push_t.PushT):
        raise TypeError(f"task must be a push_t.PushT, got {type(task).__name__}")
    ctl = Controller(task, **settings) if controller is None else controller
    if settings and controller is not None:
        raise TypeError("give either a controller or settings, not both")
    if not isinstance(ctl, Controller):
        raise TypeError(f"controller must be a Controller, got {type(ctl).__name__}")
    limit = task.time_limit if time_limit is None else as_positive_float(time_limit, "time_limit")
    n_max = int(round(limit / task.dt))
    m = task.model
    x = np.array(task.x0, dtype=float)
    X: list = [x]
    U: list = []
    P: list = []
    cov = task.coverage(x[:3])
    success = cov >= task.success_coverage
    t0 = time.perf_counter()
    while not success and len(U) < n_max:
        Uk, phase = ctl.act(x)
        Uk = task.project_controls(Uk)[: n_max - len(U)]
        ro = m.rollout(x, Uk[None], order=0, num_threads=1)
        if int(ro.status[0]) != 0:  # pragma: no cover - the task's dt keeps it stable
            t = int(ro.failed_step[0])
            raise m._divergence(
                ro.states[0, t + 1], step=len(U) + t, context=f"seed {task.seed}"
            ) from None
        Xk = ro.states[0, 1:]
        covs = task.coverage(Xk[:, :3])
        hit = np.flatnonzero(covs >= task.success_coverage)
        k = int(hit[0]) + 1 if hit.size else len(Uk)
        X.extend(Xk[:k])
        U.extend(Uk[:k])
        P.extend([phase] * k)
        x = Xk[k - 1]
        cov = float(covs[k - 1])
        success = bool(hit.size)
        if callback is not None and callback(len(U) * task.dt, x, cov, phase):
            break
    return Episode(
        seed=task.seed,
        success=bool(success),
        time=len(U) * task.dt,
        coverage=float(cov),
        wall=time.perf_counter() - t0,
        states=np.array(X),
        controls=np.array(U).reshape(-1, 3),
        phases=np.array(P, dtype="<U4"),
        solve_times=np.array(ctl.solve_times),
    )


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """Results of :func:`evaluate`: the episodes and their summary.

    Attributes
    ----------
    episodes : tuple of Episode
    success_rate : float
    """

    episodes: tuple

    @property
    def success_rate(self) -> float:
        return float(np.mean([e.success for e in self.episodes]))

    @property
    def failures(self) -> tuple:
        """The episodes that did not succeed."""
        return tuple(e for e in self.episodes if not e.success)

    def summary(self) -> str:
        """A markdown summary: success rate, time to success, time per solve."""
        eps = self.episodes
        ok = [e for e in eps if e.success]
        st = np.concatenate([e.solve_times for e in eps]) if eps else np.zeros(0)
        lines = [
            "| seeds | success | time to success [s] (median, max) | solve time [s] "
            "(median, p95) | wall per episode [s] (median) |",
            "|---|---|---|---|---|",
            f"| {len(eps)} | {len(ok)}/{len(eps)} ({100 * self.success_rate:.0f} %) | "
            + (
                f"{np.median([e.time for e in ok]):.2f}, {max(e.time for e in ok):.2f}"
                if ok
                else "-"
            )
            + f" | {np.median(st):.3f}, {np.percentile(st, 95):.3f} | "
            f"{np.median([e.wall for e in eps]):.1f} |"
            if eps
            else "| 0 | - | - | - | - |",
        ]
        fails = self.failures
        if fails:
            lines.append("")
            lines.append(
                "Failures: "
                + ", ".join(f"seed {e.seed} (coverage {e.coverage:.3f})" for e in fails)
            )
        return "\n".join(lines)


def _episode_for_seed(args):
    seed, settings, time_limit = args
    task = push_t.make(seed=seed)
    return run_episode(task, time_limit=time_limit, **settings)


def _worker_logging(level):
    """A worker process logs the controller's messages to stderr at the parent's level."""
    if level < logging.WARNING:
        from ..._progress import log_to_stderr

        log_to_stderr(level)


def evaluate(seeds, jobs=1, time_limit=None, callback=None, **settings) -> Evaluation:
    """Run :func:`run_episode` on ``push_t.make(seed)`` for each seed.

    ``jobs`` > 1 runs episodes in that many worker processes (each builds its own task);
    ``callback(episode)`` is called as each finishes (in completion order).  Episodes
    are returned in the order of ``seeds``."""
    seeds = [push_t._as_seed(s) for s in seeds]
    jobs = as_int(jobs, "jobs", 1, 64)
    args = [(s, dict(settings), time_limit) for s in seeds]
    out: dict[int, Episode] = {}
    if jobs == 1:
        for i, a in enumerate(args):
            out[i] = _episode_for_seed(a)
            logger.info("%r", out[i])
            if callback is not None:
                callback(out[i])
    else:
        import concurrent.futures as cf
        import multiprocessing as mp

        level = logging.getLogger("softcontact").getEffectiveLevel()
        with cf.ProcessPoolExecutor(
            jobs,
            mp_context=mp.get_context("spawn"),
            initializer=_worker_logging,
            initargs=(level,),
        ) as ex:
            futs = {ex.submit(_episode_for_seed, a): i for i, a in enumerate(args)}
            for f in cf.as_completed(futs):
                out[futs[f]] = f.result()
                logger.info("%r", out[futs[f]])
                if callback is not None:
                    callback(out[futs[f]])
    return Evaluation(tuple(out[i] for i in range(len(args))))
