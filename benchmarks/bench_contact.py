"""Separation field and soft-minimum contact throughput.

I = J = 1024 samples per body in 2D and 3D, orders 0, 1, 2: time per call, sample pairs
per second (2 I J SSDF pairs per call), and the ratios order1/order0 (target <= 3) and
order2/order0 (target <= 10), for the separation field and for the full contact model
(normal force, damping and friction on, moving bodies; order 1 = wrench Jacobian with
respect to both states, order 2 = the full second-derivative tensor); then the time
against the number of samples in contact at fixed I, J, which must stay flat (the cost
does not depend on the contacts).  Medians of repeats, one thread.  All dense
(``dense=True``): this measures the kernels over every sample pair; the pruned path's
speed-ups are in bench_pruning.py.

    python benchmarks/bench_contact.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import sys
from functools import partial

import numpy as np
from _timing import median_time  # benchmarks/ is the script folder, on sys.path

import softcontact as sc


def _bodies(dim):
    if dim == 2:
        a = sc.PointCloud.box([0.1, 0.1], spacing=0.8 / 1020)  # ~1024 samples
        b = sc.PointCloud.disk(0.05, 2 * np.pi * 0.05 / 1024)
        return a, b, np.zeros(3), lambda gap: np.array([0.0, 0.1 + 0.05 + gap, 0.0])
    a = sc.PointCloud.sphere(0.05, np.sqrt(4 * np.pi * 0.05**2 / 1024))
    b = sc.PointCloud.sphere(0.05, np.sqrt(4 * np.pi * 0.05**2 / 1024))
    ident = [1.0, 0.0, 0.0, 0.0]
    return (
        a,
        b,
        np.array([0.0, 0.0, 0.0, *ident]),
        lambda gap: np.array([0.0, 0.0, 0.1 + gap, *ident]),
    )


def _table(title, rows, out):
    print(title + "\n", file=out)
    print(
        "| D | I | J | order 0 [ms] | order 1 [ms] | order 2 [ms] | pairs/s (order 0) "
        "| o1/o0 | o2/o0 |",
        file=out,
    )
    print("|---|---|---|---|---|---|---|---|---|", file=out)
    for dim, na, nb, t in rows:
        pairs = 2 * na * nb / t[0]
        print(
            f"| {dim} | {na} | {nb} | {t[0] * 1e3:.2f} | {t[1] * 1e3:.2f} | "
            f"{t[2] * 1e3:.2f} | {pairs:.3g} | {t[1] / t[0]:.2f} | {t[2] / t[0]:.2f} |",
            file=out,
        )


def _velocities(dim):
    nv = 3 if dim == 2 else 6
    rng = np.random.default_rng(7)
    return 0.1 * rng.normal(size=nv), 0.1 * rng.normal(size=nv)


def run(repeats=7, out=sys.stdout):
    eps = 1e-5
    params = sc.ContactParams(eps=eps)
    sep_rows, con_rows = [], []
    for dim in (2, 3):
        a, b, pa, place = _bodies(dim)
        pb = place(-0.005)
        va, vb = _velocities(dim)
        sc.separation(a, pa, b, pb, eps)  # pack once
        sep_rows.append(
            (
                dim,
                len(a),
                len(b),
                [
                    median_time(
                        partial(
                            sc.separation, a, pa, b, pb, eps, order=o, num_threads=1, dense=True
                        ),
                        repeats,
                    )
                    for o in range(3)
                ],
            )
        )
        con_rows.append(
            (
                dim,
                len(a),
                len(b),
                [
                    median_time(
                        partial(
                            sc.contact,
                            a,
                            pa,
                            va,
                            b,
                            pb,
                            vb,
                            params,
                            order=o,
                            num_threads=1,
                            dense=True,
                        ),
                        repeats,
                    )
                    for o in range(3)
                ],
            )
        )
    _table(f"Separation field, one thread, eps = {eps:g} m^2", sep_rows, out)
    _table(
        f"\nContact (SCM, damping and friction on, moving bodies), one thread, {params}",
        con_rows,
        out,
    )
    print("\nTime against samples in contact (order 2, one thread): flat\n", file=out)
    print("| D | gap [mm] | samples with Phi < 0 | separation [ms] | contact [ms] |", file=out)
    print("|---|---|---|---|---|", file=out)
    for dim in (2, 3):
        a, b, pa, place = _bodies(dim)
        va, vb = _velocities(dim)
        for gap in (0.02, 0.0, -0.005, -0.02, -0.05):
            pb = place(gap)
            n_in = int(np.sum(sc.separation(a, pa, b, pb, eps).phi < 0))
            t = median_time(
                partial(sc.separation, a, pa, b, pb, eps, order=2, num_threads=1, dense=True),
                repeats,
            )
            tc = median_time(
                partial(
                    sc.contact, a, pa, va, b, pb, vb, params, order=2, num_threads=1, dense=True
                ),
                repeats,
            )
            print(
                f"| {dim} | {gap * 1e3:+.0f} | {n_in} | {t * 1e3:.2f} | {tc * 1e3:.2f} |", file=out
            )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    run(ap.parse_args().repeats)
