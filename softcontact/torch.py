"""PyTorch functions of softcontact's step, rollout, SSDF and contact, with exact
derivatives (optional extra ``torch``).

Each function takes and returns tensors and is differentiable with
:mod:`torch.autograd` to second order: the backward passes use the C core's analytic
derivatives, not finite differences nor PyTorch tracing of the kernels.

* :func:`step`: ``x_next = step(model, x, u)``; backward from the step's exact Jacobians,
  double backward from its exact second derivatives.
* :func:`rollout`: ``X = rollout(model, x0, U)``; backward by the adjoint recursion in C
  (``sc_rollout_vjp``: each step's Jacobians recomputed during the reverse sweep, none
  stored); double backward from the steps' second derivatives (forward tangents, then a
  second-order adjoint).
* :func:`ssdf`: the soft signed distance of query points (the cloud is a constant).
* :func:`contact`: the two bodies' contact wrenches from their poses and velocities.

Leading batch dimensions broadcast (``x (..., nx)`` with ``u (..., nu)``; ``x0 (...,
nx)`` with ``U (..., T, nu)``).  3D poses hold unit quaternions ``(w, x, y, z)``; a
quaternion within 1e-6 of unit length is normalised, and its derivatives are those of
the function of ``q / |q|`` (a gradient has no component along ``q``).  The arithmetic
is float64 on the CPU: float64 CPU tensors are read without a copy; others are
converted, and results come back in the inputs' dtype and device.  A rollout that
diverges raises :class:`~softcontact.DivergenceError`.

Examples
--------
>>> import torch, softcontact as sc, softcontact.torch as st
>>> scene = sc.Scene(dim=3)
>>> scene.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
'floor'
>>> scene.add_body(sc.PointCloud.box([0.05, 0.05, 0.05], spacing=0.01), mass=1.0,
...                pose=[0, 0, 0.06, 1, 0, 0, 0], name="box")
'box'
>>> scene.add_contact("box", "floor")
>>> model = scene.build(dt=0.005, integrator="implicit")
>>> x0 = torch.tensor(model.initial_state(), requires_grad=True)
>>> X = st.rollout(model, x0, None, T=20)          # 0.1 s
>>> X[-1, 2].backward()                             # the final height ...
>>> x0.grad[:3]                                     # ... in the initial position
tensor([ 0.0000,  0.0000, -0.1307], dtype=torch.float64)
"""

from __future__ import annotations

import math

import numpy as np

from . import _autodiff as ad
from ._optional import require

require("torch", "torch", "softcontact.torch")  # or an ImportError naming the extra
import torch  # noqa: E402
from torch.autograd.function import once_differentiable  # noqa: E402

__all__ = ["contact", "rollout", "ssdf", "step"]


def _tensor(a, name):
    if isinstance(a, torch.Tensor):
        if a.is_complex() or not a.is_floating_point():
            if a.is_complex():
                raise TypeError(f"{name} must be a real tensor, got {a.dtype}")
            a = a.to(torch.float64)
        return a
    try:
        return torch.as_tensor(np.asarray(a, dtype=float))
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a tensor or array_like of float") from None


def _zeros(like, shape):
    """Zeros of ``shape`` in ``like``'s dtype and device."""
    return like.new_zeros(shape)


def _np(t):
    """A float64 NumPy view of ``t`` (a copy when it is not a float64 CPU tensor)."""
    t = t.detach()
    if t.device.type != "cpu" or t.dtype != torch.float64:
        t = t.to("cpu", torch.float64)
    return t.numpy()


def _back(a, like):
    return torch.from_numpy(np.ascontiguousarray(a)).to(like.device, like.dtype)


class _Jac(torch.autograd.Function):
    """``J(z)`` (B, m, nz) of a :class:`~softcontact._autodiff.Smooth` (``J``: its value
    when already computed); its backward contracts the exact second derivatives."""

    @staticmethod
    def forward(ctx, fn, z, J):
        ctx.fn = fn
        ctx.save_for_backward(z)
        return _back(fn.jac(_np(z)) if J is None else J, z)

    @staticmethod
    @once_differentiable
    def backward(ctx, gJ):
        (z,) = ctx.saved_tensors
        H = ctx.fn.hess(_np(z))
        return None, _back(np.einsum("bai,baij->bj", _np(gJ), H), z), None


class _Value(torch.autograd.Function):
    """``f(z)`` (B, m); when ``z`` needs a gradient the Jacobian comes from the same
    evaluation (one call of order 1) and waits for the backward pass."""

    @staticmethod
    def forward(ctx, fn, z):
        ctx.fn = fn
        ctx.save_for_backward(z)
        if ctx.needs_input_grad[1]:
            y, ctx.J = fn.value_and_jac(_np(z))
        else:
            y, ctx.J = fn.value(_np(z)), None
        return _back(y, z)

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        J = _Jac.apply(ctx.fn, z, ctx.J)
        return None, (g.unsqueeze(1) @ J).squeeze(1)


def _lead(name_shapes):
    first = name_shapes[0][1][:-1]
    if all(s[:-1] == first for _, s in name_shapes):  # the common case, without torch's
        return first  # general (and slower) broadcast_shapes
    try:
        return torch.broadcast_shapes(*(s[:-1] for _, s in name_shapes))
    except RuntimeError:
        what = ", ".join(f"{n} {tuple(s)}" for n, s in name_shapes)
        raise ValueError(f"the batch dimensions of {what} do not broadcast") from None


def _apply(fn, parts, names, sizes):
    """``fn`` on the concatenation of ``parts`` (each (..., size)) broadcast to one batch;
    returns (..., m)."""
    for p, n, k in zip(parts, names, sizes, strict=True):
        if p.ndim < 1 or p.shape[-1] != k:
            raise ValueError(f"{n} must have shape (..., {k}), got {tuple(p.shape)}")
    lead = _lead(list(zip(names, [p.shape for p in parts], strict=True)))
    dtype = parts[0].dtype
    for p in parts[1:]:
        dtype = torch.promote_types(dtype, p.dtype)
    z = torch.cat(
        [
            p.to(dtype) if p.shape[:-1] == lead else p.to(dtype).expand(*lead, p.shape[-1])
            for p in parts
        ],
        -1,
    )
    out = _Value.apply(fn, z.reshape(math.prod(lead), fn.nz))
    return out.reshape(*lead, fn.m)


def step(model, x, u=None):
    """``x_next`` (..., nx) of :meth:`Model.step` from ``x`` (..., nx) and ``u`` (...,
    nu) (None for a model without controls), differentiable in both to second order."""
    return _apply(*ad.step_setup(model, x, u, _tensor, _zeros))


def ssdf(cloud, x, eps):
    """The soft signed distance ``phi`` (...) of :func:`softcontact.ssdf` at the query
    points ``x`` (..., D), differentiable in ``x`` to second order (the cloud and
    ``eps`` are constants)."""
    return _apply(*ad.ssdf_setup(cloud, x, eps, _tensor))[..., 0]


def contact(cloud_a, pose_a, vel_a, cloud_b, pose_b, vel_b, params=None):
    """The contact wrenches ``(wrench_a, wrench_b)`` (each (..., nv)) of
    :func:`softcontact.contact`, differentiable in the poses and velocities to second
    order (the clouds and :class:`~softcontact.ContactParams` are constants)."""
    fn, parts, names, sizes = ad.contact_setup(
        cloud_a, pose_a, vel_a, cloud_b, pose_b, vel_b, params, _tensor
    )
    w = _apply(fn, parts, names, sizes)
    nv = sizes[-1]
    return w[..., :nv], w[..., nv:]


class _RolloutVJP(torch.autograd.Function):
    """``(gx0, gU)`` of the rollout's adjoint (C) at the float64 states ``X`` (NumPy); its
    backward from the steps' second derivatives."""

    @staticmethod
    def forward(ctx, model, x0, U, X, GX):
        ctx.model = model
        ctx.save_for_backward(x0, U, GX)
        gx0, gU = ad.rollout_vjp(model, _np(x0), _np(U), X, _np(GX))
        return _back(gx0, x0), _back(gU, U)

    @staticmethod
    @once_differentiable
    def backward(ctx, cx0, cU):
        x0, U, GX = (_np(t) for t in ctx.saved_tensors)
        cx0, cU = _np(cx0), _np(cU)
        dX, hx0, hU = np.empty(GX.shape), np.empty(x0.shape), np.empty(U.shape)
        for b in range(x0.shape[0]):
            dX[b], hx0[b], hU[b] = ad.rollout_second(ctx.model, x0[b], U[b], GX[b], cx0[b], cU[b])
        x0t, Ut, GXt = ctx.saved_tensors
        return None, _back(hx0, x0t), _back(hU, Ut), None, _back(dX, GXt)


class _Rollout(torch.autograd.Function):
    @staticmethod
    def forward(ctx, model, x0, U):
        ctx.model = model
        # the float64 states wait for the adjoint: the output may be rounded to x0's dtype
        ctx.X = ad.rollout_forward(model, _np(x0), _np(U))
        ctx.save_for_backward(x0, U)
        return _back(ctx.X, x0)

    @staticmethod
    def backward(ctx, gX):
        x0, U = ctx.saved_tensors
        gx0, gU = _RolloutVJP.apply(ctx.model, x0, U, ctx.X, gX)
        return None, gx0, gU


def rollout(model, x0, U=None, *, T=None):
    """The states ``X`` (..., T + 1, nx) of :meth:`Model.rollout` from ``x0`` (..., nx)
    under the controls ``U`` (..., T, nu), differentiable in both to second order.

    ``U`` None (a model without controls) needs the number of steps ``T``.  ``X[..., 0]``
    is ``x0`` (its quaternions normalised).  Backward passes run the C adjoint across
    the machine's cores, one trajectory per thread."""
    x0 = _tensor(x0, "x0")
    U = None if U is None else _tensor(U, "U")
    lead, T = ad.rollout_shapes(model, x0.shape, None if U is None else U.shape, T)
    if U is None:
        U = _zeros(x0, x0.shape[:-1] + (T, 0))
    dtype = torch.promote_types(x0.dtype, U.dtype)
    B = math.prod(lead)
    xb = x0.to(dtype).expand(*lead, model.nx).reshape(B, model.nx)
    Ub = U.to(dtype).expand(*lead, *U.shape[-2:]).reshape(B, *U.shape[-2:])
    X = _Rollout.apply(model, xb, Ub)
    return X.reshape(*lead, U.shape[-2] + 1, model.nx)
