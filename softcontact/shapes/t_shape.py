"""The T of the planar pushing benchmark: a :class:`Polygon` in 2D, a :class:`Prism` in 3D."""

from __future__ import annotations

import numpy as np

from .._validate import as_int, as_positive_float
from ..geometry import polygon_centroid
from ..sampling import LENGTH_RANGE, as_spacing
from .base import Sample
from .polygon import Polygon, Prism

__all__ = ["t_shape_vertices", "sample_t_shape"]


#: The ``scale`` (metres per unit) of the T that the constructors accept: the T, about 170
#: units across and within 80 units of its centroid, then has a size and coordinates in
#: :data:`~softcontact.sampling.LENGTH_RANGE`.
SCALE_RANGE = (1e-60, 1e58)


def _as_scale(scale) -> float:
    s = as_positive_float(scale, "scale")
    lo, hi = SCALE_RANGE
    if not lo <= s <= hi:
        raise ValueError(f"scale must be in [{lo:g}, {hi:g}] (metres per unit), got {s!r}")
    return s


def t_shape_vertices(scale=1e-3) -> np.ndarray:
    """The T's corners in metres, counter-clockwise, centred on its area centroid (see
    :meth:`PointCloud.t_shape_vertices <softcontact.PointCloud.t_shape_vertices>`)."""
    scale = _as_scale(scale)
    v = np.array(
        [[-15, -90], [15, -90], [15, 0], [60, 0], [60, 30], [-60, 30], [-60, 0], [-15, 0]],
        dtype=float,
    )
    return (v - polygon_centroid(v)) * scale


def sample_t_shape(scale=1e-3, spacing=None, dim=2, thickness=30.0) -> Sample:
    """The samples of :meth:`PointCloud.t_shape <softcontact.PointCloud.t_shape>`.

    2D: the outline (:meth:`Polygon.sample`).  3D: the prism of height ``thickness`` units
    (:meth:`Prism.sample`), whose recorded solid is the exact prism.
    """
    scale = _as_scale(scale)
    spacing = 5.0 * scale if spacing is None else as_spacing(spacing)
    dim = as_int(dim, "dim", 2, 3)
    thickness = as_positive_float(thickness, "thickness")
    lo, hi = LENGTH_RANGE
    if dim == 3 and not lo <= 0.5 * thickness * scale <= hi:
        raise ValueError(
            f"thickness must make the half height thickness * scale / 2 in [{lo:g}, {hi:g}] "
            f"(metres), got {0.5 * thickness * scale!r} (thickness={thickness!r}, "
            f"scale={scale!r})"
        )
    v = t_shape_vertices(scale)
    if dim == 2:
        return Polygon.sample(v, spacing)
    return Prism.sample(v, 0.5 * thickness * scale, spacing)
