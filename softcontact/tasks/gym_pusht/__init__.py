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
its velocity the block keeps over an env step while nothing touches it: the median ratio
of successive displacements of the block's centre of gravity over pairs of *free* steps
(the pusher and the walls clear of the block).  Below :data:`MOMENTUM_THRESHOLD` (the env
as shipped: 0) it plans as above.  A block that moves more than 10 mm over a step in
which the pusher stayed clear of it has momentum before any ratio is known: the pusher
then holds still, clear of it, for up to 3 steps, so that the block coasts and the next
free step identifies the decay (pushes planned for a block that stops would hurl it at
up to 1-2 m/s into the walls).  Observation noise of 1 px and 1 deg moves a resting
block ~2.4 mm per step: over seeds 0-499 of that variant no decay was ever identified
above the threshold and the pusher never held.

**Tapping a coasting block** (``Controller.tapper``).  Above the threshold (the env with
``damping`` 0.5 keeps 0.933 of its velocity per step) the controller does not plan pushes
on a model: pymunk's rigid, inelastic impacts against the soft contact leave 1 s
open-loop errors of ~14-18 mm and ~8-13 deg after pushes.  It steers where the block
will come to rest instead, with taps: a frictionless inelastic tap changes the rest pose
linearly in its impulse, along one direction per point of the outline (the env's mass,
moment of inertia and centre of gravity), and the best impulse of each point has a
closed form (``docs/method.md``, "Tapping a coasting block").  Each env step the
controller takes the best tap the pusher can reach (0.15 m/s at most), brings the pusher
to rest 2 mm before its point (the PD's exact two-step inverse; farther off, moves of at
most 2 cm per step along the path planner's waypoints, from the last one in straight
sight: faster moves knock the coasting T), strikes (never faster along the normal than
the tap's speed within the step: the kinematic agent would give the block its fastest
push), backs off and plans the next tap on the new rest pose, until the rest pose is
within 1.5 mm and 1 deg of the goal.  The search for a reachable tap stops after 15 ms
of a decision; taps found unreachable while the block is at rest are tried after the
others (a T against a wall has its best taps behind it).  A decision takes ~1 ms
(median; 95th percentile ~16 ms).  With the 25 ms deadline on 2 Dask workers, 480 of
seeds 0-499 of the env with damping 0.5 succeed (median 168 env steps; the benchmark
page's damping row).

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
#: Tapping a coasting block (``_Tapper``): the fastest and the slowest tap (m/s, the
#: pusher's speed along the contact normal; a slower one, or one the block would strike
#: itself coming at the pusher, waits for the next decision), the weight of the rest pose's
#: angle against its position (m per rad), the gap (m) before the contact point at which
#: the pusher comes to rest before a tap, the spacing (m) of the tap points along the T's
#: outline, the longest repositioning move per env step (m: a faster pusher knocks into
#: the coasting T), and the rest pose's errors (m, rad) within which the block is left to
#: coast in.
_TAP_SPEED = 0.15
_TAP_MIN_SPEED = 0.002
_TAP_ANGLE_WEIGHT = 0.05
_TAP_GAP = 0.002
_TAP_SPACING = 0.005
_TAP_MOVE = 0.02
_TAP_DONE = (0.0015, math.radians(1.0))
#: The block's speed (m/s, its turning at ``_TAP_ANGLE_WEIGHT``) below which it is at rest
#: for the tapper: taps it found unreachable are tried last.
_TAP_STILL = 0.002
#: Seconds of a decision the tapper spends finding a path to its candidate taps (each
#: path_to call, with its back-offs, takes ~0.5-3 ms; 16 unreachable candidates take up to
#: 100 ms).
_TAP_PATH_BUDGET = 0.015
#: A block that moves more than this (m, its turning at the radius of gyration included)
#: over an env step in which the pusher stayed clear of it keeps momentum (the env as
#: shipped stops it within 10 ms; observation noise of 1 px and 1 deg moves it ~2.4 mm):
#: :class:`Controller` then holds the pusher clear of it for ``_SUSPECT_STEPS`` env
#: steps, or until the momentum is identified.
_SUSPECT_MOTION = 0.01
_SUSPECT_STEPS = 3


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


def _pd_substeps(p, v, a) -> np.ndarray:
    """The env agent's position and velocity (one axis, the rows) after each of the 10 PD
    substeps of an env step from position ``p`` and velocity ``v`` under the action
    ``a``."""
    out = []
    for _ in range(SUBSTEPS):
        v = v + (K_P * (a - p) - K_V * v) * SUBSTEP_DT
        p = p + v * SUBSTEP_DT
        out.append((p, v))
    return np.array(out)


#: The env step's linear map, substep by substep: ``[k, i, j]`` the agent's position
#: (``i = 0``) or velocity (``i = 1``) after substep ``k + 1`` per unit of its position,
#: velocity or the action (``j``) before the step (one axis; the axes are independent).
_PD_SUBSTEPS = np.stack(
    [_pd_substeps(*e) for e in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))], axis=-1
)
#: The env step's linear map: rows the agent's position and velocity after it, columns the
#: position, velocity and action before it.
_PD_STEP = _PD_SUBSTEPS[-1]
_PD = tuple(float(c) for c in _PD_STEP[0])


def pd_action(target, position, velocity) -> np.ndarray:
    """The action (px) after which the env's agent, now at ``position`` (px) moving at
    ``velocity`` (px/s), is at ``target`` (px): the exact inverse of the env's PD
    tracking over its 10 substeps (each ``(2,)`` or broadcastable)."""
    A, B, C = _PD
    t, p, v = (np.asarray(a, dtype=float) for a in (target, position, velocity))
    return (t - A * p - B * v) / C


def _velocity_action(velocity_target, position, velocity) -> np.ndarray:
    """The action (any length unit) after which the agent, at ``position`` moving at
    ``velocity``, moves at ``velocity_target`` (the same unit per s)."""
    A, B, C = _PD_STEP[1]
    t, p, v = (np.asarray(a, dtype=float) for a in (velocity_target, position, velocity))
    return (t - A * p - B * v) / C


def _strike_action(normal, speed, position, velocity) -> np.ndarray:
    """The action after which the agent, at ``position`` moving at ``velocity``, moves
    along the unit ``normal`` at ``speed`` (and not across it) at the step's end, its
    speed along ``normal`` never above ``speed`` within the step: the block it strikes,
    which keeps the fastest push it was given, leaves at ``speed``."""
    n = np.asarray(normal, dtype=float)
    p, v = np.asarray(position, dtype=float), np.asarray(velocity, dtype=float)
    a = _velocity_action(n * speed, p, v)
    A, B, C = _PD_SUBSTEPS[:, 1].T  # the velocity after each substep
    along = np.min((speed - A * float(p @ n) - B * float(v @ n)) / C)
    return a + n * (along - float(a @ n))


def _rest_action(target, position, velocity) -> np.ndarray:
    """The first of the two actions after which the agent, at ``position`` moving at
    ``velocity``, is at rest at ``target`` (each (2,), any length unit)."""
    S, c = _PD_STEP[:, :2], _PD_STEP[:, 2]
    # [p2, v2] = S S [p0, v0] + S c a1 + c a2, per axis
    M = np.column_stack([S @ c, c])
    free = S @ S @ np.vstack([np.asarray(position, float), np.asarray(velocity, float)])
    rhs = np.vstack([np.asarray(target, float), np.zeros(2)]) - free
    return np.linalg.solve(M, rhs)[0]


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


def _rotated(theta, v) -> np.ndarray:
    """The 2-vector ``v`` rotated by ``theta``."""
    c, s = math.cos(theta), math.sin(theta)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def _to_cog(pose, velocity, cog) -> tuple[np.ndarray, np.ndarray]:
    """The pose (x, y, theta) and velocity (vx, vy, omega) of the centre of gravity of a T
    at model pose ``pose`` moving at ``velocity`` (its centroid's), the centre of gravity at
    ``cog`` (2,) in the T's body frame."""
    r = _rotated(pose[2], cog)  # centroid -> CoG
    w = velocity[2]
    return (
        np.array([pose[0] + r[0], pose[1] + r[1], pose[2]]),
        np.array([velocity[0] - w * r[1], velocity[1] + w * r[0], w]),
    )


def _from_cog(pose, cog) -> np.ndarray:
    """The model pose of a T whose centre of gravity, at ``cog`` (2,) in its body frame, has
    the pose ``pose`` (x, y, theta)."""
    r = _rotated(pose[2], cog)
    return np.array([pose[0] - r[0], pose[1] - r[1], pose[2]])


class MomentumEstimator:
    """Online identification of the block's momentum from an episode's own transitions.

    Each :meth:`update` takes the observed block pose (model frame) and pusher position
    after an env step.  A step is *free* if the pusher stayed clear of the block (its path
    at least its radius + ``margin`` from the block at both ends of the step) and the
    block stayed ``margin`` clear of the walls: the block then only coasts, so over two
    successive free steps its displacement over the second is its displacement over the
    first times the decay of its velocity.  The decay is the median of the pairs' ratios
    (least squares over each pair's displacements ``(dx, dy, dtheta rho)`` of the centre
    of gravity, the task's
    ``support_x``, ``support_y``, whose velocity pymunk damps as it damps the turning;
    ``rho`` the block's radius of gyration), over the pairs whose first displacement exceeds
    ``min_motion`` and whose ratio is at most 1 (a block that speeds up was touched within
    the step: the pusher's path between observations is not straight); it is reported
    (:attr:`decay`) once ``min_pairs`` such pairs are seen, 0 before (the env's default:
    no momentum).  Observation noise biases a pair's ratio down (successive displacements
    share an observation, with opposite signs), never up; the median keeps a pair touched
    within a step (its ratio anything) from moving the estimate far.

    :attr:`since_motion` counts the steps since the last in which the block moved more
    than 10 mm (its turning at the radius of gyration included) with the pusher clear of
    it (walls or not): the env without momentum never moves it so.

    :attr:`velocity` is the block's velocity (vx, vy, omega) at the last observation
    implied by the decay and the last displacement: the displacement over a step of a
    coasting block whose velocity decays as ``exp(-lambda t)`` is ``v_end (1 - decay) /
    (lambda decay)``; 0 below :data:`MOMENTUM_THRESHOLD`.
    """

    def __init__(self, task, *, margin=0.004, min_motion=0.006, min_pairs=1) -> None:
        if not isinstance(task, push_t.PushT):
            raise TypeError(f"task must be a push_t.PushT, got {type(task).__name__}")
        self.task = task
        self.radius = float(task.pusher_radius)
        self.margin = as_positive_float(margin, "margin", allow_zero=True)
        self.min_motion = as_positive_float(min_motion, "min_motion")
        self.min_pairs = as_int(min_pairs, "min_pairs", 1)
        self.cog = np.array([task.params.get("support_x", 0.0), task.params.get("support_y", 0.0)])
        self.reset()

    def reset(self) -> None:
        """Forget the episode."""
        self._last: tuple | None = None  # (pose, its centre of gravity's pose, pusher)
        self._delta: np.ndarray | None = None  # the last step's displacement (of the CoG)
        self._delta_free = False  # whether that step was free
        self._ratios: list[float] = []
        self.since_motion = math.inf

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
        cog = _to_cog(pose, np.zeros(3), self.cog)[0]
        if self._last is not None:
            p0, cog0, a0 = self._last
            d = cog - cog0
            d[2] = (d[2] + math.pi) % (2 * math.pi) - math.pi
            clear = self._clear_of(p0, pose, a0, pusher)
            free = clear and self._off_walls(p0) and self._off_walls(pose)
            self.since_motion += 1
            if clear and float(np.linalg.norm(self._weighted(d))) > _SUSPECT_MOTION:
                self.since_motion = 0
            if free and self._delta_free:
                w0 = self._weighted(self._delta)
                num, den = float(self._weighted(d) @ w0), float(w0 @ w0)
                # a coasting block never speeds up: such a pair was touched within a step
                if math.sqrt(den) > self.min_motion and num <= den:
                    self._ratios.append(num / den)
            self._delta, self._delta_free = d, free
        self._last = (pose, cog, pusher)

    def _off_walls(self, pose) -> bool:
        """Whether the block at ``pose`` is ``margin`` clear of the walls."""
        inset = self.task.params.get("wall_inset", 0.0)
        lo, hi = inset + self.margin, self.task.workspace - inset - self.margin
        b = self.task.t_polygon(pose).bounds
        return min(b[0], b[1]) >= lo and max(b[2], b[3]) <= hi

    def _clear_of(self, p0, p1, a0, a1) -> bool:
        """Whether the pusher's path from ``a0`` to ``a1`` stayed clear of the block at
        ``p0`` and at ``p1``."""
        shapely = require("shapely", "tasks", "gym_pusht.MomentumEstimator")
        path = shapely.LineString([a0, a1]) if np.any(a0 != a1) else shapely.Point(a0)
        clear = self.radius + self.margin
        return all(self.task.t_polygon(p).distance(path) >= clear for p in (p0, p1))

    @property
    def pairs(self) -> int:
        """The pairs of free steps seen."""
        return len(self._ratios)

    @property
    def decay(self) -> float:
        """The identified fraction of its velocity the block keeps over an env step, in
        [0, 0.99] (0 until ``min_pairs`` pairs are seen)."""
        if self.pairs < self.min_pairs:
            return 0.0
        return float(min(max(np.median(self._ratios), 0.0), 0.99))

    @property
    def velocity(self) -> np.ndarray:
        """The block's velocity (vx, vy, omega) (m/s, rad/s) at the last observation."""
        d = self.decay
        if d < MOMENTUM_THRESHOLD or self._delta is None:
            return np.zeros(3)
        T = SUBSTEPS * SUBSTEP_DT
        rate = -math.log(d) / T
        v = self._delta * (rate * d / (1.0 - d))  # the centre of gravity's
        assert self._last is not None
        r = _rotated(self._last[0][2], self.cog)  # centroid -> CoG
        return np.array([v[0] + v[2] * r[1], v[1] - v[2] * r[0], v[2]])  # the centroid's


class _Tapper:
    """Places a coasting block by taps: short, frictionless, inelastic impacts.

    A block whose velocity decays by ``exp(-lambda t)`` comes to rest at ``R = p + v /
    lambda`` (its *rest pose*: ``p`` the centre of gravity's position and the angle, ``v``
    their rates).  A tap of impulse ``J`` along the inward normal ``n`` at a point of the
    T's outline changes ``v`` by ``J (n / m, (r x n) / I)`` (``r`` the point from the
    centre of gravity; the env's mass and moment of inertia), so ``R`` by that over lambda:
    one direction per point.
    :meth:`plan` takes, for each of the outline's points (every 5 mm), the impulse ``J >=
    0`` that brings the rest pose closest to the goal (least squares, the angle weighted by
    ``_TAP_ANGLE_WEIGHT``), with the pusher's speed along ``n`` at most
    ``_TAP_SPEED``; :meth:`act` keeps the best point the pusher can reach (within
    ``_TAP_PATH_BUDGET`` of path search; while the block is at rest, the points found
    unreachable before are tried last).

    :meth:`act` brings the pusher to rest ``_TAP_GAP`` before that point (the exact
    two-step inverse of the PD within 3 cm; moves of at most ``_TAP_MOVE`` per env
    step along the path planner's waypoints farther off, from the last one the pusher
    reaches in a straight line), then strikes: it moves along ``n``, never faster than
    the tap's speed within a step (:func:`_strike_action`), until it has travelled past
    the contact, and backs off 3 mm.
    Every decision re-plans on the block's rest pose, so a tap that falls short or
    overshoots is corrected by the next.
    """

    def __init__(self, task) -> None:
        out = np.asarray(task.t_outline(np.zeros(3)), dtype=float)  # the 8 corners
        x, y = out[:, 0], out[:, 1]
        ccw = float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)) > 0
        pts, nrm = [], []
        for a, b in zip(out, np.roll(out, -1, axis=0), strict=True):
            length = float(np.hypot(*(b - a)))
            t = (b - a) / length
            inward = np.array([-t[1], t[0]]) if ccw else np.array([t[1], -t[0]])
            k = max(1, int((length - 0.008) / _TAP_SPACING) + 1)
            fs = np.linspace(0.004, length - 0.004, k) if length > 0.008 else [length / 2]
            for f in fs:
                pts.append(a + t * f)
                nrm.append(inward)
        self.points, self.normals = np.array(pts), np.array(nrm)
        params = task.params
        self.cog = np.array([params.get("support_x", 0.0), params.get("support_y", 0.0)])
        self.mass = float(params.get("mass", 1.0))
        self.inertia = self.mass * _GYRATION**2
        self.radius = float(task.pusher_radius)
        self.task = task
        self._goal = _to_cog(task.goal, np.zeros(3), self.cog)[0]  # the goal's CoG pose
        self.reset()

    def reset(self) -> None:
        """Forget the strike in progress and the taps found unreachable."""
        self._strike: tuple | None = None  # (normal, speed, start, steps)
        self._unreachable: dict[int, int] = {}  # outline point -> decision it was last tried
        self._decisions = 0

    def rest_error(self, cog, velocity, rate) -> np.ndarray:
        """The goal minus the rest pose, both of the centre of gravity, of the block whose
        centre of gravity is at ``cog`` (x, y, theta) moving at ``velocity`` (vx, vy,
        omega) and whose velocity decays at ``rate`` (1/s); the angle wrapped to
        [-pi, pi)."""
        e = self._goal - (cog + velocity / rate)
        e[2] = (e[2] + math.pi) % (2 * math.pi) - math.pi
        return e

    def plan(self, cog, velocity, rate, bounds) -> list:
        """The taps, best first, on the block whose centre of
        gravity is at ``cog`` (x, y, theta) moving at ``velocity`` (vx, vy, omega), its
        velocity decaying at ``rate``: each ``(point where the pusher rests before it,
        inward normal, speed, index of the outline point)``; only taps that bring the
        rest pose closer to the goal, from points clear of the T inside ``bounds`` (the
        box of the pusher's centre)."""
        shapely = require("shapely", "tasks", "gym_pusht.Controller")
        e = self.rest_error(cog, velocity, rate)
        w = np.array([1.0, 1.0, _TAP_ANGLE_WEIGHT**2])
        c, s = math.cos(cog[2]), math.sin(cog[2])
        rot = np.array([[c, -s], [s, c]])
        r = (self.points - self.cog) @ rot.T  # from the centre of gravity
        cw = cog[:2] + r
        nw = self.normals @ rot.T
        k = r[:, 0] * nw[:, 1] - r[:, 1] * nw[:, 0]
        b = np.column_stack([nw / self.mass, k / self.inertia]) / rate  # rest pose per J
        bwe = b @ (w * e)
        bwb = np.einsum("ij,ij->i", b * w, b)
        J = np.maximum(bwe / bwb, 0.0)
        # the contact point's velocity along n before the tap, and the pusher's after it
        s0 = nw[:, 0] * (velocity[0] - velocity[2] * r[:, 1]) + nw[:, 1] * (
            velocity[1] + velocity[2] * r[:, 0]
        )
        eff = 1.0 / self.mass + k**2 / self.inertia
        J = np.where(s0 + J * eff > _TAP_SPEED, np.maximum((_TAP_SPEED - s0) / eff, 0.0), J)
        speed = s0 + J * eff
        cost = -2.0 * J * bwe + J**2 * bwb  # the weighted squared error's change
        q = cw - nw * (self.radius + _TAP_GAP)
        lo, hi = bounds
        ok = (
            np.all((q >= lo) & (q <= hi), axis=1) & (J > 0) & (cost < 0) & (speed >= _TAP_MIN_SPEED)
        )
        poly = self.task.t_polygon(_from_cog(cog, self.cog))
        taps: list[tuple[np.ndarray, np.ndarray, float, int]] = []
        for i in np.argsort(np.where(ok, cost, np.inf)):
            if not ok[i]:
                break
            if poly.distance(shapely.Point(q[i])) >= self.radius + 0.5 * _TAP_GAP:
                taps.append((q[i], nw[i], float(speed[i]), int(i)))
        return taps

    def act(self, x, decay, velocity, planner) -> np.ndarray:
        """The pusher's action (m, the PD's target) for the model state ``x`` (the
        block's pose, the pusher's position and velocity) of a block whose velocity,
        ``velocity`` now, keeps ``decay`` per env step; ``planner`` gives paths around
        the T and the pusher's box."""
        pose, pusher, pv = x[:3], x[3:5], x[9:11]
        bounds = planner._bounds()
        if self._strike is not None:
            n, u, start, steps = self._strike
            if float((pusher - start) @ n) < _TAP_GAP + 0.0015 and steps < 20:
                self._strike = (n, u, start, steps + 1)
                return _strike_action(n, u, pusher, pv)
            self._strike = None
            return pd_action(np.clip(pusher - 0.003 * n, *bounds), pusher, pv)
        rate = -math.log(decay) / (SUBSTEPS * SUBSTEP_DT)
        cog, v = _to_cog(pose, velocity, self.cog)
        # the block where this action's step ends
        ahead_cog = cog + v * (1.0 - decay) / rate
        ahead = _from_cog(ahead_cog, self.cog)
        rest = _from_cog(cog + v / rate, self.cog)
        gap, angle = _pose_gap(self.task.goal, rest)
        if gap < _TAP_DONE[0] and angle < _TAP_DONE[1]:
            return pd_action(self._clear(pusher, pose, bounds), pusher, pv)
        t0 = time.perf_counter()
        self._decisions += 1
        taps = self.plan(ahead_cog, v * decay, rate, bounds)
        blocked = self._unreachable
        if math.hypot(v[0], v[1]) + _TAP_ANGLE_WEIGHT * abs(v[2]) < _TAP_STILL:
            # a block at rest keeps the taps found unreachable so: the others are tried
            # first, then those, the longest untried first (else the same few best ones
            # use up every decision's budget and the pusher waits for ever)
            taps.sort(key=lambda t: (t[3] in blocked, blocked.get(t[3], 0)))
        for q, n, u, i in taps:
            if time.perf_counter() - t0 > _TAP_PATH_BUDGET:
                break  # the next decision tries again from where the pusher is then
            blocked.pop(i, None)
            far = math.hypot(*(q - pusher))
            if far < 0.0015 and math.hypot(*pv) < 0.02:
                self._strike = (n, u, pusher.copy(), 1)
                return _strike_action(n, u, pusher, pv)
            if far < 0.03:
                return _rest_action(q, pusher, pv)
            path = planner.path_to(pusher, q, ahead)
            if path is None:  # between the T and a wall: the next best tap
                blocked[i] = self._decisions
                continue
            path = self._shortcut(pusher, path, ahead)
            target, left = pusher, _TAP_MOVE
            for wp in path:
                wp = np.asarray(wp, dtype=float)
                d = wp - target
                length = math.hypot(*d)
                if length > left:
                    target = target + d * (left / length)
                    break
                target, left = wp, left - length
            return pd_action(np.clip(target, *bounds), pusher, pv)
        return pd_action(self._clear(pusher, pose, bounds), pusher, pv)

    def _shortcut(self, pusher, path, pose) -> list:
        """``path`` from its last waypoint that the pusher reaches in a straight line clear
        of the T at ``pose`` (the path planner's ring of waypoints, clipped to the walls,
        may first lead away from the target and back)."""
        shapely = require("shapely", "tasks", "gym_pusht.Controller")
        poly = self.task.t_polygon(pose)
        for i in range(len(path) - 1, 0, -1):
            if poly.distance(shapely.LineString([pusher, path[i]])) >= self.radius + 0.001:
                return path[i:]
        return path

    def _clear(self, pusher, pose, bounds) -> np.ndarray:
        """Where the pusher holds while the block coasts: where it is, or 5 mm farther
        from the T if within 4 mm of it."""
        shapely = require("shapely", "tasks", "gym_pusht.Controller")
        poly = self.task.t_polygon(pose)
        at = shapely.Point(pusher)
        if poly.distance(at) >= self.radius + 0.004:
            return pusher
        c = np.array(poly.exterior.interpolate(poly.exterior.project(at)).coords[0])
        d = pusher - c
        length = math.hypot(*d)
        return np.clip(pusher + (d / length * 0.005 if length > 0 else 0.0), *bounds)


@functools.lru_cache(maxsize=4)
def _coarse_model(params):
    """The model that scores candidate pushes for a task of parameters ``params``."""
    return push_t.make(goal=GOAL, **{**dict(params), **COARSE}).model


class Controller:
    """Plans with softcontact at the env's 10 Hz (see the module docstring).

    With momentum identified (:class:`MomentumEstimator`), the block is tapped into place
    instead (its ``tapper``).

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
        :data:`PLANNING`); with momentum identified, its goal, pusher radius and inertia
        (``mass``, ``support_x``, ``support_y``: the centre of gravity) are the tapper's.
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
        The planner of the current phase: the approach's or the placement's (with
        momentum identified, its paths around the T and its box of the pusher serve the
        tapper).
    placing : bool
        Whether the placement has started (the T came within ``near`` or stopped).
    momentum : MomentumEstimator
        The episode's online identification of the block's momentum.
    tapper : _Tapper
        Places a block with momentum by taps (the module docstring, "Tapping a coasting
        block").
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
        self.planner = self._planner()
        for p in (self.planner, self._planner(placing=True)):
            if not math.isclose(p.replan * p.task.dt, SUBSTEPS * SUBSTEP_DT):
                raise ValueError(
                    f"a tick (replan x dt = {p.replan} x {p.task.dt:g} s) must be one env "
                    f"step ({SUBSTEPS * SUBSTEP_DT:g} s)"
                )
        self.momentum = MomentumEstimator(self.task)
        self.tapper = _Tapper(self.task)
        self._tapping = False  # whether momentum was identified (logged once)
        self.solve_times: list[float] = []

    def _planner(self, placing=None) -> mpc.Controller:
        """The approach's or the placement's planner (``placing``, default
        :attr:`placing`), built once each."""
        placing = self.placing if placing is None else placing
        name = "place" if placing or self.near is None else "approach"
        if name not in self._planners:
            task = self.approach_task if name == "approach" else self.task
            assert task is not None  # an approach exists with near set
            opts = dict(self._approach_opts if name == "approach" else self._opts)
            if "select_model" not in opts:
                opts["select_model"] = _coarse_model(tuple(sorted(task.params.items())))
            self._planners[name] = mpc.Controller(task, **opts)
        return self._planners[name]

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
        self.planner = self._planner()
        self.momentum.reset()
        self.tapper.reset()
        self._tapping = False
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
            planner = self._planner()
            if planner is not self.planner:
                planner.reset()
                self.planner = planner
        if m.decay >= MOMENTUM_THRESHOLD:
            # the block coasts: tap it towards where it comes to rest at the goal
            if not self._tapping:
                self._tapping = True
                logger.info("block momentum identified: decay %.3f per env step", m.decay)
            a = self.tapper.act(x, m.decay, m.velocity, self.planner) / PX
        elif m.since_motion < _SUSPECT_STEPS:
            # the block moved untouched: let it coast (pushes would hurl it) until its
            # momentum is identified from the free steps that follow
            hold = self.tapper._clear(x[3:5], x[:3], self.planner._bounds())
            self.planner.reset()
            a = pd_action(hold / PX, observation[:2], agent_velocity)
        else:
            U, _ = self.planner.act(x)
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
