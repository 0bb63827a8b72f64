"""Exact pruning against the dense computation (docs/method.md section 10).

1. The separation field of two spheres (radius 0.1 m) in light contact (0.5 mm overlap),
   eps = 1e-5 m^2 (the default), value only and with first derivatives, for clouds of
   ~1e3 to ~1e5 samples each: pruned time, dense time, ratio (target >= 20 at 1e4).
   Dense timings of the largest clouds evaluate a random subset of the queries and scale
   by the count (the dense cost per query is the same for every query: O(n)); the row
   says so.
2. ``Model.step`` at orders 0, 1, 2 on the benchmark scenes (push-T with its walls, its
   semi-implicit Euler model as in ``benchmarks/scenes.py``; the pushing scene of
   bench_step.py; a box on a floor) pruned and dense.
Interleaved medians, one thread, in one run.

    python benchmarks/bench_pruning.py [--repeats 5] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial

import numpy as np
from bench_step import box_scene, pushing_scene  # benchmarks/ is the script folder

import softcontact as sc
from softcontact.tasks import push_t


def _interleaved(fns, rounds):
    times = [[] for _ in fns]
    for _ in range(rounds):
        for t, fn in zip(times, fns, strict=True):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    return [float(np.median(t)) for t in times]


def separation_rows(spacings, repeats, out):
    eps, r = 1e-5, 0.1
    print(
        "Separation field, two spheres of radius 0.1 m, 0.5 mm overlap, eps = 1e-5 m^2, "
        "one thread\n",
        file=out,
    )
    print("| samples per body | order | pruned [ms] | dense [ms] | dense / pruned |", file=out)
    print("|---|---|---|---|---|", file=out)
    for sp in spacings:
        a = sc.PointCloud.sphere(r, sp)
        n = len(a)
        pa = np.array([0.0, 0, 0, 1, 0, 0, 0])
        pb = np.array([2 * r - 5e-4, 0.0, 0, 1, 0, 0, 0])
        sc.separation(a, pa, a, pb, eps)  # pack (and index) once, outside the timing
        for order in (0, 1):
            pruned = partial(sc.separation, a, pa, a, pb, eps, order=order, num_threads=1)
            if n <= 20000:
                dense = partial(
                    sc.separation, a, pa, a, pb, eps, order=order, num_threads=1, dense=True
                )
                tp, td = _interleaved([pruned, dense], repeats)
                note = ""
            else:
                # dense on 1000 random queries of the 2n, scaled: O(n) per query
                x = np.random.default_rng(0).uniform(-r, r, (1000, 3))
                dense = partial(sc.ssdf, a, x, eps, order=order, num_threads=1, dense=True)
                tp, td1 = _interleaved([pruned, dense], max(1, repeats // 2))
                td = td1 * (2 * n) / 1000
                note = " (scaled from 1000 queries)"
            print(
                f"| {n} | {order} | {tp * 1e3:.1f} | {td * 1e3:.1f}{note} | {td / tp:.1f} |",
                file=out,
            )


def step_rows(repeats, out):
    task = push_t.make(seed=3, integrator="euler")
    m = task.model
    x = np.array(task.x0, dtype=float)
    x[3:5] = [x[0], x[1] - 0.09]  # the pusher against the stem: in contact
    scenes = [
        ("push-T (170 + 32 samples, 4 walls)", m, x, np.array([0.0, 0.1, 0.0])),
        ("pushing (2D, bench_step)", *pushing_scene()[:3]),
        ("box on floor (3D, bench_step)", *box_scene()[:3]),
    ]
    print("\nModel.step, one thread: pruned (default) and dense\n", file=out)
    print("| scene | order | pruned [us] | dense [us] | dense / pruned |", file=out)
    print("|---|---|---|---|---|", file=out)
    for name, model, xs, u in scenes:
        for order in (0, 1, 2):
            fp = partial(_ten, model, xs, u, order, False)
            fd = partial(_ten, model, xs, u, order, True)
            fp(), fd()
            tp, td = _interleaved([fp, fd], repeats)
            print(
                f"| {name} | {order} | {tp / 10 * 1e6:.0f} | {td / 10 * 1e6:.0f} | {td / tp:.2f} |",
                file=out,
            )


def _ten(model, x, u, order, dense):
    for _ in range(10):
        model.step(x, u, order=order, num_threads=1, dense=dense)


def run(repeats=5, quick=False, out=sys.stdout):
    spacings = (0.02,) if quick else (0.011, 0.0035, 0.0011)
    separation_rows(spacings, 1 if quick else repeats, out)
    step_rows(1 if quick else repeats, out)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny settings (a smoke test)")
    args = ap.parse_args()
    run(args.repeats, args.quick)
