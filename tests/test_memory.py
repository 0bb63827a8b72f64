"""Reference counts and memory stay flat over many calls, on success and error paths
(bottleneck's memory_test recipe), and the probe itself catches a deliberate leak."""

import os
import sys
import tracemalloc
import warnings

import numpy as np
import pytest

import softcontact as sc
from softcontact import _core

# calls per probe; CI's sanitizer stage, where each call is ~20x slower, takes fewer (the
# plain test stage runs the full count)
ROUNDS = int(os.environ.get("SOFTCONTACT_MEMORY_ROUNDS", "1000"))
POSE0 = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
POSE1 = np.array([0.09, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
VEL = np.array([0.1, 0.0, -0.1, 0.2, 0.0, 0.3])
PRM = (1e-4, 1e-3, 2e3, 1e-3, 10.0, 0.5, 1e-2)
BALL = sc.PointCloud.sphere(0.02, 0.012)
BALL_PACKED = _core.pack_cloud(BALL.points, BALL.normals, BALL.weights)
BALL_POSE = np.array([0.0, 0.0, 0.036, 1.0, 0.0, 0.0, 0.0])


def _model():
    """Two small balls in contact, one actuated, under gravity (3D)."""
    scene = sc.Scene(dim=3)
    scene.add_body(BALL, mass=0.1, actuated=True, name="a")
    scene.add_body(BALL, mass=0.1, pose=BALL_POSE, velocity=-VEL, name="b")
    scene.add_contact("a", "b")
    with warnings.catch_warnings():
        # past the explicit friction limit on purpose: memory and references are checked
        warnings.simplefilter("ignore", sc.SoftContactWarning)
        return scene.build(0.002)


MODEL = _model()
X0 = MODEL.initial_state()
U0 = np.full(MODEL.nu, 0.01)
UB = np.tile(U0, (2, 3, 1))
# the iLQR kernels' inputs: a 3-step trajectory of MODEL and expansions of its sizes
XR = MODEL.rollout(X0, UB[0]).states
NT, NZ = 2 * MODEL.nv, 2 * MODEL.nv + MODEL.nu
EXP = (
    np.tile(np.eye(NT), (3, 1, 1)),
    np.ones((3, NT, MODEL.nu)),
    np.ones((4, NZ)),
    np.tile(np.eye(NZ), (4, 1, 1)),
    np.zeros((3, NT, NT, NT)),
    np.zeros((3, NT, NT, MODEL.nu)),
    np.zeros((3, NT, MODEL.nu, MODEL.nu)),
)
LIM = np.ones((3, MODEL.nu))
# batches of states: two rows, one with a quaternion 1e-5 off unit norm; index maps
XB = np.stack([X0, X0])
XB_BAD = XB.copy()
XB_BAD[1, 3:7] *= 1 + 1e-5
IDX0 = np.zeros(2, dtype=np.intp)
IDX_BAD = np.array([0, 1], dtype=np.intp)  # row 1 of a one-row input: out of range


def _grows(fn, rounds=ROUNDS, warmup=50):
    """Bytes traced memory grew over `rounds` calls after `warmup` warm-up calls."""
    for _ in range(warmup):
        fn()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(rounds):
            fn()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before


def _raises(exc, fn):
    # try/except rather than pytest.raises: pytest's ExceptionInfo bookkeeping
    # itself retains a few bytes per use, which would mask a real leak.
    def call():
        try:
            fn()
        except exc:
            return
        raise AssertionError(f"{exc.__name__} not raised")

    return call


@pytest.fixture(scope="module")
def setup():
    cloud = sc.PointCloud.box([0.05, 0.02, 0.03], spacing=0.01)
    x = np.random.default_rng(3).uniform(-0.1, 0.1, size=(8, 3))
    packed = _core.pack_cloud(cloud.points, cloud.normals, cloud.weights)
    return cloud, x, packed


def test_probe_catches_a_leak():
    hoard = []  # ~370 bytes a call: caught with 100 calls as well as with 1000
    grew = _grows(lambda: hoard.append(np.zeros(32)))
    assert grew >= ROUNDS * 16 + 16 * 1024


def _calls(cloud, x, packed):
    n = 0 if cloud is None else len(cloud)
    return {
        "ssdf_ok": lambda: sc.ssdf(cloud, x, 1e-4, order=3, num_threads=2),
        "core_ssdf_ok": lambda: _core.ssdf(packed, n, x, 1e-4, 3, 2),
        "core_pack_ok": lambda: _core.pack_cloud(cloud.points, cloud.normals, cloud.weights),
        "eps_error": _raises(ValueError, lambda: sc.ssdf(cloud, x, -1.0, order=3)),
        "shape_error": _raises(ValueError, lambda: sc.ssdf(cloud, x[:, :2], 1e-4)),
        "core_eps_error": _raises(ValueError, lambda: _core.ssdf(packed, n, x, 0.0, 3)),
        "core_packed_error": _raises(ValueError, lambda: _core.ssdf(packed[:-1], n, x, 1e-4)),
        "core_x_error": _raises(ValueError, lambda: _core.ssdf(packed, n, x[:, :1], 1e-4)),
        "core_dtype_error": _raises(
            TypeError, lambda: _core.ssdf(packed, n, x.astype(complex), 1e-4)
        ),
        "core_pack_error": _raises(
            ValueError, lambda: _core.pack_cloud(cloud.points, cloud.normals, -cloud.weights)
        ),
        "separation_ok": lambda: sc.separation(cloud, POSE0, cloud, POSE1, 1e-4, order=2),
        "core_separation_error": _raises(
            ValueError, lambda: _core.separation(packed, n, POSE0, packed[:-1], n, POSE1, 1e-4, 2)
        ),
        "separation_pose_error": _raises(
            ValueError, lambda: sc.separation(cloud, POSE0, cloud, POSE1[:3], 1e-4)
        ),
        # contact at order 2 on the small ball (samples touching: friction, damping, jets on)
        "contact_ok": lambda: sc.contact(BALL, POSE0, VEL, BALL, BALL_POSE, -VEL, order=2),
        "core_contact_ok": lambda: _core.contact(
            BALL_PACKED, len(BALL), POSE0, VEL, BALL_PACKED, len(BALL), BALL_POSE, -VEL, PRM, 2, 2
        ),
        "core_contact_vel_error": _raises(
            ValueError,
            lambda: _core.contact(packed, n, POSE0, VEL[:3], packed, n, POSE1, VEL, PRM, 2),
        ),
        "core_contact_param_error": _raises(
            ValueError,
            lambda: _core.contact(
                packed, n, POSE0, VEL, packed, n, POSE1, VEL, PRM[:2] + (-1.0,) + PRM[3:], 2
            ),
        ),
        "core_contact_nan_error": _raises(
            ValueError,
            lambda: _core.contact(packed, n, POSE0, VEL * np.nan, packed, n, POSE1, VEL, PRM, 1),
        ),
        "contact_params_error": _raises(ValueError, lambda: sc.ContactParams(beta=0.0)),
        "build_ok": _model,
        "step_ok": lambda: MODEL.step(X0, U0, order=2, params=True, num_threads=2),
        "rollout_ok": lambda: MODEL.rollout(X0, UB, order=1, num_threads=2),
        "model_eval_ok": lambda: (
            MODEL.energy(X0),
            MODEL.momentum(X0),
            MODEL.inverse_dynamics(X0, X0),
        ),
        "core_step_error": _raises(ValueError, lambda: _core.step(MODEL._cap, X0[:-1], U0)),
        "core_step_nan": _raises(ValueError, lambda: _core.step(MODEL._cap, X0 * np.nan, U0)),
        "core_rollout_error": _raises(
            ValueError, lambda: _core.rollout(MODEL._cap, X0[None], UB[:1, :, :-1])
        ),
        "rollout_vjp_ok": lambda: _core.rollout_vjp(MODEL._cap, XR[None], UB[:1], XR[None], 2),
        "core_rollout_vjp_error": _raises(
            ValueError, lambda: _core.rollout_vjp(MODEL._cap, XR[None], UB[:1], XR[None, :-1])
        ),
        # the batch bindings: index maps, several models, and their error paths
        "step_batch_ok": lambda: MODEL.step(XB, U0, order=2, params=True, num_threads=2),
        "rollout_batch_ok": lambda: sc.rollout((MODEL, MODEL), X0, UB[:1], order=1, num_threads=2),
        "core_step_batch_index_ok": lambda: _core.step_batch(
            (MODEL._cap,), 2, X0[None], IDX0, U0[None], IDX0, None, 1, 0, 2
        ),
        "core_step_batch_error": _raises(
            ValueError,
            lambda: _core.step_batch((MODEL._cap,), 2, X0[None], IDX_BAD, U0[None], None, None),
        ),
        "core_rollout_batch_error": _raises(
            ValueError,
            lambda: _core.rollout_batch(
                (MODEL._cap, MODEL._cap), 2, X0[None], None, UB, None, None
            ),
        ),
        "core_rollout_batch_models_error": _raises(
            TypeError,
            lambda: _core.rollout_batch((MODEL._cap, X0), 2, XB, None, UB, None, None),
        ),
        "step_batch_quaternion_error": _raises(ValueError, lambda: MODEL.step(XB_BAD, U0)),
        "ilqr_backward_ok": lambda: _core.ilqr_backward(*EXP, UB[0], -LIM, LIM, 0.0),
        "core_ilqr_backward_error": _raises(
            ValueError, lambda: _core.ilqr_backward(*EXP, UB[0], -LIM[:2], LIM, 0.0)
        ),
        "rollout_policy_ok": lambda: _core.rollout_policy(
            MODEL._cap, XR, UB[0], 0.1 * LIM, np.zeros((3, MODEL.nu, NT)), 1.0, -LIM, LIM
        ),
        "core_rollout_policy_error": _raises(
            ValueError,
            lambda: _core.rollout_policy(
                MODEL._cap, XR, UB[0], LIM, np.zeros((3, MODEL.nu, 1)), 1.0, -LIM, LIM
            ),
        ),
        "core_model_new_error": _raises(
            ValueError,
            lambda: _core.model_new(
                3,
                -1.0,
                np.zeros(3),
                np.zeros(1),
                np.zeros(1),
                np.ones(1),
                np.eye(3).reshape(1, 9),
                np.zeros((1, 7)),
                (np.zeros(0),),
                np.zeros(1),
                (None,),
                np.zeros((0, 2)),
                np.zeros((0, 7)),
            ),
        ),
    }


@pytest.mark.parametrize("name", list(_calls(None, None, None).keys()))
def test_no_leak(setup, name):
    cloud, x, packed = setup
    fn = _calls(cloud, x, packed)[name]
    # building a scene frees thousands of small tuples per round: CPython keeps up to 2000
    # per size on free lists (traced, never returned), so fill them before measuring
    # the batched calls likewise leave one small tuple per call on a free list until it
    # is full (bounded: no more growth after ~2000 calls)
    warm = ("build_ok", "rollout_ok", "step_batch_ok", "rollout_batch_ok")
    grew = _grows(fn, warmup=2500 if name in warm else 50)
    assert grew < ROUNDS * 16 + 16 * 1024, f"{name}: memory grew by {grew} bytes"


@pytest.mark.parametrize(
    "name",
    [
        "ssdf_ok",
        "core_ssdf_ok",
        "core_pack_ok",
        "core_eps_error",
        "core_packed_error",
        "core_dtype_error",
        "core_pack_error",
        "separation_ok",
        "core_separation_error",
        "contact_ok",
        "core_contact_ok",
        "core_contact_vel_error",
        "core_contact_param_error",
        "core_contact_nan_error",
        "build_ok",
        "step_ok",
        "rollout_ok",
        "model_eval_ok",
        "core_step_error",
        "core_step_nan",
        "core_rollout_error",
        "rollout_vjp_ok",
        "core_rollout_vjp_error",
        "step_batch_ok",
        "rollout_batch_ok",
        "core_step_batch_index_ok",
        "core_step_batch_error",
        "core_rollout_batch_error",
        "core_rollout_batch_models_error",
        "step_batch_quaternion_error",
        "ilqr_backward_ok",
        "core_ilqr_backward_error",
        "rollout_policy_ok",
        "core_rollout_policy_error",
        "core_model_new_error",
    ],
)
def test_refcounts_flat(setup, name):
    cloud, x, packed = setup
    fn = _calls(cloud, x, packed)[name]
    objs = [
        x,
        packed,
        cloud.points,
        cloud.normals,
        cloud.weights,
        VEL,
        POSE0,
        POSE1,
        X0,
        U0,
        UB,
        XR,
        LIM,
        XB,
        XB_BAD,
        IDX0,
        IDX_BAD,
        *EXP,
        MODEL._cap,
    ]
    fn()
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(ROUNDS):
        fn()
    after = [sys.getrefcount(o) for o in objs]
    assert before == after
