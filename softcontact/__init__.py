"""softcontact: smooth, analytically differentiable collision detection and
rigid-body contact, after Beker et al., "A Smooth Analytical Formulation of
Collision Detection and Rigid Body Dynamics With Contact" (IROS 2025).

Shapes are oriented point clouds (:class:`PointCloud`); :func:`ssdf` turns one
into a smooth signed distance field with closed-form derivatives to third order.

Conventions
-----------
- Units are SI (metres, seconds, kilograms); ``eps`` of the SSDF is a squared
  length (m^2).
- Arrays are float64, batch dimensions first: queries ``(..., D)`` give values
  ``(...)``, gradients ``(..., D)``, Hessians ``(..., D, D)`` and third
  derivatives ``(..., D, D, D)``, with ``J[..., i, j] = d y_i / d x_j``.
  Hessians and third derivatives are full and exactly symmetric.
- 2D poses are ``(x, y, theta)``; 3D poses ``(px, py, pz, qw, qx, qy, qz)``
  with a unit quaternion, w first (MuJoCo's convention).
- Bad input raises ``TypeError``/``ValueError`` naming the argument; inputs
  are never modified; the GIL is released around the C kernels.
"""

import logging as _logging
import os as _os
import sys as _sys


def _installed_copy():
    """The installed softcontact package, when this one is a source tree without a build.

    ``pip install . && python -m softcontact`` run in the repository root imports the
    source folder ``softcontact/`` (Python puts the current folder first on sys.path),
    which has no compiled ``_core`` unless it was built in place.  Rather than fail, load
    the installed copy under the same name and let it stand in for this module.
    """
    import importlib.util

    here = _os.path.dirname(_os.path.abspath(__file__))
    for entry in _sys.path:
        pkg = _os.path.join(_os.path.abspath(entry or _os.curdir), "softcontact")
        init = _os.path.join(pkg, "__init__.py")
        if pkg == here or not _os.path.isfile(init):
            continue
        if not any(f.startswith("_core") for f in _os.listdir(pkg)):
            continue
        spec = importlib.util.spec_from_file_location(
            __name__, init, submodule_search_locations=[pkg]
        )
        module = importlib.util.module_from_spec(spec)
        source_tree = _sys.modules[__name__]
        _sys.modules[__name__] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            _sys.modules[__name__] = source_tree
            raise
        return module
    return None


try:
    from . import _core
except ImportError as _exc:
    if _installed_copy() is None:
        raise ImportError(
            "softcontact's compiled core (softcontact._core) is missing: install the package "
            "with `pip install .`, or build it in place with "
            "`python setup.py build_ext --inplace`"
        ) from _exc
    _STANDIN = True
else:
    _STANDIN = False

# library messages go to the "softcontact" loggers (logging.getLogger("softcontact.*")),
# silent unless the application configures logging (`python -m softcontact -v` does)
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

if not _STANDIN:
    from . import optimize
    from ._core import DivergenceError, NumericalError
    from ._validate import SoftContactWarning
    from ._version import __version__
    from .cloud import MassProperties, PointCloud
    from .contact import Contact, ContactParams, Separation, contact, separation
    from .scene import Energy, Model, Momentum, Rollout, Scene, StepResult, rollout
    from .spatial import pose_difference, retract
    from .ssdf import SSDF, ssdf

    def build_info() -> dict:
        """How this installation runs: version, SIMD variants this CPU supports, and the default.

        Returns
        -------
        dict
            ``{"version": str, "isa_default": str, "isa_supported": tuple[str, ...]}``.
            ``isa_default`` honours the ``SOFTCONTACT_ISA`` environment variable.
        """
        info = _core.isa_info()
        return {
            "version": __version__,
            "isa_default": info["default"],
            "isa_supported": info["supported"],
        }


__all__ = [
    "Energy",
    "Model",
    "Momentum",
    "Rollout",
    "Scene",
    "StepResult",
    "Contact",
    "ContactParams",
    "DivergenceError",
    "MassProperties",
    "NumericalError",
    "PointCloud",
    "SSDF",
    "Separation",
    "SoftContactWarning",
    "build_info",
    "contact",
    "optimize",
    "pose_difference",
    "retract",
    "rollout",
    "separation",
    "ssdf",
    "__version__",
]
