"""What the PyTorch and JAX functions cost over the plain calls.

For the two scenes of ``bench_step.py`` (push-T: a T pushed by a kinematic disk, 2D; a box
pressed into a floor, 3D) it times, interleaved round-robin in one process (medians over
rounds; one thread for single steps, the default threads for rollouts):

* **step + VJP**: the plain call ``Model.step(x, u, order=1)`` and the tangent
  Jacobians' transposes applied to a cotangent, against ``softcontact.torch.step``
  forward + ``backward`` and a jit-compiled ``jax.vjp`` of ``softcontact.jax.step``;
* **rollout**: ``Model.rollout`` of B = 8 trajectories of T = 100 steps against the
  wrappers' forward (no gradient);
* **rollout + gradient**: ``Model.rollout`` and the C adjoint ``_core.rollout_vjp``
  against ``softcontact.torch.rollout`` forward + ``backward`` and a jit-compiled
  ``jax.grad`` of a linear function of the states.

Overhead = wrapper time / plain time - 1.  The wrappers also map 3D quaternion
derivatives between the pose entries and the tangent coordinates, which the plain calls
(tangent derivatives) do not.

    python benchmarks/bench_autodiff.py [--repeats 15] [--out docs/bench_autodiff.md]
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time

import numpy as np
from _timing import Tee, machine, median_time  # benchmarks/ is the script folder
from bench_step import box_scene, pushing_scene

import softcontact as sc
from softcontact import _core
from softcontact.ssdf import _run_options

HEADER = (
    "<!-- written by benchmarks/bench_autodiff.py --out docs/bench_autodiff.md; "
    "do not edit by hand -->"
)
B, T = 8, 100


def _cases(model, x, u):
    """``{row: {"plain" | "torch" | "jax": fn}}`` for one scene."""
    import jax
    import jax.numpy as jnp
    import torch

    import softcontact.jax as sj
    import softcontact.torch as st

    rng = np.random.default_rng(0)
    g = rng.standard_normal(model.nx)
    gt, xt, ut = torch.tensor(g), torch.tensor(x), torch.tensor(u)

    def plain_step():
        s = model.step(x, u, order=1, num_threads=1)
        return g[: s.dx_dx.shape[0]] @ s.dx_dx, g[: s.dx_dx.shape[0]] @ s.dx_du

    def torch_step():
        a, b = xt.clone().requires_grad_(), ut.clone().requires_grad_()
        st.step(model, a, b).backward(gt)
        return a.grad, b.grad

    jstep = jax.jit(
        lambda a, b: jax.vjp(lambda p, q: sj.step(model, p, q), a, b)[1](jnp.asarray(g))
    )
    xj, uj = jnp.asarray(x), jnp.asarray(u)

    X0 = np.broadcast_to(x, (B, model.nx)).copy()
    U = np.broadcast_to(u, (B, T, model.nu)) + 0.01 * rng.standard_normal((B, T, model.nu))
    GX = rng.standard_normal((B, T + 1, model.nx))
    X0t, Ut, GXt = torch.tensor(X0), torch.tensor(U), torch.tensor(GX)
    X0j, Uj, GXj = jnp.asarray(X0), jnp.asarray(U), jnp.asarray(GX)
    opts = _run_options("auto", False)

    def plain_vjp():
        X = model.rollout(X0, U).states
        return _core.rollout_vjp(model._cap, X, U, GX, _core.available_cores(), *opts)

    def torch_vjp():
        a, b = X0t.clone().requires_grad_(), Ut.clone().requires_grad_()
        (st.rollout(model, a, b) * GXt).sum().backward()
        return a.grad, b.grad

    jroll = jax.jit(lambda a, b: sj.rollout(model, a, b))
    jgrad = jax.jit(jax.grad(lambda a, b: jnp.sum(GXj * sj.rollout(model, a, b)), (0, 1)))
    return {
        "step + VJP": {
            "plain": plain_step,
            "torch": torch_step,
            "jax": lambda: jax.block_until_ready(jstep(xj, uj)),
        },
        f"rollout B = {B}, T = {T}": {
            "plain": lambda: model.rollout(X0, U),
            "torch": lambda: st.rollout(model, X0t, Ut),
            "jax": lambda: jax.block_until_ready(jroll(X0j, Uj)),
        },
        f"rollout B = {B}, T = {T} + gradient": {
            "plain": plain_vjp,
            "torch": torch_vjp,
            "jax": lambda: jax.block_until_ready(jgrad(X0j, Uj)),
        },
    }


def _settle():
    """Wait out the XLA worker threads' spinning after a JAX call (~0.1 s)."""
    time.sleep(0.05)


def run(repeats=15, out=sys.stdout):
    import jax
    import torch

    jax.config.update("jax_enable_x64", True)
    torch.set_num_threads(1)
    cpu, ncpu = machine()
    print(
        f"softcontact {sc.__version__}, PyTorch {torch.__version__}, JAX {jax.__version__}; "
        f"{cpu}, {ncpu} CPUs.  Medians over {repeats} interleaved rounds (each round: the "
        "median of 5 calls).\n",
        file=out,
    )
    print(
        "| scene | case | plain [ms] | torch [ms] | jax, jit [ms] | torch overhead | "
        "jax overhead |",
        file=out,
    )
    print("|---|---|---|---|---|---|---|", file=out)
    for scene, (model, x, u, _) in (
        ("push-T (2D)", pushing_scene()),
        ("box on floor (3D)", box_scene()),
    ):
        for row, fns in _cases(model, x, u).items():
            for fn in fns.values():  # warm up (and compile)
                fn()
            times: dict[str, list[float]] = {k: [] for k in fns}
            for _ in range(repeats):
                for k, fn in fns.items():
                    _settle()
                    times[k].append(median_time(fn, 5))
            t = {k: float(np.median(v)) for k, v in times.items()}
            print(
                f"| {scene} | {row} | {t['plain'] * 1e3:.3f} | {t['torch'] * 1e3:.3f} | "
                f"{t['jax'] * 1e3:.3f} | {100 * (t['torch'] / t['plain'] - 1):+.1f} % | "
                f"{100 * (t['jax'] / t['plain'] - 1):+.1f} % |",
                file=out,
                flush=True,
            )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--out", default=None, help="also write the page to this file")
    a = ap.parse_args(argv)
    out = Tee(a.out, HEADER)
    try:
        print("# PyTorch and JAX overhead\n", file=out)
        print(f"Measured {datetime.date.today().isoformat()}.\n", file=out)
        print(__doc__.split("\n\n    python")[0].split("\n", 2)[2].strip() + "\n", file=out)
        run(a.repeats, out)
    finally:
        out.close()


if __name__ == "__main__":
    main()
