"""The persistent thread pool of the parallel loops (csrc/sc_parallel.c) against threads
started per call, on small batched calls, where starting threads is a visible share.

In one run: the time per call of a small batched rollout (8 trajectories x 5 steps of
push-T and of a box on a floor, the scenes of ``bench_step.py``; 2 threads) and of a
batched step (8 states), with the pool (the default) and with threads started and joined
per call (``softcontact._core._thread_pool(False)``), medians of interleaved rounds, their
ratio (per-call / pool: > 1, the pool is faster), and one thread for reference.

    python benchmarks/bench_pool.py [--repeats 21]
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import median_time  # benchmarks/ is the script folder, on sys.path
from bench_step import box_scene, pushing_scene

from softcontact import _core


def rows(repeats, B=8, T=5, threads=2):
    """Rows (scene, call, pool [us], per-call threads [us], 1 thread [us], ratio)."""
    out = []
    for name, (model, x, u, _) in (("push-T", pushing_scene()), ("box on floor", box_scene())):
        X0 = np.repeat(x[None], B, axis=0)
        U = np.repeat(np.asarray(u, dtype=float).reshape(1, 1, -1), B, axis=0)
        U = np.repeat(U, T, axis=1)
        cases = {
            f"rollout {B} x {T}": lambda n, X0=X0, U=U, m=model: m.rollout(X0, U, num_threads=n),
            f"step {B}": lambda n, X0=X0, U=U, m=model: m.step(X0, U[:, 0], num_threads=n),
        }
        for call, fn in cases.items():
            calls = 50

            def run(n, fn=fn, calls=calls):
                for _ in range(calls):
                    fn(n)

            pool, fresh, one = [], [], []
            for _ in range(repeats):  # interleaved: a slow spell hits every variant
                _core._thread_pool(True)
                pool.append(median_time(lambda: run(threads), 1) / calls)
                _core._thread_pool(False)
                fresh.append(median_time(lambda: run(threads), 1) / calls)
                _core._thread_pool(True)
                one.append(median_time(lambda: run(1), 1) / calls)
            tp, tf, t1 = (float(np.median(v)) for v in (pool, fresh, one))
            out.append((name, call, 1e6 * tp, 1e6 * tf, 1e6 * t1, tf / tp))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=21)
    args = ap.parse_args()
    print(
        "| scene | call (2 threads) | pool [us] | threads per call [us] | 1 thread [us] "
        "| per-call / pool |"
    )
    print("|---|---|---|---|---|---|")
    for name, call, tp, tf, t1, ratio in rows(args.repeats):
        print(f"| {name} | {call} | {tp:.1f} | {tf:.1f} | {t1:.1f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
