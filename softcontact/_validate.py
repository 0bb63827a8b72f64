"""Argument validation shared by the public API.

Every check raises ``TypeError`` (not array-like, unsafe dtype, wrong Python
type) or ``ValueError`` (shape, range, non-finite), and every message names the
argument, says what was expected and what came.
"""

from __future__ import annotations

import decimal
import itertools
import math
import numbers
import operator

import numpy as np

from . import _core
from ._core import UNIT_TOL  # the C core's SC_UNIT_TOL

# The valid ranges (SI units; docs/method.md, "Valid ranges"): the C core's (sc_common.h),
# which refuses the same values.  Within them every output of every kernel is finite at
# every derivative order.
#: Largest |component| of a query point, a pose's translation, a state's position or a
#: support sample, and largest radius of a cloud about its frame's origin (m).
COORD_MAX: float = _core.COORD_MAX
#: Largest reach ``(|x - c0| + rho) rho / eps`` of an SSDF query x of a cloud whose bounding
#: sphere is (c0, rho): the conditioning of the softmax weights.
REACH_MAX: float = _core.REACH_MAX
#: The SSDF temperature ``eps`` (m^2).
EPS_RANGE = (_core.EPS_MIN, _core.EPS_MAX)
#: The contact model's ``eps_c`` and ``beta`` (m).
CONTACT_LENGTH_RANGE = (_core.LENGTH_MIN, _core.LENGTH_MAX)
#: Contact stiffness (N/m), damping (N s/m), friction coefficients and slip velocities (m/s).
STIFFNESS_RANGE = (_core.STIFFNESS_MIN, _core.STIFFNESS_MAX)
DAMPING_RANGE = (0.0, _core.DAMPING_MAX)
FRICTION_RANGE = (0.0, _core.FRICTION_MAX)
SLIP_RANGE = (_core.SLIP_MIN, _core.SLIP_MAX)
#: Largest |component| of a velocity (m/s) or angular velocity (rad/s), and of a force or
#: torque control (N, N m).
SPEED_MAX: float = _core.SPEED_MAX
FORCE_MAX: float = _core.FORCE_MAX
#: A dynamic body's mass (kg) and the eigenvalues of its inertia (kg m^2).
MASS_RANGE = (_core.MASS_MIN, _core.MASS_MAX)
#: The time step (s).
DT_RANGE = (_core.DT_MIN, _core.DT_MAX)
#: Largest |component| of gravity (m/s^2).
GRAVITY_MAX: float = _core.GRAVITY_MAX
#: A quaternion of a state or pose whose norm is within this of 1 but not within
#: :data:`UNIT_TOL` (the C core's test) is normalised, in a copy, before it reaches the C
#: core: e.g. one rounded through float32.  A farther one is refused (ValueError).
UNIT_NORMALIZE_TOL: float = 1e-6


class SoftContactWarning(UserWarning):
    """Warnings issued by softcontact: a time step beyond a scene's stability limits
    (:meth:`softcontact.Scene.build`), per-item warning statuses of batched kernels."""


__all__ = [
    "COORD_MAX",
    "REACH_MAX",
    "EPS_RANGE",
    "CONTACT_LENGTH_RANGE",
    "STIFFNESS_RANGE",
    "DAMPING_RANGE",
    "FRICTION_RANGE",
    "SLIP_RANGE",
    "SPEED_MAX",
    "FORCE_MAX",
    "MASS_RANGE",
    "DT_RANGE",
    "GRAVITY_MAX",
    "UNIT_NORMALIZE_TOL",
    "as_float_array",
    "as_batch",
    "as_real",
    "as_positive_float",
    "as_in_range",
    "check_within",
    "as_int",
    "as_num_threads",
    "check_not_masked",
    "shape_str",
]


def shape_str(shape) -> str:
    """Format a shape the way the messages do: ``(5, 2)``."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def check_not_masked(x, name: str) -> None:
    """Refuse a NumPy masked array (or ``numpy.ma.masked``): converting it drops its mask, so
    the masked entries' hidden values would be used silently."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            f"{name}: masked arrays are not supported; pass {name}.filled(...) "
            "(with the value the masked entries should take)"
        )


def as_float_array(x, name: str) -> np.ndarray:
    """Convert ``x`` to a float64 ndarray without lossy casts.

    Lists, ints, bools, float16/32/64 and byte-swapped floats are accepted, and so are
    Python ints beyond int64 (as floats; ``ValueError`` when one is too large for a
    float); complex, object, string and datetime dtypes raise ``TypeError``, and so do
    masked arrays (their masks would be dropped).  The result may share memory with
    ``x``; callers never write to it.
    """
    check_not_masked(x, name)
    if isinstance(x, np.ndarray):
        a = x
    else:
        if isinstance(x, (list, tuple)) and _holds_masked(x):
            raise TypeError(
                f"{name}: masked values (numpy.ma.masked or masked arrays) are not "
                "supported inside a list; fill them first"
            )
        try:
            a = np.asarray(x)
        except (TypeError, ValueError) as exc:  # ragged nested lists and the like
            raise TypeError(f"{name} must be an array of real numbers: {exc}") from None
    if a.dtype == object and a.size and all(_is_int(e) for e in a.flat):
        # NumPy keeps Python ints beyond int64/uint64 as objects: convert them one by one
        try:
            return np.array([float(e) for e in a.flat], dtype=np.float64).reshape(a.shape)
        except OverflowError:
            raise ValueError(
                f"{name} must hold finite real numbers, got an integer too large for a float"
            ) from None
    if a.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be an array of real numbers (float64 or safely castable), "
            f"got dtype {a.dtype}"
        )
    return np.asarray(a, dtype=np.float64)


def _holds_masked(x) -> bool:
    """Whether nested lists and tuples ``x`` hold a masked array or ``numpy.ma.masked``
    (NumPy would read the latter as NaN with a warning).  One level at a time, the types
    gathered at C speed; lists nested deeper than NumPy converts (64 levels) are left to
    the conversion to refuse."""
    level = [x]
    for _ in range(64):
        elems = list(itertools.chain.from_iterable(level))
        types = set(map(type, elems))
        if any(issubclass(t, np.ma.MaskedArray) for t in types):
            return True
        nested = [issubclass(t, (list, tuple)) for t in types]
        if not any(nested):
            return False
        level = elems if all(nested) else [e for e in elems if isinstance(e, (list, tuple))]
    return False


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def as_batch(x, name: str, trailing: int) -> np.ndarray:
    """Convert ``x`` to float64 of shape ``(..., trailing)`` (at least 1-D)."""
    a = as_float_array(x, name)
    if a.ndim < 1 or a.shape[-1] != trailing:
        raise ValueError(f"{name} must have shape (..., {trailing}), got {shape_str(a.shape)}")
    return a


def as_real(v, name: str) -> float:
    """A real scalar as a Python float.

    Accepted: Python and NumPy ints and floats, :class:`fractions.Fraction`,
    :class:`decimal.Decimal` and 0-d real arrays.  ``TypeError`` for anything else (bool,
    complex, str, None, arrays of one or more dimensions, masked values); ``ValueError``
    naming ``name`` for a value beyond the range of a float (``2**2000``,
    ``Fraction(10**400)``, ``Decimal("1e400")``, a long double of 1e400) or that is not a
    number (``Decimal("sNaN")``).  NaN and infinite floats are returned as they are: the
    callers' range checks refuse them.
    """
    check_not_masked(v, name)
    if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iuf":
        v = v[()]  # the NumPy scalar
    if isinstance(v, (bool, np.bool_)) or not isinstance(
        v, (numbers.Real, np.floating, np.integer, decimal.Decimal)
    ):
        raise TypeError(f"{name} must be a real number, got {type(v).__name__}")
    try:
        f = float(v)
    except OverflowError:  # a Python int or Fraction beyond the float range
        what = "an integer" if isinstance(v, numbers.Integral) else "a value"
        raise ValueError(
            f"{name} must be a finite real number, got {what} too large for a float"
        ) from None
    except ValueError:  # Decimal("sNaN")
        raise ValueError(f"{name} must be a finite real number, got {v!r}") from None
    if math.isinf(f) and not isinstance(v, float) and _finite_source(v):
        # a Decimal or long double beyond the float range becomes inf, silently
        raise ValueError(f"{name} must be a finite real number, got a value too large for a float")
    return f


def _finite_source(v) -> bool:
    """Whether a real number of any type is finite (neither NaN nor infinite)."""
    try:
        return bool(v == v and abs(v) != math.inf)
    except (TypeError, ValueError, ArithmeticError):  # pragma: no cover - exotic types
        return False


def as_positive_float(v, name: str, *, allow_zero: bool = False) -> float:
    """A finite real scalar > 0 (or >= 0 with ``allow_zero``), as :func:`as_real` converts
    it; a positive value too small for a float (rounding to 0.0) is a ``ValueError``."""
    f = as_real(v, name)
    bound = ">= 0" if allow_zero else "> 0"
    if f == 0 and not allow_zero and _finite_source(v) and v > 0:
        raise ValueError(
            f"{name} must be finite and {bound}, got a value too small for a float "
            "(it rounds to 0.0)"
        )
    if not math.isfinite(f) or f < 0 or (f == 0 and not allow_zero):
        raise ValueError(f"{name} must be finite and {bound}, got {f!r}")
    return f


def as_in_range(v, name: str, lo: float, hi: float, unit: str = "") -> float:
    """A real scalar in ``[lo, hi]`` (``lo`` >= 0), as :func:`as_positive_float` converts it
    (0 allowed when ``lo`` is 0); ``ValueError`` naming ``name`` and the range, with its
    ``unit`` (" m^2", " N/m", ...), otherwise."""
    f = as_positive_float(v, name, allow_zero=lo == 0)
    if not lo <= f <= hi:
        raise ValueError(f"{name} must be in [{lo:g}, {hi:g}]{unit}, got {f!r}")
    return f


def check_within(a, name: str, limit: float, what: str = "coordinates", unit: str = " m") -> None:
    """``ValueError`` naming ``name`` unless every entry of ``a`` is within ``[-limit,
    limit]`` (NaN entries pass: the callers refuse or propagate them); ``what`` and ``unit``
    say what the entries are, for the message."""
    a = np.asarray(a)
    if a.size == 0:
        return
    big = np.abs(a) > limit
    if big.any():
        v = float(a.flat[int(np.flatnonzero(big)[0])])
        raise ValueError(
            f"{name} must have {what} within [-{limit:g}, {limit:g}]{unit}, got {v:.6g}"
        )


def as_int(v, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer (Python or NumPy, not bool or float) within ``[lo, hi]``."""
    check_not_masked(v, name)
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
        raise ValueError(f"{name} must be {rng}, got {_int_str(i)}")
    return i


def _int_str(i: int) -> str:
    """``str(i)``, or a summary of an integer too long to print (Python refuses to format
    integers of more than 4300 digits, and a message should not be longer than that)."""
    if -(10**30) < i < 10**30:
        return str(i)
    return (
        f"{'-' if i < 0 else ''}an integer of about {int(abs(i).bit_length() * 0.30103) + 1} digits"
    )


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
    with np.errstate(over="ignore"):  # a component beyond 1e154: norm inf, not unit
        norm = np.sqrt(w * w + x * x + y * y + z * z)
    bad = np.flatnonzero(~(np.abs(norm - 1.0) <= UNIT_TOL))
    return None if bad.size == 0 else (int(bad[0]), float(norm[bad[0]]))


def quaternion_norms(q) -> np.ndarray:
    """The norms of quaternions ``q`` (``(..., 4)``, w first) with the C core's arithmetic
    (the square root of the sum of squares, w first)."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = (q[..., k] for k in range(4))
    with np.errstate(over="ignore"):  # a component beyond 1e154: norm inf, not unit
        return np.sqrt(w * w + x * x + y * y + z * z)


def near_unit(norm) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the quaternions of norms ``norm`` to normalise (within
    :data:`UNIT_NORMALIZE_TOL` of 1, not within :data:`UNIT_TOL`) and to refuse (farther,
    or not finite)."""
    off = np.abs(np.asarray(norm) - 1.0)
    refuse = ~(off <= UNIT_NORMALIZE_TOL)
    return (off > UNIT_TOL) & ~refuse, refuse


def has_batch(a) -> bool:
    """Whether the array-like ``a`` has more than one dimension (leading batch dimensions),
    cheaply for arrays and lists (no conversion of a list of numbers: single calls from a
    loop do not pay for the test); False for what the conversion would refuse."""
    if isinstance(a, np.ndarray):
        return a.ndim > 1
    if isinstance(a, (list, tuple)):
        if not a:
            return False
        e = a[0]
        return isinstance(e, (list, tuple)) or (isinstance(e, np.ndarray) and e.ndim > 0)
    try:
        return np.ndim(a) > 1
    except (TypeError, ValueError):  # ragged lists and the like: the checks report them
        return False
