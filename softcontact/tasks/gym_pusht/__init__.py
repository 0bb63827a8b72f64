"""The push-T environment of Diffusion Policy and LeRobot (``gym-pusht``), solved by
model-predictive control on a softcontact model.

``gym-pusht`` (PyPI; ``pip install "softcontact[gym]"``) simulates push-T with pymunk:
a T-shaped block on a 512 x 512 px table, pushed by a disk of radius 15 px whose action
is a *target position* tracked by a PD law.  This module connects it to
:mod:`softcontact.tasks.push_t`:

**Frames and units** (:func:`model_pose`, :func:`env_pose`).  1 px = 1 mm.  The env's
block pose is the midpoint of the bar's outer edge with the stem along the body's +y;
the model's pose is the T's area centroid with the stem along -y.  So the model's angle is
the env's + pi and its position is the env's shifted by :data:`CENTROID_OFFSET`
(40.714 mm) along the env body's +y.  The env's goal (256, 256, pi/4) px is :data:`GOAL`
= (0.2272, 0.2848, -3 pi/4) in the model.  Coverage agrees exactly: both are polygon
intersections of the same T (the tests check it against the env's own).

**The env's physics**, which the model's parameters (:data:`PARAMETERS`) express:

- the space's damping is 0, so pymunk zeroes the block's velocity every 10 ms substep:
  the block moves only while pushed, by the pusher's displacement, not its speed.  The
  model carries a heavy table friction (``support_friction``), smooth below
  ``support_slip_velocity`` = 0.05 m/s, so that its T, too, stops within a few ms of
  being released;
- which way a push moves and turns the block is set by its inertia about its centre of
  gravity: mass 1 and moment 3000 px^2 (the bar's counted twice), radius of gyration
  54.8 px, about (0, 45) px, not the area centroid (0, 40.7).  The model spreads its
  table support on a ring about that point (``support_x``, ``support_y``): a support on
  a ring of radius rho resists rotation against translation as a body whose radius of
  gyration is about rho does (exactly so where the friction is viscous);
- ``body.friction = 1`` is an attribute pymunk ignores: every contact is frictionless
  (``friction`` = ``wall_friction`` = 0);
- the walls are segments of radius 2 px at 5 and 506 px: inner faces at 7 and 504 px
  (``wall_inset`` 7 mm; the model's walls are symmetric, the far ones 1 mm too far out).

**Identification** (:mod:`~softcontact.tasks.gym_pusht.sysid`).  ``support_radius``
(65 mm), ``support_slip_velocity`` and ``support_friction`` (0.735) are fitted to 20
scripted pushes logged from the env (``sysid.identify(sysid.scripted_pushes(20, seed=0),
names=("support_friction",), scan={"support_radius": ...})``, the slip velocity from a
scan of 0.01-0.1 m/s).  On 10 held-out pushes (``scripted_pushes(10, seed=1)``, 1 s
each at 0.05-0.3 m/s) the model's RMS errors with the ring at the radius of gyration
(friction 0.35, slip velocity 0.02 m/s) and with the identified values are: one step
(0.1 s) 1.12 mm / 1.93 deg and 1.34 mm / 0.54 deg; 1 s open loop 6.42 mm / 6.75 deg and
3.80 mm / 1.42 deg.  The one-step position error grows a little; every other error falls.

**The planner's models** (:data:`PLANNING`, :data:`NEAR`).  Below its slip velocity the
support's friction is viscous, so a model T creeps away from a pusher that rests against
it, however lightly, while the env's block does not move at all.  With the identified
slip velocity (0.05 m/s) the planner exploits that creep near the goal: it holds the
pusher still beside the T, predicting the T will creep into place, and the env's block
stays where it is (coverage stalls at 0.91-0.98).  The planning model
(``make_task(**PLANNING)``) lowers the slip velocity to 0.005 m/s.  Measured on the held
steps of 10 held-out pushes that end with the agent held against the block
(``sysid.scripted_pushes(10, seed=1, hold=5)``; 24 steps with the agent within 2 mm of
the block, whose pose does not change in the env): the predicted creep per env step is
0.67 mm / 0.30 deg on average (1.18 mm / 0.57 deg at most) with the identified model and
0.11 mm / 0.05 deg (0.20 mm / 0.11 deg) with the planning model.  The price is in the
pushes themselves: on the same held-out pushes without holds, the planning model's errors
are one step 2.60 mm / 1.02 deg and 1 s open loop 5.83 mm / 3.45 deg (identified:
1.34 mm / 0.54 deg and 3.80 mm / 1.42 deg).  A least-squares fit of the slip velocity to
pushes with holds still prefers 0.05 m/s: the pushes' errors outweigh the holds'.

:class:`Controller` therefore uses each model where it is right: it *approaches* the goal
on the identified model, with 0.4 s horizons and pushes up to 16 cm (:data:`APPROACH`),
and from the first time the T is within 8 mm and 5 degrees of the goal (:data:`NEAR`),
or has stayed within 5 mm and 5 degrees of one pose for 10 env steps (a plan that counts
on the T creeping along a wall), *places* it on the planning model for the rest of the
episode.  With :data:`SETTINGS`
and a fixed iteration budget (``deadline=None``), seeds 0-39 reaching the env's 0.95:
39 of 40 on the identified model alone (median 31 env steps, of those that do), 40 of 40
on the planning model alone (median 38.5) and 40 of 40 with approach and placement
(median 29.5); seeds 0-19 reaching 0.98: 6, 20 (median 48.5) and 20 of 20 (median 46).
With the 25 ms deadline, seeds 0-319 and 320-639 (one process per episode, 2 at a
time): median (mean) steps to success 32 (33.0) and 33 (34.4) with the planning model
alone, 30 (31.0) and 30 (31.6) with approach and placement (320 of 320 each).

**Actions** (:func:`pd_action`).  The env runs 10 substeps of 10 ms per action, each
``v += (k_p (a - p) - k_v v) dt`` then ``p += v dt`` (k_p = 100, k_v = 20).  The agent's
position after the 10 substeps is affine in the action ``a``; :func:`pd_action` inverts
it, so the pusher lands exactly where the plan puts it after 0.1 s (without the inversion
the agent covers only ~30 % of the way per step from rest).

**Control** (:class:`Controller`).  Every env step (0.1 s) the controller maps the
observation to a model state (the T's pose, the agent's position and velocity; the T's
velocity from the identified momentum below, at rest in the env as shipped), runs one
tick of :class:`softcontact.tasks.push_t.mpc.Controller` on the approach's or the
placement's model -- push selection by batched rollouts of the 12 candidate pushes with
the best quasi-static estimates, then refinement by Gauss-Newton iLQR with exact step
derivatives (``"ddp"``) or by predictive sampling (``"sampling"``) within a per-decision
deadline (25 ms by default) -- and returns the action that puts the pusher where the
plan has it 0.1 s later.  iLQR's backward pass and closed-loop rollouts run in C, so
that a 30-step iteration takes ~6 ms and the deadline is met; a round of 128 sampled
rollouts takes longer than 25 ms, so the sampling baseline's decisions overrun it.

**Momentum, identified online** (:class:`MomentumEstimator`).  The same controller runs
every env variant.  From the episode's own observations it estimates which fraction of
its velocity the block keeps over an env step while nothing touches it (least squares
over successive displacements of free steps).  Below :data:`MOMENTUM_THRESHOLD` (the env
as shipped: 0) it plans as above.  Above it (the env with ``damping`` 0.5 keeps 0.933) it
plans on the model of :func:`momentum_parameters` -- a viscous table that lets the T coast
at that decay, the env's inertia -- with the T's velocity estimated from its last
displacement, gentler pushes (effort weight 0.02), the objective's final pose taken where
the T will come to rest (the planner's ``coast``), and the pusher holding still instead of
repositioning while the T coasts.  The identification is accurate (tests: 0.933 found to
0.01, the velocity to 5 %); the model is not: pymunk's rigid, inelastic impacts against
the soft contact leave 1 s open-loop errors of ~14-18 mm and ~8-13 deg after pushes, and
the env with momentum is not solved yet (the benchmark page's damping row).  The plans,
not the identification, fail: with the decay given from the first step (0.933, a fixed
iteration budget), 0 of seeds 0-19 succeed (mean max coverage 0.46); their pushes move
the pusher at up to 0.7 m/s, and the block leaves them at 0.3-0.4 m/s to glide ~1.4 s
times that speed.

**Episodes** (:func:`run_episode`, :func:`evaluate`): seeded resets (``reset(seed=...)``),
300 env steps, success when the env's coverage exceeds the threshold (0.95 as in the
env), with observation noise and the env's ``damping`` and ``block_cog`` variants;
:func:`evaluate` runs many seeds on a ``dask.distributed`` cluster (a
``LocalCluster`` of this machine's cores unless given a scheduler address).  The
command ``python -m softcontact gym-pusht`` wraps it.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import logging
import math
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..._optional import require
from ..._validate import as_int, as_positive_float
from .. import push_t
from ..push_t import mpc

logger = logging.getLogger(__name__)

__all__ = [
    "PX",
    "CENTROID_OFFSET",
    "ENV_GOAL",
    "GOAL",
    "PARAMETERS",
    "PLANNING",
    "SETTINGS",
    "NEAR",
    "APPROACH",
    "DEADLINE",
    "COARSE",
    "CONTROLLERS",
    "MOMENTUM_THRESHOLD",
    "momentum_parameters",
    "MomentumEstimator",
    "K_P",
    "K_V",
    "SUBSTEPS",
    "SUBSTEP_DT",
    "EPISODE_STEPS",
    "model_pose",
    "env_pose",
    "pd_action",
    "make_env",
    "make_task",
    "Controller",
    "Episode",
    "Evaluation",
    "run_episode",
    "evaluate",
    "write_gif",
]

#: Metres per env unit (pixel).
PX = 1e-3
#: Distance from the env's block origin (the bar's outer edge) to the T's area centroid
#: along the env body's +y, m: (3600 x 15 + 2700 x 75) / 6300 px.
CENTROID_OFFSET = (3600 * 15 + 2700 * 75) / 6300 * PX
#: The env's goal pose (px, px, rad).
ENV_GOAL = (256.0, 256.0, math.pi / 4)
#: The PD gains of the env's agent and its substeps per action.
K_P, K_V = 100.0, 20.0
SUBSTEPS = 10
SUBSTEP_DT = 0.01
#: Env steps of an episode.
EPISODE_STEPS = 300
#: The env's centre of gravity of the block in its body frame, px.
_ENV_COG = (0.0, 45.0)
#: Radius of gyration of the env's block, m: sqrt(3000 px^2 / 1).
_GYRATION = math.sqrt(3000.0) * PX


def model_pose(block_pose) -> np.ndarray:
    """The model's T pose (..., 3) (m, m, rad) of the env's block pose (..., 3) (px, px,
    rad): the area centroid, angle + pi (wrapped to [-pi, pi))."""
    q = np.asarray(block_pose, dtype=float)
    if q.shape[-1:] != (3,):
        raise ValueError(f"block_pose must have shape (..., 3), got {q.shape}")
    a = q[..., 2]
    out = np.empty(q.shape)
    out[..., 0] = q[..., 0] * PX - np.sin(a) * CENTROID_OFFSET
    out[..., 1] = q[..., 1] * PX + np.cos(a) * CENTROID_OFFSET
    out[..., 2] = np.mod(a, 2 * math.pi) - math.pi  # a + pi, wrapped
    return out


def env_pose(pose) -> np.ndarray:
    """Inverse of :func:`model_pose`: the env's block pose (..., 3) (px, px, rad in
    [0, 2 pi)) of the model's T pose (..., 3)."""
    q = np.asarray(pose, dtype=float)
    if q.shape[-1:] != (3,):
        raise ValueError(f"pose must have shape (..., 3), got {q.shape}")
    a = np.mod(q[..., 2] + math.pi, 2 * math.pi)
    out = np.empty(q.shape)
    out[..., 0] = (q[..., 0] + np.sin(a) * CENTROID_OFFSET) / PX
    out[..., 1] = (q[..., 1] - np.cos(a) * CENTROID_OFFSET) / PX
    out[..., 2] = a
    return out


#: The goal of the env in the model's frame, (0.2272, 0.2848, -3 pi/4).
GOAL = tuple(float(v) for v in model_pose(ENV_GOAL))

#: :func:`softcontact.tasks.push_t.make` overrides of the model of the env (see the
#: module docstring for each one's reason).
PARAMETERS: dict[str, float] = {
    "dt": 0.01,
    "mass": 1.0,
    "friction": 0.0,
    "wall_friction": 0.0,
    "support_friction": 0.735,
    "support_slip_velocity": 0.05,
    "support_radius": 0.065,
    "support_x": 0.0,
    "support_y": -(_ENV_COG[1] * PX - CENTROID_OFFSET),  # the stem points to -y
    "wall_inset": 0.007,
    "u_max": 1.0,
}

#: :data:`PARAMETERS` overrides of the planner's model (:class:`Controller`'s default
#: task, ``make_task(**PLANNING)``): a support slip velocity ten times lower than the
#: identified one, so that the T, like the env's block, stays (nearly) put beside a
#: pusher that rests against it (see the module docstring, "The planner's model").
PLANNING: dict[str, float] = {"support_slip_velocity": 0.005}

#: The per-decision deadline of :class:`Controller` and :func:`run_episode` (s): the hard
#: real-time budget of one decision at the env's 10 Hz.
DEADLINE = 0.025

#: :class:`softcontact.tasks.push_t.mpc.Controller` settings of :class:`Controller`:
#: 0.3 s horizons of 10 ms steps, one env step per tick, a 10 mm resting standoff, moves
#: at ``u_max`` (1 m/s) and candidate pushes from 11 mm (1 mm past touching: the final
#: millimetres of a precise placement) to 12 cm long (the env's block moves only while
#: pushed, by the pusher's displacement, so speed costs no precision there), the 12
#: pushes of the best quasi-static estimates rolled out per selection (:data:`COARSE`).
SETTINGS: dict[str, Any] = {
    "horizon": 30,
    "block": 1,
    "replan": 10,
    "iterations": 5,
    "standoff": 0.01,
    "push_distances": (0.011, 0.013, 0.016, 0.025, 0.06, 0.12),  # from the standoff point
    "num_threads": 1,
    "move_speed": 1.0,
    "select_top": 12,
}
#: The T's position (m) and angle (rad) errors within which :class:`Controller` places it
#: on the planning model (:data:`PLANNING`) after approaching on the identified one.
NEAR = (0.008, math.radians(5.0))
#: Env steps in which the T moving less than :data:`_STUCK_MOTION` ends the approach: a
#: plan counting on a creep (against a wall) that the env's block never makes.
_STUCK_STEPS = 10
#: The T's motion (m, and rad) below which it has not moved, observation noise included.
_STUCK_MOTION = (0.005, math.radians(5.0))
#: :data:`SETTINGS` overrides of :class:`Controller`'s approach: 0.4 s horizons and
#: pushes up to 16 cm.
APPROACH: dict[str, Any] = {
    "horizon": 40,
    "push_distances": (*SETTINGS["push_distances"], 0.16),
}
#: :data:`PARAMETERS` overrides of the coarser model that scores candidate pushes: 8 mm
#: sample spacing (71 samples on the T, 12 on the pusher) and a matching smoothing length
#: (``eps`` = spacing^2).  With 3 push lengths, scoring all of a state's candidate pushes
#: (~14 contact points x 3) on it took 31 ms (median of 30 seeded starts; 46 ms at most) on
#: one core here, and it picked the same best push as a 6 mm model from each of those starts.
#: :data:`SETTINGS` rolls out only the 12 pushes of the best quasi-static estimates
#: (``select_top``): over the 261 selections of seeds 20-27 (a fixed iteration budget),
#: the best of all pushes was among those 12 in 257 (among the best 3 in 95 %).
COARSE = {"spacing": 0.008, "pusher_spacing": 0.008, "eps": 6.4e-5}
#: Refinement of each :class:`Controller` kind: the planner's ``method``.
CONTROLLERS = {"ddp": "ilqr", "sampling": "sampling"}
#: Identified decays of the block's free velocity per env step below this mean an env
#: without momentum (its default, damping 0, zeroes the velocity every substep): the
#: controller then plans on :data:`PARAMETERS`' model, the block at rest.
MOMENTUM_THRESHOLD = 0.3
#: Identified decay rates are rounded to this step of their logarithm: one model per value.
_RATE_STEP = 0.1
#: The support's slip velocity of a model with momentum (m/s): far above the block's
#: speeds, so that the support acts as a viscous damper of rate support_friction g / v_s.
_VISCOUS_SLIP = 5.0
#: Block speed (m/s, its turning's included at the radius of gyration) above which a
#: repositioning move is planned again each env step.
_MOVING = 0.01
#: The planner's control effort weight with momentum: pushes gentle enough to place a
#: coasting block.
_MOMENTUM_EFFORT = 0.02
#: Pairs of free steps after which the identified momentum's model is kept.
_SETTLED = 8
#: Gravity of the model's support (m/s^2).
_G = 9.81


def _pair(v, name, what, *, allow_zero=False) -> tuple[float, float]:
    """The two floats of the pair ``v`` (each > 0, or >= 0 with ``allow_zero``);
    ValueError naming ``name`` and saying it must be ``what`` otherwise."""
    try:
        pair = tuple(v) if not isinstance(v, str) else ()
    except TypeError:
        pair = ()
    if len(pair) != 2:
        raise ValueError(f"{name} must be {what}, got {v!r}")
    a, b = (as_positive_float(x, name, allow_zero=allow_zero) for x in pair)
    return a, b


def _pose_gap(pose, ref) -> tuple[float, float]:
    """The distance (m) and the angle (rad, in [0, pi]) between two model poses."""
    e = np.asarray(pose, dtype=float) - np.asarray(ref, dtype=float)
    return math.hypot(e[0], e[1]), abs((e[2] + math.pi) % (2 * math.pi) - math.pi)


def _pd_coefficients() -> tuple[float, float, float]:
    """``(A, B, C)`` with the agent's position after one env step ``A p + B v + C a``."""

    def run(p, v, a):
        for _ in range(SUBSTEPS):
            v = v + (K_P * (a - p) - K_V * v) * SUBSTEP_DT
            p = p + v * SUBSTEP_DT
        return p

    return run(1.0, 0.0, 0.0), run(0.0, 1.0, 0.0), run(0.0, 0.0, 1.0)


_PD = _pd_coefficients()


def pd_action(target, position, velocity) -> np.ndarray:
    """The action (px) after which the env's agent, now at ``position`` (px) moving at
    ``velocity`` (px/s), is at ``target`` (px): the exact inverse of the env's PD
    tracking over its 10 substeps (each ``(2,)`` or broadcastable)."""
    A, B, C = _PD
    t, p, v = (np.asarray(a, dtype=float) for a in (target, position, velocity))
    return (t - A * p - B * v) / C


def make_env(damping=None, block_cog=None):
    """A ``gym_pusht`` ``PushTEnv`` with state observations; ``damping`` (the pymunk
    space's, default 0: no momentum) and ``block_cog`` ((x, y) px in the block's frame,
    default (0, 45)) as the env takes them."""
    envs = require("gym_pusht.envs.pusht", "gym", "softcontact.tasks.gym_pusht")
    return envs.PushTEnv(obs_type="state", damping=damping, block_cog=block_cog)


def make_task(**overrides) -> push_t.PushT:
    """The model of the env: :func:`push_t.make` with :data:`PARAMETERS` (each
    overridable) and the env's goal."""
    return push_t.make(goal=GOAL, **{**PARAMETERS, **overrides})


def momentum_parameters(decay) -> dict[str, float]:
    """:func:`make_task` overrides for an env in which the block keeps the fraction
    ``decay`` (in (0, 1)) of its velocity over each env step (0.1 s) while nothing
    touches it: pymunk's space ``damping`` d gives ``decay = d^0.1`` (0.933 for d = 0.5),
    and the planner's ``coast`` (:class:`~softcontact.tasks.push_t.mpc.Controller`): the
    final pose is scored where the block will come to rest, ``1 / lambda`` s on.

    The support becomes a viscous damper of rate ``lambda = -ln(decay) / 0.1 s``
    (``support_friction = lambda v_s / g`` with a slip velocity ``v_s`` of 5 m/s, far
    above the block's speeds) on a ring of radius the env's radius of gyration about
    its centre of gravity, so that turning decays at the same rate as sliding, as in
    pymunk; the block's inertia is the env's (3000 px^2 about the centre of gravity,
    radius of gyration 54.9 mm about the centroid)."""
    d = as_positive_float(decay, "decay")
    if d >= 1.0:
        raise ValueError(f"decay must be in (0, 1), got {decay!r}")
    rate = -math.log(d) / (SUBSTEPS * SUBSTEP_DT)
    offset = _ENV_COG[1] * PX - CENTROID_OFFSET  # centre of gravity from the centroid
    return {
        "support_x": 0.0,
        "support_y": -offset,  # the env's centre of gravity (the stem points to -y)
        "support_slip_velocity": _VISCOUS_SLIP,
        "support_friction": rate * _VISCOUS_SLIP / _G,
        "support_radius": _GYRATION,
        "gyration": math.sqrt(_GYRATION**2 + offset**2),
    }


def _coast(decay) -> float:
    """``1 / lambda`` (s) of a block keeping ``decay`` of its velocity per env step."""
    return SUBSTEPS * SUBSTEP_DT / -math.log(decay)


class MomentumEstimator:
    """Online identification of the block's momentum from an episode's own transitions.

    Each :meth:`update` takes the observed block pose (model frame) and pusher position
    after an env step.  A step is *free* if the pusher stayed clear of the block (its path
    at least its radius + ``margin`` from the block at both ends of the step) and the
    block stayed ``margin`` clear of the walls: the block then only coasts, so over two
    successive free steps its displacement over the second is its displacement over the
    first times the decay of its velocity.  The decay is the least-squares ratio of those
    displacements (``(dx, dy, dtheta rho)``, ``rho`` the block's radius of gyration), over
    the pairs whose first displacement exceeds ``min_motion``; it is reported
    (:attr:`decay`) once ``min_pairs`` such pairs are seen, 0 before (the env's default:
    no momentum).  Observation noise biases it down (successive displacements share an
    observation), never up.

    :attr:`velocity` is the block's velocity (vx, vy, omega) at the last observation
    implied by the decay and the last displacement: the displacement over a step of a
    coasting block whose velocity decays as ``exp(-lambda t)`` is ``v_end (1 - decay) /
    (lambda decay)``; 0 below :data:`MOMENTUM_THRESHOLD`.
    """

    def __init__(self, task, *, margin=0.004, min_motion=0.003, min_pairs=2) -> None:
        if not isinstance(task, push_t.PushT):
            raise TypeError(f"task must be a push_t.PushT, got {type(task).__name__}")
        self.task = task
        self.radius = float(task.pusher_radius)
        self.margin = as_positive_float(margin, "margin", allow_zero=True)
        self.min_motion = as_positive_float(min_motion, "min_motion")
        self.min_pairs = as_int(min_pairs, "min_pairs", 1)
        self.reset()

    def reset(self) -> None:
        """Forget the episode."""
        self._last: tuple | None = None  # (pose, pusher)
        self._delta: np.ndarray | None = None  # the last step's displacement
        self._delta_free = False  # whether that step was free
        self._num = self._den = 0.0
        self.pairs = 0

    def _weighted(self, d):
        return np.array([d[0], d[1], d[2] * _GYRATION])

    def update(self, pose, pusher) -> None:
        """Record the block's ``pose`` (3,) (model frame) and the pusher's position (2,)
        observed after an env step."""
        pose = np.array(pose, dtype=float)
        pusher = np.array(pusher, dtype=float)
        if pose.shape != (3,) or pusher.shape != (2,):
            raise ValueError(
                f"pose must have shape (3,) and pusher (2,), got {pose.shape} and {pusher.shape}"
            )
        if not (np.all(np.isfinite(pose)) and np.all(np.isfinite(pusher))):
            raise ValueError("pose and pusher must be finite")
        if self._last is not None:
            p0, a0 = self._last
            d = pose - p0
            d[2] = (d[2] + math.pi) % (2 * math.pi) - math.pi
            free = self._free(p0, pose, a0, pusher)
            if free and self._delta_free:
                w0 = self._weighted(self._delta)
                if float(np.linalg.norm(w0)) > self.min_motion:
                    self._num += float(self._weighted(d) @ w0)
                    self._den += float(w0 @ w0)
                    self.pairs += 1
            self._delta, self._delta_free = d, free
        self._last = (pose, pusher)

    def _free(self, p0, p1, a0, a1) -> bool:
        shapely = require("shapely", "tasks", "gym_pusht.MomentumEstimator")
        path = shapely.LineString([a0, a1]) if np.any(a0 != a1) else shapely.Point(a0)
        clear = self.radius + self.margin
        inset = self.task.params.get("wall_inset", 0.0)
        lo, hi = inset + self.margin, self.task.workspace - inset - self.margin
        for p in (p0, p1):
            poly = self.task.t_polygon(p)
            b = poly.bounds
            if min(b[0], b[1]) < lo or max(b[2], b[3]) > hi or poly.distance(path) < clear:
                return False
        return True

    @property
    def decay(self) -> float:
        """The identified fraction of its velocity the block keeps over an env step, in
        [0, 0.99] (0 until ``min_pairs`` pairs are seen)."""
        if self.pairs < self.min_pairs or self._den <= 0:
            return 0.0
        return float(min(max(self._num / self._den, 0.0), 0.99))

    @property
    def velocity(self) -> np.ndarray:
        """The block's velocity (vx, vy, omega) (m/s, rad/s) at the last observation."""
        d = self.decay
        if d < MOMENTUM_THRESHOLD or self._delta is None:
            return np.zeros(3)
        T = SUBSTEPS * SUBSTEP_DT
        rate = -math.log(d) / T
        return self._delta * (rate * d / (1.0 - d))


@functools.lru_cache(maxsize=4)
def _coarse_model(params):
    """The model that scores candidate pushes for a task of parameters ``params``."""
    return push_t.make(goal=GOAL, **{**dict(params), **COARSE}).model


class Controller:
    """Plans with softcontact at the env's 10 Hz (see the module docstring).

    Without momentum, a T farther from the goal than ``near`` is *approached* on
    ``approach_task`` (the identified model, whose pushes it predicts best) with the
    longer horizons and pushes of :data:`APPROACH`, and from the first time it is within
    ``near``, or has not moved for 10 env steps, *placed* on ``task`` (the planning
    model, on which a pusher resting against the T does not move it) for the rest of the
    episode.

    Parameters
    ----------
    task : push_t.PushT, optional
        The model that places the T (default ``make_task(**PLANNING)``,
        :data:`PLANNING`); with momentum identified, the model of
        :func:`momentum_parameters` is built on its parameters.
    controller : {"ddp", "sampling"}
        Refinement by Gauss-Newton iLQR on the exact step derivatives, or predictive
        sampling (128 rollouts, 6 knots, on the coarse model of the push selection).
    deadline : float or None
        Wall-clock seconds per decision the planner aims for (push selection included);
        None: a fixed number of iterations, so that a repeated episode takes the same
        actions, bit for bit (its env coverage may differ in the last bits: the env
        orders the block's two polygons by memory address).
    approach_task : push_t.PushT, optional
        The model that approaches the goal (default ``make_task()``: :data:`PARAMETERS`).
    near : (float, float) or None
        Position (m) and angle (rad) errors to the goal within which placement starts
        (:data:`NEAR`: 8 mm and 5 degrees); None: ``task`` plans throughout.
    **settings
        :class:`~softcontact.tasks.push_t.mpc.Controller` settings over :data:`SETTINGS`
        (and :data:`APPROACH` in the approach), in both phases.

    Attributes
    ----------
    solve_times : list of float
        Wall time of each decision (:meth:`act`), s.
    planner : push_t.mpc.Controller
        The planner of the current decision: the approach's, the placement's, or once
        momentum is identified the one on :func:`momentum_parameters`' model.
    placing : bool
        Whether the placement has started (the T came within ``near`` or stopped).
    momentum : MomentumEstimator
        The episode's online identification of the block's momentum.
    """

    def __init__(
        self,
        task=None,
        controller="ddp",
        deadline=DEADLINE,
        *,
        approach_task=None,
        near=NEAR,
        **settings,
    ) -> None:
        if not isinstance(controller, str) or controller not in CONTROLLERS:
            raise ValueError(
                f"controller must be one of {', '.join(CONTROLLERS)}; got {controller!r}"
            )
        for name, t in (("task", task), ("approach_task", approach_task)):
            if t is not None and not isinstance(t, push_t.PushT):
                raise TypeError(f"{name} must be a push_t.PushT, got {type(t).__name__}")
        self.task = make_task(**PLANNING) if task is None else task
        self.near = None if near is None else _pair(near, "near", "a pair (m, rad) or None")
        self.approach_task = (
            None if self.near is None else (make_task() if approach_task is None else approach_task)
        )
        self.kind = controller
        common = {"method": CONTROLLERS[controller], "deadline": deadline}
        self._opts = {**SETTINGS, **common, **settings}
        self._approach_opts = {**SETTINGS, **APPROACH, **common, **settings}
        self._planners: dict[Any, mpc.Controller] = {}
        self.placing = self.near is None
        self._rest: tuple[np.ndarray | None, int] = (None, 0)  # the T's pose, steps there
        self.planner = self._planner(0.0)
        for p in (self.planner, self._planner(0.0, placing=True)):
            if not math.isclose(p.replan * p.task.dt, SUBSTEPS * SUBSTEP_DT):
                raise ValueError(
                    f"a tick (replan x dt = {p.replan} x {p.task.dt:g} s) must be one env "
                    f"step ({SUBSTEPS * SUBSTEP_DT:g} s)"
                )
        self.momentum = MomentumEstimator(self.task)
        self.solve_times: list[float] = []

    @staticmethod
    def _key(decay) -> float:
        """The model key of an identified ``decay``: 0 below :data:`MOMENTUM_THRESHOLD`,
        else the decay whose rate ``-ln(decay)`` is rounded to a grid of steps of 10 %."""
        if decay < MOMENTUM_THRESHOLD:
            return 0.0
        rate = math.exp(round(math.log(-math.log(decay)) / _RATE_STEP) * _RATE_STEP)
        return max(round(math.exp(-rate), 4), MOMENTUM_THRESHOLD)

    def _planner(self, decay, placing=None) -> mpc.Controller:
        """The planner for an identified ``decay`` (built once per model): below
        :data:`MOMENTUM_THRESHOLD` the approach's or the placement's (``placing``,
        default :attr:`placing`), else one on the task's model with
        :func:`momentum_parameters` of the decay's :meth:`_key`."""
        key = self._key(decay)
        placing = self.placing if placing is None else placing
        name: Any = key if key else ("place" if placing or self.near is None else "approach")
        if name not in self._planners:
            task = self.approach_task if name == "approach" else self.task
            assert task is not None  # an approach exists with near set
            opts = dict(self._approach_opts if name == "approach" else self._opts)
            if key:
                over = {**dict(task.params), **momentum_parameters(key)}
                task = push_t.make(goal=task.goal, **over)
                opts.setdefault("coast", _coast(key))
                opts.setdefault("effort", _MOMENTUM_EFFORT)
            if "select_model" not in opts:
                opts["select_model"] = _coarse_model(tuple(sorted(task.params.items())))
            self._planners[name] = mpc.Controller(task, **opts)
            if key:
                logger.info("block momentum identified: decay %.2f per env step", key)
        return self._planners[name]

    def _still_planners(self) -> list:
        """The planners of a block without momentum built so far."""
        return [p for k, p in self._planners.items() if k in ("approach", "place")]

    def _within(self, pose) -> bool:
        """Whether the T at ``pose`` (model frame) is within :attr:`near` of the goal."""
        if self.near is None:
            return True
        gap, angle = _pose_gap(pose, self.task.goal)
        return gap < self.near[0] and angle < self.near[1]

    def _stuck(self, pose) -> bool:
        """Whether the T, observed at ``pose``, has stayed within :data:`_STUCK_MOTION`
        of where it was :data:`_STUCK_STEPS` env steps ago."""
        ref, n = self._rest
        pose = np.asarray(pose, dtype=float)
        if ref is not None:
            gap, angle = _pose_gap(pose, ref)
            if gap < _STUCK_MOTION[0] and angle < _STUCK_MOTION[1]:
                self._rest = (ref, n + 1)
                return n + 1 >= _STUCK_STEPS
        self._rest = (pose, 0)
        return False

    def reset(self) -> None:
        """Forget the plan, the phase and the identified momentum (before a new
        episode)."""
        for p in self._planners.values():
            p.reset()
        self.placing = self.near is None
        self._rest = (None, 0)
        self.planner = self._planner(0.0)
        self.momentum.reset()
        self.solve_times = []

    def state(self, observation, agent_velocity) -> np.ndarray:
        """The model state (12,) of an env observation ``(agent x, agent y, block x,
        block y, block angle)`` (px, rad) and the agent's velocity (px/s)."""
        o = np.asarray(observation, dtype=float)
        if o.shape != (5,) or not np.all(np.isfinite(o)):
            raise ValueError(f"observation must be 5 finite numbers, got {o!r}")
        x = np.zeros(12)
        x[:3] = model_pose(o[2:5])
        x[3:5] = o[:2] * PX
        x[9:11] = np.asarray(agent_velocity, dtype=float) * PX
        return x

    def act(self, observation, agent_velocity) -> np.ndarray:
        """The env action (2,) (px, in [0, 512]) for this observation."""
        t0 = time.perf_counter()
        x = self.state(observation, agent_velocity)
        m = self.momentum
        m.update(x[:3], x[3:5])
        if not self.placing and (self._within(x[:3]) or self._stuck(x[:3])):
            self.placing = True  # for the rest of the episode
        if m.pairs <= _SETTLED or self.planner in self._still_planners():
            planner = self._planner(m.decay)
            if planner is not self.planner:
                planner.reset()
                self.planner = planner
        x[6:9] = v = m.velocity
        U, phase = self.planner.act(x)
        if phase == "move" and np.hypot(*v[:2]) + abs(v[2]) * _GYRATION > _MOVING:
            # the block coasts: a path planned around where it is now may run into it
            # and the push chosen from here is stale by the time the pusher arrives:
            # hold still and choose again next step
            self.planner.path = []
            self.planner.plan = None
            U = np.zeros((1, 3))
        target = x[3:5] + U[:, :2].sum(axis=0) * self.task.dt  # the plan's pusher at +0.1 s
        # kept inside the box of the planner's standoff points and moves: the agent is
        # kinematic and would pass through the walls, off where any path can start
        target = np.clip(target, *self.planner._bounds())
        a = pd_action(target / PX, observation[:2], agent_velocity)
        self.solve_times.append(time.perf_counter() - t0)
        return np.clip(a, 0.0, 512.0)


@dataclasses.dataclass(frozen=True)
class Episode:
    """One episode of :func:`run_episode`.

    Attributes
    ----------
    seed : int
    success : bool
        The env's coverage exceeded the threshold within the episode.
    max_coverage, final_coverage : float
        Over the episode, and at its last step (the step of success, if any).
    steps : int
        Env steps taken: to success, or all of them.
    solve_times : list of float
        Wall time of each decision, s.
    """

    seed: int
    success: bool
    max_coverage: float
    final_coverage: float
    steps: int
    solve_times: list

    def to_dict(self) -> dict[str, Any]:
        """The episode as the JSON record of ``python -m softcontact gym-pusht --json``."""
        return dataclasses.asdict(self)


def run_episode(
    seed,
    *,
    controller="ddp",
    deadline=DEADLINE,
    steps=EPISODE_STEPS,
    threshold=0.95,
    noise=(0.0, 0.0),
    damping=None,
    block_cog=None,
    frames=None,
    task=None,
    **settings,
) -> Episode:
    """Run one seeded episode of the env under :class:`Controller`.

    Parameters
    ----------
    seed : int
        ``env.reset(seed=seed)``; also seeds the observation noise and the sampler.
    controller, deadline
        As :class:`Controller`.
    steps : int
        Env steps at most (300).
    threshold : float
        Success: the env's coverage above it (in (0, 1); the env's is 0.95).
    noise : (float, float)
        Observation noise std: px on the agent's and block's positions, degrees on the
        block's angle.
    damping, block_cog
        As :func:`make_env`.
    frames : list, optional
        If given, the env's rendered RGB frames are appended to it (one per step, and the
        first).
    task : push_t.PushT, optional
        The model (default ``make_task(**PLANNING)``, :data:`PLANNING`).
    **settings
        Planner settings, as :class:`Controller` takes them.
    """
    seed = as_int(seed, "seed", 0)
    steps = as_int(steps, "steps", 1)
    threshold = as_positive_float(threshold, "threshold")
    if threshold >= 1:
        raise ValueError(f"threshold must be in (0, 1), got {threshold!r}")
    sp, sa = _pair(noise, "noise", "a pair (px, degrees)", allow_zero=True)
    ctrl = Controller(task, controller, deadline, **{"seed": seed, **settings})
    rng = np.random.default_rng([seed, 1])
    env = make_env(damping, block_cog)
    best = final = 0.0
    success = False
    n = 0
    try:
        obs, _ = env.reset(seed=seed)
        if frames is not None:
            frames.append(env.render())
        while n < steps:
            n += 1
            o = np.array(obs, dtype=float)
            if sp or sa:
                o[:4] += rng.normal(0.0, sp, 4)
                o[4] += rng.normal(0.0, math.radians(sa))
            action = ctrl.act(o, np.asarray(env.agent.velocity, dtype=float))
            obs, _, _, _, info = env.step(action)
            if frames is not None:
                frames.append(env.render())
            final = float(info["coverage"])
            best = max(best, final)
            if final > threshold:
                success = True
                break
    finally:
        env.close()
    return Episode(seed, success, best, final, n, [float(t) for t in ctrl.solve_times])


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """Episodes of :func:`evaluate`, in seed order, and their summary."""

    episodes: tuple
    wall: float

    def summary(self) -> dict[str, Any]:
        """The summary fields of ``--json``: ``success_rate``, ``mean_max_coverage``,
        ``median_steps_to_success``, ``solve_time_median``, ``solve_time_p95``,
        ``solve_time_max`` (NaN fields are None)."""
        eps = self.episodes
        times = np.concatenate([e.solve_times for e in eps]) if eps else np.zeros(0)
        ok = [e.steps for e in eps if e.success]

        def num(v):
            return None if v is None or not math.isfinite(v) else float(v)

        return {
            "success_rate": num(np.mean([e.success for e in eps])) if eps else None,
            "mean_max_coverage": num(np.mean([e.max_coverage for e in eps])) if eps else None,
            "median_steps_to_success": num(np.median(ok)) if ok else None,
            "solve_time_median": num(np.median(times)) if times.size else None,
            "solve_time_p95": num(np.percentile(times, 95)) if times.size else None,
            "solve_time_max": num(np.max(times)) if times.size else None,
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document: ``episodes`` and the :meth:`summary` fields."""
        return {"episodes": [e.to_dict() for e in self.episodes], **self.summary()}


def _episode_task(seed, kwargs):
    """One episode on a Dask worker.  It starts with a full garbage collection and
    ``gc.freeze()``: what is alive then (modules, models, the worker's own state) is left
    out of later collections, whose pauses, landing inside decisions, otherwise took the
    slowest of 34,000 decisions to ~110-120 ms (1,000 seeds on 1 or 2 workers; 45 ms with
    the freeze).  The worker process is ours, so its collector is ours to tune."""
    gc.collect()
    gc.freeze()
    return run_episode(seed, **kwargs)


def evaluate(
    seeds: Iterable[int],
    *,
    scheduler: str | None = None,
    n_workers: int | None = None,
    callback: Callable[[Episode, int, int], Any] | None = None,
    **episode_options,
) -> Evaluation:
    """Run :func:`run_episode` for every seed on a ``dask.distributed`` cluster.

    Parameters
    ----------
    seeds : iterable of int
    scheduler : str, optional
        Address of a running Dask scheduler; by default a ``LocalCluster`` of
        ``n_workers`` single-threaded worker processes (default: this machine's cores) is
        started and closed.  ``"inprocess"`` runs the episodes one after another in this
        process, without Dask.
    n_workers : int, optional
    callback : callable, optional
        ``callback(episode, done, total)`` as each episode finishes (in completion
        order).
    **episode_options
        :func:`run_episode`'s keywords.
    """
    if not isinstance(seeds, Iterable):
        raise TypeError(f"seeds must be an iterable of ints, got {type(seeds).__name__}")
    seeds = [as_int(s, "seeds", 0) for s in seeds]
    if len(set(seeds)) != len(seeds):
        raise ValueError("seeds must be distinct")
    t0 = time.perf_counter()
    out: dict[int, Episode] = {}

    def done(ep):
        out[ep.seed] = ep
        if callback is not None:
            callback(ep, len(out), len(seeds))

    if scheduler == "inprocess":
        for s in seeds:
            done(run_episode(s, **episode_options))
    else:
        distributed = require("dask.distributed", "gym", "gym_pusht.evaluate")
        cluster = None
        if scheduler is None:
            n = (os.cpu_count() or 1) if n_workers is None else as_int(n_workers, "n_workers", 1)
            # the dashboard on a free port: its default (8787) may be another cluster's
            cluster = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0"
            )
        try:
            with distributed.Client(cluster if cluster is not None else scheduler) as client:
                futures = [
                    client.submit(
                        _episode_task, s, episode_options, key=f"gym-pusht-{s}", pure=False
                    )
                    for s in seeds
                ]
                for fut in distributed.as_completed(futures):
                    done(fut.result())
        finally:
            if cluster is not None:
                cluster.close()
    return Evaluation(tuple(out[s] for s in seeds), time.perf_counter() - t0)


def write_gif(path, frames, title=None, *, size=340) -> None:
    """Write the env's RGB frames (as :func:`run_episode` records them) to an animated GIF
    at the env's 10 frames per second, each scaled to ``size`` px square (Pillow, from the
    ``plot`` extra), with ``title`` drawn on every frame."""
    Image = require("PIL.Image", "plot", "gym_pusht.write_gif")
    ImageDraw = require("PIL.ImageDraw", "plot", "gym_pusht.write_gif")
    if not frames:
        raise ValueError("frames must hold at least one image")
    imgs = [Image.fromarray(np.asarray(f, dtype=np.uint8)).resize((size, size)) for f in frames]
    if title:
        ImageFont = require("PIL.ImageFont", "plot", "gym_pusht.write_gif")
        try:
            font = ImageFont.load_default(size=14)  # Pillow >= 10.1: a scalable font
        except TypeError:  # pragma: no cover - older Pillow: its bitmap font
            font = ImageFont.load_default()
        for im in imgs:
            ImageDraw.Draw(im).text((8, 6), title, fill=(0, 0, 0), font=font)
    imgs[0].save(path, save_all=True, append_images=imgs[1:], duration=100, loop=0)
