"""System identification on push-T (softcontact.tasks.push_t.sysid): the excitation, the
analytic residual Jacobian (mass with the inertia scaled) against central differences,
exact recovery on clean data, the 5 % target at 1 mm noise, and argument errors."""

import dataclasses

import numpy as np
import pytest
import shapely

from softcontact.optimize import trajectory_residuals
from softcontact.optimize.sysid import _observed_values
from softcontact.tasks import push_t
from softcontact.tasks.push_t import sysid

# Scenes here step past the explicit integrator's friction and damping limits on purpose:
# what is checked (derivatives, bits, memory, parameters) holds at any dt.  Scene.build's
# stability warning is tested in tests/test_scene.py.
pytestmark = pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning")


pytest.importorskip("scipy")


@pytest.fixture(scope="module")
def task():
    return push_t.make()


@pytest.fixture(scope="module")
def clean():
    """The default experiment without noise (from the task defaults, 11-17 % off)."""
    return sysid.experiment(seed=0, noise=0.0)


def _truth(task, p):
    x0 = sysid.initial_state(task)
    U = sysid.excitation(task)
    model = push_t.make(mass=p[0], support_friction=p[1], friction=p[2]).model
    X = np.asarray(model.rollout(x0, U).states).reshape(-1, model.nx)
    return x0, U, X, model


# -- the excitation ---------------------------------------------------------------------------


def test_excitation_is_admissible_and_starts_clear(task):
    U = sysid.excitation(task)
    assert U.shape == (int(round(sysid.DURATION / task.dt)), 3) == (516, 3)
    np.testing.assert_array_equal(task.project_controls(U), U)  # |v| <= 0.5, omega = 0
    x0 = sysid.initial_state(task)
    gap = task.t_polygon(x0[:3]).distance(shapely.Point(x0[3:5])) - task.pusher_radius
    assert gap == pytest.approx(0.004, abs=1e-9)
    assert np.all(x0[6:] == 0) and x0[2] == 0.0 and x0[0] == x0[3] == 0.256
    # cut and padded
    np.testing.assert_array_equal(sysid.excitation(task, 1.0), U[:200])
    long = sysid.excitation(task, 3.0)
    np.testing.assert_array_equal(long[:516], U)
    assert long.shape == (600, 3) and not np.any(long[516:])


def test_excitation_phases(task):
    """Phases 1-2 (release, kick toward the top wall) leave the T's angle at 0
    (symmetric); the kick launches the T at over 0.5 m/s and, the contact's damper
    dragging it back as the pusher backs off, it stops short of the wall; phase 3 drags
    it sideways (measured: 5.9 cm left, 1.3 cm down, turning 0.22 rad), 6 mm or more off
    the walls."""
    x0, U, X, _ = _truth(task, [0.18, 0.30, 0.45])
    kick_end = 308
    assert np.abs(X[: kick_end + 1, 2]).max() < 1e-12
    assert np.ptp(X[kick_end:, 0]) > 0.05 and np.ptp(X[kick_end:, 1]) > 0.01
    assert X[:kick_end, 7].max() > 0.5  # the launch
    top = task.t_outline(X[:, :3])[..., 1].max(axis=1)
    gap = push_t.WORKSPACE - top[:kick_end].max()
    assert 0.005 < gap < 0.01  # measured 6.6 mm
    outline = task.t_outline(X[kick_end + 30 :, :3])
    assert outline.min() > 0.005 and outline.max() < push_t.WORKSPACE - 0.005  # 6.0 mm


# -- derivatives ------------------------------------------------------------------------------


def test_residual_jacobian_matches_central_differences(task):
    """The Jacobian the fit uses (the mass column includes the inertia, I = c m) against
    central differences of models rebuilt by push_t.make at p +- h.  Measured: agreement
    to 3e-9 of each column's largest entry at h = 1e-5 p.  The mass column of the model
    with the inertia held fixed differs by far more: the chain rule matters."""
    x0, U, X, model = _truth(task, [0.18, 0.30, 0.45])
    obs = _observed_values(model, X[1:])[:, :3]
    prob = sysid._Problem(x0, U, obs)
    p = np.array([0.165, 0.32, 0.42])
    _, J = prob.evaluate(p)
    assert J.shape == (3 * len(U), 3)
    for k in range(3):
        h = 1e-5 * p[k]
        e = np.zeros(3)
        e[k] = h
        fd = (prob.evaluate(p + e)[0] - prob.evaluate(p - e)[0]) / (2 * h)
        scale = np.abs(J[:, k]).max()
        np.testing.assert_allclose(J[:, k], fd, rtol=0, atol=1e-7 * scale)
        if k == 0:
            obs6 = np.zeros((len(U), 6))
            obs6[:, :3] = obs
            _, Jm = trajectory_residuals(sysid._Problem.build, ["T.mass"], p, x0, U, obs6)
            fixed_inertia = Jm.reshape(len(U), 6)[:, :3] * [1.0, 1.0, sysid.ANGLE_SCALE]
            assert np.abs(fixed_inertia.reshape(-1) - fd).max() > 0.05 * scale


# -- identification ---------------------------------------------------------------------------


def test_clean_data_recovers_the_parameters(clean):
    """No noise: the fit returns the hidden values to 1e-6 (measured: 1e-12)."""
    np.testing.assert_allclose(clean.estimate, clean.true, rtol=1e-6)
    assert np.all(clean.relative_error < 1e-6)
    np.testing.assert_allclose(clean.true, [0.18, 0.30, 0.45])
    np.testing.assert_allclose(clean.initial, [0.15, 0.35, 0.40])
    assert clean.cost < 1e-20 and clean.noise == 0.0
    np.testing.assert_allclose(clean.fitted, clean.observed, rtol=0, atol=1e-9)


def test_result_fields_and_table(clean):
    r = clean
    assert r.names == sysid.PARAMETERS == ("mass", "support_friction", "friction")
    assert r.x0.shape == (12,) and r.U.shape == (516, 3)
    assert r.observed.shape == r.fitted.shape == (516, 3)
    assert isinstance(r.nfev, int) and r.nfev > 0 and r.wall > 0
    for a in (r.true, r.initial, r.estimate, r.relative_error, r.x0, r.U, r.observed):
        assert not a.flags.writeable
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.cost = 1.0  # type: ignore[misc]
    lines = r.table().splitlines()
    assert lines[0] == "| parameter | true | initial guess | estimate | relative error |"
    assert len(lines) == 5 and lines[2].startswith("| mass | 0.18 | 0.15 | 0.18 |")


def test_far_guess_converges():
    """From a corner of the bounds (mass -44 %, frictions 83 % and 89 % low) the growing
    windows still reach the hidden values; a single fit over the whole trajectory from
    (0.25, 0.2, 0.6) stops in a local minimum at mass 0.45."""
    r = sysid.experiment(noise=0.0, guess=[0.1, 0.05, 0.05])
    np.testing.assert_allclose(r.estimate, r.true, rtol=1e-6)


def test_one_millimetre_noise():
    """1 mm position noise (0.02 rad on the angle), five draws: every relative error is
    below the 5 % target.  Measured on draws 0-19: std 0.50 % (mass), 0.23 % (support
    friction), 0.64 % (pusher friction), largest 1.0 %, 0.55 %, 1.3 % -- as the
    linearized covariance predicts (0.45 %, 0.25 %, 0.79 %).  Draws 0-4 give at most
    1.0 %, 0.55 %, 1.3 %."""
    worst = np.zeros(3)
    for seed in range(5):
        r = sysid.experiment(seed=seed, noise=1e-3)
        assert np.all(r.relative_error < 0.05), (seed, r.relative_error)
        worst = np.maximum(worst, r.relative_error)
        # the residual is noise-sized: 3 T (T observed coordinates) x (1 mm)^2 / 2
        assert r.cost == pytest.approx(0.5 * r.observed.size * 1e-6, rel=0.2)
    assert np.all(worst > 0)


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"noise": -1e-3}, ValueError, "noise"),
        ({"noise": float("nan")}, ValueError, "noise"),
        ({"noise": "1mm"}, TypeError, "noise"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"guess": [0.15, 0.35]}, ValueError, r"guess must have shape \(3,\)"),
        ({"guess": np.ones((3, 1))}, ValueError, "guess must have shape"),
        ({"guess": [0.15, 0.35, 5.0]}, ValueError, "guess: friction must be within"),
        ({"guess": {"mas": 0.2}}, ValueError, "guess has unknown parameter"),
        ({"guess": ["a", "b", "c"]}, TypeError, "guess"),
        ({"hidden": [0.01, 0.3, 0.45]}, ValueError, "hidden: mass must be within"),
        ({"hidden": {"mass": -0.2}}, ValueError, "hidden"),
        ({"duration": 0.0}, ValueError, "duration"),
        ({"max_nfev": 0}, ValueError, "max_nfev"),
        ({"verbose": "yes"}, TypeError, "verbose"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sysid.experiment(**kwargs)


def test_bad_excitation_arguments(task):
    with pytest.raises(TypeError, match="task must be a push_t.PushT"):
        sysid.excitation(task.model)
    with pytest.raises(TypeError, match="task"):
        sysid.initial_state(None)
    with pytest.raises(ValueError, match="duration"):
        sysid.excitation(task, -1.0)
    with pytest.raises(ValueError, match="duration must be at least one step"):
        sysid.excitation(task, 1e-4)
    with pytest.raises(TypeError, match="duration"):
        sysid.excitation(task, "2 s")


def test_mapping_arguments():
    """``hidden`` and ``guess`` may be mappings naming some parameters (the others keep
    their defaults); max_nfev bounds each stage's evaluations."""
    r = sysid.experiment(
        noise=0.0, hidden={"mass": 0.2}, guess={"friction": 0.45}, duration=0.3, max_nfev=2
    )
    np.testing.assert_allclose(r.true, [0.2, 0.30, 0.45])
    np.testing.assert_allclose(r.initial, [0.15, 0.35, 0.45])
    assert r.U.shape == (60, 3) and r.nfev <= 3 * 2
