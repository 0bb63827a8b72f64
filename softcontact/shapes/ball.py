"""Balls centred at the origin: the disk (2D) and the sphere (3D)."""

from __future__ import annotations

import math

import numpy as np

from ..sampling import MAX_SAMPLES, as_length, as_spacing, check_count, n_segments, too_many
from .base import Sample, Shape, register

__all__ = ["Disk", "Sphere"]


@register
class Disk(Shape):
    """``|x| <= radius`` in 2D."""

    __slots__ = ()
    shape = "disk"
    dims = (2,)
    param_shapes = {"radius": ()}

    @classmethod
    def sample(cls, radius, spacing) -> Sample:
        """``K = max(8, ceil(2 pi radius / spacing))`` equally spaced samples, radial normals,
        equal weights summing to the circumference."""
        r = as_length(radius, "radius")
        spacing = as_spacing(spacing)
        k = max(8, n_segments(2.0 * math.pi * r, spacing))
        check_count(k, spacing)
        ang = 2.0 * math.pi * np.arange(k) / k
        nrm = np.column_stack([np.cos(ang), np.sin(ang)])
        return Sample(r * nrm, nrm, np.full(k, 2.0 * math.pi * r / k), cls(2, radius=r))

    def check_params(self) -> None:
        as_length(self.params["radius"], "radius")

    def canonical_mass_properties(self):
        r = self.params["radius"]
        area = math.pi * r * r
        return area, np.zeros(2), 0.5 * area * r * r


@register
class Sphere(Shape):
    """``|x| <= radius`` in 3D."""

    __slots__ = ()
    shape = "sphere"
    dims = (3,)
    param_shapes = {"radius": ()}

    @classmethod
    def sample(cls, radius, spacing) -> Sample:
        """``K = max(12, ceil(4 pi radius^2 / spacing^2))`` samples of the Fibonacci lattice
        (``z_k = 1 - (2k + 1) / K``, longitude advancing by the golden angle), radial
        normals, equal weights summing to the surface area."""
        r = as_length(radius, "radius")
        spacing = as_spacing(spacing)
        q = r / spacing
        ratio = 4.0 * math.pi * q * q  # inf rather than OverflowError for absurd spacing
        if not math.isfinite(ratio) or ratio > MAX_SAMPLES:
            too_many(ratio, spacing)
        k = max(12, math.ceil(ratio))
        i = np.arange(k)
        z = 1.0 - (2.0 * i + 1.0) / k
        rho = np.sqrt((1.0 - z) * (1.0 + z))
        lon = i * (math.pi * (3.0 - math.sqrt(5.0)))
        nrm = np.column_stack([rho * np.cos(lon), rho * np.sin(lon), z])
        nrm /= np.linalg.norm(nrm, axis=1)[:, None]
        return Sample(r * nrm, nrm, np.full(k, 4.0 * math.pi * r * r / k), cls(3, radius=r))

    def check_params(self) -> None:
        as_length(self.params["radius"], "radius")

    def canonical_mass_properties(self):
        r = self.params["radius"]
        volume = 4.0 / 3.0 * math.pi * r**3
        return volume, np.zeros(3), np.eye(3) * (0.4 * volume * r * r)
