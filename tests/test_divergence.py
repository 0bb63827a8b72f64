"""Divergence is reported, never returned as success (Scene.build's ``max_travel``,
Model.step's DivergenceError, Model.rollout's status and failed_step, and the trajectory
tools' infinite costs)."""

import threading
import warnings

import numpy as np
import pytest

import softcontact as sc
from softcontact import _core
from softcontact.optimize import ControlResidual, PoseResidual, TrajectoryProblem, fit_parameters

HALF, SPACING = 0.05, 0.02
RADIUS = float(np.sqrt(3) * HALF)  # the box's farthest sample from its centre


def _scene(stiffness=1e9, actuated=False, mass=1.0):
    """A box dropped on a floor; ``stiffness`` 1e9 makes the Euler step at 50 ms blow up."""
    s = sc.Scene(dim=3)
    s.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    s.add_body(
        sc.PointCloud.box([HALF] * 3, SPACING),
        mass=mass,
        inertia=np.eye(3) * mass * (2 * HALF) ** 2 / 6,
        pose=[0, 0, 0.06, 1, 0, 0, 0],
        name="box",
        actuated=actuated,
    )
    s.add_contact("floor", "box", sc.ContactParams(stiffness=stiffness))
    return s


def _build(scene, dt=0.05, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.SoftContactWarning)  # dt beyond the bound
        return scene.build(dt, **kw)


def _first_divergence(model, steps=100):
    x = model.initial_state()
    u = np.zeros(model.nu)
    for t in range(steps):
        try:
            x = model.step(x, u).x_next
        except sc.DivergenceError as e:
            return t, e
    raise AssertionError("the scene did not diverge")


def test_step_raises_naming_the_body_and_the_speed():
    model = _build(_scene())
    t, e = _first_divergence(model)
    assert isinstance(e, sc.NumericalError) and isinstance(e, ArithmeticError)
    assert (e.body, e.quantity) == ("box", "speed")
    # the documented limit: max_travel (100) radii per step
    assert e.limit == pytest.approx(100 * RADIUS / 0.05, rel=1e-12)
    v = e.x_next[model.nq : model.nq + 3]
    assert e.value == pytest.approx(np.linalg.norm(v), rel=1e-15) and e.value > e.limit
    assert "'box'" in str(e) and "speed" in str(e) and "max_travel" in str(e)
    # the state before was accepted: the step from it is the one that failed
    x = model.initial_state()
    for _ in range(t):
        x = model.step(x).x_next
    assert np.linalg.norm(x[model.nq : model.nq + 3]) <= e.limit
    # every order reports it, with the same new state
    for order in (1, 2):
        with pytest.raises(sc.DivergenceError) as info:
            model.step(x, order=order)
        np.testing.assert_array_equal(info.value.x_next, e.x_next)
    with pytest.raises(sc.DivergenceError):  # the slow path of the arguments' checks
        model.step(list(x))


def test_rollout_reports_the_first_failing_step_including_the_last():
    model = _build(_scene())
    t, e = _first_divergence(model)
    for T in (t + 1, t + 5):  # T = t + 1: the last step is the one that fails
        r = model.rollout(model.initial_state(), np.zeros((2, T, 0)), order=1)
        np.testing.assert_array_equal(r.status, [_core.SC_EDIVERGED] * 2)
        np.testing.assert_array_equal(r.failed_step, [t, t])
        np.testing.assert_array_equal(r.states[0, t + 1], e.x_next)
        assert np.all(np.isfinite(r.states[0, : t + 2]))
        assert np.all(np.isnan(r.states[0, t + 2 :]))
        assert np.all(np.isfinite(r.dx_dx[0, : t + 1]))
        assert np.all(np.isnan(r.dx_dx[0, t + 1 :]))
    ok = model.rollout(model.initial_state(), np.zeros((t, 0)))
    assert ok.status == 0 and ok.failed_step == -1


def test_max_travel_sets_the_limits_and_inf_keeps_only_finiteness():
    scene = _scene()
    model = _build(scene, max_travel=np.inf)
    r = model.rollout(model.initial_state(), np.zeros((30, 0)))
    assert r.status == 0 and r.failed_step == -1  # 1e5 m/s, finite: not tested
    assert np.linalg.norm(r.states[-1, model.nq : model.nq + 3]) > 1e3
    tight = _build(scene, dt=0.01, max_travel=2.0)
    x = tight.initial_state()
    limit = 2.0 * RADIUS / 0.01
    x[tight.nq] = 0.999 * limit  # at the limit the step passes (gravity adds 0.1 m/s)
    x[tight.nq + 2] = 0.0
    x[2] = 10.0  # far above the floor
    tight.step(x)
    x[tight.nq] = 1.001 * limit
    with pytest.raises(sc.DivergenceError, match="speed") as info:
        tight.step(x)
    assert info.value.limit == pytest.approx(limit, rel=1e-12)
    assert info.value.quantity == "speed"
    x[tight.nq] = 0.0
    x[tight.nq + 3] = 1.001 * 2.0 / 0.01  # spin: max_travel radians per step
    with pytest.raises(sc.DivergenceError, match="angular speed") as info:
        tight.step(x)
    assert info.value.quantity == "angular speed"
    assert info.value.limit == pytest.approx(200.0, rel=1e-12)
    x[tight.nq + 3] = 0.999 * 200.0
    tight.step(x)


@pytest.mark.parametrize(
    ("value", "error"),
    [(0.0, ValueError), (-1.0, ValueError), (np.nan, ValueError), ("1", TypeError)],
)
def test_max_travel_is_validated(value, error):
    with pytest.raises(error, match="max_travel"):
        _scene().build(0.01, max_travel=value)


def test_a_new_state_out_of_range_names_the_body_and_quantity():
    model = _build(_scene(actuated=True, mass=1e-3), dt=0.01, max_travel=np.inf)
    x = model.initial_state()
    # a force that would make the velocity infinite is refused (its valid range)
    with pytest.raises(ValueError, match="u: the control of 'box'"):
        model.step(x, np.array([1e308, 0, 0, 0, 0, 0]))
    # the largest force makes v = 1e31 m/s: past the valid range of velocities
    with pytest.raises(sc.DivergenceError) as info:
        model.step(x, np.array([1e30, 0, 0, 0, 0, 0]))
    e = info.value
    assert (e.body, e.quantity, e.limit) == ("box", "velocity", 1e8)
    assert e.value == pytest.approx(1e31, rel=1e-12)
    assert "valid range" in str(e) and "'box'" in str(e)
    # the next call blames nothing on the caller: the state it was given is valid
    np.testing.assert_array_equal(x, model.initial_state())


def test_kinematic_bodies_move_as_told():
    """Their velocities are controls, not results: no speed limit applies (only the valid
    range of velocities)."""
    s = sc.Scene(dim=3, gravity=[0, 0, 0])
    s.add_body(sc.PointCloud.box([HALF] * 3, SPACING), kind="kinematic", name="pusher")
    m = s.build(0.01)
    u = np.array([1e8, 0, 0, 0, 0, 0])  # 1e6 m per step, 10^7 radii
    np.testing.assert_array_equal(m.step(m.initial_state(), u).x_next[m.nq :], u)
    with pytest.raises(ValueError, match="u: the control of 'pusher'"):
        m.step(m.initial_state(), 10 * u)


def _problem(model, T=20):
    cost = [
        PoseResidual(model, "box", [0, 0, 0.05, 1, 0, 0, 0]),
        ControlResidual(model, weight=1e-3),
    ]
    return TrajectoryProblem(model, model.initial_state(), T, cost)


def test_trajectory_problem_gives_an_infinite_cost_and_raises_for_derivatives():
    model = _build(_scene(actuated=True))
    t, _ = _first_divergence(model)
    P = _problem(model, T=t + 3)
    U = np.zeros(P.size)
    assert P.fun(U) == np.inf
    assert np.all(P.residuals(U) == np.inf)
    assert P.residuals(U).shape == P.residuals(np.zeros(P.size) + 1e-9).shape
    for call in (P.jac, P.hess, P.residual_jac, P.states, P.value_and_grad):
        with pytest.raises(sc.DivergenceError, match=f"step {t} diverged"):
            call(U)
    with pytest.raises(sc.DivergenceError, match=f"step {t} diverged"):
        P.hessp(U, np.ones(P.size))
    assert P.batch_fun(np.stack([U, U]))[0] == np.inf
    # a sequence that holds the box still is finite
    hold = np.tile([0, 0, 9.81, 0, 0, 0], (t + 3, 1)).reshape(-1)
    assert np.isfinite(P.fun(hold)) and np.all(np.isfinite(P.jac(hold)))


def test_trajectory_problem_is_safe_to_share_between_threads():
    model = _build(_scene(stiffness=1e4, actuated=True), dt=0.01)
    P = _problem(model, T=10)
    rng = np.random.default_rng(0)
    Us = [rng.normal(scale=2.0, size=P.size) for _ in range(8)]
    serial = [TrajectoryProblem(model, P.x0, P.T, P.cost) for _ in Us]
    want = [(q.fun(U), q.jac(U)) for q, U in zip(serial, Us, strict=True)]
    got: dict = {}
    errors = []

    def work(k):
        try:
            for rep in range(15):
                i = (k + rep) % len(Us)
                f, g = P.fun(Us[i]), P.jac(Us[i])
                if f != want[i][0] or not np.array_equal(g, want[i][1]):
                    got[(k, rep)] = i
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and not got


def test_fit_parameters_names_a_divergence_at_the_initial_guess():
    def build(p):
        return _build(_scene(mass=float(p[0])))

    model = build([1.0])
    t, _ = _first_divergence(model)
    U = np.zeros((t + 2, 0))
    obs = np.zeros((t + 2, 3))
    with pytest.raises(sc.DivergenceError, match="p0"):
        fit_parameters(build, ["box.mass"], [1.0], model.initial_state(), U, obs)


def test_a_pickled_model_keeps_its_limits():
    import pickle

    model = _build(_scene(), dt=0.01, max_travel=2.0)
    again = pickle.loads(pickle.dumps(model))
    assert again.max_travel == 2.0
    np.testing.assert_array_equal(again._limits, model._limits)
    x = model.initial_state()
    x[2], x[model.nq] = 10.0, 1.001 * 2.0 * RADIUS / 0.01
    for m in (model, again):
        with pytest.raises(sc.DivergenceError, match="speed"):
            m.step(x)
