"""Capsules: the stadium (2D, along x) and the capsule (3D, along z), centred at the origin."""

from __future__ import annotations

import math

import numpy as np

from .._validate import as_int
from ..sampling import as_length, as_spacing, check_count, n_segments
from .base import Sample, Shape, register

__all__ = ["Capsule"]


@register
class Capsule(Shape):
    """Points within ``radius`` of the segment ``|x| <= half_length`` on the axis (x in 2D,
    z in 3D)."""

    __slots__ = ()
    shape = "capsule"
    dims = (2, 3)
    param_shapes = {"radius": (), "half_length": ()}

    @classmethod
    def sample(cls, radius, half_length, spacing, dim=3) -> Sample:
        """The samples of :meth:`PointCloud.capsule <softcontact.PointCloud.capsule>`: one
        closed curve in 2D, latitude rings in 3D."""
        r = as_length(radius, "radius")
        h = as_length(half_length, "half_length", allow_zero=True)
        spacing = as_spacing(spacing)
        dim = as_int(dim, "dim", 2, 3)
        solid = cls(dim, radius=r, half_length=h)
        if dim == 2:
            return Sample(*_stadium(r, h, spacing), solid)
        return Sample(*_capsule3(r, h, spacing), solid)

    def check_params(self) -> None:
        as_length(self.params["radius"], "radius")
        as_length(self.params["half_length"], "half_length", allow_zero=True)

    def canonical_mass_properties(self):
        """2D: rectangle ``2h x 2r`` plus two half-disks whose centroids lie ``4r / (3 pi)``
        beyond the rectangle's ends.  3D: cylinder of length ``2h`` plus two hemispheres whose
        centroids lie ``3r / 8`` beyond the cylinder's ends; each hemisphere's moment about a
        diameter of its flat face is ``2/5 m r^2``, shifted to its centroid and then to the
        origin (parallel-axis theorem).
        """
        r, h = self.params["radius"], self.params["half_length"]
        if self.dim == 2:
            a_rect = 4.0 * h * r
            a_caps = math.pi * r * r  # the two half-disks
            d = 4.0 * r / (3.0 * math.pi)
            # half-disk about its own centroid: m r^2/2 - m d^2; then shifted by h + d
            j = a_rect * (h * h + r * r) / 3.0 + a_caps * (0.5 * r * r - d * d + (h + d) ** 2)
            return a_rect + a_caps, np.zeros(2), j
        v_cyl = 2.0 * math.pi * r * r * h
        v_caps = 4.0 / 3.0 * math.pi * r**3  # the two hemispheres
        d = 3.0 * r / 8.0
        axial = 0.5 * v_cyl * r * r + 0.4 * v_caps * r * r
        transverse = v_cyl * (3.0 * r * r + 4.0 * h * h) / 12.0 + v_caps * (
            0.4 * r * r - d * d + (h + d) ** 2
        )
        return v_cyl + v_caps, np.zeros(3), np.diag([transverse, transverse, axial])


def _stadium(r: float, h: float, spacing: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """2D capsule as one closed curve; each sample weighs half its two adjacent segments."""
    m = n_segments(2.0 * h, spacing) if h > 0 else 0
    ka = max(4, n_segments(math.pi * r, spacing))
    check_count(2 * m + 2 * ka, spacing)
    arc = (np.arange(1, ka) / ka) * math.pi  # interior arc angles, measured from the start
    xs = np.linspace(-h, h, m + 1) if m else np.zeros(1)

    def straight(x, sign):  # y = sign * r, normal (0, sign)
        p = np.column_stack([x, np.full(x.size, sign * r)])
        return p, np.tile([0.0, sign], (x.size, 1))

    def cap(cx, ang):
        nrm = np.column_stack([np.cos(ang), np.sin(ang)])
        return np.array([cx, 0.0]) + r * nrm, nrm

    parts = [
        straight(xs, -1.0),  # bottom, left to right
        cap(h, arc - 0.5 * math.pi),  # right cap, bottom to top
        straight(xs[::-1], 1.0),  # top, right to left
        cap(-h, arc + 0.5 * math.pi),  # left cap, top to bottom
    ]
    seg = [2.0 * h / m if m else 0.0, math.pi * r / ka]
    # length of the segment that follows each sample along the curve
    after = np.concatenate(
        [np.full(m, seg[0]), np.full(ka, seg[1]), np.full(m, seg[0]), np.full(ka, seg[1])]
    )
    weights = 0.5 * (after + np.roll(after, 1))
    pts = np.concatenate([p for p, _ in parts])
    nrms = np.concatenate([n for _, n in parts])
    return pts, nrms, weights


def _capsule3(r: float, h: float, spacing: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """3D capsule as rings of samples; ring weights are exact band areas."""
    m = n_segments(2.0 * h, spacing) if h > 0 else 0
    ka = max(2, n_segments(0.5 * math.pi * r, spacing))
    check_count(m + 2 * ka + 1, spacing)  # rings (each has at least one sample)
    z_cyl = np.linspace(-h, h, m + 1) if m else np.zeros(1)
    alpha = 0.5 * math.pi * np.arange(ka + 1) / ka  # latitude on a cap, 0 at the junction
    mid = np.sin(0.5 * (alpha[1:] + alpha[:-1]))  # sin of the band boundaries between rings
    zone = 2.0 * math.pi * r * r  # area of a zone of the sphere = zone * (sin hi - sin lo)

    # cap rings i = 1..ka (pole last): latitude and band area between the mid-latitudes
    cap_lat = alpha[1:]
    cap_band = zone * (np.append(mid[1:], 1.0) - mid)
    # cylinder rings: band between midpoints (clipped to the cylinder), plus at the two end
    # rings the cap zone from the junction to the first mid-latitude
    dz = 2.0 * h / m if m else 0.0
    cyl_band = (
        2.0 * math.pi * r * (np.minimum(z_cyl + 0.5 * dz, h) - np.maximum(z_cyl - 0.5 * dz, -h))
    )
    cyl_band[0] += zone * mid[0]
    cyl_band[-1] += zone * mid[0]

    # every ring, from the bottom pole to the top pole
    centre_z = np.concatenate([np.full(ka, -h), z_cyl, np.full(ka, h)])
    lat = np.concatenate([-cap_lat[::-1], np.zeros(m + 1), cap_lat])
    band = np.concatenate([cap_band[::-1], cyl_band, cap_band])
    pole = np.zeros(lat.size, dtype=bool)
    pole[[0, -1]] = True
    rho = r * np.cos(lat)
    count = np.maximum.reduce(
        [
            np.full(lat.size, 3.0),
            np.ceil(2.0 * math.pi * rho / spacing),
            np.ceil(8.0 * rho / r - 1e-9),
        ]
    )
    count[pole] = 1
    check_count(float(count.sum()), spacing)
    count = count.astype(np.int64)

    ring = np.repeat(np.arange(lat.size), count)
    k = np.arange(ring.size) - np.repeat(np.cumsum(count) - count, count)
    lon = 2.0 * math.pi * (k + 0.5 * (ring % 2)) / count[ring]  # alternate rings staggered
    cl, sl = np.cos(lat[ring]), np.sin(lat[ring])
    nrm = np.column_stack([cl * np.cos(lon), cl * np.sin(lon), sl])
    nrm[[0, -1]] = [[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]]  # the poles, exactly
    p = r * nrm
    p[:, 2] += centre_z[ring]
    return p, nrm, (band / count)[ring]
