"""Gradient and Hessian methods against a zeroth-order sampler on fixed push-T problems.

:func:`compare` solves the same open-loop trajectory problems with

- ``"CEM"``: the cross-entropy method (:func:`softcontact.optimize.cross_entropy`), the
  zeroth-order sampler that prevails for contact-rich planning, each iteration one
  batched, threaded C rollout of all samples (:meth:`Model.rollout`);
- ``"L-BFGS"``: ``scipy.optimize.minimize(method="L-BFGS-B")`` with the exact gradient
  (adjoint of the analytic step Jacobians);
- ``"trust-Newton"``: ``scipy.optimize.minimize(method="trust-krylov")``, a trust-region
  Newton method whose subproblems are solved in Krylov subspaces from exact
  Hessian-vector products (second-order adjoint), with the exact gradient.  (Krylov
  rather than ``trust-ncg``, whose truncated CG stops at the first direction of negative
  curvature, which these problems have);
- ``"iLQR"``: :func:`softcontact.optimize.ilqr` (Gauss-Newton), on the controls of every
  step (not blocks: the Riccati pass works per step) within the same speed box,

and records the best objective against wall time and against dynamics evaluations
(steps of the model, at any derivative order).

The problems (:func:`fixed_problem`): push-T from seed ``s`` with the pusher moved to
the start of the best push that :class:`~softcontact.tasks.push_t.mpc.Controller`
selects (6 mm from the T's surface); horizon ``horizon`` steps (400 = 2 s); controls
constant over blocks of ``block`` steps (20 blocks x (vx, vy) = 40 variables), squashed
into the speed box, ``u = u_max / sqrt(2) tanh(w)``, so that every method works
unconstrained on the same ``w``; the objective is the MPC objective of
:mod:`~softcontact.tasks.push_t.mpc` over the horizon.  Every method starts from
``w = 0`` (pusher at rest); iLQR starts from the same controls, zero.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time

import numpy as np

from ..._optional import require
from ..._validate import as_int
from ...optimize import cross_entropy
from .. import push_t
from .mpc import Controller

logger = logging.getLogger(__name__)

__all__ = ["FixedProblem", "Trace", "compare", "Comparison", "METHODS"]

METHODS = ("CEM", "L-BFGS", "trust-Newton", "iLQR")


class FixedProblem:
    """One open-loop problem in the squashed block variables ``w`` (see the module
    docstring): ``fun(w)``, ``jac(w)``, ``hessp(w, p)`` exact; ``batch_fun(W)`` through
    one threaded rollout.  ``steps()`` counts the dynamics evaluations so far."""

    def __init__(self, seed, horizon=400, block=20, num_threads=2) -> None:
        self.seed = as_int(seed, "seed", 0)
        self.task = push_t.make(seed=self.seed)
        ctl = Controller(
            self.task,
            horizon=as_int(horizon, "horizon", 1),
            block=as_int(block, "block", 1),
            replan=block,
            num_threads=num_threads,
        )
        x0 = np.array(self.task.x0, dtype=float)
        sel = Controller(self.task, num_threads=num_threads).select(x0)
        if sel is None:  # pragma: no cover - every seed has a feasible push
            raise ValueError(f"no feasible push from seed {seed}")
        x0[3:5] = sel[1]
        self.x0 = x0
        self.ctl = ctl
        self.problem = ctl.problem(x0)
        self.K = ctl.horizon // ctl.block
        self.n = 2 * self.K
        self.scale = ctl.u_box
        self.num_threads = num_threads
        self.batch_steps = 0

    def _z(self, w):
        return self.scale * np.tanh(np.asarray(w, dtype=float).reshape(-1, self.K, 2))

    def _U(self, w):
        return self.ctl.controls(self._z(w)[0])

    def _block_sum(self, gU):
        c = self.ctl
        return gU.reshape(c.horizon, 3)[:, :2].reshape(self.K, c.block, 2).sum(axis=1)

    def fun(self, w) -> float:
        return self.problem.fun(self._U(w))

    def jac(self, w) -> np.ndarray:
        gz = self._block_sum(self.problem.jac(self._U(w))).reshape(-1)
        t = np.tanh(np.asarray(w, dtype=float))
        return gz * self.scale * (1 - t * t)

    def hessp(self, w, p) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        t = np.tanh(w)
        d = self.scale * (1 - t * t)  # dz/dw
        dd = -2.0 * t * d  # d2z/dw2
        U = self._U(w)
        q = (d * np.asarray(p, dtype=float)).reshape(self.K, 2)
        Hq = self._block_sum(self.problem.hessp(U, self.ctl.controls(q).reshape(-1)))
        gz = self._block_sum(self.problem.jac(U)).reshape(-1)
        return d * Hq.reshape(-1) + gz * dd * np.asarray(p, dtype=float)

    def batch_fun(self, W) -> np.ndarray:
        Z = self._z(W)
        U = self.ctl.controls(Z)
        ro = self.task.model.rollout(self.x0, U, order=0, num_threads=self.num_threads)
        self.batch_steps += U.shape[0] * U.shape[1]
        J = self.ctl.batch_objective(ro.states, U)
        J[ro.status != 0] = np.inf
        return J

    def steps(self) -> int:
        return self.batch_steps + sum(self.problem.n_steps.values())


@dataclasses.dataclass
class Trace:
    """Best objective so far against wall time (s) and dynamics evaluations (steps)."""

    method: str
    seed: int
    wall: list
    steps: list
    best: list

    def reach(self, target):
        """(wall, steps) at which the best objective first is <= target, or None."""
        for w, s, b in zip(self.wall, self.steps, self.best, strict=True):
            if b <= target:
                return w, s
        return None


def _run(method, fp, budget):
    trace = Trace(method, fp.seed, [], [], [])
    t0 = time.perf_counter()
    best = [math.inf]

    def record(f):
        best[0] = min(best[0], f)
        trace.wall.append(time.perf_counter() - t0)
        trace.steps.append(fp.steps())
        trace.best.append(best[0])

    w0 = np.zeros(fp.n)
    if method == "CEM":
        cross_entropy(
            fp.batch_fun,
            w0,
            1.0,
            samples=budget["cem_samples"],
            elites=budget["cem_elites"],
            iterations=budget["cem_iterations"],
            smoothing=0.1,
            seed=fp.seed,
            callback=lambda r: record(r.fun),
        )
        return trace
    if method == "iLQR":
        from ...optimize import ilqr

        prob = fp.problem
        U0 = np.zeros((prob.T, prob.nu))
        record(prob.fun(U0))
        box = np.array([fp.scale, fp.scale, 0.0])
        ilqr(
            prob,
            U0,
            bounds=(-box, box),
            max_iter=budget["ilqr_iterations"],
            ftol=0.0,
            callback=lambda nit, f, U: record(f),
        )
        return trace
    minimize = require("scipy.optimize", "optimize", "push_t.compare").minimize

    def fun(w):
        f = fp.fun(w)
        record(f)
        return f

    record(fp.fun(w0))
    if method == "L-BFGS":
        minimize(
            fun,
            w0,
            jac=fp.jac,
            method="L-BFGS-B",
            options={"maxiter": budget["lbfgs_iterations"], "gtol": 1e-12, "ftol": 0},
        )
    else:
        minimize(
            fun,
            w0,
            jac=fp.jac,
            hessp=fp.hessp,
            method="trust-krylov",
            options={"maxiter": budget["newton_iterations"], "gtol": 1e-10},
        )
    return trace


@dataclasses.dataclass
class Comparison:
    """Traces of every method on every problem (:func:`compare`)."""

    traces: list

    def rows(self):
        """Per problem and method: final cost, wall, steps, and the wall time / steps to
        reach CEM's final cost on that problem (and the speed-up against CEM's total)."""
        out = []
        for seed in sorted({t.seed for t in self.traces}):
            tr = {t.method: t for t in self.traces if t.seed == seed}
            cem = tr.get("CEM")
            target = cem.best[-1] if cem is not None else None
            for m in METHODS:
                if m not in tr:
                    continue
                t = tr[m]
                hit = t.reach(target) if target is not None else None
                out.append(
                    {
                        "seed": seed,
                        "method": m,
                        "final": t.best[-1],
                        "wall": t.wall[-1],
                        "steps": t.steps[-1],
                        "wall_to_cem": None if hit is None else hit[0],
                        "steps_to_cem": None if hit is None else hit[1],
                        "speedup": None if hit is None or cem is None else cem.wall[-1] / hit[0],
                        "initial": t.best[0],
                    }
                )
        return out

    def table(self) -> str:
        """The comparison as a markdown table."""
        lines = [
            "| seed | method | initial cost | final cost | wall [s] | steps | "
            "wall to CEM's final [s] | steps to CEM's final | CEM wall / this |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in self.rows():

            def f(v, fmt):
                return "not reached" if v is None else format(v, fmt)

            lines.append(
                f"| {r['seed']} | {r['method']} | {r['initial']:.4g} | "
                f"{r['final']:.4g} | {r['wall']:.2f} | {r['steps']} | "
                f"{f(r['wall_to_cem'], '.3f')} | {f(r['steps_to_cem'], 'd')} | "
                f"{f(r['speedup'], '.1f')} |"
            )
        return "\n".join(lines)

    def plot(self, path=None):
        """Best cost against wall time and against dynamics evaluations, one row of two
        panels per problem; saved to ``path`` if given.  Returns the figure."""
        matplotlib = require("matplotlib", "plot", "Comparison.plot")

        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        seeds = sorted({t.seed for t in self.traces})
        fig, axes = plt.subplots(len(seeds), 2, figsize=(10, 3.2 * len(seeds)), squeeze=False)
        colors = {
            "CEM": "tab:gray",
            "L-BFGS": "tab:blue",
            "trust-Newton": "tab:red",
            "iLQR": "tab:green",
        }
        for i, seed in enumerate(seeds):
            for t in self.traces:
                if t.seed != seed:
                    continue
                axes[i, 0].plot(t.wall, t.best, color=colors[t.method], label=t.method)
                axes[i, 1].plot(t.steps, t.best, color=colors[t.method], label=t.method)
            for j, lab in enumerate(("wall time [s]", "dynamics evaluations [steps]")):
                ax = axes[i, j]
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_xlabel(lab)
                ax.set_ylabel("best objective")
                ax.set_title(f"push-T seed {seed}")
                ax.grid(True, which="both", alpha=0.3)
            axes[i, 0].legend()
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=110)
        return fig


def compare(
    seeds=(0, 1, 2),
    horizon=400,
    block=20,
    cem_samples=64,
    cem_elites=8,
    cem_iterations=30,
    lbfgs_iterations=60,
    newton_iterations=20,
    ilqr_iterations=30,
    methods=METHODS,
    num_threads=2,
    callback=None,
) -> Comparison:
    """Run ``methods`` on :class:`FixedProblem` ``(seed, horizon, block)`` for each seed,
    interleaved problem by problem in one process.  ``callback(trace)`` after each run."""
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise ValueError(f"methods must be among {METHODS}, got {bad}")
    budget = {
        "cem_samples": as_int(cem_samples, "cem_samples", 2),
        "cem_elites": as_int(cem_elites, "cem_elites", 1, cem_samples),
        "cem_iterations": as_int(cem_iterations, "cem_iterations", 1),
        "lbfgs_iterations": as_int(lbfgs_iterations, "lbfgs_iterations", 1),
        "newton_iterations": as_int(newton_iterations, "newton_iterations", 1),
        "ilqr_iterations": as_int(ilqr_iterations, "ilqr_iterations", 1),
    }
    traces = []
    for seed in seeds:
        for m in methods:
            fp = FixedProblem(seed, horizon, block, num_threads)
            t = _run(m, fp, budget)
            traces.append(t)
            logger.info(
                "seed %s %s: best %.4g after %.2f s, %d steps",
                t.seed,
                t.method,
                t.best[-1],
                t.wall[-1],
                t.steps[-1],
            )
            if callback is not None:
                callback(t)
    return Comparison(traces)
