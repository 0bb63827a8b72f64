"""Drawing point clouds with matplotlib, which is imported only when something is drawn."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._validate import as_positive_float

if TYPE_CHECKING:
    from .cloud import PointCloud

__all__ = ["plot_cloud"]


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
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "PointCloud.plot needs matplotlib, which is not installed: pip install matplotlib"
        ) from exc

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
        elif getattr(ax, "name", None) != "3d":
            raise ValueError(
                "ax must be a 3D axes (projection='3d') to plot a 3D cloud, "
                f"got a {getattr(ax, 'name', type(ax).__name__)!r} axes"
            )
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
