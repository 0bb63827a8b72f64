"""Identification of the model of the ``gym-pusht`` env from scripted pushes.

:func:`scripted_pushes` logs pushes in the env: the block at a random pose away from the
walls, the agent at rest beside it, driven through the block along a straight line at a
constant speed by :func:`~softcontact.tasks.gym_pusht.pd_action` targets (the agent is on
the line at every env step).  Each push is returned in model units (:class:`Push`): the
initial state, the model controls that reproduce the agent's path exactly -- the
agent's velocity of every 10 ms substep of the env's PD law, which is the model pusher's
velocity over the matching model step (the model's ``dt`` is the env's substep) -- and the
block's observed poses after every env step, in the model's frame.

:func:`prediction_errors` measures the model against logged pushes: RMS position and
angle errors of the one-step prediction (0.1 s, ten model steps, from the observed state)
and of the open-loop rollout over the whole push.  The model's state at an observation
has the T at rest, as the env keeps its block (its space damping is 0) and as
:class:`~softcontact.tasks.gym_pusht.Controller` assumes.

:func:`identify` fits model parameters to the open-loop rollouts of the pushes with
``scipy.optimize.least_squares`` and the analytic parameter Jacobians (forward
sensitivities, :func:`softcontact.optimize.trajectory_residuals`), optionally for each
value of a grid of ``support_slip_velocity`` or ``support_radius`` (build parameters of
:func:`~softcontact.tasks.gym_pusht.make_task`, not model parameters), keeping the value
of least cost.  The fittable parameters (:data:`FIT_NAMES`) are the support friction and
the contact's stiffness and damping; a contact parameter is tied across the pusher's and
the walls' contacts (as :func:`softcontact.tasks.push_t.make` sets them), so its Jacobian
column is the sum of theirs.

Examples
--------
>>> from softcontact.tasks.gym_pusht import sysid
>>> pushes = sysid.scripted_pushes(12, seed=0)             # doctest: +SKIP
>>> res = sysid.identify(pushes[:8], held_out=pushes[8:])  # doctest: +SKIP
>>> print(res.table())                                     # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import math
import time
import types
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..._optional import require
from ..._validate import as_float_array, as_int, as_positive_float
from ...optimize import trajectory_residuals
from .. import push_t
from ..push_t import _readonly
from . import (
    K_P,
    K_V,
    PARAMETERS,
    PX,
    SUBSTEP_DT,
    SUBSTEPS,
    env_pose,
    make_env,
    make_task,
    model_pose,
    pd_action,
)

__all__ = [
    "FIT_NAMES",
    "BOUNDS",
    "ANGLE_SCALE",
    "Push",
    "PredictionErrors",
    "IdentificationResult",
    "scripted_pushes",
    "prediction_errors",
    "identify",
]

#: The fittable parameters (:func:`~softcontact.tasks.gym_pusht.make_task` overrides)
#: and the model parameters each one sets (tied: the same value for all of them).
FIT_NAMES: Mapping[str, tuple[str, ...]] = types.MappingProxyType(
    {
        "support_friction": ("T.support_friction",),
        "stiffness": tuple(
            f"contact(T,{b}).stiffness"
            for b in ("pusher", "wall_left", "wall_right", "wall_bottom", "wall_top")
        ),
        "damping": tuple(
            f"contact(T,{b}).damping"
            for b in ("pusher", "wall_left", "wall_right", "wall_bottom", "wall_top")
        ),
    }
)
#: Bounds of the fit.  The stiffness's upper bound keeps the explicit contact spring
#: stable at dt = 0.01 s for the env's block (``dt^2 k / m_eff < 4`` with ``m_eff`` = 0.32
#: kg at the stem's corner).
BOUNDS: Mapping[str, tuple[float, float]] = types.MappingProxyType(
    {"support_friction": (0.01, 20.0), "stiffness": (100.0, 1.0e4), "damping": (0.0, 300.0)}
)
#: Length (m) that converts an angle residual to a position (a point at this distance
#: from the T's centre moves by ``ANGLE_SCALE`` times the angle error).
ANGLE_SCALE = 0.05

_AGENT_RADIUS = 15.0  # px
_T_RANGE = (150.0, 362.0)  # the block's centroid, px: 150 px off the walls' lines
_PATH_MARGIN = 30.0  # the agent's path stays this far inside the walls, px
_CORNER_MARGIN = 5.0  # contact points this far from the T's corners, px
_MAX_TRIES = 1000


@dataclasses.dataclass(frozen=True, eq=False)
class Push:
    """One logged push (model units: m, rad, s; arrays read-only).

    Attributes
    ----------
    x0 : (12,) ndarray
        The model state at the start: the T's pose, the agent's position (angle 0), all
        velocities 0.
    U : (steps * 10, 3) ndarray
        Model controls (pusher velocity ``(vx, vy, 0)``) that reproduce the agent's path:
        the agent's velocity in each 10 ms substep.
    observed : (steps, 3) ndarray
        The T's pose after each env step (angles continuous from ``x0[2]``).
    pusher : (steps + 1, 2) ndarray
        The agent's position at the start and after each env step.
    pusher_velocity : (steps + 1, 2) ndarray
        The agent's velocity at the same times, m/s.
    speed : float
        The commanded speed along the path, m/s.
    direction : (2,) ndarray
        Unit direction of the path.
    """

    x0: np.ndarray
    U: np.ndarray
    observed: np.ndarray
    pusher: np.ndarray
    pusher_velocity: np.ndarray
    speed: float
    direction: np.ndarray

    @property
    def steps(self) -> int:
        """Env steps of the push."""
        return len(self.observed)


@dataclasses.dataclass(frozen=True)
class PredictionErrors:
    """RMS errors of a model's predictions of the T's pose (:func:`prediction_errors`).

    Attributes
    ----------
    one_step_position, one_step_angle : float
        One env step (0.1 s) from each observed state: mm and degrees, RMS over every
        env step of every push.
    open_loop_position, open_loop_angle : float
        Open-loop rollouts of the whole pushes from their initial states: mm and
        degrees, RMS over every env step of every push.
    final_position, final_angle : float
        The open-loop errors at the pushes' last env step (1 s for 10-step pushes), RMS
        over the pushes.
    """

    one_step_position: float
    one_step_angle: float
    open_loop_position: float
    open_loop_angle: float
    final_position: float
    final_angle: float

    def __str__(self) -> str:
        return (
            f"one-step {self.one_step_position:.2f} mm {self.one_step_angle:.2f} deg, "
            f"open-loop {self.open_loop_position:.2f} mm {self.open_loop_angle:.2f} deg "
            f"(final {self.final_position:.2f} mm {self.final_angle:.2f} deg)"
        )


@dataclasses.dataclass(frozen=True)
class IdentificationResult:
    """The outcome of :func:`identify`.

    Attributes
    ----------
    names : tuple of str
        The fitted parameters (keys of :data:`FIT_NAMES`).
    initial, estimate : dict
        The parameters' values before and after the fit (fitted and scanned ones).
    overrides : dict
        The :func:`~softcontact.tasks.gym_pusht.make_task` overrides of the identified
        model: ``guess`` with ``estimate`` (and the best scanned value) over it, so that
        ``make_task(**overrides)`` is the model measured as ``after``.
    scan : tuple of (float, float) pairs
        ``(value, cost)`` of each scanned value (empty without a scan).
    cost : float
        Final ``least_squares`` cost, ``|r|^2 / 2`` (m^2; angle residuals times
        :data:`ANGLE_SCALE`).
    nfev : int
        Residual evaluations of all fits.
    wall : float
        Wall-clock time, s.
    before, after : PredictionErrors
        Errors on the fitted pushes with the initial and identified parameters.
    held_out_before, held_out_after : PredictionErrors or None
        The same on the held-out pushes, if any were given.
    """

    names: tuple
    initial: dict
    estimate: dict
    overrides: dict
    scan: tuple
    cost: float
    nfev: int
    wall: float
    before: PredictionErrors
    after: PredictionErrors
    held_out_before: PredictionErrors | None = None
    held_out_after: PredictionErrors | None = None

    def table(self) -> str:
        """A markdown summary: the parameters, then the errors before and after."""
        rows = ["| parameter | initial | estimate |", "|---|---:|---:|"]
        for k in self.estimate:
            rows.append(f"| {k} | {self.initial[k]:.6g} | {self.estimate[k]:.6g} |")
        rows += [
            "",
            "| pushes | model | one-step mm | one-step deg | open-loop mm | open-loop deg "
            "| final mm | final deg |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        sets: list[tuple[str, Any, Any]] = [("fitted", self.before, self.after)]
        if self.held_out_before is not None:
            sets.append(("held out", self.held_out_before, self.held_out_after))
        for label, b, a in sets:
            for which, e in (("initial", b), ("identified", a)):
                rows.append(
                    f"| {label} | {which} | {e.one_step_position:.2f} | "
                    f"{e.one_step_angle:.2f} | {e.open_loop_position:.2f} | "
                    f"{e.open_loop_angle:.2f} | {e.final_position:.2f} | {e.final_angle:.2f} |"
                )
        return "\n".join(rows)


def _as_pair(v, name, lo, hi) -> tuple[float, float]:
    """``v`` as two increasing numbers within ``[lo, hi]``."""
    a = as_float_array(v, name)
    if a.shape != (2,) or not np.all(np.isfinite(a)) or not lo <= a[0] <= a[1] <= hi:
        raise ValueError(f"{name} must be two numbers lo <= hi within [{lo}, {hi}], got {v!r}")
    return float(a[0]), float(a[1])


def _edges(vertices) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start points, unit directions and lengths of a counter-clockwise polygon's edges."""
    a = np.asarray(vertices, dtype=float)
    d = np.roll(a, -1, axis=0) - a
    length = np.hypot(d[:, 0], d[:, 1])
    return a, d / length[:, None], length


def _plan(rng, task, speed_range, angle_range, gap_range, steps):
    """A random push in env px: the block's pose (model frame, m), the agent's start
    (px), the path's unit direction and its speed (px/s)."""
    shapely = require("shapely", "tasks", "gym_pusht.sysid")
    a, e, length = _edges(task.vertices / PX)
    r = _AGENT_RADIUS
    for _ in range(_MAX_TRIES):
        pose = np.array([*rng.uniform(*_T_RANGE, 2) * PX, rng.uniform(-math.pi, math.pi)])
        usable = np.maximum(length - 2 * _CORNER_MARGIN, 0.0)
        k = rng.choice(len(length), p=usable / usable.sum())
        s = _CORNER_MARGIN + rng.uniform(0.0, usable[k])
        c, sn = math.cos(pose[2]), math.sin(pose[2])
        R = np.array([[c, -sn], [sn, c]])
        point = R @ (a[k] + s * e[k]) + pose[:2] / PX
        normal = R @ np.array([e[k][1], -e[k][0]])  # outward (counter-clockwise polygon)
        tilt = rng.uniform(-angle_range, angle_range)
        ct, st = math.cos(tilt), math.sin(tilt)
        direction = -np.array([ct * normal[0] - st * normal[1], st * normal[0] + ct * normal[1]])
        gap = rng.uniform(*gap_range)
        start = point + normal * r - direction * gap / max(ct, 1e-9)
        speed = rng.uniform(*speed_range) / PX
        end = start + direction * speed * steps * SUBSTEPS * SUBSTEP_DT
        lo, hi = r + _PATH_MARGIN, 512.0 - r - _PATH_MARGIN
        if min(start.min(), end.min()) < lo or max(start.max(), end.max()) > hi:
            continue
        polygon = shapely.Polygon(task.t_outline(pose) / PX)
        if polygon.distance(shapely.Point(*start)) < r + 1.0:
            continue
        return pose, start, direction, speed
    raise RuntimeError("no push found within the workspace")  # pragma: no cover


def _log_push(env, task, pose, start, direction, speed, steps, hold=0) -> Push:
    """Run one planned push in ``env`` and log it (see :class:`Push`): ``steps`` env
    steps along the path, then ``hold`` steps with the agent's target at the path's end."""
    block = env_pose(pose)
    # the env sets the block's position at angle 0, then its angle about the centre of
    # gravity: ask for the origin that lands the block at ``block``
    env.reset()
    cog = np.array(env.block.center_of_gravity)
    c, s = math.cos(block[2]), math.sin(block[2])
    origin = block[:2] - cog + np.array([c * cog[0] - s * cog[1], s * cog[0] + c * cog[1]])
    env.reset(options={"reset_to_state": [*start, *origin, block[2]]})

    def t_pose():
        return model_pose([*env.block.position, env.block.angle])

    x0 = np.zeros(12)
    x0[:3] = t_pose()
    x0[3:5] = np.array(env.agent.position) * PX
    total = steps + hold
    U = np.zeros((total * SUBSTEPS, 3))
    observed = np.empty((total, 3))
    agent = np.empty((total + 1, 2))
    agent_v = np.empty((total + 1, 2))
    agent[0] = env.agent.position
    agent_v[0] = env.agent.velocity
    p0 = np.array(env.agent.position)
    for k in range(total):
        target = p0 + direction * speed * (min(k, steps - 1) + 1) * SUBSTEPS * SUBSTEP_DT
        p, v = np.array(env.agent.position), np.array(env.agent.velocity)
        action = pd_action(target, p, v)
        for i in range(SUBSTEPS):  # the env's PD law and kinematic update, substep by substep
            v = v + (K_P * (action - p) - K_V * v) * SUBSTEP_DT
            p = p + v * SUBSTEP_DT
            U[k * SUBSTEPS + i, :2] = v * PX
        env.step(action)
        agent[k + 1] = env.agent.position
        agent_v[k + 1] = env.agent.velocity
        observed[k] = t_pose()
    # continuous angles from the initial one
    angles = np.unwrap(np.concatenate([[x0[2]], observed[:, 2]]))
    observed[:, 2] = angles[1:]
    return Push(
        x0=_readonly(x0),
        U=_readonly(U),
        observed=_readonly(observed),
        pusher=_readonly(agent * PX),
        pusher_velocity=_readonly(agent_v * PX),
        speed=float(speed * PX),
        direction=_readonly(direction),
    )


def scripted_pushes(
    n,
    seed=0,
    steps=10,
    *,
    speed=(0.05, 0.3),
    max_angle=30.0,
    gap=(0.003, 0.015),
    hold=0,
    damping=None,
    block_cog=None,
) -> list[Push]:
    """Log ``n`` scripted pushes of the env (see the module docstring).

    Each push puts the block at a random pose (its centroid uniform in [0.15, 0.362]^2 m,
    angle uniform), picks a random point on its outline (not within 5 mm of a corner) and
    drives the agent, from rest ``gap`` short of touching it there, along a line at
    ``max_angle`` or less to the face's inward normal, at a constant speed, for
    ``steps`` env steps; every action is the :func:`~softcontact.tasks.gym_pusht.pd_action`
    that puts the agent on the line at the end of the step.  Then, for ``hold`` more env
    steps, the agent is held at the line's end, against the block, as a controller's
    pusher rests between pushes: in the env the block stays put, and a model whose
    support lets it creep away from a resting pusher shows the creep as error.  The
    agent's centre stays within [0.045, 0.467] m on both axes.

    Parameters
    ----------
    n : int
        Number of pushes (>= 1).
    seed : int
        Seed (>= 0) of ``np.random.default_rng``.
    steps : int
        Env steps (0.1 s each) per push (>= 1).
    speed : (float, float)
        Range of the agent's speed, m/s (uniform), within [0.001, 0.5].
    max_angle : float
        Largest angle between the path and the face's inward normal, degrees, in
        [0, 60].
    gap : (float, float)
        Range of the agent's start's distance (m) from the face, along the face's normal,
        within [0, 0.05] (it travels ``gap / cos(angle)`` before touching).
    hold : int
        Env steps (>= 0) with the agent held at the path's end after the push.
    damping, block_cog
        As :func:`~softcontact.tasks.gym_pusht.make_env`.

    Returns
    -------
    list of Push

    Raises
    ------
    TypeError
        A non-integer ``n``, ``seed``, ``steps`` or ``hold``, or non-real ``speed``,
        ``max_angle`` or ``gap``.
    ValueError
        ``n`` or ``steps`` < 1, a negative ``seed`` or ``hold``, or a range not within its
        bounds.
    """
    n = as_int(n, "n", lo=1)
    seed = as_int(seed, "seed", lo=0)
    steps = as_int(steps, "steps", lo=1)
    hold = as_int(hold, "hold", lo=0)
    speed_range = _as_pair(speed, "speed", 1e-3, 0.5)
    max_angle = as_positive_float(max_angle, "max_angle", allow_zero=True)
    if max_angle > 60:
        raise ValueError(f"max_angle must be in [0, 60] degrees, got {max_angle!r}")
    gap_range = tuple(v / PX for v in _as_pair(gap, "gap", 0.0, 0.05))
    task = make_task()
    rng = np.random.default_rng(seed)
    env = make_env(damping, block_cog)
    try:
        out = []
        for _ in range(n):
            pose, start, direction, speed = _plan(
                rng, task, speed_range, math.radians(max_angle), gap_range, steps
            )
            out.append(_log_push(env, task, pose, start, direction, speed, steps, hold))
    finally:
        env.close()
    return out


def _as_pushes(pushes, name="pushes") -> list[Push]:
    if isinstance(pushes, Push):
        raise TypeError(f"{name} must be a sequence of Push, got a single Push")
    if not isinstance(pushes, Sequence) or isinstance(pushes, str):
        raise TypeError(f"{name} must be a sequence of Push, got {type(pushes).__name__}")
    if len(pushes) == 0:
        raise ValueError(f"{name} must hold at least one Push")
    for k, p in enumerate(pushes):
        if not isinstance(p, Push):
            raise TypeError(f"{name}[{k}] must be a Push, got {type(p).__name__}")
    return list(pushes)


def _as_task(task) -> push_t.PushT:
    if not isinstance(task, push_t.PushT):
        raise TypeError(f"task must be a push_t.PushT (from make_task), got {type(task).__name__}")
    if not math.isclose(task.dt, SUBSTEP_DT):
        raise ValueError(f"task must step at the env's substep dt = {SUBSTEP_DT} s, got {task.dt}")
    return task


def _rms(a) -> float:
    return float(np.sqrt(np.mean(np.square(a))))


def _wrapped(a) -> np.ndarray:
    return np.mod(np.asarray(a) + math.pi, 2 * math.pi) - math.pi


def _one_step_starts(p: Push) -> np.ndarray:
    """The model states (steps, 12) at each env step of ``p``: the observed T at rest,
    the agent's position and velocity."""
    X = np.zeros((p.steps, 12))
    X[0, :3] = p.x0[:3]
    X[1:, :3] = p.observed[:-1]
    X[:, 3:5] = p.pusher[:-1]
    X[:, 9:11] = p.pusher_velocity[:-1]
    return X


def _rollout_states(model, x0, U) -> np.ndarray:
    ro = model.rollout(x0, U)
    status = np.asarray(ro.status).reshape(-1)
    if np.any(status != 0):
        raise RuntimeError(f"the model's rollout failed (status {status[status != 0][0]})")
    return np.asarray(ro.states)


def prediction_errors(task, pushes) -> PredictionErrors:
    """RMS errors of ``task.model``'s predictions of the T's pose on logged pushes.

    Parameters
    ----------
    task : push_t.PushT
        The model (from :func:`~softcontact.tasks.gym_pusht.make_task`; its ``dt`` must
        be the env's substep, 0.01 s).
    pushes : sequence of Push
        From :func:`scripted_pushes`.

    Returns
    -------
    PredictionErrors
        One-step errors (each env step predicted from the observed state: the T at rest
        at its observed pose, the agent at its position and velocity) and open-loop
        errors (each push rolled out from its ``x0``): positions in mm, angles in
        degrees.

    Raises
    ------
    TypeError
        ``task`` not a :class:`push_t.PushT`, or ``pushes`` not a sequence of
        :class:`Push`.
    ValueError
        ``pushes`` empty, or ``task.dt`` not 0.01 s.
    """
    task = _as_task(task)
    pushes = _as_pushes(pushes)
    model = task.model
    one, full, last = [], [], []
    for p in pushes:
        starts = _one_step_starts(p)
        Useg = p.U.reshape(p.steps, SUBSTEPS, 3)
        X1 = _rollout_states(model, starts, Useg)[:, -1, :3]
        one.append(X1 - p.observed)
        X = _rollout_states(model, p.x0, p.U)[SUBSTEPS::SUBSTEPS, :3]
        full.append(X - p.observed)
        last.append(full[-1][-1])
    e_one, e_full, e_last = (np.concatenate(a).reshape(-1, 3) for a in (one, full, last))

    def pos(e):
        return 1e3 * math.sqrt(float(np.mean(np.sum(np.square(e[:, :2]), axis=1))))

    def ang(e):
        return math.degrees(_rms(_wrapped(e[:, 2])))

    return PredictionErrors(
        pos(e_one), ang(e_one), pos(e_full), ang(e_full), pos(e_last), ang(e_last)
    )


class _Problem:
    """Weighted residuals of the T's observed poses at every env step of the pushes'
    open-loop rollouts, and their Jacobian with respect to the fitted parameters."""

    def __init__(self, pushes, names, fixed):
        self.pushes = pushes
        self.names = tuple(names)
        self.fixed = dict(fixed)
        self.model_names = [m for k in self.names for m in FIT_NAMES[k]]
        self.groups = [len(FIT_NAMES[k]) for k in self.names]
        self.w = np.array([1.0, 1.0, ANGLE_SCALE])
        self._key = None
        self._val = None

    def task(self, p) -> push_t.PushT:
        return make_task(**{**self.fixed, **dict(zip(self.names, map(float, p), strict=True))})

    def evaluate(self, p):
        p = np.asarray(p, dtype=float)
        key = p.tobytes()
        if key != self._key:
            model = self.task(p).model
            full = np.repeat(p, self.groups)
            rs, Js = [], []
            for push in self.pushes:
                T = len(push.U)
                obs = np.zeros((T, 6))  # the pusher's columns are parameter free
                obs[SUBSTEPS - 1 :: SUBSTEPS, :3] = push.observed
                r, J = trajectory_residuals(
                    lambda q, model=model: model, self.model_names, full, push.x0, push.U, obs
                )
                r = r.reshape(T, 6)[SUBSTEPS - 1 :: SUBSTEPS, :3] * self.w
                J = J.reshape(T, 6, -1)[SUBSTEPS - 1 :: SUBSTEPS, :3] * self.w[:, None]
                # tied parameters: sum the columns of each group
                J = np.add.reduceat(J, np.cumsum([0, *self.groups[:-1]]), axis=-1)
                rs.append(r.reshape(-1))
                Js.append(J.reshape(-1, len(self.names)))
            self._key, self._val = key, (np.concatenate(rs), np.concatenate(Js))
        return self._val


def _as_names(names) -> tuple[str, ...]:
    if isinstance(names, str):
        names = (names,)
    if not isinstance(names, Sequence) or not names:
        raise TypeError(f"names must be a non-empty sequence of str, got {names!r}")
    for k in names:
        if not isinstance(k, str):
            raise TypeError(f"names must hold str, got {type(k).__name__}")
        if k not in FIT_NAMES:
            raise ValueError(f"names: unknown parameter {k!r}; fittable: {list(FIT_NAMES)}")
    if len(set(names)) != len(names):
        raise ValueError(f"names must be distinct, got {list(names)}")
    return tuple(names)


def _as_scan(scan) -> tuple[str, np.ndarray] | None:
    if scan is None:
        return None
    if not isinstance(scan, Mapping) or len(scan) != 1:
        raise TypeError(
            "scan must be a mapping of one name ('support_radius' or "
            f"'support_slip_velocity') to its values, got {scan!r}"
        )
    ((name, values),) = scan.items()
    if name not in ("support_radius", "support_slip_velocity"):
        raise ValueError(
            f"scan: {name!r} cannot be scanned; scan 'support_radius' or 'support_slip_velocity'"
        )
    v = as_float_array(values, f"scan[{name!r}]")
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise ValueError(f"scan[{name!r}] must be a non-empty list of values > 0, got {values!r}")
    return name, v.astype(float)


def identify(
    pushes,
    names=("support_friction", "stiffness"),
    *,
    guess=None,
    scan=None,
    held_out=None,
    max_nfev=30,
    verbose=False,
) -> IdentificationResult:
    """Fit the model's parameters to the open-loop rollouts of logged pushes.

    Minimizes the sum of squares of the T's pose errors at every env step of every
    push's open-loop rollout (angles times :data:`ANGLE_SCALE`) with
    ``scipy.optimize.least_squares`` (trust-region reflective within :data:`BOUNDS`,
    analytic Jacobians).  With ``scan``, the fit runs for every value of the scanned
    build parameter, each from ``guess``, and the value of least cost is kept.

    Parameters
    ----------
    pushes : sequence of Push
        The pushes to fit (:func:`scripted_pushes`).
    names : sequence of str
        Fitted parameters, keys of :data:`FIT_NAMES`.
    guess : mapping, optional
        :func:`~softcontact.tasks.gym_pusht.make_task` overrides of the starting model
        (default: none, :data:`~softcontact.tasks.gym_pusht.PARAMETERS`); the fitted
        parameters start from their values in it, the others stay fixed.
    scan : mapping, optional
        ``{"support_radius": values}`` or ``{"support_slip_velocity": values}`` (m, m/s).
    held_out : sequence of Push, optional
        Pushes not fitted, on which the result's ``held_out_*`` errors are measured.
    max_nfev : int
        Evaluation budget of each ``least_squares`` (>= 1).
    verbose : bool
        Print a line per fit.

    Returns
    -------
    IdentificationResult

    Raises
    ------
    TypeError
        ``pushes`` or ``held_out`` not sequences of :class:`Push`, ``names`` not strings,
        ``guess`` not a mapping, ``scan`` not a one-entry mapping, a non-integer
        ``max_nfev`` or a non-bool ``verbose``.
    ValueError
        Empty ``pushes``, unknown or repeated ``names``, a fitted ``guess`` outside
        :data:`BOUNDS`, an unknown scan parameter or bad scan values, ``max_nfev`` < 1.
    """
    least_squares = require("scipy.optimize", "optimize", "gym_pusht.sysid").least_squares

    pushes = _as_pushes(pushes)
    held = None if held_out is None else _as_pushes(held_out, "held_out")
    names = _as_names(names)
    if guess is None:
        guess = {}
    if not isinstance(guess, Mapping):
        raise TypeError(f"guess must be a mapping of make_task overrides, got {guess!r}")
    base = {**PARAMETERS, **guess}
    push_t.make(**base)  # validates the overrides (TypeError / ValueError naming them)
    defaults = {**push_t.PARAMETERS, **base}
    p0 = np.array([float(defaults[k]) for k in names])
    lo = np.array([BOUNDS[k][0] for k in names])
    hi = np.array([BOUNDS[k][1] for k in names])
    for k, v, a, b in zip(names, p0, lo, hi, strict=True):
        if not a <= v <= b:
            raise ValueError(f"guess: {k} must be within [{a}, {b}] (BOUNDS), got {v!r}")
    scanned = _as_scan(scan)
    max_nfev = as_int(max_nfev, "max_nfev", lo=1)
    if not isinstance(verbose, (bool, np.bool_)):
        raise TypeError(f"verbose must be a bool, got {type(verbose).__name__}")

    t0 = time.perf_counter()
    scan_name = "" if scanned is None else scanned[0]
    values: list[float | None] = [None] if scanned is None else [float(v) for v in scanned[1]]
    best = None
    nfev = 0
    costs = []
    for v in values:
        fixed = dict(base) if v is None else {**base, scan_name: v}
        prob = _Problem(pushes, names, fixed)
        fit = least_squares(
            lambda p, prob=prob: prob.evaluate(p)[0],
            np.clip(p0, lo, hi),
            jac=lambda p, prob=prob: prob.evaluate(p)[1],
            bounds=(lo, hi),
            x_scale=np.maximum(np.abs(p0), 1e-3),
            method="trf",
            max_nfev=max_nfev,
        )
        nfev += int(fit.nfev)
        costs.append(float(fit.cost))
        if verbose:
            label = "" if v is None else f"{scan_name} = {v:.6g}: "
            print(
                f"{label}{fit.nfev} evaluations, cost {fit.cost:.4g}, "
                + ", ".join(f"{k} = {x:.6g}" for k, x in zip(names, fit.x, strict=True))
            )
        if best is None or fit.cost < best[0]:
            best = (float(fit.cost), fixed, fit.x)
    assert best is not None  # values holds one entry at least
    cost, fixed, x = best
    overrides = {**fixed, **{k: float(val) for k, val in zip(names, x, strict=True)}}
    keys = list(names) + ([] if scanned is None else [scan_name])
    initial = {k: float(defaults[k]) for k in keys}
    estimate = {k: float(overrides[k]) for k in keys}
    changed = {k: overrides[k] for k in keys}
    t_before, t_after = make_task(**guess), make_task(**{**guess, **changed})
    wall = time.perf_counter() - t0
    return IdentificationResult(
        names=names,
        initial=initial,
        estimate=estimate,
        overrides={**guess, **changed},
        scan=tuple(zip(values, costs, strict=True)) if scanned else (),
        cost=cost,
        nfev=nfev,
        wall=wall,
        before=prediction_errors(t_before, pushes),
        after=prediction_errors(t_after, pushes),
        held_out_before=None if held is None else prediction_errors(t_before, held),
        held_out_after=None if held is None else prediction_errors(t_after, held),
    )
