"""Rigid-body scenes and their compiled models (docs/method.md sections 3, 6-7).

A :class:`Scene` collects bodies (oriented point clouds with mass properties), the pairs
of bodies that touch (each with its :class:`~softcontact.ContactParams`) and planar support
friction; :meth:`Scene.build` compiles it into an immutable :class:`Model` whose
:meth:`~Model.step` advances the state by one semi-implicit Euler step with closed-form
first and second derivatives, and whose :meth:`~Model.rollout` runs batches of
trajectories in C across threads.

State ``x``: the positions of the moving (dynamic and kinematic) bodies in the order they
were added, then their velocities: 2D ``(x, y, theta)`` / ``(vx, vy, omega)``; 3D
``(p, qw, qx, qy, qz)`` / ``(v (world), omega (body))``.  Positions are those of each
body's centre of mass (its body frame).  Derivatives are taken in tangent coordinates
(size ``2 nv``; :meth:`Model.retract`, :meth:`Model.difference`).  Controls ``u``: a
generalized force (nv) for each actuated dynamic body, the velocity (nv) for each
kinematic body, in body order.
"""

from __future__ import annotations

import logging
import math
import numbers
import warnings
from typing import NamedTuple

import numpy as np

from . import _core
from ._validate import (
    COORD_MAX,
    DT_RANGE,
    FORCE_MAX,
    FRICTION_RANGE,
    GRAVITY_MAX,
    REACH_MAX,
    SLIP_RANGE,
    SPEED_MAX,
    UNIT_NORMALIZE_TOL,
    UNIT_TOL,
    SoftContactWarning,
    as_batch,
    as_float_array,
    as_in_range,
    as_int,
    as_num_threads,
    as_positive_float,
    check_within,
    first_non_unit,
    has_batch,
    near_unit,
    quaternion_norms,
    shape_str,
)
from ._validate import MASS_RANGE as _MASS_RANGE
from .cloud import PointCloud
from .contact import ContactParams, _as_pose
from .spatial import pose_difference, retract
from .ssdf import _packed, _run_options, _sphere

_F64 = np.dtype(np.float64)
# Scene.build's max_travel: body radii (and radians) per step past which a step diverged
DEFAULT_MAX_TRAVEL = 100.0
_EMPTY = np.zeros(0)
_EMPTY.flags.writeable = False


def _all_finite(a: np.ndarray) -> bool:
    """Whether every entry of the 1-D ``a`` is finite (on the short vectors of a state, a
    Python-level test is 2.5x faster than ``np.isfinite(a).all()``)."""
    if a.size <= 64:
        return all(map(math.isfinite, a.tolist()))
    return bool(np.isfinite(a).all())


logger = logging.getLogger(__name__)

__all__ = ["Scene", "Model", "StepResult", "Rollout", "Energy", "Momentum"]

_INTEGRATORS = {"euler": 0, "implicit": 1}
_KINDS = {"dynamic": 0, "kinematic": 1, "static": 2}
_DEFAULT_DENSITY = {2: 10.0, 3: 1000.0}

#: The range of a dynamic body's mass (kg) and of its inertia (the eigenvalues of the 3D
#: tensor, the polar moment in 2D; kg m^2) that :meth:`Scene.add_body` and :class:`Model`
#: accept.  Products of up to three such numbers are normal floats: the C core checks an
#: inertia tensor by its leading principal minors, which underflow to 0 (or overflow) for
#: values far outside it.  (The C core's SC_MASS_MIN, SC_MASS_MAX.)
MASS_RANGE = _MASS_RANGE


def _check_mass_inertia(name, mass, inertia, dim, how_mass="", how="") -> None:
    """ValueError naming body ``name`` and the quantity unless ``mass`` and ``inertia`` (a
    (1, 1) or (3, 3) array) are in :data:`MASS_RANGE` and the inertia passes the C core's
    checks (exactly symmetric, leading principal minors > 0 in double precision).
    ``how_mass`` and ``how`` say where the mass and the inertia came from, for the
    messages."""
    lo, hi = MASS_RANGE
    rng = f"[{lo:g}, {hi:g}]"
    if not lo <= mass <= hi:
        raise ValueError(f"mass of body {name!r} must be in {rng} kg, got {mass:.6g}{how_mass}")
    J = np.asarray(inertia, dtype=float)
    if not np.all(np.isfinite(J)):
        raise ValueError(f"inertia of body {name!r} must be finite{how}")
    if dim == 2:
        ev = J.reshape(-1)[:1]
        what = "inertia"
    else:
        if not np.array_equal(J, J.T):
            raise ValueError(f"inertia of body {name!r} must be exactly symmetric{how}")
        ev = np.linalg.eigvalsh(J)
        what = "inertia eigenvalues"
    if not (ev.min() >= lo and ev.max() <= hi):
        got = f"{ev[0]:.6g}" if dim == 2 else f"[{', '.join(f'{e:.6g}' for e in ev)}]"
        raise ValueError(f"{what} of body {name!r} must be in {rng} kg m^2, got {got}{how}")
    if dim == 3:
        # the C core's test (sc_model_check), with its arithmetic
        j = J.reshape(-1).tolist()
        d2 = j[0] * j[4] - j[1] * j[3]
        d3 = (
            j[0] * (j[4] * j[8] - j[5] * j[7])
            - j[1] * (j[3] * j[8] - j[5] * j[6])
            + j[2] * (j[3] * j[7] - j[4] * j[6])
        )
        if not (j[0] > 0 and d2 > 0 and d3 > 0):
            raise ValueError(
                f"inertia of body {name!r} is too ill-conditioned for double precision: its "
                f"leading principal minors must be > 0, got {j[0]:.3g}, {d2:.3g}, {d3:.3g}"
                f"{how}"
            )


def _check_body_range(b, D) -> None:
    """ValueError naming body ``b`` unless its pose, velocity, cloud and support are in the
    valid ranges (docs/method.md, "Valid ranges"): what :meth:`Scene.add_body` and
    :meth:`Scene.add_support` leave, checked again before a model is built (a scene changed
    behind their back, or unpickled from tampered data)."""
    name = b.name
    t = np.asarray(b.pose[:D], dtype=float)
    if not np.all(np.abs(t) <= COORD_MAX):
        raise ValueError(
            f"pose of body {name!r} must have its translation (a dynamic body's: its centre "
            f"of mass's) within [-{COORD_MAX:g}, {COORD_MAX:g}] m, got {t.tolist()}"
        )
    v = np.asarray(b.velocity, dtype=float)
    if not np.all(np.abs(v) <= SPEED_MAX):
        raise ValueError(
            f"velocity of body {name!r} must have components within [-{SPEED_MAX:g}, "
            f"{SPEED_MAX:g}] (m/s, rad/s), got {v.tolist()}"
        )
    if len(b.cloud):
        r = _sphere(b.cloud)[2]
        if not r <= COORD_MAX:
            raise ValueError(
                f"cloud of body {name!r} must lie within {COORD_MAX:g} m of the body frame's "
                f"origin (a dynamic body's: its centre of mass), got a radius of {r:.6g} m"
            )
    if b.support is not None:
        pts, _, mu, g, vs = b.support
        lo_s, hi_s = SLIP_RANGE
        if not (
            np.all(np.abs(pts) <= COORD_MAX)
            and FRICTION_RANGE[0] <= mu <= FRICTION_RANGE[1]
            and 0 < g <= GRAVITY_MAX
            and lo_s <= vs <= hi_s
        ):
            raise ValueError(
                f"support of body {name!r} must have its friction in [0, {FRICTION_RANGE[1]:g}], "
                f"gravity in (0, {GRAVITY_MAX:g}] m/s^2, slip_velocity in [{lo_s:g}, {hi_s:g}] "
                f"m/s and samples within {COORD_MAX:g} m of the centre of mass"
            )


class _Body:
    __slots__ = (
        "name",
        "cloud",
        "kind",
        "actuated",
        "mass",
        "inertia",
        "com",
        "pose",
        "velocity",
        "support",
        "parts",
    )
    name: str
    cloud: PointCloud
    kind: str
    actuated: bool
    mass: float
    inertia: np.ndarray
    com: np.ndarray
    pose: np.ndarray
    velocity: np.ndarray
    support: tuple | None
    # the geoms a body was assembled from (softcontact.mjcf), in its body frame, or None
    parts: tuple | None

    def __repr__(self):
        return f"<body {self.name!r}: {self.kind}, {len(self.cloud)} samples>"

    # a class with __slots__ pickles with protocols 0 and 1 only through these
    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__ if hasattr(self, k)}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)

    def copy(self) -> _Body:
        """A shallow copy (the arrays are never changed in place: shared)."""
        b = _Body()
        b.__setstate__(self.__getstate__())
        return b


class StepResult(NamedTuple):
    """Result of :meth:`Model.step`; fields above the requested order are None (a batched
    step: each field with the batch's leading dimensions first).

    Shapes with nx = nq + nv, n = 2 nv (tangent), nu controls, np parameters:
    ``x_next`` (nx,), ``dx_dx`` (n, n), ``dx_du`` (n, nu), ``d2x_dx2`` (n, n, n),
    ``d2x_dxdu`` (n, n, nu), ``d2x_du2`` (n, nu, nu), ``dx_dp`` (n, np) (``params=True``;
    columns named by :attr:`Model.param_names`).  Second derivatives are symmetric in the
    two derivative indices.
    """

    x_next: np.ndarray
    dx_dx: np.ndarray | None
    dx_du: np.ndarray | None
    d2x_dx2: np.ndarray | None
    d2x_dxdu: np.ndarray | None
    d2x_du2: np.ndarray | None
    dx_dp: np.ndarray | None


def _step_result(t) -> StepResult:
    """The binding's 7-tuple as a StepResult (tuple.__new__: what the NamedTuple's own
    __new__ does, without its argument parsing)."""
    return tuple.__new__(StepResult, t)


class StabilityLimit(NamedTuple):
    """One bound of :meth:`Scene.stability_limits`: the largest time step ``dt_max`` (s)
    for which ``term`` of ``where`` (a contact pair ``"contact(a,b)"`` or a body) keeps the
    step stable."""

    where: str
    term: str
    dt_max: float


class Rollout(NamedTuple):
    """Result of :meth:`Model.rollout` (batch dimensions ``...`` of ``x0``/``U`` first).

    ``states`` (..., T + 1, nx); ``dx_dx`` (..., T, n, n) and ``dx_du`` (..., T, n, nu) at
    order 1 (else None); ``status`` (...) int: 0 for a trajectory that completed, else the
    C status of the step that ended it: ``SC_EDIVERGED`` (-6) when step ``t`` diverged
    (:class:`DivergenceError`'s criterion; state ``t + 1`` and Jacobians ``t`` are that
    step's, everything after is NaN), ``SC_ENONFINITE`` (-3) for a non-finite start state
    or control, ``SC_ERANGE`` (-8) for a control outside its valid range (NaN from state
    ``t + 1`` on); ``failed_step`` (...) int: that step ``t`` (0 <= t < T), -1 for a
    trajectory that completed (the last step included).
    """

    states: np.ndarray
    dx_dx: np.ndarray | None
    dx_du: np.ndarray | None
    status: np.ndarray
    failed_step: np.ndarray


class Energy(NamedTuple):
    """Energies of the dynamic bodies (J): kinetic, gravitational potential ``-m g . t``,
    contact potential (sum of the pairs' ``U``) and their total."""

    kinetic: float
    potential: float
    contact: float
    total: float


class Momentum(NamedTuple):
    """Momentum of the dynamic bodies: ``linear`` (D,) and ``angular`` about the world
    origin (2D: float; 3D: (3,), world frame)."""

    linear: np.ndarray
    angular: float | np.ndarray


def _footprint(cloud: PointCloud, count: int) -> np.ndarray:
    """About ``count`` points on a regular grid inside a 2D cloud's recorded shape."""
    geo = cloud._geometry
    if geo is None or geo.dim != 2 or geo.shape == "halfspace":
        raise ValueError(
            "support samples=None needs a cloud built by box, disk, capsule, "
            "polygon or t_shape (2D); pass samples= explicitly"
        )
    p = geo.params
    if geo.shape == "box":
        lo, hi = -np.asarray(p["half_extents"]), np.asarray(p["half_extents"])
    elif geo.shape == "disk":
        lo, hi = -np.full(2, p["radius"]), np.full(2, p["radius"])
    elif geo.shape == "capsule":
        lo = -np.array([p["half_length"] + p["radius"], p["radius"]])
        hi = -lo
    else:
        v = np.asarray(p["vertices"])
        lo, hi = v.min(axis=0), v.max(axis=0)
    area = cloud.mass_properties(1.0).mass
    h = np.sqrt(area / count)
    nx_, ny_ = (np.maximum(1, np.round((hi - lo) / h))).astype(int)
    gx = lo[0] + (np.arange(nx_) + 0.5) * (hi[0] - lo[0]) / nx_
    gy = lo[1] + (np.arange(ny_) + 0.5) * (hi[1] - lo[1]) / ny_
    g = np.stack(np.meshgrid(gx, gy, indexing="ij"), axis=-1).reshape(-1, 2)
    if geo.shape == "box":
        inside = np.all(np.abs(g) <= hi, axis=1)
    elif geo.shape == "disk":
        inside = np.hypot(g[:, 0], g[:, 1]) <= p["radius"]
    elif geo.shape == "capsule":
        cx = np.clip(g[:, 0], -p["half_length"], p["half_length"])
        inside = np.hypot(g[:, 0] - cx, g[:, 1]) <= p["radius"]
    else:
        v = np.asarray(p["vertices"])
        a, b = v, np.roll(v, -1, axis=0)
        y = g[:, 1:2]
        crosses = (a[:, 1] > y) != (b[:, 1] > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            xint = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
        inside = np.sum(crosses & (g[:, 0:1] < xint), axis=1) % 2 == 1
    pts = g[inside]
    if len(pts) == 0:
        raise ValueError("the support footprint grid is empty; pass samples= explicitly")
    return pts @ geo.rot.T + geo.trans


class Scene:
    """A rigid-body scene under construction (mutable); :meth:`build` compiles it.

    Parameters
    ----------
    dim : {2, 3}
        Dimension of every body.
    gravity : array_like, optional
        World gravity, m/s^2: default ``(0, 0, -9.81)`` in 3D, ``(0, 0)`` in 2D (a table
        seen from above; weight enters through :meth:`add_support`); components within
        1e12 m/s^2.

    Every quantity a scene and its model take has a valid range, within which every
    output of :meth:`Model.step` is finite at every order (docs/method.md, "Valid
    ranges"; :meth:`add_body`, :meth:`add_support`, :meth:`build` and
    :class:`~softcontact.ContactParams` list them).

    ``timestep`` is the time step (s) of the MuJoCo model a scene was loaded from
    (:meth:`from_mjcf`, :meth:`from_mujoco`: ``scene.build(scene.timestep)`` steps as
    that model does), None for a scene built here; :meth:`to_mjcf` writes it by default.

    Examples
    --------
    >>> import softcontact as sc
    >>> scene = sc.Scene(dim=2)
    >>> T = scene.add_body(sc.PointCloud.t_shape(), mass=0.1, pose=[0.25, 0.25, 0.0], name="T")
    >>> pusher = scene.add_body(sc.PointCloud.disk(0.015, 0.003), kind="kinematic",
    ...                         pose=[0.25, 0.15, 0.0], name="pusher")
    >>> scene.add_contact("T", "pusher")
    >>> scene.add_support("T", friction=0.3)
    >>> model = scene.build(dt=0.003)
    >>> model.nx, model.nu
    (12, 3)
    """

    def __init__(self, dim=3, gravity=None) -> None:
        self.dim = as_int(dim, "dim", 2, 3)
        if gravity is None:
            gravity = [0.0, 0.0, -9.81] if self.dim == 3 else [0.0, 0.0]
        g = as_float_array(gravity, "gravity")
        if g.shape != (self.dim,):
            raise ValueError(f"gravity must have shape ({self.dim},), got {shape_str(g.shape)}")
        if not np.all(np.isfinite(g)):
            raise ValueError("gravity must be finite")
        check_within(g, "gravity", GRAVITY_MAX, "components", " m/s^2")
        self.gravity = g.copy()
        self._bodies: list[_Body] = []
        self._pairs: list[tuple[int, int, ContactParams | _Fitted]] = []

    #: The time step of the MuJoCo model the scene was loaded from (s), or None.
    timestep: float | None = None

    # -- MuJoCo models in and out (softcontact.mjcf) -------------------------------------

    @classmethod
    def from_mjcf(cls, mjcf, spacing, *, keyframe=None) -> Scene:
        """The scene of an MJCF model (a file path or the XML text): see
        :func:`softcontact.mjcf.from_mjcf`, which this calls."""
        from .mjcf import from_mjcf

        return from_mjcf(mjcf, spacing, keyframe=keyframe)

    @classmethod
    def from_mujoco(cls, model, spacing, *, keyframe=None) -> Scene:
        """The scene of a compiled ``mujoco.MjModel``: see
        :func:`softcontact.mjcf.from_mujoco`, which this calls."""
        from .mjcf import from_mujoco

        return from_mujoco(model, spacing, keyframe=keyframe)

    def to_mjcf(self, dt=None, *, exact=True, model_name="softcontact") -> str:
        """The MJCF text of the equivalent MuJoCo model: see
        :func:`softcontact.mjcf.to_mjcf`, which this calls."""
        from .mjcf import to_mjcf

        return to_mjcf(self, dt, exact=exact, model_name=model_name)

    # -- construction --------------------------------------------------------------------

    def _index(self, body, name="body") -> int:
        if isinstance(body, str):
            for i, b in enumerate(self._bodies):
                if b.name == body:
                    return i
            raise ValueError(f"{name}: no body named {body!r}")
        if isinstance(body, (bool, np.bool_)) or not isinstance(body, numbers.Integral):
            raise TypeError(f"{name} must be a body name or index, got {type(body).__name__}")
        i = int(body)
        if not 0 <= i < len(self._bodies):
            raise ValueError(
                f"{name}: index {i} out of range (the scene has {len(self._bodies)} bodies)"
            )
        return i

    def add_body(
        self,
        cloud,
        mass=None,
        density=None,
        inertia=None,
        pose=None,
        velocity=None,
        kind="dynamic",
        actuated=False,
        name=None,
        *,
        com=None,
    ) -> str:
        """Add a body; returns its name.

        Parameters
        ----------
        cloud : PointCloud
            The body's samples in its own (cloud) frame, same dimension as the scene.
        mass, density : float, optional
            Dynamic bodies: give ``mass`` (kg), or ``density`` (kg/m^3 in 3D, kg/m^2 in
            2D) to compute it from the cloud's geometry (default density: 1000 kg/m^3, or
            10 kg/m^2 in 2D -- a 1 cm water-density sheet).  Not both.  The mass, given
            or computed, must be in [1e-100, 1e100] kg (:data:`MASS_RANGE`).
        inertia : float or array_like, optional
            About the centre of mass, in the cloud's axes: 2D a float (kg m^2); 3D a (3, 3)
            symmetric positive-definite matrix or its diagonal (3,).  Default: from the
            geometry (:meth:`PointCloud.mass_properties`) scaled to ``mass``.  Given or
            computed, the 2D inertia and the eigenvalues of the 3D one must be in [1e-100,
            1e100] kg m^2, and a 3D inertia must be well enough conditioned that its
            leading principal minors are positive in double precision (the C core's
            check).
        pose : array_like, optional
            Pose of the cloud's frame (default: identity).  For a dynamic body the body
            frame -- and the state's position -- is its centre of mass, with the cloud's
            axes; kinematic and static bodies (no mass) keep the cloud's frame.  The
            translation (and the centre of mass's) within 1e12 m; the cloud within 1e12 m
            of the body frame's origin.
        velocity : array_like, optional
            Initial velocity (nv), default 0; for a static body it must be 0.  Components
            within 1e8 (m/s, rad/s).
        kind : {"dynamic", "kinematic", "static"}
            Dynamic bodies move under forces; kinematic bodies move with their control
            velocity and push without being pushed; static bodies never move.
        actuated : bool
            Dynamic bodies only: a generalized-force control.
        name : str, optional
            Unique name (default ``"body<i>"``).
        com : (D,) array_like, optional
            Dynamic bodies given ``mass`` and ``inertia`` only: the centre of mass in the
            cloud's frame (within 1e12 m), in place of the geometry's (a body whose mass
            is not spread as its cloud's solid: an MJCF ``<inertial>``, a composite of
            parts).  The inertia is about this point.

        Raises
        ------
        TypeError
            If an argument has the wrong type.
        ValueError
            If an argument has the wrong shape or value; the messages name the argument
            and, for the mass and inertia, the body.
        """
        if not isinstance(cloud, PointCloud):
            raise TypeError(f"cloud must be a PointCloud, got {type(cloud).__name__}")
        if cloud.dim != self.dim:
            raise ValueError(f"cloud is {cloud.dim}D but the scene is {self.dim}D")
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {sorted(_KINDS)}, got {kind!r}")
        if not isinstance(actuated, (bool, np.bool_)):
            raise TypeError(f"actuated must be a bool, got {type(actuated).__name__}")
        if actuated and kind != "dynamic":
            raise ValueError(
                f"only dynamic bodies are actuated by force ({kind} body: a "
                "kinematic body's control is its velocity)"
            )
        if name is None:
            name = f"body{len(self._bodies)}"
        if not isinstance(name, str) or not name:
            raise TypeError("name must be a non-empty str")
        if any(b.name == name for b in self._bodies):
            raise ValueError(f"a body named {name!r} already exists")
        D = self.dim
        nv = 3 if D == 2 else 6
        cloud_pose = (
            _as_pose([0.0] * 3 if D == 2 else [0, 0, 0, 1, 0, 0, 0], "pose", D)
            if pose is None
            else _as_pose(pose, "pose", D)
        )
        vel = np.zeros(nv) if velocity is None else as_float_array(velocity, "velocity")
        if vel.shape != (nv,):
            raise ValueError(f"velocity must have shape ({nv},), got {shape_str(vel.shape)}")
        if not np.all(np.isfinite(vel)):
            raise ValueError("velocity must be finite")
        check_within(vel, "velocity", SPEED_MAX, "components", " (m/s, rad/s)")
        if kind == "static" and np.any(vel != 0):
            raise ValueError("a static body's velocity must be zero")
        if kind != "dynamic" and (mass is not None or density is not None or inertia is not None):
            raise ValueError(
                f"mass, density and inertia apply to dynamic bodies only ({kind} body {name!r})"
            )
        if kind != "dynamic" and com is not None:
            raise ValueError(f"com applies to dynamic bodies only ({kind} body {name!r})")
        com_given = None
        if com is not None:
            if mass is None or inertia is None:
                raise ValueError(
                    "com needs mass and inertia too (the inertia is about the centre of mass)"
                )
            com_given = as_float_array(com, "com")
            if com_given.shape != (D,):
                raise ValueError(f"com must have shape ({D},), got {shape_str(com_given.shape)}")
            if not np.all(np.isfinite(com_given)):
                raise ValueError("com must be finite")
            check_within(com_given, "com", COORD_MAX, "coordinates", " m")
        b = _Body()
        b.name, b.kind, b.actuated = name, kind, bool(actuated)
        b.velocity = vel.copy()
        b.support = None
        b.parts = None
        com = np.zeros(D)
        mass_out, inertia_out = 0.0, np.zeros((3, 3))
        if kind == "dynamic":
            if mass is not None and density is not None:
                raise ValueError("give mass or density, not both")
            props = None
            if com_given is None:  # else mass, inertia and com are all given
                try:
                    props = cloud.mass_properties(
                        _DEFAULT_DENSITY[D]
                        if density is None
                        else as_positive_float(density, "density")
                    )
                except ValueError:
                    # no geometry (a halfspace, an open raw cloud): fine if both are given
                    if mass is None or inertia is None:
                        raise
            if com_given is not None:
                com = com_given.copy()
            elif props is not None:
                com = np.asarray(props.com, dtype=float)
            if mass is None:
                assert props is not None  # mass_properties raised otherwise
                mass_out = float(props.mass)
                how_m = (
                    f" (from the default density {_DEFAULT_DENSITY[D]:g} and the cloud's size)"
                    if density is None
                    else f" (from density={float(density):g} and the cloud's size)"
                )
            else:
                mass_out = as_positive_float(mass, "mass")
                how_m = ""
            if inertia is None:
                assert props is not None
                with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                    inertia_out = np.atleast_2d(np.asarray(props.inertia, dtype=float)) * (
                        mass_out / props.mass
                    )
                how_i = f" (from the cloud's geometry at mass {mass_out:.6g} kg)"
            else:
                inertia_out = self._as_inertia(inertia)
                how_i = ""
            _check_mass_inertia(name, mass_out, inertia_out, D, how_m, how_i)
        b.mass = mass_out
        b.inertia = inertia_out
        b.com = com
        # body frame = centre of mass with the cloud's axes; samples relative to it
        b.cloud = (
            cloud
            if not np.any(com)
            else cloud.transformed(
                np.concatenate([-com, [0.0]]) if D == 2 else np.concatenate([-com, [1, 0, 0, 0]])
            )
        )
        R = _rot(cloud_pose, D)
        t = cloud_pose[:D] + R @ com
        b.pose = np.concatenate([t, cloud_pose[D:]])
        _check_body_range(b, D)
        self._bodies.append(b)
        return name

    def _as_inertia(self, inertia):
        if self.dim == 2:
            return np.array([[as_positive_float(inertia, "inertia")]])
        a = as_float_array(inertia, "inertia")
        if a.shape == (3,):
            a = np.diag(a)
        if a.shape != (3, 3):
            raise ValueError(f"inertia must have shape (3, 3) or (3,), got {shape_str(a.shape)}")
        if not np.all(np.isfinite(a)) or not np.array_equal(a, a.T):
            raise ValueError("inertia must be finite and exactly symmetric")
        if np.any(np.linalg.eigvalsh(a) <= 0):
            raise ValueError("inertia must be positive definite")
        return a.copy()

    def add_contact(self, body_a, body_b, params=None, *, friction=None) -> None:
        """Let two bodies touch, with the soft-minimum contact model.

        ``params`` (a :class:`ContactParams`) gives every parameter of the pair.  Without
        it the parameters are fitted to the two bodies, the scene's gravity and the time
        step and integrator of each :meth:`build` (:meth:`ContactParams.for_bodies`; the
        built model lists them in ``Model.contact_params``), with the Coulomb coefficient
        ``friction`` (default 0.5; only without ``params``).  Errors: a body with itself,
        two static bodies, a pair that cannot affect any dynamic body (kinematic or static
        with kinematic or static), or a pair added twice.
        """
        ia, ib = self._index(body_a, "body_a"), self._index(body_b, "body_b")
        if ia == ib:
            raise ValueError(f"a body cannot be in contact with itself ({self._bodies[ia].name!r})")
        ka, kb = self._bodies[ia].kind, self._bodies[ib].kind
        if ka == "static" and kb == "static":
            raise ValueError("a contact between two static bodies has no effect")
        if ka != "dynamic" and kb != "dynamic":
            raise ValueError(
                f"a contact between a {ka} and a {kb} body has no effect: neither is pushed"
            )
        if params is None:
            mu = 0.5 if friction is None else as_in_range(friction, "friction", *FRICTION_RANGE)
            _check_fittable(self._bodies[ia], self._bodies[ib])
            params = _Fitted(mu)
        elif not isinstance(params, ContactParams):
            raise TypeError(f"params must be a ContactParams, got {type(params).__name__}")
        elif friction is not None:
            raise ValueError("give friction in params (ContactParams(friction=...)), not both")
        if any({a, b} == {ia, ib} for a, b, _ in self._pairs):
            raise ValueError(
                f"the contact between {self._bodies[ia].name!r} and "
                f"{self._bodies[ib].name!r} already exists"
            )
        self._pairs.append((ia, ib, params))

    def _fits(self, dt=None, integrator="euler"):
        """[(a, b, _FitResult or None)]: each pair's fit, None for given parameters."""
        return [
            (a, c, _fit(self, a, c, dt, integrator, p.friction) if isinstance(p, _Fitted) else None)
            for a, c, p in self._pairs
        ]

    def _resolved_pairs(self, dt=None, integrator="euler", fits=None):
        """[(a, b, ContactParams)]: the pairs with their fitted parameters filled in (from
        ``fits``, _fits' result, when given)."""
        fits = self._fits(dt, integrator) if fits is None else fits
        return [
            (a, c, f.params if f is not None else p)
            for (a, c, p), (_, _, f) in zip(self._pairs, fits, strict=True)
        ]

    def add_support(
        self, body, friction, samples=None, *, gravity=9.81, slip_velocity=0.01
    ) -> None:
        """Planar support friction of a 2D dynamic body sliding on a table (docs/method.md
        section 6).

        The weight ``m g`` is spread evenly over ``samples`` (k, 2) in the cloud's frame
        (default: a grid of about 200 points inside the cloud's recorded shape); each
        carries ``-L_l v_l / sqrt(|v_l|^2 + v_s^2)`` with ``L_l = friction m g / k``,
        which gives the torsional friction of the footprint too.

        Valid ranges (docs/method.md): ``friction`` in [0, 1000], ``gravity`` in (0, 1e12]
        m/s^2, ``slip_velocity`` in [1e-12, 1e8] m/s, ``samples`` within 1e12 m of the
        centre of mass.

        Stability: this explicit friction acts like a velocity damper of rate about
        ``friction g / slip_velocity`` (1/s) on the sliding body, so the step needs
        ``dt * friction * gravity / slip_velocity < 2`` -- e.g. friction 0.3 with the
        default slip velocity 0.01 m/s needs dt < 6.8 ms (a resting body jitters and its
        velocity grows otherwise); raise ``slip_velocity`` for longer steps.
        """
        i = self._index(body)
        b = self._bodies[i]
        if self.dim != 2:
            raise ValueError("support friction is planar: 2D scenes only")
        if b.kind != "dynamic":
            raise ValueError(f"support friction acts on dynamic bodies, {b.name!r} is {b.kind}")
        if b.support is not None:
            raise ValueError(f"{b.name!r} already has a support")
        mu = as_in_range(friction, "friction", *FRICTION_RANGE)
        g = as_positive_float(gravity, "gravity")
        if g > GRAVITY_MAX:
            raise ValueError(f"gravity must be in (0, {GRAVITY_MAX:g}] m/s^2, got {g!r}")
        vs = as_in_range(slip_velocity, "slip_velocity", *SLIP_RANGE, " m/s")
        if samples is None:
            # b.cloud (and its recorded shape) is already relative to the centre of mass
            pts = _footprint(b.cloud, 200)
        else:
            pts = as_float_array(samples, "samples")
            if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) < 1:
                raise ValueError(
                    f"samples must have shape (k, 2), k >= 1, got {shape_str(pts.shape)}"
                )
            if not np.all(np.isfinite(pts)):
                raise ValueError("samples must be finite")
            pts = pts - b.com
            check_within(pts, "samples", COORD_MAX, "coordinates (from the centre of mass)")
        b.support = (
            np.ascontiguousarray(pts, dtype=float),
            np.full(len(pts), 1.0 / len(pts)),
            mu,
            g,
            vs,
        )

    def _snapshot(self) -> Scene:
        """A copy of the scene as it is now, sharing the clouds and arrays (which are never
        changed in place): :class:`Model` keeps one to be pickled."""
        snap = Scene.__new__(Scene)
        snap.dim = self.dim
        snap.gravity = self.gravity.copy()
        snap._bodies = [b.copy() for b in self._bodies]
        snap._pairs = list(self._pairs)
        if self.timestep is not None:
            snap.timestep = self.timestep
        return snap

    def __repr__(self):
        lines = [
            f"Scene(dim={self.dim}, gravity={self.gravity.tolist()}, "
            f"{len(self._bodies)} bodies, {len(self._pairs)} contacts)"
        ]
        for b in self._bodies:
            extra = f", mass {b.mass:.4g} kg" if b.kind == "dynamic" else ""
            extra += ", actuated" if b.actuated else ""
            extra += ", support" if b.support is not None else ""
            lines.append(f"  {b.name}: {b.kind}, {len(b.cloud)} samples{extra}")
        for a, c, _ in self._pairs:
            lines.append(f"  contact {self._bodies[a].name} - {self._bodies[c].name}")
        return "\n".join(lines)

    # -- compilation ---------------------------------------------------------------------

    def build(self, dt, integrator="euler", *, max_travel=DEFAULT_MAX_TRAVEL) -> Model:
        """Compile into an immutable :class:`Model` with time step ``dt`` (s, in [1e-12,
        1e3]).

        ``integrator`` (docs/method.md section 7):

        - ``"euler"``: semi-implicit Euler, forces at the current state.  Every derivative
          order and ``params=True``; stable only below the time step of the stiffest
          velocity-dependent force (friction in the stick regime, ``2 v_s m_eff / (mu N)``:
          0.74 ms for a 1 kg, 10 cm box resting on a floor with ``ContactParams()``;
          :meth:`stability_limits`).
        - ``"implicit"``: the velocity-dependent forces (contact damping, friction, support
          friction) at the new velocities, friction with its coefficient ``mu lambda /
          |t|_s`` held at the current ones (lagged) -- one linear solve per step, no
          iteration, so the step stays a smooth closed-form map (docs/method.md section
          7); that box rests at 10 ms steps, and sliding stops within 1.3 % of Coulomb's
          distance at 5 ms.  Every derivative order and ``params=True``, exact (the
          second derivatives without third derivatives of the forces: docs/method.md
          section 7).  A value step costs about as much as an Euler step with first
          derivatives; with first derivatives about 2.5x, with second derivatives about
          3.5x the Euler step of the same order (push-T and a box on a floor).

        The default, ``"euler"``, is the cheaper step, right wherever its time step is
        below the stability limits (2D tasks such as push-T at 10 ms, fine steps in 3D);
        3D scenes in resting contact at steps above ~1 ms want ``"implicit"``
        (benchmarks/physics.py and docs/physics.md compare both with MuJoCo).

        Pairs added without parameters get them fitted for this ``dt`` and integrator
        (:meth:`ContactParams.for_bodies`: stable at ``dt``); the model lists them in
        ``contact_params``.  When ``dt`` exceeds a stability limit of the scene
        (:meth:`stability_limits`) the build warns with :class:`SoftContactWarning`; it
        also warns when a fitted contact holds the weight it carries (as the bodies are
        placed: a stack's bottom contact carries the stack) only deeper than 10 % of the
        body's size: its stiffness lowered to be stable at ``dt`` (a 1 kg, 10 cm cube
        with ``"euler"`` at 5 ms and above), or, with ``"euler"``, sized for the lighter
        body's weight under a heavier load.

        ``max_travel`` (> 0, default 100) sets the divergence test of :meth:`Model.step`
        and :meth:`Model.rollout`: a step diverges when its new state is not finite, or
        when a dynamic body with geometry moves more than ``max_travel`` times its radius
        (the largest distance of a sample from its centre of mass) in one step, or turns
        more than ``max_travel`` radians: ``|v| dt > max_travel r`` or ``|omega| dt >
        max_travel``.  No contact is resolved at such speeds, and an explicit instability
        reaches them within a few steps.  ``np.inf`` leaves only the finiteness test.
        """
        dt = as_in_range(dt, "dt", *DT_RANGE, " s")
        integrator = _as_integrator(integrator)
        max_travel = _as_max_travel(max_travel)
        _check_buildable(self)
        fits = self._fits(dt, integrator)  # fitted once for the model and the checks
        pairs = self._resolved_pairs(dt, integrator, fits)
        model = Model(self, dt, integrator, pairs, max_travel=max_travel)
        for (a, c, p), (_, _, f) in zip(pairs, fits, strict=True):
            logger.debug(
                "contact(%s,%s): %s %s",
                self._bodies[a].name,
                self._bodies[c].name,
                "fitted" if f is not None else "given",
                p,
            )
        limits = self._stability_limits(integrator, pairs)
        logger.debug(
            "built a model of %d bodies: dt = %g s, %s, nx = %d, nu = %d; largest stable dt %s",
            len(self._bodies),
            dt,
            integrator,
            model.nx,
            model.nu,
            f"{limits[0].dt_max:.3g} s ({limits[0].term} of {limits[0].where})" if limits else "-",
        )
        if limits and dt > limits[0].dt_max:
            worst = limits[0]
            warnings.warn(
                f"dt = {dt:g} s exceeds the stability limit of integrator={integrator!r}: "
                f"the {worst.term} of {worst.where} needs dt < {worst.dt_max:.3g} s, the "
                f"largest stable dt of this scene"
                + (
                    " (integrator='implicit' treats damping and friction implicitly)"
                    if integrator == "euler" and worst.term != "contact stiffness"
                    else ""
                ),
                SoftContactWarning,
                stacklevel=2,
            )
        for a, c, f in fits:
            if f is None or f.sink <= _FIT_SINK_WARN * f.size:
                continue
            where = f"contact({self._bodies[a].name},{self._bodies[c].name})"
            held = f"{1e3 * f.sink:.3g} mm deep ({100 * f.sink / f.size:.0f} % of the body's size)"
            if f.softened:
                why = (
                    f"the stiffness fitted to be stable at dt = {dt:g} s with "
                    f"integrator={integrator!r} holds its load only {held}: use a smaller dt"
                    + (" or integrator='implicit'" if integrator == "euler" else "")
                )
            else:
                why = (
                    f"the stiffness fitted with integrator={integrator!r} to the lighter "
                    f"body's weight holds the {f.carried:g} kg it carries only {held}: pass "
                    "explicit parameters or use integrator='implicit'"
                )
            warnings.warn(f"{where}: {why}", SoftContactWarning, stacklevel=2)
        return model

    def stability_limits(self, integrator="euler", dt=None) -> list[StabilityLimit]:
        """The largest stable time step of each stiff term of the scene, smallest first
        (docs/method.md section 7), as :meth:`build` checks them.  Pairs without explicit
        parameters are taken with the parameters fitted for ``dt`` (s; None: fitted
        without a time step, :meth:`ContactParams.for_bodies`).

        Each bound is that of the term's linearization on its worst mode: a force at the
        sample farthest from a dynamic body's centre of mass, against the effective mass
        ``m_eff = 1 / sum (1/m + r^2 / I_min)`` of the pair's dynamic bodies (kinematic and
        static bodies do not move under contact).

        - contact stiffness and damping (``"euler"``): the explicit spring-damper of
          stiffness ``k`` and damping ``c`` is stable while ``dt^2 k / m_eff +
          2 dt c / m_eff < 4``;
        - contact stiffness (``"implicit"``, damping implicit): ``dt^2 k < 4 m_eff + 2 dt
          c``;
        - friction in its stick regime (``"euler"``, 3D scenes with gravity): a viscous
          rate ``mu N / (v_s m_eff)`` with the normal force ``N`` the weight the contact
          carries (the body resting on it and, through the contact pairs, every body
          resting on that one, as the bodies are placed; side by side: the lighter
          body's): ``dt < 2 v_s m_eff / (mu N)``;
        - support friction (``"euler"``, 2D): a viscous rate ``mu_s g / v_s`` on the body's
          translation and ``mu_s m g <r^2> / (v_s I)`` on its rotation (``<r^2>`` the
          support points' mean squared distance from the centre of mass).

        These are bounds of the linearized terms: a nonlinear stick-slip transition at a
        few times ``v_s`` may still chatter below them with ``"euler"``.
        """
        integrator = _as_integrator(integrator)
        if dt is not None:
            dt = as_in_range(dt, "dt", *DT_RANGE, " s")
        return self._stability_limits(integrator, self._resolved_pairs(dt, integrator))

    def _stability_limits(self, integrator, pairs) -> list[StabilityLimit]:
        """stability_limits of a checked integrator for the resolved pairs."""
        explicit = integrator == "euler"
        g = float(np.linalg.norm(self.gravity))
        out = []
        for a, c, p in pairs:
            ba, bb = self._bodies[a], self._bodies[c]
            dyn = [b for b in (ba, bb) if b.kind == "dynamic"]
            if not dyn:
                continue
            m_eff = 1.0 / sum(1.0 / _effective_mass(b) for b in dyn)
            where = f"contact({ba.name},{bb.name})"
            k, cd = p.stiffness, p.damping
            h = _stiffness_limit(k, cd, m_eff, integrator)
            if explicit:
                out.append(StabilityLimit(where, "contact stiffness and damping", h))
                if p.friction > 0 and self.dim == 3 and g > 0:
                    weight = _pair_load(self, a, c)[1] * g
                    h = 2.0 * p.slip_velocity * m_eff / (p.friction * weight)
                    out.append(StabilityLimit(where, "friction (stick regime)", h))
            else:
                out.append(StabilityLimit(where, "contact stiffness", h))
        for b in self._bodies:
            if b.support is None or not explicit or b.support[2] == 0:
                continue
            pts, w, mu_s, gs, vs = b.support
            r2 = float(np.sum(w * np.sum(pts * pts, axis=1)))
            inertia = float(b.inertia[0, 0])
            h = 2.0 * vs / (mu_s * gs)
            if r2 > 0:
                h = min(h, 2.0 * vs * inertia / (mu_s * b.mass * gs * r2))
            out.append(StabilityLimit(b.name, "support friction", h))
        return sorted(out, key=lambda s: s.dt_max)


def _divergence_error(message, **attrs) -> _core.DivergenceError:
    """A :class:`softcontact.DivergenceError` carrying ``body``, ``quantity`` (position,
    velocity, speed or angular speed), ``value``, ``limit`` and ``x_next``."""
    e = _core.DivergenceError(message)
    for k, v in attrs.items():
        setattr(e, k, v)
    return e


def _as_max_travel(max_travel) -> float:
    """``max_travel`` of :meth:`Scene.build`: > 0, ``inf`` allowed."""
    if isinstance(max_travel, (float, np.floating)) and max_travel == np.inf:
        return math.inf
    return as_positive_float(max_travel, "max_travel")


def _check_buildable(scene) -> None:
    """ValueError unless ``scene`` has a moving body, its dynamic bodies' masses and
    inertias are in :data:`MASS_RANGE`, and every body's pose, velocity, cloud and support
    are in their valid ranges (as :meth:`Scene.add_body` leaves them; checked again before
    the C core sees them, whose own check names no body)."""
    if not scene._bodies:
        raise ValueError("the scene has no bodies")
    if not any(b.kind != "static" for b in scene._bodies):
        raise ValueError("the scene has no moving body")
    check_within(scene.gravity, "gravity", GRAVITY_MAX, "components", " m/s^2")
    for b in scene._bodies:
        if b.kind == "dynamic":
            _check_mass_inertia(b.name, b.mass, b.inertia, scene.dim)
        _check_body_range(b, scene.dim)


def _model_from(scene, dt, integrator, pairs, max_travel) -> Model:
    """A pickled :class:`Model`, rebuilt (Model.__reduce__)."""
    return Model(scene, dt, integrator, pairs, max_travel=max_travel)


def _as_integrator(integrator):
    if not isinstance(integrator, str):
        raise TypeError(f"integrator must be a str, got {type(integrator).__name__}")
    if integrator not in _INTEGRATORS:
        raise ValueError(f"integrator must be one of {sorted(_INTEGRATORS)}, got {integrator!r}")
    return integrator


def _effective_mass(b) -> float:
    """A dynamic body's smallest effective mass at its samples, 1 / (1/m + r^2 / I_min)
    with r the largest distance of a sample from its centre of mass (its frame's origin)."""
    r2 = float(np.max(np.sum(b.cloud.points**2, axis=1))) if len(b.cloud) else 0.0
    i_min = float(np.linalg.eigvalsh(np.atleast_2d(b.inertia)).min())
    return 1.0 / (1.0 / b.mass + r2 / i_min)


class _Fitted(NamedTuple):
    """A pair added without parameters: fitted at build (:func:`_fit_params`)."""

    friction: float


# fitted contact parameters (ContactParams.for_bodies): resting penetration as a fraction
# of the smaller body's size, normal damping ratio, slip velocity of the implicit step
_FIT_PENETRATION = 0.01
_FIT_DAMPING_RATIO = 1.0
_FIT_SLIP_VELOCITY = 5e-4
_FIT_GRAVITY = 9.81
# Scene.build warns when a fitted contact, softened to be stable at dt, holds its load only
# deeper than this fraction of the body's size (10 times the fitted penetration)
_FIT_SINK_WARN = 0.1


def _spacing(cloud: PointCloud) -> float:
    """The sample spacing of a cloud of several samples: from its weights (areas or
    lengths) when a constructor built it, else the median nearest-neighbour distance of
    up to 256 evenly picked samples."""
    D, n = cloud.dim, len(cloud)
    if cloud.kind is not None and cloud.kind != "halfspace":
        w = float(np.mean(cloud.weights))
        return math.sqrt(w) if D == 3 else w
    pts = cloud.points
    pick = pts[:: max(1, n // 256)]
    d = np.full(len(pick), np.inf)
    for i in range(0, n, 4096):
        blk = pts[i : i + 4096]
        d2 = np.sum((pick[:, None, :] - blk[None, :, :]) ** 2, axis=2)
        d2[d2 == 0.0] = np.inf
        d = np.minimum(d, np.sqrt(d2.min(axis=1)))
    return float(np.median(d))


def _soft_count(b, down, eps_c) -> float:
    """``max sum exp(-(h_k - min h) / eps_c)`` over a body's samples, ``h_k`` their
    heights along a direction: the soft minimum's ``exp(offset / eps_c)`` when the body
    rests on a plane normal to it; the largest over ``down`` at the body's pose and its
    frame's axes (a box on any face), so that a body resting on any of those sinks at
    least as deep as fitted, never floats above."""
    D = b.cloud.dim
    dirs = [_rot(b.pose, D).T @ down, *np.eye(D), *(-np.eye(D))]
    best = 0.0
    for d in dirs:
        h = -(b.cloud.points @ d)
        best = max(best, float(np.sum(np.exp(-(h - h.min()) / eps_c))))
    return best


def _stiffness_limit(k, c, m_eff, integrator) -> float:
    """The largest stable dt of a contact of stiffness k and damping c on the mass m_eff
    (the linearized spring-damper): explicit, ``dt^2 k + 2 dt c < 4 m_eff``; with the
    damping implicit, ``dt^2 k < 4 m_eff + 2 dt c``."""
    if integrator == "euler":
        return (-c + math.sqrt(c * c + 4.0 * k * m_eff)) / k
    return (c + math.sqrt(c * c + 4.0 * k * m_eff)) / k


def _stable_stiffness(k, mass, m_eff, dt, integrator) -> float:
    """k, lowered (by bisection on log k) until dt is at most 0.8 of the stiffness limit
    with the critical damping of ``mass``."""

    def ok(kk):
        c = 2.0 * _FIT_DAMPING_RATIO * math.sqrt(kk * mass)
        return dt <= 0.8 * _stiffness_limit(kk, c, m_eff, integrator)

    if ok(k):
        return k
    lo, hi = math.log(k) - 60.0, math.log(k)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(math.exp(mid)) else (lo, mid)
    return math.exp(lo)


def _check_fittable(ba, bb) -> None:
    """ValueError unless one of the two bodies has a size (two samples apart) to fit to."""
    if not any(len(b.cloud) > 1 and b.cloud.size > 0 for b in (ba, bb)):
        raise ValueError(
            f"cannot fit contact parameters between {ba.name!r} and {bb.name!r}: neither has "
            "two distinct samples (a size); pass params"
        )


def _rests_on(scene):
    """(rests_on, height): rests_on(i, j) whether body i rests on body j as the bodies are
    placed (a dynamic body on a static or kinematic one, or on a dynamic one whose centre
    is lower along gravity), and each body's height along -gravity; a scene without
    gravity: never, heights None."""
    bodies = scene._bodies
    g = float(np.linalg.norm(scene.gravity))
    if g == 0:
        return (lambda i, j: False), None
    up = -np.asarray(scene.gravity, dtype=float) / g
    D = scene.dim
    height = [float(np.dot(np.asarray(b.pose[:D], dtype=float), up)) for b in bodies]
    scale = max(1.0, max(abs(h) for h in height))

    def rests_on(i, j):
        if bodies[i].kind != "dynamic":
            return False
        return bodies[j].kind != "dynamic" or height[i] > height[j] + 1e-12 * scale

    return rests_on, height


def _pair_load(scene, ia, ib):
    """(the body resting on the contact of bodies ia and ib, the mass M the contact
    carries), from the scene's gravity and its bodies' poses: a dynamic body rests on a
    static or kinematic one, and on a dynamic one whose centre is lower along gravity;
    M is its mass plus, through the scene's contact pairs, that of every body resting on
    it, transitively (a stack's bottom contact carries the whole stack).  Two dynamic
    bodies side by side (centres level), or a scene without gravity: the lighter body
    and its own mass."""
    bodies = scene._bodies
    dyn = [i for i in (ia, ib) if bodies[i].kind == "dynamic"]
    lighter = min(dyn, key=lambda i: bodies[i].mass)
    rests_on, height = _rests_on(scene)
    upper = ia if rests_on(ia, ib) else ib if rests_on(ib, ia) else None
    if upper is None:
        return bodies[lighter], bodies[lighter].mass
    # the bodies resting on each body through the pairs; what a body carries, from the
    # top down (a body rests only on lower ones, so those above are summed first)
    above = {}  # body -> the bodies resting on it
    for a, c, _ in scene._pairs:
        for i, j in ((a, c), (c, a)):
            if rests_on(j, i):
                above.setdefault(i, set()).add(j)
    carried = {}  # body -> the mass it carries
    # dynamic bodies from the highest down, then the static and kinematic ones (the
    # supports, under whatever rests on them)
    for i in sorted(range(len(bodies)), key=lambda i: (bodies[i].kind != "dynamic", -height[i])):
        carried[i] = bodies[i].mass + sum(carried[j] for j in above.get(i, ()))
    return bodies[upper], carried[upper]


def _ramp(d, beta):
    """sp_b(d) s_b(d): the normal force per unit stiffness at the soft depth d."""
    z = d / beta
    return beta * (z + math.log1p(math.exp(-z))) / (1.0 + math.exp(-z))


def _sink(k, beta, weight, offset):
    """The penetration at which a contact of stiffness k holds the weight: the soft depth
    d of k sp_b(d) s_b(d) = weight (bisection) less the soft minimum's offset."""
    lo, hi = 0.0, beta
    while k * _ramp(hi, beta) < weight:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if k * _ramp(mid, beta) < weight else (lo, mid)
    return hi - offset


class _FitResult(NamedTuple):
    """A pair's fit (_fit): its parameters; whether the stiffness was lowered to be
    stable at dt; the penetration at which they hold the load the contact carries
    (_pair_load), the size L the fit measures it against, and that load (kg)."""

    params: ContactParams
    softened: bool
    sink: float
    size: float
    carried: float


def _fit_params(scene, ia, ib, dt, integrator, friction) -> ContactParams:
    """ContactParams.for_bodies (its docstring states the rules)."""
    return _fit(scene, ia, ib, dt, integrator, friction).params


def _fit(scene, ia, ib, dt, integrator, friction) -> _FitResult:
    """_fit_params with what Scene.build checks of it."""
    D = scene.dim
    bodies = (scene._bodies[ia], scene._bodies[ib])
    _check_fittable(*bodies)
    shaped = [b for b in bodies if len(b.cloud) > 1 and b.cloud.size > 0]
    dyn = [b for b in bodies if b.kind == "dynamic"]
    upper, carried = _pair_load(scene, ia, ib)
    if integrator == "implicit":
        # the mass the contact carries (a stack's lower contacts the bodies above)
        load, mass = upper, carried
    else:
        # the lighter body's: the explicit damper bound, 2 dt c < 4 m_eff with c critical
        # for the carried mass, would soften a loaded contact further instead
        load = min(dyn, key=lambda b: b.mass)
        mass = load.mass
    g = float(np.linalg.norm(scene.gravity))
    g_eff = g if g > 0 else _FIT_GRAVITY
    down = scene.gravity / g if g > 0 else -np.eye(D)[D - 1]
    size = min(b.cloud.size for b in shaped) / math.sqrt(D)
    delta = _FIT_PENETRATION * size
    h = max(_spacing(b.cloud) for b in shaped)
    eps_c = 0.5 * delta
    if dt is not None:
        eps_c = max(eps_c, 0.25 * g_eff * dt * dt)
    rest_body = load if load in shaped else max(shaped, key=lambda b: len(b.cloud))
    n_soft = _soft_count(rest_body, down, eps_c)
    depth = delta + eps_c * math.log(n_soft)
    beta = 0.5 * delta
    # lambda(-depth) = k sp_b(depth) s_b(depth) = the load's weight
    ramp = _ramp(depth, beta)
    weight = mass * g_eff
    k = weight / ramp
    m_eff = 1.0 / sum(1.0 / _effective_mass(b) for b in dyn)
    k_load = k
    if dt is not None:
        k = _stable_stiffness(k, mass, m_eff, dt, integrator)
    c = 2.0 * _FIT_DAMPING_RATIO * math.sqrt(k * mass)
    v_s = _FIT_SLIP_VELOCITY
    if integrator == "euler" and dt is not None and friction > 0 and D == 3 and g > 0:
        # the friction bound with the weight the contact carries
        v_s = max(v_s, 1.25 * friction * carried * g * dt / (2.0 * m_eff))
    try:
        params = ContactParams(
            eps=h * h,
            eps_c=eps_c,
            stiffness=k,
            beta=beta,
            damping=c,
            friction=friction,
            slip_velocity=v_s,
        )
    except ValueError as e:
        raise ValueError(
            f"cannot fit contact parameters between {bodies[0].name!r} and "
            f"{bodies[1].name!r}: the fitted {e}; pass params"
        ) from None
    # the load's depth, its offset that of the body resting on the contact
    rest = upper if upper in shaped else max(shaped, key=lambda b: len(b.cloud))
    offset = eps_c * math.log(n_soft if rest is rest_body else _soft_count(rest, down, eps_c))
    sink = _sink(k, beta, carried * g_eff, offset)
    return _FitResult(params, k < k_load, sink, size, carried)


def _as_resolved_pairs(scene, pairs):
    """``pairs`` of :class:`Model` (what :meth:`Scene.build` passes): one ``(a, b,
    ContactParams)`` per contact pair of the scene, in its order."""
    want = [(a, c) for a, c, _ in scene._pairs]
    try:
        got = [(a, c, p) for a, c, p in pairs]
    except (TypeError, ValueError):
        got = None
    if got is None or [(a, c) for a, c, _ in got] != want:
        raise ValueError(
            "pairs must hold (body_a, body_b, ContactParams) for each contact pair of the "
            f"scene, in order: the pairs {want}"
        )
    for _, _, p in got:
        if not isinstance(p, ContactParams):
            raise TypeError(f"pairs must hold ContactParams, got {type(p).__name__}")
    return got


def _rot(pose, D):
    if D == 2:
        c, s = np.cos(pose[2]), np.sin(pose[2])
        return np.array([[c, -s], [s, c]])
    from .spatial import quat_to_matrix

    return quat_to_matrix(pose[3:])


class Model:
    """A compiled scene (immutable); see :meth:`Scene.build` and the module docstring.

    ``Model(scene, dt, integrator="euler")`` is what ``scene.build(dt, integrator)``
    returns, without its warnings (TypeError if ``scene`` is not a :class:`Scene`,
    ValueError for a bad ``dt`` or ``integrator``, a scene without moving bodies, a body's
    mass or inertia out of :data:`MASS_RANGE`, a body's pose, velocity, cloud or support
    out of its valid range, or a contact whose ``eps`` is too small for its bodies' reach
    even where they touch).  Models pickle (every protocol):
    the model is rebuilt from a copy of the scene as it was built, with the same contact
    parameters, and steps bit for bit as the original.

    Attributes: ``dim``, ``dt``, ``integrator``, ``nq``, ``nv``, ``nx = nq + nv``, ``nu``,
    ``np`` (number of parameters), ``body_names`` (all bodies), ``moving`` (names of the
    bodies in the state, in order), ``param_names``, ``control_names``, ``contact_params``
    (the :class:`ContactParams` of each contact pair, in the order they were added:
    given, or fitted to the bodies by :meth:`ContactParams.for_bodies`).
    """

    def __init__(
        self,
        scene: Scene,
        dt: float,
        integrator: str = "euler",
        pairs=None,
        *,
        max_travel: float = DEFAULT_MAX_TRAVEL,
    ):
        if not isinstance(scene, Scene):
            raise TypeError(f"scene must be a Scene, got {type(scene).__name__}")
        dt = as_in_range(dt, "dt", *DT_RANGE, " s")
        integrator = _as_integrator(integrator)
        max_travel = _as_max_travel(max_travel)
        _check_buildable(scene)
        if pairs is not None:
            pairs = _as_resolved_pairs(scene, pairs)
        D = scene.dim
        nb = len(scene._bodies)
        kinds = np.array([_KINDS[b.kind] for b in scene._bodies], dtype=float)
        act = np.array([b.actuated for b in scene._bodies], dtype=float)
        masses = np.array([b.mass for b in scene._bodies], dtype=float)
        inertias = np.zeros((nb, 9))
        poses = np.zeros((nb, 7))
        for i, b in enumerate(scene._bodies):
            if D == 2:
                inertias[i, 0] = b.inertia[0, 0] if b.kind == "dynamic" else 0.0
            else:
                inertias[i] = b.inertia.reshape(-1) if b.kind == "dynamic" else 0.0
            poses[i, : len(b.pose)] = b.pose
        clouds = tuple(_packed(b.cloud) for b in scene._bodies)
        counts = np.array([len(b.cloud) for b in scene._bodies], dtype=float)
        supports = tuple(b.support for b in scene._bodies)
        resolved = scene._resolved_pairs(dt, integrator) if pairs is None else pairs
        pairs = np.array([[a, c] for a, c, _ in resolved], dtype=float).reshape(-1, 2)
        pp = np.array([p._astuple() for _, _, p in resolved], dtype=float).reshape(-1, 7)
        g3 = np.zeros(3)
        g3[:D] = scene.gravity
        # the divergence test (Scene.build): per body (max_speed, max_spin), 0 for none
        limits = np.zeros((nb, 2))
        if math.isfinite(max_travel):
            for i, b in enumerate(scene._bodies):
                if b.kind == "dynamic" and len(b.cloud) > 0:
                    r = float(
                        np.sqrt(np.max(np.einsum("ij,ij->i", b.cloud.points, b.cloud.points)))
                    )
                    limits[i] = (max_travel * r / dt if r > 0 else 0.0, max_travel / dt)
        # what the model was built from, for pickling (a copy: the scene may change)
        self._source = (scene._snapshot(), dt, integrator, resolved, max_travel)
        self._cap = _core.model_new(
            D,
            dt,
            g3,
            kinds,
            act,
            masses,
            inertias,
            poses,
            clouds,
            counts,
            supports,
            pairs,
            pp,
            _INTEGRATORS[integrator],
            limits,
        )
        self.max_travel = max_travel
        self._limits = limits
        nq, nv, nu, np_, _ = _core.model_sizes(self._cap)
        self.dim, self.dt, self.integrator = D, dt, integrator
        self.nq, self.nv, self.nu, self.np, self.nx = nq, nv, nu, np_, nq + nv
        self.body_names = tuple(b.name for b in scene._bodies)
        self.moving = tuple(b.name for b in scene._bodies if b.kind != "static")
        self._x0 = np.concatenate(
            [b.pose for b in scene._bodies if b.kind != "static"]
            + [b.velocity for b in scene._bodies if b.kind != "static"]
        )
        nvb = 3 if D == 2 else 6
        names = []
        for b in scene._bodies:
            if b.kind == "dynamic":
                names.append(f"{b.name}.mass")
                names += (
                    [f"{b.name}.inertia"]
                    if D == 2
                    else [f"{b.name}.I{ax}" for ax in ("xx", "yy", "zz", "xy", "xz", "yz")]
                )
        for a, c, _ in scene._pairs:
            pre = f"contact({scene._bodies[a].name},{scene._bodies[c].name})"
            names += [f"{pre}.stiffness", f"{pre}.damping", f"{pre}.friction"]
        names += [f"{b.name}.support_friction" for b in scene._bodies if b.support is not None]
        self.param_names = tuple(names)
        self.contact_params = tuple(p for _, _, p in resolved)
        comp = ("fx", "fy", "tau") if D == 2 else ("fx", "fy", "fz", "tx", "ty", "tz")
        vcomp = ("vx", "vy", "omega") if D == 2 else ("vx", "vy", "vz", "wx", "wy", "wz")
        ctl = []
        for b in scene._bodies:
            if b.kind == "kinematic":
                ctl += [f"{b.name}.{c}" for c in vcomp]
            elif b.actuated:
                ctl += [f"{b.name}.{c}" for c in comp]
        self.control_names = tuple(ctl)
        self._nvb = nvb
        self._kinds = tuple(b.kind for b in scene._bodies)
        self._act = tuple(bool(b.actuated) for b in scene._bodies)
        assert len(self.param_names) == self.np and len(ctl) == nu
        # the valid ranges of states and controls (docs/method.md, "Valid ranges"): each
        # control entry's bound and body; each contact pair's ends (the body's index among
        # the moving ones, or -1 and its static translation; its cloud's radius about its
        # origin and about its centre; its name) and REACH_MAX eps, for the C core's reach
        # test (sc__pair_reach_check)
        owners = [b for b in scene._bodies if b.kind == "kinematic" or b.actuated]
        self._uown = tuple(b.name for b in owners for _ in range(nvb))
        self._ulim = tuple(
            SPEED_MAX if b.kind == "kinematic" else FORCE_MAX for b in owners for _ in range(nvb)
        )
        moving = [i for i, b in enumerate(scene._bodies) if b.kind != "static"]
        move = {i: j for j, i in enumerate(moving)}
        reach = []
        for a, c, p in resolved:
            ends = []
            for i in (a, c):
                b = scene._bodies[i]
                _, rho, r = _sphere(b.cloud)
                ends.append((move.get(i, -1), tuple(b.pose[:D].tolist()), r, rho, b.name))
            lim = REACH_MAX * p.eps
            rho = max(ends[0][3], ends[1][3])
            if (ends[0][2] + ends[1][2]) * rho > lim:
                raise ValueError(
                    f"contact({ends[0][4]},{ends[1][4]}): its eps must be at least "
                    f"{(ends[0][2] + ends[1][2]) * rho / REACH_MAX:.3g} m^2 for these bodies "
                    f"(radii {ends[0][2]:.6g} and {ends[1][2]:.6g} m about their origins, "
                    f"{rho:.6g} m about their centres): their reach (d + r_a + r_b) rho <= "
                    f'{REACH_MAX:g} eps (docs/method.md, "Valid ranges"), got {p.eps!r}'
                )
            reach.append((ends[0], ends[1], lim))
        self._reach = tuple(reach)
        self._frozen = True

    def __setattr__(self, name, value):
        if getattr(self, "_frozen", False):
            raise AttributeError(f"Model is immutable: cannot set {name!r}")
        object.__setattr__(self, name, value)

    def __reduce__(self):
        # the compiled model (a capsule) is rebuilt from the scene it was built from, with
        # the same contact parameters: the same model, bit for bit
        return (_model_from, self._source)

    @property
    def scene(self) -> Scene:
        """A copy of the :class:`Scene` this model was built from, as it was at the build
        (a new copy at each access: changing it changes neither the model nor the next
        copy; ``model.scene.build(model.dt, model.integrator)`` builds this model again,
        with contact parameters fitted again where they were fitted)."""
        return self._source[0]._snapshot()

    def __repr__(self):
        return (
            f"Model(dim={self.dim}, dt={self.dt:g}, integrator={self.integrator!r}, "
            f"bodies={list(self.body_names)}, "
            f"nx={self.nx}, nv={self.nv}, nu={self.nu}, np={self.np})"
        )

    # -- states ----------------------------------------------------------------------------

    def initial_state(self) -> np.ndarray:
        """The state given by the bodies' poses and velocities in the scene."""
        return self._x0.copy()

    def _as_state(self, x, name="x"):
        # the common case (a float64 vector of the right size) costs well under a
        # microsecond: Model.step is called in tight loops from Python
        if type(x) is np.ndarray and x.dtype == _F64 and x.shape == (self.nx,):
            a = x
        else:
            a = as_float_array(x, name)
            if a.shape != (self.nx,):
                raise ValueError(f"{name} must have shape ({self.nx},), got {shape_str(a.shape)}")
        if a.size <= 64:
            # Python floats: on a state's few entries, ~10x faster than NumPy's ufuncs
            v = a.tolist()
            if not all(map(math.isfinite, v)):
                raise ValueError(f"{name} must be finite (NaN or inf found)")
            q = [v[j + 3 : j + 7] for j in range(0, self.nq, 7)] if self.dim == 3 else None
        else:
            if not bool(np.isfinite(a).all()):
                raise ValueError(f"{name} must be finite (NaN or inf found)")
            q = a[: self.nq].reshape(-1, 7)[:, 3:] if self.dim == 3 else None
        bad = first_non_unit(q) if q is not None else None
        if bad is not None:
            a = self._normalized(a, name)
            v = a.tolist()
        out = self._out_of_range(v if a.size <= 64 else a)
        if out is not None:
            raise ValueError(f"{name}: {out[4]}")
        return a

    def _normalized(self, a, name):
        """A copy of the finite 3D state ``a`` whose quaternions within UNIT_NORMALIZE_TOL of
        unit norm (not within UNIT_TOL) are normalised (divided by their norm, the C core's
        arithmetic); ValueError naming ``name`` and the body for a farther one."""
        nq = self.nq
        q = a[:nq].reshape(-1, 7)[:, 3:]
        norm = quaternion_norms(q)
        fix, refuse = near_unit(norm)
        if refuse.any():
            j = int(np.flatnonzero(refuse)[0])
            raise ValueError(
                f"{name}: the quaternion of {self.moving[j]!r} is not unit (norm "
                f"{float(norm[j])!r}; within {UNIT_TOL:g} of 1 it is used as it is, within "
                f"{UNIT_NORMALIZE_TOL:g} normalised)"
            )
        c = np.array(a, dtype=float)
        cq = c[:nq].reshape(-1, 7)
        cq[fix, 3:] = q[fix] / norm[fix, None]
        return c

    def _out_of_range(self, v):
        """None if the finite state ``v`` (a list or array, unit quaternions) is in the valid
        range (docs/method.md, "Valid ranges": the C core's test, sc_model.c state_range, with
        its arithmetic), else ``(quantity, body, value, limit, message)`` for the first
        violation: a velocity component, a position coordinate, or a contact pair's reach
        (body: the pair's first body; value and limit: ``(d + r_a + r_b) rho / eps`` and
        REACH_MAX)."""
        D, nq, nvb = self.dim, self.nq, self._nvb
        nqb = 3 if D == 2 else 7
        for k in range(nq, self.nx):
            if not abs(v[k]) <= SPEED_MAX:
                body = self.moving[(k - nq) // nvb]
                return (
                    "velocity",
                    body,
                    abs(float(v[k])),
                    SPEED_MAX,
                    f"the velocity of {body!r} must have components within "
                    f"[-{SPEED_MAX:g}, {SPEED_MAX:g}] (m/s, rad/s), got {float(v[k]):.6g}",
                )
        for j, body in enumerate(self.moving):
            for k in range(j * nqb, j * nqb + D):
                if not abs(v[k]) <= COORD_MAX:
                    return (
                        "position",
                        body,
                        abs(float(v[k])),
                        COORD_MAX,
                        f"the position of {body!r} must have coordinates within "
                        f"[-{COORD_MAX:g}, {COORD_MAX:g}] m, got {float(v[k]):.6g}",
                    )
        for ea, eb, lim in self._reach:
            ta = v[ea[0] * nqb : ea[0] * nqb + D] if ea[0] >= 0 else ea[1]
            tb = v[eb[0] * nqb : eb[0] * nqb + D] if eb[0] >= 0 else eb[1]
            d2 = 0.0
            for k in range(D):
                e = float(ta[k]) - float(tb[k])
                d2 += e * e
            s = math.sqrt(d2) + ea[2] + eb[2]
            if not (s * ea[3] <= lim and s * eb[3] <= lim):
                rho = max(ea[3], eb[3])
                return (
                    "reach",
                    ea[4],
                    s * rho / (lim / REACH_MAX),
                    REACH_MAX,
                    f"bodies {ea[4]!r} and {eb[4]!r} must be within the reach of their "
                    f"contact, (d + r_a + r_b) rho <= {REACH_MAX:g} eps with d the distance of "
                    f"their origins, r their clouds' radii about them and rho about their "
                    f"centres (here d <= {lim / rho - ea[2] - eb[2]:.6g} m), got d = "
                    f"{math.sqrt(d2):.6g} m",
                )
        return None

    def _as_control(self, u, name="u"):
        if u is None:
            if self.nu:
                raise ValueError(f"{name} must have shape ({self.nu},), got None")
            return _EMPTY
        if type(u) is np.ndarray and u.dtype == _F64 and u.shape == (self.nu,):
            a = u
        else:
            a = as_float_array(u, name)
            if a.shape != (self.nu,):
                raise ValueError(f"{name} must have shape ({self.nu},), got {shape_str(a.shape)}")
        if not _all_finite(a):
            raise ValueError(f"{name} must be finite (NaN or inf found)")
        bad = self._control_out_of_range(a)
        if bad is not None:
            raise ValueError(f"{name}: {bad}")
        return a

    def _control_out_of_range(self, u) -> str | None:
        """None if every entry of the finite (..., nu) controls ``u`` is within its bound (a
        kinematic body's velocity SPEED_MAX, an actuated body's force and torque FORCE_MAX),
        else a message naming the body."""
        over = np.abs(u) > np.asarray(self._ulim)
        if not over.any():
            return None
        k = int(np.flatnonzero(over)[0])
        j = k % self.nu
        lim = self._ulim[j]
        kind, unit = ("velocity", "m/s, rad/s") if lim == SPEED_MAX else ("force", "N, N m")
        return (
            f"the control of {self._uown[j]!r} (its {kind}) must have components within "
            f"[-{lim:g}, {lim:g}] ({unit}), got {float(np.ravel(u)[k]):.6g}"
        )

    def _split(self, x):
        nqb = 3 if self.dim == 2 else 7
        n = len(self.moving)
        return [x[nqb * j : nqb * (j + 1)] for j in range(n)], x[self.nq :]

    def retract(self, x, dx) -> np.ndarray:
        """``x (+) dx``: each moving body's pose retracted (:func:`softcontact.retract`),
        velocities added; ``dx`` has size ``2 nv``."""
        x = self._as_state(x)
        d = as_float_array(dx, "dx")
        if d.shape != (2 * self.nv,):
            raise ValueError(f"dx must have shape ({2 * self.nv},), got {shape_str(d.shape)}")
        if not _all_finite(d):
            raise ValueError("dx must be finite (NaN or inf found)")
        poses, v = self._split(x)
        nvb = self._nvb
        out = [retract(p, d[nvb * j : nvb * (j + 1)]) for j, p in enumerate(poses)]
        return np.concatenate(out + [v + d[self.nv :]])

    def difference(self, x1, x0) -> np.ndarray:
        """``x1 (-) x0`` in the tangent space of ``x0`` (inverse of :meth:`retract`)."""
        x1 = self._as_state(x1, "x1")
        x0 = self._as_state(x0, "x0")
        p1, v1 = self._split(x1)
        p0, v0 = self._split(x0)
        return np.concatenate(
            [pose_difference(a, b) for a, b in zip(p1, p0, strict=True)] + [v1 - v0]
        )

    # -- dynamics --------------------------------------------------------------------------

    def step(
        self, x, u=None, order=0, params=False, num_threads=None, *, isa="auto", dense=False
    ) -> StepResult:
        """One step of the model's integrator and its derivatives (docs/method.md
        section 7).

        ``order`` 0, 1 or 2; ``params=True`` adds
        ``dx_dp``, the first derivative with respect to :attr:`param_names`.  Derivatives
        are those of ``(dx, du) -> x_next(x (+) dx, u + du) (-) x_next(x, u)``.
        ``dense=True`` turns off the exact pruning of negligible samples and pairs (equal to
        rounding; docs/method.md section 10); the same keyword exists on :meth:`rollout`,
        :meth:`inverse_dynamics` and :meth:`energy`.

        ``x`` and ``u`` must be in their valid ranges (docs/method.md, "Valid ranges"):
        positions within 1e12 m, velocity components within 1e8 (m/s, rad/s), the two
        bodies of every contact pair within each other's reach, controls within 1e8 (a
        kinematic body's velocity) or 1e30 (an actuated body's force and torque; N, N m);
        else ``ValueError`` naming the argument and the body (every method taking a state
        checks it so).  Within them every output is finite; a step whose new state is not
        finite, leaves those ranges or passes the speed limits of :meth:`Scene.build`'s
        ``max_travel`` raises :class:`~softcontact.DivergenceError` instead of returning it.
        A 3D state's quaternion within 1e-6 of unit norm (e.g. rounded through float32) is
        normalised in a copy first; a farther one is refused (every method taking a state
        does the same; docs/method.md, "Valid ranges").

        Batches: ``x`` (..., nx) and ``u`` (..., nu) whose leading dimensions broadcast
        (e.g. states (B, nx) with one control (nu,)) give every output with those leading
        dimensions first (``x_next`` (..., nx), ``dx_dx`` (..., n, n), ...), computed in C
        across ``num_threads`` threads, one item per thread, with the GIL released: each
        item equals the single call bit for bit.  The first failing item raises (ValueError
        naming it, ``x[i]``, or DivergenceError, ``item i``).
        """
        if (
            type(x) is np.ndarray
            and x.dtype == _F64
            and x.shape == (self.nx,)
            and type(order) is int
            and 0 <= order <= 2
            and params is False
            and isa == "auto"
            and dense is False
            and (
                (u is None and self.nu == 0)
                or (type(u) is np.ndarray and u.dtype == _F64 and u.shape == (self.nu,))
            )
            and (num_threads is None or type(num_threads) is int and 1 <= num_threads <= 256)
        ):
            # the common call from a loop, ~2 us cheaper: the arguments' types and shapes
            # checked here, finiteness and (3D) unit quaternions by the C core's state check;
            # on any ValueError the full checks run, for their message naming the argument
            # (and the body)
            try:
                return _step_result(
                    _core.step(
                        self._cap,
                        x,
                        _EMPTY if u is None else u,
                        order,
                        0,
                        0 if num_threads is None else num_threads,
                    )
                )
            except _core.DivergenceError as e:
                raise self._divergence(e.args[1]) from None
            except ValueError:
                # a quaternion within UNIT_NORMALIZE_TOL of unit norm is normalised (in a
                # copy) and the step taken below; anything else is refused here
                if self._as_state(x) is x:
                    self._as_control(u)
                    raise
        # a single item's checks first (they cost a single call nothing more); a batch
        # fails them on its shape
        try:
            xs, us = self._as_state(x), self._as_control(u)
        except ValueError:
            if not _batched(x, u):
                raise
            xs = us = None
        if xs is None:
            return self._step_batch(x, u, order, params, num_threads, isa, dense)
        x, u = xs, us
        order = as_int(order, "order", 0, 2)
        if not isinstance(params, (bool, np.bool_)):
            raise TypeError(f"params must be a bool, got {type(params).__name__}")
        try:
            return _step_result(
                _core.step(
                    self._cap,
                    x,
                    u,
                    order,
                    int(params),
                    as_num_threads(num_threads),
                    *_run_options(isa, dense),
                )
            )
        except _core.DivergenceError as e:
            raise self._divergence(e.args[1]) from None

    def _step_batch(self, x, u, order, params, num_threads, isa, dense) -> StepResult:
        """Model.step on a batch: x (..., nx), u (..., nu) broadcast against each other."""
        xa = as_batch(x, "x", self.nx)
        if u is None:
            if self.nu:
                raise ValueError(f"u must have shape (..., {self.nu}), got None")
            ua = _EMPTY
        else:
            ua = as_batch(u, "u", self.nu)
        order = as_int(order, "order", 0, 2)
        if not isinstance(params, (bool, np.bool_)):
            raise TypeError(f"params must be a bool, got {type(params).__name__}")
        xl, ul = xa.shape[:-1], ua.shape[:-1]
        try:
            lead = np.broadcast_shapes(xl, ul)
        except ValueError:
            raise ValueError(
                f"x and u must have leading dimensions that broadcast, got "
                f"{shape_str(xa.shape)} and {shape_str(ua.shape)}"
            ) from None
        xr = self._normalized_rows(_rows(xa, xl), "x", xl)
        ur = _rows(ua, ul)
        xi, ui = _index_map(lead, xl), _index_map(lead, ul)
        *res, st = _core.step_batch(
            (self._cap,),
            math.prod(lead),
            xr,
            xi,
            ur,
            ui,
            None,
            order,
            int(params),
            as_num_threads(num_threads),
            *_run_options(isa, dense),
        )
        failed = np.flatnonzero(st)
        if failed.size:
            b = int(failed[0])
            where = _item(np.unravel_index(b, lead))
            if st[b] == _core.SC_EDIVERGED:
                x_next = res[0]
                assert x_next is not None
                raise self._divergence(x_next[b], context=f"item {where}")
            self._as_state(xr[b if xi is None else xi[b]], f"x[{where}]")
            self._as_control(ur[b if ui is None else ui[b]], f"u[{where}]")
            raise ValueError(f"step: item {where} failed (status {int(st[b])})")
        return _step_result(
            tuple(None if r is None else r.reshape(lead + r.shape[1:]) for r in res)
        )

    def _normalized_rows(self, xr, name, shape):
        """The states ``xr`` (rows of nx; a row of the input of leading shape ``shape``
        each) with their quaternions within UNIT_NORMALIZE_TOL of unit norm normalised (in
        a copy, when there is one); ValueError naming ``name``, the row and the body for a
        farther one.  Rows that are not finite are left to the C core's checks."""
        if self.dim != 3 or xr.shape[0] == 0:
            return xr
        n = xr.shape[0]
        q = xr[:, : self.nq].reshape(n, -1, 7)[..., 3:]
        with np.errstate(invalid="ignore"):
            norm = quaternion_norms(q)
        fix, refuse = near_unit(norm)
        finite = np.isfinite(xr).all(axis=1)[:, None]
        fix &= finite
        refuse &= finite
        if refuse.any():
            r = int(np.flatnonzero(refuse.any(axis=1))[0])
            self._as_state(xr[r], f"{name}[{_item(np.unravel_index(r, shape))}]" if shape else name)
        if not fix.any():
            return xr
        c = xr.copy()
        c[:, : self.nq].reshape(n, -1, 7)[..., 3:][fix] = q[fix] / norm[fix][:, None]
        return c

    def _divergence(self, x_next, step=None, context="") -> _core.DivergenceError:
        """The DivergenceError of a step (number ``step`` of a trajectory, if given) whose
        new state ``x_next`` failed the test, its message prefixed by ``context``."""
        D, nvb = self.dim, self._nvb
        nqb = 3 if D == 2 else 7
        moving = [i for i, b in enumerate(self._kinds) if b != "static"]
        where = (
            ("step" if step is None else f"step {step}")
            if not context
            else (f"{context}: " + ("step" if step is None else f"step {step}"))
        )
        for j, i in enumerate(moving):
            name = self.body_names[i]
            q = x_next[j * nqb : (j + 1) * nqb]
            v = x_next[self.nq + j * nvb : self.nq + (j + 1) * nvb]
            for quantity, part in (("velocity", v), ("position", q)):
                if not np.all(np.isfinite(part)):
                    return _divergence_error(
                        f"{where} diverged: the {quantity} of body {name!r} is not finite "
                        f"({part.tolist()})",
                        body=name,
                        quantity=quantity,
                        value=math.nan,
                        limit=math.nan,
                        x_next=x_next,
                    )
        for j, i in enumerate(moving):
            name = self.body_names[i]
            v = x_next[self.nq + j * nvb : self.nq + (j + 1) * nvb]
            max_speed, max_spin = self._limits[i]
            for quantity, value, limit, unit in (
                ("speed", math.hypot(*v[:D]), max_speed, "m/s"),
                ("angular speed", math.hypot(*v[D:]), max_spin, "rad/s"),
            ):
                if limit > 0 and value > limit:
                    return _divergence_error(
                        f"{where} diverged: body {name!r} reached a {quantity} of "
                        f"{value:.3g} {unit}, above its limit {limit:.3g} {unit} (moving "
                        f"more than max_travel = {self.max_travel:g} "
                        + ("radii" if quantity == "speed" else "radians")
                        + f" per step of {self.dt:g} s; Scene.build's max_travel)",
                        body=name,
                        quantity=quantity,
                        value=value,
                        limit=float(limit),
                        x_next=x_next,
                    )
        out = self._out_of_range(x_next)
        if out is not None:
            quantity, body, value, limit, text = out
            return _divergence_error(
                f"{where} diverged: its new state leaves the valid range (docs/method.md, "
                f'"Valid ranges"): {text}',
                body=body,
                quantity=quantity,
                value=value,
                limit=limit,
                x_next=x_next,
            )
        return _divergence_error(  # not reached for a state the C test refused
            f"{where} diverged",
            body="",
            quantity="",
            value=math.nan,
            limit=math.nan,
            x_next=x_next,
        )

    def rollout(
        self, x0, U=None, order=0, num_threads=None, *, T=None, isa="auto", dense=False
    ) -> Rollout:
        """Batched rollouts: start states ``x0`` (..., nx) and controls ``U`` (..., T, nu)
        whose leading dimensions broadcast against each other (NumPy's rules: e.g. one
        (nx,) or (1, nx) start state for controls (B, T, nu), or start states (B, nx) for
        one (T, nu) or (1, T, nu) control sequence; the results have the broadcast leading
        dimensions and a broadcast input is not copied), run in C across ``num_threads``
        threads with the GIL released (one trajectory per thread at a time; results do not
        depend on the thread count and equal a loop of :meth:`step`, bit for bit).
        ``order`` 0 or 1 (per-step Jacobians).

        ``U=None`` is for a model without controls (nu = 0): the number of steps is then
        the keyword ``T`` (``rollout(x0, None, T=100)``; ValueError naming ``T`` when it is
        missing); ``U`` of shape (..., T, 0) works too.  Given with ``U``, ``T`` must equal
        its number of steps.  :func:`softcontact.rollout` runs several models of one
        structure in one call.

        A trajectory whose state or controls become non-finite does not stop the others:
        its ``status`` is -3 (the C core's SC_ENONFINITE) and its states from the failing
        step on are NaN; so does a control outside its valid range (status -8,
        SC_ERANGE; docs/method.md, "Valid ranges").  A trajectory that diverges
        (:class:`DivergenceError`'s criterion) gets status -6.  Shapes, quaternions and
        the valid range of finite start states are still checked up front
        (ValueError); a start state's quaternion within 1e-6 of unit norm is normalised
        (in a copy) first, as :meth:`step` does."""
        return _rollout((self,), (), x0, U, order, num_threads, T, isa, dense)

    def inverse_dynamics(self, x, x_next, num_threads=None, *, isa="auto", dense=False):
        """The controls ``u`` (nu) and generalized forces ``f`` (nv) that take ``x`` to the
        velocities of ``x_next`` in one step: ``f = A (v+ - v0+) / h`` with ``v0+`` the
        step without actuation (kinematic bodies at ``x_next``'s velocities) and ``A`` the
        matrix the step solves with (``M`` for ``"euler"``, ``M - h dQ/dv`` for
        ``"implicit"``); ``u`` is ``f`` for actuated bodies and ``v+`` for kinematic
        ones.  A nonzero ``f`` of an unactuated body means ``x_next`` is not reachable.
        Returns ``(u, f)``."""
        x = self._as_state(x)
        xn = self._as_state(x_next, "x_next")
        return _core.model_eval(
            self._cap, 0, x, xn, as_num_threads(num_threads), *_run_options(isa, dense)
        )

    def energy(self, x, num_threads=None, *, isa="auto", dense=False) -> Energy:
        """Kinetic, gravitational and contact energy of the dynamic bodies at ``x``."""
        e = _core.model_eval(
            self._cap,
            1,
            self._as_state(x),
            None,
            as_num_threads(num_threads),
            *_run_options(isa, dense),
        )
        return Energy(float(e[0]), float(e[1]), float(e[2]), float(e.sum()))

    def plot(self, x=None, ax=None, *, normals=False, title=None, **kwargs):
        """Draw every body posed as in the state ``x`` (default: the initial state) with
        matplotlib: samples coloured per body, half-spaces as a grey patch (3D) or line
        (2D) under the other bodies.

        Parameters
        ----------
        x : (nx,) array_like, optional
            A state of this model.
        ax : matplotlib Axes, optional
            Where to draw (3D axes for a 3D model); default a new figure's.
        normals : bool
            Also draw each sample's outward normal.
        title : str, optional
        **kwargs
            Passed to ``ax.scatter`` (e.g. ``s=`` the marker size).

        Returns
        -------
        The axes drawn on.

        Raises
        ------
        ImportError
            If matplotlib is not installed.
        TypeError, ValueError
            For a bad state or argument, or axes of the wrong dimension for the model.
        """
        from .plotting import plot_state

        return plot_state(
            self,
            self.initial_state() if x is None else x,
            ax,
            normals=normals,
            title=title,
            **kwargs,
        )

    def momentum(self, x) -> Momentum:
        """Linear and angular momentum (about the world origin) of the dynamic bodies."""
        m = _core.model_eval(self._cap, 2, self._as_state(x))
        D = self.dim
        return Momentum(m[:D], float(m[2]) if D == 2 else m[3:])


# --------------------------------------------------------------------------------------------
# batches: broadcasting through index maps, several models
# --------------------------------------------------------------------------------------------
def _batched(x, u) -> bool:
    """Whether Model.step's ``x`` or ``u`` has leading (batch) dimensions."""
    return has_batch(x) or (u is not None and has_batch(u))


def _rows(a, shape) -> np.ndarray:
    """The float64 array ``a`` of leading shape ``shape`` as C-contiguous rows (a view when
    it is contiguous)."""
    return np.ascontiguousarray(a.reshape((math.prod(shape),) + a.shape[len(shape) :]))


def _index_map(lead, shape):
    """The row of an input of leading shape ``shape`` that each item of the broadcast
    leading shape ``lead`` reads (intp), or None when it is the item's own (shape == lead)."""
    if tuple(shape) == tuple(lead):
        return None
    rows = np.arange(math.prod(shape), dtype=np.intp).reshape(shape)
    return (np.zeros(lead, dtype=np.intp) + rows).reshape(-1)


def _item(idx) -> str:
    """An item's index in messages: ``3`` or ``1, 2``."""
    return ", ".join(str(int(i)) for i in idx)


def _structure(m: Model):
    return {
        "dim": m.dim,
        "nq": m.nq,
        "nv": m.nv,
        "nu": m.nu,
        "np": m.np,
        "bodies' kinds": m._kinds,
        "bodies' actuation": m._act,
    }


def _as_models(models) -> tuple[Model, ...]:
    """A non-empty sequence of Models of one structure, as a tuple."""
    if isinstance(models, (str, bytes)) or not hasattr(models, "__len__"):
        raise TypeError(
            f"models must be a Model or a sequence of Models, got {type(models).__name__}"
        )
    models = tuple(models)
    if not models:
        raise ValueError("models must hold at least one Model")
    for i, m in enumerate(models):
        if not isinstance(m, Model):
            raise TypeError(f"models[{i}] must be a Model, got {type(m).__name__}")
    ref = _structure(models[0])
    differ = {}
    for i, m in enumerate(models[1:], 1):
        st = _structure(m)
        what = [f"{k} {st[k]!r} vs {ref[k]!r}" for k in ref if st[k] != ref[k]]
        if what:
            differ[i] = what[0]
    if differ:
        first = next(iter(differ))
        raise ValueError(
            "models must share one structure (dimension, bodies' kinds and actuation, "
            "state, control and parameter sizes): "
            + ", ".join(f"models[{i}]" for i in differ)
            + (" differs" if len(differ) == 1 else " differ")
            + f" from models[0] (models[{first}]: {differ[first]})"
        )
    return models


def _rollout(models, mshape, x0, U, order, num_threads, T, isa, dense) -> Rollout:
    """Model.rollout and rollout: ``models`` of one structure, of leading shape ``mshape``
    (() for one model, (M,) for a list)."""
    m0 = models[0]
    nx, nu = m0.nx, m0.nu
    order = as_int(order, "order", 0, 1)
    if U is None:
        if nu:
            raise ValueError(
                f"U must have shape (..., T, {nu}), got None (None is for a model without controls)"
            )
        if T is None:
            raise ValueError(
                "T must be given when U is None: the number of steps, e.g. rollout(x0, None, T=100)"
            )
        Ua = np.zeros((as_int(T, "T", 0), 0))
    else:
        Ua = as_float_array(U, "U")
        if Ua.ndim < 2 or Ua.shape[-1] != nu:
            raise ValueError(f"U must have shape (..., T, {nu}), got {shape_str(Ua.shape)}")
        if T is not None and as_int(T, "T", 0) != Ua.shape[-2]:
            raise ValueError(
                f"T must equal the number of steps of U ({Ua.shape[-2]}) when both are given, "
                f"got {T}"
            )
    T = Ua.shape[-2]
    xa = as_float_array(x0, "x0")
    if xa.ndim < 1 or xa.shape[-1] != nx:
        raise ValueError(f"x0 must have shape (..., {nx}), got {shape_str(xa.shape)}")
    xl, ul = xa.shape[:-1], Ua.shape[:-2]
    try:
        lead = np.broadcast_shapes(mshape, xl, ul)
    except ValueError:
        ms = f" and the {mshape[0]} models" if mshape else ""
        raise ValueError(
            f"x0 must have shape (..., {nx}) with leading dimensions that broadcast against "
            f"U's {shape_str(ul)}{ms}, got {shape_str(xa.shape)}"
        ) from None
    B = math.prod(lead)
    xr, ur = _rows(xa, xl), _rows(Ua, ul)
    xi, ui = _index_map(lead, xl), _index_map(lead, ul)
    mi = _index_map(lead, mshape) if mshape else None  # None: the one model
    # non-finite rows are reported per trajectory (status); finite ones must hold unit
    # quaternions (those near unit are normalised in a copy) and be in the valid range of
    # each model they start
    # (a broadcast input's every row is used: with one model, each row is checked once)
    n = xr.shape[0]
    pairs = (
        [(0, k) for k in range(n)]
        if mi is None
        else sorted(set(zip(mi.tolist(), range(B) if xi is None else xi.tolist(), strict=True)))
    )
    fixed = None
    for mk, k in pairs:
        row = xr[k]
        if not np.all(np.isfinite(row)):
            continue
        a = models[mk]._as_state(row, "x0")
        if a is not row:
            fixed = xr.copy() if fixed is None else fixed
            fixed[k] = a
    if fixed is not None:
        xr = fixed
    X, A, Bu, st, failed = _core.rollout_batch(
        tuple(m._cap for m in models),
        B,
        xr,
        xi,
        ur,
        ui,
        mi,
        order,
        as_num_threads(num_threads),
        *_run_options(isa, dense),
    )
    n2 = 2 * m0.nv
    return Rollout(
        X.reshape(lead + (T + 1, nx)),
        None if A is None else A.reshape(lead + (T, n2, n2)),
        None if Bu is None else Bu.reshape(lead + (T, n2, nu)),
        st.reshape(lead),
        failed.reshape(lead),
    )


def rollout(
    models, x0, U=None, order=0, num_threads=None, *, T=None, isa="auto", dense=False
) -> Rollout:
    """Rollouts of one model or of several models of one structure in one call, in C
    across ``num_threads`` threads with the GIL released.

    ``models``: a :class:`Model` (then this is :meth:`Model.rollout`) or a sequence of M
    models that differ only in their parameters (masses, inertias, contact parameters,
    supports, clouds of the same bodies, time step, integrator) and share their structure
    (dimension, bodies' kinds and actuation, ``nx``, ``nu``, ``np``; ValueError naming the
    models that differ).  A sequence counts as a leading dimension of length M that
    broadcasts with those of ``x0`` (..., nx) and ``U`` (..., T, nu) (as
    ``mujoco.rollout.rollout``'s model list: M models and one start state, one model per
    start state, ...): trajectory ``i`` runs ``models[i]``.  ``U``, ``T``, ``order``,
    ``isa`` and ``dense`` are :meth:`Model.rollout`'s, and so is the :class:`Rollout`
    returned (leading dimensions the broadcast ones).  Each trajectory equals
    ``models[i].rollout`` of its start state and controls, bit for bit.

    Example: ``rollout([m_light, m_heavy], x0, U)`` with ``x0`` (nx,) and ``U`` (2, T, nu)
    or (T, nu) gives ``states`` (2, T + 1, nx).
    """
    if isinstance(models, Model):
        return _rollout((models,), (), x0, U, order, num_threads, T, isa, dense)
    models = _as_models(models)
    return _rollout(models, (len(models),), x0, U, order, num_threads, T, isa, dense)
