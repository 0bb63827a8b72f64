"""The three comparison scenes, each as a softcontact model and an equivalent MuJoCo model.

Each function returns a :class:`BenchScene`: the softcontact :class:`~softcontact.Scene`
(for ``jax_oracle.JaxModel.from_scene``), its compiled :class:`~softcontact.Model`, ``dt``,
a representative in-contact state ``x`` and control ``u``, and the MJCF text of a MuJoCo
model generated from the same parameters (masses, inertias, geometry, ``dt``, gravity,
friction coefficients; ``integrator="Euler"``) with the MuJoCo state ``(qpos, qvel)`` and
``ctrl`` equivalent to ``x`` and ``u``.

* :func:`push_t` -- planar pushing: the push-T task of :mod:`softcontact.tasks.push_t`
  (the T, a kinematic disk pusher whose control is its velocity, four walls, support
  friction), the pusher touching the bottom of the T's stem and pushing along the stem.
* :func:`box_on_floor` -- a 1 kg, 10 cm box on a static floor, pressed 4 mm in and moving
  (``bench_step.box_scene``).
* :func:`two_tori` -- two interlocked tori (chain links): a static horizontal torus and a
  dynamic vertical one hanging on it under gravity, both clouds from
  :meth:`PointCloud.from_mesh`.

What is equivalent and what is not
----------------------------------
MuJoCo's contact is a different model: rigid geoms whose contacts are soft *constraints*
solved by an optimizer each step (default ``solref``/``solimp``, Newton solver,
pyramidal friction cones, ``condim`` 3), non-smooth in the state, against softcontact's
smooth penalty forces from soft signed distance fields.  The same state does not give the
same next state, and trajectories diverge; what is compared is the **cost** of a step, of
its derivatives and of batched rollouts on models of the same bodies, masses, inertias,
geometry, time step, gravity and friction coefficients.  Contact stiffness and damping are
not mapped (MuJoCo's defaults are kept); softcontact's smoothing parameters (``eps``,
``eps_c``, ``beta``, slip velocities) have no MuJoCo counterpart.

MuJoCo's ``Euler`` integrator is semi-implicit (``v+ = v + h a``, ``q+ = q (+) h v+``),
the same scheme as ``Model.step``; its free-joint state is softcontact's 3D state element
for element (``tests/test_mujoco_step.py``).  Contact pairs are listed explicitly
(``<contact><pair>``, every geom's ``contype``/``conaffinity`` 0) so that MuJoCo tests
exactly the pairs softcontact does, with each pair's friction coefficient; the tori's
segments, many small geoms, use MuJoCo's broad phase instead (``contype``/``conaffinity``
1, friction 0.5 on every geom).

Where these conventions are those of :meth:`Scene.to_mjcf <softcontact.Scene.to_mjcf>`
(:mod:`softcontact.mjcf`), the MuJoCo model is that method's: the box on the floor and
the tori's ``"hull"`` variant.  Two are written here: push-T, a 2D scene (``to_mjcf``
writes 3D scenes; its MuJoCo model is a T on planar joints with the support friction as
joint ``frictionloss``, or a free T on a floor), and the tori's ``"segments"`` variant
(``to_mjcf`` gives a cloud one geom, which MuJoCo would collide as its convex hull).

MuJoCo collides a mesh geom through its **convex hull**.  The tori are therefore given to
MuJoCo cut into convex segments (one mesh geom per segment of the torus between two
adjacent rings of its mesh; ``variant="segments"``, the default), which keeps the hole; with
``variant="hull"`` each torus is one mesh geom, whose hull fills the hole, so in the
interlocked state the two hulls overlap by centimetres (a cost measurement on a
meaningless configuration, kept for comparison).

The MuJoCo models need ``mujoco`` only in :meth:`BenchScene.mj_model` and the timing
helpers at the end of this module; the rest imports without it.

    from scenes import push_t, box_on_floor, two_tori   # benchmarks/ on sys.path
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from functools import cached_property

import numpy as np

import softcontact as sc

IDENTITY = (1.0, 0.0, 0.0, 0.0)


def _build(scene, dt):
    """scene.build(dt) without its stability warning: these scenes compare the cost of a
    step at the MuJoCo models' time steps, which exceed the semi-implicit Euler step's
    explicit-friction limit for the resting box and the hanging torus
    (Scene.stability_limits); stability is not what they measure."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.SoftContactWarning)
        return scene.build(dt)


@dataclasses.dataclass(eq=False)
class BenchScene:
    """One comparison scene (see the module docstring).

    Attributes
    ----------
    name : str
    scene : softcontact.Scene
        The scene ``model`` was built from (for ``JaxModel.from_scene(scene, dt)``).
    model : softcontact.Model
    dt : float
    x, u : ndarray
        Representative in-contact state (nx,) and control (nu,) of ``model``.
    mjcf : str
        The equivalent MuJoCo model.
    qpos, qvel, ctrl : ndarray
        MuJoCo's state and control equivalent to ``x`` and ``u``.
    samples : dict
        Samples per body of ``model`` (name: count).
    mass, inertia : dict
        The dynamic bodies' masses (kg) and inertia tensors about their centres of mass in
        their body frames ((3, 3), kg m^2; 2D bodies: the (3, 3) tensor of the extruded
        body used in MuJoCo, whose zz entry is softcontact's planar inertia).
    notes : str
        What differs between the two models.
    """

    name: str
    scene: sc.Scene
    model: sc.Model
    dt: float
    x: np.ndarray
    u: np.ndarray
    mjcf: str
    qpos: np.ndarray
    qvel: np.ndarray
    ctrl: np.ndarray
    samples: dict
    mass: dict
    inertia: dict
    notes: str = ""

    @cached_property
    def mj(self):
        """``(MjModel, MjData)`` with ``(qpos, qvel, ctrl)`` set and ``mj_forward`` run
        (so that the solver's warm start is that of this state)."""
        import mujoco

        m = mujoco.MjModel.from_xml_string(self.mjcf)
        d = mujoco.MjData(m)
        d.qpos[:] = self.qpos
        d.qvel[:] = self.qvel
        d.ctrl[:] = self.ctrl
        mujoco.mj_forward(m, d)
        return m, d

    def mj_model(self):
        """The compiled MuJoCo model (``mujoco.MjModel``)."""
        return self.mj[0]

    @property
    def total_samples(self) -> int:
        return int(sum(self.samples.values()))


# ------------------------------------------------------------------------------------------
# small helpers
# ------------------------------------------------------------------------------------------
def _f(v) -> str:
    """Numbers for MJCF attributes, exactly (repr of float64)."""
    return " ".join(repr(float(c)) for c in np.ravel(v))


def _fullinertia(inertia) -> str:
    a = np.asarray(inertia, dtype=float)
    return _f([a[0, 0], a[1, 1], a[2, 2], a[0, 1], a[0, 2], a[1, 2]])


def _friction(mu) -> str:
    return _f([mu, mu, 0.005, 0.0001, 0.0001])  # sliding (both directions), MuJoCo defaults


def _quat_z(theta) -> np.ndarray:
    return np.array([math.cos(theta / 2), 0.0, 0.0, math.sin(theta / 2)])


# ------------------------------------------------------------------------------------------
# (a) planar pushing: push-T
# ------------------------------------------------------------------------------------------
T_HEIGHT = 0.03  # m: the T's thickness in MuJoCo (PointCloud.t_shape's 3D default, 30 mm)
PUSHER_MASS = 1000.0  # kg: MuJoCo's velocity-driven pusher, heavy so that it is ~kinematic


def _t_boxes(vertices):
    """The T's polygon (body frame) as two rectangles: (centre (2,), half extents (2,))
    of the bar and of the stem."""
    v = np.asarray(vertices, dtype=float)
    x_lo, x_hi = v[:, 0].min(), v[:, 0].max()
    y_lo, y_hi = v[:, 1].min(), v[:, 1].max()
    # the stem is the narrow part: its half-width is the smallest |x| of the corners
    sx = np.abs(v[:, 0]).min()
    y_joint = np.sort(np.unique(np.round(v[:, 1], 15)))[1]  # bottom of the bar
    bar = (
        np.array([0.5 * (x_lo + x_hi), 0.5 * (y_joint + y_hi)]),
        np.array([0.5 * (x_hi - x_lo), 0.5 * (y_hi - y_joint)]),
    )
    stem = (np.array([0.0, 0.5 * (y_lo + y_joint)]), np.array([sx, 0.5 * (y_joint - y_lo)]))
    return bar, stem


def _polygon_second_moments(v):
    """Area and ``(int x^2 dA, int y^2 dA)`` of a simple polygon (about the origin)."""
    x, y = v[:, 0], v[:, 1]
    xn, yn = np.roll(x, -1), np.roll(y, -1)
    c = x * yn - xn * y
    area = 0.5 * c.sum()
    ixx = (c * (x * x + x * xn + xn * xn)).sum() / 12.0  # int x^2
    iyy = (c * (y * y + y * yn + yn * yn)).sum() / 12.0  # int y^2
    return area, ixx, iyy


def push_t(seed=3, variant="planar", push_speed=0.1):
    """Planar pushing: the push-T task, the pusher touching the bottom of the T's stem.

    softcontact: ``softcontact.tasks.push_t.make(seed, integrator="euler")`` (its scene
    ``task.scene``; semi-implicit Euler like MuJoCo's ``Euler``, with the task's Euler damping of
    8 N s/m -- the task's own model takes the implicit step, whose cost
    ``benchmarks/physics.py`` measures): the T
    (``spacing`` 3 mm: 170 samples; 0.15 kg), the kinematic disk pusher (r = 15 mm, 32
    samples) whose control ``u = (vx, vy, omega)`` is its velocity, four half-space walls,
    support friction 0.35 over ~200 footprint points, ``dt`` = 5 ms, no gravity (seen
    from above).  State ``x``: the task's seeded T pose at rest, the pusher's disk
    overlapping the stem's bottom face by 1 mm at its middle, moving at ``push_speed``
    along the stem (``u`` the same velocity).

    MuJoCo, ``variant="planar"`` (default): the T is a body with slide-x, slide-y and
    hinge-z joints (``qpos`` = the T's pose, exactly softcontact's), two box geoms (bar and
    stem, 30 mm tall) at the same place relative to the centre of mass, the same mass and
    the same planar inertia (``I_zz``; ``I_xx``, ``I_yy`` of the 30 mm extrusion, unused);
    the support friction is joint ``frictionloss`` on its three dofs (``mu m g`` on the
    slides, ``mu m g`` times the mean distance of softcontact's support samples to the
    centre of mass on the hinge: the Coulomb force and torque of the same support for pure
    translation and pure rotation, but per dof -- a box-shaped, not round, friction set
    fixed in the world axes, so combined sliding and turning is braked more and a push
    not along x or y drifts sideways).  The pusher is a cylinder on slide-x, slide-y,
    hinge-z joints driven by ``velocity`` actuators (``ctrl`` = its velocity, like
    softcontact's ``u``) with ``kv = mass / dt``, so that MuJoCo's explicit Euler sets its
    velocity to ``ctrl`` in one step; it is heavy (1000 kg), so the T's reaction changes
    that velocity by ~1e-5 m/s (and ``d v+ / d ctrl`` = 1 to 2e-4).  Walls: four planes.
    Pairs: T-pusher (friction 0.4), T-walls (0.3); the pusher does not touch the walls (as
    in softcontact).  Gravity 0.

    ``variant="floor"``: the T is a free 3D body (nv 6) resting on a floor plane under
    gravity (0.2 mm into the floor), the T-floor friction (0.35, Coulomb with MuJoCo's
    default pyramidal cones at its box-plane contact points, the corners) playing the
    support friction; the pusher slides on joints at the same height, not touching the
    floor.  Physically closer (friction on the contact points, its torsion from their
    spread), dimensionally further (nv 9 against softcontact's 6); MuJoCo's step is
    costlier here than with ``"planar"``.
    """
    from softcontact.tasks import push_t as task_mod

    task = task_mod.make(seed, integrator="euler")
    scene = task.scene
    model, p = task.model, task.params
    dt = float(task.dt)
    x = np.array(task.x0, dtype=float)
    th = x[2]
    c, s = math.cos(th), math.sin(th)
    R = np.array([[c, -s], [s, c]])
    r = float(task.pusher_radius)
    stem_bottom = float(task.vertices[:, 1].min())
    x[3:5] = x[0:2] + R @ np.array([0.0, stem_bottom - r + 0.001])
    x[5] = 0.0
    vel = R @ np.array([0.0, push_speed])
    u = np.array([vel[0], vel[1], 0.0])
    x[6:9] = 0.0
    x[9:12] = u

    # mass properties (the scene's: the T's mass and planar inertia from its geometry)
    m_t = float(p["mass"])
    props = task.cloud.mass_properties(1.0)
    izz = float(np.asarray(props.inertia)) * m_t / float(props.mass)
    area, jx, jy = _polygon_second_moments(np.asarray(task.vertices))
    scale = izz / (m_t * (jx + jy) / area)  # the polygon's moments, scaled to the scene's
    h = T_HEIGHT
    inertia_t = np.diag(
        [
            scale * m_t * jy / area + m_t * h * h / 12.0,
            scale * m_t * jx / area + m_t * h * h / 12.0,
            izz,
        ]
    )
    (bar_c, bar_h), (stem_c, stem_h) = _t_boxes(task.vertices)
    g = 9.81  # Scene.add_support's default, which push_t uses
    mu_s = float(p["support_friction"])
    # the torsional Coulomb friction of the support: mu m g times the mean distance of the
    # support samples (the scene's own, equally loaded; private attribute) to the centre of
    # mass
    t_body = next(b for b in scene._bodies if b.name == "T")
    r_mean = float(np.hypot(*np.asarray(t_body.support[0]).T).mean())
    L = task_mod.WORKSPACE
    mp = PUSHER_MASS
    ip = np.array([mp * (3 * r * r + h * h) / 12.0] * 2 + [mp * r * r / 2.0])
    kv_lin, kv_rot = mp / dt, ip[2] / dt

    planar = variant == "planar"
    if variant not in ("planar", "floor"):
        raise ValueError(f"variant must be 'planar' or 'floor', got {variant!r}")
    z0 = h / 2 if planar else h / 2 - 2e-4  # floor: 0.2 mm into the floor (resting)
    if planar:
        t_joints = (
            f'<joint name="T_x" type="slide" axis="1 0 0" '
            f'frictionloss="{_f(mu_s * m_t * g)}"/>\n'
            f'      <joint name="T_y" type="slide" axis="0 1 0" '
            f'frictionloss="{_f(mu_s * m_t * g)}"/>\n'
            f'      <joint name="T_theta" type="hinge" axis="0 0 1" '
            f'frictionloss="{_f(mu_s * m_t * g * r_mean)}"/>'
        )
        t_body_pos = f"0 0 {_f(z0)}"
        floor = ""
        floor_pairs = ""
        gravity = "0 0 0"
    else:
        t_joints = '<freejoint name="T"/>'
        t_body_pos = "0 0 0"
        floor = '<geom name="floor" type="plane" size="1 1 0.1" contype="0" conaffinity="0"/>'
        floor_pairs = "\n".join(
            f'    <pair geom1="{gname}" geom2="floor" condim="3" friction="{_friction(mu_s)}"/>'
            for gname in ("T_bar", "T_stem")
        )
        gravity = "0 0 -9.81"
    walls = {  # name: (pos, inward normal)
        "wall_left": ([0.0, L / 2, h / 2], [1.0, 0.0, 0.0]),
        "wall_right": ([L, L / 2, h / 2], [-1.0, 0.0, 0.0]),
        "wall_bottom": ([L / 2, 0.0, h / 2], [0.0, 1.0, 0.0]),
        "wall_top": ([L / 2, L, h / 2], [0.0, -1.0, 0.0]),
    }
    wall_geoms = "\n".join(
        f'    <geom name="{n}" type="plane" size="1 1 0.1" pos="{_f(pos)}" zaxis="{_f(nrm)}" '
        'contype="0" conaffinity="0"/>'
        for n, (pos, nrm) in walls.items()
    )
    pairs = []
    for gname in ("T_bar", "T_stem"):
        pairs.append(
            f'    <pair geom1="{gname}" geom2="pusher" condim="3" '
            f'friction="{_friction(p["friction"])}"/>'
        )
        for wname in walls:
            pairs.append(
                f'    <pair geom1="{gname}" geom2="{wname}" condim="3" '
                f'friction="{_friction(p["wall_friction"])}"/>'
            )
    mjcf = f"""<mujoco model="push_t_{variant}">
  <compiler angle="radian"/>
  <option timestep="{_f(dt)}" integrator="Euler" gravity="{gravity}"/>
  <worldbody>
    {floor}
{wall_geoms}
    <body name="T" pos="{t_body_pos}">
      {t_joints}
      <inertial pos="0 0 0" mass="{_f(m_t)}" fullinertia="{_fullinertia(inertia_t)}"/>
      <geom name="T_bar" type="box" pos="{_f([*bar_c, 0.0])}" size="{_f([*bar_h, h / 2])}"
            contype="0" conaffinity="0"/>
      <geom name="T_stem" type="box" pos="{_f([*stem_c, 0.0])}" size="{_f([*stem_h, h / 2])}"
            contype="0" conaffinity="0"/>
    </body>
    <body name="pusher" pos="0 0 {_f(h / 2)}">
      <joint name="pusher_x" type="slide" axis="1 0 0"/>
      <joint name="pusher_y" type="slide" axis="0 1 0"/>
      <joint name="pusher_theta" type="hinge" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="{_f(mp)}" diaginertia="{_f(ip)}"/>
      <geom name="pusher" type="cylinder" size="{_f([r, h / 2])}" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <contact>
{chr(10).join(pairs)}
{floor_pairs}
  </contact>
  <actuator>
    <velocity name="pusher_vx" joint="pusher_x" kv="{_f(kv_lin)}"/>
    <velocity name="pusher_vy" joint="pusher_y" kv="{_f(kv_lin)}"/>
    <velocity name="pusher_omega" joint="pusher_theta" kv="{_f(kv_rot)}"/>
  </actuator>
</mujoco>
"""
    if planar:
        qpos = x[0:6].copy()
        qvel = x[6:12].copy()
    else:
        qpos = np.concatenate([[x[0], x[1], z0], _quat_z(x[2]), x[3:6]])
        qvel = np.concatenate([[x[6], x[7], 0.0, 0.0, 0.0, x[8]], x[9:12]])
    return BenchScene(
        name="planar pushing (push-T)",
        scene=scene,
        model=model,
        dt=dt,
        x=x,
        u=u,
        mjcf=mjcf,
        qpos=qpos,
        qvel=qvel,
        ctrl=u.copy(),
        samples={"T": len(task.cloud), "pusher": len(task.pusher_cloud), "walls": 4},
        mass={"T": m_t},
        inertia={"T": inertia_t},
        notes=(
            "MuJoCo: T on slide/slide/hinge joints, support friction as joint frictionloss"
            if planar
            else "MuJoCo: free 3D T on a floor under gravity, floor friction as support"
        ),
    )


# ------------------------------------------------------------------------------------------
# (b) box on floor
# ------------------------------------------------------------------------------------------
def box_on_floor(dt=0.001):
    """A 1 kg, 10 cm box (294 samples) pressed 4 mm into a static floor, moving
    (``bench_step.box_scene``): ``v = (0.05, 0, -0.01)`` m/s, ``omega = (0, 0.2, 0.1)``
    rad/s (body frame), ``dt`` = 1 ms, gravity ``(0, 0, -9.81)``, friction 0.5 (the
    default ``ContactParams``), no control.

    MuJoCo: ``Scene.to_mjcf`` of the scene -- a free body with the model's mass and
    inertia (from the cloud's geometry), a box geom of half size 0.05 m, a floor plane,
    one box-floor pair with friction 0.5.  The state maps element for element (free
    joint).  MuJoCo's box penetrates the floor by its own equilibrium depth (default
    ``solref``), not softcontact's.
    """
    box = sc.PointCloud.box([0.05, 0.05, 0.05], 0.1 / 6)
    floor = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    scene = sc.Scene(dim=3)
    scene.add_body(floor, kind="static", name="floor")
    scene.add_body(
        box,
        mass=1.0,
        pose=[0.0, 0.0, 0.046, *IDENTITY],
        velocity=[0.05, 0.0, -0.01, 0.0, 0.2, 0.1],
        name="box",
    )
    params = sc.ContactParams()
    scene.add_contact("box", "floor", params)
    model = _build(scene, dt)
    x = model.initial_state()
    # the inertia as Scene.add_body computes it (the geometry at its default density,
    # scaled to the mass): what to_mjcf writes
    props = box.mass_properties(1000.0)
    mass = 1.0
    inertia = np.asarray(props.inertia, dtype=float) * (mass / float(props.mass))
    mjcf = scene.to_mjcf(dt, exact=False, model_name="box_on_floor")
    return BenchScene(
        name="box on floor (3D)",
        scene=scene,
        model=model,
        dt=dt,
        x=x,
        u=np.zeros(0),
        mjcf=mjcf,
        qpos=x[:7].copy(),
        qvel=x[7:].copy(),
        ctrl=np.zeros(0),
        samples={"box": len(box), "floor": 1},
        mass={"box": mass},
        inertia={"box": inertia},
        notes="MuJoCo: box geom on a plane",
    )


# ------------------------------------------------------------------------------------------
# (c) two interlocked tori
# ------------------------------------------------------------------------------------------
R_MAJOR, R_MINOR = 0.05, 0.015
N_MAJOR, N_MINOR = 12, 8  # mesh rings x vertices per ring
TORI_DT = 0.002
TORI_EPS = 4e-5  # m^2: smoothing length ~6 mm for samples ~1.6-2.6 cm apart
# height of the hanging torus's centre above geometric touching, at rest: softcontact's
# contact starts before the surfaces touch and holds the 1.9 N weight 1.5 mm above them
# (found by simulating this scene to rest); MuJoCo's hangs 0.5 mm into them (its contact
# is active only at penetration)
TORI_REST_OFFSET = 0.0015
TORI_MJ_REST_OFFSET = -0.0005


def torus_mesh(major, minor, n_major=N_MAJOR, n_minor=N_MINOR):
    """Closed, outward-oriented triangle mesh of a torus around the z axis (also the torus
    of ``tests/test_scenes3d.py``): vertex ``(a, b)`` is ``a * n_minor + b``, ring ``a`` at
    angle ``2 pi a / n_major``."""
    i, j = np.meshgrid(np.arange(n_major), np.arange(n_minor), indexing="ij")
    u = 2 * np.pi * i.ravel() / n_major
    v = 2 * np.pi * j.ravel() / n_minor
    ring = major + minor * np.cos(v)
    verts = np.column_stack([ring * np.cos(u), ring * np.sin(u), minor * np.sin(v)])

    def idx(a, b):
        return (a % n_major) * n_minor + (b % n_minor)

    faces = []
    for a in range(n_major):
        for b in range(n_minor):
            p, q, s_, t = idx(a, b), idx(a + 1, b), idx(a + 1, b + 1), idx(a, b + 1)
            faces += [[p, q, s_], [p, s_, t]]
    return verts, np.array(faces)


def _torus_segments(verts, n_major, n_minor, prefix, indent):
    """MJCF assets and geoms of one torus as ``n_major`` convex segments (the vertices of
    two adjacent rings each)."""
    assets, geoms = [], []
    for a in range(n_major):
        b = (a + 1) % n_major
        seg = np.concatenate(
            [verts[a * n_minor : (a + 1) * n_minor], verts[b * n_minor : (b + 1) * n_minor]]
        )
        assets.append(f'<mesh name="{prefix}{a}" vertex="{_f(seg)}"/>')
        geoms.append(f'<geom name="{prefix}{a}" type="mesh" mesh="{prefix}{a}"/>')
    pad = " " * indent
    return ("\n    ".join(assets), ("\n" + pad).join(geoms))


def two_tori(variant="segments", n_major=N_MAJOR, n_minor=N_MINOR, eps=TORI_EPS, dt=TORI_DT):
    """Two interlocked tori (R = 50 mm, r = 15 mm): a static one lying in the xy plane at
    the origin, a dynamic one (water density, 0.18 kg) in the xz plane hanging on the
    static one's tube at ``(R, 0, 0)`` under gravity: the static tube passes through the
    hanging torus's hole and vice versa.  Both clouds are :meth:`PointCloud.from_mesh` of a
    12 x 6 torus mesh (one sample per face corner: 240 samples each); contact ``eps`` 4e-5
    (a smoothing length of ~6 mm, against a sample spacing of 1.6-2.6 cm), other contact
    parameters the defaults (friction 0.5); ``dt`` = 2 ms.  State ``x``: the hanging torus
    at rest at its contact height (softcontact's: 1.5 mm above touching; MuJoCo's: 0.5 mm
    into it), swinging slightly (0.3 rad/s about the world y axis, the static tube's
    direction at the contact).

    MuJoCo: the same meshes (``variant="segments"``: 12 convex segments per torus,
    preserving the holes, written here, friction 0.5 on every geom, broad-phase
    collision; ``"hull"``: :meth:`Scene.to_mjcf <softcontact.Scene.to_mjcf>` of the
    scene, each torus one mesh geom, collided as its convex hull, which fills the hole --
    the interlocked hulls overlap -- and one explicit pair with friction 0.5), the
    dynamic torus a free body with the cloud's mass and inertia.
    """
    if variant not in ("segments", "hull"):
        raise ValueError(f"variant must be 'segments' or 'hull', got {variant!r}")
    verts, faces = torus_mesh(R_MAJOR, R_MINOR, n_major, n_minor)
    cloud = sc.PointCloud.from_mesh(verts, faces, spacing=1.0)  # one sample per corner
    props = cloud.mass_properties(1000.0)
    com = np.asarray(props.com, dtype=float)
    mass = float(props.mass)
    inertia = np.asarray(props.inertia, dtype=float)
    params = sc.ContactParams(eps=eps)
    s = math.sqrt(0.5)
    quat_b = np.array([s, s, 0.0, 0.0])  # 90 degrees about x: the ring in the xz plane
    # inner top of the hanging ring (its centre + R - r) on the static tube's top (r):
    # touching when its centre is at z = 2 r - R
    pos_b = np.array([R_MAJOR, 0.0, 2 * R_MINOR - R_MAJOR + TORI_REST_OFFSET])
    scene = sc.Scene(dim=3)
    scene.add_body(cloud, kind="static", name="ring_a")
    scene.add_body(cloud, pose=[*pos_b, *quat_b], velocity=[0, 0, 0, 0.0, 0.0, -0.3], name="ring_b")
    scene.add_contact("ring_b", "ring_a", params)
    model = _build(scene, dt)
    x = model.initial_state()
    qpos = x[:7].copy()
    qpos[2] += TORI_MJ_REST_OFFSET - TORI_REST_OFFSET
    if variant == "hull":
        # each torus one mesh geom (collided as its convex hull), one explicit pair
        mjcf = scene.to_mjcf(dt, exact=False, model_name="two_tori_hull")
    else:
        mjcf = _tori_segments_mjcf(
            verts, faces, com, mass, inertia, params, n_major, n_minor, dt, scene.gravity
        )
    return BenchScene(
        name="two interlocked tori (3D meshes)",
        scene=scene,
        model=model,
        dt=dt,
        x=x,
        u=np.zeros(0),
        mjcf=mjcf,
        qpos=qpos,
        qvel=x[7:].copy(),
        ctrl=np.zeros(0),
        samples={"ring_a": len(cloud), "ring_b": len(cloud)},
        mass={"ring_b": mass},
        inertia={"ring_b": inertia},
        notes=(
            f"MuJoCo: each torus as {n_major} convex mesh segments"
            if variant == "segments"
            else "MuJoCo: each torus one mesh geom = its convex hull (holes filled)"
        ),
    )


def _tori_segments_mjcf(verts, faces, com, mass, inertia, params, n_major, n_minor, dt, gravity):
    """The tori cut into convex segments, written here: :meth:`Scene.to_mjcf` gives each
    cloud one geom, which MuJoCo would collide as its hull.  The pieces are many small
    geoms, so MuJoCo's broad phase finds the colliding ones (``contype``/``conaffinity``
    1, friction on every geom) rather than a ``<pair>`` per pair of segments."""
    # MuJoCo: geoms relative to the hanging body's frame (its centre of mass)
    assets_a, geoms_a = _torus_segments(verts, n_major, n_minor, "a", 4)
    assets_b, geoms_b = _torus_segments(verts - com, n_major, n_minor, "b", 6)
    return f"""<mujoco model="two_tori_segments">
  <option timestep="{_f(dt)}" integrator="Euler" gravity="{_f(gravity)}"/>
  <default>
    <geom friction="{_f([params.friction, 0.005, 0.0001])}" condim="3" contype="1" conaffinity="1"/>
  </default>
  <asset>
    {assets_a}
    {assets_b}
  </asset>
  <worldbody>
    {geoms_a}
    <body name="ring_b">
      <freejoint name="ring_b"/>
      <inertial pos="0 0 0" mass="{_f(mass)}" fullinertia="{_fullinertia(inertia)}"/>
      {geoms_b}
    </body>
  </worldbody>
</mujoco>
"""


SCENES = {"push_t": push_t, "box": box_on_floor, "tori": two_tori}


# ------------------------------------------------------------------------------------------
# MuJoCo timing helpers: each returns a no-argument function doing one timed operation
# ------------------------------------------------------------------------------------------
def _state(m, d, spec):
    import mujoco

    st = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, st, spec)
    return st


def mj_step_fn(bs):
    """``mj_setState`` (the representative state, with its solver warm start and control)
    then ``mj_step``; returns the function."""
    import mujoco

    m, d0 = bs.mj
    d = mujoco.MjData(m)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    st = _state(m, d0, spec)

    def fn():
        mujoco.mj_setState(m, d, st, spec)
        mujoco.mj_step(m, d)
        return d

    return fn


def mj_fd_fn(bs, centred, eps=1e-6):
    """``mj_setState``, ``mjd_transitionFD(m, d, eps, centred, A, B, None, None)`` (the
    Jacobians of the step in MuJoCo's tangent coordinates) then ``mj_step``."""
    import mujoco

    m, d0 = bs.mj
    d = mujoco.MjData(m)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    st = _state(m, d0, spec)
    n = 2 * m.nv + m.na
    A = np.zeros((n, n))
    B = np.zeros((n, m.nu))
    flg = bool(centred)

    def fn():
        mujoco.mj_setState(m, d, st, spec)
        mujoco.mjd_transitionFD(m, d, eps, flg, A, B, None, None)
        mujoco.mj_step(m, d)
        return A, B

    return fn


def mj_rollout_fn(bs, B, T, nthread, seed=0, noise=0.01):
    """``mujoco.rollout`` of ``B`` trajectories of ``T`` steps from the representative
    state, controls ``ctrl`` plus Gaussian noise (as the softcontact rollouts), on
    ``nthread`` threads (a ``rollout.Rollout`` pool made once, outside the timing; 1 thread
    = the calling thread).  Returns ``(fn, close)``."""
    import mujoco
    from mujoco import rollout

    m, d0 = bs.mj
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    x0 = np.tile(_state(m, d0, spec), (B, 1))
    if m.nu:
        rng = np.random.default_rng(seed)
        U = np.broadcast_to(bs.ctrl, (B, T, m.nu)).copy()
        U += noise * rng.normal(size=U.shape)
    else:
        U = None
    datas = [mujoco.MjData(m) for _ in range(max(1, nthread))]
    pool = rollout.Rollout(nthread=0 if nthread <= 1 else nthread)
    state = np.empty((B, T, mujoco.mj_stateSize(m, spec)))
    sens = np.empty((B, T, m.nsensordata))

    def fn():
        pool.rollout(
            m, datas if nthread > 1 else datas[0], x0, U, nstep=T, state=state, sensordata=sens
        )
        return state

    return fn, pool.close
