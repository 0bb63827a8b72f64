"""JAX functions of softcontact's step, rollout, SSDF and contact, with exact derivatives
(optional extra ``jax``).

The C core runs through :func:`jax.pure_callback`, so each function works under
:func:`jax.jit` and :func:`jax.vmap` (a vmapped call is one batched call of the C core),
and its derivatives are the core's analytic ones:

* :func:`step`, :func:`ssdf`, :func:`contact`: ``custom_jvp`` rules from the exact
  Jacobians, whose own rules use the exact second derivatives: forward and reverse mode
  (``jvp``, ``grad``, ``jacfwd``, ``jacrev``, ``hessian``) to second order.
* :func:`rollout`: ``custom_vjp`` whose backward pass is the adjoint recursion in C
  (``sc_rollout_vjp``), itself differentiable in reverse mode from the steps' second
  derivatives: ``grad``, ``vjp``, ``jacrev`` and ``grad`` of ``grad`` (reverse over
  reverse).  Forward mode (``jvp``, ``jacfwd``, ``hessian``) through a rollout is not
  available; :func:`step` inside :func:`jax.lax.scan` gives it.

Enable float64 (``jax.config.update("jax_enable_x64", True)``): the arithmetic is float64
in C either way, and results come back in the inputs' dtype.  Conventions (batch
dimensions, quaternions normalised within 1e-6) are those of :mod:`softcontact.torch`.
Shapes and types are checked when the function is called (ValueError / TypeError naming
the argument); values are checked in the callback, so a non-finite or out-of-range input,
a quaternion beyond the tolerance or a diverging rollout reaches the caller as JAX's
``JaxRuntimeError`` carrying softcontact's message (the ValueError or
:class:`~softcontact.DivergenceError` that the NumPy API raises).

Examples
--------
>>> import jax, jax.numpy as jnp, softcontact as sc, softcontact.jax as sj
>>> jax.config.update("jax_enable_x64", True)
>>> cloud = sc.PointCloud.disk(0.02, 0.002)
>>> g = jax.grad(lambda x: sj.ssdf(cloud, x, 4e-6))(jnp.array([0.05, 0.0]))
>>> [round(float(v), 3) for v in g]                # about the outward normal
[1.001, -0.0]
"""

from __future__ import annotations

import numpy as np

from . import _autodiff as ad
from ._optional import require

require("jax", "jax", "softcontact.jax")  # or an ImportError naming the extra
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

__all__ = ["contact", "rollout", "ssdf", "step"]


def _callback(fn, shape, dtype, *args):
    """``fn(*numpy float64 args)`` as a pure callback returning an array of ``shape`` in
    ``dtype``, or a tuple of them for a list of shapes."""
    many = isinstance(shape, list)

    def host(*a):
        out = fn(*(np.asarray(x, dtype=float) for x in a))
        if many:
            return tuple(np.asarray(o, dtype=dtype) for o in out)
        return np.asarray(out, dtype=dtype)

    spec = (
        tuple(jax.ShapeDtypeStruct(s, dtype) for s in shape)
        if many
        else jax.ShapeDtypeStruct(shape, dtype)
    )
    return jax.pure_callback(host, spec, *args, vmap_method="broadcast_all")


def _smooth(fn: ad.Smooth):
    """The JAX function ``z (..., nz) -> (..., m)`` of ``fn``, differentiable twice: its
    JVP takes the value and the Jacobian from one evaluation of order 1, whose own JVP
    the second derivatives."""

    def shapes(z, order):
        return [z.shape[:-1] + (fn.m,) + (fn.nz,) * k for k in range(order + 1)]

    @jax.custom_jvp
    def value_and_jac(z):
        return _callback(fn.value_and_jac, shapes(z, 1), z.dtype, z)

    @value_and_jac.defjvp
    def _value_and_jac_jvp(primals, tangents):
        (z,), (dz,) = primals, tangents
        y, J, H = _callback(lambda a: fn._run(a, 2), shapes(z, 2), z.dtype, z)
        return (y, J), (
            jnp.einsum("...ai,...i->...a", J, dz),
            jnp.einsum("...aij,...j->...ai", H, dz),
        )

    @jax.custom_jvp
    def value(z):
        return _callback(fn.value, shapes(z, 0)[0], z.dtype, z)

    @value.defjvp
    def _value_jvp(primals, tangents):
        (z,), (dz,) = primals, tangents
        y, J = value_and_jac(z)
        return y, jnp.einsum("...ai,...i->...a", J, dz)

    return value


def _array(a, name):
    try:
        a = jnp.asarray(a)
    except TypeError:
        raise TypeError(f"{name} must be an array of float") from None
    if jnp.iscomplexobj(a):
        raise TypeError(f"{name} must be real, got {a.dtype}")
    if not jnp.issubdtype(a.dtype, jnp.floating):
        a = a.astype(jnp.result_type(float))
    return a


def _zeros(like, shape):
    """Zeros of ``shape`` in ``like``'s dtype."""
    return jnp.zeros(shape, like.dtype)


def _apply(fn, parts, names, sizes):
    for p, n, k in zip(parts, names, sizes, strict=True):
        if p.ndim < 1 or p.shape[-1] != k:
            raise ValueError(f"{n} must have shape (..., {k}), got {tuple(p.shape)}")
    try:
        lead = jnp.broadcast_shapes(*(p.shape[:-1] for p in parts))
    except ValueError:
        what = ", ".join(f"{n} {tuple(p.shape)}" for n, p in zip(names, parts, strict=True))
        raise ValueError(f"the batch dimensions of {what} do not broadcast") from None
    dtype = jnp.result_type(*parts)
    z = jnp.concatenate(
        [jnp.broadcast_to(p.astype(dtype), lead + (p.shape[-1],)) for p in parts], -1
    )
    return _smooth(fn)(z)


def step(model, x, u=None):
    """``x_next`` (..., nx) of :meth:`Model.step` from ``x`` (..., nx) and ``u`` (...,
    nu) (None for a model without controls); differentiable to second order."""
    return _apply(*ad.step_setup(model, x, u, _array, _zeros))


def ssdf(cloud, x, eps):
    """The soft signed distance ``phi`` (...) of :func:`softcontact.ssdf` at ``x`` (...,
    D); differentiable in ``x`` to second order (the cloud and ``eps`` are constants)."""
    return _apply(*ad.ssdf_setup(cloud, x, eps, _array))[..., 0]


def contact(cloud_a, pose_a, vel_a, cloud_b, pose_b, vel_b, params=None):
    """The contact wrenches ``(wrench_a, wrench_b)`` (each (..., nv)) of
    :func:`softcontact.contact`; differentiable in the poses and velocities to second
    order (the clouds and :class:`~softcontact.ContactParams` are constants)."""
    fn, parts, names, sizes = ad.contact_setup(
        cloud_a, pose_a, vel_a, cloud_b, pose_b, vel_b, params, _array
    )
    w = _apply(fn, parts, names, sizes)
    nv = sizes[-1]
    return w[..., :nv], w[..., nv:]


def _flat(f):
    """A host function of batched (B, ...) arrays run on arrays of any common leading
    shape (that of the first argument without its last axis)."""

    def g(*a):
        lead = a[0].shape[:-1]
        B = int(np.prod(lead, dtype=np.int64))
        out = f(*(x.reshape((B,) + x.shape[len(lead) :]) for x in a))
        return out.reshape(lead + out.shape[1:])

    return g


def _rollout_fn(model):
    """The JAX rollout ``(x0 (..., nx), U (..., T, nu)) -> X`` of ``model``."""
    nx = model.nx

    def vjp_host(x0, U, X, GX):
        gx0, gU = ad.rollout_vjp(model, x0, U, X, GX)
        return np.concatenate([gx0, gU.reshape(gU.shape[0], -1)], -1)

    def vjp_host_again(x0, U, X, GX):
        # states rounded below float64 (e.g. float32 quaternions, 1e-8 off unit length):
        # the adjoint runs on the float64 rollout of the same x0 and U
        return vjp_host(x0, U, ad.rollout_forward(model, x0, U), GX)

    def second_host(x0, U, GX, cx0, cU):
        out = []
        for b in range(x0.shape[0]):
            dX, hx0, hU = ad.rollout_second(model, x0[b], U[b], GX[b], cx0[b], cU[b])
            out.append(np.concatenate([hx0, hU.ravel(), dX.ravel()]))
        return np.stack(out)

    @jax.custom_vjp
    def adjoint(x0, U, X, GX):
        T, nu = U.shape[-2], U.shape[-1]
        shape = x0.shape[:-1] + (nx + T * nu,)
        host = vjp_host if X.dtype == jnp.float64 else vjp_host_again
        g = _callback(_flat(host), shape, x0.dtype, x0, U, X, GX)
        return g[..., :nx], g[..., nx:].reshape(U.shape)

    def adjoint_fwd(x0, U, X, GX):
        return adjoint(x0, U, X, GX), (x0, U, X, GX)

    def adjoint_bwd(res, c):
        x0, U, X, GX = res
        T, nu = U.shape[-2], U.shape[-1]
        n = nx + T * nu + (T + 1) * nx
        h = _callback(_flat(second_host), x0.shape[:-1] + (n,), x0.dtype, x0, U, GX, *c)
        hU = h[..., nx : nx + T * nu].reshape(U.shape)
        # X is the rollout of (x0, U): its dependence is accounted for in hx0 and hU
        return h[..., :nx], hU, jnp.zeros_like(X), h[..., nx + T * nu :].reshape(GX.shape)

    adjoint.defvjp(adjoint_fwd, adjoint_bwd)

    def forward(x0, U):
        shape = x0.shape[:-1] + (U.shape[-2] + 1, nx)
        return _callback(
            _flat(lambda a, b: ad.rollout_forward(model, a, b)), shape, x0.dtype, x0, U
        )

    @jax.custom_vjp
    def roll(x0, U):
        return forward(x0, U)

    def roll_fwd(x0, U):
        # X through roll itself: a residual that higher-order derivatives differentiate
        X = roll(x0, U)
        return X, (x0, U, X)

    def roll_bwd(res, gX):
        return adjoint(*res, gX)

    roll.defvjp(roll_fwd, roll_bwd)
    return roll


def rollout(model, x0, U=None, *, T=None):
    """The states ``X`` (..., T + 1, nx) of :meth:`Model.rollout` from ``x0`` (..., nx)
    under ``U`` (..., T, nu); ``U`` None (a model without controls) needs ``T``.
    Differentiable in reverse mode to second order (see the module docstring)."""
    x0 = _array(x0, "x0")
    U = None if U is None else _array(U, "U")
    lead, T = ad.rollout_shapes(model, x0.shape, None if U is None else U.shape, T)
    if U is None:
        U = _zeros(x0, x0.shape[:-1] + (T, 0))
    dtype = jnp.result_type(x0, U)
    x0 = jnp.broadcast_to(x0.astype(dtype), lead + (model.nx,))
    U = jnp.broadcast_to(U.astype(dtype), lead + U.shape[-2:])
    return _rollout_fn(model)(x0, U)
