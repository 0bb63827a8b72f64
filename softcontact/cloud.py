"""Oriented point clouds: the geometry every softcontact body is made of.

A :class:`PointCloud` in dimension ``D`` (2 or 3) is ``N`` samples: points ``p_i``, outward
unit normals ``n_i`` and positive weights ``a_i`` (docs/method.md section 1).  Each pair
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

Lengths given to the constructors (radii, half extents, coordinates of vertices, the size
of a polygon or mesh) must lie in 1e-60..1e60 m (:data:`~softcontact.sampling.LENGTH_RANGE`):
within it nothing computed while sampling, nor the mass properties at unit density,
overflows or underflows.

Each constructor also records the exact solid it sampled (box, disk, sphere, capsule,
polygon, prism, mesh; a half-space is unbounded), which moves with
:meth:`PointCloud.transformed` and survives pickling; :meth:`PointCloud.mass_properties`
integrates over it in closed form.  The samplers and the solids live in
:mod:`softcontact.shapes`, one registered class per kind of solid; this module holds the
container.
"""

from __future__ import annotations

import math

import numpy as np

from ._mesh_file import read_mesh
from ._validate import UNIT_TOL, as_float_array, as_positive_float, first_non_unit, shape_str
from .mass import MassProperties, sample_mass_properties
from .plotting import plot_cloud
from .sampling import MAX_SAMPLES as MAX_SAMPLES  # the sample budget, part of this API
from .sampling import ZERO_NORM, check_finite
from .shapes import (
    Box,
    Capsule,
    Disk,
    HalfSpace,
    Mesh,
    Polygon,
    Sample,
    Shape,
    Sphere,
    sample_t_shape,
    t_shape_vertices,
)
from .spatial import quat_to_matrix

__all__ = ["MassProperties", "PointCloud"]


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
    _geometry: Shape | None
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
        check_finite(p, "points")

        nrm = as_float_array(normals, "normals")
        if nrm.shape != p.shape:
            raise ValueError(
                f"normals must have shape {shape_str(p.shape)} to match points, "
                f"got {shape_str(nrm.shape)}"
            )
        check_finite(nrm, "normals")
        length = np.hypot.reduce(nrm, axis=1)  # no overflow for huge components
        short = np.flatnonzero(length < ZERO_NORM)
        if short.size:
            i = int(short[0])
            raise ValueError(
                f"normals must be nonzero vectors (length >= {ZERO_NORM:g}), "
                f"got length {length[i]:.3g} in row {i}"
            )
        if normalize:
            nrm = nrm / length[:, None]
        else:
            bad = np.flatnonzero(np.abs(length - 1.0) > UNIT_TOL)
            if bad.size:
                i = int(bad[0])
                raise ValueError(
                    f"normals must have unit length (within {UNIT_TOL:g}; pass "
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
            check_finite(w, "weights")
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

        ``geometry`` is the exact solid the samples were taken from (a
        :class:`~softcontact.shapes.Shape`), or None when there is none;
        :meth:`mass_properties` integrates over it.
        """
        self = cls.__new__(cls)
        self._init(points, normals, weights, False, kind, geometry)
        return self

    @classmethod
    def _sampled(cls, sample: Sample, kind: str) -> PointCloud:
        """The cloud of a shape sampler's output, made by the constructor ``kind``."""
        return cls._make(sample.points, sample.normals, sample.weights, kind, sample.solid)

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

    def __reduce__(self):
        # unpickled (and copied) through _restore, which checks the state as the
        # constructors check their arguments: a tampered pickle is refused, not trusted
        return (_restore, (self.__getstate__(),))

    def __setstate__(self, state):
        """Fill a bare instance from :meth:`__getstate__`'s dict (pickles made before
        :meth:`__reduce__` existed unpickle through it), with every check of the
        constructors: the arrays as :class:`PointCloud` checks them, the recorded solid as
        its sampler checks its arguments, and the two consistent."""
        if not isinstance(state, dict) or not {"points", "normals", "weights", "kind"} <= set(
            state
        ):
            raise ValueError(
                "state must be a dict with the entries points, normals, weights and kind "
                "(and geometry), as PointCloud.__getstate__ returns"
            )
        kind = state["kind"]
        if kind is not None and (not isinstance(kind, str) or kind not in _KIND_SHAPES):
            raise ValueError(f"kind must be None or one of {sorted(_KIND_SHAPES)}, got {kind!r}")
        geo = state.get("geometry")  # a state without the entry records no solid
        solid = None if geo is None else Shape.from_state(geo)
        self._init(state["points"], state["normals"], state["weights"], False, kind, solid)
        if solid is not None:
            if kind is None or solid.shape not in _KIND_SHAPES[kind]:
                raise ValueError(f"geometry: a {kind!r} cloud cannot record a {solid.shape!r}")
            if solid.dim != self.dim:
                raise ValueError(
                    f"geometry: a {self.dim}D cloud cannot record a {solid.dim}D {solid.shape!r}"
                )
            if solid.shape == "halfspace" and len(self) != 1:
                raise ValueError(f"geometry: a half-space has one sample, not {len(self)}")

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
            its quaternion does not have unit norm within 1e-9; or if the moved points
            overflow (a translation near the largest float).

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
        check_finite(q, "pose")
        if dim == 2:
            c, s = math.cos(q[2]), math.sin(q[2])
            rot = np.array([[c, -s], [s, c]])
            t = q[:2]
        else:
            bad = first_non_unit(q[3:])
            if bad is not None:
                raise ValueError(
                    f"pose must hold a unit quaternion in pose[3:7] (norm 1 within "
                    f"{UNIT_TOL:g}), got norm {bad[1]!r}"
                )
            norm = float(np.linalg.norm(q[3:]))
            rot = quat_to_matrix(q[3:] / norm)
            t = q[:3]
        with np.errstate(over="ignore", invalid="ignore"):
            points = self._points @ rot.T + t
        if not np.all(np.isfinite(points)):  # a translation near the largest float
            raise ValueError("pose moves the cloud's points beyond the range of a float")
        geometry = None if self._geometry is None else self._geometry.moved(rot, t)
        return type(self)._make(points, self._normals @ rot.T, self._weights, self._kind, geometry)

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
            if the cloud has no recorded geometry and its samples do not look like a
            closed surface; or if the mass or the inertia is beyond the range of a float
            (overflows, or underflows to 0: inertia scales as ``density L^5`` with the size
            L, so a body of unit density must have L within about 1e-60..1e60 m).

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
        # clouds of extreme size (volume ~ L^3, inertia ~ L^5) overflow or underflow:
        # computed quietly, then refused below
        with np.errstate(all="ignore"):
            if self._geometry is not None:
                volume, com, inertia = self._geometry.unit_mass_properties()
            else:
                volume, com, inertia = sample_mass_properties(
                    self._points, self._normals, self._weights
                )
            mass = rho * volume
            inertia = rho * float(inertia) if self.dim == 2 else rho * inertia
            smallest = inertia if self.dim == 2 else float(np.min(np.diag(inertia)))
        if not (
            math.isfinite(mass)
            and mass > 0
            and np.all(np.isfinite(com))
            and np.all(np.isfinite(inertia))
            and smallest > 0
        ):
            raise ValueError(
                f"density: the mass properties of this cloud at density={rho:g} are beyond "
                f"the range of a float (mass {mass:.3g}, inertia down to {smallest:.3g}): "
                "scale the cloud or the density (or give mass and inertia)"
            )
        return MassProperties(mass, com, inertia)

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
        return plot_cloud(self, ax, normals, scale, **kwargs)

    # -- constructors --------------------------------------------------------------------------

    @classmethod
    def box(cls, half_extents, spacing) -> PointCloud:
        """Axis-aligned rectangle (2D) or box (3D) centred at the origin.

        Parameters
        ----------
        half_extents : (2,) or (3,) array_like of float
            Half side lengths, each in [1e-60, 1e60] (metres); the length sets the
            dimension.
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
            in [1e-60, 1e60], or ``spacing`` is not finite and > 0 or would give more than
            5,000,000 samples.
        """
        return cls._sampled(Box.sample(half_extents, spacing), "box")

    @classmethod
    def disk(cls, radius, spacing) -> PointCloud:
        """Circle of the given radius centred at the origin (2D).

        Parameters
        ----------
        radius : float
            In [1e-60, 1e60] (metres).
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
            If ``radius`` is not in [1e-60, 1e60], ``spacing`` is not finite and > 0, or
            ``spacing`` would give more than 5,000,000 samples.
        """
        return cls._sampled(Disk.sample(radius, spacing), "disk")

    @classmethod
    def sphere(cls, radius, spacing) -> PointCloud:
        """Sphere of the given radius centred at the origin (3D), Fibonacci sampling.

        Parameters
        ----------
        radius : float
            In [1e-60, 1e60] (metres).
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
            If ``radius`` is not in [1e-60, 1e60], ``spacing`` is not finite and > 0, or
            ``spacing`` would give more than 5,000,000 samples.

        Notes
        -----
        Each sample of this lattice has a neighbour closer than ``sqrt(4 pi r^2 / K)``
        (checked numerically up to K = 40000: the worst ratio is 0.998), hence closer than
        ``spacing``.
        """
        return cls._sampled(Sphere.sample(radius, spacing), "sphere")

    @classmethod
    def capsule(cls, radius, half_length, spacing, dim=3) -> PointCloud:
        """Capsule: 2D stadium or 3D cylinder with hemispherical caps, centred at the origin.

        Parameters
        ----------
        radius : float
            In [1e-60, 1e60] (metres).
        half_length : float
            Half length of the straight part: 0 (a disk or sphere) or in [1e-60, 1e60].
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
            If ``radius`` is not in [1e-60, 1e60], ``half_length`` is neither 0 nor in
            that range, ``spacing`` is not finite and > 0, ``dim`` is not 2 or 3, or
            ``spacing`` would give more than 5,000,000 samples.
        """
        sample = Capsule.sample(radius, half_length, spacing, dim)
        return cls._sampled(sample, "capsule")

    @classmethod
    def polygon(cls, vertices, spacing) -> PointCloud:
        """Boundary of a simple polygon (2D), convex or not, either orientation.

        Parameters
        ----------
        vertices : (K, 2) array_like of float
            The ``K >= 3`` corners in order, clockwise or counter-clockwise, without
            repeating the first one at the end; coordinates within +-1e60, and a bounding
            box with a diagonal of at least 1e-60 (metres).
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
            If ``vertices`` is not (K, 2) with K >= 3, not finite or outside the range of
            lengths, has a zero-length edge (repeated consecutive vertex), zero area, or
            intersecting edges (not simple); or if ``spacing`` is not finite and > 0 or
            would give more than 5,000,000 samples.

        Notes
        -----
        That no two edges meet is checked by a sweep line over the vertices (Shamos and
        Hoey), in O(K log K) time.  Edges count as meeting when they touch within 1e-12 of
        the polygon's size.
        """
        return cls._sampled(Polygon.sample(vertices, spacing), "polygon")

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
            Metres per unit, in [1e-60, 1e58] (default: 1 mm, so the bar is 0.12 x 0.03 m).

        Returns
        -------
        (8, 2) ndarray of float
            The corners, counter-clockwise, starting at the stem's bottom-left corner.

        Raises
        ------
        TypeError
            If ``scale`` is not a real number.
        ValueError
            If ``scale`` is not in [1e-60, 1e58]: the T, about 170 units across, then has
            lengths in the constructors' range, 1e-60..1e60 m.
        """
        return t_shape_vertices(scale)

    @classmethod
    def t_shape(cls, scale=1e-3, spacing=None, dim=2, thickness=30.0) -> PointCloud:
        """The T of the planar pushing benchmark, with the body origin at its centroid.

        Parameters
        ----------
        scale : float, default 1e-3
            Metres per unit, in [1e-60, 1e58]; the T is a 120 x 30 bar over a 30 x 90 stem
            (see :meth:`t_shape_vertices`).
        spacing : float, optional
            Largest distance between neighbouring samples of a face, in metres.  Default:
            5 units, ``5 * scale``.
        dim : {2, 3}, default 2
            2: the outline, as :meth:`polygon`.  3: the closed prism extruded from
            ``z = -thickness / 2`` to ``+thickness / 2`` (units), triangulated (caps by ear
            clipping) and sampled by :meth:`from_mesh`.
        thickness : float, default 30.0
            Height of the 3D prism in units, > 0, with ``thickness * scale / 2`` (the half
            height in metres) in [1e-60, 1e60] (ignored in 2D).

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
            If ``scale``, ``spacing`` or ``thickness`` is not finite and > 0 or (``scale``,
            ``thickness``) not in its range, ``dim`` is not 2 or 3, or ``spacing`` would
            give more than 5,000,000 samples.
        """
        return cls._sampled(sample_t_shape(scale, spacing, dim, thickness), "t_shape")

    @classmethod
    def from_mesh(cls, vertices, faces, spacing) -> PointCloud:
        """Sample the surface of a closed, consistently oriented triangle mesh (3D).

        Parameters
        ----------
        vertices : (V, 3) array_like of float
            Vertex positions: finite, within +-1e60, with a bounding box whose diagonal is
            at least 1e-60 (metres).
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
            If the shapes are wrong, ``vertices`` is not finite or outside the range of
            lengths, an index is out of range or
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
        return cls._sampled(Mesh.sample(vertices, faces, spacing), "mesh")

    @classmethod
    def from_file(cls, path, spacing, *, scale=1.0, file_type=None) -> PointCloud:
        """Sample the closed triangle mesh of an STL, OBJ or PLY file (3D).

        The file is read with trimesh (the ``mesh`` extra: ``pip install
        "softcontact[mesh]"``), repaired as described below and sampled by
        :meth:`from_mesh`.

        Parameters
        ----------
        path : str, os.PathLike or binary file object
            The file.  Its extension (``.stl``, ``.obj`` or ``.ply``, any case) gives the
            format unless ``file_type`` is given.  A file object (opened in binary mode,
            e.g. ``open(name, "rb")`` or :class:`io.BytesIO`) needs ``file_type``; it is
            read from its current position to its end and not closed.  STL may be ASCII
            or binary, PLY ASCII or binary.
        spacing : float
            Largest distance between neighbouring samples of a triangle, > 0 (metres).
        scale : float, default 1.0
            Metres per file unit, > 0: coordinates in the file are multiplied by it.  Files
            carry no reliable unit, so they are taken as metres by default; use 0.001 for a
            file in millimetres (most CAD exports and 3D-printing STLs).
        file_type : {"stl", "obj", "ply"}, optional
            The format, overriding the extension (any case, with or without a leading
            dot).  Required for a file object.

        Returns
        -------
        PointCloud
            The cloud :meth:`from_mesh` gives on the repaired vertices (times ``scale``)
            and faces: for a file that already holds a closed, outward-oriented mesh with
            no repeated vertices or faces, exactly ``from_mesh(vertices * scale, faces,
            spacing)`` of the vertices and faces stored in the file.  Its :attr:`kind` is
            ``"mesh"``.

        Raises
        ------
        ImportError
            If trimesh is not installed.
        FileNotFoundError
            If ``path`` names no existing file.
        TypeError
            If ``path`` is not a str, os.PathLike or binary file object (a text-mode file
            is refused), ``file_type`` is not a str, or ``spacing`` or ``scale`` is not a
            real number.
        ValueError
            If ``spacing`` or ``scale`` is not finite and > 0, or ``spacing`` would give
            more than 5,000,000 samples; the extension or ``file_type`` is not one of the
            three formats, or ``file_type`` is missing for a file object; the file cannot
            be parsed or holds no triangles; or, naming ``path``, the mesh cannot be
            repaired without guessing: it is open (an edge with a single face), not a
            2-manifold (an edge with more than two faces), not orientable, has a closed
            surface of zero volume or two closed surfaces that cross each other, or its
            coordinates (times ``scale``) are not finite or outside 1e-60..1e60 m.

        Notes
        -----
        The repair, all of it exact and independent of units:

        * the meshes of a file holding several (OBJ objects or groups, a scene) are placed
          by the file's transforms and concatenated into one mesh, sampled as one body;
        * vertices with equal coordinates are merged (an STL file stores each triangle's
          corners separately; the writer copies the same numbers, so they merge back into a
          shared-vertex mesh), and unused vertices are dropped; no tolerance is applied, so
          copies of a corner that were rounded differently stay apart and the mesh is
          reported open;
        * faces that repeat a vertex after merging are dropped, and of faces with the same
          three vertices only the first is kept; zero-area faces with three distinct
          vertices are kept (they close the surface and give no samples, as in
          :meth:`from_mesh`);
        * the faces of each connected closed surface are oriented consistently, then the
          surface is made to face outwards (positive signed volume), or inwards when it
          lies inside an odd number of the file's other closed surfaces: such a surface
          bounds a cavity of a hollow solid.  Nesting is tested by the winding number
          about up to 64 vertices of each surface; two surfaces are refused as crossing
          when some of those vertices lie inside the other surface and some outside.

        Open surfaces are refused because :meth:`from_mesh` samples closed surfaces only:
        an open surface bounds no solid, so its outside is ambiguous.  The vertex normals,
        colours, textures and materials a file may hold are ignored; normals come from
        the oriented faces.  Nothing given is modified (a file object's position moves to
        its end).

        Examples
        --------
        >>> import io
        >>> stl = b"solid t\\n" + b"".join(
        ...     b"facet normal 0 0 0\\nouter loop\\n"
        ...     + b"".join(b"vertex %d %d %d\\n" % tuple(v) for v in face)
        ...     + b"endloop\\nendfacet\\n"
        ...     for face in [[(0, 0, 0), (0, 1, 0), (1, 0, 0)], [(0, 0, 0), (1, 0, 0), (0, 0, 1)],
        ...                  [(0, 0, 0), (0, 0, 1), (0, 1, 0)], [(1, 0, 0), (0, 1, 0), (0, 0, 1)]]
        ... ) + b"endsolid t\\n"
        >>> tet = PointCloud.from_file(io.BytesIO(stl), 5.0, scale=0.01, file_type="stl")
        >>> tet.kind, len(tet), round(tet.area, 8)
        ('mesh', 12, 0.0002366)
        """
        vertices, faces = read_mesh(path, spacing, scale, file_type)
        return cls.from_mesh(vertices, faces, spacing)

    @classmethod
    def halfspace(cls, point, normal) -> PointCloud:
        """A single sample: the exact half-space ``{x : normal . (x - point) <= 0}``.

        Parameters
        ----------
        point : (D,) array_like of float
            A point on the boundary plane (line in 2D); D is 2 or 3.
        normal : (D,) array_like of float
            Outward normal (pointing out of the solid side), of length >= 1e-12 (any
            finite length above that, 1e300 included); it is normalized.

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
            finite, or ``normal`` is zero (shorter than 1e-12).
        """
        return cls._sampled(HalfSpace.sample(point, normal), "halfspace")

    @classmethod
    def concatenate(cls, clouds) -> PointCloud:
        """The samples of several clouds, in order, as one cloud (a body of several parts).

        Parameters
        ----------
        clouds : sequence of PointCloud
            At least one cloud, all of the same dimension, none a half-space (an unbounded
            solid cannot be a part of a body).

        Returns
        -------
        PointCloud
            Points, normals and weights of ``clouds[0]``, then ``clouds[1]`` ..., in the
            same frame.  One cloud is returned as it is; the concatenation of several
            records no solid (``kind`` None): :meth:`mass_properties` then approximates
            from the samples, which counts a region where parts overlap twice, so give
            a body of overlapping parts its mass and inertia.

        Raises
        ------
        TypeError
            If ``clouds`` is not a sequence of :class:`PointCloud`.
        ValueError
            If it is empty, mixes dimensions or holds a half-space.
        """
        if isinstance(clouds, (PointCloud, str, bytes)) or not hasattr(clouds, "__len__"):
            raise TypeError(f"clouds must be a sequence of PointCloud, got {type(clouds).__name__}")
        parts = list(clouds)
        if not parts:
            raise ValueError("clouds must hold at least one PointCloud, got none")
        for i, c in enumerate(parts):
            if not isinstance(c, PointCloud):
                raise TypeError(f"clouds[{i}] must be a PointCloud, got {type(c).__name__}")
            if c.kind == "halfspace":
                raise ValueError(f"clouds[{i}] is a half-space, which cannot be a part")
            if c.dim != parts[0].dim:
                raise ValueError(
                    f"clouds must all have the same dimension: clouds[0] is {parts[0].dim}D, "
                    f"clouds[{i}] is {c.dim}D"
                )
        if len(parts) == 1:
            return parts[0]
        return cls._make(
            np.concatenate([c.points for c in parts]),
            np.concatenate([c.normals for c in parts]),
            np.concatenate([c.weights for c in parts]),
            None,
        )


# the solids each constructor records (PointCloud.kind -> Shape.shape)
_KIND_SHAPES = {
    "box": ("box",),
    "disk": ("disk",),
    "sphere": ("sphere",),
    "capsule": ("capsule",),
    "polygon": ("polygon",),
    "t_shape": ("polygon", "prism"),
    "mesh": ("mesh",),
    "halfspace": ("halfspace",),
}


def _restore(state) -> PointCloud:
    """A cloud from :meth:`PointCloud.__getstate__`'s dict, checked (unpickling)."""
    self = PointCloud.__new__(PointCloud)
    self.__setstate__(state)
    return self


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only float64 C-contiguous copy, returned as a view of a read-only owner.

    Handing out a view means ``arr.flags.writeable = True`` fails for users of the cloud.
    """
    owner = np.array(a, dtype=np.float64, order="C", copy=True)
    owner.flags.writeable = False
    return owner.view()
