"""Poses and tangent spaces: retract / pose_difference (docs/method.md section 3)."""

import numpy as np
import pytest

import softcontact as sc
from softcontact.spatial import quat_exp, quat_log, quat_mul, quat_to_matrix


def _random_poses(rng, n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return np.concatenate([rng.normal(size=(n, 3)), q], axis=1)


def _hat(v):
    x, y, z = v
    return np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])


def _rodrigues(v):
    th = np.linalg.norm(v)
    K = _hat(v / th) if th > 0 else np.zeros((3, 3))
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K


def test_retract_3d_is_right_perturbation(rng):
    poses = _random_poses(rng, 20)
    for pose in poses:
        d = rng.normal(size=6)
        out = sc.retract(pose, d)
        np.testing.assert_allclose(out[:3], pose[:3] + d[:3], rtol=0, atol=1e-15)
        R0 = quat_to_matrix(pose[3:])
        np.testing.assert_allclose(
            quat_to_matrix(out[3:]), R0 @ _rodrigues(d[3:]), rtol=0, atol=1e-14
        )
        assert abs(np.linalg.norm(out[3:]) - 1) < 1e-15


def test_retract_matches_transformed_cloud(rng):
    cloud = sc.PointCloud.box([0.05, 0.02, 0.03], 0.02)
    pose = _random_poses(rng, 1)[0]
    d = rng.normal(size=6) * 0.3
    moved = cloud.transformed(sc.retract(pose, d))
    R = quat_to_matrix(pose[3:]) @ _rodrigues(d[3:])
    np.testing.assert_allclose(moved.points, cloud.points @ R.T + pose[:3] + d[:3], atol=1e-15)


@pytest.mark.parametrize("dim", [2, 3])
def test_difference_inverts_retract(rng, dim):
    if dim == 2:
        poses = rng.normal(size=(50, 3))
        d = rng.normal(size=(50, 3)) * 2
    else:
        poses = _random_poses(rng, 50)
        d = rng.normal(size=(50, 6))
        ang = np.linalg.norm(d[:, 3:], axis=1, keepdims=True)
        d[:, 3:] *= np.minimum(1.0, 3.0 / ang)  # angles below pi
    back = sc.pose_difference(sc.retract(poses, d), poses)
    np.testing.assert_allclose(back, d, rtol=0, atol=1e-13)
    # and the other way round: retract(p0, p1 (-) p0) is p1 (the same rotation)
    p1 = sc.retract(poses, d)
    again = sc.retract(poses, sc.pose_difference(p1, poses))
    if dim == 3:
        sign = np.sign(np.sum(again[:, 3:] * p1[:, 3:], axis=1, keepdims=True))
        again[:, 3:] *= sign
    np.testing.assert_allclose(again, p1, rtol=0, atol=1e-14)


@pytest.mark.parametrize("angle", [0.0, 1e-12, 1e-9, 5e-9, 1e-8, 2e-8, 1e-2, 1.0, 3.0])
def test_exp_log_branch_sweep(rng, angle):
    """Around the small-angle switch of quat_log (1e-8) and at ordinary angles."""
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    v = angle * axis
    q = quat_exp(v)
    assert abs(np.linalg.norm(q) - 1) < 1e-15
    back = quat_log(q)
    np.testing.assert_allclose(back, v, rtol=1e-15, atol=1e-300)
    # -q is the same rotation
    np.testing.assert_allclose(quat_log(-q), v, rtol=1e-15, atol=1e-300)


def test_quat_mul_matches_matrices(rng):
    a = _random_poses(rng, 10)[:, 3:]
    b = _random_poses(rng, 10)[:, 3:]
    np.testing.assert_allclose(
        quat_to_matrix(quat_mul(a, b)), quat_to_matrix(a) @ quat_to_matrix(b), atol=1e-15
    )


def test_broadcasting(rng):
    pose = _random_poses(rng, 1)[0]
    d = rng.normal(size=(4, 5, 6))
    out = sc.retract(pose, d)
    assert out.shape == (4, 5, 7)
    np.testing.assert_array_equal(out[2, 3], sc.retract(pose, d[2, 3]))
    diff = sc.pose_difference(out, pose)
    assert diff.shape == (4, 5, 6)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: sc.retract([0, 0, 0, 1], [0, 0, 0]),
            ValueError,
            r"pose must have shape \(\.\.\., 3\)",
        ),
        (lambda: sc.retract([0, 0, 0], [0, 0]), ValueError, r"dq must have shape \(\.\.\., 3\)"),
        (
            lambda: sc.retract([0, 0, 0, 1, 0, 0, 0], [0, 0, 0]),
            ValueError,
            r"dq must have shape \(\.\.\., 6\)",
        ),
        (lambda: sc.retract([0, 0, 0, 2, 0, 0, 0], np.zeros(6)), ValueError, "unit quaternions"),
        (lambda: sc.retract([0, 0, np.nan], [0, 0, 0]), ValueError, "pose must be finite"),
        (lambda: sc.retract([0, 0, 0], [0, np.inf, 0]), ValueError, "dq must be finite"),
        (lambda: sc.retract([0, 0, 1j], [0, 0, 0]), TypeError, "pose must be an array of real"),
        (
            lambda: sc.pose_difference([0, 0, 0], [0, 0, 0, 1, 0, 0, 0]),
            ValueError,
            "must both be 2D or both 3D",
        ),
        (
            lambda: sc.pose_difference([0, 0, 0, 1, 0, 0, 0], [0, 0, 0]),
            ValueError,
            "must both be 2D or both 3D",
        ),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_inputs_not_modified(rng):
    pose = _random_poses(rng, 3)
    d = rng.normal(size=(3, 6))
    p0, d0 = pose.copy(), d.copy()
    sc.pose_difference(sc.retract(pose, d), pose)
    np.testing.assert_array_equal(pose, p0)
    np.testing.assert_array_equal(d, d0)
