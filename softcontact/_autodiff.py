"""Exact derivatives in the arrays' own (ambient) coordinates, for the PyTorch and JAX
wrappers (:mod:`softcontact.torch`, :mod:`softcontact.jax`).

The C core differentiates in tangent coordinates (docs/method.md section 3): a 3D pose
``(p, q)`` moves as ``(p + dp, q (x) exp(dtheta / 2))``, and its derivatives are with
respect to ``(dp, dtheta)``.  Automatic differentiation frameworks see the seven numbers
``(p, q)`` instead.  Here every function of a state (or of a pair of poses and
velocities) is read as a function of its ambient entries through the unit quaternion
``q / |q|``, and its ambient first and second derivatives are the tangent ones composed
with the charts' exact first and second derivatives:

* into the tangent space at ``x`` (with ``M = Q(q/|q|)'``, ``r = M q``):
  ``dtheta = 2 atan2(|r_v|, r_0) r_v / |r_v|``, so at ``x`` ``d dtheta / d q = 2 M[1:] / |q|``
  and ``d2 dtheta_k / d q2 = M' (-2 / |q|^2) (e_0 e_k' + e_k e_0') M``;
* out of the tangent space at ``y``: ``q(dtheta) = q_y (x) exp(dtheta / 2)``, so
  ``d q / d dtheta = Q(q_y)[:, 1:] / 2`` and ``d2 q / d dtheta_k d dtheta_l = -q_y delta_kl / 4``.

2D poses ``(x, y, theta)`` are their own tangent coordinates: every chart is the identity.
A quaternion must be unit to within :data:`NORM_TOL`; the functions use ``q / |q|``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._validate import UNIT_NORMALIZE_TOL

#: A quaternion given to the wrappers may differ from unit length by this much (it is
#: normalised before use, and the derivatives are those of the normalised function), as
#: everywhere in the API.
NORM_TOL = UNIT_NORMALIZE_TOL


def quat_left(q):
    """``Q(q)`` (4, 4), the matrix of the left product: ``q (x) p = Q(q) p``."""
    w, x, y, z = (float(v) for v in q)
    return np.array([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])


class Chart:
    """Ambient <-> tangent coordinates of ``nb`` poses of dimension ``dim`` followed by
    their ``nb`` velocities (a model's state, or a contact's ``(pose_a, pose_b, vel_a,
    vel_b)``)."""

    def __init__(self, dim: int, nb: int) -> None:
        self.dim, self.nb = dim, nb
        self.nqb, self.nvb = (3, 3) if dim == 2 else (7, 6)
        self.nq, self.nv = nb * self.nqb, nb * self.nvb
        self.na, self.nt = self.nq + self.nv, 2 * self.nv
        # (ambient, tangent) index pairs of the entries that the charts leave alone
        same_a: list[int] = []
        same_t: list[int] = []
        for j in range(nb):
            same_a += range(j * self.nqb, j * self.nqb + dim)
            same_t += range(j * self.nvb, j * self.nvb + dim)
            if dim == 2:
                same_a.append(j * 3 + 2)
                same_t.append(j * 3 + 2)
        same_a += range(self.nq, self.na)
        same_t += range(self.nv, self.nt)
        self._same = (np.array(same_a, dtype=np.intp), np.array(same_t, dtype=np.intp))
        # each quaternion's ambient slice start and tangent rotation start
        self._quats = [(j * 7 + 3, j * 6 + 3) for j in range(nb)] if dim == 3 else []
        # the charts' constant entries, copied and completed per point
        self._in0 = np.zeros((self.nt, self.na))
        self._in0[self._same[1], self._same[0]] = 1.0
        self._out0 = np.ascontiguousarray(self._in0.T)

    def normalized(self, x, name="x"):
        """``x`` (..., na) with unit quaternions (a copy when any is rescaled); ValueError
        naming ``name`` for a quaternion farther than NORM_TOL from unit length."""
        if not self._quats:
            return x
        if x.ndim == 1:  # one point: Python floats are faster than NumPy's reductions
            v = x.tolist()
            norms = [math.sqrt(sum(c * c for c in v[a : a + 4])) for a, _ in self._quats]
            if all(n == 1.0 for n in norms):
                return x
            s = np.array(norms)
        else:
            s = np.stack([np.linalg.norm(x[..., a : a + 4], axis=-1) for a, _ in self._quats])
        bad = ~(np.abs(s - 1.0) <= NORM_TOL)
        if bad.any():
            raise ValueError(
                f"{name}: a quaternion is not unit (norm {float(s[bad][0])!r}, "
                f"tolerance {NORM_TOL:g}; quaternions are normalised within it)"
            )
        out = np.array(x, dtype=float, copy=True)
        for k, (a, _) in enumerate(self._quats):
            out[..., a : a + 4] = x[..., a : a + 4] / s[k][..., None]
        return out

    def in_jac(self, x):
        """``d (tangent at x) / d x`` (nt, na) at the single state ``x``."""
        J = self._in0.copy()
        for a, t in self._quats:
            q = x[a : a + 4]
            s = math.sqrt(float(q @ q))
            J[t : t + 3, a : a + 4] = (2.0 / s) * quat_left(q / s).T[1:]
        return J

    def in_hess(self, x):
        """``d2 (tangent at x) / d x2`` (nt, na, na) at ``x``."""
        H = np.zeros((self.nt, self.na, self.na))
        for a, t in self._quats:
            q = x[a : a + 4]
            s = float(np.linalg.norm(q))
            M = quat_left(q / s).T
            for k in range(3):
                # -2/s^2 (e_0 e_{k+1}' + e_{k+1} e_0') in r = M q
                Hk = np.outer(M[0], M[k + 1])
                H[t + k, a : a + 4, a : a + 4] = (-2.0 / (s * s)) * (Hk + Hk.T)
        return H

    def out_jac(self, y):
        """``d (y (+) d) / d d`` (na, nt) at ``d = 0``, for the unit-quaternion state ``y``."""
        J = self._out0.copy()
        for a, t in self._quats:
            J[a : a + 4, t : t + 3] = 0.5 * quat_left(y[a : a + 4])[:, 1:]
        return J

    def out_hess(self, y):
        """``d2 (y (+) d) / d d2`` (na, nt, nt) at ``d = 0``."""
        H = np.zeros((self.na, self.nt, self.nt))
        for a, t in self._quats:
            for k in range(3):
                H[a : a + 4, t + k, t + k] = -0.25 * y[a : a + 4]
        return H

    def normalize_jac(self, x):
        """``d (x with q / |q|) / d x`` (na, na)."""
        N = np.eye(self.na)
        for a, _ in self._quats:
            q = x[a : a + 4]
            s = float(np.linalg.norm(q))
            n = q / s
            N[a : a + 4, a : a + 4] = (np.eye(4) - np.outer(n, n)) / s
        return N

    def normalize_hvp(self, x, lam, c):
        """``sum_a lam_a d2 N_a / d x2 . c``: the second derivative of the normalisation
        contracted with the cotangent ``lam`` and the direction ``c`` (na)."""
        out = np.zeros(self.na)
        for a, _ in self._quats:
            q = x[a : a + 4]
            s = float(np.linalg.norm(q))
            n = q / s
            la, ca = lam[a : a + 4], c[a : a + 4]
            c_perp = ca - n * (n @ ca)
            l_perp = la - n * (n @ la)
            out[a : a + 4] = -(c_perp * (n @ la) + n * (c_perp @ la) + l_perp * (n @ ca)) / (s * s)
        return out


def ambient(Jo, J, Ji, Ho=None, H=None, Hi=None):
    """The ambient first (and, given the second-order terms, second) derivatives of
    ``Out o F o In``: ``Jo J Ji`` and
    ``Ho[JJ, JJ] + Jo (H[Ji, Ji] + J Hi)`` with ``JJ = J Ji``."""
    JJ = J @ Ji
    Ja = Jo @ JJ
    if H is None:
        return Ja
    inner = np.einsum("bcd,ci,dj->bij", H, Ji, Ji, optimize=True)
    if Hi is not None:
        inner += np.einsum("bc,cij->bij", J, Hi, optimize=True)
    Ha = np.einsum("ab,bij->aij", Jo, inner, optimize=True)
    if Ho is not None:
        Ha += np.einsum("abc,bi,cj->aij", Ho, JJ, JJ, optimize=True)
    return Ja, Ha


def _block_in(chart, x, nu, order):
    """The input chart of ``(x, u)``: ``x``'s, with the identity on the controls."""
    nt, na = chart.nt, chart.na
    Ji = np.zeros((nt + nu, na + nu))
    Ji[:nt, :na] = chart.in_jac(x)
    Ji[nt:, na:] = np.eye(nu)
    if order < 2:
        return Ji, None
    Hi = np.zeros((nt + nu, na + nu, na + nu))
    Hi[:nt, :na, :na] = chart.in_hess(x)
    return Ji, Hi


@functools.lru_cache(maxsize=64)
def chart_of(dim: int, nb: int) -> Chart:
    """The (immutable) :class:`Chart` of ``nb`` bodies of dimension ``dim``."""
    return Chart(dim, nb)


def state_chart(model) -> Chart:
    return chart_of(model.dim, len(model.moving))


def step_derivatives(model, x, u, order):
    """One step at the single (ambient) state ``x``: ``x_next`` and, for order >= 1, the
    ambient Jacobian ``J`` (nx, nx + nu) of ``x_next`` in ``(x, u)``, for order 2 also the
    second derivatives ``H`` (nx, nx + nu, nx + nu)."""
    chart = state_chart(model)
    xh = chart.normalized(x)
    s = model.step(xh, u, order=order, num_threads=1)
    y = s.x_next
    if order == 0:
        return (y,)
    n, nu = chart.nt, model.nu
    J = np.concatenate([s.dx_dx, s.dx_du], axis=1)
    if order == 1:
        if model.dim == 2:  # the charts are the identity
            return y, J
        Ji, _ = _block_in(chart, x, nu, 1)
        return y, ambient(chart.out_jac(y), J, Ji)
    H = np.empty((n, n + nu, n + nu))
    H[:, :n, :n] = s.d2x_dx2
    H[:, :n, n:] = s.d2x_dxdu
    H[:, n:, :n] = np.swapaxes(s.d2x_dxdu, 1, 2)
    H[:, n:, n:] = s.d2x_du2
    if model.dim == 2:
        return y, J, H
    Ji, Hi = _block_in(chart, x, nu, 2)
    Ja, Ha = ambient(chart.out_jac(y), J, Ji, chart.out_hess(y), H, Hi)
    return y, Ja, Ha


def rollout_shapes(model, x0_shape, U_shape, T):
    """Check the shapes of a wrapper's rollout (``U_shape`` None: a model without
    controls, ``T`` steps): returns ``(lead, T)``, the broadcast batch shape and the
    number of steps; ValueError/TypeError naming the argument."""
    from ._validate import as_int
    from .scene import Model

    if not isinstance(model, Model):
        raise TypeError(f"model must be a Model, got {type(model).__name__}")
    if U_shape is None:
        if model.nu:
            raise ValueError(f"U must have shape (..., T, {model.nu}), got None")
        if T is None:
            raise ValueError("T (the number of steps) is needed when U is None")
        U_shape = tuple(x0_shape[:-1]) + (as_int(T, "T", 0), 0)
    x0_shape, U_shape = tuple(x0_shape), tuple(U_shape)
    if len(x0_shape) < 1 or x0_shape[-1] != model.nx:
        raise ValueError(f"x0 must have shape (..., {model.nx}), got {x0_shape}")
    if len(U_shape) < 2 or U_shape[-1] != model.nu:
        raise ValueError(f"U must have shape (..., T, {model.nu}), got {U_shape}")
    if T is not None and as_int(T, "T", 0) != U_shape[-2]:
        raise ValueError(f"T is {T} but U holds {U_shape[-2]} steps")
    try:
        lead = np.broadcast_shapes(x0_shape[:-1], U_shape[:-2])
    except ValueError:
        raise ValueError(
            f"the batch dimensions of x0 {x0_shape} and U {U_shape} do not broadcast"
        ) from None
    return lead, U_shape[-2]


# The wrappers' argument checks of step, ssdf and contact.  ``as_array(a, name)`` is the
# wrapper's conversion to its framework's arrays (TypeError naming ``name``) and
# ``zeros(like, shape)`` makes an array of zeros like ``like``; each function checks and
# converts in the wrappers' order and returns the arguments of their ``_apply``: the
# Smooth function, its input parts, their names and their sizes.


def step_setup(model, x, u, as_array, zeros):
    """:func:`step`'s ``(fn, [x, u], names, sizes)``; ``u`` None (a model without
    controls) is an empty array like ``x``."""
    from .scene import Model

    if not isinstance(model, Model):
        raise TypeError(f"model must be a Model, got {type(model).__name__}")
    x = as_array(x, "x")
    if u is None:
        if model.nu:
            raise ValueError(f"u must have shape (..., {model.nu}), got None")
        u = zeros(x, x.shape[:-1] + (0,))
    u = as_array(u, "u")
    return step_function(model), [x, u], ["x", "u"], [model.nx, model.nu]


def ssdf_setup(cloud, x, eps, as_array):
    """:func:`ssdf`'s ``(fn, [x], names, sizes)``, ``eps`` checked as the NumPy API
    checks it."""
    from .cloud import PointCloud
    from .ssdf import ssdf

    if not isinstance(cloud, PointCloud):
        raise TypeError(f"cloud must be a PointCloud, got {type(cloud).__name__}")
    x = as_array(x, "x")
    ssdf(cloud, np.zeros((0, cloud.dim)), eps)  # checks eps
    return ssdf_function(cloud, eps), [x], ["x"], [cloud.dim]


def contact_setup(cloud_a, pose_a, vel_a, cloud_b, pose_b, vel_b, params, as_array):
    """:func:`contact`'s ``(fn, [pose_a, pose_b, vel_a, vel_b], names, [nq, nq, nv,
    nv])``; ``params`` None: the default :class:`~softcontact.ContactParams`."""
    from .contact import _DEFAULT_PARAMS, ContactParams, _check_clouds

    dim = _check_clouds(cloud_a, cloud_b)
    if params is None:
        params = _DEFAULT_PARAMS
    elif not isinstance(params, ContactParams):
        raise TypeError(f"params must be a ContactParams, got {type(params).__name__}")
    nq, nv = (3, 3) if dim == 2 else (7, 6)
    names = ["pose_a", "pose_b", "vel_a", "vel_b"]
    parts = [as_array(a, n) for a, n in zip((pose_a, pose_b, vel_a, vel_b), names, strict=True)]
    return contact_function(cloud_a, cloud_b, params), parts, names, [nq, nq, nv, nv]


def rollout_forward(model, x0, U):
    """The states ``X`` (B, T + 1, nx) of the rollouts from ``x0`` (B, nx) (quaternions
    within NORM_TOL of unit, normalised) under ``U`` (B, T, nu): ValueError naming
    ``x0`` or ``U`` for non-finite or out-of-range input, DivergenceError for a
    trajectory that diverges."""
    from . import _core

    if not np.isfinite(x0).all():
        raise ValueError("x0 must be finite (NaN or inf found)")
    if not np.isfinite(U).all():
        raise ValueError("U must be finite (NaN or inf found)")
    x0n = state_chart(model).normalized(x0, "x0")
    ro = model.rollout(x0n, U, num_threads=None)
    bad = np.flatnonzero(ro.status != 0)
    if bad.size:
        b = int(bad[0])
        t = int(ro.failed_step[b])
        if ro.status[b] in (_core.SC_EDIVERGED, _core.SC_ENONFINITE):  # finite inputs
            raise model._divergence(ro.states[b, t + 1], step=t, context=f"trajectory {b}")
        bound = model._control_out_of_range(U[b, t]) if model.nu else None
        raise ValueError(
            f"U: trajectory {b}, step {t}: {bound}"
            if bound
            else f"trajectory {b}: step {t} failed (status {int(ro.status[b])})"
        )
    return ro.states


def rollout_vjp(model, x0, U, X, GX):
    """``(gx0 (B, nx), gU (B, T, nu))``: the gradient of ``sum <GX, X>`` over the rollouts
    ``X`` (B, T + 1, nx) of ``x0`` (B, nx) under ``U`` (B, T, nu), by the C core's adjoint
    (sc_rollout_vjp), in ambient coordinates of the given ``x0``."""
    from . import _core
    from ._validate import as_num_threads
    from .ssdf import _run_options

    GX = np.ascontiguousarray(GX, dtype=float)
    gx0, gU, status = _core.rollout_vjp(
        model._cap, X, U, GX, as_num_threads(None), *_run_options("auto", False)
    )
    bad = np.flatnonzero(status != 0)
    if bad.size:  # the states are a completed rollout's, so this is not expected
        b = int(bad[0])
        raise ValueError(f"rollout_vjp: trajectory {b} failed (status {int(status[b])})")
    chart = state_chart(model)
    for a, _ in chart._quats:
        # gx0 is orthogonal to the unit q of X[:, 0]: the normalisation's transpose is 1/|q|
        gx0[:, a : a + 4] /= np.linalg.norm(x0[:, a : a + 4], axis=-1, keepdims=True)
    return gx0, gU


def rollout_second(model, x0, U, GX, cx0, cU):
    """The derivative of :func:`rollout_vjp` (one trajectory) in the direction
    ``(cx0, cU)`` of ``(x0, U)``, and its transpose's action on ``GX``: returns ``(dX
    (T + 1, nx), hx0 (nx), hU (T, nu))`` with ``dX`` the rollout's directional derivative
    (the adjoint of ``gx0, gU`` with respect to ``GX``) and ``(hx0, hU)`` the Hessian of
    ``sum <GX, X>`` applied to ``(cx0, cU)``; from the steps' exact second derivatives."""
    chart = state_chart(model)
    T, nx, nu = U.shape[0], model.nx, model.nu
    X = np.empty((T + 1, nx))
    X[0] = chart.normalized(x0, "x0")
    Js, Hs = [], []
    for t in range(T):
        y, J, H = step_derivatives(model, X[t], U[t] if nu else None, 2)
        X[t + 1] = y
        Js.append(J)
        Hs.append(H)
    dX = np.empty((T + 1, nx))
    dX[0] = chart.normalize_jac(x0) @ cx0
    for t in range(T):
        dX[t + 1] = Js[t] @ np.concatenate([dX[t], cU[t]])
    lam = np.empty((T + 1, nx))
    lam[T] = GX[T]
    for t in range(T - 1, -1, -1):
        lam[t] = GX[t] + Js[t][:, :nx].T @ lam[t + 1]
    nu_next = np.zeros(nx)
    hU = np.empty((T, nu))
    for t in range(T - 1, -1, -1):
        z = np.concatenate([dX[t], cU[t]])
        g = Js[t].T @ nu_next + np.einsum("a,aij,j->i", lam[t + 1], Hs[t], z)
        hU[t] = g[nx:]
        nu_next = g[:nx]
    hx0 = chart.normalize_jac(x0).T @ nu_next + chart.normalize_hvp(x0, lam[0], cx0)
    return dX, hx0, hU


class Smooth:
    """A smooth function ``z (..., nz) -> (..., m)`` of float64 arrays with its exact first
    and second derivatives, evaluated item by item: ``value``, ``jac`` (..., m, nz) and
    ``hess`` (..., m, nz, nz), each taking ``z`` with any leading shape."""

    def __init__(self, nz: int, m: int, item, name: str) -> None:
        self.nz, self.m, self._item, self.name = nz, m, item, name

    def _run(self, z, order):
        """The value and derivatives up to ``order`` (a list) at ``z`` (..., nz)."""
        z = np.asarray(z, dtype=float)
        lead = z.shape[:-1]
        zf = z.reshape(-1, self.nz)
        outs = [np.empty((zf.shape[0], self.m) + (self.nz,) * k) for k in range(order + 1)]
        for b in range(zf.shape[0]):
            r = self._item(zf[b], order)
            for k in range(order + 1):
                outs[k][b] = r[k]
        return [o.reshape(lead + o.shape[1:]) for o in outs]

    def value(self, z):
        return self._run(z, 0)[0]

    def value_and_jac(self, z):
        """``(value, jac)`` from one evaluation of order 1."""
        return tuple(self._run(z, 1))

    def jac(self, z):
        return self._run(z, 1)[1]

    def hess(self, z):
        return self._run(z, 2)[2]


class _StepFunction(Smooth):
    """``z = (x, u) -> x_next``: one batched, threaded :meth:`Model.step` call per
    evaluation, the charts applied per item (3D)."""

    def __init__(self, model) -> None:
        super().__init__(model.nx + model.nu, model.nx, None, "step")
        self.model = model

    def _run(self, z, order):
        m = self.model
        z = np.asarray(z, dtype=float)
        lead = z.shape[:-1]
        zf = z.reshape(-1, self.nz)
        B = zf.shape[0]
        outs = [np.empty((B, self.m) + (self.nz,) * k) for k in range(order + 1)]
        if B == 0:
            return [o.reshape(lead + o.shape[1:]) for o in outs]
        chart = state_chart(m)
        x = chart.normalized(np.ascontiguousarray(zf[:, : m.nx]))
        u = np.ascontiguousarray(zf[:, m.nx :]) if m.nu else None
        s = m.step(x, u, order=order)
        outs[0][:] = s.x_next
        if order >= 1:
            n = chart.nt
            J = np.concatenate([s.dx_dx, s.dx_du], axis=-1)
            if order >= 2:
                H = np.empty((B, n, n + m.nu, n + m.nu))
                H[:, :, :n, :n] = s.d2x_dx2
                H[:, :, :n, n:] = s.d2x_dxdu
                H[:, :, n:, :n] = np.swapaxes(s.d2x_dxdu, 2, 3)
                H[:, :, n:, n:] = s.d2x_du2
            if m.dim == 2:  # the charts are the identity
                outs[1][:] = J
                if order >= 2:
                    outs[2][:] = H
            else:
                for b in range(B):
                    y = s.x_next[b]
                    Ji, Hi = _block_in(chart, zf[b, : m.nx], m.nu, order)
                    if order == 1:
                        outs[1][b] = ambient(chart.out_jac(y), J[b], Ji)
                    else:
                        outs[1][b], outs[2][b] = ambient(
                            chart.out_jac(y), J[b], Ji, chart.out_hess(y), H[b], Hi
                        )
        return [o.reshape(lead + o.shape[1:]) for o in outs]


def step_function(model) -> Smooth:
    """``z = (x, u) -> x_next`` of :meth:`Model.step`, in ambient coordinates."""
    return _StepFunction(model)


def contact_function(cloud_a, cloud_b, params) -> Smooth:
    """``z = (pose_a, pose_b, vel_a, vel_b) -> (wrench_a, wrench_b)`` of
    :func:`softcontact.contact`, in ambient coordinates."""
    from .contact import contact

    dim = cloud_a.dim
    chart = chart_of(dim, 2)
    nqb, nvb = chart.nqb, chart.nvb

    def item(z, order):
        zh = chart.normalized(z, "pose_a and pose_b")
        r = contact(
            cloud_a,
            zh[:nqb],
            zh[2 * nqb : 2 * nqb + nvb],
            cloud_b,
            zh[nqb : 2 * nqb],
            zh[2 * nqb + nvb :],
            params,
            order=order,
            num_threads=1,
        )
        w = np.concatenate([r.wrench_a, r.wrench_b])
        if order == 0:
            return (w,)
        if dim == 2:  # the charts are the identity
            return (w, r.jacobian) if order == 1 else (w, r.jacobian, r.hessian)
        Ji = chart.in_jac(z)
        if order == 1:
            return w, r.jacobian @ Ji
        return (w, *ambient(np.eye(2 * nvb), r.jacobian, Ji, None, r.hessian, chart.in_hess(z)))

    return Smooth(chart.na, 2 * nvb, item, "contact")


def ssdf_function(cloud, eps) -> Smooth:
    """``x -> phi`` of :func:`softcontact.ssdf` (m = 1)."""
    from .ssdf import ssdf

    D = cloud.dim

    class _S(Smooth):
        def _run(self, z, order):  # the SSDF kernel is batched itself
            z = np.asarray(z, dtype=float)
            r = ssdf(cloud, z, eps, order=order)
            return [np.expand_dims(r[k], -(k + 1)) for k in range(order + 1)]

    return _S(D, 1, None, "ssdf")
