"""The planar push-T task: push a T-shaped block with a disk until it covers a goal pose.

This module is the task (:func:`make`, :class:`PushT`, the constants); its submodules
solve and study it: :mod:`~softcontact.tasks.push_t.mpc` (the MPC controller),
:mod:`~softcontact.tasks.push_t.compare` (gradient and Hessian methods against CEM),
:mod:`~softcontact.tasks.push_t.sysid` (identifying the physical parameters) and
:mod:`~softcontact.tasks.push_t.viz` (figures and animations).

The common push-T benchmark (as in Diffusion Policy and its successors) in SI units, as
a :class:`softcontact.Scene` seen from above:

- **Workspace**: the square ``[0, 0.512]^2`` m, bounded by four static half-space walls
  (``"wall_left"``, ``"wall_right"``, ``"wall_bottom"``, ``"wall_top"``) whose normals
  point into the workspace.  Each wall is a single exact plane sample
  (:meth:`PointCloud.halfspace`) whose point lies on the wall's line 1 m outside the
  workspace, so that the point itself -- which the contact model also tests against the
  T's SSDF -- is always ~1 m from the T and never weighs in the soft minimum: only the
  T's samples against the exact plane act.
- **The T** (``"T"``): :meth:`PointCloud.t_shape` at its default scale (a 0.12 x 0.03 m
  bar over a 0.03 x 0.09 m stem, area 6.3e-3 m^2), a dynamic body sliding on the table
  with planar support friction.  Its body frame -- and its pose in the state -- is its
  centre of mass (the area centroid, which :meth:`PointCloud.t_shape_vertices` puts at
  the origin), with the bar along x and the stem pointing to -y at angle 0.
- **The pusher** (``"pusher"``): a kinematic disk of radius 0.015 m whose control is its
  velocity ``u = (vx, vy, omega)``.  The speed bound ``|(vx, vy)| <= u_max`` (0.5 m/s)
  is the controller's to respect (:meth:`PushT.project_controls`); the model does not
  clip.  ``omega`` does not change the disk's shape (up to the 32-fold ripple of its
  samples), but it is *not* inert: the contact friction sees the disk's surface speed
  ``omega r``, so a spinning pusher drags the T sideways.  A real pusher does not spin;
  keep ``omega = 0`` (``project_controls`` does).
- **Contacts**: T-pusher and T-each wall.  A kinematic pusher cannot touch a static wall
  (neither would be pushed; :meth:`Scene.add_contact` refuses such a pair), so nothing
  stops the pusher at the walls: the controller (or the optimizer's bounds) must keep it
  inside the workspace.
- **Goal**: the T at pose ``(0.256, 0.256, pi/4)``.  :meth:`PushT.coverage` is the area
  of the T at a pose intersected with the T at the goal over the T's area, computed
  exactly on polygons (shapely); success is coverage >= 0.95 (within
  :attr:`PushT.time_limit` = 30 s of simulated time).

State (nx = 12): ``(T pose (x, y, theta), pusher pose (x, y, theta), T velocity
(vx, vy, omega), pusher velocity)``; controls (nu = 3): the pusher's velocity
(``model.control_names``).  Parameters of the model (``model.param_names``): the T's
mass and inertia, stiffness/damping/friction of each contact pair, the T's support
friction.

Physical parameters (:data:`PARAMETERS`, each overridable in :func:`make`), and why.
The model's step is the linearly implicit one (``Scene.build(dt, "implicit")``): damping
and friction (contact and support) act on the new velocities, the contact springs
explicitly.  The stiffest place is a force at the stem's bottom corner (lever arm
0.079 m), where the T's effective mass ``m_eff = 1 / (1/m + r^2/I)`` is only 0.035 kg:

``mass`` = 0.15 kg
    A 3D-printed T of this footprint and 2-3 cm height weighs 0.1-0.2 kg.  The inertia
    follows from the geometry (uniform plate: 1.93e-3 m^2 x mass = 2.9e-4 kg m^2).
``support_friction`` = 0.35
    Coulomb coefficient of plastic sliding on a table (0.3-0.4); the weight is spread
    over a ~200-point grid of the T's footprint, so torsional friction is right.  Pushing
    the T takes ~0.5 N.
``support_slip_velocity`` = 0.02 m/s
    Speed at which the smooth support friction reaches ~70 % of its Coulomb value; below
    it the friction is a viscous damper of rate ``friction g / v_s`` (170/s), which the
    implicit step takes at the new velocity.  A T released at 0.3 m/s is below 1 mm/s
    after 0.125 s.
``stiffness`` = 2e3 N/m, ``damping`` = 30 N s/m (T-pusher and T-walls)
    The force grows by 0.5 N (a push) over 0.25 mm of penetration: a rigid-looking
    push.  The explicit spring is stable at ``m_eff``: ``dt^2 k / m_eff`` = 1.4 < 4.
    The damping is heavy (ratio 0.87 for a push through the centre of mass, overdamped
    at the stem's corner): impacts are nearly plastic (a T hit through its centre at
    0.3 m/s moves off at 0.36 m/s at most, then the table stops it against the pusher),
    and a T squeezed between the pusher and a wall and released sideways leaves no
    faster than the pusher's work allows (Notes).  With ``integrator="euler"`` the
    default is :data:`EULER_DAMPING` = 8 N s/m, the most its explicit damper allows
    (``dt^2 k / m_eff + 2 dt c / m_eff`` = 3.7 < 4; ratio 0.23).
``friction`` = 0.4 (T-pusher), ``wall_friction`` = 0.3 (T-walls)
    Plastic on a steel or printed pusher; plastic on a wooden or aluminium fence.
``contact_slip_velocity`` = 0.05 m/s
    The contacts' smooth-Coulomb slip speed.  Pushes at 0.2 m/s differ from those with a
    near-Coulomb 0.005 m/s (and dt = 1.25 ms) by < 0.06 rad and 5.2 mm after 1.5 s.
``eps`` = 1e-5 m^2, ``eps_c`` = 1e-3 m, ``beta`` = 1e-3 m
    The library defaults for objects of ~0.1 m sampled every few mm (smoothing length
    ``sqrt(eps)`` ~ 3 mm, the sample spacing).  Contact starts a few mm before the
    surfaces touch (``eps_c log N``, N the samples near the deepest point): the T rests
    3-4 mm off a wall it is pushed against broadside.
``dt`` = 0.005 s
    A free push at 0.3 m/s agrees with dt = 1.25 ms to 0.23 mm and 0.01 rad after 2 s
    (pushes that run on into a wall, to 4-10 mm).  An off-centre push spins the T to
    3.24 rad/s at its peak (3.23 at 1.25 ms, 3.30 at 10 ms).  30 s of task time is 6000
    steps.
``u_max`` = 0.5 m/s
    The pusher's speed bound on ``(vx, vy)``.
``spacing`` = 0.003 m, ``pusher_spacing`` = 0.003 m, ``pusher_radius`` = 0.015 m
    170 samples on the T's outline and 32 on the pusher's (3 mm, the smoothing length:
    smooth faces, corners sharp to within a few mm).
``clearance`` = 0.005 m, ``margin`` = 0.01 m
    Seeded initial states: the pusher's disk is at least ``clearance`` from the T's
    polygon (beyond the contact's onset of a few mm) and at least ``margin`` inside the
    walls.
``support_radius`` = 0, ``support_x`` = ``support_y`` = 0 m
    Where the T's weight rests: with all three 0, on the grid over its footprint; else on
    32 points of a ring of radius ``support_radius`` centred at ``(support_x,
    support_y)`` in the T's body frame (its centroid at the origin).  A ring sets the
    ratio of the table's resistance to turning and to sliding independently of the
    outline (:mod:`softcontact.tasks.gym_pusht` fits one to the gym-pusht env).
``wall_inset`` = 0 m
    The walls' inner faces lie at ``wall_inset`` and ``0.512 - wall_inset``.
``gyration`` = 0 m
    The T's radius of gyration about its centroid: its inertia is ``mass gyration^2``;
    0 takes it from the geometry (a uniform plate: 0.044 m).

Seeded initial states (:meth:`PushT.initial_state`): T position uniform in
``[0.1, 0.4]^2`` (the T then clears the walls by >= 19 mm), angle uniform in
``[-pi, pi)``; pusher position uniform in ``[radius + margin, 0.512 - radius - margin]^2``,
rejected while its disk comes within ``clearance`` of the T; pusher angle and all
velocities zero.  ``seed=None`` means :data:`DEFAULT_SEED` (0), so ``make()`` is
reproducible.

Notes
-----
- **Energy.**  A pusher squeezing the T against a wall never gives it more kinetic
  energy than the work it has done (``tests/test_push_t.py``: 60 pinning pushes at up to
  0.5 m/s, the T ejected sideways at up to 1.6 m/s and 16 rad/s; the largest excess is
  rounding, 5e-14 J).  With every force explicit (``integrator="euler"``) the same pushes gain up
  to 0.15 J (6 of 60), and a T pinned by a pusher at 0.15-0.5 m/s can be ejected at
  7 m/s and 45 rad/s: under a squeeze its two contacts' dampers exceed the explicit
  bound together (``2 dt (c_1 + c_2) / m_eff`` = 4.6 > 4), friction's viscous rate grows
  with the normal force, and the springs, released within a step, overshoot.  The
  implicit step removes the first two; the heavy damping slows the release enough for
  the third (with ``damping`` = 18 N s/m, 2 of 100 such pushes still gain up to
  0.06 J).
- **Squeezes.**  A pusher pressing the T 2-10 mm deep into a wall holds it still
  (velocities ~1e-15); the explicit step's friction chatters there with period 2 steps
  (up to 3 cm/s and 6 rad/s).
- **Parting.**  The dampers act on the normal velocity both ways, so a pusher that backs
  off fast drags the T while the soft contact lasts (a few mm): a pusher backing off at
  0.5 m/s right after a kick slows the T from 0.52 to 0.13 m/s within 20 ms.
- The step Jacobian's spectral radius stays within 1.04 through impacts at 0.1 and
  0.3 m/s (2.8 at 0.3 m/s with the explicit step).
- The pusher is not stopped by the walls (kinematic): a pusher driven past a wall can
  push the T through it.

Examples
--------
>>> import numpy as np
>>> from softcontact.tasks import push_t
>>> task = push_t.make(seed=3)
>>> task.model.nx, task.model.nu
(12, 3)
>>> U = np.zeros((100, 3))
>>> X = task.model.rollout(task.x0, U).states
>>> bool(task.coverage(task.t_pose(X[-1])) == task.coverage(task.t_pose(task.x0)))
True
>>> task.coverage(task.goal)
1.0
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._optional import require
from ..._validate import as_float_array, as_int, as_positive_float, as_real, shape_str
from ...cloud import PointCloud
from ...contact import ContactParams
from ...scene import Model, Scene

shapely = require("shapely", "tasks", "softcontact.tasks.push_t")

__all__ = [
    "make",
    "PushT",
    "PARAMETERS",
    "EULER_DAMPING",
    "DEFAULT_SEED",
    "WORKSPACE",
    "GOAL",
    "SUCCESS_COVERAGE",
    "TIME_LIMIT",
]

#: Seed used by ``make(seed=None)``.
DEFAULT_SEED = 0
#: Side of the square workspace ``[0, WORKSPACE]^2``, m.
WORKSPACE = 0.512
#: Goal pose of the T's centre of mass, ``(x, y, theta)``.
GOAL = (0.256, 0.256, math.pi / 4)
#: Coverage at or above which the task is solved.
SUCCESS_COVERAGE = 0.95
#: Simulated time allowed to reach success, s.
TIME_LIMIT = 30.0

#: The overridable physical and task parameters and their defaults (SI units; the
#: defaults of ``make(integrator="implicit")``, the default); see the module docstring for
#: the reasons behind each value.
PARAMETERS: Mapping[str, float] = types.MappingProxyType(
    {
        "mass": 0.15,
        "support_friction": 0.35,
        "support_slip_velocity": 0.02,
        "stiffness": 2e3,
        "damping": 30.0,
        "friction": 0.4,
        "wall_friction": 0.3,
        "contact_slip_velocity": 0.05,
        "eps": 1e-5,
        "eps_c": 1e-3,
        "beta": 1e-3,
        "dt": 0.005,
        "u_max": 0.5,
        "spacing": 0.003,
        "pusher_spacing": 0.003,
        "pusher_radius": 0.015,
        "clearance": 0.005,
        "margin": 0.01,
        "support_radius": 0.0,
        "support_x": 0.0,
        "support_y": 0.0,
        "wall_inset": 0.0,
        "gyration": 0.0,
    }
)
#: The contacts' damping (N s/m) of ``make(integrator="euler")``: the most its explicit
#: step keeps stable at the default ``dt`` (see the module docstring).
EULER_DAMPING = 8.0
# parameters that may be 0
_ZERO_OK = frozenset(
    {
        "support_friction",
        "damping",
        "friction",
        "wall_friction",
        "clearance",
        "margin",
        "support_radius",
        "wall_inset",
        "gyration",
    }
)
# parameters of either sign
_SIGNED = frozenset({"support_x", "support_y"})
_SUPPORT_RING = 32  # samples of a ring support (support_radius > 0)

_T_RANGE = (0.1, 0.4)
_WALL_OFFSET = 1.0  # wall sample points lie this far outside the workspace, on the line
_MAX_TRIES = 10_000


def _readonly(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


@dataclasses.dataclass(frozen=True, eq=False)
class PushT:
    """A built push-T task (returned by :func:`make`; immutable; pickles, for worker
    processes, into a task whose model steps bit for bit as this one's).

    Attributes
    ----------
    model : Model
        The compiled scene, bodies ``("T", "pusher", "wall_left", "wall_right",
        "wall_bottom", "wall_top")``; state ``(T pose, pusher pose, T velocity, pusher
        velocity)`` (nx = 12), controls the pusher's velocity ``(vx, vy, omega)``.
    x0 : (12,) ndarray
        The seeded initial state (read-only; copy it to modify).
    goal : (3,) ndarray
        Goal pose of the T, by default :data:`GOAL` ``(0.256, 0.256, pi/4)`` (read-only).
    dt : float
        Time step of ``model``, s.
    u_max : float
        Bound on the pusher's speed ``|(vx, vy)|``, m/s (not enforced by the model).
    cloud : PointCloud
        The T's samples in its body frame (origin at the centre of mass), exactly as the
        model holds them.
    vertices : (8, 2) ndarray
        The T's corners in the same body frame, counter-clockwise (read-only): the
        polygon of :meth:`coverage`.
    pusher_cloud : PointCloud
        The pusher's samples in its frame (origin at the disk's centre).
    pusher_radius : float
        m.
    params : Mapping[str, float]
        Every parameter of :data:`PARAMETERS` with the overrides applied (read-only).
    seed : int
        The seed of ``x0``.
    t_name, pusher_name : str
        ``"T"`` and ``"pusher"``.
    wall_names : tuple of str
        The four walls.
    workspace : float
        Side of the workspace square, m (0.512).
    time_limit : float
        Simulated time allowed, s (30).
    success_coverage : float
        Coverage needed for success (0.95).
    """

    model: Model
    x0: np.ndarray
    goal: np.ndarray
    dt: float
    u_max: float
    cloud: PointCloud
    pusher_cloud: PointCloud
    pusher_radius: float
    vertices: np.ndarray
    params: Mapping[str, float]
    seed: int
    t_name: str = "T"
    pusher_name: str = "pusher"
    wall_names: tuple[str, ...] = ("wall_left", "wall_right", "wall_bottom", "wall_top")
    workspace: float = WORKSPACE
    time_limit: float = TIME_LIMIT
    success_coverage: float = SUCCESS_COVERAGE
    _goal_polygon: Any = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_goal_polygon", self.t_polygon(self.goal))

    @property
    def scene(self) -> Scene:
        """A copy of the :class:`~softcontact.Scene` the task's model was built from
        (:attr:`Model.scene <softcontact.Model.scene>`): its bodies, clouds, contact pairs
        and support."""
        return self.model.scene

    # -- pickling (worker processes, Dask): the model pickles itself, bit for bit ----------

    def __getstate__(self):
        state = self.__dict__.copy()
        state["params"] = dict(self.params)
        return state

    def __setstate__(self, state):
        for k, v in state.items():
            if isinstance(v, np.ndarray):  # read-only, as make gives them
                v.setflags(write=False)
            object.__setattr__(self, k, v)
        object.__setattr__(self, "params", types.MappingProxyType(state["params"]))

    # -- geometry ----------------------------------------------------------------------

    @property
    def horizon(self) -> int:
        """Number of steps in :attr:`time_limit`."""
        return int(round(self.time_limit / self.dt))

    def t_outline(self, pose) -> np.ndarray:
        """Corners of the T placed at ``pose`` (..., 3): (..., 8, 2), world frame.

        Placed exactly as the model places the T's cloud: ``R(theta) v + (x, y)``
        with ``v`` the corners in the body frame (centre of mass at the origin)."""
        return _place(self.vertices, _as_poses(pose, "pose"))

    def t_polygon(self, pose):
        """The T at ``pose`` (3,) as a ``shapely.Polygon``."""
        q = _as_poses(pose, "pose")
        if q.shape != (3,):
            raise ValueError(f"pose must have shape (3,), got {shape_str(q.shape)}")
        return shapely.Polygon(self.t_outline(q))

    def coverage(self, pose):
        """Area of (T at ``pose`` intersected with T at the goal) / area of the T.

        ``pose`` (3,) gives a float, (..., 3) an array (...).  Exact up to rounding
        (shapely's polygon intersection); 1 at the goal, 0 for disjoint placements, and
        invariant to adding 2 pi to the angle."""
        q = _as_poses(pose, "pose")
        polys = shapely.polygons(self.t_outline(q))
        inter = shapely.area(shapely.intersection(polys, self._goal_polygon))
        out = np.asarray(inter, dtype=float) / float(self._goal_polygon.area)
        return float(out) if q.ndim == 1 else out

    # -- states ------------------------------------------------------------------------

    def t_pose(self, x) -> np.ndarray:
        """The T's pose ``(x, y, theta)`` from state(s) ``x`` (..., 12): (..., 3)."""
        return _as_states(x, self.model.nx)[..., 0:3]

    def pusher_pose(self, x) -> np.ndarray:
        """The pusher's pose ``(x, y, theta)`` from state(s) ``x`` (..., 12): (..., 3)."""
        return _as_states(x, self.model.nx)[..., 3:6]

    def t_velocity(self, x) -> np.ndarray:
        """The T's velocity ``(vx, vy, omega)`` from state(s) ``x``: (..., 3)."""
        return _as_states(x, self.model.nx)[..., 6:9]

    def success(self, x):
        """``coverage(t_pose(x)) >= success_coverage``: bool, or a bool array for (..., 12)."""
        c = self.coverage(self.t_pose(x))
        return (
            bool(c >= self.success_coverage)
            if np.ndim(c) == 0
            else np.asarray(c) >= self.success_coverage
        )

    def project_controls(self, U) -> np.ndarray:
        """Controls ``U`` (..., 3) made admissible: ``(vx, vy)`` scaled onto the disk
        ``|(vx, vy)| <= u_max`` where outside it, ``omega`` set to 0.  A new array."""
        a = as_float_array(U, "U")
        if a.ndim < 1 or a.shape[-1] != 3:
            raise ValueError(f"U must have shape (..., 3), got {shape_str(a.shape)}")
        out = a.copy()
        speed = np.hypot(out[..., 0], out[..., 1])
        scale = np.where(speed > self.u_max, self.u_max / np.maximum(speed, 1e-300), 1.0)
        out[..., 0] *= scale
        out[..., 1] *= scale
        out[..., 2] = 0.0
        return out

    def initial_state(self, seed=None) -> np.ndarray:
        """The seeded initial state (12,) of this task's geometry (see the module
        docstring); ``seed=None`` means :data:`DEFAULT_SEED`.  Same seed, same state."""
        return _sample_state(self.vertices, self.params, seed)

    def __repr__(self) -> str:
        return (
            f"PushT(seed={self.seed}, dt={self.dt:g}, u_max={self.u_max:g}, "
            f"T pose={np.round(self.x0[:3], 4).tolist()}, "
            f"pusher={np.round(self.x0[3:5], 4).tolist()})"
        )


def _place(v: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Body-frame points ``v`` (k, 2) at poses ``q`` (..., 3): (..., k, 2)."""
    c, s = np.cos(q[..., 2]), np.sin(q[..., 2])
    x = c[..., None] * v[:, 0] - s[..., None] * v[:, 1] + q[..., 0, None]
    y = s[..., None] * v[:, 0] + c[..., None] * v[:, 1] + q[..., 1, None]
    return np.stack([x, y], axis=-1)


def _as_poses(pose, name) -> np.ndarray:
    q = as_float_array(pose, name)
    if q.ndim < 1 or q.shape[-1] != 3:
        raise ValueError(f"{name} must have shape (..., 3), got {shape_str(q.shape)}")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} must be finite (NaN or inf found)")
    return q


def _as_states(x, nx) -> np.ndarray:
    a = as_float_array(x, "x")
    if a.ndim < 1 or a.shape[-1] != nx:
        raise ValueError(f"x must have shape (..., {nx}), got {shape_str(a.shape)}")
    return a


def _as_seed(seed) -> int:
    return DEFAULT_SEED if seed is None else as_int(seed, "seed", lo=0)


def _sample_state(vertices, params, seed) -> np.ndarray:
    seed = _as_seed(seed)
    rng = np.random.default_rng(seed)
    t = rng.uniform(*_T_RANGE, size=2)
    theta = rng.uniform(-math.pi, math.pi)
    poly = shapely.Polygon(_place(vertices, np.array([t[0], t[1], theta])))
    r = params["pusher_radius"]
    lo, hi = r + params["margin"], WORKSPACE - r - params["margin"]
    for _ in range(_MAX_TRIES):
        p = rng.uniform(lo, hi, size=2)
        if poly.distance(shapely.Point(p)) >= r + params["clearance"]:
            break
    else:  # pragma: no cover - needs a pusher nearly as large as the workspace
        raise ValueError(
            "could not place the pusher clear of the T: pusher_radius, margin "
            "or clearance too large"
        )
    return np.array([t[0], t[1], theta, p[0], p[1], 0.0, 0, 0, 0, 0, 0, 0], dtype=float)


def _check_params(overrides, integrator="implicit") -> dict[str, float]:
    unknown = sorted(set(overrides) - set(PARAMETERS))
    if unknown:
        raise TypeError(
            f"make() got unknown parameter(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(PARAMETERS)}"
        )
    p = dict(PARAMETERS)
    if integrator == "euler":
        p["damping"] = EULER_DAMPING
    for k, v in overrides.items():
        if k in _SIGNED:
            p[k] = as_real(v, k)
            if not math.isfinite(p[k]):
                raise ValueError(f"{k} must be finite, got {p[k]!r}")
        else:
            p[k] = as_positive_float(v, k, allow_zero=k in _ZERO_OK)
    if p["gyration"] > 0.2:
        raise ValueError(f"gyration must be <= 0.2 m, got {p['gyration']!r}")
    if p["wall_inset"] >= 0.05:
        raise ValueError(f"wall_inset must be < 0.05 m, got {p['wall_inset']!r}")
    if max(p["support_radius"], abs(p["support_x"]), abs(p["support_y"])) > 0.2:
        raise ValueError(
            "support_radius, |support_x| and |support_y| must be <= 0.2 m (the T is "
            f"0.12 m wide), got {p['support_radius']!r}, {p['support_x']!r}, {p['support_y']!r}"
        )
    if p["pusher_radius"] + p["margin"] >= WORKSPACE / 2:
        raise ValueError(
            f"pusher_radius + margin must be < {WORKSPACE / 2} (half the "
            f"workspace), got {p['pusher_radius'] + p['margin']!r}"
        )
    if p["spacing"] > 0.03 or p["pusher_spacing"] > p["pusher_radius"]:
        raise ValueError(
            "spacing must be <= 0.03 m and pusher_spacing <= pusher_radius "
            f"(got {p['spacing']!r}, {p['pusher_spacing']!r})"
        )
    return p


def make(seed=None, *, integrator="implicit", goal=None, **overrides) -> PushT:
    """Build the push-T task (see the module docstring).

    Parameters
    ----------
    seed : int, optional
        Seed (>= 0) of the initial state; ``None`` means :data:`DEFAULT_SEED`.
    integrator : {"implicit", "euler"}, optional
        The model's integrator (:meth:`Scene.build`).  ``"euler"`` treats every force
        explicitly and defaults ``damping`` to :data:`EULER_DAMPING`, the most its step
        keeps stable; it gains energy when the T is squeezed against a wall (module
        docstring, Notes).
    goal : (3,) array_like, optional
        The T's goal pose (default :data:`GOAL`).
    **overrides : float
        Values for any of :data:`PARAMETERS` (``mass``, ``support_friction``,
        ``stiffness``, ``damping``, ``friction``, ``wall_friction``, ``dt``, ``u_max``,
        ...).

    Returns
    -------
    PushT

    Raises
    ------
    TypeError
        An unknown parameter name (all of them named), a non-integer seed, a non-real
        parameter value or a non-str ``integrator``.
    ValueError
        An ``integrator`` other than ``"implicit"`` or ``"euler"``, a negative seed, a
        parameter that is not finite or out of range (> 0; >= 0 for frictions, damping,
        clearance, margin, ``support_radius``, ``wall_inset`` and ``gyration``; any sign for
        ``support_x`` and ``support_y``), a pusher that does not fit in the workspace,
        ``spacing`` > 0.03 m or ``pusher_spacing`` > ``pusher_radius``, ``wall_inset``
        >= 0.05 m, a support or ``gyration`` beyond 0.2 m, or a ``goal`` that is not 3
        finite numbers.
    """
    seed = _as_seed(seed)
    if not isinstance(integrator, str):
        raise TypeError(f"integrator must be a str, got {type(integrator).__name__}")
    if integrator not in ("implicit", "euler"):
        raise ValueError(f"integrator must be 'implicit' or 'euler', got {integrator!r}")
    p = _check_params(overrides, integrator)
    L = WORKSPACE
    # the T, origin at its centre of mass (t_shape_vertices are centred on the area
    # centroid; the scene moves the body frame to the centroid it computes, which agrees
    # to rounding -- apply the same shift so that the polygon is the model's cloud)
    raw = PointCloud.t_shape(spacing=p["spacing"])
    com = np.asarray(raw.mass_properties(1.0).com, dtype=float)
    cloud = raw if not np.any(com) else raw.transformed([-com[0], -com[1], 0.0])
    vertices = _readonly(PointCloud.t_shape_vertices() - com)
    x0 = _sample_state(vertices, p, seed)

    scene = Scene(dim=2)
    # the scene moves the body frame to the same centre of mass: its cloud is ``cloud``
    # and its pose is the sampled one (to rounding)
    c, s = math.cos(x0[2]), math.sin(x0[2])
    cloud_pose = [x0[0] - (c * com[0] - s * com[1]), x0[1] - (s * com[0] + c * com[1]), x0[2]]
    inertia = p["mass"] * p["gyration"] ** 2 if p["gyration"] > 0 else None
    scene.add_body(raw, mass=p["mass"], inertia=inertia, pose=cloud_pose, name="T")
    r = p["pusher_radius"]
    pusher_cloud = PointCloud.disk(r, p["pusher_spacing"])
    scene.add_body(pusher_cloud, kind="kinematic", pose=x0[3:6], name="pusher")
    a, b = p["wall_inset"], L - p["wall_inset"]  # the walls' inner faces
    walls = {  # name: (point on the line, 1 m outside the workspace; inward normal)
        "wall_left": ([a, -_WALL_OFFSET], [1.0, 0.0]),
        "wall_right": ([b, L + _WALL_OFFSET], [-1.0, 0.0]),
        "wall_bottom": ([L + _WALL_OFFSET, a], [0.0, 1.0]),
        "wall_top": ([-_WALL_OFFSET, b], [0.0, -1.0]),
    }
    for name, (point, normal) in walls.items():
        scene.add_body(PointCloud.halfspace(point, normal), kind="static", name=name)
    common = {
        "eps": p["eps"],
        "eps_c": p["eps_c"],
        "beta": p["beta"],
        "stiffness": p["stiffness"],
        "damping": p["damping"],
        "slip_velocity": p["contact_slip_velocity"],
    }
    scene.add_contact("T", "pusher", ContactParams(friction=p["friction"], **common))
    wall_params = ContactParams(friction=p["wall_friction"], **common)
    for name in walls:
        scene.add_contact("T", name, wall_params)
    support = None  # the default: a grid over the T's footprint
    if p["support_radius"] > 0 or p["support_x"] or p["support_y"]:
        phi = 2 * math.pi * np.arange(_SUPPORT_RING) / _SUPPORT_RING
        support = np.column_stack([np.cos(phi), np.sin(phi)]) * p["support_radius"]
        support += [p["support_x"], p["support_y"]]  # centre, relative to the centroid
    scene.add_support(
        "T",
        friction=p["support_friction"],
        samples=support,
        slip_velocity=p["support_slip_velocity"],
    )
    model = scene.build(p["dt"], integrator)
    if not np.allclose(model.initial_state(), x0, rtol=0.0, atol=1e-15):  # pragma: no cover
        raise AssertionError("the model's initial state differs from the sampled one")

    goal = _readonly(GOAL if goal is None else _as_poses(goal, "goal"))
    if goal.shape != (3,):
        raise ValueError(f"goal must have shape (3,), got {shape_str(goal.shape)}")
    task = PushT(
        model=model,
        x0=_readonly(x0),
        goal=goal,
        dt=model.dt,
        u_max=p["u_max"],
        cloud=cloud,
        pusher_cloud=pusher_cloud,
        pusher_radius=r,
        vertices=vertices,
        params=types.MappingProxyType(p),
        seed=seed,
        wall_names=tuple(walls),
    )
    return task
