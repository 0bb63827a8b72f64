"""softcontact.optimize: the trajectory objective ``J(U)`` of ``TrajectoryProblem`` and its
exact derivatives (gradient by the adjoint, Hessian-vector products and Hessian by the
second-order adjoint, Gauss-Newton residual Jacobians), the residual costs' derivatives in
the state's tangent chart, SciPy's optimizers on a short push, caching and argument errors.

Scenes (coarse clouds, so that the file stays fast):
  push (2D): ``PointCloud.t_shape()`` (0.1 kg, support friction 0.3) pushed from below its
      stem by a kinematic disk (``PointCloud.disk(0.015, 0.003)``), dt = 0.01 s, horizon 12;
      ``contact``: the pusher starts 1 mm into the stem and presses on it at every step
      (min Phi between -1 and -2.4 mm, checked); ``apart``: it starts 6.5 cm below the
      stem and stays more than 5 cm away;
  box (3D): an actuated box resting in soft contact on a static half-space floor under
      gravity, dt = 0.01 s, horizon 10, pushed and twisted by its controls, with a 3D pose
      residual (quaternion part) at every stage and at the end.

dt = 0.01 s is large for an explicit step: near rest the smooth Coulomb law is a viscous
damper of rate ``friction g / v_s`` and ``dt 0.3 g / v_s`` = 2.9 > 2 with the default
``v_s`` = 0.01 m/s, so a resting T's velocity flips sign and grows at every step, and J(U)
gets cusps narrower than 1e-7 m/s (at U = 0 of the contact scene the Hessian has an
eigenvalue of -4e12).  The support and the contact use ``v_s`` = 0.05 m/s here (a rate of
0.59 per step) and a soft contact (k = 100 N/m: ``dt sqrt(k / m)`` = 0.3).

Finite differences (the objective is a plain function of U in R^(T nu); the residuals are
differentiated through ``Model.retract`` on the state): central differences err by c h^2
(truncation) plus rounding ~ u |f| / h; the steps below are chosen where the truncation
dominates, so each check asserts a bound at the smaller step *and* that the error shrank
by ~4 from the larger one (a wrong term of the size of the bound would pull the ratio to
~1, far below what a fixed tolerance on one step can resolve).
"""

import functools

import numpy as np
import pytest
import scipy.optimize

import softcontact as sc
from softcontact.optimize import (
    ApproachResidual,
    ControlResidual,
    PoseResidual,
    TrajectoryProblem,
)
from softcontact.spatial import quat_exp, quat_mul
from softcontact.testing import taylor_remainders, taylor_slopes

# Scenes here step past the explicit integrator's friction and damping limits on purpose:
# what is checked (derivatives, bits, memory, parameters) holds at any dt.  Scene.build's
# stability warning is tested in tests/test_scene.py.
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


U = np.finfo(float).eps

# ---- 2D push --------------------------------------------------------------------------------
T_CLOUD = sc.PointCloud.t_shape()  # 104 samples
DISK = sc.PointCloud.disk(0.015, 0.003)  # 32
PUSH_PARAMS = sc.ContactParams(stiffness=100.0, damping=3.0, slip_velocity=0.05)
PUSH_DT, PUSH_T = 0.01, 12


@functools.cache
def _pusher_y(gap):
    """The pusher's y below the T's stem (T at the origin) with min Phi = gap."""

    def min_phi(y):
        return sc.separation(
            T_CLOUD, [0.0, 0.0, 0.0], DISK, [0.0, y, 0.0], PUSH_PARAMS.eps
        ).phi.min()

    lo, hi = -0.2, -0.08
    assert min_phi(lo) > gap > min_phi(hi)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if min_phi(mid) > gap else (lo, mid)
    return 0.5 * (lo + hi)


@functools.cache
def _push_model(contact, integrator="euler"):
    s = sc.Scene(dim=2)
    s.add_body(T_CLOUD, mass=0.1, pose=[0.0, 0.0, 0.0], name="T")
    y = _pusher_y(-1e-3) if contact else -0.2
    s.add_body(DISK, kind="kinematic", pose=[0.0, y, 0.0], name="pusher")
    s.add_contact("T", "pusher", PUSH_PARAMS)
    s.add_support("T", friction=0.3, slip_velocity=0.05)
    return s.build(PUSH_DT, integrator)


def _push_costs(model):
    return [
        PoseResidual(model, "T", [0.003, 0.015, 0.05], 1e4, 1.0),
        ApproachResidual(model, "pusher", "T", T_CLOUD, 1e3, offset=0.015),
        PoseResidual(model, "pusher", [0.0, -0.07, 0.0], 1e2, 0.1, stages=True, terminal=False),
        ControlResidual(model, [1e-2, 1e-2, 1e-4]),
    ]


def _push_U0(T=PUSH_T):
    """Push up at 0.1 m/s, with some sideways motion and spin (1 cm/s, 0.1 rad/s)."""
    rng = np.random.default_rng(1)
    return (np.tile([0.0, 0.1, 0.0], (T, 1)) + rng.normal(size=(T, 3)) * [0.01, 0.01, 0.1]).reshape(
        -1
    )


# ---- 3D box on the floor ----------------------------------------------------------------------
BOX = sc.PointCloud.box([0.02, 0.02, 0.01], 0.01)  # 110 samples
FLOOR = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
BOX_PARAMS = sc.ContactParams(stiffness=500.0, damping=5.0)
BOX_T = 10
BOX_Z = 0.0118  # where it rests (the soft contact holds it 1.8 mm above the floor)


def _unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


@functools.cache
def _box_model(integrator="euler"):
    s = sc.Scene(dim=3)
    s.add_body(FLOOR, kind="static", name="floor")
    s.add_body(BOX, mass=0.1, pose=[0.0, 0.0, BOX_Z, 1.0, 0.0, 0.0, 0.0], actuated=True, name="box")
    s.add_contact("box", "floor", BOX_PARAMS)
    return s.build(0.01, integrator)


BOX_GOAL = np.concatenate([[0.01, -0.005, 0.012], quat_exp(0.3 * _unit([0.3, 0.2, 0.9]))])


def _box_costs(model):
    return [
        PoseResidual(model, "box", BOX_GOAL, 1e3, 1.0, stages=True, terminal=True),
        ControlResidual(model, [1.0, 1.0, 1.0, 1e4, 1e4, 1e4]),
    ]


def _box_U0():
    """0.2 N along x, 0.3 N up (a third of the weight), torques of ~1e-3 N m that turn the
    box by ~0.15 rad over the horizon, each entry varied by 20 %."""
    rng = np.random.default_rng(2)
    base = np.array([0.2, -0.1, 0.3, 1e-3, -5e-4, 4e-3])
    return (np.tile(base, (BOX_T, 1)) * (1 + 0.2 * rng.normal(size=(BOX_T, 6)))).reshape(-1)


# ---- cases ------------------------------------------------------------------------------------
# scale: the size of one unit of each control for the finite differences and the Taylor
# directions (push: 1 cm/s, 1 cm/s, 0.1 rad/s; box: 0.1 N, 1e-3 N m); steps: the two FD
# steps, in these units; taylor: the Taylor steps 2^-k, k in range(*taylor), where the
# remainders are asymptotic and above rounding (push-apart is nearly quadratic: its
# order-2 remainder reaches the rounding of J, 3e-14, below t = 2^-7)
CASES = {
    "push-contact": {"scale": [0.01, 0.01, 0.1], "steps": (5e-3, 2.5e-3), "taylor": (5, 11)},
    "push-apart": {"scale": [0.01, 0.01, 0.1], "steps": (1e-1, 5e-2), "taylor": (1, 7)},
    "box3d": {"scale": [0.1, 0.1, 0.1, 1e-3, 1e-3, 1e-3], "steps": (1e-4, 5e-5), "taylor": (7, 13)},
}


def _problem(case, num_threads=1, integrator="euler"):
    """A fresh (uncached) problem, its U0 and the per-entry scale of U."""
    if case == "box3d":
        model = _box_model(integrator)
        prob = TrajectoryProblem(
            model, model.initial_state(), BOX_T, _box_costs(model), num_threads=num_threads
        )
        U0 = _box_U0()
    else:
        model = _push_model(case == "push-contact", integrator)
        prob = TrajectoryProblem(
            model, model.initial_state(), PUSH_T, _push_costs(model), num_threads=num_threads
        )
        U0 = _push_U0()
    scale = np.tile(CASES[case]["scale"], prob.T)
    return prob, U0, scale


def _min_phi_2d(X):
    return np.array(
        [sc.separation(T_CLOUD, x[:3], DISK, x[3:6], PUSH_PARAMS.eps).phi.min() for x in X]
    )


def _fd(fun, U0, scale, h):
    """Central differences of ``fun`` along each coordinate of U, step ``h scale_j``;
    the last axis is the coordinate."""
    cols = []
    for j in range(len(U0)):
        e = np.zeros(len(U0))
        e[j] = h * scale[j]
        cols.append((np.asarray(fun(U0 + e)) - np.asarray(fun(U0 - e))) / (2 * e[j]))
    return np.stack(cols, axis=-1)


def _assert_converges(analytic, fd1, fd2, rtol, what):
    """The FD error at the smaller step is <= rtol of the largest analytic entry, and
    shrank by 4 (3.5-4.5) from the larger step: the analytic value is the limit."""
    scale = np.abs(analytic).max()
    e1 = np.abs(fd1 - analytic)
    e2 = np.abs(fd2 - analytic)
    worst = np.unravel_index(np.argmax(e2), e2.shape)
    assert e2[worst] <= rtol * scale, (what, worst, analytic[worst], fd2[worst], e2[worst] / scale)
    ratio = np.linalg.norm(e1) / np.linalg.norm(e2)
    assert 3.5 < ratio < 4.5, (what, ratio)


# --------------------------------------------------------------------------------------------
# 0. the scenes
# --------------------------------------------------------------------------------------------
def test_push_scenes_are_in_contact_and_apart():
    """The pusher presses on the T at every step of the contact case without a deep
    overlap, and moves the T; the apart case never comes within 5 cm."""
    prob, U0, _ = _problem("push-contact")
    X = prob.states(U0)
    phi = _min_phi_2d(X)
    # measured: -1.0 at the start, -2.4 at the deepest, -1.1 mm at the end
    assert phi[0] == pytest.approx(-1e-3, abs=1e-9)
    assert np.all(phi < -0.5e-3) and np.all(phi > -4e-3), phi
    assert X[-1, 1] > 0.01  # the T moved up by more than 1 cm (measured 1.2 cm)
    model = prob.model
    assert all(model.energy(x).contact > 1e-6 for x in X)
    prob, U0, _ = _problem("push-apart")
    X = prob.states(U0)
    assert np.all(_min_phi_2d(X) > 0.05)
    # the SSDF never vanishes exactly: ~1e-54 J here
    assert all(prob.model.energy(x).contact < 1e-40 for x in X)
    assert np.abs(X[:, :3] - X[0, :3]).max() < 1e-15  # the T never moves


def test_box_scene_rests_in_contact_and_turns():
    prob, U0, _ = _problem("box3d")
    X = prob.states(U0)
    model = prob.model
    # the floor holds the box at every step (contact energy 0.5-1.2 mJ, measured; the box
    # rises by at most 1.1 mm under the 0.3 N lift)
    assert all(model.energy(x).contact > 1e-4 for x in X)
    assert np.all(np.abs(X[:, 2] - BOX_Z) < 3e-3)
    angle = np.linalg.norm(sc.pose_difference(X[-1, :7], X[0, :7])[3:])
    assert 0.1 < angle < 0.5  # the torques turn it (measured 0.15 rad)


# --------------------------------------------------------------------------------------------
# 1. derivatives of the objective
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", list(CASES))
def test_jac_vs_central_differences_of_fun(case):
    prob, U0, scale = _problem(case)
    g = prob.jac(U0)
    assert g.shape == (prob.size,)
    h1, h2 = CASES[case]["steps"]
    # measured: error at the smaller step 3.6e-8 (push-contact), 5e-9 (apart), 5e-9 (box)
    # of max |g|, ratios 4.00, 4.00, 3.94
    _assert_converges(g, _fd(prob.fun, U0, scale, h1), _fd(prob.fun, U0, scale, h2), 1e-5, "jac")


@pytest.mark.parametrize("case", ["push-contact", "box3d"])
def test_implicit_model_derivatives_vs_central_differences(case):
    """With integrator="implicit" the adjoint gradient, the Gauss-Newton Jacobian and the
    Hessian (the step's second derivatives through the second-order adjoint) are exact
    too."""
    prob, U0, scale = _problem(case, integrator="implicit")
    # the implicit box trajectory is far smoother than the Euler one (its damping and
    # friction do not chatter): its differences reach rounding below the Euler steps, and
    # converge like h^2 from 1e-2 (measured 9.5e-8, 2.4e-8 of max |g| at these steps)
    h1, h2 = (1e-2, 5e-3) if case == "box3d" else CASES[case]["steps"]
    g = prob.jac(U0)
    _assert_converges(g, _fd(prob.fun, U0, scale, h1), _fd(prob.fun, U0, scale, h2), 1e-5, "jac")
    J = prob.residual_jac(U0)
    np.testing.assert_allclose(J.T @ prob.residuals(U0), g, rtol=1e-10, atol=1e-12 * abs(g).max())
    H = prob.hess(U0)
    np.testing.assert_array_equal(H, H.T)
    # measured: 3.6e-9 (push-contact), 2.7e-9 (box) of max |H|, ratios 4.00
    _assert_converges(H, _fd(prob.jac, U0, scale, h1), _fd(prob.jac, U0, scale, h2), 1e-5, "hess")
    p = scale * np.linspace(-1.0, 1.0, prob.size)
    np.testing.assert_allclose(
        prob.hessp(U0, p), H @ p, rtol=0, atol=1e-12 * np.abs(H).max() * np.abs(p).sum()
    )
    # the implicit step differs from the Euler one on these contact scenes
    euler, _, _ = _problem(case)
    assert abs(prob.fun(U0) - euler.fun(U0)) > 1e-9 * abs(euler.fun(U0))


@pytest.mark.parametrize("case", list(CASES))
def test_hess_and_hessp_vs_central_differences_of_jac(case, rng):
    prob, U0, scale = _problem(case)
    H = prob.hess(U0)
    N = prob.size
    assert H.shape == (N, N)
    np.testing.assert_array_equal(H, H.T)
    # hessp column by column: the second-order adjoint is symmetric by itself, to rounding
    Hp = np.stack([prob.hessp(U0, e) for e in np.eye(N)], axis=1)
    hscale = np.abs(H).max()
    np.testing.assert_allclose(Hp, Hp.T, rtol=0, atol=1e-12 * hscale)
    np.testing.assert_allclose(Hp, H, rtol=0, atol=1e-12 * hscale)
    for _ in range(3):
        p = rng.normal(size=N) * scale
        np.testing.assert_allclose(
            prob.hessp(U0, p), H @ p, rtol=0, atol=1e-12 * hscale * np.abs(p).sum()
        )
    h1, h2 = CASES[case]["steps"]
    # the FD of the analytic gradient, column j = d g / d U_j; measured: 1.5e-6
    # (push-contact), 9e-8 (apart), 1.5e-8 (box) of max |H|, ratios 4.00-4.01
    _assert_converges(H, _fd(prob.jac, U0, scale, h1), _fd(prob.jac, U0, scale, h2), 1e-5, "hess")
    if case != "push-apart":
        # the contact makes the objective nonconvex: negative curvature is there to see
        assert np.linalg.eigvalsh(H).min() < -1e-3 * hscale


@pytest.mark.parametrize("case", list(CASES))
def test_taylor_remainders_of_fun(case, rng):
    """Along random directions v (in units of ``scale``): |J(U + t v) - J - t g.v| ~ t^2
    and, with t^2/2 v.H.v, ~ t^3 (measured over the last three steps: slopes 1.99-2.02 and
    2.99-3.02)."""
    prob, U0, scale = _problem(case)
    g = prob.jac(U0)
    steps = 2.0 ** -np.arange(*CASES[case]["taylor"])
    for _ in range(3):
        v = rng.normal(size=prob.size) * scale
        R = taylor_remainders(prob.fun, U0, v, [g @ v, v @ prob.hessp(U0, v)], steps)
        slopes = taylor_slopes(R, steps)
        assert np.all(np.abs(slopes[1, -3:] - 2.0) < 0.1), slopes[1]
        assert np.all(np.abs(slopes[2, -3:] - 3.0) < 0.1), slopes[2]


# --------------------------------------------------------------------------------------------
# 2. the residual costs alone, in the state's chart
# --------------------------------------------------------------------------------------------
def _random_state_3d(model, rng):
    parts, vel = [], []
    for _ in model.moving:
        parts += [rng.normal(size=3) * 0.02, _unit(rng.normal(size=4))]
        vel.append(rng.normal(size=6) * [0.1, 0.1, 0.1, 1.0, 1.0, 1.0])
    return np.concatenate(parts + vel)


@functools.cache
def _probe_model_3d():
    """A 3D box and a kinematic ball (the probe) with no contact pair: only the states."""
    s = sc.Scene(dim=3)
    s.add_body(BOX, mass=0.1, name="box")
    s.add_body(sc.PointCloud.sphere(0.01, 0.005), kind="kinematic", name="ball")
    return s.build(0.01)


def _tangent_scale(model):
    """1 mm, 0.02 rad, 5 mm/s, 0.1 rad/s per tangent coordinate; controls: 1 (as given)."""
    nvb = 3 if model.dim == 2 else 6
    lin = np.arange(model.nv) % nvb < model.dim
    return np.concatenate([np.where(lin, 1e-3, 0.02), np.where(lin, 5e-3, 0.1), np.ones(model.nu)])


def _residual_case(name, rng):
    """(model, residual, x, u, steps) of each residual test case."""
    if name.endswith("2d") or "2d-" in name:
        contact = "apart" not in name
        model = _push_model(contact)
        x = _problem("push-contact" if contact else "push-apart")[0].states(_push_U0())[6]
        u = np.array([0.01, 0.1, 0.3])
        if name.startswith("pose2d"):
            goal = x[:3] + ([0.01, -0.02, 2.5] if "far" in name else [0.003, 0.002, 0.05])
            coast = 0.5 if "coast" in name else 0.0
            if coast:
                x = np.array(x)
                x[6:9] = [0.02, -0.01, 1.5]  # the T moving: its coasted pose differs
            res = PoseResidual(model, "T", goal, 1e4, 2.0, coast=coast)
            return model, res, x, u, (4e-2, 2e-2)
        res = ApproachResidual(model, "pusher", "T", T_CLOUD, 1e3, offset=0.015)
        return model, res, x, u, (1e-2, 5e-3)
    if name.startswith("pose3d"):
        model = _box_model()
        x = _random_state_3d(model, rng)
        qg = _unit(rng.normal(size=4))
        if "near" in name:  # the goal 0.05 rad from the pose
            q = quat_mul(qg, quat_exp(0.05 * _unit(rng.normal(size=3))))
        else:  # 2.5 rad
            q = quat_mul(qg, quat_exp(2.5 * _unit(rng.normal(size=3))))
        if "flipped" in name:  # the same rotation, the other sign: q_goal^-1 q has w < 0
            q = -q
        x[3:7] = _unit(q)
        goal = np.concatenate([x[:3] + rng.normal(size=3) * 0.01, qg])
        res = PoseResidual(model, "box", goal, 1e3, 2.0)
        return model, res, x, rng.normal(size=6) * 0.1, (4e-2, 2e-2)
    assert name == "approach3d"
    model = _probe_model_3d()
    x = _random_state_3d(model, rng)
    x[7:10] = x[:3] + _unit(rng.normal(size=3)) * 0.03  # the ball 3 cm from the box centre
    res = ApproachResidual(model, "ball", "box", BOX, 1e3, offset=0.01)
    return model, res, x, rng.normal(size=6) * 0.1, (1e-2, 5e-3)


RESIDUAL_CASES = [
    "pose2d-near",
    "pose2d-far",
    "pose2d-far-coast",
    "approach2d-contact",
    "approach2d-apart",
    "pose3d-near",
    "pose3d-far",
    "pose3d-far-flipped",
    "approach3d",
]


def _at(model, res, x, u, z, order):
    n = 2 * model.nv
    return res.evaluate(model, model.retract(x, z[:n]), u + z[n:], order)


@pytest.mark.parametrize("name", RESIDUAL_CASES)
def test_residual_derivatives_in_the_chart(name, rng):
    """``evaluate``'s J and H against central differences of r (for J) and of the analytic
    J (for H) through ``model.retract`` on the state and additively on u.  Differences of
    J through the chart also turn the chart (3D rotations), which adds a skew-symmetric
    term: the symmetric part is the Hessian (as in tests/test_step.py)."""
    model, res, x, u, (h1, h2) = _residual_case(name, rng)
    n = 2 * model.nv
    N = n + model.nu
    m = res.size(model)
    r, J, H = res.evaluate(model, x, u, 2)
    assert r.shape == (m,) and J.shape == (m, N) and H.shape == (m, N, N)
    np.testing.assert_array_equal(H, np.swapaxes(H, 1, 2))
    r0, J0, H0 = res.evaluate(model, x, u, 0)
    r1, J1, H1 = res.evaluate(model, x, u, 1)
    assert J0 is None and H0 is None and H1 is None
    np.testing.assert_array_equal(r0, r)
    np.testing.assert_array_equal(r1, r)
    np.testing.assert_array_equal(J1, J)
    np.testing.assert_array_equal(J[:, n:], 0.0)  # no control dependence
    s = _tangent_scale(model)

    def fds(h):
        fj, fh = [], []
        for j in range(N):
            e = np.zeros(N)
            e[j] = h * s[j]
            rp, Jp, _ = _at(model, res, x, u, e, 1)
            rm, Jm, _ = _at(model, res, x, u, -e, 1)
            fj.append((rp - rm) / (2 * e[j]))
            fh.append((Jp - Jm) / (2 * e[j]))
        fh = np.stack(fh, axis=-1)
        return np.stack(fj, axis=-1), 0.5 * (fh + np.swapaxes(fh, 1, 2))

    (fj1, fh1), (fj2, fh2) = fds(h1), fds(h2)
    # measured: <= 2e-7 of the largest entry at the smaller step (ApproachResidual)
    _assert_converges(J, fj1, fj2, 1e-6, "J")
    _assert_converges(H, fh1, fh2, 1e-6, "H")
    # and the Taylor expansion of z -> r(x (+) z) with H itself: remainders ~ t^3
    steps = 2.0 ** -np.arange(3, 8)
    for _ in range(2):
        v = rng.normal(size=N) * s
        R = taylor_remainders(
            lambda t, v=v: _at(model, res, x, u, t * v, 0)[0],
            0.0,
            1.0,
            [J @ v, np.einsum("ijk,j,k->i", H, v, v)],
            steps,
        )
        curved = np.abs(H).reshape(m, -1).max(axis=1) > 0  # the others are linear
        slopes = taylor_slopes(R[:, :, curved], steps)
        assert np.all(np.abs(slopes[2, -2:] - 3.0) < 0.2), slopes[2]


def test_pose_residual_coast_values():
    """With ``coast`` c the 2D residual measures the pose p + c v (and theta + c omega);
    3D models refuse it."""
    model = _push_model(True)
    x = _problem("push-contact")[0].states(_push_U0())[6].copy()
    x[6:9] = [0.02, -0.01, 1.5]
    goal = np.array([0.01, 0.02, 0.3])
    r = PoseResidual(model, "T", goal, 4.0, 9.0, coast=0.7).evaluate(model, x, None, 0)[0]
    q = x[:3] + 0.7 * x[6:9]
    np.testing.assert_allclose(
        r, [2 * (q[0] - 0.01), 2 * (q[1] - 0.02), 6 * np.sin((q[2] - 0.3) / 2)], rtol=1e-14
    )
    r0 = PoseResidual(model, "T", goal, 4.0, 9.0).evaluate(model, x, None, 0)[0]
    r00 = PoseResidual(model, "T", goal, 4.0, 9.0, coast=0.0).evaluate(model, x, None, 0)[0]
    np.testing.assert_array_equal(r0, r00)
    with pytest.raises(ValueError, match="coast"):
        PoseResidual(model, "T", goal, coast=-1.0)
    with pytest.raises(ValueError, match="coast is for 2D"):
        PoseResidual(_box_model(), "box", BOX_GOAL, coast=0.5)


def test_pose_residual_3d_values():
    """vec(q_goal^-1 q) with w >= 0, whichever sign q has; |r|^2 / 2 = wp |dp|^2 / 2 +
    wa (1 - cos angle)."""
    model = _box_model()
    rng = np.random.default_rng(5)
    qg = _unit(rng.normal(size=4))
    for angle in (0.0, 0.05, 1.0, 2.5, np.pi - 0.01):
        axis = _unit(rng.normal(size=3))
        q = quat_mul(qg, quat_exp(angle * axis))
        x = model.initial_state()
        x[:3] = [0.01, 0.02, 0.03]
        goal = np.concatenate([[0.0, 0.0, 0.0], qg])
        res = PoseResidual(model, "box", goal, 4.0, 9.0)
        for sign in (1.0, -1.0):
            x[3:7] = sign * q
            r = res.evaluate(model, x, np.zeros(6), 0)[0]
            np.testing.assert_allclose(r[:3], 2.0 * np.array([0.01, 0.02, 0.03]), rtol=1e-15)
            np.testing.assert_allclose(
                r[3:], 2.0 * 3.0 * np.sin(angle / 2) * axis, rtol=0, atol=1e-14
            )
            np.testing.assert_allclose(
                0.5 * r[3:] @ r[3:], 9.0 * (1 - np.cos(angle)), rtol=0, atol=1e-13
            )


def test_control_residual():
    model = _push_model(True)
    res = ControlResidual(model, [4.0, 9.0, 0.0])
    x = model.initial_state()
    u = np.array([0.1, -0.2, 0.3])
    r, J, H = res.evaluate(model, x, u, 2)
    n = 2 * model.nv
    np.testing.assert_array_equal(r, [2.0 * 0.1, 3.0 * -0.2, 0.0])
    want = np.zeros((3, n + 3))
    want[:, n:] = np.diag([2.0, 3.0, 0.0])
    np.testing.assert_array_equal(J, want)
    np.testing.assert_array_equal(H, 0.0)
    assert res.stages and not res.terminal
    np.testing.assert_array_equal(ControlResidual(model, 4.0).evaluate(model, x, u, 0)[0], 2.0 * u)


def test_residuals_activity():
    model = _push_model(True)
    when = {
        (True, False): [True, True, False],
        (False, True): [False, False, True],
        (True, True): [True, True, True],
    }
    for (stages, terminal), want in when.items():
        res = PoseResidual(model, "T", [0.0, 0.0, 0.0], stages=stages, terminal=terminal)
        assert [res.active(t, 2) for t in range(3)] == want
    res = ApproachResidual(model, "pusher", "T", T_CLOUD)
    assert [res.active(t, 2) for t in range(3)] == [True, True, False]


# --------------------------------------------------------------------------------------------
# 3. least squares
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", list(CASES))
def test_residual_jac(case):
    prob, U0, scale = _problem(case)
    r = prob.residuals(U0)
    Jr = prob.residual_jac(U0)
    m = sum(
        c.size(prob.model) * sum(c.active(t, prob.T) for t in range(prob.T + 1)) for c in prob.cost
    )
    assert r.shape == (m,) and Jr.shape == (m, prob.size)
    assert prob.fun(U0) == pytest.approx(0.5 * r @ r, rel=1e-14)
    g = prob.jac(U0)
    # the same adjoint sums, in another order: agreement to rounding
    np.testing.assert_allclose(Jr.T @ r, g, rtol=0, atol=1e-12 * (np.abs(Jr).T @ np.abs(r)).max())
    h1, h2 = CASES[case]["steps"]
    _assert_converges(
        Jr,
        _fd(prob.residuals, U0, scale, h1),
        _fd(prob.residuals, U0, scale, h2),
        1e-5,
        "residual_jac",
    )
    # causality: the residuals of stage t do not depend on the controls after t
    nu, T = prob.nu, prob.T
    row = 0
    for t in range(T + 1):
        k = sum(c.size(prob.model) for c in prob.cost if c.active(t, T))
        if t < T:
            np.testing.assert_array_equal(Jr[row : row + k, (t + 1) * nu :], 0.0)
        row += k


# --------------------------------------------------------------------------------------------
# 4. SciPy on a short push: move the T 1.5 cm up
# --------------------------------------------------------------------------------------------
GOAL_T = 10


def _goal_problem():
    """The pusher starts touching the stem (1 mm overlap) at rest (U0 = 0); the T should
    end 1.5 cm higher, the pusher stay on the T's surface (its centre a radius from it) and
    the controls small.  J(U0) = 0.87 (the goal term 0.86)."""
    model = _push_model(True)
    cost = [
        PoseResidual(model, "T", [0.0, 0.015, 0.0], 1e4, 1.0),
        ApproachResidual(model, "pusher", "T", T_CLOUD, 1e3, offset=0.015),
        ControlResidual(model, [1e-2, 1e-2, 1e-3]),
    ]
    return TrajectoryProblem(model, model.initial_state(), GOAL_T, cost), np.zeros(3 * GOAL_T)


def _moved_up(prob, U):
    return prob.states(U)[-1, 1]


def test_scipy_trust_ncg():
    prob, U0 = _goal_problem()
    f0 = prob.fun(U0)
    res = scipy.optimize.minimize(
        prob.fun, U0, jac=prob.jac, hessp=prob.hessp, method="trust-ncg", options={"maxiter": 5}
    )
    # measured: 0.073 of J(U0) after 5 iterations, the T 1.45 cm up
    assert res.fun < 0.2 * f0, (res.fun, f0)
    assert res.fun == prob.fun(res.x)
    assert 0.01 < _moved_up(prob, res.x) < 0.02
    assert prob.n_steps[2] > 0  # it used the Hessian-vector products


def test_scipy_lbfgsb_with_bounds():
    prob, U0 = _goal_problem()
    f0 = prob.fun(U0)
    lo = np.tile([-0.2, -0.2, -0.5], GOAL_T)
    hi = np.tile([0.2, 0.17, 0.5], GOAL_T)
    res = scipy.optimize.minimize(
        prob.fun,
        U0,
        jac=prob.jac,
        method="L-BFGS-B",
        bounds=list(zip(lo, hi, strict=True)),
        options={"maxiter": 10},
    )
    assert np.all(res.x >= lo) and np.all(res.x <= hi)
    assert np.sum(res.x == hi) >= 2  # the speed limit binds (measured: 3 steps at 0.17 m/s)
    # measured: 0.074 of J(U0)
    assert res.fun < 0.2 * f0, (res.fun, f0)
    assert 0.01 < _moved_up(prob, res.x) < 0.02
    # one order-1 rollout per point: SciPy's fun then jac at the same U share it (and its
    # first point, U0, is the one of the call for f0 above)
    assert res.njev == res.nfev
    assert prob.n_steps == {0: 0, 1: GOAL_T * res.nfev, 2: 0}


def test_scipy_least_squares():
    prob, U0 = _goal_problem()
    f0 = prob.fun(U0)
    res = scipy.optimize.least_squares(prob.residuals, U0, jac=prob.residual_jac, max_nfev=10)
    # measured: 0.072 of J(U0)
    assert res.cost < 0.2 * f0, (res.cost, f0)
    assert res.cost == pytest.approx(prob.fun(res.x), rel=1e-14)
    assert 0.01 < _moved_up(prob, res.x) < 0.02


# --------------------------------------------------------------------------------------------
# 5. caching and call order
# --------------------------------------------------------------------------------------------
def test_caching_counts_rollouts():
    prob, U1, scale = _problem("push-contact")
    T = prob.T
    assert prob.n_steps == {0: 0, 1: 0, 2: 0}
    prob.fun(U1)
    prob.jac(U1)  # one order-1 rollout serves both
    assert prob.n_steps == {0: 0, 1: T, 2: 0}
    prob.value_and_grad(U1)
    prob.residuals(U1)
    prob.residual_jac(U1)
    prob.states(U1)
    prob.fun(list(U1))  # the same numbers in another container
    assert prob.n_steps == {0: 0, 1: T, 2: 0}
    p = scale.copy()
    prob.hessp(U1, p)  # adds the order-2 pass
    assert prob.n_steps == {0: 0, 1: T, 2: T}
    prob.hessp(U1, 2 * p)
    prob.hess(U1)
    prob.fun(U1)
    prob.jac(U1)
    assert prob.n_steps == {0: 0, 1: T, 2: T}
    U2 = U1 + 0.01 * scale
    prob.hessp(U2, p)  # a new U: recomputed, by the order-2 pass alone
    prob.jac(U2)
    assert prob.n_steps == {0: 0, 1: T, 2: 2 * T}
    prob.fun(U1)  # only the last U is kept
    assert prob.n_steps == {0: 0, 1: 2 * T, 2: 2 * T}
    # the jac-first order costs one rollout too
    fresh = _problem("push-contact")[0]
    fresh.jac(U1)
    fresh.fun(U1)
    assert fresh.n_steps == {0: 0, 1: T, 2: 0}


def _everything(prob, U, p):
    return (
        prob.fun(U),
        prob.jac(U),
        prob.hessp(U, p),
        prob.residuals(U),
        prob.residual_jac(U),
        prob.states(U),
    )


@pytest.mark.parametrize("case", ["push-contact", "box3d"])
def test_results_do_not_depend_on_call_order(case):
    prob, U1, scale = _problem(case)
    U2 = U1 + 0.03 * scale
    p = scale[::-1].copy()
    first = _everything(prob, U1, p)
    _everything(prob, U2, p)
    again = _everything(prob, U1, p)
    # hessp first (the order-2 pass serves fun and jac) in a fresh problem, and with
    # threads (the step's contact kernels; results do not depend on the count)
    other = _problem(case, num_threads=3)[0]
    h = other.hessp(U1, p)
    rest = (
        other.fun(U1),
        other.jac(U1),
        h,
        other.residuals(U1),
        other.residual_jac(U1),
        other.states(U1),
    )
    for a, b, c in zip(first, again, rest, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert first[0] == prob.value_and_grad(U1)[0]
    np.testing.assert_array_equal(first[1], prob.value_and_grad(U1)[1])


def test_inputs_are_not_modified():
    prob, U1, scale = _problem("push-contact")
    U = U1.copy()
    p = scale.copy()
    prob.hessp(U, p)
    prob.residual_jac(U)
    np.testing.assert_array_equal(U, U1)
    np.testing.assert_array_equal(p, scale)
    # a (T, nu) array works as the flat one
    assert prob.fun(U1.reshape(prob.T, prob.nu)) == prob.fun(U1)


# --------------------------------------------------------------------------------------------
# 6. errors
# --------------------------------------------------------------------------------------------
def test_errors():
    model = _push_model(True)
    x0 = model.initial_state()
    cost = _push_costs(model)
    prob = TrajectoryProblem(model, x0, 4, cost)
    with pytest.raises(ValueError, match=r"U must have T \* nu = 12 entries, got 11"):
        prob.fun(np.zeros(11))
    with pytest.raises(ValueError, match=r"U must have T \* nu = 12 entries, got 13"):
        prob.jac(np.zeros(13))
    bad = np.zeros(12)
    bad[5] = np.nan
    for f in (prob.fun, prob.jac, prob.hess, prob.residuals, prob.residual_jac, prob.states):
        with pytest.raises(ValueError, match="U must be finite"):
            f(bad)
    bad[5] = np.inf
    with pytest.raises(ValueError, match="U must be finite"):
        prob.hessp(bad, np.zeros(12))
    with pytest.raises(ValueError, match=r"p must have T \* nu = 12 entries, got 3"):
        prob.hessp(np.zeros(12), np.zeros(3))
    with pytest.raises(TypeError, match="U must be an array of real numbers"):
        prob.fun(["a"] * 12)
    with pytest.raises(ValueError, match="p must be finite"):
        prob.hessp(np.zeros(12), np.full(12, np.nan))
    with pytest.raises(ValueError, match="offset must be a finite scalar"):
        ApproachResidual(model, "pusher", "T", T_CLOUD, offset=np.nan)
    with pytest.raises(ValueError, match="offset must be a finite scalar"):
        ApproachResidual(model, "pusher", "T", T_CLOUD, offset=[0.0, 1.0])
    box = _box_model()
    with pytest.raises(ValueError, match="PoseResidual was built for another model"):
        TrajectoryProblem(model, x0, 4, [PoseResidual(box, box.moving[0], BOX_GOAL)])
    assert prob.n_steps == {0: 0, 1: 0, 2: 0}  # nothing ran
    # horizon
    for T in (0, -1):
        with pytest.raises(ValueError, match=f"horizon must be >= 1, got {T}"):
            TrajectoryProblem(model, x0, T, cost)
    with pytest.raises(TypeError, match="horizon must be an integer"):
        TrajectoryProblem(model, x0, 2.0, cost)
    # model, state, threads
    with pytest.raises(TypeError, match="model must be a Model"):
        TrajectoryProblem("model", x0, 4, cost)
    with pytest.raises(ValueError, match=r"x0 must have shape \(12,\)"):
        TrajectoryProblem(model, x0[:-1], 4, cost)
    with pytest.raises(ValueError, match="num_threads must be"):
        TrajectoryProblem(model, x0, 4, cost, num_threads=0)
    # cost entries
    with pytest.raises(ValueError, match="at least one residual"):
        TrajectoryProblem(model, x0, 4, [])
    for entry in ("pose", 1.0, None, np.zeros(3)):
        with pytest.raises(TypeError, match="cost entries must be residuals"):
            TrajectoryProblem(model, x0, 4, [cost[0], entry])
    prob1 = TrajectoryProblem(model, x0, 4, cost[3])  # a single residual
    assert prob1.fun(np.ones(12)) == pytest.approx(0.5 * 4 * (2e-2 + 1e-4), rel=1e-14)
    # bodies
    for make in (
        lambda b: PoseResidual(model, b, [0.0, 0.0, 0.0]),
        lambda b: ApproachResidual(model, b, "T", T_CLOUD),
        lambda b: ApproachResidual(model, "pusher", b, T_CLOUD),
    ):
        with pytest.raises(ValueError, match="'table' is not a moving body"):
            make("table")
        with pytest.raises(TypeError, match="body must be a body name"):
            make(0)
    box = _box_model()
    with pytest.raises(ValueError, match="'floor' is not a moving body"):
        PoseResidual(box, "floor", BOX_GOAL)  # static bodies are not in the state
    # weights
    with pytest.raises(ValueError, match="position_weight must be finite and >= 0"):
        PoseResidual(model, "T", [0.0, 0.0, 0.0], position_weight=-1.0)
    with pytest.raises(ValueError, match="angle_weight must be finite and >= 0"):
        PoseResidual(model, "T", [0.0, 0.0, 0.0], angle_weight=-1e-9)
    with pytest.raises(ValueError, match="angle_weight must be finite and >= 0"):
        PoseResidual(model, "T", [0.0, 0.0, 0.0], angle_weight=np.nan)
    for w in (-1.0, [1.0, -1.0, 1.0], [1.0, np.nan, 1.0]):
        with pytest.raises(ValueError, match="weight must be finite and >= 0"):
            ControlResidual(model, w)
    with pytest.raises(ValueError, match=r"weight must be a scalar or have shape \(3,\)"):
        ControlResidual(model, [1.0, 1.0])
    with pytest.raises(ValueError, match="weight must be finite and >= 0"):
        ApproachResidual(model, "pusher", "T", T_CLOUD, weight=-1.0)
    with pytest.raises(ValueError, match="eps must be finite and > 0"):
        ApproachResidual(model, "pusher", "T", T_CLOUD, eps=0.0)
    # zero weights are allowed
    PoseResidual(model, "T", [0.0, 0.0, 0.0], 0.0, 0.0)
    ControlResidual(model, 0.0)
    # when
    with pytest.raises(ValueError, match="active at the stages or at the terminal state"):
        PoseResidual(model, "T", [0.0, 0.0, 0.0], stages=False, terminal=False)
    with pytest.raises(ValueError, match="active at the stages or at the terminal state"):
        ApproachResidual(model, "pusher", "T", T_CLOUD, stages=False, terminal=False)
    with pytest.raises(TypeError, match="stages and terminal must be bools"):
        PoseResidual(model, "T", [0.0, 0.0, 0.0], stages=1)
    # approach
    with pytest.raises(ValueError, match="probe and target must be different bodies"):
        ApproachResidual(model, "T", "T", T_CLOUD)
    with pytest.raises(TypeError, match="target_cloud must be a PointCloud"):
        ApproachResidual(model, "pusher", "T", BOX)  # 3D cloud in a 2D model
    with pytest.raises(TypeError, match="target_cloud must be a PointCloud"):
        ApproachResidual(model, "pusher", "T", np.zeros((3, 2)))
    # goals
    with pytest.raises(ValueError, match=r"goal must have shape \(3,\)"):
        PoseResidual(model, "T", BOX_GOAL)
    with pytest.raises(ValueError, match="goal must hold a unit quaternion"):
        PoseResidual(box, "box", np.concatenate([BOX_GOAL[:3], 2 * BOX_GOAL[3:]]))


def test_batch_fun_equals_fun_row_by_row():
    """batch_fun runs B rollouts in C and must give exactly fun's numbers, row by row (a
    diverging row's inf: tests/test_divergence.py); controls beyond their valid range are
    refused as fun refuses them."""
    model = _push_model(True)
    x0 = model.initial_state()
    prob = TrajectoryProblem(model, x0, 6, _push_costs(model))
    rng = np.random.default_rng(3)
    Ub = rng.normal(size=(5, 18)) * 0.1
    batch = prob.batch_fun(Ub, num_threads=2)
    assert prob.n_steps[0] == 5 * 6
    for b in range(5):
        assert batch[b] == TrajectoryProblem(model, x0, 6, _push_costs(model)).fun(Ub[b])
    np.testing.assert_array_equal(prob.batch_fun(Ub.reshape(5, 6, 3), num_threads=1), batch)
    fast = Ub.copy()
    fast[2] = 1e8  # the pusher at the largest valid speed: a finite cost, as fun's
    out = prob.batch_fun(fast)
    assert out[2] == TrajectoryProblem(model, x0, 6, _push_costs(model)).fun(fast[2])
    assert np.array_equal(np.delete(out, 2), np.delete(batch, 2))
    with pytest.raises(ValueError, match="U_batch: the control of 'pusher'"):
        prob.batch_fun(fast * 10)  # beyond the valid range: refused, as U of fun
    with pytest.raises(ValueError, match="U: the control of 'pusher'"):
        prob.fun(fast[2] * 10)
    with pytest.raises(ValueError, match="U_batch must have shape"):
        prob.batch_fun(Ub[:, :-1])
    with pytest.raises(ValueError, match="U_batch must be finite"):
        prob.batch_fun(Ub * np.nan)


@pytest.mark.parametrize("case", ["push-contact", "box3d"])
def test_problem_pickles(case):
    """A pickled problem (worker processes, Dask) is the same problem: same value, gradient
    and Hessian-vector product bit for bit, its step counters kept, its cache not."""
    import pickle

    prob, U0, _ = _problem(case)
    v, g = prob.value_and_grad(U0)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        copy = pickle.loads(pickle.dumps(prob, protocol))
        assert copy.n_steps == prob.n_steps and copy._key is None and copy._fwd == {}
        assert copy._lock is not prob._lock
        v2, g2 = copy.value_and_grad(U0)
        assert v2 == v and g2.tobytes() == g.tobytes()
    np.testing.assert_array_equal(copy.hessp(U0, g), prob.hessp(U0, g))
