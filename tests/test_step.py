"""One step of a compiled scene (docs/method.md sections 3, 6-8) through ``Model.step``,
``Model.rollout`` and ``Model.inverse_dynamics``.

Derivatives: the first and second derivatives of the step map, those of

    z = (dx, du)  ->  difference(x_next(retract(x, dx), u + du), x_next(x, u)),

against central differences on the manifold (the Jacobian from values, the Hessian from
the analytic Jacobian), with the O(h^2) convergence of the differences shown at two steps,
and against Taylor remainders along random directions; the parameter derivatives against
models rebuilt with each parameter perturbed.  Batches: rollout == a loop of steps, bitwise,
whatever the thread count; values do not depend on the requested derivatives.  Physics:
momentum through collisions, energy with damping and friction, free fall, kinematic bodies.

Scenes (coarse clouds, so that the file stays fast):
  pusher    2D: a dynamic T with support friction, pushed by a kinematic disk;
  act2      2D: an actuated T with support friction against a free disk with support;
  boxball   3D: a box resting on a static half-space floor, a free ball on top of it;
  actbox    3D: an actuated box (inertia with off-diagonal terms) on the floor;
each ``contact`` (bodies overlapping by 2-3 mm) or ``apart`` (every gap >= 3 cm).
"""

import dataclasses
import functools

import numpy as np
import pytest

import softcontact as sc
from softcontact import _core
from softcontact.spatial import quat_to_matrix
from softcontact.testing import step_hessian, step_jacobian, taylor_remainders, taylor_slopes

# Scenes here step past the explicit integrator's friction and damping limits on purpose:
# what is checked (derivatives, bits, memory, parameters) holds at any dt.  Scene.build's
# stability warning is tested in tests/test_scene.py.
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


U = np.finfo(float).eps

# the parameters of tests/test_contact.py: sqrt(eps) = 5 mm, eps_c = beta = 1 mm, k = 2 kN/m
PARAMS = sc.ContactParams(
    eps=2.5e-5, eps_c=1e-3, stiffness=2e3, beta=1e-3, damping=5.0, friction=0.6, slip_velocity=1e-2
)

T_CLOUD = sc.PointCloud.t_shape(spacing=0.008)  # 71 samples
DISK = sc.PointCloud.disk(0.02, 0.006)  # 21
BOX = sc.PointCloud.box([0.03, 0.02, 0.015], 0.008)  # 258
BALL = sc.PointCloud.sphere(0.02, 0.008)  # 79
FLOOR = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])

T_INERTIA = T_CLOUD.mass_properties(10.0).inertia * 0.1 / T_CLOUD.mass_properties(10.0).mass


def _unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _place(a, pa, b, pb, direction, gap):
    """B's pose (orientation of ``pb``) on the ray ``pa + s direction`` with min Phi = gap."""
    dim = a.dim

    def at(s):
        p = np.array(pb, dtype=float)
        p[:dim] = pa[:dim] + s * np.asarray(direction)
        return p

    def min_phi(s):
        return sc.separation(a, pa, b, at(s), PARAMS.eps).phi.min()

    lo, hi = 0.0, 0.4
    assert min_phi(lo) < gap < min_phi(hi)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if min_phi(mid) < gap else (lo, mid)
    return at(0.5 * (lo + hi))


def _pair(p, name):
    return dataclasses.replace(
        PARAMS,
        stiffness=p[f"{name}.stiffness"],
        damping=p[f"{name}.damping"],
        friction=p[f"{name}.friction"],
    )


def _pair_defaults(name):
    return {
        f"{name}.stiffness": PARAMS.stiffness,
        f"{name}.damping": PARAMS.damping,
        f"{name}.friction": PARAMS.friction,
    }


# ---- 2D -------------------------------------------------------------------------------------
POSE_T = np.array([0.01, -0.02, 0.2])


@functools.cache
def _pusher_pose(contact):
    return _place(
        T_CLOUD, POSE_T, DISK, np.zeros(3), [np.sin(0.3), -np.cos(0.3)], -3e-3 if contact else 3e-2
    )


def _pusher(p, contact, dt, integrator="euler"):
    s = sc.Scene(dim=2)
    s.add_body(
        T_CLOUD,
        mass=p["T.mass"],
        inertia=p["T.inertia"],
        pose=POSE_T,
        velocity=[0.01, -0.02, 0.3],
        name="T",
    )
    s.add_body(
        DISK, kind="kinematic", pose=_pusher_pose(contact), velocity=[0.0, 0.02, 0.0], name="pusher"
    )
    s.add_contact("T", "pusher", _pair(p, "contact(T,pusher)"))
    s.add_support("T", friction=p["T.support_friction"])
    return s.build(dt, integrator), np.array([0.005, 0.05, 0.1])


POSE_T2 = np.array([0.0, 0.0, -0.4])
DISK_MASS = 0.05  # a 50 g puck (heavy enough not to fly off at the first touch)


@functools.cache
def _act2_pose(contact):
    return _place(
        T_CLOUD, POSE_T2, DISK, np.zeros(3), _unit([0.8, 0.5]), -2e-3 if contact else 3e-2
    )


def _act2(p, contact, dt, integrator="euler"):
    s = sc.Scene(dim=2)
    s.add_body(
        T_CLOUD,
        mass=p["T.mass"],
        inertia=p["T.inertia"],
        pose=POSE_T2,
        velocity=[0.02, 0.01, -0.2],
        actuated=True,
        name="T",
    )
    s.add_body(
        DISK,
        mass=p["disk.mass"],
        inertia=p["disk.inertia"],
        pose=_act2_pose(contact),
        velocity=[-0.01, 0.0, 1.0],
        name="disk",
    )
    s.add_contact("T", "disk", _pair(p, "contact(T,disk)"))
    s.add_support("T", friction=p["T.support_friction"])
    s.add_support("disk", friction=p["disk.support_friction"])
    return s.build(dt, integrator), np.array([0.2, -0.1, 0.01])


# ---- 3D -------------------------------------------------------------------------------------
Q_BOX = _unit([1.0, 0.05, -0.03, 0.02])  # tilted by ~7 degrees: one edge lower
BOX_V = [0.01, -0.005, -0.01, 0.1, 0.2, 0.1]
INERTIA_AXES = quat_to_matrix(_unit([0.9, 0.2, 0.3, -0.1]))


def _inertia3(p, body):
    ax = ("xx", "yy", "zz", "xy", "xz", "yz")
    v = {a: p[f"{body}.I{a}"] for a in ax}
    return np.array(
        [[v["xx"], v["xy"], v["xz"]], [v["xy"], v["yy"], v["yz"]], [v["xz"], v["yz"], v["zz"]]]
    )


def _inertia3_defaults(body, inertia):
    i = np.asarray(inertia)
    return {
        f"{body}.Ixx": i[0, 0],
        f"{body}.Iyy": i[1, 1],
        f"{body}.Izz": i[2, 2],
        f"{body}.Ixy": i[0, 1],
        f"{body}.Ixz": i[0, 2],
        f"{body}.Iyz": i[1, 2],
    }


def _box_z(contact):
    return 0.015 - 0.002 if contact else 0.06


@functools.cache
def _ball_pose(contact):
    pose_box = np.array([0.0, 0.0, _box_z(contact), *Q_BOX])
    if not contact:
        return np.array([0.01, 0.004, 0.2, 1.0, 0.0, 0.0, 0.0])
    return _place(
        BOX, pose_box, BALL, np.array([0, 0, 0, 1.0, 0, 0, 0]), _unit([0.3, 0.1, 1.0]), -2e-3
    )


def _boxball(p, contact, dt, integrator="euler"):
    s = sc.Scene(dim=3)
    s.add_body(FLOOR, kind="static", name="floor")
    s.add_body(
        BOX,
        mass=p["box.mass"],
        inertia=_inertia3(p, "box"),
        pose=[0.0, 0.0, _box_z(contact), *Q_BOX],
        velocity=BOX_V,
        name="box",
    )
    s.add_body(
        BALL,
        mass=p["ball.mass"],
        inertia=_inertia3(p, "ball"),
        pose=_ball_pose(contact),
        velocity=[0.0, 0.01, -0.1, 0.5, 0.0, 0.0],
        name="ball",
    )
    s.add_contact("box", "floor", _pair(p, "contact(box,floor)"))
    s.add_contact("ball", "floor", _pair(p, "contact(ball,floor)"))
    s.add_contact("box", "ball", _pair(p, "contact(box,ball)"))
    return s.build(dt, integrator), np.zeros(0)


def _actbox(p, contact, dt, integrator="euler"):
    s = sc.Scene(dim=3)
    s.add_body(FLOOR, kind="static", name="floor")
    s.add_body(
        BOX,
        mass=p["box.mass"],
        inertia=_inertia3(p, "box"),
        pose=[0.0, 0.0, _box_z(contact), *Q_BOX],
        velocity=BOX_V,
        actuated=True,
        name="box",
    )
    s.add_contact("box", "floor", _pair(p, "contact(box,floor)"))
    return s.build(dt, integrator), np.array([0.1, -0.2, 0.5, 1e-3, -2e-3, 1e-3])


BOX_INERTIA = BOX.mass_properties(1.0).inertia * 0.2 / BOX.mass_properties(1.0).mass
BALL_INERTIA = np.diag(np.full(3, 0.4 * 0.05 * 0.02**2))  # solid sphere, 50 g
TILTED_INERTIA = INERTIA_AXES @ np.diag([2e-5, 3e-5, 4e-5]) @ INERTIA_AXES.T
TILTED_INERTIA = 0.5 * (TILTED_INERTIA + TILTED_INERTIA.T)  # exactly symmetric

SCENES = {
    "pusher": (
        _pusher,
        0.005,
        {
            "T.mass": 0.1,
            "T.inertia": T_INERTIA,
            "T.support_friction": 0.3,
            **_pair_defaults("contact(T,pusher)"),
        },
    ),
    "act2": (
        _act2,
        0.005,
        {
            "T.mass": 0.1,
            "T.inertia": T_INERTIA,
            "disk.mass": DISK_MASS,
            "disk.inertia": 0.5 * DISK_MASS * 0.02**2,
            "T.support_friction": 0.3,
            "disk.support_friction": 0.2,
            **_pair_defaults("contact(T,disk)"),
        },
    ),
    "boxball": (
        _boxball,
        0.002,
        {
            "box.mass": 0.2,
            **_inertia3_defaults("box", BOX_INERTIA),
            "ball.mass": 0.05,
            **_inertia3_defaults("ball", BALL_INERTIA),
            **_pair_defaults("contact(box,floor)"),
            **_pair_defaults("contact(ball,floor)"),
            **_pair_defaults("contact(box,ball)"),
        },
    ),
    "actbox": (
        _actbox,
        0.002,
        {
            "box.mass": 0.2,
            **_inertia3_defaults("box", TILTED_INERTIA),
            **_pair_defaults("contact(box,floor)"),
        },
    ),
}


def _setup(name, contact=True, dt=None, integrator="euler", **changes):
    """(model, x, u) of a scene built with ``integrator``; ``changes`` override parameters
    by their param_names."""
    build, dt0, defaults = SCENES[name]
    p = dict(defaults)
    for k, v in changes.items():
        assert k in p, k
        p[k] = v
    model, u = build(p, contact, dt0 if dt is None else dt, integrator)
    return model, model.initial_state(), u


# ---- derivative helpers -----------------------------------------------------------------------
def _at(model, x, u, z, order=0):
    n = 2 * model.nv
    return model.step(model.retract(x, z[:n]), u + z[n:], order=order)


def _fd(model, x, u, h):
    """Central differences over every z column: of the value (-> Jacobian) and of the
    analytic Jacobian, symmetrized (-> Hessian).  Differences of the Jacobian through
    retract move both the input chart and the chart of x_next, which adds a skew term in
    3D; the symmetric part over the combined variables z is the Hessian."""
    n = 2 * model.nv
    N = n + model.nu
    x1 = model.step(x, u).x_next
    fj, fh = [], []
    for j in range(N):
        e = np.zeros(N)
        e[j] = h
        rp, rm = _at(model, x, u, e, 1), _at(model, x, u, -e, 1)
        fj.append((model.difference(rp.x_next, x1) - model.difference(rm.x_next, x1)) / (2 * h))
        fh.append((step_jacobian(rp) - step_jacobian(rm)) / (2 * h))
    fh = np.stack(fh, axis=-1)
    return np.stack(fj, axis=-1), 0.5 * (fh + np.swapaxes(fh, 1, 2))


CASES = [(name, contact) for name in SCENES for contact in (True, False)]
CASE_IDS = [f"{name}-{'contact' if c else 'apart'}" for name, c in CASES]


def _direction(model, rng):
    """A random z = (dx, du) with physical sizes per unit: 1 mm, 0.02 rad (1 mm at 5 cm),
    5 mm/s, 0.1 rad/s; controls: velocities as above, forces 0.1 N, torques 1e-4 N m (a
    velocity change of ~ 1-5 mm/s, ~0.01 rad/s in one step for these bodies)."""
    D, nv = model.dim, model.nv
    nvb = 3 if D == 2 else 6
    lin = np.arange(nv) % nvb < D
    size = np.concatenate([np.where(lin, 1e-3, 0.02), np.where(lin, 5e-3, 0.1)])
    csize = []
    for c in model.control_names:
        comp = c.rsplit(".", 1)[1]
        csize.append(
            {
                "vx": 5e-3,
                "vy": 5e-3,
                "vz": 5e-3,
                "omega": 0.1,
                "wx": 0.1,
                "wy": 0.1,
                "wz": 0.1,
                "fx": 0.1,
                "fy": 0.1,
                "fz": 0.1,
                "tau": 1e-4,
                "tx": 1e-4,
                "ty": 1e-4,
                "tz": 1e-4,
            }[comp]
        )
    return rng.normal(size=2 * nv + model.nu) * np.concatenate([size, csize])


# --------------------------------------------------------------------------------------------
# 1. derivatives
# --------------------------------------------------------------------------------------------
# Central differences err by c h^2 (truncation; the contact force varies on beta = eps_c =
# 1 mm, so c h^2 ~ (h / 1 mm)^2 relative) plus rounding ~ u |F| / h.  At h = 1e-6 and 5e-7
# the truncation dominates wherever the step map is curved (in contact, and in 2D with the
# support friction), so the error must shrink by 4 from one step to the other: a wrong or
# missing analytic term of size delta would pull the ratio towards 1 once delta reaches
# ~c h^2 / 10, i.e. ~1e-8 of the row's scale here, far below any fixed tolerance an FD
# check could use.  Tolerances are per output row (rows differ in units: positions,
# velocities) plus the rounding floor 16 u |F_i| / h of check_derivatives.
FD_STEPS = (1e-6, 5e-7)


def _fd_errors(model, x, u, r):
    """Errors of the differences at both FD_STEPS, over the bound at the smaller one:
    1e-6 of the row's largest entry plus the rounding floor (x and x_next are rounded to
    u |x|, amplified by the Jacobian, for the values; the Jacobians at the perturbed points
    to u |J_i|)."""
    J, H = step_jacobian(r), step_hessian(r)
    row_j = np.abs(J).max(axis=1)[:, None]
    row_h = np.abs(H).max(axis=(1, 2))[:, None, None]
    h = FD_STEPS[-1]
    bound_j = 1e-6 * row_j + 16 * U * max(1.0, np.abs(x).max()) * (1.0 + row_j) / h
    bound_h = 1e-6 * row_h + 16 * U * row_j[:, :, None] / h
    out = []
    for step in FD_STEPS:
        fj, fh = _fd(model, x, u, step)
        out.append(((fj - J) / bound_j, (fh - H) / bound_h))
    return out


@pytest.mark.parametrize("name, contact", CASES, ids=CASE_IDS)
def test_derivatives_vs_finite_differences(name, contact):
    check_derivatives_vs_finite_differences(*_setup(name, contact), contact)


def check_derivatives_vs_finite_differences(model, x, u, contact, at_rounding=()):
    """Assert the step's first and second derivatives at (x, u) against central
    differences of its values and first derivatives (_fd_errors)."""
    r = model.step(x, u, order=2)
    n, nu = 2 * model.nv, model.nu
    assert r.dx_dx.shape == (n, n) and r.dx_du.shape == (n, nu)
    assert r.d2x_dx2.shape == (n, n, n) and r.d2x_dxdu.shape == (n, n, nu)
    assert r.d2x_du2.shape == (n, nu, nu) and r.dx_dp is None
    # the Hessians are symmetric exactly (each pair of entries is one computed number)
    np.testing.assert_array_equal(r.d2x_dx2, np.swapaxes(r.d2x_dx2, 1, 2))
    np.testing.assert_array_equal(r.d2x_du2, np.swapaxes(r.d2x_du2, 1, 2))
    if contact:  # the contact terms are there: forces of a few N change v by ~0.1-1 m/s
        assert model.energy(x).contact > 1e-3
        assert np.abs(r.d2x_dx2).max() > 1e3
    else:
        assert model.energy(x).contact < 1e-20
    (ej1, eh1), (ej2, eh2) = _fd_errors(model, x, u, r)
    for what, e in (("jacobian", ej2), ("hessian", eh2)):
        # measured: <= 0.37 of the bound (3D in contact; the truncation error, which at
        # h = 1e-6 is 4 times larger and exceeds the bound there)
        worst = np.unravel_index(np.argmax(np.abs(e)), e.shape)
        assert np.abs(e[worst]) <= 1.0, (what, worst, e[worst])
    if contact or model.dim == 2:
        # O(h^2) convergence to the analytic value: the error shrinks by 4 (measured
        # 3.73-4.05, the lowest where rounding is a few % of the truncation).  A wrong
        # entry of 1e-7 of its row's scale brings the ratio to ~1 in most scenes.  (3D
        # apart the only nonlinearity is the rotation, with tiny third derivatives: the
        # differences are exact to rounding, and there is no convergence to see.)
        # `at_rounding` names the outputs whose error at the smaller step is known to be
        # near rounding (the implicit step's Jacobian of actbox in contact: 2.5e-4 of the
        # bound, ~2.5e-10 of the row's scale, ratio 1.9): there that error, asserted below
        # 1e-3 of the bound, replaces the ratio.
        for what, e1, e2 in (("jacobian", ej1, ej2), ("hessian", eh1, eh2)):
            if what in at_rounding:
                assert np.abs(e2).max() <= 1e-3, (what, np.abs(e2).max())
                continue
            ratio = np.linalg.norm(e1) / np.linalg.norm(e2)
            assert 3.5 < ratio < 4.5, (what, ratio)


# t z moves points by up to ~1.5 mm (t = 0.05) down to ~50 um, against the 1 mm scale of the
# contact force; in free flight (3D apart) the only nonlinearity is the rotation, on a
# scale of radians, and the steps start at t = 1 so that R2 stays above rounding
TAYLOR_STEPS = np.geomspace(0.05, 0.05 / 32, 6)
FREE_TAYLOR_STEPS = np.geomspace(1.0, 1.0 / 32, 6)


@pytest.mark.parametrize("name, contact", CASES, ids=CASE_IDS)
def test_taylor_remainders(rng, name, contact):
    check_taylor_remainders(rng, *_setup(name, contact), contact)


def check_taylor_remainders(rng, model, x, u, contact):
    """F(t z) minus its first/second-order expansion (J z t, z^T H z t^2 / 2) shrinks like
    t^2 / t^3 along random directions z = (dx, du) of physical size (_direction)."""
    r = model.step(x, u, order=2)
    J, H = step_jacobian(r), step_hessian(r)
    steps = FREE_TAYLOR_STEPS if model.dim == 3 and not contact else TAYLOR_STEPS

    def f(z):
        return model.difference(_at(model, x, u, z).x_next, r.x_next)

    # the values are rounded to ~u |x_next| (a few operations each): remainders below
    # 1e3 u |x_next| are noise, and slopes touching them are not asserted
    floor = 1e3 * U * np.abs(r.x_next).max()
    for _ in range(2):
        z = _direction(model, rng)
        derivs = [J @ z, np.einsum("kij,i,j->k", H, z, z)]
        R = np.linalg.norm(taylor_remainders(f, np.zeros_like(z), z, derivs, steps), axis=2)
        slopes = taylor_slopes(R, steps)
        for n in (1, 2):
            valid = slopes[n][(R[n, :-1] > floor) & (R[n, 1:] > floor)]
            assert len(valid) >= 3, (n, R[n])
            # a wrong J (H) leaves a remainder ~t^n: slope n.  At large t the next orders
            # can bend the slopes either way (measured over 30 directions per scene: from
            # n - 0.4 to n + 2.7 at the first steps); over the last two they approach
            # n + 1 (measured >= n + 0.81, and >= n + 0.91 at the last)
            assert np.all(valid[-2:] > n + 0.7), (n, slopes[n])
            assert valid[-1] > n + 0.85, (n, slopes[n])


def check_dx_dp(name, contact, model, x, u, r, integrator="euler"):
    """Assert r.dx_dp (a step of ``model`` at (x, u) with params=True) column by column
    against central differences of models rebuilt with the parameter moved by +-1e-5 of
    its value (an off-diagonal inertia: of the largest diagonal one); yields (name,
    column)."""
    defaults = SCENES[name][2]
    xs = np.abs(r.x_next).max()
    for j, pname in enumerate(model.param_names):
        p0 = defaults[pname]
        if pname.endswith((".Ixy", ".Ixz", ".Iyz")):
            body = pname.rsplit(".", 1)[0]
            scale = max(defaults[f"{body}.I{a}"] for a in ("xx", "yy", "zz"))
        else:
            scale = p0
        d = 1e-5 * scale
        fp = _setup(name, contact, integrator=integrator, **{pname: p0 + d})[0].step(x, u)
        fm = _setup(name, contact, integrator=integrator, **{pname: p0 - d})[0].step(x, u)
        diff = model.difference(fp.x_next, r.x_next) - model.difference(fm.x_next, r.x_next)
        fd = diff / (2 * d)
        col = r.dx_dp[:, j]
        # truncation (p / 1e5)^2 f''' ~ 1e-10 relative, rounding 16 u |x_next| / d
        # (measured: <= 1.5e-8 of the column's largest entry, or below the floor)
        bound = 1e-6 * np.abs(col).max() + 16 * U * xs / d
        assert np.all(np.abs(fd - col) <= bound), (pname, col, fd, bound)
        yield pname, col


@pytest.mark.parametrize("name, contact", CASES, ids=CASE_IDS)
def test_parameter_derivatives_vs_rebuilt_models(name, contact):
    """dx_dp column by column against central differences of models rebuilt with the
    parameter moved by +-1e-5 of its value (an off-diagonal inertia: of the largest diagonal
    one; a symmetric change of both entries, as the parameter is one number)."""
    model, x, u = _setup(name, contact)
    defaults = SCENES[name][2]
    assert sorted(model.param_names) == sorted(defaults)
    assert len(model.param_names) == model.np
    r = model.step(x, u, order=0, params=True)
    assert r.dx_dp.shape == (2 * model.nv, model.np)
    assert r.dx_dx is None and r.dx_du is None and r.d2x_dx2 is None
    for pname, col in check_dx_dp(name, contact, model, x, u, r):
        if contact and pname.startswith("contact("):
            # every pair touches, except the ball and the floor (~2.5 cm apart)
            touching = "ball,floor" not in pname
            assert (np.abs(col).max() > 1e-4) == touching, (pname, col)
        if not contact and pname.startswith("contact("):
            assert np.abs(col).max() < 1e-12, (pname, col)


# --------------------------------------------------------------------------------------------
# 2. values, inverse dynamics, batches
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, contact", CASES, ids=CASE_IDS)
def test_values_do_not_depend_on_requested_outputs_or_threads(name, contact):
    model, x, u = _setup(name, contact)
    ref = model.step(x, u, order=2, params=True, num_threads=1)
    for order in (0, 1, 2):
        for params in (False, True):
            r = model.step(x, u, order=order, params=params)
            np.testing.assert_array_equal(r.x_next, ref.x_next)
            assert (r.dx_dx is None) == (order == 0) and (r.d2x_dx2 is None) == (order < 2)
            assert (r.dx_dp is None) != params
            # the first-order parts of the jets do not depend on the higher-order parts
            # (forward mode): the Jacobians are bitwise the same at every order too (this
            # also checks sc_scm.c's first-order lane pass, four samples per vector, against
            # the one-sample pass that second order runs)
            if order >= 1:
                np.testing.assert_array_equal(r.dx_dx, ref.dx_dx)
                np.testing.assert_array_equal(r.dx_du, ref.dx_du)
            if order == 2:
                for field in ("d2x_dx2", "d2x_dxdu", "d2x_du2"):
                    np.testing.assert_array_equal(getattr(r, field), getattr(ref, field))
            if params:
                np.testing.assert_array_equal(r.dx_dp, ref.dx_dp)
    two = model.step(x, u, order=2, params=True, num_threads=2)
    for field, a, b in zip(sc.StepResult._fields, two, ref, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=field)


def _body_slices(model, j):
    """Moving body j's rows: its pose and velocity rows of the tangent dx (and of f: the
    first), and its velocity in the state x."""
    nvb = 3 if model.dim == 2 else 6
    return (
        slice(nvb * j, nvb * (j + 1)),
        slice(model.nv + nvb * j, model.nv + nvb * (j + 1)),
        slice(model.nq + nvb * j, model.nq + nvb * (j + 1)),
    )


def _controls_of(model, body):
    return [k for k, c in enumerate(model.control_names) if c.startswith(body + ".")]


def _force_rounding(model, name, j, x, x_next):
    """Rounding of f = M (v+ - v0+) / h for moving body j: v+ and v0+ are rounded to a few
    u max(|v|, |v+|) (the velocity before or after the step, whichever is larger; the
    contact forces summed in v0+ are at most M |v+ - v| / h), times M / h; per row of f."""
    defaults = SCENES[name][2]
    body = model.moving[j]
    D = model.dim
    m = defaults[f"{body}.mass"]
    if D == 2:
        inertia = defaults[f"{body}.inertia"]
    else:
        inertia = np.abs(_inertia3(defaults, body)).sum(axis=1).max()
    _, _, v = _body_slices(model, j)
    speed = np.maximum(np.abs(x[v]), np.abs(x_next[v]))
    return (
        16
        * U
        * np.concatenate(
            [m * np.full(D, speed[:D].max()), inertia * np.full(len(speed) - D, speed[D:].max())]
        )
        / model.dt
    )


@pytest.mark.parametrize("name, contact", CASES, ids=CASE_IDS)
def test_inverse_dynamics_recovers_the_controls(name, contact):
    model, x, u = _setup(name, contact)
    x_next = model.step(x, u).x_next
    u_rec, f = model.inverse_dynamics(x, x_next)
    assert u_rec.shape == (model.nu,) and f.shape == (model.nv,)
    # f = M (v+ - v0+) / h loses the digits of v+ that h M^-1 u does not reach: here
    # h u / M ~ 0.01 against velocities ~0.1-1, a relative error of ~1e-15 (measured
    # <= 6e-15); the task's 1e-10 leaves room for any scene
    if model.nu:
        np.testing.assert_allclose(u_rec, u, rtol=0, atol=1e-10 * np.abs(u).max())
    for j, body in enumerate(model.moving):
        fb = f[_body_slices(model, j)[0]]
        idx = _controls_of(model, body)
        if idx and model.control_names[idx[0]].endswith(".vx"):  # kinematic
            np.testing.assert_array_equal(fb, 0.0)  # zero rows by contract
            np.testing.assert_array_equal(u_rec[idx], u[idx])  # u = v+ = the control
        elif idx:  # actuated: f is the control
            np.testing.assert_allclose(fb, u[idx], rtol=0, atol=1e-10 * np.abs(u[idx]).max())
        else:  # unactuated and reachable: zero up to rounding
            assert np.all(np.abs(fb) <= _force_rounding(model, name, j, x, x_next)), fb


@pytest.mark.parametrize("name", ["act2", "boxball"])
def test_inverse_dynamics_of_an_unreachable_state(name):
    """Moving an unactuated body's next velocity by dv needs the force M dv / h (3D: the
    torque I dw / h in the body frame, the angular velocity being body-frame)."""
    model, x, u = _setup(name)
    defaults = SCENES[name][2]
    body = "disk" if name == "act2" else "ball"
    j = model.moving.index(body)
    x_next = model.step(x, u).x_next
    dv = np.linspace(1.0, 2.0, model.nv // len(model.moving)) * 1e-3
    bad = x_next.copy()
    bad[_body_slices(model, j)[2]] += dv
    _, f = model.inverse_dynamics(x, bad)
    m = defaults[f"{body}.mass"]
    D = model.dim
    if D == 2:
        inertia = np.array([[defaults[f"{body}.inertia"]]])
    else:
        inertia = _inertia3(defaults, body)
    want = np.concatenate([m * dv[:D], inertia @ dv[D:]]) / model.dt
    fb = f[_body_slices(model, j)[0]]
    # exact up to the rounding of dv and of f (the disk's contact spins it up to 30 rad/s)
    bound = 4 * U * np.abs(want) + _force_rounding(model, name, j, x, x_next)
    assert np.all(np.abs(fb - want) <= bound), (fb, want, bound)
    others = np.delete(f, np.arange(model.nv)[_body_slices(model, j)[0]])
    if name == "boxball":  # the other bodies still reachable (act2: the T's f is its u)
        assert np.abs(others).max() < 1e-12


def _rollout_controls(model, u, rng, B, T):
    return u + 0.2 * np.abs(u).max(initial=0.0) * rng.normal(size=(B, T, model.nu))


@pytest.mark.parametrize("name", list(SCENES))
def test_rollout_equals_a_loop_of_steps_bitwise(rng, name):
    model, x, u = _setup(name)
    B, T = 3, 20
    U_ = _rollout_controls(model, u, rng, B, T)
    # different initial velocities per trajectory
    x0 = np.stack(
        [
            model.retract(x, np.concatenate([np.zeros(model.nv), 0.01 * rng.normal(size=model.nv)]))
            for _ in range(B)
        ]
    )
    r = model.rollout(x0, U_, order=1, num_threads=2)
    n = 2 * model.nv
    assert r.states.shape == (B, T + 1, model.nx)
    assert r.dx_dx.shape == (B, T, n, n) and r.dx_du.shape == (B, T, n, model.nu)
    np.testing.assert_array_equal(r.status, np.zeros(B, dtype=int))
    for b in range(B):
        xk = x0[b]
        np.testing.assert_array_equal(r.states[b, 0], xk)
        for k in range(T):
            s = model.step(xk, U_[b, k], order=1)
            np.testing.assert_array_equal(r.states[b, k + 1], s.x_next)
            np.testing.assert_array_equal(r.dx_dx[b, k], s.dx_dx)
            np.testing.assert_array_equal(r.dx_du[b, k], s.dx_du)
            xk = s.x_next
    # every trajectory starts in contact (its steps are not free flight)
    assert min(model.energy(xs).contact for xs in r.states[:, 0]) > 1e-4
    one = model.rollout(x0, U_, order=1, num_threads=1)
    for field in sc.Rollout._fields:
        np.testing.assert_array_equal(getattr(one, field), getattr(r, field), err_msg=field)
    zero = model.rollout(x0, U_, order=0, num_threads=2)
    np.testing.assert_array_equal(zero.states, r.states)
    assert zero.dx_dx is None and zero.dx_du is None


def test_rollout_batch_shapes_and_shared_initial_state(rng):
    model, x, u = _setup("pusher")
    U_ = _rollout_controls(model, u, rng, 6, 5).reshape(2, 3, 5, model.nu)
    r = model.rollout(x, U_, order=1)
    assert r.states.shape == (2, 3, 6, model.nx) and r.status.shape == (2, 3)
    assert r.dx_dx.shape == (2, 3, 5, 12, 12) and r.dx_du.shape == (2, 3, 5, 12, 3)
    flat = model.rollout(np.broadcast_to(x, (6, model.nx)), U_.reshape(6, 5, model.nu), order=1)
    np.testing.assert_array_equal(r.states.reshape(6, 6, model.nx), flat.states)
    np.testing.assert_array_equal(r.dx_du.reshape(6, 5, 12, 3), flat.dx_du)
    # a single trajectory: U (T, nu) and x0 (nx,)
    single = model.rollout(x, U_[1, 2])
    assert single.states.shape == (6, model.nx) and single.status.shape == ()
    np.testing.assert_array_equal(single.states, r.states[1, 2])
    # zero steps: just the initial state
    empty = model.rollout(x, np.zeros((2, 0, model.nu)), order=1)
    assert empty.states.shape == (2, 1, model.nx) and empty.dx_dx.shape == (2, 0, 12, 12)
    np.testing.assert_array_equal(empty.states[:, 0], np.broadcast_to(x, (2, model.nx)))
    np.testing.assert_array_equal(empty.status, [0, 0])
    # no trajectories
    none = model.rollout(x, np.zeros((0, 5, model.nu)), order=1)
    assert none.states.shape == (0, 6, model.nx) and none.dx_du.shape == (0, 5, 12, 3)
    assert none.status.shape == (0,)


@pytest.mark.parametrize("name", ["act2", "actbox"])
def test_rollout_reports_a_failing_trajectory_through_its_status(rng, name):
    """Documented (Model.rollout): a non-finite control gets status -3 (SC_ENONFINITE), one
    outside its valid range -8 (SC_ERANGE), both with NaN states from the failing step on;
    a step whose new state leaves the valid range gets -6 (SC_EDIVERGED), keeps that state
    and its Jacobians, NaN after; ``failed_step`` names the step; the other trajectories
    are unaffected.  Shapes, quaternions and start states' ranges are still checked up
    front."""
    model, x, u = _setup(name)
    B, T, bad = 4, 8, 3
    U_ = _rollout_controls(model, u, rng, B, T)
    clean = model.rollout(x, U_, order=1)
    np.testing.assert_array_equal(clean.failed_step, [-1, -1, -1, -1])
    U_[1, bad, 0] = np.nan
    U_[2, bad, 0] = 1e308  # finite, but beyond the valid range of forces (1e30 N)
    U_[3, bad, 0] = 1e30  # the largest force: the new velocity leaves its valid range
    r = model.rollout(x, U_, order=1)
    np.testing.assert_array_equal(
        r.status,
        [0, sc._core.SC_ENONFINITE, sc._core.SC_ERANGE, sc._core.SC_EDIVERGED],
    )
    np.testing.assert_array_equal(r.failed_step, [-1, bad, bad, bad])
    for field in sc.Rollout._fields[:3]:
        np.testing.assert_array_equal(getattr(r, field)[0], getattr(clean, field)[0])
    # NaN or out-of-range control at step `bad`: states 0..bad computed, bad + 1 on NaN
    for k in (1, 2):
        np.testing.assert_array_equal(r.states[k, : bad + 1], clean.states[k, : bad + 1])
        assert np.all(np.isnan(r.states[k, bad + 1 :]))
        np.testing.assert_array_equal(r.dx_dx[k, :bad], clean.dx_dx[k, :bad])
        assert np.all(np.isnan(r.dx_dx[k, bad:])) and np.all(np.isnan(r.dx_du[k, bad:]))
    with pytest.raises(ValueError, match="u: the control of"):
        model.step(r.states[2, bad], U_[2, bad], order=1)
    # divergence at step `bad`: state bad + 1 is that step's (finite, past the valid range
    # of velocities), then NaN
    with pytest.raises(sc.DivergenceError) as info:
        model.step(r.states[3, bad], U_[3, bad], order=1)
    assert info.value.quantity == "speed"  # max_travel's limit, reported first
    assert np.abs(info.value.x_next[model.nq :]).max() > 1e8
    np.testing.assert_array_equal(r.states[3, bad + 1], info.value.x_next)
    assert np.all(np.isfinite(r.states[3, bad + 1]))
    assert np.all(np.isnan(r.states[3, bad + 2 :]))
    np.testing.assert_array_equal(r.dx_dx[3, :bad], clean.dx_dx[3, :bad])
    assert np.all(np.isfinite(r.dx_dx[3, bad]))
    assert np.all(np.isnan(r.dx_dx[3, bad + 1 :]))
    # one non-finite initial state fails alone, at step 0
    x0 = np.stack([x, x, x])
    x0[0, model.nq] = np.inf
    r0 = model.rollout(x0, U_[[0, 0, 0]])
    np.testing.assert_array_equal(r0.status, [sc._core.SC_ENONFINITE, 0, 0])
    x0[0, model.nq] = 2e8  # finite but beyond the valid range: refused up front
    with pytest.raises(ValueError, match=r"x0: the velocity of"):
        model.rollout(x0, U_[[0, 0, 0]])
    x0[0, model.nq] = np.inf
    np.testing.assert_array_equal(r0.failed_step, [0, -1, -1])
    assert np.all(np.isnan(r0.states[0, 1:]))
    np.testing.assert_array_equal(r0.states[1], clean.states[0])


def test_rollout_checks_shapes_and_quaternions_up_front():
    model, x, u = _setup("actbox")
    U_ = np.zeros((2, 4, model.nu))
    with pytest.raises(ValueError, match=r"U must have shape \(\.\.\., T, 6\)"):
        model.rollout(x, np.zeros((2, 4, 5)))
    with pytest.raises(ValueError, match=r"U must have shape"):
        model.rollout(x, np.zeros(6))
    with pytest.raises(ValueError, match=r"x0 must have shape \(\.\.\., 13\) with leading"):
        model.rollout(np.stack([x, x, x]), U_)
    bad = np.stack([x, x])
    bad[1, 3:7] *= 1.01
    with pytest.raises(ValueError, match="quaternion of 'box' is not unit"):
        model.rollout(bad, U_)
    with pytest.raises(ValueError, match=r"order must be in 0\.\.1, got 2"):
        model.rollout(x, U_, order=2)


# --------------------------------------------------------------------------------------------
# 3. physics
# --------------------------------------------------------------------------------------------
def _collision(dim, dt, params=PARAMS):
    """Two dynamic bodies flying into each other (no gravity, support or actuation), in
    contact for ~20-40 ms of the 0.2 s (2D) / 0.1 s (3D) run, spinning."""
    s = sc.Scene(dim=dim, gravity=np.zeros(dim))
    if dim == 2:
        s.add_body(T_CLOUD, mass=0.1, pose=[0.0, 0.0, 0.3], velocity=[0.05, 0.1, 1.0], name="a")
        s.add_body(
            DISK, mass=DISK_MASS, pose=[0.08, 0.12, 0.0], velocity=[-1.0, -0.7, 2.0], name="b"
        )
        duration = 0.2
    else:
        s.add_body(
            BOX,
            mass=0.2,
            pose=[0.0, 0.0, 0.0, *Q_BOX],
            velocity=[0.2, 0.0, 0.1, 3.0, -2.0, 5.0],
            name="a",
        )
        s.add_body(
            BALL,
            mass=0.05,
            pose=[0.02, 0.01, 0.06, 1.0, 0.0, 0.0, 0.0],
            velocity=[-0.1, 0.0, -0.5, 1.0, 0.0, 2.0],
            name="b",
        )
        duration = 0.1
    s.add_contact("a", "b", params)
    model = s.build(dt)
    steps = int(round(duration / dt))
    states = model.rollout(model.initial_state(), np.zeros((steps, 0))).states
    return model, states


@pytest.mark.parametrize("dim", [2, 3])
def test_momentum_through_a_collision(dim):
    dts = (0.002, 0.001, 0.0005)
    drift = []
    for dt in dts:
        model, X = _collision(dim, dt)
        mom = [model.momentum(x) for x in X]
        P = np.array([m.linear for m in mom])
        L = np.array([np.atleast_1d(m.angular) for m in mom])
        contact = np.array([model.energy(x).contact for x in X])
        # a real collision: the bodies meet from apart and separate again, and trade
        # momentum
        assert contact.max() > 1e-4
        assert contact[0] < 1e-6 * contact.max() and contact[-1] < 1e-4 * contact.max()
        nvb = model.nv // 2
        pa = 0.1 if dim == 2 else 0.2
        va = X[:, model.nq : model.nq + dim]
        assert np.abs(pa * (va[-1] - va[0])).max() > 0.2 * np.abs(P[0]).max()
        # linear momentum: the contact forces are equal and opposite, and each step adds
        # h (f - f) = 0 up to the rounding of the velocities, ~u sum m |v| per step
        scale = sum(
            m * np.abs(X[:, model.nq + nvb * j : model.nq + nvb * j + dim]).max()
            for j, m in enumerate((pa, DISK_MASS if dim == 2 else 0.05))
        )
        steps = len(X) - 1
        assert np.abs(P - P[0]).max() <= 4 * U * steps * scale, np.abs(P - P[0]).max()
        drift.append(np.abs(L - L[0]).max())
        if dim == 2:
            # 2D: L_{k+1} - L_k = h (sum of torques about the origin at q_k) = 0 exactly
            # (q+ = q + h v+ makes q+ x v+ = q x v+); rounding of |q| |p| + I |omega|
            lscale = scale * np.abs(X[:, : model.nq]).max() + np.abs(X[:, model.nq :]).max()
            assert drift[-1] <= 4 * U * steps * lscale, drift[-1]
    if dim == 3:
        # 3D: the explicit gyroscopic term and the rotation by exp(h w+) conserve the
        # angular momentum only to O(h): the drift halves with h (measured 2.04, 2.01) and is
        # ~1 % of |L| at h = 2 ms for these fast spins (5 rad/s)
        ratios = np.array(drift[:-1]) / np.array(drift[1:])
        assert np.all((1.8 < ratios) & (ratios < 2.2)), (drift, ratios)


def _box_drop(dt):
    s = sc.Scene(dim=3)
    s.add_body(FLOOR, kind="static", name="floor")
    s.add_body(
        BOX,
        mass=0.2,
        pose=[0.0, 0.0, 0.035, *Q_BOX],
        velocity=[0.1, 0.0, 0.0, 1.0, 2.0, 0.5],
        name="box",
    )
    s.add_contact("box", "floor", PARAMS)
    return s.build(dt), 0.3


def _puck_collision(dt):
    # lightly damped, with friction: the energy error of the integrator shows at large dt
    s = sc.Scene(dim=2)
    s.add_body(T_CLOUD, mass=0.1, pose=[0.0, 0.0, 0.3], velocity=[0.05, 0.1, 1.0], name="a")
    s.add_body(DISK, density=5.0, pose=[0.08, 0.12, 0.0], velocity=[-1.0, -0.7, 2.0], name="b")
    s.add_contact("a", "b", dataclasses.replace(PARAMS, damping=0.2, friction=0.3))
    return s.build(dt), 0.2


@pytest.mark.parametrize(
    "setup, dts",
    [(_puck_collision, (0.006, 0.005, 0.003)), (_box_drop, (0.005, 0.004, 0.002))],
    ids=["2d-collision", "3d-box-drop"],
)
def test_energy_never_increases_beyond_integrator_error(setup, dts):
    """With damping >= 0 and friction >= 0 the exact flow loses energy; semi-implicit Euler
    may gain some back over a step (an O(h) error).  The largest rise of the total energy
    (kinetic + gravity + contact) over its running minimum shrinks with h."""
    rises = []
    for dt in dts:
        model, duration = setup(dt)
        X = model.rollout(model.initial_state(), np.zeros((int(round(duration / dt)), 0))).states
        E = np.array([model.energy(x) for x in X])
        total = E[:, 3]
        np.testing.assert_allclose(total, E[:, :3].sum(axis=1), rtol=1e-15, atol=0)
        assert E[:, 2].max() > 1e-4  # the bodies met
        assert total[-1] < 0.9 * total[0]  # damping and friction took > 10 % of the energy
        rises.append(np.max(total - np.minimum.accumulate(total)))
    # measured: 2D 2.1e-4, 7.7e-5, 0 (J); 3D 2.9e-3, 2.5e-4, 0 (J), out of 5e-3 / 7e-2 (the
    # damping of every sample's normal velocity removes the rise below these steps)
    assert rises[0] > 0, rises  # the test sees the integrator error at the largest step
    assert rises[1] <= rises[0] / 2 and rises[2] <= rises[1] / 2, rises
    assert rises[2] <= 1e-5 * total[0], rises


@pytest.mark.parametrize("dim", [2, 3])
def test_free_fall(dim):
    """A body at rest far from everything: v = g t and q = q0 + g h^2 k (k + 1) / 2 (the
    semi-implicit Euler sum), to rounding; no rotation."""
    g = np.array([0.3, -9.81]) if dim == 2 else np.array([0.5, 0.0, -9.81])
    s = sc.Scene(dim=dim, gravity=g)
    if dim == 2:
        s.add_body(DISK, mass=0.05, pose=[0.1, 0.2, 0.3], name="body")
        s.add_body(T_CLOUD, kind="static", pose=[0.0, 5.0, 0.0], name="far")
        s.add_contact("body", "far", PARAMS)
    else:
        s.add_body(FLOOR, kind="static", name="floor")
        s.add_body(BALL, mass=0.05, pose=[0.1, 0.2, 1.0, *Q_BOX], name="body")
        s.add_contact("body", "floor", PARAMS)
    dt, steps = 0.002, 100  # falls 0.2 m: still ~0.8 m (2D: ~5 m) from the other body
    model = s.build(dt)
    X = model.rollout(model.initial_state(), np.zeros((steps, 0))).states
    k = np.arange(steps + 1)[:, None]
    v = X[:, model.nq : model.nq + dim]
    # each step adds h g: one rounding of ~u |v| per step (measured: 1e-15 relative)
    np.testing.assert_allclose(v, k * dt * g, rtol=0, atol=2 * U * steps * np.abs(v).max())
    q0 = X[0, :dim]
    np.testing.assert_allclose(
        X[:, :dim],
        q0 + dt**2 * g * k * (k + 1) / 2,
        rtol=0,
        atol=2 * U * steps * np.abs(X[:, :dim]).max(),
    )
    np.testing.assert_array_equal(X[:, model.nq + dim :], 0.0)  # no angular velocity
    np.testing.assert_allclose(
        X[:, dim : model.nq],
        np.broadcast_to(X[0, dim : model.nq], (steps + 1, model.nq - dim)),
        rtol=0,
        atol=4 * U,
    )
    assert model.energy(X[-1]).contact == 0.0


@pytest.mark.parametrize("dim", [2, 3])
def test_kinematic_body_follows_its_control(rng, dim):
    """A kinematic body's next velocity is its control and its pose moves by h u, whatever
    it pushes: v+ = u, q+ = q (+) h u."""
    if dim == 2:
        model, x, u = _setup("pusher")
    else:
        s = sc.Scene(dim=3)
        s.add_body(FLOOR, kind="static", name="floor")
        s.add_body(BOX, mass=0.2, pose=[0.0, 0.0, 0.013, 1.0, 0.0, 0.0, 0.0], name="box")
        s.add_body(BALL, kind="kinematic", pose=[0.045, 0.0, 0.02, *Q_BOX], name="pusher")
        s.add_contact("box", "floor", PARAMS)
        s.add_contact("box", "pusher", PARAMS)
        model = s.build(0.002)
        x, u = model.initial_state(), np.array([-0.05, 0.01, 0.0, 0.5, -1.0, 2.0])
    j = model.moving.index("pusher")
    pose_rows, vel_rows, v_x = _body_slices(model, j)
    nqb = 3 if dim == 2 else 7
    q_x = slice(nqb * j, nqb * (j + 1))
    T = 15
    U_ = u + 0.5 * np.abs(u).max() * rng.normal(size=(T, model.nu))
    X = model.rollout(x, U_).states
    assert model.energy(X[0]).contact > 1e-3  # it pushes
    for k in range(T):
        np.testing.assert_array_equal(X[k + 1, v_x], U_[k])
        want = sc.retract(X[k, q_x], model.dt * U_[k])
        # 2D: the same sum q + h u; 3D: the same rotation, computed by another code path
        np.testing.assert_allclose(X[k + 1, q_x], want, rtol=0, atol=4 * U)
    # and it is not pushed back: its rows of the derivatives are those of v+ = u and
    # q+ = q (+) h u, whatever the state of the body it pushes
    r = model.step(x, u, order=2)
    n = 2 * model.nv
    prow, vrow = np.arange(n)[pose_rows], np.arange(n)[vel_rows]
    ctl = _controls_of(model, "pusher")
    np.testing.assert_array_equal(r.dx_du[vrow][:, ctl], np.eye(len(ctl)))
    np.testing.assert_array_equal(r.dx_dx[vrow], 0.0)
    others = np.setdiff1d(np.arange(n), np.r_[prow, vrow])
    np.testing.assert_array_equal(r.dx_dx[prow][:, others], 0.0)
    np.testing.assert_array_equal(r.d2x_dx2[vrow], 0.0)
    np.testing.assert_array_equal(r.d2x_du2[vrow], 0.0)
    if dim == 2:  # q + h u is linear
        np.testing.assert_array_equal(r.dx_du[prow][:, ctl], model.dt * np.eye(3))
        np.testing.assert_array_equal(r.d2x_dx2[prow], 0.0)
        np.testing.assert_array_equal(r.d2x_du2[prow], 0.0)
    # while the pushed body's next state depends on the pusher's pose (contact)
    assert np.abs(r.dx_dx[others][:, prow]).max() > 1.0


def _fast_equals_full(m, x, u):
    """Model.step on float64 arrays and plain ints (the fast path) against the fully
    checked call (lists, NumPy integers): the same bits at orders 0-2, inputs untouched."""
    x0, u0 = x.copy(), u.copy()
    for order in (0, 1, 2):
        fast = m.step(x, u, order=order, num_threads=1)
        full = m.step(list(x), list(u), order=np.int64(order), num_threads=np.int32(1))
        for f in fast._fields:
            a, b = getattr(fast, f), getattr(full, f)
            assert (a is None) == (b is None), f
            if a is not None:
                np.testing.assert_array_equal(a, b)
        assert type(fast) is sc.StepResult
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(u, u0)


def test_2d_step_fast_path_equals_full_checks_and_keeps_messages():
    """Model.step's fast path (a 2D state and control as float64 arrays of the right
    shape, plain int order and num_threads, default isa and dense: finiteness checked in
    C) gives the bits of the fully checked call (lists, NumPy integers) and the same
    errors naming the argument; inputs are not modified."""
    from softcontact.tasks import push_t

    m = push_t.make(seed=1).model
    rng = np.random.default_rng(5)
    x = m.initial_state()
    x[m.nq :] = 0.05 * rng.normal(size=m.nv)
    u = 0.1 * rng.normal(size=m.nu)
    _fast_equals_full(m, x, u)
    for which, k, v in (("x", 0, np.nan), ("x", m.nq + 1, np.inf), ("u", 1, -np.inf)):
        xb, ub = x.copy(), u.copy()
        (xb if which == "x" else ub)[k] = v
        with pytest.raises(ValueError, match=f"^{which} must be finite"):
            m.step(xb, ub)
    with pytest.raises(ValueError, match="num_threads"):
        m.step(x, u, num_threads=0)
    with pytest.raises(TypeError, match="num_threads"):
        m.step(x, u, num_threads=True)
    with pytest.raises(ValueError, match="u must have shape"):
        m.step(x, u[:2])


@pytest.mark.parametrize("name", ["actbox", "boxball"])
def test_3d_step_fast_path_equals_full_checks_and_keeps_messages(name):
    """The fast path in 3D: unit quaternions are checked in C with _as_state's test (norm
    within 1e-9), so a float64 state gives the bits of the fully checked call, and a bad
    quaternion, a non-finite entry or a wrong shape raise the full checks' messages
    (naming the argument and the body); inputs are not modified."""
    m, x, u = _setup(name)
    rng = np.random.default_rng(7)
    x[m.nq :] += 0.05 * rng.normal(size=m.nv)
    u = u + 0.01 * rng.normal(size=m.nu)
    _fast_equals_full(m, x, u)
    body = m.moving[-1]
    j = 7 * (len(m.moving) - 1) + 3  # the last moving body's qw
    for scale, ok in ((1 + 2e-6, False), (1 - 2e-6, False), (1 + 5e-10, True)):
        xb = x.copy()
        xb[j : j + 4] *= scale
        if ok:
            np.testing.assert_array_equal(m.step(xb, u).x_next, m.step(list(xb), list(u)).x_next)
        else:
            with pytest.raises(ValueError, match=f"^x: the quaternion of {body!r} is not unit"):
                m.step(xb, u)
    # between 1e-9 and 1e-6 off: the C check alone refuses it; the Python layer normalises it
    # (in a copy) on the fast path and off it
    for scale in (1 + 2e-9, 1 - 2e-9):
        xb = x.copy()
        xb[j : j + 4] *= scale
        keep = xb.copy()
        with pytest.raises(ValueError, match="not unit"):
            _core.step(m._cap, xb, u, 0, 0, 1, -1)
        xn = xb.copy()
        q = xb[j : j + 4]
        xn[j : j + 4] = q / np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
        np.testing.assert_array_equal(m.step(xb, u).x_next, m.step(xn, u).x_next)
        np.testing.assert_array_equal(m.step(list(xb), list(u)).x_next, m.step(xn, u).x_next)
        np.testing.assert_array_equal(xb, keep)
    for k, v in ((0, np.nan), (j, np.inf), (m.nq + 1, -np.inf)):
        xb = x.copy()
        xb[k] = v
        with pytest.raises(ValueError, match="^x must be finite"):
            m.step(xb, u)
    with pytest.raises(ValueError, match="x must have shape"):
        m.step(x[:-1], u)
    with pytest.raises(ValueError, match="num_threads"):
        m.step(x, u, num_threads=0)


@pytest.mark.parametrize("inertia", [1e-100, 1e-36, 1.0, 1e100])
def test_3d_angular_acceleration_at_extreme_inertias(inertia):
    """The step's jet of I^-1 is formed from I scaled by a power of 2 near det(I)^(1/3):
    finite at every order (and with the parameter derivatives) for any inertia in range,
    where 1 / det's second derivative 2 / det^3 underflowed below ~1e-34 kg m^2 (NaN)."""
    s = sc.Scene(dim=3, gravity=[0.0, 0.0, 0.0])
    s.add_body(
        sc.PointCloud.box([0.05, 0.04, 0.03], 0.02),
        mass=1.0,
        inertia=[inertia] * 3,
        velocity=[0.0, 0.0, 0.0, 0.5, 0.2, -0.1],
        actuated=True,
        name="b",
    )
    h = 1e-3
    m = s.build(h, max_travel=np.inf)
    x = m.initial_state()
    for order in range(3):
        r = m.step(x, np.zeros(6), order=order, params=True)
        for a in r:
            if a is not None:
                assert np.all(np.isfinite(a))
    # d omega+ / d tau = h I^-1 (body frame)
    np.testing.assert_allclose(r.dx_du[9:, 3:], np.eye(3) * h / inertia, rtol=1e-15, atol=0)
