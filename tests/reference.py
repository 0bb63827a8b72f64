"""Independent pure-NumPy reference (test oracle) for the soft signed distance function.

Nothing here imports ``softcontact``: the oracle is written straight from the formulas of
``docs/method.md`` section 2 so that the C kernel can be checked against it.

Definitions (cloud of ``I`` samples ``p_i`` with unit normals ``n_i`` and weights ``a_i > 0``,
query ``x``, temperature ``eps > 0``, all float64)::

    d_i = |x - p_i|^2
    w_i = a_i exp(-d_i/eps) / sum_j a_j exp(-d_j/eps)
    h_i = n_i . (x - p_i)
    phi = sum_i w_i h_i = E_w[h]

Notation used below (``E`` is the expectation under ``w``, ``g = 2/eps``)::

    p_bar = E[p],  n_bar = E[n]
    r_i = p_i - p_bar        (centred positions;   E[r] = 0)
    m_i = n_i - n_bar        (centred normals;     E[m] = 0)
    e_i = h_i - phi          (centred plane values; E[e] = 0)
    C   = E[r r^T]           (covariance of p)
    t   = E[e r]             (covariance of h with p)
    K   = E[r m^T]           (K_ab = E[r_a m_b])

The differentiation rule. ``d/dx_a log w_i = -(2/eps)(x - p_i)_a + (2/eps) E[(x - p)_a]
= g r_ia``, hence for any per-sample ``f_i(x)``::

    d/dx_a E[f] = E[d f/dx_a] + g E[f r_a]                              (R)

and, as special cases used below,
``d p_bar_a/dx_b = g C_ab``, ``d r_ia/dx_b = -g C_ab``, ``d n_bar_a/dx_b = g K_ba``,
``d h_i/dx_a = n_ia``, ``d e_i/dx_a = n_ia - grad_a = m_ia - g t_a``.

Gradient (R with f = h; E[h r] = E[e r] because E[r] = 0)::

    grad_a = n_bar_a + g t_a

Hessian. ``d t_a/dx_b = E[(m_b - g t_b) r_a] + E[e (-g C_ab)] + g E[e r_a r_b]
= K_ab + g E[e r_a r_b]`` (E[r] = 0 and E[e] = 0 kill the middle terms), so::

    H_ab = g (K_ab + K_ba) + g^2 E[e r_a r_b]

(the formula of docs/method.md).

Third derivative (derived here; T_abc = d H_ab / dx_c).

* ``K_ab = E[r_a n_b]`` (as E[r] = 0).  By (R):
  ``d K_ab/dx_c = E[-g C_ac n_b] + g E[r_a n_b r_c] = -g C_ac n_bar_b + g E[r_a r_c n_b]``
  and ``E[r_a r_c n_b] = E[r_a r_c m_b] + C_ac n_bar_b``, so
  ``d K_ab/dx_c = g E[r_a r_c m_b]``.
* ``S_ab = E[e r_a r_b]``.  By (R):
  ``d S_ab/dx_c = E[(m_c - g t_c) r_a r_b] - g C_ac E[e r_b] - g C_bc E[e r_a]
  + g E[e r_a r_b r_c]``
  ``= E[r_a r_b m_c] - g (t_a C_bc + t_b C_ac + t_c C_ab) + g E[e r_a r_b r_c]``.

Hence, with ``N_abc = E[r_a r_b m_c]`` (symmetric in a, b) and ``Q_abc = E[e r_a r_b r_c]``::

    T_abc = g^2 (N_abc + N_bca + N_cab)                 (m in each of the three slots)
          - g^3 (t_a C_bc + t_b C_ca + t_c C_ab)
          + g^3 Q_abc

Every term is a sum over the three distinct index placements of a tensor that is symmetric in
the remaining pair, so ``T`` is fully symmetric analytically (it is g^3 times the fourth
joint cumulant of (h, p_a, p_b, p_c) plus g^2 times the symmetrised third joint cumulant of
(p, p, n)).  All moments are weighted sums of *centred* quantities (``e``, ``r``, ``m``);
never ``E[h p] - E[h] E[p]``, which cancels catastrophically at small eps.  Positions are
taken relative to the query (``v_i = p_i - x``, ``r_i = v_i - E[v]``), which keeps the
rounding of ``r`` proportional to the query's distance to the cloud, not to ``|p|``.

Floating-point symmetry: sums like ``sum_i (w e r_a) r_b`` and ``sum_i (w e r_b) r_a`` differ
by rounding, so the Hessian and the third derivative are symmetrised explicitly: each tensor
is averaged over all index permutations and then every entry is copied from its canonical
(sorted-index) entry, which makes the outputs *exactly* symmetric.

Memory: queries are processed in chunks so that the largest per-chunk array
(chunk x I x D float64) stays under ``max_bytes`` (32 MiB by default); the I x M matrix is
never formed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = [
    "DEFAULT_MAX_BYTES",
    "box_sdf_ref",
    "numpy_ssdf_vectorized",
    "ssdf_ref",
    "symmetrize",
]

DEFAULT_MAX_BYTES = 32 * 2**20


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _canonical_index(dim: int, order: int) -> np.ndarray:
    """Flat index, for every multi-index of a ``dim**order`` tensor, of its sorted version."""
    idx = np.empty(dim**order, dtype=np.intp)
    for flat, multi in enumerate(itertools.product(range(dim), repeat=order)):
        idx[flat] = np.ravel_multi_index(tuple(sorted(multi)), (dim,) * order)
    return idx


def symmetrize(t: np.ndarray, order: int) -> np.ndarray:
    """Exactly symmetric version of the trailing ``order`` axes of ``t`` (shape (..., D,...,D)).

    The tensor is first averaged over all permutations of its last ``order`` axes (the analytic
    tensor is symmetric, so this only averages rounding), then each entry is overwritten by the
    entry at its sorted multi-index, so that permuted entries are bitwise equal.
    """
    if order < 2:
        return t
    lead = t.ndim - order
    perms = list(itertools.permutations(range(order)))
    acc = np.zeros_like(t)
    for perm in perms:
        acc += np.transpose(t, tuple(range(lead)) + tuple(lead + q for q in perm))
    acc /= len(perms)
    dim = t.shape[-1]
    flat = acc.reshape(t.shape[:lead] + (dim**order,))
    return flat[..., _canonical_index(dim, order)].reshape(t.shape)


def _as_cloud(points, normals, weights, dtype=np.float64):
    p = np.asarray(points, dtype=dtype)
    n = np.asarray(normals, dtype=dtype)
    if p.ndim != 2 or p.shape[1] not in (2, 3) or p.shape[0] < 1:
        raise ValueError(f"points must have shape (I, 2) or (I, 3) with I >= 1, got {p.shape}")
    if n.shape != p.shape:
        raise ValueError(f"normals must have shape {p.shape}, got {n.shape}")
    if weights is None:
        a = np.ones(p.shape[0], dtype=dtype)
    else:
        a = np.asarray(weights, dtype=dtype)
        if a.shape != (p.shape[0],):
            raise ValueError(f"weights must have shape ({p.shape[0]},), got {a.shape}")
        if not np.all(a > 0):
            raise ValueError("weights must be positive")
    return p, n, a


def _chunk_size(num_samples: int, dim: int, max_bytes: int) -> int:
    return max(1, int(max_bytes // (8 * num_samples * dim)))


# --------------------------------------------------------------------------------------------
# the reference
# --------------------------------------------------------------------------------------------
def _ssdf_chunk(p, n, log_a, x, eps, order):
    """SSDF and derivatives up to ``order`` for a chunk of queries x (M, D). See module doc."""
    g = 2.0 / eps
    v = p[None, :, :] - x[:, None, :]  # (M, I, D): p_i - x
    d = np.einsum("mid,mid->mi", v, v)  # |x - p_i|^2 from differences (no expansion)
    s = d / eps - log_a[None, :]
    s -= s.min(axis=1, keepdims=True)
    # exp(-s) underflows to 0 for samples that are far (in units of sqrt(eps)) from x: that is
    # the exact limit of their weight, and harmless, so underflow is silenced deliberately.
    with np.errstate(under="ignore"):
        e = np.exp(-s)
    w = e / e.sum(axis=1, keepdims=True)  # (M, I), rows sum to 1
    h = -np.einsum("mid,id->mi", v, n)  # n_i . (x - p_i)
    phi = np.einsum("mi,mi->m", w, h)
    if order == 0:
        return phi, None, None, None

    # Products of weights with small centred quantities may be subnormal/underflow to zero;
    # again exactly the intended (negligible) contribution.
    with np.errstate(under="ignore"):
        vbar = np.einsum("mi,mid->md", w, v)
        r = v - vbar[:, None, :]  # p_i - p_bar, centred
        ec = h - phi[:, None]  # h_i - phi, centred
        nbar = w @ n  # (M, D)
        we = w * ec  # (M, I)
        t = np.einsum("mi,mia->ma", we, r)  # E[e r]
        grad = nbar + g * t
        if order == 1:
            return phi, grad, None, None

        mc = n[None, :, :] - nbar[:, None, :]  # n_i - n_bar, centred (M, I, D)
        wr = w[:, :, None] * r  # (M, I, D)
        wer = we[:, :, None] * r  # (M, I, D)
        wrT = np.swapaxes(wr, 1, 2)  # (M, D, I)
        werT = np.swapaxes(wer, 1, 2)
        k = wrT @ mc  # K_ab = E[r_a m_b]
        s2 = werT @ r  # S_ab = E[e r_a r_b]
        hess = g * (k + np.swapaxes(k, 1, 2)) + (g * g) * s2
        hess = symmetrize(hess, 2)
        if order == 2:
            return phi, grad, hess, None

        dim = x.shape[1]
        cov = wrT @ r  # C_ab = E[r_a r_b]
        nn = np.empty((x.shape[0], dim, dim, dim), dtype=x.dtype)  # N_abc = E[r_a r_b m_c]
        qq = np.empty((x.shape[0], dim, dim, dim), dtype=x.dtype)  # Q_abc = E[e r_a r_b r_c]
        for a in range(dim):
            ra = r[:, :, a : a + 1]  # (M, I, 1)
            nn[:, a] = np.swapaxes(wr * ra, 1, 2) @ mc
            qq[:, a] = np.swapaxes(wer * ra, 1, 2) @ r
        sym_n = nn + np.einsum("mbca->mabc", nn) + np.einsum("mcab->mabc", nn)
        tc = t[:, :, None, None] * cov[:, None, :, :]  # t_a C_bc
        sym_tc = tc + np.einsum("mbca->mabc", tc) + np.einsum("mcab->mabc", tc)
        d3 = (g * g) * sym_n + (g * g * g) * (qq - sym_tc)
        d3 = symmetrize(d3, 3)
    return phi, grad, hess, d3


def ssdf_ref(
    points, normals, weights, x, eps, order=0, *, max_bytes=DEFAULT_MAX_BYTES, dtype=np.float64
):
    """Reference SSDF and its derivatives (float64, pure NumPy).

    Parameters
    ----------
    points, normals : (I, D) arrays, D in {2, 3}; normals are used as given (unit expected).
    weights : (I,) positive array or None (all ones).
    x : (M, D) or (D,) queries.
    eps : positive float, temperature (length^2).
    order : 0..3, highest derivative returned.
    max_bytes : bound on the largest per-chunk temporary (chunk x I x D float64).
    dtype : floating type of the whole computation; ``np.longdouble`` (64-bit mantissa on
        x86-64) makes the reference more accurate than any float64 implementation, which is
        how tests/test_ssdf.py uses it.  Outputs have this dtype.

    Returns
    -------
    (phi (M,), grad (M, D) or None, hess (M, D, D) or None, d3 (M, D, D, D) or None);
    for a 1-D ``x`` the leading M axis is dropped.  ``hess`` and ``d3`` are exactly symmetric.
    """
    p, n, a = _as_cloud(points, normals, weights, dtype)
    xq = np.asarray(x, dtype=dtype)
    single = xq.ndim == 1
    xq = np.atleast_2d(xq)
    if xq.ndim != 2 or xq.shape[1] != p.shape[1]:
        raise ValueError(f"x must have shape (M, {p.shape[1]}), got {np.shape(x)}")
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"eps must be positive and finite, got {eps}")
    if order not in (0, 1, 2, 3):
        raise ValueError(f"order must be 0, 1, 2 or 3, got {order}")
    eps = np.asarray(eps, dtype=dtype)[()]
    log_a = np.log(a)
    m_total, dim = xq.shape
    outs = [
        np.empty((m_total,) + (dim,) * k, dtype=dtype) if k <= order else None for k in range(4)
    ]
    step = _chunk_size(p.shape[0], dim, max_bytes)
    for start in range(0, m_total, step):
        sl = slice(start, min(start + step, m_total))
        res = _ssdf_chunk(p, n, log_a, xq[sl], eps, order)
        for k in range(order + 1):
            outs[k][sl] = res[k]
    if single:
        outs = [o[0] if o is not None else None for o in outs]
    return tuple(outs)


def numpy_ssdf_vectorized(points, normals, weights, x, eps, order=0):
    """Speed baseline: the straightforward vectorized NumPy SSDF a user would write.

    This *is* ``ssdf_ref`` (same code path): the oracle is already written the plain way --
    broadcasting to (chunk, I, D), einsum / batched matmul for the weighted moments, chunks of
    at most 32 MiB per temporary -- so a separate, even more naive version would only make the
    baseline slower and therefore flatter the C kernel.  The only extra work the oracle does
    beyond a user's version is the explicit (cheap, O(M D^k)) symmetrisation of hess and d3.
    """
    return ssdf_ref(points, normals, weights, x, eps, order)


def box_sdf_ref(half_extents, x):
    """Exact signed distance of the axis-aligned box ``|x_k| <= half_extents_k`` (2D or 3D).

    Positive outside, negative inside; ``x`` has shape (..., D).
    """
    b = np.asarray(half_extents, dtype=np.float64)
    xq = np.asarray(x, dtype=np.float64)
    q = np.abs(xq) - b
    outside = np.sqrt(np.sum(np.maximum(q, 0.0) ** 2, axis=-1))
    inside = np.minimum(np.max(q, axis=-1), 0.0)
    return outside + inside


# --------------------------------------------------------------------------------------------
# separation field and soft-minimum contact model (docs/method.md sections 3-5), values only
# --------------------------------------------------------------------------------------------
def pose_frame(pose):
    """Rotation matrix and translation of a 2D ``(x, y, theta)`` or 3D ``(p, qw, qx, qy, qz)``
    pose (written here independently of softcontact.spatial)."""
    q = np.asarray(pose, dtype=np.float64)
    if q.shape == (3,):
        c, s = np.cos(q[2]), np.sin(q[2])
        return np.array([[c, -s], [s, c]]), q[:2]
    if q.shape != (7,):
        raise ValueError(f"pose must have shape (3,) or (7,), got {q.shape}")
    w, x, y, z = q[3:] / np.linalg.norm(q[3:])
    R = np.array(
        [
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
        ]
    )
    return R, q[:3]


def separation_ref(cloud_a, pose_a, cloud_b, pose_b, eps):
    """Separation field Phi (I+J,), world sample positions x (I+J, D), and world gradients G
    (I+J, D) of the *other* body's SSDF at each sample.  ``cloud_*`` are (points, normals,
    weights) triples in body frames; A's samples come first."""
    (pa, na, wa), (pb, nb, wb) = cloud_a, cloud_b
    Ra, ta = pose_frame(pose_a)
    Rb, tb = pose_frame(pose_b)
    xa = np.asarray(pa) @ Ra.T + ta
    xb = np.asarray(pb) @ Rb.T + tb
    # (x - t) @ R is R^T (x - t): world to body coordinates
    phi_ab, g_ab, _, _ = ssdf_ref(pb, nb, wb, (xa - tb) @ Rb, eps, 1)
    phi_ba, g_ba, _, _ = ssdf_ref(pa, na, wa, (xb - ta) @ Ra, eps, 1)
    return (
        np.concatenate([phi_ab, phi_ba]),
        np.concatenate([xa, xb]),
        np.concatenate([g_ab @ Rb.T, g_ba @ Ra.T]),
    )


def _point_velocity(x, pose, vel):
    """Velocity of world points x as points of a body: 2D vel (vx, vy, omega); 3D vel
    (v (3, world), omega (3, body))."""
    R, t = pose_frame(pose)
    r = x - t
    vel = np.asarray(vel, dtype=np.float64)
    if r.shape[1] == 2:
        return vel[:2] + vel[2] * np.stack([-r[:, 1], r[:, 0]], axis=1)
    return vel[:3] + np.cross(R @ vel[3:], r)


def _wrench(x, f, pose):
    """Generalized force of point forces f at world points x: 2D (fx, fy, tau); 3D (f (world),
    tau (body frame)), torques about the body origin (its centre of mass)."""
    R, t = pose_frame(pose)
    r = x - t
    F = f.sum(axis=0)
    if r.shape[1] == 2:
        return np.concatenate([F, [np.sum(r[:, 0] * f[:, 1] - r[:, 1] * f[:, 0])]])
    return np.concatenate([F, R.T @ np.cross(r, f).sum(axis=0)])


def contact_ref(
    cloud_a,
    pose_a,
    vel_a,
    cloud_b,
    pose_b,
    vel_b,
    *,
    eps,
    eps_c,
    stiffness,
    beta,
    damping=0.0,
    friction=0.0,
    slip_velocity=1e-3,
    tiny=1e-300,
):
    """Soft-minimum contact model (docs/method.md section 5), straight from the formulas.

    Returns a dict: ``phi``, ``points``, ``grad`` (as separation_ref), ``depth`` m,
    ``distribution`` pi, ``energy`` U, ``force``/``force_conservative``/``force_damping``/
    ``force_friction`` (I+J, D: the per-sample force on the sample's owner, at its point),
    ``u`` (I+J, D: velocity of each point on its owner minus on the other body), ``owner_is_a``
    (I+J bool), ``wrench_a``, ``wrench_b``, and the same split per component as
    ``wrench_a_conservative`` etc.
    """
    phi, x, G = separation_ref(cloud_a, pose_a, cloud_b, pose_b, eps)
    n_a = len(cloud_a[0])
    own_a = np.arange(len(phi)) < n_a
    z = -phi / eps_c
    # a half-space (one sample) against a cloud: its own sample takes no part
    if n_a == 1 and len(phi) > 2:
        z[0] = -np.inf
    elif len(phi) - n_a == 1 and n_a > 1:
        z[-1] = -np.inf
    zmax = z.max()
    with np.errstate(under="ignore"):
        e = np.exp(z - zmax)
    m = -eps_c * (zmax + np.log(e.sum()))  # soft minimum, <= min phi
    pi = e / e.sum()
    y = -m / beta
    sp = beta * np.logaddexp(0.0, y)  # sp_b(-m)
    s = np.exp(-np.logaddexp(0.0, -y))  # s_b(-m) = 1/(1+e^-y), no overflow,
    #                                                  accurate for y << 0 too (1 + tanh cancels)
    energy = 0.5 * stiffness * sp * sp
    lam = stiffness * sp * s
    va_x = _point_velocity(x, pose_a, vel_a)
    vb_x = _point_velocity(x, pose_b, vel_b)
    u = np.where(own_a[:, None], va_x - vb_x, vb_x - va_x)
    f_cons = lam * pi[:, None] * G
    nu = G / np.sqrt(np.sum(G * G, axis=1, keepdims=True) + tiny)
    # damping of each sample's normal velocity nu . u, along nu
    f_damp = -damping * s * pi[:, None] * np.einsum("kd,kd->k", nu, u)[:, None] * nu
    tang = u - np.einsum("kd,kd->k", nu, u)[:, None] * nu
    f_fric = (
        -friction
        * lam
        * pi[:, None]
        * tang
        / np.sqrt(np.sum(tang * tang, axis=1, keepdims=True) + slip_velocity**2)
    )
    out = {
        "phi": phi,
        "points": x,
        "grad": G,
        "depth": m,
        "distribution": pi,
        "energy": energy,
        "u": u,
        "owner_is_a": own_a,
    }
    for name, f in (
        ("", f_cons + f_damp + f_fric),
        ("_conservative", f_cons),
        ("_damping", f_damp),
        ("_friction", f_fric),
    ):
        out["force" + name] = f
        # the owner gets f at x_k, the other body -f at the same point
        fa = np.where(own_a[:, None], f, -f)
        out["wrench_a" + name] = _wrench(x, fa, pose_a)
        out["wrench_b" + name] = _wrench(x, -fa, pose_b)
    return out
