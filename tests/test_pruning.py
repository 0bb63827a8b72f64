"""Exact pruning (docs/method.md section 10): the pruned SSDF, separation field,
contact and step equal the dense computation (``dense=True``) to rounding, at every
derivative order, over a sweep of temperatures, distances and overlaps.

"To rounding" is made precise per output array: the difference between pruned and dense
must stay below ``1e-13 * max|dense|`` plus ten times the difference between two dense
computations that differ only in the order of the samples (the same sums, rounded
differently).  The second term is the conditioning of the quantity itself: at eps = 1e-7 a
box's SSDF Hessian is a difference of terms of size (2/eps)^2 that cancel to zero, and no
summation order gets that zero exactly.
"""

import numpy as np
import pytest

import softcontact as sc

# Scenes here step past the explicit integrator's friction and damping limits on purpose:
# what is checked (derivatives, bits, memory, parameters) holds at any dt.  Scene.build's
# stability warning is tested in tests/test_scene.py.
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


def _shuffled(cloud, rng):
    perm = rng.permutation(len(cloud))
    return sc.PointCloud(cloud.points[perm], cloud.normals[perm], cloud.weights[perm])


def _check(pruned, dense, dense2, what, floor=0.0):
    """pruned == dense to rounding: relative to dense's largest entry, or to ``floor`` (the
    scale of the outputs computed together with it) where that is larger."""
    pruned, dense, dense2 = (np.asarray(a, dtype=float) for a in (pruned, dense, dense2))
    assert pruned.shape == dense.shape, what
    assert np.all(np.isfinite(pruned)), what
    scale = max(np.abs(dense).max() if dense.size else 0.0, floor)
    noise = np.abs(dense2 - dense).max() if dense.size else 0.0
    err = np.abs(pruned - dense).max() if dense.size else 0.0
    assert err <= 1e-13 * scale + 10 * noise, (what, err, scale, noise)


CLOUDS = {
    "T (2D, 312)": lambda: sc.PointCloud.t_shape(spacing=0.0016),
    "disk (2D, 630)": lambda: sc.PointCloud.disk(0.1, 0.001),
    "box (3D, 294)": lambda: sc.PointCloud.box([0.05, 0.05, 0.05], 0.1 / 6),
    "sphere (3D, ~2000)": lambda: sc.PointCloud.sphere(0.05, 0.004),
}


@pytest.mark.parametrize("name", list(CLOUDS))
@pytest.mark.parametrize("eps_rel", [1e-5, 1e-3, 1e-1, 10.0])
def test_ssdf_pruned_equals_dense(rng, name, eps_rel):
    cloud = CLOUDS[name]()
    assert len(cloud) >= 256  # the clouds carry a spatial index
    D, L = cloud.dim, cloud.size
    eps = eps_rel * L * L
    x = np.vstack(
        [
            rng.uniform(-0.75 * L, 0.75 * L, (60, D)),  # inside and around
            cloud.points[rng.integers(0, len(cloud), 30)]
            + 1e-3 * L * rng.normal(size=(30, D)),  # on the surface
            rng.normal(size=(15, D)) * 5 * L,  # far (expanded form)
            rng.normal(size=(5, D)) * 1e3 * L,  # very far
        ]
    )
    x0 = x.copy()
    a = sc.ssdf(cloud, x, eps, order=3)
    b = sc.ssdf(cloud, x, eps, order=3, dense=True)
    c = sc.ssdf(_shuffled(cloud, rng), x, eps, order=3, dense=True)
    np.testing.assert_array_equal(x, x0)
    for f in ("phi", "grad", "hess", "d3"):
        _check(getattr(a, f), getattr(b, f), getattr(c, f), (name, eps_rel, f))
    # the value does not depend on the order asked for, pruned as dense
    for order in (0, 1, 2):
        np.testing.assert_array_equal(sc.ssdf(cloud, x, eps, order=order).phi, a.phi)


SMALL_CLOUDS = {
    "pusher disk (2D, 32)": lambda: sc.PointCloud.disk(0.015, 0.003),
    "push-T's T (2D, 170)": lambda: sc.PointCloud.t_shape(spacing=0.003),
    "small box (3D, 54)": lambda: sc.PointCloud.box([0.04, 0.04, 0.04], 0.04),
    "weighted arc (2D, 40)": lambda: sc.PointCloud(
        np.c_[np.cos(np.linspace(0, 3, 40)), np.sin(np.linspace(0, 3, 40))] * 0.05,
        np.c_[np.cos(np.linspace(0, 3, 40)), np.sin(np.linspace(0, 3, 40))],
        np.linspace(0.2, 5.0, 40),
    ),
}


@pytest.mark.parametrize("name", list(SMALL_CLOUDS))
@pytest.mark.parametrize("eps_rel", [1e-4, 1e-2, 1.0])
def test_ssdf_small_cloud_pruned_equals_dense(rng, name, eps_rel):
    """A cloud of fewer than 256 samples has no index: pruned, each query still skips the
    groups of 8 samples below its far cut (the push-T pusher seen from the T, the T seen
    from the pusher)."""
    cloud = SMALL_CLOUDS[name]()
    assert 8 < len(cloud) < 256
    D, L = cloud.dim, cloud.size
    eps = eps_rel * L * L
    x = np.vstack(
        [
            rng.uniform(-2 * L, 2 * L, (60, D)),
            cloud.points[rng.integers(0, len(cloud), 20)] + 1e-2 * L * rng.normal(size=(20, D)),
            rng.normal(size=(15, D)) * 20 * L,
            rng.normal(size=(5, D)) * 1e4 * L,
        ]
    )
    x[3, 0] = np.nan
    x0 = x.copy()
    a = sc.ssdf(cloud, x, eps, order=3, num_threads=1)
    b = sc.ssdf(cloud, x, eps, order=3, dense=True)
    c = sc.ssdf(_shuffled(cloud, rng), x, eps, order=3, dense=True)
    np.testing.assert_array_equal(x, x0)
    ok = np.isfinite(x).all(axis=1)
    assert np.isnan(a.phi[~ok]).all() and np.isnan(a.d3[~ok]).all()
    for f in ("phi", "grad", "hess", "d3"):
        _check(getattr(a, f)[ok], getattr(b, f)[ok], getattr(c, f)[ok], (name, eps_rel, f))
    for order in (0, 1, 2):
        np.testing.assert_array_equal(sc.ssdf(cloud, x, eps, order=order).phi, a.phi)
    # what a query keeps depends on it alone: threads, permutation and a query alone
    perm = rng.permutation(len(x))
    t2 = sc.ssdf(cloud, x[perm], eps, order=3, num_threads=2)
    for f in ("phi", "grad", "hess", "d3"):
        np.testing.assert_array_equal(getattr(t2, f), getattr(a, f)[perm])
    for i in (0, 70, 90, 99):
        one = sc.ssdf(cloud, x[i : i + 1], eps, order=2)
        np.testing.assert_array_equal(one.hess[0], a.hess[i])


def test_ssdf_pruned_nonfinite_rows_and_threads(rng):
    cloud = CLOUDS["sphere (3D, ~2000)"]()
    x = rng.uniform(-0.1, 0.1, (50, 3))
    x[7, 1] = np.nan
    x[9, 0] = np.inf
    a = sc.ssdf(cloud, x, 1e-5, order=2, num_threads=1)
    b = sc.ssdf(cloud, x, 1e-5, order=2, num_threads=2)
    for f in ("phi", "grad", "hess"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))  # bitwise, any threads
    assert np.isnan(a.phi[[7, 9]]).all() and np.isnan(a.hess[[7, 9]]).all()
    ok = np.ones(len(x), bool)
    ok[[7, 9]] = False
    assert np.isfinite(a.hess[ok]).all()
    # alone or in a batch: the same bits
    one = sc.ssdf(cloud, x[3:4], 1e-5, order=2)
    np.testing.assert_array_equal(one.hess[0], a.hess[3])


def test_ssdf_pruned_query_order_changes_nothing(rng):
    """Pruned queries run in Morton order per chunk of 4096 (for the cache): a batch of
    more than one chunk, permuted, split, with non-finite rows and on 1 or 2 threads,
    gives the same bits row for row."""
    cloud = CLOUDS["disk (2D, 630)"]()
    x = rng.uniform(-0.12, 0.12, (5000, 2))
    x[[11, 4500]] = np.nan
    ref = sc.ssdf(cloud, x, 1e-5, order=2, num_threads=1)
    perm = rng.permutation(len(x))
    shuffled = sc.ssdf(cloud, x[perm], 1e-5, order=2, num_threads=2)
    parts = [sc.ssdf(cloud, x[i : i + 700], 1e-5, order=2) for i in range(0, len(x), 700)]
    for k, f in enumerate(("phi", "grad", "hess")):
        np.testing.assert_array_equal(getattr(shuffled, f), getattr(ref, f)[perm])
        np.testing.assert_array_equal(np.concatenate([p[k] for p in parts]), getattr(ref, f))
    assert np.isnan(ref.phi[[11, 4500]]).all() and np.isfinite(np.delete(ref.phi, [11, 4500])).all()
    dense = sc.ssdf(cloud, x, 1e-5, order=2, dense=True)
    ok = np.isfinite(ref.phi)
    for f in ("phi", "grad", "hess"):
        _check(getattr(ref, f)[ok], getattr(dense, f)[ok], getattr(dense, f)[ok], f)


def test_ssdf_pruned_sort_puts_nonfinite_rows_first(rng):
    """The chunk's radix sort orders queries by the high bits of their Morton key: queries
    at the lowest corner of the batch's box (key 0), tied with each other, and non-finite
    rows before, among and after them must still come out right (a non-finite row sorts
    strictly first; finite ties keep their order): each row as the query alone, and as
    the dense computation."""
    cloud = CLOUDS["sphere (3D, ~2000)"]()
    corner = np.array([-0.12, -0.11, -0.1])
    x = np.vstack([np.tile(corner, (12, 1)), corner + rng.uniform(0, 0.2, (40, 3))])
    bad = [0, 5, 13, 51]
    x[bad] = [np.nan, 0.0, 0.0]
    x = np.vstack([x, corner])
    a = sc.ssdf(cloud, x, 1e-5, order=2, num_threads=1)
    ok = np.ones(len(x), bool)
    ok[bad] = False
    assert np.isnan(a.phi[bad]).all() and np.isnan(a.hess[bad]).all()
    assert np.isfinite(a.hess[ok]).all()
    for i in (1, 4, 6, 12, 14, 50, 52):
        one = sc.ssdf(cloud, x[i : i + 1], 1e-5, order=2)
        np.testing.assert_array_equal(one.hess[0], a.hess[i])
        np.testing.assert_array_equal(one.phi[0], a.phi[i])
    # up to 32 queries are sorted by insertion instead: the same rows
    few = sc.ssdf(cloud, x[:30], 1e-5, order=2, num_threads=1)
    for f in ("phi", "grad", "hess"):
        np.testing.assert_array_equal(getattr(few, f), getattr(a, f)[:30])
    dense = sc.ssdf(cloud, x, 1e-5, order=2, dense=True)
    for f in ("phi", "grad", "hess"):
        _check(getattr(a, f)[ok], getattr(dense, f)[ok], getattr(dense, f)[ok], f)


def test_ssdf_pruned_group_walk_changes_nothing(rng):
    """Queries consecutive in Morton order share one tree walk (up to 64 within a few
    smoothing lengths; a query alone walks by itself); what each keeps must not depend on
    its companions.  Mixed batches (on the surface, inside,
    far, very far, in 3D and 2D, near ties between leaves) against each query alone:
    the same bits."""
    for cloud, eps in ((CLOUDS["sphere (3D, ~2000)"](), 1e-5), (CLOUDS["disk (2D, 630)"](), 1e-6)):
        D, L = cloud.dim, cloud.size
        on = cloud.points[rng.integers(0, len(cloud), 200)]
        x = np.vstack(
            [
                on + 1e-3 * L * rng.normal(size=on.shape),
                on[0] + 0.3 * np.sqrt(eps) * rng.normal(size=(80, D)),  # dense: full groups
                0.5 * (on[:100] + on[100:]),  # between two samples
                rng.uniform(-0.75 * L, 0.75 * L, (100, D)),
                rng.normal(size=(60, D)) * 5 * L,
                rng.normal(size=(10, D)) * 1e3 * L,
            ]
        )
        x = x[rng.permutation(len(x))]
        batch = sc.ssdf(cloud, x, eps, order=2, num_threads=1)
        for i in rng.choice(len(x), 60, replace=False):
            one = sc.ssdf(cloud, x[i : i + 1], eps, order=2)
            for k in range(3):
                np.testing.assert_array_equal(one[k][0], batch[k][i])


def test_ssdf_pruned_seed_changes_nothing(rng):
    """Each query lists its leaves from a lower bound of its largest s_i, taken from the
    previous query's sample of largest weight (Morton order); the kernel's cut comes from
    the query's own s_i, so a poor seed only lists more leaves.  A query after companions
    near it (a good seed), across the cloud within the same walk group (a poor one: its
    largest s_i far below), at a tie between two samples, and inside the cloud, against
    the query alone: the same bits, at every order; and equal to the dense result."""
    cloud = CLOUDS["sphere (3D, ~2000)"]()
    eps = 1e-5
    on = cloud.points[rng.integers(0, len(cloud), 12)]
    nrm = cloud.normals[rng.integers(0, len(cloud), 12)]
    for k, (p, nv) in enumerate(zip(on, nrm, strict=True)):
        q = p + 1e-3 * nv
        companions = [
            q + 2e-4 * rng.normal(size=3),  # good seed
            q - 0.02 * _unit(p) + 0.005 * rng.normal(size=3),  # poor seed
            0.5 * (p + on[(k + 1) % len(on)]),  # inside
            q + 3e-3 * rng.normal(size=3),
        ]
        for c in companions:
            for x in (np.array([c, q]), np.array([q, c]), np.array([c, c, q, c])):
                for order in (0, 1, 2):
                    batch = sc.ssdf(cloud, x, eps, order=order, num_threads=1)
                    for i in range(len(x)):
                        one = sc.ssdf(cloud, x[i : i + 1], eps, order=order)
                        for f in range(order + 1):
                            np.testing.assert_array_equal(one[f][0], batch[f][i])
        dense = sc.ssdf(cloud, q[None], eps, order=2, dense=True)
        pruned = sc.ssdf(cloud, q[None], eps, order=2)
        for f in ("phi", "grad", "hess"):
            _check(getattr(pruned, f), getattr(dense, f), getattr(dense, f), f)


def _unit(q):
    return q / np.linalg.norm(q)


def _pair(dim, gap, rng):
    """Two bodies whose surfaces are `gap` apart along x (negative: overlapping)."""
    if dim == 2:
        a = sc.PointCloud.t_shape(spacing=0.0025)
        b = sc.PointCloud.disk(0.04, 0.002)
        xa = sc.PointCloud.t_shape_vertices()[:, 0].max()
        return a, np.array([0.0, 0.0, 0.0]), b, np.array([xa + 0.04 + gap, 0.01, 0.4])
    a = sc.PointCloud.sphere(0.05, 0.006)
    b = sc.PointCloud.box([0.03, 0.03, 0.03], 0.006)
    qb = _unit(np.array([1.0, 0.0, 0.0, 0.0]) + 0.05 * rng.normal(size=4))
    return (
        a,
        np.array([0, 0, 0, 1.0, 0, 0, 0]),
        b,
        np.concatenate([[0.05 + 0.03 + gap, 0.004, -0.003], qb]),
    )


GAPS = [-0.004, -0.0005, 0.0, 0.002, 0.02, 0.2, 1.0]


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("gap", GAPS)
def test_separation_pruned_equals_dense(rng, dim, gap):
    a, pa, b, pb = _pair(dim, gap, rng)
    for eps in (1e-6, 1e-5, 1e-3):
        r = sc.separation(a, pa, b, pb, eps, order=2)
        d = sc.separation(a, pa, b, pb, eps, order=2, dense=True)
        d2 = sc.separation(_shuffled(a, rng), pa, _shuffled(b, rng), pb, eps, order=2, dense=True)
        # the shuffled copy's rows are permuted: compare sorted-free summaries per row set
        for f in ("phi", "grad", "dphi_dq", "d2phi_dq2"):
            _check(
                getattr(r, f),
                getattr(d, f),
                getattr(d, f) + _row_noise(d, d2, f),
                (dim, gap, eps, f),
            )


def _row_noise(d, d2, f):
    """The rounding noise level of field f: the largest difference between the dense
    result and the dense result on shuffled clouds, over matching rows (the shuffled
    copy's rows come in another order, matched here by sorting each on its points)."""
    ka = np.lexsort(d.points.T[::-1])
    kb = np.lexsort(d2.points.T[::-1])
    same = np.allclose(d.points[ka], d2.points[kb], rtol=0, atol=1e-15)
    if not same:  # coincident points (box corners): no safe matching, no noise credit
        return np.zeros_like(getattr(d, f))
    noise = np.abs(getattr(d, f)[ka] - getattr(d2, f)[kb]).max()
    return np.full_like(getattr(d, f), noise)


def _contact_check(c, d, d2, what):
    for f in ("wrench_a", "wrench_b", "jacobian", "hessian"):
        _check(getattr(c, f), getattr(d, f), getattr(d2, f), what + (f,))
    for f in ("phi", "distribution"):
        _check(getattr(c, f), getattr(d, f), getattr(d, f), what + (f,))
    assert c.depth == pytest.approx(d.depth, rel=1e-13, abs=0)
    assert c.energy == pytest.approx(d.energy, rel=1e-13, abs=0)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("gap", GAPS)
def test_contact_pruned_equals_dense(rng, dim, gap):
    a, pa, b, pb = _pair(dim, gap, rng)
    nv = 3 if dim == 2 else 6
    va, vb = 0.2 * rng.normal(size=nv), 0.2 * rng.normal(size=nv)
    sa, sb = _shuffled(a, rng), _shuffled(b, rng)
    for eps_c in (1e-4, 1e-3):
        prm = sc.ContactParams(eps_c=eps_c, friction=0.5, damping=5.0)
        c = sc.contact(a, pa, va, b, pb, vb, prm, order=2)
        d = sc.contact(a, pa, va, b, pb, vb, prm, order=2, dense=True)
        skipped = not np.any(c.wrench_a)
        assert skipped == (not np.any(c.jacobian)) == (not np.any(c.hessian))
        assert skipped or gap < 1.0  # far apart: always skipped
        if skipped:
            # beyond the contact range the pair is skipped: exactly zero, where the dense
            # wrench is below anything representable against the contact's force scale
            k_b = prm.stiffness * prm.beta
            assert np.abs(d.wrench_a).max() < 1e-18 * k_b
            assert np.abs(d.jacobian).max() < 1e-18 * k_b / prm.beta
            assert np.abs(d.hessian).max() < 1e-18 * k_b / prm.beta**2
            _check(c.phi, d.phi, d.phi, (dim, gap, eps_c, "phi"))
            assert c.depth == pytest.approx(d.depth, rel=1e-13, abs=0)
            continue
        assert np.abs(d.wrench_a).max() > 0
        d2 = sc.contact(sa, pa, va, sb, pb, vb, prm, order=2, dense=True)
        _contact_check(c, d, d2, (dim, gap, eps_c))


def test_step_pruned_equals_dense_on_push_t_and_box(rng):
    from softcontact.tasks import push_t

    task = push_t.make(seed=5)
    m = task.model
    assert m.integrator == "implicit"
    # the implicit step's linear solve mixes a derivative order's entries: rounding in one
    # is relative to the largest of its order (a d2x_dxdu of 2.6e-32, rounding of zero,
    # next to second derivatives of order 1e2)
    order_of = {"x_next": 0, "dx_dx": 1, "dx_du": 1, "d2x_dx2": 2, "d2x_dxdu": 2, "d2x_du2": 2}
    for trial in range(6):
        x = np.array(task.x0, dtype=float)
        t = x[:3]
        # pusher near the T (in contact for some trials), T near a wall for others
        ang = rng.uniform(0, 2 * np.pi)
        x[3:5] = t[:2] + (0.03 + 0.02 * trial / 5) * np.array([np.cos(ang), np.sin(ang)])
        if trial % 2:
            x[0] = 0.02 + 0.08 * rng.uniform()
        x[m.nq :] = 0.1 * rng.normal(size=m.nv)
        u = 0.2 * rng.normal(size=m.nu)
        r = m.step(x, u, order=2)
        d = m.step(x, u, order=2, dense=True)
        floors = {}
        for f in order_of:
            k = order_of[f]
            floors[k] = max(floors.get(k, 0.0), float(np.abs(getattr(d, f)).max()))
        for f in r._fields:
            if getattr(r, f) is not None:
                _check(
                    getattr(r, f),
                    getattr(d, f),
                    getattr(d, f),
                    (trial, f),
                    floors.get(order_of.get(f), 0.0),
                )
    box = sc.PointCloud.box([0.05, 0.05, 0.05], 0.1 / 6)
    floor = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    scene = sc.Scene(dim=3)
    scene.add_body(floor, kind="static", name="floor")
    scene.add_body(
        box,
        mass=1.0,
        pose=[0.0, 0.0, 0.046, 1.0, 0.0, 0.0, 0.0],
        velocity=[0.05, 0.0, -0.01, 0.0, 0.2, 0.1],
        name="box",
    )
    scene.add_contact("box", "floor")
    mb = scene.build(0.001)
    xb = mb.initial_state()
    r = mb.rollout(xb, np.zeros((20, 0)), order=1)
    d = mb.rollout(xb, np.zeros((20, 0)), order=1, dense=True)
    for f in r._fields:
        if getattr(r, f) is not None:
            _check(getattr(r, f), getattr(d, f), getattr(d, f), ("box rollout", f))


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("halfspace_first", [False, True])
def test_step_halfspace_pairs_pruned_equal_dense(rng, dim, halfspace_first):
    """A body against a half-space, from overlapping to 1 m apart: a model step skips a
    half-space pair from a bound on its soft minimum before posing any sample (the bounding
    sphere's plane distance and the half-space sample's own SSDF value).  Pruned = dense at
    order 2 at every gap; far off, the pair contributes exactly nothing (the step equals
    the step of the same scene without the pair, bit for bit)."""
    if dim == 2:
        body = sc.PointCloud.t_shape(spacing=0.0025)
        plane = sc.PointCloud.halfspace([0.0, 0.0], [0.0, 1.0])
        pose = lambda z: [0.01, z, 0.3]  # noqa: E731
        vel = [0.05, -0.02, 0.3]
    else:
        body = sc.PointCloud.box([0.05, 0.05, 0.05], 0.1 / 6)
        plane = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
        q = np.array([1.0, 0.1, -0.2, 0.05]) / np.linalg.norm([1.0, 0.1, -0.2, 0.05])
        pose = lambda z: [0.01, -0.02, z, *q]  # noqa: E731
        vel = [0.05, 0.0, -0.01, 0.0, 0.2, 0.1]
    nskip = 0
    for z in (0.02, 0.03, 0.045, 0.06, 0.08, 0.12, 0.3, 1.0):
        models = []
        for with_pair in (True, False):
            scene = sc.Scene(dim=dim)
            scene.add_body(plane, kind="static", name="plane")
            scene.add_body(body, mass=1.0, pose=pose(z), velocity=vel, name="body")
            if dim == 2:  # support friction: second derivatives of their own (a scale)
                scene.add_support("body", friction=0.3)
            if with_pair:
                prm = sc.ContactParams(friction=0.4, damping=2.0)
                scene.add_contact(
                    *(("plane", "body") if halfspace_first else ("body", "plane")), prm
                )
            models.append(scene.build(0.002))
        m, free = models
        x = m.initial_state()
        u = np.zeros(m.nu)
        r = m.step(x, u, order=2, params=True)
        d = m.step(x, u, order=2, params=True, dense=True)
        for f in r._fields:
            if getattr(r, f) is not None:
                _check(getattr(r, f), getattr(d, f), getattr(d, f), (dim, z, f))
        rf = free.step(x, u, order=2)
        fields = ("x_next", "dx_dx", "dx_du", "d2x_dx2", "d2x_dxdu", "d2x_du2")
        if all(np.array_equal(getattr(r, f), getattr(rf, f)) for f in fields):
            nskip += 1
            assert m.energy(x).contact < 1e-30  # the energy still evaluates the pair
        else:
            assert z < 0.3, z  # within reach of the contact: not skipped
    assert nskip >= 2  # 0.3 m and 1 m at least


def test_step_weak_wall_pairs_pruned_equal_dense(rng):
    """The T swept from 2 to 16 cm off the left wall, with and without the pusher in
    contact: through the regimes of the wall pair (full, weak -- a model step then cuts its
    samples against the spring's scale, docs/method.md section 10 --, skipped before and
    after its value pass), a step equals the dense step to 1e-13 of each output's scale at
    order 2.  (What the weak-pair cut drops is below 1e-18 of that scale by construction,
    far below anything a comparison in double precision can see; this checks the step's
    contract across the regimes, not the sharpness of the bound.)"""
    from softcontact.tasks import push_t

    task = push_t.make(seed=3)
    m = task.model
    for k, gap in enumerate(np.linspace(0.02, 0.16, 8)):
        x = np.array(task.x0, dtype=float)
        x[0] = gap + 0.05  # the T's centre; its half-width is ~5-6 cm
        x[3:5] = [x[0], x[1] - (0.09 if k % 2 else 0.2)]  # pusher at the stem, or away
        x[m.nq :] = 0.05 * rng.normal(size=m.nv)
        u = 0.1 * rng.normal(size=m.nu)
        r = m.step(x, u, order=2, params=True)
        d = m.step(x, u, order=2, params=True, dense=True)
        for f in r._fields:
            if getattr(r, f) is not None:
                _check(getattr(r, f), getattr(d, f), getattr(d, f), (gap, f))


def test_dense_must_be_a_bool():
    c = sc.PointCloud.t_shape(spacing=0.0025)
    with pytest.raises(TypeError, match="dense"):
        sc.ssdf(c, [[0.0, 0.0]], 1e-5, dense="yes")
    with pytest.raises(TypeError, match="dense"):
        sc.separation(c, [0, 0, 0], c, [0.1, 0, 0], 1e-5, dense=1)


def test_step_halfspace_sample_bound_skips_only_negligible_pairs(rng):
    """The half-space skip's second bound (from the body's own plane distances, when its
    bounding sphere alone cannot skip: a T whose sphere reaches ~2.3 cm nearer the wall than
    its nearest sample).  The T is swept through the range where the step starts skipping
    the wall pair, turned at random: whenever the step skips it (the step equals, bit for
    bit, the step of the scene without that pair), the pair's own contact -- which never
    skips -- has a wrench and first derivatives below 1e-18 of the spring's scale k beta
    and a soft depth above the pair cut beta Tp (docs/method.md section 10, recomputed
    here), and whenever it keeps the pair the depth is below the cut: the bound skips
    exactly the pairs the cut would skip after their value pass.  The sweep crosses
    from kept to skipped."""
    from softcontact.tasks import push_t

    task = push_t.make(seed=3)
    p = task.params
    prm = sc.ContactParams(
        eps=p["eps"],
        eps_c=p["eps_c"],
        beta=p["beta"],
        stiffness=p["stiffness"],
        damping=p["damping"],
        slip_velocity=p["contact_slip_velocity"],
        friction=p["wall_friction"],
    )
    models = []
    for with_pair in (True, False):
        scene = sc.Scene(dim=2)
        scene.add_body(task.cloud, mass=p["mass"], name="T")
        scene.add_body(sc.PointCloud.halfspace([0.0, 0.0], [1.0, 0.0]), kind="static", name="wall")
        if with_pair:
            scene.add_contact("T", "wall", prm)
        models.append(scene.build(p["dt"]))
    m, free = models
    wall = sc.PointCloud.halfspace([0.0, 0.0], [1.0, 0.0])
    scale = p["stiffness"] * p["beta"]
    pts = np.asarray(task.cloud.points)
    c0 = 0.5 * (pts.min(axis=0) + pts.max(axis=0))  # the packed header's centre and radius
    rad = np.linalg.norm(c0) + np.linalg.norm(pts - c0, axis=1).max()
    beta, eps_c = p["beta"], p["eps_c"]
    L = rad + beta + eps_c

    def pair_cut(v):
        vrel = np.hypot(v[0], v[1]) + abs(v[2]) * rad
        return beta * (
            41.45
            + np.log(len(pts) + 1)
            + 2 * np.log1p(L / beta)
            + 2 * np.log1p(L / eps_c)
            + np.log1p(p["damping"] * vrel * L / (p["stiffness"] * beta))
            + 1.0
        )

    kept = skipped = 0
    for gap in np.linspace(0.055, 0.075, 21):
        th = rng.uniform(0.0, 2.0 * np.pi)
        c, s = np.cos(th), np.sin(th)
        xmin = (np.asarray(task.cloud.points) @ np.array([c, -s])).min()
        x = np.array([gap - xmin, 0.25, th, *(0.05 * rng.normal(size=3))])
        r = m.step(x, None, order=1)
        rf = free.step(x, None, order=1)
        ct = sc.contact(
            task.cloud, x[:3], x[3:], wall, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], prm, order=1
        )
        cut = pair_cut(x[3:])
        if abs(ct.depth - cut) < 1e-9:
            continue  # at the cut itself: either is right
        if not all(np.array_equal(getattr(r, f), getattr(rf, f)) for f in ("x_next", "dx_dx")):
            kept += 1
            assert ct.depth < cut, (gap, ct.depth, cut)
            continue
        skipped += 1
        assert ct.depth > cut, (gap, ct.depth, cut)
        assert np.abs(ct.wrench_a).max() < 1e-18 * scale, (gap, ct.wrench_a)
        assert np.abs(ct.jacobian).max() < 1e-18 * scale, gap
    assert kept >= 2 and skipped >= 2, (kept, skipped)
