"""The push-T MPC controller (softcontact.tasks.push_t.mpc): its objective, candidate
pushes, collision-free moves, a closed-loop episode to success, the runner, and errors."""

import math

import numpy as np
import pytest
import shapely

from softcontact.optimize import TrajectoryProblem
from softcontact.tasks import push_t
from softcontact.tasks.push_t import mpc

pytest.importorskip("scipy")

FAST_SEED = 14  # an episode that succeeds in < 1 s of simulated time


@pytest.fixture(scope="module")
def task():
    return push_t.make(seed=3)


@pytest.fixture(scope="module")
def ctl(task):
    return mpc.Controller(task, horizon=40, block=10, replan=20)


@pytest.mark.parametrize("coast", [0.0, 0.8])
def test_batch_objective_equals_trajectory_problem(task, ctl, rng, coast):
    if coast:  # the final pose term at the T's pose coasted on for 0.8 s
        ctl = mpc.Controller(task, horizon=40, block=10, replan=20, coast=coast)
    x = np.array(task.x0)
    x[3:5] = [x[0], x[1] - 0.1]
    Z = rng.uniform(-0.3, 0.3, size=(3, ctl.horizon // ctl.block, 2))
    U = ctl.controls(Z)
    assert U.shape == (3, ctl.horizon, 3) and np.all(U[..., 2] == 0)
    np.testing.assert_array_equal(U[1, : ctl.block, :2], np.tile(Z[1, 0], (ctl.block, 1)))
    ro = task.model.rollout(x, U)
    J = ctl.batch_objective(ro.states, U)
    for b in range(3):
        ref = ctl.problem(x).fun(U[b])
        assert J[b] == pytest.approx(ref, rel=1e-12, abs=0)


def test_block_gradient_vs_central_differences(task, ctl, rng):
    """The refinement's gradient in the block variables (adjoint, summed over blocks)."""
    x = np.array(task.x0)
    x[3:5] = [x[0], x[1] - 0.1]
    prob = ctl.problem(x)
    z = rng.uniform(-0.2, 0.2, size=(ctl.horizon // ctl.block, 2))
    g = prob.jac(ctl.controls(z)).reshape(ctl.horizon, 3)[:, :2]
    g = g.reshape(-1, ctl.block, 2).sum(axis=1).reshape(-1)
    h = 1e-6
    for k in range(z.size):
        e = np.zeros(z.size)
        e[k] = h
        zf = z.reshape(-1)
        fd = (prob.fun(ctl.controls(zf + e)) - prob.fun(ctl.controls(zf - e))) / (2 * h)
        assert g[k] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_candidate_pushes_are_clear_and_inward(task, ctl):
    poly = task.t_polygon(task.x0[:3])
    cands = ctl.pushes(task.x0)
    assert len(cands) >= 10
    W = task.workspace
    for s, d in cands:
        assert np.linalg.norm(d) == pytest.approx(1.0, abs=1e-12)
        assert poly.distance(shapely.Point(s)) >= task.pusher_radius + 0.002 - 1e-12
        assert task.pusher_radius < s[0] < W - task.pusher_radius
        assert task.pusher_radius < s[1] < W - task.pusher_radius
        # moving along d, the pusher's centre reaches the T's surface after the standoff
        hit = s + d * (task.pusher_radius + ctl.standoff)
        assert poly.exterior.distance(shapely.Point(hit)) < 1e-9


def test_selected_push_lowers_the_objective(task, ctl):
    J, s, z = ctl.select(task.x0)
    x = np.array(task.x0)
    x[3:5] = s
    assert J == pytest.approx(ctl.problem(x).fun(ctl.controls(z)), rel=1e-12)
    x_rest = np.array(task.x0)
    x_rest[3:5] = s
    assert J < ctl.problem(x_rest).fun(np.zeros((ctl.horizon, 3)))


def test_objective_equals_trajectory_problem(task, ctl, rng):
    x = np.array(task.x0)
    x[3:5] = [x[0], x[1] - 0.1]
    z = rng.uniform(-0.3, 0.3, size=(ctl.horizon // ctl.block, 2))
    assert ctl.objective(x, z) == pytest.approx(
        ctl.problem(x).fun(ctl.controls(z)), rel=1e-12, abs=0
    )


def _estimate_reference(ctl, task, x, s, d, dist, centre=(0.0, 0.0), rho2=None):
    """The quasi-static estimate of one push, written out: rotate about the support's
    centre (``centre`` in the T's frame; default its area centroid) at rate
    (r x d) / rho^2 per unit of translation along d, until the contact point has
    advanced by the pusher's travel (capped by the speed box)."""
    if rho2 is None:
        poly = task.t_polygon(np.zeros(3))
        # rho^2 of the T's area about its centroid, from a fine grid over its bounding box
        g = np.linspace(-0.08, 0.08, 801)
        P = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
        inside = shapely.contains_xy(poly, P[:, 0], P[:, 1])
        rho2 = float(np.mean(np.sum(P[inside] ** 2, axis=1)))
    R = np.array([[math.cos(x[2]), -math.sin(x[2])], [math.sin(x[2]), math.cos(x[2])]])
    ctr = x[:2] + R @ np.asarray(centre)
    r = s + d * (ctl.radius + ctl.standoff) - ctr
    rxd = r[0] * d[1] - r[1] * d[0]
    K = ctl.horizon // ctl.block
    span = round(0.8 * K) * ctl.block * task.dt
    travel = min(dist / span, ctl.u_box) * span
    # contact advance = translation + rotation's share: a (1 + rxd^2 / rho^2) = advance
    a = travel / (1 + rxd**2 / rho2)
    th = a * rxd / rho2
    Rt = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    q = ctr + a * d + Rt @ (x[:2] - ctr)
    goal = task.goal
    return 0.5 * ctl.wp * np.sum((q - goal[:2]) ** 2) + ctl.wa * (1 - math.cos(x[2] + th - goal[2]))


def test_push_estimates(task, ctl):
    x = np.array(task.x0)
    cands = ctl.pushes(x)
    est = ctl.estimates(x, cands)
    assert est.shape == (len(cands) * len(ctl.push_distances),)
    k = 0
    for s, d in cands:
        for dist in ctl.push_distances:
            ref = _estimate_reference(ctl, task, x, s, d, dist)
            assert est[k] == pytest.approx(ref, rel=2e-3)
            k += 1
    # a ring support off the centroid (the T also swings about it), pushes the speed
    # box caps
    ring = push_t.make(seed=3, support_radius=0.05, support_x=0.01, support_y=-0.02)
    fast = mpc.Controller(ring, horizon=40, block=10, replan=20, push_distances=(0.05, 0.4))
    est = fast.estimates(x, cands)
    k = 0
    for s, d in cands:
        for dist in fast.push_distances:
            ref = _estimate_reference(fast, ring, x, s, d, dist, (0.01, -0.02), 0.05**2)
            assert est[k] == pytest.approx(ref, rel=1e-12)
            k += 1
    assert fast.estimates(x, []).shape == (0,)


def test_select_top_rolls_out_the_best_estimated_pushes(task):
    full = mpc.Controller(task, horizon=40, block=10, replan=20)
    top = mpc.Controller(task, horizon=40, block=10, replan=20, select_top=9)
    x = np.array(task.x0)
    cands = full.pushes(x)
    est = full.estimates(x, cands)
    # every push's objective, one rollout each, in the estimates' order
    K = full.horizon // full.block
    nb = round(0.8 * K)
    J = []
    for s, d in cands:
        for dist in full.push_distances:
            z = np.zeros((K, 2))
            z[:nb] = d * min(dist / (nb * full.block * task.dt), full.u_box)
            xs = np.array(x)
            xs[3:5] = s
            J.append(full.objective(xs, z))
    J = np.array(J)
    assert [c[0] for c in full.ranked(x)] == pytest.approx(np.sort(J), rel=1e-12)
    ranked_top = top.ranked(x, top=top.select_top)
    assert len(ranked_top) == 9
    best9 = np.argsort(est, kind="stable")[:9]
    assert [c[0] for c in ranked_top] == pytest.approx(np.sort(J[best9]), rel=1e-12)
    assert top.settings["select_top"] == 9 and full.settings["select_top"] is None
    with pytest.raises(ValueError, match="select_top"):
        mpc.Controller(task, select_top=0)


def test_paths_around_the_t_stay_clear(task, ctl):
    pose = task.x0[:3]
    poly = task.t_polygon(pose)
    cands = ctl.pushes(task.x0)
    p = np.array(task.x0[3:5])
    n_around = 0
    for s, _ in cands:
        path = ctl.path_to(p, s, pose)
        assert path is not None
        np.testing.assert_array_equal(path[-1], s)
        pts = [p] + list(path)
        n_around += len(path) > 1
        for a, b in zip(pts[:-1], pts[1:], strict=True):
            assert poly.distance(shapely.LineString([a, b])) >= task.pusher_radius
    assert n_around > 0  # some pushes need the way around


def test_a_pusher_inside_the_t_backs_out_through_the_nearest_edge(task, ctl):
    """A pusher whose centre lies inside the T (as a reset can leave it) leaves by the
    nearest edge: the first back-off point is just outside it, not across the T."""
    pose = np.array(task.x0[:3])
    poly = task.t_polygon(pose)
    inner = poly.buffer(-0.004)  # points 4 mm or more inside the outline
    checked = 0
    for f in np.linspace(0.05, 0.95, 7):
        p = np.asarray(inner.exterior.interpolate(f, normalized=True).coords[0])
        assert poly.contains(shapely.Point(p))
        q = np.asarray(shapely.shortest_line(poly.exterior, shapely.Point(p)).coords[0])
        backs = ctl._backoffs(p, pose, poly)
        assert backs
        b = backs[0]
        assert poly.distance(shapely.Point(b)) >= task.pusher_radius + 0.004
        # outward through the nearest edge: the move's part inside the T is the way to it
        assert np.dot(b - q, q - p) > 0
        inside = shapely.LineString([p, b]).intersection(poly).length
        assert inside <= np.hypot(*(q - p)) + 1e-9
        assert ctl.path_to(p, b, pose) is not None
        checked += 1
    assert checked == 7


@pytest.fixture(scope="module")
def episode():
    return mpc.run_episode(push_t.make(seed=FAST_SEED))


def test_episode_reaches_the_goal(episode):
    ep = episode
    task = push_t.make(seed=FAST_SEED)
    assert ep.success and ep.seed == FAST_SEED
    assert ep.coverage >= 0.95 and task.coverage(ep.states[-1, :3]) == ep.coverage
    # success is reported at the first step with coverage >= 0.95
    covs = task.coverage(ep.states[:-1, :3])
    assert np.all(covs < 0.95)
    assert ep.time == pytest.approx(len(ep.controls) * task.dt)
    assert len(ep.phases) == len(ep.controls) and set(ep.phases) <= {"move", "push"}
    assert ep.solve_times.size >= 1 and np.all(ep.solve_times > 0)
    # admissible controls, and the states are the model's rollout of them
    speed = np.hypot(ep.controls[:, 0], ep.controls[:, 1])
    assert np.all(speed <= task.u_max * (1 + 1e-12)) and np.all(ep.controls[:, 2] == 0)
    ro = task.model.rollout(task.x0, ep.controls)
    np.testing.assert_array_equal(ro.states, ep.states)


def test_short_optimization_lowers_cost_and_raises_coverage():
    """From a fixed seed's state with the pusher at the selected push, ten L-BFGS-B iterations
    with exact gradients lower the objective and bring the T closer to the goal."""
    from scipy.optimize import minimize

    task = push_t.make(seed=FAST_SEED)
    ctl = mpc.Controller(task, horizon=200, block=20)
    _, s, z0 = mpc.Controller(task).select(task.x0)
    x = np.array(task.x0)
    x[3:5] = s
    prob = ctl.problem(x)
    K = ctl.horizon // ctl.block

    def fg(z):
        v, g = prob.value_and_grad(ctl.controls(z))
        return v, g.reshape(ctl.horizon, 3)[:, :2].reshape(K, ctl.block, 2).sum(1).ravel()

    z = np.zeros(2 * K)
    z[:2] = z0[0]  # a short nudge in the selected direction
    J0 = fg(z)[0]
    cov0 = task.coverage(prob.states(ctl.controls(z))[-1, :3])
    res = minimize(
        fg,
        z,
        jac=True,
        method="L-BFGS-B",
        bounds=[(-ctl.u_box, ctl.u_box)] * z.size,
        options={"maxiter": 20},
    )
    cov1 = task.coverage(prob.states(ctl.controls(res.x))[-1, :3])
    # measured: J 0.993 -> 0.056 in 20 iterations (not yet converged), coverage 0.174 ->
    # 0.955
    assert res.status in (0, 1) and res.fun < 0.1 * J0  # converged or out of iterations
    assert cov1 > cov0 + 0.6


def test_evaluate_runs_seeds_in_order():
    got = []
    ev = mpc.evaluate([5, FAST_SEED], time_limit=0.3, callback=got.append, iterations=3)
    assert [e.seed for e in ev.episodes] == [5, FAST_SEED]
    assert [e.seed for e in got] == [5, FAST_SEED]
    for e in ev.episodes:
        assert e.time <= 0.3 + 1e-12
    assert 0.0 <= ev.success_rate <= 1.0
    text = ev.summary()
    assert "| 2 |" in text
    if ev.failures:
        assert "Failures: seed" in text


def test_inputs_are_not_modified(task, ctl):
    x = np.array(task.x0)
    x_copy = x.copy()
    ctl2 = mpc.Controller(task, horizon=40, block=10, replan=20, iterations=2)
    ctl2.act(x)
    np.testing.assert_array_equal(x, x_copy)


def test_errors(task):
    C = mpc.Controller
    with pytest.raises(TypeError, match="task"):
        C("push-T")
    with pytest.raises(TypeError, match="unknown setting.*'horizn'"):
        C(task, horizn=10)
    with pytest.raises(ValueError, match="block"):
        C(task, horizon=100, block=30)
    with pytest.raises(ValueError, match="replan"):
        C(task, horizon=40, block=10, replan=50)
    with pytest.raises(ValueError, match="horizon"):
        C(task, horizon=0)
    with pytest.raises(ValueError, match="switch"):
        C(task, switch=1.5)
    with pytest.raises(ValueError, match="move_speed"):
        C(task, move_speed=1.0)
    with pytest.raises(ValueError, match="push_distances"):
        C(task, push_distances=())
    with pytest.raises(ValueError, match="push_distances"):
        C(task, push_distances=(0.01, -0.02))
    with pytest.raises(ValueError, match="position_weight"):
        C(task, position_weight=math.nan)
    with pytest.raises(ValueError, match="x"):
        C(task).act(np.full(12, np.nan))
    with pytest.raises(ValueError, match="x"):
        C(task).act(np.zeros(5))
    with pytest.raises(ValueError, match="time_limit"):
        mpc.run_episode(task, time_limit=-1.0)
    with pytest.raises(TypeError, match="controller"):
        mpc.run_episode(task, controller="mpc")
    with pytest.raises(TypeError, match="either a controller or settings"):
        mpc.run_episode(task, controller=C(task), iterations=3)
    with pytest.raises(ValueError, match="jobs"):
        mpc.evaluate([0], jobs=0)
    with pytest.raises(ValueError, match="seed"):
        mpc.evaluate([-1])


def test_problem_is_a_trajectory_problem(task, ctl):
    p = ctl.problem(task.x0)
    assert isinstance(p, TrajectoryProblem) and p.T == ctl.horizon


def test_controller_refuses_concurrent_act(task):
    """Documented (Controller.act): one episode's plan per controller, so a call while
    another thread is inside act raises instead of interleaving two episodes."""
    ctl = mpc.Controller(task, horizon=40, block=10, replan=20, iterations=2)
    ctl._busy.acquire()  # as a thread inside act holds it
    try:
        with pytest.raises(RuntimeError, match="another thread"):
            ctl.act(task.x0)
    finally:
        ctl._busy.release()
    U, phase = ctl.act(task.x0)  # free again
    assert phase in ("move", "push") and U.shape[1] == 3 and np.all(np.isfinite(U))


def _block_best_three(ctl, x, monkeypatch):
    """Make the standoff points of the 3 best-estimated pushes from ``x`` unreachable
    (every other point reachable in one straight move); returns those points."""
    first = [c[1] for c in ctl.ranked(x, top=3)]
    monkeypatch.setattr(
        ctl,
        "path_to",
        lambda p, s, pose: None if any(np.array_equal(s, f) for f in first) else [s],
    )
    return first


def test_unreachable_standoff_points_are_skipped_next_time(task, monkeypatch):
    """With select_top, standoff points found unreachable are left out of the next
    selection's ranking while the T stays put, so another tick ranks other pushes; a T
    that moved forgets them."""
    ctl = mpc.Controller(task, horizon=40, block=10, replan=20, select_top=3)
    x = np.array(task.x0)
    first = _block_best_three(ctl, x, monkeypatch)
    sel, path = ctl._choose(x, math.inf)
    assert sel is None and path is None  # the three pushes' standoff points: unreachable
    sel, path = ctl._choose(x, math.inf)  # the next tick ranks the next three
    expect = ctl.ranked(x, top=3, skip=first)[0]
    assert not any(np.array_equal(sel[1], f) for f in first)
    assert sel[0] == expect[0] and path is not None
    # the memory is of where the T and the pusher were: a T that moved (or a pusher)
    # forgets it, and a small drift does not move its reference
    drift = np.array(x)
    drift[0] += 4e-4
    ctl._choose(drift, math.inf)
    np.testing.assert_array_equal(ctl._unreachable[0], x[:5])
    for j in (0, 3):
        moved = np.array(x)
        moved[j] += 0.01
        ctl._choose(moved, math.inf)
        np.testing.assert_array_equal(ctl._unreachable[0], moved[:5])
    with pytest.raises(ValueError, match="top"):
        ctl.ranked(x, top=0)
    with pytest.raises(ValueError, match="skip"):
        ctl.ranked(x, skip=[1.0, 2.0, 3.0])


def test_path_search_stops_at_the_deadline(task, monkeypatch):
    """A selection tries at most _PATH_TRIES + 1 standoff points for a path, and after
    the first none once its deadline has passed; the points tried are remembered as
    unreachable, the others are not."""
    import time

    ctl = mpc.Controller(task, horizon=40, block=10, replan=20)
    x = np.array(task.x0)
    calls = []
    monkeypatch.setattr(ctl, "path_to", lambda p, s, pose: calls.append(tuple(s)))
    assert ctl._choose(x, math.inf) == (None, None)
    assert len(calls) == mpc._PATH_TRIES + 1 == len(set(calls))
    ctl.reset()
    calls.clear()
    assert ctl._choose(x, math.inf, time.perf_counter() - 1.0) == (None, None)
    assert len(calls) == 1
    assert [tuple(k) for k in ctl._unreachable[1]] == calls
    # a tick of a controller with a deadline passes its end to the selection
    seen = []
    ctl = mpc.Controller(task, horizon=40, block=10, replan=20, deadline=0.01)
    monkeypatch.setattr(
        ctl, "_choose", lambda x, bound, t_end=None: (seen.append(t_end), (None, None))[1]
    )
    t0 = time.perf_counter()
    ctl.act(x)
    assert t0 < seen[0] <= time.perf_counter() + 0.01


def test_nothing_reachable_stands_still_and_selects_again_unbounded(task, monkeypatch):
    """A tick with no plan that finds no reachable push stands still without keeping a
    still plan, so the next tick selects again with no incumbent to beat: the first
    reachable push, however its objective compares with standing still."""
    ctl = mpc.Controller(task, horizon=40, block=10, replan=20, select_top=3)
    x = np.array(task.x0)
    first = _block_best_three(ctl, x, monkeypatch)
    U, phase = ctl.act(x)
    assert phase == "push" and U.shape == (ctl.replan, 3)
    np.testing.assert_array_equal(U, 0.0)
    assert ctl.plan is None and not ctl.path
    # standing still would score better than any push here: it must not bound the choice
    monkeypatch.setattr(ctl, "objective", lambda x, z: 0.0)
    U, phase = ctl.act(x)
    assert phase == "move" and ctl.path and ctl.plan is not None
    expect = ctl.ranked(x, top=3, skip=first)[0]
    np.testing.assert_array_equal(ctl.path[-1], expect[1])


def test_a_plan_under_which_nothing_moves_is_abandoned(task, monkeypatch):
    """After _IDLE ticks with the T and the pusher where they were, the selection has no
    incumbent to beat (its bound is infinite); the count starts again after it and on
    any motion."""
    ctl = mpc.Controller(task, horizon=40, block=10, replan=20, iterations=1)
    bounds = []
    monkeypatch.setattr(
        ctl, "_choose", lambda x, bound, t_end=None: (bounds.append(bound), (None, None))[1]
    )
    x = np.array(task.x0)
    ctl.plan = np.zeros((4, 2))  # standing still: the state given to act() never changes
    for _ in range(mpc._IDLE):
        ctl.act(x)
    assert all(math.isfinite(b) for b in bounds)  # selections at ticks 0, 5 and when stalled
    ctl.act(x)
    assert bounds[-1] == math.inf
    n = len(bounds)
    ctl.act(x)
    assert all(math.isfinite(b) for b in bounds[n:])
    moved = np.array(x)
    for _ in range(2 * mpc._IDLE):  # a T that keeps moving is never idle
        moved[0] += 2e-3
        ctl.act(moved)
    assert all(math.isfinite(b) for b in bounds[n:])


@pytest.mark.parametrize("block", [1, 5])
def test_a_move_that_ends_within_a_tick_starts_the_push(task, monkeypatch, block):
    """The tick in which a repositioning move ends fills its remaining whole blocks with
    the selected push's first blocks; the next tick refines the push warm started from
    the blocks not yet executed, with no selection in between; a move that fills its
    tick exactly leaves the whole push to the next tick."""
    ctl = mpc.Controller(task, horizon=40, block=block, replan=20, move_speed=0.1)
    x = np.array(task.x0)
    plan = np.arange(2 * ctl.horizon // block, dtype=float).reshape(-1, 2) * 1e-3
    chosen, seen = [], []

    def choose(x, bound, t_end=None):  # one push; at its standoff point nothing beats it
        chosen.append(bound)
        if np.hypot(*(target - x[3:5])) <= mpc._REACHED:
            return None, None
        return (0.0, target, plan), [target]

    def solve(x, z0, t_end=None):
        seen.append(np.array(z0))
        return z0, 0.0

    monkeypatch.setattr(ctl, "_choose", choose)
    monkeypatch.setattr(ctl, "_solve", solve)
    # 26.3 mm at 0.5 mm per 5 ms step: ticks of 20, 20 and 13 steps
    target = x[3:5] + np.array([0.0, 0.0263])
    for _ in range(2):
        U, phase = ctl.act(x)
        assert phase == "move" and U.shape == (20, 3) and ctl.path
        np.testing.assert_allclose(U[:, 1], 0.1)
        x[3:5] += U[:, :2].sum(axis=0) * task.dt
    U, phase = ctl.act(x)
    done = (20 - 13) // block  # whole blocks of the push in the arrival tick
    assert phase == "move" and not ctl.path and U.shape == (13 + done * block, 3)
    np.testing.assert_allclose(U[:12, 1], 0.1)
    np.testing.assert_allclose(U[13:], ctl.controls(plan)[: done * block])
    x[3:5] += U[:, :2].sum(axis=0) * task.dt
    U, phase = ctl.act(x)  # refines the push from its next block; no selection
    assert phase == "push" and len(chosen) == 1 and len(seen) == 1
    np.testing.assert_array_equal(seen[0][: len(plan) - done], plan[done:])
    # 9.8 mm: the move fills its tick (19 steps and a short one); the push starts whole
    ctl.reset()
    chosen.clear()
    seen.clear()
    target = x[3:5] + np.array([0.0, 0.0098])
    U, phase = ctl.act(x)
    assert phase == "move" and U.shape == (20, 3) and not ctl.path
    x[3:5] += U[:, :2].sum(axis=0) * task.dt
    U, phase = ctl.act(x)  # selects again, keeps the push and refines it from its start
    assert phase == "push" and len(chosen) == 2 and len(seen) == 1
    np.testing.assert_array_equal(seen[0], plan)


def test_realtime_settings_build_a_controller():
    """realtime_settings(): iLQR with a deadline, select_top and a coarser selection model
    of the task's bodies; one tick plans within its settings."""
    s = mpc.realtime_settings()
    assert s["method"] == "ilqr" and s["deadline"] > 0 and s["select_top"] == 12
    task = push_t.make(seed=FAST_SEED)
    ctl = mpc.Controller(task, **s)
    assert ctl.select_model is s["select_model"] and ctl.select_model is not task.model
    U, phase = ctl.act(task.x0)
    assert U.shape == (ctl.replan, 3) or phase == "move"
    assert mpc.realtime_settings()["select_model"] is s["select_model"]  # built once
