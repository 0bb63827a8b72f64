"""Drawing point clouds with matplotlib, which is imported only when something is drawn."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._optional import require
from ._validate import as_positive_float

if TYPE_CHECKING:
    from .cloud import PointCloud

__all__ = ["plot_cloud", "plot_state"]


def plot_cloud(cloud: PointCloud, ax=None, normals=True, scale=None, **kwargs):
    """Draw the samples and their normals; see :meth:`PointCloud.plot
    <softcontact.PointCloud.plot>` for the arguments, the result and the errors."""
    if not isinstance(normals, (bool, np.bool_)):
        raise TypeError(f"normals must be a bool, got {type(normals).__name__}")
    if scale is None:
        size = cloud.size
        scale = 0.1 * size if size > 0 else 1.0
    else:
        scale = as_positive_float(scale, "scale")
    plt = require("matplotlib.pyplot", "plot", "PointCloud.plot")

    p, n = cloud.points, cloud.normals * scale
    style = {"s": 6, **kwargs}
    if cloud.dim == 2:
        if ax is None:
            _, ax = plt.subplots()
        ax.scatter(p[:, 0], p[:, 1], **style)
        if normals:
            ax.quiver(
                p[:, 0],
                p[:, 1],
                n[:, 0],
                n[:, 1],
                angles="xy",
                scale_units="xy",
                scale=1.0,
                color="C1",
                width=0.003,
            )
        ax.set_aspect("equal")
    else:
        if ax is None:
            ax = plt.figure().add_subplot(projection="3d")
        else:
            _check_axes(ax, 3, "cloud")
        ax.scatter(p[:, 0], p[:, 1], p[:, 2], **style)
        if normals:
            ax.quiver(
                p[:, 0],
                p[:, 1],
                p[:, 2],
                n[:, 0],
                n[:, 1],
                n[:, 2],
                color="C1",
                linewidth=0.5,
                arrow_length_ratio=0.3,
            )
        ax.set_aspect("equal")
    return ax


def _check_axes(ax, dim, what):
    """ValueError unless ``ax`` is a 3D axes for ``dim`` 3, a 2D one for ``dim`` 2."""
    name = getattr(ax, "name", type(ax).__name__)
    if dim == 3 and name != "3d":
        raise ValueError(
            f"ax must be a 3D axes (projection='3d') to plot a 3D {what}, got a {name!r} axes"
        )
    if dim == 2 and name == "3d":
        raise ValueError(f"ax must be a 2D axes to plot a 2D {what}, got a '3d' axes")


def plot_state(model, x, ax=None, *, normals=False, title=None, **kwargs):
    """Draw every body of ``model`` posed as in the state ``x``; see :meth:`Model.plot
    <softcontact.Model.plot>` for the arguments, the result and the errors."""
    x = model._as_state(x, "x")
    if not isinstance(normals, (bool, np.bool_)):
        raise TypeError(f"normals must be a bool, got {type(normals).__name__}")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    plt = require("matplotlib.pyplot", "plot", "Model.plot")
    D = model.dim
    scene = model._source[0]
    if ax is None:
        ax = plt.figure().add_subplot(projection="3d") if D == 3 else plt.subplots()[1]
    else:
        _check_axes(ax, D, "model")
    poses = dict(zip(model.moving, model._split(x)[0], strict=True))
    posed, planes = [], []
    for i, b in enumerate(scene._bodies):
        pose = poses.get(b.name, b.pose)
        cloud = b.cloud
        if len(cloud) == 0:
            continue
        posed_cloud = cloud.transformed(pose)
        p, n = posed_cloud.points, posed_cloud.normals
        if cloud.kind == "halfspace":
            planes.append((b.name, p[0], n[0]))
        else:
            posed.append((i, b.name, p, n))
    style = {"s": 4, **kwargs}
    # a cube (square) about the bodies (the half-spaces' anchors where there are none,
    # since an anchor may lie anywhere on its plane): equal scales
    pts = np.concatenate([p for _, _, p, _ in posed] or [p[None] for _, p, _ in planes])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    half = 0.55 * float(np.max(hi - lo)) + 1e-3
    lo, hi = 0.5 * (lo + hi) - half, 0.5 * (lo + hi) + half
    if D == 3:
        ax.computed_zorder = False  # the half-spaces below, the bodies drawn over them
    for name, p, n in planes:
        _draw_plane(ax, D, p, n, lo, hi, name)
    for i, name, p, n in posed:
        colour = f"C{i % 10}"
        ax.scatter(*p.T, color=colour, label=name, **style)
        if normals:
            s = 0.1 * float(np.max(hi - lo))
            ax.quiver(*p.T, *(n * s).T, color=colour, linewidth=0.5)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    if D == 3:
        ax.set_zlim(lo[2], hi[2])
        ax.set_box_aspect((1, 1, 1))
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_zlabel("z [m]")
    else:
        ax.set_aspect("equal")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
    ax.legend(loc="upper left", fontsize="small")
    if title is not None:
        ax.set_title(title)
    return ax


def _draw_plane(ax, D, p, n, lo, hi, name):
    """A half-space's boundary, clipped to the box [lo, hi] of the other bodies."""
    if D == 2:
        t = np.array([-n[1], n[0]])
        L = float(np.linalg.norm(hi - lo))
        seg = np.array([p - L * t, p + L * t])
        # the boundary line through the other bodies' box, about their centre
        c = 0.5 * (lo + hi)
        seg = seg + t * float(t @ (c - p))
        ax.plot(*seg.T, color="0.4", linewidth=2, label=name)
        return
    # a square patch of the plane, centred under the other bodies
    k = int(np.argmax(np.abs(n)))
    axes = [j for j in range(3) if j != k]
    g = np.array(np.meshgrid(*(np.linspace(lo[j], hi[j], 2) for j in axes)))
    P = np.zeros((3,) + g.shape[1:])
    P[axes[0]], P[axes[1]] = g[0], g[1]
    # solve n . (P - p) = 0 for the k-th coordinate
    P[k] = p[k] - (n[axes[0]] * (g[0] - p[axes[0]]) + n[axes[1]] * (g[1] - p[axes[1]])) / n[k]
    ax.plot_surface(*P, color="0.6", alpha=0.35, label=name)
