"""Mass properties of solids: the result type and the integrals several shapes share.

:class:`MassProperties` is what :meth:`PointCloud.mass_properties` returns.  The shapes
(:mod:`softcontact.shapes`) integrate their own solids in closed form; the area moments of a
polygon, which polygons and prisms share, are here, with the divergence-theorem quadrature
over oriented samples that clouds recording no solid fall back on.  Everything is at unit
density, in the frame of the given vertices or samples.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = [
    "MassProperties",
    "polygon_area_moments",
    "sample_mass_properties",
]

CLOSURE_TOL = 1e-2  # largest |sum a_i n_i| / sum a_i of samples that "look closed"


class MassProperties(NamedTuple):
    """Mass, centre of mass and inertia of a solid, from :meth:`PointCloud.mass_properties`.

    Attributes
    ----------
    mass : float
        Mass in kg.
    com : (D,) ndarray of float
        Centre of mass in the cloud's frame, metres.
    inertia : float or (3, 3) ndarray of float
        Inertia about the centre of mass.  2D: the polar moment (about the axis normal to
        the plane), kg m^2.  3D: the symmetric positive-definite inertia tensor in the
        cloud's frame axes, kg m^2.
    """

    mass: float
    com: np.ndarray
    inertia: float | np.ndarray


def polygon_area_moments(v: np.ndarray):
    """Area, centroid and central second area moments of a simple polygon.

    Returns ``(A, c, Sxx, Syy, Sxy)`` with ``Sxx = int (x - cx)^2 dA``,
    ``Syy = int (y - cy)^2 dA``, ``Sxy = int (x - cx)(y - cy) dA``.  Green's theorem over
    the edges (the shoelace family of formulas), evaluated about the vertices' mean for
    accuracy; either orientation (the signed sums are flipped to a positive area).
    """
    ref = v.mean(axis=0)
    x, y = (v - ref).T
    xn, yn = np.roll(x, -1), np.roll(y, -1)
    cr = x * yn - xn * y
    area = 0.5 * float(np.sum(cr))
    mx = float(np.sum((x + xn) * cr)) / 6.0
    my = float(np.sum((y + yn) * cr)) / 6.0
    ixx = float(np.sum((x * x + x * xn + xn * xn) * cr)) / 12.0
    iyy = float(np.sum((y * y + y * yn + yn * yn) * cr)) / 12.0
    ixy = float(np.sum((x * yn + 2.0 * x * y + 2.0 * xn * yn + xn * y) * cr)) / 24.0
    if area < 0:  # clockwise: every signed integral changes sign
        area, mx, my, ixx, iyy, ixy = -area, -mx, -my, -ixx, -iyy, -ixy
    cx, cy = mx / area, my / area
    return (
        area,
        ref + np.array([cx, cy]),
        ixx - area * cx * cx,
        iyy - area * cy * cy,
        ixy - area * cx * cy,
    )


def sample_mass_properties(p: np.ndarray, n: np.ndarray, a: np.ndarray):
    """Divergence-theorem quadrature over oriented samples (approximate; see mass_properties).

    ``int_V 1 = (1/D) oint x.n``, ``int_V x = 1/(D+1) oint x (x.n)``,
    ``int_V x x^T = 1/(D+2) oint x x^T (x.n)``, with the weights as the surface measure and
    ``x`` relative to the weighted mean of the samples (for accuracy).
    """
    dim = p.shape[1]
    total = float(np.sum(a))
    closure = float(np.linalg.norm(a @ n)) / total
    ref = (a @ p) / total
    x = p - ref
    flux = a * np.einsum("ij,ij->i", n, x)
    volume = float(np.sum(flux)) / dim
    need = (
        "the cloud has no recorded geometry (it was not made by a constructor) and its "
        "samples do not look like a closed surface bounding a solid ({why}): mass and "
        "inertia must be given"
    )
    if not closure <= CLOSURE_TOL:
        raise ValueError(
            need.format(why=f"|sum a_i n_i| / sum a_i = {closure:.3g} > {CLOSURE_TOL:g}")
        )
    if not volume > 0:
        raise ValueError(need.format(why=f"enclosed volume {volume:.3g} is not > 0"))
    com = (flux @ x) / ((dim + 1) * volume)
    second = np.einsum("i,ij,ik->jk", flux, x, x) / (dim + 2)
    central = second - volume * np.outer(com, com)
    central = 0.5 * (central + central.T)
    if np.linalg.eigvalsh(central).min() <= 0:
        raise ValueError(need.format(why="second moment not positive definite"))
    lo, hi = p.min(axis=0), p.max(axis=0)
    pad = 1e-9 * float(np.linalg.norm(hi - lo))
    com = com + ref
    if np.any(com < lo - pad) or np.any(com > hi + pad):
        raise ValueError(need.format(why="centre of mass outside the samples' bounding box"))
    if dim == 2:
        return volume, com, float(np.trace(central))
    return volume, com, np.trace(central) * np.eye(3) - central
