"""``python -m softcontact`` (or the ``softcontact`` command): the main job.

Subcommands (``python -m softcontact --help``; each has ``--help``; ``--version`` prints
the version):

``demo`` (the default: with no arguments, or with only ``demo``'s options, as in
``python -m softcontact --seed 5``)
    Push-T from a fixed seed with the gradient-based MPC controller
    (:mod:`softcontact.tasks.push_t.mpc`): a per-tick log, the final coverage, and
    ``push_t.png`` (trajectory of the T and the pusher over the goal) and ``push_t.gif``
    (animation) in the current folder.  Well under a minute on 2 cores.
``mpc``
    The controller on many seeded initial states: success rate, time to success, time per
    solve, the failures (and optionally a figure of them).
``compare``
    Zeroth-order (CEM) against gradient (L-BFGS) and Hessian (trust-region Newton)
    optimization on fixed push-T problems: a markdown table and a plot.
``sysid``
    Identify the T's mass, support friction and the pusher-T friction from a noisy
    observed push (``scipy.optimize.least_squares`` with analytic parameter Jacobians).
``bench``
    Step and rollout timings of the push-T model (medians and ratios in one run).
``ssdf``
    The soft signed distance function on the push-T shape (``ssdf_demo.png``).
``gym-pusht``
    The push-T environment of Diffusion Policy / LeRobot (the ``gym-pusht`` package,
    ``pip install "softcontact[gym]"``) solved by MPC on a softcontact model
    (:mod:`softcontact.tasks.gym_pusht`): N seeded episodes on a Dask cluster, a line per
    episode, a summary, optionally ``--json`` and ``--gif``.
"""

from __future__ import annotations

import argparse
import logging
import math
import re
import sys
import time

import numpy as np

DEMO_SEED = 3

#: grid points per axis of ``ssdf --grid``: a contour needs 2; 2000 (4 million queries with
#: their second derivatives, about 0.3 GB) at most
GRID_RANGE = (2, 2000)


def _int_in(lo, hi=None):
    """An argparse ``type``: an integer in ``[lo, hi]`` (a bad one is a usage error, exit 2,
    naming the option)."""

    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if v < lo or (hi is not None and v > hi):
            rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
            raise argparse.ArgumentTypeError(f"must be an integer {rng}, got {text}")
        return v

    parse.__name__ = "int"
    return parse


def _float_from(lo, *, strict):
    """An argparse ``type``: a finite number ``> lo`` (``strict``) or ``>= lo``."""

    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        if not (math.isfinite(v) and (v > lo if strict else v >= lo)):
            raise argparse.ArgumentTypeError(
                f"must be a finite number {'>' if strict else '>='} {lo:g}, got {text}"
            )
        return v

    parse.__name__ = "float"
    return parse


_SEED = _int_in(0)
_COUNT = _int_in(1)
_POSITIVE = _float_from(0.0, strict=True)
_NONNEGATIVE = _float_from(0.0, strict=False)


_COMMANDS = ("demo", "mpc", "compare", "sysid", "bench", "ssdf", "gym-pusht")


def _pair(text):
    """An argparse ``type``: two finite numbers ``A,B``."""
    parts = text.split(",")
    try:
        vals = tuple(float(v) for v in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be two numbers A,B, got {text!r}") from None
    if len(vals) != 2 or not all(math.isfinite(v) for v in vals):
        raise argparse.ArgumentTypeError(f"must be two finite numbers A,B, got {text!r}")
    return vals


def _noise(text):
    vals = _pair(text)
    if min(vals) < 0:
        raise argparse.ArgumentTypeError(f"must be two numbers >= 0 (px, degrees), got {text!r}")
    return vals


def _threshold(text):
    v = _POSITIVE(text)
    if v >= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text}")
    return v


def _is_verbose(arg):
    """-v, -vv, ... or --verbose and its abbreviations (argparse accepts those)."""
    return re.fullmatch(r"-v+", arg) is not None or (len(arg) > 3 and "--verbose".startswith(arg))


_VERBOSE = "log the library's progress messages to stderr (-v: info, -vv: debug)"


def _configure_logging(verbosity):
    """-v: the library's INFO messages on stderr; -vv: DEBUG too.  Only the softcontact
    loggers are configured (not the root: other libraries stay quiet)."""
    if verbosity > 0:
        from softcontact._progress import log_to_stderr

        log_to_stderr(logging.INFO if verbosity == 1 else logging.DEBUG)


def _parser(prog="python -m softcontact"):
    from ._version import __version__

    p = argparse.ArgumentParser(
        prog=prog,
        description="softcontact: smooth, differentiable collision detection and contact. "
        "Without a command, runs `demo` (with any of its options).",
    )
    p.add_argument("--version", action="version", version=f"softcontact {__version__}")
    p.add_argument("-v", "--verbose", action="count", default=0, dest="verbose_top", help=_VERBOSE)
    # every command takes -v too (after its name); a separate dest, as argparse lets a
    # command's defaults overwrite the top level's
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=0, help=_VERBOSE)
    sub = p.add_subparsers(dest="command", metavar="{" + ",".join(_COMMANDS) + "}")

    d = sub.add_parser(
        "demo",
        parents=[common],
        help="push-T with the MPC controller from a fixed seed; "
        "writes push_t.png and push_t.gif (the default command)",
    )
    d.add_argument("--seed", type=_SEED, default=DEMO_SEED, help="task seed (default: %(default)s)")
    d.add_argument(
        "--time-limit",
        type=_POSITIVE,
        default=30.0,
        help="simulated seconds allowed (default: %(default)s)",
    )
    d.add_argument("--png", default="push_t.png", help="figure to write (default: %(default)s)")
    d.add_argument("--gif", default="push_t.gif", help="animation to write (default: %(default)s)")
    d.add_argument("--no-figures", action="store_true", help="write no files")
    d.add_argument("--quiet", action="store_true", help="no per-tick log")

    m = sub.add_parser(
        "mpc", parents=[common], help="MPC success rate over many seeded initial states"
    )
    m.add_argument(
        "--seeds", type=_COUNT, default=50, help="number of seeds, 0..N-1 (default: %(default)s)"
    )
    m.add_argument("--first-seed", type=_SEED, default=0, help="first seed (default: 0)")
    m.add_argument(
        "--jobs",
        type=_int_in(1, 64),
        default=2,
        help="worker processes, 1..64 (default: %(default)s)",
    )
    m.add_argument(
        "--time-limit",
        type=_POSITIVE,
        default=30.0,
        help="simulated seconds per episode (default: %(default)s)",
    )
    m.add_argument(
        "--iterations",
        type=_COUNT,
        default=10,
        help="L-BFGS-B iterations per tick (default: %(default)s)",
    )
    m.add_argument("--figure", default=None, help="write the failures' trajectories to this PNG")

    c = sub.add_parser(
        "compare",
        parents=[common],
        help="CEM vs L-BFGS vs trust-region Newton vs iLQR on fixed push-T problems",
    )
    c.add_argument(
        "--seeds", type=_SEED, nargs="+", default=[0, 1, 2], help="problem seeds (default: 0 1 2)"
    )
    c.add_argument("--horizon", type=_COUNT, default=400, help="steps (default: %(default)s = 2 s)")
    c.add_argument(
        "--block", type=_COUNT, default=20, help="steps per control block (default: %(default)s)"
    )
    c.add_argument("--cem-samples", type=_int_in(2), default=64, help="default: %(default)s")
    c.add_argument("--cem-elites", type=_COUNT, default=8, help="default: %(default)s")
    c.add_argument("--cem-iterations", type=_COUNT, default=30, help="default: %(default)s")
    c.add_argument("--lbfgs-iterations", type=_COUNT, default=60, help="default: %(default)s")
    c.add_argument("--newton-iterations", type=_COUNT, default=20, help="default: %(default)s")
    c.add_argument("--ilqr-iterations", type=_COUNT, default=30, help="default: %(default)s")
    c.add_argument(
        "--figure", default="compare.png", help="plot to write (default: %(default)s; '' for none)"
    )
    c.set_defaults(subparser=c)  # for the checks across options, reported as argparse does

    y = sub.add_parser(
        "sysid", parents=[common], help="identify mass and frictions from a noisy push"
    )
    y.add_argument("--seed", type=_SEED, default=0, help="noise seed (default: %(default)s)")
    y.add_argument(
        "--noise",
        type=_NONNEGATIVE,
        default=1e-3,
        help="observation noise std, m (default: %(default)s)",
    )
    y.add_argument(
        "--max-nfev",
        type=_COUNT,
        default=None,
        help="least-squares evaluations at most (default: SciPy's)",
    )

    b = sub.add_parser(
        "bench", parents=[common], help="step and rollout timings of the push-T model"
    )
    b.add_argument(
        "--repeats", type=_COUNT, default=15, help="timed repeats per row (default: %(default)s)"
    )

    s = sub.add_parser("ssdf", parents=[common], help="SSDF demo on the push-T shape")
    s.add_argument("--out", default="ssdf_demo.png", help="figure to write (default: %(default)s)")
    s.add_argument(
        "--grid",
        type=_int_in(*GRID_RANGE),
        default=300,
        help=f"grid points per axis, {GRID_RANGE[0]}..{GRID_RANGE[1]} (default: %(default)s)",
    )
    s.add_argument("--no-figure", action="store_true", help="print the summary only")
    g = sub.add_parser(
        "gym-pusht",
        parents=[common],
        help="MPC on the gym-pusht environment (pip install 'softcontact[gym]')",
    )
    g.add_argument("--episodes", type=_COUNT, default=10, help="episodes (default: %(default)s)")
    g.add_argument("--first-seed", type=_SEED, default=0, help="first reset seed (default: 0)")
    g.add_argument(
        "--noise",
        type=_noise,
        default=(0.0, 0.0),
        metavar="PX,DEG",
        help="observation noise std: px on positions, degrees on the angle (default: 0,0)",
    )
    g.add_argument(
        "--damping",
        type=_NONNEGATIVE,
        default=None,
        help="the env's space damping (default: the env's, 0: no momentum)",
    )
    g.add_argument(
        "--block-cog",
        type=_pair,
        default=None,
        metavar="X,Y",
        help="the block's centre of gravity, px in its frame (default: the env's, 0,45)",
    )
    g.add_argument(
        "--threshold",
        type=_threshold,
        default=0.95,
        help="success: coverage above this (default: %(default)s, the env's)",
    )
    g.add_argument(
        "--controller",
        choices=("ddp", "sampling"),
        default="ddp",
        help="iLQR on exact derivatives, or predictive sampling (default: %(default)s)",
    )
    g.add_argument(
        "--deadline",
        type=_POSITIVE,
        default=None,
        help="seconds per decision the planner aims for (default: the controller's, 0.025)",
    )
    g.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="a running Dask scheduler (default: a LocalCluster of this machine's cores; "
        "'inprocess': no Dask)",
    )
    g.add_argument(
        "--workers",
        type=_int_in(1, 256),
        default=None,
        help="LocalCluster workers (default: cores)",
    )
    g.add_argument("--json", default=None, metavar="PATH", help="write the results as JSON")
    g.add_argument(
        "--gif", default=None, metavar="PATH", help="write an animation of the first episode"
    )
    return p


def gym_pusht(
    episodes=10,
    first_seed=0,
    *,
    noise=(0.0, 0.0),
    damping=None,
    block_cog=None,
    threshold=0.95,
    controller="ddp",
    deadline=None,
    scheduler=None,
    workers=None,
    json_path=None,
    gif=None,
    stream=None,
):
    """The ``gym-pusht`` command; returns the
    :class:`~softcontact.tasks.gym_pusht.Evaluation`.  ``deadline`` None is the
    controller's default, :data:`softcontact.tasks.gym_pusht.DEADLINE` (the command
    always runs under a deadline)."""
    import json

    from softcontact._progress import Progress
    from softcontact.tasks import gym_pusht as gp

    if deadline is None:
        deadline = gp.DEADLINE
    opts = {
        "controller": controller,
        "deadline": deadline,
        "threshold": threshold,
        "noise": noise,
        "damping": damping,
        "block_cog": block_cog,
    }
    seeds = list(range(first_seed, first_seed + episodes))
    where = (
        "in this process"
        if scheduler == "inprocess"
        else f"on {scheduler}"
        if scheduler
        else f"on a LocalCluster of {workers or 'all'} worker(s)"
    )
    print(
        f"gym-pusht: {episodes} episode(s), seeds {seeds[0]}..{seeds[-1]}, controller "
        f"{controller}, deadline {deadline:g} s, threshold {threshold:g}, {where}",
        file=stream,
    )
    first = []
    with Progress(episodes, "episodes", stream) as progress:

        def done(ep, *_):
            t = np.asarray(ep.solve_times)
            progress.update(
                f"  seed {ep.seed:4d}: {'success' if ep.success else 'FAIL   '} after "
                f"{ep.steps:3d} steps, coverage max {ep.max_coverage:.3f} final "
                f"{ep.final_coverage:.3f}, decisions median {np.median(t) * 1e3:5.1f} ms "
                f"max {t.max() * 1e3:5.1f} ms"
            )

        if gif:  # the first episode here, recording its frames
            frames = []
            first.append(gp.run_episode(seeds[0], frames=frames, **opts))
            done(first[0])
            gp.write_gif(gif, frames, f"gym-pusht: seed {seeds[0]}, {controller}")
        ev = gp.evaluate(
            seeds[len(first) :], scheduler=scheduler, n_workers=workers, callback=done, **opts
        )
    ev = gp.Evaluation(tuple(first) + ev.episodes, ev.wall)
    summ = ev.summary()

    def fmt(v, f):
        return "n/a" if v is None else format(v, f)

    print(
        f"success {fmt(summ['success_rate'], '.1%')} of {episodes}, mean max coverage "
        f"{fmt(summ['mean_max_coverage'], '.3f')}, median steps to success "
        f"{fmt(summ['median_steps_to_success'], 'g')}; decisions median "
        f"{fmt(summ['solve_time_median'] and summ['solve_time_median'] * 1e3, '.1f')} ms, "
        f"p95 {fmt(summ['solve_time_p95'] and summ['solve_time_p95'] * 1e3, '.1f')} ms, "
        f"max {fmt(summ['solve_time_max'] and summ['solve_time_max'] * 1e3, '.1f')} ms",
        file=stream,
    )
    if gif:
        print(f"wrote {gif}", file=stream)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(ev.to_dict(), f, indent=1)
        print(f"wrote {json_path}", file=stream)
    return ev


def demo(
    seed=DEMO_SEED,
    time_limit=30.0,
    png="push_t.png",
    gif="push_t.gif",
    figures=True,
    log=True,
    stream=None,
):
    """The push-T demo; returns the :class:`~softcontact.tasks.push_t.mpc.Episode`."""
    import softcontact as sc
    from softcontact.tasks import push_t
    from softcontact.tasks.push_t.mpc import run_episode

    info = sc.build_info()
    print(f"softcontact {info['version']} (SIMD: {info['isa_default']})", file=stream)
    task = push_t.make(seed=seed)
    print(
        f"push-T seed {seed}: T at {np.round(task.x0[:3], 3).tolist()}, pusher at "
        f"{np.round(task.x0[3:5], 3).tolist()}, goal {np.round(task.goal, 3).tolist()}",
        file=stream,
    )
    print(
        "controller: push selection by batched rollouts, refinement by L-BFGS-B with "
        "exact gradients (see softcontact.tasks.push_t.mpc)",
        file=stream,
    )
    t0 = time.perf_counter()

    def progress(t, x, cov, phase):
        if log:
            print(
                f"  t = {t:5.2f} s  {phase:4s}  coverage {cov:.3f}  T "
                f"{np.round(x[:3], 3).tolist()}  ({time.perf_counter() - t0:5.1f} s)",
                file=stream,
                flush=True,
            )

    ep = run_episode(task, time_limit=time_limit, callback=progress)
    st = ep.solve_times
    print(
        f"{'success' if ep.success else 'no success'}: coverage {ep.coverage:.3f} after "
        f"{ep.time:.2f} s simulated, {ep.wall:.1f} s wall; {st.size} ticks planned, "
        f"median {np.median(st) if st.size else 0.0:.3f} s per solve",
        file=stream,
    )
    if figures:
        import matplotlib

        from softcontact.tasks.push_t.viz import animate, plot_trajectory

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig = plot_trajectory(task, ep.states, png)
        plt.close(fig)
        n = animate(task, ep.states, gif)
        print(f"wrote {png} and {gif} ({n} frames)", file=stream)
    return ep


def mpc(seeds=50, first_seed=0, jobs=2, time_limit=30.0, iterations=10, figure=None, stream=None):
    """The MPC runner; returns the :class:`~softcontact.tasks.push_t.mpc.Evaluation`."""
    from softcontact._progress import Progress
    from softcontact.tasks import push_t
    from softcontact.tasks.push_t.mpc import evaluate

    t0 = time.perf_counter()
    with Progress(seeds, "episodes", stream) as progress:

        def done(ep):
            progress.update(
                f"  seed {ep.seed:3d}: {'success' if ep.success else 'FAIL   '} coverage "
                f"{ep.coverage:.3f} at {ep.time:5.2f} s ({ep.wall:5.1f} s wall, "
                f"{ep.solve_times.size} solves)"
            )

        ev = evaluate(
            range(first_seed, first_seed + seeds),
            jobs=jobs,
            time_limit=time_limit,
            callback=done,
            iterations=iterations,
        )
    print(ev.summary(), file=stream)
    print(f"total wall {time.perf_counter() - t0:.1f} s with {jobs} job(s)", file=stream)
    if figure and ev.failures:
        import matplotlib

        from softcontact.tasks.push_t.viz import plot_trajectory

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fails = ev.failures
        cols = min(4, len(fails))
        rows = -(-len(fails) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 4.2 * rows), squeeze=False)
        for ax, ep in zip(axes.flat, fails, strict=False):
            plot_trajectory(
                push_t.make(seed=ep.seed),
                ep.states,
                ax=ax,
                title=f"seed {ep.seed}: coverage {ep.coverage:.3f}",
            )
        for ax in list(axes.flat)[len(fails) :]:
            ax.axis("off")
        fig.tight_layout()
        fig.savefig(figure, dpi=90)
        plt.close(fig)
        print(f"wrote {figure}", file=stream)
    return ev


def compare(
    seeds=(0, 1, 2),
    horizon=400,
    block=20,
    cem_samples=64,
    cem_elites=8,
    cem_iterations=30,
    lbfgs_iterations=60,
    newton_iterations=20,
    figure="compare.png",
    stream=None,
    ilqr_iterations=30,
):
    """The optimizer comparison; returns the
    :class:`~softcontact.tasks.push_t.compare.Comparison`."""
    from softcontact._progress import Progress
    from softcontact.tasks.push_t.compare import METHODS
    from softcontact.tasks.push_t.compare import compare as compare_methods

    with Progress(len(seeds) * len(METHODS), "runs", stream) as progress:

        def done(t):
            progress.update(
                f"  seed {t.seed} {t.method:12s}: best {t.best[-1]:.4g} after "
                f"{t.wall[-1]:.2f} s, {t.steps[-1]} steps"
            )

        comp = compare_methods(
            seeds,
            horizon=horizon,
            block=block,
            cem_samples=cem_samples,
            cem_elites=cem_elites,
            cem_iterations=cem_iterations,
            lbfgs_iterations=lbfgs_iterations,
            newton_iterations=newton_iterations,
            ilqr_iterations=ilqr_iterations,
            callback=done,
        )
    print(comp.table(), file=stream)
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        plt.close(comp.plot(figure))
        print(f"wrote {figure}", file=stream)
    return comp


def sysid(seed=0, noise=1e-3, max_nfev=None, stream=None):
    """The identification experiment; returns its result."""
    from softcontact.tasks.push_t.sysid import experiment

    res = experiment(seed=seed, noise=noise, max_nfev=max_nfev)
    print(res.table(), file=stream)
    print(f"{res.nfev} least-squares evaluations, {res.wall:.1f} s", file=stream)
    return res


def bench(repeats=15, stream=None):
    """Median step and rollout times of the push-T model, interleaved; returns the rows."""
    from softcontact.tasks import push_t

    task = push_t.make(seed=DEMO_SEED)
    m = task.model
    x = np.array(task.x0, dtype=float)
    x[3:5] = [x[0], x[1] - 0.09]  # pusher against the stem: a step in contact
    u = np.array([0.0, 0.1, 0.0])
    B, T = 64, 100
    X0 = np.repeat(x[None], B, axis=0)
    U = np.tile(u, (B, T, 1))
    cases = {
        "step, order 0": lambda: m.step(x, u, order=0, num_threads=1),
        "step, order 1": lambda: m.step(x, u, order=1, num_threads=1),
        "step, order 2": lambda: m.step(x, u, order=2, num_threads=1),
        f"rollout B={B} T={T}, order 0, 1 thread": lambda: m.rollout(X0, U, 0, 1),
        f"rollout B={B} T={T}, order 0, 2 threads": lambda: m.rollout(X0, U, 0, 2),
        f"rollout B={B} T={T}, order 1, 2 threads": lambda: m.rollout(X0, U, 1, 2),
    }
    # a step is timed as the mean of a batch of calls: one call timed alone right after a
    # rollout measures the caches and the core's wake-up, several times the step's cost
    calls = {k: 1 if k.startswith("rollout") else 100 for k in cases}
    times = {k: [] for k in cases}  # seconds per call, per repeat, per row
    for f in cases.values():  # warm up
        f()
    for _ in range(repeats):  # interleaved: every row sees the same machine state
        for k, f in cases.items():
            n = calls[k]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            times[k].append((time.perf_counter() - t0) / n)
    med = {k: float(np.median(v)) for k, v in times.items()}
    base = med["step, order 0"]
    print(
        f"push-T model ({len(task.cloud)} + {len(task.pusher_cloud)} samples, 4 walls, "
        f"support friction); medians of {repeats} interleaved rounds, a step the mean of 100 calls",
        file=stream,
    )
    print("| case | median per call | per step [us] | ratio to step order 0 |", file=stream)
    print("|---|---|---|---|", file=stream)
    rows = []
    for k, v in med.items():
        steps = B * T if k.startswith("rollout") else 1
        rows.append((k, v, v / steps))
        print(
            f"| {k} | {v * 1e3:.3f} ms | {v / steps * 1e6:.1f} | {v / steps / base:.2f} |",
            file=stream,
        )
    r1 = med[f"rollout B={B} T={T}, order 0, 1 thread"]
    r2 = med[f"rollout B={B} T={T}, order 0, 2 threads"]
    print(f"rollout speed-up, 2 threads / 1: {r1 / r2:.2f}", file=stream)
    return rows


def ssdf_demo(out="ssdf_demo.png", grid=300, figure=True, stream=None):
    import softcontact as sc

    info = sc.build_info()
    print(
        f"softcontact {info['version']}  (SIMD: {info['isa_default']}; "
        f"supported: {', '.join(info['isa_supported'])})",
        file=stream,
    )
    cloud = sc.PointCloud.t_shape(spacing=0.005)
    print(f"cloud: {cloud!r}", file=stream)
    lo, hi = cloud.bounds
    pad = 0.03
    xs = np.linspace(lo[0] - pad, hi[0] + pad, grid)
    ys = np.linspace(lo[1] - pad, hi[1] + pad, grid)
    X = np.stack(np.meshgrid(xs, ys), axis=-1)
    rows = []
    for eps in (1e-6, 2.5e-5, 4e-4):
        t0 = time.perf_counter()
        r = sc.ssdf(cloud, X, eps, order=2)
        dt = time.perf_counter() - t0
        # gradient vs central differences of phi, on a few grid points
        idx = (slice(None, None, 37), slice(None, None, 41))
        h = 1e-7
        fd = np.stack(
            [
                (sc.ssdf(cloud, X[idx] + h * e, eps).phi - sc.ssdf(cloud, X[idx] - h * e, eps).phi)
                / (2 * h)
                for e in np.eye(2)
            ],
            -1,
        )
        err = np.max(np.abs(fd - r.grad[idx]))
        inside = np.mean(r.phi < 0)
        print(
            f"eps = {eps:8.1e} m^2: {X[..., 0].size} queries x {len(cloud)} samples, order 2, "
            f"{dt * 1e3:6.1f} ms ({X[..., 0].size * len(cloud) / max(dt, 1e-9):.2e} pairs/s); "
            f"inside fraction {inside:.3f}; |grad - FD| <= {err:.1e}",
            file=stream,
        )
        rows.append((eps, r.phi))
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 3, figsize=(13, 4.6), constrained_layout=True)
        fig.suptitle(
            "Soft signed distance of the push-T shape (zero contour in black, samples white)"
        )
        for ax, (eps, phi) in zip(axes, rows, strict=True):
            m = np.max(np.abs(phi))
            im = ax.pcolormesh(xs, ys, phi, cmap="RdBu_r", vmin=-m, vmax=m, shading="auto")
            ax.contour(xs, ys, phi, levels=[0.0], colors="k", linewidths=1.5)
            ax.plot(cloud.points[:, 0], cloud.points[:, 1], ".", ms=1.5, color="w")
            ax.set_title(f"eps = {eps:.1e} m$^2$")
            ax.set_aspect("equal")
            ax.set_xlabel("x [m]")
            fig.colorbar(im, ax=ax, shrink=0.8, label="phi [m]")
        axes[0].set_ylabel("y [m]")
        fig.savefig(out, dpi=110)
        plt.close(fig)
        print(f"wrote {out}", file=stream)
    return rows


def main(argv=None, prog="python -m softcontact"):
    """Run ``python -m softcontact`` with ``argv`` (default ``sys.argv[1:]``); bad options
    are usage errors (exit 2, the message naming the option), as argparse reports them.
    Arguments that start with an option other than ``-h``/``--help``/``--version`` are
    ``demo``'s: ``--seed 5`` runs ``demo --seed 5``.  ``-v`` (``--verbose``, repeatable)
    may come before or after the command: ``-v mpc`` and ``mpc -v`` are the same."""
    parser = _parser(prog)
    argv = list(sys.argv[1:] if argv is None else argv)
    # options without a command are demo's; -v may come before a command (the top level's)
    first = next((a for a in argv if not _is_verbose(a)), None)
    if argv and argv[0].startswith("-") and first not in ("-h", "--help", "--version", *_COMMANDS):
        argv = ["demo", *argv]
    args = parser.parse_args(argv)
    cmd = args.command or "demo"
    if args.command is None:  # no arguments at all: the demo with its defaults
        args = parser.parse_args(["demo"])
    _configure_logging(args.verbose_top + getattr(args, "verbose", 0))
    if cmd == "demo":
        demo(args.seed, args.time_limit, args.png, args.gif, not args.no_figures, not args.quiet)
    elif cmd == "mpc":
        mpc(args.seeds, args.first_seed, args.jobs, args.time_limit, args.iterations, args.figure)
    elif cmd == "compare":
        if args.horizon % args.block:
            args.subparser.error(
                f"argument --block: must divide --horizon ({args.horizon}), got {args.block}"
            )
        if args.cem_elites > args.cem_samples:
            args.subparser.error(
                f"argument --cem-elites: must be <= --cem-samples ({args.cem_samples}), "
                f"got {args.cem_elites}"
            )
        compare(
            tuple(args.seeds),
            args.horizon,
            args.block,
            args.cem_samples,
            args.cem_elites,
            args.cem_iterations,
            args.lbfgs_iterations,
            args.newton_iterations,
            args.figure,
            ilqr_iterations=args.ilqr_iterations,
        )
    elif cmd == "sysid":
        sysid(args.seed, args.noise, args.max_nfev)
    elif cmd == "bench":
        bench(args.repeats)
    elif cmd == "gym-pusht":
        gym_pusht(
            args.episodes,
            args.first_seed,
            noise=args.noise,
            damping=args.damping,
            block_cog=args.block_cog,
            threshold=args.threshold,
            controller=args.controller,
            deadline=args.deadline,
            scheduler=args.scheduler,
            workers=args.workers,
            json_path=args.json,
            gif=args.gif,
        )
    else:
        ssdf_demo(out=args.out, grid=args.grid, figure=not args.no_figure)
    return 0


def cli():
    """The ``softcontact`` console script: :func:`main` under that name."""
    return main(prog="softcontact")


if __name__ == "__main__":
    sys.exit(main())
