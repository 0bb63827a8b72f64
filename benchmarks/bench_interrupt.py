"""Ctrl-C during the long C calls, and what listening for it costs.

The binding's long calls poll for a pending signal (``PyErr_CheckSignals``) every 10 ms
from the main thread while their kernels run without the GIL (csrc/py_common.h).  This
script measures, in one run:

* the cost on ``Model.step`` (push-T and a box on a floor, the scenes of
  ``bench_step.py``; order 0 and 1, one thread): medians of interleaved rounds with the
  polling on and off (``softcontact._core._interrupt_polling``), and their ratio
  (target <= 1.01);
* the latency of an interrupt: a SIGINT sent to the process 0.3 s into a call that
  would run for minutes (dense SSDF of 5e6 queries against a 5e5-sample sphere on one
  and two threads, the dense separation and the contact model of two 9e4-sample spheres,
  a batch of 2000 rollouts of a box on a floor on one and two threads), from the signal
  to the ``KeyboardInterrupt`` reaching Python (target <= 200 ms), and a check that the
  inputs are unchanged afterwards.  Packing a cloud (its first use: a copy into the
  kernels' layout and its spatial index, ~0.8 us per sample) is not polled; the clouds
  are packed before the timed calls.

    python benchmarks/bench_interrupt.py [--repeats 31]
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time

import numpy as np
from _timing import median_time  # benchmarks/ is the script folder, on sys.path
from bench_step import box_scene, pushing_scene

import softcontact as sc
from softcontact import _core


def step_overhead(repeats):
    """Rows (scene, order, polling on [us], off [us], on / off)."""
    rows = []
    for name, (model, x, u, _) in (
        ("push-T", pushing_scene()),
        ("box on floor", box_scene()),
    ):
        for order in (0, 1):
            calls = 400

            def run(model=model, x=x, u=u, order=order, calls=calls):
                for _ in range(calls):
                    model.step(x, u, order=order)

            on, off = [], []
            for _ in range(repeats):  # interleaved: a slow spell hits both
                _core._interrupt_polling(True)
                on.append(median_time(run, 1) / calls)
                _core._interrupt_polling(False)
                off.append(median_time(run, 1) / calls)
            _core._interrupt_polling(True)
            t_on, t_off = float(np.median(on)), float(np.median(off))
            rows.append((name, order, 1e6 * t_on, 1e6 * t_off, t_on / t_off))
    return rows


def interrupt_after(call, delay=0.3):
    """Seconds from a SIGINT sent `delay` s into `call()` to its KeyboardInterrupt, or None
    if the call finished first."""
    sent = []

    def fire():
        time.sleep(delay)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    th = threading.Thread(target=fire)
    th.start()
    try:
        call()
    except KeyboardInterrupt:
        caught = time.perf_counter()
        th.join()
        return caught - sent[0]
    finally:
        try:  # a call that ends first (or fails) still gets the signal: absorb it
            th.join()
            time.sleep(0.05)
        except KeyboardInterrupt:
            pass
    return None


def latency_cases():
    rng = np.random.default_rng(0)
    sphere = sc.PointCloud.sphere(1.0, 0.005)  # ~5e5 samples
    q = rng.normal(size=(5_000_000, 3))
    a = sc.PointCloud.sphere(0.1, 0.0012)  # ~9e4 samples
    pa, pb = np.array([0, 0, 0, 1.0, 0, 0, 0]), np.array([0.15, 0, 0, 1.0, 0, 0, 0])
    model, x, _, _ = box_scene()
    X0 = np.repeat(x[None], 2000, axis=0)
    U = np.zeros((2000, 2000, 0))
    # each cloud packed (copied into the kernels' layout, with its spatial index) before
    # the timed calls: packing is not polled (0.8 us per sample, once per cloud)
    sc.ssdf(sphere, q[:1], eps=1e-4)
    sc.ssdf(a, q[:1], eps=1e-4)
    inputs = (q, pa, pb, X0, U)
    copies = tuple(v.copy() for v in inputs)
    cases = [
        (
            f"ssdf, {len(sphere)} samples, 5e6 queries, dense, 1 thread",
            lambda: sc.ssdf(sphere, q, eps=1e-4, order=1, dense=True, num_threads=1),
        ),
        (
            f"ssdf, {len(sphere)} samples, 5e6 queries, dense, 2 threads",
            lambda: sc.ssdf(sphere, q, eps=1e-4, order=1, dense=True, num_threads=2),
        ),
        (
            f"separation, 2 x {len(a)} samples, dense, 2 threads",
            lambda: sc.separation(a, pa, a, pb, eps=1e-4, order=1, dense=True, num_threads=2),
        ),
        (
            f"contact, 2 x {len(a)} samples, dense, order 2, 2 threads",
            lambda: sc.contact(
                a,
                pa,
                np.zeros(6),
                a,
                pb,
                np.zeros(6),
                sc.ContactParams(eps=1e-4),
                order=2,
                dense=True,
                num_threads=2,
            ),
        ),
        (
            "rollout, box on floor, B = 2000, T = 2000, order 1, 1 thread",
            lambda: model.rollout(X0, U, order=1, num_threads=1),
        ),
        (
            "rollout, box on floor, B = 2000, T = 2000, order 1, 2 threads",
            lambda: model.rollout(X0, U, order=1, num_threads=2),
        ),
    ]
    rows = [(name, interrupt_after(call)) for name, call in cases]
    unchanged = all(np.array_equal(v, c) for v, c in zip(inputs, copies, strict=True))
    return rows, unchanged


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=31)
    args = ap.parse_args()
    print("| scene | order | polling on [us] | off [us] | on / off (<= 1.01) |")
    print("|---|---|---|---|---|")
    for name, order, t_on, t_off, ratio in step_overhead(args.repeats):
        print(f"| {name} | {order} | {t_on:.2f} | {t_off:.2f} | {ratio:.4f} |")
    print()
    rows, unchanged = latency_cases()
    print("| call | signal to KeyboardInterrupt [ms] (<= 200) |")
    print("|---|---|")
    for name, lat in rows:
        print(f"| {name} | {'finished first' if lat is None else f'{1e3 * lat:.1f}'} |")
    print(f"\ninputs unchanged after the interrupts: {unchanged}")


if __name__ == "__main__":
    main()
