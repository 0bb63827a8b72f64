"""Contact parameters fitted to the bodies (ContactParams.for_bodies, the default of
Scene.add_contact): their rules, and what they are for, on whole simulations -- resting
penetration 1 % of the body's size whatever its sampling, a critically damped normal mode,
creep on an incline from the slip velocity, a stack that settles, models that build
without a stability warning."""

import math
import warnings

import numpy as np
import pytest

import softcontact as sc
from softcontact.scene import _fit, _pair_load

FLOOR = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])


def _box_on_floor(side, spacing, mass=1.0, z=None, gravity=None, friction=None):
    s = sc.Scene(dim=3, gravity=gravity)
    s.add_body(FLOOR, kind="static", name="floor")
    s.add_body(
        sc.PointCloud.box([side / 2] * 3, spacing),
        mass=mass,
        pose=[0, 0, side / 2 if z is None else z, 1, 0, 0, 0],
        name="box",
    )
    s.add_contact("floor", "box", friction=friction)
    return s


def _run(model, seconds, x0=None):
    x0 = model.initial_state() if x0 is None else x0
    return model.rollout(x0, np.zeros((int(round(seconds / model.dt)), model.nu))).states


def _penetration(scene, x):
    """Depth of the box's lowest sample below the floor (its samples posed by x)."""
    from softcontact.spatial import quat_to_matrix

    pts = scene._bodies[1].cloud.points @ quat_to_matrix(x[3:7]).T + x[:3]
    return -float(pts[:, 2].min())


@pytest.mark.parametrize("side, mass", [(0.1, 1.0), (0.05, 0.2), (0.3, 10.0)])
def test_resting_penetration_is_one_percent_of_the_size_at_any_sampling(side, mass):
    """A cube of side L resting on a floor sinks 0.01 L, at three sample spacings (the soft
    minimum's offset eps_c log N, which grows with the samples on the face, is in the fit)
    and for both integrators; at rest after 2 s (speeds below 1e-6).  (Euler at 0.5 ms: at
    larger steps the fit lowers the small cube's stiffness to keep the step stable.)"""
    for integrator, dt in (("implicit", 0.005), ("euler", 0.0005)):
        depths = []
        for spacing in (side / 5, side / 10, side / 20):
            s = _box_on_floor(side, spacing, mass)
            model = s.build(dt, integrator)
            x = _run(model, 2.0)[-1]
            assert np.abs(x[model.nq :]).max() < 1e-6
            depths.append(_penetration(s, x))
        # measured to 1e-4 relative; what matters most is the spread across spacings
        np.testing.assert_allclose(depths, 0.01 * side, rtol=1e-3)
        assert max(depths) - min(depths) <= 1e-3 * 0.01 * side


def test_box_rests_at_10ms_steps():
    """The implicit step at 10 ms: a cube set on the floor is still after 1 s (angular
    speed below 1e-3 rad/s, linear below 1e-3 m/s)."""
    model = _box_on_floor(0.1, 0.01).build(0.01, "implicit")
    x = _run(model, 1.0)[-1]
    assert np.abs(x[model.nq + 3 :]).max() < 1e-3
    assert np.abs(x[model.nq : model.nq + 3]).max() < 1e-3


@pytest.mark.parametrize("integrator, dt", [("implicit", 0.005), ("euler", 0.002)])
def test_a_dropped_box_does_not_rebound(integrator, dt):
    """Dropped from 15 cm (1.7 m/s at impact), the critically damped normal mode takes the
    box to rest without leaving the floor: after its lowest point it rises at most 0.1 mm
    above its resting height (measured 26 um with the implicit step at 5 ms, 0 with Euler at
    2 ms; ContactParams() rebounds 4 cm), and it is still after 1 s."""
    s = _box_on_floor(0.1, 0.01, z=0.2)
    model = s.build(dt, integrator)
    X = _run(model, 1.0)
    z = X[:, 2]
    low = int(np.argmin(z))
    assert z[low:].max() - z[-1] < 1e-4
    assert np.abs(X[-1, model.nq :]).max() < 1e-3
    assert 0.05 - z.min() < 0.02  # it sank less than 2 cm on the way


@pytest.mark.parametrize("degrees", [5.0, 10.0, 20.0])
def test_creep_on_an_incline_is_that_of_the_slip_velocity(degrees):
    """Below the friction angle (mu = 0.5) a box creeps at the speed where the smooth
    Coulomb law mu t / sqrt(t^2 + v_s^2) balances tan(theta): t = v_s r / sqrt(1 - r^2),
    r = tan(theta) / mu; with the fitted v_s = 0.5 mm/s that is 0.53 mm/s at 20 degrees
    (implicit step, 5 ms)."""
    th = math.radians(degrees)
    s = _box_on_floor(0.1, 0.01, gravity=[9.81 * math.sin(th), 0.0, -9.81 * math.cos(th)])
    model = s.build(0.005, "implicit")
    v_s = model.contact_params[0].slip_velocity
    r = math.tan(th) / 0.5
    creep = _run(model, 3.0)[-1, model.nq]
    np.testing.assert_allclose(creep, v_s * r / math.sqrt(1 - r * r), rtol=0.01)
    assert creep <= 1e-3


CUBE = sc.PointCloud.box([0.05] * 3, 0.01)


STACK_PAIRS = (("floor", "b0"), ("b0", "b1"), ("b1", "b2"))


def _stack():
    """Three 1 kg, 10 cm cubes b0, b1, b2 stacked on a floor, fitted contacts."""
    s = sc.Scene(dim=3)
    prev = s.add_body(FLOOR, kind="static", name="floor")
    for i in range(3):
        name = s.add_body(CUBE, mass=1.0, pose=[0, 0, 0.05 + 0.1 * i, 1, 0, 0, 0], name=f"b{i}")
        s.add_contact(prev, name)
        prev = name
    return s


def _cubes(a, b, contact):
    """A floor, two cubes a and b given as (name, mass, position), and one contact."""
    s = sc.Scene(dim=3)
    s.add_body(FLOOR, kind="static", name="floor")
    for name, mass, pos in (a, b):
        s.add_body(CUBE, mass=mass, pose=[*pos, 1, 0, 0, 0], name=name)
    s.add_contact(*contact)
    return s


def test_a_stack_of_three_settles_at_5ms():
    """Three 1 kg, 10 cm cubes stacked on a floor, implicit step at 5 ms: after 10 s the
    stack stands (the top box within 1 mm of its start horizontally, no tilt), every
    speed has been below 1 mm/s since 2 s, and the floor contact, fitted to the whole
    stack it carries, rests 1 % of the size deep (measured 1.00 mm; 8.1 mm when fitted
    to one box); the box-box contacts, two clouds face to face, rest shallower than a box
    on a plane (measured 0.03 mm)."""
    s = _stack()
    model = s.build(0.005, "implicit")
    X = _run(model, 10.0)
    top = X[-1, 14:21]
    assert np.hypot(top[0], top[1]) < 1e-3
    np.testing.assert_allclose(np.abs(top[3]), 1.0, atol=1e-9)
    assert 0.2 < top[2] < 0.25
    assert np.abs(X[400:, model.nq :]).max() < 1e-3
    z = X[-1, [2, 9, 16]]
    depths = np.array([0.05 - z[0], 0.1 - (z[1] - z[0]), 0.1 - (z[2] - z[1])])
    assert 0.9e-3 < depths[0] < 1.1e-3, depths
    assert np.all((depths[1:] > 0) & (depths[1:] < 1.1e-3)), depths


def test_for_bodies_follows_its_rules():
    """Each fitted parameter against the rule of ContactParams.for_bodies, computed here."""
    s = _box_on_floor(0.1, 0.01)
    spacing = math.sqrt(np.mean(s._bodies[1].cloud.weights))
    delta = 0.001
    for dt, integrator in ((None, "euler"), (0.005, "implicit"), (0.02, "implicit")):
        p = sc.ContactParams.for_bodies(s, "floor", "box", dt, integrator, friction=0.3)
        assert p.friction == 0.3
        np.testing.assert_allclose(p.eps, spacing**2, rtol=1e-12)
        eps_c = max(delta / 2, 9.81 * (dt or 0.0) ** 2 / 4)
        np.testing.assert_allclose(p.eps_c, eps_c, rtol=1e-12)
        np.testing.assert_allclose(p.beta, delta / 2, rtol=1e-12)
        np.testing.assert_allclose(p.damping, 2 * math.sqrt(p.stiffness * 1.0), rtol=1e-12)
        assert p.slip_velocity == 5e-4
        # the resting force: lambda at the soft depth delta + eps_c log N is the weight
        z = s._bodies[1].cloud.points[:, 2]  # every face of the cube has the same count
        n_soft = np.sum(np.exp(-(z - z.min()) / p.eps_c))
        d = (delta + p.eps_c * math.log(n_soft)) / p.beta
        lam = p.stiffness * p.beta * np.logaddexp(0.0, d) / (1 + math.exp(-d))
        if dt != 0.02:
            np.testing.assert_allclose(lam, 9.81, rtol=1e-12)
    # the explicit step: v_s raised above its friction bound, 1.25x
    p = sc.ContactParams.for_bodies(s, "box", "floor", 0.002, "euler")
    (fric,) = [x for x in s.stability_limits("euler", 0.002) if x.term.startswith("friction")]
    np.testing.assert_allclose(fric.dt_max, 1.25 * 0.002, rtol=1e-12)
    assert p.slip_velocity > 5e-4


@pytest.mark.parametrize("integrator", ["euler", "implicit"])
@pytest.mark.parametrize("dt", [0.001, 0.002, 0.005, 0.01, 0.02])
def test_fitted_models_build_without_a_stability_warning(integrator, dt):
    """The fit keeps dt within 0.8 of the stiffness limit (lowering the stiffness when it
    must: the penetration is then deeper than 1 %) and, for Euler, v_s above its friction
    limit; so Scene.build does not warn that dt exceeds a stability limit.  Where the
    lowered stiffness holds the box only deeper than 10 % of its size (the explicit step
    at 5 ms and above; measured 10.1 % to 990 %), it warns about that, and only then."""
    for s in (_box_on_floor(0.1, 0.01), _box_on_floor(0.02, 0.004, mass=0.01)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", sc.SoftContactWarning)
            model = s.build(dt, integrator)
        assert all(x.dt_max >= dt for x in s.stability_limits(integrator, dt))
        p = model.contact_params[0]
        assert p == sc.ContactParams.for_bodies(s, "floor", "box", dt, integrator)
        fit = _fit(s, 0, 1, dt, integrator, 0.5)
        assert fit.params == p
        depth, size = fit.sink, fit.size
        messages = [str(w.message) for w in caught]
        if depth > 0.1 * size:
            assert integrator == "euler" and dt >= 0.002
            assert messages == [
                f"contact(floor,box): the stiffness fitted to be stable at dt = {dt:g} s with "
                f"integrator='euler' holds its load only {1e3 * depth:.3g} mm deep "
                f"({100 * depth / size:.0f} % of the body's size): use a smaller dt or "
                "integrator='implicit'"
            ]
        else:
            assert messages == []
            if integrator == "implicit":
                # the implicit step holds the box at the fitted 1 % at every dt here
                np.testing.assert_allclose(depth, 0.01 * size, rtol=1e-6)


def test_a_stack_loads_its_lower_contacts():
    """The contacts of a stack carry the weight above them (as placed): the explicit
    friction bound takes that weight, the fitted slip velocity is raised for it, and the
    Euler step at 5 ms, whose stable stiffness cannot carry it, warns by name."""
    s = _stack()
    assert [_pair_load(s, a, b)[1] for a, b in ((0, 1), (1, 2), (2, 3))] == [3.0, 2.0, 1.0]
    assert [_pair_load(s, a, b)[0].name for a, b in ((1, 0), (2, 1), (3, 2))] == ["b0", "b1", "b2"]
    # v_s raised to 1.25 times the friction bound of each contact's own load: the bound
    # (with that load) is then 1.25 dt for all three
    limits = {(x.where, x.term): x.dt_max for x in s.stability_limits("euler", 0.001)}
    for where in ("contact(floor,b0)", "contact(b0,b1)", "contact(b1,b2)"):
        np.testing.assert_allclose(
            limits[(where, "friction (stick regime)")], 1.25 * 0.001, rtol=1e-12
        )
    v_s = [sc.ContactParams.for_bodies(s, a, b, 0.001).slip_velocity for a, b in STACK_PAIRS]
    assert min(v_s) > 5e-4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", sc.SoftContactWarning)
        s.build(0.005)
    sinking = [str(w.message).split(":")[0] for w in caught if "holds its load" in str(w.message)]
    assert sinking == [f"contact({a},{b})" for a, b in STACK_PAIRS]
    # side by side on the floor: each carries itself
    t = _cubes(("a", 1.0, (0, 0, 0.05)), ("b", 2.0, (0.1, 0, 0.05)), ("floor", "a"))
    t.add_contact("floor", "b")
    t.add_contact("a", "b")
    assert [_pair_load(t, *ab)[1] for ab in ((0, 1), (0, 2), (1, 2))] == [1.0, 2.0, 1.0]


def test_planar_pushing_builds_with_fitted_parameters():
    """A planar scene (no gravity: the load is the weight under 9.81 m/s^2) with a
    kinematic pusher builds at the Euler step of the Scene example without a warning, and
    its T is pushed."""
    scene = sc.Scene(dim=2)
    scene.add_body(sc.PointCloud.t_shape(), mass=0.1, pose=[0.25, 0.25, 0.0], name="T")
    scene.add_body(
        sc.PointCloud.disk(0.015, 0.003), kind="kinematic", pose=[0.25, 0.15, 0.0], name="pusher"
    )
    scene.add_contact("T", "pusher")
    scene.add_support("T", friction=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sc.SoftContactWarning)
        model = scene.build(0.003)
    U = np.tile([0.0, 0.1, 0.0], (300, 1))
    X = model.rollout(model.initial_state(), U).states
    assert np.all(np.isfinite(X))
    assert X[-1, 1] > 0.25 + 0.02  # pushed along +y


def test_add_contact_and_for_bodies_reject_bad_input():
    s = _box_on_floor(0.1, 0.01)
    with pytest.raises(TypeError, match="scene must be a Scene"):
        sc.ContactParams.for_bodies("scene", "floor", "box")
    with pytest.raises(ValueError, match="two different bodies"):
        sc.ContactParams.for_bodies(s, "box", "box")
    with pytest.raises(ValueError, match="friction"):
        sc.ContactParams.for_bodies(s, "floor", "box", friction=-1.0)
    with pytest.raises(ValueError, match="dt"):
        sc.ContactParams.for_bodies(s, "floor", "box", dt=0.0)
    with pytest.raises(ValueError, match="integrator must be one of"):
        sc.ContactParams.for_bodies(s, "floor", "box", integrator="rk4")
    with pytest.raises(ValueError, match="not both"):
        s2 = _box_on_floor(0.1, 0.01)
        s2._pairs.clear()
        s2.add_contact("floor", "box", sc.ContactParams(), friction=0.2)
    with pytest.raises(ValueError, match="friction"):
        s2.add_contact("floor", "box", friction=float("nan"))
    # a one-sample body, or samples all at one point, against a half-space: nothing to fit
    # to (add_contact says so; explicit parameters are fine)
    for pts in (np.zeros((1, 3)), np.zeros((4, 3))):
        s3 = sc.Scene(dim=3)
        s3.add_body(FLOOR, kind="static", name="floor")
        normals = np.tile([0.0, 0.0, 1.0], (len(pts), 1))
        s3.add_body(sc.PointCloud(pts, normals), mass=1.0, inertia=[1, 1, 1], name="p")
        with pytest.raises(ValueError, match="cannot fit contact parameters"):
            s3.add_contact("floor", "p")
        s3.add_contact("floor", "p", sc.ContactParams())


def test_the_fit_does_not_depend_on_the_starting_orientation():
    """The soft minimum's offset is counted for the largest count of samples near the lowest
    level over the body's axes and its current orientation: a cube starting tilted gets the
    parameters of one starting flat, so it rests 1 % deep after it lands flat."""
    flat = _box_on_floor(0.1, 0.01)
    tilted = sc.Scene(dim=3)
    tilted.add_body(FLOOR, kind="static", name="floor")
    q = [math.cos(0.2), math.sin(0.2), 0.0, 0.0]  # 0.4 rad about x
    tilted.add_body(sc.PointCloud.box([0.05] * 3, 0.01), mass=1.0, pose=[0, 0, 0.1, *q], name="box")
    tilted.add_contact("floor", "box")
    assert sc.ContactParams.for_bodies(flat, "floor", "box") == sc.ContactParams.for_bodies(
        tilted, "floor", "box"
    )


def test_a_heavy_body_on_a_light_one_warns_with_euler_only():
    """A 2 kg cube on a 0.05 kg one: the Euler fit sizes both contacts for the lighter
    cube's weight, so they cannot hold the load (measured 143 % and 139 % of the size)
    even at a tiny dt, and the build says so and why; the implicit fit takes the loads
    and builds without a warning."""
    s = _cubes(("light", 0.05, (0, 0, 0.05)), ("heavy", 2.0, (0, 0, 0.15)), ("floor", "light"))
    s.add_contact("light", "heavy")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", sc.SoftContactWarning)
        s.build(1e-5)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    for where, kg, msg in zip(("floor,light", "light,heavy"), ("2.05", "2"), messages, strict=True):
        assert msg.startswith(
            f"contact({where}): the stiffness fitted with integrator='euler' to the lighter "
            f"body's weight holds the {kg} kg it carries only "
        )
        assert msg.endswith("pass explicit parameters or use integrator='implicit'")
    with warnings.catch_warnings():
        warnings.simplefilter("error", sc.SoftContactWarning)
        s.build(0.005, "implicit")
