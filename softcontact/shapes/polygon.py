"""Polygons: the simple polygon (2D) and the right prism over one (3D)."""

from __future__ import annotations

import numpy as np

from .._validate import as_float_array, shape_str
from ..geometry import extrude, simple_polygon_ccw
from ..mass import polygon_area_moments
from ..sampling import as_length, as_spacing, check_extent, check_finite, sample_polygon_edges
from .base import Sample, Shape, register
from .mesh import Mesh

__all__ = ["Polygon", "Prism"]


@register
class Polygon(Shape):
    """The region bounded by a simple polygon, ``vertices`` (K, 2) counter-clockwise."""

    __slots__ = ()
    shape = "polygon"
    dims = (2,)
    param_shapes = {"vertices": ("K", 2)}

    @classmethod
    def sample(cls, vertices, spacing) -> Sample:
        """The samples of :meth:`PointCloud.polygon <softcontact.PointCloud.polygon>`: each
        edge of the polygon, made counter-clockwise, sampled with its outward normal."""
        v = as_float_array(vertices, "vertices")
        if v.ndim != 2 or v.shape[1] != 2 or v.shape[0] < 3:
            raise ValueError(
                f"vertices must have shape (K, 2) with K >= 3, got {shape_str(v.shape)}"
            )
        check_finite(v, "vertices")
        check_extent(v, "vertices")
        spacing = as_spacing(spacing)
        v = simple_polygon_ccw(v)
        return Sample(*sample_polygon_edges(v, spacing), cls(2, vertices=v))

    def check_params(self) -> None:
        _check_ccw_polygon(self.params["vertices"])

    def canonical_mass_properties(self):
        area, c, sxx, syy, _ = polygon_area_moments(self.params["vertices"])
        return area, c, sxx + syy


@register
class Prism(Shape):
    """The polygon ``vertices`` (K, 2) extruded over ``|z| <= half_height`` (metres)."""

    __slots__ = ()
    shape = "prism"
    dims = (3,)
    param_shapes = {"vertices": ("K", 2), "half_height": ()}

    @classmethod
    def sample(cls, vertices: np.ndarray, half_height: float, spacing: float) -> Sample:
        """Samples of the prism's triangulated surface (:meth:`Mesh.sample`) and the exact
        prism as the solid.  ``vertices`` must already be a simple counter-clockwise
        polygon (as :func:`~softcontact.geometry.simple_polygon_ccw` returns)."""
        p, n, w, _ = Mesh.sample(*extrude(vertices, half_height), spacing)
        return Sample(p, n, w, cls(3, vertices=vertices, half_height=half_height))

    def check_params(self) -> None:
        _check_ccw_polygon(self.params["vertices"])
        as_length(self.params["half_height"], "half_height")

    def canonical_mass_properties(self):
        """With thickness ``T = 2 half_height`` and the polygon's area moments,
        ``V = A T``, ``int x^2 dV = T Sxx``, ``int z^2 dV = A T^3 / 12``,
        ``int xy dV = T Sxy`` (``int xz = int yz = 0`` by symmetry in z).
        """
        area, c, sxx, syy, sxy = polygon_area_moments(self.params["vertices"])
        t = 2.0 * self.params["half_height"]
        zz = area * t**3 / 12.0
        inertia = np.array(
            [
                [t * syy + zz, -t * sxy, 0.0],
                [-t * sxy, t * sxx + zz, 0.0],
                [0.0, 0.0, t * (sxx + syy)],
            ]
        )
        return area * t, np.array([c[0], c[1], 0.0]), inertia


def _check_ccw_polygon(v: np.ndarray) -> None:
    """The checks of :meth:`Polygon.sample` on recorded vertices, which are counter-clockwise."""
    if v.shape[0] < 3:
        raise ValueError(f"vertices must have shape (K, 2) with K >= 3, got {shape_str(v.shape)}")
    check_finite(v, "vertices")
    check_extent(v, "vertices")
    if simple_polygon_ccw(v) is not v:
        raise ValueError("vertices must be counter-clockwise")
