"""The boundary contract of ssdf() and of the private compiled module.

Input battery (lists, float32/int, Fortran order, strided, transposed,
byte-swapped, empty batches), error types and messages naming the argument,
inputs never modified, and the same checks on softcontact._core directly.
"""

import numpy as np
import pytest

import softcontact as sc
from softcontact import _core


@pytest.fixture
def cloud2():
    return sc.PointCloud.box([0.05, 0.02], spacing=0.01)


@pytest.fixture
def cloud3():
    return sc.PointCloud.box([0.05, 0.02, 0.03], spacing=0.01)


def _queries(rng, n, d):
    return rng.uniform(-0.1, 0.1, size=(n, d))


@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_input_battery_gives_same_result(cloud3, rng, order):
    x = _queries(rng, 12, 3)
    base = sc.ssdf(cloud3, x, 1e-4, order=order)
    variants = {
        "list": x.tolist(),
        "float32": x.astype(np.float32),
        "fortran": np.asfortranarray(x),
        "strided": np.repeat(x, 2, axis=0)[::2],
        "transposed": np.ascontiguousarray(x.T).T,
        "byteswapped": x.astype(">f8"),
        "readonly": np.array(x, copy=True),
    }
    variants["readonly"].flags.writeable = False
    for name, v in variants.items():
        r = sc.ssdf(cloud3, v, 1e-4, order=order)
        expect = (
            base
            if name != "float32"
            else sc.ssdf(cloud3, x.astype(np.float32).astype(float), 1e-4, order=order)
        )
        for k in range(order + 1):
            np.testing.assert_array_equal(r[k], expect[k], err_msg=name)


def test_integer_input(cloud2):
    xi = np.array([[1, 0], [0, 0], [-1, 2]])
    r = sc.ssdf(cloud2, xi, 1e-4, order=1)
    e = sc.ssdf(cloud2, xi.astype(float), 1e-4, order=1)
    np.testing.assert_array_equal(r.phi, e.phi)
    np.testing.assert_array_equal(r.grad, e.grad)


@pytest.mark.parametrize("shape", [(0, 2), (2,), (4, 5, 2), (1, 0, 2)])
def test_shapes(
    cloud2,
    rng,
    shape,
):
    x = rng.uniform(-0.1, 0.1, size=shape)
    r = sc.ssdf(cloud2, x, 1e-4, order=3)
    b = shape[:-1]
    assert r.phi.shape == b and r.grad.shape == b + (2,)
    assert r.hess.shape == b + (2, 2) and r.d3.shape == b + (2, 2, 2)
    assert all(a.dtype == np.float64 for a in r)


def test_fields_above_order_are_none(cloud2):
    for order in range(4):
        r = sc.ssdf(cloud2, [[0.1, 0.0]], 1e-4, order=order)
        assert isinstance(r, sc.SSDF)
        assert all(f is not None for f in r[: order + 1])
        assert all(f is None for f in r[order + 1 :])


@pytest.mark.parametrize(
    "x, exc, match",
    [
        (np.zeros((3, 3)), ValueError, r"x must have shape \(\.\.\., 2\), got \(3, 3\)"),
        (np.zeros(()), ValueError, r"x must have shape \(\.\.\., 2\), got \(\)"),
        (np.zeros((3, 2), complex), TypeError, "x must be an array of real numbers"),
        (np.array([["a", "b"]]), TypeError, "x must be an array of real numbers"),
        (np.array([[object(), 1.0]]), TypeError, "x must be an array of real numbers"),
        ([[1.0, 2.0], [3.0]], TypeError, "x must be an array of real numbers"),
    ],
)
def test_bad_x(cloud2, x, exc, match):
    with pytest.raises(exc, match=match):
        sc.ssdf(cloud2, x, 1e-4)


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        ({"eps": 0.0}, ValueError, "eps must be finite and > 0, got 0.0"),
        ({"eps": -1e-3}, ValueError, "eps must be finite and > 0"),
        ({"eps": np.nan}, ValueError, "eps must be finite and > 0, got nan"),
        ({"eps": np.inf}, ValueError, "eps must be finite and > 0, got inf"),
        ({"eps": "1e-3"}, TypeError, "eps must be a real number, got str"),
        ({"eps": None}, TypeError, "eps must be a real number"),
        ({"order": 4}, ValueError, r"order must be in 0\.\.3, got 4"),
        ({"order": -1}, ValueError, r"order must be in 0\.\.3, got -1"),
        ({"order": 1.0}, TypeError, "order must be an integer, got float"),
        ({"order": True}, TypeError, "order must be an integer, got bool"),
        ({"num_threads": 0}, ValueError, "num_threads must be in 1..256, got 0"),
        ({"num_threads": 2.5}, TypeError, "num_threads must be an integer"),
        ({"isa": "sse9"}, ValueError, "isa must be one of"),
    ],
)
def test_bad_parameters(cloud2, kw, exc, match):
    args = {"eps": 1e-4}
    args.update(kw)
    with pytest.raises(exc, match=match):
        sc.ssdf(cloud2, [[0.1, 0.0]], **args)


def test_bad_cloud_type():
    with pytest.raises(TypeError, match="cloud must be a PointCloud, got ndarray"):
        sc.ssdf(np.zeros((3, 2)), [[0.0, 0.0]], 1e-3)


def test_unsupported_isa_is_refused_not_run(cloud2):
    supported = sc.build_info()["isa_supported"]
    for name in ("generic", "avx2", "avx512"):
        if name in supported:
            sc.ssdf(cloud2, [[0.1, 0.0]], 1e-4, isa=name)
        else:
            with pytest.raises(ValueError, match=f"isa {name} is not supported"):
                sc.ssdf(cloud2, [[0.1, 0.0]], 1e-4, isa=name)


def test_env_isa(monkeypatch, cloud2):
    monkeypatch.setenv("SOFTCONTACT_ISA", "generic")
    assert sc.build_info()["isa_default"] == "generic"
    r = sc.ssdf(cloud2, [[0.1, 0.0]], 1e-4)
    g = sc.ssdf(cloud2, [[0.1, 0.0]], 1e-4, isa="generic")
    np.testing.assert_array_equal(r.phi, g.phi)
    monkeypatch.setenv("SOFTCONTACT_ISA", "bogus")
    with pytest.raises(ValueError, match="SOFTCONTACT_ISA must be one of"):
        sc.ssdf(cloud2, [[0.1, 0.0]], 1e-4)


def test_inputs_never_modified(cloud3, rng):
    x = _queries(rng, 20, 3)
    x_copy = x.copy()
    pts, nrm, w = (cloud3.points.copy(), cloud3.normals.copy(), cloud3.weights.copy())
    sc.ssdf(cloud3, x, 1e-4, order=3)
    with pytest.raises(ValueError):
        sc.ssdf(cloud3, x, -1.0, order=3)
    np.testing.assert_array_equal(x, x_copy)
    np.testing.assert_array_equal(cloud3.points, pts)
    np.testing.assert_array_equal(cloud3.normals, nrm)
    np.testing.assert_array_equal(cloud3.weights, w)


def test_outputs_are_fresh_writeable_arrays(cloud2):
    a = sc.ssdf(cloud2, [[0.1, 0.0]], 1e-4, order=1)
    b = sc.ssdf(cloud2, [[0.1, 0.0]], 1e-4, order=1)
    assert a.phi.flags.writeable and a.phi.flags.c_contiguous
    assert not np.shares_memory(a.grad, b.grad)


def test_nan_query_propagates_per_row(cloud3):
    x = np.array([[0.1, 0.0, 0.0], [np.nan, 0.0, 0.0], [0.0, np.inf, 0.0], [0.0, 0.0, 0.2]])
    r = sc.ssdf(cloud3, x, 1e-4, order=3)
    for k in range(4):
        assert np.all(np.isnan(r[k][1])) and np.all(np.isnan(r[k][2]))
        assert np.all(np.isfinite(r[k][[0, 3]]))
    alone = sc.ssdf(cloud3, x[[0, 3]], 1e-4, order=3)
    for k in range(4):
        np.testing.assert_array_equal(r[k][[0, 3]], alone[k])


# ---- the private module re-checks what it receives (defence in depth) ----


def _packed(cloud):
    return _core.pack_cloud(cloud.points, cloud.normals, cloud.weights)


def test_core_pack_cloud_errors():
    p = np.zeros((3, 2))
    n = np.tile([1.0, 0.0], (3, 1))
    w = np.ones(3)
    with pytest.raises(ValueError, match=r"points must have shape \(N, 2\) or \(N, 3\)"):
        _core.pack_cloud(np.zeros((3, 4)), n, w)
    with pytest.raises(ValueError, match=r"normals must have shape \(N, 2\)"):
        _core.pack_cloud(p, np.zeros((3, 3)), w)
    with pytest.raises(ValueError, match="matching rows"):
        _core.pack_cloud(p, n, np.ones(2))
    with pytest.raises(ValueError, match="matching rows"):
        _core.pack_cloud(np.zeros((0, 2)), np.zeros((0, 2)), np.ones(0))
    with pytest.raises(ValueError, match="must be finite"):
        _core.pack_cloud(np.array([[np.nan, 0], [0, 0], [0, 0]]), n, w)
    with pytest.raises(ValueError, match="weights must be > 0"):
        _core.pack_cloud(p, n, np.array([1.0, 0.0, 1.0]))
    with pytest.raises(TypeError, match="points must be an array of float64"):
        _core.pack_cloud(p.astype(complex), n, w)


def test_core_ssdf_errors(cloud2):
    k = _packed(cloud2)
    n = len(cloud2)
    x = np.zeros((2, 2))
    with pytest.raises(ValueError, match="packed must be the 1-D buffer"):
        _core.ssdf(k[:-1], n, x, 1e-3)
    with pytest.raises(ValueError, match="packed must be the 1-D buffer"):
        _core.ssdf(k, n + 1, x, 1e-3)
    with pytest.raises(ValueError, match="packed must be the 1-D buffer"):
        _core.ssdf(k, n, np.zeros((2, 3)), 1e-3)
    with pytest.raises(ValueError, match=r"x must have shape \(N, 2\) or \(N, 3\)"):
        _core.ssdf(k, n, np.zeros(4), 1e-3)
    with pytest.raises(ValueError, match=r"eps must be in \[1e-30, 1e\+24\] m\^2, got 0.0"):
        _core.ssdf(k, n, x, 0.0)
    with pytest.raises(ValueError, match=r"eps must be in \[1e-30, 1e\+24\] m\^2, got -2.0"):
        _core.ssdf(k, n, x, eps=-2.0)
    with pytest.raises(ValueError, match="order must be in 0..3, got 7"):
        _core.ssdf(k, n, x, 1e-3, 7)
    with pytest.raises(ValueError, match=r"num_threads must be >= 1 \(or 0: every core\)"):
        _core.ssdf(k, n, x, 1e-3, 0, -1)
    with pytest.raises(ValueError, match="isa must be -1"):
        _core.ssdf(k, n, x, 1e-3, 0, 1, 9)
    with pytest.raises(ValueError, match="dense must be 0 or 1, got 2"):
        _core.ssdf(k, n, x, 1e-3, 0, 1, -1, 2)
    with pytest.raises(TypeError):
        _core.ssdf(k, n, x, "eps")
    with pytest.raises(TypeError, match="x must be an array of float64"):
        _core.ssdf(k, n, x.astype(complex), 1e-3)


def test_core_matches_public_and_clips_threads(cloud2, rng):
    x = _queries(rng, 50, 2)
    k = _packed(cloud2)
    a = _core.ssdf(k, len(cloud2), x, 1e-4, 3, 10_000)
    b = sc.ssdf(cloud2, x, 1e-4, order=3, num_threads=1)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)


def test_num_threads_none_is_every_available_core():
    """num_threads=None is passed as 0, which the binding reads as the cores this process
    may run on, at the time of the call (its CPU affinity)."""
    import os

    from softcontact import _validate

    assert _validate.as_num_threads(None) == 0
    assert _validate.as_num_threads(2) == 2
    want = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert _core.available_cores() == want


def test_gil_released(cloud3, rng):
    """Two Python threads calling ssdf concurrently give the single-thread results."""
    import threading

    x = _queries(rng, 3000, 3)
    expect = sc.ssdf(cloud3, x, 1e-4, order=2, num_threads=1)
    out = [None, None]

    def work(i):
        out[i] = sc.ssdf(cloud3, x, 1e-4, order=2, num_threads=1)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for r in out:
        for u, v in zip(r[:3], expect[:3], strict=True):
            np.testing.assert_array_equal(u, v)


def test_core_separation_errors(cloud2):
    k = _packed(cloud2)
    n = len(cloud2)
    q = np.zeros(3)
    with pytest.raises(ValueError, match=r"pose_a and pose_b must both have shape"):
        _core.separation(k, n, np.zeros(4), k, n, q, 1e-3)
    with pytest.raises(ValueError, match="packed_b must be the 1-D buffer"):
        _core.separation(k, n, q, k[:-2], n, q, 1e-3)
    with pytest.raises(ValueError, match=r"eps must be in \[1e-30, 1e\+24\] m\^2, got nan"):
        _core.separation(k, n, q, k, n, q, float("nan"))
    with pytest.raises(ValueError, match=r"order must be in 0\.\.2"):
        _core.separation(k, n, q, k, n, q, 1e-3, 3)
    with pytest.raises(ValueError, match="pose_a and pose_b must be finite"):
        _core.separation(k, n, np.array([np.inf, 0, 0]), k, n, q, 1e-3)
    with pytest.raises(ValueError, match="isa must be -1"):
        _core.separation(k, n, q, k, n, q, 1e-3, 0, 1, 5)


@pytest.mark.parametrize(
    "cloud",
    [
        sc.PointCloud.disk(0.015, 0.003),  # 32 samples: full groups
        sc.PointCloud.t_shape(spacing=0.003),  # 170: a partial last group
        sc.PointCloud.box([0.04, 0.04, 0.04], 0.04),  # 3D
        sc.PointCloud(
            np.array([[0.0, 0.0], [1.0, 2.0], [-3.0, 0.5]]),
            np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]),
            [1.0, 2.0, 0.5],
        ),
    ],
    ids=["disk32", "T170", "box3d", "three"],
)
def test_packed_group_boxes_of_a_cloud_without_an_index(cloud):
    """A cloud of 2 to 255 samples carries, after its header, the box and largest log
    weight of each group of 8 samples (sc_ssdf.h): exactly the bounds of its own samples,
    the padding left out.  The query-lane kernel skips groups by these boxes, so a box
    that missed a sample could drop a group that matters."""
    buf = _packed(cloud)
    D, n = cloud.dim, len(cloud)
    npad = -(-n // 8) * 8
    assert buf.size == (3 * D + 3) * npad + 8 + npad
    grp = buf[(3 * D + 3) * npad + 8 :].reshape(npad // 8, 8)
    pts, la = np.asarray(cloud.points), np.log(np.asarray(cloud.weights))
    for g in range(npad // 8):
        own = slice(8 * g, min(8 * g + 8, n))
        np.testing.assert_array_equal(grp[g, :D], pts[own].min(axis=0))
        np.testing.assert_array_equal(grp[g, 3 : 3 + D], pts[own].max(axis=0))
        np.testing.assert_array_equal(grp[g, D:3], 0.0)
        np.testing.assert_array_equal(grp[g, 3 + D : 6], 0.0)
        assert grp[g, 6] == la[own].max() and grp[g, 7] == 0.0


def test_core_out_of_range_numbers_are_value_errors(cloud2):
    """An int beyond its C type (an order, a count, a thread count) or a number too large
    for a float64 given to the compiled module directly is a ValueError, as the Python
    layer reports values out of range -- not the OverflowError of CPython's argument
    parsing or NumPy's conversion (found by tests/test_fuzz.py)."""
    import warnings
    from fractions import Fraction

    k = _packed(cloud2)
    n = len(cloud2)
    x = np.zeros((2, 2))
    q = np.zeros(3)
    P = sc.ContactParams()._astuple()
    huge = 2**2000
    cases = [
        lambda: _core.pack_cloud([[huge, 0.0]], [[1.0, 0.0]], [1.0]),
        lambda: _core.ssdf(k, n, x, 1e-3, 2**31),
        lambda: _core.ssdf(k, 2**70, x, 1e-3),
        lambda: _core.ssdf(k, n, x, huge),
        lambda: _core.ssdf(k, n, x, Fraction(10**400)),
        lambda: _core.ssdf(k, n, [[huge, 0.0]], 1e-3),
        lambda: _core.separation(k, n, q, k, n, q, 1e-3, 0, 2**40),
        lambda: _core.contact(k, n, q, q, k, n, q, q, (huge,) + P[1:]),
        lambda: _core.contact(k, n, q, [huge, 0, 0], k, n, q, q, P),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.SoftContactWarning)
        s = sc.Scene(dim=2)
        s.add_body(sc.PointCloud.disk(0.05, 0.01), mass=0.1)
        s.add_support("body0", friction=0.3)
        m = s.build(0.005)
    x0 = m.initial_state()
    cases += [
        lambda: _core.step(m._cap, x0, np.zeros(0), 2**31),
        lambda: _core.step(m._cap, [huge] * 6, np.zeros(0)),
        lambda: _core.rollout(m._cap, x0[None], np.zeros((1, 2, 0)), 0, 2**63),
        lambda: _core.model_eval(m._cap, 2**31, x0),
        lambda: _core.model_new(2**31, 0.005, *[None] * 11),
        lambda: _core.model_new(2, huge, *[None] * 11),
    ]
    for call in cases:
        with pytest.raises(ValueError):
            call()


@pytest.mark.parametrize("masses", [1.0, np.float64(0.1), np.zeros(()), None, np.zeros((0,))])
def test_core_model_new_refuses_masses_without_a_body_axis(masses):
    """model_new read the number of bodies from masses' first dimension before checking
    that masses had one: a 0-d array (a float, None) crashed the interpreter (found by
    tests/test_fuzz.py)."""
    d = sc.PointCloud.disk(0.05, 0.01)
    k = _packed(d)
    args = [2, 0.005, np.zeros(3), np.zeros(1), np.zeros(1), masses, np.zeros((1, 9))]
    args += [np.zeros((1, 7)), (k,), np.array([len(d)], float), (None,)]
    args += [np.zeros((0, 2)), np.zeros((0, 7))]
    with pytest.raises(ValueError, match="masses must have shape"):
        _core.model_new(*args)
