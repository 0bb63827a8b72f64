"""Physical behaviour of softcontact against MuJoCo: the same scenes, side by side.

Every scene is simulated in four engines -- softcontact's ``integrator="euler"``
(semi-implicit Euler) and ``"implicit"`` (damping and friction linearly implicit), MuJoCo's
``Euler`` and ``implicitfast`` -- at dt = 2, 5 and 10 ms, and printed as one markdown table
per dt (rows: the measurements; columns: the engines).  The MuJoCo models are written from
the same masses, inertias, sizes, gravity and friction coefficients (MuJoCo's default
``solref``/``solimp``, ``condim`` 3 with sliding friction only; a frictionless pair
``condim`` 1); the box on the floor is ``scenes.box_on_floor``'s MJCF, the torus
``scenes.torus_mesh`` cut into convex segments as in ``scenes.two_tori`` (so that the hole
stays).  Both engines' free-body states are ``(position, quaternion wxyz)`` then ``(linear
velocity (world), angular velocity (body frame))`` per body, element for element, so every
measurement below is computed from the state by the same code for all four engines.

Scenes (SI units; gravity ``(0, 0, -9.81)`` unless stated; cubes are 10 cm, 1 kg, inertia
``m a^2 / 6``, softcontact samples every 1 cm (726); friction ``mu`` = 0.5; softcontact's
other contact parameters are those of :func:`_contact`):

* **resting**: a cube placed on the floor (centre at z = 0.05 m) for 2 s.  *Penetration*:
  the cube's lowest sample (softcontact's cloud, placed by the final pose; the same points,
  corners included, for MuJoCo's box) below z = 0, positive when inside the floor.
  *Angular speed after 1 s*: the largest ``|omega|`` over the second second; *centre speed*
  likewise.
* **sliding**: the resting cube (its state after those 2 s) given 1 m/s along x; *stop
  distance*: its displacement along x after 1 s, against Coulomb's ``v0^2 / (2 mu g)`` =
  101.9 mm.
* **incline** at 5, 10 and 20 degrees: the floor stays z = 0 and gravity tilts,
  ``(g sin th, 0, -g cos th)`` (MuJoCo: ``opt.gravity``); the cube starts placed on it;
  *creep*: its mean speed down the slope over the last 2 of 3 s (tan 20 deg = 0.36 < mu,
  so Coulomb friction holds it: 0).
* **stack**: three cubes at z = 0.05, 0.15, 0.25 m, contacts floor-b0, b0-b1, b1-b2, for
  10 s.  *Drift*: the top box's horizontal displacement; *chatter*: the largest point speed
  ``|v| + |omega| r`` (r the half diagonal, a bound on every point's speed) of any box over
  the last second; *stacked*: every box within 1 cm of its start horizontally and tilted
  less than 5 deg after 10 s.
* **torus over peg** (the scene of ``tests/test_scenes3d.py``): a torus (R = 50 mm,
  r = 15 mm, 24 x 10 mesh, water density; softcontact: one sample per face corner)
  dropped tilted and 30 mm off-axis over a static vertical capsule peg (radius 10 mm, top
  at 0.14 m) on a floor, for 1 s.  Measured: the torus centre's height and its distance
  from the peg axis at the end (threaded and down: < 25 mm, the hole's radius less the
  peg's, and < 30 mm high), and the deepest penetration into the peg and into the floor
  over the run (softcontact: its samples against the exact capsule and plane; MuJoCo: its
  contacts' ``dist``).  *Stable, no tunnelling*: not unstable, threaded and down, and
  never half-way through the thinner body: less than the peg's radius (10 mm) into the
  peg, less than the tube's (15 mm) into the floor.
* **free flight**: a cube at z = 1 m thrown at ``(1, 0, 2)`` m/s spinning at ``(3, 5, 7)``
  rad/s, no contact; *energy drift*: ``E(1 s) - E(0)`` over the initial kinetic energy
  (softcontact: ``Model.energy``; MuJoCo: ``mjData.energy`` with ``mjENBL_ENERGY``; both
  with the potential ``-m g . x``).
* **elastic collision**: two cubes head-on without gravity, 1 cm apart, at +-0.5 m/s;
  softcontact with contact ``damping=0, friction=0``, MuJoCo's pair frictionless with its
  default ``solref`` (critically damped: MuJoCo's default contact is not elastic, and its
  number shows it).  *Energy after/before*: kinetic energy after 0.3 s over before.

*Unstable* (printed as ``unstable`` in every row of that run): a non-finite state,
MuJoCo's bad position, velocity or acceleration warning (it then resets the state; the
run is cut there), or a body faster than
3 m/s (correct runs of these scenes stay below 2 m/s: the torus lands at 1.7 m/s; free
flight is not checked).

**Largest stable dt** (box resting and the stack): the largest dt of the grid 1, 2, 5,
10, 20, 32, 50 ms whose 2 s simulation from the placed start is not unstable, keeps
every box's centre within 1 cm of its rest position during the second second, and every
box's point speed below 0.1 m/s there; the rest position is where the same engine's run at
the grid's smallest dt ends.  Each grid cell says ``ok`` or why not (``unstable``,
``moved``, ``fast``).

**Push-T at dt = 20 ms** (softcontact only): the task scene of
``softcontact.tasks.push_t.make(dt=0.02, integrator=...)`` for each integrator (each
with the task's damping for it: 8 N s/m with Euler, 30 with the implicit step), the T at
``(0.256, 0.2)`` at angle 0 (stem pointing to -y), the pusher 5 mm below the stem's bottom
(on its middle, or 10 mm off it), pushed at 0.1 or 0.5 m/s along +y for 0.15 m, then held
still for 1 s.  *No tunnelling*: the pusher's centre never inside the T's polygon (the
pusher's deepest penetration into the polygon is printed too); *stable*: not unstable (as
above, the T's speed), the T never faster than 3x the pusher, and its point speed
(``|v| + |omega| r``, r its farthest corner) below 1 mm/s over the last 0.5 s.

**Cost per simulated second** (box resting, the stack, push-T; at each dt): the time of
one step divided by dt, the step being softcontact's ``Model.step(x, u, order=0)`` or
``order=1`` (first derivatives; ``num_threads=1``) and MuJoCo's ``mj_setState`` +
``mj_step`` or the same + ``mjd_transitionFD`` (forward differences, eps 1e-6, A and B),
as ``run.py`` times them (``scenes.mj_step_fn``, ``scenes.mj_fd_fn``): medians over
interleaved round-robin rounds of all cases (``run.measure``), one process, one thread.
States: each engine's own state at the end of its resting / stack run at that dt (the
placed start where that run was unstable); push-T: ``scenes.push_t``'s in-contact state and
its planar MuJoCo model, whose velocity actuators' gain is rescaled to ``mass / dt``.

**Thresholds** (printed as within / not within, never asserted): box resting at 10 ms with angular
speed < 1e-3 rad/s after 1 s; the stack at 5 ms stacked after 10 s, top box drift < 1 mm,
every speed < 1 mm/s over the last second; creep at 20 deg, 5 ms <= 1 mm/s; the stop
distance at 5 ms within 2 % of Coulomb's; torus over peg at 10 ms and push-T at 20 ms
stable without tunnelling; cost per simulated second at 10 ms against MuJoCo's
``implicitfast``: with first derivatives <= 0.5x ``mj_step`` + forward
``mjd_transitionFD``, value only <= 3x ``mj_step``, on box-on-floor, the stack and push-T.

``--quick`` shortens the stack (2 s), the torus (0.5 s), the grid (2, 10, 50 ms over 1 s)
and the push holds (0.5 s), and times 3 rounds: a smoke test whose numbers are not the
ones above.

    python benchmarks/physics.py [--quick] [--rounds 15] [--out docs/physics.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import platform
import sys
import time
import types
import warnings
from pathlib import Path

# one BLAS thread, as in run.py (set before NumPy is imported)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
for _path in (HERE.parent / "tests", HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import run  # noqa: E402
import scenes  # noqa: E402
from _timing import Tee, machine  # noqa: E402

import softcontact as sc  # noqa: E402
from softcontact.spatial import quat_to_matrix  # noqa: E402

UNSTABLE = "unstable"
DTS = (0.002, 0.005, 0.010)
GRID = (0.001, 0.002, 0.005, 0.010, 0.020, 0.032, 0.050)
MU = 0.5
G = 9.81
HALF = 0.05  # m: the cubes' half size
SPACING = 0.01
R_CORNER = HALF * math.sqrt(3.0)  # half diagonal: |v| + |omega| R_CORNER bounds point speeds
V_BLOWUP = 3.0  # m/s
V0_SLIDE = 1.0
COULOMB_STOP = V0_SLIDE**2 / (2 * MU * G)
INCLINES = (5.0, 10.0, 20.0)
IDENTITY = (1.0, 0.0, 0.0, 0.0)

CUBE = sc.PointCloud.box([HALF] * 3, SPACING)
FLOOR = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])

# torus over peg: the scene of tests/test_scenes3d.py
TORUS_R, TORUS_RT = 0.05, 0.015
TORUS_MESH = (24, 10)
PEG_RADIUS, PEG_HALF, PEG_Z = 0.01, 0.06, 0.07
TORUS_START = (0.03, 0.0, 0.165, math.cos(math.radians(5.0)), math.sin(math.radians(5.0)), 0, 0)
THREADED = TORUS_R - TORUS_RT - PEG_RADIUS  # 25 mm

# push-T at 20 ms
PUSH_DT = 0.020
PUSH_DIST = 0.15
PUSH_CASES = (("centre", 0.0, 0.1), ("centre", 0.0, 0.5), ("10 mm off", 0.01, 0.1))
PUSH_CASES += (("10 mm off", 0.01, 0.5),)


@dataclasses.dataclass(frozen=True)
class Engine:
    key: str
    label: str
    lib: str  # "sc" or "mj"
    integrator: str


ENGINES = (
    Engine("sc_euler", "softcontact Euler", "sc", "euler"),
    Engine("sc_implicit", "softcontact implicit", "sc", "implicit"),
    Engine("mj_euler", "MuJoCo Euler", "mj", "Euler"),
    Engine("mj_implicitfast", "MuJoCo implicitfast", "mj", "implicitfast"),
)
SC_ENGINES = ENGINES[:2]


@dataclasses.dataclass(frozen=True)
class Settings:
    rest: float = 2.0
    slide: float = 1.0
    incline: float = 3.0
    creep_window: float = 2.0
    stack: float = 10.0
    stack_window: float = 1.0
    torus: float = 1.0
    flight: float = 1.0
    collision: float = 0.3
    grid: tuple = GRID
    grid_time: float = 2.0
    push_hold: float = 1.0
    rounds: int = 15
    target: float = 0.02
    budget: float = 2.0


QUICK = Settings(
    stack=2.0,
    stack_window=0.5,
    torus=0.5,
    grid=(0.002, 0.010, 0.050),
    grid_time=1.0,
    push_hold=0.5,
    rounds=3,
    target=0.002,
    budget=0.1,
)


# ------------------------------------------------------------------------------------------
# softcontact scenes
# ------------------------------------------------------------------------------------------
def _contact(scene, a, b, friction=MU, **overrides):
    """Every softcontact contact of this benchmark goes through here: the parameters
    fitted to the pair at build (``ContactParams.for_bodies``, the default of
    ``Scene.add_contact``) with friction ``friction`` (MuJoCo gets the same coefficient);
    with ``overrides``, the parameters fitted without a time step, those fields replaced."""
    if not overrides:
        scene.add_contact(a, b, friction=friction)
        return
    fitted = sc.ContactParams.for_bodies(scene, a, b, friction=friction)
    scene.add_contact(a, b, dataclasses.replace(fitted, **overrides))


def _build(scene, dt, integrator):
    """``scene.build(dt, integrator)`` without its stability warning: these scenes are run
    beyond the explicit step's limits on purpose (what happens there is measured)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.SoftContactWarning)
        return scene.build(dt, integrator=integrator)


@dataclasses.dataclass(frozen=True)
class Boxes:
    """Cubes (``b0``, ``b1``, ...) placed at ``poses`` moving at ``velocities``, an
    optional floor, contact ``pairs`` of body names with friction ``friction`` (0:
    frictionless) and softcontact contact ``overrides``, and ``gravity``."""

    poses: tuple
    velocities: tuple
    floor: bool
    pairs: tuple
    gravity: tuple = (0.0, 0.0, -G)
    friction: float = MU
    overrides: tuple = ()  # softcontact ContactParams fields, as (name, value) pairs

    def scene(self):
        s = sc.Scene(dim=3, gravity=list(self.gravity))
        if self.floor:
            s.add_body(FLOOR, kind="static", name="floor")
        for i, (p, v) in enumerate(zip(self.poses, self.velocities, strict=True)):
            s.add_body(CUBE, mass=1.0, pose=list(p), velocity=list(v), name=f"b{i}")
        for a, b in self.pairs:
            _contact(s, a, b, self.friction, **dict(self.overrides))
        return s

    @property
    def x0(self):
        return np.concatenate([np.ravel(self.poses), np.ravel(self.velocities)]).astype(float)

    def mjcf(self, dt):
        """The single cube on the floor is ``scenes.box_on_floor``'s model; otherwise the
        same bodies, geoms and pairs for every cube."""
        n = len(self.poses)
        if n == 1 and self.floor:
            return scenes.box_on_floor(dt).mjcf
        inertia = _cube_inertia()
        bodies = "\n".join(
            f"""    <body name="b{i}">
      <freejoint name="b{i}"/>
      <inertial pos="0 0 0" mass="1.0" fullinertia="{scenes._fullinertia(inertia)}"/>
      <geom name="b{i}" type="box" size="{scenes._f([HALF] * 3)}" contype="0" conaffinity="0"/>
    </body>"""
            for i in range(n)
        )
        cond = (
            f'condim="3" friction="{scenes._friction(self.friction)}"'
            if self.friction > 0
            else 'condim="1"'
        )
        pairs = "\n".join(f'    <pair geom1="{a}" geom2="{b}" {cond}/>' for a, b in self.pairs)
        floor = (
            '<geom name="floor" type="plane" size="1 1 0.1" contype="0" conaffinity="0"/>'
            if self.floor
            else ""
        )
        return f"""<mujoco model="boxes">
  <option timestep="{scenes._f(dt)}" integrator="Euler" gravity="{scenes._f(self.gravity)}"/>
  <worldbody>
    {floor}
{bodies}
  </worldbody>
  <contact>
{pairs}
  </contact>
</mujoco>
"""


def _cube_inertia():
    props = CUBE.mass_properties(1.0)
    return np.asarray(props.inertia, dtype=float) / float(props.mass)


def _placed(z, x=0.0):
    return (x, 0.0, z, *IDENTITY)


STILL = (0.0,) * 6


def _box_scenes():
    """The cube scenes by name (see the module docstring)."""
    out = {"resting": Boxes((_placed(HALF),), (STILL,), True, (("floor", "b0"),))}
    for deg in INCLINES:
        th = math.radians(deg)
        out[f"incline {deg:g}"] = Boxes(
            (_placed(HALF),),
            (STILL,),
            True,
            (("floor", "b0"),),
            gravity=(G * math.sin(th), 0.0, -G * math.cos(th)),
        )
    out["stack"] = Boxes(
        tuple(_placed(HALF + 2 * HALF * i) for i in range(3)),
        (STILL,) * 3,
        True,
        (("floor", "b0"), ("b0", "b1"), ("b1", "b2")),
    )
    out["free flight"] = Boxes(
        ((0.0, 0.0, 1.0, *IDENTITY),), ((1.0, 0.0, 2.0, 3.0, 5.0, 7.0),), False, ()
    )
    gap = 0.01
    out["collision"] = Boxes(
        (_placed(0.0, -HALF - gap / 2), _placed(0.0, HALF + gap / 2)),
        ((0.5, 0.0, 0.0, 0.0, 0.0, 0.0), (-0.5, 0.0, 0.0, 0.0, 0.0, 0.0)),
        False,
        (("b0", "b1"),),
        gravity=(0.0, 0.0, 0.0),
        friction=0.0,
        overrides=(("damping", 0.0),),
    )
    return out


class Torus:
    """Torus over peg (see the module docstring)."""

    gravity = (0.0, 0.0, -G)
    friction = MU

    def __init__(self):
        self.verts, self.faces = scenes.torus_mesh(TORUS_R, TORUS_RT, *TORUS_MESH)
        # spacing above every edge: one sample per face corner
        self.cloud = sc.PointCloud.from_mesh(self.verts, self.faces, spacing=0.05)
        self.props = self.cloud.mass_properties(1000.0)
        self.x0 = _build(self.scene(), DTS[0], "euler").initial_state()

    def scene(self):
        torus = self.cloud
        s = sc.Scene(dim=3)
        s.add_body(FLOOR, kind="static", name="floor")
        peg = sc.PointCloud.capsule(PEG_RADIUS, PEG_HALF, 0.006)
        s.add_body(peg, kind="static", pose=[0.0, 0.0, PEG_Z, *IDENTITY], name="peg")
        s.add_body(torus, pose=list(TORUS_START), name="torus")
        _contact(s, "torus", "floor")
        _contact(s, "torus", "peg")
        return s

    def mjcf(self, dt):
        props = self.props
        com = np.asarray(props.com, dtype=float)
        assets, geoms = scenes._torus_segments(self.verts - com, *TORUS_MESH, "t", 6)
        return f"""<mujoco model="torus_over_peg">
  <option timestep="{scenes._f(dt)}" integrator="Euler" gravity="0 0 -9.81"/>
  <default>
    <geom friction="{scenes._f([MU, 0.005, 0.0001])}" condim="3" contype="1" conaffinity="1"/>
  </default>
  <asset>
    {assets}
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <geom name="peg" type="capsule" size="{scenes._f([PEG_RADIUS, PEG_HALF])}"
          pos="0 0 {scenes._f(PEG_Z)}"/>
    <body name="torus">
      <freejoint name="torus"/>
      <inertial pos="0 0 0" mass="{scenes._f(props.mass)}"
                fullinertia="{scenes._fullinertia(props.inertia)}"/>
      {geoms}
    </body>
  </worldbody>
</mujoco>
"""


# ------------------------------------------------------------------------------------------
# the two engines behind one interface
# ------------------------------------------------------------------------------------------
class ScSim:
    def __init__(self, scene_def, dt, integrator):
        self.model = _build(scene_def.scene(), dt, integrator)
        self.dt = dt

    def run(self, x0, n):
        r = self.model.rollout(x0, np.zeros((n, 0)), num_threads=1)
        return r.states

    def energy(self, x):
        e = self.model.energy(x)
        return e.kinetic, e.total

    def step_fns(self, x, u=None):
        m = self.model
        return (
            lambda: m.step(x, u, order=0, num_threads=1),
            lambda: m.step(x, u, order=1, num_threads=1),
        )


class MjSim:
    def __init__(self, scene_def, dt, integrator):
        import mujoco

        self.mujoco = mujoco
        m = mujoco.MjModel.from_xml_string(scene_def.mjcf(dt))
        m.opt.timestep = dt
        m.opt.integrator = _mj_integrator(integrator)
        m.opt.gravity[:] = scene_def.gravity
        if m.npair and scene_def.friction > 0:  # box_on_floor's pair: this benchmark's mu
            m.pair_friction[:, :2] = scene_def.friction
        self.m, self.d, self.dt = m, mujoco.MjData(m), dt

    def run(self, x0, n, record=None):
        mujoco, m, d = self.mujoco, self.m, self.d
        mujoco.mj_resetData(m, d)
        nq = m.nq
        d.qpos[:] = x0[:nq]
        d.qvel[:] = x0[nq:]
        X = np.full((n + 1, nq + m.nv), np.nan)
        X[0] = x0
        W = mujoco.mjtWarning
        bad = [int(w) for w in (W.mjWARN_BADQPOS, W.mjWARN_BADQVEL, W.mjWARN_BADQACC)]
        for k in range(1, n + 1):
            mujoco.mj_step(m, d)
            if any(d.warning[w].number for w in bad):  # MuJoCo reset the state: run over
                break
            X[k, :nq] = d.qpos
            X[k, nq:] = d.qvel
            if record is not None:
                record(d)
        return X

    def set_state(self, x):
        mujoco, m, d = self.mujoco, self.m, self.d
        d.qpos[:] = x[: m.nq]
        d.qvel[:] = x[m.nq :]
        mujoco.mj_forward(m, d)

    def energy(self, x):
        mujoco, m = self.mujoco, self.m
        flag = int(mujoco.mjtEnableBit.mjENBL_ENERGY)
        d = mujoco.MjData(m)
        m.opt.enableflags |= flag
        try:
            d.qpos[:] = x[: m.nq]
            d.qvel[:] = x[m.nq :]
            mujoco.mj_forward(m, d)
            return float(d.energy[1]), float(d.energy.sum())
        finally:
            m.opt.enableflags &= ~flag

    def step_fns(self, x):
        self.set_state(x)
        bs = types.SimpleNamespace(mj=(self.m, self.d))
        return scenes.mj_step_fn(bs), scenes.mj_fd_fn(bs, centred=False)


def _mj_integrator(name):
    import mujoco

    return {
        "Euler": mujoco.mjtIntegrator.mjINT_EULER,
        "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
    }[name]


class Lab:
    """Simulations, each engine's model built once per scene and dt, and trajectories
    cached (a shorter run from the same start is a prefix of a longer one)."""

    def __init__(self):
        self.defs = {**_box_scenes(), "torus": Torus()}
        self._sims = {}
        self._runs = {}

    def sim(self, name, engine, dt):
        key = (name, engine.key, dt)
        if key not in self._sims:
            cls = ScSim if engine.lib == "sc" else MjSim
            self._sims[key] = cls(self.defs[name], dt, engine.integrator)
        return self._sims[key]

    def run(self, name, engine, dt, seconds, x0=None):
        n = round(seconds / dt)
        start = x0 is None
        if start:
            hit = self._runs.get((name, engine.key, dt))
            if hit is not None and len(hit) > n:
                return hit[: n + 1]
            x0 = self.defs[name].x0
        X = self.sim(name, engine, dt).run(np.asarray(x0, dtype=float), n)
        if start:
            self._runs[(name, engine.key, dt)] = X
        return X


# ------------------------------------------------------------------------------------------
# measurements from states
# ------------------------------------------------------------------------------------------
def _parts(X, nb):
    """Positions (T, nb, 3), quaternions (T, nb, 4), velocities (T, nb, 3), angular
    velocities (T, nb, 3) of ``nb`` free bodies."""
    P = X[:, : 7 * nb].reshape(len(X), nb, 7)
    V = X[:, 7 * nb :].reshape(len(X), nb, 6)
    return P[..., :3], P[..., 3:], V[..., :3], V[..., 3:]


def _point_speed(X, nb):
    _, _, v, w = _parts(X, nb)
    return np.linalg.norm(v, axis=-1) + np.linalg.norm(w, axis=-1) * R_CORNER


def unstable(X, nb, blowup=True):
    if not np.all(np.isfinite(X)):
        return True
    if blowup:
        _, _, v, _ = _parts(X, nb)
        return bool(np.linalg.norm(v, axis=-1).max() > V_BLOWUP)
    return False


def _lowest(x, points):
    """Lowest z of ``points`` (body frame) placed by the pose ``x[:7]``."""
    R = quat_to_matrix(x[3:7])
    return float(x[2] + (points @ R.T)[:, 2].min())


def _tilt_deg(q):
    return np.degrees(np.arccos(np.clip(quat_to_matrix(q)[..., 2, 2], -1.0, 1.0)))


def measure_dt(lab, engine, dt, s):
    """Every per-dt measurement of one engine: {row key: value or None (unstable)}."""
    out = {}
    # resting, then sliding from the rest reached
    X = lab.run("resting", engine, dt, s.rest)
    k1 = round(1.0 / dt)
    if unstable(X, 1):
        out.update(dict.fromkeys(("pen", "ang", "lin", "stop", "stop_err")))
    else:
        _, _, v, w = _parts(X[k1:], 1)
        out["pen"] = -_lowest(X[-1], CUBE.points) * 1e3
        out["ang"] = float(np.linalg.norm(w, axis=-1).max())
        out["lin"] = float(np.linalg.norm(v, axis=-1).max()) * 1e3
        xs = X[-1].copy()
        xs[7] = V0_SLIDE
        Xs = lab.run("resting", engine, dt, s.slide, x0=xs)
        if unstable(Xs, 1):
            out["stop"] = out["stop_err"] = None
        else:
            d = float(Xs[-1, 0] - Xs[0, 0])
            out["stop"] = d * 1e3
            out["stop_err"] = (d / COULOMB_STOP - 1.0) * 100
    for deg in INCLINES:
        X = lab.run(f"incline {deg:g}", engine, dt, s.incline)
        kw = round(s.creep_window / dt)
        out[f"creep {deg:g}"] = (
            None
            if unstable(X, 1)
            else float(X[-1, 0] - X[-1 - kw, 0]) / (kw * dt) * 1e3  # down the slope
        )
    # stack
    X = lab.run("stack", engine, dt, s.stack)
    if unstable(X, 3):
        out.update(dict.fromkeys(("drift", "chatter", "offset", "tilt")))
    else:
        p, q, _, _ = _parts(X, 3)
        off = np.linalg.norm(p[-1, :, :2] - p[0, :, :2], axis=-1)
        kw = round(s.stack_window / dt)
        out["drift"] = float(off[2]) * 1e3
        out["offset"] = float(off.max()) * 1e3
        out["tilt"] = float(_tilt_deg(q[-1]).max())
        out["chatter"] = float(_point_speed(X[-1 - kw :], 3).max()) * 1e3
    out.update(_torus(lab, engine, dt, s))
    # energy
    X = lab.run("free flight", engine, dt, s.flight)
    sim = lab.sim("free flight", engine, dt)
    if unstable(X, 1, blowup=False):
        out["flight"] = None
    else:
        k0, e0 = sim.energy(X[0])
        out["flight"] = (sim.energy(X[-1])[1] - e0) / k0 * 100
    X = lab.run("collision", engine, dt, s.collision)
    sim = lab.sim("collision", engine, dt)
    out["elastic"] = None if unstable(X, 2) else sim.energy(X[-1])[0] / sim.energy(X[0])[0]
    return out


def _capsule_distance(pts):
    """Signed distance of points (..., 3) to the peg."""
    z = np.clip(pts[..., 2], PEG_Z - PEG_HALF, PEG_Z + PEG_HALF)
    d = np.sqrt(pts[..., 0] ** 2 + pts[..., 1] ** 2 + (pts[..., 2] - z) ** 2)
    return d - PEG_RADIUS


def _torus(lab, engine, dt, s):
    keys = ("torus_z", "torus_axis", "torus_peg", "torus_floor")
    n = round(s.torus / dt)
    sim = lab.sim("torus", engine, dt)
    x0 = lab.defs["torus"].x0
    if engine.lib == "sc":
        X = sim.run(x0, n)
        if unstable(X, 1):
            return dict.fromkeys(keys)
        torus = lab.defs["torus"]
        pts = torus.cloud.points - np.asarray(torus.props.com, dtype=float)  # body frame
        R = quat_to_matrix(X[:, 3:7])
        world = X[:, None, :3] + np.einsum("tij,kj->tki", R, pts)
        peg = -float(_capsule_distance(world).min())
        floor = -float(world[..., 2].min())
    else:
        import mujoco

        m = sim.m
        peg_id = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "peg")
        floor_id = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "floor")
        deepest = {peg_id: -np.inf, floor_id: -np.inf}

        def record(d):
            c = d.contact
            for g, dist in zip(c.geom1[: d.ncon], c.dist[: d.ncon], strict=True):
                if g in deepest:
                    deepest[g] = max(deepest[g], -float(dist))

        X = sim.run(x0, n, record=record)
        if unstable(X, 1):
            return dict.fromkeys(keys)
        peg, floor = deepest[peg_id], deepest[floor_id]
    x = X[-1]
    return {
        "torus_z": float(x[2]) * 1e3,
        "torus_axis": float(np.hypot(x[0], x[1])) * 1e3,
        "torus_peg": peg * 1e3,
        "torus_floor": floor * 1e3,
    }


# rows of the per-dt tables: (key, label, format)
def _rows(s):
    return [
        ("pen", f"resting: penetration after {s.rest:g} s [mm] (+ = into the floor)", ".3g"),
        ("ang", "resting: largest angular speed after 1 s [rad/s]", ".2g"),
        ("lin", "resting: largest centre speed after 1 s [mm/s]", ".2g"),
        (
            "stop",
            f"sliding from 1 m/s: stop distance [mm] (Coulomb {COULOMB_STOP * 1e3:.1f})",
            ".4g",
        ),
        ("stop_err", "sliding: stop distance vs Coulomb [%]", "+.2f"),
        *[(f"creep {d:g}", f"incline {d:g} deg: creep [mm/s]", ".3g") for d in INCLINES],
        ("drift", f"stack: top box drift after {s.stack:g} s [mm]", ".3g"),
        ("chatter", f"stack: largest point speed in the last {s.stack_window:g} s [mm/s]", ".3g"),
        ("offset", f"stack: largest horizontal offset of a box after {s.stack:g} s [mm]", ".3g"),
        ("tilt", f"stack: largest tilt after {s.stack:g} s [deg]", ".3g"),
        ("torus_z", f"torus over peg: centre height after {s.torus:g} s [mm]", ".3g"),
        (
            "torus_axis",
            f"torus over peg: distance from the peg axis after {s.torus:g} s [mm]",
            ".3g",
        ),
        ("torus_peg", "torus over peg: deepest into the peg [mm]", ".3g"),
        ("torus_floor", "torus over peg: deepest into the floor [mm]", ".3g"),
        ("flight", f"free flight: energy drift over {s.flight:g} s [% of kinetic]", ".2g"),
        ("elastic", "elastic collision: kinetic energy after / before", ".4g"),
    ]


def _cell(v, fmt):
    return UNSTABLE if v is None else format(v, fmt)


# ------------------------------------------------------------------------------------------
# largest stable dt
# ------------------------------------------------------------------------------------------
def stable_grid(lab, s):
    """{(scene, engine key): ([status per grid dt], largest stable dt or None)}"""
    out = {}
    for name, nb in (("resting", 1), ("stack", 3)):
        for e in ENGINES:
            ref = lab.run(name, e, s.grid[0], s.grid_time)
            rest = (
                _parts(ref[-1:], nb)[0][0]
                if np.all(np.isfinite(ref[-1]))
                else _parts(ref[:1], nb)[0][0]
            )
            status = []
            for dt in s.grid:
                X = lab.run(name, e, dt, s.grid_time)
                k1 = round((s.grid_time / 2) / dt)
                if unstable(X, nb):
                    status.append(UNSTABLE)
                    continue
                p = _parts(X[k1:], nb)[0]
                if np.linalg.norm(p - rest, axis=-1).max() > 0.01:
                    status.append("moved")
                elif _point_speed(X[k1:], nb).max() >= 0.1:
                    status.append("fast")
                else:
                    status.append("ok")
            ok = [dt for dt, st in zip(s.grid, status, strict=True) if st == "ok"]
            out[(name, e.key)] = (status, max(ok) if ok else None)
    return out


# ------------------------------------------------------------------------------------------
# push-T at 20 ms
# ------------------------------------------------------------------------------------------
def push_t_runs(s):
    import shapely

    from softcontact.tasks import push_t as task_mod

    scenes_of = {}
    for e in SC_ENGINES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sc.SoftContactWarning)
            task_e = task_mod.make(0, dt=PUSH_DT, integrator=e.integrator)
            scenes_of[e.key] = (task_e, task_e.scene)
    task = scenes_of[SC_ENGINES[0].key][0]
    r = float(task.pusher_radius)
    verts = np.asarray(task.vertices)
    poly = shapely.Polygon(verts)
    r_t = float(np.linalg.norm(verts, axis=1).max())
    y_stem = float(verts[:, 1].min())
    t0 = np.array([0.256, 0.2, 0.0])
    out = {}
    for e in SC_ENGINES:
        model = _build(scenes_of[e.key][1], PUSH_DT, e.integrator)
        for where, off, v in PUSH_CASES:
            x0 = np.zeros(12)
            x0[0:3] = t0
            x0[3:6] = [t0[0] + off, t0[1] + y_stem - r - 0.005, 0.0]
            n_push = round(PUSH_DIST / v / PUSH_DT)
            n_hold = round(s.push_hold / PUSH_DT)
            U = np.zeros((n_push + n_hold, 3))
            U[:n_push, 1] = v
            X = model.rollout(x0, U, num_threads=1).states
            key = (e.key, where, v)
            if not np.all(np.isfinite(X)) or np.hypot(X[:, 6], X[:, 7]).max() > V_BLOWUP:
                out[key] = None
                continue
            # the pusher's centre in the T's frame
            d = X[:, 3:5] - X[:, 0:2]
            c, sn = np.cos(X[:, 2]), np.sin(X[:, 2])
            lx, ly = c * d[:, 0] + sn * d[:, 1], -sn * d[:, 0] + c * d[:, 1]
            inside = shapely.contains_xy(poly, lx, ly)
            dist = shapely.distance(poly.exterior, shapely.points(lx, ly))
            pen = np.where(inside, r + dist, r - dist)
            speed = np.hypot(X[:, 6], X[:, 7]) + np.abs(X[:, 8]) * r_t
            late = round(min(0.5, s.push_hold) / PUSH_DT)
            out[key] = {
                "moved": float(np.linalg.norm(X[-1, :2] - X[0, :2])) * 1e3,
                "pen": float(pen.max()) * 1e3,
                "inside": int(inside.sum()),
                "peak": float(np.hypot(X[:, 6], X[:, 7]).max()),
                "late": float(speed[-late:].max()) * 1e3,
                "v": v,
            }
    return out


def _push_ok(m):
    return m is not None and m["inside"] == 0 and m["peak"] < 3 * m["v"] and m["late"] < 1.0


# ------------------------------------------------------------------------------------------
# cost per simulated second
# ------------------------------------------------------------------------------------------
def cost_cases(lab, s):
    """run.Case per (scene, dt, engine, order); the states each engine's own."""
    cases = []
    bs = scenes.push_t()
    for dt in DTS:
        for e in ENGINES:
            for name, nb, seconds in (("resting", 1, s.rest), ("stack", 3, s.stack)):
                X = lab.run(name, e, dt, seconds)
                x = X[-1] if not unstable(X, nb) else lab.defs[name].x0
                f0, f1 = lab.sim(name, e, dt).step_fns(np.array(x))
                cases += [run.Case(f"{name}|{dt}|{e.key}|0", f0)]
                cases += [run.Case(f"{name}|{dt}|{e.key}|1", f1)]
            f0, f1 = _push_t_fns(bs, e, dt)
            cases += [
                run.Case(f"push-T|{dt}|{e.key}|0", f0),
                run.Case(f"push-T|{dt}|{e.key}|1", f1),
            ]
    return cases


def _push_t_fns(bs, e, dt):
    if e.lib == "sc":
        model = _build(bs.scene, dt, e.integrator)
        x, u = bs.x, bs.u
        return (
            lambda: model.step(x, u, order=0, num_threads=1),
            lambda: model.step(x, u, order=1, num_threads=1),
        )
    import mujoco

    m = mujoco.MjModel.from_xml_string(bs.mjcf)
    m.opt.timestep = dt
    m.opt.integrator = _mj_integrator(e.integrator)
    m.actuator_gainprm[:, 0] *= bs.dt / dt  # velocity actuators: kv = mass / dt
    m.actuator_biasprm[:, 2] *= bs.dt / dt
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.ctrl[:] = bs.qpos, bs.qvel, bs.ctrl
    mujoco.mj_forward(m, d)
    ns = types.SimpleNamespace(mj=(m, d))
    return scenes.mj_step_fn(ns), scenes.mj_fd_fn(ns, centred=False)


def _cost(res, scene, dt, ekey, order):
    c = res.get(f"{scene}|{dt}|{ekey}|{order}")
    if c is None or not c.times:
        return None
    return c.median / dt * 1e3  # ms per simulated second


# ------------------------------------------------------------------------------------------
# printing
# ------------------------------------------------------------------------------------------
def _header(out):
    import mujoco

    info = sc.build_info()
    cpu, ncpu = machine()
    print("## softcontact vs MuJoCo: physical behaviour\n", file=out)
    print(
        f"softcontact {info['version']} (SIMD {info['isa_default']}); MuJoCo {mujoco.__version__}; "
        f"Python {platform.python_version()}; {platform.platform()}; {cpu}, {ncpu} CPUs.",
        file=out,
    )
    print(f"Load average at the start: {run._load()}.", file=out)


def _table(head, rows, out):
    print("| " + " | ".join(head) + " |", file=out)
    print("|" + "---|" * len(head), file=out)
    for r in rows:
        print("| " + " | ".join(r) + " |", file=out)


def _met(ok):
    return "yes" if ok else "**no**"


def thresholds(per_dt, grid, push, res, s, out):
    print("\n### Thresholds\n", file=out)
    rows = []

    def fmt(v, f, unit=""):
        return UNSTABLE if v is None else format(v, f) + unit

    for e in SC_ENGINES:
        m10, m5 = per_dt[(0.010, e.key)], per_dt[(0.005, e.key)]
        v = m10["ang"]
        rows.append(
            [
                "box resting, 10 ms: angular speed after 1 s (< 1e-3 rad/s)",
                e.label,
                fmt(v, ".2g", " rad/s"),
                _met(v is not None and v < 1e-3),
            ]
        )
        off, tilt = m5["offset"], m5["tilt"]
        rows.append(
            [
                f"stack of three, 5 ms: stacked after {s.stack:g} s "
                "(offsets < 10 mm, tilts < 5 deg)",
                e.label,
                UNSTABLE if off is None else f"{off:.3g} mm, {tilt:.3g} deg",
                _met(off is not None and off < 10 and tilt < 5),
            ]
        )
        v = m5["drift"]
        rows.append(
            [
                f"stack, 5 ms: top box drift after {s.stack:g} s (< 1 mm)",
                e.label,
                fmt(v, ".3g", " mm"),
                _met(v is not None and v < 1),
            ]
        )
        v = m5["chatter"]
        rows.append(
            [
                f"stack, 5 ms: every speed in the last {s.stack_window:g} s (< 1 mm/s)",
                e.label,
                fmt(v, ".3g", " mm/s"),
                _met(v is not None and v < 1),
            ]
        )
        v = m5["creep 20"]
        rows.append(
            [
                "creep at 20 deg, mu 0.5, 5 ms (<= 1 mm/s)",
                e.label,
                fmt(v, ".3g", " mm/s"),
                _met(v is not None and abs(v) <= 1),
            ]
        )
        v = m5["stop_err"]
        rows.append(
            [
                "stop distance from 1 m/s, 5 ms (within 2 % of v0^2 / (2 mu g))",
                e.label,
                fmt(v, "+.2f", " %"),
                _met(v is not None and abs(v) <= 2),
            ]
        )
        t = m10
        ok = t["torus_z"] is not None and (
            t["torus_axis"] < THREADED * 1e3
            and t["torus_z"] < 30
            and t["torus_peg"] < PEG_RADIUS * 1e3
            and t["torus_floor"] < TORUS_RT * 1e3
        )
        rows.append(
            [
                f"torus over peg, 10 ms: stable, threaded and down after {s.torus:g} s, "
                "no tunnelling (< 10 mm into the peg, < 15 mm into the floor)",
                e.label,
                UNSTABLE
                if t["torus_z"] is None
                else f"axis {t['torus_axis']:.3g} mm, height {t['torus_z']:.3g} mm, "
                f"{t['torus_peg']:.3g} mm into the peg, {t['torus_floor']:.3g} mm into the floor",
                _met(ok),
            ]
        )
        ms = [push[(e.key, w, v)] for w, _, v in PUSH_CASES]
        rows.append(
            [
                "push-T, 20 ms: stable, no tunnelling (pusher centre never inside the T)",
                e.label,
                f"{sum(_push_ok(m) for m in ms)} of {len(ms)} pushes",
                _met(all(_push_ok(m) for m in ms)),
            ]
        )
    for order, label, bound in (
        (1, "with first derivatives (<= 0.5x mj_step + forward mjd_transitionFD)", 0.5),
        (0, "value only (<= 3x mj_step)", 3.0),
    ):
        for scene in ("resting", "stack", "push-T"):
            name = {"resting": "box on floor", "stack": "stack"}.get(scene, scene)
            ref = _cost(res, scene, 0.010, "mj_implicitfast", order)
            for e in SC_ENGINES:
                v = _cost(res, scene, 0.010, e.key, order)
                ratio = None if v is None or ref is None else v / ref
                rows.append(
                    [
                        f"cost per simulated second, 10 ms, {name}: {label}, "
                        "vs MuJoCo implicitfast",
                        e.label,
                        fmt(ratio, ".3g", "x"),
                        _met(ratio is not None and ratio <= bound),
                    ]
                )
    _table(["criterion", "engine", "measured", "within"], rows, out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short runs: a smoke test")
    ap.add_argument("--rounds", type=int, default=None, help="timing rounds (default 15; quick 3)")
    ap.add_argument(
        "--out", default=None, help="also write the tables to this markdown file (docs/physics.md)"
    )
    a = ap.parse_args(argv)
    s = QUICK if a.quick else Settings()
    if a.rounds is not None:
        if a.rounds < 1:
            ap.error("--rounds must be >= 1")
        s = dataclasses.replace(s, rounds=a.rounds)
    try:
        import mujoco  # noqa: F401
    except ImportError as e:
        sys.exit(f"benchmarks/physics.py needs mujoco: {e}")
    out = Tee(
        a.out,
        "<!-- written by benchmarks/physics.py --out docs/physics.md; do not edit by hand -->",
    )
    t_start = time.perf_counter()
    _header(out)
    print(
        f"{'Quick settings (smoke test). ' if a.quick else ''}Scenes and criteria: the "
        "module docstring of benchmarks/physics.py.",
        file=out,
    )
    lab = Lab()
    per_dt = {}
    head = ["measurement", *(e.label for e in ENGINES)]
    for dt in DTS:
        t0 = time.perf_counter()
        for e in ENGINES:
            per_dt[(dt, e.key)] = measure_dt(lab, e, dt, s)
        print(f"\n### dt = {dt * 1e3:g} ms\n", file=out)
        rows = [
            [label, *(_cell(per_dt[(dt, e.key)][k], f) for e in ENGINES)]
            for k, label, f in _rows(s)
        ]
        _table(head, rows, out)
        print(f"\n({time.perf_counter() - t0:.0f} s)", file=out)
        out.flush()

    t0 = time.perf_counter()
    grid = stable_grid(lab, s)
    print("\n### Largest stable dt\n", file=out)
    rows = []
    for (name, ekey), (status, best) in grid.items():
        label = next(e.label for e in ENGINES if e.key == ekey)
        scene = "box resting" if name == "resting" else "stack of three"
        rows.append([scene, label, *status, "none" if best is None else f"{best * 1e3:g}"])
    _table(
        ["scene", "engine", *(f"{dt * 1e3:g} ms" for dt in s.grid), "largest stable dt [ms]"],
        rows,
        out,
    )
    print(
        f"\n{s.grid_time:g} s from the placed start; ok: within 1 cm of rest and every point "
        f"speed < 0.1 m/s over the second half ({time.perf_counter() - t0:.0f} s).",
        file=out,
    )
    out.flush()

    push = push_t_runs(s)
    print(f"\n### Push-T at dt = {PUSH_DT * 1e3:g} ms (softcontact)\n", file=out)
    rows = []
    for e in SC_ENGINES:
        for where, _, v in PUSH_CASES:
            m = push[(e.key, where, v)]
            cells = (
                [UNSTABLE] * 5
                if m is None
                else [
                    f"{m['moved']:.3g}",
                    f"{m['pen']:.3g}",
                    f"{m['inside']}",
                    f"{m['peak']:.3g}",
                    f"{m['late']:.3g}",
                ]
            )
            rows.append([f"{where}, {v:g} m/s", e.label, *cells])
    _table(
        [
            "push",
            "engine",
            "T moved [mm]",
            "deepest pusher penetration [mm]",
            "steps with the pusher centre inside the T",
            "T peak speed [m/s]",
            f"T point speed, last {min(0.5, s.push_hold):g} s [mm/s]",
        ],
        rows,
        out,
    )
    print(
        f"\nPushed {PUSH_DIST * 1e3:g} mm along +y, then held {s.push_hold:g} s; the pusher "
        "starts 5 mm below the stem.",
        file=out,
    )
    out.flush()

    t0 = time.perf_counter()
    cases = cost_cases(lab, s)
    res = run.measure(cases, s.rounds, s.target, s.budget, min_rounds=min(3, s.rounds), out=out)
    print("\n### Cost per simulated second [ms], one thread\n", file=out)
    rows = []
    for scene in ("resting", "stack", "push-T"):
        name = {"resting": "box on floor", "stack": "stack of three"}.get(scene, scene)
        for dt in DTS:
            for order, what in ((0, "value only"), (1, "with first derivatives")):
                vals = [_cost(res, scene, dt, e.key, order) for e in ENGINES]
                ref = vals[3]
                rows.append(
                    [
                        name,
                        f"{dt * 1e3:g}",
                        what,
                        *(_cell(v, ".3g") for v in vals),
                        *(
                            _cell(None if v is None or ref is None else v / ref, ".3g")
                            for v in vals[:2]
                        ),
                    ]
                )
    _table(
        [
            "scene",
            "dt [ms]",
            "step",
            *(e.label for e in ENGINES),
            "softcontact Euler / MuJoCo implicitfast",
            "softcontact implicit / MuJoCo implicitfast",
        ],
        rows,
        out,
    )
    rounds = sorted({c.rounds for c in res.values() if c.times})
    print(
        "\nValue only: Model.step(order=0) against mj_step; with first derivatives: "
        "Model.step(order=1) against mj_step + forward mjd_transitionFD.  Medians over "
        f"{rounds[0]}-{rounds[-1]} interleaved rounds ({time.perf_counter() - t0:.0f} s).",
        file=out,
    )
    thresholds(per_dt, grid, push, res, s, out)
    print(
        f"\ntotal {time.perf_counter() - t_start:.0f} s; load average at the end: {run._load()}",
        file=out,
    )
    out.close()


if __name__ == "__main__":
    main()
