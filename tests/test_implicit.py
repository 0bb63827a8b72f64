"""The linearly implicit step (``Scene.build(dt, integrator="implicit")``, docs/method.md
section 7): its first and second derivatives against central differences (O(h^2)
convergence) and Taylor remainders, its values and derivatives against the JAX oracle's
implicit step (tests/jax_oracle.py), inverse dynamics, rollouts, the arguments it refuses, and the
physics it is for: resting and sliding contact at millisecond-scale time steps where the
semi-implicit Euler step chatters, and sliding that stops where Coulomb's law says.

The scenes are those of tests/test_step.py (coarse clouds, bodies touching or apart).
"""

import warnings

import numpy as np
import pytest
import test_step as ts

import softcontact as sc

U = np.finfo(float).eps
OUTPUTS = ("x_next", "dx_dx", "dx_du", "d2x_dx2", "d2x_dxdu", "d2x_du2")

# the derivative checks' scenes (tests/test_step.py) step past the stability limits on
# purpose; the warning itself is asserted in test_resting_box_at_10_ms
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


def _setup(name, contact=True, dt=None):
    return ts._setup(name, contact, dt, integrator="implicit")


@pytest.mark.parametrize("name, contact", ts.CASES, ids=ts.CASE_IDS)
def test_derivatives_vs_finite_differences(name, contact):
    """First and second derivatives against central differences of the values and of the
    first derivatives, with O(h^2) convergence (tests/test_step.py's check)."""
    at_rounding = ("jacobian",) if (name, contact) == ("actbox", True) else ()
    ts.check_derivatives_vs_finite_differences(*_setup(name, contact), contact, at_rounding)


@pytest.mark.parametrize("name, contact", ts.CASES, ids=ts.CASE_IDS)
def test_taylor_remainders(rng, name, contact):
    """F(t z) minus its first/second-order expansion shrinks like t^2 / t^3 along random
    directions of physical size (tests/test_step.py's check)."""
    ts.check_taylor_remainders(rng, *_setup(name, contact), contact)


def _scene_of(name, contact=True):
    """(scene, implicit model, x, u) of a tests/test_step.py case (its builder returns the
    model only: Scene.build is wrapped to catch the scene)."""
    caught = {}
    build = sc.Scene.build

    def catching(self, dt, integrator="euler"):
        caught["scene"] = self
        return build(self, dt, integrator)

    sc.Scene.build = catching
    try:
        model, x, u = _setup(name, contact)
    finally:
        sc.Scene.build = build
    return caught["scene"], model, x, u


@pytest.mark.parametrize("name", list(ts.SCENES))
def test_values_and_derivatives_match_the_jax_oracle(name):
    """The C step against tests/jax_oracle.py's implicit step, written from the scheme's
    definition (the damping and the friction's numerators at the new velocities, the
    friction's normalizers at the state's: one solve with the Jacobian of that affine
    map) and differentiated twice by JAX: values, first and second derivatives agree to
    1e-12 of their scale (measured 7e-16 .. 1.5e-13) with the bodies in contact (apart:
    measured 1e-26 .. 6e-14); the first derivatives of order=1 and order=2 are the same
    bits."""
    pytest.importorskip("jax")
    from jax_oracle import JaxModel

    scene, model, x, u = _scene_of(name)
    jm = JaxModel.from_scene(
        scene,
        model.dt,
        integrator="implicit",
        compiler_options={"xla_backend_optimization_level": 0},
        hessian="fwd-fwd",
    )
    ref = [np.asarray(a) for a in jm.step_d2(x, u)]
    r = model.step(x, u, order=2)
    got = [r.x_next, r.dx_dx, r.dx_du, r.d2x_dx2, r.d2x_dxdu, r.d2x_du2]
    for what, g, e in zip(OUTPUTS, got, ref, strict=True):
        if e.size:
            np.testing.assert_allclose(g, e, rtol=0, atol=1e-12 * np.abs(e).max(), err_msg=what)
    assert np.abs(r.d2x_dx2).max() > 1e3
    r1 = model.step(x, u, order=1)
    np.testing.assert_array_equal(r1.dx_dx, r.dx_dx)
    np.testing.assert_array_equal(r1.dx_du, r.dx_du)
    # and it is not the Euler step (the contact's velocity terms are implicit)
    euler, _, _ = ts._setup(name)
    assert np.abs(r.x_next - euler.step(x, u).x_next).max() > 1e-6 * np.abs(r.x_next).max()


@pytest.mark.parametrize("name, contact", ts.CASES, ids=ts.CASE_IDS)
def test_values_do_not_depend_on_order_or_threads(name, contact):
    model, x, u = _setup(name, contact)
    r0 = model.step(x, u, num_threads=1)
    r1 = model.step(x, u, order=1, num_threads=2)
    r2 = model.step(x, u, order=2, num_threads=2)
    np.testing.assert_array_equal(r0.x_next, r1.x_next)
    np.testing.assert_array_equal(r0.x_next, r2.x_next)
    assert r0.dx_dx is None and r1.d2x_dx2 is None and r2.d2x_dx2 is not None


@pytest.mark.parametrize("name", list(ts.SCENES))
def test_inverse_dynamics_recovers_the_controls(name):
    """u = A (v+ - v0+) / h with A = M - h dQ/dv; kinematic bodies' u = v+; an unactuated
    body's f is zero to rounding."""
    model, x, u = _setup(name)
    x_next = model.step(x, u).x_next
    u_rec, f = model.inverse_dynamics(x, x_next)
    if model.nu:
        np.testing.assert_allclose(u_rec, u, rtol=0, atol=1e-9 * np.abs(u).max())
    for j, body in enumerate(model.moving):
        idx = ts._controls_of(model, body)
        fb = f[ts._body_slices(model, j)[0]]
        if not idx:
            assert np.abs(fb).max() <= 1e3 * ts._force_rounding(model, name, j, x, x_next).max()


@pytest.mark.parametrize("name", ["pusher", "actbox"])
def test_rollout_equals_a_loop_of_steps_bitwise(rng, name):
    model, x, u = _setup(name)
    U_ = u + 0.1 * np.abs(u).max(initial=0.0) * rng.normal(size=(3, 5, model.nu))
    ro = model.rollout(x, U_, order=1, num_threads=2)
    assert np.all(ro.status == 0)
    for b in range(3):
        xb = x
        for t in range(5):
            r = model.step(xb, U_[b, t], order=1)
            np.testing.assert_array_equal(ro.dx_dx[b, t], r.dx_dx)
            np.testing.assert_array_equal(ro.dx_du[b, t], r.dx_du)
            xb = r.x_next
            np.testing.assert_array_equal(ro.states[b, t + 1], xb)


def test_arguments_the_implicit_step_refuses():
    model, x, u = _setup("pusher")
    with pytest.raises(ValueError, match="order"):
        model.step(x, u, order=3)
    with pytest.raises(ValueError, match="order"):
        model.rollout(x, np.zeros((1, 2, model.nu)), order=2)
    s = sc.Scene(dim=2)
    s.add_body(ts.DISK, mass=0.1)
    with pytest.raises(ValueError, match="integrator must be one of"):
        s.build(0.01, integrator="rk4")
    with pytest.raises(TypeError, match="integrator must be a str"):
        s.build(0.01, integrator=1)
    assert s.build(0.01).integrator == "euler"
    assert "implicit" in repr(s.build(0.01, integrator="implicit"))


# ---- physics ------------------------------------------------------------------------------
def _box_on_floor(dt, integrator):
    s = sc.Scene(dim=3)
    s.add_body(ts.FLOOR, kind="static", name="floor")
    s.add_body(
        sc.PointCloud.box([0.05, 0.05, 0.05], 0.01), pose=[0, 0, 0.05, 1, 0, 0, 0], name="box"
    )  # 1 kg
    s.add_contact("box", "floor", sc.ContactParams())
    if integrator == "euler":
        with pytest.warns(sc.SoftContactWarning, match=r"friction \(stick regime\) of contact"):
            return s.build(dt, integrator)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return s.build(dt, integrator)


def test_resting_box_at_10_ms():
    """A 1 kg box resting on a floor, ContactParams() (not fitted to dt), 10 ms steps: the
    implicit step settles (angular speed < 1e-3 rad/s after 1 s; measured ~1e-16), the Euler step
    chatters at the same dt, as Scene.build warns (friction in its stick regime needs
    dt < 2 v_s m_eff / (mu m g), 0.74 ms at the cube's corners)."""
    out = {}
    for integ in ("implicit", "euler"):
        model = _box_on_floor(0.01, integ)
        X = model.rollout(model.initial_state(), np.zeros((100, 0))).states
        out[integ] = np.abs(X[-1, model.nq + 3 :]).max(), np.abs(X[-1, model.nq : model.nq + 3])
    assert out["implicit"][0] < 1e-3 and out["implicit"][1].max() < 1e-4, out
    assert out["euler"][0] > 0.1, out


def test_momentum_is_conserved_by_the_implicit_step():
    """Contact forces are equal and opposite at every velocity, so their velocity Jacobians
    are too, and the linearized forces still cancel: linear momentum (and, in 2D, angular
    momentum) through a collision to rounding."""
    model, x, u = _setup("act2")
    # no actuation and no support friction: an isolated pair
    s = sc.Scene(dim=2)
    s.add_body(ts.T_CLOUD, mass=0.1, pose=ts.POSE_T2, velocity=[0.02, 0.01, -0.2], name="T")
    s.add_body(
        ts.DISK, mass=0.05, pose=ts._act2_pose(True), velocity=[-0.01, 0.0, 1.0], name="disk"
    )
    s.add_contact("T", "disk", ts.PARAMS)
    m = s.build(0.01, "implicit")
    X = m.rollout(m.initial_state(), np.zeros((50, 0))).states
    p0 = m.momentum(X[0])
    assert m.energy(X[1]).contact > 1e-6
    for xk in X[1:]:
        p = m.momentum(xk)
        np.testing.assert_allclose(p.linear, p0.linear, rtol=0, atol=1e-14)
        assert abs(p.angular - p0.angular) < 1e-14


@pytest.mark.parametrize("anchor", [(0.0, 0.0), (0.02, -0.01), (3.0, 0.0), (-40.0, 25.0)])
def test_frictionless_sphere_on_a_floor_does_not_drift(anchor):
    """A sphere resting on a frictionless floor for 10 s (implicit, 5 ms steps): no lateral
    drift at all, wherever the floor's anchor point lies (its sample takes no part)."""
    s = sc.Scene(dim=3)
    s.add_body(sc.PointCloud.halfspace([*anchor, 0.0], [0, 0, 1]), kind="static", name="floor")
    s.add_body(sc.PointCloud.sphere(0.03, 0.008), mass=0.1, pose=[0.01, 0.02, 0.03, 1, 0, 0, 0])
    s.add_contact(0, 1, sc.ContactParams(friction=0.0))
    model = s.build(0.005, "implicit")
    X = model.rollout(model.initial_state(), np.zeros((2000, 0))).states
    assert model.energy(X[-1]).contact > 0  # resting on the floor
    np.testing.assert_array_equal(X[:, :2], np.broadcast_to([0.01, 0.02], (2001, 2)))


@pytest.mark.parametrize("dt, tol", [(0.002, 0.005), (0.005, 0.02), (0.01, 0.035)])
def test_a_sliding_box_stops_at_coulombs_distance(dt, tol):
    """A 1 kg cube resting on a floor (fitted parameters, mu = 0.5) set sliding at 1 m/s
    stops after v0^2 / (2 mu g) = 101.9 mm: within 0.5 % at 2 ms, 2 % at 5 ms, 3.5 % at
    10 ms (measured +0.2, +1.3, +2.9 %: the step's O(h) error near the stop), and stays
    stopped -- the lagged friction's coefficient is held over the step, so a contact that
    stops within a step does not overshoot into a stick-slip oscillation (speeds below
    1e-6 after 1.5 s)."""
    s = sc.Scene(dim=3)
    s.add_body(ts.FLOOR, kind="static", name="floor")
    s.add_body(sc.PointCloud.box([0.05] * 3, 0.01), mass=1.0, pose=[0, 0, 0.05, 1, 0, 0, 0])
    s.add_contact("floor", "body1", friction=0.5)
    model = s.build(dt, "implicit")
    x = model.rollout(model.initial_state(), np.zeros((int(0.5 / dt), 0))).states[-1]
    x0 = x[0]
    x[model.nq] = 1.0
    X = model.rollout(x, np.zeros((int(1.5 / dt), 0))).states
    coulomb = 1.0 / (2 * 0.5 * 9.81)
    assert abs((X[-1, 0] - x0) / coulomb - 1) < tol
    assert np.abs(X[-1, model.nq :]).max() < 1e-6


@pytest.mark.parametrize("name, contact", ts.CASES, ids=ts.CASE_IDS)
def test_parameter_derivatives_vs_rebuilt_models(name, contact):
    """dx_dp of the implicit step column by column against central differences of models
    rebuilt with the parameter moved by +-1e-5 of its value (an off-diagonal inertia: of
    the largest diagonal one), as tests/test_step.py checks the Euler step's; with
    order=1 the same dx_dp, and dx_dx, dx_du those of params=False bit for bit."""
    model, x, u = _setup(name, contact)
    r = model.step(x, u, order=0, params=True)
    assert r.dx_dp.shape == (2 * model.nv, model.np)
    assert r.dx_dx is None and r.dx_du is None
    checked = list(ts.check_dx_dp(name, contact, model, x, u, r, integrator="implicit"))
    assert len(checked) == model.np
    r1 = model.step(x, u, order=1, params=True)
    r0 = model.step(x, u, order=1)
    np.testing.assert_array_equal(r1.dx_dp, r.dx_dp)
    np.testing.assert_array_equal(r1.dx_dx, r0.dx_dx)
    np.testing.assert_array_equal(r1.dx_du, r0.dx_du)
    np.testing.assert_array_equal(r1.x_next, r0.x_next)
