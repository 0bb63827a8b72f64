"""Argument validation shared by the public API.

Every check raises ``TypeError`` (not array-like, unsafe dtype, wrong Python
type) or ``ValueError`` (shape, range, non-finite), and every message names the
argument, says what was expected and what came.
"""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from ._core import UNIT_TOL  # the C core's SC_UNIT_TOL


class SoftContactWarning(UserWarning):
    """Warnings issued by softcontact: a time step beyond a scene's stability limits
    (:meth:`softcontact.Scene.build`), per-item warning statuses of batched kernels."""


__all__ = [
    "as_float_array",
    "as_batch",
    "as_positive_float",
    "as_int",
    "as_num_threads",
    "shape_str",
]


def shape_str(shape) -> str:
    """Format a shape the way the messages do: ``(5, 2)``."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def as_float_array(x, name: str) -> np.ndarray:
    """Convert ``x`` to a float64 ndarray without lossy casts.

    Lists, ints, bools, float16/32/64 and byte-swapped floats are accepted;
    complex, object, string and datetime dtypes raise ``TypeError``.  The
    result may share memory with ``x``; callers never write to it.
    """
    if isinstance(x, np.ndarray):
        a = x
    else:
        try:
            a = np.asarray(x)
        except (TypeError, ValueError) as exc:  # ragged nested lists and the like
            raise TypeError(f"{name} must be an array of real numbers: {exc}") from None
    if a.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be an array of real numbers (float64 or safely castable), "
            f"got dtype {a.dtype}"
        )
    return np.asarray(a, dtype=np.float64)


def as_batch(x, name: str, trailing: int) -> np.ndarray:
    """Convert ``x`` to float64 of shape ``(..., trailing)`` (at least 1-D)."""
    a = as_float_array(x, name)
    if a.ndim < 1 or a.shape[-1] != trailing:
        raise ValueError(f"{name} must have shape (..., {trailing}), got {shape_str(a.shape)}")
    return a


def as_positive_float(v, name: str, *, allow_zero: bool = False) -> float:
    """A finite real scalar > 0 (or >= 0 with ``allow_zero``)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating)):
        if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iuf":
            v = v.item()
        else:
            raise TypeError(f"{name} must be a real number, got {type(v).__name__}")
    f = float(v)
    if not np.isfinite(f) or f < 0 or (f == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {f!r}")
    return f


def as_int(v, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer (Python or NumPy, not bool or float) within ``[lo, hi]``."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool")
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(v).__name__}") from None
    if (lo is not None and i < lo) or (hi is not None and i > hi):
        if hi is None:
            rng = f">= {lo}"
        elif lo is None:
            rng = f"<= {hi}"
        else:
            rng = f"in {lo}..{hi}"
        raise ValueError(f"{name} must be {rng}, got {i}")
    return i


def as_num_threads(v) -> int:
    """The binding's code of a ``num_threads=`` argument: ``None`` (every core this process
    may run on, its CPU affinity when the call is made) is 0; else an int in 1..256."""
    if v is None:
        return 0
    return as_int(v, "num_threads", lo=1, hi=256)


def first_non_unit(q) -> tuple[int, float] | None:
    """The first quaternion of ``q`` (``(..., 4)``, w first; flat index) whose norm is not 1
    within :data:`UNIT_TOL`, and its norm; None when every one is unit.  The one test of
    the Python layer, with the C core's tolerance and arithmetic (the square root of the
    sum of squares, w first).

    ``q`` may be a list of 4-sequences of Python floats: on the few quaternions of one
    state, a Python loop is ~10x faster than NumPy's ufuncs (``Model.step`` checks every
    state it is given)."""
    if isinstance(q, list):
        for i, (w, x, y, z) in enumerate(q):
            n = math.sqrt(w * w + x * x + y * y + z * z)
            if not abs(n - 1.0) <= UNIT_TOL:
                return i, n
        return None
    q = np.asarray(q, dtype=float).reshape(-1, 4)
    w, x, y, z = q.T
    norm = np.sqrt(w * w + x * x + y * y + z * z)
    bad = np.flatnonzero(~(np.abs(norm - 1.0) <= UNIT_TOL))
    return None if bad.size == 0 else (int(bad[0]), float(norm[bad[0]]))
