"""Soft-minimum contact model (docs/method.md sections 3-5) through ``softcontact.contact``.

Values against the independent NumPy oracle ``contact_ref``; the state Jacobian and Hessian
against central differences on the manifold (poses through ``softcontact.retract``) and by
Taylor-remainder convergence; physics (conservative part = -dU/dq, dissipation, momentum
balance, swap and rigid-motion invariance, soft-minimum bounds, no force when apart);
smoothness of a sphere-sphere sweep through contact; argument validation; ContactParams.

Scenes are random: a body A (2D: the planar-pushing T, 3D: a box) at a random pose and a body
B (a disk / a sphere) at a random orientation, placed along a random ray from A's origin so
that ``min Phi`` equals a requested gap (negative: overlap).
"""

import dataclasses

import numpy as np
import pytest
from reference import contact_ref

import softcontact as sc
from softcontact.spatial import quat_mul, quat_to_matrix
from softcontact.testing import check_derivatives, fd_jacobian, taylor_remainders, taylor_slopes

U = np.finfo(float).eps

# the parameters of tests/test_reference_contact.py: sqrt(eps) = 5 mm is about the sample
# spacing below, eps_c = beta = 1 mm, k = 2 kN/m
PARAMS = sc.ContactParams(
    eps=2.5e-5, eps_c=1e-3, stiffness=2e3, beta=1e-3, damping=5.0, friction=0.6, slip_velocity=1e-2
)
CONSERVATIVE = dataclasses.replace(PARAMS, damping=0.0, friction=0.0)

SHAPES = {
    2: (sc.PointCloud.t_shape(spacing=0.006), sc.PointCloud.disk(0.02, 0.004)),  # 91 + 32
    3: (sc.PointCloud.box([0.03, 0.02, 0.015], 0.008), sc.PointCloud.sphere(0.02, 0.006)),
}  # 3D: 258 + 140 samples


def _unit(v):
    return v / np.linalg.norm(v)


def _nv(dim):
    return 3 if dim == 2 else 6


def _rotation(pose):
    pose = np.asarray(pose, dtype=float)
    if pose.shape == (3,):
        c, s = np.cos(pose[2]), np.sin(pose[2])
        return np.array([[c, -s], [s, c]])
    return quat_to_matrix(pose[3:])


def _pose(rng, dim, centre):
    if dim == 2:
        return np.array([centre[0], centre[1], rng.uniform(-np.pi, np.pi)])
    return np.concatenate([centre, _unit(rng.normal(size=4))])


def _place(a, pa, b, pb, direction, gap):
    """B's pose (orientation of ``pb``) on the ray ``pa + s direction`` with min Phi = gap."""
    dim = a.dim

    def at(s):
        p = pb.copy()
        p[:dim] = pa[:dim] + s * direction
        return p

    def min_phi(s):
        return sc.separation(a, pa, b, at(s), PARAMS.eps).phi.min()

    lo, hi = 0.0, 0.3
    assert min_phi(lo) < gap < min_phi(hi)
    for _ in range(36):  # bracket shrinks to 0.3 / 2^36 ~ 4e-12 m
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if min_phi(mid) < gap else (lo, mid)
    return at(0.5 * (lo + hi))


def _scene(rng, dim, gap, speed=0.1):
    """Random scene with ``min Phi = gap`` and random velocities (linear ~ speed m/s, angular
    ~ 20 speed rad/s, i.e. comparable point speeds on these ~3 cm bodies)."""
    a, b = SHAPES[dim]
    pa = _pose(rng, dim, rng.uniform(-0.05, 0.05, size=dim))
    pb = _place(a, pa, b, _pose(rng, dim, np.zeros(dim)), _unit(rng.normal(size=dim)), gap)
    nv = _nv(dim)
    scale = np.concatenate([np.full(dim, speed), np.full(nv - dim, 20.0 * speed)])
    va, vb = rng.normal(size=nv) * scale, rng.normal(size=nv) * scale
    return a, pa, va, b, pb, vb


def _triple(c):
    return c.points, c.normals, c.weights


def _ref(a, pa, va, b, pb, vb, params):
    """contact_ref on PointClouds with a ContactParams."""
    return contact_ref(_triple(a), pa, va, _triple(b), pb, vb, **dataclasses.asdict(params))


def _w(r):
    return np.concatenate([r.wrench_a, r.wrench_b])


def _at(scene, params, order, s):
    """contact at the state perturbed by s = (dq_a, dq_b, dv_a, dv_b)."""
    a, pa, va, b, pb, vb = scene
    nv = len(va)
    return sc.contact(
        a,
        sc.retract(pa, s[:nv]),
        va + s[2 * nv : 3 * nv],
        b,
        sc.retract(pb, s[nv : 2 * nv]),
        vb + s[3 * nv :],
        params,
        order,
    )


# --------------------------------------------------------------------------------------------
# 1. values against the reference
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("gap", [-4e-3, 2e-3, 3e-2], ids=["overlap", "near", "apart"])
@pytest.mark.parametrize("params", [PARAMS, CONSERVATIVE], ids=["dissipative", "conservative"])
def test_values_match_reference(rng, dim, gap, params):
    for _ in range(3):
        scene = _scene(rng, dim, gap)
        r = sc.contact(*scene[:3], *scene[3:], params)
        ref = _ref(*scene, params)
        assert r.jacobian is None and r.hessian is None
        n = len(scene[0]) + len(scene[3])
        assert r.phi.shape == r.distribution.shape == (n,)
        assert r.forces.shape == r.points.shape == (n, dim)
        assert r.wrench_a.shape == r.wrench_b.shape == (_nv(dim),)
        # 1e-12 relative to the largest entry of each output: the two implementations share
        # no code and round differently, but the SSDF, the soft minimum and the softmax are
        # well conditioned (|d log pi / d Phi| = 1 / eps_c times Phi errors of ~1e-17 m), so
        # both are ~1e-15 from the exact value (measured: <= 2e-14 in contact).
        for name in ("phi", "points", "distribution"):
            got, want = getattr(r, name), ref[name]
            np.testing.assert_allclose(
                got, want, rtol=0, atol=1e-12 * np.abs(want).max(), err_msg=name
            )
        # the soft minimum is 1-Lipschitz in Phi: relative to |m|, or to eps_c (the scale of
        # its log-sum-exp term) where m crosses 0
        m = ref["depth"]
        assert abs(r.depth - m) <= 1e-12 * max(abs(m), params.eps_c)
        # Energy and forces depend on m through sp_b(-m) and s_b(-m); d log(.) / d log|m| is
        # at most 2 in contact but 2 m / beta apart, where they decay like exp(-2 m / beta):
        # there a relative error of m (above: up to 1e-12) is amplified by 2 m / beta (~60
        # at the 3 cm gap, where up to 1.3e-12 is measured).  In contact the depth agrees to
        # ~1e-14 (measured) and the plain 1e-12 applies.
        tol = 1e-12 * max(1.0, 2.0 * m / params.beta)
        for name in ("wrench_a", "wrench_b"):
            got, want = getattr(r, name), ref[name]
            np.testing.assert_allclose(
                got, want, rtol=0, atol=tol * np.abs(want).max(), err_msg=name
            )
        np.testing.assert_allclose(
            r.forces, ref["force"], rtol=0, atol=tol * np.abs(ref["force"]).max()
        )
        assert abs(r.energy - ref["energy"]) <= tol * ref["energy"]
        if gap < 0:
            assert r.energy > 1e-3 and np.abs(r.wrench_a).max() > 1.0
        if gap > 0.02:
            assert r.energy < 1e-15


# --------------------------------------------------------------------------------------------
# 2. derivatives
# --------------------------------------------------------------------------------------------
# Scales: the force law and the soft minimum vary on beta = eps_c = 1 mm, the SSDF on
# sqrt(eps) = 5 mm, friction on v_s = 1 cm/s.  Steps of 1e-7 (m, rad, m/s, rad/s) make the
# central-difference truncation ~ (1e-7 / 1e-3)^2 = 1e-8 relative and the rounding
# ~ u |W| / (h |J|) ~ u * 1 mm / 1e-7 ~ 2e-12 relative (plus the floor of check_derivatives),
# so 1e-6 of the largest entry separates a correct derivative from any wrong term by orders
# of magnitude.
FD_STEP = 1e-7


def _derivative_scene(rng, dim, gap):
    # slow enough that part of the samples slide below v_s, where the smooth Coulomb law
    # is curved
    return _scene(rng, dim, gap, speed=0.02)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("gap", [-3e-3, 3e-3], ids=["contact", "onset"])
def test_jacobian_and_hessian_vs_finite_differences(rng, dim, gap):
    scene = _derivative_scene(rng, dim, gap)
    nv = _nv(dim)
    r = _at(scene, PARAMS, 2, np.zeros(4 * nv))
    assert r.jacobian.shape == (2 * nv, 4 * nv)
    assert r.hessian.shape == (2 * nv, 4 * nv, 4 * nv)
    if gap > 0:  # near onset: m > 0 and a small but nonzero force (k beta = 2 N; ~10 N in
        # contact)
        assert r.depth > 0
        assert 1e-4 < np.abs(r.wrench_a[:dim]).max() < 0.1 * PARAMS.stiffness * PARAMS.beta
    check_derivatives(
        lambda s: _w(_at(scene, PARAMS, 0, s)),
        np.zeros(4 * nv),
        r.jacobian,
        step=FD_STEP,
        rtol=1e-6,
        atol=0.0,
    )
    # differences of the jacobian through retract give the symmetric part of the Hessian
    # (plus a skew bracket term, as rotations do not commute): symmetrize the FD result
    fd = fd_jacobian(lambda s: _at(scene, PARAMS, 1, s).jacobian, np.zeros(4 * nv), FD_STEP)
    fd = 0.5 * (fd + np.swapaxes(fd, 1, 2))
    floor = 16 * U * np.abs(r.jacobian).max() / FD_STEP
    np.testing.assert_allclose(r.hessian, fd, rtol=0, atol=1e-6 * np.abs(r.hessian).max() + floor)
    np.testing.assert_array_equal(r.hessian, np.swapaxes(r.hessian, 1, 2))


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("gap", [-3e-3, 3e-3], ids=["contact", "onset"])
def test_taylor_remainders(rng, dim, gap):
    """W(q (+) t ds_q, v + t ds_v) minus its first/second-order expansion shrinks like
    t^2 / t^3 (t -> q (+) t ds_q is a one-parameter curve, so its Taylor coefficients are
    J ds and ds^T H ds)."""
    scene = _derivative_scene(rng, dim, gap)
    nv = _nv(dim)
    r = _at(scene, PARAMS, 2, np.zeros(4 * nv))
    ds = rng.normal(size=4 * nv)
    # per unit t: 1 mm of translation, 1 mm of motion of a point 3 cm from the origin, and
    # 5 mm/s (half of v_s) of velocity change
    for blk, size in (
        (slice(0, dim), 1e-3),
        (slice(nv, nv + dim), 1e-3),
        (slice(dim, nv), 1e-3 / 0.03),
        (slice(nv + dim, 2 * nv), 1e-3 / 0.03),
        (slice(2 * nv, 4 * nv), 5e-3),
    ):
        ds[blk] *= size / np.linalg.norm(ds[blk])
    steps = np.geomspace(0.1, 0.1 / 32, 6)
    derivs = [r.jacobian @ ds, np.einsum("kij,i,j->k", r.hessian, ds, ds)]
    R = taylor_remainders(
        lambda s: _w(_at(scene, PARAMS, 0, s)), np.zeros(4 * nv), ds, derivs, steps
    )
    R = np.linalg.norm(R, axis=2)  # |remainder| of the whole wrench vector
    slopes = taylor_slopes(R, steps)
    # remainders above rounding at the smallest step (the wrench is a sum of O(I + J) rounded
    # terms: noise <~ 100 u |W|; measured R2 there >= 2e-12 |W| ~ 1e4 u |W|) ...
    assert np.all(R[1:, -1] > 100 * U * np.abs(_w(r)).max()), R[:, -1]
    # ... shrinking faster than t^(n + 1/2) at every step (a wrong J or H gives slope 1 or 2),
    # and at the smallest steps (t |ds| ~ 3 um against ell ~ 1 mm) like t^(n + 1) within 0.1
    # (slope n + 1 + O(t |ds| / ell); measured over 24 seeds: within 0.02 at the last step,
    # within 0.6 at the first)
    assert np.all(slopes[1] > 1.5) and np.all(slopes[2] > 2.5), slopes
    np.testing.assert_allclose(slopes[1:, -2:], [[2.0, 2.0], [3.0, 3.0]], rtol=0, atol=0.1)


# --------------------------------------------------------------------------------------------
# 3. physics
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("gap", [-4e-3, 3e-3], ids=["contact", "onset"])
def test_conservative_wrench_is_minus_energy_gradient(rng, dim, gap):
    scene = _scene(rng, dim, gap)  # nonzero velocities: they must not matter without c, mu
    nv = _nv(dim)
    r = _at(scene, CONSERVATIVE, 0, np.zeros(4 * nv))
    assert r.energy > 0

    def energy(sq):
        return np.array(
            [_at(scene, CONSERVATIVE, 0, np.concatenate([sq, np.zeros(2 * nv)])).energy]
        )

    # FD of U through retract, step as in the derivative tests; the rounding floor of
    # check_derivatives is 16 u U / h
    check_derivatives(energy, np.zeros(2 * nv), -_w(r)[None, :], step=FD_STEP, rtol=1e-6, atol=0.0)


def _body_velocity_power(w, va, vb):
    return w[: len(va)] @ va + w[len(va) :] @ vb


@pytest.mark.parametrize("dim", [2, 3])
def test_damping_and_friction_never_produce_positive_power(rng, dim):
    a, pa, _, b, pb, _ = _scene(rng, dim, -3e-3)
    nv = _nv(dim)
    damp = dataclasses.replace(CONSERVATIVE, damping=PARAMS.damping)
    fric = dataclasses.replace(CONSERVATIVE, friction=PARAMS.friction)
    negative = {"damping": 0, "friction": 0}
    for _ in range(40):
        speed = 10.0 ** rng.uniform(-3, 0)
        scale = np.concatenate([np.full(dim, speed), np.full(nv - dim, 20 * speed)])
        va, vb = rng.normal(size=nv) * scale, rng.normal(size=nv) * scale
        w0 = _w(sc.contact(a, pa, va, b, pb, vb, CONSERVATIVE))
        for name, p in (("damping", damp), ("friction", fric)):
            part = _w(sc.contact(a, pa, va, b, pb, vb, p)) - w0
            power = _body_velocity_power(part, va, vb)
            # the part is a difference of wrenches of size |w0|: rounding u |w0| per entry,
            # so the computed power may exceed the true (<= 0) one by ~ u |w0| |v|
            bound = 64 * U * np.abs(w0).max() * np.abs(np.concatenate([va, vb])).sum()
            assert power <= bound, (name, power, bound)
            negative[name] += power < -bound
    # the power is -c s sum pi (nu . u)^2 and -mu lambda sum pi |t|^2 / sqrt(|t|^2 + v_s^2):
    # strictly negative for generic velocities
    assert negative == {"damping": 40, "friction": 40}


def _world_torque(w, pose, point):
    """Torque of wrench w (torque in the body frame in 3D) about a world point."""
    dim = len(point)
    R, t = _rotation(pose), np.asarray(pose[:dim])
    f, tau = w[:dim], w[dim:]
    lever = t - point
    if dim == 2:
        return tau[0] + lever[0] * f[1] - lever[1] * f[0]
    return R @ tau + np.cross(lever, f)


@pytest.mark.parametrize("dim", [2, 3])
def test_equal_and_opposite(rng, dim):
    for _ in range(3):
        a, pa, va, b, pb, vb = _scene(rng, dim, -4e-3)
        r = sc.contact(a, pa, va, b, pb, vb, PARAMS)
        F = np.abs(r.wrench_a[:dim]).max()
        assert F > 1.0
        # sums of the same I+J per-sample forces with opposite signs: rounding only
        np.testing.assert_allclose(
            r.wrench_a[:dim] + r.wrench_b[:dim], 0, atol=1e-13 * (len(a) + len(b)) * F
        )
        for point in rng.uniform(-0.2, 0.2, size=(4, dim)):
            tot = _world_torque(r.wrench_a, pa, point) + _world_torque(r.wrench_b, pb, point)
            # torques ~ F x (0.3 m lever): rounding relative to F * 0.3
            np.testing.assert_allclose(tot, 0, atol=1e-13 * (len(a) + len(b)) * F * 0.3)


@pytest.mark.parametrize("dim", [2, 3])
def test_swapping_the_bodies(rng, dim):
    a, pa, va, b, pb, vb = _scene(rng, dim, -3e-3)
    r = sc.contact(a, pa, va, b, pb, vb, PARAMS, order=2)
    s = sc.contact(b, pb, vb, a, pa, va, PARAMS, order=2)
    na, nv = len(a), _nv(dim)

    def close(x, y, name):  # same terms summed in another order: rounding only
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-12 * np.abs(y).max(), err_msg=name)

    close(s.wrench_a, r.wrench_b, "wrench_a")
    close(s.wrench_b, r.wrench_a, "wrench_b")
    assert abs(s.energy - r.energy) <= 1e-12 * r.energy
    assert abs(s.depth - r.depth) <= 1e-12 * abs(r.depth)
    for name in ("distribution", "forces", "points", "phi"):
        v = getattr(r, name)
        close(getattr(s, name), np.concatenate([v[na:], v[:na]]), name)
    rows = np.r_[nv : 2 * nv, 0:nv]
    cols = np.r_[nv : 2 * nv, 0:nv, 3 * nv : 4 * nv, 2 * nv : 3 * nv]
    close(s.jacobian, r.jacobian[np.ix_(rows, cols)], "jacobian")
    close(s.hessian, r.hessian[np.ix_(rows, cols, cols)], "hessian")


def _move(g, pose):
    """Rigid motion g applied to a pose: g * pose."""
    if len(pose) == 3:
        return np.concatenate([_rotation(g) @ pose[:2] + g[:2], [pose[2] + g[2]]])
    return np.concatenate([_rotation(g) @ pose[:3] + g[:3], quat_mul(g[3:], pose[3:])])


@pytest.mark.parametrize("dim", [2, 3])
def test_rigid_motion_invariance(rng, dim):
    a, pa, va, b, pb, vb = _scene(rng, dim, -3e-3)
    g = _pose(rng, dim, rng.uniform(-0.3, 0.3, size=dim))
    Rg = _rotation(g)

    def spin(v):  # linear velocities are in the world frame, angular ones unchanged
        return np.concatenate([Rg @ v[:dim], v[dim:]])

    r = sc.contact(a, pa, va, b, pb, vb, PARAMS)
    m = sc.contact(a, _move(g, pa), spin(va), b, _move(g, pb), spin(vb), PARAMS)
    # world coordinates of size |t_g| ~ 0.3 m carry rounding ~ u 0.3 m ~ 7e-17 m; through the
    # SSDF (curvature ~ L / eps ~ 1e3 / m) and the softmax (1 / eps_c = 1e3 / m) that is
    # ~ 1e-14 relative (measured: <= 3e-14); 1e-12 leaves a margin of 30
    for name in ("phi", "distribution"):
        want = getattr(r, name)
        np.testing.assert_allclose(
            getattr(m, name), want, rtol=0, atol=1e-12 * np.abs(want).max(), err_msg=name
        )
    assert abs(m.energy - r.energy) <= 1e-12 * r.energy
    assert abs(m.depth - r.depth) <= 1e-12 * abs(r.depth)
    # positions of ~0.4 m: a few ulps (ulp(0.4) = 5.6e-17)
    np.testing.assert_allclose(m.points, r.points @ Rg.T + g[:dim], rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        m.forces, r.forces @ Rg.T, rtol=0, atol=1e-12 * np.abs(r.forces).max()
    )
    for w, wm in ((r.wrench_a, m.wrench_a), (r.wrench_b, m.wrench_b)):
        np.testing.assert_allclose(wm, spin(w), rtol=0, atol=1e-12 * np.abs(w).max())


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("gap", [-4e-3, 2e-3, 3e-2])
def test_soft_minimum_bounds_and_distribution(rng, dim, gap):
    a, pa, va, b, pb, vb = _scene(rng, dim, gap)
    r = sc.contact(a, pa, va, b, pb, vb, PARAMS)
    n = len(r.phi)
    assert np.all(r.distribution >= 0)
    assert abs(r.distribution.sum() - 1.0) <= n * U  # a sum of n rounded positive terms
    lo = r.phi.min() - PARAMS.eps_c * np.log(n)
    # m = min Phi - eps_c log(sum_k exp(-(Phi_k - min Phi) / eps_c)) with a sum >= 1: the
    # bounds hold exactly; a few ulps of |min Phi| allow for the rounding of the subtraction
    slack = 4 * U * abs(r.phi.min())
    assert lo - slack <= r.depth <= r.phi.min() + slack
    # the distribution is the softmax of -Phi / eps_c: its largest weight is at min Phi
    assert np.argmax(r.distribution) == np.argmin(r.phi)
    if gap < 0:
        assert r.energy > 1e-3
        assert np.abs(r.wrench_a).max() > 1.0 and np.abs(r.wrench_b).max() > 1.0


@pytest.mark.parametrize("dim", [2, 3])
def test_no_force_when_separated(rng, dim):
    """The bound.  For m > 0, with y = m / beta:
        sp_b(-m) = beta log(1 + e^-y) <= beta e^-y,   s_b(-m) = 1 / (1 + e^y) <= e^-y,
    so lambda = k sp_b s_b <= k beta e^(-2y).  Sample k's force is pi_k times
        lambda G_k (normal)  -  c s_b (nu_k . u_k) nu_k (damping)  -  mu lambda t_k / sqrt(..)
    (friction) with |t_k| / sqrt(|t_k|^2 + v_s^2) < 1 and |nu_k| <= 1; with
    Gbar = sum pi_k |G_k| and M = sum pi_k |u_k|, the per-sample forces (hence the force on
    each body) sum in norm to at most
        f_max = (Gbar + mu) k beta e^(-2y) + c e^(-y) M
    and each body's torque is at most max|lever| f_max.  (pi-weighted: far from a body the
    SSDF gradient can reach ~30, but only at samples with negligible pi.)  The depth obeys
    m >= min Phi - eps_c log(I + J), so placing B at min Phi = d with
        d = 4 (beta + sqrt(eps)) + eps_c log(I + J)
    gives m >= 4 (beta + sqrt(eps)) = 24 mm, y >= 24: the damping term dominates, f_max <~
    c e^-24 M ~ 2e-10 N for |u| ~ 1 m/s, below 1e-9 k beta = 2e-9 N.
    (sqrt(eps) is in the threshold because Phi is a smoothed gap, off the true one by up to
    ~sqrt(eps) at edges and corners.)  The test asserts m >= 4 (beta + sqrt(eps)), the
    wrenches and per-sample forces against f_max computed from the measured m and the
    oracle's pi, G and u, and f_max < 1e-9 k beta."""
    a, b = SHAPES[dim]
    n = len(a) + len(b)
    reach = PARAMS.beta + np.sqrt(PARAMS.eps)
    gap = 4 * reach + PARAMS.eps_c * np.log(n)
    k, c, mu = PARAMS.stiffness, PARAMS.damping, PARAMS.friction
    for _ in range(3):
        a, pa, va, b, pb, vb = _scene(rng, dim, gap)
        r = sc.contact(a, pa, va, b, pb, vb, PARAMS)
        ref = _ref(a, pa, va, b, pb, vb, PARAMS)
        y = r.depth / PARAMS.beta
        assert y > 4 * reach / PARAMS.beta - 1e-9  # m >= min Phi - eps_c log(I + J)
        G = np.linalg.norm(ref["grad"], axis=1)
        gbar = ref["distribution"] @ G
        mbar = ref["distribution"] @ np.linalg.norm(ref["u"], axis=1)
        fbound = (gbar + mu) * k * PARAMS.beta * np.exp(-2 * y) + c * np.exp(-y) * mbar
        assert fbound < 1e-9 * k * PARAMS.beta
        assert np.linalg.norm(r.forces, axis=1).sum() <= fbound
        for w, pose in ((r.wrench_a, pa), (r.wrench_b, pb)):
            lever = np.linalg.norm(r.points - pose[:dim], axis=1).max()
            assert np.linalg.norm(w[:dim]) <= fbound
            assert np.linalg.norm(w[dim:]) <= lever * fbound


# --------------------------------------------------------------------------------------------
# 4. smoothness of a sweep through contact
# --------------------------------------------------------------------------------------------
def test_sphere_sweep_through_contact_is_smooth_and_monotone(rng):
    """Sphere B approaches sphere A along a random line, from a 10 mm gap to a 4 mm overlap,
    in 400 steps of 35 um.  F(sigma) is the repulsive force on B along the line; F' and F''
    come from jacobian and hessian along the path direction (B's translation).  Velocities
    are zero, so F is the conservative normal force."""
    radius = 0.02
    ball = sc.PointCloud.sphere(radius, 0.007)
    nv = 6
    pa = _pose(rng, 3, np.zeros(3))
    qb = _unit(rng.normal(size=4))
    u = _unit(rng.normal(size=3))
    sig = np.linspace(0.0, 0.014, 401)
    delta = sig[1] - sig[0]
    e = np.zeros(4 * nv)
    e[nv : nv + 3] = -u  # d sigma moves B by -u d sigma (retract translates additively)
    F, F1, F2 = [], [], []
    zero = np.zeros(nv)
    for s in sig:
        pb = np.concatenate([(2 * radius + 0.01 - s) * u, qb])
        r = sc.contact(ball, pa, zero, ball, pb, zero, PARAMS, order=2)
        F.append(r.wrench_b[:3] @ u)
        F1.append(u @ (r.jacobian[nv : nv + 3] @ e))
        F2.append(u @ np.einsum("kij,i,j->k", r.hessian[nv : nv + 3], e, e))
    F, F1, F2 = map(np.array, (F, F1, F2))
    # physics: repulsive, growing with the overlap, tiny at the start
    assert np.all(F > 0) and np.all(np.diff(F) > 0) and np.all(F1 > 0)
    assert F[0] < 1e-3 * F[-1]
    assert F[-1] > 0.5 * PARAMS.stiffness * 4e-3
    # F, F', F'' consistent at every step (Euler-Maclaurin on one interval):
    #   F(s+h) - F(s) = h/2 (F'(s) + F'(s+h)) - h^2/12 (F''(s+h) - F''(s)) + O(h^5 F^(5)).
    # F varies on ell ~ beta = 1 mm: the remainder is ~ k beta (h / ell)^5 / 720 ~ 2e-10 N
    # against steps of F up to ~ k h ~ 0.07 N, i.e. ~ 3e-9 (measured: 9e-10); 1e-7 of the
    # largest step keeps a margin of 30 and still detects a jump or kink of any derivative
    # up to the second (dropping the F'' term alone leaves a residual of 2e-5)
    dF = np.diff(F)
    pred = delta / 2 * (F1[1:] + F1[:-1]) - delta**2 / 12 * (F2[1:] - F2[:-1])
    np.testing.assert_allclose(dF, pred, rtol=0, atol=1e-7 * np.abs(dF).max())
    # second differences equal h^2 F'' up to h^4 F'''' / 12 ~ (h / ell)^2 / 12 ~ 1e-4 relative
    d2F = F[2:] - 2 * F[1:-1] + F[:-2]
    np.testing.assert_allclose(
        d2F, delta**2 * F2[1:-1], rtol=0, atol=1e-3 * delta**2 * np.abs(F2).max()
    )
    # no jumps: from step to step F' and F'' change by at most ~ h / ell of their range
    # (F''' <~ 2 |F''| / beta: the exp(-2 m / beta) tail); 4 h / beta = 0.14
    assert np.abs(np.diff(F1)).max() <= 4 * delta / PARAMS.beta * np.abs(F1).max()
    assert np.abs(np.diff(F2)).max() <= 4 * delta / PARAMS.beta * np.abs(F2).max()


# --------------------------------------------------------------------------------------------
# 5. arguments
# --------------------------------------------------------------------------------------------
DISK = sc.PointCloud.disk(0.02, 0.005)
BALL = sc.PointCloud.sphere(0.02, 0.01)


def _args2():
    return {
        "cloud_a": DISK,
        "pose_a": [0.0, 0.0, 0.0],
        "vel_a": [0.0, 0.0, 0.0],
        "cloud_b": DISK,
        "pose_b": [0.036, 0.0, 0.0],
        "vel_b": [0.0, 0.0, 0.0],
    }


def _args3():
    return {
        "cloud_a": BALL,
        "pose_a": [0, 0, 0, 1, 0, 0, 0],
        "vel_a": np.zeros(6),
        "cloud_b": BALL,
        "pose_b": [0, 0, 0.036, 1, 0, 0, 0],
        "vel_b": np.zeros(6),
    }


@pytest.mark.parametrize(
    "dim, kw, exc, match",
    [
        (2, {"cloud_a": np.zeros((3, 2))}, TypeError, "cloud_a must be a PointCloud"),
        (2, {"cloud_b": "disk"}, TypeError, "cloud_b must be a PointCloud"),
        (2, {"cloud_b": BALL}, ValueError, "same dimension"),
        (3, {"cloud_a": DISK}, ValueError, "same dimension"),
        (2, {"pose_a": [0.0, 0.0]}, ValueError, r"pose_a must have shape \(3,\) for 2D"),
        (3, {"pose_b": [0, 0, 0]}, ValueError, r"pose_b must have shape \(7,\) for 3D"),
        (2, {"pose_b": [0.0, 0.0, np.nan]}, ValueError, "pose_b must be finite"),
        (3, {"pose_a": [0, 0, np.inf, 1, 0, 0, 0]}, ValueError, "pose_a must be finite"),
        (
            3,
            {"pose_b": [0, 0, 0.036, 1, 0.1, 0, 0]},
            ValueError,
            "pose_b must hold a unit quaternion",
        ),
        (2, {"pose_a": [0j, 0, 0]}, TypeError, "pose_a must be an array of real numbers"),
        (2, {"vel_a": [0.0, 0.0]}, ValueError, r"vel_a must have shape \(3,\) for 2D"),
        (3, {"vel_b": np.zeros(7)}, ValueError, r"vel_b must have shape \(6,\) for 3D"),
        # (1, 6): a batch of one (tests/test_batching.py); (1, 5) is refused
        (
            3,
            {"vel_a": np.zeros((1, 5))},
            ValueError,
            r"vel_a must have shape \(6,\) or \(\.\.\., 6\)",
        ),
        (2, {"vel_b": [0.0, np.nan, 0.0]}, ValueError, "vel_b must be finite"),
        (3, {"vel_a": [0, 0, 0, 0, -np.inf, 0]}, ValueError, "vel_a must be finite"),
        (2, {"vel_b": ["a", "b", "c"]}, TypeError, "vel_b must be an array of real numbers"),
        (2, {"params": {"eps": 1e-5}}, TypeError, "params must be a ContactParams"),
        (2, {"params": 1e-5}, TypeError, "params must be a ContactParams"),
        (2, {"order": 3}, ValueError, r"order must be in 0\.\.2, got 3"),
        (2, {"order": -1}, ValueError, r"order must be in 0\.\.2, got -1"),
        (2, {"order": 1.0}, TypeError, "order must be an integer"),
        (2, {"order": True}, TypeError, "order must be an integer"),
        (2, {"order": "1"}, TypeError, "order must be an integer"),
        (2, {"num_threads": 0}, ValueError, "num_threads"),
    ],
)
def test_bad_arguments(dim, kw, exc, match):
    args = _args2() if dim == 2 else _args3()
    args.update(kw)
    with pytest.raises(exc, match=match):
        sc.contact(**args)


FIELDS = [f.name for f in dataclasses.fields(sc.ContactParams)]


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value", [-1e-3, np.nan, np.inf, -np.inf, 0.0])
def test_contact_params_rejects_bad_values(field, value):
    if value == 0.0 and field in ("damping", "friction"):
        p = sc.ContactParams(**{field: value})  # allowed: no damping / no friction
        assert getattr(p, field) == 0.0
        return
    with pytest.raises(ValueError, match=f"^{field} must be finite and (>|>=) 0"):
        sc.ContactParams(**{field: value})


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value", ["1", None, True, 1j, [1.0]])
def test_contact_params_rejects_non_reals(field, value):
    with pytest.raises(TypeError, match=f"^{field} must be a real number"):
        sc.ContactParams(**{field: value})


@pytest.mark.parametrize("dim", [2, 3])
def test_inputs_unchanged_lists_accepted_and_bitwise_reproducible(rng, dim):
    a, pa, va, b, pb, vb = _scene(rng, dim, -3e-3)
    arrays = [pa, va, pb, vb]
    copies = [x.copy() for x in arrays]
    r = sc.contact(a, pa, va, b, pb, vb, PARAMS, order=2, num_threads=1)
    for x, c in zip(arrays, copies, strict=True):
        np.testing.assert_array_equal(x, c)
    t = sc.contact(
        a, pa.tolist(), va.tolist(), b, pb.tolist(), vb.tolist(), PARAMS, order=2, num_threads=2
    )
    for name in sc.Contact._fields:  # lists == arrays, and 1 thread == 2 threads, bitwise
        np.testing.assert_array_equal(getattr(t, name), getattr(r, name), err_msg=name)
    # the values do not depend on the requested order, bitwise
    for order in (0, 1):
        o = sc.contact(a, pa, va, b, pb, vb, PARAMS, order=order)
        for name in sc.Contact._fields[:8]:
            np.testing.assert_array_equal(getattr(o, name), getattr(r, name), err_msg=name)
        assert (o.jacobian is None) == (order == 0) and o.hessian is None
        if order == 1:
            np.testing.assert_array_equal(o.jacobian, r.jacobian)
    # params=None is ContactParams()
    d = sc.contact(a, pa, va, b, pb, vb)
    e = sc.contact(a, pa, va, b, pb, vb, sc.ContactParams())
    np.testing.assert_array_equal(_w(d), _w(e))


@pytest.mark.parametrize("dim", [2, 3])
def test_first_order_lane_pass_equals_the_one_sample_pass(rng, dim):
    """sc_scm.c evaluates first order four samples at a time (one per vector lane) and second
    order one sample at a time, with the same operations: for 1 to 9 samples in contact
    (full and partial groups of four) against a half-space and against a cloud, with and
    without friction, the Jacobian, forces and values are bitwise those of order 2."""
    nv = _nv(dim)
    up = np.eye(dim)[-1]
    floor = sc.PointCloud.halfspace(np.zeros(dim), up)
    ball = sc.PointCloud.sphere(0.01, 0.004) if dim == 3 else sc.PointCloud.disk(0.01, 0.004)
    ident = np.zeros(3) if dim == 2 else np.array([0.0, 0, 0, 1, 0, 0, 0])
    frictionless = dataclasses.replace(PARAMS, friction=0.0)
    for k in range(1, 10):
        pts = np.concatenate(
            [rng.uniform(-0.01, 0.01, size=(k, dim - 1)), rng.uniform(-2e-4, 2e-4, size=(k, 1))],
            axis=1,
        )
        cloud = sc.PointCloud(pts, rng.normal(size=(k, dim)), normalize=True)
        pose = _pose(rng, dim, np.zeros(dim))
        if dim == 3:  # a small tilt keeps every sample within 0.5 mm of the plane
            pose[dim:] = _unit(np.array([1.0, *rng.normal(scale=0.01, size=3)]))
        else:
            pose[2] = rng.normal(scale=0.01)
        va, vb = rng.normal(size=nv) * 0.1, rng.normal(size=nv) * 0.1
        ball_pose = ident.copy()
        ball_pose[dim - 1] = -0.0098  # the ball's top 0.2 mm above the plane
        for other, po in ((floor, ident), (ball, ball_pose)):
            for prm in (PARAMS, frictionless):
                one = sc.contact(cloud, pose, va, other, po, vb, prm, order=1, num_threads=1)
                two = sc.contact(cloud, pose, va, other, po, vb, prm, order=2, num_threads=1)
                assert np.abs(one.jacobian).max() > 0.0, (k, other.size)
                np.testing.assert_array_equal(one.jacobian, two.jacobian, err_msg=str(k))
                for name in sc.Contact._fields[:8]:
                    np.testing.assert_array_equal(
                        getattr(one, name), getattr(two, name), err_msg=f"{name}, {k} samples"
                    )


# --------------------------------------------------------------------------------------------
# 6. ContactParams
# --------------------------------------------------------------------------------------------
def test_contact_params_defaults_frozen_and_replace():
    p = sc.ContactParams()
    assert dataclasses.asdict(p) == {
        "eps": 1e-5,
        "eps_c": 1e-3,
        "stiffness": 2e3,
        "beta": 1e-3,
        "damping": 10.0,
        "friction": 0.5,
        "slip_velocity": 1e-2,
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.stiffness = 1.0
    q = dataclasses.replace(p, stiffness=500, friction=0)
    assert q.stiffness == 500.0 and type(q.stiffness) is float
    assert q.friction == 0.0 and type(q.friction) is float
    assert q.eps == p.eps and p.stiffness == 2e3  # the original is untouched
    assert dataclasses.replace(q, stiffness=2e3, friction=0.5) == p
    assert hash(dataclasses.replace(q, stiffness=2e3, friction=0.5)) == hash(p)
    with pytest.raises(ValueError, match="^beta must be finite and > 0"):
        dataclasses.replace(p, beta=-1.0)
    with pytest.raises(ValueError, match="^damping must be finite and >= 0"):
        dataclasses.replace(p, damping=np.nan)
    with pytest.raises(TypeError, match="^eps_c must be a real number"):
        dataclasses.replace(p, eps_c="1e-3")
    # NumPy scalars are accepted and stored as Python floats
    n = sc.ContactParams(eps=np.float32(2.5e-5), stiffness=np.int64(100), beta=np.array(2e-3))
    assert all(type(getattr(n, f)) is float for f in FIELDS)
    assert n.stiffness == 100.0 and n.beta == 2e-3


@pytest.mark.parametrize("dim", [2, 3])
def test_a_half_space_is_an_exact_plane_wherever_its_anchor(dim):
    """A half-space's own sample takes no part: a body's wrench against a floor is the same
    (to the rounding of the plane distance) for anchors 0, 0.3 m and 50 m away along the
    plane, with pi 0 and no force at the anchor; a frictionless body feels no lateral
    force at all."""
    if dim == 2:
        body = sc.PointCloud.disk(0.03, 0.005)
        pose, vel = [0.01, 0.028, 0.2], [0.05, -0.02, 1.0]
        anchors = ([0.0, 0.0], [0.3, 0.0], [-50.0, 0.0], [0.012, 0.0])
    else:
        body = sc.PointCloud.sphere(0.03, 0.008)
        pose, vel = [0.01, 0.02, 0.028, 1, 0, 0, 0], [0.05, -0.02, 0.1, 1.0, 0.0, 0.5]
        anchors = ([0, 0, 0], [0.3, -0.2, 0], [-50.0, 20.0, 0], [0.012, 0.021, 0])
    params = dataclasses.replace(PARAMS, friction=0.0)
    ref = None
    for anchor in anchors:
        floor = sc.PointCloud.halfspace(anchor, [0.0] * (dim - 1) + [1.0])
        zero = [0.0] * (3 if dim == 2 else 7)
        if dim == 3:
            zero[3] = 1.0
        c = sc.contact(body, pose, vel, floor, zero, [0.0] * (3 * dim - 3), params, order=1)
        assert c.distribution[-1] == 0.0 and np.all(c.forces[-1] == 0.0)
        assert c.depth < 0.0 and c.wrench_a[dim - 1] > 0.1
        # frictionless against a plane: every force along its normal, exactly
        np.testing.assert_array_equal(c.wrench_a[: dim - 1], 0.0)
        if ref is None:
            ref = c
            continue
        scale = np.abs(ref.wrench_a).max()
        np.testing.assert_allclose(c.wrench_a, ref.wrench_a, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(
            c.jacobian, ref.jacobian, rtol=0, atol=1e-9 * np.abs(ref.jacobian).max()
        )


@pytest.mark.parametrize("dim", [2, 3])
def test_friction_normal_where_the_gradient_vanishes(dim):
    """nu = G / sqrt(|G|^2 + 1e-30) and its jet stay finite to second order at a sample
    where the other body's SSDF gradient vanishes (a box's centre: symmetry cancels it;
    with a floor of 1e-300 the Hessian's terms overflowed there, to NaN)."""
    box = sc.PointCloud.box([0.05, 0.04, 0.03][:dim], 0.01)
    origin = [[0.0] * dim]
    assert np.abs(sc.ssdf(box, origin, 1e-5, order=1).grad).max() < 1e-15
    probe = sc.PointCloud(
        [[0.0] * dim, [0.0] * (dim - 1) + [0.001]], [[1.0] + [0.0] * (dim - 1)] * 2
    )
    pose = [0.0] * 3 if dim == 2 else [0, 0, 0, 1, 0, 0, 0]
    nv = 3 if dim == 2 else 6
    for order in range(3):
        r = sc.contact(probe, pose, [0.0] * nv, box, pose, [0.1] * nv, order=order)
        for a in r:
            if a is not None:
                assert np.all(np.isfinite(a))
    assert r.hessian is not None and np.abs(r.hessian).max() > 0
