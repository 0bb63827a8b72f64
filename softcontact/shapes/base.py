"""The shape registry and the base class of the solids a cloud can record.

A :class:`Shape` is the exact solid a constructor sampled, placed in the cloud's frame.
Each kind of solid is a subclass filed by :func:`register` in :data:`SHAPES` under its
name (its ``shape`` class attribute), which declares

* ``dims``, the dimensions it exists in, and ``params``, its parameters with their array
  shapes (``()`` for a float; ``"D"`` stands for the dimension, other strings for any
  length);
* ``sample(...)``, a classmethod that validates the constructor's arguments and returns a
  :class:`Sample`: the oriented samples and the solid they were taken from;
* ``canonical_mass_properties()``, the exact volume (area in 2D), centroid and inertia at
  unit density in the canonical frame (the frame its sampler used).

A cloud pickles its solid as plain data with the name (:meth:`Shape.to_state`), and
:meth:`Shape.from_state` finds the class again through the registry and checks the data as
the sampler checks its arguments (``check_params()``: what the sampler could have
recorded), so that a tampered pickle cannot give a solid of negative mass.
"""

from __future__ import annotations

import types
from typing import ClassVar, NamedTuple

import numpy as np

__all__ = ["SHAPES", "Sample", "Shape", "register"]

#: Every shape class, by name.
SHAPES: dict[str, type[Shape]] = {}


def register(cls: type[Shape]) -> type[Shape]:
    """Class decorator: file ``cls`` in :data:`SHAPES` under ``cls.shape``."""
    if cls.shape in SHAPES:
        raise ValueError(f"a shape named {cls.shape!r} is already registered")
    SHAPES[cls.shape] = cls
    return cls


class Sample(NamedTuple):
    """What a shape's sampler returns: samples in the canonical frame and their solid.

    ``weights`` is None for unit weights (a half-space's single sample).
    """

    points: np.ndarray
    normals: np.ndarray
    weights: np.ndarray | None
    solid: Shape


class Shape:
    """An exact solid, placed in the cloud's frame by ``x_cloud = rot x + trans``.

    Parameters
    ----------
    dim : int
        2 or 3; one of the class's ``dims``.
    rot, trans : array_like, optional
        (D, D) and (D,): the canonical frame in the cloud's frame.  Default: identity.
    **params
        The class's parameters: floats, or arrays copied and stored read-only (``faces``
        as int64, everything else as float64).

    Instances are immutable: the parameters are read-only arrays or floats in a read-only
    mapping, ``rot`` and ``trans`` are read-only arrays.
    """

    __slots__ = ("dim", "params", "rot", "trans")

    shape: ClassVar[str]
    dims: ClassVar[tuple[int, ...]]
    param_shapes: ClassVar[dict[str, tuple]]

    dim: int
    params: types.MappingProxyType
    rot: np.ndarray
    trans: np.ndarray

    def __init__(self, dim: int, rot=None, trans=None, **params):
        spec = self.param_shapes
        if dim not in self.dims or set(params) != set(spec):
            raise ValueError(
                f"bad geometry {self.shape!r} in {dim}D with parameters {sorted(params)}"
            )
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
        set_(self, "dim", dim)
        set_(self, "params", types.MappingProxyType(frozen))
        set_(self, "rot", rot)
        set_(self, "trans", trans)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set attribute {name!r}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim})"

    # -- moving and pickling -------------------------------------------------------------------

    def moved(self, rot: np.ndarray, t: np.ndarray) -> Shape:
        """The same solid after ``x -> rot x + t``."""
        return type(self)(self.dim, rot @ self.rot, rot @ self.trans + t, **dict(self.params))

    def to_state(self) -> dict:
        """Plain picklable data: shape name, dim, parameters (floats and arrays), rot, trans."""
        return {
            "shape": self.shape,
            "dim": self.dim,
            "params": {
                k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in self.params.items()
            },
            "rot": np.array(self.rot),
            "trans": np.array(self.trans),
        }

    @staticmethod
    def from_state(state: dict) -> Shape:
        """The solid :meth:`to_state` described, of the class registered under its name,
        checked as its sampler checks its arguments (ValueError, naming ``geometry``,
        otherwise)."""
        try:
            name = state["shape"]
            cls = SHAPES.get(name) if isinstance(name, str) else None
            if cls is None:
                raise ValueError(f"unknown shape {name!r} (known: {sorted(SHAPES)})")
            dim = state["dim"]
            if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, (int, np.integer)):
                raise ValueError(f"dim must be an int, got {type(dim).__name__}")
            params = state["params"]
            if not isinstance(params, dict):
                raise ValueError(f"params must be a dict, got {type(params).__name__}")
            solid = cls(int(dim), state["rot"], state["trans"], **params)
            solid._check_pose()
            solid.check_params()
        except (TypeError, ValueError, OverflowError, KeyError, IndexError, AttributeError) as exc:
            raise ValueError(f"geometry: not a solid a constructor records: {exc}") from None
        return solid

    def _check_pose(self) -> None:
        """``rot`` a rotation (orthonormal to 1e-9, determinant +1), ``trans`` finite."""
        rot = self.rot
        if not (
            np.all(np.isfinite(rot))
            and np.allclose(rot @ rot.T, np.eye(self.dim), rtol=0, atol=1e-9)
            and np.linalg.det(rot) > 0
        ):
            raise ValueError("rot must be a rotation matrix")
        if not np.all(np.isfinite(self.trans)):
            raise ValueError("trans must be finite")

    def check_params(self) -> None:
        """ValueError unless the parameters are ones the sampler accepts (and records)."""
        raise NotImplementedError  # pragma: no cover - every registered shape defines it

    # -- integrals -------------------------------------------------------------------------------

    def unit_mass_properties(self) -> tuple[float, np.ndarray, float | np.ndarray]:
        """Volume (area in 2D), centroid and inertia at unit density, in the cloud's frame."""
        volume, com, inertia = self.canonical_mass_properties()
        com = self.rot @ com + self.trans
        if self.dim == 3:
            inertia = self.rot @ inertia @ self.rot.T
            inertia = 0.5 * (inertia + inertia.T)
        return volume, com, inertia

    def canonical_mass_properties(self) -> tuple[float, np.ndarray, float | np.ndarray]:
        """Volume, centroid and inertia at unit density in the canonical frame."""
        raise NotImplementedError  # pragma: no cover - every registered shape defines it
