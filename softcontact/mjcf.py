"""MuJoCo models in and out: MJCF to :class:`~softcontact.Scene`, a scene to MJCF, states
and a replay in MuJoCo's renderer.

Needs ``mujoco`` (the ``mujoco`` extra: ``pip install 'softcontact[mujoco]'``), imported
by each function that uses it; :func:`to_mjcf` writes text and needs nothing.

Loading (:func:`from_mjcf`, :func:`from_mujoco`; also ``Scene.from_mjcf`` and
``Scene.from_mujoco``) reads the compiled ``mujoco.MjModel``:

* a child of the world with exactly one free joint becomes a dynamic body (actuated when
  six ``motor`` actuators with unit gain drive its six dofs with unit gears, as
  :func:`to_mjcf` writes them; other actuators are ignored), a mocap body a kinematic
  one; bodies without joints are welded to their parent (to the world: static), and
  their geoms join the moving body or the world they are welded to.  A body with any
  other joint (hinge, slide, ball, several joints, a free joint inside another body) is
  refused (ValueError naming it);
* geoms become point clouds sampled at ``spacing``: ``box``, ``sphere``, ``capsule`` and
  ``mesh`` through the :class:`~softcontact.PointCloud` constructors (a mesh must be
  closed and consistently oriented, as :meth:`PointCloud.from_mesh
  <softcontact.PointCloud.from_mesh>` requires; MuJoCo gives a mesh declared by its
  vertices alone its convex hull's faces), ``cylinder`` and ``ellipsoid`` sampled on
  their exact surfaces with exact outward normals (rings on a cylinder's side and caps,
  the Fibonacci lattice of the sphere stretched onto an ellipsoid, area weights), and
  ``plane`` a half-space (a plane of a moving body is refused).  Height fields and SDF
  geoms are refused.  The geoms of one moving body are one cloud
  (:meth:`PointCloud.concatenate <softcontact.PointCloud.concatenate>`) and the body
  records its geoms (which :func:`to_mjcf` writes back); each static geom is a static
  body of its own at the geom's pose, named after the geom (an unnamed one after its
  body, or ``geom<i>`` on the world body; a suffix ``_1``, ``_2`` ... where a name is
  taken); moving bodies keep their names;
* only geoms that can collide are taken: those with a nonzero ``contype`` or
  ``conaffinity`` or named in a ``<contact><pair>`` (MuJoCo's visual-only geoms are left
  out); a moving body without one is refused;
* mass, centre of mass and inertia are MuJoCo's (``body_mass``, ``body_ipos``, and
  ``body_inertia`` turned by ``body_iquat``; a moving body with welded children gets the
  composite of their inertials).  The softcontact body frame has MuJoCo's body axes and
  its origin at the centre of mass (:meth:`Scene.add_body <softcontact.Scene.add_body>`
  with ``com``);
* the initial pose is ``qpos0`` (the MJCF's body poses) with zero velocity, or keyframe
  ``keyframe``'s ``qpos``, ``qvel``, ``mpos`` and ``mquat``.  MuJoCo's free joint holds
  the body origin's world velocity and the body-frame angular velocity; softcontact's
  state holds the centre of mass's: ``v_com = v + R (omega x ipos)``.  Kinematic bodies
  start at rest (MuJoCo's state has no mocap velocity);
* gravity comes from ``opt.gravity``, and ``opt.timestep`` is kept as
  ``scene.timestep`` (:func:`load` returns both);
* contacts: two bodies, at least one of them dynamic (kinematic-static and static-static
  pairs have no effect in softcontact), get a contact when a geom of one and a geom of
  the other collide in MuJoCo: through an explicit ``<contact><pair>``, or by the
  dynamic filter (``contype`` of one and ``conaffinity`` of the other share a bit) unless
  an ``<exclude>`` names their bodies.  Its Coulomb coefficient is the largest
  ``friction[0]`` over those geom pairs (a ``<pair>``'s own; otherwise MuJoCo's mixing:
  the geom of higher ``priority``, or the larger of the two).  Contacts are listed in
  the order of the model's pairs, then of the geoms, each with its dynamic body first
  (of two dynamic bodies, the one added first); their parameters are fitted
  (:meth:`Scene.add_contact <softcontact.Scene.add_contact>` without ``params``).
  MuJoCo's ``solref``, ``solimp``, ``condim``, margins and torsional and rolling friction
  have no softcontact counterpart and are ignored.

Writing (:func:`to_mjcf`, ``Scene.to_mjcf``) gives a 3D scene's equivalent MuJoCo model,
with the conventions of ``benchmarks/scenes.py``: each dynamic body a top-level body with
a free joint at its centre of mass (``<inertial pos="0 0 0" mass fullinertia>``, so that
``qpos``/``qvel`` are softcontact's state element for element), each actuated body six
``motor`` actuators on its free joint (``ctrl`` is its ``u``: force in the world frame,
torque in the body frame), each kinematic body a mocap body, static bodies world geoms,
``integrator="Euler"`` (semi-implicit, as ``Model.step``'s ``"euler"``), the scene's
gravity and every contact pair as explicit ``<contact><pair>`` entries (every geom's
``contype`` and ``conaffinity`` 0) with its friction coefficient (``condim`` 3, MuJoCo's
default torsional and rolling coefficients).  A cloud made by a constructor keeps its
solid (box, sphere, capsule; a mesh or a prism as a mesh geom), a loaded body its geoms;
any other cloud becomes a mesh geom of its samples, which MuJoCo collides (as every mesh)
as their convex hull.  A half-space is a plane (static bodies only).  The initial state
is the bodies' poses and a keyframe ``initial`` with the velocities (a kinematic body's
initial velocity, a control in softcontact, has no place in it).  Geoms are coloured
(static grey, moving bodies from a palette), which changes nothing physical.

With ``exact=True`` the model also carries, as ``<custom><numeric>`` data named
``softcontact:...``, what MJCF would round: each dynamic body's inertia tensor (MuJoCo
keeps principal moments and axes), each mesh's float64 vertices and faces (MuJoCo keeps
float32 vertices, recentred) and the pose of its geom, and each contact's given
:class:`~softcontact.ContactParams`.  :func:`from_mujoco` uses each datum when it agrees
with the compiled model (else the model's own values), so that a scene whose clouds are
constructor clouds placed without rotation (or moved only by their centre of mass), with
fitted or given contact parameters and kinematic bodies starting at rest, loads back bit
for bit: ``Scene.from_mjcf(scene.to_mjcf(dt), spacing, keyframe="initial")`` builds a
model whose :meth:`~softcontact.Model.rollout` is the original's to the last bit (at the
spacing the clouds were made with), with the same names and order of bodies, controls
and parameters where the scene lists its static bodies first and each contact with its
dynamic body first (of two, the one added first).  Rotated parts come back to rounding;
clouds that are not constructor clouds come back as the samples of their convex hull.

States (:func:`to_mujoco_state`, :func:`from_mujoco_state`) are those of the model
:func:`to_mjcf` writes: ``qpos`` and ``qvel`` hold the dynamic bodies' poses and
velocities in order, ``mocap_pos`` and ``mocap_quat`` the kinematic bodies' poses.
:func:`render` replays states in MuJoCo's renderer.
"""

from __future__ import annotations

import math
import os
from typing import Any, NamedTuple
from xml.sax.saxutils import quoteattr

import numpy as np

from ._optional import require
from ._validate import DT_RANGE, as_float_array, as_in_range, as_int, shape_str
from .cloud import PointCloud
from .contact import ContactParams
from .geometry import extrude
from .sampling import MAX_SAMPLES, as_spacing, check_count, n_segments, too_many
from .scene import Model, Scene, _Fitted
from .spatial import quat_mul, quat_to_matrix

__all__ = [
    "from_mjcf",
    "from_mujoco",
    "load",
    "to_mjcf",
    "MjState",
    "to_mujoco_state",
    "from_mujoco_state",
    "render",
]

_PREFIX = "softcontact:"
_IDENTITY_Q = np.array([1.0, 0.0, 0.0, 0.0])
# MuJoCo's default torsional and rolling friction coefficients (condim 3 uses neither)
_TORSION, _ROLLING = 0.005, 0.0001
# geom colours of to_mjcf: static bodies grey, moving ones by body index
_STATIC_RGBA = "0.7 0.7 0.7 1"
_PALETTE = (
    "0.85 0.33 0.1 1",
    "0.0 0.45 0.74 1",
    "0.47 0.67 0.19 1",
    "0.93 0.69 0.13 1",
    "0.49 0.18 0.56 1",
    "0.3 0.75 0.93 1",
)


def _mujoco():
    return require("mujoco", "mujoco", "softcontact.mjcf")


class _Geom(NamedTuple):
    """One geom of a body, in the body frame: MuJoCo's type name and ``size``, its pose
    ``pos`` (3,) and ``quat`` (4,), and a mesh's ``vertices`` (V, 3) and ``faces`` (F, 3)
    (None for the other types; faces None: MuJoCo takes the vertices' convex hull)."""

    type: str
    size: tuple
    pos: np.ndarray
    quat: np.ndarray
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None


# --------------------------------------------------------------------------------------------
# small geometry helpers
# --------------------------------------------------------------------------------------------
def _is_identity(pos, quat) -> bool:
    return not np.any(pos) and bool(np.array_equal(quat, _IDENTITY_Q))


def _mat_to_quat(R) -> np.ndarray:
    """The unit quaternion (w >= 0) of a rotation matrix; the identity exactly for ``I``."""
    R = np.asarray(R, dtype=float)
    if np.array_equal(R, np.eye(3)):
        return _IDENTITY_Q.copy()
    t = R[0, 0] + R[1, 1] + R[2, 2]
    if t > 0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    qa = np.array(q)
    qa /= np.linalg.norm(qa)
    return -qa if qa[0] < 0 else qa


def _quat_z_to(n) -> np.ndarray:
    """A unit quaternion turning the z axis onto the unit vector ``n``."""
    n = np.asarray(n, dtype=float)
    if np.array_equal(n, [0.0, 0.0, 1.0]):
        return _IDENTITY_Q.copy()
    if n[2] < -1.0 + 1e-12:
        return np.array([0.0, 1.0, 0.0, 0.0])
    q = np.array([1.0 + n[2], -n[1], n[0], 0.0])
    return q / np.linalg.norm(q)


def _compose(pos_a, quat_a, pos_b, quat_b):
    """The pose ``a * b`` (b given in a's frame), exact when ``a`` is the identity."""
    if _is_identity(pos_a, quat_a):
        return np.array(pos_b, dtype=float), np.array(quat_b, dtype=float)
    R = quat_to_matrix(np.asarray(quat_a, dtype=float))
    q = quat_mul(np.asarray(quat_a, dtype=float), np.asarray(quat_b, dtype=float))
    return R @ pos_b + pos_a, q / np.linalg.norm(q)


def _cylinder_cloud(radius, half_height, spacing) -> PointCloud:
    """Samples of the solid cylinder ``x^2 + y^2 <= r^2``, ``|z| <= h`` with exact normals:
    rings on the side (``ceil(2h / spacing)`` segments in z, ``max(8, ceil(2 pi r /
    spacing))`` samples per ring, trapezoid weights) and on each cap (concentric rings
    ``ceil(r / spacing)`` apart, weights the annuli between their mid-radii); the rims are
    sampled once by the side and once by each cap, each copy with its face's normal."""
    r, h = float(radius), float(half_height)
    k = max(8, n_segments(2.0 * math.pi * r, spacing))
    m = n_segments(2.0 * h, spacing)
    nr = max(1, n_segments(r, spacing))
    rho = r * np.arange(nr + 1) / nr
    counts = [1] + [max(6, n_segments(2.0 * math.pi * x, spacing)) for x in rho[1:]]
    counts[-1] = k
    check_count(k * (m + 1) + 2 * sum(counts), spacing)
    ang = 2.0 * math.pi * np.arange(k) / k
    ring = np.column_stack([np.cos(ang), np.sin(ang), np.zeros(k)])
    z = np.linspace(-h, h, m + 1)
    dz = np.full(m + 1, 2.0 * h / m)
    dz[[0, -1]] *= 0.5
    pts = [r * ring + np.outer(np.ones(k), [0.0, 0.0, zi]) for zi in z]
    nrm = [ring] * (m + 1)
    wts = [np.full(k, dzi * 2.0 * math.pi * r / k) for dzi in dz]
    edges = np.concatenate([[0.0], 0.5 * (rho[1:] + rho[:-1]), [r]])
    band = math.pi * (edges[1:] ** 2 - edges[:-1] ** 2)
    for sign in (-1.0, 1.0):
        for x, c, a in zip(rho, counts, band, strict=True):
            phi = 2.0 * math.pi * np.arange(c) / c
            p = np.column_stack([x * np.cos(phi), x * np.sin(phi), np.full(c, sign * h)])
            pts.append(p)
            nrm.append(np.tile([0.0, 0.0, sign], (c, 1)))
            wts.append(np.full(c, a / c))
    return PointCloud(np.concatenate(pts), np.concatenate(nrm), np.concatenate(wts))


def _ellipsoid_cloud(semi_axes, spacing) -> PointCloud:
    """Samples of the ellipsoid ``sum (x_i / a_i)^2 <= 1``: the Fibonacci lattice of
    :meth:`PointCloud.sphere <softcontact.PointCloud.sphere>` (``K = max(12, ceil(4 pi
    a_max^2 / spacing^2))``) mapped by ``x = A u``, exact normals ``A^-1 u / |A^-1 u|``
    and weights ``(4 pi / K) det A |A^-1 u|`` (the surface element of the map)."""
    a = np.asarray(semi_axes, dtype=float)
    q = float(a.max()) / spacing
    ratio = 4.0 * math.pi * q * q
    if not math.isfinite(ratio) or ratio > MAX_SAMPLES:
        too_many(ratio, spacing)
    k = max(12, math.ceil(ratio))
    i = np.arange(k)
    zz = 1.0 - (2.0 * i + 1.0) / k
    rr = np.sqrt((1.0 - zz) * (1.0 + zz))
    lon = i * (math.pi * (3.0 - math.sqrt(5.0)))
    u = np.column_stack([rr * np.cos(lon), rr * np.sin(lon), zz])
    u /= np.linalg.norm(u, axis=1)[:, None]
    g = u / a
    glen = np.linalg.norm(g, axis=1)
    w = (4.0 * math.pi / k) * float(np.prod(a)) * glen
    return PointCloud(u * a, g / glen[:, None], w)


def _geom_cloud(part: _Geom, spacing: float) -> PointCloud:
    """The cloud of one geom in its body's frame."""
    t, s = part.type, part.size
    if t == "box":
        c = PointCloud.box(s[:3], spacing)
    elif t == "sphere":
        c = PointCloud.sphere(s[0], spacing)
    elif t == "capsule":
        c = PointCloud.capsule(s[0], s[1], spacing)
    elif t == "cylinder":
        c = _cylinder_cloud(s[0], s[1], spacing)
    elif t == "ellipsoid":
        c = _ellipsoid_cloud(s[:3], spacing)
    else:  # mesh
        c = PointCloud.from_mesh(part.vertices, part.faces, spacing)
    if _is_identity(part.pos, part.quat):
        return c
    return c.transformed(np.concatenate([part.pos, part.quat]))


# --------------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------------
def from_mjcf(mjcf, spacing, *, keyframe=None) -> Scene:
    """Load an MJCF model as a :class:`~softcontact.Scene` (see the module docstring).

    Parameters
    ----------
    mjcf : str or os.PathLike
        The XML text (a string starting with ``<``) or the path of an MJCF file (meshes
        and includes found relative to it).
    spacing : float
        Sample spacing of every geom's cloud, m (> 0).
    keyframe : int or str, optional
        The keyframe (index or name) whose state is the initial state; default ``qpos0``
        (the MJCF's poses) at rest.

    Returns
    -------
    Scene
        3D, with ``scene.timestep`` the model's ``opt.timestep``.

    Raises
    ------
    ImportError
        Without ``mujoco`` (the ``mujoco`` extra).
    TypeError
        If ``mjcf`` is neither a string nor a path, or another argument has the wrong type.
    ValueError
        If MuJoCo cannot load the model (its message), or :func:`from_mujoco` refuses it.
    """
    mujoco = _mujoco()
    if isinstance(mjcf, os.PathLike):
        path, text = os.fspath(mjcf), None
    elif isinstance(mjcf, str):
        text = mjcf if mjcf.lstrip().startswith("<") else None
        path = None if text is not None else mjcf
    else:
        raise TypeError(f"mjcf must be the MJCF text or a path, got {type(mjcf).__name__}")
    try:
        model = (
            mujoco.MjModel.from_xml_string(text)
            if text is not None
            else mujoco.MjModel.from_xml_path(path)
        )
    except ValueError as exc:
        raise ValueError(f"mjcf: MuJoCo could not load the model: {exc}") from None
    return from_mujoco(model, spacing, keyframe=keyframe)


def load(mjcf, spacing, *, keyframe=None) -> tuple[Scene, float]:
    """Load an MJCF model as a scene and its time step.

    Parameters
    ----------
    mjcf, spacing, keyframe
        As for :func:`from_mjcf`.

    Returns
    -------
    scene : Scene
        :func:`from_mjcf`'s scene.
    dt : float
        The model's ``timestep`` (s), also ``scene.timestep``: ``scene.build(dt)`` steps
        at MuJoCo's time step.

    Raises
    ------
    ImportError, TypeError, ValueError
        As :func:`from_mjcf`.
    """
    scene = from_mjcf(mjcf, spacing, keyframe=keyframe)
    assert scene.timestep is not None
    return scene, scene.timestep


def _numerics(m, mujoco) -> dict[str, np.ndarray]:
    """The model's ``softcontact:`` numeric data by name (prefix removed)."""
    out = {}
    for i in range(m.nnumeric):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_NUMERIC, i) or ""
        if name.startswith(_PREFIX):
            adr, size = int(m.numeric_adr[i]), int(m.numeric_size[i])
            out[name[len(_PREFIX) :]] = np.array(m.numeric_data[adr : adr + size], dtype=float)
    return out


def _initial(m, mujoco, keyframe):
    """qpos, qvel, mocap_pos, mocap_quat of the initial state."""
    if keyframe is None:
        return (
            np.array(m.qpos0, dtype=float),
            np.zeros(m.nv),
            np.array(m.body_pos[m.body_mocapid >= 0], dtype=float)[
                np.argsort(m.body_mocapid[m.body_mocapid >= 0])
            ],
            np.array(m.body_quat[m.body_mocapid >= 0], dtype=float)[
                np.argsort(m.body_mocapid[m.body_mocapid >= 0])
            ],
        )
    if isinstance(keyframe, str):
        k = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, keyframe)
        if k < 0:
            raise ValueError(f"keyframe: the model has no keyframe named {keyframe!r}")
    else:
        if m.nkey == 0:
            raise ValueError(f"keyframe: the model has no keyframes, got {keyframe!r}")
        k = as_int(keyframe, "keyframe", 0, m.nkey - 1)
    return (
        np.array(m.key_qpos[k], dtype=float),
        np.array(m.key_qvel[k], dtype=float),
        np.array(m.key_mpos[k], dtype=float).reshape(-1, 3),
        np.array(m.key_mquat[k], dtype=float).reshape(-1, 4),
    )


def _unique(name: str, taken: set) -> str:
    out, i = name, 1
    while out in taken:
        out = f"{name}_{i}"
        i += 1
    taken.add(out)
    return out


def from_mujoco(model, spacing, *, keyframe=None) -> Scene:
    """A :class:`~softcontact.Scene` of a compiled ``mujoco.MjModel`` (the rules are in
    the module docstring).

    Parameters
    ----------
    model : mujoco.MjModel
    spacing : float
        Sample spacing of every geom's cloud, m (> 0).
    keyframe : int or str, optional
        The keyframe whose ``qpos``, ``qvel`` and mocap poses are the initial state;
        default ``qpos0`` at rest.

    Returns
    -------
    Scene
        3D, gravity ``opt.gravity``, ``scene.timestep`` = ``opt.timestep``; bodies: the
        static geoms (one static body each, in geom order) then the moving bodies in
        MuJoCo's body order, named as in the model.

    Raises
    ------
    ImportError
        Without ``mujoco``.
    TypeError
        If ``model`` is not a ``mujoco.MjModel`` or ``spacing`` is not a real number.
    ValueError
        For a body with joints other than one free joint (naming every such body), a
        height field, SDF or moving plane geom, a moving body without a colliding geom, a
        mesh that is not closed, a bad ``spacing`` or ``keyframe``, or a body or contact
        :class:`~softcontact.Scene` refuses (the message names it).
    """
    mujoco = _mujoco()
    if not isinstance(model, mujoco.MjModel):
        raise TypeError(f"model must be a mujoco.MjModel, got {type(model).__name__}")
    spacing = as_spacing(spacing)
    m = model
    obj = mujoco.mjtObj
    free = int(mujoco.mjtJoint.mjJNT_FREE)
    gtypes = {
        int(mujoco.mjtGeom.mjGEOM_PLANE): "plane",
        int(mujoco.mjtGeom.mjGEOM_SPHERE): "sphere",
        int(mujoco.mjtGeom.mjGEOM_CAPSULE): "capsule",
        int(mujoco.mjtGeom.mjGEOM_ELLIPSOID): "ellipsoid",
        int(mujoco.mjtGeom.mjGEOM_CYLINDER): "cylinder",
        int(mujoco.mjtGeom.mjGEOM_BOX): "box",
        int(mujoco.mjtGeom.mjGEOM_MESH): "mesh",
    }
    jtypes = {0: "free", 1: "ball", 2: "slide", 3: "hinge"}

    def bname(b):
        return mujoco.mj_id2name(m, obj.mjOBJ_BODY, b) or f"body{b}"

    def gname(g):
        return mujoco.mj_id2name(m, obj.mjOBJ_GEOM, g) or f"geom{g}"

    # -- the moving bodies (free or mocap) and what is welded to them ------------------------
    kinds: dict[int, str] = {}
    refused = []
    for b in range(1, m.nbody):
        nj, j0 = int(m.body_jntnum[b]), int(m.body_jntadr[b])
        if m.body_mocapid[b] >= 0:
            kinds[b] = "kinematic"
        elif nj == 1 and int(m.jnt_type[j0]) == free and m.body_parentid[b] == 0:
            kinds[b] = "dynamic"
        elif nj == 1 and int(m.jnt_type[j0]) == free:
            refused.append(f"{bname(b)!r} (free, inside body {bname(int(m.body_parentid[b]))!r})")
        elif nj:
            types = ", ".join(jtypes.get(int(m.jnt_type[j]), "?") for j in range(j0, j0 + nj))
            refused.append(f"{bname(b)!r} ({types})")
    if refused:
        raise ValueError(
            "model: only free bodies (one free joint, children of the world), mocap bodies "
            "and bodies welded to them or to the world can be loaded; refused: "
            f"{', '.join(refused)}"
        )
    owner = np.zeros(m.nbody, dtype=int)  # the moving body (or 0, the world) each is welded to
    for b in range(1, m.nbody):  # parents come before their children
        owner[b] = b if b in kinds else owner[int(m.body_parentid[b])]

    actuated = _actuated_free_joints(m, mujoco)
    qpos, qvel, mpos, mquat = _initial(m, mujoco, keyframe)
    data = mujoco.MjData(m)
    data.qpos[:] = qpos
    if m.nmocap:
        data.mocap_pos[:] = mpos
        data.mocap_quat[:] = mquat
    mujoco.mj_kinematics(m, data)
    nums = _numerics(m, mujoco)

    # -- which geoms can collide -------------------------------------------------------------
    in_pair = set(np.asarray(m.pair_geom1).tolist()) | set(np.asarray(m.pair_geom2).tolist())
    colliding = [
        g for g in range(m.ngeom) if m.geom_contype[g] or m.geom_conaffinity[g] or g in in_pair
    ]
    for g in colliding:
        code = int(m.geom_type[g])
        if code not in gtypes:
            raise ValueError(
                f"model: geom {gname(g)!r} is a {mujoco.mjtGeom(code).name[7:].lower()}, which "
                "cannot be loaded (planes, spheres, capsules, ellipsoids, cylinders, boxes "
                "and meshes can)"
            )
        if gtypes[code] == "plane" and owner[m.geom_bodyid[g]] != 0:
            raise ValueError(f"model: plane geom {gname(g)!r} is on a moving body")

    def mesh_part(g, pos, quat) -> _Geom:
        """A mesh geom in the frame where it sits at (pos, quat), MuJoCo's compiled mesh or
        the exact one the MJCF carries (when the two agree)."""
        mid = int(m.geom_dataid[g])
        va, vn = int(m.mesh_vertadr[mid]), int(m.mesh_vertnum[mid])
        fa, fn = int(m.mesh_faceadr[mid]), int(m.mesh_facenum[mid])
        verts = np.array(m.mesh_vert[va : va + vn], dtype=float)
        faces = np.array(m.mesh_face[fa : fa + fn], dtype=np.int64)
        part = _Geom(
            "mesh", (), np.array(pos, dtype=float), np.array(quat, dtype=float), verts, faces
        )
        mname = mujoco.mj_id2name(m, obj.mjOBJ_MESH, mid) or ""
        exact_mesh = nums.get(f"mesh:{mname}")
        exact_pose = nums.get(f"geom:{gname(g)}")
        if exact_mesh is None or exact_pose is None or exact_pose.size != 7:
            return part
        nv_, nf_ = int(exact_mesh[0]), int(exact_mesh[1])
        if exact_mesh.size != 2 + 3 * nv_ + 3 * nf_:
            return part
        ev = exact_mesh[2 : 2 + 3 * nv_].reshape(nv_, 3)
        ef = exact_mesh[2 + 3 * nv_ :].reshape(nf_, 3).astype(np.int64)

        # where the geom's pose (pos, quat: MuJoCo's, which includes the mesh's own frame)
        # and the exact one place the two meshes' bounding boxes
        def box(v, p, q):
            w = v @ quat_to_matrix(q).T + p
            return np.concatenate([w.min(axis=0), w.max(axis=0)])

        # the exact pose relative to the body; the compiled (pos, quat) may be in another
        # frame (a welded child): compare in the frame the compiled pose is given in
        b = int(m.geom_bodyid[g])
        if owner[b] != b:
            return part
        ep, eq = exact_pose[:3], exact_pose[3:]
        size = float(np.ptp(verts, axis=0).max())
        if not np.allclose(box(verts, pos, quat), box(ev, ep, eq), rtol=0.0, atol=1e-5 * size):
            return part
        return _Geom("mesh", (), ep.copy(), eq.copy(), ev, ef)

    def part_of(g, frame_body) -> _Geom:
        """Geom g in the frame of body ``frame_body`` (its own body or the moving body it
        is welded to; 0: the world)."""
        b = int(m.geom_bodyid[g])
        if b == frame_body or (frame_body == 0 and b == 0):
            pos = np.array(m.geom_pos[g], dtype=float)
            quat = np.array(m.geom_quat[g], dtype=float)
        else:
            Rf = np.array(data.xmat[frame_body], dtype=float).reshape(3, 3)
            pos = Rf.T @ (np.array(data.geom_xpos[g]) - np.array(data.xpos[frame_body]))
            quat = _mat_to_quat(Rf.T @ np.array(data.geom_xmat[g]).reshape(3, 3))
        t = gtypes[int(m.geom_type[g])]
        if t == "mesh":
            return mesh_part(g, pos, quat)
        return _Geom(t, tuple(float(v) for v in m.geom_size[g]), pos, quat)

    scene = Scene(dim=3, gravity=np.array(m.opt.gravity, dtype=float))
    scene.timestep = float(m.opt.timestep)
    # moving bodies keep their MuJoCo names (unique among bodies); a static geom's name
    # that clashes with one gets a suffix
    names: set[str] = {bname(b) for b in kinds}
    body_of_geom: dict[int, int] = {}  # colliding geom -> softcontact body index
    kind_of: list[str] = []

    # -- static geoms: one static body each ----------------------------------------------------
    for g in colliding:
        b = int(m.geom_bodyid[g])
        if owner[b] != 0:
            continue
        t = gtypes[int(m.geom_type[g])]
        own = mujoco.mj_id2name(m, obj.mjOBJ_GEOM, g)
        name = _unique(own or (bname(b) if b else f"geom{g}"), names)
        try:
            if t == "plane":
                if b == 0:
                    gpos = np.array(m.geom_pos[g], dtype=float)
                    gquat = np.array(m.geom_quat[g], dtype=float)
                else:
                    gpos = np.array(data.geom_xpos[g], dtype=float)
                    gquat = _mat_to_quat(np.array(data.geom_xmat[g]).reshape(3, 3))
                cloud = PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
                static_parts: tuple[_Geom, ...] | None = None
            else:
                # the geom's world pose is the static body's; its part sits at the origin
                part = part_of(g, 0)
                gpos, gquat = part.pos, part.quat
                part = part._replace(pos=np.zeros(3), quat=_IDENTITY_Q.copy())
                cloud = _geom_cloud(part, spacing)
                static_parts = (part,)
            scene.add_body(cloud, kind="static", pose=np.concatenate([gpos, gquat]), name=name)
        except ValueError as exc:
            raise ValueError(f"model: geom {gname(g)!r}: {exc}") from None
        scene._bodies[-1].parts = static_parts
        body_of_geom[g] = len(kind_of)
        kind_of.append("static")

    # -- moving bodies ---------------------------------------------------------------------------
    for b in range(1, m.nbody):
        if b not in kinds:
            continue
        name = bname(b)
        mine = [g for g in colliding if owner[m.geom_bodyid[g]] == b]
        if not mine:
            raise ValueError(
                f"model: body {bname(b)!r} has no geom that can collide (contype, "
                "conaffinity or a <pair>)"
            )
        parts = tuple(part_of(g, b) for g in mine)
        try:
            cloud = PointCloud.concatenate([_geom_cloud(p, spacing) for p in parts])
        except ValueError as exc:
            raise ValueError(f"model: body {bname(b)!r}: {exc}") from None
        if kinds[b] == "kinematic":
            k = int(m.body_mocapid[b])
            pose = np.concatenate([mpos[k], mquat[k]])
            try:
                scene.add_body(cloud, kind="kinematic", pose=pose, name=name)
            except ValueError as exc:
                raise ValueError(f"model: body {bname(b)!r}: {exc}") from None
            com = np.zeros(3)
        else:
            mass, com, inertia = _mass_properties(
                m, data, b, owner, nums.get(f"inertia:{bname(b)}")
            )
            j = int(m.body_jntadr[b])
            qa, va = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
            pose = qpos[qa : qa + 7]
            v, w = qvel[va : va + 3], qvel[va + 3 : va + 6]
            if np.any(com) and np.any(w):
                v = v + quat_to_matrix(pose[3:] / np.linalg.norm(pose[3:])) @ np.cross(w, com)
            try:
                scene.add_body(
                    cloud,
                    actuated=j in actuated,
                    mass=mass,
                    inertia=inertia,
                    com=com,
                    pose=pose,
                    velocity=np.concatenate([v, w]),
                    name=name,
                )
            except ValueError as exc:
                raise ValueError(f"model: body {bname(b)!r}: {exc}") from None
        # the parts in the softcontact body frame (origin at the centre of mass)
        scene._bodies[-1].parts = tuple(p._replace(pos=p.pos - com) for p in parts)
        for g in mine:
            body_of_geom[g] = len(kind_of)
        kind_of.append(kinds[b])

    # -- contacts --------------------------------------------------------------------------------
    contacts: dict[frozenset, list] = {}  # {a, b} -> [a, b, friction, params]

    def note(ga, gb, mu, params=None):
        a, c = body_of_geom.get(ga), body_of_geom.get(gb)
        if a is None or c is None or a == c or "dynamic" not in (kind_of[a], kind_of[c]):
            return
        key = frozenset((a, c))
        if key not in contacts:
            contacts[key] = [a, c, mu, params]
        else:
            e = contacts[key]
            e[2] = max(e[2], mu)
            if params is not None and e[3] is None:
                e[3] = params

    for k in range(m.npair):
        params = None
        exact = nums.get(f"pair:{k}")
        mu = float(m.pair_friction[k, 0])
        if exact is not None and exact.size == 7 and exact[5] == mu:
            try:
                params = ContactParams(*exact.tolist())
            except (TypeError, ValueError):
                params = None
        note(int(m.pair_geom1[k]), int(m.pair_geom2[k]), mu, params)
    excluded = {int(s) for s in np.asarray(m.exclude_signature).ravel()}
    for i, ga in enumerate(colliding):
        for gb in colliding[i + 1 :]:
            if not (
                (m.geom_contype[ga] & m.geom_conaffinity[gb])
                or (m.geom_contype[gb] & m.geom_conaffinity[ga])
            ):
                continue
            ba, bb = int(m.geom_bodyid[ga]), int(m.geom_bodyid[gb])
            if ((min(ba, bb) << 16) + max(ba, bb)) in excluded:
                continue
            wa, wb = int(owner[ba]), int(owner[bb])
            if ((min(wa, wb) << 16) + max(wa, wb)) in excluded:
                continue
            pa, pb = int(m.geom_priority[ga]), int(m.geom_priority[gb])
            fa, fb = float(m.geom_friction[ga, 0]), float(m.geom_friction[gb, 0])
            mu = fa if pa > pb else fb if pb > pa else max(fa, fb)
            note(ga, gb, mu)
    for a, c, mu, params in contacts.values():
        # the dynamic body first; of two dynamic bodies, the one added first
        if (kind_of[a] != "dynamic" and kind_of[c] == "dynamic") or (
            kind_of[a] == kind_of[c] == "dynamic" and a > c
        ):
            a, c = c, a
        try:
            if params is not None and params.friction == mu:
                scene.add_contact(a, c, params)
            else:
                scene.add_contact(a, c, friction=mu)
        except ValueError as exc:
            na, nc = scene._bodies[a].name, scene._bodies[c].name
            raise ValueError(f"model: contact({na},{nc}): {exc}") from None
    return scene


def _actuated_free_joints(m, mujoco) -> set[int]:
    """The free joints driven by six motors (fixed unit gain, no bias, no dynamics) whose
    gears are the six unit vectors: the actuated bodies :func:`to_mjcf` writes."""
    e = mujoco
    found: dict[int, set[int]] = {}
    for a in range(m.nu):
        if int(m.actuator_trntype[a]) != int(e.mjtTrn.mjTRN_JOINT):
            continue
        j = int(m.actuator_trnid[a, 0])
        if int(m.jnt_type[j]) != int(e.mjtJoint.mjJNT_FREE):
            continue
        if (
            int(m.actuator_dyntype[a]) != int(e.mjtDyn.mjDYN_NONE)
            or int(m.actuator_gaintype[a]) != int(e.mjtGain.mjGAIN_FIXED)
            or int(m.actuator_biastype[a]) != int(e.mjtBias.mjBIAS_NONE)
            or float(m.actuator_gainprm[a, 0]) != 1.0
        ):
            continue
        gear = np.asarray(m.actuator_gear[a], dtype=float)
        nz = np.flatnonzero(gear)
        if nz.size == 1 and gear[nz[0]] == 1.0:
            found.setdefault(j, set()).add(int(nz[0]))
    return {j for j, dofs in found.items() if dofs == set(range(6))}


def _mass_properties(m, data, b, owner, exact):
    """Mass, centre of mass (body frame) and inertia (body axes, about the centre of mass)
    of moving body ``b`` with the bodies welded to it; ``exact``: the MJCF's exact inertia
    (9 numbers), used when it agrees with the compiled one."""
    members = [c for c in range(1, m.nbody) if owner[c] == b and m.body_mass[c] > 0]
    if members == [b] or not members:
        mass = float(m.body_mass[b])
        com = np.array(m.body_ipos[b], dtype=float)
        Ri = quat_to_matrix(np.array(m.body_iquat[b], dtype=float))
        inertia = Ri @ np.diag(np.array(m.body_inertia[b], dtype=float)) @ Ri.T
    else:
        R0 = np.array(data.xmat[b], dtype=float).reshape(3, 3)
        p0 = np.array(data.xpos[b], dtype=float)
        masses = np.array([float(m.body_mass[c]) for c in members])
        mass = float(masses.sum())
        pts = [R0.T @ (np.array(data.xipos[c]) - p0) for c in members]
        com = sum(mc * p for mc, p in zip(masses, pts, strict=True)) / mass
        inertia = np.zeros((3, 3))
        for mc, p, c in zip(masses, pts, members, strict=True):
            Rc = R0.T @ np.array(data.ximat[c], dtype=float).reshape(3, 3)
            d = p - com
            inertia += Rc @ np.diag(np.array(m.body_inertia[c], dtype=float)) @ Rc.T
            inertia += mc * (float(d @ d) * np.eye(3) - np.outer(d, d))
    inertia = 0.5 * (inertia + inertia.T)
    if exact is not None and exact.size == 9 and members in ([b], []):
        J = exact.reshape(3, 3)
        scale = float(np.abs(inertia).max())
        if np.array_equal(J, J.T) and np.allclose(J, inertia, rtol=0.0, atol=1e-9 * scale):
            inertia = J.copy()
    return mass, com, inertia


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------
def _f(v) -> str:
    """Numbers for MJCF attributes, exactly (repr of float64)."""
    return " ".join(repr(float(c)) for c in np.ravel(v))


def _solid_geoms(b) -> list[_Geom]:
    """The geoms of a body (in its body frame) for MJCF: its recorded parts, or its
    cloud's solid, or a mesh of its samples (MuJoCo: their convex hull)."""
    parts = getattr(b, "parts", None)
    if parts:
        return list(parts)
    cloud = b.cloud
    solid = cloud._geometry
    if solid is None:
        pts = np.unique(np.asarray(cloud.points), axis=0)
        return [_Geom("mesh", (), np.zeros(3), _IDENTITY_Q.copy(), pts, None)]
    pos, quat = np.array(solid.trans), _mat_to_quat(solid.rot)
    p = solid.params
    if solid.shape == "box":
        return [_Geom("box", tuple(float(v) for v in p["half_extents"]), pos, quat)]
    if solid.shape == "sphere":
        return [_Geom("sphere", (p["radius"],), pos, quat)]
    if solid.shape == "capsule":
        return [_Geom("capsule", (p["radius"], p["half_length"]), pos, quat)]
    if solid.shape == "mesh":
        return [_Geom("mesh", (), pos, quat, np.array(p["vertices"]), np.array(p["faces"]))]
    if solid.shape == "prism":
        v, f = extrude(np.array(p["vertices"]), p["half_height"])
        return [_Geom("mesh", (), pos, quat, v, f)]
    raise ValueError(f"body {b.name!r}: a {solid.shape} has no MuJoCo geom")  # pragma: no cover


def to_mjcf(scene, dt=None, *, exact=True, model_name="softcontact") -> str:
    """The MJCF text of the MuJoCo model equivalent to a 3D scene (the conventions are
    in the module docstring).

    Parameters
    ----------
    scene : Scene or Model
        A 3D scene, or a model (its :attr:`~softcontact.Model.scene`, and its ``dt`` as
        the default time step).
    dt : float, optional
        MuJoCo's ``timestep`` (s); default the model's ``dt`` or the scene's
        ``timestep``.
    exact : bool, default True
        Also write the ``softcontact:`` numeric data with which :func:`from_mujoco`
        rebuilds the scene bit for bit.
    model_name : str, default "softcontact"
        The ``<mujoco model=...>`` name.

    Returns
    -------
    str
        The MJCF text; ``mujoco.MjModel.from_xml_string`` compiles it.

    Raises
    ------
    TypeError
        If ``scene`` is neither a Scene nor a Model, or another argument has the wrong
        type.
    ValueError
        If the scene is 2D, ``dt`` is missing (a scene without ``timestep``) or out of
        range, or a half-space belongs to a moving body (MuJoCo's planes are static).
    """
    if isinstance(scene, Model):
        dt = scene.dt if dt is None else dt
        scene = scene.scene
    elif not isinstance(scene, Scene):
        raise TypeError(f"scene must be a Scene or a Model, got {type(scene).__name__}")
    if scene.dim != 3:
        raise ValueError("scene: to_mjcf writes 3D scenes only (the scene is 2D)")
    if dt is None:
        dt = scene.timestep
        if dt is None:
            raise ValueError("dt: give the time step (the scene records none)")
    dt = as_in_range(dt, "dt", *DT_RANGE, " s")
    if not isinstance(exact, (bool, np.bool_)):
        raise TypeError(f"exact must be a bool, got {type(exact).__name__}")
    if not isinstance(model_name, str):
        raise TypeError(f"model_name must be a str, got {type(model_name).__name__}")

    assets: list[str] = []
    world: list[str] = []
    bodies: list[str] = []
    numerics: list[tuple[str, np.ndarray]] = []
    geom_names: dict[int, list[str]] = {}
    taken_geoms: set[str] = set()
    motors: list[str] = []
    key_qpos: list[np.ndarray] = []
    key_qvel: list[np.ndarray] = []
    key_mpos: list[np.ndarray] = []
    key_mquat: list[np.ndarray] = []
    q = quoteattr

    def geom_xml(gname, part, pos, quat, rgba):
        attrs = f"name={q(gname)}"
        if part.type == "mesh":
            attrs += f' type="mesh" mesh={q(gname)}'
        else:
            attrs += f' type="{part.type}" size="{_f(part.size)}"'
        if np.any(pos):
            attrs += f' pos="{_f(pos)}"'
        if not np.array_equal(quat, _IDENTITY_Q):
            attrs += f' quat="{_f(quat)}"'
        return f'<geom {attrs} rgba="{rgba}" contype="0" conaffinity="0"/>'

    def mesh_asset(gname, part, pos, quat):
        attrs = f'name={q(gname)} vertex="{_f(part.vertices)}"'
        if part.faces is not None:
            attrs += f' face="{" ".join(str(int(k)) for k in np.ravel(part.faces))}"'
            if exact:
                v, f = np.asarray(part.vertices, dtype=float), np.asarray(part.faces)
                numerics.append(
                    (f"mesh:{gname}", np.concatenate([[len(v), len(f)], v.ravel(), f.ravel()]))
                )
                numerics.append((f"geom:{gname}", np.concatenate([pos, quat])))
        assets.append(f"<mesh {attrs}/>")

    for i, b in enumerate(scene._bodies):
        t, qb = np.array(b.pose[:3], dtype=float), np.array(b.pose[3:], dtype=float)
        if b.cloud.kind == "halfspace":
            if b.kind != "static":
                raise ValueError(
                    f"scene: half-space body {b.name!r} is {b.kind}; MuJoCo's planes are static"
                )
            p, n = np.array(b.cloud.points[0]), np.array(b.cloud.normals[0])
            if not np.any(p) and np.array_equal(n, [0.0, 0.0, 1.0]):
                pos, quat = t, qb
            else:
                R = quat_to_matrix(qb)
                pos, quat = R @ p + t, _quat_z_to(R @ n)
            gname = _unique(b.name, taken_geoms)
            geom_names[i] = [gname]
            attrs = f'name={q(gname)} type="plane" size="0 0 1"'
            if np.any(pos):
                attrs += f' pos="{_f(pos)}"'
            if not np.array_equal(quat, _IDENTITY_Q):
                attrs += f' quat="{_f(quat)}"'
            world.append(f'<geom {attrs} rgba="{_STATIC_RGBA}" contype="0" conaffinity="0"/>')
            continue
        parts = _solid_geoms(b)
        names = [
            _unique(b.name if len(parts) == 1 else f"{b.name}_{k}", taken_geoms)
            for k in range(len(parts))
        ]
        geom_names[i] = names
        rgba = _STATIC_RGBA if b.kind == "static" else _PALETTE[i % len(_PALETTE)]
        lines = []
        for gname, part in zip(names, parts, strict=True):
            if b.kind == "static":
                pos, quat = _compose(t, qb, part.pos, part.quat)
            else:
                pos, quat = part.pos, part.quat
            if part.type == "mesh":
                mesh_asset(gname, part, pos, quat)
            lines.append(geom_xml(gname, part, pos, quat, rgba))
        if b.kind == "static":
            world.extend(lines)
            continue
        head = f'<body name={q(b.name)} pos="{_f(t)}" quat="{_f(qb)}"'
        inner = []
        if b.kind == "kinematic":
            head += ' mocap="true"'
            key_mpos.append(t)
            key_mquat.append(qb)
        else:
            inner.append(f"<freejoint name={q(b.name)}/>")
            J = np.asarray(b.inertia, dtype=float)
            full = [J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]]
            inner.append(f'<inertial pos="0 0 0" mass="{_f(b.mass)}" fullinertia="{_f(full)}"/>')
            if exact:
                numerics.append((f"inertia:{b.name}", J.ravel()))
            key_qpos.append(np.concatenate([t, qb]))
            key_qvel.append(np.asarray(b.velocity, dtype=float))
            if b.actuated:
                for k, axis in enumerate(("fx", "fy", "fz", "tx", "ty", "tz")):
                    gear = np.zeros(6)
                    gear[k] = 1.0
                    motors.append(
                        f'<motor name={q(f"{b.name}.{axis}")} joint={q(b.name)} gear="{_f(gear)}"/>'
                    )
        body = [head + ">"] + ["  " + s for s in inner + lines] + ["</body>"]
        bodies.extend(body)

    pairs: list[str] = []
    for a, c, params in scene._pairs:
        mu = float(params.friction)
        fr = _f([mu, mu, _TORSION, _ROLLING, _ROLLING])
        first = len(pairs)
        for ga in geom_names[a]:
            for gc in geom_names[c]:
                pairs.append(f'<pair geom1={q(ga)} geom2={q(gc)} condim="3" friction="{fr}"/>')
        if exact and isinstance(params, ContactParams) and not isinstance(params, _Fitted):
            numerics.append((f"pair:{first}", np.array(params._astuple(), dtype=float)))

    ind = "\n    "
    out = [f"<mujoco model={q(model_name)}>", '  <compiler angle="radian"/>']
    out.append(f'  <option timestep="{_f(dt)}" integrator="Euler" gravity="{_f(scene.gravity)}"/>')
    if assets:
        out += ["  <asset>", "    " + ind.join(assets), "  </asset>"]
    out += ["  <worldbody>"] + ["    " + s for s in world + bodies] + ["  </worldbody>"]
    if pairs:
        out += ["  <contact>", "    " + ind.join(pairs), "  </contact>"]
    if motors:
        out += ["  <actuator>", "    " + ind.join(motors), "  </actuator>"]
    key = ['<key name="initial"']
    if key_qpos:
        key.append(f'qpos="{_f(np.concatenate(key_qpos))}" qvel="{_f(np.concatenate(key_qvel))}"')
    if key_mpos:
        key.append(f'mpos="{_f(np.concatenate(key_mpos))}" mquat="{_f(np.concatenate(key_mquat))}"')
    out += ["  <keyframe>", "    " + " ".join(key) + "/>", "  </keyframe>"]
    if numerics:
        out += ["  <custom>"]
        out += [
            f'    <numeric name={q(_PREFIX + name)} size="{v.size}" data="{_f(v)}"/>'
            for name, v in numerics
        ]
        out += ["  </custom>"]
    out.append("</mujoco>")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# states
# --------------------------------------------------------------------------------------------
class MjState(NamedTuple):
    """A softcontact state as the state of the MuJoCo model of :func:`to_mjcf`:
    ``qpos`` (7 per dynamic body: position, quaternion w, x, y, z), ``qvel`` (6 per
    dynamic body: linear velocity in the world frame, angular velocity in the body
    frame), ``mocap_pos`` (n_kinematic, 3) and ``mocap_quat`` (n_kinematic, 4)."""

    qpos: np.ndarray
    qvel: np.ndarray
    mocap_pos: np.ndarray
    mocap_quat: np.ndarray


def _layout(model):
    if not isinstance(model, Model):
        raise TypeError(f"model must be a softcontact Model, got {type(model).__name__}")
    if model.dim != 3:
        raise ValueError("model: MuJoCo states are those of 3D models (the model is 2D)")
    kinds = [k for k in model._kinds if k != "static"]
    return kinds


def to_mujoco_state(model, x) -> MjState:
    """The MuJoCo state (:class:`MjState`) of the softcontact state ``x`` of a 3D
    ``model``, for the MuJoCo model ``to_mjcf(model)``.

    The bodies' frames are their centres of mass in both models, so the dynamic bodies'
    poses and velocities are copied element for element (MuJoCo's free joint and
    softcontact both hold the world-frame linear and the body-frame angular velocity);
    kinematic bodies' poses go to the mocap arrays (their velocities, softcontact's
    controls, have no place in MuJoCo's state).

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not a 3D :class:`~softcontact.Model` or ``x`` not one of its
        states (the messages name the argument).
    """
    kinds = _layout(model)
    xa = model._as_state(x)
    nq = model.nq
    poses = xa[:nq].reshape(-1, 7)
    vels = xa[nq:].reshape(-1, 6)
    dyn = [j for j, k in enumerate(kinds) if k == "dynamic"]
    kin = [j for j, k in enumerate(kinds) if k == "kinematic"]
    return MjState(
        poses[dyn].ravel().copy(),
        vels[dyn].ravel().copy(),
        poses[kin, :3].copy(),
        poses[kin, 3:].copy(),
    )


def from_mujoco_state(
    model, qpos, qvel, mocap_pos=None, mocap_quat=None, mocap_vel=None
) -> np.ndarray:
    """The softcontact state of a 3D ``model`` from the state of ``to_mjcf(model)``'s
    MuJoCo model (the inverse of :func:`to_mujoco_state`).

    Parameters
    ----------
    model : Model
    qpos, qvel : array_like
        (7 n_dynamic,) and (6 n_dynamic,).
    mocap_pos, mocap_quat : array_like, optional
        (n_kinematic, 3) and (n_kinematic, 4); needed when the model has kinematic bodies.
    mocap_vel : array_like, optional
        (n_kinematic, 6): the kinematic bodies' velocities (linear in the world frame,
        angular in the body frame); default zero.

    Returns
    -------
    (nx,) ndarray

    Raises
    ------
    TypeError, ValueError
        For a model that is not a 3D :class:`~softcontact.Model` or an argument of the
        wrong shape, or a state the model refuses (the messages name the argument).
    """
    kinds = _layout(model)
    nd = sum(k == "dynamic" for k in kinds)
    nk = len(kinds) - nd
    qp = as_float_array(qpos, "qpos")
    qv = as_float_array(qvel, "qvel")
    if qp.shape != (7 * nd,):
        raise ValueError(f"qpos must have shape ({7 * nd},), got {shape_str(qp.shape)}")
    if qv.shape != (6 * nd,):
        raise ValueError(f"qvel must have shape ({6 * nd},), got {shape_str(qv.shape)}")
    arrays = {}
    for name, arr, width, default in (
        ("mocap_pos", mocap_pos, 3, None),
        ("mocap_quat", mocap_quat, 4, None),
        ("mocap_vel", mocap_vel, 6, 0.0),
    ):
        if arr is None:
            if nk and default is None:
                raise ValueError(f"{name} must be given: the model has {nk} kinematic bodies")
            arrays[name] = np.zeros((nk, width))
            continue
        a = as_float_array(arr, name)
        if a.shape != (nk, width):
            raise ValueError(f"{name} must have shape ({nk}, {width}), got {shape_str(a.shape)}")
        arrays[name] = a
    poses, vels = [], []
    jd = jk = 0
    for k in kinds:
        if k == "dynamic":
            poses.append(qp[7 * jd : 7 * jd + 7])
            vels.append(qv[6 * jd : 6 * jd + 6])
            jd += 1
        else:
            poses.append(np.concatenate([arrays["mocap_pos"][jk], arrays["mocap_quat"][jk]]))
            vels.append(arrays["mocap_vel"][jk])
            jk += 1
    x = np.concatenate(poses + vels)
    return model._as_state(x, "state").copy()


# --------------------------------------------------------------------------------------------
# replay
# --------------------------------------------------------------------------------------------
def render(model, states, *, width=320, height=240, camera=-1) -> np.ndarray:
    """Frames of MuJoCo's renderer showing a trajectory of a 3D ``model``.

    Each state is set on ``to_mjcf(model)``'s MuJoCo model (:func:`to_mujoco_state`;
    kinematic bodies as mocap bodies) and drawn by ``mujoco.Renderer``.

    Parameters
    ----------
    model : Model
        A 3D model.
    states : array_like
        (nx,) or (T, nx): states of ``model`` (e.g. ``model.rollout(...).states``).
    width, height : int
        Image size in pixels (1..4096).
    camera : int or str, default -1
        MuJoCo's camera: -1 the free camera, or a camera of the model.

    Returns
    -------
    (T, height, width, 3) ndarray of uint8
        One RGB frame per state (T = 1 for a single state).

    Raises
    ------
    ImportError
        Without ``mujoco``.
    RuntimeError
        When MuJoCo cannot start an OpenGL context (set ``MUJOCO_GL`` to ``egl`` or
        ``osmesa`` before ``mujoco`` is imported, where those are installed).
    TypeError, ValueError
        For a bad argument (the messages name it).
    """
    mujoco = _mujoco()
    _layout(model)
    width = as_int(width, "width", 1, 4096)
    height = as_int(height, "height", 1, 4096)
    X = as_float_array(states, "states")
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim != 2 or X.shape[1] != model.nx:
        raise ValueError(
            f"states must have shape ({model.nx},) or (T, {model.nx}), got {shape_str(X.shape)}"
        )
    text = to_mjcf(model, exact=False).replace(
        "<worldbody>",
        f'<visual><global offwidth="{width}" offheight="{height}"/></visual>\n  <worldbody>\n'
        '    <light directional="true" pos="0 0 10" dir="0.3 0.2 -1"/>',
        1,
    )
    mj = mujoco.MjModel.from_xml_string(text)
    mstates = [to_mujoco_state(model, x) for x in X]
    renderer: Any = None
    try:
        renderer = mujoco.Renderer(mj, height, width)
    except Exception as exc:  # mujoco.FatalError, or errors of the GL bindings
        raise RuntimeError(
            "render: MuJoCo could not start an OpenGL context "
            f"({type(exc).__name__}: {exc}); set MUJOCO_GL=egl (EGL, e.g. a GPU) or "
            "MUJOCO_GL=osmesa (software) before importing mujoco"
        ) from exc
    try:
        data = mujoco.MjData(mj)
        frames = np.empty((len(X), height, width, 3), dtype=np.uint8)
        for i, s in enumerate(mstates):
            data.qpos[:] = s.qpos
            data.qvel[:] = s.qvel
            if mj.nmocap:
                data.mocap_pos[:] = s.mocap_pos
                data.mocap_quat[:] = s.mocap_quat
            mujoco.mj_forward(mj, data)
            renderer.update_scene(data, camera=camera)
            frames[i] = renderer.render()
    finally:
        renderer.close()
    return frames
