"""PointCloud.from_file: STL (ASCII and binary), OBJ and PLY files written by trimesh are
read back, repaired (merged vertices, dropped repeated faces, outward winding) and sampled
exactly as PointCloud.from_mesh samples the vertices and faces the file stores.

Exactness: the formats store rounded coordinates (binary STL and trimesh's PLY float32,
trimesh's OBJ 8 decimals, ASCII STL full precision), so the reference is from_mesh on the
stored values (the float32 rounding of the vertices for STL/PLY), to the last bit.
"""

import io
import sys
from pathlib import Path

import numpy as np
import pytest

import softcontact as sc

trimesh = pytest.importorskip("trimesh")

SPACING = 0.02


def _same(a, b):
    """Bitwise equal clouds (same samples in the same order)."""
    assert len(a) == len(b)
    for name in ("points", "normals", "weights"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def _same_samples(a, b):
    """Bitwise equal samples, in any order."""
    assert len(a) == len(b)
    rows = [np.column_stack([c.points, c.normals, c.weights]) for c in (a, b)]
    rows = [r[np.lexsort(r.T[::-1])] for r in rows]
    np.testing.assert_array_equal(rows[0], rows[1])


def _write(path, mesh, file_type):
    data = mesh.export(file_type=file_type)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _f32(v):
    return np.asarray(v, dtype=np.float32).astype(np.float64)


def _meshes():
    return {
        "box": trimesh.creation.box([0.1, 0.2, 0.3]),
        "icosphere": trimesh.creation.icosphere(2, radius=0.1),
        "torus": trimesh.creation.torus(0.1, 0.03, major_sections=24, minor_sections=12),
    }


def _outward_check(cloud, centre=(0, 0, 0)):
    """Every normal of a star-shaped solid about ``centre`` points away from it."""
    d = np.einsum("ij,ij->i", cloud.points - np.asarray(centre), cloud.normals)
    return bool((d > 0).all())


# -- the cloud is from_mesh's on the stored mesh -----------------------------------------------


@pytest.mark.parametrize("name", ["box", "icosphere", "torus"])
@pytest.mark.parametrize(
    "file_type, ext, rounding",
    [
        ("stl", "stl", _f32),  # binary STL: float32, every triangle's corners stored apart
        ("stl_ascii", "stl", lambda v: v),  # trimesh writes ASCII STL at full precision
        ("ply", "ply", _f32),  # trimesh's PLY: float32, shared vertices
        ("obj", "obj", lambda v: np.round(v, 8)),  # trimesh's OBJ: 8 decimals
    ],
)
def test_file_gives_from_mesh_of_the_stored_mesh(tmp_path, name, file_type, ext, rounding):
    mesh = _meshes()[name]
    path = _write(tmp_path / f"{name}.{ext}", mesh, file_type)
    cloud = sc.PointCloud.from_file(path, SPACING)
    # the stored values, as the format rounds them; the same faces (STL's triangle soup is
    # merged back into shared vertices, numbered differently: the samples are the same)
    stored = rounding(np.asarray(mesh.vertices))
    _same(cloud, sc.PointCloud.from_mesh(stored, mesh.faces, SPACING))
    assert cloud.kind == "mesh"
    np.testing.assert_allclose(cloud.area, mesh.area, rtol=1e-6)
    np.testing.assert_allclose(cloud.mass_properties().mass, mesh.volume, rtol=1e-6)


def test_clean_ply_and_obj_keep_the_file_numbering(tmp_path):
    """A file with nothing to repair is sampled with its own vertex and face order: the
    cloud is from_mesh's of the arrays trimesh reads from it, bit for bit."""
    mesh = _meshes()["icosphere"]
    for ext in ("ply", "obj"):
        path = _write(tmp_path / f"s.{ext}", mesh, ext)
        raw = trimesh.load_mesh(path, process=False)
        _same(
            sc.PointCloud.from_file(path, SPACING),
            sc.PointCloud.from_mesh(raw.vertices, raw.faces, SPACING),
        )


def test_binary_stl_with_duplicated_vertices_is_the_clean_mesh(tmp_path):
    mesh = _meshes()["torus"]
    path = _write(tmp_path / "t.stl", mesh, "stl")
    soup = trimesh.load_mesh(path, process=False)
    assert len(soup.vertices) == 3 * len(mesh.faces)  # each triangle's corners stored apart
    with pytest.raises(ValueError, match="not closed"):  # from_mesh refuses the soup
        sc.PointCloud.from_mesh(soup.vertices, soup.faces, SPACING)
    clean = sc.PointCloud.from_mesh(_f32(mesh.vertices), mesh.faces, SPACING)
    _same(sc.PointCloud.from_file(path, SPACING), clean)


def test_obj_with_per_corner_texture_coordinates_is_merged(tmp_path):
    """trimesh splits an OBJ vertex used with several texture coordinates into copies at
    the same position; they are merged back into the closed mesh."""
    mesh = _meshes()["box"]
    lines = ["v " + " ".join(repr(float(x)) for x in p) for p in np.asarray(mesh.vertices)]
    lines += [f"vt {0.01 * k} {0.5 * (k % 2)}" for k in range(3 * len(mesh.faces))]
    lines += [
        "f " + " ".join(f"{v + 1}/{3 * i + c + 1}" for c, v in enumerate(face))
        for i, face in enumerate(np.asarray(mesh.faces))
    ]
    path = tmp_path / "uv.obj"
    path.write_text("\n".join(lines) + "\n")
    assert len(trimesh.load_mesh(path, process=False).vertices) == 3 * len(mesh.faces)
    _same(
        sc.PointCloud.from_file(path, SPACING),
        sc.PointCloud.from_mesh(mesh.vertices, mesh.faces, SPACING),
    )


def test_repeated_and_degenerate_faces_are_dropped(tmp_path):
    mesh = _meshes()["box"]
    v = np.asarray(mesh.vertices)
    f = np.asarray(mesh.faces)
    # a copy of face 3 (rotated), face 5 reversed, a face repeating a vertex, and a
    # duplicated vertex (a copy of vertex 0 at the end) used by one face
    dup = np.vstack([v, v[:1]])
    f0 = f[0].copy()
    f0[f0 == 0] = len(v)
    extra = np.array([np.roll(f[3], 1), f[5][::-1], [1, 1, 2]])
    dirty = trimesh.Trimesh(dup, np.vstack([[f0], f[1:], extra]), process=False)
    path = _write(tmp_path / "dirty.ply", dirty, "ply")
    _same(sc.PointCloud.from_file(path, SPACING), sc.PointCloud.from_mesh(_f32(v), f, SPACING))


# -- winding ----------------------------------------------------------------------------------


def test_inward_sphere_is_turned_outward(tmp_path):
    mesh = _meshes()["icosphere"]
    inward = trimesh.Trimesh(mesh.vertices, mesh.faces[:, ::-1], process=False)
    assert inward.volume < 0
    path = _write(tmp_path / "in.stl", inward, "stl")
    cloud = sc.PointCloud.from_file(path, SPACING)
    assert _outward_check(cloud)
    np.testing.assert_allclose(cloud.mass_properties().mass, mesh.volume, rtol=1e-6)


@pytest.mark.parametrize("outward_seed", [True, False])
def test_inconsistent_winding_is_made_consistent_and_outward(tmp_path, outward_seed):
    """Half the faces flipped at random (from_mesh refuses such a mesh): the file gives
    the clean sphere's samples, all normals outward, whichever way the first face is."""
    mesh = _meshes()["icosphere"]
    f = np.asarray(mesh.faces).copy()
    rng = np.random.default_rng(0)
    flip = rng.random(len(f)) < 0.5
    flip[0] = not outward_seed
    f[flip] = f[flip][:, ::-1]
    path = _write(tmp_path / "mixed.ply", trimesh.Trimesh(mesh.vertices, f, process=False), "ply")
    with pytest.raises(ValueError, match="not consistently oriented"):
        sc.PointCloud.from_mesh(_f32(mesh.vertices), f, SPACING)
    cloud = sc.PointCloud.from_file(path, SPACING)
    assert _outward_check(cloud)
    clean = sc.PointCloud.from_mesh(_f32(mesh.vertices), mesh.faces, SPACING)
    # a face flipped back is (a, c, b) rather than (a, b, c): its lattice points are the
    # same points computed from the corners in another order, equal to rounding
    assert len(cloud) == len(clean)
    key = np.lexsort(np.round(cloud.points, 9).T)
    ref = np.lexsort(np.round(clean.points, 9).T)
    np.testing.assert_allclose(cloud.points[key], clean.points[ref], rtol=0, atol=1e-15)
    np.testing.assert_allclose(cloud.normals[key], clean.normals[ref], rtol=0, atol=1e-12)
    np.testing.assert_allclose(cloud.weights[key], clean.weights[ref], rtol=1e-9)


def _scene_obj(path, meshes):
    """An OBJ with one material per mesh: trimesh reads it back as a scene of several."""
    lines, offset = [], 1
    for m in meshes:
        lines += ["v " + " ".join(repr(float(x)) for x in p) for p in np.asarray(m.vertices)]
    for k, m in enumerate(meshes):
        lines.append(f"usemtl m{k}")
        lines += ["f " + " ".join(str(int(i)) for i in t) for t in np.asarray(m.faces) + offset]
        offset += len(m.vertices)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_scene_of_several_meshes_is_concatenated(tmp_path):
    ball = trimesh.creation.icosphere(1, radius=0.1)
    cube = trimesh.creation.box([0.05] * 3)
    cube.apply_translation([0.3, 0, 0])
    path = _scene_obj(tmp_path / "two.obj", [ball, cube])
    assert len(trimesh.load_scene(path, process=False).geometry) == 2
    cloud = sc.PointCloud.from_file(path, SPACING)
    v = np.vstack([ball.vertices, cube.vertices])
    f = np.vstack([ball.faces, cube.faces + len(ball.vertices)])
    # trimesh orders a scene's meshes by its own rules: the same samples, in some order
    _same_samples(cloud, sc.PointCloud.from_mesh(v, f, SPACING))
    assert len(cloud) == len(sc.PointCloud.from_mesh(ball.vertices, ball.faces, SPACING)) + len(
        sc.PointCloud.from_mesh(cube.vertices, cube.faces, SPACING)
    )


@pytest.mark.parametrize("inner_written", ["outward", "inward"])
def test_hollow_sphere_inner_surface_faces_the_cavity(tmp_path, inner_written):
    outer = trimesh.creation.icosphere(2, radius=0.1)
    inner = trimesh.creation.icosphere(2, radius=0.05)
    if inner_written == "inward":
        inner = trimesh.Trimesh(inner.vertices, inner.faces[:, ::-1], process=False)
    path = _scene_obj(tmp_path / "hollow.obj", [outer, inner])
    cloud = sc.PointCloud.from_file(path, SPACING)
    radius = np.linalg.norm(cloud.points, axis=1)
    dots = np.einsum("ij,ij->i", cloud.points, cloud.normals)
    assert (dots[radius > 0.075] > 0).all() and (dots[radius < 0.075] < 0).all()
    assert (radius < 0.075).sum() > 0
    np.testing.assert_allclose(
        cloud.mass_properties().mass, outer.volume - abs(inner.volume), rtol=1e-6
    )


def test_crossing_closed_surfaces_are_refused(tmp_path):
    a = trimesh.creation.icosphere(1, radius=0.1)
    b = trimesh.creation.icosphere(1, radius=0.1)
    b.apply_translation([0.1, 0, 0])
    path = _scene_obj(tmp_path / "cross.obj", [a, b])
    with pytest.raises(ValueError, match=r"path: .*cross\.obj.* cross each other"):
        sc.PointCloud.from_file(path, SPACING)


def test_surfaces_touching_at_a_vertex_are_two_outward_bodies(tmp_path):
    """Two unit cubes sharing one corner (merged into one vertex): neither is inside the
    other, so both face outwards, the one written inward included."""
    a = trimesh.creation.box([1, 1, 1])
    b = trimesh.creation.box([1, 1, 1])
    b.apply_translation([1, 1, 1])
    b = trimesh.Trimesh(b.vertices, b.faces[:, ::-1], process=False)
    path = _scene_obj(tmp_path / "corner.obj", [a, b])
    cloud = sc.PointCloud.from_file(path, 0.25)
    np.testing.assert_allclose(cloud.area, 12.0)
    np.testing.assert_allclose(cloud.mass_properties().mass, 2.0)
    # each sample faces out of a cube that holds it (the shared corner is in both)
    ok = np.zeros(len(cloud), dtype=bool)
    for centre in (np.zeros(3), np.ones(3)):
        inside = (np.abs(cloud.points - centre) <= 0.5 + 1e-12).all(axis=1)
        ok |= inside & (np.einsum("ij,ij->i", cloud.points - centre, cloud.normals) > 0)
    assert ok.all()


def test_open_mesh_is_refused_naming_the_file(tmp_path):
    mesh = _meshes()["box"]
    open_box = trimesh.Trimesh(mesh.vertices, mesh.faces[:-2], process=False)  # no lid
    path = _write(tmp_path / "open.stl", open_box, "stl")
    with pytest.raises(ValueError, match=r"path: the mesh of '.*open\.stl' is not closed") as e:
        sc.PointCloud.from_file(path, SPACING)
    assert "4 edges belong to a single face" in str(e.value)
    assert "ambiguous" in str(e.value)


def test_non_manifold_mesh_is_refused(tmp_path):
    """Two boxes sharing one edge: that edge has four faces."""
    a = trimesh.creation.box([1, 1, 1])
    b = trimesh.creation.box([1, 1, 1])
    b.apply_translation([1, 1, 0])
    path = _scene_obj(tmp_path / "edge.obj", [a, b])
    with pytest.raises(ValueError, match="not a 2-manifold: 1 edges belong to more than two"):
        sc.PointCloud.from_file(path, SPACING * 20)


# -- units, sources, arguments ----------------------------------------------------------------


def test_scale_multiplies_the_coordinates(tmp_path):
    mm = trimesh.creation.box([100.0, 200.0, 300.0])  # millimetres
    path = _write(tmp_path / "mm.ply", mm, "ply")
    cloud = sc.PointCloud.from_file(path, SPACING, scale=0.001)
    _same(cloud, sc.PointCloud.from_mesh(_f32(mm.vertices) * 0.001, mm.faces, SPACING))
    np.testing.assert_allclose(cloud.bounds[1] - cloud.bounds[0], [0.1, 0.2, 0.3])


def test_str_path_file_object_and_file_type_agree(tmp_path):
    mesh = _meshes()["icosphere"]
    path = _write(tmp_path / "s.stl", mesh, "stl")
    ref = sc.PointCloud.from_file(path, SPACING)
    _same(sc.PointCloud.from_file(str(path), SPACING), ref)
    upper = tmp_path / "S.STL"
    upper.write_bytes(path.read_bytes())
    _same(sc.PointCloud.from_file(upper, SPACING), ref)
    noext = tmp_path / "mesh.bin"
    noext.write_bytes(path.read_bytes())
    _same(sc.PointCloud.from_file(noext, SPACING, file_type=".STL"), ref)
    with open(path, "rb") as fh:
        _same(sc.PointCloud.from_file(fh, SPACING, file_type="stl"), ref)
        assert not fh.closed
    data = path.read_bytes()
    buf = io.BytesIO(data)
    _same(sc.PointCloud.from_file(buf, SPACING, file_type="stl"), ref)
    assert buf.getvalue() == data


def test_missing_trimesh_names_the_extra(tmp_path, monkeypatch):
    path = _write(tmp_path / "b.stl", _meshes()["box"], "stl")
    monkeypatch.setitem(sys.modules, "trimesh", None)  # as if not installed
    with pytest.raises(ImportError) as e:
        sc.PointCloud.from_file(path, SPACING)
    text = str(e.value)
    assert "PointCloud.from_file needs trimesh, which is not installed" in text
    assert "pip install 'softcontact[mesh]'" in text


def test_bad_arguments_name_the_argument(tmp_path):
    path = _write(tmp_path / "b.stl", _meshes()["box"], "stl")
    before = path.read_bytes()
    cases = [
        ({"path": tmp_path / "none.stl"}, FileNotFoundError, "path: no such file"),
        ({"path": tmp_path}, ValueError, "path: unsupported file extension ''"),
        ({"path": str(tmp_path / "x.step")}, ValueError, "path: unsupported file extension"),
        ({"file_type": "step"}, ValueError, "file_type must be one of"),
        ({"file_type": 3}, TypeError, "file_type must be a str"),
        ({"path": 3}, TypeError, "path must be a str, an os.PathLike"),
        ({"path": b"b.stl"}, TypeError, "path must be a str"),
        ({"path": io.BytesIO(before)}, ValueError, "file_type is required"),
        ({"path": io.StringIO("solid"), "file_type": "stl"}, TypeError, "binary mode"),
        ({"spacing": 0.0}, ValueError, "spacing must be finite and > 0"),
        ({"spacing": -1}, ValueError, "spacing must be finite and > 0"),
        ({"spacing": "0.1"}, TypeError, "spacing must be a real number"),
        ({"spacing": 1e-9}, ValueError, "spacing=1e-09 is too small"),
        ({"scale": 0}, ValueError, "scale must be finite and > 0"),
        ({"scale": np.inf}, ValueError, "scale must be finite and > 0"),
        ({"scale": None}, TypeError, "scale must be a real number"),
        ({"scale": 1e300}, ValueError, "path: the vertices of .* times scale must"),
    ]
    for kwargs, error, match in cases:
        args = {"path": path, "spacing": SPACING, **kwargs}
        with pytest.raises(error, match=match):
            sc.PointCloud.from_file(**args)
    assert path.read_bytes() == before
    (tmp_path / "dir.stl").mkdir()
    with pytest.raises(ValueError, match="path: not a regular file"):
        sc.PointCloud.from_file(tmp_path / "dir.stl", SPACING)


def test_unreadable_or_empty_files_name_the_path(tmp_path):
    garbage = tmp_path / "garbage.ply"
    garbage.write_bytes(b"not a ply file at all\n")
    with pytest.raises(ValueError, match=r"path: '.*garbage\.ply' could not be read as PLY"):
        sc.PointCloud.from_file(garbage, SPACING)
    points = tmp_path / "points.ply"
    _write(points, trimesh.PointCloud(np.eye(3)), "ply")
    with pytest.raises(ValueError, match=r"path: '.*points\.ply' holds no triangles"):
        sc.PointCloud.from_file(points, SPACING)


def test_pathlib_and_str_names_in_messages(tmp_path):
    """Messages quote the path as given (as a str)."""
    missing = Path(tmp_path) / "gone.obj"
    with pytest.raises(FileNotFoundError, match=r"gone\.obj"):
        sc.PointCloud.from_file(missing, SPACING)
