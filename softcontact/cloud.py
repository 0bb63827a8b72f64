"""Oriented point clouds: the geometry every softcontact body is made of.

A :class:`PointCloud` in dimension ``D`` (2 or 3) is ``N`` samples: points ``p_i``, outward
unit normals ``n_i`` and positive weights ``a_i`` (METHOD.md section 1).  Each pair
``(p_i, n_i)`` is a local tangent half-space; the weights are the surface area (3D) or curve
length (2D) each sample stands for, so ``cloud.area`` is the surface area or perimeter of the
shape.  Samples live in the body frame, whose origin is the body's centre of mass.

Clouds are immutable: the arrays are private float64 C-contiguous copies marked read-only,
and attributes cannot be assigned after construction.

The constructors place samples well for the soft signed distance:

* every face is sampled, each sample carrying its own face's outward normal;
* corners and sharp edges are sampled once from *each* adjacent face (a box corner appears
  three times, once per face, each copy with that face's normal), so sharp features stay
  sharp at small temperature;
* the spacing between neighbouring samples of a face is at most the user's ``spacing``;
* the weights come from the construction (trapezoid rule on edges and faces, exact zone areas
  on surfaces of revolution, lattice areas on triangles) and sum to the true perimeter or
  surface area: exactly (to rounding) for polygons, boxes, meshes, disks, spheres and
  capsules.

Each constructor also records the exact solid it sampled (box, disk, sphere, capsule,
polygon, prism, mesh; a half-space is unbounded), which moves with
:meth:`PointCloud.transformed` and survives pickling; :meth:`PointCloud.mass_properties`
integrates over it in closed form.
"""

from __future__ import annotations

import math
import types
from typing import NamedTuple

import numpy as np

from ._validate import as_float_array, as_int, as_positive_float, shape_str

__all__ = ["MassProperties", "PointCloud"]

#: Largest number of samples a constructor may create; a smaller ``spacing`` is an error.
MAX_SAMPLES = 5_000_000

_UNIT_TOL = 1e-9  # allowed | |n| - 1 | for normals and quaternions
_ZERO_NORM = 1e-12  # a normal shorter than this cannot be normalized
_CLOSURE_TOL = 1e-2  # largest |sum a_i n_i| / sum a_i of samples that "look closed"


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


# --------------------------------------------------------------------------------------------
# the class
# --------------------------------------------------------------------------------------------


class PointCloud:
    """An immutable oriented point cloud in 2D or 3D.

    Parameters
    ----------
    points : (N, D) array_like of float
        Sample positions in the body frame; ``D`` is 2 or 3 and ``N >= 1``.
    normals : (N, D) array_like of float
        Outward unit normals, one per sample.  Each must have unit length within 1e-9
        unless ``normalize`` is true.
    weights : (N,) array_like of float, optional
        Positive finite weight of each sample: the surface area (3D) or curve length (2D) it
        represents.  Default: all ones.
    normalize : bool, default False
        Divide each normal by its length instead of requiring unit normals.

    Raises
    ------
    TypeError
        If an argument is not an array of real numbers (e.g. complex or object dtype), or
        ``normalize`` is not a bool.
    ValueError
        If ``points`` is not ``(N, 2)`` or ``(N, 3)`` with ``N >= 1``; ``normals`` or
        ``weights`` do not match it; any value is NaN or infinite; a normal is not unit
        length (and ``normalize`` is false) or is shorter than 1e-12; or a weight is not > 0.

    Notes
    -----
    The inputs are copied: changing the caller's arrays afterwards does not change the
    cloud, and the cloud's arrays are read-only.  Derived data (for example a packed buffer
    for the compiled kernels) may be memoised in the private ``_cache`` dict.

    Examples
    --------
    >>> cloud = PointCloud.box([0.05, 0.02], spacing=0.01)
    >>> cloud.dim, len(cloud), round(cloud.area, 12)
    (2, 32, 0.28)
    """

    __slots__ = ("_points", "_normals", "_weights", "_kind", "_geometry", "_cache")

    # declarations only (no values, so no class attributes clash with the slots); the
    # slots are filled in _init through object.__setattr__
    _points: np.ndarray
    _normals: np.ndarray
    _weights: np.ndarray
    _kind: str | None
    _geometry: _Geometry | None
    _cache: dict

    def __init__(self, points, normals, weights=None, *, normalize=False):
        self._init(points, normals, weights, normalize, None, None)

    # -- construction helpers ----------------------------------------------------------------

    def _init(self, points, normals, weights, normalize, kind, geometry):
        if not isinstance(normalize, (bool, np.bool_)):
            raise TypeError(f"normalize must be a bool, got {type(normalize).__name__}")
        p = as_float_array(points, "points")
        if p.ndim != 2 or p.shape[1] not in (2, 3):
            raise ValueError(f"points must have shape (N, 2) or (N, 3), got {shape_str(p.shape)}")
        n_samples, dim = p.shape
        if n_samples < 1:
            raise ValueError(
                f"points must hold at least one sample (shape (N, {dim}) with N >= 1), "
                f"got {shape_str(p.shape)}"
            )
        _check_finite(p, "points")

        nrm = as_float_array(normals, "normals")
        if nrm.shape != p.shape:
            raise ValueError(
                f"normals must have shape {shape_str(p.shape)} to match points, "
                f"got {shape_str(nrm.shape)}"
            )
        _check_finite(nrm, "normals")
        length = np.hypot.reduce(nrm, axis=1)  # no overflow for huge components
        short = np.flatnonzero(length < _ZERO_NORM)
        if short.size:
            i = int(short[0])
            raise ValueError(
                f"normals must be nonzero vectors (length >= {_ZERO_NORM:g}), "
                f"got length {length[i]:.3g} in row {i}"
            )
        if normalize:
            nrm = nrm / length[:, None]
        else:
            bad = np.flatnonzero(np.abs(length - 1.0) > _UNIT_TOL)
            if bad.size:
                i = int(bad[0])
                raise ValueError(
                    f"normals must have unit length (within {_UNIT_TOL:g}; pass "
                    f"normalize=True to normalize them), got length {float(length[i])!r} in row {i}"
                )

        if weights is None:
            w = np.ones(n_samples)
        else:
            w = as_float_array(weights, "weights")
            if w.shape != (n_samples,):
                raise ValueError(
                    f"weights must have shape ({n_samples},) to match points, "
                    f"got {shape_str(w.shape)}"
                )
            _check_finite(w, "weights")
            bad = np.flatnonzero(w <= 0)
            if bad.size:
                i = int(bad[0])
                raise ValueError(f"weights must be > 0, got {float(w[i])!r} at index {i}")

        set_ = object.__setattr__
        set_(self, "_points", _frozen(p))
        set_(self, "_normals", _frozen(nrm))
        set_(self, "_weights", _frozen(w))
        set_(self, "_kind", kind)
        set_(self, "_geometry", geometry)
        set_(self, "_cache", {})

    @classmethod
    def _make(cls, points, normals, weights, kind, geometry=None):
        """Build a cloud through the full validation and record how it was made.

        ``geometry`` is the exact solid the samples were taken from (a :class:`_Geometry`),
        or None when there is none; :meth:`mass_properties` integrates over it.
        """
        self = cls.__new__(cls)
        self._init(points, normals, weights, False, kind, geometry)
        return self

    # -- immutability and pickling -----------------------------------------------------------

    def __setattr__(self, name, value):
        raise AttributeError(f"PointCloud is immutable: cannot set attribute {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"PointCloud is immutable: cannot delete attribute {name!r}")

    def __getstate__(self):
        # _cache holds derived data only; it is rebuilt on demand after unpickling
        return {
            "points": np.array(self._points),
            "normals": np.array(self._normals),
            "weights": np.array(self._weights),
            "kind": self._kind,
            "geometry": None if self._geometry is None else self._geometry.to_state(),
        }

    def __setstate__(self, state):
        geo = state.get("geometry")  # absent in pickles from before mass properties
        self._init(
            state["points"],
            state["normals"],
            state["weights"],
            False,
            state["kind"],
            None if geo is None else _Geometry.from_state(geo),
        )

    # -- read-only properties ------------------------------------------------------------------

    @property
    def points(self) -> np.ndarray:
        """(N, D) ndarray of float64, read-only: sample positions in the body frame."""
        return self._points

    @property
    def normals(self) -> np.ndarray:
        """(N, D) ndarray of float64, read-only: outward unit normals."""
        return self._normals

    @property
    def weights(self) -> np.ndarray:
        """(N,) ndarray of float64, read-only: positive weight (area or length) per sample."""
        return self._weights

    @property
    def dim(self) -> int:
        """Spatial dimension D, 2 or 3."""
        return int(self._points.shape[1])

    @property
    def kind(self) -> str | None:
        """Name of the constructor that built the cloud (``"box"``, ``"mesh"`` ...) or None."""
        return self._kind

    @property
    def area(self) -> float:
        """Sum of the weights.

        For constructor-built clouds this is the surface area (3D) or the perimeter length
        (2D) of the shape.  For a cloud built from raw arrays with default weights it is the
        number of samples.
        """
        return float(np.sum(self._weights))

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)``, two (D,) arrays: the axis-aligned bounding box of the samples."""
        return self._points.min(axis=0), self._points.max(axis=0)

    @property
    def size(self) -> float:
        """Diagonal length of the bounding box: the object size L (0 for a single sample)."""
        lo, hi = self.bounds
        return float(np.linalg.norm(hi - lo))

    def __len__(self) -> int:
        return int(self._points.shape[0])

    def __repr__(self) -> str:
        lo, hi = self.bounds

        def fmt(v):
            return "[" + ", ".join(f"{x:.4g}" for x in v) + "]"

        kind = f"kind={self._kind!r}, " if self._kind is not None else ""
        return (
            f"PointCloud({kind}dim={self.dim}, n={len(self)}, "
            f"bounds=[{fmt(lo)}, {fmt(hi)}], area={self.area:.4g})"
        )

    # -- rigid motion --------------------------------------------------------------------------

    def transformed(self, pose) -> PointCloud:
        """Return the cloud moved by a rigid transform.

        Parameters
        ----------
        pose : (3,) or (7,) array_like of float
            2D cloud: ``(x, y, theta)``.  3D cloud: ``(px, py, pz, qw, qx, qy, qz)``, a
            position and a unit quaternion, scalar first (the MuJoCo convention).

        Returns
        -------
        PointCloud
            Points ``p' = R p + t``, normals ``n' = R n``, weights unchanged.  The recorded
            source geometry (if any) moves with the samples, so :meth:`mass_properties` of
            the result has centre of mass ``R c + t`` and inertia ``R I R^T``.

        Raises
        ------
        TypeError
            If ``pose`` is not an array of real numbers.
        ValueError
            If ``pose`` has the wrong shape for the cloud's dimension, is not finite, or (3D)
            its quaternion does not have unit norm within 1e-9.

        Notes
        -----
        The quaternion is checked against 1e-9 and then divided by its norm, so that the
        rotation matrix is orthonormal to rounding and the normals stay unit length.
        """
        q = as_float_array(pose, "pose")
        dim = self.dim
        want = 3 if dim == 2 else 7
        if q.shape != (want,):
            raise ValueError(
                f"pose must have shape ({want},) for a {dim}D cloud, got {shape_str(q.shape)}"
            )
        _check_finite(q, "pose")
        if dim == 2:
            c, s = math.cos(q[2]), math.sin(q[2])
            rot = np.array([[c, -s], [s, c]])
            t = q[:2]
        else:
            norm = float(np.linalg.norm(q[3:]))
            if abs(norm - 1.0) > _UNIT_TOL:
                raise ValueError(
                    f"pose must hold a unit quaternion in pose[3:7] (norm 1 within "
                    f"{_UNIT_TOL:g}), got norm {norm!r}"
                )
            rot = _quat_to_matrix(q[3:] / norm)
            t = q[:3]
        geometry = None if self._geometry is None else self._geometry.moved(rot, t)
        return type(self)._make(
            self._points @ rot.T + t, self._normals @ rot.T, self._weights, self._kind, geometry
        )

    # -- mass properties -----------------------------------------------------------------------

    def mass_properties(self, density=1.0) -> MassProperties:
        """Mass, centre of mass and inertia of the solid the cloud bounds, at uniform density.

        Parameters
        ----------
        density : float, default 1.0
            Mass per unit area (kg/m^2) in 2D, per unit volume (kg/m^3) in 3D; finite and
            > 0.

        Returns
        -------
        MassProperties
            ``(mass, com, inertia)``: mass in kg; ``com``, a (D,) array, in the cloud's
            frame; ``inertia`` about the centre of mass, a float (polar moment) in 2D, a
            (3, 3) symmetric positive-definite array in the cloud's frame axes in 3D.

        Raises
        ------
        TypeError
            If ``density`` is not a real number.
        ValueError
            If ``density`` is not finite and > 0; if the cloud is a half-space (unbounded);
            or if the cloud has no recorded geometry and its samples do not look like a
            closed surface.

        Notes
        -----
        Clouds made by the constructors record the exact solid they sample, and its
        moments are computed in closed form (exact to rounding, independent of
        ``spacing``): analytic formulas for :meth:`box`, :meth:`disk`, :meth:`sphere` and
        :meth:`capsule` (cylinder or rectangle plus two hemispheres or half-disks, shifted
        by the parallel-axis theorem); polygon area moments for :meth:`polygon` and the 2D
        :meth:`t_shape`; the prism over the polygon for the 3D :meth:`t_shape`; signed
        tetrahedra against a reference point for :meth:`from_mesh`.  The geometry moves
        with :meth:`transformed` (``com -> R com + t``, ``I -> R I R^T``).

        A cloud built directly from arrays (``PointCloud(points, normals, weights)``, or a
        transform of one) has no recorded geometry.  Its moments are then *approximated*
        by the divergence theorem applied to the samples as a surface quadrature
        (``V = (1/D) sum a_i n_i.p_i``, first moments ``sum a_i (n_i.p_i) p_i / (D+1)``,
        second moments ``sum a_i (n_i.p_i) p_i p_i^T / (D+2)``), whose error is that of
        the quadrature: O(spacing^2) for trapezoid-rule samples such as the constructors
        make (for a box's samples, volume and centre of mass are exact and the inertia
        has an O(spacing^2) error).  The fallback is used only when the samples look like a
        closed surface bounding a solid: ``|sum a_i n_i| <= 0.01 sum a_i``, a positive
        volume, a positive-definite second moment and a centre of mass inside the
        samples' bounding box; otherwise mass and inertia must be given explicitly.

        Examples
        --------
        >>> mp = PointCloud.disk(0.1, spacing=0.01).mass_properties(density=10.0)
        >>> round(mp.mass, 6), round(mp.inertia, 9), mp.com.tolist()
        (0.314159, 0.001570796, [0.0, 0.0])
        """
        rho = as_positive_float(density, "density")
        if self._geometry is not None:
            volume, com, inertia = self._geometry.unit_mass_properties()
        else:
            volume, com, inertia = _sample_mass_properties(
                self._points, self._normals, self._weights
            )
        if self.dim == 2:
            return MassProperties(rho * volume, com, rho * float(inertia))
        return MassProperties(rho * volume, com, rho * inertia)

    # -- drawing -------------------------------------------------------------------------------

    def plot(self, ax=None, normals=True, scale=None, **kwargs):
        """Draw the samples and their normals with matplotlib.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; a 3D cloud needs a 3D axes (``projection="3d"``).  Default: a new
            figure and axes.
        normals : bool, default True
            Draw each normal as an arrow from its sample.
        scale : float, optional
            Arrow length.  Default: a tenth of :attr:`size` (1 for a single sample).
        **kwargs
            Passed to ``ax.scatter`` for the samples.

        Returns
        -------
        matplotlib Axes
            The axes drawn on (equal aspect).

        Raises
        ------
        ImportError
            If matplotlib is not installed.
        TypeError
            If ``normals`` is not a bool or ``scale`` is not a real number.
        ValueError
            If ``scale`` is not finite and > 0, or a 3D cloud is given a 2D axes.
        """
        if not isinstance(normals, (bool, np.bool_)):
            raise TypeError(f"normals must be a bool, got {type(normals).__name__}")
        if scale is None:
            size = self.size
            scale = 0.1 * size if size > 0 else 1.0
        else:
            scale = as_positive_float(scale, "scale")
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:
            raise ImportError(
                "PointCloud.plot needs matplotlib, which is not installed: pip install matplotlib"
            ) from exc

        p, n = self._points, self._normals * scale
        style = {"s": 6, **kwargs}
        if self.dim == 2:
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

    # -- constructors --------------------------------------------------------------------------

    @classmethod
    def box(cls, half_extents, spacing) -> PointCloud:
        """Axis-aligned rectangle (2D) or box (3D) centred at the origin.

        Parameters
        ----------
        half_extents : (2,) or (3,) array_like of float
            Half side lengths, each finite and > 0; the length sets the dimension.
        spacing : float
            Largest distance between neighbouring samples of a face, > 0.

        Returns
        -------
        PointCloud
            2D: each edge sampled uniformly with ``ceil(length / spacing)`` segments,
            endpoints included (so each corner appears once per adjacent edge, with that
            edge's normal), trapezoid weights; the weights sum to the perimeter.
            3D: each face a regular grid including its boundary, ``ceil(edge / spacing)``
            cells per side, trapezoid-rule area weights (interior sample one cell, face edge
            half a cell, face corner a quarter); the weights sum to the surface area.

        Raises
        ------
        TypeError
            If an argument has the wrong type.
        ValueError
            If ``half_extents`` does not have shape (2,) or (3,) or has an entry that is not
            finite and > 0, or ``spacing`` is not finite and > 0 or would give more than
            5,000,000 samples.
        """
        he = as_float_array(half_extents, "half_extents")
        if he.shape not in ((2,), (3,)):
            raise ValueError(
                f"half_extents must have shape (2,) or (3,), got {shape_str(he.shape)}"
            )
        if not (np.all(np.isfinite(he)) and np.all(he > 0)):
            raise ValueError(f"half_extents must be finite and > 0, got {he.tolist()}")
        spacing = _as_spacing(spacing)
        if he.shape == (2,):
            a, b = he
            verts = np.array([[-a, -b], [a, -b], [a, b], [-a, b]])
            p, n, w = _sample_closed_polygon(verts, spacing)
            return cls._make(p, n, w, "box", _Geometry("box", 2, half_extents=he))

        segs = [_n_segments(2.0 * h, spacing) for h in he]
        total = 2 * sum((segs[u] + 1) * (segs[v] + 1) for u, v in ((1, 2), (0, 2), (0, 1)))
        _check_count(total, spacing)
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
        return cls._make(
            np.concatenate(pts),
            np.concatenate(nrms),
            np.concatenate(wts),
            "box",
            _Geometry("box", 3, half_extents=he),
        )

    @classmethod
    def disk(cls, radius, spacing) -> PointCloud:
        """Circle of the given radius centred at the origin (2D).

        Parameters
        ----------
        radius : float
            Finite and > 0.
        spacing : float
            Largest distance between neighbouring samples, > 0.

        Returns
        -------
        PointCloud
            ``K = max(8, ceil(2 pi radius / spacing))`` equally spaced samples with radial
            normals and weights ``2 pi radius / K`` (summing to the circumference).

        Raises
        ------
        TypeError
            If an argument is not a real number.
        ValueError
            If an argument is not finite and > 0, or ``spacing`` would give more than
            5,000,000 samples.
        """
        r = as_positive_float(radius, "radius")
        spacing = _as_spacing(spacing)
        k = max(8, _n_segments(2.0 * math.pi * r, spacing))
        _check_count(k, spacing)
        ang = 2.0 * math.pi * np.arange(k) / k
        nrm = np.column_stack([np.cos(ang), np.sin(ang)])
        geometry = _Geometry("disk", 2, radius=r)
        return cls._make(r * nrm, nrm, np.full(k, 2.0 * math.pi * r / k), "disk", geometry)

    @classmethod
    def sphere(cls, radius, spacing) -> PointCloud:
        """Sphere of the given radius centred at the origin (3D), Fibonacci sampling.

        Parameters
        ----------
        radius : float
            Finite and > 0.
        spacing : float
            Target distance between neighbouring samples, > 0.

        Returns
        -------
        PointCloud
            ``K = max(12, ceil(4 pi radius^2 / spacing^2))`` samples of the Fibonacci
            lattice (``z_k = 1 - (2k + 1) / K``, longitude advancing by the golden angle),
            radial normals, equal weights ``4 pi radius^2 / K``.

        Raises
        ------
        TypeError
            If an argument is not a real number.
        ValueError
            If an argument is not finite and > 0, or ``spacing`` would give more than
            5,000,000 samples.

        Notes
        -----
        Each sample of this lattice has a neighbour closer than ``sqrt(4 pi r^2 / K)``
        (checked numerically up to K = 40000: the worst ratio is 0.998), hence closer than
        ``spacing``.
        """
        r = as_positive_float(radius, "radius")
        spacing = _as_spacing(spacing)
        q = r / spacing
        ratio = 4.0 * math.pi * q * q  # inf rather than OverflowError for absurd spacing
        if not math.isfinite(ratio) or ratio > MAX_SAMPLES:
            _too_many(ratio, spacing)
        k = max(12, math.ceil(ratio))
        i = np.arange(k)
        z = 1.0 - (2.0 * i + 1.0) / k
        rho = np.sqrt((1.0 - z) * (1.0 + z))
        lon = i * (math.pi * (3.0 - math.sqrt(5.0)))
        nrm = np.column_stack([rho * np.cos(lon), rho * np.sin(lon), z])
        nrm /= np.linalg.norm(nrm, axis=1)[:, None]
        geometry = _Geometry("sphere", 3, radius=r)
        return cls._make(r * nrm, nrm, np.full(k, 4.0 * math.pi * r * r / k), "sphere", geometry)

    @classmethod
    def capsule(cls, radius, half_length, spacing, dim=3) -> PointCloud:
        """Capsule: 2D stadium or 3D cylinder with hemispherical caps, centred at the origin.

        Parameters
        ----------
        radius : float
            Finite and > 0.
        half_length : float
            Half length of the straight part, finite and >= 0 (0 gives a disk or sphere).
        spacing : float
            Largest distance between neighbouring samples, > 0.
        dim : {2, 3}, default 3
            2: straight edges along x from ``-half_length`` to ``half_length`` at
            ``y = +-radius`` and semicircular caps centred at ``(+-half_length, 0)``.
            3: cylinder of the given radius along z from ``-half_length`` to
            ``half_length`` plus hemispherical caps centred at ``(0, 0, +-half_length)``.

        Returns
        -------
        PointCloud
            2D: straight edges with ``ceil(2 half_length / spacing)`` segments and each
            semicircle with ``max(4, ceil(pi radius / spacing))`` arcs; every sample's weight
            is half the length of its two neighbouring segments, so the weights sum to the
            perimeter ``4 half_length + 2 pi radius``.
            3D: rings of samples along z on the cylinder and latitude rings on the caps
            (``max(2, ceil(pi radius / (2 spacing)))`` bands per cap, one sample at each
            pole); a ring of radius rho carries ``max(3, ceil(2 pi rho / spacing),
            ceil(8 rho / radius))`` samples.  Each ring's weight is the exact area of the band
            between the midpoints to its neighbouring rings, shared equally by its samples,
            so the weights sum to ``4 pi radius half_length + 4 pi radius^2``.
            The junctions between straight and round parts are sampled once.

        Raises
        ------
        TypeError
            If an argument has the wrong type.
        ValueError
            If ``radius`` or ``spacing`` is not finite and > 0, ``half_length`` is not
            finite and >= 0, ``dim`` is not 2 or 3, or ``spacing`` would give more than
            5,000,000 samples.
        """
        r = as_positive_float(radius, "radius")
        h = as_positive_float(half_length, "half_length", allow_zero=True)
        spacing = _as_spacing(spacing)
        dim = as_int(dim, "dim", 2, 3)
        geometry = _Geometry("capsule", dim, radius=r, half_length=h)
        if dim == 2:
            return cls._make(*_stadium(r, h, spacing), "capsule", geometry)
        return cls._make(*_capsule3(r, h, spacing), "capsule", geometry)

    @classmethod
    def polygon(cls, vertices, spacing) -> PointCloud:
        """Boundary of a simple polygon (2D), convex or not, either orientation.

        Parameters
        ----------
        vertices : (K, 2) array_like of float
            The ``K >= 3`` corners in order, clockwise or counter-clockwise, without
            repeating the first one at the end.
        spacing : float
            Largest distance between neighbouring samples of an edge, > 0.

        Returns
        -------
        PointCloud
            Each edge sampled uniformly with ``ceil(length / spacing)`` segments, both
            endpoints included, with that edge's outward normal and trapezoid weights.  So
            every vertex appears once per adjacent edge, each copy with its edge's normal,
            and the weights sum to the perimeter.  The orientation is detected from the
            signed area: clockwise input gives the same cloud as counter-clockwise input.

        Raises
        ------
        TypeError
            If an argument has the wrong type.
        ValueError
            If ``vertices`` is not (K, 2) with K >= 3, not finite, has a zero-length edge
            (repeated consecutive vertex), zero area, or intersecting edges (not simple); or
            if ``spacing`` is not finite and > 0 or would give more than 5,000,000 samples.
        """
        v = as_float_array(vertices, "vertices")
        if v.ndim != 2 or v.shape[1] != 2 or v.shape[0] < 3:
            raise ValueError(
                f"vertices must have shape (K, 2) with K >= 3, got {shape_str(v.shape)}"
            )
        _check_finite(v, "vertices")
        spacing = _as_spacing(spacing)
        v = _simple_polygon_ccw(v)
        geometry = _Geometry("polygon", 2, vertices=v)
        return cls._make(*_sample_closed_polygon(v, spacing), "polygon", geometry)

    @staticmethod
    def t_shape_vertices(scale=1e-3) -> np.ndarray:
        """Corners of the planar-pushing T, centred on its area centroid.

        The T is a 120 x 30 bar over a 30 x 90 stem, in units of ``scale`` metres.  Before
        centring the bar spans x in [-60, 60], y in [0, 30] and the stem x in [-15, 15],
        y in [-90, 0]; the polygon is then shifted so that the centroid of the region (its
        centre of mass at uniform density) is the origin.

        Parameters
        ----------
        scale : float, default 1e-3
            Metres per unit (default: 1 mm, so the bar is 0.12 x 0.03 m).

        Returns
        -------
        (8, 2) ndarray of float
            The corners, counter-clockwise, starting at the stem's bottom-left corner.

        Raises
        ------
        TypeError
            If ``scale`` is not a real number.
        ValueError
            If ``scale`` is not finite and > 0.
        """
        scale = as_positive_float(scale, "scale")
        v = np.array(
            [[-15, -90], [15, -90], [15, 0], [60, 0], [60, 30], [-60, 30], [-60, 0], [-15, 0]],
            dtype=float,
        )
        return (v - _polygon_centroid(v)) * scale

    @classmethod
    def t_shape(cls, scale=1e-3, spacing=None, dim=2, thickness=30.0) -> PointCloud:
        """The T of the planar pushing benchmark, with the body origin at its centroid.

        Parameters
        ----------
        scale : float, default 1e-3
            Metres per unit; the T is a 120 x 30 bar over a 30 x 90 stem (see
            :meth:`t_shape_vertices`).
        spacing : float, optional
            Largest distance between neighbouring samples of a face, in metres.  Default:
            5 units, ``5 * scale``.
        dim : {2, 3}, default 2
            2: the outline, as :meth:`polygon`.  3: the closed prism extruded from
            ``z = -thickness / 2`` to ``+thickness / 2`` (units), triangulated (caps by ear
            clipping) and sampled by :meth:`from_mesh`.
        thickness : float, default 30.0
            Height of the 3D prism in units (ignored in 2D).

        Returns
        -------
        PointCloud
            Perimeter (2D) 480 units or surface area (3D) ``2 * 6300 + 480 * thickness``
            square units, times ``scale`` (squared).

        Raises
        ------
        TypeError
            If an argument has the wrong type.
        ValueError
            If ``scale``, ``spacing`` or ``thickness`` is not finite and > 0, ``dim`` is not
            2 or 3, or ``spacing`` would give more than 5,000,000 samples.
        """
        scale = as_positive_float(scale, "scale")
        spacing = 5.0 * scale if spacing is None else _as_spacing(spacing)
        dim = as_int(dim, "dim", 2, 3)
        thickness = as_positive_float(thickness, "thickness")
        v = PointCloud.t_shape_vertices(scale)
        if dim == 2:
            cloud = cls.polygon(v, spacing)  # records the polygon
        else:
            half_height = 0.5 * thickness * scale
            cloud = cls.from_mesh(*_extrude(v, half_height), spacing)
            # the exact prism rather than its triangulation (same solid, closed-form moments)
            geometry = _Geometry("prism", 3, vertices=v, half_height=half_height)
            object.__setattr__(cloud, "_geometry", geometry)
        object.__setattr__(cloud, "_kind", "t_shape")
        return cloud

    @classmethod
    def from_mesh(cls, vertices, faces, spacing) -> PointCloud:
        """Sample the surface of a closed, consistently oriented triangle mesh (3D).

        Parameters
        ----------
        vertices : (V, 3) array_like of float
            Vertex positions, finite.
        faces : (F, 3) array_like of int
            Vertex indices of each triangle, in ``0 .. V-1``, no index repeated within a
            face.  Every undirected edge must belong to exactly two faces, which traverse it
            in opposite directions (closed, consistently oriented 2-manifold).
        spacing : float
            Largest distance between neighbouring samples of a triangle, > 0.

        Returns
        -------
        PointCloud
            Each triangle ``(a, b, c)`` of nonzero area is sampled on the barycentric lattice
            ``(1 - i/k - j/k) a + (i/k) b + (j/k) c``, ``i + j <= k``, with
            ``k = ceil(longest edge / spacing)`` (its corners and edges included), every
            lattice point carrying the face's normal.  Each of the ``k^2`` sub-triangles
            gives a third of its area to each of its corners, so a triangle's weights sum to
            its area and the cloud's weights to the surface area.  Samples of different
            faces with the same point and the same normal (to 1e-12 relative to the mesh
            size) are merged by adding their weights, which happens along edges between
            coplanar faces; at a sharp edge or corner one copy per adjacent face normal is
            kept.

        Raises
        ------
        TypeError
            If ``vertices`` is not real or ``faces`` is not an integer array.
        ValueError
            If the shapes are wrong, ``vertices`` is not finite, an index is out of range or
            repeated within a face, the mesh is not closed, not a 2-manifold, not
            consistently oriented, or encloses no volume; or if ``spacing`` is not finite and
            > 0 or would give more than 5,000,000 samples.

        Notes
        -----
        A consistently oriented mesh with negative signed volume (normals pointing inward)
        is flipped, so normals always point out of the enclosed volume.  The sign is that
        of the whole mesh: a mesh with several components is flipped as a whole (this keeps
        hollow shells, whose inner component faces the cavity, intact).  Zero-area faces
        give no samples but count for the closedness check (a face counts as zero-area when
        its area is at most 1e-14 L^2, L the diagonal of the mesh's bounding box).  Lattice
        points on a shared edge are computed from the edge's endpoints in a fixed order, so
        adjacent coplanar faces with the same ``k`` produce bitwise identical points there.
        """
        verts = as_float_array(vertices, "vertices")
        if verts.ndim != 2 or verts.shape[1] != 3 or verts.shape[0] < 1:
            raise ValueError(
                f"vertices must have shape (V, 3) with V >= 1, got {shape_str(verts.shape)}"
            )
        _check_finite(verts, "vertices")
        f = _as_faces(faces, len(verts))
        spacing = _as_spacing(spacing)
        _check_closed_oriented(f)

        used = verts[np.unique(f)]
        centre = 0.5 * (used.min(axis=0) + used.max(axis=0))
        size = float(np.linalg.norm(used.max(axis=0) - used.min(axis=0)))
        a, b, c = (verts[f[:, k]] - centre for k in range(3))
        volume = float(np.sum(np.einsum("ij,ij->i", a, np.cross(b, c)))) / 6.0
        if abs(volume) <= 1e-12 * size**3:
            raise ValueError(f"faces: mesh encloses no volume (signed volume {volume!r})")
        if volume < 0:
            f = f[:, [0, 2, 1]]
        p, n, w = _sample_mesh(verts, f, spacing, size)
        return cls._make(p, n, w, "mesh", _Geometry("mesh", 3, vertices=verts, faces=f))

    @classmethod
    def halfspace(cls, point, normal) -> PointCloud:
        """A single sample: the exact half-space ``{x : normal . (x - point) <= 0}``.

        Parameters
        ----------
        point : (D,) array_like of float
            A point on the boundary plane (line in 2D); D is 2 or 3.
        normal : (D,) array_like of float
            Outward normal (pointing out of the solid side); it is normalized.

        Returns
        -------
        PointCloud
            One sample with weight 1 (a floor or a wall).

        Raises
        ------
        TypeError
            If an argument is not an array of real numbers.
        ValueError
            If ``point`` is not (2,) or (3,), ``normal`` does not match it, a value is not
            finite, or ``normal`` is zero.
        """
        p = as_float_array(point, "point")
        if p.shape not in ((2,), (3,)):
            raise ValueError(f"point must have shape (2,) or (3,), got {shape_str(p.shape)}")
        n = as_float_array(normal, "normal")
        if n.shape != p.shape:
            raise ValueError(
                f"normal must have shape {shape_str(p.shape)} to match point, "
                f"got {shape_str(n.shape)}"
            )
        _check_finite(p, "point")
        _check_finite(n, "normal")
        length = float(np.linalg.norm(n))
        if length < _ZERO_NORM:
            raise ValueError(f"normal must be a nonzero vector, got {n.tolist()}")
        geometry = _Geometry("halfspace", p.size)
        return cls._make(p[None, :], (n / length)[None, :], None, "halfspace", geometry)


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only float64 C-contiguous copy, returned as a view of a read-only owner.

    Handing out a view means ``arr.flags.writeable = True`` fails for users of the cloud.
    """
    owner = np.array(a, dtype=np.float64, order="C", copy=True)
    owner.flags.writeable = False
    return owner.view()


def _check_finite(a: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        if a.ndim == 1:
            loc = f" at index {where[0]}"
        elif a.ndim == 2:
            loc = f" in row {where[0]}"
        else:
            loc = ""
        raise ValueError(f"{name} must be finite, got {float(a[where])!r}{loc}")


def _as_spacing(spacing) -> float:
    return as_positive_float(spacing, "spacing")


def _too_many(count, spacing):
    raise ValueError(
        f"spacing={spacing!r} is too small: it would give about {count:.3g} samples "
        f"(at most {MAX_SAMPLES} allowed)"
    )


def _check_count(count: float, spacing: float) -> None:
    if count > MAX_SAMPLES:
        _too_many(count, spacing)


def _n_segments(length: float, spacing: float) -> int:
    """``max(1, ceil(length / spacing))``, refusing counts beyond MAX_SAMPLES."""
    ratio = length / spacing
    if not math.isfinite(ratio) or ratio > MAX_SAMPLES:
        _too_many(ratio, spacing)
    return max(1, math.ceil(ratio))


def _as_faces(faces, n_vertices: int) -> np.ndarray:
    if isinstance(faces, np.ndarray):
        f = faces
    else:
        try:
            f = np.asarray(faces)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"faces must be an array of integers: {exc}") from None
    if f.size and f.dtype.kind not in "iu":
        raise TypeError(f"faces must be an array of integers, got dtype {f.dtype}")
    if f.ndim != 2 or f.shape[1] != 3 or f.shape[0] < 1:
        raise ValueError(f"faces must have shape (F, 3) with F >= 1, got {shape_str(f.shape)}")
    bad = np.flatnonzero(((f < 0) | (f >= n_vertices)).any(axis=1))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"faces must index vertices 0..{n_vertices - 1}, got face {i} = {f[i].tolist()}"
        )
    f = f.astype(np.int64)
    rep = np.flatnonzero((f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 2] == f[:, 0]))
    if rep.size:
        i = int(rep[0])
        raise ValueError(
            f"faces must not repeat a vertex within a face, got face {i} = {f[i].tolist()}"
        )
    return f


def _check_closed_oriented(f: np.ndarray) -> None:
    """Every undirected edge in exactly two faces, traversed once in each direction."""
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    undirected = np.sort(directed, axis=1)
    edges, counts = np.unique(undirected, axis=0, return_counts=True)
    for test, what in (
        (counts == 1, "is not closed: {n} edges belong to a single face"),
        (counts > 2, "is not a 2-manifold: {n} edges belong to more than two faces"),
    ):
        if test.any():
            e = edges[np.argmax(test)]
            raise ValueError(f"faces: mesh {what.format(n=int(test.sum()))}, e.g. ({e[0]}, {e[1]})")
    d_edges, d_counts = np.unique(directed, axis=0, return_counts=True)
    twice = d_counts > 1
    if twice.any():
        e = d_edges[np.argmax(twice)]
        raise ValueError(
            f"faces: mesh is not consistently oriented: {int(twice.sum())} edges are "
            f"traversed twice in the same direction, e.g. ({e[0]}, {e[1]}); "
            "flip the faces that disagree with their neighbours"
        )


# --------------------------------------------------------------------------------------------
# geometry helpers
# --------------------------------------------------------------------------------------------


def _quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion ``(w, x, y, z)``."""
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _cross2(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]


def _signed_area(v: np.ndarray) -> float:
    """Shoelace area, > 0 for counter-clockwise vertices."""
    return 0.5 * float(np.sum(_cross2(v, np.roll(v, -1, axis=0))))


def _polygon_centroid(v: np.ndarray) -> np.ndarray:
    """Centroid of the region bounded by a simple polygon."""
    w = np.roll(v, -1, axis=0)
    cr = _cross2(v, w)
    return np.sum((v + w) * cr[:, None], axis=0) / (3.0 * np.sum(cr))


def _simple_polygon_ccw(v: np.ndarray) -> np.ndarray:
    """Check that ``v`` is a simple polygon; return its vertices counter-clockwise."""
    k = len(v)
    size = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))
    e = np.roll(v, -1, axis=0) - v
    length = np.linalg.norm(e, axis=1)
    short = np.flatnonzero(length <= 1e-12 * size)
    if short.size:
        i = int(short[0])
        raise ValueError(
            f"vertices must not repeat consecutively (zero-length edge {i} -> {(i + 1) % k}); "
            "do not repeat the first vertex at the end"
        )
    area = _signed_area(v)
    if abs(area) <= 1e-12 * size * size:
        raise ValueError(f"vertices must enclose a nonzero area, got signed area {area!r}")

    tol = 1e-12 * size * size  # cross products have units of length^2
    # adjacent edges fold back onto each other if collinear and opposite
    nxt = np.roll(e, -1, axis=0)
    fold = np.flatnonzero((np.abs(_cross2(e, nxt)) <= tol) & (np.einsum("ij,ij->i", e, nxt) < 0))
    if fold.size:
        i = int(fold[0])
        raise ValueError(
            f"vertices must form a simple polygon, but edges {i} and {(i + 1) % k} "
            "fold back onto each other"
        )
    # every pair of non-adjacent edges must be disjoint (O(K^2) time, O(K) memory)
    a_all, b_all = v, v + e
    for i in range(k - 2):
        j = np.arange(i + 2, k if i > 0 else k - 1)  # edge k-1 is adjacent to edge 0
        if j.size == 0:
            continue
        hit = _segments_intersect(a_all[i], b_all[i], a_all[j], b_all[j], tol, 1e-12 * size)
        if hit.any():
            jj = int(j[np.argmax(hit)])
            raise ValueError(
                f"vertices must form a simple polygon, but edge {i} ({i} -> {i + 1}) "
                f"intersects edge {jj} ({jj} -> {(jj + 1) % k})"
            )
    return v if area > 0 else v[::-1].copy()


def _segments_intersect(a, b, c, d, tol, slack):
    """Whether segment ``ab`` meets each segment ``c[m] d[m]`` (touching counts).

    ``tol`` (length^2) decides when an orientation is zero, ``slack`` (length) pads the
    bounding-box test of touching points.
    """

    def on_segment(p, q, r):  # r within the bounding box of pq (collinearity checked apart)
        lo, hi = np.minimum(p, q), np.maximum(p, q)
        return np.all((r >= lo - slack) & (r <= hi + slack), axis=-1)

    d1 = _cross2(b - a, c - a)
    d2 = _cross2(b - a, d - a)
    d3 = _cross2(d - c, a - c)
    d4 = _cross2(d - c, b - c)
    proper = (((d1 > tol) & (d2 < -tol)) | ((d1 < -tol) & (d2 > tol))) & (
        ((d3 > tol) & (d4 < -tol)) | ((d3 < -tol) & (d4 > tol))
    )
    touch = (
        ((np.abs(d1) <= tol) & on_segment(a, b, c))
        | ((np.abs(d2) <= tol) & on_segment(a, b, d))
        | ((np.abs(d3) <= tol) & on_segment(c, d, a))
        | ((np.abs(d4) <= tol) & on_segment(c, d, b))
    )
    return proper | touch


def _sample_closed_polygon(
    v: np.ndarray, spacing: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample each edge of a counter-clockwise polygon, endpoints included, trapezoid weights."""
    k = len(v)
    segs = []
    for i in range(k):
        segs.append(_n_segments(float(np.linalg.norm(v[(i + 1) % k] - v[i])), spacing))
    _check_count(sum(segs) + k, spacing)
    pts, nrms, wts = [], [], []
    for i, m in enumerate(segs):
        a, b = v[i], v[(i + 1) % k]
        e = b - a
        length = math.hypot(e[0], e[1])
        t = np.arange(m + 1) / m
        pts.append((1.0 - t)[:, None] * a + t[:, None] * b)
        nrms.append(np.tile([e[1] / length, -e[0] / length], (m + 1, 1)))
        w = np.full(m + 1, length / m)
        w[[0, -1]] *= 0.5
        wts.append(w)
    return np.concatenate(pts), np.concatenate(nrms), np.concatenate(wts)


def _stadium(r: float, h: float, spacing: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """2D capsule as one closed curve; each sample weighs half its two adjacent segments."""
    m = _n_segments(2.0 * h, spacing) if h > 0 else 0
    ka = max(4, _n_segments(math.pi * r, spacing))
    _check_count(2 * m + 2 * ka, spacing)
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
    m = _n_segments(2.0 * h, spacing) if h > 0 else 0
    ka = max(2, _n_segments(0.5 * math.pi * r, spacing))
    _check_count(m + 2 * ka + 1, spacing)  # rings (each has at least one sample)
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
    _check_count(float(count.sum()), spacing)
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


def _ear_clip(v: np.ndarray) -> np.ndarray:
    """Triangulate a simple counter-clockwise polygon; (K-2, 3) counter-clockwise triangles."""
    idx = list(range(len(v)))
    tris: list[tuple[int, ...]] = []
    while len(idx) > 3:
        for pos in range(len(idx)):
            i0, i1, i2 = idx[pos - 1], idx[pos], idx[(pos + 1) % len(idx)]
            a, b, c = v[i0], v[i1], v[i2]
            if _cross2(b - a, c - a) <= 0:  # reflex or flat corner: not an ear
                continue
            others = [j for j in idx if j not in (i0, i1, i2)]
            q = v[others]
            inside = (
                (_cross2(b - a, q - a) >= 0)
                & (_cross2(c - b, q - b) >= 0)
                & (_cross2(a - c, q - c) >= 0)
            )
            if not inside.any():
                tris.append((i0, i1, i2))
                del idx[pos]
                break
        else:  # cannot happen for a simple polygon without flat corners (two-ears theorem)
            raise RuntimeError("ear clipping found no ear; the polygon is not simple")
    tris.append(tuple(idx))
    return np.array(tris, dtype=np.int64)


def _extrude(v: np.ndarray, half_height: float) -> tuple[np.ndarray, np.ndarray]:
    """Closed triangle mesh of the prism over a counter-clockwise polygon, outward faces."""
    k = len(v)
    verts = np.concatenate(
        [
            np.column_stack([v, np.full(k, -half_height)]),
            np.column_stack([v, np.full(k, half_height)]),
        ]
    )
    cap = _ear_clip(v)
    faces = [cap[:, ::-1], cap + k]  # bottom faces down, top faces up
    i = np.arange(k)
    j = (i + 1) % k
    faces.append(np.column_stack([i, j, j + k]))
    faces.append(np.column_stack([i, j + k, i + k]))
    return verts, np.concatenate(faces)


# --------------------------------------------------------------------------------------------
# mesh sampling
# --------------------------------------------------------------------------------------------


def _lattice(k: int):
    """Barycentric lattice of a triangle subdivided k times.

    Returns the indices ``i, j`` (``i + j <= k``) of the lattice points, the number of the
    ``k^2`` sub-triangles touching each (1 at corners, 3 on edges, 6 inside), and for each
    triangle edge (ab, bc, ca) the positions of its ``k - 1`` inner points, ordered from the
    edge's first vertex.
    """
    i = np.repeat(np.arange(k + 1), k + 1 - np.arange(k + 1))
    start = np.concatenate([[0], np.cumsum(k + 1 - np.arange(k))])
    j = np.arange(i.size) - start[i]
    on_edge = (i == 0) | (j == 0) | (i + j == k)
    corner = ((i == 0) & (j == 0)) | (i == k) | (j == k)
    touching = np.where(corner, 1, np.where(on_edge, 3, 6))
    m = np.arange(1, k)

    def pos(ii, jj):
        return start[ii] + jj

    edges = (pos(m, 0 * m), pos(k - m, m), pos(0 * m, k - m))
    return i, j, touching, edges


def _sample_mesh(verts: np.ndarray, f: np.ndarray, spacing: float, size: float):
    """Lattice samples of every nonzero-area face, duplicates merged."""
    a, b, c = verts[f[:, 0]], verts[f[:, 1]], verts[f[:, 2]]
    cr = np.cross(b - a, c - a)
    dbl_area = np.linalg.norm(cr, axis=1)
    keep = dbl_area > 2e-14 * size * size  # area > 1e-14 L^2
    f, a, b, c, cr, dbl_area = f[keep], a[keep], b[keep], c[keep], cr[keep], dbl_area[keep]
    normal = cr / dbl_area[:, None]
    longest = np.sqrt(
        np.max([np.sum((b - a) ** 2, 1), np.sum((c - b) ** 2, 1), np.sum((a - c) ** 2, 1)], axis=0)
    )
    ratio = longest / spacing
    if not np.all(np.isfinite(ratio)) or ratio.max() > MAX_SAMPLES:
        _too_many(float(ratio.max()), spacing)
    ks = np.maximum(1, np.ceil(ratio)).astype(np.int64)
    _check_count(int(np.sum((ks + 1) * (ks + 2) // 2)), spacing)

    pts, nrms, wts = [], [], []
    corners = (a, b, c)
    for k in np.unique(ks):
        k = int(k)
        sel = np.flatnonzero(ks == k)
        i, j, touching, edge_pos = _lattice(k)
        l0, l1, l2 = (k - i - j) / k, i / k, j / k
        ca, cb, cc = (x[sel] for x in corners)
        p = l0[None, :, None] * ca[:, None] + l1[None, :, None] * cb[:, None]
        p += l2[None, :, None] * cc[:, None]
        # inner points of each edge, computed from the lower-index endpoint so that the two
        # faces sharing the edge give bitwise identical points
        steps_fwd = np.arange(1, k)[None, :]
        for e, (s, t) in enumerate(((0, 1), (1, 2), (2, 0)) if k > 1 else ()):
            fwd = (f[sel, s] < f[sel, t])[:, None]
            lo = np.where(fwd, corners[s][sel], corners[t][sel])[:, None, :]
            hi = np.where(fwd, corners[t][sel], corners[s][sel])[:, None, :]
            steps = np.where(fwd, steps_fwd, k - steps_fwd)[..., None]
            p[:, edge_pos[e]] = ((k - steps) / k) * lo + (steps / k) * hi
        pts.append(p.reshape(-1, 3))
        nrms.append(np.repeat(normal[sel], i.size, axis=0))
        wts.append((0.5 * dbl_area[sel] / (3 * k * k))[:, None] * touching[None, :])
    all_pts = np.concatenate(pts)
    all_nrms = np.concatenate(nrms)
    all_wts = np.concatenate([w.ravel() for w in wts])
    return _merge_duplicates(all_pts, all_nrms, all_wts, 1e-12 * size, 1e-12)


def _merge_duplicates(p: np.ndarray, n: np.ndarray, w: np.ndarray, tol_p: float, tol_n: float):
    """Merge samples with the same point (within tol_p) and normal (within tol_n).

    Points are grouped by rounding to a grid of step ``tol_p``; within a group, each sample
    joins the first earlier sample whose normal agrees within ``tol_n`` in every component.
    The merged sample keeps the first one's point and normal and the sum of the weights.
    """
    centre = 0.5 * (p.min(axis=0) + p.max(axis=0))
    keys = np.rint((p - centre) / tol_p).astype(np.int64)
    _, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.ravel()
    order = np.argsort(group, kind="stable")
    gs = group[order]
    first = np.arange(p.shape[0])  # in sorted positions: the earliest equal sample
    shift = 1
    active = np.flatnonzero(gs[1:] == gs[:-1])  # positions whose successor is in the group
    while active.size:
        later = active + shift
        same = np.all(np.abs(n[order[active]] - n[order[later]]) <= tol_n, axis=1)
        np.minimum.at(first, later[same], active[same])
        shift += 1
        active = active[active + shift < p.shape[0]]
        active = active[gs[active + shift] == gs[active]]
    while True:  # follow chains to the earliest representative
        nxt = first[first]
        if np.array_equal(nxt, first):
            break
        first = nxt
    rep = np.empty_like(order)
    rep[order] = order[first]
    reps, inverse = np.unique(rep, return_inverse=True)
    return p[reps], n[reps], np.bincount(inverse.ravel(), weights=w, minlength=reps.size)


# --------------------------------------------------------------------------------------------
# mass properties
# --------------------------------------------------------------------------------------------

_GEOMETRY_PARAMS: dict[str, tuple[tuple[int, ...], dict[str, tuple]]] = {
    # shape: (dimensions it exists in, {parameter: array shape, () for a float})
    "box": ((2, 3), {"half_extents": ("D",)}),
    "disk": ((2,), {"radius": ()}),
    "sphere": ((3,), {"radius": ()}),
    "capsule": ((2, 3), {"radius": (), "half_length": ()}),
    "polygon": ((2,), {"vertices": ("K", 2)}),
    "prism": ((3,), {"vertices": ("K", 2), "half_height": ()}),
    "mesh": ((3,), {"vertices": ("V", 3), "faces": ("F", 3)}),
    "halfspace": ((2, 3), {}),
}


class _Geometry:
    """The exact solid a constructor sampled, placed in the cloud's frame.

    ``shape`` names the solid in its canonical frame (the frame its constructor used):

    * ``box``: ``half_extents`` (D,), centred, axis-aligned (rectangle in 2D);
    * ``disk`` (2D) / ``sphere`` (3D): ``radius``, centred;
    * ``capsule``: ``radius``, ``half_length``; 2D stadium along x, 3D capsule along z;
    * ``polygon`` (2D): ``vertices`` (K, 2), counter-clockwise simple polygon;
    * ``prism`` (3D): the polygon ``vertices`` (K, 2) extruded over
      ``|z| <= half_height`` (metres);
    * ``mesh`` (3D): closed triangle mesh ``vertices`` (V, 3), ``faces`` (F, 3) oriented
      outwards;
    * ``halfspace``: unbounded, no mass.

    ``rot`` (D, D) and ``trans`` (D,) map the canonical frame to the cloud's frame
    (``x_cloud = rot x + trans``).  Instances are immutable: the parameters are read-only
    arrays or floats in a read-only mapping.
    """

    __slots__ = ("shape", "dim", "params", "rot", "trans")

    shape: str
    dim: int
    params: types.MappingProxyType
    rot: np.ndarray
    trans: np.ndarray

    def __init__(self, shape: str, dim: int, rot=None, trans=None, **params):
        dims, spec = _GEOMETRY_PARAMS[shape]
        if dim not in dims or set(params) != set(spec):
            raise ValueError(f"bad geometry {shape!r} in {dim}D with parameters {sorted(params)}")
        frozen: dict = {}
        for name, want in spec.items():
            value = params[name]
            if want == ():
                frozen[name] = float(value)
                continue
            is_int = name == "faces"
            a = np.array(value, dtype=np.int64 if is_int else np.float64, order="C", copy=True)
            if a.ndim != len(want) or any(
                isinstance(w, int) and s != w for s, w in zip(a.shape, want, strict=True)
            ):
                raise ValueError(f"bad geometry parameter {name} of shape {a.shape}")
            if want == ("D",) and a.shape != (dim,):
                raise ValueError(f"bad geometry parameter {name} of shape {a.shape}")
            a.flags.writeable = False
            frozen[name] = a
        rot = np.eye(dim) if rot is None else np.array(rot, dtype=np.float64, copy=True)
        trans = np.zeros(dim) if trans is None else np.array(trans, dtype=np.float64, copy=True)
        if rot.shape != (dim, dim) or trans.shape != (dim,):
            raise ValueError("bad geometry pose")
        rot.flags.writeable = False
        trans.flags.writeable = False
        set_ = object.__setattr__
        set_(self, "shape", shape)
        set_(self, "dim", dim)
        set_(self, "params", types.MappingProxyType(frozen))
        set_(self, "rot", rot)
        set_(self, "trans", trans)

    def __setattr__(self, name, value):
        raise AttributeError(f"_Geometry is immutable: cannot set attribute {name!r}")

    def __repr__(self) -> str:
        return f"_Geometry({self.shape!r}, dim={self.dim})"

    # -- moving and pickling -------------------------------------------------------------------

    def moved(self, rot: np.ndarray, t: np.ndarray) -> _Geometry:
        """The same solid after ``x -> rot x + t``."""
        return _Geometry(
            self.shape, self.dim, rot @ self.rot, rot @ self.trans + t, **dict(self.params)
        )

    def to_state(self) -> dict:
        """Plain picklable data: shape, dim, parameters (floats and arrays), rot, trans."""
        return {
            "shape": self.shape,
            "dim": self.dim,
            "params": {
                k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in self.params.items()
            },
            "rot": np.array(self.rot),
            "trans": np.array(self.trans),
        }

    @classmethod
    def from_state(cls, state: dict) -> _Geometry:
        return cls(state["shape"], state["dim"], state["rot"], state["trans"], **state["params"])

    # -- integrals -------------------------------------------------------------------------------

    def unit_mass_properties(self) -> tuple[float, np.ndarray, float | np.ndarray]:
        """Volume (area in 2D), centroid and inertia at unit density, in the cloud's frame."""
        volume, com, inertia = self._canonical()
        com = self.rot @ com + self.trans
        if self.dim == 3:
            inertia = self.rot @ inertia @ self.rot.T
            inertia = 0.5 * (inertia + inertia.T)
        return volume, com, inertia

    def _canonical(self) -> tuple[float, np.ndarray, float | np.ndarray]:
        """Volume, centroid and inertia at unit density in the canonical frame."""
        p = self.params
        shape, dim = self.shape, self.dim
        zero = np.zeros(dim)
        if shape == "halfspace":
            raise ValueError(
                "a halfspace cloud is unbounded: give mass and inertia, or make it static"
            )
        if shape == "box":
            he = p["half_extents"]
            if dim == 2:
                a, b = float(he[0]), float(he[1])
                area = 4.0 * a * b
                return area, zero, area * (a * a + b * b) / 3.0
            sq = he * he
            volume = 8.0 * float(np.prod(he))
            return volume, zero, np.diag(volume / 3.0 * (sq.sum() - sq))
        if shape == "disk":
            r = p["radius"]
            area = math.pi * r * r
            return area, zero, 0.5 * area * r * r
        if shape == "sphere":
            r = p["radius"]
            volume = 4.0 / 3.0 * math.pi * r**3
            return volume, zero, np.eye(3) * (0.4 * volume * r * r)
        if shape == "capsule":
            return _capsule_mass_properties(p["radius"], p["half_length"], dim)
        if shape == "polygon":
            area, c, sxx, syy, _ = _polygon_area_moments(p["vertices"])
            return area, c, sxx + syy
        if shape == "prism":
            return _prism_mass_properties(p["vertices"], p["half_height"])
        if shape == "mesh":
            return _mesh_mass_properties(p["vertices"], p["faces"])
        raise AssertionError(shape)  # pragma: no cover


def _capsule_mass_properties(r: float, h: float, dim: int):
    """Stadium (2D, along x) or capsule (3D, along z) at unit density, about its centre.

    2D: rectangle ``2h x 2r`` plus two half-disks whose centroids lie ``4r / (3 pi)``
    beyond the rectangle's ends.  3D: cylinder of length ``2h`` plus two hemispheres whose
    centroids lie ``3r / 8`` beyond the cylinder's ends; each hemisphere's moment about a
    diameter of its flat face is ``2/5 m r^2``, shifted to its centroid and then to the
    origin (parallel-axis theorem).
    """
    if dim == 2:
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


def _polygon_area_moments(v: np.ndarray):
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


def _prism_mass_properties(v: np.ndarray, half_height: float):
    """Right prism over the polygon ``v`` for ``|z| <= half_height``, unit density.

    With thickness ``T = 2 half_height`` and the polygon's area moments,
    ``V = A T``, ``int x^2 dV = T Sxx``, ``int z^2 dV = A T^3 / 12``, ``int xy dV = T Sxy``
    (``int xz = int yz = 0`` by symmetry in z).
    """
    area, c, sxx, syy, sxy = _polygon_area_moments(v)
    t = 2.0 * half_height
    zz = area * t**3 / 12.0
    inertia = np.array(
        [
            [t * syy + zz, -t * sxy, 0.0],
            [-t * sxy, t * sxx + zz, 0.0],
            [0.0, 0.0, t * (sxx + syy)],
        ]
    )
    return area * t, np.array([c[0], c[1], 0.0]), inertia


def _mesh_mass_properties(verts: np.ndarray, faces: np.ndarray):
    """Closed, outward-oriented triangle mesh at unit density.

    Each face ``(a, b, c)`` spans a tetrahedron with the reference point ``o`` (the centre
    of the bounding box, for accuracy; any point gives the same exact result) of signed
    volume ``V_t = a.(b x c) / 6`` (vertices relative to ``o``), first moment
    ``V_t (a + b + c) / 4`` and second moment ``V_t / 20 (a a^T + b b^T + c c^T + s s^T)``,
    ``s = a + b + c``.  Summed, these are the exact integrals over the enclosed solid.
    """
    used = verts[np.unique(faces)]
    ref = 0.5 * (used.min(axis=0) + used.max(axis=0))
    a, b, c = (verts[faces[:, k]] - ref for k in range(3))
    six_v = np.einsum("ij,ij->i", a, np.cross(b, c))  # 6 V_t
    s = a + b + c
    volume = float(np.sum(six_v)) / 6.0
    first = (six_v @ s) / 24.0
    second = (
        np.einsum("t,ti,tj->ij", six_v, a, a)
        + np.einsum("t,ti,tj->ij", six_v, b, b)
        + np.einsum("t,ti,tj->ij", six_v, c, c)
        + np.einsum("t,ti,tj->ij", six_v, s, s)
    ) / 120.0
    com = first / volume
    central = second - volume * np.outer(com, com)
    inertia = np.trace(central) * np.eye(3) - central
    inertia = 0.5 * (inertia + inertia.T)
    if volume <= 0 or np.linalg.eigvalsh(central).min() <= 0:
        raise ValueError(
            "the mesh does not bound a solid with positive mass (are some components "
            "oriented inward?): give mass and inertia"
        )
    return volume, ref + com, inertia


def _sample_mass_properties(p: np.ndarray, n: np.ndarray, a: np.ndarray):
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
    if not closure <= _CLOSURE_TOL:
        raise ValueError(
            need.format(why=f"|sum a_i n_i| / sum a_i = {closure:.3g} > {_CLOSURE_TOL:g}")
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
