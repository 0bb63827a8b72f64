"""softcontact against MuJoCo and JAX: one runner, every measurement interleaved.

For each scene of :mod:`scenes` (planar pushing = push-T, box on floor, two interlocked
tori) it times, in one process, round-robin over all the cases of the scene (each round
gives every case a turn, so that a slow spell of the machine hits all of them alike;
medians over rounds, hence the ratios come from one run on the same machine state):

* softcontact: ``Model.step(x, u, order=0 | 1 | 2, num_threads=1)`` (each call includes
  the Python argument checks) and ``Model.rollout`` of B = 64 trajectories of T = 100
  steps (order 0) on 1 and 2 threads;
* MuJoCo (the equivalent MJCF of :mod:`scenes`; single-threaded): ``mj_setState`` +
  ``mj_step``; the same + ``mjd_transitionFD`` (A and B; eps 1e-6) with forward and with
  centred differences; ``mujoco.rollout`` of the same batch on 1 and 2 threads (a thread
  pool made once);
* JAX (``tests/jax_oracle.py``, the dense jit-compiled float64 version of the same
  model, optional): ``step``, ``step_d1`` (forward-mode Jacobians), ``step_d2`` (Hessians)
  and the ``vmap``-ped ``rollout`` (XLA picks its own threads), outputs blocked on, with
  compilation excluded (warm-up first; the compile time is printed).

Before each turn the runner waits until the process's other threads are idle
(:func:`settle`): XLA's worker threads spin for ~0.1 s after a JAX call and, on two cores,
would otherwise slow down whichever case comes next.
The number of calls per round is set so that a round of a case lasts ~``--target`` ms;
slow cases (the tori's rollouts) get fewer rounds (at least 3) so that a case spends at
most ``--budget`` s.  Then a markdown table per scene (rows: value-only step, step + first
derivatives, step + second derivatives, batched rollouts on 1 and 2 threads; columns:
softcontact, MuJoCo's three variants, JAX, and softcontact's speed-up over each), a table of
the other MuJoCo equivalents (push-T as a free T on a floor; the tori as convex hulls), and
three ratios against fixed thresholds (### Thresholds):

(i)   planar pushing: softcontact step + first derivatives no slower than ``mj_step`` +
      forward-difference ``mjd_transitionFD``, and faster than the centred version;
(ii)  softcontact first and second derivatives >= 20x faster than jit-compiled JAX;
(iii) planar pushing: softcontact's value-only step within 3x of ``mj_step``.

``--plots PATH`` also writes scaling plots (a PNG): the time of ``Model.step`` (order 0
and 1, one thread) against the samples per body (two spheres in light contact, 100 to
5000 samples each), against the number of samples in contact at fixed cloud sizes (pressed
deeper: flat, the cost does not depend on the contacts), rollouts on 1 and 2 threads, and
the peak memory of building a model and stepping it at order 2 against the samples per
body (the peak resident set of a fresh subprocess per size, minus its value before the
model is built: linear).

    python benchmarks/run.py [--repeats 15] [--plots scaling.png] [--quick] [--no-jax]
                             [--no-mujoco]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

# NumPy's OpenBLAS threads spin after a BLAS call and would steal a core from the timed
# single-threaded kernels of every library alike: one BLAS thread (set before the import)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
# benchmarks/ is the script folder (also when imported); tests/ holds the JAX oracle
for _path in (HERE.parent / "tests", HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import scenes  # noqa: E402

import softcontact as sc  # noqa: E402

NA = "—"


# ------------------------------------------------------------------------------------------
# interleaved timing
# ------------------------------------------------------------------------------------------
def _other_threads_ticks() -> int | None:
    """CPU time (clock ticks) used so far by this process's threads other than the calling
    one, from ``/proc/self/task`` (None where that does not exist)."""
    try:
        me = str(threading.get_native_id())
        tot = 0
        for t in os.listdir("/proc/self/task"):
            if t == me:
                continue
            try:
                with open(f"/proc/self/task/{t}/stat") as f:
                    st = f.read().rsplit(")", 1)[1].split()
            except OSError:  # the thread ended meanwhile
                continue
            tot += int(st[11]) + int(st[12])  # utime + stime
        return tot
    except (OSError, ValueError, IndexError):
        return None


def settle(window=0.02, quiet=2, max_wait=0.5) -> float:
    """Wait until the other threads of this process are idle: ``quiet`` consecutive windows
    of ``window`` s in which they used no CPU, at most ``max_wait`` s (a fixed 0.1 s
    without ``/proc``).  XLA's worker threads keep spinning for ~0.1 s after a JAX call
    (measured here: ~0.8 of a core in the first 25 ms, ~0.2 for the next 100 ms); on two
    cores they steal time from whatever runs next, so without this pause the case after a
    JAX case (softcontact's ``sc0`` in every round) measured up to ~1.3x slow.  The wait
    is a busy loop, not a sleep: after an idle pause this virtual machine runs the next
    few milliseconds measurably slower (~10 %), which would hit the case after the pause
    instead.  Returns the seconds waited."""
    t0 = time.perf_counter()
    last = _other_threads_ticks()

    def spin(s):
        t1 = time.perf_counter()
        while time.perf_counter() - t1 < s:
            pass

    if last is None:
        spin(0.1)
        return time.perf_counter() - t0
    n = 0
    while n < quiet and time.perf_counter() - t0 < max_wait:
        spin(window)
        now = _other_threads_ticks()
        n = n + 1 if now == last else 0
        last = now
    return time.perf_counter() - t0


@dataclasses.dataclass(eq=False)
class Case:
    key: str
    fn: Callable | None
    close: Callable | None = None
    calls: int = 1
    rounds: int = 0
    times: list = dataclasses.field(default_factory=list)  # seconds per call, per round
    compile_s: float = float("nan")  # JAX: ahead-of-time compilation
    scale: float = 1.0  # times are multiplied by this (JAX rollouts on a shorter horizon)
    note: str = ""
    error: str | None = None

    @property
    def median(self) -> float:
        return float(np.median(self.times)) * self.scale if self.times else float("nan")


def measure(cases, rounds, target=0.02, budget=8.0, min_rounds=3, out=None):
    """Warm up each case (two calls; one if the first took over a second, which then
    counts as its first round), choose its calls per round (~``target`` s a round) and its
    rounds (``rounds``, fewer if that would take more than ``budget`` s, never fewer than
    ``min_rounds``), then time round-robin: round r gives each case that still needs one
    its turn.  A case whose warm-up raises is kept with ``error`` set (shown as n/a).
    (JAX functions are compiled ahead of time in :func:`jax_cases`, not here.)  Before
    each timed turn the other threads of the process are let go idle (:func:`settle`), so
    that no library's leftover worker threads share the cores with the next case."""
    live = []
    for c in cases:
        if c.fn is None:
            continue
        try:
            t0 = time.perf_counter()
            c.fn()
            t1 = time.perf_counter() - t0
            if t1 < 1.0:
                t0 = time.perf_counter()
                c.fn()
                t1 = time.perf_counter() - t0
            else:  # slow: warm after one call, which is a sample
                c.times.append(t1)
        except Exception as e:  # a model JAX or MuJoCo cannot handle: report, go on
            c.error = f"{type(e).__name__}: {e}".splitlines()[0][:160]
            if out is not None:
                print(f"  [{c.key}: failed: {c.error}]", file=out)
            continue
        c.calls = max(1, int(target / max(t1, 1e-9)))
        c.rounds = max(min_rounds, min(rounds, int(budget / max(t1 * c.calls, 1e-9))))
        live.append(c)
    for _ in range(max((c.rounds for c in live), default=0)):
        for c in live:
            if len(c.times) >= c.rounds:
                continue
            fn, n = c.fn, c.calls
            settle()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            c.times.append((time.perf_counter() - t0) / n)
    for c in cases:
        if c.close is not None:
            c.close()
    return {c.key: c for c in cases}


# ------------------------------------------------------------------------------------------
# the cases of one scene
# ------------------------------------------------------------------------------------------
def _batch(bs, B, T, seed=0, noise=0.01):
    """B copies of the scene's state and controls ``u`` + noise (T steps), as in
    bench_step (the same noise as scenes.mj_rollout_fn)."""
    model = bs.model
    rng = np.random.default_rng(seed)
    U = np.broadcast_to(bs.u, (B, T, model.nu)).copy()
    if model.nu:
        U += noise * rng.normal(size=U.shape)
    return np.broadcast_to(bs.x, (B, model.nx)).copy(), U


def softcontact_cases(bs, B, T):
    m, x, u = bs.model, bs.x, bs.u
    X0, U = _batch(bs, B, T)
    return [
        Case("sc0", lambda: m.step(x, u, order=0, num_threads=1)),
        Case("sc1", lambda: m.step(x, u, order=1, num_threads=1)),
        Case("sc2", lambda: m.step(x, u, order=2, num_threads=1)),
        Case("sc_r1", lambda: m.rollout(X0, U, order=0, num_threads=1)),
        Case("sc_r2", lambda: m.rollout(X0, U, order=0, num_threads=2)),
    ]


def mujoco_cases(bs, B, T, prefix="mj", rollouts=True):
    cases = [
        Case(f"{prefix}0", scenes.mj_step_fn(bs)),
        Case(f"{prefix}_fwd", scenes.mj_fd_fn(bs, centred=False)),
        Case(f"{prefix}_cen", scenes.mj_fd_fn(bs, centred=True)),
    ]
    if rollouts:
        for n in (1, 2):
            fn, close = scenes.mj_rollout_fn(bs, B, T, n)
            cases.append(Case(f"{prefix}_r{n}", fn, close))
    return cases


def load_jax():
    """``(jax, jax_oracle)`` or ``(None, reason)``."""
    try:
        import jax
        import jax_oracle
    except Exception as e:  # ImportError, or jax failing to initialize
        return None, f"{type(e).__name__}: {e}".splitlines()[0]
    return (jax, jax_oracle), None


def jax_cases(bs, B, T, jx, budget=8.0):
    """The JAX cases, each compiled ahead of time here (``fn.lower(*args).compile()``, the
    compile time kept in ``compile_s``) so that no timed call compiles.  Rollouts whose
    estimated time (B T single steps) exceeds a third of ``budget`` run on a horizon
    shortened to fit, but not below 10 steps (B unchanged, so the batch is as wide), and
    their times are scaled by T / T' (a scan over the horizon: linear in it)."""
    jax, jax_oracle = jx
    import jax.numpy as jnp

    keys = ("jx0", "jx1", "jx2", "jx_r")
    try:
        jm = jax_oracle.JaxModel.from_scene(bs.scene, bs.dt)
    except Exception as e:
        err = f"{type(e).__name__}: {e}".splitlines()[0][:160]
        return [Case(k, None, error=err) for k in keys]
    x, u = jnp.asarray(bs.x), jnp.asarray(bs.u)
    X0, U = (jnp.asarray(a) for a in _batch(bs, B, T))
    block = jax.block_until_ready
    out = []

    def case(key, f, *args, scale=1.0, note=""):
        try:
            t0 = time.perf_counter()
            g = f.lower(*args).compile() if hasattr(f, "lower") else f
            comp = time.perf_counter() - t0 if hasattr(f, "lower") else float("nan")
        except Exception as e:
            err = f"{type(e).__name__}: {e}".splitlines()[0][:160]
            out.append(Case(key, None, error=err))
            return None
        c = Case(key, lambda: block(g(*args)), compile_s=comp, scale=scale, note=note)
        out.append(c)
        return c

    c0 = case("jx0", jm.step, x, u)
    case("jx1", jm.step_d1, x, u)
    case("jx2", jm.step_d2, x, u)
    # rollouts: estimate from one step; shorten the horizon if it would not fit
    Tj = T
    if c0 is not None:
        try:
            c0.fn()
            t0 = time.perf_counter()
            c0.fn()
            est = (time.perf_counter() - t0) * B * T
        except Exception:
            est = 0.0
        if est > budget / 3:  # at least 10 steps: a horizon of 1 or 2 is not representative
            Tj = min(T, max(10, int(T * (budget / 3) / est)))
    if Tj < T:
        case(
            "jx_r",
            jm.rollout,
            X0,
            U[:, :Tj],
            scale=T / Tj,
            note=f"JAX rollouts timed with T = {Tj}, scaled to T = {T}",
        )
    else:
        case("jx_r", jm.rollout, X0, U)
    return out


# ------------------------------------------------------------------------------------------
# tables
# ------------------------------------------------------------------------------------------
def _t(res, key, scale):
    c = res.get(key)
    if c is None or not c.times:
        return NA if c is None or c.error is None else "n/a"
    v = c.median * scale
    return (f"{v:.3g}" if v < 100 else f"{v:.0f}") + (" *" if c.scale != 1.0 else "")


def _ratio(res, num, den):
    a, b = res.get(num), res.get(den)
    if a is None or b is None or not a.times or not b.times:
        return None
    return a.median / b.median


def _r(v):
    return NA if v is None else (f"{v:.2f}" if v < 10 else f"{v:.3g}" if v < 1000 else f"{v:.0f}")


def scene_table(bs, res, B, T, out):
    m = bs.model
    mjm = None
    if any(k.startswith("mj") for k in res):
        mjm, d = bs.mj
        mj_desc = (
            f"MuJoCo nq {mjm.nq}, nv {mjm.nv}, nu {mjm.nu}, {d.ncon} contacts, "
            f"{d.nefc} constraint rows at x"
        )
    else:
        mj_desc = "MuJoCo not measured"
    samples = " + ".join(f"{v} ({k})" for k, v in bs.samples.items())
    print(f"\n### {bs.name}\n", file=out)
    print(
        f"softcontact: {samples} samples, nx {m.nx}, nu {m.nu}, dt {bs.dt:g} s; "
        f"{mj_desc}.  {bs.notes}.\n",
        file=out,
    )
    print(
        "| case | softcontact | MuJoCo mj_step | MuJoCo + forward FD | MuJoCo + centred FD "
        "| JAX (jit) | speed-up vs MuJoCo | speed-up vs JAX |",
        file=out,
    )
    print("|---|---|---|---|---|---|---|---|", file=out)
    us, ms = 1e6, 1e3

    def row(label, sck, mjk, fwd, cen, jxk, scale, mj_ratio):
        print(
            f"| {label} | {_t(res, sck, scale)} | {_t(res, mjk, scale) if mjk else NA} | "
            f"{_t(res, fwd, scale) if fwd else NA} | {_t(res, cen, scale) if cen else NA} | "
            f"{_t(res, jxk, scale) if jxk else NA} | {mj_ratio} | "
            f"{_r(_ratio(res, jxk, sck)) if jxk else NA} |",
            file=out,
        )

    row("value-only step [us]", "sc0", "mj0", None, None, "jx0", us, _r(_ratio(res, "mj0", "sc0")))
    f, c = _ratio(res, "mj_fwd", "sc1"), _ratio(res, "mj_cen", "sc1")
    row(
        "step + first derivatives [us]",
        "sc1",
        None,
        "mj_fwd",
        "mj_cen",
        "jx1",
        us,
        NA if f is None else f"{_r(f)} (fwd), {_r(c)} (centred)",
    )
    row("step + second derivatives [us]", "sc2", None, None, None, "jx2", us, NA)
    row(
        f"rollouts B={B} T={T}, 1 thread [ms]",
        "sc_r1",
        "mj_r1",
        None,
        None,
        "jx_r",
        ms,
        _r(_ratio(res, "mj_r1", "sc_r1")),
    )
    row(
        f"rollouts B={B} T={T}, 2 threads [ms]",
        "sc_r2",
        "mj_r2",
        None,
        None,
        None,
        ms,
        _r(_ratio(res, "mj_r2", "sc_r2")),
    )
    s1, s2 = _ratio(res, "sc_r1", "sc_r2"), _ratio(res, "mj_r1", "mj_r2")
    extra = []
    if s1 is not None:
        extra.append(f"softcontact two/one threads {_r(s1)}")
    if s2 is not None:
        extra.append(f"MuJoCo {_r(s2)}")
    jr = res.get("jx_r")
    comp = [
        f"{k} {res[k].compile_s:.1f} s"
        for k in ("jx0", "jx1", "jx2", "jx_r")
        if k in res and res[k].times and math.isfinite(res[k].compile_s)
    ]
    if comp:
        extra.append("JAX compile times (excluded): " + ", ".join(comp))
    extra += sorted({c.note for c in res.values() if c.note and c.times})
    errs = {c.error for c in res.values() if c.error}
    if errs:
        extra.append("failed: " + "; ".join(sorted(errs)))
    if jr is not None and jr.times:
        extra.append("JAX rollouts use the threads XLA chooses")
    rounds = sorted({c.rounds for c in res.values() if c.times})
    extra.append(
        f"rounds per case {rounds[0]}-{rounds[-1]}"
        if len(rounds) > 1
        else f"{rounds[0] if rounds else 0} rounds"
    )
    print(
        "\nSpeed-up = other's time / softcontact's (> 1: softcontact faster).  "
        + "; ".join(extra)
        + ".",
        file=out,
    )


def variants_table(rows, out):
    """Other MuJoCo equivalents: (scene name, variant note, results, softcontact results)."""
    if not rows:
        return
    print("\n### Other MuJoCo equivalents\n", file=out)
    print(
        "| scene | MuJoCo model | mj_step [us] | + forward FD [us] | + centred FD [us] "
        "| softcontact order 0 / mj_step | (mj_step + fwd FD) / softcontact order 1 |",
        file=out,
    )
    print("|---|---|---|---|---|---|---|", file=out)
    for name, note, res, scres in rows:
        both = {**res, **scres}
        print(
            f"| {name} | {note} | {_t(res, 'mv0', 1e6)} | {_t(res, 'mv_fwd', 1e6)} | "
            f"{_t(res, 'mv_cen', 1e6)} | {_r(_ratio(both, 'sc0', 'mv0'))} | "
            f"{_r(_ratio(both, 'mv_fwd', 'sc1'))} |",
            file=out,
        )


def thresholds_table(all_res, out):
    push = all_res.get("push_t", {})
    print("\n### Thresholds\n", file=out)
    print("| criterion | ratio | threshold | within |", file=out)
    print("|---|---|---|---|", file=out)

    def line(label, v, req, ok):
        met = NA if v is None else ("yes" if ok(v) else "**no**")
        print(f"| {label} | {_r(v)} | {req} | {met} |", file=out)

    line(
        "(i) push-T: (mj_step + forward FD) / softcontact step + first derivatives",
        _ratio(push, "mj_fwd", "sc1"),
        ">= 1",
        lambda v: v >= 1.0,
    )
    line(
        "(i) push-T: (mj_step + centred FD) / softcontact step + first derivatives",
        _ratio(push, "mj_cen", "sc1"),
        "> 1",
        lambda v: v > 1.0,
    )
    for key, res in all_res.items():
        name = {"push_t": "push-T", "box": "box on floor", "tori": "two tori"}.get(key, key)
        line(
            f"(ii) {name}: JAX step_d1 / softcontact order 1",
            _ratio(res, "jx1", "sc1"),
            ">= 20",
            lambda v: v >= 20.0,
        )
        line(
            f"(ii) {name}: JAX step_d2 / softcontact order 2",
            _ratio(res, "jx2", "sc2"),
            ">= 20",
            lambda v: v >= 20.0,
        )
    line(
        "(iii) push-T: softcontact value-only step / mj_step",
        _ratio(push, "sc0", "mj0"),
        "<= 3",
        lambda v: v <= 3.0,
    )


# ------------------------------------------------------------------------------------------
# scaling plots
# ------------------------------------------------------------------------------------------
SPHERE_R = 0.05


def spheres(n, overlap=0.001):
    """Two spheres (radius 5 cm, ``n`` samples each, no gravity) overlapping by
    ``overlap`` m, the upper one moving down at 1 cm/s; returns (model, x, clouds, poses)."""
    spacing = math.sqrt(4 * math.pi * SPHERE_R**2 / n)
    a = sc.PointCloud.sphere(SPHERE_R, spacing)
    pa = [0.0, 0.0, 0.0, *scenes.IDENTITY]
    pb = [0.0, 0.0, 2 * SPHERE_R - overlap, *scenes.IDENTITY]
    scene = sc.Scene(3, gravity=[0.0, 0.0, 0.0])
    scene.add_body(a, pose=pa, name="a")
    scene.add_body(a, pose=pb, velocity=[0, 0, -0.01, 0, 0, 0], name="b")
    scene.add_contact("a", "b", sc.ContactParams())
    model = scene.build(0.001)
    return model, model.initial_state(), a, (pa, pb)


_MEM_SCRIPT = r"""
import json, math, resource, sys
import numpy as np
import softcontact as sc


def hwm_kb():
    # the peak resident set (VmHWM); ru_maxrss where /proc is missing
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reset_hwm():
    # Linux >= 4.0: writing 5 to clear_refs resets the peak to the current RSS, so the
    # imports' peak does not hide what follows
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


n = int(sys.argv[1])
R = 0.05
a = sc.PointCloud.sphere(R, math.sqrt(4 * math.pi * R * R / n))
reset = reset_hwm()
base = hwm_kb()
scene = sc.Scene(3, gravity=[0.0, 0.0, 0.0])
scene.add_body(a, name="a")
scene.add_body(a, pose=[0, 0, 2 * R - 0.001, 1, 0, 0, 0], name="b")
scene.add_contact("a", "b", sc.ContactParams())
model = scene.build(0.001)
x = model.initial_state()
built = hwm_kb()
for order in (0, 1, 2):
    model.step(x, None, order=order, num_threads=1)
peak = hwm_kb()
print(json.dumps({"n": len(a), "base_kb": base, "built_kb": built, "peak_kb": peak,
                  "reset": reset}))
"""


def memory_curve(sizes):
    """Peak RSS growth (KiB) of building the two-sphere model and stepping it at orders
    0-2, a fresh subprocess per size: the high-water mark (``VmHWM``, reset after the
    imports and the clouds through ``/proc/self/clear_refs``; ``ru_maxrss`` elsewhere)
    after the steps minus before the model is built."""
    env = dict(os.environ)
    root = str(HERE.parent)
    env["PYTHONPATH"] = (
        root + os.pathsep + env.get("PYTHONPATH", "") if env.get("PYTHONPATH") else root
    )
    rows = []
    for n in sizes:
        r = subprocess.run(
            [sys.executable, "-c", _MEM_SCRIPT, str(n)],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        if r.returncode != 0:
            raise RuntimeError(f"memory subprocess failed for n={n}: {r.stderr[-500:]}")
        rows.append(json.loads(r.stdout.strip().splitlines()[-1]))
    return rows


def scaling(path, quick, all_res, rounds, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [50, 100, 200] if quick else [100, 200, 400, 800, 1600, 3200, 5000]
    n_fixed = 150 if quick else 1000
    depths = np.linspace(-0.002, 0.01 if quick else 0.03, 4 if quick else 9)
    mem_sizes = [100, 400] if quick else [250, 500, 1000, 2000, 4000, 8000]
    r_small = 2 if quick else max(3, rounds // 3)

    # time against samples per body
    cases, counts = [], {}
    for n in sizes:
        model, x, cloud, _ = spheres(n)
        counts[n] = len(cloud)
        for o in (0, 1):
            cases.append(
                Case(
                    f"n{n}o{o}", (lambda m=model, x=x, o=o: m.step(x, None, order=o, num_threads=1))
                )
            )
    # time against samples in contact (fixed cloud sizes, pressed deeper)
    model0, _, cloud0, (pa, pb0) = spheres(n_fixed)
    eps = sc.ContactParams().eps
    in_contact = []
    for k, dpt in enumerate(depths):
        pb = [0.0, 0.0, 2 * SPHERE_R - dpt, *scenes.IDENTITY]
        phi = sc.separation(cloud0, pa, cloud0, pb, eps).phi
        in_contact.append(int(np.sum(phi < 0)))
        x = model0.initial_state()
        x[7 + 2] = pb[2]
        for o in (0, 1):
            cases.append(
                Case(f"d{k}o{o}", (lambda x=x, o=o: model0.step(x, None, order=o, num_threads=1)))
            )
    # threads inside one step (the contact kernel), a large pair of clouds
    n_thr = 400 if quick else 3200
    model_t, x_t, _, _ = spheres(n_thr)
    for nt in (1, 2):
        cases.append(
            Case(f"thr{nt}", (lambda nt=nt: model_t.step(x_t, None, order=1, num_threads=nt)))
        )
    t0 = time.perf_counter()
    res = measure(cases, r_small, target=0.005 if quick else 0.02, budget=3.0, min_rounds=2)
    mem = memory_curve(mem_sizes)
    print(f"\nScaling measurements: {time.perf_counter() - t0:.1f} s", file=out)

    fig, ax = plt.subplots(2, 2, figsize=(12, 9))
    # (a) samples per body
    a = ax[0, 0]
    ns = np.array([counts[n] for n in sizes], dtype=float)
    for o, mk in ((0, "o-"), (1, "s-")):
        t = np.array([res[f"n{n}o{o}"].median for n in sizes]) * 1e3
        a.loglog(ns, t, mk, label=f"Model.step order {o}")
    ref = np.array([res[f"n{n}o0"].median for n in sizes]) * 1e3
    a.loglog(ns, ref[-1] * (ns / ns[-1]) ** 2, "k:", label="∝ n² (all sample pairs)")
    a.set_xlabel("samples per body (two spheres in light contact)")
    a.set_ylabel("time per step [ms], one thread")
    a.set_title("cost against cloud size")
    a.legend()
    a.grid(True, which="both", alpha=0.3)
    # (b) samples in contact
    a = ax[0, 1]
    for o, mk in ((0, "o-"), (1, "s-")):
        t = np.array([res[f"d{k}o{o}"].median for k in range(len(depths))]) * 1e3
        a.plot(in_contact, t, mk, label=f"Model.step order {o}")
    a.set_ylim(bottom=0)
    a.set_xlabel(
        f"samples in contact (phi < 0), {len(cloud0)} + {len(cloud0)} samples, "
        f"overlap {depths[0] * 1e3:.0f} to {depths[-1] * 1e3:.0f} mm"
    )
    a.set_ylabel("time per step [ms], one thread")
    a.set_title("cost against samples in contact (fixed cloud sizes)")
    a.legend()
    a.grid(True, alpha=0.3)
    # (c) threads
    a = ax[1, 0]
    labels, sc1, sc2, mj1, mj2 = [], [], [], [], []
    for key, r in all_res.items():
        if "sc_r1" in r and r["sc_r1"].times:
            labels.append({"push_t": "push-T", "box": "box", "tori": "tori"}.get(key, key))
            sc1.append(r["sc_r1"].median)
            sc2.append(r["sc_r2"].median)
            mj1.append(r["mj_r1"].median if "mj_r1" in r and r["mj_r1"].times else np.nan)
            mj2.append(r["mj_r2"].median if "mj_r2" in r and r["mj_r2"].times else np.nan)
    labels.append(f"step o1\n{n_thr}+{n_thr}")
    sc1.append(res["thr1"].median)
    sc2.append(res["thr2"].median)
    mj1.append(np.nan)
    mj2.append(np.nan)
    pos = np.arange(len(labels))
    w = 0.2
    a.bar(
        pos - 1.5 * w, np.ones(len(labels)), w, label="softcontact, 1 thread", color="C0", alpha=0.5
    )
    a.bar(
        pos - 0.5 * w, np.array(sc1) / np.array(sc2), w, label="softcontact, 2 threads", color="C0"
    )
    a.bar(
        pos + 0.5 * w,
        np.where(np.isnan(mj1), 0, 1),
        w,
        label="MuJoCo, 1 thread",
        color="C1",
        alpha=0.5,
    )
    a.bar(
        pos + 1.5 * w,
        np.nan_to_num(np.array(mj1) / np.array(mj2)),
        w,
        label="MuJoCo, 2 threads",
        color="C1",
    )
    for i in range(len(labels)):
        txt = f"sc {sc1[i] * 1e3:.3g} ms"
        if not np.isnan(mj1[i]):
            txt += f"\nMJ {mj1[i] * 1e3:.3g} ms"
        a.text(pos[i], 0.05, txt, ha="center", fontsize=7)
    a.set_xticks(pos, labels)
    a.axhline(2.0, color="k", ls=":", lw=0.8)
    a.set_ylabel("speed-up over 1 thread")
    a.set_title(
        "threads (rollouts B=64 x T=100 per scene; 1-thread times printed)"
        if not quick
        else "threads (quick settings)"
    )
    a.legend(fontsize=8)
    # (d) memory
    a = ax[1, 1]
    mn = np.array([r["n"] for r in mem], dtype=float)
    grow = np.array([r["peak_kb"] - r["base_kb"] for r in mem], dtype=float) / 1024
    a.plot(mn, grow, "o-", label="peak RSS growth: build + step orders 0-2")
    if len(mn) >= 2:
        k, b = np.polyfit(mn, grow, 1)
        a.plot(mn, k * mn + b, "k:", label=f"linear fit: {k * 1024:.2f} KiB/sample + {b:.2f} MiB")
    a.set_xlabel("samples per body (two spheres)")
    a.set_ylabel("MiB")
    a.set_title("peak memory (VmHWM, fresh process per size)")
    a.legend()
    a.grid(True, alpha=0.3)
    fig.suptitle(
        f"softcontact {sc.build_info()['version']} scaling "
        f"({'quick' if quick else 'default'} settings)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    # the numbers, too
    print("\n| samples per body | order 0 [ms] | order 1 [ms] |", file=out)
    print("|---|---|---|", file=out)
    for n in sizes:
        print(
            f"| {counts[n]} | {res[f'n{n}o0'].median * 1e3:.3g} | "
            f"{res[f'n{n}o1'].median * 1e3:.3g} |",
            file=out,
        )
    print(
        f"\n| samples in contact ({len(cloud0)} + {len(cloud0)}) | overlap [mm] "
        "| order 0 [ms] | order 1 [ms] |",
        file=out,
    )
    print("|---|---|---|---|", file=out)
    for k in range(len(depths)):
        print(
            f"| {in_contact[k]} | {depths[k] * 1e3:.0f} | {res[f'd{k}o0'].median * 1e3:.3g} | "
            f"{res[f'd{k}o1'].median * 1e3:.3g} |",
            file=out,
        )
    print("", file=out)
    for o in (0, 1):
        t = [res[f"d{k}o{o}"].median for k in range(len(depths))]
        print(f"order {o}: slowest / fastest over the depths = {max(t) / min(t):.2f}  ", file=out)
    print(
        f"\nstep order 1, {n_thr} + {n_thr} samples: 1 thread "
        f"{res['thr1'].median * 1e3:.3g} ms, 2 threads {res['thr2'].median * 1e3:.3g} ms",
        file=out,
    )
    print("\n| samples per body | peak RSS growth [MiB] |", file=out)
    print("|---|---|", file=out)
    for n_, g in zip(mn, grow, strict=True):
        print(f"| {int(n_)} | {g:.2f} |", file=out)
    print(f"\nwrote {path}", file=out)


# ------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------
def _load():
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg()) + " (1, 5, 15 min)"
    except OSError:  # pragma: no cover - not on this platform
        return "n/a"


def run(
    repeats=15,
    quick=False,
    use_jax=True,
    use_mujoco=True,
    plots=None,
    target=None,
    budget=None,
    out=sys.stdout,
    heading=True,
):
    t_start = time.perf_counter()
    B, T = (4, 5) if quick else (64, 100)
    rounds = 3 if quick else repeats
    target = (0.002 if quick else 0.02) if target is None else target
    budget = (0.5 if quick else 8.0) if budget is None else budget
    mj = None
    if use_mujoco:
        try:
            import mujoco as mj
        except ImportError as e:
            print(f"MuJoCo not available ({e}): its columns are n/a", file=out)
    jx, jx_err = (None, "--no-jax") if not use_jax else load_jax()
    info = sc.build_info()
    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    head = [f"softcontact {info['version']} (SIMD {info['isa_default']})"]
    head.append(f"MuJoCo {mj.__version__}" if mj is not None else "MuJoCo n/a")
    if jx is not None:
        import jax

        head.append(
            f"JAX {jax.__version__} ({jax.default_backend()}, x64 {jax.config.jax_enable_x64})"
        )
    else:
        head.append(f"JAX n/a ({jx_err})")
    if heading:
        print("## softcontact vs MuJoCo vs JAX\n", file=out)
    print(
        "; ".join(head) + f"; Python {platform.python_version()}, {ncpu} CPUs, "
        f"{platform.machine()}.",
        file=out,
    )
    print(f"Load average at the start: {_load()}.", file=out)
    print(
        f"Times are medians over up to {rounds} interleaved rounds (each round: the mean "
        f"of ~{target * 1e3:g} ms of calls), one thread unless stated; rollouts "
        f"B = {B}, T = {T}.",
        file=out,
    )

    makers = {"push_t": scenes.push_t, "box": scenes.box_on_floor, "tori": scenes.two_tori}
    variants = {
        "push_t": ("floor", "free 3D T on a floor (friction 0.35 as support)"),
        "tori": ("hull", "each torus one mesh = its convex hull (holes filled)"),
    }
    all_res, var_rows = {}, []
    for key, make in makers.items():
        bs = make()
        cases = softcontact_cases(bs, B, T)
        vres_cases = []
        if mj is not None:
            cases += mujoco_cases(bs, B, T)
            if key in variants:
                vb = make(variant=variants[key][0])
                vres_cases = mujoco_cases(vb, B, T, prefix="mv", rollouts=False)
        if jx is not None:
            cases += jax_cases(bs, B, T, jx, budget)
        t0 = time.perf_counter()
        res = measure(cases + vres_cases, rounds, target, budget, out=out)
        vres = {k: res.pop(k) for k in list(res) if k.startswith("mv")}
        all_res[key] = res
        if vres:
            var_rows.append((bs.name, variants[key][1], vres, res))
        scene_table(bs, res, B, T, out)
        print(f"({time.perf_counter() - t0:.0f} s)", file=out)
        out.flush()
    variants_table(var_rows, out)
    thresholds_table(all_res, out)
    if plots:
        scaling(plots, quick, all_res, rounds, out)
    print(
        f"\ntotal {time.perf_counter() - t_start:.0f} s; load average at the end: {_load()} "
        "(the runner itself keeps one core busy; more means other processes shared the "
        "machine, and the two-thread rows are then meaningless)",
        file=out,
    )
    return all_res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--repeats",
        type=int,
        default=15,
        help="rounds per case (default: %(default)s; slow cases get fewer)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="tiny settings (3 rounds, B=4 T=5 rollouts, small plots): a smoke test",
    )
    ap.add_argument("--no-jax", action="store_true", help="skip the JAX columns")
    ap.add_argument("--no-mujoco", action="store_true", help="skip the MuJoCo columns")
    ap.add_argument(
        "--plots", metavar="PATH", default=None, help="also write the scaling plots to this PNG"
    )
    ap.add_argument(
        "--target",
        type=float,
        default=None,
        help="seconds of calls per round of a case (default 0.02; quick 0.002)",
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds at most per case over all rounds (default 8; quick 0.5)",
    )
    a = ap.parse_args(argv)
    if a.repeats < 1:
        ap.error("--repeats must be >= 1")
    run(a.repeats, a.quick, not a.no_jax, not a.no_mujoco, a.plots, a.target, a.budget)


if __name__ == "__main__":
    main()
