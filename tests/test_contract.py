"""The public API's exception contract at the extremes: every entry point raises TypeError or
ValueError naming the argument -- for integers too large for a float, masked arrays,
objects of the wrong type, values beyond the ranges the constructors and scenes accept,
tampered pickles and bad command-line options -- and never OverflowError, AttributeError,
a NumPy message or a RuntimeWarning (the test configuration turns warnings into errors)."""

import copyreg
import math
import pickle
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from conftest import raises_naming

import softcontact as sc
from softcontact.__main__ import main
from softcontact.cloud import _restore
from softcontact.contact import _PARAM_NAMES
from softcontact.optimize import (
    ApproachResidual,
    PoseResidual,
    cross_entropy,
    fit_parameters,
    trajectory_residuals,
)

pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")

HUGE = 2**2000  # a Python int beyond the range of a float


def disk_scene():
    s = sc.Scene(dim=2)
    s.add_body(sc.PointCloud.disk(0.05, 0.01), mass=0.1, name="disk")
    s.add_body(
        sc.PointCloud.disk(0.01, 0.005), kind="kinematic", pose=[0.07, 0.0, 0.0], name="pusher"
    )
    s.add_contact("disk", "pusher", sc.ContactParams(friction=0.3))
    s.add_support("disk", friction=0.2)
    return s


def box_scene():
    s = sc.Scene(dim=3)
    s.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    s.add_body(
        sc.PointCloud.box([0.05, 0.05, 0.05], 0.025), mass=1.0, pose=[0, 0, 0.05, 1, 0, 0, 0]
    )
    s.add_contact("floor", "body1")
    return s


raises = raises_naming


DISK = sc.PointCloud.disk(0.05, 0.01)
BOX3 = sc.PointCloud.box([0.05, 0.05, 0.05], 0.025)
TRI = [[0, 0], [1, 0], [0, 1]]
TET_V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
TET_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def _zeros(X):
    return np.zeros(len(X))


def _same_mass_properties(a, b):
    want, got = b.mass_properties(), a.mass_properties()
    assert got.mass == want.mass
    np.testing.assert_array_equal(got.com, want.com)
    np.testing.assert_array_equal(got.inertia, want.inertia)


# --------------------------------------------------------------------------------------------
# 1. real parameters: integers too large for a float, Fractions, Decimals, NumPy scalars
# --------------------------------------------------------------------------------------------


def _real_parameters():
    """(argument name, a function of the value passing it there) for every real parameter."""
    cases = [(f, lambda v, f=f: sc.ContactParams(**{f: v})) for f in _PARAM_NAMES]
    cases += [
        ("eps", lambda v: sc.ssdf(DISK, [[0.0, 0.0]], v)),
        ("eps", lambda v: sc.separation(DISK, [0, 0, 0], DISK, [0.2, 0, 0], v)),
        ("radius", lambda v: sc.PointCloud.disk(v, 0.01)),
        ("spacing", lambda v: sc.PointCloud.disk(0.1, v)),
        ("radius", lambda v: sc.PointCloud.sphere(v, 0.01)),
        ("spacing", lambda v: sc.PointCloud.sphere(0.1, v)),
        ("radius", lambda v: sc.PointCloud.capsule(v, 0.1, 0.05)),
        ("half_length", lambda v: sc.PointCloud.capsule(0.1, v, 0.05)),
        ("spacing", lambda v: sc.PointCloud.capsule(0.1, 0.1, v)),
        ("spacing", lambda v: sc.PointCloud.box([0.1, 0.1], v)),
        ("spacing", lambda v: sc.PointCloud.polygon(TRI, v)),
        ("scale", lambda v: sc.PointCloud.t_shape(v)),
        ("spacing", lambda v: sc.PointCloud.t_shape(spacing=v)),
        ("thickness", lambda v: sc.PointCloud.t_shape(dim=3, thickness=v)),
        ("scale", lambda v: sc.PointCloud.t_shape_vertices(v)),
        ("spacing", lambda v: sc.PointCloud.from_mesh(TET_V, TET_F, v)),
        ("density", lambda v: DISK.mass_properties(v)),
        ("mass", lambda v: sc.Scene(dim=2).add_body(DISK, mass=v)),
        ("density", lambda v: sc.Scene(dim=2).add_body(DISK, density=v)),
        ("inertia", lambda v: sc.Scene(dim=2).add_body(DISK, mass=1.0, inertia=v)),
        ("friction", lambda v: disk_scene().add_contact("disk", "pusher", friction=v)),
        ("friction", lambda v: box_scene().add_contact("floor", "body1", friction=v)),
        ("dt", lambda v: disk_scene().build(v)),
        ("dt", lambda v: disk_scene().stability_limits(dt=v)),
        ("dt", lambda v: sc.ContactParams.for_bodies(box_scene(), 0, 1, dt=v)),
        ("friction", lambda v: sc.ContactParams.for_bodies(box_scene(), 0, 1, friction=v)),
        ("min_sigma", lambda v: cross_entropy(_zeros, [0.0], 1.0, min_sigma=v)),
        ("smoothing", lambda v: cross_entropy(_zeros, [0.0], 1.0, smoothing=v)),
    ]
    for name in ("friction", "gravity", "slip_velocity"):
        kwargs = {"friction": 0.3, name: None}

        def call(v, kwargs=kwargs, name=name):
            s = sc.Scene(dim=2)
            s.add_body(DISK, mass=1.0, name="d")
            s.add_support("d", **{**kwargs, name: v})

        cases.append((name, call))
    return cases


REAL_PARAMETERS = _real_parameters()


@pytest.mark.parametrize(("name", "call"), REAL_PARAMETERS)
def test_integer_too_large_for_a_float(name, call):
    raises(ValueError, name, lambda: call(HUGE), "an integer too large for a float")
    raises(ValueError, name, lambda: call(-HUGE))


@pytest.mark.parametrize("value", [Fraction(HUGE, 3), Decimal("1e400"), Decimal("-1e999")])
def test_values_too_large_for_a_float(value):
    raises(ValueError, "eps", lambda: sc.ContactParams(eps=value), "too large for a float")


def test_long_double_too_large_for_a_float():
    if np.isinf(np.longdouble("1e400")):
        pytest.skip("long double is double here")
    raises(ValueError, "eps", lambda: sc.ContactParams(eps=np.longdouble("1e400")), "too large")


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (np.int64(3), 3.0),
        (np.uint8(2), 2.0),
        (np.float32(0.5), 0.5),
        (np.array(4), 4.0),
        (Fraction(1, 4), 0.25),
        (Decimal("0.125"), 0.125),
        (2**70, float(2**70)),
    ],
)
def test_real_numbers_of_any_kind(value, want):
    assert sc.ContactParams(eps=value).eps == want


@pytest.mark.parametrize("value", [Fraction(1, 10**400), Decimal("1e-400")])
def test_positive_value_too_small_for_a_float(value):
    raises(ValueError, "eps", lambda: sc.ContactParams(eps=value), "too small for a float")


@pytest.mark.parametrize(
    ("value", "exc"),
    [(Decimal("NaN"), ValueError), (Decimal("sNaN"), ValueError), (Decimal("Infinity"), ValueError)]
    + [(v, TypeError) for v in ("1", None, 1j, True, np.bool_(True), [1.0], np.array([1.0]))],
)
def test_not_a_finite_real_number(value, exc):
    raises(exc, "eps", lambda: sc.ContactParams(eps=value))


@pytest.mark.parametrize(
    ("name", "call", "shape", "in_range"),
    [
        ("gravity", lambda a: sc.Scene(dim=2, gravity=a), (2,), False),
        ("points", lambda a: sc.PointCloud(a, [[1.0, 0.0]]), (1, 2), True),
        ("x", lambda a: sc.ssdf(DISK, a, 1e-4), (1, 2), False),
        ("half_extents", lambda a: sc.PointCloud.box(a, 1e30), (2,), True),
    ],
)
def test_arrays_with_integers_too_large_for_a_float(name, call, shape, in_range):
    def filled(value):
        a = np.full(shape, 1, dtype=object)
        a.flat[-1] = value
        return a.tolist()

    raises(ValueError, name, lambda: call(filled(HUGE)), "an integer too large for a float")
    if in_range:
        call(filled(2**70))  # beyond int64, within a float: converted
    else:  # converted, then refused by the valid range (1e12)
        raises(ValueError, name, lambda: call(filled(2**70)), "within", "1.18059e+21")


@pytest.mark.parametrize(
    "value", [2**64, -(2**20000), 10**5000], ids=["2^64", "-2^20000", "10^5000"]
)
def test_integer_arguments_beyond_any_range(value):
    # Python refuses to print integers of more than 4300 digits: the message must not try
    text = raises(ValueError, "order", lambda: sc.ssdf(DISK, [[0.0, 0.0]], 1e-4, order=value))
    assert len(text) < 200
    raises(ValueError, "num_threads", lambda: sc.ssdf(DISK, [[0.0, 0.0]], 1e-4, num_threads=value))


# --------------------------------------------------------------------------------------------
# 2. objects of the wrong type: Model's scene, fit_parameters' build
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scene", [None, 3, "scene", sc.PointCloud.disk(0.1, 0.01)])
def test_model_needs_a_scene(scene):
    raises(TypeError, "scene", lambda: sc.Model(scene, 0.01), "must be a Scene")


def test_model_checks_its_arguments():
    s = disk_scene()
    raises(ValueError, "dt", lambda: sc.Model(s, -1.0))
    raises(ValueError, "dt", lambda: sc.Model(s, HUGE))
    raises(TypeError, "dt", lambda: sc.Model(s, "0.01"))
    raises(ValueError, "integrator", lambda: sc.Model(s, 0.01, "rk4"))
    raises(ValueError, "pairs", lambda: sc.Model(s, 0.01, pairs=[]))
    raises(ValueError, "pairs", lambda: sc.Model(s, 0.01, pairs=[(1, 0, sc.ContactParams())]))
    raises(TypeError, "pairs", lambda: sc.Model(s, 0.01, pairs=[(0, 1, None)]))
    with pytest.raises(ValueError, match="no bodies"):
        sc.Model(sc.Scene(dim=2), 0.01)
    m = sc.Model(s, 0.01, pairs=[(0, 1, sc.ContactParams())])
    assert m.contact_params == (sc.ContactParams(),)
    assert repr(sc.Model(s, 0.01)) == repr(s.build(0.01))


def _sysid_case():
    cloud = sc.PointCloud.disk(0.05, 0.01)

    def build(p):
        s = sc.Scene(dim=2)
        s.add_body(cloud, mass=p[0], inertia=1e-4, name="d")
        s.add_support("d", friction=0.2)
        return s.build(0.01)

    m = build([0.1])
    U = np.zeros((3, 0))
    obs = np.zeros((3, 3))
    return build, m.initial_state(), U, obs


@pytest.mark.parametrize("returned", [None, 0, "model", sc.Scene(dim=2)])
def test_build_must_return_a_model(returned):
    pytest.importorskip("scipy")
    _, x0, U, obs = _sysid_case()
    text = raises(
        TypeError,
        "build",
        lambda: fit_parameters(lambda p: returned, ["d.mass"], [0.1], x0, U, obs),
        "must return a Model",
    )
    assert repr(returned)[:20] in text
    raises(
        TypeError,
        "build",
        lambda: trajectory_residuals(lambda p: returned, ["d.mass"], [0.1], x0, U, obs),
    )


def test_fit_parameters_checks_its_arrays():
    pytest.importorskip("scipy")
    build, x0, U, obs = _sysid_case()
    raises(TypeError, "build", lambda: fit_parameters(None, ["d.mass"], [0.1], x0, U, obs))
    raises(ValueError, "p0", lambda: fit_parameters(build, ["d.mass"], [np.nan], x0, U, obs))
    raises(ValueError, "p0", lambda: fit_parameters(build, ["d.mass"], [[0.1]], x0, U, obs))
    raises(ValueError, "U", lambda: trajectory_residuals(build, ["d.mass"], [0.1], x0, [1.0], obs))
    bad = obs.copy()
    bad[1, 1] = np.inf
    raises(ValueError, "observed", lambda: fit_parameters(build, ["d.mass"], [0.1], x0, U, bad))
    r, J = trajectory_residuals(build, ["d.mass"], [0.1], x0, U, obs)
    assert r.shape == (9,) and J.shape == (9, 1)


# --------------------------------------------------------------------------------------------
# 3. half-spaces with huge normals
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("normal", "want"),
    [
        ([0.0, 0.0, 1e300], [0.0, 0.0, 1.0]),
        ([0.0, 1e308, 1e308], [0.0, math.sqrt(0.5), math.sqrt(0.5)]),
        ([3e300, 4e300], [0.6, 0.8]),
        ([-1.7e308, 0.0], [-1.0, 0.0]),
        ([0.0, 3e-12, 4e-12], [0.0, 0.6, 0.8]),
    ],
)
def test_halfspace_normal_of_any_length(normal, want):
    c = sc.PointCloud.halfspace(np.zeros(len(normal)), normal)
    np.testing.assert_allclose(c.normals[0], want, rtol=1e-15, atol=1e-16)
    assert abs(np.linalg.norm(c.normals[0]) - 1.0) <= 1e-15


@pytest.mark.parametrize("normal", [[0.0, 0.0, 0.0], [0.0, 0.0, 1e-300], [1e-13, 0.0]])
def test_halfspace_zero_normal(normal):
    raises(ValueError, "normal", lambda: sc.PointCloud.halfspace(np.zeros(len(normal)), normal))


# --------------------------------------------------------------------------------------------
# 4. pickling: every protocol, round trips equal
# --------------------------------------------------------------------------------------------


def _same_scene(a, b):
    assert (a.dim, a.gravity.tolist()) == (b.dim, b.gravity.tolist())
    assert len(a._bodies) == len(b._bodies) and a._pairs == b._pairs
    for x, y in zip(a._bodies, b._bodies, strict=True):
        for k in x.__slots__:
            u, v = getattr(x, k), getattr(y, k)
            if k == "cloud":
                assert (u.kind, u.dim) == (v.kind, v.dim)
                for f in ("points", "normals", "weights"):
                    np.testing.assert_array_equal(getattr(u, f), getattr(v, f))
            elif k == "support" and u is not None:
                for p, q in zip(u, v, strict=True):
                    np.testing.assert_array_equal(p, q)
            else:
                np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("make", [disk_scene, box_scene], ids=["2d", "3d"])
def test_scene_and_model_pickle(make, protocol):
    s = make()
    clone = pickle.loads(pickle.dumps(s, protocol))
    _same_scene(clone, s)
    assert repr(clone) == repr(s)
    m = s.build(0.002)
    m2 = pickle.loads(pickle.dumps(m, protocol))
    for k in ("dim", "dt", "integrator", "nq", "nv", "nu", "np", "nx", "body_names", "moving"):
        assert getattr(m2, k) == getattr(m, k)
    assert m2.param_names == m.param_names and m2.contact_params == m.contact_params
    x = m.initial_state()
    u = np.full(m.nu, 0.05)
    want, got = m.step(x, u, order=1, params=True), m2.step(x, u, order=1, params=True)
    for f in ("x_next", "dx_dx", "dx_du", "dx_dp"):
        np.testing.assert_array_equal(getattr(got, f), getattr(want, f))
    got = clone.build(0.002).step(x, u, order=1)
    np.testing.assert_array_equal(got.dx_dx, want.dx_dx)
    # a model keeps the scene as it was built: changing the scene later changes nothing
    s.add_body(sc.PointCloud.disk(0.01, 0.005) if s.dim == 2 else BOX3, kind="static")
    assert pickle.loads(pickle.dumps(m, protocol)).body_names == m.body_names


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_params_and_clouds_pickle(protocol):
    p = sc.ContactParams(eps=2e-5, friction=0.0)
    assert pickle.loads(pickle.dumps(p, protocol)) == p
    for c in (DISK, BOX3.transformed([1, 2, 3, 0, 1, 0, 0]), sc.PointCloud.t_shape(dim=3)):
        c2 = pickle.loads(pickle.dumps(c, protocol))
        assert c2.kind == c.kind
        _same_mass_properties(c2, c)
        np.testing.assert_array_equal(c2.points, c.points)


class _Pickled:
    """Pickles as ``reduce`` says: a stand-in for bytes an attacker edited."""

    def __init__(self, reduce):
        self.reduce = reduce

    def __reduce__(self):
        return self.reduce


@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_tampered_params_pickles_are_refused(protocol):
    good = sc.ContactParams()
    data = pickle.dumps(_Pickled((sc.ContactParams, (-1.0,) + good._astuple()[1:])), protocol)
    raises(ValueError, "eps", lambda: pickle.loads(data))
    old = dict(vars(good), damping=-5.0)  # a pickle from before ContactParams.__reduce__
    data = pickle.dumps(
        _Pickled((copyreg._reconstructor, (sc.ContactParams, object, None), old)), protocol
    )
    raises(ValueError, "damping", lambda: pickle.loads(data))


# --------------------------------------------------------------------------------------------
# 5. masses and inertias out of range
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mass", [1e-300, 1e-101, 1e101, 1e300])
def test_mass_out_of_range(mass):
    s = sc.Scene(dim=3)
    raises(ValueError, "mass", lambda: s.add_body(BOX3, mass=mass, name="cube"), "'cube'", "1e-100")
    assert not s._bodies


def test_inertia_out_of_range():
    s = sc.Scene(dim=3)
    raises(
        ValueError,
        "inertia eigenvalues",
        lambda: s.add_body(BOX3, mass=1.0, inertia=[1e-300] * 3, name="a"),
        "'a'",
    )
    raises(
        ValueError,
        "inertia eigenvalues",
        lambda: s.add_body(BOX3, mass=1.0, inertia=[1.0, 1.0, 1e101], name="b"),
        "'b'",
    )
    # from the geometry, scaled to a tiny mass: the inertia is out of range, not the mass
    raises(
        ValueError,
        "inertia eigenvalues",
        lambda: s.add_body(BOX3, mass=1e-99, name="c"),
        "'c'",
        "from the cloud's geometry",
    )
    s2 = sc.Scene(dim=2)
    raises(
        ValueError, "inertia", lambda: s2.add_body(DISK, mass=1.0, inertia=1e-200, name="d"), "'d'"
    )
    # from the density: the mass is named, with where it came from
    raises(ValueError, "mass", lambda: s2.add_body(DISK, density=1e-120, name="e"), "density")
    assert not s._bodies and not s2._bodies


def test_ill_conditioned_inertia():
    # eigenvalues 1, 3e-17, 3e-17 (in range), but its leading principal minors, as the C core
    # computes them, are not all > 0
    J = np.array(
        [
            [0.21228067147946988, 0.39003534027502007, 0.12284144794101302],
            [0.39003534027502007, 0.7166340939248597, 0.22570357260332533],
            [0.12284144794101302, 0.22570357260332533, 0.0710852345956707],
        ]
    )
    text = raises(
        ValueError,
        "inertia",
        lambda: sc.Scene().add_body(BOX3, mass=1.0, inertia=J, name="rod"),
        "'rod'",
    )
    if np.linalg.eigvalsh(J).min() >= 1e-100:
        assert "ill-conditioned" in text


def test_model_checks_the_bodies_again():
    """A scene whose body was changed behind add_body's back (or unpickled from tampered
    data) is refused before the C core, naming the body."""
    s = box_scene()
    s._bodies[1].mass = 1e-300
    raises(ValueError, "mass", lambda: s.build(0.001), "'body1'")
    raises(ValueError, "mass", lambda: sc.Model(s, 0.001), "'body1'")
    s = box_scene()
    s._bodies[1].inertia = np.diag([1.0, 1.0, 0.0])
    raises(ValueError, "inertia eigenvalues", lambda: sc.Model(s, 0.001), "'body1'")


def test_mass_properties_beyond_the_float_range():
    big = sc.PointCloud.box([1e60, 1e60, 1e60], 1e60)
    raises(ValueError, "density", lambda: big.mass_properties(1e10), "beyond the range of a float")
    tiny = sc.PointCloud.sphere(1e-60, 1e-60)
    assert tiny.mass_properties().mass > 0  # the unit-density range holds
    raises(ValueError, "density", lambda: tiny.mass_properties(1e-30), "beyond the range")


# --------------------------------------------------------------------------------------------
# 6. and 7. lengths the constructors accept
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e-62, 1e62, 1e150, 1e200, 1e300])
def test_mesh_at_extreme_scales(scale):
    want = "within [-1e+60, 1e+60]" if scale > 1 else "span at least 1e-60"
    raises(
        ValueError, "vertices", lambda: sc.PointCloud.from_mesh(TET_V * scale, TET_F, scale), want
    )


@pytest.mark.parametrize("scale", [1e-59, 1e59])
def test_mesh_at_the_ends_of_the_range(scale):
    c = sc.PointCloud.from_mesh(TET_V * scale, TET_F, 0.5 * scale)
    assert np.all(np.isfinite(c.weights)) and np.all(c.weights > 0)
    assert c.mass_properties().mass == pytest.approx(scale**3 / 6, rel=1e-12)


@pytest.mark.parametrize("scale", [1e-300, 1e-61, 1e59, 1e300])
def test_t_shape_scale_out_of_range(scale):
    raises(ValueError, "scale", lambda: sc.PointCloud.t_shape(scale=scale), "[1e-60, 1e+58]")
    raises(ValueError, "scale", lambda: sc.PointCloud.t_shape_vertices(scale))


def test_t_shape_at_the_ends_of_the_range():
    for scale in (1e-60, 1e58):
        assert sc.PointCloud.t_shape(scale=scale).area == pytest.approx(480 * scale, rel=1e-12)
        c = sc.PointCloud.t_shape(scale=scale, dim=3, spacing=20 * scale)
        assert np.all(np.isfinite(c.weights))
    raises(ValueError, "thickness", lambda: sc.PointCloud.t_shape(dim=3, thickness=1e70))


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("radius", lambda v: sc.PointCloud.disk(v, v)),
        ("radius", lambda v: sc.PointCloud.sphere(v, v)),
        ("radius", lambda v: sc.PointCloud.capsule(v, 0.0, v)),
        ("half_length", lambda v: sc.PointCloud.capsule(1e-3, v, 1e-3)),
        ("half_extents", lambda v: sc.PointCloud.box([v, 1e-3], 1e-3)),
        ("vertices", lambda v: sc.PointCloud.polygon(np.array(TRI) * v, v)),
    ],
)
def test_lengths_out_of_range(name, call):
    for v in (1e-300, 1e-61, 1e61, 1e300):
        raises(ValueError, name, lambda v=v: call(v), "1e+60" if v > 1 else "1e-60")


def test_transformed_beyond_the_float_range():
    c = sc.PointCloud([[1e308, 0.0]], [[1.0, 0.0]])
    raises(ValueError, "pose", lambda: c.transformed([1e308, 0.0, 0.0]))


# --------------------------------------------------------------------------------------------
# 8. the command line
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["ssdf", "--grid", "0"],
        ["ssdf", "--grid", "1"],
        ["ssdf", "--grid", "100000"],
        ["ssdf", "--grid", "x"],
        ["demo", "--seed", "-1"],
        ["demo", "--time-limit", "inf"],
        ["demo", "--time-limit", "nan"],
        ["demo", "--time-limit", "0"],
        ["mpc", "--seeds", "0"],
        ["mpc", "--first-seed", "-2"],
        ["mpc", "--jobs", "0"],
        ["mpc", "--jobs", "65"],
        ["mpc", "--iterations", "0"],
        ["mpc", "--time-limit", "-1"],
        ["compare", "--seeds", "-1"],
        ["compare", "--horizon", "0"],
        ["compare", "--block", "0"],
        ["compare", "--cem-samples", "1"],
        ["compare", "--cem-iterations", "0"],
        ["compare", "--lbfgs-iterations", "0"],
        ["compare", "--newton-iterations", "0"],
        ["sysid", "--seed", "-1"],
        ["sysid", "--noise", "-1"],
        ["sysid", "--noise", "inf"],
        ["sysid", "--max-nfev", "0"],
        ["bench", "--repeats", "0"],
        ["bench", "--repeats", "1" + "0" * 5000],
        # checks across two options name the one at fault
        ["compare", "--horizon", "50", "--block", "20", "@--block"],
        ["compare", "--cem-elites", "9", "--cem-samples", "8", "@--cem-elites"],
    ],
    ids=lambda a: " ".join(x[:12] for x in a),
)
def test_cli_rejects_bad_numbers(args, capsys):
    option = args[-1][1:] if args[-1].startswith("@") else args[-2]
    args = [a for a in args if not a.startswith("@")]
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}:" in err, err
    assert "usage: python -m softcontact " + args[0] in err and "Traceback" not in err


def test_cli_error_exits_2_without_traceback(tmp_path):
    import subprocess
    import sys

    from conftest import subprocess_env

    out = subprocess.run(
        [sys.executable, "-m", "softcontact", "ssdf", "--grid", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "argument --grid: must be an integer in 2..2000, got 0" in out.stderr


# --------------------------------------------------------------------------------------------
# 9. Model.retract names dx
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [disk_scene, box_scene], ids=["2d", "3d"])
def test_retract_names_dx(make):
    m = make().build(0.002)
    x = m.initial_state()
    n = 2 * m.nv
    for bad in (np.full(n, np.nan), np.r_[np.inf, np.zeros(n - 1)]):
        raises(ValueError, "dx", lambda bad=bad: m.retract(x, bad), "finite")
    raises(ValueError, "dx", lambda: m.retract(x, np.zeros(n + 1)))
    np.testing.assert_array_equal(m.retract(x, np.zeros(n)), x)


# --------------------------------------------------------------------------------------------
# 10. masked arrays
# --------------------------------------------------------------------------------------------


def _masked(a, where=0):
    mask = np.zeros(np.shape(a), dtype=bool)
    mask.flat[where] = True
    return np.ma.masked_array(np.asarray(a), mask=mask)


def _masked_cases():
    m2 = disk_scene().build(0.002)
    m3 = box_scene().build(0.002)
    x2, x3 = m2.initial_state(), m3.initial_state()
    u2 = np.zeros(m2.nu)
    return [
        ("points", lambda: sc.PointCloud(_masked([[0.0, 0.0]]), [[1.0, 0.0]])),
        ("normals", lambda: sc.PointCloud([[0.0, 0.0]], _masked([[1.0, 0.0]]))),
        ("weights", lambda: sc.PointCloud([[0.0, 0.0]], [[1.0, 0.0]], _masked([1.0]))),
        ("half_extents", lambda: sc.PointCloud.box(_masked([0.1, 0.1]), 0.05)),
        ("vertices", lambda: sc.PointCloud.polygon(_masked(TRI), 0.1)),
        ("vertices", lambda: sc.PointCloud.from_mesh(_masked(TET_V), TET_F, 0.5)),
        ("faces", lambda: sc.PointCloud.from_mesh(TET_V, _masked(TET_F), 0.5)),
        ("point", lambda: sc.PointCloud.halfspace(_masked([0.0, 0.0]), [0.0, 1.0])),
        ("normal", lambda: sc.PointCloud.halfspace([0.0, 0.0], _masked([0.0, 1.0]))),
        ("pose", lambda: DISK.transformed(_masked([0.0, 0.0, 0.0]))),
        ("x", lambda: sc.ssdf(DISK, _masked([[0.0, 0.0]]), 1e-4)),
        ("eps", lambda: sc.ssdf(DISK, [[0.0, 0.0]], np.ma.masked)),
        ("eps", lambda: sc.ssdf(DISK, [[0.0, 0.0]], np.ma.masked_array(1e-4, mask=True))),
        ("order", lambda: sc.ssdf(DISK, [[0.0, 0.0]], 1e-4, order=np.ma.masked_array(1))),
        ("pose_a", lambda: sc.separation(DISK, _masked([0, 0, 0.0]), DISK, [0.2, 0, 0], 1e-4)),
        (
            "vel_b",
            lambda: sc.contact(DISK, [0, 0, 0], [0, 0, 0], DISK, [0.2, 0, 0], _masked([0, 0, 0.0])),
        ),
        ("pose", lambda: sc.retract(_masked([0.0, 0.0, 0.0]), [0.0, 0.0, 0.0])),
        ("dq", lambda: sc.retract([0.0, 0.0, 0.0], _masked([0.0, 0.0, 0.0]))),
        ("pose1", lambda: sc.pose_difference(_masked([0.0, 0.0, 0.0]), [0.0, 0.0, 0.0])),
        ("gravity", lambda: sc.Scene(dim=2, gravity=_masked([0.0, 0.0]))),
        ("pose", lambda: sc.Scene(dim=2).add_body(DISK, mass=1.0, pose=_masked([0, 0, 0.0]))),
        (
            "velocity",
            lambda: sc.Scene(dim=2).add_body(DISK, mass=1.0, velocity=_masked([0, 0, 0.0])),
        ),
        ("inertia", lambda: sc.Scene().add_body(BOX3, mass=1.0, inertia=_masked([1.0, 1.0, 1.0]))),
        ("samples", lambda: _support_masked()),
        ("x", lambda: m2.step(_masked(x2), u2)),
        ("u", lambda: m2.step(x2, _masked(u2 + 1.0))),
        ("x", lambda: m3.step(_masked(x3))),
        ("x0", lambda: m2.rollout(_masked(x2), np.zeros((2, m2.nu)))),
        ("U", lambda: m2.rollout(x2, _masked(np.zeros((2, m2.nu))))),
        ("dx", lambda: m2.retract(x2, _masked(np.zeros(2 * m2.nv)))),
        ("x1", lambda: m2.difference(_masked(x2), x2)),
        ("x", lambda: m2.energy(_masked(x2))),
        ("x_next", lambda: m2.inverse_dynamics(x2, _masked(x2))),
        (
            "x0",
            lambda: sc.optimize.TrajectoryProblem(
                m2, _masked(x2), 2, PoseResidual(m2, "disk", [0, 0, 0])
            ),
        ),
        ("x0", lambda: cross_entropy(_zeros, _masked([0.0]), 1.0)),
        (
            "offset",
            lambda: ApproachResidual(m2, "pusher", "disk", DISK, offset=np.ma.masked_array(0.0)),
        ),
    ]


def _support_masked():
    s = sc.Scene(dim=2)
    s.add_body(DISK, mass=1.0, name="d")
    s.add_support("d", 0.1, samples=_masked([[0.0, 0.0], [0.01, 0.0]]))


@pytest.mark.parametrize(("name", "call"), _masked_cases())
def test_masked_arrays_are_refused(name, call):
    raises(TypeError, name, call, "masked arrays are not supported", ".filled(")


def test_masked_inputs_are_left_alone():
    a = _masked([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], where=2)
    before = (a.data.copy(), a.mask.copy())
    with pytest.raises(TypeError):
        sc.PointCloud.polygon(a, 0.1)
    np.testing.assert_array_equal(a.data, before[0])
    np.testing.assert_array_equal(a.mask, before[1])
    assert sc.PointCloud.polygon(a.filled(0.5), 0.1).kind == "polygon"


# --------------------------------------------------------------------------------------------
# 11. tampered pickles
# --------------------------------------------------------------------------------------------


def _tampered(cloud, edit, old_format=False):
    state = cloud.__getstate__()
    edit(state)
    if old_format:  # what pickles made before PointCloud.__reduce__ hold
        data = pickle.dumps(
            _Pickled((copyreg._reconstructor, (sc.PointCloud, object, None), state)), 0
        )
    else:
        data = pickle.dumps(_Pickled((_restore, (state,))))
    return lambda: pickle.loads(data)


def _set(key, value):
    return lambda s: s.__setitem__(key, value)


def _geo(key, value):
    return lambda s: s["geometry"]["params"].__setitem__(key, value)


POLY = sc.PointCloud.polygon([[0, 0], [2, 0], [2, 1], [0, 1]], 0.25)


@pytest.mark.parametrize("old_format", [False, True], ids=["reduce", "setstate"])
@pytest.mark.parametrize(
    ("cloud", "edit", "name"),
    [
        (DISK, lambda s: s.__setitem__("weights", -s["weights"]), "weights"),
        (DISK, lambda s: s["weights"].__setitem__(3, 0.0), "weights"),
        (DISK, lambda s: s["normals"].__setitem__((0, 0), 2.0), "normals"),
        (DISK, lambda s: s.__setitem__("weights", s["weights"][:-1]), "weights"),
        (DISK, lambda s: s.__setitem__("normals", s["normals"][:, :1]), "normals"),
        (DISK, lambda s: s["points"].__setitem__((2, 1), np.nan), "points"),
        (DISK, lambda s: s["weights"].__setitem__(1, np.inf), "weights"),
        (DISK, _set("kind", "teapot"), "kind"),
        (DISK, _set("kind", "box"), "geometry"),
        (DISK, _geo("radius", -0.05), "radius"),
        (DISK, _geo("radius", np.nan), "radius"),
        (DISK, _geo("radius", HUGE), "geometry"),
        (BOX3, _geo("half_extents", np.array([-0.05, 0.05, 0.05])), "half_extents"),
        (BOX3, lambda s: s["geometry"].__setitem__("rot", -np.eye(3)), "rot"),
        (BOX3, lambda s: s["geometry"].__setitem__("trans", [np.nan, 0, 0]), "trans"),
        (BOX3, lambda s: s["geometry"].__setitem__("dim", 2), "geometry"),
        (BOX3, lambda s: s["geometry"].__setitem__("shape", "teapot"), "geometry"),
        (POLY, _geo("vertices", np.array([[0, 0], [0, 1], [2, 1], [2, 0.0]])), "vertices"),
        (POLY, _geo("vertices", np.array([[0, 0], [2, 1], [2, 0], [0, 1.0]])), "vertices"),
        (sc.PointCloud.t_shape(dim=3), _geo("half_height", -0.01), "half_height"),
        (sc.PointCloud.from_mesh(TET_V, TET_F, 0.5), _geo("faces", TET_F[:, ::-1].copy()), "faces"),
        (sc.PointCloud.from_mesh(TET_V, TET_F, 0.5), _geo("faces", TET_F[:3]), "faces"),
        (
            sc.PointCloud.halfspace([0, 0], [0, 1]),
            lambda s: s.update(
                points=np.zeros((2, 2)), normals=np.tile([0.0, 1.0], (2, 1)), weights=np.ones(2)
            ),
            "geometry",
        ),
        (DISK, lambda s: s.pop("normals"), "state"),
    ],
)
def test_tampered_cloud_pickles_are_refused(cloud, edit, name, old_format):
    raises(ValueError, name, _tampered(cloud, edit, old_format))


def test_tampered_pickle_with_a_wrong_type():
    # as PointCloud(points="not an array") does
    raises(TypeError, "points", _tampered(DISK, _set("points", "not an array")))


def test_untampered_old_format_pickles_still_load():
    c = sc.PointCloud.t_shape(dim=3)
    _same_mass_properties(_tampered(c, lambda s: None, old_format=True)(), c)
    state = c.__getstate__()
    del state["geometry"]  # pickles from before solids were recorded
    assert _tampered(c, lambda s: s.pop("geometry"))()._geometry is None


# --------------------------------------------------------------------------------------------
# 12. overflow inside the checks themselves (found by tests/test_fuzz.py)
# --------------------------------------------------------------------------------------------


def test_a_huge_quaternion_component_is_a_value_error_not_a_warning():
    """The vectorized unit-quaternion check (first_non_unit) squared a component beyond 1e154
    with an overflow warning before its ValueError."""
    raises(ValueError, "pose", lambda: sc.retract([0, 0, 0, 1e300, 0, 0, 0], np.zeros(6)))
    q = [[0, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 1e300, 0, 0]]
    raises(ValueError, "pose0", lambda: sc.pose_difference(q[0], q))


def test_a_subnormal_mesh_spacing_is_a_value_error_not_a_warning():
    """from_mesh divided the longest edge by spacing=5e-324 with an overflow warning before
    refusing the infinite sample count."""
    raises(ValueError, "spacing", lambda: sc.PointCloud.from_mesh(TET_V, TET_F, 5e-324))
