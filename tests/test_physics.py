"""The contact model's laws against their analytic values on whole simulations
(docs/method.md section 5): restitution from the damping ratio, damping of the rocking
mode, and the exact half-space.

A 1 kg, 10 cm cube (sampled every 1 cm) on a static floor with the default parameters
unless stated: k = 2 kN/m, c = 10 N s/m.
"""

import math

import numpy as np
import pytest

import softcontact as sc

CUBE = sc.PointCloud.box([0.05, 0.05, 0.05], 0.01)
FLOOR = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])


def _cube_on_floor(dt, integrator, params, z=0.05, velocity=None, gravity=None):
    s = sc.Scene(dim=3, gravity=gravity)
    s.add_body(FLOOR, kind="static", name="floor")
    s.add_body(CUBE, pose=[0, 0, z, 1, 0, 0, 0], velocity=velocity, name="cube")
    s.add_contact("cube", "floor", params)
    return s.build(dt, integrator)


@pytest.mark.parametrize("integrator, dt", [("euler", 1e-4), ("implicit", 1e-3)])
@pytest.mark.parametrize("damping", [5.0, 10.0, 30.0])
def test_restitution_of_a_flat_impact(integrator, dt, damping):
    """A face hitting the floor flat at 1 m/s without gravity compresses the contact
    ~20 beta deep, where lambda(m) ~ k (-m) and s_b ~ 1: the damped oscillator
    m z'' = -k z - c z', left after half a period with the speed ratio
        e = exp(-pi zeta / sqrt(1 - zeta^2)),  zeta = c / (2 sqrt(k m)).
    The per-sample damping gives this too: every sample of the face has the same normal
    velocity.  Measured within 0.05 % with Euler at 0.1 ms (the soft onset and release of
    the force), and within 0.8 % with the implicit step at 1 ms (its O(h) error, largest at
    c = 30)."""
    params = sc.ContactParams(damping=damping)
    model = _cube_on_floor(
        dt, integrator, params, z=0.06, velocity=[0, 0, -1, 0, 0, 0], gravity=[0, 0, 0]
    )
    X = model.rollout(model.initial_state(), np.zeros((int(0.3 / dt), 0))).states
    assert model.energy(X[-1]).contact < 1e-12  # it left the floor
    zeta = damping / (2 * math.sqrt(params.stiffness * 1.0))
    e = math.exp(-math.pi * zeta / math.sqrt(1 - zeta * zeta))
    rebound = X[-1, model.nq + 2]
    assert abs(rebound - e) <= (1e-3 if integrator == "euler" else 1e-2) * e, (rebound, e)
    np.testing.assert_allclose(X[-1, model.nq + 3 :], 0.0, atol=1e-9)  # no spin


@pytest.mark.parametrize("integrator, dt", [("euler", 5e-4), ("implicit", 2e-3)])
def test_rocking_is_damped_like_bouncing(integrator, dt):
    """A cube resting on a frictionless floor, kicked to rock at 1 rad/s: each sample's
    normal velocity is damped, so the rocking decays at a rate of the order of the bounce's
    c / (2 m) = 5 /s (measured: by 26x in 0.9 s, ~3.6 /s); with c = 0 it rocks on (the
    model has no other loss)."""
    env = {}
    for c in (0.0, 10.0):
        model = _cube_on_floor(dt, integrator, sc.ContactParams(friction=0.0, damping=c))
        x = model.rollout(model.initial_state(), np.zeros((int(1 / dt), 0))).states[-1]
        x[model.nq + 3] = 1.0
        X = model.rollout(x, np.zeros((int(1 / dt), 0))).states
        w = np.abs(X[:, model.nq + 3])
        env[c] = w[int(0.9 / dt) :].max()
    assert env[0.0] > 0.95, env
    assert env[10.0] < 0.1, env


@pytest.mark.parametrize("integrator, dt", [("euler", 5e-4), ("implicit", 5e-3)])
def test_resting_height_and_penetration(integrator, dt):
    """A resting cube settles where lambda(m) = m g: with m << -beta, -m ~ m g / k
    (4.9 mm), and its lowest samples sit eps_c log N_near above -m (the soft minimum)."""
    params = sc.ContactParams()
    model = _cube_on_floor(dt, integrator, params)
    X = model.rollout(model.initial_state(), np.zeros((int(2 / dt), 0))).states
    c = sc.contact(CUBE, X[-1, :7], X[-1, 7:], FLOOR, [0, 0, 0, 1, 0, 0, 0], [0] * 6, params)
    assert abs(c.wrench_a[2] - 9.81) < 1e-3  # the weight, carried
    assert -c.depth > 9.81 / params.stiffness  # lambda = k sp s < k (-m)
    assert -c.depth < 9.81 / params.stiffness + 2 * params.beta
    assert np.abs(X[-1, 7:]).max() < 1e-6
