"""Self-tests of the NumPy reference of the separation field and the soft-minimum contact
model (tests/reference.py; docs/method.md sections 3-5).  They prove the oracle that the C
contact kernels will be compared with: the conservative wrenches are -dU/dq (finite
differences on the manifold), wrenches are equal and opposite, damping and friction never
produce positive power, and the field is invariant under rigid motions."""

import numpy as np
import pytest
from reference import contact_ref, pose_frame, separation_ref

import softcontact as sc

PARAMS = {
    "eps": 2.5e-5,
    "eps_c": 1e-3,
    "stiffness": 2e3,
    "beta": 1e-3,
    "damping": 5.0,
    "friction": 0.6,
    "slip_velocity": 1e-2,
}


def _triple(cloud):
    return cloud.points, cloud.normals, cloud.weights


def _scene(rng, dim):
    """Two overlapping shapes with random velocities (sizes ~5 cm, overlap ~5 mm)."""
    if dim == 2:
        a = sc.PointCloud.t_shape(spacing=0.006)
        b = sc.PointCloud.disk(0.02, 0.004)
        pose_a = np.array([0.0, 0.0, 0.3])
        # place the disk so that it overlaps the bar's top edge by ~4 mm
        top = pose_frame(pose_a)[0] @ np.array([0.0, 0.0407]) + pose_a[:2]
        pose_b = np.array([top[0] + 0.005, top[1] + 0.016, 0.0])
        vel_a, vel_b = rng.normal(size=3) * 0.1, rng.normal(size=3) * 0.1
    else:
        a = sc.PointCloud.box([0.05, 0.03, 0.02], 0.008)
        b = sc.PointCloud.sphere(0.02, 0.005)
        q = rng.normal(size=4)
        pose_a = np.concatenate([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
        pose_b = np.concatenate([[0.01, -0.005, 0.036], q / np.linalg.norm(q)])
        vel_a, vel_b = rng.normal(size=6) * 0.1, rng.normal(size=6) * 0.1
    return _triple(a), pose_a, vel_a, _triple(b), pose_b, vel_b


@pytest.mark.parametrize("dim", [2, 3])
def test_conservative_wrench_is_minus_energy_gradient(rng, dim):
    A, pa, va, B, pb, vb = _scene(rng, dim)
    r = contact_ref(A, pa, va, B, pb, vb, **PARAMS)
    assert r["energy"] > 0 and np.max(np.abs(r["wrench_a_conservative"])) > 1e-3
    nv = 3 if dim == 2 else 6
    h = 1e-7
    for which, pose, key in (
        ("a", pa, "wrench_a_conservative"),
        ("b", pb, "wrench_b_conservative"),
    ):
        grad = np.zeros(nv)
        for j in range(nv):
            e = np.zeros(nv)
            e[j] = h
            up = sc.retract(pose, e)
            dn = sc.retract(pose, -e)
            if which == "a":
                Up = contact_ref(A, up, va, B, pb, vb, **PARAMS)["energy"]
                Um = contact_ref(A, dn, va, B, pb, vb, **PARAMS)["energy"]
            else:
                Up = contact_ref(A, pa, va, B, up, vb, **PARAMS)["energy"]
                Um = contact_ref(A, pa, va, B, dn, vb, **PARAMS)["energy"]
            grad[j] = (Up - Um) / (2 * h)
        # central differences with h = 1e-7 m on forces of ~N: truncation ~ h^2 U''' and
        # rounding ~ u U / h, both below 1e-6 of the wrench
        np.testing.assert_allclose(r[key], -grad, rtol=0, atol=1e-6 * np.abs(grad).max())


@pytest.mark.parametrize("dim", [2, 3])
def test_equal_and_opposite_and_swap(rng, dim):
    A, pa, va, B, pb, vb = _scene(rng, dim)
    r = contact_ref(A, pa, va, B, pb, vb, **PARAMS)
    D = dim
    Fa, Fb = r["wrench_a"][:D], r["wrench_b"][:D]
    np.testing.assert_allclose(Fa + Fb, 0, atol=1e-12 * np.abs(Fa).max())

    def world_torque(w, pose):  # about the world origin
        R, t = pose_frame(pose)
        if D == 2:
            return w[2] + t[0] * w[1] - t[1] * w[0]
        return R @ w[3:] + np.cross(t, w[:3])

    tot = world_torque(r["wrench_a"], pa) + world_torque(r["wrench_b"], pb)
    np.testing.assert_allclose(tot, 0, atol=1e-12 * (np.abs(Fa).max() + 1))
    s = contact_ref(B, pb, vb, A, pa, va, **PARAMS)
    np.testing.assert_allclose(s["wrench_a"], r["wrench_b"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s["wrench_b"], r["wrench_a"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s["energy"], r["energy"], rtol=1e-12)


@pytest.mark.parametrize("dim", [2, 3])
def test_dissipative_forces_never_do_positive_work(rng, dim):
    A, pa, _, B, pb, _ = _scene(rng, dim)
    nv = 3 if dim == 2 else 6
    for _ in range(20):
        va, vb = rng.normal(size=nv), rng.normal(size=nv)
        r = contact_ref(A, pa, va, B, pb, vb, **PARAMS)
        for part in ("damping", "friction"):
            assert np.abs(r["force_" + part]).sum() > 0
            power = np.sum(r["force_" + part] * r["u"])
            assert power <= 1e-15 * np.abs(r["force_" + part]).sum()
        # the same power computed from the wrenches and the body velocities
        pw = r["wrench_a_damping"] @ va + r["wrench_b_damping"] @ vb
        np.testing.assert_allclose(pw, np.sum(r["force_damping"] * r["u"]), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("dim", [2, 3])
def test_soft_minimum_and_distribution(rng, dim):
    A, pa, va, B, pb, vb = _scene(rng, dim)
    r = contact_ref(A, pa, va, B, pb, vb, **PARAMS)
    assert abs(r["distribution"].sum() - 1) < 1e-14
    lo = r["phi"].min() - PARAMS["eps_c"] * np.log(len(r["phi"]))
    assert lo <= r["depth"] <= r["phi"].min()


def test_no_force_when_separated(rng):
    A, pa, va, B, pb, vb = _scene(rng, 2)
    far = pb.copy()
    far[1] += 0.05  # ~4.5 cm clear of the T
    r = contact_ref(A, pa, va, B, far, vb, **PARAMS)
    reach = PARAMS["beta"] + np.sqrt(PARAMS["eps"])
    assert r["depth"] > 4 * reach
    assert np.abs(r["wrench_a"]).max() < 1e-3 * PARAMS["stiffness"] * reach


def test_separation_rigid_motion_invariance(rng):
    A, pa, va, B, pb, vb = _scene(rng, 3)
    phi, x, G = separation_ref(A, pa, B, pb, PARAMS["eps"])
    # move both bodies by the same rigid motion g: poses g*pose
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    Rg, tg = pose_frame(np.concatenate([[0.1, -0.2, 0.3], q]))

    def move(pose):
        R, t = pose_frame(pose)
        Rn = Rg @ R
        w = np.sqrt(max(0.0, 1 + np.trace(Rn))) / 2
        quat = np.array(
            [
                w,
                (Rn[2, 1] - Rn[1, 2]) / (4 * w),
                (Rn[0, 2] - Rn[2, 0]) / (4 * w),
                (Rn[1, 0] - Rn[0, 1]) / (4 * w),
            ]
        )
        return np.concatenate([Rg @ t + tg, quat])

    phi2, x2, G2 = separation_ref(A, move(pa), B, move(pb), PARAMS["eps"])
    np.testing.assert_allclose(phi2, phi, atol=1e-12)
    np.testing.assert_allclose(x2, x @ Rg.T + tg, atol=1e-12)
    np.testing.assert_allclose(G2, G @ Rg.T, atol=1e-9)
