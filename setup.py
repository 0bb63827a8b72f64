"""Build the compiled core ``softcontact._core`` from ``csrc/*.c``.

Flags: portable and exact by default (no fast-math, no native-CPU tuning); the
SIMD kernels are compiled per ISA with function-level target attributes and
chosen at run time.  ``SOFTCONTACT_STRICT=1`` (set in CI) turns warnings into
errors, so that a newer compiler on a user's machine cannot break the install;
``SOFTCONTACT_DEBUG=1`` keeps the debug information that release builds strip;
``SOFTCONTACT_BUILD_JOBS=N`` sets the parallel compile jobs (default: one per core).
"""

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from glob import glob

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class ParallelBuildExt(build_ext):
    """build_ext compiling the extension's C files in parallel, one job per core
    (``SOFTCONTACT_BUILD_JOBS`` overrides): setuptools compiles one file at a time, and
    the SIMD kernel variants take most of the build."""

    def build_extension(self, ext):
        jobs = int(os.environ.get("SOFTCONTACT_BUILD_JOBS", "0")) or os.cpu_count() or 1
        serial = self.compiler.compile
        if jobs < 2:
            return super().build_extension(ext)

        def compile_parallel(sources, *args, **kwargs):
            # longest first (the kernel variants), so that no large file starts last
            order = sorted(sources, key=lambda f: -os.path.getsize(f))
            with ThreadPoolExecutor(min(jobs, len(order))) as pool:
                done = pool.map(lambda f: serial([f], *args, **kwargs), order)
                objs = dict(zip(order, done, strict=True))
            return [o for f in sources for o in objs[f]]

        self.compiler.compile = compile_parallel
        try:
            return super().build_extension(ext)
        finally:
            self.compiler.compile = serial


flags = []
libraries = []
if sys.platform != "win32":
    flags = [
        "-std=c11",
        # -O3 over -O2: GCC 12's -O2 vectorizes only loops whose trip count is a known
        # multiple of the vector width, which leaves the jets' triangular Hessian loops and
        # the pruned gather scalar.  Measured: box-on-floor step with second derivatives
        # -17 %, pruned 10^4-sample separation field -11 %.  Vectorizing elementwise loops
        # does not change a result bit (no reassociation, no contraction: see below).
        "-O3",
        # ISO C mode already implies this on GCC; say it for every compiler:
        # FMA contraction would make results depend on which kernel variant ran.
        "-ffp-contract=off",
        "-fvisibility=hidden",
        "-Wall",
        "-Wextra",
        "-Wshadow",
        "-Wvla",
        "-Wstrict-prototypes",
        "-Wmissing-prototypes",
        "-pthread",
    ]
    if os.environ.get("SOFTCONTACT_STRICT") == "1":
        flags.append("-Werror")
    libraries = ["m"]

# release builds are stripped of debug information (10.5 MB of the 12 MB extension);
# SOFTCONTACT_DEBUG=1 keeps it (CI's sanitizer build, for line numbers in its reports)
link_flags = []
if sys.platform != "win32":
    link_flags = ["-pthread"]
    if os.environ.get("SOFTCONTACT_DEBUG") != "1":
        link_flags.append("-Wl,-S" if sys.platform == "darwin" else "-Wl,--strip-debug")

setup(
    cmdclass={"build_ext": ParallelBuildExt},
    ext_modules=[
        Extension(
            "softcontact._core",
            sources=sorted(glob("csrc/*.c")),
            depends=sorted(glob("csrc/*.h")),
            include_dirs=["csrc", numpy.get_include()],
            # the binding's files (_coremodule.c, py_*.c) share one NumPy API table
            define_macros=[
                ("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"),
                ("PY_ARRAY_UNIQUE_SYMBOL", "softcontact_ARRAY_API"),
                ("PY_SSIZE_T_CLEAN", None),
            ],
            extra_compile_args=flags,
            extra_link_args=link_flags,
            libraries=libraries,
        )
    ],
)
