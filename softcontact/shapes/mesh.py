"""Closed triangle meshes (3D), sampled on a barycentric lattice per face."""

from __future__ import annotations

import numpy as np

from .._validate import as_float_array, check_not_masked, shape_str
from ..sampling import as_spacing, check_extent, check_finite, sample_mesh
from .base import Sample, Shape, register

__all__ = ["Mesh"]


@register
class Mesh(Shape):
    """The solid bounded by a closed triangle mesh: ``vertices`` (V, 3), ``faces`` (F, 3)
    oriented outwards."""

    __slots__ = ()
    shape = "mesh"
    dims = (3,)
    param_shapes = {"vertices": ("V", 3), "faces": ("F", 3)}

    @classmethod
    def sample(cls, vertices, faces, spacing) -> Sample:
        """The samples of :meth:`PointCloud.from_mesh <softcontact.PointCloud.from_mesh>`.

        Checks that the mesh is closed, a 2-manifold and consistently oriented, flips it if
        its signed volume is negative, and samples every face of nonzero area
        (:func:`~softcontact.sampling.sample_mesh`).
        """
        verts = as_float_array(vertices, "vertices")
        if verts.ndim != 2 or verts.shape[1] != 3 or verts.shape[0] < 1:
            raise ValueError(
                f"vertices must have shape (V, 3) with V >= 1, got {shape_str(verts.shape)}"
            )
        check_finite(verts, "vertices")
        check_extent(verts, "vertices")
        f = _as_faces(faces, len(verts))
        spacing = as_spacing(spacing)
        _check_closed_oriented(f)
        volume, size = _signed_volume(verts, f)
        if volume < 0:
            f = f[:, [0, 2, 1]]
        p, n, w = sample_mesh(verts, f, spacing, size)
        return Sample(p, n, w, cls(3, vertices=verts, faces=f))

    def check_params(self) -> None:
        """The checks of :meth:`sample` on the recorded mesh, which is oriented outwards."""
        verts = self.params["vertices"]
        check_finite(verts, "vertices")
        check_extent(verts, "vertices")
        f = _as_faces(self.params["faces"], len(verts))
        _check_closed_oriented(f)
        if _signed_volume(verts, f)[0] < 0:
            raise ValueError("faces: the recorded mesh must be oriented outwards")

    def canonical_mass_properties(self):
        """Each face ``(a, b, c)`` spans a tetrahedron with the reference point ``o`` (the centre
        of the bounding box, for accuracy; any point gives the same exact result) of signed
        volume ``V_t = a.(b x c) / 6`` (vertices relative to ``o``), first moment
        ``V_t (a + b + c) / 4`` and second moment ``V_t / 20 (a a^T + b b^T + c c^T + s s^T)``,
        ``s = a + b + c``.  Summed, these are the exact integrals over the enclosed solid.
        """
        verts, faces = self.params["vertices"], self.params["faces"]
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


def _signed_volume(verts: np.ndarray, f: np.ndarray) -> tuple[float, float]:
    """The signed volume of a closed mesh and its size (the diagonal of its used vertices'
    bounding box); ValueError naming ``faces`` when it encloses no volume."""
    used = verts[np.unique(f)]
    centre = 0.5 * (used.min(axis=0) + used.max(axis=0))
    size = float(np.linalg.norm(used.max(axis=0) - used.min(axis=0)))
    a, b, c = (verts[f[:, k]] - centre for k in range(3))
    volume = float(np.sum(np.einsum("ij,ij->i", a, np.cross(b, c)))) / 6.0
    if abs(volume) <= 1e-12 * size**3:
        raise ValueError(f"faces: mesh encloses no volume (signed volume {volume!r})")
    return volume, size


def _as_faces(faces, n_vertices: int) -> np.ndarray:
    check_not_masked(faces, "faces")
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
