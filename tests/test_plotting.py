"""Model.plot: every body drawn where the state puts it, half-spaces as planes, errors."""

import sys

import numpy as np
import pytest

import softcontact as sc


def _scene3d():
    scene = sc.Scene(dim=3)
    scene.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    scene.add_body(
        sc.PointCloud.box([0.05, 0.05, 0.05], 0.02),
        mass=1.0,
        pose=[0, 0, 0.1, 1, 0, 0, 0],
        name="box",
    )
    scene.add_body(
        sc.PointCloud.sphere(0.03, 0.015),
        mass=0.5,
        pose=[0.2, 0.1, 0.3, np.cos(0.2), np.sin(0.2), 0, 0],
        name="ball",
    )
    scene.add_contact("box", "floor")
    return scene.build(dt=0.002, integrator="implicit")


def _offsets3d(collection):
    return np.column_stack(collection._offsets3d)


def test_bodies_are_drawn_at_their_poses(pyplot):
    model = _scene3d()
    x = model.initial_state()
    x[0:3] = [0.05, -0.02, 0.2]  # move the box; the drawing follows the state
    x[3:7] = [np.cos(0.4), 0.0, np.sin(0.4), 0.0]
    ax = model.plot(x, title="moved")
    assert ax.name == "3d" and ax.get_title() == "moved"
    labels = [c.get_label() for c in ax.collections]
    assert labels == ["floor", "box", "ball"]  # the plane first, under the bodies
    body_names = dict(zip(labels, ax.collections, strict=True))
    clouds = {b: model._source[0]._bodies[i].cloud for i, b in enumerate(model.body_names)}
    for name, pose in (("box", x[0:7]), ("ball", x[7:14])):
        want = clouds[name].transformed(pose).points
        got = _offsets3d(body_names[name])
        np.testing.assert_allclose(np.sort(got, axis=0), np.sort(want, axis=0), atol=1e-12)
    # equal scales on the three axes, every body inside the limits
    spans = [np.diff(lim)[0] for lim in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim())]
    np.testing.assert_allclose(spans, spans[0], rtol=1e-12)
    for name in ("box", "ball"):
        p = _offsets3d(body_names[name])
        for k, lim in enumerate((ax.get_xlim(), ax.get_ylim(), ax.get_zlim())):
            assert lim[0] < p[:, k].min() and p[:, k].max() < lim[1]
    # default state: the initial one; normals add one quiver per body
    ax2 = model.plot(normals=True)
    assert len(ax2.collections) == 5


def test_2d_model_and_a_wall(pyplot):
    scene = sc.Scene(dim=2)
    scene.add_body(sc.PointCloud.disk(0.02, 0.005), mass=0.1, pose=[0.1, 0.1, 0.0], name="puck")
    scene.add_body(sc.PointCloud.halfspace([0.0, 0.0], [-1.0, 0.0]), kind="static", name="wall")
    model = scene.build(dt=0.005)
    x = model.initial_state()
    x[0] = 0.3
    ax = model.plot(x, s=2)
    assert ax.name == "rectilinear" and ax.get_aspect() == 1.0
    (wall,) = ax.lines
    assert wall.get_label() == "wall"
    np.testing.assert_allclose(wall.get_xdata(), 0.0, atol=1e-12)  # the line x = 0
    (puck,) = ax.collections
    np.testing.assert_allclose(puck.get_offsets().mean(axis=0), [0.3, 0.1], atol=1e-12)


def test_errors(pyplot):
    model = _scene3d()
    with pytest.raises(ValueError, match=r"\bx\b"):
        model.plot(np.zeros(3))
    _, flat = pyplot.subplots()
    with pytest.raises(ValueError, match=r"ax must be a 3D axes"):
        model.plot(ax=flat)
    scene2 = sc.Scene(dim=2)
    scene2.add_body(sc.PointCloud.disk(0.02, 0.005), mass=0.1, name="puck")
    with pytest.raises(ValueError, match=r"ax must be a 2D axes"):
        scene2.build(0.005).plot(ax=pyplot.figure().add_subplot(projection="3d"))
    with pytest.raises(TypeError, match=r"normals must be a bool"):
        model.plot(normals=1)
    with pytest.raises(TypeError, match=r"title must be a str"):
        model.plot(title=3)
    x = model.initial_state()
    before = x.copy()
    model.plot(x)
    np.testing.assert_array_equal(x, before)


def test_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"Model.plot needs matplotlib.*pip install"):
        _scene3d().plot()


def test_the_view_is_the_bodies_wherever_a_half_space_is_anchored(pyplot):
    """A half-space is an infinite plane: its anchor (100 m away here) does not move the
    view, which stays a cube about the bodies, with the plane drawn across it."""
    scene = sc.Scene(dim=3)
    scene.add_body(sc.PointCloud.halfspace([100, 0, 0], [0, 0, 1]), kind="static", name="floor")
    scene.add_body(
        sc.PointCloud.box([0.05] * 3, 0.02), mass=1.0, pose=[0, 0, 0.05, 1, 0, 0, 0], name="b"
    )
    scene.add_contact("b", "floor")
    ax = scene.build(0.005, "implicit").plot()
    for lim in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim()):
        assert -0.2 < lim[0] < 0 and 0.05 < lim[1] < 0.2
