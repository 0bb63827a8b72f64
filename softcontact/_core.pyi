"""Type stubs of the compiled core (csrc/_coremodule.c and csrc/py_*.c); kept in sync by
hand and checked by stubtest in CI."""

from typing import Any

import numpy as np
import numpy.typing as npt

ISA_AUTO: int
ISA_GENERIC: int
ISA_AVX2: int
ISA_AVX512: int
MAX_THREADS: int
SC_OK: int
SC_EINVAL: int
SC_ENOMEM: int
SC_ENONFINITE: int
SC_ENOTUNIT: int
SC_EUNSUPPORTED: int
SC_EDIVERGED: int
SC_EINTERRUPTED: int
SC_ERANGE: int
UNIT_TOL: float
COORD_MAX: float
REACH_MAX: float
EPS_MIN: float
EPS_MAX: float
LENGTH_MIN: float
LENGTH_MAX: float
STIFFNESS_MIN: float
STIFFNESS_MAX: float
DAMPING_MAX: float
FRICTION_MAX: float
SLIP_MIN: float
SLIP_MAX: float
SPEED_MAX: float
FORCE_MAX: float
MASS_MIN: float
MASS_MAX: float
DT_MIN: float
DT_MAX: float
GRAVITY_MAX: float
VERSION: str

class NumericalError(ArithmeticError): ...

class DivergenceError(NumericalError):
    body: str
    quantity: str
    value: float
    limit: float
    x_next: np.ndarray

def pack_cloud(
    points: npt.ArrayLike, normals: npt.ArrayLike, weights: npt.ArrayLike
) -> npt.NDArray[np.float64]: ...
def ssdf(
    packed: npt.ArrayLike,
    n: int,
    x: npt.ArrayLike,
    eps: float,
    order: int = 0,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
]: ...
def separation(
    packed_a: npt.ArrayLike,
    n_a: int,
    pose_a: npt.ArrayLike,
    packed_b: npt.ArrayLike,
    n_b: int,
    pose_b: npt.ArrayLike,
    eps: float,
    order: int = 0,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
]: ...
def contact(
    packed_a: npt.ArrayLike,
    n_a: int,
    pose_a: npt.ArrayLike,
    vel_a: npt.ArrayLike,
    packed_b: npt.ArrayLike,
    n_b: int,
    pose_b: npt.ArrayLike,
    vel_b: npt.ArrayLike,
    params: tuple[float, float, float, float, float, float, float],
    order: int = 0,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> tuple[
    npt.NDArray[np.float64],
    float,
    float,
    float,
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
]: ...
def model_new(
    dim: int,
    dt: float,
    gravity: npt.ArrayLike,
    kinds: npt.ArrayLike,
    actuated: npt.ArrayLike,
    masses: npt.ArrayLike,
    inertias: npt.ArrayLike,
    poses: npt.ArrayLike,
    clouds: tuple[npt.ArrayLike, ...],
    counts: npt.ArrayLike,
    supports: tuple[object, ...],
    pairs: npt.ArrayLike,
    pair_params: npt.ArrayLike,
    integrator: int = ...,
    limits: npt.ArrayLike | None = ...,
    /,
) -> object: ...
def model_sizes(model: object, /) -> tuple[int, int, int, int, int]: ...
def step(
    model: object,
    x: npt.ArrayLike,
    u: npt.ArrayLike,
    order: int = 0,
    params: int = 0,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
]: ...
def rollout(
    model: object,
    x0: npt.ArrayLike,
    U: npt.ArrayLike,
    order: int = 0,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.int32],
    npt.NDArray[np.intp],
]: ...
def rollout_vjp(
    model: object,
    X: npt.ArrayLike,
    U: npt.ArrayLike,
    GX: npt.ArrayLike,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int32]]: ...
def step_batch(
    models: tuple[object, ...],
    B: int,
    x: npt.ArrayLike,
    x_index: npt.ArrayLike | None,
    u: npt.ArrayLike,
    u_index: npt.ArrayLike | None,
    model_index: npt.ArrayLike | None,
    order: int = 0,
    params: int = 0,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.int32],
]: ...
def rollout_batch(
    models: tuple[object, ...],
    B: int,
    x0: npt.ArrayLike,
    x_index: npt.ArrayLike | None,
    U: npt.ArrayLike,
    u_index: npt.ArrayLike | None,
    model_index: npt.ArrayLike | None,
    order: int = 0,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.int32],
    npt.NDArray[np.intp],
]: ...
def rollout_policy(
    model: object,
    X: npt.ArrayLike,
    U: npt.ArrayLike,
    k: npt.ArrayLike,
    K: npt.ArrayLike,
    alpha: float,
    lo: npt.ArrayLike,
    hi: npt.ArrayLike,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int, int]: ...
def ilqr_backward(
    A: npt.ArrayLike,
    B: npt.ArrayLike,
    g: npt.ArrayLike,
    H: npt.ArrayLike,
    fxx: npt.ArrayLike | None,
    fxu: npt.ArrayLike | None,
    fuu: npt.ArrayLike | None,
    U: npt.ArrayLike,
    lo: npt.ArrayLike,
    hi: npt.ArrayLike,
    mu: float,
    /,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float, float] | None: ...
def model_eval(
    model: object,
    what: int,
    x: npt.ArrayLike,
    x_next: npt.ArrayLike | None = None,
    num_threads: int = 1,
    isa: int = -1,
    dense: int = 0,
) -> Any: ...
def isa_info() -> dict[str, object]: ...
def available_cores() -> int: ...
def _interrupt_polling(enabled: object, /) -> bool: ...
def _thread_pool(enabled: object, /) -> bool: ...
