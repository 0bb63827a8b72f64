"""System identification on the push-T task: recover the T's mass, its support friction
and the pusher-T friction from a noisy observed push.

:func:`experiment` rolls the push-T model (:mod:`softcontact.tasks.push_t`) out under a
fixed open-loop pusher motion (:func:`excitation`) with *hidden* parameters, observes the
T's pose ``(x, y, theta)`` at every step with Gaussian noise, and fits the three
parameters with ``scipy.optimize.least_squares`` and the analytic parameter Jacobians of
the step (forward sensitivities, :func:`softcontact.optimize.trajectory_residuals`).

Parameters and the inertia
--------------------------
:data:`PARAMETERS` ``("mass", "support_friction", "friction")`` are the :func:`push_t.make`
overrides; the model names are :data:`MODEL_NAMES` (``"T.mass"``,
``"T.support_friction"``, ``"contact(T,pusher).friction"``).  Every model here is
built by ``push_t.make(mass=..., support_friction=..., friction=...)``, so the T's
inertia is that of a uniform plate, ``I = r_g^2 m`` with ``r_g^2 = 1.93e-3 m^2`` from the
geometry: identifying the mass identifies the inertia with it, for the hidden truth and
the fit alike.  The model's ``"T.inertia"`` is a parameter of its own, so the residual
Jacobian column of the mass is the chain rule
``dr/dm = dr/d(T.mass) + r_g^2 dr/d(T.inertia)`` of the two analytic columns.
(:func:`softcontact.optimize.fit_parameters` takes independent parameters only -- it
would treat the inertia as fixed -- so the fit here calls ``least_squares`` with that
combined Jacobian.)

What makes the three identifiable
---------------------------------
Divide the T's equations of motion by its mass: the support friction force and the
inertia scale with ``m`` while the contact spring-damper (stiffness ``k``, damping ``c``,
both known) does not, so a kinematic pusher without force sensing sees the mass only
through ``k / m`` and ``c / m`` -- in the contact's penetration and in its response
to impacts.  On a quasi-static push the penetration is ``m mu_s g / k`` (a quarter of a
millimetre) and only the product ``m mu_s`` shows; a coasting T decelerates at
``mu_s g`` whatever its mass.  :func:`excitation` therefore combines

1. a *release*: a push straight through the centre of mass that accelerates the T to
   0.5 m/s, then stops: the contact's damper holds the T back as it separates (it leaves
   at ~0.3 m/s), and it coasts ~2 cm, a distance ``v^2 / (2 mu_s g)`` -- a deceleration
   of ``mu_s g``, ``mu_s`` alone;
2. a *kick toward a wall*: the pusher closes in slowly (so the kick starts from contact,
   wherever the release left the T), kicks at 0.5 m/s and backs off; the T flies toward
   the top wall, the contact's damper drags it back while the pusher parts from it (the
   damping acts on the separating velocity too, within the soft contact), and it stops
   ~7 mm short of the wall.  The speed at which the kick launches the T follows from the
   contact spring-damper's response, which depends on ``m`` (damping ratio
   ``c / (2 sqrt(k m))``) -- the mass, told apart from ``mu_s`` by the release;
3. a *sliding push* on the end of the T's bar, the pusher moving at 34 degrees to the face
   normal so that it slips along the face: the contact friction drags the T sideways --
   its path leaves the face normal by an angle that grows with ``mu_c`` (11.5 degrees at
   0.3, 12.2 degrees at 0.45) -- ``mu_c``.  The contact point is chosen so that the
   normal force's and the friction's torques nearly cancel: the T slides 5-6 cm and
   turns by 0.08-0.2 rad.

Phases 1-2 are symmetric about the T's axis (the T's angle stays 0 to rounding, whatever
the parameters); phase 3 keeps the T 6 mm or more off the walls.  Along each parameter,
the rms distance of the T's trajectory to the hidden one grows monotonically over +-30 %
of the hidden values.  At 1 mm observation noise the linearized standard deviations of the
estimates are 0.99 % (mass), 0.79 % (support friction) and 1.2 % (pusher friction);
measured over 20 noise draws (rms): 1.2 %, 0.70 %, 0.98 %, the largest errors 3.8 %,
1.8 %, 2.1 %.  Shorter or earlier-cut excitations lose this: the mass is
known only once the kick is in (1.54 s), the pusher friction only with phase 3.

The fit: growing windows
------------------------
A single ``least_squares`` over the whole trajectory converges from guesses within
+-25 % of the hidden values but not from far ones (from ``(0.25, 0.2, 0.6)`` it stops in
a local minimum at mass 0.45).  :func:`experiment` therefore fits in three stages, each
``least_squares`` (trust-region reflective, within :data:`BOUNDS`, analytic Jacobians)
starting where the previous stopped: the support friction alone on phase 1 (steps
1..122, where it acts alone), mass and support friction on phases 1-2 (steps 1..308; the
pusher friction does not act in these symmetric phases), then all three on the whole
trajectory.  This reaches the hidden values from every corner of :data:`BOUNDS` tried,
for about 1.5 times the single fit's time from the default guess (the early windows are
short): 18-30 evaluations, 0.8-1.3 s on one core.

Noise model
-----------
The T's position is observed with independent Gaussian noise of std ``noise`` (m) per
coordinate, its angle with std ``noise / ANGLE_SCALE`` (rad), ``ANGLE_SCALE`` = 0.05 m
(about the T's radius of gyration, 0.044 m: a point on the T's rim moves by ``noise``).
The residuals are the T's observed coordinates at steps 1..T with the angle's multiplied
by ``ANGLE_SCALE``, so that all have the same noise std and the fit is maximum likelihood.
The pusher is kinematic (its pose follows from the controls), so it is not a residual.

Examples
--------
>>> from softcontact.tasks.push_t import sysid
>>> res = sysid.experiment(seed=0, noise=1e-3)   # doctest: +SKIP
>>> print(res.table())                           # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
import types
from collections.abc import Mapping

import numpy as np

from ..._optional import require
from ..._validate import as_float_array, as_int, as_positive_float, shape_str
from ...optimize import trajectory_residuals
from ...optimize.sysid import _observed_values
from .. import push_t

logger = logging.getLogger(__name__)

__all__ = [
    "PARAMETERS",
    "MODEL_NAMES",
    "HIDDEN",
    "BOUNDS",
    "ANGLE_SCALE",
    "DURATION",
    "SysidResult",
    "initial_state",
    "excitation",
    "experiment",
]

#: The identified parameters (overrides of :func:`push_t.make`), in this order.
PARAMETERS = ("mass", "support_friction", "friction")
#: Their names in ``model.param_names``.
MODEL_NAMES: Mapping[str, str] = types.MappingProxyType(
    {
        "mass": "T.mass",
        "support_friction": "T.support_friction",
        "friction": "contact(T,pusher).friction",
    }
)
#: Default hidden (true) values of :func:`experiment`; the default guess is the task's
#: :data:`push_t.PARAMETERS` (0.15, 0.35, 0.4: -17 %, +17 %, -11 %).
HIDDEN: Mapping[str, float] = types.MappingProxyType(
    {"mass": 0.18, "support_friction": 0.30, "friction": 0.45}
)
#: Bounds of the fit (and of ``hidden`` and ``guess``).  The support friction's upper
#: bound is the stability limit of the explicit step (``dt mu_s g / v_s < 1``, 0.41 at
#: the task's dt and slip velocity, see :mod:`push_t`); the others keep the contacts
#: within the step's limits (every corner of the box rolls out without chatter; a pusher
#: friction of 1.5 chatters in phase 3).
BOUNDS: Mapping[str, tuple[float, float]] = types.MappingProxyType(
    {"mass": (0.1, 0.5), "support_friction": (0.05, 0.4), "friction": (0.05, 1.0)}
)
#: Length (m) that converts the T's angle to a position: angle noise is
#: ``noise / ANGLE_SCALE`` rad and the angle residual is multiplied by it.
ANGLE_SCALE = 0.05

# The excitation: pusher velocity segments (duration s, (vx, vy) at the start, (vx, vy) at
# the end, linear in between), from :func:`initial_state`: the T at the workspace's
# centre line at angle 0 (bar up), the pusher centred 4 mm below the stem's tip.  Pusher
# positions (m) at the segment ends are in the comments, for the default geometry.
_SEGMENTS = (
    (0.06, (0.0, 0.1), (0.0, 0.1)),  # 1. approach to contact          y 0.176
    (0.30, (0.0, 0.1), (0.0, 0.5)),  #    ramp the push up to 0.5 m/s  y 0.266
    (0.25, (0.0, 0.0), (0.0, 0.0)),  #    release: the T coasts ~4 cm
    (0.56, (0.0, 0.15), (0.0, 0.15)),  # 2. close in slowly, push gently y 0.350
    (0.03, (0.0, 0.5), (0.0, 0.5)),  #    kick                         y 0.365
    (0.04, (0.0, -0.5), (0.0, -0.5)),  #    back off                     y 0.345
    (0.30, (0.0, 0.0), (0.0, 0.0)),  #    the T stops short of the top wall, rests
    (0.16, (0.5, 0.0), (0.5, 0.0)),  # 3. around the T                 x 0.336
    (0.28, (0.0, 0.5), (0.0, 0.5)),  #    beside the bar's right end   y 0.485
    (0.40, (-0.15, -0.1), (-0.15, -0.1)),  #  slide along the bar's end face
    (0.20, (0.0, 0.0), (0.0, 0.0)),  #    rest
)
#: Duration (s) of the full excitation.
DURATION = float(sum(s[0] for s in _SEGMENTS))
_RELEASE_END = 2  # index of the last segment of phase 1
_KICK_END = 6  # ... and of phase 2
_PUSHER_GAP = 0.004  # initial gap between the pusher and the stem's tip, m
_PUSHER_Y0 = 0.17  # initial height of the pusher's centre, m


@dataclasses.dataclass(frozen=True, eq=False)
class SysidResult:
    """The outcome of :func:`experiment` (immutable; arrays read-only).

    Attributes
    ----------
    names : tuple of str
        :data:`PARAMETERS`.
    true, initial, estimate : (3,) ndarray
        Hidden values, initial guess and identified values, in ``names`` order.
    relative_error : (3,) ndarray
        ``|estimate - true| / true``.
    noise : float
        Observation noise std (m; the angle's is ``noise / ANGLE_SCALE``).
    cost : float
        Final ``least_squares`` cost, ``|r|^2 / 2`` over the weighted residuals (m^2).
    nfev : int
        Residual (and Jacobian) evaluations summed over the fit's three stages, each one
        rollout with sensitivities over the stage's window.
    wall : float
        Wall-clock time of the fit, s.
    x0 : (12,) ndarray
        Initial state.
    U : (T, 3) ndarray
        Pusher controls.
    observed : (T, 3) ndarray
        Noisy T poses ``(x, y, theta)`` at steps 1..T.
    fitted : (T, 3) ndarray
        T poses at steps 1..T simulated with ``estimate`` (noise free).
    """

    names: tuple
    true: np.ndarray
    initial: np.ndarray
    estimate: np.ndarray
    relative_error: np.ndarray
    noise: float
    cost: float
    nfev: int
    wall: float
    x0: np.ndarray
    U: np.ndarray
    observed: np.ndarray
    fitted: np.ndarray

    def table(self) -> str:
        """A markdown table: parameter | true | initial guess | estimate | relative error."""
        rows = [
            "| parameter | true | initial guess | estimate | relative error |",
            "|---|---:|---:|---:|---:|",
        ]
        for k, name in enumerate(self.names):
            rows.append(
                f"| {name} | {self.true[k]:.6g} | {self.initial[k]:.6g} | "
                f"{self.estimate[k]:.6g} | {100 * self.relative_error[k]:.3g} % |"
            )
        return "\n".join(rows)


def _readonly(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _as_task(task) -> push_t.PushT:
    if not isinstance(task, push_t.PushT):
        raise TypeError(
            f"task must be a push_t.PushT (from push_t.make), got {type(task).__name__}"
        )
    return task


def initial_state(task) -> np.ndarray:
    """The excitation's initial state (12,) for ``task``'s geometry.

    The T at rest at ``(0.256, y, 0)`` (the workspace's centre line, bar up, stem down),
    the pusher at rest at ``(0.256, 0.17)``, ``y`` such that the pusher's disk is 4 mm
    below the stem's tip.  The same for every seed: the seeded initial states of
    :func:`push_t.make` are not used.
    """
    task = _as_task(task)
    tip = -float(np.min(task.vertices[:, 1]))  # stem tip below the centre of mass
    y = _PUSHER_Y0 + task.pusher_radius + _PUSHER_GAP + tip
    x = 0.5 * task.workspace
    x0 = np.zeros(task.model.nx)
    x0[:6] = [x, y, 0.0, x, _PUSHER_Y0, 0.0]
    return x0


def excitation(task, duration=None) -> np.ndarray:
    """The fixed open-loop pusher controls ``U`` (T, 3) of the identification experiment.

    Three phases from :func:`initial_state` (see the module docstring): a push through the
    centre of mass ramped to 0.5 m/s and released (support friction), a kick from contact
    toward the top wall (mass), a sliding push on the end of the T's bar (pusher friction);
    :data:`DURATION` = 2.58 s in all.  The controls are the pusher's velocity
    ``(vx, vy, 0)``, piecewise linear in time (sampled at the middle of each step),
    ``|(vx, vy)| <= 0.5`` m/s.

    Parameters
    ----------
    task : push_t.PushT
        Gives the time step (the segments were designed at dt = 0.005 s; other steps
        sample the same velocity profile).
    duration : float, optional
        Simulated time (s): the sequence is cut there, or padded with rest (zero
        controls) beyond :data:`DURATION`.  Default: :data:`DURATION`.

    Returns
    -------
    (T, 3) ndarray
        ``T = round(duration / dt)``.

    Raises
    ------
    TypeError
        ``task`` not a :class:`push_t.PushT`, or ``duration`` not a real number.
    ValueError
        ``duration`` not finite and > 0, or shorter than one step.
    """
    task = _as_task(task)
    duration = DURATION if duration is None else as_positive_float(duration, "duration")
    dt = task.dt
    n = int(round(duration / dt))
    if n < 1:
        raise ValueError(f"duration must be at least one step ({dt} s), got {duration!r}")
    t = (np.arange(n) + 0.5) * dt
    U = np.zeros((n, 3))
    start = 0.0
    for length, v0, v1 in _SEGMENTS:
        inside = (t >= start) & (t < start + length)
        s = (t[inside] - start) / length
        U[inside, :2] = np.asarray(v0) + (np.asarray(v1) - np.asarray(v0)) * s[:, None]
        start += length
    return U


def _as_params(value, name, default) -> np.ndarray:
    """``value`` (mapping or (3,) array) as a (3,) array within BOUNDS."""
    if value is None:
        p = np.array([default[k] for k in PARAMETERS], dtype=float)
    elif isinstance(value, Mapping):
        unknown = sorted(set(value) - set(PARAMETERS))
        if unknown:
            raise ValueError(
                f"{name} has unknown parameter(s) {unknown}; known: {list(PARAMETERS)}"
            )
        p = np.array(
            [as_positive_float(value.get(k, default[k]), f"{name}[{k!r}]") for k in PARAMETERS],
            dtype=float,
        )
    else:
        p = as_float_array(value, name)
        if p.shape != (len(PARAMETERS),):
            raise ValueError(
                f"{name} must have shape ({len(PARAMETERS)},) (values of "
                f"{', '.join(PARAMETERS)}) or be a mapping, got "
                f"{shape_str(p.shape)}"
            )
        p = p.astype(float)
    for k, key in enumerate(PARAMETERS):
        lo, hi = BOUNDS[key]
        if not (np.isfinite(p[k]) and lo <= p[k] <= hi):
            raise ValueError(f"{name}: {key} must be within [{lo}, {hi}] (BOUNDS), got {p[k]!r}")
    return p


class _Problem:
    """Weighted residuals of the T's observed poses over the first ``n`` steps, and their
    analytic Jacobian with respect to the parameters (mass with the inertia scaled)."""

    _NAMES4 = ("T.mass", "T.inertia", "T.support_friction", "contact(T,pusher).friction")

    def __init__(self, x0, U, observed):
        self.x0, self.U = x0, U
        # trajectory_residuals wants every moving body's coordinates; the pusher's are
        # parameter-free (kinematic) and dropped from the residual
        self.obs6 = np.zeros((len(U), 6))
        self.obs6[:, :3] = observed
        unit = push_t.make().cloud.mass_properties(1.0)
        self.c = float(unit.inertia) / float(unit.mass)  # uniform plate: I = r_g^2 m
        self.w = np.array([1.0, 1.0, ANGLE_SCALE])
        self._key = None
        self._val = None

    @staticmethod
    def build(p):
        return push_t.make(mass=p[0], support_friction=p[1], friction=p[2]).model

    def evaluate(self, p, n=None):
        """``(r, J)``: r (3 n,), J (3 n, 3) for the first ``n`` steps (default all)."""
        n = len(self.U) if n is None else n
        p = np.asarray(p, dtype=float)
        key = (p.tobytes(), n)
        if key != self._key:
            p4 = np.array([p[0], self.c * p[0], p[1], p[2]])
            # the model built from p4[[0, 2, 3]] has inertia c * mass = p4[1]
            r, J4 = trajectory_residuals(
                lambda q: self.build(q[[0, 2, 3]]),
                self._NAMES4,
                p4,
                self.x0,
                self.U[:n],
                self.obs6[:n],
            )
            r = r.reshape(n, 6)[:, :3] * self.w
            J4 = J4.reshape(n, 6, 4)[:, :3] * self.w[:, None]
            J = np.stack([J4[..., 0] + self.c * J4[..., 1], J4[..., 2], J4[..., 3]], axis=-1)
            self._key, self._val = key, (r.reshape(-1), J.reshape(-1, 3))
        return self._val


def _stages(n, dt):
    """The growing windows ``(steps, free parameter indices)`` of the fit."""
    ends = np.cumsum([s[0] for s in _SEGMENTS])
    release = int(round(ends[_RELEASE_END] / dt))
    kick = int(round(ends[_KICK_END] / dt))
    return [(min(release, n), [1]), (min(kick, n), [0, 1]), (n, [0, 1, 2])]


def _fit_stage(prob, p, n, free, bounds, max_nfev):
    """``least_squares`` on the first ``n`` steps over the parameters ``free`` (the others
    held at ``p``); returns the full parameter vector and SciPy's result."""
    least_squares = require("scipy.optimize", "optimize", "push_t.sysid").least_squares

    free = np.asarray(free)

    def full(q):
        z = p.copy()
        z[free] = q
        return z

    fit = least_squares(
        lambda q: prob.evaluate(full(q), n)[0],
        p[free],
        jac=lambda q: prob.evaluate(full(q), n)[1][:, free],
        bounds=(bounds[0, free], bounds[1, free]),
        x_scale=p[free],
        method="trf",
        xtol=1e-12,
        ftol=1e-12,
        gtol=1e-12,
        max_nfev=max_nfev,
    )
    return full(fit.x), fit


def experiment(
    seed=0, noise=1e-3, hidden=None, guess=None, duration=None, max_nfev=None, verbose=False
) -> SysidResult:
    """Identify the T's mass, support friction and pusher friction from a noisy push.

    Simulates :func:`excitation` from :func:`initial_state` with the ``hidden``
    parameters, adds noise to the T's observed poses, and fits the parameters from
    ``guess`` with ``scipy.optimize.least_squares`` (trust-region reflective, within
    :data:`BOUNDS`, ``x_scale`` the current values) and the analytic parameter
    Jacobians, in three growing windows (see the module docstring): the support friction
    on phase 1, mass and support friction on phases 1-2, all three on the whole
    trajectory.

    Parameters
    ----------
    seed : int
        Seed (>= 0) of the noise, ``np.random.default_rng(seed)``.
    noise : float
        Std (>= 0) of the position noise, m; the angle's is ``noise / ANGLE_SCALE`` rad.
    hidden : mapping or (3,) array_like, optional
        True values of :data:`PARAMETERS` (a mapping may give some of them).  Default
        :data:`HIDDEN`.
    guess : mapping or (3,) array_like, optional
        Initial guess; default the task's defaults (:data:`push_t.PARAMETERS`).
    duration : float, optional
        Simulated time of the experiment (s), default :data:`DURATION` (see
        :func:`excitation`).
    max_nfev : int, optional
        Evaluation budget of each stage's ``least_squares`` (default: SciPy's).
    verbose : bool
        Print a line per stage (window, parameters, evaluations, cost, estimate).

    Returns
    -------
    SysidResult

    Raises
    ------
    TypeError
        A non-integer ``seed`` or ``max_nfev``, non-real ``noise`` or ``duration``, a
        ``verbose`` that is not a bool, or non-numeric ``hidden`` / ``guess``.
    ValueError
        A negative ``seed``, ``noise`` not finite and >= 0, ``hidden`` or ``guess`` of
        the wrong shape, with unknown names or outside :data:`BOUNDS`, ``duration``
        not > 0 or shorter than a step, ``max_nfev`` < 1.
    """
    seed = as_int(seed, "seed", lo=0)
    noise = as_positive_float(noise, "noise", allow_zero=True)
    true = _as_params(hidden, "hidden", HIDDEN)
    p0 = _as_params(guess, "guess", push_t.PARAMETERS)
    if max_nfev is not None:
        max_nfev = as_int(max_nfev, "max_nfev", lo=1)
    if not isinstance(verbose, (bool, np.bool_)):
        raise TypeError(f"verbose must be a bool, got {type(verbose).__name__}")

    base = push_t.make()
    x0 = initial_state(base)
    U = excitation(base, duration)
    truth = _Problem.build(true)
    ro = truth.rollout(x0, U)
    if int(np.asarray(ro.status).reshape(-1)[0]) != 0:  # pragma: no cover - within BOUNDS
        t = int(np.asarray(ro.failed_step).reshape(-1)[0])
        raise truth._divergence(
            np.asarray(ro.states).reshape(-1, truth.nx)[t + 1],
            step=t,
            context="the hidden trajectory",
        ) from None
    X = np.asarray(ro.states).reshape(-1, truth.nx)
    clean = _observed_values(truth, X[1:])[:, :3]
    rng = np.random.default_rng(seed)
    observed = clean + rng.normal(size=clean.shape) * (
        noise * np.array([1.0, 1.0, 1.0 / ANGLE_SCALE])
    )

    prob = _Problem(x0, U, observed)
    bounds = np.array([BOUNDS[k] for k in PARAMETERS]).T
    p = p0.copy()
    nfev, cost = 0, math.nan
    t0 = time.perf_counter()
    for n, free in _stages(len(U), base.dt):
        p, fit = _fit_stage(prob, p, n, free, bounds, max_nfev)
        nfev += int(fit.nfev)
        cost = float(fit.cost)
        msg = (
            f"steps 1..{n}, fitting {', '.join(PARAMETERS[k] for k in free)}: "
            f"{fit.nfev} evaluations, cost {cost:.4g}, estimate "
            f"{np.array2string(p, precision=6)}"
        )
        logger.info(msg)
        if verbose:
            print(msg)
    wall = time.perf_counter() - t0
    est = p
    Xf = np.asarray(_Problem.build(est).rollout(x0, U).states).reshape(-1, truth.nx)
    fitted = _observed_values(truth, Xf[1:])[:, :3]
    return SysidResult(
        names=PARAMETERS,
        true=_readonly(true),
        initial=_readonly(p0),
        estimate=_readonly(est),
        relative_error=_readonly(np.abs(est - true) / true),
        noise=noise,
        cost=cost,
        nfev=nfev,
        wall=wall,
        x0=_readonly(x0),
        U=_readonly(U),
        observed=_readonly(observed),
        fitted=_readonly(fitted),
    )
