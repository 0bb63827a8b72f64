"""The half-space ``{x : normal . (x - point) <= 0}``: one sample, unbounded, no mass."""

from __future__ import annotations

import numpy as np

from .._validate import as_float_array, shape_str
from ..sampling import ZERO_NORM, check_finite
from .base import Sample, Shape, register

__all__ = ["HalfSpace"]


@register
class HalfSpace(Shape):
    """An unbounded solid (a floor or a wall); it records no parameters and has no mass."""

    __slots__ = ()
    shape = "halfspace"
    dims = (2, 3)
    param_shapes = {}

    @classmethod
    def sample(cls, point, normal) -> Sample:
        """One sample at ``point`` with the normalized ``normal`` and unit weight."""
        p = as_float_array(point, "point")
        if p.shape not in ((2,), (3,)):
            raise ValueError(f"point must have shape (2,) or (3,), got {shape_str(p.shape)}")
        n = as_float_array(normal, "normal")
        if n.shape != p.shape:
            raise ValueError(
                f"normal must have shape {shape_str(p.shape)} to match point, "
                f"got {shape_str(n.shape)}"
            )
        check_finite(p, "point")
        check_finite(n, "normal")
        with np.errstate(over="ignore"):
            length = float(np.linalg.norm(n))
        if length < ZERO_NORM:
            raise ValueError(
                f"normal must be a nonzero vector (length >= {ZERO_NORM:g}), got {n.tolist()}"
            )
        if length == np.inf:  # |n| of a huge normal (1e300) overflows: scale it first
            n = n / np.max(np.abs(n))
            length = float(np.linalg.norm(n))
        return Sample(p[None, :], (n / length)[None, :], None, cls(p.size))

    def check_params(self) -> None:
        pass  # no parameters

    def canonical_mass_properties(self):
        raise ValueError("a halfspace cloud is unbounded: give mass and inertia, or make it static")
