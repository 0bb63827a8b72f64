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

from . import _core
from ._core import NumericalError
from .cloud import PointCloud
from .ssdf import SSDF, ssdf

__version__ = "0.1.0"


class SoftContactWarning(UserWarning):
    """Warnings issued by softcontact (e.g. per-item warning statuses of batched kernels)."""


def build_info() -> dict:
    """How this installation runs: version, SIMD variants this CPU supports, and the default.

    Returns
    -------
    dict
        ``{"version": str, "isa_default": str, "isa_supported": tuple[str, ...]}``.
        ``isa_default`` honours the ``SOFTCONTACT_ISA`` environment variable.
    """
    from .ssdf import _ISA_BY_NAME, _isa_from_env

    info = _core.isa_info()
    code = _isa_from_env()
    default = info["best"] if code == _core.ISA_AUTO else {v: k for k, v in _ISA_BY_NAME.items()}[code]
    return {"version": __version__, "isa_default": default, "isa_supported": info["supported"]}


__all__ = [
    "NumericalError",
    "PointCloud",
    "SSDF",
    "SoftContactWarning",
    "build_info",
    "ssdf",
    "__version__",
]
