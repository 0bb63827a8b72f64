"""Time of one step of a compiled scene, and of batched rollouts.

Two scenes:

* planar pushing (2D): the T of ``PointCloud.t_shape`` (200 samples, support friction
  0.3 over ~200 footprint points) pushed by a kinematic disk (radius 15 mm, 32 samples),
  pusher and T in contact;
* box on floor (3D): a dynamic 10 cm, 1 kg box (294 samples) resting on a static
  half-space floor, moving slightly.

For each: ``Model.step`` at order 0, 1 and 2 on one thread (each call includes the
Python argument checks), the ratios order1/order0 (target <= 4) and order2/order0 (target
<= 15), and the time per step inside a single C rollout (B = 1, T = 100; order 0 and 1),
where no Python runs between steps.  Then batched rollouts (B = 64 trajectories of
T = 100 steps, order 0 and order 1 with per-step Jacobians) on one and two threads and the
speed-up two/one (target >= 1.8, on a machine with at least two free cores).  Medians of
repeats, all in one run.

    python benchmarks/bench_step.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from functools import partial

import numpy as np
from _timing import median_time  # benchmarks/ is the script folder, on sys.path

import softcontact as sc


def _build(scene, dt):
    """scene.build(dt) without its stability warning: the step is timed at these time
    steps, beyond the explicit limits of these scenes' friction and damping
    (Scene.stability_limits); stability is not what this measures."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.SoftContactWarning)
        return scene.build(dt)


def pushing_scene(dt=0.005):
    """T (200 samples) pushed along +y by a kinematic disk touching its stem."""
    t_cloud = sc.PointCloud.t_shape(spacing=0.0025)
    pusher = sc.PointCloud.disk(0.015, 2 * np.pi * 0.015 / 32)
    stem_bottom = sc.PointCloud.t_shape_vertices()[:, 1].min()
    scene = sc.Scene(dim=2)
    scene.add_body(t_cloud, mass=0.1, pose=[0.0, 0.0, 0.0], name="T")
    scene.add_body(
        pusher, kind="kinematic", pose=[0.003, stem_bottom - 0.015 + 0.002, 0.0], name="pusher"
    )
    scene.add_contact("T", "pusher", sc.ContactParams())
    scene.add_support("T", friction=0.3)
    model = _build(scene, dt)
    x = model.initial_state()
    x[model.nq : model.nq + 3] = [0.0, 0.04, 0.1]  # the T already sliding and turning
    u = np.array([0.0, 0.05, 0.0])  # pusher velocity
    return model, x, u, (len(t_cloud), len(pusher))


def box_scene(dt=0.001):
    """A 1 kg, 10 cm box (294 samples) pressed 4 mm into a static floor, moving."""
    box = sc.PointCloud.box([0.05, 0.05, 0.05], 0.1 / 6)
    floor = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    scene = sc.Scene(dim=3)
    scene.add_body(floor, kind="static", name="floor")
    scene.add_body(
        box,
        mass=1.0,
        pose=[0.0, 0.0, 0.046, 1.0, 0.0, 0.0, 0.0],
        velocity=[0.05, 0.0, -0.01, 0.0, 0.2, 0.1],
        name="box",
    )
    scene.add_contact("box", "floor", sc.ContactParams())
    model = _build(scene, dt)
    return model, model.initial_state(), np.zeros(0), (len(box), 1)


def _interleaved(fns, rounds, calls=1):
    """Median over ``rounds`` of each function's ``median_time(fn, calls)``, the functions
    taking turns, so that a slow spell of the machine hits all of them alike (the ratios
    are what matter)."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for t, fn in zip(times, fns, strict=True):
            t.append(median_time(fn, calls))
    return [float(np.median(t)) for t in times]


def _batch(model, x, u, B, T, seed=0):
    rng = np.random.default_rng(seed)
    U = np.broadcast_to(u, (B, T, model.nu)).copy()
    if model.nu:
        U += 0.01 * rng.normal(size=U.shape)
    return np.broadcast_to(x, (B, model.nx)).copy(), U


def run(repeats=5, out=sys.stdout):
    scenes = [("pushing (2D)", *pushing_scene()), ("box on floor (3D)", *box_scene())]
    B, T = 64, 100
    info = sc.build_info()
    print(f"softcontact {info['version']}, SIMD {info['isa_default']}\n", file=out)
    print(
        f"Model.step, one thread (median of {repeats} rounds of the median of 20 calls; "
        "includes Python argument checks)\n",
        file=out,
    )
    print(
        "| scene | samples | nx | nu | order 0 [us] | order 1 [us] | order 2 [us] "
        "| o1/o0 (<= 4) | o2/o0 (<= 15) |",
        file=out,
    )
    print("|---|---|---|---|---|---|---|---|---|", file=out)
    for name, model, x, u, counts in scenes:
        model.step(x, u, order=2, num_threads=1)  # warm up
        t = _interleaved(
            [partial(model.step, x, u, order=o, num_threads=1) for o in range(3)], repeats, 20
        )
        print(
            f"| {name} | {counts[0]} + {counts[1]} | {model.nx} | {model.nu} | "
            f"{t[0] * 1e6:.1f} | {t[1] * 1e6:.1f} | {t[2] * 1e6:.1f} | "
            f"{t[1] / t[0]:.2f} | {t[2] / t[0]:.2f} |",
            file=out,
        )

    print("\nPer step inside one C rollout (B = 1, T = 100), one thread\n", file=out)
    print("| scene | order 0 [us/step] | order 1 [us/step] | o1/o0 |", file=out)
    print("|---|---|---|---|", file=out)
    for name, model, x, u, _ in scenes:
        x1, U1 = _batch(model, x, u, 1, T)
        t = [
            v / T
            for v in _interleaved(
                [partial(model.rollout, x1, U1, order=o, num_threads=1) for o in range(2)],
                repeats,
                3,
            )
        ]
        print(f"| {name} | {t[0] * 1e6:.1f} | {t[1] * 1e6:.1f} | {t[1] / t[0]:.2f} |", file=out)

    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"\nBatched rollouts, B = {B}, T = {T} ({ncpu} CPUs available)\n", file=out)
    print(
        "| scene | order | 1 thread [ms] | 2 threads [ms] | us/step (1 thread) "
        "| two/one (>= 1.8) |",
        file=out,
    )
    print("|---|---|---|---|---|---|", file=out)
    for name, model, x, u, _ in scenes:
        xb, Ub = _batch(model, x, u, B, T)
        for order in (0, 1):
            t1, t2 = _interleaved(
                [partial(model.rollout, xb, Ub, order=order, num_threads=n) for n in (1, 2)],
                repeats,
            )
            print(
                f"| {name} | {order} | {t1 * 1e3:.1f} | {t2 * 1e3:.1f} | "
                f"{t1 / (B * T) * 1e6:.1f} | {t1 / t2:.2f} |",
                file=out,
            )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    run(ap.parse_args().repeats)
