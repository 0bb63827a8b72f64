"""SSDF throughput: sample-query pairs per second, orders 0-3, D = 2 and 3.

I = N = 4096 (samples x queries), one thread and all threads, every SIMD variant
this CPU supports, and the ratio to a straightforward vectorized NumPy
implementation (tests/reference.py) measured in the same run.  Dense (``dense=True``):
every sample-query pair is evaluated, which is what pairs/s counts.  Measurements are
interleaved and the median of several repeats is reported: machines here are
noisy, so read the ratios, not the absolute numbers.

    python benchmarks/bench_ssdf.py [--repeats 5] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from _timing import median_time  # benchmarks/ is the script folder, on sys.path

import softcontact as sc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from reference import numpy_ssdf_vectorized  # noqa: E402


def _cloud(dim, n, rng):
    p = rng.uniform(-0.05, 0.05, size=(n, dim))
    nrm = rng.normal(size=(n, dim))
    return sc.PointCloud(p, nrm, normalize=True)


def run(repeats=5, quick=False, out=sys.stdout):
    rng = np.random.default_rng(0)
    n_samples = n_queries = 1024 if quick else 4096
    n_numpy = 128 if quick else 256  # numpy is timed on a subset of queries (pairs/s is per pair)
    cores = sc._core.available_cores()
    info = sc.build_info()
    isas = list(info["isa_supported"])
    rows = []
    for dim in (2, 3):
        cloud = _cloud(dim, n_samples, rng)
        x = rng.uniform(-0.08, 0.08, size=(n_queries, dim))
        eps = 1e-4
        sc.ssdf(cloud, x[:8], eps)  # pack once, outside the timing
        for order in range(4):
            res = {}

            def numpy_run(c=cloud, q=x[:n_numpy], o=order, eps=eps):
                return numpy_ssdf_vectorized(c.points, c.normals, c.weights, q, eps, o)

            t_np = median_time(numpy_run, max(1, repeats // 2))
            res["numpy"] = n_samples * n_numpy / t_np
            for isa in isas:
                for threads in sorted({1, cores}):

                    def c_run(c=cloud, q=x, o=order, t=threads, i=isa, eps=eps):
                        return sc.ssdf(c, q, eps, order=o, num_threads=t, isa=i, dense=True)

                    res[(isa, threads)] = n_samples * n_queries / median_time(c_run, repeats)
            rows.append((dim, order, res))
    best = info["isa_default"]
    print(
        f"SSDF pairs/s, I = N = {n_samples}, eps = 1e-4 m^2, cloud size ~0.14 m; "
        f"CPU ISAs {isas}, default {best}, {cores} cores\n",
        file=out,
    )
    head = "| D | order | " + " | ".join(
        f"{isa} 1 thr" + (f" | {isa} {cores} thr" if cores > 1 else "") for isa in isas
    )
    head += f" | numpy | {best} / numpy | {cores} thr / 1 thr |"
    print(head, file=out)
    print("|" + "---|" * (head.count("|") - 1), file=out)
    for dim, order, res in rows:
        cells = []
        for isa in isas:
            cells.append(f"{res[(isa, 1)]:.3g}")
            if cores > 1:
                cells.append(f"{res[(isa, cores)]:.3g}")
        ratio = res[(best, 1)] / res["numpy"]
        scale = res[(best, cores)] / res[(best, 1)]
        print(
            f"| {dim} | {order} | "
            + " | ".join(cells)
            + f" | {res['numpy']:.3g} | {ratio:.0f}x | {scale:.2f}x |",
            file=out,
        )
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="smaller problem, for a smoke run")
    a = ap.parse_args()
    run(a.repeats, a.quick)
