"""A contact-free free body against MuJoCo: the step, its Jacobians, the conventions.

MuJoCo is an external oracle for everything in ``Model.step`` that is not contact:
gravity, an applied force and torque, the gyroscopic term, the quaternion update and the
tangent-space conventions of the derivatives.  The equivalent MJCF model is a body with a
free joint whose inertial frame coincides with the body frame (``<inertial pos="0 0 0"
mass=... fullinertia=...>``), ``integrator="Euler"`` with ``eulerdamp`` disabled (no dof
damping here anyway), and six ``motor`` actuators on the free joint with unit ``gear``
vectors, so that ``ctrl`` is the generalized force on the joint's six dofs.

Conventions, each verified below rather than assumed:

* state: softcontact's 3D state ``(p, qw, qx, qy, qz, v (world), omega (body))`` is
  MuJoCo's free-joint ``(qpos, qvel)``, element for element;
* control: softcontact's ``u = (f (world), tau (body))`` of an actuated body is MuJoCo's
  ``ctrl`` of the six motors: the free joint's translational dofs are world-frame, its
  rotational dofs body-frame (checked against ``xfrc_applied``, which is world-frame at
  the centre of mass);
* integrator: MuJoCo's Euler is semi-implicit, ``v+ = v + h M^-1 (f - bias)``,
  ``q+ = q (+) h v+``, with the gyroscopic term ``omega x I omega`` in the bias,
  explicit, exactly as softcontact (docs/method.md section 7);
* tangent coordinates: MuJoCo's ``A`` and ``B`` (``mjd_transitionFD``) are over
  ``(dqpos, dqvel)`` with ``dqpos`` from ``mj_differentiatePos`` / ``mj_integratePos``:
  translation in the world frame, rotation ``q (x) exp(dtheta / 2)`` in the body frame --
  the same as ``Model.difference`` / ``Model.retract``.

Agreement: the step to rounding (1e-15 measured; 1e-12 asserted), the Jacobians to the
accuracy of MuJoCo's centred differences with eps = 1e-6 (2e-10 measured, 1e-8 asserted,
entries of size ~1), 200-step trajectories to 1e-11.
"""

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import softcontact as sc  # noqa: E402

DT = 0.002
GRAVITY = np.array([0.0, 0.0, -9.81])
MASS = 1.3
PRINCIPAL = np.array([0.012, 0.017, 0.021])  # kg m^2, satisfies the triangle inequality


def _rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _inertia(kind):
    if kind == "diagonal":
        return np.diag(PRINCIPAL)
    R = _rotation(np.random.default_rng(11))
    inertia = R @ np.diag(PRINCIPAL) @ R.T
    inertia = 0.5 * (inertia + inertia.T)  # exactly symmetric, off-diagonals ~5e-3
    assert np.abs(inertia - np.diag(np.diag(inertia))).max() > 1e-3
    return inertia


def _mjcf(inertia):
    full = " ".join(
        f"{float(v):.17g}"
        for v in (
            inertia[0, 0],
            inertia[1, 1],
            inertia[2, 2],
            inertia[0, 1],
            inertia[0, 2],
            inertia[1, 2],
        )
    )
    motors = "\n".join(
        f'    <motor joint="free" gear="{" ".join("1" if j == i else "0" for j in range(6))}"/>'
        for i in range(6)
    )
    return f"""
<mujoco>
  <option timestep="{DT!r}" integrator="Euler" gravity="{" ".join(map(str, GRAVITY))}">
    <flag eulerdamp="disable" contact="disable"/>
  </option>
  <worldbody>
    <body name="body">
      <freejoint name="free"/>
      <inertial pos="0 0 0" mass="{MASS!r}" fullinertia="{full}"/>
    </body>
  </worldbody>
  <actuator>
{motors}
  </actuator>
</mujoco>"""


@pytest.fixture(scope="module", params=["diagonal", "full"])
def pair(request):
    """(softcontact model, MuJoCo model, MuJoCo data, inertia) for one inertia tensor."""
    inertia = _inertia(request.param)
    scene = sc.Scene(3, gravity=GRAVITY)
    # any centred cloud: no contact pair, the mass and inertia are given explicitly
    scene.add_body(
        sc.PointCloud.box([0.05, 0.04, 0.03], 0.1),
        mass=MASS,
        inertia=inertia,
        actuated=True,
        name="body",
    )
    model = scene.build(DT)
    mj = mujoco.MjModel.from_xml_string(_mjcf(inertia))
    assert (mj.nq, mj.nv, mj.nu, mj.na) == (7, 6, 6, 0)
    assert mj.opt.integrator == mujoco.mjtIntegrator.mjINT_EULER
    np.testing.assert_array_equal(mj.body_ipos[1], 0.0)  # inertial frame at the origin
    return model, mj, mujoco.MjData(mj), inertia


def _cases(n=6, seed=3):
    """Random states (fast spin, so the gyroscopic term matters) and controls."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        x = np.concatenate(
            [0.3 * rng.normal(size=3), q, rng.normal(size=3), 4.0 * rng.normal(size=3)]
        )
        u = np.concatenate([5.0 * rng.normal(size=3), 0.05 * rng.normal(size=3)])
        out.append((x, u))
    return out


CASES = _cases()


def _set(mj, d, x, u):
    mujoco.mj_resetData(mj, d)
    d.qpos[:] = x[:7]
    d.qvel[:] = x[7:]
    d.ctrl[:] = u


def test_state_and_control_conventions(pair):
    model, mj, d, _ = pair
    assert model.nx == mj.nq + mj.nv and 2 * model.nv == 2 * mj.nv and model.nu == mj.nu
    assert model.control_names == ("body.fx", "body.fy", "body.fz", "body.tx", "body.ty", "body.tz")
    for x, u in CASES[:3]:
        _set(mj, d, x, u)
        mujoco.mj_forward(mj, d)
        R = d.xmat[1].reshape(3, 3)
        # qpos[3:7] is the body's orientation (w, x, y, z)
        np.testing.assert_allclose(d.xquat[1], x[3:7], rtol=0, atol=1e-15)
        np.testing.assert_allclose(d.xpos[1], x[:3], rtol=0, atol=1e-15)
        # qvel: world linear velocity of the origin, body-frame angular velocity
        vel = np.zeros(6)
        mujoco.mj_objectVelocity(mj, d, mujoco.mjtObj.mjOBJ_BODY, 1, vel, 0)  # world frame
        np.testing.assert_allclose(vel[3:], x[7:10], rtol=0, atol=1e-14)
        np.testing.assert_allclose(vel[:3], R @ x[10:13], rtol=0, atol=1e-14)
        # ctrl: world-frame force, body-frame torque -- the same acceleration as the
        # world-frame wrench (f, R tau) applied through xfrc_applied
        qacc_ctrl = d.qacc.copy()
        d.ctrl[:] = 0.0
        d.xfrc_applied[1, :3] = u[:3]
        d.xfrc_applied[1, 3:] = R @ u[3:]
        mujoco.mj_forward(mj, d)
        np.testing.assert_allclose(d.qacc, qacc_ctrl, rtol=0, atol=1e-12)
        d.xfrc_applied[:] = 0.0


def test_tangent_coordinates_match_mujoco(pair):
    model, mj, _, _ = pair
    rng = np.random.default_rng(5)
    for x, _ in CASES:
        dx = 0.3 * rng.normal(size=12)
        # retract: mj_integratePos(qpos, dqpos, 1) and qvel + dqvel
        qpos = x[:7].copy()
        mujoco.mj_integratePos(mj, qpos, dx[:6], 1.0)
        xr = model.retract(x, dx)
        np.testing.assert_allclose(xr[:7], qpos, rtol=0, atol=1e-15)
        np.testing.assert_allclose(xr[7:], x[7:] + dx[6:], rtol=0, atol=1e-15)
        # difference: mj_differentiatePos(qvel_out, dt=1, qpos1=x, qpos2=xr)
        dq = np.zeros(6)
        mujoco.mj_differentiatePos(mj, dq, 1.0, x[:7], xr[:7])
        np.testing.assert_allclose(model.difference(xr, x)[:6], dq, rtol=0, atol=1e-14)
        np.testing.assert_allclose(dq, dx[:6], rtol=0, atol=1e-14)


def _euler_by_hand(x, u, inertia):
    """v+ = v + h M^-1 (m g + f, tau - w x I w), the gyroscopic term explicit."""
    v, w = x[7:10], x[10:13]
    gyro = np.cross(w, inertia @ w)
    vp = v + DT * (GRAVITY + u[:3] / MASS)
    wp = w + DT * np.linalg.solve(inertia, u[3:] - gyro)
    return vp, wp, DT * np.linalg.norm(np.linalg.solve(inertia, gyro))


def test_step_matches_mujoco_euler(pair):
    model, mj, d, inertia = pair
    for x, u in CASES:
        ours = model.step(x, u).x_next
        _set(mj, d, x, u)
        mujoco.mj_step(mj, d)
        theirs = np.concatenate([d.qpos, d.qvel])
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
        # both are the semi-implicit Euler step with the explicit gyroscopic term, which
        # is not negligible here (so dropping or mis-framing it would be caught)
        vp, wp, gyro_step = _euler_by_hand(x, u, inertia)
        np.testing.assert_allclose(ours[7:10], vp, rtol=0, atol=1e-13)
        np.testing.assert_allclose(ours[10:13], wp, rtol=0, atol=1e-13)
        assert gyro_step > 1e-3
        # and positions from the new velocities: q+ = q (+) h v+
        np.testing.assert_allclose(
            ours[:7],
            model.retract(x, np.concatenate([DT * ours[7:], np.zeros(6)]))[:7],
            rtol=0,
            atol=1e-15,
        )


def test_jacobians_match_mjd_transition_fd(pair):
    model, mj, d, _ = pair
    worst_a = worst_b = 0.0
    for x, u in CASES:
        r = model.step(x, u, order=1)
        A = np.zeros((12, 12))
        B = np.zeros((12, 6))
        _set(mj, d, x, u)
        mujoco.mjd_transitionFD(mj, d, 1e-6, True, A, B, None, None)
        assert np.abs(A).max() > 0.9 and np.abs(B).max() > 1e-3  # identity blocks, h M^-1
        worst_a = max(worst_a, np.abs(r.dx_dx - A).max())
        worst_b = max(worst_b, np.abs(r.dx_du - B).max())
        # the second-order call returns the same first derivatives
        r2 = model.step(x, u, order=2)
        np.testing.assert_array_equal(r2.dx_dx, r.dx_dx)
        np.testing.assert_array_equal(r2.dx_du, r.dx_du)
    # centred differences with eps = 1e-6: truncation ~eps^2, rounding ~1e-16 / eps
    assert worst_a < 1e-8, worst_a
    assert worst_b < 1e-8, worst_b


def test_rollout_matches_mujoco_trajectory(pair):
    model, mj, d, _ = pair
    x0, _ = CASES[0]
    T = 200
    rng = np.random.default_rng(9)
    U = np.concatenate([2.0 * rng.normal(size=(T, 3)), 0.02 * rng.normal(size=(T, 3))], axis=1)
    ours = model.rollout(x0, U, num_threads=1).states
    _set(mj, d, x0, U[0])
    theirs = [x0]
    for t in range(T):
        d.ctrl[:] = U[t]
        mujoco.mj_step(mj, d)
        theirs.append(np.concatenate([d.qpos, d.qvel]))
    np.testing.assert_allclose(ours, np.array(theirs), rtol=0, atol=1e-11)
