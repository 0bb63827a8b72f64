"""MuJoCo models in and out (softcontact.mjcf): MJCF to Scene, Scene to MJCF, states and
the replay in MuJoCo's renderer.

What is proven here:

* a scene written as MJCF and loaded back builds a model whose rollouts are the
  original's bit for bit (box, sphere, mesh, a kinematic capsule, an actuated body,
  fitted and given contact parameters, on a half-space);
* a hand-written MJCF (box, sphere and an inline mesh above a plane) loads into a scene
  whose bodies come to rest at the heights MuJoCo's geometry gives them, within the
  soft contact's few millimetres;
* MuJoCo's collision filtering (contype/conaffinity, priority, <pair>, <exclude>) becomes
  the scene's contact pairs; cylinders and ellipsoids are sampled on their exact
  surfaces; welded children and mocap bodies load; other joints are refused;
* the state conversion is exact both ways, and MuJoCo stepping the exported model from a
  converted state gives softcontact's step (no contact) to rounding;
* the benchmark's box scene from Scene.to_mjcf is its former hand-written MuJoCo model.
"""

import math
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import raises_naming, subprocess_env

mujoco = pytest.importorskip("mujoco")

import softcontact as sc  # noqa: E402
from softcontact import mjcf  # noqa: E402

SPACING = 0.01
DT = 0.002


def _octahedron(r, centre):
    v = np.array([[r, 0, 0], [-r, 0, 0], [0, r, 0], [0, -r, 0], [0, 0, r], [0, 0, -r]], float)
    faces = []
    for a in (0, 1):
        for b in (2, 3):
            for c in (4, 5):
                n = np.cross(v[b] - v[a], v[c] - v[a])
                faces.append([a, b, c] if n @ (v[a] + v[b] + v[c]) > 0 else [a, c, b])
    return v + centre, np.array(faces)


def _scene():
    """Floor, a moving box, an actuated rotated ball, an off-centre mesh and a kinematic
    capsule; fitted and given contact parameters."""
    verts, faces = _octahedron(0.05, [0.01, 0.0, 0.003])  # centroid off the origin
    scene = sc.Scene(dim=3)
    scene.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    scene.add_body(
        sc.PointCloud.box([0.05, 0.04, 0.03], SPACING),
        mass=1.0,
        pose=[0, 0, 0.031, 1, 0, 0, 0],
        velocity=[0.1, 0, 0, 0, 0, 0.5],
        name="box",
    )
    scene.add_body(
        sc.PointCloud.sphere(0.04, SPACING),
        mass=0.5,
        pose=[0.2, 0, 0.045, 0.6, 0.8, 0, 0],
        actuated=True,
        name="ball",
    )
    scene.add_body(
        sc.PointCloud.from_mesh(verts, faces, SPACING),
        density=500.0,
        pose=[-0.2, 0, 0.1, 1, 0, 0, 0],
        velocity=[0, 0, -0.2, 1.0, 0, 0],
        name="octa",
    )
    scene.add_body(
        sc.PointCloud.capsule(0.02, 0.03, SPACING),
        kind="kinematic",
        pose=[0.0, 0.12, 0.05, 1, 0, 0, 0],
        name="pusher",
    )
    scene.add_contact("box", "floor", friction=0.7)
    scene.add_contact("ball", "floor", friction=0.7)
    scene.add_contact("octa", "floor", sc.ContactParams(friction=0.6))
    scene.add_contact("box", "ball", friction=0.3)
    scene.add_contact("box", "pusher", friction=0.4)
    return scene


def _build(scene, dt=DT, integrator="implicit"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.SoftContactWarning)
        return scene.build(dt, integrator)


# --------------------------------------------------------------------------------------------
# scene -> MJCF -> scene
# --------------------------------------------------------------------------------------------
def test_round_trip_rolls_out_bit_for_bit():
    scene = _scene()
    before = repr(scene)
    text = scene.to_mjcf(DT)
    assert repr(scene) == before  # the scene is not changed
    back = sc.Scene.from_mjcf(text, SPACING, keyframe="initial")
    assert back.timestep == DT
    m1, m2 = _build(scene), _build(back)
    assert m2.body_names == m1.body_names and m2.moving == m1.moving
    assert m2.control_names == m1.control_names  # actuated ball, kinematic pusher
    assert m2.param_names == m1.param_names
    assert m2.contact_params == m1.contact_params
    assert np.array_equal(m2.initial_state(), m1.initial_state())
    rng = np.random.default_rng(0)
    U = 0.05 * rng.normal(size=(250, m1.nu))
    r1 = m1.rollout(m1.initial_state(), U)
    r2 = m2.rollout(m2.initial_state(), U)
    assert (r1.status == 0).all()
    assert np.array_equal(r1.states, r2.states)
    # the bodies moved and touched: the box slid to a stop on the floor, the mesh fell
    assert np.ptp(r1.states[:, 0]) > 1e-3 and np.ptp(r1.states[:, 16]) > 0.005
    assert r1.states[:, 2].min() > 0.025
    # without the exact data MJCF rounds (float32 mesh vertices recentred on MuJoCo's
    # principal axes, inertias as principal moments and axes): the same bodies to rounding
    # (the mesh sampled in other axes)
    rough = _build(
        sc.Scene.from_mjcf(scene.to_mjcf(DT, exact=False), SPACING, keyframe="initial")
    ).scene
    for b1, b3 in zip(scene._bodies, rough._bodies, strict=True):
        assert b3.name == b1.name and b3.mass == b1.mass
        assert np.allclose(b3.inertia, b1.inertia, rtol=0, atol=1e-12 * np.abs(b1.inertia).max())
        assert np.allclose(b3.pose, b1.pose, rtol=0, atol=1e-15)
        assert b3.cloud.area == pytest.approx(b1.cloud.area, rel=1e-6)


def test_round_trip_through_a_file_and_load(tmp_path):
    scene = _scene()
    path = tmp_path / "scene.xml"
    path.write_text(scene.to_mjcf(DT))
    loaded, dt = mjcf.load(path, SPACING)
    assert dt == DT and loaded.timestep == DT
    m = _build(loaded, dt)
    # without a keyframe: the MJCF's poses at rest (the quaternions as MuJoCo normalizes them)
    x0 = _build(scene).initial_state()
    assert np.allclose(m.initial_state()[: m.nq], x0[: m.nq], rtol=0, atol=1e-15)
    assert not m.initial_state()[m.nq :].any()
    # and the same scene from the path given as a string, and from the compiled model
    assert repr(sc.Scene.from_mjcf(str(path), SPACING)) == repr(loaded)
    mj = mujoco.MjModel.from_xml_path(str(path))
    qpos0 = np.array(mj.qpos0)
    assert repr(sc.Scene.from_mujoco(mj, SPACING)) == repr(loaded)
    assert np.array_equal(mj.qpos0, qpos0)  # the model is not changed


# --------------------------------------------------------------------------------------------
# a hand-written MJCF
# --------------------------------------------------------------------------------------------
HAND = """<mujoco>
  <compiler angle="radian"/>
  <option timestep="0.005" gravity="0 0 -9.81"/>
  <asset>
    <mesh name="tet" vertex="0 0 0  0.08 0 0  0 0.08 0  0 0 0.08"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1" friction="0.8"/>
    <body name="box" pos="0 0 0.1" euler="0 0 0.3">
      <freejoint/>
      <geom type="box" size="0.05 0.04 0.03" density="800"/>
    </body>
    <body name="ball" pos="0.3 0 0.2">
      <freejoint/>
      <geom type="sphere" size="0.04" mass="0.3"/>
    </body>
    <body name="tet" pos="-0.3 0 0.15">
      <freejoint/>
      <geom type="mesh" mesh="tet" density="1000"/>
    </body>
  </worldbody>
</mujoco>"""


def test_handwritten_mjcf_comes_to_rest_at_mujocos_heights():
    spacing = 0.005
    scene = sc.Scene.from_mjcf(HAND, spacing)
    assert scene.timestep == 0.005
    # the implicit step is stable at MuJoCo's 5 ms for every contact of the scene
    limit = scene.stability_limits("implicit", scene.timestep)[0].dt_max
    assert limit > 2 * scene.timestep
    model = scene.build(scene.timestep, "implicit")
    assert model.moving == ("box", "ball", "tet")
    X = model.rollout(model.initial_state(), np.zeros((600, 0))).states  # 3 s
    # the rest height of each centre of mass above the floor that MuJoCo's geometry gives:
    # the box's half height, the sphere's radius, the mesh's lowest vertex (the tet rests
    # on the face it starts on), from the compiled model
    m = mujoco.MjModel.from_xml_string(HAND)
    tet = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "tet")
    g = int(np.flatnonzero(np.asarray(m.geom_bodyid) == tet)[0])
    mid = int(m.geom_dataid[g])
    verts = np.asarray(m.mesh_vert[m.mesh_vertadr[mid] : m.mesh_vertadr[mid] + m.mesh_vertnum[mid]])
    R = np.empty(9)
    mujoco.mju_quat2Mat(R, m.geom_quat[g])
    z_low = (verts @ R.reshape(3, 3).T + m.geom_pos[g])[:, 2].min() - m.body_ipos[tet][2]
    expected = {"box": 0.03, "ball": 0.04, "tet": -z_low}
    assert expected["tet"] == pytest.approx(0.02, abs=1e-6)  # a quarter of its height
    for j, name in enumerate(model.moving):
        z = X[-1, 7 * j + 2]
        # the soft contact holds each body within 2 mm of touching (measured: box 1.3 mm
        # above, ball 0.9 mm into, tet 1.5 mm above the floor)
        assert abs(z - expected[name]) < 2e-3, (name, z, expected[name])
        if name != "ball":  # upright (the ball may have rolled)
            # on its face (the tet leans 0.015 rad: its centre of mass is not over the
            # centroid of its bottom samples, and the soft contact balances the moment
            # with a depth that varies across the face)
            tilt = 2 * math.asin(min(1.0, float(np.linalg.norm(X[-1, 7 * j + 4 : 7 * j + 6]))))
            assert tilt < 0.03, (name, tilt)
        assert np.all(np.abs(X[-300:, 7 * j + 2] - z) < 1e-3)  # at rest over the last 1.5 s
    assert np.abs(X[-1, model.nq :]).max() < 0.01


def test_loaded_primitives_are_the_constructors_clouds():
    scene = sc.Scene.from_mjcf(HAND, 0.01)
    model = _build(scene, 0.005)
    box = scene._bodies[model.body_names.index("box")]
    ball = scene._bodies[model.body_names.index("ball")]
    assert np.array_equal(box.cloud.points, sc.PointCloud.box([0.05, 0.04, 0.03], 0.01).points)
    assert np.array_equal(ball.cloud.points, sc.PointCloud.sphere(0.04, 0.01).points)
    assert box.mass == pytest.approx(800 * 0.1 * 0.08 * 0.06, rel=1e-12)
    assert ball.mass == 0.3
    # the box's pose: euler z = 0.3 at 0.1 m
    x0 = model.initial_state()
    assert np.allclose(x0[:7], [0, 0, 0.1, math.cos(0.15), 0, 0, math.sin(0.15)], atol=1e-15)


# --------------------------------------------------------------------------------------------
# collision filtering, other geoms, welded and mocap bodies
# --------------------------------------------------------------------------------------------
FILTERS = """<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1" friction="0.4"/>
    <geom name="wall" type="box" pos="1 0 0.2" size="0.05 1 0.2" contype="2" conaffinity="2"
          friction="0.9"/>
    <geom name="visual" type="sphere" pos="0 0 2" size="0.1" contype="0" conaffinity="0"/>
    <body name="a" pos="0 0 0.1"><freejoint/>
      <geom type="box" size="0.05 0.05 0.05" friction="0.6"/></body>
    <body name="b" pos="0.5 0 0.1"><freejoint/>
      <geom type="sphere" size="0.05" contype="2" conaffinity="2" friction="0.2" priority="1"/>
    </body>
    <body name="c" pos="-0.3 0 0.1"><freejoint/>
      <geom name="cg" type="capsule" size="0.03 0.05" contype="0" conaffinity="0"/></body>
    <body name="d" pos="0 0.3 0.1"><freejoint/>
      <geom type="cylinder" size="0.04 0.05" friction="0.3"/>
      <geom type="ellipsoid" pos="0 0 0.08" size="0.03 0.04 0.02"/></body>
  </worldbody>
  <contact>
    <pair geom1="cg" geom2="floor" friction="0.75 0.75 0.005 0.0001 0.0001"/>
    <exclude body1="a" body2="d"/>
  </contact>
</mujoco>"""


def _contacts(model):
    names = [n[: -len(".friction")] for n in model.param_names if n.endswith(".friction")]
    return {n: p.friction for n, p in zip(names, model.contact_params, strict=True)}


def test_collision_filtering_becomes_the_contact_pairs():
    scene = sc.Scene.from_mjcf(FILTERS, 0.01)
    model = _build(scene, 0.002)
    # the visual-only geom is left out; each static geom is a static body
    assert model.body_names == ("floor", "wall", "a", "b", "c", "d")
    assert _contacts(model) == {
        "contact(c,floor)": 0.75,  # the <pair>, although c's geom collides with nothing
        "contact(a,floor)": 0.6,  # the larger friction of the two geoms
        "contact(d,floor)": 1.0,  # the largest over d's geoms (the ellipsoid's default 1)
        "contact(b,wall)": 0.2,  # contype 2 with conaffinity 2; b's priority wins
    }  # no a-b, b-floor (filtered), a-d (excluded)
    # d's cylinder and ellipsoid are written back as such
    m = mujoco.MjModel.from_xml_string(scene.to_mjcf(0.002))
    d = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "d")
    types = sorted(int(t) for t, b in zip(m.geom_type, m.geom_bodyid, strict=True) if b == d)
    assert types == sorted(
        [int(mujoco.mjtGeom.mjGEOM_CYLINDER), int(mujoco.mjtGeom.mjGEOM_ELLIPSOID)]
    )
    assert m.npair == 5  # one pair per geom pair: c-floor, a-floor, 2 x d-floor, b-wall


def test_cylinder_and_ellipsoid_samples_lie_on_their_surfaces():
    r, h, s = 0.04, 0.05, 0.005
    cyl = mjcf._cylinder_cloud(r, h, s)
    p, n, w = cyl.points, cyl.normals, cyl.weights
    assert w.sum() == pytest.approx(4 * math.pi * r * h + 2 * math.pi * r * r, rel=1e-12)
    side = np.abs(n[:, 2]) < 0.5
    assert np.allclose(np.hypot(p[side, 0], p[side, 1]), r, rtol=0, atol=1e-15)
    assert np.allclose(np.abs(p[~side, 2]), h, rtol=0, atol=0)
    assert np.all(np.hypot(p[~side, 0], p[~side, 1]) <= r * (1 + 1e-15))
    assert np.all(np.einsum("ij,ij->i", p, n) > 0)  # outward
    vol = cyl.mass_properties(1.0).mass  # the samples' quadrature of the volume
    assert vol == pytest.approx(2 * math.pi * r * r * h, rel=1e-2)

    # a round ellipsoid is the sphere's lattice
    sph = mjcf._ellipsoid_cloud([0.03] * 3, s)
    ref = sc.PointCloud.sphere(0.03, s)
    assert np.allclose(sph.points, ref.points, rtol=0, atol=1e-16)
    assert np.allclose(sph.weights, ref.weights, rtol=1e-14)
    # a prolate spheroid: on its surface, normals along the gradient, its area
    a, c = 0.02, 0.05
    ell = mjcf._ellipsoid_cloud([a, a, c], s)
    p, n = ell.points, ell.normals
    semi = np.array([a, a, c])
    assert np.allclose(np.sum((p / semi) ** 2, axis=1), 1.0, rtol=0, atol=1e-14)
    grad = p / semi**2
    grad /= np.linalg.norm(grad, axis=1)[:, None]
    assert np.allclose(n, grad, rtol=0, atol=1e-14)
    e = math.sqrt(1 - a * a / (c * c))
    area = 2 * math.pi * a * a * (1 + c / (a * e) * math.asin(e))
    assert ell.weights.sum() == pytest.approx(area, rel=2e-3)


WELDED = """<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="ground" type="plane" size="1 1 0.1"/>
    <body name="stand" pos="0.5 0.5 0"><geom type="box" pos="0 0 0.1" size="0.05 0.05 0.1"/>
    </body>
    <body name="base" pos="0 0 0.5" euler="0.1 0.2 0.3"><freejoint/>
      <geom type="box" size="0.1 0.05 0.02" mass="1"/>
      <body name="mast" pos="0.05 0 0.1"><geom type="capsule" size="0.01 0.08" mass="0.2"/></body>
    </body>
    <body name="hand" mocap="true" pos="0.3 0 0.3"><geom type="sphere" size="0.03"/></body>
  </worldbody>
  <keyframe><key name="spin" qpos="0 0 0.5 1 0 0 0" qvel="0.1 -0.2 0.3 1 -2 0.5"
                 mpos="0.3 0.1 0.3" mquat="1 0 0 0"/></keyframe>
</mujoco>"""


def test_welded_children_and_mocap_bodies():
    m = mujoco.MjModel.from_xml_string(WELDED)
    scene = sc.Scene.from_mujoco(m, 0.01, keyframe="spin")
    model = _build(scene)
    assert model.body_names == ("ground", "stand", "base", "hand")  # stand: a static geom
    assert model.moving == ("base", "hand")
    assert model.control_names[:3] == ("hand.vx", "hand.vy", "hand.vz")
    assert set(_contacts(model)) == {
        "contact(base,ground)",
        "contact(base,stand)",
        "contact(base,hand)",
    }
    # MuJoCo's state of the keyframe: mass, centre of mass and energy of the composite
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    m.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_ENERGY)
    mujoco.mj_forward(m, d)
    mujoco.mj_subtreeVel(m, d)
    base = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "base")
    x = model.initial_state()
    assert np.allclose(x[:3], d.subtree_com[base], rtol=0, atol=1e-15)
    assert np.allclose(x[7:10], [0.3, 0.1, 0.3], rtol=0, atol=0)  # the mocap pose
    assert float(model.momentum(x).linear[2]) == pytest.approx(1.2 * d.subtree_linvel[base][2])
    assert model.energy(x).kinetic == pytest.approx(d.energy[1], rel=1e-12)


def test_refusals_name_the_body_or_argument():
    hinge = """<mujoco><worldbody>
      <body name="arm"><joint type="hinge"/><geom type="box" size="0.1 0.1 0.1"/></body>
      <body name="slider"><joint type="slide"/><joint type="slide" axis="0 1 0"/>
        <geom type="sphere" size="0.1"/></body>
      <body name="ok" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
    </worldbody></mujoco>"""
    raises_naming(ValueError, "'arm'", lambda: sc.Scene.from_mjcf(hinge, 0.01), "(hinge)")
    raises_naming(ValueError, "'slider'", lambda: sc.Scene.from_mjcf(hinge, 0.01), "(slide, slide)")
    ball = hinge.replace('type="hinge"', 'type="ball"')
    raises_naming(ValueError, "'arm'", lambda: sc.Scene.from_mjcf(ball, 0.01), "(ball)")
    hfield = """<mujoco><asset><hfield name="h" nrow="3" ncol="3" size="1 1 0.1 0.1"/></asset>
      <worldbody><geom name="terrain" type="hfield" hfield="h"/>
      <body pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
      </worldbody></mujoco>"""
    raises_naming(ValueError, "'terrain'", lambda: sc.Scene.from_mjcf(hfield, 0.01), "hfield")
    ghost = """<mujoco><worldbody><body name="ghost" pos="0 0 1"><freejoint/>
      <geom type="sphere" size="0.1" contype="0" conaffinity="0"/></body>
      </worldbody></mujoco>"""
    raises_naming(ValueError, "'ghost'", lambda: sc.Scene.from_mjcf(ghost, 0.01))
    # arguments
    raises_naming(TypeError, "mjcf", lambda: sc.Scene.from_mjcf(3, 0.01))
    raises_naming(ValueError, "mjcf", lambda: sc.Scene.from_mjcf("<mujoco><bad/></mujoco>", 0.01))
    raises_naming(ValueError, "spacing", lambda: sc.Scene.from_mjcf(HAND, -0.01))
    raises_naming(TypeError, "spacing", lambda: sc.Scene.from_mjcf(HAND, "fine"))
    raises_naming(ValueError, "keyframe", lambda: sc.Scene.from_mjcf(HAND, 0.01, keyframe=0))
    raises_naming(ValueError, "keyframe", lambda: sc.Scene.from_mjcf(WELDED, 0.01, keyframe="nope"))
    raises_naming(ValueError, "keyframe", lambda: sc.Scene.from_mjcf(WELDED, 0.01, keyframe=3))
    raises_naming(TypeError, "model", lambda: sc.Scene.from_mujoco(HAND, 0.01))
    scene2d = sc.Scene(dim=2)
    scene2d.add_body(sc.PointCloud.disk(0.1, 0.01), mass=1.0)
    raises_naming(ValueError, "scene", lambda: scene2d.to_mjcf(0.01))
    raises_naming(ValueError, "dt", lambda: _scene().to_mjcf())
    raises_naming(ValueError, "dt", lambda: _scene().to_mjcf(-1.0))
    raises_naming(TypeError, "scene", lambda: mjcf.to_mjcf("scene", 0.01))
    raises_naming(TypeError, "exact", lambda: _scene().to_mjcf(0.01, exact=1))
    moving_wall = sc.Scene(dim=3)
    moving_wall.add_body(sc.PointCloud.halfspace([0, 0, 0], [1, 0, 0]), kind="kinematic")
    raises_naming(ValueError, "scene", lambda: moving_wall.to_mjcf(0.01), "static")


# --------------------------------------------------------------------------------------------
# states
# --------------------------------------------------------------------------------------------
def test_state_conversion_round_trips():
    model = _build(_scene())
    rng = np.random.default_rng(1)
    x = model.initial_state()
    x[: model.nq] += 0.01 * rng.normal(size=model.nq)
    for j in range(len(model.moving)):
        x[7 * j + 3 : 7 * j + 7] /= np.linalg.norm(x[7 * j + 3 : 7 * j + 7])
    x[model.nq :] = rng.normal(size=model.nv)
    st = mjcf.to_mujoco_state(model, x)
    mj = mujoco.MjModel.from_xml_string(mjcf.to_mjcf(model))
    assert st.qpos.shape == (mj.nq,) and st.qvel.shape == (mj.nv,)
    assert st.mocap_pos.shape == (mj.nmocap, 3) and st.mocap_quat.shape == (mj.nmocap, 4)
    assert np.array_equal(st.qpos, np.concatenate([x[0:7], x[7:14], x[14:21]]))
    assert np.array_equal(st.mocap_pos[0], x[21:24])
    mocap_vel = x[model.nq + 18 :].reshape(1, 6)
    back = mjcf.from_mujoco_state(model, *st, mocap_vel=mocap_vel)
    assert np.array_equal(back, x)
    # the MuJoCo model's keyframe is the scene's initial state
    k = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, "initial")
    x0 = model.initial_state()
    assert np.array_equal(
        mjcf.from_mujoco_state(
            model,
            mj.key_qpos[k],
            mj.key_qvel[k],
            mj.key_mpos[k].reshape(-1, 3),
            mj.key_mquat[k].reshape(-1, 4),
        ),
        x0,
    )
    # bad arguments
    raises_naming(ValueError, "x", lambda: mjcf.to_mujoco_state(model, x[:-1]))
    raises_naming(ValueError, "qpos", lambda: mjcf.from_mujoco_state(model, st.qpos[:-1], st.qvel))
    raises_naming(ValueError, "qvel", lambda: mjcf.from_mujoco_state(model, st.qpos, st.qpos))
    raises_naming(ValueError, "mocap_pos", lambda: mjcf.from_mujoco_state(model, st.qpos, st.qvel))
    raises_naming(TypeError, "model", lambda: mjcf.to_mujoco_state("model", x))


def test_mujoco_steps_the_exported_model_as_softcontact_does():
    """No contact: gravity, an applied force and torque, the gyroscopic term and the
    quaternion update, from a converted state, agree to rounding."""
    verts, faces = _octahedron(0.05, [0.01, 0.0, 0.003])
    scene = sc.Scene(dim=3, gravity=[0.3, -0.2, -9.81])
    scene.add_body(
        sc.PointCloud.from_mesh(verts, faces, 0.02),
        density=700.0,
        pose=[0.1, 0.2, 1.0, 0.6, 0.0, 0.8, 0.0],
        velocity=[0.2, -0.1, 0.5, 3.0, -2.0, 5.0],
        actuated=True,
        name="tumbler",
    )
    scene.add_body(
        sc.PointCloud.box([0.05, 0.04, 0.03], 0.02), mass=1.0, pose=[1, 0, 1, 1, 0, 0, 0]
    )
    scene.add_body(sc.PointCloud.sphere(0.02, 0.02), kind="kinematic", pose=[0, 1, 1, 1, 0, 0, 0])
    model = _build(scene, DT, "euler")
    mj = mujoco.MjModel.from_xml_string(scene.to_mjcf(DT))
    d = mujoco.MjData(mj)
    x = model.initial_state()
    u = np.array([0.3, -0.1, 0.2, 0.001, -0.002, 0.0005, 0, 0, 0, 0, 0, 0])
    for _ in range(20):
        st = mjcf.to_mujoco_state(model, x)
        d.qpos[:], d.qvel[:] = st.qpos, st.qvel
        d.mocap_pos[:], d.mocap_quat[:] = st.mocap_pos, st.mocap_quat
        d.ctrl[:] = u[:6]  # the actuated body's force and torque
        mujoco.mj_step(mj, d)
        x1 = model.step(x, u).x_next
        mine = mjcf.from_mujoco_state(model, d.qpos, d.qvel, d.mocap_pos, d.mocap_quat)
        assert np.allclose(mine[:14], x1[:14], rtol=0, atol=1e-12)  # dynamic poses
        assert np.allclose(mine[21:33], x1[21:33], rtol=0, atol=1e-12)  # their velocities
        x = x1
    assert np.linalg.norm(x[:3] - model.initial_state()[:3]) > 0.01  # it moved


# --------------------------------------------------------------------------------------------
# the replay
# --------------------------------------------------------------------------------------------
def test_render_without_gl_says_how_to_get_one(monkeypatch):
    model = _build(_scene())

    def no_gl(*args, **kwargs):
        raise mujoco.FatalError("an OpenGL platform library has not been loaded")

    monkeypatch.setattr(mujoco, "Renderer", no_gl)
    raises_naming(RuntimeError, "MUJOCO_GL", lambda: mjcf.render(model, model.initial_state()))
    raises_naming(ValueError, "states", lambda: mjcf.render(model, np.zeros((2, 3))))
    raises_naming(ValueError, "width", lambda: mjcf.render(model, model.initial_state(), width=0))


RENDER = textwrap.dedent(
    """
    import numpy as np, softcontact as sc
    from softcontact import mjcf
    scene = sc.Scene(dim=3)
    scene.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    scene.add_body(sc.PointCloud.box([0.1, 0.1, 0.1], 0.05), mass=1.0,
                   pose=[0, 0, 0.6, 1, 0, 0, 0], name="box")
    scene.add_contact("box", "floor")
    model = scene.build(0.005, "implicit")
    X = model.rollout(model.initial_state(), np.zeros((60, 0))).states
    frames = mjcf.render(model, X[[0, -1]], width=64, height=48)
    assert frames.shape == (2, 48, 64, 3) and frames.dtype == np.uint8
    assert frames.std() > 1 and np.abs(frames[0].astype(int) - frames[1]).max() > 50
    print("ok")
    """
)


def test_render_draws_the_trajectory():
    env = subprocess_env()
    env["MUJOCO_GL"] = "egl"
    probe = subprocess.run(
        [sys.executable, "-c", "import mujoco; mujoco.GLContext(8, 8).make_current()"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    if probe.returncode:
        pytest.skip("no EGL OpenGL backend for MuJoCo here")
    out = subprocess.run(
        [sys.executable, "-c", RENDER], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# --------------------------------------------------------------------------------------------
# benchmarks/scenes.py: the box from Scene.to_mjcf is the model it wrote by hand
# --------------------------------------------------------------------------------------------
def test_benchmark_box_model_is_the_hand_written_one():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        import scenes
    finally:
        sys.path.pop(0)
    bs = scenes.box_on_floor()
    inertia = bs.inertia["box"]
    full = " ".join(repr(float(v)) for v in np.diag(inertia)) + " 0.0 0.0 0.0"
    hand = f"""<mujoco model="box_on_floor">
  <option timestep="0.001" integrator="Euler" gravity="0.0 0.0 -9.81"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1" contype="0" conaffinity="0"/>
    <body name="box">
      <freejoint name="box"/>
      <inertial pos="0 0 0" mass="1.0" fullinertia="{full}"/>
      <geom name="box" type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <contact>
    <pair geom1="box" geom2="floor" condim="3" friction="0.5 0.5 0.005 0.0001 0.0001"/>
  </contact>
</mujoco>"""
    assert "fullinertia" in bs.mjcf and "<pair" in bs.mjcf
    runs = []
    for text in (hand, bs.mjcf):
        m = mujoco.MjModel.from_xml_string(text)
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:] = bs.qpos, bs.qvel
        q = []
        for _ in range(300):
            mujoco.mj_step(m, d)
            q.append(np.concatenate([d.qpos, d.qvel]))
        runs.append((m, np.array(q)))
    (m1, q1), (m2, q2) = runs
    for field in ("body_mass", "body_inertia", "body_ipos", "geom_type", "pair_friction"):
        assert np.array_equal(getattr(m1, field), getattr(m2, field)), field
    assert np.array_equal(m1.geom_size[1], m2.geom_size[1])  # the box (the planes' differ)
    assert np.array_equal(q1, q2)  # MuJoCo steps both alike, bit for bit
    assert q1[:, 2].min() > 0.044  # in contact with the floor, not through it
