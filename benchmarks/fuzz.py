"""Fuzzing the step: a million random states of push-T and of 3D boxes, NaN/inf counted,
derivatives checked against finite differences.

Scenes (each a model of the public API, as a user builds it):

* ``push-T``: ``softcontact.tasks.push_t.make(seed=0)`` (2D, the linearly implicit step at 5 ms;
  the T, the kinematic pusher disk, four walls, support friction).
* ``box (euler)``: an actuated 10 x 6 x 4 cm, 1 kg box on a static floor,
  ``ContactParams()``, semi-implicit Euler at 1 ms.
* ``box (implicit)``: the same box with the parameters fitted to it
  (``Scene.add_contact`` without parameters), the implicit step at 5 ms.
* ``box on box (implicit)``: a 4 cm, 0.3 kg cube on the actuated box, every pair fitted,
  the implicit step at 5 ms.

States are drawn, per scene, from categories that stress the contact model: deep
penetration (up to 2 pusher radii, 2 cm for the boxes), touching, the onset of contact
(just apart, within the soft minimum's reach), grazing (surfaces within 0.5 mm, moving
tangentially), release (in contact, controls pulling apart), high speed (bodies and
pusher at up to 10 m/s, 50 rad/s), the T against a wall, and free states; random
orientations and controls (pusher velocities up to 10 m/s; forces up to 30 N, torques up
to 0.5 N m on the box).  Each state is the start of a rollout of ``--horizon`` steps (so
the later steps start from states the dynamics reached: impacts, bounces, releases).

Checks:

* **NaN/inf.**  Most states run in batched rollouts (``Model.rollout``, 2 threads), half
  at order 0 and half at order 1 (per-step Jacobians); a subset (``--order2``) runs through
  ``Model.step`` at order 2, every other one with ``params=True``.  A non-finite entry in
  any state or derivative of a step that did not diverge is counted as NaN/inf; a
  DivergenceError (or a rollout's ``SC_EDIVERGED``) is counted apart, split into
  divergence by the speed limit (``max_travel``) and divergence by a non-finite new state
  (which, from a finite state, is a NaN/inf in disguise, and is also counted as one).
* **Threads.**  A sample of the rollouts (``--thread-check``) is run again on one thread:
  the bits must be the same.
* **Derivatives** at ``--fd-points`` states per scene (drawn across the categories):
  those of ``z = (dx, du) -> x_next(x (+) dx, u + du) (-) x_next(x, u)`` (the step's
  tangent-space convention, ``Model.retract`` / ``Model.difference``) against central
  differences with Richardson extrapolation (steps h and h / 2 in every coordinate of z,
  error O(h^4)): the first derivatives from differences of the values, the second from
  differences of the analytic first derivatives, symmetrized (both charts move; the skew
  part is the bracket term, docs/method.md section 7), as tests/test_step.py does.  Entry
  ``i, j`` passes when ``|fd - analytic| <= tol * scale_i + floor_i``: ``scale_i`` the
  largest analytic entry of output row ``i`` (rows have different units), ``tol`` 1e-6 for
  first and 1e-4 for second derivatives, and ``floor_i`` the rounding floor of a central
  difference at the smaller step (``16 u max(1, |x|) (1 + scale_i) / h`` for the values,
  ``16 u scale_i / h`` for the Jacobians: tests/test_step.py's).  Every point is checked
  at h = 2e-6; a derivative that fails there is checked again at 2e-7, then 2e-8, and the
  table counts the points passing at each step apart.  The step map is smooth but can vary
  on scales far below 2e-6 (a pusher hitting the T head-on at 7 m/s: the tangential
  velocity of the contact is near 0 against a slip velocity of 5 cm/s, so the friction
  direction turns over a micrometre of position, and dx+/dx reaches 1e3); there the
  differences at 2e-6 miss by a large factor, and converge to the analytic derivative like
  h^4 as h falls; a derivative wrong by more than the bound at 2e-8 (whose rounding floor
  is 3.5e-7 max(1, |x|) of the row's scale) passes at no step.  A point whose perturbed
  steps diverge is skipped (counted).

Prints markdown tables (the states per scene, order and category; the counts; the
derivative checks with their worst errors) and the wall time; exits with status 1 when
any NaN/inf, thread mismatch or failed derivative check was found.

    python benchmarks/fuzz.py [--states 1000000] [--seed 0] [--fd-points 1000]
                              [--order2 0.01] [--horizon 2] [--threads 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from _timing import Tee, machine  # benchmarks/ is the script folder, on sys.path

import softcontact as sc
from softcontact import _core
from softcontact.spatial import quat_mul, quat_to_matrix
from softcontact.tasks import push_t
from softcontact.testing import step_hessian, step_jacobian

U64 = np.finfo(float).eps
# FD steps (each with Richardson at half of it): the first for every point, the next ones
# for a derivative that fails at the previous one
FD_STEPS = (2e-6, 2e-7, 2e-8)
TOL_J, TOL_H = 1e-6, 1e-4
DIVERGED = _core.SC_EDIVERGED

# --------------------------------------------------------------------------------------------
# scenes
# --------------------------------------------------------------------------------------------

BOX_HALF = np.array([0.05, 0.03, 0.02])
TOP_HALF = np.array([0.02, 0.02, 0.02])
FLOOR = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])


def _build(scene, dt, integrator):
    """``scene.build`` without its stability warnings: the Euler box at 1 ms is past the
    explicit friction limit of ContactParams() on purpose (what is checked holds at any
    dt, and such steps are what users run)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.SoftContactWarning)
        return scene.build(dt, integrator)


def box_model(integrator, stacked):
    s = sc.Scene(dim=3)
    s.add_body(FLOOR, kind="static", name="floor")
    s.add_body(
        sc.PointCloud.box(BOX_HALF, 0.01),
        mass=1.0,
        pose=[0, 0, BOX_HALF[2], 1, 0, 0, 0],
        actuated=True,
        name="box",
    )
    params = sc.ContactParams() if integrator == "euler" else None
    s.add_contact("floor", "box", params)
    if stacked:
        s.add_body(
            sc.PointCloud.box(TOP_HALF, 0.01),
            mass=0.3,
            pose=[0, 0, 2 * BOX_HALF[2] + TOP_HALF[2], 1, 0, 0, 0],
            name="top",
        )
        s.add_contact("box", "top", params)
        s.add_contact("floor", "top", params)
    return _build(s, 0.001 if integrator == "euler" else 0.005, integrator)


# --------------------------------------------------------------------------------------------
# random states
# --------------------------------------------------------------------------------------------

CATEGORIES = ("deep", "touching", "onset", "grazing", "release", "fast", "wall", "free")


def _log_uniform(rng, lo, hi, size):
    return np.exp(rng.uniform(math.log(lo), math.log(hi), size))


def _unit(rng, size, dim):
    v = rng.normal(size=(size, dim))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _speeds(rng, size, top):
    """Speeds: a fifth at rest, the rest log-uniform from 1e-4 to ``top``."""
    s = _log_uniform(rng, 1e-4, top, size)
    s[rng.random(size) < 0.2] = 0.0
    return s


def _gaps(rng, cat, deep):
    """Surface gaps (m; < 0 penetrating) of each category."""
    n = len(cat)
    g = rng.uniform(3e-3, 0.1, n)  # free, fast, wall: apart or anywhere
    lo_hi = {
        "deep": (-deep, -1e-3),
        "touching": (-1e-3, 0.0),
        "onset": (0.0, 5e-3),
        "grazing": (-5e-4, 5e-4),
        "release": (-2e-3, 0.0),
        "fast": (-deep, 5e-3),
    }
    for k, (lo, hi) in lo_hi.items():
        m = cat == CATEGORIES.index(k)
        g[m] = rng.uniform(lo, hi, m.sum())
    return g


def push_t_states(task, rng, n):
    """(x (n, 12), u (n, 3), category (n,)) of the push-T model."""
    V = task.vertices
    r = task.pusher_radius
    cat = rng.integers(0, len(CATEGORIES), n)
    # the T: anywhere in the workspace, any angle (a few turns either way)
    t = rng.uniform(0.06, 0.45, (n, 2))
    th = rng.uniform(-np.pi, np.pi, n) + 2 * np.pi * rng.integers(-2, 3, n)
    c, s = np.cos(th), np.sin(th)
    R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (n, 2, 2)
    # against a wall: the T's nearest corner at a gap from it
    wall = cat == CATEGORIES.index("wall")
    if wall.any():
        normals = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
        offsets = np.array([0.0, -task.workspace, 0.0, -task.workspace])
        w = rng.integers(0, 4, n)
        nw, cw = normals[w], offsets[w]
        corners = np.einsum("nij,kj->nki", R, V) + t[:, None, :]
        dist = np.einsum("nki,ni->nk", corners, nw).min(axis=1) - cw
        gap = rng.uniform(-0.02, 5e-3, n)
        shift = (gap - dist)[:, None] * nw
        t = np.where(wall[:, None], t + shift, t)
    # the pusher: at a gap from a point of the outline, along its edge's outward normal
    a, b = V, np.roll(V, -1, axis=0)
    lengths = np.linalg.norm(b - a, axis=1)
    e = rng.choice(len(V), n, p=lengths / lengths.sum())
    p = a[e] + rng.random(n)[:, None] * (b[e] - a[e])
    d = b[e] - a[e]
    nrm = np.stack([d[:, 1], -d[:, 0]], 1) / lengths[e][:, None]  # outward (CCW outline)
    gap = _gaps(rng, cat, 2 * r)
    centre = t + np.einsum("nij,nj->ni", R, p + nrm * (r + gap)[:, None])
    free = (cat == CATEGORIES.index("free")) | wall
    centre[free] = rng.uniform(r, task.workspace - r, (free.sum(), 2))
    nw = np.einsum("nij,nj->ni", R, nrm)  # the outline's normal, world frame
    tw = np.stack([-nw[:, 1], nw[:, 0]], 1)
    # velocities: the T slow or fast, the pusher's last velocity, the control
    fast = cat == CATEGORIES.index("fast")
    top = np.where(fast, 10.0, 0.3)
    vT = _unit(rng, n, 2) * _speeds(rng, n, 1.0)[:, None] * top[:, None]
    wT = rng.normal(size=n) * np.where(fast, 50.0, 1.0) * (rng.random(n) < 0.8)
    speed = _speeds(rng, n, 10.0)
    u = _unit(rng, n, 2) * speed[:, None]
    m = cat == CATEGORIES.index("onset")  # approaching
    u[m] = -nw[m] * speed[m, None]
    m = cat == CATEGORIES.index("release")  # pulling away
    u[m] = nw[m] * speed[m, None]
    m = cat == CATEGORIES.index("grazing")  # along the surface
    u[m] = tw[m] * speed[m, None]
    u = np.c_[u, rng.normal(size=n) * 20.0 * (rng.random(n) < 0.1)]  # spinning, rarely
    vp = np.where((rng.random(n) < 0.5)[:, None], u, np.c_[_unit(rng, n, 2), np.zeros(n)])
    x = np.c_[t, th, centre, rng.uniform(-np.pi, np.pi, n), vT, wT, vp]
    return x, u, cat


def _random_quaternions(rng, n):
    return _unit(rng, n, 4)


def _flat_quaternions(rng, n):
    """A face down (one of 6) with a tilt of up to 0.05 rad."""
    faces = np.array(
        [
            [1, 0, 0, 0],
            [0, 1, 0, 0],
            [np.sqrt(0.5), np.sqrt(0.5), 0, 0],
            [np.sqrt(0.5), -np.sqrt(0.5), 0, 0],
            [np.sqrt(0.5), 0, np.sqrt(0.5), 0],
            [np.sqrt(0.5), 0, -np.sqrt(0.5), 0],
        ]
    )
    q = faces[rng.integers(0, 6, n)]
    tilt = np.c_[np.ones(n), rng.uniform(-0.025, 0.025, (n, 3))]
    tilt /= np.linalg.norm(tilt, axis=1, keepdims=True)
    return quat_mul(tilt, q)


def _orientations(rng, n):
    q = _random_quaternions(rng, n)
    flat = rng.random(n) < 0.4
    q[flat] = _flat_quaternions(rng, flat.sum())
    return q


def _lowest(q, half):
    """Depth of a box's lowest corner below its centre, per quaternion."""
    return np.sum(np.abs(quat_to_matrix(q)[:, 2, :]) * half, axis=1)


def _velocities3(rng, n, cat, radius):
    fast = cat == CATEGORIES.index("fast")
    top = np.where(fast, 10.0, 0.3)
    v = _unit(rng, n, 3) * _speeds(rng, n, 1.0)[:, None] * top[:, None]
    w = _unit(rng, n, 3) * _speeds(rng, n, 1.0)[:, None] * np.where(fast, 50.0, 1.0)[:, None]
    graze = cat == CATEGORIES.index("grazing")
    v[graze, 2] *= 1e-3  # sliding along the surface
    onset = cat == CATEGORIES.index("onset")
    v[onset, 2] = -np.abs(v[onset, 2])  # falling onto it
    release = cat == CATEGORIES.index("release")
    v[release, 2] = np.abs(v[release, 2])  # lifting off
    return np.c_[v, w]


def box_states(model, rng, n):
    """(x, u, category) of the box models (one box, or the stack)."""
    cat = rng.integers(0, len(CATEGORIES), n)
    cat[cat == CATEGORIES.index("wall")] = CATEGORIES.index("touching")  # no walls here
    q = _orientations(rng, n)
    gap = _gaps(rng, cat, 0.02)
    free = cat == CATEGORIES.index("free")
    gap[free] = _log_uniform(rng, 3e-3, 0.3, free.sum())
    xy = rng.uniform(-0.5, 0.5, (n, 2))
    pose = np.c_[xy, _lowest(q, BOX_HALF) + gap, q]
    vel = _velocities3(rng, n, cat, float(np.linalg.norm(BOX_HALF)))
    scale = np.array([0.0, 0.1, 1.0])[rng.integers(0, 3, n)]
    u = np.c_[rng.uniform(-30, 30, (n, 3)), rng.uniform(-0.5, 0.5, (n, 3))] * scale[:, None]
    release = cat == CATEGORIES.index("release")
    u[release, 2] = np.abs(u[release, 2]) + 15.0  # lifted off the floor
    if model.nx == 13:
        return np.c_[pose, vel], u, cat
    # the stack: the box resting on the floor (mostly), the top box at the gap above it
    rest = rng.random(n) < 0.7
    pose[rest] = np.c_[
        xy[rest],
        _lowest(q[rest], BOX_HALF) + rng.uniform(-2e-3, 5e-4, rest.sum()),
        q[rest],
    ]
    vel[rest] *= 0.01
    qt = _orientations(rng, n)
    top_of_box = pose[:, 2] + _lowest(q, BOX_HALF)
    off = rng.uniform(-0.04, 0.04, (n, 2))
    gap2 = _gaps(rng, cat, 0.02)
    gap2[free] = _log_uniform(rng, 3e-3, 0.3, free.sum())
    pose2 = np.c_[xy + off, top_of_box + _lowest(qt, TOP_HALF) + gap2, qt]
    vel2 = _velocities3(rng, n, cat, float(np.linalg.norm(TOP_HALF)))
    return np.c_[pose, pose2, vel, vel2], u, cat


@dataclass
class Scene:
    name: str
    model: sc.Model
    states: object  # (rng, n) -> (x, u, category)
    share: float  # of --states


def scenes():
    task = push_t.make(seed=0)
    out = [
        Scene("push-T", task.model, lambda rng, n: push_t_states(task, rng, n), 0.4),
    ]
    for name, integ, stacked, share in (
        ("box (euler)", "euler", False, 0.25),
        ("box (implicit)", "implicit", False, 0.2),
        ("box on box (implicit)", "implicit", True, 0.15),
    ):
        m = box_model(integ, stacked)
        out.append(Scene(name, m, lambda rng, n, m=m: box_states(m, rng, n), share))
    return out


# --------------------------------------------------------------------------------------------
# tangent spaces, batched (Model.retract / Model.difference row by row)
# --------------------------------------------------------------------------------------------


def _slots(model):
    nqb, nvb = (3, 3) if model.dim == 2 else (7, 6)
    return nqb, nvb, len(model.moving)


def retract_batch(model, X, DX):
    nqb, nvb, nm = _slots(model)
    out = np.empty_like(X)
    for j in range(nm):
        out[:, j * nqb : (j + 1) * nqb] = sc.retract(
            X[:, j * nqb : (j + 1) * nqb], DX[:, j * nvb : (j + 1) * nvb]
        )
    out[:, model.nq :] = X[:, model.nq :] + DX[:, model.nv :]
    return out


def difference_batch(model, X1, X0):
    nqb, _, nm = _slots(model)
    parts = [
        sc.pose_difference(X1[..., j * nqb : (j + 1) * nqb], X0[..., j * nqb : (j + 1) * nqb])
        for j in range(nm)
    ]
    return np.concatenate(parts + [X1[..., model.nq :] - X0[..., model.nq :]], axis=-1)


# --------------------------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------------------------


@dataclass
class Counts:
    states: int = 0  # random start states
    steps: int = 0  # steps evaluated (states x horizon, up to divergence)
    nonfinite: int = 0  # steps with a NaN/inf output, divergence excluded
    div_speed: int = 0
    div_nonfinite: int = 0
    thread_checked: int = 0
    thread_mismatch: int = 0
    seconds: float = 0.0
    examples: list = field(default_factory=list)  # (what, x, u) of the first findings


def _note(c, what, x, u):
    if len(c.examples) < 3:
        c.examples.append((what, np.asarray(x).tolist(), np.asarray(u).tolist()))


def check_rollouts(model, x, u, order, horizon, threads, rng, thread_share, c):
    """NaN/inf, divergence and thread checks of rollouts from ``x`` with controls ``u``
    (repeated over the horizon, jittered by 10 %)."""
    B = len(x)
    U = np.repeat(u[:, None, :], horizon, axis=1)
    U *= 1.0 + 0.1 * rng.normal(size=U.shape)
    t0 = time.perf_counter()
    r = model.rollout(x, U, order=order, num_threads=threads)
    c.seconds += time.perf_counter() - t0
    c.states += B
    done = np.where(r.status == 0, horizon, r.failed_step)
    c.steps += int(np.sum(np.where(r.status == 0, horizon, r.failed_step + 1)))
    bad_status = (r.status != 0) & (r.status != DIVERGED)
    for b in np.flatnonzero(bad_status):
        c.nonfinite += 1
        _note(c, f"rollout status {r.status[b]}", x[b], U[b])
    for b in np.flatnonzero(r.status == DIVERGED):
        k = int(r.failed_step[b])
        if np.all(np.isfinite(r.states[b, k + 1])):
            c.div_speed += 1
        else:
            c.div_nonfinite += 1
            c.nonfinite += 1
            _note(c, f"non-finite state after step {k}", r.states[b, k], U[b, k])
    # every completed step's outputs finite (the states before a divergence included)
    steps = np.arange(horizon)[None, :] < done[:, None]  # (B, T): step t completed
    fin = np.all(np.isfinite(r.states[:, 1:]), axis=-1)
    if order:
        fin &= np.all(np.isfinite(r.dx_dx), axis=(-1, -2))
        fin &= np.all(np.isfinite(r.dx_du), axis=(-1, -2))
    bad = steps & ~fin
    c.nonfinite += int(bad.sum())
    for b, t in np.argwhere(bad)[:3]:
        _note(c, f"non-finite output of step {t}", r.states[b, t], U[b, t])
    # a sample again on one thread: the same bits
    pick = np.flatnonzero(rng.random(B) < thread_share)
    if len(pick):
        r1 = model.rollout(x[pick], U[pick], order=order, num_threads=1)
        for a1, a2 in zip(r1, r, strict=True):
            if a1 is None:
                continue
            same = np.array(
                [
                    np.asarray(a1[i]).tobytes() == np.asarray(a2[p]).tobytes()
                    for i, p in enumerate(pick)
                ]
            )
            c.thread_mismatch += int((~same).sum())
        c.thread_checked += len(pick)


def check_order2(model, x, u, c):
    """Model.step at order 2 (every other one with params=True), one by one."""
    t0 = time.perf_counter()
    for k in range(len(x)):
        c.states += 1
        c.steps += 1
        try:
            r = model.step(x[k], u[k], order=2, params=bool(k % 2))
        except sc.DivergenceError as e:
            if e.quantity in ("speed", "angular speed"):
                c.div_speed += 1
            else:
                c.div_nonfinite += 1
                c.nonfinite += 1
                _note(c, f"DivergenceError {e.quantity}", x[k], u[k])
            continue
        if not all(np.all(np.isfinite(a)) for a in r if a is not None):
            c.nonfinite += 1
            _note(c, "non-finite order-2 output", x[k], u[k])
    c.seconds += time.perf_counter() - t0


@dataclass
class FD:
    points: int = 0
    skipped: int = 0
    # per derivative ("J", "H"): points passing at each step of FD_STEPS, and failing
    passed: dict = field(
        default_factory=lambda: {"J": [0] * len(FD_STEPS), "H": [0] * len(FD_STEPS)}
    )
    failed: dict = field(default_factory=lambda: {"J": 0, "H": 0})
    rel: dict = field(default_factory=lambda: {"J": 0.0, "H": 0.0})  # worst err / row scale
    bound: dict = field(default_factory=lambda: {"J": 0.0, "H": 0.0})  # worst err / bound
    seconds: float = 0.0
    worst: list = field(default_factory=list)  # (ratio, kind, x, u) of failures


def _fd_errors(model, x, u, r, J, H, h, threads):
    """(err / bound, err / row scale) of J and H against Richardson-extrapolated central
    differences at steps h and h / 2 (the perturbed steps in one batched rollout), or None
    when a perturbed step diverges."""
    n, nu = 2 * model.nv, model.nu
    N = n + nu
    hs = (h, h / 2)
    E = np.concatenate([sg * hh * np.eye(N) for hh in hs for sg in (1.0, -1.0)])  # (4N, N)
    xs = retract_batch(model, np.repeat(x[None], len(E), 0), E[:, :n])
    us = u[None] + E[:, n:]
    ro = model.rollout(xs, us[:, None, :], order=1, num_threads=threads)
    if np.any(ro.status != 0):
        return None
    dv = difference_batch(model, ro.states[:, 1], np.repeat(r.x_next[None], len(E), 0))
    Jp = np.concatenate([ro.dx_dx[:, 0], ro.dx_du[:, 0]], axis=2)  # (4N, n, N)
    d_val, d_jac = [], []
    for i, hh in enumerate(hs):
        p, m = slice(2 * i * N, (2 * i + 1) * N), slice((2 * i + 1) * N, (2 * i + 2) * N)
        d_val.append(((dv[p] - dv[m]) / (2 * hh)).T)  # (n, N): column j from e_j
        d_jac.append(np.moveaxis((Jp[p] - Jp[m]) / (2 * hh), 0, -1))  # (n, N, N)
    fj = (4 * d_val[1] - d_val[0]) / 3
    fh = (4 * d_jac[1] - d_jac[0]) / 3
    fh = 0.5 * (fh + np.swapaxes(fh, 1, 2))
    row_j = np.abs(J).max(axis=1)
    row_h = np.abs(H).max(axis=(1, 2))
    floor_j = 16 * U64 * max(1.0, np.abs(x).max()) * (1 + row_j) / hs[1]
    floor_h = 16 * U64 * row_j / hs[1]
    ej, eh = np.abs(fj - J), np.abs(fh - H)
    bj = (ej / (TOL_J * row_j + floor_j)[:, None]).max()
    bh = (eh / (TOL_H * row_h + floor_h)[:, None, None]).max()
    # relative to the row's scale, over the rows where that term of the bound is the larger
    # (elsewhere the row is at the rounding floor: near zero, as a Hessian row of a free
    # flight)
    above_j, above_h = TOL_J * row_j >= floor_j, TOL_H * row_h >= floor_h
    rj = (ej[above_j] / row_j[above_j, None]).max(initial=0.0)
    rh = (eh[above_h] / row_h[above_h, None, None]).max(initial=0.0)
    return {"J": (float(bj), float(rj)), "H": (float(bh), float(rh))}


def check_fd(model, X, Uc, threads, f):
    """First and second derivatives at each (X[k], Uc[k]) against Richardson-extrapolated
    central differences (the values' for J, the analytic J's for H), at the first step of
    FD_STEPS, then, for a derivative that fails there, at the next ones: where the step map
    varies on a scale shorter than the step (a head-on impact at metres per second against
    a slip velocity of centimetres per second turns the friction on a micrometre), a
    correct derivative passes at a smaller step -- the error falls like h^4 -- and a wrong
    one at none."""
    t0 = time.perf_counter()
    for k in range(len(X)):
        x, u = X[k], Uc[k]
        try:
            r = model.step(x, u, order=2)
        except sc.DivergenceError:
            f.skipped += 1
            continue
        J, H = step_jacobian(r), step_hessian(r)
        todo, last = {"J", "H"}, {}
        for i, h in enumerate(FD_STEPS):
            e = _fd_errors(model, x, u, r, J, H, h, threads)
            if e is None:
                break
            for kind in sorted(todo):
                last[kind] = e[kind]
                if e[kind][0] <= 1.0:
                    f.passed[kind][i] += 1
                    todo.discard(kind)
            if not todo:
                break
        if not last:  # the first step's perturbations diverged
            f.skipped += 1
            continue
        f.points += 1
        for kind, (b, rel) in last.items():
            f.bound[kind] = max(f.bound[kind], b)
            f.rel[kind] = max(f.rel[kind], rel)
            if kind in todo:
                f.failed[kind] += 1
                f.worst.append((b, kind, x.tolist(), u.tolist()))
                f.worst = sorted(f.worst, reverse=True)[:3]
    f.seconds += time.perf_counter() - t0


# --------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------


def _header(out, args):
    info = sc.build_info()
    cpu, ncpu = machine()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("## Fuzzing the step: random states, NaN/inf, derivatives\n", file=out)
    print(
        f"softcontact {info['version']} (SIMD {info['isa_default']}); "
        f"Python {platform.python_version()}; {platform.platform()}; {cpu}, {ncpu} CPUs; "
        f"load average {load:.2f} at the start.",
        file=out,
    )
    print(
        f"`python benchmarks/fuzz.py --states {args.states} --seed {args.seed} --fd-points "
        f"{args.fd_points} --order2 {args.order2:g} --horizon {args.horizon} --threads "
        f"{args.threads}`\n",
        file=out,
    )


def _fmt(v):
    return f"{v:.2g}" if v else "0"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=1_000_000, help="random start states, in all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fd-points", type=int, default=1000, help="derivative checks per scene")
    ap.add_argument("--order2", type=float, default=0.01, help="share of states at order 2")
    ap.add_argument("--horizon", type=int, default=2, help="steps per rollout")
    ap.add_argument("--threads", type=int, default=2, help="threads of the rollouts")
    ap.add_argument("--thread-check", type=float, default=0.01, help="share rerun on 1 thread")
    ap.add_argument("--chunk", type=int, default=4096, help="trajectories per rollout call")
    ap.add_argument("--out", default=None, help="also write the output to this markdown file")
    args = ap.parse_args(argv)
    for name in ("states", "horizon", "threads", "chunk"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.fd_points < 0 or not 0 <= args.order2 <= 1 or not 0 <= args.thread_check <= 1:
        ap.error("--fd-points must be >= 0; --order2 and --thread-check in [0, 1]")

    out = Tee(args.out, "<!-- written by benchmarks/fuzz.py --out; do not edit by hand -->")
    wall0 = time.perf_counter()
    _header(out, args)
    root = np.random.SeedSequence(args.seed)
    results = []
    ok = True
    for sc_def, seq in zip(scenes(), root.spawn(4), strict=True):
        rng = np.random.default_rng(seq)
        model = sc_def.model
        total = max(1, int(round(args.states * sc_def.share)))
        n2 = int(round(total * args.order2))
        per_order = {2: n2, 0: (total - n2 + 1) // 2, 1: (total - n2) // 2}
        cats = np.zeros(len(CATEGORIES), dtype=np.int64)
        counts = {o: Counts() for o in (0, 1, 2)}
        for order in (0, 1):
            left = per_order[order]
            while left > 0:
                b = min(args.chunk, left)
                x, u, cat = sc_def.states(rng, b)
                cats += np.bincount(cat, minlength=len(CATEGORIES))
                check_rollouts(
                    model,
                    x,
                    u,
                    order,
                    args.horizon,
                    args.threads,
                    rng,
                    args.thread_check,
                    counts[order],
                )
                left -= b
        if n2:
            x, u, cat = sc_def.states(rng, n2)
            cats += np.bincount(cat, minlength=len(CATEGORIES))
            check_order2(model, x, u, counts[2])
        # derivative checks: points drawn across the categories
        fd = FD()
        if args.fd_points:
            x, u, cat = sc_def.states(rng, args.fd_points)
            check_fd(model, x, u, args.threads, fd)
        results.append((sc_def, cats, counts, fd))
        ok &= all(c.nonfinite == 0 and c.thread_mismatch == 0 for c in counts.values())
        ok &= fd.failed["J"] == 0 and fd.failed["H"] == 0

    print("### States per category\n", file=out)
    print("| scene | " + " | ".join(CATEGORIES) + " | total |", file=out)
    print("|---|" + "---|" * (len(CATEGORIES) + 1), file=out)
    for s, cats, _, _ in results:
        cells = " | ".join(str(int(v)) for v in cats)
        print(f"| {s.name} | {cells} | {int(cats.sum())} |", file=out)

    print("\n### NaN/inf and divergence\n", file=out)
    print(
        "| scene | order | start states | steps | NaN/inf | divergences (speed) | "
        "divergences (non-finite) | thread checks (mismatches) | time [s] | us/step |",
        file=out,
    )
    print("|---|---|---|---|---|---|---|---|---|---|", file=out)
    tot = Counts()
    for s, _, counts, _ in results:
        for order, c in counts.items():
            how = "rollout" if order < 2 else "step"
            us = 1e6 * c.seconds / c.steps if c.steps else 0.0
            print(
                f"| {s.name} | {order} ({how}) | {c.states} | {c.steps} | {c.nonfinite} | "
                f"{c.div_speed} | {c.div_nonfinite} | {c.thread_checked} "
                f"({c.thread_mismatch}) | {c.seconds:.1f} | {us:.1f} |",
                file=out,
            )
            for k in ("states", "steps", "nonfinite", "div_speed", "div_nonfinite"):
                setattr(tot, k, getattr(tot, k) + getattr(c, k))
            tot.thread_checked += c.thread_checked
            tot.thread_mismatch += c.thread_mismatch
    print(
        f"| **all** | | {tot.states} | {tot.steps} | {tot.nonfinite} | {tot.div_speed} | "
        f"{tot.div_nonfinite} | {tot.thread_checked} ({tot.thread_mismatch}) | | |",
        file=out,
    )

    steps = ", ".join(f"{h:g}" for h in FD_STEPS)
    print(
        f"\n### Derivatives against central differences (Richardson; steps {steps})\n",
        file=out,
    )
    at = " | ".join(f"pass at {h:g}" for h in FD_STEPS)
    print(
        f"| scene | points | skipped (diverged) | first: {at} | fail | worst err / row scale | "
        f"worst err / bound | second: {at} | fail | worst err / row scale | worst err / bound "
        "| time [s] |",
        file=out,
    )
    print("|---|---|---|" + "---|" * (2 * (len(FD_STEPS) + 3)) + "---|", file=out)
    for s, _, _, fd in results:
        cells = []
        for kind in ("J", "H"):
            cells += [str(v) for v in fd.passed[kind]]
            cells += [str(fd.failed[kind]), _fmt(fd.rel[kind]), _fmt(fd.bound[kind])]
        print(
            f"| {s.name} | {fd.points} | {fd.skipped} | "
            + " | ".join(cells)
            + f" | {fd.seconds:.1f} |",
            file=out,
        )
    print(
        f"\nBounds: first derivatives {TOL_J:g}, second {TOL_H:g} of each output row's largest "
        "entry, plus the rounding floor of a central difference at the step used (a ratio "
        "<= 1 passes).  A derivative that fails at a step is checked again at the next, "
        "smaller one; the worst errors are those at the step where each point passed (for a "
        "failure, at the smallest step).  Errors over the row's scale are taken over the "
        "rows whose bound is not the rounding floor.",
        file=out,
    )
    findings = [
        (s.name, order, e)
        for s, _, counts, _ in results
        for order, c in counts.items()
        for e in c.examples
    ]
    findings += [(s.name, "FD", w) for s, _, _, fd in results for w in fd.worst]
    if findings:
        print("\n### Findings (first examples)\n", file=out)
        for name, order, e in findings:
            print(f"- {name}, order {order}: {e}", file=out)
    print(f"\nWall time: {time.perf_counter() - wall0:.1f} s.", file=out)
    out.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
