"""Helpers shared by the benchmark scripts: timing, and output to stdout and a file."""

import os
import platform
import sys
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


def machine():
    """``(CPU model name, CPUs this process may use)``."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cpu, ncpu


class Tee:
    """stdout, and the file ``path`` too (written whole at ``close``, after the line
    ``header``) unless None."""

    def __init__(self, path, header):
        self.path, self.header, self.parts = path, header, []

    def write(self, text):
        sys.stdout.write(text)
        self.parts.append(text)

    def flush(self):
        sys.stdout.flush()

    def close(self):
        sys.stdout.flush()
        if self.path is not None:
            with open(self.path, "w", encoding="utf-8") as f:
                f.write(self.header + "\n\n")
                f.write("".join(self.parts))
