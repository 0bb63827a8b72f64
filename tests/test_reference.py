"""Tests of the NumPy reference SSDF (tests/reference.py) on its own, without any C code.

The oracle is only useful if it is right, so it is checked against facts that do not depend
on it: finite differences, Taylor remainders, exact special cases (half-space, sign flip,
rigid motions) and the exact signed distance of a box at small temperature.
"""

import math
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from reference import (  # noqa: E402
    box_sdf_ref,
    numpy_ssdf_vectorized,
    ssdf_ref,
    symmetrize,
)

U = np.finfo(np.float64).eps  # unit roundoff (2.2e-16)
EPS_FACTORS = (1e-3, 1e-2, 1e-1, 1.0)  # eps / L^2


# --------------------------------------------------------------------------------------------
# fixtures / builders
# --------------------------------------------------------------------------------------------
def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def random_cloud(rng, dim, num, size):
    """Random cloud of ``num`` samples in a cube of side ``size`` with random unit normals."""
    p = rng.uniform(-0.5 * size, 0.5 * size, (num, dim))
    n = unit(rng.normal(size=(num, dim)))
    a = rng.uniform(0.5, 2.0, num)
    return p, n, a


def sphere_cloud(rng, dim, num, radius):
    """Samples on a circle / sphere with outward normals (a surface-like cloud)."""
    n = unit(rng.normal(size=(num, dim)))
    return radius * n, n, np.ones(num)


def box_cloud(half, spacing):
    """Box |x_k| <= half_k sampled by a grid on every face, boundary (edges/corners) included.

    Each face gets its own samples with its own normal, so edge and corner points appear once
    per adjacent face (as docs/method.md section 1 asks of constructors).
    """
    half = np.asarray(half, dtype=np.float64)
    dim = half.size
    pts, nrm = [], []
    for axis in range(dim):
        others = [k for k in range(dim) if k != axis]
        grids = [
            np.linspace(-half[k], half[k], int(np.ceil(2 * half[k] / spacing)) + 1) for k in others
        ]
        mesh = np.stack(np.meshgrid(*grids, indexing="ij"), axis=-1).reshape(-1, dim - 1)
        for sign in (-1.0, 1.0):
            p = np.empty((mesh.shape[0], dim))
            p[:, others] = mesh
            p[:, axis] = sign * half[axis]
            nv = np.zeros_like(p)
            nv[:, axis] = sign
            pts.append(p)
            nrm.append(nv)
    p = np.concatenate(pts)
    return p, np.concatenate(nrm), np.ones(p.shape[0])


def random_rotation(rng, dim):
    q, r = np.linalg.qr(rng.normal(size=(dim, dim)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def central_fd(fun, x, h):
    """Five-point central differences of fun (returning (M, ...)) along each coordinate.

    f'(x) ~ [8 (f(x+h) - f(x-h)) - (f(x+2h) - f(x-2h))] / (12 h): truncation h^4 f^(5) / 30,
    rounding ~1.5 u |f| / h. Result shape (M, ..., D), the new axis last.
    """
    dim = x.shape[1]
    cols = []
    for j in range(dim):
        e = np.zeros(dim)
        e[j] = h
        cols.append((8 * (fun(x + e) - fun(x - e)) - (fun(x + 2 * e) - fun(x - 2 * e))) / (12 * h))
    return np.stack(cols, axis=-1)


# --------------------------------------------------------------------------------------------
# (a) every order vs central finite differences of the next lower order
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("eps_factor", EPS_FACTORS)
@pytest.mark.parametrize("kind", ["random", "sphere"])
def test_derivatives_vs_finite_differences(dim, eps_factor, kind):
    L = 0.1  # cloud size (objects ~0.1 m), so that nothing silently assumes L = 1
    rng = np.random.default_rng(1000 + 10 * dim + int(-np.log10(eps_factor)))
    if kind == "random":
        p, n, a = random_cloud(rng, dim, 40, L)
    else:
        p, n, a = sphere_cloud(rng, dim, 60, 0.5 * L)
    eps = eps_factor * L**2
    x = rng.uniform(-L, L, (25, dim))  # inside, near and outside the cloud
    h = 1e-6 * L
    out = ssdf_ref(p, n, a, x, eps, order=3)
    # Characteristic length over which the weights change: sqrt(eps)-wide Gaussians whose
    # log-ratios move by |p_i - p_j| / (eps/2) per unit of x, i.e. transitions of width ~eps/L
    # between neighbouring samples; at large eps the cloud size L takes over.
    ell = min(L, eps / L)
    # Conditioning of an evaluation: the exponents d_i/eps of the samples that carry weight
    # have absolute rounding ~u d_i/eps, with d_i ~ the squared distance to the nearest sample.
    d_near = np.min(np.sum((x[:, None, :] - p[None, :, :]) ** 2, axis=-1), axis=1)
    kappa = 1.0 + d_near.max() / eps
    for k in (1, 2, 3):
        lower = lambda z, k=k: ssdf_ref(p, n, a, z, eps, order=k - 1)[k - 1]  # noqa: E731
        fd = central_fd(lower, x, h)
        exact = out[k]
        # Error budget of the 5-point central difference of f = (k-1)-th derivative:
        #  truncation  h^4 |f^(5)| / 30 ~ (h/ell)^4 |f'|: <= 1e-12 relative, negligible;
        #  rounding    ~ kappa u max|f| / h. Measured over 40 seeds x 16 configurations:
        #              err <= 3.9 kappa u max|f| / h; 10x leaves a >= 2.5x margin.
        # This worst-case bound reaches ~4e-5 of max|exact| (eps = 1e-3 L^2, kappa ~ 1e3), so
        # the error is also held to 1e-6 of max|exact| outright: the measured relative errors
        # are all <= 4e-9 (250x below), far below the ~1e-6 truncation error a 3-point
        # difference would have had at this step.
        scale = np.max(np.abs(exact))
        tol = 10 * (h / ell) ** 4 * scale + 10 * kappa * U * np.max(np.abs(out[k - 1])) / h
        err = np.max(np.abs(fd - exact))
        assert err <= tol, (k, err, tol, scale)
        assert err <= 1e-6 * scale, (k, err / scale)


# --------------------------------------------------------------------------------------------
# (b) Taylor remainders shrink like t^(n+1)
# --------------------------------------------------------------------------------------------
def directional(tensor, v):
    """tensor[v, v, ..., v] for a symmetric tensor with k trailing axes."""
    out = tensor
    while np.ndim(out) > 0:
        out = out @ v
    return out


def taylor_probe(p, n, a, x, eps, ell, rng, num_dirs=32):
    """Derivatives at x and the best of ``num_dirs`` random directions for a Taylor test.

    Returns (score, v, [D_0..D_4] along v, radius). D_4 comes from central differences of d3
    (step 1e-4 ell: relative error ~1e-8; it is only used to locate the asymptotic regime).
    ``score`` = min_k |D_k(v)| / max_v' |D_k(v')|: small when some directional derivative is
    accidentally ~0 along v (e.g. even orders at the centre of a symmetric transition), in
    which case the remainder of that order skips a power and its slope test is meaningless.
    ``radius`` = min_k (k+2) |D^k| / |D^(k+1)| (k = 2, 3): a Taylor-radius estimate.
    """
    dim = x.size
    phi, grad, hess, d3 = (o[0] for o in ssdf_ref(p, n, a, x[None, :], eps, order=3))
    cands = unit(rng.normal(size=(num_dirs, dim)))
    delta = 1e-4 * ell
    t3 = ssdf_ref(p, n, a, np.concatenate([x + delta * cands, x - delta * cands]), eps, 3)[3]
    t3 = t3.reshape(2, num_dirs, dim, dim, dim)
    dd = np.array(
        [
            [
                directional(grad, v),
                directional(hess, v),
                directional(d3, v),
                directional(t3[0, c] - t3[1, c], v) / (2 * delta),
            ]
            for c, v in enumerate(cands)
        ]
    )  # (num_dirs, 4): D_1..D_4 along each candidate
    mags = np.abs(dd).max(axis=0)
    scores = np.min(np.abs(dd) / mags, axis=1)
    best = int(np.argmax(scores))
    radius = min((k + 2) * mags[k] / mags[k + 1] for k in (1, 2))
    return scores[best], cands[best], [phi, *dd[best]], radius


def taylor_slopes(p, n, a, x, v, dirs, radius, eps, L):
    """Observed slopes of log err_n vs log t in the asymptotic window, for n = 0..3.

    See test_taylor_remainder_slopes for the window's definition.
    """
    ts = 0.5 * radius * 0.5 ** (0.5 * np.arange(60))  # ratio 1/sqrt 2, down to ~1e-9 R
    f_t = ssdf_ref(p, n, a, x + ts[:, None] * v, eps, order=0)[0]
    errs = [
        np.abs(f_t - sum(dirs[j] * ts**j / math.factorial(j) for j in range(order + 1)))
        for order in range(5)
    ]
    # Rounding floor, measured: at the 10 smallest steps (<= 2e-8 R) the true order-3
    # remainder is ~(2e-8)^4 of its scale, so err_3 there is pure rounding (a few ulps of
    # phi, growing with |x - p|^2/eps through the exponents). A rounding error delta moves
    # a slope by ~delta / (0.35 err), so errors are used only above 100x that floor.
    noise = 100 * max(errs[3][-10:].max(), U * L)
    log_ratio = np.log(ts[:-1] / ts[1:])
    out = []
    for order in range(4):
        err, nxt = errs[order], errs[order + 1]
        above = err > noise
        # the next remainder must be small and itself asymptotic (slope ~ n+2; a zero
        # crossing of r_{n+1} makes it small by coincidence but wrecks its slope)
        with np.errstate(divide="ignore", invalid="ignore"):  # nxt may be 0 in the noise
            nxt_slope = np.append(np.log(nxt[:-1] / nxt[1:]) / log_ratio, np.nan)
        settled = (nxt <= 0.1 * err) & (np.abs(nxt_slope - (order + 2)) < 0.5)
        settled |= nxt <= noise
        late = np.flatnonzero(above & ~settled)
        good = above & (np.arange(ts.size) > (late.max() if late.size else -1))
        ok = good[:-1] & good[1:]
        out.append(np.log(err[:-1][ok] / err[1:][ok]) / log_ratio[ok])
    return out


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("eps_factor", EPS_FACTORS)
def test_taylor_remainder_slopes(dim, eps_factor):
    """err_n(t) = |phi(x + t v) - sum_{j<=n} D_j t^j / j!| must shrink like t^(n+1), n = 0..3.

    err_n = |T_{n+1}(t) + r_{n+1}(t)| (T: the next Taylor term, r: the signed remainder of
    the next order) has slope n+1 where |r_{n+1}| << |T_{n+1}|. That window is decided by the
    data: steps start at half the estimated Taylor radius and only the steps below the last
    one where err_{n+1} > 0.1 err_n, or where err_{n+1} does not yet shrink like t^(n+2)
    (a zero crossing of r_{n+1} makes it small by coincidence), count; there r is ~linear in
    t, so the slope deviation is <= ~0.1. They go down to 100x the rounding floor.
    If a derivative were wrong, err_{n+1} would shrink like err_n (empty window, caught by
    the size check) or the order-(n+1) slope would be n+1 instead of n+2 (caught).
    """
    L = 1.0
    rng = np.random.default_rng(2000 + 10 * dim + int(-np.log10(eps_factor)))
    p, n, a = random_cloud(rng, dim, 30, L)
    eps = eps_factor * L**2
    ell = min(L, eps / L)  # length over which phi bends (see the finite-difference test)
    # Candidate points where samples with clearly different planes share the weight (weighted
    # spread of h_i >= 0.05 L): there phi is genuinely curved. Deep inside one sample's
    # Voronoi cell at small eps phi is a plane to rounding and every remainder is noise.
    cand = rng.uniform(-0.75 * L, 0.75 * L, (4000, dim))
    diff = cand[:, None, :] - p[None, :, :]
    s = np.sum(diff**2, axis=-1) / eps - np.log(a)
    s -= s.min(axis=1, keepdims=True)
    with np.errstate(under="ignore"):  # far samples: weight underflows to its limit, 0
        w = np.exp(-s)
    w /= w.sum(axis=1, keepdims=True)
    hh = np.einsum("mid,id->mi", diff, n)
    spread = np.sqrt(np.sum(w * (hh - np.sum(w * hh, axis=1, keepdims=True)) ** 2, axis=1))
    cand = cand[spread >= 0.05 * L][:12]
    assert cand.shape[0] == 12
    results = []
    for x in cand:
        score, v, dirs, radius = taylor_probe(p, n, a, x, eps, ell, rng)
        results.append((score, taylor_slopes(p, n, a, x, v, dirs, radius, eps, L)))
    # Keep the 3 points with the widest asymptotic windows (a point where some derivative
    # vanishes by accident has a window only at steps below the noise). This selection cannot
    # hide a wrong derivative: a wrong D_{n+1} leaves err_{n+1} shrinking like t^(n+1) at small
    # t, and a wrong D_n makes err_{n+1} ~ err_n: both empty the window at every point.
    results.sort(key=lambda r: -min(sl.size for sl in r[1]))
    for score, slopes_by_order in results[:3]:
        assert score > 0.05
        for order, slopes in enumerate(slopes_by_order):
            assert slopes.size >= 3, (order, slopes)
            assert np.all(np.abs(slopes - (order + 1)) < 0.3), (order, slopes)


# --------------------------------------------------------------------------------------------
# (c) single sample = exact half-space
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [2, 3])
def test_single_sample_is_half_space(dim):
    rng = np.random.default_rng(3000 + dim)
    p = rng.normal(size=(1, dim))
    n = unit(rng.normal(size=(1, dim)))
    x = np.concatenate([rng.normal(scale=s, size=(10, dim)) for s in (1e-3, 1.0, 1e3)])
    expected = np.sum((x - p) * n, axis=1)
    for eps in (1e-12, 1e-6, 1e-2, 1.0, 1e3, 1e12):
        for weight in (1e-3, 1.0, 7.0):
            phi, grad, hess, d3 = ssdf_ref(p, n, [weight], x, eps, order=3)
            # w = exp(0)/exp(0) = 1 exactly, so phi is n.(x-p) up to the summation order only
            np.testing.assert_allclose(phi, expected, rtol=0, atol=4 * U * np.abs(x - p).max())
            # centred quantities are exactly zero, hence these are exact
            np.testing.assert_array_equal(grad, np.broadcast_to(n, grad.shape))
            np.testing.assert_array_equal(hess, 0.0)
            np.testing.assert_array_equal(d3, 0.0)


# --------------------------------------------------------------------------------------------
# (d) flipping every normal flips every output (bitwise: rounding is odd-symmetric)
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("eps_factor", [1e-3, 1e-1, 1.0])
def test_flipped_normals_flip_everything(dim, eps_factor):
    rng = np.random.default_rng(4000 + dim)
    p, n, a = random_cloud(rng, dim, 35, 1.0)
    x = rng.uniform(-1, 1, (20, dim))
    out = ssdf_ref(p, n, a, x, eps_factor, order=3)
    flipped = ssdf_ref(p, -n, a, x, eps_factor, order=3)
    for o, f in zip(out, flipped, strict=True):
        np.testing.assert_array_equal(f, -o)


# --------------------------------------------------------------------------------------------
# (e) rigid-motion invariance
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("eps_factor", EPS_FACTORS)
def test_rigid_motion_invariance(dim, eps_factor):
    L = 0.2
    rng = np.random.default_rng(5000 + 10 * dim + int(-np.log10(eps_factor)))
    p, n, a = random_cloud(rng, dim, 40, L)
    eps = eps_factor * L**2
    x = rng.uniform(-L, L, (30, dim))
    rot = random_rotation(rng, dim)
    shift = rng.normal(scale=L, size=dim)
    phi, grad, hess, d3 = ssdf_ref(p, n, a, x, eps, order=3)
    phi2, grad2, hess2, d32 = ssdf_ref(p @ rot.T + shift, n @ rot.T, a, x @ rot.T + shift, eps, 3)
    # Rounding of the rotated squared distances perturbs the exponents by ~u |x-p|^2/eps
    # (<= ~1e-12 here); each derivative order multiplies the relative error by at most a
    # modest factor, so 1e-10 of each array's magnitude is a safe, still tight, bound.
    rtol = 1e-10
    np.testing.assert_allclose(phi2, phi, rtol=0, atol=rtol * np.abs(phi).max())
    np.testing.assert_allclose(grad2, grad @ rot.T, rtol=0, atol=rtol * np.abs(grad).max())
    hess_rot = np.einsum("ia,jb,mab->mij", rot, rot, hess)
    np.testing.assert_allclose(hess2, hess_rot, rtol=0, atol=rtol * np.abs(hess).max())
    d3_rot = np.einsum("ia,jb,kc,mabc->mijk", rot, rot, rot, d3)
    np.testing.assert_allclose(d32, d3_rot, rtol=0, atol=rtol * np.abs(d3).max())


# --------------------------------------------------------------------------------------------
# (f) small eps inside a box = exact box SDF where the nearest face is unambiguous
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("half", "spacing"),
    [((1.0, 0.6), 0.02), ((1.0, 0.7, 0.5), 0.05)],
    ids=["2d", "3d"],
)
def test_box_interior_small_eps_is_exact_sdf(half, spacing):
    half = np.asarray(half)
    dim = half.size
    p, n, a = box_cloud(half, spacing)
    eps = 1e-4 * (2 * half.max()) ** 2
    rng = np.random.default_rng(6000 + dim)
    x = rng.uniform(-half, half, (3000, dim))
    # depth below each face plane (2D faces per axis: -half_k and +half_k)
    depth = np.concatenate([x + half, half - x], axis=1)  # (M, 2D)
    face_axis = np.concatenate([np.arange(dim), np.arange(dim)])
    face_sign = np.concatenate([-np.ones(dim), np.ones(dim)])
    nearest = np.argmin(depth, axis=1)
    # squared distance to the nearest *sample* of the nearest face (those samples all have
    # h = -depth exactly, whatever their weights)
    dn2 = np.empty(x.shape[0])
    for f in range(2 * dim):
        sel = n[:, face_axis[f]] == face_sign[f]
        rows = nearest == f
        diff = x[rows][:, None, :] - p[sel][None, :, :]
        dn2[rows] = np.min(np.einsum("mid,mid->mi", diff, diff), axis=1)
    # every sample of another face f lies on that face's plane, so its squared distance is at
    # least depth_f^2; a margin of 50 eps bounds its relative weight by exp(-50) ~ 2e-22.
    other = depth.copy()
    other[np.arange(x.shape[0]), nearest] = np.inf
    keep = dn2 + 50 * eps <= np.min(other, axis=1) ** 2
    assert keep.sum() >= 1000
    xs = x[keep]
    phi, grad = ssdf_ref(p, n, a, xs, eps, order=1)[:2]
    sdf = box_sdf_ref(half, xs)
    np.testing.assert_allclose(phi, sdf, rtol=0, atol=1e-12)
    normal = np.zeros_like(xs)
    normal[np.arange(xs.shape[0]), face_axis[nearest[keep]]] = face_sign[nearest[keep]]
    # grad = n_bar + (2/eps) E[(h - phi)(p - p_bar)]: h - phi is 0 on the nearest face and the
    # rest carries weight <= exp(-50), so grad is the face normal to ~(2/eps) L e^-50 ~ 1e-17.
    np.testing.assert_allclose(grad, normal, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------------
# helpers and properties of the implementation itself
# --------------------------------------------------------------------------------------------
@pytest.mark.skipif(
    np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
    reason="np.longdouble is no wider than float64 on this platform",
)
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("offset", [0.0, 10.0])
def test_float64_rounding_vs_extended_precision(dim, offset):
    """The float64 oracle is accurate: the same code in np.longdouble agrees to ~kappa u.

    This checks rounding, not the formulas (those are checked above): centred moments keep
    the float64 error at the conditioning of the exponents, kappa u with kappa = 1 + the
    largest d_nearest/eps, even at eps = 1e-4 L^2 and for a cloud 10 L from the origin (raw
    moments such as E[hp] - E[h]E[p] would instead amplify the rounding of |p|-sized terms by
    (2/eps)^k).
    Measured: error <= 0.6 kappa u of each array's magnitude; tolerance (100 + 10 kappa) u.
    """
    rng = np.random.default_rng(10000 + dim + int(offset))
    p, n, a = random_cloud(rng, dim, 40, 1.0)
    p += offset
    x = rng.uniform(-1, 1, (30, dim)) + offset
    d_near = np.min(np.sum((x[:, None, :] - p[None, :, :]) ** 2, axis=-1), axis=1)
    for eps in (1e-4, 1e-3, 1e-2, 1e-1, 1.0):
        kappa = 1.0 + d_near.max() / eps
        out = ssdf_ref(p, n, a, x, eps, order=3)
        ext = ssdf_ref(p, n, a, x, eps, order=3, dtype=np.longdouble)
        for k, (o, e) in enumerate(zip(out, ext, strict=True)):
            scale = float(np.max(np.abs(e)))
            err = float(np.max(np.abs(o - e)))
            assert err <= (100 + 10 * kappa) * U * scale, (eps, k, err / scale, kappa)


def test_box_sdf_ref_known_values():
    half = (1.0, 2.0, 3.0)
    x = np.array(
        [
            [0.0, 0.0, 0.0],  # centre: nearest face x = +-1
            [0.5, 0.0, 0.0],
            [2.0, 0.0, 0.0],  # outside a face
            [2.0, 3.0, 0.0],  # outside an edge
            [4.0, 6.0, 7.0],  # outside a corner
            [1.0, 2.0, 3.0],  # on the corner
        ]
    )
    expected = [-1.0, -0.5, 1.0, np.sqrt(2.0), np.sqrt(9.0 + 16.0 + 16.0), 0.0]
    np.testing.assert_allclose(box_sdf_ref(half, x), expected, rtol=0, atol=1e-15)
    x2 = [[0.0, 0.0], [2.0, 1.5]]
    np.testing.assert_allclose(box_sdf_ref((1.0, 0.5), x2), [-0.5, np.sqrt(2)], atol=1e-15)


@pytest.mark.parametrize("dim", [2, 3])
def test_symmetry_is_exact_and_chunking_is_invisible(dim):
    rng = np.random.default_rng(7000 + dim)
    p, n, a = random_cloud(rng, dim, 50, 1.0)
    x = rng.uniform(-1, 1, (37, dim))
    full = ssdf_ref(p, n, a, x, 0.05, order=3)
    hess, d3 = full[2], full[3]
    np.testing.assert_array_equal(hess, np.swapaxes(hess, 1, 2))
    for perm in [(0, 2, 1, 3), (0, 3, 2, 1), (0, 1, 3, 2), (0, 2, 3, 1), (0, 3, 1, 2)]:
        np.testing.assert_array_equal(d3, np.transpose(d3, perm))
    # tiny chunks (one query at a time) give the same numbers as one big chunk
    small = ssdf_ref(p, n, a, x, 0.05, order=3, max_bytes=1)
    for f, s in zip(full, small, strict=True):
        # (BLAS may block a different batch size differently: last-bit differences only)
        np.testing.assert_allclose(s, f, rtol=0, atol=1e-14 * np.abs(f).max())
    # the value does not depend on the order requested; lower orders are prefixes
    for order in range(3):
        part = ssdf_ref(p, n, a, x, 0.05, order=order)
        for k in range(4):
            if k <= order:
                np.testing.assert_array_equal(part[k], full[k])
            else:
                assert part[k] is None
    # a single (D,) query drops the M axis
    one = ssdf_ref(p, n, a, x[3], 0.05, order=3)
    assert one[0].shape == () and one[3].shape == (dim,) * 3
    # the benchmark baseline is the same computation
    base = numpy_ssdf_vectorized(p, n, a, x, 0.05, 3)
    for f, b in zip(full, base, strict=True):
        np.testing.assert_array_equal(b, f)


def test_symmetrize_helper():
    rng = np.random.default_rng(8000)
    t = rng.normal(size=(4, 3, 3, 3))
    s = symmetrize(t, 3)
    np.testing.assert_array_equal(s, np.transpose(s, (0, 2, 1, 3)))
    np.testing.assert_array_equal(s, np.transpose(s, (0, 3, 2, 1)))
    sym_t = (
        sum(
            np.transpose(t, (0,) + tuple(1 + q for q in perm))
            for perm in [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
        )
        / 6
    )
    np.testing.assert_allclose(s, sym_t, rtol=1e-14, atol=1e-15)


def test_weights_scale_invariance_and_far_queries_do_not_warn():
    rng = np.random.default_rng(9000)
    p, n, a = random_cloud(rng, 3, 30, 1.0)
    x = np.concatenate([rng.uniform(-1, 1, (10, 3)), rng.normal(scale=1e4, size=(5, 3))])
    for eps in (1e-6, 1e-2, 1e2):
        out = ssdf_ref(p, n, a, x, eps, order=3)  # far queries: huge d/eps, underflowed weights
        scaled = ssdf_ref(p, n, 1e5 * a, x, eps, order=3)
        for o, s in zip(out, scaled, strict=True):
            assert np.all(np.isfinite(o))
            np.testing.assert_allclose(s, o, rtol=1e-9, atol=1e-9 * np.abs(o).max())
