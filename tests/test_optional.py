"""softcontact without its optional dependencies: the core runs on NumPy alone, and each
feature that needs matplotlib, shapely, SciPy, trimesh, MuJoCo, PyTorch or JAX says which
extra installs it."""

import subprocess
import sys
import textwrap

from conftest import subprocess_env

SCRIPT = textwrap.dedent(
    """
    import sys
    for name in ("matplotlib", "shapely", "scipy", "trimesh", "mujoco", "torch", "jax"):
        sys.modules[name] = None   # as if not installed
    import importlib
    import io
    import numpy as np
    import softcontact as sc
    from softcontact.optimize import ControlResidual, TrajectoryProblem, cross_entropy

    # the core: clouds, SSDF, contact, a scene, steps with derivatives, a trajectory problem
    box = sc.PointCloud.box([0.05] * 3, 0.01)
    assert sc.ssdf(box, [[0.1, 0, 0]], 1e-4, order=2).phi.shape == (1,)
    scene = sc.Scene(dim=3)
    scene.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    scene.add_body(box, mass=1.0, pose=[0, 0, 0.049, 1, 0, 0, 0], actuated=True, name="box")
    scene.add_contact("box", "floor")
    model = scene.build(0.005, "implicit")
    assert model.step(model.initial_state(), np.zeros(6), order=2).d2x_du2.shape == (12, 6, 6)
    prob = TrajectoryProblem(model, model.initial_state(), 5, ControlResidual(model, 1.0))
    assert prob.value_and_grad(np.ones((5, 6)))[1].shape == (30,)
    cross_entropy(lambda U: np.sum(U**2, axis=1), np.ones(4), 0.1, samples=8, elites=2,
                  iterations=2, seed=0)

    def message(fn):
        try:
            fn()
        except ImportError as e:
            return str(e)
        raise AssertionError(f"{fn} ran without its optional dependency")

    def push_t():
        import softcontact.tasks.push_t  # noqa: F401

    for fn, extra, package in (
        (box.plot, "plot", "matplotlib"),
        (model.plot, "plot", "matplotlib"),
        (push_t, "tasks", "shapely"),
        (lambda: sc.optimize.fit_parameters(None, [], [], [], [], []), "optimize", "scipy"),
        (lambda: sc.PointCloud.from_file(io.BytesIO(b""), 0.1, file_type="stl"), "mesh",
         "trimesh"),
        (lambda: sc.Scene.from_mjcf("<mujoco/>", 0.01), "mujoco", "mujoco"),
        (lambda: importlib.import_module("softcontact.torch"), "torch", "torch"),
        (lambda: importlib.import_module("softcontact.jax"), "jax", "jax"),
    ):
        text = message(fn)
        assert f"needs {package}, which is not installed" in text, text
        assert f"pip install 'softcontact[{extra}]'" in text, text
    assert not any(
        sys.modules.get(n)
        for n in ("matplotlib", "shapely", "scipy", "trimesh", "mujoco", "torch", "jax")
    )
    assert "<freejoint" in scene.to_mjcf(0.005)  # writing MJCF needs no mujoco
    print("ok")
    """
)


def test_core_runs_on_numpy_alone_and_features_name_their_extra():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
