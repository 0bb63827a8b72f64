"""System identification with the analytic parameter Jacobians (softcontact.optimize):
the trajectory-residual Jacobian against central differences of rebuilt models, exact
recovery on clean data, and the error at 1 mm observation noise."""

import numpy as np
import pytest

import softcontact as sc
from softcontact.optimize import fit_parameters, trajectory_residuals
from softcontact.optimize.sysid import _observed_values

# Scenes here step past the explicit integrator's friction and damping limits on purpose:
# what is checked (derivatives, bits, memory, parameters) holds at any dt.  Scene.build's
# stability warning is tested in tests/test_scene.py.
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


pytest.importorskip("scipy")

T_CLOUD = sc.PointCloud.t_shape()
_UNIT = T_CLOUD.mass_properties(1.0)
I_T = 0.15 * _UNIT.inertia / _UNIT.mass  # fixed: only the mass is identified, not I
NAMES = ["T.mass", "T.support_friction", "contact(T,pusher).friction"]
P_TRUE = np.array([0.15, 0.35, 0.5])


def build(p):
    s = sc.Scene(dim=2)
    s.add_body(T_CLOUD, mass=p[0], inertia=I_T, pose=[0.25, 0.25, 0.0], name="T")
    s.add_body(
        sc.PointCloud.disk(0.015, 0.003), kind="kinematic", pose=[0.27, 0.15, 0.0], name="pusher"
    )
    s.add_contact("T", "pusher", sc.ContactParams(friction=p[2], damping=2.0))
    s.add_support("T", friction=p[1])
    return s.build(0.01)


@pytest.fixture(scope="module")
def data():
    """An off-centre, weaving push (1.5 s): the T slides, turns (~1.2 rad) and the pusher
    slips along its edge, so all three parameters act."""
    m = build(P_TRUE)
    x0 = m.initial_state()
    T = 150
    U = np.zeros((T, 3))
    U[:, 1] = 0.15
    U[:, 0] = 0.08 * np.sin(np.linspace(0.0, 6.0, T))
    ro = m.rollout(x0, U)
    assert int(ro.status) == 0
    obs = _observed_values(m, ro.states[1:])
    assert abs(obs[-1, 2]) > 0.5 and np.linalg.norm(obs[-1, :2] - x0[:2]) > 0.03
    return x0, U, obs


def test_residual_jacobian_matches_differences(data):
    x0, U, obs = data
    p = P_TRUE * 1.1
    r, J = trajectory_residuals(build, NAMES, p, x0, U, obs)
    for k in range(3):
        h = 1e-6 * p[k]
        e = np.zeros(3)
        e[k] = h
        fd = (
            trajectory_residuals(build, NAMES, p + e, x0, U, obs)[0]
            - trajectory_residuals(build, NAMES, p - e, x0, U, obs)[0]
        ) / (2 * h)
        # central differences: truncation ~h^2 r''' and rounding ~u |x| / h; measured 4e-8
        np.testing.assert_allclose(J[:, k], fd, rtol=0, atol=1e-6 * np.abs(J[:, k]).max())


def test_clean_data_recovers_the_parameters(data):
    x0, U, obs = data
    res = fit_parameters(
        build,
        NAMES,
        P_TRUE * np.array([1.05, 0.95, 1.05]),
        x0,
        U,
        obs,
        x_scale=P_TRUE,
        bounds=(1e-3, np.inf),
        xtol=1e-14,
        ftol=1e-14,
        gtol=1e-14,
    )
    assert res.success
    np.testing.assert_allclose(res.x, P_TRUE, rtol=1e-6)


def test_one_millimetre_noise(data):
    """Ten noise draws at 1 mm.  Measured worst relative errors per draw: 0.01-0.6 % for
    nine, 10 % (mass) for one: on this quasi-static push mass and support friction act
    mostly through their product (a flat valley), which the push-T identification
    experiment must excite apart.  Asserted: the median draw within 2 %, every draw within
    15 %."""
    x0, U, obs = data
    worst = []
    for seed in range(10):
        noisy = obs + 1e-3 * np.random.default_rng(seed).normal(size=obs.shape)
        res = fit_parameters(
            build,
            NAMES,
            P_TRUE * np.array([1.1, 0.9, 1.1]),
            x0,
            U,
            noisy,
            x_scale=P_TRUE,
            bounds=(1e-3, np.inf),
        )
        worst.append(np.abs(res.x / P_TRUE - 1).max())
    assert np.median(worst) < 0.02 and max(worst) < 0.15, worst


def test_bad_arguments(data):
    x0, U, obs = data
    with pytest.raises(ValueError, match="names must be model parameters"):
        trajectory_residuals(build, ["T.nope"], P_TRUE, x0, U, obs)
    with pytest.raises(ValueError, match="observed must have shape"):
        trajectory_residuals(build, NAMES, P_TRUE, x0, U, obs[:-1])
