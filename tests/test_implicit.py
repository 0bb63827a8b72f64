"""The linearly implicit step (``Scene.build(dt, integrator="implicit")``, docs/method.md
section 7): its first derivatives against central differences (O(h^2) convergence) and
Taylor remainders, its values against an independent NumPy construction of the same
scheme from the Euler step's exact force Jacobian, inverse dynamics, rollouts, the
arguments it refuses, and the physics it is for: resting and sliding contact at
millisecond-scale time steps where the semi-implicit Euler step chatters.

The scenes are those of tests/test_step.py (coarse clouds, bodies touching or apart).
"""

import warnings

import numpy as np
import pytest
import test_step as ts

import softcontact as sc
from softcontact.testing import taylor_remainders, taylor_slopes

U = np.finfo(float).eps

# the derivative checks' scenes (tests/test_step.py) step past the stability limits on
# purpose; the warning itself is asserted in test_resting_box_at_10_ms
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


def _setup(name, contact=True, dt=None):
    return ts._setup(name, contact, dt, integrator="implicit")


@pytest.mark.parametrize("name, contact", ts.CASES, ids=ts.CASE_IDS)
def test_first_derivatives_vs_finite_differences(name, contact):
    """dx_dx and dx_du against central differences of the value through retract: within
    1e-6 of each row's scale plus the rounding floor, and the error shrinking by 4 when
    the difference step halves (O(h^2): a wrong entry would stop the convergence)."""
    model, x, u = _setup(name, contact)
    r = model.step(x, u, order=1)
    J = ts._full_jacobian(r)
    row = np.abs(J).max(axis=1)[:, None]
    n, N = 2 * model.nv, 2 * model.nv + model.nu
    bound = 1e-6 * row + 16 * U * max(1.0, np.abs(x).max()) * (1.0 + row) / ts.FD_STEPS[-1]
    errs = []
    for h in ts.FD_STEPS:
        cols = []
        for j in range(N):
            e = np.zeros(N)
            e[j] = h
            fp = ts._at(model, x, u, e).x_next
            fm = ts._at(model, x, u, -e).x_next
            cols.append((model.difference(fp, r.x_next) - model.difference(fm, r.x_next)) / (2 * h))
        errs.append((np.stack(cols, axis=-1) - J) / bound)
    assert J.shape == (n, N)
    assert np.abs(errs[1]).max() <= 1.0, np.abs(errs[1]).max()
    if contact or model.dim == 2:
        ratio = np.linalg.norm(errs[0]) / np.linalg.norm(errs[1])
        # measured 3.89-4.07, except actbox in contact (2.4: its error is already at
        # 1e-10 of the row scale, where rounding takes over)
        if name != "actbox":
            assert 3.5 < ratio < 4.5, ratio
        else:
            assert np.abs(errs[1]).max() <= 1e-3


@pytest.mark.parametrize("name", list(ts.SCENES))
def test_first_order_taylor_remainders(rng, name):
    """F(t z) - J z t shrinks like t^2 along random directions of physical size."""
    model, x, u = _setup(name)
    r = model.step(x, u, order=1)
    J = ts._full_jacobian(r)

    def f(z):
        return model.difference(ts._at(model, x, u, z).x_next, r.x_next)

    floor = 1e3 * U * np.abs(r.x_next).max()
    for _ in range(2):
        z = ts._direction(model, rng)
        R = np.linalg.norm(
            taylor_remainders(f, np.zeros_like(z), z, [J @ z], ts.TAYLOR_STEPS), axis=2
        )
        slopes = taylor_slopes(R, ts.TAYLOR_STEPS)
        valid = slopes[1][(R[1, :-1] > floor) & (R[1, 1:] > floor)]
        assert len(valid) >= 3, R[1]
        assert np.all(valid[-2:] > 1.7), slopes[1]


def _mass_matrix(name, model):
    """M of the scene's moving bodies (zero blocks for kinematic ones), from its defaults."""
    p = ts.SCENES[name][2]
    nvb = 3 if model.dim == 2 else 6
    M = np.zeros((model.nv, model.nv))
    for j, body in enumerate(model.moving):
        if f"{body}.mass" not in p:
            continue
        sl = slice(nvb * j, nvb * (j + 1))
        if model.dim == 2:
            M[sl, sl] = np.diag([p[f"{body}.mass"]] * 2 + [p[f"{body}.inertia"]])
        else:
            blk = np.zeros((6, 6))
            blk[:3, :3] = p[f"{body}.mass"] * np.eye(3)
            blk[3:, 3:] = ts._inertia3(p, body)
            M[sl, sl] = blk
    return M


def _reference_implicit(name, euler, x, u):
    """The implicit step's next velocities rebuilt in NumPy from the Euler step's exact
    first derivatives: Euler gives v+ = v + h M^-1 (Q - g(w)) with g the 3D gyroscopic
    term w x I w, so Q - g = M (v+ - v) / h and dQ/dv = M (dv+/dv - I) / h + dg/dv; then
    (M - h D_dd) dv = h (Q - g + D_dk (u_k - v_k)) by numpy.linalg.solve."""
    r = euler.step(x, u, order=1)
    h, nv = euler.dt, euler.nv
    nvb = 3 if euler.dim == 2 else 6
    M = _mass_matrix(name, euler)
    v, vplus = x[euler.nq :], r.x_next[euler.nq :]
    Dq = M @ (r.dx_dx[nv:, nv:] - np.eye(nv)) / h
    dyn = [j for j in range(len(euler.moving)) if M[nvb * j, nvb * j] > 0]
    kin = [j for j in range(len(euler.moving)) if j not in dyn]
    if euler.dim == 3:
        for j in dyn:
            w = v[nvb * j + 3 : nvb * j + 6]
            inertia = M[nvb * j + 3 : nvb * j + 6, nvb * j + 3 : nvb * j + 6]

            def cross(a):
                return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])

            sl = slice(nvb * j + 3, nvb * j + 6)
            Dq[sl, sl] += cross(w) @ inertia - cross(inertia @ w)
    idx_d = np.concatenate([np.arange(nvb * j, nvb * (j + 1)) for j in dyn])
    rhs = (M @ (vplus - v) / h)[idx_d]
    for j in kin:
        idx_k = np.arange(nvb * j, nvb * (j + 1))
        uk = u[[k for k, c in enumerate(euler.control_names) if c.startswith(euler.moving[j])]]
        rhs = rhs + Dq[np.ix_(idx_d, idx_k)] @ (uk - v[idx_k])
    A = M[np.ix_(idx_d, idx_d)] - h * Dq[np.ix_(idx_d, idx_d)]
    out = vplus.copy()
    out[idx_d] = v[idx_d] + np.linalg.solve(A, h * rhs)
    return out


@pytest.mark.parametrize("name", ["pusher", "act2", "boxball"])
def test_values_against_a_numpy_construction(name):
    """The C step's next velocities equal the scheme rebuilt in NumPy from the Euler
    step's exact Jacobian, to the rounding of that construction (differences of v+ and v
    amplified by M / h: 1e-9 of the velocities' scale)."""
    model, x, u = _setup(name)
    euler, _, _ = ts._setup(name)
    want = _reference_implicit(name, euler, x, u)
    got = model.step(x, u).x_next[model.nq :]
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * scale)
    # and it is not the Euler step (the contact's velocity terms are implicit)
    assert np.abs(got - euler.step(x, u).x_next[model.nq :]).max() > 1e-6 * scale


@pytest.mark.parametrize("name, contact", ts.CASES, ids=ts.CASE_IDS)
def test_values_do_not_depend_on_order_or_threads(name, contact):
    model, x, u = _setup(name, contact)
    r0 = model.step(x, u, num_threads=1)
    r1 = model.step(x, u, order=1, num_threads=2)
    np.testing.assert_array_equal(r0.x_next, r1.x_next)
    assert r0.dx_dx is None and r1.d2x_dx2 is None


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
    with pytest.raises(ValueError, match="order=2 needs integrator='euler'"):
        model.step(x, u, order=2)
    with pytest.raises(ValueError, match="params=True needs integrator='euler'"):
        model.step(x, u, params=True)
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
