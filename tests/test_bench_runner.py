"""The comparison runner (benchmarks/run.py) and its MuJoCo scenes (benchmarks/scenes.py).

* ``run.py --quick`` runs end to end in a subprocess and prints the per-scene tables, the
  thresholds and the scaling numbers (and writes the PNG);
* each scene's MuJoCo model compiles with the softcontact scene's masses, inertias,
  ``dt`` and gravity (the softcontact side read through ``Model.momentum``, public API),
  its state is in contact in both engines, and short MuJoCo simulations from the
  equivalent state behave: the box comes to rest on the floor, the pushed T moves in the
  push direction (both MuJoCo variants, like softcontact's), the hanging torus stays
  hanging (convex segments) while the convex hulls overlap.
"""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import subprocess_env

# Scenes here step past the explicit integrator's friction and damping limits on purpose:
# what is checked (derivatives, bits, memory, parameters) holds at any dt.  Scene.build's
# stability warning is tested in tests/test_scene.py.
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

import scenes  # noqa: E402


def _bench(script, *args, cwd, timeout=60):
    """Run benchmarks/<script> with ``args`` in a subprocess (this package, no screen)."""
    return subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=subprocess_env(),
    )


def test_runner_quick_prints_the_tables(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "scaling.png"
    out = _bench("run.py", "--quick", "--no-jax", "--plots", str(png), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for title in (
        "### planar pushing (push-T)",
        "### box on floor (3D)",
        "### two interlocked tori (3D meshes)",
        "### Thresholds",
    ):
        assert title in text
    assert (
        text.count(
            "| case | softcontact | MuJoCo mj_step | MuJoCo + forward FD | "
            "MuJoCo + centred FD | JAX (jit) |"
        )
        == 3
    )
    for row in (
        "| value-only step [us] |",
        "| step + first derivatives [us] |",
        "| step + second derivatives [us] |",
        "rollouts B=4 T=5, 1 thread [ms]",
        "rollouts B=4 T=5, 2 threads [ms]",
    ):
        assert text.count(row) == 3, row
    assert "(i) push-T: (mj_step + forward FD) / softcontact" in text
    assert "(iii) push-T: softcontact value-only step / mj_step" in text
    assert "JAX n/a (--no-jax)" in text
    # softcontact's times are numbers in every table
    for line in text.splitlines():
        if line.startswith("| value-only step"):
            float(line.split("|")[2])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "peak RSS growth" in text


def test_runner_without_mujoco_or_jax(tmp_path):
    out = _bench("run.py", "--quick", "--no-jax", "--no-mujoco", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "MuJoCo n/a" in out.stdout and out.stdout.count("| value-only step") == 3


# ------------------------------------------------------------------------------------------
# the MuJoCo equivalents
# ------------------------------------------------------------------------------------------
MAKERS = {
    "push_t": lambda: scenes.push_t(),
    "push_t_floor": lambda: scenes.push_t(variant="floor"),
    "box": lambda: scenes.box_on_floor(),
    "tori": lambda: scenes.two_tori(),
    "tori_hull": lambda: scenes.two_tori(variant="hull"),
}


@pytest.fixture(scope="module", params=list(MAKERS))
def bench_scene(request):
    pytest.importorskip("mujoco")
    return request.param, MAKERS[request.param]()


def _softcontact_mass_inertia(model, x, j):
    """Mass and inertia tensor (body frame) of moving body ``j`` from ``Model.momentum``:
    unit velocities, one at a time, with the body at the origin."""
    nqb, nvb = (3, 3) if model.dim == 2 else (7, 6)
    x = np.array(x, dtype=float)
    x[model.nq :] = 0.0
    x[nqb * j : nqb * j + model.dim] = 0.0  # at the origin: angular momentum = R I omega
    v0 = model.nq + nvb * j
    xv = x.copy()
    xv[v0] = 1.0
    mass = float(model.momentum(xv).linear[0])
    if model.dim == 2:
        xw = x.copy()
        xw[v0 + 2] = 1.0
        return mass, np.array([[float(model.momentum(xw).angular)]])
    q = x[nqb * j + 3 : nqb * j + 7]
    w, a, b, c = q
    R = np.array(
        [
            [1 - 2 * (b * b + c * c), 2 * (a * b - w * c), 2 * (a * c + w * b)],
            [2 * (a * b + w * c), 1 - 2 * (a * a + c * c), 2 * (b * c - w * a)],
            [2 * (a * c - w * b), 2 * (b * c + w * a), 1 - 2 * (a * a + b * b)],
        ]
    )
    cols = []
    for k in range(3):
        xw = x.copy()
        xw[v0 + 3 + k] = 1.0  # body-frame angular velocity
        cols.append(R.T @ np.asarray(model.momentum(xw).angular))
    return mass, np.array(cols).T


def _mj_inertia(mujoco, m, body):
    i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, body)
    w, a, b, c = m.body_iquat[i]
    R = np.array(
        [
            [1 - 2 * (b * b + c * c), 2 * (a * b - w * c), 2 * (a * c + w * b)],
            [2 * (a * b + w * c), 1 - 2 * (a * a + c * c), 2 * (b * c - w * a)],
            [2 * (a * c - w * b), 2 * (b * c + w * a), 1 - 2 * (a * a + b * b)],
        ]
    )
    np.testing.assert_allclose(m.body_ipos[i], 0.0, atol=1e-12)  # frame at the CoM
    return float(m.body_mass[i]), R @ np.diag(m.body_inertia[i]) @ R.T


def test_mujoco_model_matches_the_softcontact_scene(bench_scene):
    import mujoco

    _, bs = bench_scene
    m, d = bs.mj
    model = bs.model
    assert m.opt.timestep == bs.dt == model.dt
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_EULER
    g = np.zeros(3)
    g[: model.dim] = bs.scene.gravity
    if model.dim == 2:  # a table seen from above; MuJoCo's T on a floor needs gravity
        np.testing.assert_array_equal(m.opt.gravity, [0, 0, 0] if m.njnt == 6 else [0, 0, -9.81])
    else:
        np.testing.assert_array_equal(m.opt.gravity, g)
    assert m.nu == model.nu
    for j, name in enumerate(model.moving):
        if name not in bs.mass:
            continue  # the kinematic pusher: MuJoCo's is a heavy velocity-driven body
        mass, inertia = _softcontact_mass_inertia(model, bs.x, j)
        mj_mass, mj_inertia = _mj_inertia(mujoco, m, name)
        assert mass == pytest.approx(bs.mass[name], rel=1e-12)
        assert mj_mass == pytest.approx(mass, rel=1e-12)
        if model.dim == 2:  # planar: MuJoCo's I_zz is softcontact's inertia
            assert mj_inertia[2, 2] == pytest.approx(inertia[0, 0], rel=1e-9)
            assert bs.inertia[name][2, 2] == pytest.approx(inertia[0, 0], rel=1e-12)
        else:
            np.testing.assert_allclose(mj_inertia, inertia, rtol=1e-9, atol=1e-15)
            np.testing.assert_allclose(bs.inertia[name], inertia, rtol=1e-12, atol=1e-15)
    # the representative state is in contact in both engines
    assert model.energy(bs.x).contact > 1e-5
    assert d.ncon >= 1


def test_push_t_scene_is_the_task_model():
    from softcontact.tasks import push_t

    bs = scenes.push_t(seed=3)
    task = push_t.make(seed=3, integrator="euler")
    rebuilt = bs.scene.build(bs.dt)
    assert rebuilt.body_names == task.model.body_names == bs.model.body_names
    np.testing.assert_array_equal(
        rebuilt.step(bs.x, bs.u).x_next, task.model.step(bs.x, bs.u).x_next
    )
    # the pusher overlaps the stem's bottom by 1 mm, moving along the stem
    assert np.linalg.norm(bs.x[9:11]) == pytest.approx(0.1)
    np.testing.assert_array_equal(bs.x[9:12], bs.u)


def test_mujoco_pusher_velocity_is_its_control():
    mujoco = pytest.importorskip("mujoco")
    bs = scenes.push_t()
    m = bs.mj_model()
    d = mujoco.MjData(m)
    d.qpos[:] = bs.qpos
    d.qpos[3:5] = d.qpos[0:2] + 0.2  # the T is at (0.13, 0.17): far from it
    d.qvel[:] = 0.0
    d.ctrl[:] = [0.2, -0.1, 0.5]
    mujoco.mj_forward(m, d)
    assert d.ncon == 0
    mujoco.mj_step(m, d)
    np.testing.assert_allclose(d.qvel[3:6], [0.2, -0.1, 0.5], rtol=0, atol=1e-12)


def _simulate_mj(bs, seconds):
    import mujoco

    m = bs.mj_model()
    d = mujoco.MjData(m)
    d.qpos[:] = bs.qpos
    d.qvel[:] = bs.qvel
    d.ctrl[:] = bs.ctrl
    qs = [d.qpos.copy()]
    for _ in range(round(seconds / bs.dt)):
        mujoco.mj_step(m, d)
        qs.append(d.qpos.copy())
    return np.array(qs), d


def test_mujoco_box_comes_to_rest_on_the_floor():
    pytest.importorskip("mujoco")
    bs = scenes.box_on_floor()
    q, d = _simulate_mj(bs, 0.5)
    # never through the floor or off it (half size 0.05 m), upright, at rest at the end
    assert q[:, 2].min() > 0.044 and q[:, 2].max() < 0.052
    zz = 1 - 2 * (q[:, 4] ** 2 + q[:, 5] ** 2)  # R[2, 2]
    assert zz.min() > 0.999
    assert np.abs(d.qvel).max() < 1e-3
    # it slid a little (0.05 m/s against friction 0.5: ~0.25 mm) and stopped
    assert abs(q[-1, 0] - q[0, 0]) < 0.002
    # softcontact's box stays on the floor too (still rocking slightly at 0.5 s: its
    # default contact damping is light for 1 kg)
    X = bs.model.rollout(bs.x, np.zeros((500, 0))).states
    assert X[:, 2].min() > 0.044 and X[:, 2].max() < 0.052
    assert abs(X[-1, 0] - X[0, 0]) < 0.002 and np.abs(X[-1, 7:]).max() < 0.2


@pytest.mark.parametrize("variant", ["planar", "floor"])
def test_mujoco_pushed_t_moves_in_the_push_direction(variant):
    pytest.importorskip("mujoco")
    bs = scenes.push_t(variant=variant)
    seconds = 0.4
    q, d = _simulate_mj(bs, seconds)
    push = bs.u[:2] / np.linalg.norm(bs.u[:2])
    side = np.array([-push[1], push[0]])
    t_xy = q[:, 0:2]
    p_xy = q[:, 3:5] if variant == "planar" else q[:, 7:9]
    pusher_travel = (p_xy[-1] - p_xy[0]) @ push
    assert pusher_travel == pytest.approx(0.1 * seconds, rel=0.02)
    moved = (t_xy[-1] - t_xy[0]) @ push
    # the T goes ahead of the pusher, pushed through the middle of its stem; softcontact's
    # goes straight, MuJoCo's drifts sideways (11 mm planar, 14 mm on the floor, over
    # 40 mm): its friction sets are not round (per-dof frictionloss; pyramidal cones)
    assert 0.7 * pusher_travel < moved < 1.2 * pusher_travel, (moved, pusher_travel)
    assert abs((t_xy[-1] - t_xy[0]) @ side) < 0.5 * moved
    if variant == "floor":  # still lying on the floor
        assert abs(q[-1, 2] - scenes.T_HEIGHT / 2) < 2e-3
    # softcontact's T does the same
    X = bs.model.rollout(bs.x, np.tile(bs.u, (round(seconds / bs.dt), 1))).states
    sc_moved = (X[-1, 0:2] - X[0, 0:2]) @ push
    assert 0.7 * pusher_travel < sc_moved < 1.2 * pusher_travel
    assert abs((X[-1, 0:2] - X[0, 0:2]) @ side) < 0.5 * sc_moved


def test_mujoco_tori_segments_hang_and_hulls_overlap():
    mujoco = pytest.importorskip("mujoco")
    seg = scenes.two_tori()
    q, _ = _simulate_mj(seg, 0.4)
    # hanging on the static ring: within 2 mm of the start height, not falling
    assert np.abs(q[:, 2] - q[0, 2]).max() < 0.002
    assert np.abs(q[:, :2] - q[0, :2]).max() < 0.002
    hull = scenes.two_tori(variant="hull")
    m, d = hull.mj
    # the convex hulls fill the holes: the interlocked hulls overlap by centimetres
    assert d.ncon >= 1 and min(c.dist for c in d.contact[: d.ncon]) < -0.01
    assert m.ngeom == 2 and seg.mj_model().ngeom == 2 * scenes.N_MAJOR
    del mujoco


def test_mujoco_timing_helpers_run():
    pytest.importorskip("mujoco")
    bs = scenes.push_t()
    m = bs.mj_model()
    st = scenes.mj_step_fn(bs)()
    assert st.time == pytest.approx(bs.dt)
    for centred in (False, True):
        A, B = scenes.mj_fd_fn(bs, centred)()
        assert A.shape == (2 * m.nv, 2 * m.nv) and B.shape == (2 * m.nv, m.nu)
        # the pusher's velocity follows its control: d v+ / d ctrl = 1
        np.testing.assert_allclose(np.diag(B[m.nv + 3 : m.nv + 6]), 1.0, rtol=1e-3)
    for nthread in (1, 2):
        fn, close = scenes.mj_rollout_fn(bs, 3, 4, nthread)
        states = fn()
        close()
        assert states.shape[:2] == (3, 4) and np.all(np.isfinite(states))
    assert math.isfinite(float(states[0, -1, 1]))


def test_runner_jax_columns_with_a_stub_model():
    """The JAX plumbing (cases, blocking, table cells, target rows) without JAX's compile
    times: a stand-in ``jax_oracle`` whose methods are softcontact's."""
    import io
    import types

    jax = pytest.importorskip("jax")
    import run

    class Stub:
        @classmethod
        def from_scene(cls, scene, dt):
            self = cls()
            self.m = scene.build(dt)
            return self

        def step(self, x, u):
            return jax.numpy.asarray(self.m.step(np.asarray(x), np.asarray(u)).x_next)

        def step_d1(self, x, u):
            r = self.m.step(np.asarray(x), np.asarray(u), order=1)
            return r.x_next, r.dx_dx, r.dx_du

        def step_d2(self, x, u):
            r = self.m.step(np.asarray(x), np.asarray(u), order=2)
            return r.x_next, r.dx_dx, r.dx_du, r.d2x_dx2, r.d2x_dxdu, r.d2x_du2

        def rollout(self, X0, U):
            return self.m.rollout(np.asarray(X0), np.asarray(U)).states

    stub = types.SimpleNamespace(JaxModel=Stub)
    bs = scenes.box_on_floor()
    cases = run.softcontact_cases(bs, 2, 3) + run.jax_cases(bs, 2, 3, (jax, stub))
    res = run.measure(cases, rounds=2, target=1e-4, budget=0.2, min_rounds=2)
    assert all(len(res[k].times) == 2 for k in ("jx0", "jx1", "jx2", "jx_r"))
    buf = io.StringIO()
    run.scene_table(bs, res, 2, 3, buf)
    run.thresholds_table({"box": res}, buf)
    text = buf.getvalue()
    row = next(line for line in text.splitlines() if line.startswith("| step + second"))
    float(row.split("|")[6])  # the JAX cell holds a time
    assert "(ii) box on floor: JAX step_d2 / softcontact order 2" in text
    # rollouts that would not fit the budget run on a shorter horizon, scaled and marked
    short = {c.key: c for c in run.jax_cases(bs, 2, 30, (jax, stub), budget=1e-9)}
    assert short["jx_r"].scale == 3.0 and "T = 10, scaled to T = 30" in short["jx_r"].note
    res = run.measure(list(short.values()), rounds=1, min_rounds=1)
    assert run._t(res, "jx_r", 1e3).endswith(" *")
    # a model the JAX module cannot build is reported, not fatal
    bad = types.SimpleNamespace(
        JaxModel=types.SimpleNamespace(
            from_scene=lambda scene, dt: (_ for _ in ()).throw(NotImplementedError("no walls"))
        )
    )
    res = run.measure(run.jax_cases(bs, 2, 3, (jax, bad)), rounds=1)
    assert res["jx1"].error == "NotImplementedError: no walls" and not res["jx1"].times


@pytest.mark.parametrize(
    "script, args, header",
    [
        ("bench_ssdf.py", ["--quick"], "SSDF pairs/s"),
        ("bench_pruning.py", ["--quick"], "dense / pruned"),
        ("bench_contact.py", ["--repeats", "1"], "o2/o0"),
        ("bench_step.py", ["--repeats", "1"], "two/one"),
        ("bench_pool.py", ["--repeats", "1"], "per-call / pool"),
    ],
)
def test_kernel_benchmarks_run(tmp_path, script, args, header):
    """Each per-kernel benchmark runs to the end on its smallest settings and prints its
    table (they import the package's internals, which this keeps honest)."""
    out = _bench(script, *args, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert header in out.stdout
    assert "|---|" in out.stdout


def test_report_writes_the_benchmarks_page(tmp_path):
    """benchmarks/report.py --quick: every section, under the machine header, to --out."""
    page = tmp_path / "benchmarks.md"
    out = _bench("report.py", "--quick", "--no-jax", "--out", str(page), cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    text = page.read_text()
    assert text.startswith("<!-- written by benchmarks/report.py")
    assert text.split("\n", 2)[2] == out.stdout  # the page is what was printed
    assert "Measured " in text and " CPUs; " in text and "Quick settings" in text
    import report

    for title, _, alone in report.SECTIONS:
        assert f"\n## {title}\n" in text and alone in text
    # each table starts after a blank line (Markdown renders it as a table, not a paragraph)
    lines = text.splitlines()
    heads = [
        i for i, ln in enumerate(lines) if ln.startswith("|") and lines[i + 1].startswith("|--")
    ]
    assert len(heads) >= 10 and all(lines[i - 1] == "" for i in heads)
    assert text.count("## softcontact vs MuJoCo vs JAX") == 0  # run.py's own heading is off
