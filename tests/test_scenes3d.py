"""3D acceptance scenes: whole simulations through ``Scene``/``Model``.

1. A torus dropped off-centre and tilted over a vertical static peg threads itself onto
   the peg and slides down around it to the floor -- the peg goes through its hole.  An
   engine that collides a mesh through its convex hull (MuJoCo, checked at the end when
   it is installed) cannot: the hull fills the hole, and the same drop ends beside the
   peg.
2. A box dropped on a floor settles where the stiffness says: the contact force equals
   the weight, the soft depth ``m`` solves ``k sp_b(-m) s_b(-m) = M g`` (about
   ``-M g / k``), the contact energy is ``(k/2) sp_b(-m)^2``, and the geometric
   penetration ``min Phi`` is higher than ``m`` by ``eps_c log N`` (N: the samples at the
   deepest level), as the ``ContactParams`` docstring states.
3. Two spheres collide head-on without gravity: they bounce back along the line of
   centres; linear and angular momentum are conserved to rounding; with damping and
   friction 0 the energy comes back after separation (the equal masses swap their
   velocities), while during contact the energy evaluated at the steps exceeds the
   initial one only by the integrator's O(dt) fluctuation; with damping and friction it
   only decreases.

Coarse clouds and 1-2 ms steps keep the file to a few seconds on two cores.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import softcontact as sc

# the torus mesh generator is shared with the benchmark scenes
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from scenes import torus_mesh  # noqa: E402

# Scenes here step past the explicit integrator's friction and damping limits on purpose:
# what is checked (derivatives, bits, memory, parameters) holds at any dt.  Scene.build's
# stability warning is tested in tests/test_scene.py.
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


IDENTITY = [1.0, 0.0, 0.0, 0.0]


def _rotation(q):
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _simulate(model, steps, x=None):
    """Trajectory (steps + 1, nx) by a loop of ``step`` (the contact kernel is threaded
    inside a step; a one-trajectory rollout would run on one thread)."""
    xs = [model.initial_state() if x is None else x]
    for _ in range(steps):
        xs.append(model.step(xs[-1]).x_next)
    return np.array(xs)


def _centred(cloud):
    """The cloud relative to its centre of mass: the body frame of a dynamic body."""
    com = np.asarray(cloud.mass_properties().com, dtype=float)
    return cloud.transformed(np.concatenate([-com, IDENTITY]))


# --------------------------------------------------------------------------------------------
# 1. torus over a peg
# --------------------------------------------------------------------------------------------
R_MAJOR, R_MINOR = 0.05, 0.015  # hole radius R - r = 35 mm
PEG_RADIUS, PEG_HALF = 0.01, 0.06  # capsule along z, centre at z = 0.07: top at 0.14 m
PEG_POSE = [0.0, 0.0, 0.07, *IDENTITY]
PEG_TOP = 0.07 + PEG_HALF + PEG_RADIUS
TORUS_DT, TORUS_TIME = 0.002, 0.6
# 30 mm off the peg axis: the peg's round top lands under the inner half of the tube;
# tilted 10 degrees about x; the tube bottom starts 10 mm above the peg top
TORUS_START = [0.03, 0.0, 0.165, np.cos(np.deg2rad(5.0)), np.sin(np.deg2rad(5.0)), 0.0, 0.0]


@pytest.fixture(scope="module")
def torus_run():
    verts, faces = torus_mesh(R_MAJOR, R_MINOR, n_major=24, n_minor=10)
    # spacing above every edge: one sample per face corner (864 samples, ~1 cm apart)
    torus = sc.PointCloud.from_mesh(verts, faces, spacing=0.05)
    peg = sc.PointCloud.capsule(PEG_RADIUS, PEG_HALF, 0.006)
    floor = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    scene = sc.Scene(3)
    scene.add_body(floor, kind="static", name="floor")
    scene.add_body(peg, kind="static", pose=PEG_POSE, name="peg")
    scene.add_body(torus, pose=TORUS_START, name="torus")
    scene.add_contact("torus", "floor")
    scene.add_contact("torus", "peg")
    model = scene.build(TORUS_DT)
    X = _simulate(model, round(TORUS_TIME / TORUS_DT))
    body = _centred(torus)
    eps = sc.ContactParams().eps
    peg_phi = np.array([sc.separation(body, x[:7], peg, PEG_POSE, eps).phi.min() for x in X])
    floor_z = np.array([x[2] + (body.points @ _rotation(x[3:7]).T)[:, 2].min() for x in X])
    return {
        "X": X,
        "peg_phi": peg_phi,
        "floor_z": floor_z,
        "verts": verts,
        "faces": faces,
        "props": torus.mass_properties(1000.0),
    }


def test_torus_slides_down_around_the_peg(torus_run):
    X = torus_run["X"]
    x = X[-1]
    axis_dist = np.hypot(X[:, 0], X[:, 1])
    # it starts 30 mm off the axis, above the peg top, and has to touch the peg ...
    assert axis_dist[0] == pytest.approx(0.03) and X[0, 2] > PEG_TOP
    assert torus_run["peg_phi"].min() < 0.0
    # ... and ends down at the floor (resting on the tube, centre ~ r + a few mm), far
    # below the peg top where a convex hull would have stopped it (centre >= 0.14 m)
    assert x[2] < 0.03, x[2]
    # with the peg through the hole: the centre is closer to the peg axis than the hole
    # radius minus the peg radius (25 mm); measured 4 mm
    assert axis_dist[-1] < R_MAJOR - R_MINOR - PEG_RADIUS, axis_dist[-1]
    # lying flat on the floor (tilt below 18 degrees; measured ~3: still wobbling)
    assert abs(_rotation(x[3:7])[2, 2]) > 0.95
    # and it went down around the peg, never beside it: once the torus is below the peg
    # top, the peg axis stays inside the hole (distance < R - r) at every step
    below = X[:, 2] < PEG_TOP - 0.02
    assert below.sum() > 100
    assert axis_dist[below].max() < R_MAJOR - R_MINOR, axis_dist[below].max()


def test_torus_never_tunnels(torus_run):
    # bounded penetration into the peg (radius 10 mm) and the floor over the whole run,
    # including the 1.7 m/s landing: measured 3.6 mm and 5.5 mm
    assert torus_run["peg_phi"].min() > -0.007, torus_run["peg_phi"].min()
    assert torus_run["floor_z"].min() > -0.007, torus_run["floor_z"].min()


def test_convex_hull_torus_does_not_thread_in_mujoco(torus_run):
    """The contrast: MuJoCo collides a mesh through its convex hull, which fills the
    hole; the same drop (same mesh, mass, start, peg and floor) ends beside the peg."""
    mujoco = pytest.importorskip("mujoco")
    verts, faces = torus_run["verts"], torus_run["faces"]
    props = torus_run["props"]  # the same mass and inertia as softcontact's torus
    mass = f"{float(props.mass):.17g}"
    inertia = " ".join(f"{c:.17g}" for c in np.diag(np.asarray(props.inertia)))
    assert np.abs(np.asarray(props.com)).max() < 1e-12
    pos, quat = (
        " ".join(f"{float(c):.17g}" for c in part) for part in (TORUS_START[:3], TORUS_START[3:])
    )
    xml = f"""
<mujoco>
  <option timestep="0.001"/>
  <asset>
    <mesh name="torus" vertex="{" ".join(f"{c:.17g}" for c in verts.ravel())}"
          face="{" ".join(str(k) for k in faces.ravel())}"/>
  </asset>
  <worldbody>
    <geom type="plane" size="1 1 0.1"/>
    <geom type="capsule" size="{PEG_RADIUS} {PEG_HALF}" pos="0 0 0.07"/>
    <body pos="{pos}" quat="{quat}">
      <freejoint/>
      <inertial pos="0 0 0" mass="{mass}" diaginertia="{inertia}"/>
      <geom type="mesh" mesh="torus"/>
    </body>
  </worldbody>
</mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    axis_dist = []
    for _ in range(round(TORUS_TIME / 0.001)):
        mujoco.mj_step(model, data)
        axis_dist.append(np.hypot(*data.qpos[:2]))
    # it tips over the peg top and lands beside it: the peg axis ends outside the ring
    assert axis_dist[-1] > R_MAJOR, axis_dist[-1]
    assert data.qpos[2] < 0.03  # on the floor, not hanging on the peg


# --------------------------------------------------------------------------------------------
# 2. box resting on the floor
# --------------------------------------------------------------------------------------------
def _force_law(m, k, b):
    """lambda(m) = k sp_b(-m) s_b(-m) (docs/method.md section 5)."""
    return k * b * np.logaddexp(0.0, -m / b) / (1.0 + np.exp(m / b))


def test_box_settles_at_the_depth_the_stiffness_predicts():
    half, spacing = 0.05, 0.005  # 10 cm, 1 kg (water density), 2646 samples
    box = sc.PointCloud.box([half, half, half], spacing)
    floor = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    # damping ratio c / (2 sqrt(k M)) = 0.67, so that it settles within 0.5 s
    params = sc.ContactParams(damping=60.0)
    scene = sc.Scene(3)
    scene.add_body(floor, kind="static", name="floor")
    scene.add_body(box, pose=[0.0, 0.0, half + 0.01, *IDENTITY], name="box")
    scene.add_contact("box", "floor", params)
    model = scene.build(0.001)
    X = model.rollout(model.initial_state(), np.zeros((500, 0))).states
    x = X[-1]
    mass = box.mass_properties(1000.0).mass
    weight = mass * 9.81
    k, b, eps_c = params.stiffness, params.beta, params.eps_c
    assert mass == pytest.approx(1.0)
    # at rest, flat
    assert np.abs(x[7:10]).max() < 1e-5 and np.abs(x[10:]).max() < 1e-4
    np.testing.assert_allclose(x[3:7], IDENTITY, atol=1e-12)
    # force balance: the contact force equals the weight (measured 1e-6), no tangential
    # force or torque
    c = sc.contact(box, x[:7], x[7:], floor, [0.0, 0.0, 0.0, *IDENTITY], np.zeros(6), params)
    assert c.wrench_a[2] == pytest.approx(weight, rel=1e-3)
    assert np.abs(c.wrench_a[[0, 1]]).max() < 1e-9 and np.abs(c.wrench_a[3:]).max() < 1e-9
    # the soft depth: lambda(m*) = M g, solved by bisection ...
    lo, hi = -0.05, 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _force_law(mid, k, b) > weight else (lo, mid)
    m_star = 0.5 * (lo + hi)
    assert c.depth == pytest.approx(m_star, rel=1e-3)
    # ... which is -M g / k up to the ramp's smoothing (-4.93 mm against -4.905 mm)
    assert m_star == pytest.approx(-weight / k, rel=0.01)
    # the model's contact energy gives the same depth: U = (k/2) sp_b(-m)^2
    energy = model.energy(x).contact
    sp = np.sqrt(2.0 * energy / k)
    m_from_energy = -b * np.log(np.expm1(sp / b))
    assert m_from_energy == pytest.approx(m_star, rel=1e-3)
    assert energy == pytest.approx(c.energy, rel=1e-12)
    # the geometric penetration: every sample of the bottom face (and the bottom rows of
    # the side faces: 21^2 + 4 * 21 = 525 copies at z = -half) shares the deepest level,
    # and so does the floor's sample against the box, so min Phi = m + eps_c log(526)
    # (to 2e-4: the next rows, 5 mm = 5 eps_c higher, add 84 exp(-5) to the 526): the box
    # rests 1.3 mm *above* the floor, as the ContactParams docstring says
    n_deepest = int(np.sum(np.isclose(box.points[:, 2], -half))) + 1
    assert n_deepest == 526
    min_phi = c.phi.min()
    assert min_phi - c.depth == pytest.approx(eps_c * np.log(n_deepest), rel=1e-3)
    assert 1.2e-3 < min_phi < 1.45e-3
    assert x[2] - half == pytest.approx(min_phi, abs=1e-12)


# --------------------------------------------------------------------------------------------
# 3. two spheres, head-on
# --------------------------------------------------------------------------------------------
LINE = np.array([1.0, 0.5, -0.3]) / np.linalg.norm([1.0, 0.5, -0.3])  # line of centres
SPEED_A, SPEED_B = 0.6, -0.3  # along LINE: a approaches from behind, b comes back at it
OFFSET = np.array([0.02, -0.03, 0.01])  # the line misses the origin: angular momentum != 0


def _spheres(dt, params, duration=0.07):
    # spacing 6 mm (873 samples) with eps = 3e-5 m^2 (smoothing length ~5.5 mm, the
    # spacing): the SSDF is round enough that the force passes through the centres
    ball = sc.PointCloud.sphere(0.05, 0.006)
    scene = sc.Scene(3, gravity=[0.0, 0.0, 0.0])
    gap = 0.012  # 12 mm apart: the soft contact's reach is a few mm, U(0) ~ 1e-12 J
    scene.add_body(
        ball,
        pose=[*(OFFSET - (0.05 + gap / 2) * LINE), *IDENTITY],
        velocity=[*(SPEED_A * LINE), 0.0, 0.0, 0.0],
        name="a",
    )
    scene.add_body(
        ball,
        pose=[*(OFFSET + (0.05 + gap / 2) * LINE), *IDENTITY],
        velocity=[*(SPEED_B * LINE), 0.0, 0.0, 0.0],
        name="b",
    )
    scene.add_contact("a", "b", params)
    model = scene.build(dt)
    X = _simulate(model, round(duration / dt))
    energy = [model.energy(x) for x in X]
    momentum = [model.momentum(x) for x in X]
    return {
        "X": X,
        "total": np.array([e.total for e in energy]),
        "kinetic": np.array([e.kinetic for e in energy]),
        "contact": np.array([e.contact for e in energy]),
        "linear": np.array([p.linear for p in momentum]),
        "angular": np.array([p.angular for p in momentum]),
    }


ELASTIC = sc.ContactParams(eps=3e-5, damping=0.0, friction=0.0)


@pytest.fixture(scope="module")
def elastic():
    return {dt: _spheres(dt, ELASTIC) for dt in (0.002, 0.001)}


def test_spheres_bounce_back_along_the_line_of_centres(elastic):
    r = elastic[0.001]
    X = r["X"]
    assert r["contact"].max() > 0.5 * r["total"][0]  # a real collision (deep: ~6 mm)
    assert r["contact"][-1] < 1e-12 * r["total"][0]  # ... and over: separated
    va, wa, vb, wb = X[-1, 14:17], X[-1, 17:20], X[-1, 20:23], X[-1, 23:26]
    # equal masses, elastic, head-on: the velocities are exchanged along the line
    assert va @ LINE == pytest.approx(SPEED_B, abs=1e-4)
    assert vb @ LINE == pytest.approx(SPEED_A, abs=1e-4)
    # no sideways velocity, no spin (measured: 1e-4 m/s and 3e-3 rad/s from the sampling)
    for v in (va, vb):
        assert np.linalg.norm(v - (v @ LINE) * LINE) < 1e-3 * (SPEED_A - SPEED_B)
    assert max(np.abs(wa).max(), np.abs(wb).max()) < 0.02


@pytest.mark.parametrize("dt", [0.002, 0.001])
def test_spheres_conserve_momentum_to_rounding(elastic, dt):
    r = elastic[dt]
    p0 = r["linear"][0]
    assert np.linalg.norm(p0) > 0.1
    np.testing.assert_allclose(
        r["linear"], np.broadcast_to(p0, r["linear"].shape), rtol=0, atol=1e-14
    )
    # angular momentum about the origin, too
    assert np.linalg.norm(r["angular"][0]) > 1e-3
    np.testing.assert_allclose(
        r["angular"], np.broadcast_to(r["angular"][0], r["angular"].shape), rtol=0, atol=1e-14
    )


def test_elastic_collision_returns_the_energy(elastic):
    coarse, fine = elastic[0.002], elastic[0.001]
    e0 = fine["total"][0]
    assert coarse["total"][0] == pytest.approx(e0, rel=1e-12)
    # after separation the kinetic energy is back: symplectic Euler conserves a modified
    # energy that equals the true one where the contact force vanishes, so the error left
    # is far below the O(dt) of the integrator (measured 1.2e-5 at 2 ms, 1.4e-10 at 1 ms)
    loss = {dt: r["kinetic"][-1] / r["total"][0] - 1.0 for dt, r in elastic.items()}
    assert abs(loss[0.002]) < 1e-4, loss
    assert abs(loss[0.001]) < 1e-6, loss
    # never more than the starting energy after the collision ...
    assert fine["total"][-1] <= e0 * (1.0 + 1e-9)
    # ... and during it only by the integrator's fluctuation, O(dt) (omega dt / 2 ~ 4 %
    # at 1 ms, omega = sqrt(k / reduced mass) = 87 rad/s): halving dt halves it
    excess = {dt: r["total"].max() / r["total"][0] - 1.0 for dt, r in elastic.items()}
    assert excess[0.001] < 0.06, excess
    assert 1.6 < excess[0.002] / excess[0.001] < 2.4, excess


def test_damped_collision_loses_energy():
    params = sc.ContactParams(eps=3e-5)  # default damping 10 N s/m and friction 0.5
    r = _spheres(0.002, params)
    e = r["total"]
    assert r["contact"][-1] < 1e-9 * e[0]  # separated
    # the dissipation outweighs the integrator's fluctuation: the energy never exceeds
    # its start (measured: it decreases at every step) and ends 70 % lower
    assert e.max() <= e[0] * (1.0 + 1e-12)
    assert e[-1] < 0.5 * e[0]
    np.testing.assert_allclose(
        r["linear"], np.broadcast_to(r["linear"][0], r["linear"].shape), rtol=0, atol=1e-14
    )
    # they still separate along the line: relative velocity reversed
    X = r["X"]
    rel = (X[-1, 20:23] - X[-1, 14:17]) @ LINE
    assert 0.0 < rel < SPEED_A - SPEED_B
