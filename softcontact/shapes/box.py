"""Boxes: the axis-aligned rectangle (2D) and box (3D), centred at the origin."""

from __future__ import annotations

import numpy as np

from .._validate import as_float_array, shape_str
from ..sampling import LENGTH_RANGE, as_spacing, check_count, n_segments, sample_polygon_edges
from .base import Sample, Shape, register

__all__ = ["Box"]


@register
class Box(Shape):
    """``|x_k| <= half_extents[k]``: a rectangle in 2D, a box in 3D."""

    __slots__ = ()
    shape = "box"
    dims = (2, 3)
    param_shapes = {"half_extents": ("D",)}

    @classmethod
    def sample(cls, half_extents, spacing) -> Sample:
        """The samples of :meth:`PointCloud.box <softcontact.PointCloud.box>`.

        2D: the rectangle's edges (:func:`~softcontact.sampling.sample_polygon_edges`).
        3D: each face a regular grid including its boundary, ``ceil(edge / spacing)`` cells
        per side, trapezoid-rule area weights.
        """
        he = as_float_array(half_extents, "half_extents")
        if he.shape not in ((2,), (3,)):
            raise ValueError(
                f"half_extents must have shape (2,) or (3,), got {shape_str(he.shape)}"
            )
        if not (np.all(np.isfinite(he)) and np.all(he > 0)):
            raise ValueError(f"half_extents must be finite and > 0, got {he.tolist()}")
        lo, hi = LENGTH_RANGE
        if not (np.all(he >= lo) and np.all(he <= hi)):
            raise ValueError(
                f"half_extents must be in [{lo:g}, {hi:g}] (metres), got {he.tolist()}"
            )
        spacing = as_spacing(spacing)
        if he.shape == (2,):
            a, b = he
            verts = np.array([[-a, -b], [a, -b], [a, b], [-a, b]])
            return Sample(*sample_polygon_edges(verts, spacing), cls(2, half_extents=he))

        segs = [n_segments(2.0 * h, spacing) for h in he]
        total = 2 * sum((segs[u] + 1) * (segs[v] + 1) for u, v in ((1, 2), (0, 2), (0, 1)))
        check_count(total, spacing)
        grids = [np.linspace(-h, h, m + 1) for h, m in zip(he, segs, strict=True)]
        trap = []
        for h, m in zip(he, segs, strict=True):
            t = np.full(m + 1, 2.0 * h / m)
            t[[0, -1]] *= 0.5
            trap.append(t)
        pts, nrms, wts = [], [], []
        for axis in range(3):
            u, v = [k for k in range(3) if k != axis]
            gu, gv = np.meshgrid(grids[u], grids[v], indexing="ij")
            area = np.outer(trap[u], trap[v]).ravel()
            for sign in (-1.0, 1.0):
                p = np.empty((gu.size, 3))
                p[:, axis] = sign * he[axis]
                p[:, u] = gu.ravel()
                p[:, v] = gv.ravel()
                nrm = np.zeros((gu.size, 3))
                nrm[:, axis] = sign
                pts.append(p)
                nrms.append(nrm)
                wts.append(area)
        return Sample(
            np.concatenate(pts), np.concatenate(nrms), np.concatenate(wts), cls(3, half_extents=he)
        )

    def check_params(self) -> None:
        he = self.params["half_extents"]
        lo, hi = LENGTH_RANGE
        if not (np.all(he >= lo) and np.all(he <= hi)):  # NaN fails too
            raise ValueError(f"half_extents must be in [{lo:g}, {hi:g}], got {he.tolist()}")

    def canonical_mass_properties(self):
        he = self.params["half_extents"]
        zero = np.zeros(self.dim)
        if self.dim == 2:
            a, b = float(he[0]), float(he[1])
            area = 4.0 * a * b
            return area, zero, area * (a * a + b * b) / 3.0
        sq = he * he
        volume = 8.0 * float(np.prod(he))
        return volume, zero, np.diag(volume / 3.0 * (sq.sum() - sq))
