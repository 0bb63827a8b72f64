"""Fuzz suite: every public entry point and the compiled binding, driven by hypothesis.

Properties (the issue "never silently wrong"):

- valid input -- shapes, poses, velocities, masses and parameters of physically plausible
  magnitudes (lengths 1e-4..10 m, speeds up to ~10 m/s, masses 1e-3..1e3 kg, eps from
  (spacing/10)^2 to 100 spacing^2) -- never gives a NaN or infinite output; a step may
  instead raise DivergenceError, the documented report of a diverging state;
- invalid input (wrong types, shapes, dtypes, NaN/inf, huge or tiny values) raises
  TypeError or ValueError (DivergenceError for steps) and nothing else, and never crashes;
- inputs are never modified, whatever their layout (non-contiguous, Fortran order,
  read-only, byte-swapped, float32, lists), and a layout gives the bits of the same values
  as a C-contiguous float64 array;
- results are bitwise the same for num_threads 1 and 2.

Hypothesis runs derandomized (the examples depend only on the test's code), with explicit
example counts sized so that the file runs in about two minutes on a 2-core machine.
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softcontact as sc
from softcontact import _core
from softcontact.contact import _PARAM_NAMES
from softcontact.optimize import ApproachResidual, ControlResidual, PoseResidual, TrajectoryProblem
from softcontact.spatial import quat_to_matrix
from softcontact.tasks import push_t

pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")

EPS = np.finfo(float).eps
BAD = (TypeError, ValueError)  # what invalid input may raise
BAD_STEP = (TypeError, ValueError, sc.DivergenceError)


# SOFTCONTACT_FUZZ_SCALE=20 runs 20 times the examples (a deeper search, off CI)
SCALE = float(os.environ.get("SOFTCONTACT_FUZZ_SCALE", "1"))


def fuzz(n):
    """Hypothesis settings of a fuzz test: ``n`` examples (times SCALE), reproducible, no
    deadline."""
    return settings(
        max_examples=max(1, int(n * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _arrays_of(obj):
    """The ndarrays of a (nested) result."""
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [a for o in obj for a in _arrays_of(o)]
    if isinstance(obj, (float, np.floating)):
        return [np.asarray(obj)]
    return []


def assert_finite(result, what):
    for i, a in enumerate(_arrays_of(result)):
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            bad = np.argwhere(~np.isfinite(a))[:3].tolist()
            raise AssertionError(f"{what}: output {i} not finite at {bad}")


def assert_same_bits(a, b, what):
    la, lb = _arrays_of(a), _arrays_of(b)
    assert len(la) == len(lb), what
    for i, (u, v) in enumerate(zip(la, lb, strict=True)):
        assert u.shape == v.shape and u.dtype == v.dtype, (what, i, u.shape, v.shape)
        assert np.ascontiguousarray(u).tobytes() == np.ascontiguousarray(v).tobytes(), (
            f"{what}: output {i} differs"
        )


def snapshot(*args):
    """Copies of every array (and nested list) argument, to check they are not modified."""
    out = []
    for a in args:
        if isinstance(a, np.ma.core.MaskedConstant):
            continue  # numpy.ma.masked: a singleton, not an array of the caller's
        if isinstance(a, np.ndarray):
            out.append((a, np.array(np.asarray(a), copy=True), a.flags.writeable))
        elif isinstance(a, list):
            out.append((a, repr(a), None))
    return out


def assert_unchanged(snap):
    for a, copy, writeable in snap:
        if isinstance(a, np.ndarray):
            assert a.flags.writeable == writeable
            assert np.asarray(a).tobytes() == copy.tobytes(), "an input array was modified"
        else:
            assert repr(a) == copy, "an input list was modified"


def only(allowed, fn, *args, **kw):
    """``fn(*args, **kw)``'s result, or None when it raised one of ``allowed``; anything
    else raised fails the test (with the exception chained)."""
    try:
        return fn(*args, **kw)
    except allowed:
        return None
    except Exception as e:  # noqa: BLE001 - the property under test
        raise AssertionError(f"{type(e).__name__} (not one of {allowed}): {e}") from e


def log_uniform(lo, hi):
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)


LAYOUTS = ("c", "fortran", "strided", "reversed", "readonly", "byteswapped", "list")
# float32 rounds the values (a pose's quaternion is then no longer unit within 1e-9): for
# query points only, compared with the float64 of the rounded values
QUERY_LAYOUTS = LAYOUTS + ("float32",)


def with_layout(a, layout):
    """``a`` (float64) in another memory layout with the same values (float32: rounded)."""
    a = np.asarray(a, dtype=float)
    if layout == "fortran":
        return np.asfortranarray(a)
    if layout == "float32":
        return a.astype(np.float32)
    if layout == "strided":  # a view of every other entry
        return a.copy() if a.ndim == 0 else np.stack([a, a], axis=-1)[..., 0]
    if layout == "reversed":
        if a.ndim == 0:
            return a.copy()
        return np.ascontiguousarray(a[::-1])[::-1]
    if layout == "readonly":
        b = a.copy()
        b.flags.writeable = False
        return b
    if layout == "byteswapped":
        return a.astype(a.dtype.newbyteorder())
    if layout == "list" and a.size:  # (an empty list has lost the array's shape)
        return a.tolist()
    return np.ascontiguousarray(a)


# --------------------------------------------------------------------------------------------
# strategies: valid clouds, poses, parameters
# --------------------------------------------------------------------------------------------


def _rotation2(t):
    return np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])


@st.composite
def quaternions(draw):
    q = np.array(draw(st.lists(st.floats(-1, 1), min_size=4, max_size=4)))
    n = np.linalg.norm(q)
    if n < 1e-3:
        q, n = np.array([1.0, 0.0, 0.0, 0.0]), 1.0
    return q / n


@st.composite
def star_polygon(draw, size):
    """A simple polygon: vertices at increasing angles, radii in [0.3, 1] size."""
    k = draw(st.integers(3, 9))
    gaps = np.array(draw(st.lists(st.floats(0.2, 1.0), min_size=k, max_size=k)))
    ang = np.cumsum(gaps) / gaps.sum() * 2 * np.pi
    r = np.array(draw(st.lists(st.floats(0.3, 1.0), min_size=k, max_size=k))) * size
    v = np.stack([r * np.cos(ang), r * np.sin(ang)], axis=1)
    if draw(st.booleans()):
        v = v[::-1]  # clockwise
    return v


def octahedron(radii):
    """A closed, consistently oriented octahedron with vertex i at radii[i] along an axis."""
    v = np.array(
        [
            [radii[0], 0, 0],
            [-radii[1], 0, 0],
            [0, radii[2], 0],
            [0, -radii[3], 0],
            [0, 0, radii[4]],
            [0, 0, -radii[5]],
        ]
    )
    f = []
    for xi in (0, 1):
        for yi in (2, 3):
            for zi in (4, 5):
                tri = [xi, yi, zi]
                n = np.cross(v[yi] - v[xi], v[zi] - v[xi])
                if n @ (v[xi] + v[yi] + v[zi]) < 0:
                    tri = [xi, zi, yi]
                f.append(tri)
    return v, np.array(f)


@st.composite
def clouds(draw, dim=None, size=None, allow_halfspace=True, max_cells=8):
    """(cloud, spacing): a valid cloud of a plausible size (1e-4..10 m) from any
    constructor or raw arrays, with at most a few hundred samples."""
    dim = draw(st.sampled_from([2, 3])) if dim is None else dim
    L = draw(log_uniform(1e-4, 10.0)) if size is None else size
    cells = draw(st.integers(2, max_cells))
    sp = L / cells
    kinds = ["box", "round", "capsule", "t_shape", "raw"]
    kinds += ["polygon"] if dim == 2 else ["mesh"]
    if allow_halfspace:
        kinds.append("halfspace")
    kind = draw(st.sampled_from(kinds))
    if kind == "box":
        h = np.array(draw(st.lists(st.floats(0.2, 1.0), min_size=dim, max_size=dim))) * L
        return sc.PointCloud.box(h, sp), sp
    if kind == "round":
        if dim == 2:
            return sc.PointCloud.disk(L, sp), sp
        return sc.PointCloud.sphere(L, sp * 1.5), sp * 1.5
    if kind == "capsule":
        hl = draw(st.sampled_from([0.0, 0.5, 1.0])) * L
        return sc.PointCloud.capsule(L / 2, hl, sp, dim=dim), sp
    if kind == "t_shape":
        scale = L / 170
        if dim == 2:
            return sc.PointCloud.t_shape(scale, spacing=sp), sp
        return sc.PointCloud.t_shape(scale, spacing=2.5 * sp, dim=3), 2.5 * sp
    if kind == "polygon":
        return sc.PointCloud.polygon(draw(star_polygon(L)), sp), sp
    if kind == "mesh":
        radii = np.array(draw(st.lists(st.floats(0.3, 1.0), min_size=6, max_size=6))) * L
        v, f = octahedron(radii)
        return sc.PointCloud.from_mesh(v, f, 1.5 * sp), 1.5 * sp
    if kind == "halfspace":
        p = np.array(draw(st.lists(st.floats(-1, 1), min_size=dim, max_size=dim))) * L
        n = np.array(draw(st.lists(st.floats(-1, 1), min_size=dim, max_size=dim)))
        if np.linalg.norm(n) < 1e-3:
            n = np.eye(dim)[-1]
        return sc.PointCloud.halfspace(p, n), sp
    n = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    p = rng.uniform(-L, L, size=(n, dim))
    nrm = rng.normal(size=(n, dim))
    nrm[np.linalg.norm(nrm, axis=1) < 1e-6] = 1.0
    w = rng.uniform(0.5, 2.0, size=n) * sp ** (dim - 1)
    return sc.PointCloud(p, nrm, w, normalize=True), L / max(1.0, n ** (1.0 / (dim - 1)))


@st.composite
def poses(draw, dim, scale):
    t = np.array(draw(st.lists(st.floats(-1, 1), min_size=dim, max_size=dim))) * scale
    if dim == 2:
        return np.r_[t, draw(st.floats(-20, 20))]
    return np.r_[t, draw(quaternions())]


@st.composite
def velocities(draw, dim, radius):
    """A velocity of up to ~10 m/s, its spin a rim speed of up to ~10 m/s at ``radius``."""
    speed = draw(st.sampled_from([0.0, 1e-3, 0.1, 1.0, 10.0])) * draw(st.floats(0, 1))
    spin = draw(st.sampled_from([0.0, 1e-3, 0.1, 1.0, 10.0])) * draw(st.floats(0, 1))
    d = np.array(draw(st.lists(st.floats(-1, 1), min_size=dim, max_size=dim)))
    na = 1 if dim == 2 else 3
    w = np.array(draw(st.lists(st.floats(-1, 1), min_size=na, max_size=na)))
    return np.r_[d * speed, w * spin / max(radius, 1e-4)]


def eps_for(draw, spacing):
    return spacing**2 * draw(log_uniform(1e-2, 1e2))


@st.composite
def contact_params(draw, size, spacing):
    return sc.ContactParams(
        eps=eps_for(draw, spacing),
        eps_c=size * draw(log_uniform(1e-3, 1e-1)),
        stiffness=draw(log_uniform(1.0, 1e6)),
        beta=size * draw(log_uniform(1e-3, 1e-1)),
        damping=draw(st.sampled_from([0.0, 1.0])) * draw(log_uniform(1e-3, 1e3)),
        friction=draw(st.sampled_from([0.0, 0.3, 1.0, 1.5])),
        slip_velocity=draw(log_uniform(1e-4, 1.0)),
    )


def radius_of(cloud):
    return float(np.sqrt(np.max(np.sum(cloud.points**2, axis=1)))) if len(cloud) > 1 else 0.0


# --------------------------------------------------------------------------------------------
# strategies: garbage
# --------------------------------------------------------------------------------------------

NAN, INF = float("nan"), float("inf")
SPECIAL_FLOATS = [NAN, INF, -INF, 0.0, -0.0, -1.0, 5e-324, 1e-320, 1e-300, 1e300, 1.7e308, -1e308]
_GARBAGE_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**31, 2**63, 2**64, 2**2000, -(2**2000)]),
    st.sampled_from(SPECIAL_FLOATS),
    st.text(max_size=3),
    st.binary(max_size=3),
    st.complex_numbers(max_magnitude=10, allow_nan=False),
    st.sampled_from(
        [
            Fraction(10**400),
            Fraction(1, 3),
            Decimal("1e400"),
            Decimal("NaN"),
            Decimal("sNaN"),
            np.float32(1.5),
            np.int64(2**62),
            np.uint64(2**64 - 1),
            np.bool_(True),
            object(),
            Ellipsis,
            slice(1),
            {},
            set(),
        ]
    ),
)
# numpy.ma.masked itself is refused (TypeError); inside a list it is not, see
# test_masked_element_in_a_list_is_refused
GARBAGE_SCALARS = st.one_of(_GARBAGE_SCALARS, st.just(np.ma.masked))
GARBAGE_DTYPES = [
    np.float64,
    np.float32,
    np.float16,
    np.int8,
    np.int64,
    np.uint64,
    np.bool_,
    np.complex128,
    object,
    "U3",
    "S3",
    "datetime64[s]",
    ">f8",
]


@st.composite
def garbage_arrays(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), max_size=3)))
    dtype = draw(st.sampled_from(GARBAGE_DTYPES))
    fills = [0.0, 1.0, 0.3, NAN, INF, -INF, 1e-320, 7.0, 1e308]
    fill = draw(st.sampled_from(fills))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            a = np.full(shape, fill).astype(dtype)
        except (TypeError, ValueError, OverflowError):
            a = np.zeros(shape, dtype=dtype)
    how = draw(st.sampled_from(["plain", "readonly", "strided", "masked"]))
    if how == "readonly":
        a.flags.writeable = False
    elif how == "strided" and a.ndim:
        a = np.repeat(a, 2, axis=-1)[..., ::2]
    elif how == "masked":
        a = np.ma.masked_array(a, mask=np.zeros(a.shape, bool))
    return a


def garbage():
    """Garbage of every kind."""
    floats = st.floats(allow_nan=True, allow_infinity=True)
    lists = st.one_of(
        st.lists(floats, max_size=8),
        st.lists(st.lists(st.floats(-1, 1), max_size=4), max_size=4),  # ragged
        st.lists(GARBAGE_SCALARS, max_size=4),
    )
    return st.one_of(GARBAGE_SCALARS, garbage_arrays(), lists)


GARBAGE = garbage()


@st.composite
def mutated(draw, value):
    """``value`` (an array argument) spoiled: a bad entry, dtype, shape or wrapper -- or
    just relaid out (still valid)."""
    a = np.array(value, dtype=float)
    how = draw(
        st.sampled_from(
            ["entry", "dtype", "drop", "add", "transpose", "flat", "nest", "layout", "empty"]
        )
    )
    if how == "entry" and a.size:
        bad = draw(st.sampled_from(SPECIAL_FLOATS))
        a.flat[draw(st.integers(0, a.size - 1))] = bad
        return a
    if how == "dtype":
        dt = draw(st.sampled_from([np.complex128, object, "U8", np.float32, np.int8]))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return a.astype(dt)
    if how == "drop" and a.ndim and a.shape[-1] > 0:
        return a[..., :-1]
    if how == "add":
        return np.concatenate([a, np.zeros(a.shape[:-1] + (1,))], axis=-1) if a.ndim else a[None]
    if how == "transpose":
        return a.T
    if how == "flat":
        return a.reshape(-1)
    if how == "nest":
        return a[None]
    if how == "layout":
        return with_layout(a, draw(st.sampled_from(LAYOUTS)))
    return np.zeros((0,) + a.shape[1:])


def spoil(draw, value):
    """A garbage replacement for an argument whose valid value is ``value``."""
    if isinstance(value, np.ndarray) and draw(st.booleans()):
        return draw(mutated(value))
    return draw(GARBAGE)


# --------------------------------------------------------------------------------------------
# 1. SSDF, separation, contact: valid input
# --------------------------------------------------------------------------------------------


@fuzz(1200)
@given(data=st.data())
def test_ssdf_valid_input_is_finite_reproducible_and_untouched(data):
    cloud, sp = data.draw(clouds())
    D, L = cloud.dim, max(cloud.size, sp)
    reach = L * data.draw(st.sampled_from([0.1, 1.0, 3.0, 30.0]))
    shape = data.draw(st.sampled_from([(D,), (1, D), (7, D), (65, D), (3, 5, D), (0, D)]))
    seed = data.draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).uniform(-reach, reach, size=shape)
    eps = eps_for(data.draw, sp)
    order = data.draw(st.integers(0, 3))
    dense = data.draw(st.booleans())
    layout = data.draw(st.sampled_from(QUERY_LAYOUTS))
    xin = with_layout(x, layout)
    snap = snapshot(xin)
    r1 = sc.ssdf(cloud, xin, eps, order, num_threads=1, dense=dense)
    assert_unchanged(snap)
    x = np.asarray(xin, dtype=float).reshape(shape)  # (float32: the rounded values)
    r2 = sc.ssdf(cloud, x, eps, order, num_threads=2, dense=dense)
    assert_finite(r1, f"ssdf {cloud!r} eps={eps!r} order={order}")
    assert_same_bits(r1, r2, "ssdf: layout or num_threads 1 vs 2")
    assert r1.phi.shape == shape[:-1]


@fuzz(600)
@given(data=st.data())
def test_ssdf_nonfinite_query_is_nan_in_its_row_only(data):
    cloud, sp = data.draw(clouds())
    D = cloud.dim
    x = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).uniform(-1, 1, (6, D))
    x *= cloud.size + sp
    row = data.draw(st.integers(0, 5))
    x[row, data.draw(st.integers(0, D - 1))] = data.draw(st.sampled_from([NAN, INF, -INF]))
    order = data.draw(st.integers(0, 3))
    r = only(BAD, sc.ssdf, cloud, x, sp * sp, order)
    assert r is not None
    keep = np.arange(6) != row
    alone = sc.ssdf(cloud, x[keep], sp * sp, order)
    for k in range(order + 1):
        assert np.all(np.isnan(r[k][row]))
        assert_same_bits(r[k][keep], alone[k], "rows next to a NaN query")


@fuzz(800)
@given(data=st.data())
def test_separation_valid_input_is_finite_reproducible_and_untouched(data):
    dim = data.draw(st.sampled_from([2, 3]))
    L = data.draw(log_uniform(1e-4, 10.0))
    a, spa = data.draw(clouds(dim, L, allow_halfspace=True))
    b, spb = data.draw(clouds(dim, L * data.draw(st.floats(0.3, 3)), allow_halfspace=len(a) > 1))
    pa, pb = data.draw(poses(dim, L)), data.draw(poses(dim, 2 * L))
    eps = eps_for(data.draw, max(spa, spb))
    order = data.draw(st.integers(0, 2))
    la, lb = data.draw(st.sampled_from(LAYOUTS)), data.draw(st.sampled_from(LAYOUTS))
    qa, qb = with_layout(pa, la), with_layout(pb, lb)
    snap = snapshot(qa, qb)
    r1 = sc.separation(a, qa, b, qb, eps, order, num_threads=1)
    assert_unchanged(snap)
    r2 = sc.separation(a, pa, b, pb, eps, order, num_threads=2)
    assert_finite(r1, f"separation eps={eps!r} order={order} {pa.tolist()} {pb.tolist()}")
    assert_same_bits(r1, r2, "separation: layout or num_threads 1 vs 2")


@fuzz(1200)
@given(data=st.data())
def test_contact_valid_input_is_finite_reproducible_and_untouched(data):
    dim = data.draw(st.sampled_from([2, 3]))
    L = data.draw(log_uniform(1e-4, 10.0))
    a, spa = data.draw(clouds(dim, L))
    b, spb = data.draw(clouds(dim, L * data.draw(st.floats(0.3, 3)), allow_halfspace=len(a) > 1))
    # B placed along a random direction at a random overlap or gap (deep to far)
    pa = data.draw(poses(dim, L))
    pb = data.draw(poses(dim, L * data.draw(st.sampled_from([0.01, 0.5, 1.0, 2.0, 5.0]))))
    va = data.draw(velocities(dim, radius_of(a)))
    vb = data.draw(velocities(dim, radius_of(b)))
    params = data.draw(contact_params(L, max(spa, spb)))
    order = data.draw(st.integers(0, 2))
    args = [with_layout(v, data.draw(st.sampled_from(LAYOUTS))) for v in (pa, va, pb, vb)]
    snap = snapshot(*args)
    r1 = sc.contact(a, args[0], args[1], b, args[2], args[3], params, order, num_threads=1)
    assert_unchanged(snap)
    r2 = sc.contact(a, pa, va, b, pb, vb, params, order, num_threads=2)
    assert_finite(
        r1, f"contact {a!r} {b!r} {params} order={order} poses {pa.tolist()} {pb.tolist()}"
    )
    assert_same_bits(r1, r2, "contact: layout or num_threads 1 vs 2")


# --------------------------------------------------------------------------------------------
# 2. SSDF, separation, contact, poses: invalid input
# --------------------------------------------------------------------------------------------

DISK = sc.PointCloud.disk(0.05, 0.01)
BOX3 = sc.PointCloud.box([0.05, 0.03, 0.02], 0.01)  # 3D, above the spatial index's 256


def _call_spoiled(data, fn, kwargs, allowed=BAD):
    """``fn(**kwargs)`` with one argument (drawn) replaced by garbage: raises only
    ``allowed``, and modifies no argument."""
    name = data.draw(st.sampled_from(sorted(kwargs)))
    kw = dict(kwargs)
    kw[name] = spoil(data.draw, kwargs[name])
    snap = snapshot(*[v for v in kw.values() if isinstance(v, (np.ndarray, list))])
    only(allowed, fn, **kw)
    assert_unchanged(snap)


@fuzz(3000)
@given(data=st.data())
def test_kernels_refuse_garbage_with_type_or_value_errors(data):
    dim = data.draw(st.sampled_from([2, 3]))
    cloud = DISK if dim == 2 else BOX3
    pose = np.zeros(3) if dim == 2 else np.array([0, 0, 0, 1.0, 0, 0, 0])
    pose_b = pose.copy()
    pose_b[0] = 0.09
    vel = np.zeros(3 if dim == 2 else 6)
    which = data.draw(st.sampled_from(["ssdf", "separation", "contact", "retract", "difference"]))
    if which == "ssdf":
        kw = {
            "cloud": cloud,
            "x": np.full((4, dim), 0.01),
            "eps": 1e-4,
            "order": 2,
            "num_threads": 1,
        }
        kw.update(isa="auto", dense=False)
        _call_spoiled(data, sc.ssdf, kw)
    elif which == "separation":
        kw = {
            "cloud_a": cloud,
            "pose_a": pose,
            "cloud_b": cloud,
            "pose_b": pose_b,
            "eps": 1e-4,
            "order": 2,
        }
        kw.update(num_threads=2, isa="auto", dense=False)
        _call_spoiled(data, sc.separation, kw)
    elif which == "contact":
        kw = {"cloud_a": cloud, "pose_a": pose, "vel_a": vel, "cloud_b": cloud, "pose_b": pose_b}
        kw.update(vel_b=vel, params=sc.ContactParams(), order=2, num_threads=1, dense=False)
        _call_spoiled(data, sc.contact, kw)
    elif which == "retract":
        _call_spoiled(data, sc.retract, {"pose": pose, "dq": vel})
    else:
        _call_spoiled(data, sc.pose_difference, {"pose1": pose_b, "pose0": pose})


@fuzz(1200)
@given(data=st.data())
def test_contact_params_refuse_garbage(data):
    name = data.draw(st.sampled_from(_PARAM_NAMES))
    p = only(BAD, sc.ContactParams, **{name: data.draw(GARBAGE)})
    if p is not None:
        assert all(math.isfinite(v) for v in p._astuple())


# --------------------------------------------------------------------------------------------
# 3. PointCloud constructors
# --------------------------------------------------------------------------------------------


@fuzz(1200)
@given(data=st.data())
def test_clouds_from_valid_input_are_finite_and_massive(data):
    cloud, _ = data.draw(clouds())
    for a in (cloud.points, cloud.normals, cloud.weights):
        assert np.all(np.isfinite(a)) and not a.flags.writeable
    np.testing.assert_allclose(np.linalg.norm(cloud.normals, axis=1), 1.0, rtol=0, atol=1e-9)
    assert np.all(cloud.weights > 0)
    mp = only(ValueError, cloud.mass_properties, data.draw(log_uniform(1e-3, 1e4)))
    if mp is None:  # unbounded, or raw samples that do not look like a closed surface
        assert cloud.kind in (None, "halfspace")
    else:
        assert_finite(tuple(mp), f"mass_properties of {cloud!r}")
        assert mp.mass > 0
    moved = cloud.transformed(data.draw(poses(cloud.dim, 1.0)))
    assert_finite((moved.points, moved.normals), "transformed")


@st.composite
def length_garbage(draw):
    """Garbage for a length argument: wrong types, or values out of the accepted range
    (random floats inside it could ask for millions of samples: valid, and slow)."""
    return draw(
        st.one_of(
            GARBAGE_SCALARS,
            st.sampled_from([1e-61, 1e61, 1e-200, 1e200, -0.1]),
            st.lists(st.floats(-1, 1), max_size=3),
            garbage_arrays(),
        )
    )


@fuzz(4000)
@given(data=st.data())
def test_cloud_constructors_refuse_garbage(data):
    TET_V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float) * 0.1
    TET_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    cases = {
        "box": (sc.PointCloud.box, {"half_extents": np.array([0.05, 0.02]), "spacing": 0.01}),
        "disk": (sc.PointCloud.disk, {"radius": 0.05, "spacing": 0.01}),
        "sphere": (sc.PointCloud.sphere, {"radius": 0.05, "spacing": 0.02}),
        "capsule": (
            sc.PointCloud.capsule,
            {"radius": 0.02, "half_length": 0.03, "spacing": 0.01, "dim": 3},
        ),
        "polygon": (
            sc.PointCloud.polygon,
            {"vertices": np.array([[0, 0], [0.1, 0], [0.05, 0.1]]), "spacing": 0.01},
        ),
        "t_shape": (
            sc.PointCloud.t_shape,
            {"scale": 1e-3, "spacing": 0.01, "dim": 2, "thickness": 30.0},
        ),
        "from_mesh": (
            sc.PointCloud.from_mesh,
            {"vertices": TET_V, "faces": TET_F, "spacing": 0.05},
        ),
        "halfspace": (
            sc.PointCloud.halfspace,
            {"point": np.zeros(3), "normal": np.array([0, 0, 1.0])},
        ),
        "raw": (
            sc.PointCloud,
            {"points": np.eye(3), "normals": np.eye(3), "weights": np.ones(3), "normalize": False},
        ),
        "transformed": (DISK.transformed, {"pose": np.array([0.1, 0.0, 1.0])}),
        "mass_properties": (DISK.mass_properties, {"density": 10.0}),
    }
    fn, kwargs = cases[data.draw(st.sampled_from(sorted(cases)))]
    name = data.draw(st.sampled_from(sorted(kwargs)))
    kw = dict(kwargs)
    lengthy = name in ("radius", "spacing", "half_length", "scale", "thickness", "half_extents")
    kw[name] = data.draw(length_garbage()) if lengthy else spoil(data.draw, kwargs[name])
    snap = snapshot(*[v for v in kw.values() if isinstance(v, (np.ndarray, list))])
    out = only(BAD, fn, **kw)
    assert_unchanged(snap)
    if isinstance(out, sc.PointCloud):
        assert np.all(np.isfinite(out.points)) and np.all(out.weights > 0)


# --------------------------------------------------------------------------------------------
# 4. scenes and models: the fixed models of the step tests
# --------------------------------------------------------------------------------------------

PUSH_T_RADIUS = 0.015


@functools.cache
def push_t_task():
    return push_t.make(seed=0)


BOX_HALF = np.array([0.05, 0.03, 0.02])
FLOOR = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])


@functools.cache
def box_model(integrator, stacked):
    """An actuated 3D box on a floor (Euler: ContactParams() at 1 ms; implicit: fitted
    parameters at 5 ms), with a second box resting on it when ``stacked``."""
    s = sc.Scene(dim=3)
    s.add_body(FLOOR, kind="static", name="floor")
    box = sc.PointCloud.box(BOX_HALF, 0.01)
    s.add_body(box, mass=1.0, pose=[0, 0, BOX_HALF[2], 1, 0, 0, 0], actuated=True, name="box")
    params = sc.ContactParams() if integrator == "euler" else None
    s.add_contact("floor", "box", params)
    if stacked:
        top = sc.PointCloud.box([0.02, 0.02, 0.02], 0.01)
        s.add_body(top, mass=0.3, pose=[0, 0, 2 * BOX_HALF[2] + 0.02, 1, 0, 0, 0], name="top")
        s.add_contact("box", "top", params)
        s.add_contact("floor", "top", params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.SoftContactWarning)
        return s.build(0.001 if integrator == "euler" else 0.005, integrator)


MODELS = ["push_t", "box_euler", "box_implicit", "stack_implicit"]


def model_of(name):
    if name == "push_t":
        return push_t_task().model
    return box_model("euler" if name == "box_euler" else "implicit", name == "stack_implicit")


GAPS = {  # how far apart the surfaces are, in m: deep, touching, onset, grazing, free
    "deep": st.floats(-0.02, -2e-3),
    "touching": st.floats(-2e-3, 0.0),
    "onset": st.floats(0.0, 6e-3),
    "grazing": st.floats(-5e-4, 5e-4),
    "free": st.floats(6e-3, 0.1),
}


@st.composite
def push_t_states(draw):
    """(x, u): the T anywhere in the workspace (walls included), the pusher at a drawn gap
    from a point of the T's outline, velocities and controls up to ~10 m/s."""
    task = push_t_task()
    V = task.vertices
    t = np.array([draw(st.floats(0.03, 0.48)), draw(st.floats(0.03, 0.48))])
    th = draw(st.floats(-7.0, 7.0))
    e = draw(st.integers(0, len(V) - 1))
    a, b = V[e], V[(e + 1) % len(V)]
    p = a + draw(st.floats(0, 1)) * (b - a)
    n = np.array([b[1] - a[1], a[0] - b[0]]) / np.linalg.norm(b - a)  # outward (CCW)
    gap = draw(draw(st.sampled_from(list(GAPS.values()))))
    R = _rotation2(th)
    c = t + R @ (p + n * (PUSH_T_RADIUS + gap))
    vt = draw(velocities(2, 0.08))
    vp = draw(velocities(2, PUSH_T_RADIUS))
    how = draw(st.sampled_from(["random", "approach", "release", "tangent"]))
    speed = draw(st.sampled_from([0.0, 0.01, 0.1, 1.0, 10.0]))
    nw, tw = R @ n, R @ np.array([-n[1], n[0]])
    u = {
        "random": draw(velocities(2, PUSH_T_RADIUS)),
        "approach": np.r_[-speed * nw, 0.0],
        "release": np.r_[speed * nw, 0.0],
        "tangent": np.r_[speed * tw, 0.0],
    }[how]
    x = np.r_[t, th, c, draw(st.floats(-3, 3)), vt, vp]
    return x, u


@st.composite
def box_states(draw, model):
    """(x, u) of the box models: the box at a drawn gap above the floor in a random or
    nearly flat orientation, the top box (stack) at a drawn gap above the box."""

    def lowest(q, half):
        return np.sum(np.abs(quat_to_matrix(q)[2]) * half)

    def orientation():
        if draw(st.booleans()):
            return draw(quaternions())
        tilt = np.array(draw(st.lists(st.floats(-0.05, 0.05), min_size=3, max_size=3)))
        q = np.r_[1.0, tilt]
        return q / np.linalg.norm(q)

    q = orientation()
    gap = draw(draw(st.sampled_from(list(GAPS.values()))))
    xy = np.array(draw(st.lists(st.floats(-1, 1), min_size=2, max_size=2)))
    pose = np.r_[xy, lowest(q, BOX_HALF) + gap, q]
    vel = draw(velocities(3, float(np.linalg.norm(BOX_HALF))))
    u = np.r_[
        np.array(draw(st.lists(st.floats(-1, 1), min_size=3, max_size=3))) * 30.0,
        np.array(draw(st.lists(st.floats(-1, 1), min_size=3, max_size=3))) * 0.5,
    ] * draw(st.sampled_from([0.0, 0.1, 1.0]))
    if model.nx == 13:
        return np.r_[pose, vel], u
    qt = orientation()
    top_half = np.full(3, 0.02)
    gap2 = draw(draw(st.sampled_from(list(GAPS.values()))))
    R = quat_to_matrix(q)
    top_of_box = pose[2] + np.sum(np.abs(R[2]) * BOX_HALF)
    off = np.array(draw(st.lists(st.floats(-0.04, 0.04), min_size=2, max_size=2)))
    pose2 = np.r_[xy + off, top_of_box + lowest(qt, top_half) + gap2, qt]
    vel2 = draw(velocities(3, float(np.linalg.norm(top_half))))
    return np.r_[pose, pose2, vel, vel2], u


def states_of(name):
    return push_t_states() if name == "push_t" else box_states(model_of(name))


@fuzz(1200)
@given(data=st.data())
def test_step_valid_states_are_finite_or_diverge_reproducibly(data):
    name = data.draw(st.sampled_from(MODELS))
    model = model_of(name)
    x, u = data.draw(states_of(name))
    order = data.draw(st.integers(0, 2))
    params = data.draw(st.booleans())
    xin = with_layout(x, data.draw(st.sampled_from(LAYOUTS)))
    uin = with_layout(u, data.draw(st.sampled_from(LAYOUTS)))
    snap = snapshot(xin, uin)
    try:
        r1 = model.step(xin, uin, order=order, params=params, num_threads=1)
    except sc.DivergenceError as e:
        with pytest.raises(sc.DivergenceError) as again:
            model.step(x, u, order=order, params=params, num_threads=2)
        assert_same_bits(e.x_next, again.value.x_next, "diverged state, 1 vs 2 threads")
        assert e.body in model.body_names
        return
    finally:
        assert_unchanged(snap)
    r2 = model.step(x, u, order=order, params=params, num_threads=2)
    assert_finite(r1, f"{name} step order={order} params={params} x={x.tolist()} u={u.tolist()}")
    assert_same_bits(r1, r2, f"{name}: layout or num_threads 1 vs 2")
    # the value does not depend on the derivatives asked for
    assert_same_bits(r1.x_next, model.step(x, u).x_next, "x_next at order 0")


@fuzz(500)
@given(data=st.data())
def test_rollouts_are_finite_until_divergence_and_equal_a_loop(data):
    name = data.draw(st.sampled_from(MODELS))
    model = model_of(name)
    B = data.draw(st.integers(1, 4))
    T = data.draw(st.integers(1, 6))
    starts = [data.draw(states_of(name)) for _ in range(B)]
    x0 = np.stack([s[0] for s in starts])
    U = np.stack([np.tile(s[1], (T, 1)) for s in starts])
    U += np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).normal(size=U.shape) * 0.1
    order = data.draw(st.integers(0, 1))
    snap = snapshot(x0, U)
    r1 = model.rollout(x0, U, order=order, num_threads=1)
    assert_unchanged(snap)
    r2 = model.rollout(x0, U, order=order, num_threads=2)
    assert_same_bits(r1, r2, f"{name} rollout num_threads 1 vs 2")
    for b in range(B):
        st_, fail = int(r1.status[b]), int(r1.failed_step[b])
        assert st_ in (0, _core.SC_EDIVERGED), st_
        done = T if st_ == 0 else fail  # steps that completed without diverging
        assert (fail == -1) == (st_ == 0)
        assert_finite(r1.states[b, : done + 1], f"{name} rollout states {x0[b].tolist()}")
        if order:
            assert_finite((r1.dx_dx[b, :done], r1.dx_du[b, :done]), f"{name} rollout Jacobians")
        # a loop of steps gives the same bits
        x = x0[b]
        for t in range(done):
            s = model.step(x, U[b, t], order=order)
            assert_same_bits(s.x_next, r1.states[b, t + 1], f"{name} rollout vs step {t}")
            if order:
                assert_same_bits((s.dx_dx, s.dx_du), (r1.dx_dx[b, t], r1.dx_du[b, t]), "J")
            x = s.x_next
        if st_ != 0:
            with pytest.raises(sc.DivergenceError):
                model.step(x, U[b, done])


@fuzz(800)
@given(data=st.data())
def test_inverse_dynamics_energy_momentum_are_finite(data):
    name = data.draw(st.sampled_from(MODELS))
    model = model_of(name)
    x, u = data.draw(states_of(name))
    snap = snapshot(x, u)
    e = model.energy(x, num_threads=1)
    assert_same_bits(tuple(e), tuple(model.energy(x, num_threads=2)), "energy threads")
    assert_finite(tuple(e), f"{name} energy x={x.tolist()}")
    assert_finite(tuple(model.momentum(x)), f"{name} momentum")
    try:
        x1 = model.step(x, u).x_next
    except sc.DivergenceError:
        return
    ui, f = model.inverse_dynamics(x, x1, num_threads=1)
    assert_same_bits((ui, f), model.inverse_dynamics(x, x1, num_threads=2), "inverse threads")
    assert_finite((ui, f), f"{name} inverse dynamics x={x.tolist()} u={u.tolist()}")
    assert_unchanged(snap)
    # the step is inverted: f is the actuation (u on actuated bodies, 0 elsewhere), to the
    # rounding of f = A (v+ - v0+) / h: v+ and v0+ (the step without actuation) rounded to
    # u |v|, times |A| / h.  A (M, or M - h dQ/dv for "implicit", whose friction term can
    # dwarf M) is read off f, affine in v+: A e_k = h (f(v+ + e_k) - f(v+)).
    nq, nv, nvb = model.nq, model.nv, (3 if model.dim == 2 else 6)
    A = np.empty((nv, nv))
    for k in range(nv):
        xk = x1.copy()
        xk[nq + k] += 1.0
        A[:, k] = model.dt * (model.inverse_dynamics(x, xk)[1] - f)
    want, u0 = np.zeros(nv), u.copy()
    for j, body in enumerate(model.moving):
        mine = [i for i, n in enumerate(model.control_names) if n.split(".")[0] == body]
        if not mine:
            continue
        if model.control_names[mine[0]].split(".")[1].startswith("f"):  # actuated: u = f
            want[j * nvb : (j + 1) * nvb] = u[mine]
            u0[mine] = 0.0
            assert_same_bits(ui[mine], f[j * nvb : (j + 1) * nvb], "actuated controls")
        else:  # kinematic: u = v+ = the control itself
            assert_same_bits(ui[mine], u[mine], "kinematic controls")
    v = np.abs(x1[nq:]).max() + np.abs(model.step(x, u0).x_next[nq:]).max()
    scale = np.abs(want) + np.abs(A).sum(axis=1) * v / model.dt
    assert np.all(np.abs(f - want) <= 16 * EPS * scale), (f, want, scale)


@fuzz(2400)
@given(data=st.data())
def test_models_refuse_garbage_with_type_or_value_errors(data):
    name = data.draw(st.sampled_from(MODELS))
    model = model_of(name)
    x, u = data.draw(states_of(name))
    which = data.draw(
        st.sampled_from(
            ["step", "rollout", "inverse", "energy", "momentum", "retract", "difference"]
        )
    )
    if which == "step":
        kw = {
            "x": x,
            "u": u,
            "order": 1,
            "params": False,
            "num_threads": 1,
            "isa": "auto",
            "dense": False,
        }
        fn = model.step
    elif which == "rollout":
        kw = {"x0": x[None], "U": np.tile(u, (1, 2, 1)), "order": 1, "num_threads": 2}
        fn = model.rollout
    elif which == "inverse":
        kw = {"x": x, "x_next": x, "num_threads": 1, "dense": False}
        fn = model.inverse_dynamics
    elif which == "energy":
        kw, fn = {"x": x, "num_threads": 1, "isa": "auto"}, model.energy
    elif which == "momentum":
        kw, fn = {"x": x}, model.momentum
    elif which == "retract":
        kw, fn = {"x": x, "dx": np.zeros(2 * model.nv)}, model.retract
    else:
        kw, fn = {"x1": x, "x0": x}, model.difference
    _call_spoiled(data, fn, kw, BAD_STEP)


# --------------------------------------------------------------------------------------------
# 5. scenes: construction from garbage, and random valid scenes stepped
# --------------------------------------------------------------------------------------------


def _scene2():
    s = sc.Scene(dim=2)
    s.add_body(DISK, mass=0.1, name="disk")
    s.add_body(sc.PointCloud.disk(0.01, 0.005), kind="kinematic", pose=[0.07, 0, 0], name="p")
    return s


@fuzz(4000)
@given(data=st.data())
def test_scenes_refuse_garbage_with_type_or_value_errors(data):
    which = data.draw(
        st.sampled_from(["scene", "add_body", "add_contact", "add_support", "build", "limits"])
    )
    s = _scene2()
    if which == "scene":
        _call_spoiled(data, sc.Scene, {"dim": 2, "gravity": np.zeros(2)})
    elif which == "add_body":
        kw = {"cloud": DISK, "mass": 0.1, "density": None, "inertia": None, "pose": np.zeros(3)}
        kw.update(velocity=np.zeros(3), kind="dynamic", actuated=False, name="new")
        name = data.draw(st.sampled_from(sorted(kw)))
        kw[name] = spoil(data.draw, kw[name])
        if name == "density":
            kw["mass"] = None
        only(BAD, s.add_body, **kw)
    elif which == "add_contact":
        kw = {"body_a": "disk", "body_b": "p", "params": sc.ContactParams()}
        name = data.draw(st.sampled_from(["body_a", "body_b", "params", "friction"]))
        if name == "friction":
            kw.update(params=None, friction=data.draw(GARBAGE))
        else:
            kw[name] = data.draw(GARBAGE)
        only(BAD, s.add_contact, **kw)
    elif which == "add_support":
        kw = {"body": "disk", "friction": 0.3, "samples": np.zeros((3, 2)), "gravity": 9.81}
        kw.update(slip_velocity=0.01)
        _call_spoiled(data, s.add_support, kw)
    elif which == "build":
        s.add_contact("disk", "p", sc.ContactParams())
        kw = {"dt": 0.005, "integrator": "euler", "max_travel": 100.0}
        name = data.draw(st.sampled_from(sorted(kw)))
        kw[name] = data.draw(GARBAGE)
        m = only(BAD, s.build, **kw)
        if m is not None:  # (a dt of 3090 s is valid; its first step may diverge)
            r = only(sc.DivergenceError, m.step, m.initial_state(), np.zeros(3))
            assert_finite(r, "a model built from garbage")
    else:
        _call_spoiled(data, s.stability_limits, {"integrator": "euler", "dt": 0.005})


@fuzz(600)
@given(data=st.data())
def test_random_valid_scenes_build_and_step_finitely(data):
    dim = data.draw(st.sampled_from([2, 3]))
    L = data.draw(log_uniform(1e-3, 1.0))
    s = sc.Scene(dim=dim)
    names = []
    for i in range(data.draw(st.integers(1, 3))):
        cloud, _ = data.draw(clouds(dim, L * data.draw(st.floats(0.5, 2)), False, max_cells=4))
        kind = data.draw(st.sampled_from(["dynamic", "dynamic", "kinematic", "static"]))
        pose = data.draw(poses(dim, L))
        kw = {}
        if kind == "dynamic":
            kw["mass"] = data.draw(log_uniform(1e-3, 1e3))
            kw["actuated"] = data.draw(st.booleans())
            if cloud.kind is None:  # raw samples: no recorded solid
                kw["inertia"] = kw["mass"] * L * L if dim == 2 else np.eye(3) * kw["mass"] * L * L
        if kind != "static":
            kw["velocity"] = data.draw(velocities(dim, L))
        names.append(s.add_body(cloud, pose=pose, kind=kind, name=f"b{i}", **kw))
        if dim == 2 and kind == "dynamic" and data.draw(st.booleans()) and cloud.kind:
            s.add_support(names[-1], friction=data.draw(st.floats(0, 1)))
    if dim == 3 and data.draw(st.booleans()):
        names.append(s.add_body(FLOOR.transformed([0, 0, -L, 1, 0, 0, 0]), kind="static"))
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            fitted = data.draw(st.booleans())
            p = None if fitted else data.draw(contact_params(L, L / 4))
            only(ValueError, s.add_contact, names[i], names[j], p)
    dt = data.draw(log_uniform(1e-4, 1e-2))
    model = only(ValueError, s.build, dt, data.draw(st.sampled_from(["euler", "implicit"])))
    if model is None:  # no moving body
        assert all(s._bodies[i].kind == "static" for i in range(len(s._bodies)))
        return
    x = model.initial_state()
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    for _ in range(3):
        u = rng.normal(size=model.nu) * 0.1
        order = int(rng.integers(0, 3))
        try:
            r = model.step(x, u, order=order, params=bool(rng.integers(2)))
        except sc.DivergenceError:
            return
        assert_finite(r, f"random scene {model!r} x={x.tolist()}")
        x = r.x_next


# --------------------------------------------------------------------------------------------
# 6. tangent spaces
# --------------------------------------------------------------------------------------------


@fuzz(1200)
@given(data=st.data())
def test_retract_and_difference_invert_each_other(data):
    dim = data.draw(st.sampled_from([2, 3]))
    batch = data.draw(st.sampled_from([(), (3,), (2, 2)]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = int(np.prod(batch, dtype=int))
    scale = data.draw(log_uniform(1e-4, 10.0))
    if dim == 2:
        p = np.c_[rng.uniform(-scale, scale, (n, 2)), rng.uniform(-20, 20, n)]
        d = np.c_[rng.uniform(-scale, scale, (n, 2)), rng.uniform(-3, 3, n)]
    else:
        q = rng.normal(size=(n, 4))
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        p = np.c_[rng.uniform(-scale, scale, (n, 3)), q]
        w = rng.normal(size=(n, 3))
        w *= rng.uniform(0, 3.0, (n, 1)) / np.linalg.norm(w, axis=1, keepdims=True)
        d = np.c_[rng.uniform(-scale, scale, (n, 3)), w]  # rotations below pi
    p, d = p.reshape(batch + p.shape[-1:]), d.reshape(batch + d.shape[-1:])
    snap = snapshot(p, d)
    moved = sc.retract(p, d)
    back = sc.pose_difference(moved, p)
    assert_unchanged(snap)
    assert_finite((moved, back), "retract/pose_difference")
    np.testing.assert_allclose(
        back, d, rtol=0, atol=1e-12 * (1 + np.abs(d).max() + np.abs(p).max())
    )


@fuzz(800)
@given(data=st.data())
def test_model_retract_difference_on_valid_states(data):
    name = data.draw(st.sampled_from(MODELS))
    model = model_of(name)
    x, _ = data.draw(states_of(name))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    dx = rng.normal(size=2 * model.nv) * data.draw(st.sampled_from([1e-8, 1e-3, 0.5]))
    if model.dim == 3:  # rotations below pi, where the difference inverts the retraction
        for j in range(0, model.nv, 6):
            w = dx[j + 3 : j + 6]
            w *= min(1.0, 3.0 / max(np.linalg.norm(w), 1e-300))
    y = model.retract(x, dx)
    back = model.difference(y, x)
    assert_finite((y, back), f"{name} retract/difference")
    np.testing.assert_allclose(back, dx, rtol=0, atol=1e-12 * (1 + np.abs(x).max()))


# --------------------------------------------------------------------------------------------
# 7. trajectory problems
# --------------------------------------------------------------------------------------------


@functools.cache
def push_t_problem(horizon):
    task = push_t_task()
    m = task.model
    cost = [
        PoseResidual(m, "T", task.goal, 200.0, 1.0, stages=True),
        ControlResidual(m, 1e-3),
        ApproachResidual(m, "pusher", "T", task.cloud, 1.0),
    ]
    return TrajectoryProblem(m, task.x0, horizon, cost, num_threads=1)


@fuzz(500)
@given(data=st.data())
def test_trajectory_problem_is_finite_or_infinite_on_divergence(data):
    T = data.draw(st.sampled_from([1, 4]))
    prob = push_t_problem(T)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    U = rng.normal(size=prob.size) * data.draw(st.sampled_from([0.0, 0.1, 1.0, 10.0]))
    snap = snapshot(U)
    f = prob.fun(U)
    assert f == np.inf or math.isfinite(f)
    if f == np.inf:
        with pytest.raises(sc.DivergenceError):
            prob.jac(U)
        return
    g = prob.jac(U)
    p = rng.normal(size=prob.size)
    hp = prob.hessp(U, p)
    r = prob.residuals(U)
    J = prob.residual_jac(U)
    assert_unchanged(snap)
    assert_finite((g, hp, r, J), f"TrajectoryProblem T={T} U={U.tolist()}")
    assert prob.batch_fun(U[None], num_threads=2)[0] == f


@fuzz(1200)
@given(data=st.data())
def test_trajectory_problem_refuses_garbage(data):
    prob = push_t_problem(4)
    which = data.draw(st.sampled_from(["fun", "jac", "hessp", "batch_fun", "residuals", "new"]))
    U = np.zeros(prob.size)
    # (derivatives of a diverging control sequence raise its DivergenceError)
    if which == "hessp":
        kw = {"U": U, "p": np.ones(prob.size)}
        name = data.draw(st.sampled_from(["U", "p"]))
        kw[name] = spoil(data.draw, kw[name])
        only(BAD_STEP, prob.hessp, **kw)
    elif which == "batch_fun":
        only(BAD, prob.batch_fun, spoil(data.draw, U[None]))
    elif which == "new":
        task = push_t_task()
        kw = {"x0": task.x0, "horizon": 3, "cost": ControlResidual(task.model), "num_threads": 1}
        name = data.draw(st.sampled_from(sorted(kw)))
        kw[name] = spoil(data.draw, kw[name]) if name != "cost" else data.draw(GARBAGE)
        only(BAD, TrajectoryProblem, task.model, **kw)
    else:
        only(BAD_STEP, getattr(prob, which), spoil(data.draw, U))


# --------------------------------------------------------------------------------------------
# 8. the compiled module called directly with garbage
# --------------------------------------------------------------------------------------------


def _packed(cloud):
    return _core.pack_cloud(cloud.points, cloud.normals, cloud.weights)


@fuzz(5000)
@given(data=st.data())
def test_core_functions_refuse_garbage_without_crashing(data):
    """The private module re-checks its arguments (it can be called directly): garbage in
    any position raises TypeError or ValueError, never another exception, never a crash;
    a corrupted packed buffer of the right size (NaN, huge, random) may give any numbers
    but must not crash."""
    cloud = data.draw(st.sampled_from([DISK, BOX3]))
    D = cloud.dim
    k = _packed(cloud)
    n = len(cloud)
    if data.draw(st.booleans()):
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        bad = rng.normal(size=k.shape) * data.draw(st.sampled_from([1.0, 1e300, NAN]))
        k = np.where(rng.random(k.shape) < data.draw(st.sampled_from([0.01, 1.0])), bad, k)
    pose = np.zeros(3) if D == 2 else np.array([0, 0, 0, 1.0, 0, 0, 0])
    pose_b = pose.copy()
    pose_b[0] = 0.09
    vel = np.zeros(3 if D == 2 else 6)
    P = sc.ContactParams()._astuple()
    m = push_t_task().model if D == 2 else box_model("euler", False)
    x = m.initial_state()
    u = np.zeros(m.nu)
    calls = {
        "pack_cloud": (_core.pack_cloud, [cloud.points, cloud.normals, cloud.weights]),
        "ssdf": (_core.ssdf, [k, n, np.zeros((3, D)), 1e-4, 3, 2, -1, 0]),
        "separation": (_core.separation, [k, n, pose, k, n, pose_b, 1e-4, 2, 1, -1, 0]),
        "contact": (_core.contact, [k, n, pose, vel, k, n, pose_b, vel, P, 2, 1, -1, 1]),
        "step": (_core.step, [m._cap, x, u, 2, 1, 1, -1, 0]),
        "rollout": (_core.rollout, [m._cap, x[None], np.tile(u, (1, 2, 1)), 1, 2, -1, 0]),
        "step_batch": (
            _core.step_batch,
            [(m._cap,), 2, x[None], np.zeros(2, np.intp), u[None], None, None, 2, 1, 2, -1, 0],
        ),
        "rollout_batch": (
            _core.rollout_batch,
            [
                (m._cap, m._cap),
                2,
                x[None],
                np.zeros(2, np.intp),
                np.tile(u, (1, 2, 1)),
                None,
                np.array([1, 0], np.intp),
                1,
                2,
                -1,
                0,
            ],
        ),
        "model_eval": (_core.model_eval, [m._cap, 0, x, x, 1, -1, 0]),
        "model_sizes": (_core.model_sizes, [m._cap]),
    }
    name = data.draw(st.sampled_from(sorted(calls)))
    fn, args = calls[name]
    i = data.draw(st.integers(0, len(args) - 1))
    args = list(args)
    if name == "contact" and i == 8 and data.draw(st.booleans()):
        t = list(P)
        t[data.draw(st.integers(0, 6))] = data.draw(GARBAGE_SCALARS)
        args[i] = tuple(t)
    elif name == "model_eval" and i == 1:
        args[i] = data.draw(st.one_of(st.integers(-3, 5), GARBAGE_SCALARS))
    else:
        args[i] = spoil(data.draw, args[i])
    snap = snapshot(*[a for a in args if isinstance(a, (np.ndarray, list))])
    only(BAD_STEP, fn, *args)
    assert_unchanged(snap)


@fuzz(2400)
@given(data=st.data())
def test_core_model_new_refuses_garbage_without_crashing(data):
    """_core.model_new with one argument (or one body's entry) spoiled."""
    k = _packed(DISK)
    good = [
        2,
        0.005,
        np.zeros(3),
        np.array([0.0, 1.0]),  # kinds: dynamic, kinematic
        np.array([1.0, 0.0]),  # actuated
        np.array([0.1, 0.0]),
        np.array([[1e-4] + [0.0] * 8, [0.0] * 9]),
        np.array([[0.0] * 7, [0.07] + [0.0] * 6]),
        (k, k),
        np.array([len(DISK), len(DISK)], dtype=float),
        ((np.zeros((2, 2)), np.full(2, 0.5), 0.3, 9.81, 0.01), None),
        np.array([[0.0, 1.0]]),
        np.array([sc.ContactParams()._astuple()]),
        0,
        np.array([[1e3, 1e3], [0.0, 0.0]]),
    ]
    assert isinstance(_core.model_new(*good), object)
    args = list(good)
    i = data.draw(st.integers(0, len(args) - 1))
    if i in (8, 10) and data.draw(st.booleans()):  # one body's cloud or support
        entry = list(args[i])
        j = data.draw(st.integers(0, 1))
        if i == 10 and data.draw(st.booleans()):
            sup = list(good[10][0])
            sup[data.draw(st.integers(0, 4))] = spoil(data.draw, sup[0])
            entry[0] = tuple(sup)
        else:
            entry[j] = spoil(data.draw, k)
        args[i] = tuple(entry)
    elif i in (0, 1, 13):
        args[i] = data.draw(GARBAGE_SCALARS)
    else:
        args[i] = spoil(data.draw, args[i])
    cap = only(BAD, _core.model_new, *args)
    if cap is not None:
        only(BAD_STEP, _core.model_sizes, cap)


# --------------------------------------------------------------------------------------------
# 9. defects found by this suite and not fixed here (the fixed ones have regression tests
# in tests/test_binding.py and tests/test_contract.py)
# --------------------------------------------------------------------------------------------


def test_masked_element_in_a_list_is_refused():
    """numpy.ma.masked inside a list (which NumPy would read as NaN with a warning) is
    refused by name, like a masked array."""
    with pytest.raises(TypeError, match="x: masked"):
        sc.ssdf(DISK, [[np.ma.masked, 0.0]], 1e-4)


def test_masked_constant_is_refused_by_the_compiled_module():
    """The compiled module refuses numpy.ma.masked for a float argument (which the C API
    would read as NaN with a warning) and a masked array for an array argument (whose mask
    it would drop), naming the argument, positional or keyword."""
    packed = _packed(DISK)
    with pytest.raises(TypeError, match="eps: masked"):
        _core.ssdf(packed, len(DISK), np.zeros((1, 2)), np.ma.masked)
    with pytest.raises(TypeError, match="eps: masked"):
        _core.ssdf(packed, len(DISK), np.zeros((1, 2)), eps=np.ma.masked)
    with pytest.raises(TypeError, match="x: masked"):
        _core.ssdf(packed, len(DISK), np.ma.masked_array(np.zeros((1, 2))), 1e-4)
    prm = (1e-5, 1e-3, 2e3, 1e-3, 8.0, np.ma.masked, 0.05)
    with pytest.raises(TypeError, match="params: masked"):
        _core.contact(
            packed,
            len(DISK),
            np.zeros(3),
            np.zeros(3),
            packed,
            len(DISK),
            np.array([0.09, 0, 0]),
            np.zeros(3),
            prm,
        )


def test_retract_of_a_huge_rotation():
    """A finite rotation vector beyond 1e154 rad (its sum of squares overflows) still
    gives a unit quaternion, without a warning; ordinary ones keep their bits."""
    for dq in ([0, 0, 0, 1e300, 0, 0], [0, 0, 0, 1e300, -1.7e308, 1e-300]):
        r = sc.retract([0, 0, 0, 1, 0, 0, 0], dq)
        assert np.all(np.isfinite(r)) and abs(np.linalg.norm(r[3:]) - 1.0) < 1e-15
    small = sc.retract(
        [[0, 0, 0, 1, 0, 0, 0]] * 2, [[0, 0, 0, 1e300, 0, 0], [0, 0, 0, 0.1, 0.2, 0]]
    )
    assert np.array_equal(small[1], sc.retract([0, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0.1, 0.2, 0]))


def test_trajectory_cost_overflow():
    """A valid U whose cost overflows (push-T, 4 steps, control weight 1e300 and the
    pusher's last velocity 1e8 m/s, the end of its range: the rollout completes, the
    control residual 1e158 squared does not fit a float): fun is inf as batch_fun's row,
    without a warning; its derivatives raise ValueError."""
    task = push_t_task()
    prob = TrajectoryProblem(
        task.model, task.x0, 4, [ControlResidual(task.model, 1e300)], num_threads=1
    )
    U = np.zeros(prob.size)
    U[9] = 1e8
    assert prob.batch_fun(U[None])[0] == np.inf
    assert prob.fun(U) == np.inf
    with pytest.raises(ValueError, match="float range"):
        prob.jac(U)
    r = prob.residuals(U)
    assert np.all(np.isfinite(r)) and np.max(np.abs(r)) == 1e158  # its own, finite
