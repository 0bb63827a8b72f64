"""softcontact's step against an independent JAX implementation (tests/jax_oracle.py).

The JAX model is written from docs/method.md (dense, vmapped, float64) and
differentiated by JAX's autodiff, so it checks the C step's values *and* its closed-form
first and second derivatives (jets) on whole scenes:

* push-T (2D): the task's own scene (``push_t.make(...).scene``): a dynamic T with
  planar support friction, a kinematic pusher, four static walls;
* box on floor (3D): a coarse dynamic box on a static half-space, and a kinematic body
  (touching nothing) in the state and the controls;
* two dynamic bodies (3D): a box and an actuated sphere in contact.

States: some in contact (checked: removing the scene's contact pairs changes the step's
velocities by > 1e-2 m/s or rad/s) and some out of contact (checked: every pair's
separation field is >= 3 cm everywhere, 30 ``beta``, and the contact forces change no
velocity by more than 1e-9).

Tolerance (documented choice): for each quantity ``x_next``, ``dx_dx``, ``dx_du``,
``d2x_dx2``, ``d2x_dxdu``, ``d2x_du2`` and each output row ``r`` (one tangent coordinate of
``x_next``), ``max |jax[r] - c[r]| <= 1e-9 * max(max |c[r]|, 1e-3 * max |c|)``: 1e-9
relative to the row's own largest entry, so that small rows (e.g. torques, or a
kinematic body's rows) are checked on their own scale, not hidden under the largest
contact stiffness entry -- which alone would be "1e-9 relative to the array's max-abs".
The floor keeps rows that are exactly zero in C (e.g. the second derivatives of a
kinematic body's rotation, linear in dtheta) from demanding that JAX's rounding noise
(~1e-17 there, from cancelling O(1) terms) be below 1e-9 of nothing; such rows must
still agree to 1e-12 of the array's largest entry.  An all-zero array must be matched to
1e-300 (exactly, up to denormals).  Measured: <= 3e-13 of each array's max-abs; row-wise
<= 2e-12, except 1e-10 on the exactly-zero rows above.  Out of contact the C step's
pruning gives an exactly zero wrench where JAX keeps forces ~1e-13 N: far below the
tolerance.  softcontact is checked on both its pruned (default) and ``dense=True`` paths.

Compile time dominates: each model is jit-compiled once per module (XLA optimization
level 0, which halves compile time), second derivatives on every scene (as
``jacfwd(jacfwd)`` on the 3D scenes, ~20 % quicker to compile; push-T keeps the default
``jacfwd(jacrev)``), ``step`` and ``step_d1`` on push-T and box on floor, the batched
rollout on push-T.
"""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from jax_oracle import JaxModel  # noqa: E402

import softcontact as sc  # noqa: E402
from softcontact.tasks import push_t  # noqa: E402

# Scenes here step past the explicit integrator's friction and damping limits on purpose:
# what is checked (derivatives, bits, memory, parameters) holds at any dt.  Scene.build's
# stability warning is tested in tests/test_scene.py.
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


RTOL = 1e-9
ROW_FLOOR = 1e-3
FAST_COMPILE = {"xla_backend_optimization_level": 0}
NAMES = ("x_next", "dx_dx", "dx_du", "d2x_dx2", "d2x_dxdu", "d2x_du2")


def rel_err(a, b):
    """max over rows r of max |a[r] - b[r]| / max(max |b[r]|, ROW_FLOOR * max |b|); for an
    all-zero b, max |a| / 1e-300 (so anything above denormals fails)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, (a.shape, b.shape)
    if b.size == 0:
        return 0.0
    big = np.max(np.abs(b))
    if big == 0.0:
        return float(np.max(np.abs(a))) / 1e-300
    if b.ndim == 1:  # x_next: one scale for the vector
        return float(np.max(np.abs(a - b)) / big)
    rows_a, rows_b = a.reshape(len(a), -1), b.reshape(len(b), -1)
    scale = np.maximum(np.max(np.abs(rows_b), axis=1), ROW_FLOOR * big)
    return float(np.max(np.max(np.abs(rows_a - rows_b), axis=1) / scale))


def _without_contacts(scene, dt):
    s = copy.copy(scene)
    s._pairs = []
    return s.build(dt)


def _min_separation(scene, model, x):
    """min Phi over every contact pair at state x (softcontact.separation)."""
    nqb = 3 if scene.dim == 2 else 7
    moving = [i for i, b in enumerate(scene._bodies) if b.kind != "static"]
    out = np.inf
    for a, c, prm in scene._resolved_pairs(model.dt, model.integrator):
        poses = []
        for i in (a, c):
            b = scene._bodies[i]
            poses.append(
                b.pose
                if b.kind == "static"
                else x[nqb * moving.index(i) : nqb * (moving.index(i) + 1)]
            )
        r = sc.separation(
            scene._bodies[a].cloud,
            poses[0],
            scene._bodies[c].cloud,
            poses[1],
            prm.eps,
            num_threads=1,
        )
        out = min(out, float(r.phi.min()))
    return out


class Case:
    def __init__(self, name, scene, dt, states, hessian="fwd-fwd"):
        self.name, self.scene, self.dt = name, scene, dt
        self.model = scene.build(dt)
        self.free = _without_contacts(scene, dt)
        self.jax = JaxModel.from_scene(scene, dt, compiler_options=FAST_COMPILE, hessian=hessian)
        self.states = states  # [(label, in_contact, x, u)]
        self._d2 = {}

    def jax_d2(self, x, u):
        """JAX step_d2 at (x, u), computed once per state."""
        key = (x.tobytes(), u.tobytes())
        if key not in self._d2:
            self._d2[key] = [np.asarray(a) for a in self.jax.step_d2(x, u)]
        return self._d2[key]


def _quat(rng, tilt):
    q = np.array([1.0, 0.0, 0.0, 0.0]) + tilt * rng.normal(size=4)
    return q / np.linalg.norm(q)


def _push_t_case():
    task = push_t.make(seed=0)
    scene = task.scene
    rng = np.random.default_rng(0)
    r = task.pusher_radius
    v = task.vertices  # T corners, body frame, counter-clockwise
    states = []
    # the pusher pressed 2 and 4 mm into the middle of two edges, both moving
    for e, depth in ((0, 0.002), (5, 0.004)):
        x = task.x0.copy()
        a, b = v[e], v[(e + 1) % len(v)]
        mid, t = (a + b) / 2, (b - a) / np.linalg.norm(b - a)
        nrm = np.array([t[1], -t[0]])  # outward for a counter-clockwise polygon
        c, s = np.cos(x[2]), np.sin(x[2])
        R = np.array([[c, -s], [s, c]])
        x[3:5] = x[:2] + R @ (mid + (r - depth) * nrm)
        x[5] = rng.uniform(-1, 1)
        x[6:12] = rng.normal(size=6) * [0.05, 0.05, 0.5, 0.1, 0.1, 0.3]
        states.append((f"pusher on edge {e}", True, x, rng.normal(size=3) * 0.2))
    # the T 2 mm into the left wall (the pusher far away)
    x = task.x0.copy()
    x[2] = 0.3
    c, s = np.cos(x[2]), np.sin(x[2])
    x[0] = -0.002 - np.min(c * v[:, 0] - s * v[:, 1])
    x[1] = 0.25
    x[3:5] = [0.45, 0.45]
    x[6:12] = rng.normal(size=6) * [0.05, 0.05, 0.5, 0.1, 0.1, 0.3]
    states.append(("T in the left wall", True, x, rng.normal(size=3) * 0.2))
    # out of contact: the seeded T, the pusher far from it, moving
    x = task.x0.copy()
    x[3:5] = [0.45, 0.45]
    x[6:12] = rng.normal(size=6) * [0.05, 0.05, 0.5, 0.1, 0.1, 0.3]
    states.append(("free", False, x, rng.normal(size=3) * 0.2))
    return Case("push-T", scene, task.dt, states, hessian="fwd-rev")


def _box_floor_case():
    box = sc.PointCloud.box([0.05, 0.05, 0.05], 0.1 / 3)
    scene = sc.Scene(dim=3)
    scene.add_body(
        sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]), kind="static", name="floor"
    )
    scene.add_body(box, mass=1.0, pose=[0.0, 0.0, 0.046, 1.0, 0.0, 0.0, 0.0], name="box")
    # a kinematic body in the state and the controls, touching nothing (3D kinematics)
    scene.add_body(
        sc.PointCloud.sphere(0.01, 0.01),
        kind="kinematic",
        pose=[1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
        name="probe",
    )
    scene.add_contact("box", "floor", sc.ContactParams())
    rng = np.random.default_rng(1)
    states = []
    for k, z in enumerate((0.046, 0.047)):
        vel = rng.normal(size=12) * np.tile([0.05, 0.05, 0.02, 0.3, 0.3, 0.3], 2)
        x = np.concatenate(
            [[0.01, -0.02, z], _quat(rng, 0.03), [1.0, 1.0, 1.0], _quat(rng, 0.5), vel]
        )
        states.append((f"resting {k}", True, x, rng.normal(size=6)))
    x = np.concatenate(
        [
            [0.0, 0.0, 0.2],
            _quat(rng, 0.3),
            [1.0, 1.0, 1.0],
            _quat(rng, 0.5),
            rng.normal(size=12) * 0.3,
        ]
    )
    states.append(("falling", False, x, rng.normal(size=6)))
    return Case("box on floor", scene, 0.001, states)


def _two_bodies_case():
    box = sc.PointCloud.box([0.05, 0.05, 0.05], 0.05)
    ball = sc.PointCloud.sphere(0.03, 0.015)
    scene = sc.Scene(dim=3)
    scene.add_body(box, mass=0.5, name="box")
    scene.add_body(ball, density=800.0, actuated=True, name="ball")
    scene.add_contact("box", "ball", sc.ContactParams())
    rng = np.random.default_rng(2)
    states = []
    for k, gap in enumerate((-0.002, -0.004)):
        qb = _quat(rng, 0.1)
        R = sc.spatial.quat_to_matrix(qb)
        # the ball against the box's +x face (box frame), overlapping by -gap
        p_ball = R @ np.array([0.08 + gap, 0.01, -0.005])
        x = np.concatenate([[0, 0, 0], qb, p_ball, _quat(rng, 0.5), rng.normal(size=12) * 0.3])
        states.append((f"touching {k}", True, x, rng.normal(size=6) * 0.1))
    x = np.concatenate(
        [[0, 0, 0], _quat(rng, 0.3), [0.0, 0.2, 0.0], _quat(rng, 0.5), rng.normal(size=12) * 0.3]
    )
    states.append(("apart", False, x, rng.normal(size=6) * 0.1))
    return Case("two bodies", scene, 0.002, states)


_BUILDERS = {
    "push-T": _push_t_case,
    "box on floor": _box_floor_case,
    "two bodies": _two_bodies_case,
}


@functools.cache
def _case(name):
    """One Case per scene for the whole module (its jitted JAX functions compile once)."""
    return _BUILDERS[name]()


@pytest.fixture(scope="module", params=list(_BUILDERS))
def case(request):
    return _case(request.param)


# step / step_d1 on two scenes and rollouts on one: the third scene's second-order test
# covers its first order too (x_next and A, B are part of step_d2); compile time is the cost
@pytest.fixture(scope="module", params=["push-T", "box on floor"])
def case_d1(request):
    return _case(request.param)


@pytest.fixture(scope="module")
def push_t_case():
    return _case("push-T")


def test_states_are_what_they_claim(case):
    """In-contact states feel a real contact force; the others are beyond its range."""
    for label, in_contact, x, u in case.states:
        v = case.model.step(x, u, num_threads=1).x_next[case.model.nq :]
        v_free = case.free.step(x, u, num_threads=1).x_next[case.model.nq :]
        change = np.max(np.abs(v - v_free))
        if in_contact:
            assert change > 1e-2, (case.name, label, change)
        else:
            assert _min_separation(case.scene, case.model, x) >= 0.03, (case.name, label)
            assert change < 1e-9, (case.name, label, change)


@pytest.mark.parametrize("dense", [False, True], ids=["pruned", "dense"])
def test_second_order_step_matches_jax(case, dense):
    """Both of softcontact's SSDF paths: pruned (default) and dense=True."""
    for label, _, x, u in case.states:
        ref = case.model.step(x, u, order=2, num_threads=1, dense=dense)
        got = case.jax_d2(x, u)
        for name, a in zip(NAMES, got, strict=True):
            err = rel_err(a, getattr(ref, name))
            assert err <= RTOL, (case.name, label, name, err)


def test_step_and_first_order_match_jax(case_d1):
    case = case_d1
    for label, _, x, u in case.states:
        ref = case.model.step(x, u, order=1, num_threads=1)
        if case.name == "push-T":  # jax.step elsewhere: step_d1's x_next (compile time)
            assert rel_err(case.jax.step(x, u), ref.x_next) <= RTOL, (case.name, label)
        got = case.jax.step_d1(x, u)
        for name, a in zip(NAMES[:3], got, strict=True):
            err = rel_err(a, getattr(ref, name))
            assert err <= RTOL, (case.name, label, name, err)


def test_rollout_matches_softcontact(push_t_case):
    """Batched JAX rollouts (vmap of lax.scan) against Model.rollout, on push-T."""
    case = push_t_case
    rng = np.random.default_rng(3)
    X0 = np.stack([s[2] for s in case.states])
    U = rng.normal(size=(len(X0), 5, case.model.nu)) * 0.1
    ref = case.model.rollout(X0, U, num_threads=1).states
    got = np.asarray(case.jax.rollout(X0, U))
    assert got.shape == ref.shape
    assert np.max(np.abs(got - ref)) <= RTOL * np.max(np.abs(ref))
