"""Timing helper shared by the benchmark scripts."""

import time

import numpy as np


def median_time(fn, repeats):
    """Median wall time in seconds of ``repeats`` calls of ``fn()``."""
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))
