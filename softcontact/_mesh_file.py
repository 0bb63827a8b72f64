"""Triangle meshes read from STL, OBJ and PLY files (through trimesh) and repaired into
the closed, outward-oriented meshes that :meth:`PointCloud.from_mesh
<softcontact.PointCloud.from_mesh>` samples.

The repair is exact and topological: vertices with equal coordinates are merged,
faces that repeat a vertex or another face's vertices are dropped, and the faces of every
connected closed surface are oriented consistently and outwards (a surface nested inside
an odd number of others bounds a cavity and faces inwards).  Whatever cannot be repaired
without guessing (an open surface, a non-manifold edge, a non-orientable surface, closed
surfaces that cross each other, a flat closed surface) is refused with a ``ValueError``
naming the file.
"""

from __future__ import annotations

import io
import os
from collections import deque

import numpy as np

from ._optional import require
from ._validate import as_positive_float
from .sampling import as_spacing, check_extent, check_finite

__all__ = ["FILE_TYPES", "read_mesh"]

#: the file types :func:`read_mesh` reads (lower-case extensions)
FILE_TYPES = ("stl", "obj", "ply")

# vertices of a component at which its nesting inside the other components is tested
_NEST_POINTS = 64
# faces per block when winding numbers are summed (bounds the temporary arrays)
_BLOCK = 1 << 14


def read_mesh(path, spacing, scale=1.0, file_type=None) -> tuple[np.ndarray, np.ndarray]:
    """The repaired ``(vertices, faces)`` of a mesh file.

    Parameters are those of :meth:`PointCloud.from_file <softcontact.PointCloud.from_file>`
    (``spacing`` is only checked here).  Returns float64 ``(V, 3)`` vertices in metres
    (times ``scale``) and int64 ``(F, 3)`` faces, closed and oriented outwards.
    """
    if isinstance(path, io.TextIOBase):
        raise TypeError("path: a file object must be opened in binary mode ('rb')")
    as_spacing(spacing)
    scale = as_positive_float(scale, "scale")
    name, source, kind = _source(path, file_type)
    trimesh = require("trimesh", "mesh", "PointCloud.from_file")
    vertices, faces = _load(trimesh, _read(source), kind, name)
    vertices, faces = _merge(vertices, faces)
    if len(faces) == 0:
        raise ValueError(f"path: {name} holds no triangle with three distinct vertices")
    faces = _orient(vertices, faces, name)
    scaled = vertices * scale
    check_finite(scaled, f"path: the vertices of {name} times scale")
    check_extent(scaled, f"path: the vertices of {name} times scale")
    return scaled, faces


def _source(path, file_type) -> tuple[str, object, str]:
    """The name for messages, what trimesh reads (a file name or a BytesIO) and the type."""
    if file_type is not None:
        if not isinstance(file_type, str):
            raise TypeError(f"file_type must be a str or None, got {type(file_type).__name__}")
        kind = file_type.lower().lstrip(".")
        if kind not in FILE_TYPES:
            raise ValueError(f"file_type must be one of {FILE_TYPES}, got {file_type!r}")
    if isinstance(path, (str, os.PathLike)):
        fspath = os.fspath(path)
        if not isinstance(fspath, str):
            raise TypeError(f"path must be a str or a str path, got {type(fspath).__name__}")
        if file_type is None:
            ext = os.path.splitext(fspath)[1].lower().lstrip(".")
            if ext not in FILE_TYPES:
                raise ValueError(
                    f"path: unsupported file extension {ext!r} of {fspath!r}: expected one of "
                    f"{', '.join('.' + t for t in FILE_TYPES)} (or give file_type)"
                )
            kind = ext
        if not os.path.isfile(fspath):
            if not os.path.exists(fspath):
                raise FileNotFoundError(f"path: no such file: {fspath!r}")
            raise ValueError(f"path: not a regular file: {fspath!r}")
        return repr(fspath), fspath, kind
    if callable(getattr(path, "read", None)):
        if file_type is None:
            raise ValueError("file_type is required when path is a file object")
        return f"<{type(path).__name__} of {kind.upper()} data>", path, kind
    raise TypeError(
        f"path must be a str, an os.PathLike or a binary file object, got {type(path).__name__}"
    )


def _read(source):
    """A file name as it is, a binary file object's remaining bytes as a BytesIO."""
    if isinstance(source, str):
        return source
    data = source.read()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"path: a file object's read() must return bytes, got {type(data).__name__}"
        )
    return io.BytesIO(bytes(data))


def _load(trimesh, source, kind: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Every triangle mesh of the file, placed by the file's scene graph and concatenated
    (vertices as stored, float64; faces int64); other geometry (points, lines) is ignored."""
    load_scene = getattr(trimesh, "load_scene", None)
    try:
        if load_scene is not None:
            scene = load_scene(source, file_type=kind, process=False)
        else:  # trimesh 4 before load_scene
            scene = trimesh.load(source, file_type=kind, process=False, force="scene")
        meshes = [g for g in scene.dump() if isinstance(g, trimesh.Trimesh)]
    except Exception as exc:  # trimesh's parsers raise many kinds of errors on bad data
        raise ValueError(
            f"path: {name} could not be read as {kind.upper()}: {type(exc).__name__}: {exc}"
        ) from exc
    meshes = [m for m in meshes if len(m.faces)]
    if not meshes:
        raise ValueError(f"path: {name} holds no triangles")
    for m in meshes:
        f = np.asarray(m.faces)
        if f.ndim != 2 or f.shape[1] != 3 or f.min() < 0 or f.max() >= len(m.vertices):
            raise ValueError(f"path: {name} has faces that are not triangles of its vertices")
    vertices = np.concatenate([np.asarray(m.vertices, dtype=np.float64) for m in meshes])
    offsets = np.cumsum([0] + [len(m.vertices) for m in meshes[:-1]])
    faces = np.concatenate(
        [np.asarray(m.faces, dtype=np.int64) + o for m, o in zip(meshes, offsets, strict=True)]
    )
    check_finite(vertices, f"path: the vertices of {name}")
    return vertices, faces


def _merge(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices with equal coordinates merged (the first of each kept, in the order of the
    file; unused ones dropped), faces that repeat a vertex dropped, and of faces with the
    same three vertices (in any order) the first kept."""
    used = np.unique(faces)
    _, first, inverse = np.unique(vertices[used], axis=0, return_index=True, return_inverse=True)
    # unique rows ranked by their first index in the file, so a clean mesh keeps its order
    order = np.argsort(first)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    remap = np.empty(len(vertices), dtype=np.int64)
    remap[used] = rank[inverse.reshape(-1)]
    f = remap[faces]
    v = vertices[used[first[order]]]
    keep = (f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])
    f = f[keep]
    _, once = np.unique(np.sort(f, axis=1), axis=0, return_index=True)
    f = f[np.sort(once)]
    return v, f


def _orient(vertices: np.ndarray, faces: np.ndarray, name: str) -> np.ndarray:
    """The faces with every connected component consistently oriented, outwards unless it
    is nested inside an odd number of other components (a cavity), or ValueError."""
    n = len(faces)
    directed = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    owner = np.tile(np.arange(n), 3)
    key = np.sort(directed, axis=1)
    order = np.lexsort((key[:, 1], key[:, 0]))
    key, directed, owner = key[order], directed[order], owner[order]
    _, start, counts = np.unique(key, axis=0, return_index=True, return_counts=True)
    if (counts == 1).any():
        e = key[start[np.argmax(counts == 1)]]
        raise ValueError(
            f"path: the mesh of {name} is not closed (watertight): {int((counts == 1).sum())} "
            f"edges belong to a single face, e.g. between vertices at {vertices[e[0]].tolist()} "
            f"and {vertices[e[1]].tolist()}; an open surface bounds no solid, so which side is "
            "outside is ambiguous (close the holes, e.g. in a mesh editor)"
        )
    if (counts > 2).any():
        e = key[start[np.argmax(counts > 2)]]
        raise ValueError(
            f"path: the mesh of {name} is not a 2-manifold: {int((counts > 2).sum())} edges "
            f"belong to more than two faces, e.g. between vertices at {vertices[e[0]].tolist()} "
            f"and {vertices[e[1]].tolist()}"
        )
    # the two faces of each edge, and whether they traverse it the same way (then one of
    # them must be flipped relative to the other)
    fa, fb = owner[0::2], owner[1::2]
    same = (directed[0::2] == directed[1::2]).all(axis=1)
    nbr_face = np.concatenate([fb, fa])
    nbr_same = np.concatenate([same, same])
    src = np.concatenate([fa, fb])
    by_src = np.argsort(src, kind="stable")
    nbr_face, nbr_same = nbr_face[by_src].tolist(), nbr_same[by_src].tolist()
    ptr = np.searchsorted(src[by_src], np.arange(n + 1)).tolist()
    flip = [-1] * n
    comp = [-1] * n
    n_comp = 0
    for seed in range(n):
        if flip[seed] >= 0:
            continue
        flip[seed], comp[seed] = 0, n_comp
        queue = deque([seed])
        while queue:
            f = queue.popleft()
            for k in range(ptr[f], ptr[f + 1]):
                g, want = nbr_face[k], flip[f] ^ nbr_same[k]
                if flip[g] < 0:
                    flip[g], comp[g] = want, n_comp
                    queue.append(g)
                elif flip[g] != want:
                    raise ValueError(
                        f"path: the mesh of {name} cannot be oriented consistently "
                        "(a non-orientable surface, such as a Moebius strip or a Klein bottle)"
                    )
        n_comp += 1
    flipped = np.asarray(flip, dtype=bool)
    component = np.asarray(comp, dtype=np.int64)
    faces = faces.copy()
    faces[flipped] = faces[flipped][:, [0, 2, 1]]
    return _orient_components(vertices, faces, component, n_comp, name)


def _orient_components(vertices, faces, component, n_comp: int, name: str) -> np.ndarray:
    """Each consistently oriented component flipped so that it faces outwards, or inwards
    when it lies inside an odd number of the others."""
    used = vertices[np.unique(faces)]
    lo, hi = used.min(axis=0), used.max(axis=0)
    centre = 0.5 * (lo + hi)
    size = float(np.linalg.norm(hi - lo))
    a, b, c = (vertices[faces[:, k]] - centre for k in range(3))
    six_v = np.einsum("ij,ij->i", a, np.cross(b, c))
    volume = np.bincount(component, weights=six_v, minlength=n_comp) / 6.0
    flat = np.abs(volume) <= 1e-12 * size**3
    if flat.any():
        raise ValueError(
            f"path: the mesh of {name} has a closed surface that encloses no volume "
            f"(component {int(np.argmax(flat))} of {n_comp}), so its outside is ambiguous"
        )
    outward = np.where(volume < 0, -1, 1)
    depth = np.zeros(n_comp, dtype=np.int64)
    if n_comp > 1:
        members = [np.flatnonzero(component == i) for i in range(n_comp)]
        for i in range(n_comp):
            ids_i = np.unique(faces[members[i]])
            for j in range(n_comp):
                if j == i:
                    continue
                fj = faces[members[j]]
                ids_j = np.unique(fj)
                # vertices of i not shared with j (surfaces may touch at a vertex)
                own = ids_i[~np.isin(ids_i, ids_j)]
                if len(own) == 0:
                    continue
                points = vertices[own[:: max(1, len(own) // _NEST_POINTS)][:_NEST_POINTS]]
                box = vertices[ids_j]
                near = ((points >= box.min(axis=0)) & (points <= box.max(axis=0))).all(axis=1)
                if not near.any():
                    continue
                inside = _winding(points, vertices, fj) * outward[j] > 0.5
                if inside.all():
                    depth[i] += 1
                elif inside.any():
                    raise ValueError(
                        f"path: closed surfaces of the mesh of {name} cross each other "
                        f"(components {i} and {j} of {n_comp}), so the solid they bound is "
                        "ambiguous; give the parts as separate meshes"
                    )
    # +1: keep, -1: flip; outward at even depth, inward (a cavity) at odd depth
    sign = outward * np.where(depth % 2 == 0, 1, -1)
    flip = sign[component] < 0
    faces[flip] = faces[flip][:, [0, 2, 1]]
    return faces


def _winding(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """The winding number of a closed oriented mesh about each point: the sum of the
    solid angles of its triangles (Van Oosterom and Strackee) over 4 pi."""
    total = np.zeros(len(points))
    for s in range(0, len(faces), _BLOCK):
        tri = vertices[faces[s : s + _BLOCK]]  # (B, 3, 3)
        a, b, c = (tri[None, :, k, :] - points[:, None, :] for k in range(3))
        la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
        det = np.einsum("pfi,pfi->pf", a, np.cross(b, c))
        den = (
            la * lb * lc
            + np.einsum("pfi,pfi->pf", a, b) * lc
            + np.einsum("pfi,pfi->pf", b, c) * la
            + np.einsum("pfi,pfi->pf", c, a) * lb
        )
        total += np.arctan2(det, den).sum(axis=1)
    return total / (2.0 * np.pi)
