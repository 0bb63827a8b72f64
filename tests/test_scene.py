"""Building scenes and using compiled models: ``Scene``, ``Scene.add_body``,
``Scene.add_contact``, ``Scene.add_support``, ``Scene.build`` and the ``Model`` API
(docs/method.md sections 3, 6-7).

Errors: every invalid argument raises TypeError (wrong Python type) or ValueError (shape,
range, meaning) with a message that names it.  Semantics: mass properties from the
geometry, the body frame at the centre of mass (state position = cloud pose + R com, and
the contact geometry and support footprint follow), sizes and names, the state layout,
retract/difference, immutability, inputs never modified.  The dynamics themselves are in
tests/test_step.py.
"""

import warnings

import numpy as np
import pytest
from conftest import raises_naming

import softcontact as sc
from softcontact import _core
from softcontact.scene import _all_finite
from softcontact.spatial import quat_to_matrix

# Scenes here step past the explicit integrator's friction and damping limits on purpose:
# what is checked (derivatives, bits, memory, parameters) holds at any dt.  Scene.build's
# stability warning is tested in tests/test_scene.py.
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


U = np.finfo(float).eps

SQUARE = sc.PointCloud.box([0.02, 0.02], 0.008)
DISK = sc.PointCloud.disk(0.02, 0.008)
T_CLOUD = sc.PointCloud.t_shape(spacing=0.01)
BOX = sc.PointCloud.box([0.03, 0.02, 0.015], 0.01)
BALL = sc.PointCloud.sphere(0.02, 0.01)
FLOOR = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
WALL = sc.PointCloud.halfspace([0.0, 0.2], [0.0, -1.0])
Q = np.array([0.9, 0.2, 0.3, -0.1]) / np.linalg.norm([0.9, 0.2, 0.3, -0.1])
SPD = np.array([[3.0, 0.5, 0.1], [0.5, 2.0, 0.2], [0.1, 0.2, 1.0]]) * 1e-5


def _scene2():
    """T (dynamic, supported), pusher (kinematic), wall (static), puck (actuated)."""
    s = sc.Scene(dim=2)
    s.add_body(T_CLOUD, mass=0.1, pose=[0.0, 0.0, 0.2], velocity=[0.01, 0.0, 0.1], name="T")
    s.add_body(DISK, kind="kinematic", pose=[0.0, -0.1, 0.0], name="pusher")
    s.add_body(WALL, kind="static", name="wall")
    s.add_body(DISK, mass=0.05, pose=[0.1, 0.1, 0.0], actuated=True, name="puck")
    s.add_contact("T", "pusher")
    s.add_contact("T", "wall")
    s.add_contact("puck", "T")
    s.add_support("T", friction=0.3)
    s.add_support("puck", friction=0.2)
    return s


def _scene3():
    """floor (static), box (dynamic, actuated), ball (kinematic)."""
    s = sc.Scene(dim=3)
    s.add_body(FLOOR, kind="static", name="floor")
    s.add_body(
        BOX,
        mass=0.2,
        inertia=SPD,
        pose=[0.0, 0.0, 0.02, *Q],
        actuated=True,
        velocity=[0.1, 0, 0, 0, 0, 1.0],
        name="box",
    )
    s.add_body(BALL, kind="kinematic", pose=[0.1, 0.0, 0.02, 1.0, 0.0, 0.0, 0.0], name="ball")
    s.add_contact("box", "floor")
    s.add_contact("ball", "box")
    return s


# --------------------------------------------------------------------------------------------
# 1. sizes, names, layout
# --------------------------------------------------------------------------------------------
def test_sizes_names_and_initial_state_2d():
    m = _scene2().build(0.005)
    # moving bodies T, pusher, puck (the wall is static: not in the state)
    assert m.moving == ("T", "pusher", "puck")
    assert m.body_names == ("T", "pusher", "wall", "puck")
    assert (m.dim, m.dt, m.nq, m.nv, m.nx) == (2, 0.005, 9, 9, 18)
    assert m.control_names == (
        "pusher.vx",
        "pusher.vy",
        "pusher.omega",
        "puck.fx",
        "puck.fy",
        "puck.tau",
    )
    assert m.nu == len(m.control_names) == 6
    assert m.param_names == (
        "T.mass",
        "T.inertia",
        "puck.mass",
        "puck.inertia",
        "contact(T,pusher).stiffness",
        "contact(T,pusher).damping",
        "contact(T,pusher).friction",
        "contact(T,wall).stiffness",
        "contact(T,wall).damping",
        "contact(T,wall).friction",
        "contact(puck,T).stiffness",
        "contact(puck,T).damping",
        "contact(puck,T).friction",
        "T.support_friction",
        "puck.support_friction",
    )
    assert m.np == len(m.param_names) == 15
    x = m.initial_state()
    # positions of the moving bodies in order, then their velocities; the T's and the
    # disk's clouds are centred on their centroids (the T's to rounding, ~1e-18 m), so the
    # poses are those given
    np.testing.assert_allclose(
        x,
        [
            0.0,
            0.0,
            0.2,
            0.0,
            -0.1,
            0.0,
            0.1,
            0.1,
            0.0,
            0.01,
            0.0,
            0.1,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
        ],
        rtol=0,
        atol=1e-16,
    )
    assert x.dtype == np.float64
    x[0] = 5.0  # a copy
    assert abs(m.initial_state()[0]) < 1e-16
    r = m.step(m.initial_state(), np.zeros(6), order=2, params=True)
    assert r.x_next.shape == (18,) and r.dx_dx.shape == (18, 18) and r.dx_du.shape == (18, 6)
    assert r.dx_dp.shape == (18, 15)


def test_sizes_names_and_initial_state_3d():
    m = _scene3().build(0.002)
    assert m.moving == ("box", "ball")
    assert (m.nq, m.nv, m.nx, m.nu) == (14, 12, 26, 12)
    assert m.control_names == (
        "box.fx",
        "box.fy",
        "box.fz",
        "box.tx",
        "box.ty",
        "box.tz",
        "ball.vx",
        "ball.vy",
        "ball.vz",
        "ball.wx",
        "ball.wy",
        "ball.wz",
    )
    assert m.param_names == (
        "box.mass",
        "box.Ixx",
        "box.Iyy",
        "box.Izz",
        "box.Ixy",
        "box.Ixz",
        "box.Iyz",
        "contact(box,floor).stiffness",
        "contact(box,floor).damping",
        "contact(box,floor).friction",
        "contact(ball,box).stiffness",
        "contact(ball,box).damping",
        "contact(ball,box).friction",
    )
    assert m.np == len(m.param_names)
    np.testing.assert_array_equal(
        m.initial_state(),
        np.concatenate(
            [
                [0.0, 0.0, 0.02],
                Q,
                [0.1, 0.0, 0.02, 1.0, 0.0, 0.0, 0.0],
                [0.1, 0, 0, 0, 0, 1.0],
                np.zeros(6),
            ]
        ),
    )
    r = m.step(m.initial_state(), np.zeros(12), order=2)
    assert r.dx_dx.shape == (24, 24) and r.d2x_dxdu.shape == (24, 24, 12)


def test_no_controls():
    s = sc.Scene(dim=3)
    s.add_body(BALL, name="ball")
    m = s.build(0.01)
    assert m.nu == 0 and m.control_names == ()
    a, b = m.step(m.initial_state()), m.step(m.initial_state(), [])
    np.testing.assert_array_equal(a.x_next, b.x_next)
    r = m.step(m.initial_state(), order=1)
    assert r.dx_du.shape == (12, 0)
    assert m.param_names == (
        "ball.mass",
        "ball.Ixx",
        "ball.Iyy",
        "ball.Izz",
        "ball.Ixy",
        "ball.Ixz",
        "ball.Iyz",
    )


def test_default_names_and_repr():
    s = sc.Scene(dim=2)
    assert s.add_body(SQUARE) == "body0"
    assert s.add_body(DISK, kind="kinematic", pose=[0.1, 0, 0]) == "body1"
    s.add_contact(0, 1)
    m = s.build(0.01)
    assert m.body_names == ("body0", "body1")
    assert "contact(body0,body1).stiffness" in m.param_names
    text = repr(_scene2())
    assert text.startswith("Scene(dim=2, gravity=[0.0, 0.0], 4 bodies, 3 contacts)")
    for line in (
        "  T: dynamic, ",
        "mass 0.1 kg, support",
        "  pusher: kinematic, ",
        "  wall: static, 1 samples",
        "  puck: dynamic, ",
        "mass 0.05 kg, actuated, support",
        "  contact T - pusher",
        "  contact T - wall",
        "  contact puck - T",
    ):
        assert line in text, (line, text)
    mr = repr(_scene2().build(0.005))
    assert mr == (
        "Model(dim=2, dt=0.005, integrator='euler', bodies=['T', 'pusher', 'wall', 'puck'], "
        "nx=18, nv=9, nu=6, np=15)"
    )


def test_model_is_immutable_and_independent_of_the_scene():
    s = _scene2()
    m = s.build(0.005)
    for attr, value in (("dt", 0.01), ("nx", 3), ("param_names", ()), ("new", 1)):
        with pytest.raises(AttributeError, match=f"Model is immutable: cannot set '{attr}'"):
            setattr(m, attr, value)
    assert m.dt == 0.005 and m.nx == 18
    x = m.initial_state()
    u = np.array([0.0, 0.05, 0.0, 0.1, 0.0, 0.0])
    before = m.step(x, u).x_next
    # changing the scene afterwards changes neither this model nor its results
    s.add_body(SQUARE, mass=1.0, pose=[0.0, -0.08, 0.0], name="late")
    s.add_contact("late", "T")
    s.gravity[:] = [1.0, 1.0]
    np.testing.assert_array_equal(m.step(x, u).x_next, before)
    assert m.body_names == ("T", "pusher", "wall", "puck") and m.nx == 18
    assert s.build(0.005).nx == 24


# --------------------------------------------------------------------------------------------
# 2. mass properties and the body frame
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("density", [None, 7.5])
def test_mass_properties_from_density_2d(density):
    """Mass and inertia are read back through momentum and energy: body a moves at
    v = (1, 0), body b spins at omega = 1 (v = 0): p = m_a v, L = I_b omega."""
    for cloud in (SQUARE, DISK, T_CLOUD):
        want = cloud.mass_properties(10.0 if density is None else density)  # default 10
        s = sc.Scene(dim=2)
        s.add_body(cloud, density=density, velocity=[1.0, 0.0, 0.0], name="a")
        s.add_body(cloud, density=density, pose=[0.3, 0.0, 0.0], velocity=[0.0, 0.0, 1.0], name="b")
        m = s.build(0.01)
        x = m.initial_state()
        mom = m.momentum(x)
        np.testing.assert_allclose(mom.linear, [want.mass, 0.0], rtol=1e-15, atol=0)
        # L about the origin: a moves along the x axis through it (centre of mass on the
        # axis to rounding), b spins in place
        assert mom.angular == pytest.approx(want.inertia, rel=1e-14, abs=1e-17)
        e = m.energy(x)
        assert e.kinetic == pytest.approx(0.5 * want.mass + 0.5 * want.inertia, rel=1e-14)
        assert e.potential == 0.0 and e.contact == 0.0


def test_mass_properties_from_density_3d():
    for cloud, density in ((BOX, None), (BOX, 250.0), (BALL, 800.0)):
        want = cloud.mass_properties(1000.0 if density is None else density)
        s = sc.Scene(dim=3, gravity=[0.0, 0.0, 0.0])
        s.add_body(cloud, density=density, name="a")
        m = s.build(0.01)
        x = m.initial_state()
        x[m.nq : m.nq + 3] = [1.0, 2.0, 3.0]
        np.testing.assert_allclose(
            m.momentum(x).linear, want.mass * np.array([1.0, 2.0, 3.0]), rtol=1e-15
        )
        # at the origin with identity orientation, L = I omega: one column per axis
        inertia = np.zeros((3, 3))
        for k in range(3):
            y = m.initial_state()
            y[m.nq + 3 + k] = 1.0
            inertia[:, k] = m.momentum(y).angular
        np.testing.assert_allclose(
            inertia, want.inertia, rtol=0, atol=1e-14 * np.abs(want.inertia).max()
        )


def test_mass_given_inertia_scaled_and_explicit_inertia():
    s = sc.Scene(dim=3, gravity=[0.0, 0.0, 0.0])
    s.add_body(BOX, mass=0.5, name="a")  # inertia: the geometry's, scaled to 0.5 kg
    s.add_body(BOX, mass=0.5, inertia=[1e-4, 2e-4, 3e-4], pose=[1, 0, 0, 1, 0, 0, 0], name="b")
    s.add_body(BOX, mass=0.5, inertia=SPD, pose=[2, 0, 0, 1, 0, 0, 0], name="c")
    m = s.build(0.01)
    props = BOX.mass_properties(1.0)
    wants = (props.inertia * 0.5 / props.mass, np.diag([1e-4, 2e-4, 3e-4]), SPD)
    for j, want in enumerate(wants):
        got = np.zeros((3, 3))
        for k in range(3):
            x = m.initial_state()
            x[m.nq + 6 * j + 3 + k] = 1.0
            # L = t x m v + R I omega with v = 0, R = identity
            got[:, k] = m.momentum(x).angular
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-15 * np.abs(want).max())
    x = m.initial_state()
    x[m.nq] = 1.0
    np.testing.assert_allclose(m.momentum(x).linear, [0.5, 0.0, 0.0], rtol=1e-15)


def test_halfspace_dynamic_body_needs_mass_and_inertia():
    s = sc.Scene(dim=3)
    with pytest.raises(ValueError, match="halfspace cloud is unbounded: give mass and inertia"):
        s.add_body(FLOOR, name="slab")
    with pytest.raises(ValueError, match="halfspace cloud is unbounded"):
        s.add_body(FLOOR, mass=1.0, name="slab")
    with pytest.raises(ValueError, match="halfspace cloud is unbounded"):
        s.add_body(FLOOR, inertia=SPD, name="slab")
    with pytest.raises(ValueError, match="halfspace cloud is unbounded"):
        s.add_body(FLOOR, density=1000.0, inertia=SPD, name="slab")
    assert (
        s.add_body(FLOOR, mass=1.0, inertia=SPD, pose=[0, 0, 0.1, 1, 0, 0, 0], name="slab")
        == "slab"
    )
    m = s.build(0.01)
    # the body frame of a half-space is its cloud frame (no centre of mass to move to)
    np.testing.assert_array_equal(m.initial_state()[:7], [0, 0, 0.1, 1, 0, 0, 0])


def _offset_square_2d():
    """A 4 x 2 cm rectangle with a corner at the cloud origin: centre of mass (0.02, 0.01)."""
    return sc.PointCloud.polygon([[0.0, 0.0], [0.04, 0.0], [0.04, 0.02], [0.0, 0.02]], 0.005)


def test_body_frame_is_the_centre_of_mass_2d():
    cloud = _offset_square_2d()
    com = cloud.mass_properties(1.0).com
    np.testing.assert_allclose(com, [0.02, 0.01], rtol=1e-15)
    pose = np.array([0.1, -0.05, 0.7])
    s = sc.Scene(dim=2)
    s.add_body(cloud, mass=0.1, pose=pose, velocity=[0.0, 0.0, 2.0], name="a")
    s.add_body(DISK, kind="kinematic", pose=[0.1, -0.03, 0.0], name="p")
    params = sc.ContactParams(eps=2.5e-5)
    s.add_contact("a", "p", params)
    m = s.build(0.01)
    x = m.initial_state()
    c, sn = np.cos(0.7), np.sin(0.7)
    want = pose[:2] + np.array([[c, -sn], [sn, c]]) @ com
    np.testing.assert_allclose(x[:2], want, rtol=0, atol=4 * U)
    assert x[2] == 0.7  # the cloud's axes
    # spinning about the centre of mass: no linear momentum, L = I_com omega
    props = cloud.mass_properties(1.0)
    assert np.all(m.momentum(x).linear == 0.0)
    assert m.momentum(x).angular == pytest.approx(2.0 * props.inertia * 0.1 / props.mass, rel=1e-14)
    # the contact geometry is the cloud at its given pose
    ref = sc.contact(cloud, pose, [0.0, 0.0, 0.0], DISK, [0.1, -0.03, 0.0], [0.0, 0.0, 0.0], params)
    assert ref.energy > 1e-4
    assert m.energy(x).contact == pytest.approx(ref.energy, rel=1e-12)


def test_body_frame_is_the_centre_of_mass_3d():
    offset = np.array([0.01, -0.02, 0.03, *Q])
    cloud = BOX.transformed(offset)  # centre of mass at (0.01, -0.02, 0.03)
    pose = np.array([0.2, 0.1, 0.0, *(np.array([1.0, 0.1, 0.0, 0.2]) / np.sqrt(1.05))])
    pose[2] = -0.002 - cloud.transformed(pose).points[:, 2].min()  # 2 mm into the floor
    s = sc.Scene(dim=3)
    s.add_body(cloud, mass=0.2, pose=pose, name="a")
    s.add_body(FLOOR, kind="static", name="floor")
    params = sc.ContactParams(eps=2.5e-5)
    s.add_contact("a", "floor", params)
    m = s.build(0.01)
    x = m.initial_state()
    want = pose[:3] + quat_to_matrix(pose[3:]) @ offset[:3]
    np.testing.assert_allclose(x[:3], want, rtol=0, atol=4 * U)
    np.testing.assert_array_equal(x[3:7], pose[3:])
    # mass properties in the cloud's axes: the box's rotated by the offset's rotation
    R = quat_to_matrix(Q)
    props = BOX.mass_properties(1.0)
    want_inertia = R @ props.inertia @ R.T * 0.2 / props.mass
    got = np.zeros((3, 3))
    for k in range(3):
        y = x.copy()
        y[m.nq + 3 + k] = 1.0
        got[:, k] = m.momentum(y).angular
    # with v = 0, L = R I omega (world frame; omega in the body frame)
    got = quat_to_matrix(pose[3:]).T @ got
    np.testing.assert_allclose(got, want_inertia, rtol=0, atol=1e-13 * np.abs(want_inertia).max())
    ref = sc.contact(cloud, pose, np.zeros(6), FLOOR, [0, 0, 0, 1, 0, 0, 0], np.zeros(6), params)
    assert ref.energy > 1e-4
    assert m.energy(x).contact == pytest.approx(ref.energy, rel=1e-12)


@pytest.mark.parametrize("explicit", [False, True])
def test_support_footprint_is_taken_relative_to_the_centre_of_mass(explicit):
    """A rectangle whose cloud origin is a corner slides without turning: the support
    friction of its footprint (the rectangle itself) has no torque about the centre of
    mass.  A footprint left in the cloud frame would sit 2.2 cm off and twist it."""
    cloud = _offset_square_2d()
    s = sc.Scene(dim=2)
    s.add_body(cloud, mass=0.1, pose=[0.0, 0.0, 0.4], velocity=[0.3, -0.2, 0.0], name="a")
    if explicit:  # a grid over the rectangle, in the cloud frame
        g = np.stack(
            np.meshgrid(np.linspace(0.002, 0.038, 10), np.linspace(0.002, 0.018, 5), indexing="ij"),
            axis=-1,
        ).reshape(-1, 2)
        s.add_support("a", friction=0.5, samples=g)
    else:
        s.add_support("a", friction=0.5)
    m = s.build(0.01)
    x = m.initial_state()
    x1 = m.step(x).x_next
    # the support friction decelerates the translation by ~ mu g h = 0.05 m/s
    dv = x1[m.nq : m.nq + 2] - x[m.nq : m.nq + 2]
    assert 0.03 < np.linalg.norm(dv) < 0.05
    v = x[m.nq : m.nq + 2]
    np.testing.assert_allclose(dv / np.linalg.norm(dv), -v / np.linalg.norm(v), rtol=0, atol=1e-12)
    # no torque: omega stays 0 up to the rounding of a symmetric sum
    assert abs(x1[m.nq + 2]) < 1e-12


# --------------------------------------------------------------------------------------------
# 3. retract and difference
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [2, 3])
def test_retract_and_difference_are_inverse(rng, dim):
    m = (_scene2() if dim == 2 else _scene3()).build(0.01)
    x = m.initial_state()
    for _ in range(5):
        d = rng.normal(size=2 * m.nv) * 0.3
        y = m.retract(x, d)
        assert y.shape == (m.nx,)
        np.testing.assert_allclose(m.difference(y, x), d, rtol=0, atol=1e-14)
        z = m.retract(y, rng.normal(size=2 * m.nv) * 0.3)
        np.testing.assert_allclose(m.retract(y, m.difference(z, y)), z, rtol=0, atol=1e-14)
    np.testing.assert_allclose(m.difference(x, x), np.zeros(2 * m.nv), rtol=0, atol=4 * U)
    np.testing.assert_array_equal(m.retract(x, np.zeros(2 * m.nv)), x)
    d = rng.normal(size=2 * m.nv)
    y = m.retract(x, d)
    np.testing.assert_array_equal(y[m.nq :], x[m.nq :] + d[m.nv :])  # velocities add
    if dim == 3:  # the quaternions stay unit
        for j in range(2):
            assert abs(np.linalg.norm(y[7 * j + 3 : 7 * j + 7]) - 1.0) < 4 * U
    else:  # 2D poses add too
        np.testing.assert_array_equal(y[: m.nq], x[: m.nq] + d[: m.nv])


# --------------------------------------------------------------------------------------------
# 4. errors
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"dim": 4}, ValueError, r"dim must be in 2\.\.3, got 4"),
        ({"dim": 1}, ValueError, r"dim must be in 2\.\.3, got 1"),
        ({"dim": 2.0}, TypeError, "dim must be an integer"),
        ({"dim": "3"}, TypeError, "dim must be an integer"),
        (
            {"dim": 3, "gravity": [0.0, -9.81]},
            ValueError,
            r"gravity must have shape \(3,\), got \(2,\)",
        ),
        (
            {"dim": 2, "gravity": [0.0, 0.0, -9.81]},
            ValueError,
            r"gravity must have shape \(2,\), got \(3,\)",
        ),
        ({"dim": 3, "gravity": [0.0, np.nan, 0.0]}, ValueError, "gravity must be finite"),
        ({"dim": 3, "gravity": [0j, 0, 0]}, TypeError, "gravity must be an array of real"),
    ],
)
def test_scene_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sc.Scene(**kwargs)


def _add(dim, **kw):
    s = sc.Scene(dim=dim)
    base = {"cloud": SQUARE if dim == 2 else BOX}
    base.update(kw)
    return s.add_body(**base)


@pytest.mark.parametrize(
    "dim, kw, exc, match",
    [
        (2, {"cloud": np.zeros((3, 2))}, TypeError, "cloud must be a PointCloud, got ndarray"),
        (3, {"cloud": SQUARE}, ValueError, "cloud is 2D but the scene is 3D"),
        (2, {"cloud": BOX}, ValueError, "cloud is 3D but the scene is 2D"),
        (
            2,
            {"kind": "fixed"},
            ValueError,
            r"kind must be one of \['dynamic', 'kinematic', "
            r"'static'\], got 'fixed'",
        ),
        (2, {"actuated": 1}, TypeError, "actuated must be a bool, got int"),
        (
            2,
            {"kind": "kinematic", "actuated": True},
            ValueError,
            "only dynamic bodies are actuated by force",
        ),
        (
            3,
            {"kind": "static", "actuated": True},
            ValueError,
            "only dynamic bodies are actuated by force",
        ),
        (2, {"name": ""}, TypeError, "name must be a non-empty str"),
        (2, {"name": 3}, TypeError, "name must be a non-empty str"),
        (2, {"pose": [0.0, 0.0]}, ValueError, r"pose must have shape \(3,\) for 2D"),
        (3, {"pose": [0.0, 0.0, 0.0]}, ValueError, r"pose must have shape \(7,\) for 3D"),
        (2, {"pose": [0.0, np.inf, 0.0]}, ValueError, "pose must be finite"),
        (3, {"pose": [0, 0, 0, 1.0, 0.1, 0, 0]}, ValueError, "pose must hold a unit quaternion"),
        (2, {"pose": "origin"}, TypeError, "pose must be an array of real numbers"),
        (2, {"velocity": [0.0, 0.0]}, ValueError, r"velocity must have shape \(3,\), got \(2,\)"),
        (3, {"velocity": np.zeros(7)}, ValueError, r"velocity must have shape \(6,\), got \(7,\)"),
        (2, {"velocity": [0.0, np.nan, 0.0]}, ValueError, "velocity must be finite"),
        (
            2,
            {"kind": "static", "velocity": [0.0, 0.0, 0.1]},
            ValueError,
            "a static body's velocity must be zero",
        ),
        (
            2,
            {"kind": "static", "mass": 1.0},
            ValueError,
            "mass, density and inertia apply to dynamic bodies only",
        ),
        (
            3,
            {"kind": "kinematic", "inertia": SPD},
            ValueError,
            "mass, density and inertia apply to dynamic bodies only",
        ),
        (
            2,
            {"kind": "kinematic", "density": 5.0},
            ValueError,
            "mass, density and inertia apply to dynamic bodies only",
        ),
        (2, {"mass": 1.0, "density": 5.0}, ValueError, "give mass or density, not both"),
        (2, {"mass": -1.0}, ValueError, "mass must be finite and > 0, got -1.0"),
        (2, {"mass": 0.0}, ValueError, "mass must be finite and > 0"),
        (3, {"mass": np.nan}, ValueError, "mass must be finite and > 0"),
        (2, {"mass": "1"}, TypeError, "mass must be a real number, got str"),
        (2, {"mass": True}, TypeError, "mass must be a real number, got bool"),
        (2, {"density": 0.0}, ValueError, "density must be finite and > 0"),
        (3, {"density": -5.0}, ValueError, "density must be finite and > 0"),
        (3, {"density": np.inf}, ValueError, "density must be finite and > 0"),
        (2, {"inertia": -1.0}, ValueError, "inertia must be finite and > 0"),
        (2, {"inertia": [1.0]}, TypeError, "inertia must be a real number"),
        (
            3,
            {"inertia": np.eye(2)},
            ValueError,
            r"inertia must have shape \(3, 3\) or \(3,\), "
            r"got \(2, 2\)",
        ),
        (3, {"inertia": np.ones(4)}, ValueError, r"inertia must have shape \(3, 3\) or \(3,\)"),
        (
            3,
            {"inertia": SPD + np.triu(np.full((3, 3), 1e-9), 1)},
            ValueError,
            "inertia must be finite and exactly symmetric",
        ),
        (
            3,
            {"inertia": np.diag([1.0, np.nan, 1.0])},
            ValueError,
            "inertia must be finite and exactly symmetric",
        ),
        (3, {"inertia": [1e-5, -1e-5, 1e-5]}, ValueError, "inertia must be positive definite"),
        (
            3,
            {"inertia": np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])},
            ValueError,
            "inertia must be positive definite",
        ),
        (3, {"inertia": np.zeros((3, 3))}, ValueError, "inertia must be positive definite"),
        (3, {"inertia": "diag"}, TypeError, "inertia must be an array of real numbers"),
    ],
)
def test_add_body_arguments(dim, kw, exc, match):
    with pytest.raises(exc, match=match):
        _add(dim, **kw)


def test_add_body_duplicate_name_and_failed_adds_leave_the_scene_unchanged():
    s = sc.Scene(dim=2)
    s.add_body(SQUARE, name="a")
    with pytest.raises(ValueError, match="a body named 'a' already exists"):
        s.add_body(DISK, name="a")
    with pytest.raises(ValueError, match="mass must be finite"):
        s.add_body(DISK, mass=-1.0, name="b")
    # neither failed call added a body
    assert s.add_body(DISK, kind="kinematic", pose=[0.1, 0.0, 0.0], name="b") == "b"
    assert s.build(0.01).body_names == ("a", "b")


def _pairs_scene():
    s = sc.Scene(dim=2)
    s.add_body(SQUARE, name="d1")
    s.add_body(DISK, pose=[0.1, 0, 0], name="d2")
    s.add_body(DISK, kind="kinematic", pose=[0.2, 0, 0], name="k1")
    s.add_body(DISK, kind="kinematic", pose=[0.3, 0, 0], name="k2")
    s.add_body(WALL, kind="static", name="s1")
    s.add_body(WALL, kind="static", pose=[0, 0.1, 0], name="s2")
    s.add_contact("d1", "d2")
    return s


@pytest.mark.parametrize(
    "a, b, exc, match",
    [
        ("d1", "d1", ValueError, r"a body cannot be in contact with itself \('d1'\)"),
        (2, "k1", ValueError, r"a body cannot be in contact with itself \('k1'\)"),
        ("s1", "s2", ValueError, "a contact between two static bodies has no effect"),
        (
            "k1",
            "s1",
            ValueError,
            "a contact between a kinematic and a static body has no effect: neither is pushed",
        ),
        ("s2", "k2", ValueError, "a contact between a static and a kinematic body"),
        ("k1", "k2", ValueError, "a contact between a kinematic and a kinematic body"),
        ("d1", "d2", ValueError, "the contact between 'd1' and 'd2' already exists"),
        ("d2", "d1", ValueError, "the contact between 'd2' and 'd1' already exists"),
        (0, 1, ValueError, "the contact between 'd1' and 'd2' already exists"),
        ("d1", "nope", ValueError, "body_b: no body named 'nope'"),
        ("ghost", "d1", ValueError, "body_a: no body named 'ghost'"),
        (0, 6, ValueError, r"body_b: index 6 out of range \(the scene has 6 bodies\)"),
        (-1, 0, ValueError, "body_a: index -1 out of range"),
        (0.0, 1, TypeError, "body_a must be a body name or index, got float"),
        (0, True, TypeError, "body_b must be a body name or index, got bool"),
        (None, 1, TypeError, "body_a must be a body name or index, got NoneType"),
    ],
)
def test_add_contact_arguments(a, b, exc, match):
    s = _pairs_scene()
    with pytest.raises(exc, match=match):
        s.add_contact(a, b)
    assert len(s.build(0.01).param_names) == 2 * 2 + 3  # only the first contact


def test_add_contact_params():
    s = _pairs_scene()
    with pytest.raises(TypeError, match="params must be a ContactParams, got dict"):
        s.add_contact("d1", "k1", {"stiffness": 1.0})
    # allowed pairs: dynamic with anything else
    s.add_contact("d1", "k1", sc.ContactParams(stiffness=500.0))
    s.add_contact("s1", "d2")
    s.add_contact(np.int64(1), np.int32(2))
    m = s.build(0.01)
    assert m.param_names[4:] == (
        "contact(d1,d2).stiffness",
        "contact(d1,d2).damping",
        "contact(d1,d2).friction",
        "contact(d1,k1).stiffness",
        "contact(d1,k1).damping",
        "contact(d1,k1).friction",
        "contact(s1,d2).stiffness",
        "contact(s1,d2).damping",
        "contact(s1,d2).friction",
        "contact(d2,k1).stiffness",
        "contact(d2,k1).damping",
        "contact(d2,k1).friction",
    )


def test_add_support_arguments():
    s = sc.Scene(dim=2)
    s.add_body(SQUARE, name="d")
    s.add_body(DISK, kind="kinematic", pose=[0.1, 0, 0], name="k")
    s.add_body(WALL, kind="static", name="w")
    raw = sc.PointCloud(SQUARE.points, SQUARE.normals, SQUARE.weights)  # no recorded shape
    s.add_body(raw, mass=0.1, inertia=1e-5, pose=[0.3, 0, 0], name="raw")
    with pytest.raises(
        ValueError, match="support friction acts on dynamic bodies, 'k' is kinematic"
    ):
        s.add_support("k", friction=0.3)
    with pytest.raises(ValueError, match="'w' is static"):
        s.add_support("w", friction=0.3)
    with pytest.raises(ValueError, match="no body named 'x'"):
        s.add_support("x", friction=0.3)
    with pytest.raises(ValueError, match="friction must be finite and >= 0"):
        s.add_support("d", friction=-0.1)
    with pytest.raises(TypeError, match="friction must be a real number"):
        s.add_support("d", friction=None)
    with pytest.raises(ValueError, match="gravity must be finite and > 0"):
        s.add_support("d", friction=0.3, gravity=0.0)
    with pytest.raises(ValueError, match="slip_velocity must be finite and > 0"):
        s.add_support("d", friction=0.3, slip_velocity=-1.0)
    for bad, shape in (
        (np.zeros((4, 3)), r"\(4, 3\)"),
        (np.zeros(2), r"\(2,\)"),
        (np.zeros((0, 2)), r"\(0, 2\)"),
        (np.zeros((2, 2, 2)), r"\(2, 2, 2\)"),
    ):
        with pytest.raises(
            ValueError, match=r"samples must have shape \(k, 2\), k >= 1, got " + shape
        ):
            s.add_support("d", friction=0.3, samples=bad)
    with pytest.raises(ValueError, match="samples must be finite"):
        s.add_support("d", friction=0.3, samples=[[0.0, np.nan]])
    with pytest.raises(ValueError, match="support samples=None needs a cloud built by"):
        s.add_support("raw", friction=0.3)
    s.add_support("raw", friction=0.3, samples=[[0.0, 0.0], [0.01, 0.0]])
    s.add_support("d", friction=0.0)  # zero friction is allowed
    with pytest.raises(ValueError, match="'d' already has a support"):
        s.add_support("d", friction=0.3)
    assert s.build(0.01).param_names[-2:] == ("d.support_friction", "raw.support_friction")
    s3 = sc.Scene(dim=3)
    s3.add_body(BOX, name="box")
    with pytest.raises(ValueError, match="support friction is planar: 2D scenes only"):
        s3.add_support("box", friction=0.3)


@pytest.mark.parametrize(
    "dt, exc, match",
    [
        (0.0, ValueError, "dt must be finite and > 0, got 0.0"),
        (-0.01, ValueError, "dt must be finite and > 0"),
        (np.nan, ValueError, "dt must be finite and > 0"),
        (np.inf, ValueError, "dt must be finite and > 0"),
        ("0.01", TypeError, "dt must be a real number, got str"),
        (None, TypeError, "dt must be a real number"),
        ([0.01], TypeError, "dt must be a real number"),
    ],
)
def test_build_dt(dt, exc, match):
    with pytest.raises(exc, match=match):
        _scene2().build(dt)


def test_build_needs_a_moving_body():
    with pytest.raises(ValueError, match="the scene has no bodies"):
        sc.Scene(dim=2).build(0.01)
    s = sc.Scene(dim=2)
    s.add_body(WALL, kind="static")
    with pytest.raises(ValueError, match="the scene has no moving body"):
        s.build(0.01)
    # np.float32 / int dt are accepted and stored as float
    m = _scene2().build(np.float32(0.005))
    assert type(m.dt) is float


@pytest.fixture(scope="module")
def model3():
    return _scene3().build(0.002)


@pytest.fixture(scope="module")
def model2():
    return _scene2().build(0.005)


def _bad_quaternion(m):
    """A state whose quaternion is 1e-5 off unit norm: beyond the 1e-6 that is normalised."""
    x = m.initial_state()
    x[3:7] *= 1.0 + 1e-5
    return x


@pytest.mark.parametrize(
    "case, exc, match",
    [
        ("x_shape", ValueError, r"x must have shape \(26,\), got \(25,\)"),
        # (1, 26) is a batch of one state (tests/test_batching.py)
        ("x_2d", ValueError, r"x must have shape \(\.\.\., 26\), got \(1, 25\)"),
        ("x_nan", ValueError, r"x must be finite \(NaN or inf found\)"),
        ("x_inf", ValueError, r"x must be finite"),
        ("x_complex", TypeError, "x must be an array of real numbers"),
        ("x_quat", ValueError, r"x: the quaternion of 'box' is not unit"),
        ("u_shape", ValueError, r"u must have shape \(12,\), got \(6,\)"),
        ("u_none", ValueError, r"u must have shape \(12,\), got None"),
        ("u_nan", ValueError, r"u must be finite \(NaN or inf found\)"),
        ("u_str", TypeError, "u must be an array of real numbers"),
        ("order_3", ValueError, r"order must be in 0\.\.2, got 3"),
        ("order_neg", ValueError, r"order must be in 0\.\.2, got -1"),
        ("order_float", TypeError, "order must be an integer, got float"),
        ("order_bool", TypeError, "order must be an integer, got bool"),
        ("params_int", TypeError, "params must be a bool, got int"),
        ("params_none", TypeError, "params must be a bool, got NoneType"),
        ("threads", ValueError, r"num_threads must be in 1\.\.256, got 0"),
    ],
)
def test_step_arguments(model3, case, exc, match):
    m = model3
    x, u = m.initial_state(), np.zeros(m.nu)
    kw = {"x": x, "u": u}
    what, _, how = case.partition("_")
    if case == "x_shape":
        kw["x"] = x[:-1]
    elif case == "x_2d":
        kw["x"] = x[None, :-1]
    elif case == "x_nan":
        x[m.nq] = np.nan
    elif case == "x_inf":
        x[0] = -np.inf
    elif case == "x_complex":
        kw["x"] = x.astype(complex)
    elif case == "x_quat":
        kw["x"] = _bad_quaternion(m)
    elif case == "u_shape":
        kw["u"] = u[:6]
    elif case == "u_none":
        kw["u"] = None
    elif case == "u_nan":
        u[3] = np.nan
    elif case == "u_str":
        kw["u"] = ["a"] * 12
    elif what == "order":
        kw["order"] = {"3": 3, "neg": -1, "float": 1.0, "bool": True}[how]
    elif what == "params":
        kw["params"] = {"int": 1, "none": None}[how]
    elif what == "threads":
        kw["num_threads"] = 0
    before = {k: np.array(v, copy=True) for k, v in kw.items() if isinstance(v, np.ndarray)}
    with pytest.raises(exc, match=match):
        m.step(**kw)
    for k, v in before.items():  # inputs untouched, even on the error path
        np.testing.assert_array_equal(kw[k], v)


def test_quaternion_tolerance(model3):
    """Quaternions within 1e-9 of unit norm are accepted (and normalized by the step), those
    within 1e-6 normalised in a copy first, farther ones refused."""
    m = model3
    x = m.initial_state()
    x[3:7] *= 1.0 + 5e-10
    r = m.step(x, np.zeros(m.nu))
    assert abs(np.linalg.norm(r.x_next[3:7]) - 1.0) < 4 * U
    x = m.initial_state()
    x[3:7] *= 1.0 + 5e-7
    r = m.step(x, np.zeros(m.nu))
    assert abs(np.linalg.norm(r.x_next[3:7]) - 1.0) < 4 * U
    with pytest.raises(ValueError, match="the quaternion of 'box' is not unit"):
        m.energy(_bad_quaternion(m))
    with pytest.raises(ValueError, match="the quaternion of 'box' is not unit"):
        m.retract(_bad_quaternion(m), np.zeros(24))


def test_quaternion_check_names_the_body_in_short_and_long_states():
    """States of up to 64 entries are checked with Python floats, longer ones with NumPy:
    both accept a unit quaternion to 1e-9 and name the body whose quaternion is not."""
    for nbody in (2, 6):  # nx = 26 and 78
        s = sc.Scene(dim=3)
        for k in range(nbody):
            s.add_body(
                sc.PointCloud.box([0.1, 0.1, 0.1], 0.05),
                mass=1.0,
                pose=[0.3 * k, 0, 0, 1, 0, 0, 0],
                name=f"b{k}",
            )
        m = s.build(dt=0.01)
        x = m.initial_state()
        x[7 * (nbody - 1) + 3 : 7 * nbody] *= 1.0 + 5e-10
        assert m._as_state(x) is x
        x[7 * (nbody - 1) + 3] += 1e-6
        with pytest.raises(ValueError, match=f"the quaternion of 'b{nbody - 1}' is not unit"):
            m.step(x)


def test_python_and_c_quaternion_checks_agree_at_the_tolerance(model3):
    """The Python layer's quaternion test (list and array forms of first_non_unit) and the
    C core's state check draw the line at the same norms, just either side of UNIT_TOL:
    the fast step path leaves the check to C, the keyword path checks in Python first;
    both then take the quaternions past the line (within 1e-6) as normalised ones."""
    from softcontact._validate import UNIT_TOL, first_non_unit

    m = model3
    x0 = m.initial_state()
    q0 = x0[3:7] / np.linalg.norm(x0[3:7])
    verdicts = []
    for rel in (0.5, 0.99, 0.999999, 1.000001, 1.01, 2.0):
        for sign in (1.0, -1.0):
            x = x0.copy()
            x[3:7] = q0 * (1.0 + sign * rel * UNIT_TOL)
            as_list = first_non_unit([x[3:7].tolist()])
            as_array = first_non_unit(x[3:7])
            assert as_list == as_array
            try:
                _core.step(m._cap, x, np.zeros(m.nu))
                c_ok = True
            except ValueError as exc:
                assert "is not unit" in str(exc)
                c_ok = False
            assert c_ok == (as_list is None)
            fast = m.step(x, np.zeros(m.nu))
            keyword = m.step(x, np.zeros(m.nu), dense=True)
            assert np.all(np.isfinite(fast.x_next)) and np.all(np.isfinite(keyword.x_next))
            verdicts.append(as_list is None)
    assert any(verdicts) and not all(verdicts)  # both sides of the line were reached


def test_state_check_accepts_huge_finite_values(model2):
    """The finite test of states and controls passes huge finite values on to the valid
    range's test (no overflow in a fast path) and finds one non-finite entry, in short and
    in long vectors."""
    m = model2
    x = np.full(m.nx, 1e200)
    with pytest.raises(ValueError, match=r"x: the velocity of .* within \[-1e\+08, 1e\+08\]"):
        m._as_state(x)
    u = np.full(m.nu, -1e300)
    with pytest.raises(ValueError, match=r"u: the control of .* within"):
        m._as_control(u)
    x[-1] = np.inf
    with pytest.raises(ValueError, match=r"x must be finite \(NaN or inf found\)"):
        m._as_state(x)
    u[0] = np.nan
    with pytest.raises(ValueError, match=r"u must be finite \(NaN or inf found\)"):
        m._as_control(u)
    long = np.full(1000, 1e308)
    assert _all_finite(long)
    long[999] = -np.inf
    assert not _all_finite(long)


def test_other_model_methods_check_their_arguments(model2, model3):
    m = model2
    x = m.initial_state()
    with pytest.raises(ValueError, match=r"x_next must have shape \(18,\), got \(17,\)"):
        m.inverse_dynamics(x, x[:-1])
    with pytest.raises(ValueError, match="x_next must be finite"):
        m.inverse_dynamics(x, np.full(18, np.nan))
    with pytest.raises(ValueError, match=r"x must have shape \(18,\)"):
        m.inverse_dynamics(x[:3], x)
    with pytest.raises(ValueError, match=r"x must have shape \(18,\)"):
        m.energy(np.zeros(3))
    with pytest.raises(ValueError, match="x must be finite"):
        m.momentum(np.full(18, np.inf))
    with pytest.raises(ValueError, match=r"dx must have shape \(18,\), got \(17,\)"):
        m.retract(x, np.zeros(17))
    with pytest.raises(ValueError, match=r"x1 must have shape \(18,\)"):
        m.difference(np.zeros(3), x)
    with pytest.raises(ValueError, match="x0 must be finite"):
        m.difference(x, np.full(18, np.nan))
    with pytest.raises(ValueError, match=r"x_next: the quaternion of 'box' is not unit"):
        model3.inverse_dynamics(model3.initial_state(), _bad_quaternion(model3))


# --------------------------------------------------------------------------------------------
# 5. inputs
# --------------------------------------------------------------------------------------------
def test_inputs_are_never_modified_and_lists_are_accepted(model3):
    m = model3
    x = m.initial_state()
    u = np.linspace(-0.1, 0.1, m.nu)
    xc, uc = x.copy(), u.copy()
    r = m.step(x, u, order=2, params=True)
    lst = m.step(x.tolist(), u.tolist(), order=2, params=True)
    for field in sc.StepResult._fields:
        np.testing.assert_array_equal(getattr(lst, field), getattr(r, field), err_msg=field)
    Ub = np.tile(u, (2, 3, 1))
    Uc = Ub.copy()
    m.rollout(x, Ub, order=1)
    m.inverse_dynamics(x, r.x_next)
    m.energy(x)
    m.momentum(x)
    d = np.ones(2 * m.nv) * 0.01
    dc = d.copy()
    m.retract(x, d)
    m.difference(r.x_next, x)
    for a, b in ((x, xc), (u, uc), (Ub, Uc), (d, dc)):
        np.testing.assert_array_equal(a, b)
    # read-only, Fortran-order and strided inputs give the same results
    xr = x.copy()
    xr.flags.writeable = False
    np.testing.assert_array_equal(m.step(xr, u).x_next, r.x_next)
    xs = np.repeat(x, 2)[::2]
    np.testing.assert_array_equal(m.step(xs, u).x_next, r.x_next)
    Uf = np.asfortranarray(Ub)
    np.testing.assert_array_equal(m.rollout(x, Uf).states, m.rollout(x, Ub).states)


def test_scene_copies_its_inputs():
    pose = np.array([0.0, 0.0, 0.3])
    vel = np.array([0.1, 0.0, 0.0])
    grav = np.array([0.0, -1.0])
    samples = np.array([[0.0, 0.0], [0.01, 0.0]])
    inertia = SPD.copy()
    copies = [a.copy() for a in (pose, vel, grav, samples, inertia)]
    s = sc.Scene(dim=2, gravity=grav)
    s.add_body(SQUARE, mass=0.1, pose=pose, velocity=vel, name="a")
    s.add_support("a", friction=0.3, samples=samples)
    s3 = sc.Scene(dim=3)
    s3.add_body(BOX, mass=0.1, inertia=inertia, name="b")
    for a, c in zip((pose, vel, grav, samples, inertia), copies, strict=True):
        np.testing.assert_array_equal(a, c)  # not modified ...
    m = s.build(0.01)
    m3 = s3.build(0.01)
    before, before3 = m.step(m.initial_state()).x_next, m3.step(m3.initial_state()).x_next
    for a in (pose, vel, grav, samples, inertia):
        a[...] = 7.0  # ... and not aliased
    np.testing.assert_array_equal(s.build(0.01).step(m.initial_state()).x_next, before)
    np.testing.assert_array_equal(s3.build(0.01).step(m3.initial_state()).x_next, before3)


# ---- stability limits and the build warning -----------------------------------------------
def _cube_scene(mu=0.5):
    s = sc.Scene(dim=3)
    s.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    s.add_body(
        sc.PointCloud.box([0.05, 0.05, 0.05], 0.01), pose=[0, 0, 0.05, 1, 0, 0, 0], name="box"
    )
    s.add_contact("box", "floor", sc.ContactParams(friction=mu))
    return s


def test_stability_limits_follow_their_formulas():
    """The bounds of Scene.stability_limits against their formulas computed here from the
    cube's mass (1 kg), inertia (m a^2 / 6, a = 0.1 m) and farthest sample (a sqrt(3) / 2):
    m_eff = 1 / (1/m + r^2 / I)."""
    s = _cube_scene()
    p = sc.ContactParams()
    m, inertia, r2 = 1.0, 1.0 * 0.1**2 / 6, 3 * 0.05**2
    m_eff = 1 / (1 / m + r2 / inertia)
    lim = {x.term: x for x in s.stability_limits("euler")}
    assert set(lim) == {"contact stiffness and damping", "friction (stick regime)"}
    k, c = p.stiffness, p.damping
    np.testing.assert_allclose(
        lim["contact stiffness and damping"].dt_max,
        (-c + np.sqrt(c * c + 4 * k * m_eff)) / k,
        rtol=1e-9,
    )
    np.testing.assert_allclose(
        lim["friction (stick regime)"].dt_max,
        2 * p.slip_velocity * m_eff / (p.friction * 9.81),
        rtol=1e-9,
    )
    assert lim["friction (stick regime)"].where == "contact(box,floor)"
    (imp,) = s.stability_limits("implicit")
    assert imp.term == "contact stiffness"
    # the damper implicit: dt^2 k < 4 m_eff + 2 dt c
    np.testing.assert_allclose(imp.dt_max, (c + np.sqrt(c * c + 4 * k * m_eff)) / k, rtol=1e-9)
    limits = s.stability_limits()
    assert [x.dt_max for x in limits] == sorted(x.dt_max for x in limits)
    with pytest.raises(ValueError, match="integrator must be one of"):
        s.stability_limits("rk4")


def test_build_warns_beyond_the_stability_limits():
    s = _cube_scene()
    with pytest.warns(sc.SoftContactWarning) as rec:
        s.build(0.002)
    (w,) = rec
    msg = str(w.message)
    assert "dt = 0.002 s exceeds the stability limit of integrator='euler'" in msg
    assert "friction (stick regime) of contact(box,floor) needs dt < 0.000741 s" in msg
    assert "integrator='implicit'" in msg
    assert w.filename == __file__  # attributed to the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.build(0.0005)  # within every limit
        s.build(0.01, integrator="implicit")
        _cube_scene(mu=0.0).build(0.001)  # no friction: the spring-damper's 8.5 ms
    with pytest.warns(sc.SoftContactWarning, match="contact stiffness of contact"):
        s.build(0.05, integrator="implicit")


def test_build_warns_for_support_friction():
    s = sc.Scene(dim=2)
    s.add_body(sc.PointCloud.box([0.05, 0.05], 0.01), mass=0.1, name="block")
    s.add_support("block", friction=0.3, slip_velocity=0.01)
    (lim,) = s.stability_limits("euler")
    assert (lim.where, lim.term) == ("block", "support friction")
    # translation 2 v_s / (mu g) = 6.8 ms; rotation 2 v_s I / (mu m g <r^2>) with the
    # footprint grid's <r^2> just under the square's I / m (the grid stops short of the
    # edges): slightly above it
    np.testing.assert_allclose(lim.dt_max, 2 * 0.01 / (0.3 * 9.81), rtol=1e-9)
    with pytest.warns(sc.SoftContactWarning, match="support friction of block"):
        s.build(0.01)
    assert s.stability_limits("implicit") == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.build(0.01, integrator="implicit")
        s.build(0.005)


def test_push_t_task_builds_within_its_limits():
    from softcontact.tasks import push_t

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        task = push_t.make(seed=0)
    assert task.dt == 0.005


def test_model_scene_is_a_copy_that_builds_the_model_again():
    scene = sc.Scene(dim=3)
    scene.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    scene.add_body(
        sc.PointCloud.box([0.05, 0.04, 0.03], 0.01),
        mass=1.0,
        pose=[0, 0, 0.031, 1, 0, 0, 0],
        velocity=[0.1, 0, 0, 0, 0, 0.5],
        name="box",
    )
    scene.add_contact("box", "floor", friction=0.7)
    model = scene.build(0.002, "implicit")
    copy = model.scene
    assert isinstance(copy, sc.Scene) and repr(copy) == repr(scene)
    copy.add_body(sc.PointCloud.sphere(0.01, 0.01), mass=0.1, pose=[1, 1, 1, 1, 0, 0, 0])
    assert repr(model.scene) == repr(scene)  # a new copy each time, the model unchanged
    again = model.scene.build(model.dt, model.integrator)
    U = np.zeros((20, model.nu))
    assert np.array_equal(
        again.rollout(again.initial_state(), U).states,
        model.rollout(model.initial_state(), U).states,
    )


def test_add_body_com_places_the_body_frame():
    scene = sc.Scene(dim=3)
    box = sc.PointCloud.box([0.05, 0.04, 0.03], 0.02)
    scene.add_body(
        box,
        mass=2.0,
        inertia=[0.01, 0.02, 0.03],
        com=[0.01, 0, 0],
        pose=[1, 0, 0, 0, 0, 0, 1],
        name="b",
    )
    model = scene.build(0.002, "implicit")
    x = model.initial_state()
    # the body frame at the given centre of mass, turned 180 degrees about z with the pose
    assert np.allclose(x[:3], [0.99, 0, 0], rtol=0, atol=1e-15)
    assert np.allclose(model.scene._bodies[0].cloud.points, box.points - [0.01, 0, 0])
    raises_naming(ValueError, "com", lambda: scene.add_body(box, mass=1.0, com=[0, 0, 0]))
    raises_naming(
        ValueError, "com", lambda: scene.add_body(box, mass=1.0, inertia=[1, 1, 1], com=[0, 0])
    )
    raises_naming(ValueError, "com", lambda: scene.add_body(box, kind="kinematic", com=[0, 0, 0]))
