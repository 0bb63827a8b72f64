"""Batches: ``Model.step`` on (..., nx) states, ``Model.rollout`` with broadcast start
states and controls, ``softcontact.rollout`` over several models of one structure, and
``separation``/``contact`` on batches of poses -- each bit for bit a loop of single calls,
whatever the thread count; quaternions within 1e-6 of unit norm normalised (in a copy),
farther ones refused; concurrent calls from Python threads and calls in a fork child."""

import multiprocessing
import threading

import numpy as np
import pytest
import test_step as ts

import softcontact as sc
from softcontact import _core

pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


def _states(model, x, rng, n):
    """n start states near x: velocities perturbed."""
    return np.stack(
        [
            model.retract(x, np.concatenate([np.zeros(model.nv), 0.01 * rng.normal(size=model.nv)]))
            for _ in range(n)
        ]
    )


def _controls(model, u, rng, shape):
    return u + 0.2 * np.abs(u).max(initial=0.0) * rng.normal(size=shape + (model.nu,))


def _same(a, b, fields):
    for f in fields:
        va, vb = getattr(a, f), getattr(b, f)
        assert (va is None) == (vb is None), f
        if va is not None:
            np.testing.assert_array_equal(va, vb, err_msg=f)


# ---- Model.step ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["act2", "actbox", "boxball"])
@pytest.mark.parametrize("order", [0, 1, 2])
def test_batched_step_equals_a_loop(rng, name, order):
    model, x, u = ts._setup(name)
    X = _states(model, x, rng, 6).reshape(2, 3, model.nx)
    Uc = _controls(model, u, rng, (2, 3))
    params = order == 1
    r = model.step(X, Uc, order=order, params=params, num_threads=2)
    n2 = 2 * model.nv
    assert r.x_next.shape == (2, 3, model.nx)
    if order >= 1:
        assert r.dx_dx.shape == (2, 3, n2, n2) and r.dx_du.shape == (2, 3, n2, model.nu)
    if order == 2:
        assert r.d2x_dx2.shape == (2, 3, n2, n2, n2)
    for i in range(2):
        for j in range(3):
            one = model.step(X[i, j], Uc[i, j], order=order, params=params)
            for f in sc.StepResult._fields:
                v = getattr(r, f)
                assert (v is None) == (getattr(one, f) is None), f
                if v is not None:
                    np.testing.assert_array_equal(v[i, j], getattr(one, f), err_msg=f)
    # the thread count changes nothing
    _same(r, model.step(X, Uc, order=order, params=params, num_threads=1), sc.StepResult._fields)


def test_batched_step_broadcasts_states_and_controls(rng):
    model, x, u = ts._setup("actbox")
    X = _states(model, x, rng, 4)
    Uc = _controls(model, u, rng, (4,))
    shared_u = model.step(X, u, order=1)  # u (nu,) for every state
    shared_x = model.step(x, Uc, order=1)  # x (nx,) for every control
    grid = model.step(X[:, None], Uc[None, :3], order=1)  # (4, 1) x (1, 3)
    assert shared_u.x_next.shape == (4, model.nx) and shared_x.x_next.shape == (4, model.nx)
    assert grid.dx_du.shape == (4, 3, 12, 6)
    for i in range(4):
        np.testing.assert_array_equal(shared_u.x_next[i], model.step(X[i], u).x_next)
        np.testing.assert_array_equal(shared_x.x_next[i], model.step(x, Uc[i]).x_next)
        for j in range(3):
            np.testing.assert_array_equal(grid.dx_du[i, j], model.step(X[i], Uc[j], 1).dx_du)
    # no controls: u None with a batch of states
    mb, xb, _ = ts._setup("boxball")
    Xb = _states(mb, xb, rng, 3)
    r = mb.step(Xb)
    for i in range(3):
        np.testing.assert_array_equal(r.x_next[i], mb.step(Xb[i]).x_next)
    assert mb.step(Xb[:0]).x_next.shape == (0, mb.nx)


def test_batched_step_errors_name_the_item(rng):
    model, x, u = ts._setup("actbox")
    X = np.stack([x, x, x])
    X[2, model.nq] = 2e8  # beyond the valid range of velocities
    with pytest.raises(ValueError, match=r"^x\[2\]: the velocity of 'box'"):
        model.step(X, u)
    U2 = np.stack([u, u])
    U2[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"^u\[1\] must be finite"):
        model.step(x, U2)
    with pytest.raises(ValueError, match="x and u must have leading dimensions that broadcast"):
        model.step(np.stack([x, x, x]), U2)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., 13\)"):
        model.step(np.zeros((2, 12)), u)
    big = np.stack([u, u])
    big[1, 0] = 1e30  # the largest force: the new velocity diverges
    with pytest.raises(sc.DivergenceError, match=r"item 1: step diverged"):
        model.step(np.stack([x, x]), big)


# ---- Model.rollout: broadcasting ----------------------------------------------------------
@pytest.mark.parametrize(
    "xshape, ushape",
    [
        ((), (4,)),  # one start state (nx,), controls (B, T, nu)
        ((1,), (4,)),  # (1, nx) with (B, T, nu)
        ((4,), ()),  # (B, nx) with one control sequence (T, nu)
        ((4,), (1,)),  # (B, nx) with (1, T, nu)
        ((4, 1), (1, 3)),  # an outer product of start states and control sequences
        ((2, 1), (3,)),
        ((4,), (4,)),  # no broadcasting
    ],
)
def test_rollout_broadcasting_equals_single_rollouts(rng, xshape, ushape):
    model, x, u = ts._setup("act2")
    T = 6
    nxs, nus = int(np.prod(xshape)), int(np.prod(ushape))
    X0 = _states(model, x, rng, nxs).reshape(xshape + (model.nx,))
    Uc = _controls(model, u, rng, ushape + (T,))
    X0c, Ucc = X0.copy(), Uc.copy()
    r = model.rollout(X0, Uc, order=1, num_threads=2)
    lead = np.broadcast_shapes(xshape, ushape)
    assert r.states.shape == lead + (T + 1, model.nx) and r.status.shape == lead
    xb = np.broadcast_to(X0, lead + (model.nx,))
    ub = np.broadcast_to(Uc, lead + (T, model.nu))
    for idx in np.ndindex(*lead):
        one = model.rollout(xb[idx], ub[idx], order=1)
        for f in sc.Rollout._fields:
            np.testing.assert_array_equal(getattr(r, f)[idx], getattr(one, f), err_msg=f)
    one_thread = model.rollout(X0, Uc, order=1, num_threads=1)
    _same(r, one_thread, sc.Rollout._fields)
    # inputs untouched
    np.testing.assert_array_equal(X0, X0c)
    np.testing.assert_array_equal(Uc, Ucc)
    assert nxs and nus


def test_rollout_broadcast_inputs_are_not_copied(rng, monkeypatch):
    """A broadcast start state or control sequence reaches the C core as its own rows
    (index maps), not repeated."""
    model, x, u = ts._setup("act2")
    Uc = _controls(model, u, rng, (1, 5))
    seen = {}
    real = _core.rollout_batch

    def spy(models, B, x0, xi, U, ui, mi, *args):
        seen.update(B=B, x0=x0.shape, U=U.shape, xi=xi, ui=ui)
        return real(models, B, x0, xi, U, ui, mi, *args)

    monkeypatch.setattr(_core, "rollout_batch", spy)
    X0 = _states(model, x, rng, 50)
    model.rollout(X0, Uc)
    assert seen["B"] == 50 and seen["x0"] == (50, model.nx) and seen["U"] == (1, 5, model.nu)
    assert seen["xi"] is None and np.all(seen["ui"] == 0)


def test_rollout_shape_errors():
    model, x, u = ts._setup("actbox")
    with pytest.raises(ValueError, match=r"x0 must have shape \(\.\.\., 13\) with leading"):
        model.rollout(np.stack([x, x, x]), np.zeros((2, 4, model.nu)))
    with pytest.raises(ValueError, match=r"U must have shape \(\.\.\., T, 6\), got None"):
        model.rollout(x, None, T=3)
    with pytest.raises(ValueError, match=r"T must equal the number of steps of U \(4\)"):
        model.rollout(x, np.zeros((4, model.nu)), T=5)


# ---- rollout without controls -------------------------------------------------------------
def test_rollout_without_controls_takes_T(rng):
    model, x, _ = ts._setup("boxball")  # 3D, no controls
    assert model.nu == 0
    X0 = _states(model, x, rng, 3)
    r = model.rollout(X0, None, T=5, order=1)
    assert r.states.shape == (3, 6, model.nx) and r.dx_du.shape == (3, 5, 2 * model.nv, 0)
    same = model.rollout(X0, np.zeros((3, 5, 0)), order=1)
    _same(r, same, sc.Rollout._fields)
    one = model.rollout(x, T=4)
    xk = x
    for k in range(4):
        xk = model.step(xk).x_next
        np.testing.assert_array_equal(one.states[k + 1], xk)
    np.testing.assert_array_equal(sc.rollout(model, x, None, T=4).states, one.states)
    with pytest.raises(ValueError, match="^T must be given when U is None"):
        model.rollout(x, None)
    with pytest.raises(ValueError, match="T must be >= 0"):
        model.rollout(x, None, T=-1)
    with pytest.raises(TypeError, match="T must be an integer"):
        model.rollout(x, None, T=2.0)


# ---- several models -----------------------------------------------------------------------
def _variants():
    """Three actbox models of one structure: masses, friction and damping differ."""
    a = ts._setup("actbox")
    b = ts._setup("actbox", **{"box.mass": 0.3, "contact(box,floor).friction": 0.2})
    c = ts._setup("actbox", **{"contact(box,floor).damping": 1.0, "box.Ixx": 1.5e-5})
    return [m for m, _, _ in (a, b, c)], a[1], a[2]


def test_rollout_of_several_models_equals_per_model_rollouts(rng):
    models, x, u = _variants()
    T = 5
    Uc = _controls(models[0], u, rng, (3, T))
    X0 = _states(models[0], x, rng, 3)
    cases = [
        (x, Uc),  # one start state for all
        (X0, Uc),  # one per model
        (X0, Uc[0]),  # one control sequence for all
        (X0[:1], Uc[:1]),
    ]
    for x0, U_ in cases:
        r = sc.rollout(models, x0, U_, order=1, num_threads=2)
        assert r.states.shape == (3, T + 1, models[0].nx)
        xb = np.broadcast_to(x0, (3, models[0].nx))
        ub = np.broadcast_to(U_, (3, T, models[0].nu))
        for i, m in enumerate(models):
            _same(
                sc.Rollout(*(None if v is None else v[i] for v in r)),
                m.rollout(xb[i], ub[i], order=1),
                sc.Rollout._fields,
            )
        _same(r, sc.rollout(models, x0, U_, order=1, num_threads=1), sc.Rollout._fields)
    # the models differ: so do their trajectories
    r = sc.rollout(models, x, Uc[0])
    assert not np.array_equal(r.states[0], r.states[1])
    # one model in a list: a leading dimension of 1
    assert sc.rollout(models[:1], x, Uc).states.shape == (3, T + 1, models[0].nx)
    # a model list broadcast against more start states: (M,) with (2, 1) -> (2, M)
    r2 = sc.rollout(models, X0[:2, None], Uc[0])
    assert r2.states.shape == (2, 3, T + 1, models[0].nx)
    np.testing.assert_array_equal(r2.states[1, 2], models[2].rollout(X0[1], Uc[0]).states)


def test_rollout_of_models_that_differ_in_structure():
    models, x, u = _variants()
    other = ts._setup("boxball")[0]
    act2 = ts._setup("act2")[0]
    with pytest.raises(ValueError, match=r"models\[1\], models\[3\] differ from models\[0\]"):
        sc.rollout([models[0], other, models[1], act2], x, np.zeros((4, 2, 6)))
    with pytest.raises(ValueError, match=r"models\[1\] differs from models\[0\] \(models\[1\]"):
        sc.rollout([models[0], other], x, np.zeros((2, 2, 6)))
    with pytest.raises(TypeError, match=r"models\[1\] must be a Model"):
        sc.rollout([models[0], "model"], x, np.zeros((2, 2, 6)))
    with pytest.raises(ValueError, match="models must hold at least one Model"):
        sc.rollout([], x, np.zeros((2, 2, 6)))
    with pytest.raises(ValueError, match="broadcast against U's"):
        sc.rollout(models, x, np.zeros((2, 2, 6)))
    # the binding refuses them too
    with pytest.raises(ValueError, match=r"models\[1\] differs in structure"):
        _core.rollout_batch(
            (models[0]._cap, other._cap), 2, x[None], None, np.zeros((1, 2, 6)), None, None
        )
    with pytest.raises(ValueError, match="x_index must hold indices in"):
        _core.step_batch((models[0]._cap,), 1, x[None], np.array([1]), u[None], None, None)
    with pytest.raises(TypeError):
        _core.step_batch((models[0]._cap,), 1, x[None], np.array([0.0]), u[None], None, None)


# ---- quaternions near unit norm -----------------------------------------------------------
def _rounded(x, nq):
    """x with its quaternions rounded through float32 (norms ~1e-8 off) and the same state
    normalised as the library does (each quaternion divided by its norm)."""
    xr = x.copy()
    xr[:nq] = x[:nq].astype(np.float32).astype(float)
    q = xr[:nq].reshape(-1, 7)[:, 3:]
    norm = np.sqrt(q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1] + q[:, 2] * q[:, 2] + q[:, 3] * q[:, 3])
    xn = xr.copy()
    xn[:nq].reshape(-1, 7)[:, 3:] = q / norm[:, None]
    return xr, xn, norm


def test_a_float32_rounded_quaternion_is_normalised():
    model, x, u = ts._setup("boxball")
    xr, xn, norm = _rounded(x, model.nq)
    assert np.any(np.abs(norm - 1.0) > sc._core.UNIT_TOL) and np.all(np.abs(norm - 1) < 1e-6)
    keep = xr.copy()
    for order in (0, 1, 2):
        _same(model.step(xr, order=order), model.step(xn, order=order), sc.StepResult._fields)
    np.testing.assert_array_equal(xr, keep)  # never modified
    # batched step, rollout (its first state is the normalised one), several models
    np.testing.assert_array_equal(model.step(np.stack([xr, x])).x_next[0], model.step(xn).x_next)
    r = model.rollout(np.stack([xr, x]), None, T=3)
    np.testing.assert_array_equal(r.states[0], model.rollout(xn, None, T=3).states)
    np.testing.assert_array_equal(r.states[0, 0], xn)
    np.testing.assert_array_equal(xr, keep)
    assert model.energy(xr) == model.energy(xn)


def test_a_quaternion_1e5_off_is_refused():
    model, x, u = ts._setup("actbox")
    bad = x.copy()
    bad[3:7] *= 1 + 1e-5
    for call in (
        lambda: model.step(bad, u),
        lambda: model.step(bad, u, order=1, num_threads=1),
        lambda: model.rollout(bad, u[None]),
    ):
        with pytest.raises(ValueError, match=r"x0?: the quaternion of 'box' is not unit"):
            call()
    with pytest.raises(ValueError, match=r"^x\[1\]: the quaternion of 'box' is not unit"):
        model.step(np.stack([x, bad]), u)
    with pytest.raises(ValueError, match=r"^x: the quaternion of 'box' is not unit"):
        model.step(bad, np.stack([u, u]))  # one state for a batch of controls


def test_near_unit_poses_of_separation_and_contact():
    ball = ts.BALL
    pa = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    pb = np.array([0.036, 0.002, 0.0, *(np.array([0.9, 0.1, -0.3, 0.2]) / np.sqrt(0.95))])
    pr = pb.copy()
    pr[3:] = pb[3:].astype(np.float32).astype(float)
    n = np.sqrt(pr[3] * pr[3] + pr[4] * pr[4] + pr[5] * pr[5] + pr[6] * pr[6])
    assert sc._core.UNIT_TOL < abs(n - 1) < 1e-6
    pn = pr.copy()
    pn[3:] = pr[3:] / n
    keep = pr.copy()
    s1 = sc.separation(ball, pa, ball, pr, eps=1e-5, order=1)
    _same(s1, sc.separation(ball, pa, ball, pn, eps=1e-5, order=1), sc.Separation._fields)
    c1 = sc.contact(ball, pa, np.zeros(6), ball, pr, np.zeros(6), order=1)
    _same(c1, sc.contact(ball, pa, np.zeros(6), ball, pn, np.zeros(6), order=1), ["jacobian"])
    np.testing.assert_array_equal(pr, keep)
    far = pb.copy()
    far[3:] *= 1 + 1e-5
    with pytest.raises(ValueError, match=r"pose_b must hold a unit quaternion"):
        sc.separation(ball, pa, ball, far, eps=1e-5)
    with pytest.raises(ValueError, match=r"pose_b must hold a unit quaternion"):
        sc.contact(ball, pa, np.zeros(6), ball, far, np.zeros(6))


# ---- separation and contact on batches of poses -------------------------------------------
@pytest.mark.parametrize("order", [0, 1, 2])
def test_batched_separation_and_contact_equal_loops(rng, order):
    ball = ts.BALL
    pa = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    pb = np.tile(pa, (2, 3, 1))
    pb[..., :3] = [0.036, 0.0, 0.0] + 0.002 * rng.normal(size=(2, 3, 3))
    vb = 0.05 * rng.normal(size=(3, 6))
    s = sc.separation(ball, pa, ball, pb, eps=1e-5, order=order, num_threads=2)
    c = sc.contact(ball, pa[None, None], np.zeros(6), ball, pb, vb, order=order, num_threads=2)
    assert s.phi.shape == (2, 3, 2 * len(ball)) and c.energy.shape == (2, 3)
    for idx in np.ndindex(2, 3):
        _same(
            sc.Separation(*(None if v is None else v[idx] for v in s)),
            sc.separation(ball, pa, ball, pb[idx], eps=1e-5, order=order),
            sc.Separation._fields,
        )
        one = sc.contact(ball, pa, np.zeros(6), ball, pb[idx], vb[idx[1]], order=order)
        assert isinstance(one.energy, float)
        _same(
            sc.Contact(*(None if v is None else v[idx] for v in c)),
            one,
            sc.Contact._fields,
        )
    with pytest.raises(ValueError, match="pose_a and pose_b must have leading dimensions"):
        sc.separation(ball, np.tile(pa, (4, 1)), ball, pb, eps=1e-5)
    with pytest.raises(ValueError, match=r"^item 1, 0: pose_b must be finite"):
        bad = pb.copy()
        bad[1, 0, 0] = np.nan
        sc.separation(ball, pa, ball, bad, eps=1e-5)


# ---- threads: concurrent callers, a fork child, thread counts -----------------------------
def test_concurrent_callers_get_the_same_bits(rng):
    model, x, u = ts._setup("act2")
    X0 = _states(model, x, rng, 8)
    Uc = _controls(model, u, rng, (8, 5))
    want = model.rollout(X0, Uc, order=1, num_threads=1)
    got, errors = [], []

    def work():
        try:
            for _ in range(5):
                got.append(model.rollout(X0, Uc, order=1, num_threads=2))
                got.append(model.step(X0, Uc[:, 0], order=1, num_threads=2))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    step = model.step(X0, Uc[:, 0], order=1, num_threads=1)
    for r in got:
        _same(r, want if isinstance(r, sc.Rollout) else step, type(r)._fields)


def _child(conn):
    model, x, u = ts._setup("act2")
    X0 = np.stack([x] * 4)
    U_ = np.tile(u, (4, 3, 1))
    conn.send(model.rollout(X0, U_, order=1, num_threads=2).states)
    conn.close()


# JAX, when a test before imported it, warns at every fork that a child of its threads
# may deadlock; the children here never touch JAX
_JAX_FORK = pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning")


@_JAX_FORK
def test_a_fork_child_runs_a_parallel_rollout():
    model, x, u = ts._setup("act2")
    X0 = np.stack([x] * 4)
    U_ = np.tile(u, (4, 3, 1))
    want = model.rollout(X0, U_, order=1, num_threads=2).states  # threads used here first
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_child, args=(child,))
    p.start()
    assert parent.poll(60), "the fork child did not answer"
    got = parent.recv()
    p.join(60)
    assert p.exitcode == 0
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("threads", [1, 2, 3, 7, None])
def test_results_do_not_depend_on_the_thread_count(rng, threads):
    model, x, u = ts._setup("actbox")
    X0 = _states(model, x, rng, 5)
    Uc = _controls(model, u, rng, (5, 3))
    r = model.rollout(X0, Uc, order=1, num_threads=threads)
    _same(r, model.rollout(X0, Uc, order=1, num_threads=1), sc.Rollout._fields)
    s = model.step(X0, Uc[:, 0], order=2, num_threads=threads)
    _same(s, model.step(X0, Uc[:, 0], order=2, num_threads=1), sc.StepResult._fields)


@_JAX_FORK
def test_fork_while_another_thread_runs_on_the_pool():
    """A fork child of a process whose pool is busy (another thread's rollout) runs its own
    parallel rollouts: it leaves the copied pool alone and starts a fresh one."""
    model, x, u = ts._setup("act2")
    X0 = np.stack([x] * 4)
    U_ = np.tile(u, (4, 3, 1))
    want = model.rollout(X0, U_, order=1, num_threads=1).states
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            model.rollout(X0, U_, order=1, num_threads=3)

    th = threading.Thread(target=spin)
    th.start()
    try:
        ctx = multiprocessing.get_context("fork")
        for _ in range(3):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_child, args=(child,))
            p.start()
            assert parent.poll(60), "the fork child did not answer"
            np.testing.assert_array_equal(parent.recv(), want)
            p.join(60)
            assert p.exitcode == 0
    finally:
        stop.set()
        th.join()


def test_threads_per_call_give_the_same_bits(rng):
    """The pool off (threads started per call, _core._thread_pool(False)): the same bits."""
    model, x, u = ts._setup("actbox")
    X0 = _states(model, x, rng, 6)
    Uc = _controls(model, u, rng, (6, 3))
    with_pool = model.rollout(X0, Uc, order=1, num_threads=3)
    was = _core._thread_pool(False)
    try:
        per_call = model.rollout(X0, Uc, order=1, num_threads=3)
    finally:
        _core._thread_pool(was)
    assert was is True
    _same(with_pool, per_call, sc.Rollout._fields)
