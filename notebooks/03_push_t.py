# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Push-T: trajectory optimization and MPC through contact
#
# The planar push-T task (`softcontact.tasks.push_t`): a kinematic disk (the pusher, whose
# control is its velocity) pushes a T-shaped block sliding on a table with friction, inside a
# walled 0.512 m square, until the T covers its goal pose `(0.256, 0.256, pi/4)` to 95 %.
# The contact between the disk and the T is the paper's soft-minimum contact model, so the
# whole simulation is C^2 and its exact first and second derivatives drive the optimizers.
#
# This notebook sets the task up, optimizes an open-loop push with exact gradients and
# Hessian-vector products, runs the closed-loop MPC controller to success, animates it, and
# compares gradient and Hessian methods with the zeroth-order cross-entropy method on a fixed
# problem (short settings; `python -m softcontact compare` runs the full comparison).

# %%
import time
import numpy as np
import matplotlib.pyplot as plt
from IPython.display import Image, display
from scipy.optimize import minimize

from softcontact.tasks import push_t
from softcontact.tasks.push_t import compare, mpc, viz

task = push_t.make(seed=14)
print(task)
print("state:", task.model.nx, "numbers; controls:", task.model.control_names)
print("parameters:", {k: task.params[k] for k in ("mass", "support_friction", "friction", "dt")})
print(f"initial coverage {task.coverage(task.x0[:3]):.3f}")
viz.plot_trajectory(task, task.x0[None], title="initial state (T blue, goal green)")
plt.show()

# %% [markdown]
# ## An open-loop push with exact derivatives
#
# `TrajectoryProblem` turns the model, a start state and a horizon into `J(U)` with the exact
# gradient (adjoint of the analytic step Jacobians) and exact Hessian-vector products
# (second-order adjoint).  The MPC controller's objective: goal-pose error at the end and
# along the way, plus a little control effort.  The pusher starts where the controller's
# push selection puts it (6 mm from the T), the controls are constant over blocks of 20 steps,
# and we compare L-BFGS-B (gradients) with trust-region Newton-CG (Hessian-vector products)
# from the same start.

# %%
ctl = mpc.Controller(task, horizon=200, block=20)
_, standoff, z_push = mpc.Controller(task).select(task.x0)
x0 = np.array(task.x0)
x0[3:5] = standoff
prob = ctl.problem(x0)
K = ctl.horizon // ctl.block


def fg(z):
    v, g = prob.value_and_grad(ctl.controls(z))
    return v, g.reshape(ctl.horizon, 3)[:, :2].reshape(K, ctl.block, 2).sum(1).ravel()


def hessp(z, p):
    Hp = prob.hessp(ctl.controls(z), ctl.controls(p).ravel())
    return Hp.reshape(ctl.horizon, 3)[:, :2].reshape(K, ctl.block, 2).sum(1).ravel()


z0 = np.zeros(2 * K)
results = {}
for name, kw in {
    "L-BFGS-B": dict(method="L-BFGS-B", bounds=[(-ctl.u_box, ctl.u_box)] * z0.size),
    "trust-ncg": dict(method="trust-ncg", hessp=hessp),
}.items():
    t0 = time.perf_counter()
    res = minimize(fg, z0, jac=True, options={"maxiter": 10}, **kw)
    X = prob.states(ctl.controls(res.x))
    results[name] = X
    print(
        f"{name:9s}: J {fg(z0)[0]:.4f} -> {res.fun:.4f} in {res.nit} iterations, "
        f"{time.perf_counter() - t0:.1f} s; final coverage {task.coverage(X[-1, :3]):.3f}"
    )

fig, axes = plt.subplots(1, 2, figsize=(10, 5))
for ax, (name, X) in zip(axes, results.items()):
    viz.plot_trajectory(task, X, ax=ax, title=f"{name}: 1 s open loop")
plt.show()

# %% [markdown]
# ## Closed loop: the MPC controller
#
# Every 0.1 s the controller (see `softcontact.tasks.push_t.mpc` for exactly what it does)
# picks a push by scoring candidate pushes in one batched, threaded rollout (sampling, for the
# initial guess only), moves the pusher there clear of the T if needed, and refines the plan
# by L-BFGS-B with exact gradients, warm-started from the previous tick.  Over 50 seeded
# initial states (`python -m softcontact mpc`) it succeeds on every one; see the README.

# %%
t0 = time.perf_counter()
ep = mpc.run_episode(task)
print(ep)
print(
    f"median solve {np.median(ep.solve_times):.3f} s; phases: "
    f"{(ep.phases == 'move').sum()} move steps, {(ep.phases == 'push').sum()} push steps"
)
viz.plot_trajectory(task, ep.states)
plt.show()
n = viz.animate(task, ep.states, "push_t_notebook.gif", fps=15)
display(Image(filename="push_t_notebook.gif"))

# %% [markdown]
# ## Gradient and Hessian methods against the zeroth-order baseline
#
# The cross-entropy method (CEM) samples control sequences and refits a Gaussian to the best;
# each iteration is one batched C rollout across threads.  L-BFGS uses exact gradients,
# trust-region Newton exact Hessian-vector products.  All three solve the same problem
# (controls squashed into the speed box by `tanh`, from the pusher at rest).  Short budgets
# here; the README has the full table (`python -m softcontact compare`).

# %%
comp = compare.compare(
    seeds=(0,),
    horizon=160,
    block=20,
    cem_samples=32,
    cem_elites=6,
    cem_iterations=4,
    lbfgs_iterations=12,
    newton_iterations=3,
)
print(comp.table())
comp.plot()
plt.show()
