"""The gym-pusht environment under softcontact MPC: success, precision, robustness, speed.

Runs :func:`softcontact.tasks.gym_pusht.evaluate` on a Dask ``LocalCluster`` (one
single-threaded worker process per core: one core per episode) for each variant below,
on the same seeds, and prints one markdown table (``--out`` writes it to a page too):

- ``ddp`` (iLQR): the env as shipped, the controller refining by Gauss-Newton iLQR on the
  exact step derivatives, success at coverage > 0.95 (the env's threshold);
- ``sampling``: the same controller refining by predictive sampling (128 rollouts,
  6 knots) under the same per-decision deadline (a round of 128 rollouts, which always
  runs once, takes longer than the deadline: its decisions overrun it);
- ``precise``: success only above 0.98 coverage;
- ``noise``: Gaussian observation noise on positions and the angle;
- ``damping``: the env with momentum (pymunk space damping 0.5), identified online and
  placed by taps;
- ``cog``: the env's block with its centre of gravity moved to (0, 30) px;

then the first variant on seeds 0..N-1 (``--scale N``) on 1 and on 2 workers: the wall
time, the success and the failed seeds of each run, and
our own push-T task (:mod:`softcontact.tasks.push_t`, its model as the plant) under
``mpc.realtime_settings()`` (``--own``, 50 seeds).
Decision times are wall-clock seconds of the whole controller call (model state,
planning, PD inversion), measured inside the workers while all of them run.
Published references for the same env: LeRobot's diffusion policy reaches 63.8 %
success over 500 episodes (its model card, lerobot/diffusion_pusht); Diffusion Policy
reports 0.95 / 0.91 max / average coverage (Chi et al., RSS 2023, Table 1).
"""

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import Tee, machine  # noqa: E402

import softcontact as sc  # noqa: E402

#: name (for --variants): (row label, gym_pusht.run_episode options)
VARIANTS = {
    "ddp": ("iLQR (ddp)", {}),
    "sampling": ("predictive sampling", {"controller": "sampling"}),
    "precise": ("iLQR, threshold 0.98", {"threshold": 0.98}),
    "noise": ("iLQR, noise 1 px / 1 deg", {"noise": (1.0, 1.0)}),
    "damping": ("iLQR, env damping 0.5", {"damping": 0.5}),
    "cog": ("iLQR, env CoG (0, 30) px", {"block_cog": (0.0, 30.0)}),
}


def _ms(v):
    return "n/a" if v is None else f"{v * 1e3:.1f}"


def main(argv=None):
    from softcontact.tasks import gym_pusht as gp

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=100, help="seeds per variant (default 100)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=None, help="default: this machine's cores")
    ap.add_argument(
        "--deadline", type=float, default=gp.DEADLINE, help=f"s per decision ({gp.DEADLINE})"
    )
    ap.add_argument(
        "--variants", default=None, help="comma-separated names of VARIANTS to run (default all)"
    )
    ap.add_argument("--scale", type=int, default=0, help="episodes of the scale-out rows (0: none)")
    ap.add_argument(
        "--own",
        type=int,
        default=50,
        help="seeds of our own push-T under mpc.realtime_settings() (default 50; 0: none)",
    )
    ap.add_argument("--out", default=None, help="also write the page (docs/gym_pusht.md)")
    a = ap.parse_args(argv)
    if a.episodes < 1 or a.scale < 0 or a.own < 0 or a.deadline <= 0:
        ap.error("--episodes must be >= 1, --scale and --own >= 0, --deadline > 0")
    wanted = list(VARIANTS) if a.variants is None else a.variants.split(",")
    if not set(wanted) <= set(VARIANTS):
        ap.error(f"--variants: known are {', '.join(VARIANTS)}")
    variants = [VARIANTS[k] for k in wanted]
    out = Tee(
        a.out,
        "<!-- written by benchmarks/gym_env.py --out docs/gym_pusht.md; do not edit by hand -->",
    )
    cpu, ncpu = machine()
    workers = a.workers or ncpu
    seeds = range(a.first_seed, a.first_seed + a.episodes)
    print("## gym-pusht under softcontact MPC\n", file=out)
    print(
        f"softcontact {sc.__version__}; Python {platform.python_version()}; "
        f"{platform.platform()}; {cpu}, {ncpu} CPUs; {time.strftime('%Y-%m-%d')}.  "
        f"Seeds {seeds[0]}..{seeds[-1]} of `env.reset(seed=...)`, {gp.EPISODE_STEPS} env "
        f"steps per episode, a LocalCluster of {workers} single-threaded workers, a "
        f"per-decision deadline of {a.deadline * 1e3:g} ms.  What each row runs: the module "
        "docstring of benchmarks/gym_env.py.\n",
        file=out,
    )
    head = [
        "variant",
        "episodes",
        "success",
        "mean max coverage",
        "median steps to success",
        "decision median ms",
        "p95 ms",
        "max ms",
        "wall s",
    ]
    print("| " + " | ".join(head) + " |", file=out)
    print("|" + "---|" * len(head), file=out)
    notes = []
    for name, opts in variants:
        ev = gp.evaluate(seeds, n_workers=workers, deadline=a.deadline, **opts)
        s = ev.summary()
        print(
            f"| {name} | {len(ev.episodes)} | {s['success_rate']:.1%} | "
            f"{s['mean_max_coverage']:.3f} | {s['median_steps_to_success'] or 'n/a'} | "
            f"{_ms(s['solve_time_median'])} | {_ms(s['solve_time_p95'])} | "
            f"{_ms(s['solve_time_max'])} | {ev.wall:.0f} |",
            file=out,
        )
        fails = _failed(ev.episodes)
        plan = np.concatenate([[t for t in e.solve_times if t > 2e-3] for e in ev.episodes])
        notes.append(
            f"- {name}: {plan.size} of {sum(len(e.solve_times) for e in ev.episodes)} "
            f"decisions took over 2 ms, median "
            f"{np.median(plan) * 1e3 if plan.size else float('nan'):.1f} ms (the others "
            f"continue a repositioning move, a hold or a tap); failed seeds: {fails}"
        )
    print("", file=out)
    for n in notes:
        print(n, file=out)
    if a.scale:
        print(
            f"\nScale out: {variants[0][0]} on seeds 0..{a.scale - 1}, the same run on a "
            "LocalCluster of 1 and of 2 workers (wall time includes starting the cluster).\n",
            file=out,
        )
        print(
            "| workers | wall s | episodes per minute | success | median steps to success "
            "| decision median ms | p95 ms | max ms | failed seeds |",
            file=out,
        )
        print("|---|---|---|---|---|---|---|---|---|", file=out)
        for w in (1, 2):
            t0 = time.perf_counter()
            ev = gp.evaluate(range(a.scale), n_workers=w, deadline=a.deadline, **variants[0][1])
            wall = time.perf_counter() - t0
            s = ev.summary()
            fails = _failed(ev.episodes)
            print(
                f"| {w} | {wall:.0f} | {a.scale / wall * 60:.1f} | "
                f"{sum(e.success for e in ev.episodes)} / {a.scale} | "
                f"{s['median_steps_to_success'] or 'n/a'} | {_ms(s['solve_time_median'])} | "
                f"{_ms(s['solve_time_p95'])} | {_ms(s['solve_time_max'])} | "
                f"{fails} |",
                file=out,
            )
    if a.own:
        _own_realtime(a.own, workers, out)
    out.close()


def _failed(episodes):
    """The failed seeds of ``episodes`` as the page lists them: the failed seeds, or the
    seeds that succeeded (every other one failed) when those are fewer."""
    fails = [e.seed for e in episodes if not e.success]
    ok = [e.seed for e in episodes if e.success]
    if not fails:
        return "none"
    if len(fails) <= len(ok):
        return str(fails)
    return f"all {len(fails)} but the {len(ok)} that succeeded: {ok if ok else 'none'}"


def _own_realtime(n, workers, out):
    """Our own push-T (its model as the plant) under ``mpc.realtime_settings()``."""
    from softcontact.tasks.push_t import mpc

    ev = mpc.evaluate(range(n), jobs=workers, **mpc.realtime_settings())
    ok = [e.time for e in ev.episodes if e.success]
    st = np.concatenate([e.solve_times for e in ev.episodes])
    print(
        f"\nOur own push-T (`push_t.make(seed)`, seeds 0..{n - 1}, the model itself as the "
        f"plant) under `mpc.realtime_settings()`, {workers} episodes at a time; decision "
        "times of the ticks that plan (a tick that continues a repositioning move is not "
        "timed; it takes < 1 ms):\n",
        file=out,
    )
    print(
        "| episodes | success | median time to success s | decision median ms | p95 ms | max ms |",
        file=out,
    )
    print("|---|---|---|---|---|---|", file=out)
    print(
        f"| {n} | {ev.success_rate:.1%} | {np.median(ok) if ok else float('nan'):.2f} | "
        f"{np.median(st) * 1e3:.1f} | {np.percentile(st, 95) * 1e3:.1f} | "
        f"{st.max() * 1e3:.1f} |",
        file=out,
    )


if __name__ == "__main__":
    main()
