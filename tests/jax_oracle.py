"""A JAX implementation of exactly softcontact's step: an independent oracle and competitor.

``JaxModel.from_scene(scene, dt)`` reads a :class:`softcontact.Scene` (its bodies, contact
pairs with their :class:`~softcontact.ContactParams`, supports and gravity) and implements,
from ``docs/method.md`` -- not from the C kernels -- the same model as
``scene.build(dt).step``:

* SSDF ``phi(y) = sum_i w_i n_i.(y - p_i)``, ``w = softmax(log a - |y - p|^2 / eps)``;
  evaluated relative to the dominant sample ``p*`` (``d_i - d_* = |p_i - p*|^2 - 2 (y -
  p*).(p_i - p*)``), so the exponents are linear in ``y`` and their differences are formed
  from sample differences, not from large ``|y - p|^2 / eps`` terms;
* the separation field of every contact pair (each sample against the other body's SSDF),
  the soft minimum ``m``, the distribution ``pi``, the normal force ``k sp_b(-m) s_b(-m)``,
  damping ``-c s_b(-m) (nu . u) nu`` of each sample's normal velocity and smooth Coulomb
  friction on the tangential velocity (``nu = G / sqrt(|G|^2 + 1e-300)``), each sample
  force acting at its world point on its owner and, opposite, on the other body (torques
  about the centres of mass; 3D torques in the body frame);
* gravity, actuation (2D ``(fx, fy, tau)``, 3D ``(f world, tau body)``), planar support
  friction (load ``mu_s m g / k`` per support sample), the gyroscopic term ``w x I w``;
* semi-implicit Euler: ``v+ = v + h M^-1 (Q - (0, w x I w))``, ``q+ = q (+) h v+``
  (3D rotations ``normalize(q Exp(h w+))``); kinematic bodies ``v+ = u``; static bodies
  are not in the state;
* or (``integrator="implicit"``) the linearly implicit step with lagged friction:
  ``M (v+ - v) = h (Q(x; w+) - (0, w x I w))`` with ``w+`` the new velocities (the
  kinematic bodies' controls), where ``Q(x; w)`` takes the damping and the friction's
  numerators (contact ``t_k``, support point velocities) at ``w`` and the friction's
  normalizers at the state's velocities -- affine in ``w``, so one linear solve with its
  Jacobian (``jax.jacfwd``).

It is **dense**: every pair evaluates the full ``I x J`` (and ``J x I``) matrix of squared
distances, ``vmap``-ed over the samples -- the O(I J)-memory formulation the paper's
authors wrote in JAX -- unlike softcontact's C kernels, which stream (O(I + J) memory).
Everything is ``jax.jit``-compiled, in float64 (``jax_enable_x64`` is switched on at
import).

Derivatives are not written by hand: they are JAX's automatic derivatives of the map

    F(dx, du) = step(x (+) dx, u + du) (-) step(x, u)

at 0 -- the definition ``Model.step`` documents -- with ``(+)``/``(-)`` those of
:meth:`softcontact.Model.retract` / :meth:`~softcontact.Model.difference` (translations in
the world, rotations on the right, velocities added; 3D quaternion exponential and
logarithm written smoothly through the identity).  ``step_d1`` uses ``jax.jacfwd``;
``step_d2`` ``jax.jacfwd(jax.jacrev(F))`` (the Hessian, with the Jacobian as its auxiliary
output; ``hessian="fwd-fwd"`` for ``jacfwd(jacfwd)``, quicker to compile).  The contact
force uses ``grad phi`` (``jax.grad`` of the SSDF), so the second derivatives
differentiate the SSDF three times -- all by nested autodiff.

Layouts match :class:`softcontact.StepResult`: ``A = dx_dx`` (n, n), ``B = dx_du``
(n, nu), ``d2x_dx2`` (n, n, n), ``d2x_dxdu`` (n, n, nu), ``d2x_du2`` (n, nu, nu) with
``n = 2 nv`` (tangent coordinates: all moving bodies' poses, then their velocities).

    from jax_oracle import JaxModel                   # tests/ on sys.path
    from softcontact.tasks import push_t
    task = push_t.make(seed=0)
    jm = JaxModel.from_scene(task.scene, task.dt)     # the Scene behind task.model
    x1 = jm.step(x, u)
    x1, A, B = jm.step_d1(x, u)
    x1, A, B, Hxx, Hxu, Huu = jm.step_d2(x, u)
    X = jm.rollout(X0, U)                   # (B, nx), (B, T, nu) -> (B, T + 1, nx)

The scene's private ``_bodies`` and ``_resolved_pairs`` are read (this module is a test oracle and a
benchmark, not part of the library).  Agreement with ``Model.step`` (both SSDF paths,
pruned and dense): ~1e-13 relative in every quantity (``tests/test_jax_oracle.py``).
Cost on push-T, one core: a step ~7x softcontact's order 0, first derivatives ~40x its
order 1, second derivatives ~500x its order 2 -- dense autodiff does O(n^2 I J) work
where the C jets do O(I J) SSDF work plus O((I + J) n^2).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)

__all__ = ["JaxModel"]

_TINY = 1e-300  # nu = G / sqrt(|G|^2 + tiny): the friction normal
_LOG_SMALL2 = 1e-16  # |v|^2 below which the quaternion log uses its series


# ------------------------------------------------------------------------------------------
# rotations
# ------------------------------------------------------------------------------------------
def _half_angle(s):
    """C(s) = cos(sqrt(s)/2), S(s) = sin(sqrt(s)/2)/sqrt(s), smooth through s = 0 (series
    below s = 1), so that Exp(a) = (C(|a|^2), S(|a|^2) a) has derivatives of every order
    at a = 0."""
    small = s < 1.0
    ss = jnp.where(small, s, 0.0)
    cs, sn, pk = 0.0, 0.0, 1.0
    ck, ak = 0.5, 1.0
    for k in range(16):
        sn = sn + ck * pk
        cs = cs + ak * pk
        pk = pk * ss
        ck = ck * (-1.0 / (4.0 * (2 * k + 2) * (2 * k + 3)))
        ak = ak * (-1.0 / (4.0 * (2 * k + 1) * (2 * k + 2)))
    t = 0.5 * jnp.sqrt(jnp.where(small, 1.0, s))
    return jnp.where(small, cs, jnp.cos(t)), jnp.where(small, sn, jnp.sin(t) / (2.0 * t))


def _quat_exp(a):
    C, S = _half_angle(a @ a)
    return jnp.concatenate([C[None], S * a])


def _quat_mul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return jnp.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    )


def _quat_conj(q):
    return q * jnp.array([1.0, -1.0, -1.0, -1.0])


def _quat_log(q):
    """Rotation vector of a unit quaternion (w >= 0 hemisphere), smooth through identity."""
    q = jnp.where(q[0] < 0, -q, q)
    w, v = q[0], q[1:]
    s2 = v @ v
    small = s2 < _LOG_SMALL2
    s = jnp.sqrt(jnp.where(small, 1.0, s2))
    big = 2.0 * jnp.arctan2(s, w) / s
    series = (2.0 / w) * (1.0 - s2 / (3.0 * w * w))
    return jnp.where(small, series, big) * v


def _quat_mat(q):
    w, x, y, z = q / jnp.linalg.norm(q)
    return jnp.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _frame(pose, D):
    """(R, t) of a pose: 2D (x, y, theta), 3D (p, quaternion w x y z)."""
    if D == 2:
        c, s = jnp.cos(pose[2]), jnp.sin(pose[2])
        return jnp.array([[c, -s], [s, c]]), pose[:2]
    return _quat_mat(pose[3:]), pose[:3]


def _cross(a, b):
    """2D: the scalar a0 b1 - a1 b0 (batched over leading axes); 3D: the vector product."""
    if a.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return jnp.cross(a, b)


# ------------------------------------------------------------------------------------------
# SSDF, separation, soft-minimum contact (dense)
# ------------------------------------------------------------------------------------------
def _ssdf(y, P, N, loga, eps):
    """phi of one query y (body frame) against the cloud (P, N, log a)."""
    d = jnp.sum((y - P) ** 2, axis=-1)
    # the dominant sample, as a one-hot product (constant data: argmax has no derivative)
    ps = jax.nn.one_hot(jnp.argmax(lax.stop_gradient(loga - d / eps)), P.shape[0]) @ P
    Q = P - ps
    yr = y - ps
    s = loga - (jnp.sum(Q * Q, axis=-1) - 2.0 * (Q @ yr)) / eps
    w = jnp.exp(s - lax.stop_gradient(jnp.max(s)))
    h = N @ yr - jnp.sum(N * Q, axis=-1)
    return jnp.sum(w * h) / jnp.sum(w)


_ssdf_vg = jax.vmap(jax.value_and_grad(_ssdf), in_axes=(0, None, None, None, None))


def _point_velocity(X, R, t, vel, D):
    r = X - t
    if D == 2:
        return vel[:2] + vel[2] * jnp.stack([-r[:, 1], r[:, 0]], axis=1)
    return vel[:3] + jnp.cross(R @ vel[3:], r)


def _wrench(X, f, R, t, D):
    """Generalized force of point forces f (K, D) at world points X on a body (R, t)."""
    r = X - t
    F = jnp.sum(f, axis=0)
    tau = jnp.sum(_cross(r, f), axis=0)
    if D == 2:
        return jnp.concatenate([F, tau[None]])
    return jnp.concatenate([F, R.T @ tau])


def _pair_wrenches(ca, cb, prm, own_a, pose_a, vel_a, pose_b, vel_b, D, wel_a=None, wel_b=None):
    """(wrench on A, wrench on B, m, min Phi) of the soft-minimum contact model; with
    ``wel_a``, ``wel_b`` (the implicit step's new velocities) the damping and the
    friction's numerator take those, the friction's normalizer the state's ``vel``."""
    eps, eps_c, k, beta, c, mu, vs = prm
    Ra, ta = _frame(pose_a, D)
    Rb, tb = _frame(pose_b, D)
    xa = ca[0] @ Ra.T + ta
    xb = cb[0] @ Rb.T + tb
    phi_a, g_a = _ssdf_vg((xa - tb) @ Rb, *cb, eps)
    phi_b, g_b = _ssdf_vg((xb - ta) @ Ra, *ca, eps)
    Phi = jnp.concatenate([phi_a, phi_b])
    G = jnp.concatenate([g_a @ Rb.T, g_b @ Ra.T])
    X = jnp.concatenate([xa, xb])
    # a half-space (one sample) against a cloud: its own sample takes no part
    na, nb = xa.shape[0], xb.shape[0]
    keep = slice(0, na) if nb == 1 and na > 1 else slice(1, None) if na == 1 and nb > 1 else None
    if keep is not None:
        Phi, G, X, own_a = Phi[keep], G[keep], X[keep], own_a[keep]
    m = -eps_c * jax.scipy.special.logsumexp(-Phi / eps_c)
    pi = jax.nn.softmax(-Phi / eps_c)
    z = -m / beta
    sp = beta * jax.nn.softplus(z)
    sg = jax.nn.sigmoid(z)
    lam = k * sp * sg
    va = _point_velocity(X, Ra, ta, vel_a, D)
    vb = _point_velocity(X, Rb, tb, vel_b, D)
    u = jnp.where(own_a[:, None], va - vb, vb - va)
    nu = G / jnp.sqrt(jnp.sum(G * G, axis=1, keepdims=True) + _TINY)
    nuu = jnp.sum(nu * u, axis=1, keepdims=True)
    tg = u - nuu * nu
    norm = jnp.sqrt(jnp.sum(tg * tg, axis=1, keepdims=True) + vs * vs)
    if wel_a is not None:
        wa = _point_velocity(X, Ra, ta, wel_a, D)
        wb = _point_velocity(X, Rb, tb, wel_b, D)
        u = jnp.where(own_a[:, None], wa - wb, wb - wa)
        nuu = jnp.sum(nu * u, axis=1, keepdims=True)
        tg = u - nuu * nu
    fric = tg / norm
    f = pi[:, None] * (lam * G - c * sg * nuu * nu - mu * lam * fric)
    fa = jnp.where(own_a[:, None], f, -f)  # the force on A at each point
    return _wrench(X, fa, Ra, ta, D), _wrench(X, -fa, Rb, tb, D), m, jnp.min(Phi)


# ------------------------------------------------------------------------------------------
# the model
# ------------------------------------------------------------------------------------------
def _jit(fn, compiler_options=None):
    if compiler_options:
        try:
            return jax.jit(fn, compiler_options=compiler_options)
        except TypeError:  # an older JAX without jit(compiler_options=...): compile as usual
            pass
    return jax.jit(fn)


@dataclass(frozen=True)
class _JBody:
    kind: str
    j: int  # index among the moving bodies, -1 for static
    uo: int  # first control, -1 if none
    mass: float
    inertia: np.ndarray  # (1, 1) in 2D, (3, 3) in 3D
    inertia_inv: np.ndarray
    cloud: tuple  # (P, N, log a) in the body frame
    pose: np.ndarray  # static bodies
    support: tuple | None  # (points, weights, mu, g, vs)


class JaxModel:
    """Dense, jit-compiled, float64 JAX version of ``scene.build(dt)`` (module docstring).

    Attributes: ``dim``, ``dt``, ``nq``, ``nv``, ``nx``, ``nu``, ``n = 2 nv``; jitted
    ``step``, ``step_d1``, ``step_d2``, ``rollout``; ``contact_info(x)`` (per pair: soft
    depth m and min Phi).
    """

    def __init__(
        self,
        dim,
        dt,
        gravity,
        bodies,
        pairs,
        include_contacts=True,
        compiler_options=None,
        hessian="fwd-rev",
        integrator="euler",
    ):
        if hessian not in ("fwd-rev", "fwd-fwd"):
            raise ValueError(f"hessian must be 'fwd-rev' or 'fwd-fwd', got {hessian!r}")
        if integrator not in ("euler", "implicit"):
            raise ValueError(f"integrator must be 'euler' or 'implicit', got {integrator!r}")
        self.hessian, self.integrator = hessian, integrator
        self.dim, self.dt = int(dim), float(dt)
        self.gravity = np.asarray(gravity, dtype=float)
        self.bodies = bodies
        self.pairs = pairs if include_contacts else []
        self.groups = self._group_pairs(self.pairs)
        nqb, nvb = (3, 3) if self.dim == 2 else (7, 6)
        nmove = sum(b.kind != "static" for b in bodies)
        self.nqb, self.nvb = nqb, nvb
        self.nq, self.nv = nmove * nqb, nmove * nvb
        self.nx, self.n = self.nq + self.nv, 2 * self.nv
        self.nu = sum(nvb for b in bodies if b.uo >= 0)
        jit = functools.partial(_jit, compiler_options=compiler_options)
        self.step = jit(self._step)
        self.step_d1 = jit(self._step_d1)
        self.step_d2 = jit(self._step_d2)
        self.rollout = jit(jax.vmap(self._rollout1))
        self.contact_info = jit(self._contact_info)

    @classmethod
    def from_scene(
        cls,
        scene,
        dt,
        include_contacts=True,
        compiler_options=None,
        hessian="fwd-rev",
        integrator="euler",
    ):
        """Read ``scene`` (a :class:`softcontact.Scene`); ``include_contacts=False`` drops
        every contact pair; ``compiler_options`` go to ``jax.jit`` (e.g.
        ``{"xla_backend_optimization_level": 0}``: about half the compile time, several
        times slower to run); ``hessian``: ``"fwd-rev"`` (``jacfwd(jacrev)``, as
        ``jax.hessian``, the faster to run) or ``"fwd-fwd"`` (``jacfwd(jacfwd)``, about
        20 % faster to compile, 25 % slower to run)."""
        D = scene.dim
        bodies, j, uo = [], 0, 0
        for b in scene._bodies:
            cl = b.cloud
            cloud = (
                np.array(cl.points, dtype=float),
                np.array(cl.normals, dtype=float),
                np.log(np.array(cl.weights, dtype=float)),
            )
            dyn = b.kind == "dynamic"
            shape = (1, 1) if D == 2 else (3, 3)
            inertia = np.array(b.inertia, dtype=float).reshape(shape) if dyn else np.zeros(shape)
            has_u = b.kind == "kinematic" or (dyn and b.actuated)
            sup = None
            if b.support is not None:
                pts, wts, mu, g, vs = b.support
                sup = (
                    np.array(pts, dtype=float),
                    np.array(wts, dtype=float),
                    float(mu),
                    float(g),
                    float(vs),
                )
            bodies.append(
                _JBody(
                    kind=b.kind,
                    j=j if b.kind != "static" else -1,
                    uo=uo if has_u else -1,
                    mass=float(b.mass),
                    inertia=inertia,
                    inertia_inv=np.linalg.inv(inertia) if dyn else np.zeros(shape),
                    cloud=cloud,
                    pose=np.array(b.pose, dtype=float),
                    support=sup,
                )
            )
            j += b.kind != "static"
            uo += (3 if D == 2 else 6) if has_u else 0
        pairs = []
        for a, c, p in scene._resolved_pairs(dt, integrator):
            own_a = np.arange(len(scene._bodies[a].cloud) + len(scene._bodies[c].cloud)) < len(
                scene._bodies[a].cloud
            )
            pairs.append((a, c, tuple(float(v) for v in p._astuple()), own_a))
        return cls(
            D,
            dt,
            scene.gravity,
            bodies,
            pairs,
            include_contacts,
            compiler_options,
            hessian,
            integrator,
        )

    def _group_pairs(self, pairs):
        """Pairs of one body with several static bodies of equal sample counts (the walls
        of push-T) are evaluated as one vmapped pair: less to compile, same result.
        Returns [(a, b, (params, own_a))] for a pair of moving bodies and [(mover, None,
        (clouds, poses, params, own_a))] for a mover against stacked static bodies."""
        groups, seen = [], {}
        for k, (a, c, _, _) in enumerate(pairs):
            ka, kc = self.bodies[a].kind, self.bodies[c].kind
            if kc == "static" or ka == "static":
                mover, other = (a, c) if kc == "static" else (c, a)
                key = (mover, len(self.bodies[other].cloud[0]))
                if key in seen:
                    groups[seen[key]][2].append(k)
                    continue
                seen[key] = len(groups)
                groups.append((mover, None, [k]))
            else:
                groups.append((a, c, [k]))
        out = []
        for mover, other, ks in groups:
            if other is not None:
                out.append((mover, other, pairs[ks[0]][2:]))
                continue
            # stacked static partners, the mover as body A
            st = [pairs[k][1] if pairs[k][0] == mover else pairs[k][0] for k in ks]
            clouds = tuple(
                jnp.stack([jnp.asarray(self.bodies[i].cloud[f]) for i in st]) for f in range(3)
            )
            poses = jnp.stack([jnp.asarray(self.bodies[i].pose) for i in st])
            prms = jnp.array([pairs[k][2] for k in ks])
            na, nb = len(self.bodies[mover].cloud[0]), len(self.bodies[st[0]].cloud[0])
            out.append((mover, None, (clouds, poses, prms, np.arange(na + nb) < na)))
        return out

    # -- state helpers ------------------------------------------------------------------
    def _body_state(self, x, b):
        if b.j < 0:
            return jnp.asarray(b.pose), jnp.zeros(self.nvb)
        pose = x[b.j * self.nqb : (b.j + 1) * self.nqb]
        if self.dim == 3:
            pose = jnp.concatenate([pose[:3], pose[3:] / jnp.linalg.norm(pose[3:])])
        vel = x[self.nq + b.j * self.nvb : self.nq + (b.j + 1) * self.nvb]
        return pose, vel

    def retract(self, x, dx):
        """``x (+) dx`` (Model.retract)."""
        out = []
        nqb, nvb = self.nqb, self.nvb
        for j in range(self.nv // nvb):
            q, d = x[j * nqb : (j + 1) * nqb], dx[j * nvb : (j + 1) * nvb]
            if self.dim == 2:
                out.append(q + d)
            else:
                qq = _quat_mul(q[3:], _quat_exp(d[3:]))
                out.append(jnp.concatenate([q[:3] + d[:3], qq / jnp.linalg.norm(qq)]))
        return jnp.concatenate(out + [x[self.nq :] + dx[self.nv :]])

    def difference(self, x1, x0):
        """``x1 (-) x0`` (Model.difference)."""
        out = []
        nqb = self.nqb
        for j in range(self.nv // self.nvb):
            a, b = x1[j * nqb : (j + 1) * nqb], x0[j * nqb : (j + 1) * nqb]
            if self.dim == 2:
                out.append(a - b)
            else:
                out.append(
                    jnp.concatenate([a[:3] - b[:3], _quat_log(_quat_mul(_quat_conj(b[3:]), a[3:]))])
                )
        return jnp.concatenate(out + [x1[self.nq :] - x0[self.nq :]])

    # -- forces and the step --------------------------------------------------------------
    def _contact_info(self, x):
        """(m, min Phi) of every pair at state x, (npair, 2)."""
        out = []
        for a, c, prm, own_a in self.pairs:
            ba, bb = self.bodies[a], self.bodies[c]
            pa, va = self._body_state(x, ba)
            pb, vb = self._body_state(x, bb)
            _, _, m, pmin = _pair_wrenches(ba.cloud, bb.cloud, prm, own_a, pa, va, pb, vb, self.dim)
            out.append(jnp.stack([m, pmin]))
        return jnp.stack(out) if out else jnp.zeros((0, 2))

    def _forces(self, x, wv=None):
        """{body index: generalized force} of the dynamic bodies at state x; with wv (the
        moving bodies' velocities, laid out as the state's) the implicit step's
        velocity-dependent forces: damping and the friction numerators at wv, the
        friction normalizers at x's velocities (affine in wv)."""
        D, nvb = self.dim, self.nvb
        states = [self._body_state(x, b) for b in self.bodies]
        wels = [
            None if wv is None else (jnp.zeros(nvb) if b.j < 0 else wv[b.j * nvb : (b.j + 1) * nvb])
            for b in self.bodies
        ]
        Q = {}
        for i, b in enumerate(self.bodies):
            if b.kind == "dynamic":
                Q[i] = jnp.zeros(nvb).at[:D].set(b.mass * self.gravity)
        for a, c, data in self.groups:
            ba = self.bodies[a]
            if c is not None:  # a pair of two moving bodies
                prm, own_a = data
                bb = self.bodies[c]
                Wa, Wb, _, _ = _pair_wrenches(
                    ba.cloud, bb.cloud, prm, own_a, *states[a], *states[c], D, wels[a], wels[c]
                )
                if bb.kind == "dynamic":
                    Q[c] = Q[c] + Wb
            else:  # the mover against a stack of static bodies
                clouds, poses, prms, own_a = data
                Wa = jnp.sum(
                    jax.vmap(
                        lambda cb, prm, pose, own_a=own_a, a=a: _pair_wrenches(
                            self.bodies[a].cloud,
                            cb,
                            prm,
                            own_a,
                            *states[a],
                            pose,
                            jnp.zeros(nvb),
                            D,
                            wels[a],
                            None if wv is None else jnp.zeros(nvb),
                        )[0]
                    )(clouds, prms, poses),
                    axis=0,
                )
            if ba.kind == "dynamic":
                Q[a] = Q[a] + Wa
        for i, b in enumerate(self.bodies):
            if b.support is None:
                continue
            pts, wts, mu, g, vs = b.support
            pose, vel = states[i]
            R, _ = _frame(pose, 2)
            r = pts @ R.T
            vp = vel[:2] + vel[2] * jnp.stack([-r[:, 1], r[:, 0]], axis=1)
            load = -mu * b.mass * g * wts / jnp.sqrt(jnp.sum(vp * vp, axis=1) + vs * vs)
            if wels[i] is not None:
                vp = wels[i][:2] + wels[i][2] * jnp.stack([-r[:, 1], r[:, 0]], axis=1)
            f = load[:, None] * vp
            Q[i] = Q[i] + jnp.concatenate([jnp.sum(f, axis=0), jnp.sum(_cross(r, f))[None]])
        return Q

    def _acceleration(self, b, q, vel):
        """M^-1 (q - gyroscopic term) of dynamic body b."""
        if self.dim == 2:
            return jnp.concatenate([q[:2] / b.mass, q[2:] / b.inertia[0, 0]])
        w = vel[3:]
        tau = q[3:] - jnp.cross(w, b.inertia @ w)
        return jnp.concatenate([q[:3] / b.mass, b.inertia_inv @ tau])

    def _new_velocities(self, x, u):
        """The moving bodies' v+ (laid out as the state's velocities)."""
        h, nvb = self.dt, self.nvb
        v = x[self.nq :]
        moving = [b for b in self.bodies if b.kind != "static"]
        # the actuated bodies' generalized forces
        ctl = jnp.concatenate(
            [
                u[b.uo : b.uo + nvb] if b.uo >= 0 and b.kind == "dynamic" else jnp.zeros(nvb)
                for b in moving
            ]
        )
        kin = jnp.array([b.kind == "kinematic" for b in moving for _ in range(nvb)])
        # the kinematic bodies' new velocities are their controls
        w0 = jnp.concatenate(
            [
                u[b.uo : b.uo + nvb] if b.kind == "kinematic" else v[b.j * nvb : (b.j + 1) * nvb]
                for b in moving
            ]
        )
        if self.integrator == "euler":
            Q = self._forces(x)
        else:
            # v+ = w0 + d (d zero on kinematic bodies): M d = h (Q(x, w0 + d) + act - gyro),
            # with Q affine in its velocities: one solve with its Jacobian
            def q_of(wv):
                Q = self._forces(x, wv)
                return jnp.concatenate(
                    [
                        Q[i] if b.kind == "dynamic" else jnp.zeros(nvb)
                        for i, b in enumerate(self.bodies)
                        if b.kind != "static"
                    ]
                )

            q0 = q_of(w0)
            Jq = jax.jacfwd(q_of)(w0)
            Mm = jnp.zeros((self.nv, self.nv))
            rhs = jnp.zeros(self.nv)
            for b in moving:
                sl = slice(b.j * nvb, (b.j + 1) * nvb)
                vel = v[sl]
                if b.kind == "dynamic":
                    blk = (
                        jnp.diag(jnp.array([b.mass] * self.dim + [b.inertia[0, 0]]))
                        if (self.dim == 2)
                        else jnp.block(
                            [
                                [b.mass * jnp.eye(3), jnp.zeros((3, 3))],
                                [jnp.zeros((3, 3)), jnp.asarray(b.inertia)],
                            ]
                        )
                    )
                    gyro = (
                        jnp.zeros(nvb)
                        if self.dim == 2
                        else jnp.concatenate(
                            [jnp.zeros(3), jnp.cross(vel[3:], b.inertia @ vel[3:])]
                        )
                    )
                    Mm = Mm.at[sl, sl].set(blk)
                    rhs = rhs.at[sl].set(h * (q0[sl] + ctl[sl] - gyro))
                else:
                    Mm = Mm.at[sl, sl].set(jnp.eye(nvb))
            A = Mm - h * jnp.where(kin[:, None] | kin[None, :], 0.0, Jq)
            return w0 + jnp.linalg.solve(A, rhs)
        out = []
        for i, b in enumerate(self.bodies):
            if b.kind == "static":
                continue
            _, vel = self._body_state(x, b)
            if b.kind == "kinematic":
                out.append(u[b.uo : b.uo + nvb])
            else:
                q = Q[i] + (u[b.uo : b.uo + nvb] if b.uo >= 0 else 0.0)
                out.append(vel + h * self._acceleration(b, q, vel))
        return jnp.concatenate(out)

    def _step(self, x, u):
        D, h, nvb = self.dim, self.dt, self.nvb
        states = [self._body_state(x, b) for b in self.bodies]
        vnew = self._new_velocities(x, u)
        poses_n, vels_n = [], []
        for i, b in enumerate(self.bodies):
            if b.kind == "static":
                continue
            pose, _ = states[i]
            vn = vnew[b.j * nvb : (b.j + 1) * nvb]
            if D == 2:
                pn = pose + h * vn
            else:
                qq = _quat_mul(pose[3:], _quat_exp(h * vn[3:]))
                pn = jnp.concatenate([pose[:3] + h * vn[:3], qq / jnp.linalg.norm(qq)])
            poses_n.append(pn)
            vels_n.append(vn)
        return jnp.concatenate(poses_n + vels_n)

    def _chart_map(self, x, u):
        """z = (dx, du) -> step(x (+) dx, u + du) (-) step(x, u), and step(x, u)."""
        x1 = self._step(x, u)
        n = self.n

        def F(z):
            return self.difference(self._step(self.retract(x, z[:n]), u + z[n:]), x1)

        return F, x1, jnp.zeros(n + self.nu)

    def _step_d1(self, x, u):
        F, x1, z0 = self._chart_map(x, u)
        J = jax.jacfwd(F)(z0)
        return x1, J[:, : self.n], J[:, self.n :]

    def _step_d2(self, x, u):
        F, x1, z0 = self._chart_map(x, u)

        inner = jax.jacrev if self.hessian == "fwd-rev" else jax.jacfwd

        def jac(z):
            Jz = inner(F)(z)
            return Jz, Jz

        H, J = jax.jacfwd(jac, has_aux=True)(z0)
        n = self.n
        return (x1, J[:, :n], J[:, n:], H[:, :n, :n], H[:, :n, n:], H[:, n:, n:])

    def _rollout1(self, x0, U):
        def body(x, u):
            xn = self._step(x, u)
            return xn, xn

        _, xs = lax.scan(body, x0, U)
        return jnp.concatenate([x0[None], xs], axis=0)
