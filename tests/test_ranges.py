"""The valid ranges (docs/method.md section 7, "Valid ranges"): every input has a range
within which every output is finite at every derivative order, and outside of which it is
refused with a ValueError naming the argument (and its range) -- by the Python layer and
by the compiled core called directly.  A step whose new state leaves the ranges raises
DivergenceError.  Inputs that gave NaN or inf before the ranges existed (eps below 1e-103
at order 3, eps_c or beta of 1e300, poses 1e105 m apart, masses and velocities of 1e300,
queries far beyond a cloud's reach) are refused."""

import math
import pickle

import numpy as np
import pytest
from conftest import raises_naming

import softcontact as sc
from softcontact import _core
from softcontact._validate import (
    CONTACT_LENGTH_RANGE,
    COORD_MAX,
    DAMPING_RANGE,
    DT_RANGE,
    EPS_RANGE,
    FORCE_MAX,
    FRICTION_RANGE,
    GRAVITY_MAX,
    MASS_RANGE,
    REACH_MAX,
    SLIP_RANGE,
    SPEED_MAX,
    STIFFNESS_RANGE,
)
from softcontact.ssdf import _packed, _sphere

pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


def raises(name, call, *more):
    """``call()`` raises ValueError whose message names ``name`` (and holds each of
    ``more``)."""
    return raises_naming(ValueError, name, call, *more)


def finite(result):
    """Every array of a result (a NamedTuple of arrays, floats and Nones) is finite."""
    arrays = [np.asarray(a, dtype=float) for a in result if a is not None]
    return bool(arrays) and all(np.isfinite(a).all() for a in arrays)


def above(v):
    return math.nextafter(v, math.inf)


def below(v):
    return math.nextafter(v, -math.inf)


def disk(r):
    return sc.PointCloud.disk(r, r / 4)


def box3(r):
    return sc.PointCloud.box([r, 0.7 * r, 0.5 * r], r / 2)


Q3 = [1.0, 0.0, 0.0, 0.0]
TILT = list(np.array([1.0, 0.2, 0.1, 0.0]) / np.linalg.norm([1.0, 0.2, 0.1, 0.0]))


def pair(dim, r, gap=-0.2):
    """Two clouds of size ``r`` in contact (overlapping by ``gap`` r), with their poses and
    velocities: (cloud_a, pose_a, vel_a, cloud_b, pose_b, vel_b)."""
    if dim == 2:
        return (
            disk(r),
            [0.0, 0.0, 0.3],
            [0.01, 0.0, 0.1],
            disk(0.7 * r),
            [(1.7 + gap) * r, 0.1 * r, 0.0],
            [0.0, 0.02, -0.2],
        )
    return (
        box3(r),
        [0.0, 0.0, 0.0, *TILT],
        [0.01, 0.0, 0.0, 0.0, 0.1, 0.0],
        box3(0.7 * r),
        [(1.7 + gap) * r, 0.1 * r, 0.05 * r, *Q3],
        [0.0, 0.02, 0.0, -0.2, 0.0, 0.0],
    )


def contact_all_orders(args, params):
    """contact at orders 0..2, dense and pruned: every output finite."""
    for order in range(3):
        for dense in (False, True):
            r = sc.contact(*args[:3], *args[3:], params, order, dense=dense)
            assert finite(r), (order, dense)
            assert r.hessian is None or order == 2


# --------------------------------------------------------------------------------------------
# 1. the contact model's parameters
# --------------------------------------------------------------------------------------------

PARAM_RANGES = {
    "eps": (*EPS_RANGE, "m^2"),
    "eps_c": (*CONTACT_LENGTH_RANGE, "m"),
    "stiffness": (*STIFFNESS_RANGE, "N/m"),
    "beta": (*CONTACT_LENGTH_RANGE, "m"),
    "damping": (*DAMPING_RANGE, "N s/m"),
    "friction": (*FRICTION_RANGE, ""),
    "slip_velocity": (*SLIP_RANGE, "m/s"),
}


def test_the_ranges_are_the_c_cores():
    assert (EPS_RANGE, CONTACT_LENGTH_RANGE) == ((1e-30, 1e24), (1e-15, 1e12))
    assert (STIFFNESS_RANGE, DAMPING_RANGE, FRICTION_RANGE, SLIP_RANGE) == (
        (1e-20, 1e20),
        (0.0, 1e20),
        (0.0, 1e3),
        (1e-12, 1e8),
    )
    assert (COORD_MAX, REACH_MAX, SPEED_MAX, FORCE_MAX, GRAVITY_MAX) == (
        1e12,
        1e14,
        1e8,
        1e30,
        1e12,
    )
    assert (MASS_RANGE, DT_RANGE) == ((1e-100, 1e100), (1e-12, 1e3))
    assert sc.scene.MASS_RANGE == MASS_RANGE
    assert (_core.EPS_MIN, _core.EPS_MAX, _core.SC_ERANGE) == (1e-30, 1e24, -8)


@pytest.mark.parametrize("field", list(PARAM_RANGES))
@pytest.mark.parametrize("dim", [2, 3])
def test_contact_params_at_the_ends_of_their_ranges(field, dim):
    lo, hi, unit = PARAM_RANGES[field]
    for v in (lo, hi):
        # eps at its lower end needs clouds within its reach: a nanometre pair
        r = 1e-9 if field == "eps" and v == lo else 0.05
        contact_all_orders(pair(dim, r), sc.ContactParams(**{field: v}))
    for v in ([below(lo)] if lo > 0 else [-1e-300]) + [above(hi), 1e300]:
        text = raises(field, lambda v=v: sc.ContactParams(**{field: v}))
        assert v < 0 or f"must be in [{lo:g}, {hi:g}] {unit}".rstrip() in text, text


@pytest.mark.parametrize("field", list(PARAM_RANGES))
def test_contact_params_unpickled_out_of_range(field):
    lo, hi, _ = PARAM_RANGES[field]
    good = sc.ContactParams()
    assert pickle.loads(pickle.dumps(good)) == good
    bad = dict(vars(good), **{field: above(hi)})

    class Tampered:
        def __reduce__(self):
            return (sc.ContactParams, tuple(bad[f] for f in PARAM_RANGES))

    raises(field, lambda: pickle.loads(pickle.dumps(Tampered())), f"{hi:g}")


@pytest.mark.parametrize("field", list(PARAM_RANGES))
def test_the_binding_names_a_parameter_out_of_range(field):
    _, hi, _ = PARAM_RANGES[field]
    ca, qa, va, cb, qb, vb = pair(2, 0.05)
    values = dict(vars(sc.ContactParams()), **{field: above(hi)})
    prm = tuple(values[f] for f in PARAM_RANGES)
    text = raises(
        field,
        lambda: _core.contact(
            _packed(ca),
            len(ca),
            np.array(qa),
            np.array(va),
            _packed(cb),
            len(cb),
            np.array(qb),
            np.array(vb),
            prm,
        ),
    )
    assert "must be in [" in text


# --------------------------------------------------------------------------------------------
# 2. eps of the SSDF and the separation field
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 3])
def test_ssdf_eps_at_the_ends_of_its_range(dim):
    lo, hi = EPS_RANGE
    for eps, r in ((lo, 1e-9), (hi, 0.05)):
        cloud = disk(r) if dim == 2 else box3(r)
        x = np.array([[0.3 * r, 0.1 * r, 0.0][:dim], [0.0] * dim, [2 * r, -r, 0.5 * r][:dim]])
        for dense in (False, True):
            res = sc.ssdf(cloud, x, eps, order=3, dense=dense)
            assert finite(res)
        sep = pair(dim, r)
        assert finite(sc.separation(sep[0], sep[1], sep[3], sep[4], eps, order=2))
    cloud = disk(1e-9) if dim == 2 else box3(1e-9)
    tiny = pair(dim, 1e-9)
    for eps in (below(lo), 1e-104, above(hi), 1e300):
        raises(
            "eps",
            lambda eps=eps: sc.ssdf(cloud, np.zeros((1, dim)), eps, order=3),
            "[1e-30, 1e+24] m^2",
        )
        raises("eps", lambda eps=eps: sc.separation(tiny[0], tiny[1], tiny[3], tiny[4], eps))


def test_the_binding_refuses_eps_out_of_range():
    c = disk(1e-9)
    for eps in (1e-104, 1e25):
        raises(
            "eps",
            lambda eps=eps: _core.ssdf(_packed(c), len(c), np.zeros((1, 2)), eps, 3),
            "[1e-30, 1e+24]",
        )
        raises(
            "eps",
            lambda eps=eps: _core.separation(
                _packed(c), len(c), np.zeros(3), _packed(c), len(c), np.zeros(3), eps
            ),
        )


# --------------------------------------------------------------------------------------------
# 3. coordinates
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 3])
def test_coordinates_at_the_ends_of_their_range(dim):
    # a half-space has no reach limit: queries anywhere within the coordinates' range
    hs = sc.PointCloud.halfspace([0.0] * dim, [0.0] * (dim - 1) + [1.0])
    x = np.array([[COORD_MAX] * dim, [-COORD_MAX] * dim])
    res = sc.ssdf(hs, x, 1e-5, order=3)
    assert finite(res) and res.phi[0] == COORD_MAX
    raises(
        "x",
        lambda: sc.ssdf(hs, [[above(COORD_MAX)] + [0.0] * (dim - 1)], 1e-5),
        "within [-1e+12, 1e+12] m",
    )
    # two bodies in contact at the far end of the world, either sign
    ca, qa, va, cb, qb, vb = pair(dim, 0.05)
    for s in (1.0, -1.0):
        shift = s * (COORD_MAX - 1.0)
        qa2, qb2 = [qa[0] + shift, *qa[1:]], [qb[0] + shift, *qb[1:]]
        contact_all_orders((ca, qa2, va, cb, qb2, vb), sc.ContactParams())
    far = [2e12, *qb[1:]]
    raises("pose_b", lambda: sc.separation(ca, qa, cb, far, 1e-5), "within [-1e+12, 1e+12] m")
    raises("pose_b", lambda: sc.contact(ca, qa, va, cb, far, vb))


def test_a_cloud_farther_than_the_range_from_its_origin():
    c = sc.PointCloud(np.array([[2e12, 0.0], [2e12, 1.0]]), [[0.0, 1.0], [0.0, -1.0]])
    raises("cloud", lambda: sc.ssdf(c, [[0.0, 0.0]], 1e-5), "1e+12 m")
    raises("cloud_a", lambda: sc.separation(c, [0, 0, 0], disk(0.05), [0, 0, 0], 1e-5))
    raises("cloud", lambda: sc.Scene(dim=2).add_body(c, kind="static"), "1e+12 m")
    edge = sc.PointCloud(np.array([[0.9e12, 0.0], [0.9e12, 1.0]]), [[0.0, 1.0], [0.0, -1.0]])
    assert finite(sc.ssdf(edge, [[0.9e12, 0.5]], 1.0, order=3))


# --------------------------------------------------------------------------------------------
# 4. the SSDF's reach
# --------------------------------------------------------------------------------------------


def _reach_limit(cloud, eps):
    """The largest |x - c0| of a query within the reach."""
    _, rho, _ = _sphere(cloud)
    return REACH_MAX * eps / rho - rho


@pytest.mark.parametrize("dim", [2, 3])
def test_queries_at_the_end_of_the_reach(dim):
    cloud = disk(0.05) if dim == 2 else box3(0.05)
    c0 = np.array(_sphere(cloud)[0])
    eps = 1e-10
    lim = _reach_limit(cloud, eps)
    rng = np.random.default_rng(5)
    u = rng.normal(size=(8, dim))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    for dense in (False, True):
        res = sc.ssdf(cloud, c0 + 0.999 * lim * u, eps, order=3, dense=dense)
        assert finite(res)
    text = raises("x", lambda: sc.ssdf(cloud, c0 + 1.001 * lim * u[:1], eps), "reach", "row 0")
    assert f"{lim:.6g}" in text
    # eps too small for the cloud itself: no query can be within the reach
    rho = _sphere(cloud)[1]
    raises("eps", lambda: sc.ssdf(cloud, [c0], 0.9 * rho * rho / REACH_MAX), "at least")
    # the binding, called directly, refuses the same query
    raises(
        "x",
        lambda: _core.ssdf(_packed(cloud), len(cloud), c0 + 1.01 * lim * u[:1], eps),
        "valid range",
    )


def test_the_centre_of_a_disk_within_and_beyond_its_reach():
    """At the centre of a disk every sample is at one distance, up to rounding: at a reach of
    2e19 the rounding of the exponents overflowed (a NaN row); at the end of the range the
    same query is finite at every order."""
    cloud = disk(0.05)
    c0 = np.array(_sphere(cloud)[0])
    rho = _sphere(cloud)[1]
    eps_edge = rho * rho / (0.999 * REACH_MAX)  # |x - c0| ~ 0: reach rho^2 / eps
    for eps in (eps_edge, eps_edge * 1.37, eps_edge * 10):
        assert finite(sc.ssdf(cloud, [c0, [0.0, 0.0]], eps, order=3))
    raises("eps", lambda: sc.ssdf(cloud, [[0.0, 0.0]], 1.2221244579705585e-22, order=0))


@pytest.mark.parametrize("dim", [2, 3])
def test_pairs_at_the_end_of_their_reach(dim):
    ca, qa, va, cb, qb, vb = pair(dim, 0.05)
    params = sc.ContactParams(eps=1e-8)
    (_, rho_a, ra), (_, rho_b, rb) = _sphere(ca), _sphere(cb)
    dmax = REACH_MAX * params.eps / max(rho_a, rho_b) - ra - rb
    inside = [0.999 * dmax, *qb[1:]]
    assert finite(sc.separation(ca, qa, cb, inside, params.eps, order=2))
    contact_all_orders((ca, qa, va, cb, inside, vb), params)
    outside = [1.001 * dmax, *qb[1:]]
    raises("pose_a and pose_b", lambda: sc.separation(ca, qa, cb, outside, params.eps), "reach")
    raises("pose_a and pose_b", lambda: sc.contact(ca, qa, va, cb, outside, vb, params))
    raises(
        "params.eps",
        lambda: sc.contact(ca, qa, va, cb, qb, vb, sc.ContactParams(eps=1e-17)),
        "at least",
    )
    # the binding, called directly
    raises(
        "pose_a and pose_b",
        lambda: _core.separation(
            _packed(ca), len(ca), np.array(qa), _packed(cb), len(cb), np.array(outside), params.eps
        ),
        "valid range",
    )


# --------------------------------------------------------------------------------------------
# 5. the reported cases: finite, validated-looking inputs that gave NaN or inf
# --------------------------------------------------------------------------------------------

BOX = box3(0.05)
DISK = disk(0.05)


def _scene_with(**kw):
    s = sc.Scene(dim=2)
    s.add_body(DISK, name="d", **kw)


REPORTED = [
    ("eps", lambda: sc.ssdf(BOX, [[0.01, 0.02, 0.0]], 1e-104, order=3)),
    ("eps", lambda: sc.ContactParams(eps=1e-110)),
    ("eps_c", lambda: sc.ContactParams(eps_c=1e300)),
    ("beta", lambda: sc.ContactParams(beta=1e300)),
    ("eps_c", lambda: sc.ContactParams(eps_c=1e153)),
    ("beta", lambda: sc.ContactParams(beta=1e-312)),
    ("stiffness", lambda: sc.ContactParams(stiffness=1e308)),
    ("damping", lambda: sc.ContactParams(damping=1e307)),
    ("friction", lambda: sc.ContactParams(friction=1e300)),
    ("eps", lambda: sc.ContactParams(eps=1e59)),
    ("pose_b", lambda: sc.separation(BOX, [0, 0, 0, *Q3], BOX, [1e105, 0, 0, *Q3], 1e-5, order=2)),
    ("pose_b", lambda: sc.contact(BOX, [0, 0, 0, *Q3], [0] * 6, BOX, [1e105, 0, 0, *Q3], [0] * 6)),
    (
        "pose_a",
        lambda: sc.contact(
            BOX, [1e16, 0, 0, *Q3], [0] * 6, BOX, [1e16, 0, 0, *Q3], [0] * 6, order=2
        ),
    ),
    ("pose_a and pose_b", lambda: sc.separation(BOX, [0, 0, 0, *Q3], BOX, [3e11, 0, 0, *Q3], 1e-5)),
    ("x", lambda: sc.ssdf(DISK, [[1e305, 0.0]], 1e-5)),
    (
        "vel_b",
        lambda: sc.contact(DISK, [0, 0, 0], [0, 0, 0], DISK, [0.09, 0, 0], [1e154, 0, 0], order=1),
    ),
    (
        "vel_a",
        lambda: sc.contact(
            BOX, [0, 0, 0, *Q3], [0, 0, 0, 1e300, 0, 0], BOX, [0.09, 0, 0, *Q3], [0] * 6
        ),
    ),
    ("mass", lambda: _scene_with(mass=1e300)),
    ("velocity", lambda: _scene_with(mass=1.0, velocity=[1e300, 0.0, 0.0])),
    ("pose", lambda: _scene_with(mass=1.0, pose=[1e105, 0.0, 0.0])),
]


@pytest.mark.parametrize(
    ("name", "call"), REPORTED, ids=[f"{n}-{k}" for k, (n, _) in enumerate(REPORTED)]
)
def test_reported_cases_are_refused(name, call):
    raises(name, call)


def test_a_state_with_absurd_magnitudes_is_refused():
    s = sc.Scene(dim=3)
    s.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    s.add_body(BOX, mass=1.0, pose=[0, 0, 0.05, *Q3], name="box")
    s.add_contact("floor", "box", sc.ContactParams())
    m = s.build(1e-3)
    x = m.initial_state()
    for k, v, what in (
        (m.nq, 1e300, "velocity"),
        (0, 1e105, "position"),
        (m.nq + 4, 2e8, "velocity"),
    ):
        bad = x.copy()
        bad[k] = v
        for call in (
            lambda bad=bad: m.step(bad),
            lambda bad=bad: m.step(bad, order=2, params=True),
            lambda bad=bad: m.energy(bad),
        ):
            raises("x", call, f"the {what} of 'box'")
    raises("dt", lambda: s.build(2e3), "[1e-12, 1000] s")
    raises("dt", lambda: s.build(1e-13))


# --------------------------------------------------------------------------------------------
# 6. scenes and models: masses, velocities, controls, dt, gravity, supports
# --------------------------------------------------------------------------------------------


def _free_box(mass, inertia, dt, g=-9.81, velocity=None, max_travel=sc.scene.DEFAULT_MAX_TRAVEL):
    s = sc.Scene(dim=3, gravity=[0.0, 0.0, g])
    s.add_body(
        BOX,
        mass=mass,
        inertia=[inertia] * 3,
        pose=[0, 0, 1.0, *TILT],
        velocity=velocity,
        actuated=True,
        name="box",
    )
    return s.build(dt, max_travel=max_travel)


def _step_all_orders(m, x, u):
    """Model.step at orders 0..2 with and without the parameter derivatives: finite, or a
    DivergenceError whose new state is finite; returns whether every step was finite."""
    ok = True
    for order in range(3):
        for params in (False, True):
            try:
                r = m.step(x, u, order=order, params=params)
            except sc.DivergenceError as e:
                assert np.all(np.isfinite(e.x_next))
                ok = False
                continue
            assert finite(r), (order, params)
    return ok


@pytest.mark.parametrize("mass", MASS_RANGE)
@pytest.mark.parametrize("dt", DT_RANGE)
def test_masses_and_time_steps_at_the_ends_of_their_ranges(mass, dt):
    m = _free_box(mass, mass, dt, max_travel=np.inf)
    x = m.initial_state()
    x[m.nq + 3] = 0.5  # spinning: the gyroscopic term and its derivatives
    # free flight under gravity from rest: finite at the ends of both ranges
    assert _step_all_orders(m, x, np.zeros(m.nu))
    # the largest force and torque: finite, or a new state past the ranges
    _step_all_orders(m, x, np.full(m.nu, FORCE_MAX))


def test_velocities_and_controls_at_the_ends_of_their_ranges():
    m = _free_box(1.0, 1.0, 1e-3, g=0.0, max_travel=np.inf)
    x = m.initial_state()
    x[m.nq : m.nq + 6] = [SPEED_MAX, -SPEED_MAX, 0.0, SPEED_MAX, 0.0, -SPEED_MAX]
    assert _step_all_orders(m, x, np.zeros(m.nu))
    with pytest.raises(sc.DivergenceError) as info:  # 1e30 N on 1 kg for 1 ms
        m.step(x, np.full(m.nu, FORCE_MAX))
    assert info.value.quantity == "velocity" and info.value.limit == SPEED_MAX
    raises("u", lambda: m.step(x, np.full(m.nu, above(FORCE_MAX))), "the control of 'box'", "1e+30")
    x[m.nq] = above(SPEED_MAX)
    raises("x", lambda: m.step(x), "the velocity of 'box'", "1e+08")
    raises(
        "velocity",
        lambda: sc.Scene(dim=2).add_body(DISK, mass=1.0, velocity=[0, 0, above(SPEED_MAX)]),
    )
    # a kinematic body's control is its velocity
    s = sc.Scene(dim=2)
    s.add_body(DISK, kind="kinematic", name="pusher")
    k = s.build(1e-3)
    assert finite(k.step(k.initial_state(), [SPEED_MAX, -SPEED_MAX, SPEED_MAX], order=2))
    raises("u", lambda: k.step(k.initial_state(), [above(SPEED_MAX), 0, 0]), "its velocity")
    # rollouts report an out-of-range control per trajectory
    U = np.zeros((2, 3, 3))
    U[1, 1, 0] = 1e9
    r = k.rollout(k.initial_state(), U)
    np.testing.assert_array_equal(r.status, [0, _core.SC_ERANGE])
    np.testing.assert_array_equal(r.failed_step, [-1, 1])
    assert np.all(np.isnan(r.states[1, 2:]))


def test_positions_leaving_the_range_diverge():
    m = _free_box(1.0, 1.0, 1.0, g=0.0, max_travel=np.inf)
    x = m.initial_state()
    x[0] = COORD_MAX - 0.5e8
    x[m.nq] = 0.4e8  # 1 s later: 0.4e8 m further, still within the range
    u = np.zeros(m.nu)
    assert finite(m.step(x, u, order=2))
    x[m.nq] = 0.6e8
    with pytest.raises(sc.DivergenceError) as info:
        m.step(x, u)
    e = info.value
    assert (e.body, e.quantity, e.limit) == ("box", "position", COORD_MAX)
    assert e.value > COORD_MAX and "valid range" in str(e)


def test_pairs_leaving_their_reach_diverge_and_are_refused():
    s = sc.Scene(dim=2)
    s.add_body(DISK, mass=0.1, name="a")
    s.add_body(disk(0.03), mass=0.1, pose=[0.1, 0.0, 0.0], name="b")
    p = sc.ContactParams(eps=1e-8)
    s.add_contact("a", "b", p)
    m = s.build(1.0, max_travel=np.inf)
    (_, rho_a, ra), (_, rho_b, rb) = (
        _sphere(m._source[0]._bodies[0].cloud),
        _sphere(m._source[0]._bodies[1].cloud),
    )
    dmax = REACH_MAX * p.eps / max(rho_a, rho_b) - ra - rb
    x = m.initial_state()
    x[3] = 0.99 * dmax  # b within the reach
    assert finite(m.step(x, order=2))
    x[3] = 1.01 * dmax
    raises("x", lambda: m.step(x), "bodies 'a' and 'b'", "reach")
    x[3] = 0.99 * dmax
    x[m.nq + 3] = 0.02 * dmax  # b's speed carries it out of the reach in one second
    with pytest.raises(sc.DivergenceError) as info:
        m.step(x)
    assert info.value.quantity == "reach" and info.value.value > REACH_MAX
    # eps too small for the two bodies even where they touch: refused at build
    s2 = sc.Scene(dim=2)
    s2.add_body(DISK, mass=0.1, name="a")
    s2.add_body(disk(0.03), mass=0.1, pose=[0.1, 0.0, 0.0], name="b")
    s2.add_contact("a", "b", sc.ContactParams(eps=1e-17))
    raises("contact(a,b)", lambda: s2.build(1e-3), "at least")


def test_gravity_and_supports_at_the_ends_of_their_ranges():
    for g in (GRAVITY_MAX, -GRAVITY_MAX):
        m = _free_box(1.0, 1.0, 1e-6, g=g)
        assert _step_all_orders(m, m.initial_state(), np.zeros(m.nu))
    raises("gravity", lambda: sc.Scene(dim=3, gravity=[0, 0, above(GRAVITY_MAX)]), "m/s^2")
    for friction, gravity, slip in (
        (FRICTION_RANGE[1], GRAVITY_MAX, SLIP_RANGE[0]),
        (0.0, 1e-30, SLIP_RANGE[1]),
    ):
        s = sc.Scene(dim=2)
        s.add_body(DISK, mass=1.0, velocity=[0.1, 0.0, 1.0], name="d")
        s.add_support("d", friction, gravity=gravity, slip_velocity=slip)
        m = s.build(1e-12 if friction else 1e-3)
        assert _step_all_orders(m, m.initial_state(), None)

    def support(**kw):
        s = sc.Scene(dim=2)
        s.add_body(DISK, mass=1.0, name="d")
        s.add_support("d", **{"friction": 0.3, **kw})

    raises("friction", lambda: support(friction=above(FRICTION_RANGE[1])), "[0, 1000]")
    raises("gravity", lambda: support(gravity=above(GRAVITY_MAX)))
    raises("slip_velocity", lambda: support(slip_velocity=below(SLIP_RANGE[0])), "m/s")
    raises("slip_velocity", lambda: support(slip_velocity=above(SLIP_RANGE[1])))
    raises("samples", lambda: support(samples=[[2e12, 0.0]]), "1e+12")


def test_time_steps_and_friction_of_the_fits_are_checked():
    s = sc.Scene(dim=3)
    s.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    s.add_body(BOX, mass=1.0, pose=[0, 0, 0.05, *Q3], name="box")
    s.add_contact("floor", "box")
    for dt in DT_RANGE:
        p = sc.ContactParams.for_bodies(s, "floor", "box", dt=dt)
        assert all(math.isfinite(v) for v in vars(p).values())
    for dt in (below(DT_RANGE[0]), above(DT_RANGE[1])):
        raises("dt", lambda dt=dt: sc.ContactParams.for_bodies(s, "floor", "box", dt=dt))
        raises("dt", lambda dt=dt: s.stability_limits(dt=dt), "[1e-12, 1000] s")
        raises("dt", lambda dt=dt: sc.Model(s, dt))
    raises("friction", lambda: sc.ContactParams.for_bodies(s, 0, 1, friction=above(1e3)))
    raises("friction", lambda: s.add_contact("floor", "box", friction=2e3), "[0, 1000]")


def test_fitted_parameters_out_of_range_name_the_pair():
    s = sc.Scene(dim=3)
    s.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    s.add_body(BOX, mass=1e90, inertia=[1e90] * 3, pose=[0, 0, 0.05, *Q3], name="heavy")
    s.add_contact("floor", "heavy")
    raises("heavy", lambda: s.build(1e-3), "cannot fit", "pass params")
    raises("heavy", lambda: sc.ContactParams.for_bodies(s, "floor", "heavy"), "cannot fit")


def test_the_binding_refuses_states_and_models_out_of_range():
    m = _free_box(1.0, 1.0, 1e-3)
    x = m.initial_state()
    x[0] = 2e12
    with pytest.raises(ValueError, match="step: x and u outside the valid range"):
        _core.step(m._cap, x, np.zeros(m.nu))
    x = m.initial_state()
    with pytest.raises(ValueError, match="step: x and u outside the valid range"):
        _core.step(m._cap, x, np.full(m.nu, 2e30))
    # the binding's own check of a model (sc_model_check): dt, and a mass, beyond their ranges
    args = [3, 1e-3, np.zeros(3), np.zeros(1), np.zeros(1), np.ones(1), np.eye(3).reshape(1, 9)]
    args += [np.array([[0, 0, 0, 1, 0, 0, 0.0]]), (np.zeros(1),), np.zeros(1), (None,)]
    args += [np.zeros((0, 2)), np.zeros((0, 7))]
    _core.model_new(*args)  # in range: built
    raises("dt", lambda: _core.model_new(*args[:1], 2e3, *args[2:]), "[1e-12, 1000] s")
    with pytest.raises(ValueError, match="inconsistent model .* out of its valid range"):
        _core.model_new(*args[:5], np.full(1, 1e101), *args[6:])
    # a 2D body with planar support friction: its points (checked once, by the binding)
    args2 = [2, 1e-3, np.zeros(3), np.zeros(1), np.zeros(1), np.ones(1), np.eye(3).reshape(1, 9)]
    args2 += [np.zeros((1, 7)), (np.zeros(1),), np.zeros(1)]
    for pts, ok in ((np.full((1, 2), COORD_MAX), True), (np.full((1, 2), 2e12), False)):
        sup = ((pts, np.ones(1), 0.3, 9.81, 0.01),)
        call = lambda sup=sup: _core.model_new(*args2, sup, np.zeros((0, 2)), np.zeros((0, 7)))  # noqa: E731
        if ok:
            call()
        else:
            raises("support points", call, "[-1e+12, 1e+12] m")


# --------------------------------------------------------------------------------------------
# 7. random combinations of the ranges' ends
# --------------------------------------------------------------------------------------------


def _end(rng, lo, hi, default):
    return [lo, hi, default][rng.integers(3)]


def _random_params(rng, r):
    return sc.ContactParams(
        eps=(r / 4) ** 2,
        eps_c=_end(rng, *CONTACT_LENGTH_RANGE, 0.01 * r),
        stiffness=_end(rng, *STIFFNESS_RANGE, 1e3),
        beta=_end(rng, *CONTACT_LENGTH_RANGE, 0.01 * r),
        damping=_end(rng, *DAMPING_RANGE, 10.0),
        friction=_end(rng, *FRICTION_RANGE, 0.5),
        slip_velocity=_end(rng, *SLIP_RANGE, 0.01),
    )


def test_random_combinations_of_the_ends_in_contact():
    rng = np.random.default_rng(2024)
    for k in range(24):
        dim = 2 + k % 2
        r = [1e-9, 0.05, 1e9][k % 3]
        ca, qa, va, cb, qb, vb = pair(dim, r, gap=[-0.5, -0.05, 0.01][k // 3 % 3])
        base = [0.0, 0.9 * COORD_MAX, -0.9 * COORD_MAX][k // 9 % 3]
        qa, qb = [qa[0] + base, *qa[1:]], [qb[0] + base, *qb[1:]]
        nv = len(va)
        va = list(rng.choice([0.0, SPEED_MAX, -SPEED_MAX], size=nv))
        vb = list(rng.choice([0.0, SPEED_MAX, -SPEED_MAX], size=nv))
        p = _random_params(rng, r)
        for order in range(3):
            res = sc.contact(ca, qa, va, cb, qb, vb, p, order)
            assert finite(res), (k, order, p)


def test_random_combinations_of_the_ends_in_a_step():
    rng = np.random.default_rng(7)
    steps = 0
    for k in range(12):
        dim = 2 + k % 2
        r = [1e-6, 0.05, 1e6][k % 3]
        p = _random_params(rng, r)
        mass, inertia = (_end(rng, *MASS_RANGE, 1.0) for _ in range(2))
        dt = _end(rng, *DT_RANGE, 1e-3)
        g = _end(rng, -GRAVITY_MAX, GRAVITY_MAX, -9.81)
        s = sc.Scene(dim=dim, gravity=[0.0] * (dim - 1) + [g])
        ca, qa, va, cb, qb, vb = pair(dim, r)
        s.add_body(
            ca,
            mass=mass,
            inertia=inertia if dim == 2 else [inertia] * 3,
            pose=qa,
            velocity=va,
            actuated=True,
            name="a",
        )
        s.add_body(cb, kind="kinematic", pose=qb, name="b")
        s.add_contact("a", "b", p)
        m = s.build(dt, integrator=["euler", "implicit"][k // 2 % 2], max_travel=np.inf)
        u = rng.choice([0.0, 1.0, -1.0], size=m.nu) * np.array(m._ulim) * (k % 3 != 0)
        steps += _step_all_orders(m, m.initial_state(), u)
        assert np.all(np.isfinite(m.energy(m.initial_state())))
    assert steps > 0  # some combinations step without diverging
