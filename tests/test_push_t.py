"""The push-T task (softcontact.tasks.push_t): geometry, coverage, seeded states, errors,
and short pushes that move the T and are stopped by the walls."""

import dataclasses
import doctest
import math

import numpy as np
import pytest
import shapely

import softcontact as sc
from softcontact.tasks import push_t

L = push_t.WORKSPACE
T_AREA = 6300e-6  # 120 x 30 + 30 x 90 mm^2
# y of the T's centroid (mm) with the bar's lower edge on y = 0: bar (3600 mm^2 at
# y = 15) and stem (2700 mm^2 at y = -45) give -10.714, so the bar's lower edge lies
# 10.714 mm above the centre of mass and the stem's end 79.286 mm below it
CENTROID_Y = (3600 * 15 - 2700 * 45) / 6300


@pytest.fixture(scope="module")
def task():
    return push_t.make()


def _rot(theta):
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s], [s, c]])


# -- coverage ---------------------------------------------------------------------------------


def test_coverage_identical_pose_is_one(task):
    assert task.coverage(task.goal) == pytest.approx(1.0, abs=1e-12)
    assert task.coverage(task.goal + [0.0, 0.0, 2 * math.pi]) == pytest.approx(1.0, abs=1e-12)
    assert isinstance(task.coverage(task.goal), float)
    np.testing.assert_allclose(task.goal, [0.256, 0.256, math.pi / 4], rtol=0, atol=0)


def test_coverage_disjoint_is_zero(task):
    assert task.coverage([0.1, 0.45, 0.3]) == 0.0
    assert task.coverage([0.45, 0.1, -2.0]) == 0.0
    # touching from outside along the bar's end: still no area in common
    assert task.coverage(task.goal + np.r_[0.2 * _rot(math.pi / 4)[:, 0], 0.0]) == 0.0


@pytest.mark.parametrize(
    ("axis", "d_mm"),
    [
        (0, 0.0),
        (0, 10.0),
        (0, 25.0),
        (0, 30.0),
        (0, 45.0),
        (0, 100.0),
        (1, 2.5),
        (1, 10.0),
        (1, 30.0),
    ],
)
def test_coverage_known_overlap(task, axis, d_mm):
    """Translate the goal T by d along its bar (axis 0) or its stem (axis 1).

    By hand from the rectangles (bar 120 x 30 above, stem 30 x 90 below, mm): along the
    bar the bars overlap (120 - d) 30, the stems (30 - d)_+ 90 and a bar never meets the
    other stem (they lie on either side of y = 0); along the stem (d <= 30) the bars
    overlap 120 (30 - d), the stems 30 (90 - d) and the lower T's bar meets the upper
    T's stem over 30 d.  Both give 6300 - 120 d for d <= 30."""
    d = d_mm
    if axis == 0:
        area = (120 - d) * 30 + max(30 - d, 0.0) * 90
    else:
        area = 120 * (30 - d) + 30 * (90 - d) + 30 * d
    shift = _rot(task.goal[2])[:, axis] * d * 1e-3
    pose = task.goal + np.r_[shift, 0.0]
    assert task.coverage(pose) == pytest.approx(area / 6300, abs=1e-12)
    # the T is symmetric about its stem: shifting the other way along the bar is the same
    if axis == 0:
        assert task.coverage(task.goal - np.r_[shift, 0.0]) == pytest.approx(area / 6300, abs=1e-12)


def test_coverage_half_turn_by_hand(task):
    """The goal T turned by pi about its centroid.  Body frame (mm): bar y in [y0, y0 + 30]
    (x in [-60, 60]), stem y in [y0 - 90, y0] (x in [-15, 15]), with y0 = 10.714 the bar's
    lower edge above the centroid; the turn maps y to -y.  The four rectangle pairs
    overlap in (x width) x (y overlap); a T's bar and stem only share an edge, so the sum
    is the intersection's area."""
    y0 = -CENTROID_Y
    bar, stem = (y0, y0 + 30.0), (y0 - 90.0, y0)
    bar_t, stem_t = (-bar[1], -bar[0]), (-stem[1], -stem[0])

    def ov(a, b):
        return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))

    area = (
        120 * ov(bar, bar_t) + 30 * ov(bar, stem_t) + 30 * ov(stem, bar_t) + 30 * ov(stem, stem_t)
    )
    assert area == pytest.approx(900 + 900 + 30 * 2 * y0)
    pose = task.goal + [0.0, 0.0, math.pi]
    assert task.coverage(pose) == pytest.approx(area / 6300, abs=1e-12)


def test_coverage_batched_and_success(task):
    poses = np.array([task.goal, [0.1, 0.45, 0.3], task.goal + [0.001, 0.0, 0.0]])
    cov = task.coverage(poses.reshape(3, 1, 3))
    assert cov.shape == (3, 1)
    np.testing.assert_array_equal(cov[:, 0], [task.coverage(p) for p in poses])
    x = np.zeros((3, 12))
    x[:, 0:3] = poses
    np.testing.assert_array_equal(task.success(x), [True, False, True])
    assert task.success(x[0]) is True and task.success(task.x0) is False
    # 0.95 is the threshold: a shift of 4 mm along the bar keeps 6300 - 480 = 5820 mm^2
    shift = _rot(task.goal[2])[:, 0] * 4e-3
    assert task.coverage(task.goal + np.r_[shift, 0]) == pytest.approx(5820 / 6300, abs=1e-12)
    assert not task.success(np.r_[task.goal + np.r_[shift, 0], np.zeros(9)])
    assert task.success_coverage == 0.95 and task.time_limit == 30.0
    assert task.horizon == 6000


# -- the polygon is the model's T --------------------------------------------------------------


def test_polygon_matches_the_cloud(task, rng):
    v = task.vertices
    assert v.shape == (8, 2)
    # the body frame is the centre of mass: the polygon's centroid is the origin
    poly0 = shapely.Polygon(v)
    assert poly0.area == pytest.approx(T_AREA, rel=1e-12)
    np.testing.assert_allclose(shapely.get_coordinates(poly0.centroid)[0], 0.0, atol=1e-15)
    for _ in range(5):
        pose = np.r_[rng.uniform(0.1, 0.4, 2), rng.uniform(-4, 4)]
        poly = task.t_polygon(pose)
        pts = task.cloud.points @ _rot(pose[2]).T + pose[:2]
        d = shapely.distance(poly.boundary, shapely.points(pts))
        assert d.max() < 1e-9
        np.testing.assert_allclose(
            shapely.get_coordinates(poly.centroid)[0], pose[:2], rtol=0, atol=1e-12
        )
        np.testing.assert_array_equal(task.t_outline(pose), shapely.get_coordinates(poly)[:-1])
        # outward normals: a little along the normal leaves the T, a little against enters
        # (skip the samples at corners)
        nrm = task.cloud.normals @ _rot(pose[2]).T
        at_corner = (
            np.min(np.linalg.norm(task.cloud.points[:, None] - v[None], axis=2), axis=1) < 1e-9
        )
        out = pts + 1e-4 * nrm
        inn = pts - 1e-4 * nrm
        assert not np.any(shapely.contains_xy(poly, out[~at_corner, 0], out[~at_corner, 1]))
        assert np.all(shapely.contains_xy(poly, inn[~at_corner, 0], inn[~at_corner, 1]))
    assert 150 <= len(task.cloud) <= 250 and len(task.pusher_cloud) == 32


def test_cloud_and_frame_are_the_models():
    """One step from rest with the pusher pressing on the T: the model's velocity change is
    the contact wrench of task.cloud at t_pose(x) (support friction is 0 at rest, the walls
    are far), so the model holds task.cloud in the frame t_pose reports.
    (The explicit step, whose velocity change is the wrench itself; the implicit one
    solves with the damping.)"""
    task = push_t.make(integrator="euler")
    p = task.params
    params = sc.ContactParams(
        eps=p["eps"],
        eps_c=p["eps_c"],
        beta=p["beta"],
        stiffness=p["stiffness"],
        damping=p["damping"],
        friction=p["friction"],
        slip_velocity=p["contact_slip_velocity"],
    )
    mp = task.cloud.mass_properties(1.0)
    inertia = p["mass"] * mp.inertia / mp.mass
    for pose, k in (([0.25, 0.26, 0.7], 40), ([0.3, 0.2, -2.0], 123)):
        x = np.zeros(12)
        x[0:3] = pose
        # the pusher 2 mm into the T at sample k, along its outward normal
        R = _rot(pose[2])
        q = R @ task.cloud.points[k] + pose[:2]
        x[3:5] = q + R @ task.cloud.normals[k] * (task.pusher_radius - 0.002)
        xn = task.model.step(x, np.zeros(3)).x_next
        c = sc.contact(
            task.cloud, x[0:3], np.zeros(3), task.pusher_cloud, x[3:6], np.zeros(3), params
        )
        assert np.linalg.norm(c.wrench_a[:2]) > 0.5  # a real push
        dv = xn[6:9] - x[6:9]
        f = np.r_[p["mass"] * dv[:2], inertia * dv[2]] / task.dt
        np.testing.assert_allclose(f, c.wrench_a, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(task.t_pose(xn), x[0:3] + task.dt * xn[6:9], atol=1e-15)


def test_state_readers(task):
    X = np.arange(2 * 5 * 12, dtype=float).reshape(2, 5, 12)
    np.testing.assert_array_equal(task.t_pose(X), X[..., 0:3])
    np.testing.assert_array_equal(task.pusher_pose(X), X[..., 3:6])
    np.testing.assert_array_equal(task.t_velocity(X), X[..., 6:9])
    assert task.model.moving == ("T", "pusher")
    assert task.model.control_names == ("pusher.vx", "pusher.vy", "pusher.omega")
    assert (task.t_name, task.pusher_name) == ("T", "pusher")
    assert task.model.body_names == ("T", "pusher") + task.wall_names
    with pytest.raises(ValueError, match="x must have shape"):
        task.t_pose(np.zeros(6))
    with pytest.raises(ValueError, match="pose must have shape"):
        task.coverage([0.1, 0.2])
    with pytest.raises(ValueError, match="finite"):
        task.coverage([0.1, np.nan, 0.0])


def test_project_controls(task):
    U = np.array([[0.3, 0.4, 2.0], [0.1, 0.0, -1.0], [-3.0, 4.0, 0.0]])
    P = task.project_controls(U)
    np.testing.assert_allclose(P, [[0.3, 0.4, 0.0], [0.1, 0.0, 0.0], [-0.3, 0.4, 0.0]], atol=1e-15)
    assert U[0, 2] == 2.0  # not modified
    assert task.u_max == 0.5
    with pytest.raises(ValueError, match="U must have shape"):
        task.project_controls(np.zeros((4, 2)))


def test_task_is_immutable(task):
    with pytest.raises(dataclasses.FrozenInstanceError):
        task.dt = 0.1  # type: ignore[misc]
    with pytest.raises(ValueError):
        task.x0[0] = 1.0
    with pytest.raises(TypeError):
        task.params["mass"] = 1.0  # type: ignore[index]
    assert "PushT(seed=0" in repr(task)


# -- seeded initial states ---------------------------------------------------------------------


def test_initial_states_reproducible_and_distinct():
    a, b = push_t.make(seed=7), push_t.make(seed=7)
    np.testing.assert_array_equal(a.x0, b.x0)
    np.testing.assert_array_equal(a.x0, a.initial_state(7))
    np.testing.assert_array_equal(push_t.make().x0, push_t.make(seed=push_t.DEFAULT_SEED).x0)
    assert push_t.make().seed == push_t.DEFAULT_SEED == 0
    np.testing.assert_array_equal(a.model.initial_state(), a.x0)
    states = np.array([a.initial_state(s) for s in range(50)])
    assert len({tuple(s) for s in states}) == 50
    assert len(np.unique(states[:, 0])) == len(np.unique(states[:, 3])) == 50


def test_initial_states_within_ranges(task):
    r = task.pusher_radius
    lo, hi = r + task.params["margin"], L - r - task.params["margin"]
    n = 300
    states = np.array([task.initial_state(s) for s in range(n)])
    t, th, pu = states[:, 0:2], states[:, 2], states[:, 3:5]
    assert np.all((t >= 0.1) & (t <= 0.4))
    assert np.all((th >= -math.pi) & (th < math.pi))
    assert np.all((pu >= lo) & (pu <= hi))
    np.testing.assert_array_equal(states[:, 5:], 0.0)
    # roughly uniform: the samples spread over their ranges
    assert t.min() < 0.12 and t.max() > 0.38 and th.min() < -2.8 and th.max() > 2.8
    assert pu.min() < 0.06 and pu.max() > 0.45
    for s in states:
        poly = task.t_polygon(s[0:3])
        gap = poly.distance(shapely.Point(s[3:5])) - r
        assert gap >= task.params["clearance"] - 1e-12
        corners = task.t_outline(s[0:3])
        assert corners.min() > 0.019 and corners.max() < L - 0.019


# -- errors --------------------------------------------------------------------------------------


def test_make_errors():
    with pytest.raises(TypeError, match="'bogus'.*'masss'"):
        push_t.make(masss=0.1, bogus=1)
    with pytest.raises(TypeError, match="mass must be a real number"):
        push_t.make(mass="heavy")
    with pytest.raises(TypeError, match="seed must be an integer"):
        push_t.make(seed=1.5)
    for key, value in [
        ("mass", -0.1),
        ("mass", 0.0),
        ("dt", 0.0),
        ("u_max", -1.0),
        ("stiffness", np.inf),
        ("friction", -0.1),
        ("support_friction", np.nan),
        ("pusher_radius", 0.3),
        ("spacing", 0.05),
        ("pusher_spacing", 0.02),
    ]:
        with pytest.raises(ValueError):
            push_t.make(**{key: value})
    with pytest.raises(ValueError, match="seed must be >= 0"):
        push_t.make(seed=-1)
    for key, value, match in [
        ("support_radius", -0.01, "support_radius"),
        ("support_radius", 0.3, "support_radius"),
        ("support_x", np.nan, "support_x"),
        ("support_y", 0.25, "support_y"),
        ("wall_inset", 0.06, "wall_inset"),
        ("wall_inset", -0.001, "wall_inset"),
    ]:
        with pytest.raises(ValueError, match=match):
            push_t.make(**{key: value})
    with pytest.raises(ValueError, match="goal"):
        push_t.make(goal=[0.1, 0.2])
    with pytest.raises(ValueError, match="goal"):
        push_t.make(goal=[0.1, 0.2, np.nan])


def test_goal_support_ring_and_wall_inset():
    """``goal`` sets the coverage's target; a support ring turns the T under a push at a
    different rate than the footprint grid (the same force); ``wall_inset`` moves the
    walls: a T 3 mm from the left edge, a few mm clear of the wall at 0 (felt faintly:
    soft contact starts before touching), overlaps a wall 7 mm in and is pushed out."""
    g = (0.3, 0.2, 1.0)
    t = push_t.make(goal=g)
    np.testing.assert_array_equal(t.goal, g)
    assert t.coverage(g) == pytest.approx(1.0, abs=1e-14) and t.coverage(push_t.GOAL) < 0.5
    x = np.array(t.x0)
    x[0:3] = [0.25, 0.25, 0.0]
    x[3:6] = [0.25 + 0.03, 0.25 - (0.09 - 0.0107) - 0.014, 0.0]  # below the stem, off-centre
    omega = {}
    for r in (0.0, 0.02, 0.06):
        m = push_t.make(support_radius=r).model
        omega[r] = m.rollout(x, np.tile([0.0, 0.1, 0.0], (40, 1))).states[-1, 8]
    assert abs(omega[0.06]) < abs(omega[0.02])  # a wider ring resists turning more
    assert omega[0.0] != omega[0.02]
    v = t.vertices
    y = np.array(t.x0)
    y[0:3] = [0.003 - v[:, 0].min(), 0.25, 0.0]  # the T's left edge at x = 3 mm
    y[3:6] = [0.4, 0.4, 0.0]
    vx = {i: push_t.make(wall_inset=i).model.step(y, np.zeros(3)).x_next[6] for i in (0, 0.007)}
    assert vx[0] >= 0.0 and vx[0.007] > 20 * vx[0]


def test_overrides_are_applied():
    t = push_t.make(
        seed=2, mass=0.2, dt=0.0025, u_max=0.3, friction=0.0, spacing=0.004, integrator="euler"
    )
    assert t.dt == t.model.dt == 0.0025 and t.u_max == 0.3 and t.params["mass"] == 0.2
    assert t.params["friction"] == 0.0 and len(t.cloud) < 170
    assert set(t.params) == set(push_t.PARAMETERS)
    np.testing.assert_array_equal(t.x0, push_t.make(seed=2).x0)  # geometry-independent
    # the mass reaches the model: the same contact impulse moves a heavier T less (the
    # explicit step, where the velocity change is exactly impulse / mass)
    x = np.array(t.x0)
    x[0:3] = [0.25, 0.25, 0.0]
    x[3:6] = [0.25, 0.25 - (0.09 - 0.0107) - 0.014, 0.0]
    h = push_t.make(dt=0.0025, friction=0.0, spacing=0.004, integrator="euler")
    dv_heavy = t.model.step(x, np.zeros(3)).x_next[7]
    dv_light = h.model.step(x, np.zeros(3)).x_next[7]
    assert dv_light == pytest.approx(dv_heavy * 0.2 / 0.15, rel=1e-12)


# -- dynamics ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 6, 7, 11])
def test_short_push_moves_the_t(task, seed):
    """Drive the pusher at 0.2 m/s toward the T's initial centre for 1.5 s.  (Seeds whose
    straight-line push reaches the T and does not pin it against a wall.)"""
    x0 = task.initial_state(seed)
    d = x0[0:2] - x0[3:5]
    d /= np.linalg.norm(d)
    n = int(round(1.5 / task.dt))
    U = np.zeros((n, 3))
    U[:, :2] = 0.2 * d
    r = task.model.rollout(x0, U)
    X = r.states
    assert r.status == 0 and np.all(np.isfinite(X))
    assert np.linalg.norm(X[-1, 0:2] - X[0, 0:2]) > 0.01
    corners = task.t_outline(task.t_pose(X))
    assert corners.min() > -0.002 and corners.max() < L + 0.002
    assert np.all((task.pusher_pose(X)[:, :2] > 0) & (task.pusher_pose(X)[:, :2] < L))
    # the pusher never passes into the T (no tunnelling): its centre stays outside the T
    polys = shapely.polygons(corners)
    assert not np.any(shapely.contains_xy(polys, X[:, 3], X[:, 4]))


def test_fast_push_neither_explodes_nor_tunnels(task):
    """The pusher at 0.3 m/s for 2 s (+x for 1 s, then +y), hitting the T near a corner of
    its bar and turning it half round: no NaN, the T stays slower than 1 m/s, the pusher
    never passes into the T, the T stays inside the walls."""
    x0 = np.zeros(12)
    x0[0:3] = [0.2, 0.12, 1.2]
    x0[3:5] = [0.05, 0.1]
    n = int(round(1.0 / task.dt))
    U = np.zeros((2 * n, 3))
    U[:n, 0] = 0.3
    U[n:, 1] = 0.3
    r = task.model.rollout(x0, U)
    X = r.states
    assert r.status == 0 and np.all(np.isfinite(X))
    t = task.t_pose(X)
    assert np.linalg.norm(t[-1, :2] - t[0, :2]) > 0.1 and abs(t[-1, 2] - t[0, 2]) > 2.0
    assert np.hypot(X[:, 6], X[:, 7]).max() < 1.0
    corners = task.t_outline(t)
    polys = shapely.polygons(corners)
    gap = shapely.distance(polys, shapely.points(X[:, 3:5])) - task.pusher_radius
    assert gap.min() > -0.002
    assert not np.any(shapely.contains_xy(polys, X[:, 3], X[:, 4]))
    assert corners.min() > 0 and corners.max() < L


@pytest.mark.parametrize("direction", [(-1, 0), (1, 0), (0, -1), (0, 1)])
def test_walls_stop_the_t(task, direction):
    """Push the T at 0.5 m/s toward each wall, stem toward the pusher, bar broadside toward
    the wall; the pusher stops 0.15 m from the wall and the T slides on (without the wall,
    ~1 cm past it); the wall stops it within the contact's soft depth.  It then rests
    there but for a creep off the wall under the soft contact's residual push, which the
    support friction's viscous regime below its slip velocity lets through (1.3 mm/s half
    a second after the impact, 0.8 mm/s after a second, slowing)."""
    d = np.asarray(direction, dtype=float)
    theta = math.atan2(-d[0], d[1])  # stem pointing against d
    # coordinate along d of the wall, and the T's centre 0.12 m before it
    wall = L if d.sum() > 0 else 0.0
    k = int(np.flatnonzero(d)[0])
    centre = np.full(2, L / 2)
    centre[k] = wall - d[k] * 0.12
    pusher = centre - d * ((90 + CENTROID_Y) * 1e-3 + task.pusher_radius + 0.003)
    x0 = np.zeros(12)
    x0[0:3] = [*centre, theta]
    x0[3:5] = pusher
    travel = abs(wall - d[k] * 0.15 - pusher[k])
    n_push = int(round(travel / 0.5 / task.dt))
    U = np.zeros((n_push + 200, 3))
    U[:n_push, :2] = 0.5 * d
    r = task.model.rollout(x0, U)
    X = r.states
    assert r.status == 0 and np.all(np.isfinite(X))
    t = task.t_pose(X)
    assert np.all((t[:, :2] > 0) & (t[:, :2] < L))  # the centre stays inside
    corners = task.t_outline(t)
    lead = d[k] * (corners[..., k] - wall)  # <= 0 inside the workspace
    assert lead.max() < 0.002  # at most the soft depth past the wall
    assert lead[-1].max() > -0.01  # the T did reach the wall
    speed = np.linalg.norm(task.t_velocity(X[-101:])[:, :2], axis=1)
    assert speed[-1] < 1e-3 and speed[-1] < 0.7 * speed[0]  # and comes to rest there
    assert np.all(np.isfinite(task.coverage(t)))


@pytest.mark.parametrize("turn", [0.0, 0.6, 2.0])
@pytest.mark.parametrize("direction", [(-1, 0), (1, 0), (0, -1), (0, 1)])
def test_walls_stop_a_thrown_t(task, direction, turn):
    """The T thrown at 0.6 m/s at each wall from 2 cm away (broadside, a corner first,
    the stem's corner first) would slide 5 cm in free space; the wall stops it."""
    d = np.asarray(direction, dtype=float)
    k = int(np.flatnonzero(d)[0])
    wall = L if d.sum() > 0 else 0.0
    x0 = np.zeros(12)
    x0[0:3] = [L / 2, L / 2, math.atan2(-d[0], d[1]) + turn]
    reach = (d[k] * (task.t_outline(x0[0:3])[:, k] - x0[k])).max()
    x0[k] = wall - d[k] * (reach + 0.02)
    x0[3:5] = L / 2 - d * 0.2  # the pusher idles far behind
    x0[6:8] = 0.6 * d
    X = task.model.rollout(x0, np.zeros((200, 3))).states
    # the same throw in the middle of the workspace, away from every wall
    free = x0.copy()
    free[k] = L / 2 + d[k] * 0.1
    free[3:5] = L / 2 - d * 0.2
    Xf = task.model.rollout(free, np.zeros((200, 3))).states
    assert np.linalg.norm(Xf[-1, 0:2] - free[0:2]) > 0.045
    assert np.all(np.isfinite(X))
    lead = d[k] * (task.t_outline(task.t_pose(X))[..., k] - wall)
    assert lead.max() < 0.002 and lead[-1].max() > -0.01
    assert np.linalg.norm(task.t_velocity(X[-1])[:2]) < 1e-3


def test_module_docstring_examples():
    result = doctest.testmod(push_t, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# -- energy --------------------------------------------------------------------------------------


def _pinning_pushes(task, n, seed):
    """``n`` pushes that pin the T against the left wall: the T at rest 6 mm or more clear of
    every wall (x of its centre 0.06-0.11 m, any angle), the pusher at x = 0.25 m within
    5 cm of the T's height, driven at 0.05-0.5 m/s within 0.4 rad of -x."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x = np.array(task.x0, dtype=float)
        th = rng.uniform(-np.pi, np.pi)
        while True:
            x[:3] = [rng.uniform(0.06, 0.11), rng.uniform(0.12, 0.38), th]
            corners = task.t_outline(x[:3])
            if corners.min() > 0.006 and corners.max() < L - 0.006:
                break
            th = rng.uniform(-np.pi, np.pi)
        x[3:6] = [0.25, x[1] + rng.uniform(-0.05, 0.05), 0.0]
        x[6:] = 0.0
        speed, a = rng.uniform(0.05, 0.5), rng.uniform(-0.4, 0.4)
        out.append((x, speed * np.array([-np.cos(a), np.sin(a), 0.0])))
    return out


def _energy_excess(task, x, u, seconds=1.2):
    """The largest ``KE - W`` over a push at constant ``u``: the T's kinetic energy less the
    work the pusher has done on it, ``W = sum dt f . u`` with ``f`` the T-pusher contact
    force on the T over each step (the damping and the friction's numerator at the step's
    new velocity, as the implicit step takes them; the force at the start of the step
    otherwise)."""
    m = task.model
    prm = m.contact_params[0]  # the T-pusher pair, the first make adds
    W, worst = 0.0, -np.inf
    for _ in range(int(round(seconds / task.dt))):
        xn = m.step(x, u).x_next
        v = xn[6:9] if m.integrator == "implicit" else x[6:9]
        c = sc.contact(task.cloud, x[0:3], v, task.pusher_cloud, x[3:6], u, prm)
        W += task.dt * float(-c.wrench_b @ u)
        x = xn
        worst = max(worst, m.energy(x).kinetic - W)
    return worst


def test_pinning_the_t_gains_no_energy():
    """A pusher squeezing the T against a wall never gives it more kinetic energy than the
    work it has done (60 pushes, many of them pinning the T and ejecting it sideways at up
    to 1.6 m/s and 16 rad/s).  The explicit model (integrator="euler", damping 8 N s/m)
    fails this on the same pushes: its springs and dampers are beyond their explicit
    limits under a squeeze (measured: 6 of 60 gain energy, up to 0.15 J)."""
    task = push_t.make(seed=0)
    assert task.model.integrator == "implicit" and task.params["damping"] == 30.0
    excess = [_energy_excess(task, x, u) for x, u in _pinning_pushes(task, 60, 7)]
    assert max(excess) < 1e-9, max(excess)  # measured 5e-14 (rounding)
    euler = push_t.make(seed=0, integrator="euler")
    assert euler.params["damping"] == push_t.EULER_DAMPING
    bad = [_energy_excess(euler, x, u) for x, u in _pinning_pushes(euler, 60, 7)]
    assert sum(b > 1e-3 for b in bad) >= 3 and max(bad) > 0.05, sorted(bad)[-6:]


def test_make_integrator():
    assert push_t.make().model.integrator == "implicit"
    e = push_t.make(integrator="euler", damping=5.0)
    assert e.model.integrator == "euler" and e.params["damping"] == 5.0
    with pytest.raises(ValueError, match="integrator must be 'implicit' or 'euler'"):
        push_t.make(integrator="rk4")
    with pytest.raises(TypeError, match="integrator must be a str"):
        push_t.make(integrator=1)


def test_task_pickles():
    """A pickled task is the same task: its model steps bit for bit, same start, goal,
    parameters and coverage."""
    import pickle

    task = push_t.make(seed=7, mass=0.12)
    copy = pickle.loads(pickle.dumps(task))
    assert copy.seed == 7 and dict(copy.params) == dict(task.params)
    np.testing.assert_array_equal(copy.x0, task.x0)
    np.testing.assert_array_equal(copy.goal, task.goal)
    assert not (copy.x0.flags.writeable or copy.goal.flags.writeable)
    u = np.array([0.05, 0.1, 0.0])
    a = task.model.step(task.x0, u, order=1)
    b = copy.model.step(copy.x0, u, order=1)
    assert a.x_next.tobytes() == b.x_next.tobytes() and a.dx_dx.tobytes() == b.dx_dx.tobytes()
    assert copy.coverage(task.x0[:3]) == task.coverage(task.x0[:3])


def test_task_scene_is_the_scene_of_its_model():
    task = push_t.make(3)
    scene = task.scene
    assert list(task.model.body_names) == [b.name for b in scene._bodies]
    model = scene.build(task.dt, task.model.integrator)
    U = np.tile([0.05, 0.02, 0.0], (30, 1))
    assert np.array_equal(model.rollout(task.x0, U).states, task.model.rollout(task.x0, U).states)
