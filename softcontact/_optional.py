"""Optional dependencies: imported where a feature needs them, with a message naming the
extra that installs them.

``import softcontact`` and the whole core (clouds, SSDF, contact, scenes, steps,
rollouts, trajectory problems) need only NumPy.  Drawing needs matplotlib (extra
``plot``), the push-T task shapely (``tasks``), the optimizers built on SciPy
(``fit_parameters``, the push-T controller, comparison and identification) SciPy
(``optimize``); the ``gym-pusht`` environment and the Dask runner of
:mod:`softcontact.tasks.gym_pusht` gym-pusht and ``dask[distributed]`` (``gym``); reading
mesh files (:meth:`PointCloud.from_file <softcontact.PointCloud.from_file>`) trimesh
(``mesh``); MuJoCo models in and out (:mod:`softcontact.mjcf`) mujoco (``mujoco``); the
autograd functions of :mod:`softcontact.torch` and :mod:`softcontact.jax` PyTorch
(``torch``) and JAX (``jax``); ``all`` installs every one.
"""

from __future__ import annotations

import importlib

# import names whose PyPI name differs
_PYPI = {"gym_pusht": "gym-pusht", "dask": "dask[distributed]", "PIL": "pillow"}


def require(module: str, extra: str, what: str):
    """Import ``module`` (e.g. ``"scipy.optimize"``) for ``what``, or raise ImportError
    naming the package and the extra ``softcontact[extra]`` that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        package = _PYPI.get(top, top)  # matplotlib, shapely, scipy: PyPI names alike
        shell = f"'{package}'" if "[" in package else package
        raise ImportError(
            f"{what} needs {package}, which is not installed: "
            f"pip install 'softcontact[{extra}]' (or pip install {shell})"
        ) from exc
