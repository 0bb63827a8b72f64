"""Figures of push-T episodes: the trajectory over the goal (PNG) and an animation (GIF).

Uses matplotlib (and Pillow, which matplotlib requires, for the GIF).  Functions take a
:class:`~softcontact.tasks.push_t.PushT` and states ``X`` (N + 1, 12) -- e.g.
``Episode.states`` from :mod:`~softcontact.tasks.push_t.mpc`.
"""

from __future__ import annotations

import numpy as np

from ..._optional import require

__all__ = ["plot_trajectory", "animate"]


def _setup(ax, task):
    import matplotlib.patches as mpatches

    W = task.workspace
    ax.add_patch(mpatches.Rectangle((0, 0), W, W, fill=False, lw=2, color="k"))
    ax.add_patch(
        mpatches.Polygon(
            task.t_outline(task.goal), closed=True, color="tab:green", alpha=0.25, label="goal"
        )
    )
    ax.set_xlim(-0.01, W + 0.01)
    ax.set_ylim(-0.01, W + 0.01)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")


def plot_trajectory(task, X, path=None, title=None, snapshots=6, ax=None):
    """The T at ``snapshots`` evenly spaced times (light to dark), the final T, the pusher's
    path (coloured by time) and the goal.  Saved to ``path`` if given; returns the figure."""
    matplotlib = require("matplotlib", "plot", "push_t.viz.plot_trajectory")

    if path is not None and ax is None:
        matplotlib.use("Agg", force=False)
    import matplotlib.patches as mpatches
    import matplotlib.pyplot as plt

    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != task.model.nx or X.shape[0] < 1:
        raise ValueError(f"X must have shape (N + 1, {task.model.nx}), got {X.shape}")
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.6, 5.6))
    _setup(ax, task)
    idx = np.unique(np.linspace(0, len(X) - 1, max(2, snapshots)).round().astype(int))
    for j, k in enumerate(idx):
        a = 0.12 + 0.5 * j / max(1, len(idx) - 1)
        ax.add_patch(
            mpatches.Polygon(
                task.t_outline(X[k, :3]), closed=True, fill=False, color="tab:blue", alpha=a, lw=1
            )
        )
    ax.add_patch(
        mpatches.Polygon(
            task.t_outline(X[-1, :3]), closed=True, color="tab:blue", alpha=0.6, label="T (final)"
        )
    )
    t = np.arange(len(X)) * task.dt
    sc = ax.scatter(X[:, 3], X[:, 4], c=t, s=2, cmap="plasma", label="pusher path")
    ax.add_patch(mpatches.Circle(X[-1, 3:5], task.pusher_radius, color="tab:orange"))
    ax.plot(X[:, 0], X[:, 1], "-", color="tab:blue", lw=0.8, alpha=0.7)
    cov = task.coverage(X[-1, :3])
    ax.set_title(title or f"push-T seed {task.seed}: coverage {cov:.3f} at t = {t[-1]:.2f} s")
    ax.legend(loc="upper left", fontsize=8)
    if fig is not None:
        fig.colorbar(sc, ax=ax, shrink=0.75, label="time [s]")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=110)
    return fig if fig is not None else ax.figure


def animate(task, X, path, fps=20, max_frames=200):
    """Write an animated GIF of the states ``X`` to ``path`` (frames every
    ``1 / fps`` s of simulated time, at most ``max_frames``).  Returns the frame count."""
    matplotlib = require("matplotlib", "plot", "push_t.viz.animate")

    matplotlib.use("Agg", force=False)
    import matplotlib.patches as mpatches
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation, PillowWriter

    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != task.model.nx or X.shape[0] < 1:
        raise ValueError(f"X must have shape (N + 1, {task.model.nx}), got {X.shape}")
    stride = max(1, int(round(1.0 / (fps * task.dt))))
    idx = list(range(0, len(X), stride))
    if idx[-1] != len(X) - 1:
        idx.append(len(X) - 1)
    if len(idx) > max_frames:
        idx = list(np.linspace(0, len(X) - 1, max_frames).round().astype(int))
    fig, ax = plt.subplots(figsize=(4.4, 4.6))
    _setup(ax, task)
    tee = mpatches.Polygon(
        task.t_outline(X[0, :3]), closed=True, color="tab:blue", alpha=0.7, label="T"
    )
    disk = mpatches.Circle(X[0, 3:5], task.pusher_radius, color="tab:orange", label="pusher")
    ax.add_patch(tee)
    ax.add_patch(disk)
    (trail,) = ax.plot([], [], "-", color="tab:orange", lw=0.8, alpha=0.6)
    ax.legend(loc="upper left", fontsize=7)

    def text(k):
        return f"t = {k * task.dt:.2f} s   coverage {task.coverage(X[k, :3]):.3f}"

    # the layout is fitted around the widest title of the run, so no frame clips its own
    title = ax.set_title(max((text(k) for k in (0, idx[-1])), key=len), fontsize=10)
    fig.tight_layout()

    def frame(k):
        tee.set_xy(task.t_outline(X[k, :3]))
        disk.center = (X[k, 3], X[k, 4])
        trail.set_data(X[: k + 1, 3], X[: k + 1, 4])
        title.set_text(text(k))
        return tee, disk, trail, title

    anim = FuncAnimation(fig, frame, frames=idx, blit=False)
    anim.save(path, writer=PillowWriter(fps=fps))
    plt.close(fig)
    return len(idx)
