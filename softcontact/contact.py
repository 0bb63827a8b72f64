"""Separation field and soft-minimum contact between two posed bodies (docs/method.md
sections 3-5).

Body A's samples are mapped into B's frame and B's SSDF evaluated there, and vice
versa; ``Phi_k < 0`` means sample k penetrates the other body.  Derivatives are taken
with respect to the tangent coordinates ``(dt_A, dtheta_A, dt_B, dtheta_B)`` of the two
poses (translations in the world frame, rotations in the body frame; see
:func:`softcontact.retract`) and, for :func:`contact`, the two velocities.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from . import _core
from ._validate import (
    CONTACT_LENGTH_RANGE,
    COORD_MAX,
    DAMPING_RANGE,
    DT_RANGE,
    EPS_RANGE,
    FRICTION_RANGE,
    REACH_MAX,
    SLIP_RANGE,
    SPEED_MAX,
    STIFFNESS_RANGE,
    UNIT_NORMALIZE_TOL,
    UNIT_TOL,
    as_float_array,
    as_in_range,
    as_int,
    as_num_threads,
    check_within,
    first_non_unit,
    has_batch,
    shape_str,
)
from .cloud import PointCloud
from .ssdf import _check_cloud, _packed, _reach_eps, _run_options, _sphere

__all__ = ["Separation", "separation", "ContactParams", "Contact", "contact"]


class Separation(NamedTuple):
    """Result of :func:`separation`; fields above the requested order are None.

    Attributes
    ----------
    phi : (I + J,) ndarray
        ``Phi``: A's samples against B's SSDF, then B's samples against A's.
    points : (I + J, D) ndarray
        World positions of the samples (A's, then B's).
    grad : (I + J, D) ndarray
        World gradient ``G_k`` of the other body's SSDF at each sample.
    dphi_dq : (I + J, 2 nv) ndarray or None
        ``dPhi_k / dq`` with ``q = (dt_A, dtheta_A, dt_B, dtheta_B)``; nv = 3 (2D), 6 (3D).
    d2phi_dq2 : (I + J, 2 nv, 2 nv) ndarray or None
        Second derivatives, exactly symmetric.
    """

    phi: np.ndarray
    points: np.ndarray
    grad: np.ndarray
    dphi_dq: np.ndarray | None
    d2phi_dq2: np.ndarray | None


def _as_vector(v, name, want, dim, what):
    """A finite float64 vector of shape (want,); messages name the argument."""
    a = as_float_array(v, name)
    if a.shape != (want,):
        raise ValueError(
            f"{name} must have shape ({want},) for {dim}D {what}, got {shape_str(a.shape)}"
        )
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (NaN or inf found)")
    return a


def _check_clouds(cloud_a, cloud_b) -> int:
    """Both arguments PointClouds of one dimension, which is returned."""
    if not isinstance(cloud_a, PointCloud):
        raise TypeError(f"cloud_a must be a PointCloud, got {type(cloud_a).__name__}")
    if not isinstance(cloud_b, PointCloud):
        raise TypeError(f"cloud_b must be a PointCloud, got {type(cloud_b).__name__}")
    if cloud_a.dim != cloud_b.dim:
        raise ValueError(
            f"cloud_a and cloud_b must have the same dimension, got "
            f"{cloud_a.dim}D and {cloud_b.dim}D"
        )
    return cloud_a.dim


def _as_pose(pose, name, dim):
    """A finite pose in its valid range; (3D) a quaternion within UNIT_NORMALIZE_TOL of unit
    norm but not within UNIT_TOL is normalised in a copy (the input is never modified)."""
    q = _as_vector(pose, name, 3 if dim == 2 else 7, dim, "clouds")
    bad = first_non_unit(q[3:]) if dim == 3 else None
    if bad is not None:
        n = bad[1]
        if not abs(n - 1.0) <= UNIT_NORMALIZE_TOL:
            raise ValueError(
                f"{name} must hold a unit quaternion in [3:7] (norm 1 within "
                f"{UNIT_TOL:g}; within {UNIT_NORMALIZE_TOL:g} it is normalised), got norm {n!r}"
            )
        q = q.copy()
        q[3:] = q[3:] / n
    check_within(q[:dim], name, COORD_MAX, "a translation")
    return q


def _batched(*args) -> bool:
    """Whether any of the poses or velocities has leading (batch) dimensions."""
    return any(map(has_batch, args))


def _broadcast(dim, named):
    """The broadcast leading shape of ``named`` ((name, value, per-item size, what)) and
    each value as an array of that leading shape (broadcast views)."""
    arrs = []
    for name, v, want, what in named:
        a = as_float_array(v, name)
        if a.ndim < 1 or a.shape[-1] != want:
            raise ValueError(
                f"{name} must have shape ({want},) or (..., {want}) for {dim}D {what}, got "
                f"{shape_str(a.shape)}"
            )
        arrs.append(a)
    try:
        lead = np.broadcast_shapes(*(a.shape[:-1] for a in arrs))
    except ValueError:
        raise ValueError(
            " and ".join(n for n, *_ in named)
            + " must have leading dimensions that broadcast, got "
            + " and ".join(shape_str(a.shape) for a in arrs)
        ) from None
    return lead, [np.broadcast_to(a, lead + a.shape[-1:]) for a in arrs]


def _per_item(lead, call, shapes):
    """``call(index)`` (a NamedTuple of arrays, floats and Nones) for every item of the
    leading shape ``lead``, stacked: each field of shape ``lead + shapes[k]`` (None where
    the items' are)."""
    items = []
    for idx in np.ndindex(*lead):
        try:
            items.append(call(idx))
        except ValueError as e:
            raise ValueError(f"item {', '.join(map(str, idx))}: {e}") from None
    fields = []
    for k, shp in enumerate(shapes):
        if shp is None:
            fields.append(None)
        else:
            out = np.empty(lead + shp)
            flat = out.reshape((-1,) + shp)
            for i, it in enumerate(items):
                flat[i] = it[k]
            fields.append(out)
    return fields


def _check_pair_reach(cloud_a, ta, cloud_b, tb, eps, poses="pose_a and pose_b", eps_name="eps"):
    """ValueError naming ``poses`` (or ``eps_name``) unless the two clouds, their frames'
    origins at ``ta`` and ``tb``, are within each other's reach: with ``d = |ta - tb|`` and
    ``r = |c0| + rho`` each cloud's radius about its origin, ``(d + r_a + r_b) rho <=
    REACH_MAX eps`` for both clouds' ``rho`` -- the C core's test (sc__pair_reach_check),
    with its arithmetic, which bounds the reach of every sample of one posed in the
    other's frame."""
    (_, rho_a, ra), (_, rho_b, rb) = _sphere(cloud_a), _sphere(cloud_b)
    lim = REACH_MAX * eps
    d2 = 0.0
    for k in range(cloud_a.dim):
        e = float(ta[k]) - float(tb[k])
        d2 += e * e
    s = math.sqrt(d2) + ra + rb
    if s * rho_a <= lim and s * rho_b <= lim:
        return
    rho = max(rho_a, rho_b)
    if (ra + rb) * rho > lim:
        raise ValueError(
            f"{eps_name} must be at least {_reach_eps(rho, ra + rb):.3g} m^2 for these clouds "
            f"(radii {ra:.6g} and {rb:.6g} m about their origins, {rho:.6g} m about their "
            f"centres): their reach (d + r_a + r_b) rho <= {REACH_MAX:g} eps "
            f'(docs/method.md, "Valid ranges"), got {eps!r}'
        )
    raise ValueError(
        f"{poses} must be within the clouds' reach, (d + r_a + r_b) rho <= {REACH_MAX:g} eps "
        f"with d the distance of their origins, r their radii about them and rho about their "
        f"centres (here d <= {lim / rho - ra - rb:.6g} m), got d = {math.sqrt(d2):.6g} m"
    )


def separation(
    cloud_a, pose_a, cloud_b, pose_b, eps, order=0, num_threads=None, *, isa="auto", dense=False
) -> Separation:
    """Separation field of two posed oriented point clouds and its pose derivatives.

    Parameters
    ----------
    cloud_a, cloud_b : PointCloud
        The two bodies' clouds in their body frames (same dimension D).
    pose_a, pose_b : (3,) or (7,) array_like of float, or batches (..., 3) / (..., 7)
        2D ``(x, y, theta)``; 3D ``(px, py, pz, qw, qx, qy, qz)`` with a unit quaternion
        (norm 1 within 1e-6; it is normalized before use, in a copy).  Batches of poses
        whose leading dimensions broadcast give a :class:`Separation` whose arrays have
        those leading dimensions first (the items one after another, each equal to the
        single call bit for bit; ValueError naming the failing item).  Translations
        within 1e12 m, and the two clouds within each other's reach: ``(d + r_a + r_b) rho
        <= 1e14 eps`` for both clouds, with ``d`` the distance of the poses' translations,
        ``r`` each cloud's radius about its origin and ``rho`` about its centre (every
        SSDF query then within the reach of :func:`ssdf`; docs/method.md, "Valid
        ranges").
    eps : float
        SSDF temperature (m^2) in [1e-30, 1e24], shared by both bodies.
    order : int, optional
        0: values (``phi``, ``points``, ``grad``); 1: also ``dphi_dq``; 2: also
        ``d2phi_dq2``.
    num_threads : int, optional
        Threads for the SSDF evaluations (None: all cores); results do not depend on it.
    isa : {"auto", "generic", "avx2", "avx512"}, optional
        SIMD variant of the SSDF kernel (keyword only).
    dense : bool, optional
        Evaluate every sample pair (keyword only; default False).  By default the
        SSDF visits, per query, only the samples its spatial index cannot rule out
        (equal to the dense result to rounding; docs/method.md section 10).

    Returns
    -------
    Separation
        ``(phi, points, grad, dphi_dq, d2phi_dq2)``, see :class:`Separation`.

    Raises
    ------
    TypeError
        If a cloud is not a PointCloud, or an argument has the wrong type.
    ValueError
        If the clouds' dimensions differ, a pose has the wrong shape, is not finite, (3D)
        its quaternion is not unit, or it is outside the valid range, a cloud lies
        farther than 1e12 m from its origin, ``eps`` is outside [1e-30, 1e24], or
        ``order`` is outside 0..2.

    Notes
    -----
    For sample k of the owner O against the other body K, with
    ``y = R_K^T (R_O p_k + t_O - t_K)``: ``Phi_k = phi_K(y)``, ``G_k = R_K grad phi_K(y)``.
    ``dphi_dq[k]`` is the derivative of ``delta -> Phi_k(q (+) delta)`` at 0 and
    ``d2phi_dq2[k]`` its (symmetric) Hessian, where ``(+)`` is :func:`softcontact.retract`
    applied to each pose.  Because rotations do not commute, central differences of
    ``dphi_dq`` taken through ``retract`` equal the symmetric part of ``d2phi_dq2`` plus a
    skew-symmetric bracket term; Taylor expansions along ``q (+) t v`` use ``d2phi_dq2``
    directly.  The derivative with respect to A's translation is ``G_k`` for A's samples
    and ``-G_k`` for B's: the unit force of docs/method.md section 4.  Cost O(I J), memory
    O(I + J).

    Examples
    --------
    >>> import numpy as np, softcontact as sc
    >>> disk = sc.PointCloud.disk(0.02, 0.002)
    >>> r = sc.separation(disk, [0.0, 0.0, 0.0], disk, [0.035, 0.0, 0.0], eps=1e-6, order=1)
    >>> bool(r.phi.min() < 0)   # the disks overlap by 5 mm
    True
    >>> r.dphi_dq.shape
    (126, 6)
    """
    dim = _check_clouds(cloud_a, cloud_b)
    if _batched(pose_a, pose_b):
        nq = 3 if dim == 2 else 7
        lead, (pa, pb) = _broadcast(
            dim, [("pose_a", pose_a, nq, "clouds"), ("pose_b", pose_b, nq, "clouds")]
        )
        order = as_int(order, "order", 0, 2)
        n, n2 = len(cloud_a) + len(cloud_b), 2 * (3 if dim == 2 else 6)
        shapes: list[tuple[int, ...] | None] = [(n,), (n, dim), (n, dim)]
        shapes += [(n, n2) if order >= 1 else None, (n, n2, n2) if order >= 2 else None]
        return Separation(
            *_per_item(
                lead,
                lambda i: separation(
                    cloud_a, pa[i], cloud_b, pb[i], eps, order, num_threads, isa=isa, dense=dense
                ),
                shapes,
            )
        )
    qa = _as_pose(pose_a, "pose_a", dim)
    qb = _as_pose(pose_b, "pose_b", dim)
    eps = as_in_range(eps, "eps", *EPS_RANGE, " m^2")
    order = as_int(order, "order", 0, 2)
    nthreads = as_num_threads(num_threads)
    isa_code, dense_code = _run_options(isa, dense)
    _check_cloud(cloud_a, "cloud_a")
    _check_cloud(cloud_b, "cloud_b")
    _check_pair_reach(cloud_a, qa, cloud_b, qb, eps)
    phi, x, g, d1, d2 = _core.separation(
        _packed(cloud_a),
        len(cloud_a),
        qa,
        _packed(cloud_b),
        len(cloud_b),
        qb,
        eps,
        order,
        nthreads,
        isa_code,
        dense_code,
    )
    return Separation(phi, x, g, d1, d2)


# --------------------------------------------------------------------------------------------
# soft-minimum contact model
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ContactParams:
    """Parameters of the soft-minimum contact model (docs/method.md section 5), SI units.

    :meth:`for_bodies` fits them to two bodies of a scene (what :meth:`Scene.add_contact`
    does when given none).  The fixed defaults here suit objects of about 0.1 m and
    0.1-1 kg sampled every 2-5 mm, stepped with ``dt`` around 1 ms.  The force acts on the
    soft depth ``m``, not on the geometric penetration: a resting object settles where
    ``lambda(m)`` equals its weight, i.e. ``m`` of about ``-weight / stiffness`` (-5 mm
    for 1 kg), while ``min Phi`` is higher by ``eps_c log N`` with N the number of samples
    sharing the deepest level.  So with these defaults a densely sampled flat face rests
    slightly *above* a flat floor (a 1 kg, 10 cm box: 1.3 mm at 5 mm spacing, 3.0 mm at
    2 mm), and contact begins a few millimetres before the surfaces touch; the fitted
    parameters take the offset into account.  The default normal contact is under-damped
    (damping ratio ``c / (2 sqrt(k M))`` of about 0.35 for 0.1 kg, 0.11 for 1 kg); the
    fitted one is critically damped.

    Attributes
    ----------
    eps : float
        SSDF temperature, > 0, in m^2 (default 1e-5: a smoothing length
        ``sqrt(eps)`` of about 3 mm, comparable to the sample spacing, so flat faces
        are smooth but corners stay within a few mm of sharp).
    eps_c : float
        Soft-minimum temperature, > 0, in m (default 1e-3).  The depth ``m`` lies between
        ``min Phi - eps_c log(I + J)`` and ``min Phi``, and the force is spread over the
        samples within a few ``eps_c`` of the deepest.
    stiffness : float
        ``k`` > 0, in N/m (default 2e3): the normal force is about ``k`` x penetration
        once the penetration is large against ``beta``.
    beta : float
        Ramp smoothing ``b`` > 0, in m (default 1e-3): the force law
        ``k sp_b(-m) s_b(-m)`` turns on over a few ``beta`` around ``m = 0``.
    damping : float
        ``c`` >= 0, in N s/m (default 10): each sample's normal velocity damped,
        ``-c s_b(-m) pi_k (nu_k . u_k) nu_k``.  A face bouncing flat has the restitution
        ``exp(-pi zeta / sqrt(1 - zeta^2))`` of the damped oscillator, damping ratio
        ``zeta = c / (2 sqrt(k M))``.
    friction : float
        Coulomb coefficient ``mu`` >= 0 (default 0.5).
    slip_velocity : float
        ``v_s`` > 0, in m/s (default 1e-2): the smooth Coulomb law reaches ~70 % of
        ``mu lambda`` at a sliding speed of ``v_s``.

    Valid ranges (docs/method.md, "Valid ranges"; within them every output of the
    contact model and of a model step is finite): ``eps`` in [1e-30, 1e24] m^2,
    ``eps_c`` and ``beta`` in [1e-15, 1e12] m, ``stiffness`` in [1e-20, 1e20] N/m,
    ``damping`` in [0, 1e20] N s/m, ``friction`` in [0, 1000], ``slip_velocity`` in
    [1e-12, 1e8] m/s.  All fields are validated on construction (``TypeError`` for a
    non-real value, ``ValueError`` naming the field and its range for a non-finite or
    out-of-range one, or one beyond the range of a float such as ``2**2000``), and again
    when unpickled.  Use :func:`dataclasses.replace` to vary one.
    """

    eps: float = 1e-5
    eps_c: float = 1e-3
    stiffness: float = 2e3
    beta: float = 1e-3
    damping: float = 10.0
    friction: float = 0.5
    slip_velocity: float = 1e-2

    def __post_init__(self):
        for name in _PARAM_NAMES:
            lo, hi, unit = _PARAM_RANGES[name]
            object.__setattr__(self, name, as_in_range(getattr(self, name), name, lo, hi, unit))

    @classmethod
    def for_bodies(
        cls, scene, body_a, body_b, dt=None, integrator="euler", *, friction=0.5
    ) -> ContactParams:
        """Parameters fitted to two bodies of a :class:`~softcontact.Scene`, its gravity
        and (optionally) the time step ``dt`` and ``integrator`` of the model; what
        :meth:`Scene.build` uses for a pair added without parameters.

        With ``L`` the size of the smaller body (the diagonal of its samples' bounding box
        over ``sqrt(D)``: the side of a cube; bodies of one sample, such as half-spaces,
        have none), ``g`` the scene's gravity (9.81 m/s^2 when it has none, as in a
        planar scene) and ``M`` the mass of the lighter dynamic body -- with
        ``integrator="implicit"`` the mass the contact carries as the bodies are placed:
        the body resting on it (on a static or kinematic body, or on a dynamic one whose
        centre is lower along gravity) plus every body resting on that one through the
        scene's contact pairs, so that a stack's floor contact sinks ``delta`` under the
        whole stack (the explicit step keeps the lighter body's: its damper bound would
        soften a loaded contact further):

        - the body rests with its lowest sample ``delta = 0.01 L`` inside a plane under
          its weight ``W = M g``: ``beta = delta / 2``, and ``stiffness`` solves
          ``k sp_b(d) s_b(d) = W`` at the soft depth ``d = delta + eps_c log N``, where
          ``eps_c log N`` is the soft minimum's offset for this body's samples resting in
          their current orientation on a plane normal to gravity (``N = sum exp(-(h_k -
          min h) / eps_c)``, ``h_k`` the samples' heights).  So the resting penetration
          does not depend on how densely the body is sampled;
        - ``eps_c = delta / 2``, at least ``g dt^2 / 4``: the soft minimum's rocking
          stiffness gives a box resting on a face the angular frequency ``sqrt(g / (2
          eps_c))``, which the step must resolve;
        - ``damping`` critical for the normal mode, ``2 sqrt(k M)`` (no rebound);
        - ``eps`` the square of the coarser body's sample spacing (a smoothing length of
          one spacing: flat faces stay flat);
        - ``slip_velocity`` 0.5 mm/s (creep of about ``1.06 v_s``, 0.5 mm/s, on a 20
          degree incline with ``friction`` 0.5); with ``integrator="euler"`` and ``dt`` in
          a 3D scene with gravity, raised to 1.25 times the explicit step's friction bound
          (:meth:`Scene.stability_limits`, with the weight the contact carries) when that
          is larger.

        With ``"euler"`` a heavier body resting on the lighter one, or a stack resting on
        it, sinks deeper in proportion to its weight; pass explicit parameters for such
        pairs.  Bodies that come to rest on each other only later (dropped, pushed) are
        not counted in a load.
        :meth:`Scene.build` warns when a fitted contact holds the weight it carries as
        the bodies are placed only deeper than 10 % of the body's size (its stiffness
        softened to be stable at ``dt``, or sized for a lighter body).

        Parameters
        ----------
        scene : Scene
        body_a, body_b : str or int
            The two bodies (names or indices), as for :meth:`Scene.add_contact`.
        dt : float, optional
            Time step (s, in [1e-12, 1e3]) of the model to be built.
        integrator : {"euler", "implicit"}
        friction : float
            The Coulomb coefficient, in [0, 1000].

        Raises
        ------
        ValueError
            For a bad argument, or when a fitted parameter falls outside its valid range
            (bodies or loads far from any physical scale): the message names the pair and
            the parameter; pass explicit parameters then.
        """
        from .scene import Scene, _as_integrator, _fit_params

        if not isinstance(scene, Scene):
            raise TypeError(f"scene must be a Scene, got {type(scene).__name__}")
        ia, ib = scene._index(body_a, "body_a"), scene._index(body_b, "body_b")
        if ia == ib:
            raise ValueError("body_a and body_b must be two different bodies")
        if scene._bodies[ia].kind != "dynamic" and scene._bodies[ib].kind != "dynamic":
            raise ValueError("body_a or body_b must be a dynamic body")
        if dt is not None:
            dt = as_in_range(dt, "dt", *DT_RANGE, " s")
        integrator = _as_integrator(integrator)
        mu = as_in_range(friction, "friction", *FRICTION_RANGE)
        return _fit_params(scene, ia, ib, dt, integrator, mu)

    def __reduce__(self):
        # unpickled through the constructor, so that its checks apply to the data
        return (ContactParams, self._astuple())

    def __setstate__(self, state):
        # pickles made before __reduce__ existed hold the fields' dict: checked the same way
        if not isinstance(state, dict) or set(state) != set(_PARAM_NAMES):
            raise ValueError(f"state must be a dict of the fields {_PARAM_NAMES}")
        for name in _PARAM_NAMES:
            object.__setattr__(self, name, state[name])
        self.__post_init__()

    def _astuple(self):
        return (
            self.eps,
            self.eps_c,
            self.stiffness,
            self.beta,
            self.damping,
            self.friction,
            self.slip_velocity,
        )


# the fields in the order of the C struct sc_contact_params (and of _astuple)
_PARAM_NAMES = ("eps", "eps_c", "stiffness", "beta", "damping", "friction", "slip_velocity")
# each field's valid range and unit (sc_contact.h, docs/method.md "Valid ranges")
_PARAM_RANGES = {
    "eps": (*EPS_RANGE, " m^2"),
    "eps_c": (*CONTACT_LENGTH_RANGE, " m"),
    "stiffness": (*STIFFNESS_RANGE, " N/m"),
    "beta": (*CONTACT_LENGTH_RANGE, " m"),
    "damping": (*DAMPING_RANGE, " N s/m"),
    "friction": (*FRICTION_RANGE, ""),
    "slip_velocity": (*SLIP_RANGE, " m/s"),
}
_DEFAULT_PARAMS = ContactParams()


class Contact(NamedTuple):
    """Result of :func:`contact`; ``jacobian``/``hessian`` are None below order 1/2.

    With nv = 3 (2D) or 6 (3D) and the state derivative coordinates
    ``s = (dq_a, dq_b, v_a, v_b)`` (4 nv; poses in tangent coordinates, velocities as
    given):

    Attributes
    ----------
    wrench_a, wrench_b : (nv,) ndarray
        Generalized contact force on each body in its tangent coordinates: 2D
        ``(fx, fy, tau)``; 3D ``(f (world), tau (body frame))``, torques about the body
        origin (its centre of mass).  ``wrench_a + wrench_b`` has zero force and the
        torques balance about any point.
    energy : float
        Potential ``U = (k/2) sp_b(-m)^2`` of the conservative part (J).
    depth : float
        Soft minimum ``m`` of the separation field (m): negative when penetrating.
    distribution : (I + J,) ndarray
        Separation distribution ``pi = softmax(-Phi / eps_c)``, sums to 1.  A half-space
        (a one-sample cloud) against a cloud of several samples is an exact plane: its own
        sample takes no part (``pi`` 0, no force; its ``phi`` is still reported), so where
        its anchor point lies changes nothing.
    forces : (I + J, D) ndarray
        World force on each sample's owner (the other body gets the opposite, at the
        same point): normal, damping and friction parts together.
    points : (I + J, D) ndarray
        World positions of the samples (the application points).
    phi : (I + J,) ndarray
        The separation field ``Phi`` (as :func:`separation`).
    jacobian : (2 nv, 4 nv) ndarray or None
        ``d (wrench_a, wrench_b) / d s``.
    hessian : (2 nv, 4 nv, 4 nv) ndarray or None
        ``d2 (wrench_a, wrench_b) / d s2``, symmetric in its last two indices.
    """

    wrench_a: np.ndarray
    wrench_b: np.ndarray
    energy: float
    depth: float
    distribution: np.ndarray
    forces: np.ndarray
    points: np.ndarray
    phi: np.ndarray
    jacobian: np.ndarray | None
    hessian: np.ndarray | None


def _as_velocity(v, name, dim):
    a = _as_vector(v, name, 3 if dim == 2 else 6, dim, "clouds")
    check_within(a, name, SPEED_MAX, "components", " (m/s, rad/s)")
    return a


def contact(
    cloud_a,
    pose_a,
    vel_a,
    cloud_b,
    pose_b,
    vel_b,
    params=None,
    order=0,
    num_threads=None,
    *,
    isa="auto",
    dense=False,
) -> Contact:
    """Soft-minimum contact between two posed, moving bodies, with exact derivatives.

    Parameters
    ----------
    cloud_a, cloud_b : PointCloud
        The two bodies' clouds in their body frames (same dimension D); the body frame's
        origin is taken as the centre of mass (torques are about it).
    pose_a, pose_b : (3,) or (7,) array_like of float, or batches (..., 3) / (..., 7)
        2D ``(x, y, theta)``; 3D ``(px, py, pz, qw, qx, qy, qz)``, unit quaternion (within
        1e-6; normalized before use, in a copy).
    vel_a, vel_b : (3,) or (6,) array_like of float, or batches (..., 3) / (..., 6)
        2D ``(vx, vy, omega)``; 3D ``(v (world), omega (body frame))``: MuJoCo's free joint.
        Components within 1e8 (m/s, rad/s).  Poses and velocities with leading dimensions
        that broadcast give a :class:`Contact` whose fields have them first (``energy``
        and ``depth`` arrays of that shape; the items one after another, each equal to the
        single call bit for bit; ValueError naming the failing item).
    params : ContactParams, optional
        Model parameters (default ``ContactParams()``).
    order : int, optional
        0: values; 1: also ``jacobian``; 2: also ``hessian``.
    num_threads : int, optional
        Threads for the SSDF evaluations (None: all cores); results do not depend on it.
    isa : {"auto", "generic", "avx2", "avx512"}, optional
        SIMD variant of the SSDF kernel (keyword only).
    dense : bool, optional
        No pruning (keyword only; default False).  By default the SSDF is pruned
        per query through each cloud's spatial index, samples whose share ``pi_k``
        is negligible at every derivative order skip the derivative passes, and
        a pair whose smooth depth ``m`` is beyond the contact range gets an exactly
        zero wrench; all equal to the dense result to rounding (docs/method.md
        section 10).

    Returns
    -------
    Contact
        See :class:`Contact`.

    Raises
    ------
    TypeError
        If a cloud is not a PointCloud, ``params`` is not a ContactParams, or an argument
        has the wrong type.
    ValueError
        If the clouds' dimensions differ, a pose or velocity has the wrong shape, is not
        finite or is outside the valid range (as for :func:`separation`, with
        ``params.eps``), a quaternion is not unit, or ``order`` is outside 0..2.

    Notes
    -----
    docs/method.md section 5, with ``Phi`` from :func:`separation`: depth
    ``m = -eps_c log sum exp(-Phi_k / eps_c)``, ``pi = softmax(-Phi / eps_c)``, normal
    force ``lambda = k sp_b(-m) s_b(-m)``; sample k's force on its owner is
    ``pi_k [lambda G_k - c s_b(-m) (nu_k . u_k) nu_k - mu lambda t_k / sqrt(|t_k|^2 +
    v_s^2)]`` at its point (``u_k``: velocity of the point on its owner minus on the other
    body, ``nu_k`` the unit normal ``G_k / |G_k|``, ``t_k`` the part of ``u_k`` tangent to
    it): every sample's normal velocity is damped, so rocking and rolling are damped like
    bouncing.  A half-space (one sample) against a cloud takes no part with its own
    sample: an exact plane wherever its anchor point.  The normal part is ``-dU/dq``;
    damping and friction never produce positive power.  The derivatives are those of
    ``s -> wrench(q (+) dq, v + dv)`` at 0 (see
    :func:`softcontact.retract`), closed-form (second-order forward-mode jets through the
    formulas, no finite differences); central differences of ``jacobian`` taken through
    ``retract`` equal the symmetric part of ``hessian``.  Cost: the SSDF at every sample
    (O(I J), to order ``order + 1``) plus O(I + J); memory O(I + J).

    Examples
    --------
    >>> import softcontact as sc
    >>> ball = sc.PointCloud.disk(0.02, 0.002)
    >>> r = sc.contact(ball, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0],
    ...                ball, [0.036, 0.0, 0.0], [0.0, 0.0, 0.0], order=1)
    >>> bool(r.wrench_a[0] < 0 < r.wrench_b[0])   # 4 mm overlap pushes them apart
    True
    >>> r.jacobian.shape
    (6, 12)
    """
    dim = _check_clouds(cloud_a, cloud_b)
    if _batched(pose_a, vel_a, pose_b, vel_b):
        nq, nv = (3, 3) if dim == 2 else (7, 6)
        lead, (pa, va_, pb, vb_) = _broadcast(
            dim,
            [
                ("pose_a", pose_a, nq, "clouds"),
                ("vel_a", vel_a, nv, "clouds"),
                ("pose_b", pose_b, nq, "clouds"),
                ("vel_b", vel_b, nv, "clouds"),
            ],
        )
        order = as_int(order, "order", 0, 2)
        n = len(cloud_a) + len(cloud_b)
        shapes: list[tuple[int, ...] | None] = [(nv,), (nv,), (), (), (n,), (n, dim), (n, dim)]
        shapes += [(n,), (2 * nv, 4 * nv) if order >= 1 else None]
        shapes.append((2 * nv, 4 * nv, 4 * nv) if order >= 2 else None)
        return Contact(
            *_per_item(
                lead,
                lambda i: contact(
                    cloud_a,
                    pa[i],
                    va_[i],
                    cloud_b,
                    pb[i],
                    vb_[i],
                    params,
                    order,
                    num_threads,
                    isa=isa,
                    dense=dense,
                ),
                shapes,
            )
        )
    qa = _as_pose(pose_a, "pose_a", dim)
    va = _as_velocity(vel_a, "vel_a", dim)
    qb = _as_pose(pose_b, "pose_b", dim)
    vb = _as_velocity(vel_b, "vel_b", dim)
    if params is None:
        params = _DEFAULT_PARAMS
    elif not isinstance(params, ContactParams):
        raise TypeError(f"params must be a ContactParams, got {type(params).__name__}")
    order = as_int(order, "order", 0, 2)
    nthreads = as_num_threads(num_threads)
    _check_cloud(cloud_a, "cloud_a")
    _check_cloud(cloud_b, "cloud_b")
    _check_pair_reach(cloud_a, qa, cloud_b, qb, params.eps, eps_name="params.eps")
    w, energy, depth, _, phi, pi, f, x, jac, hess = _core.contact(
        _packed(cloud_a),
        len(cloud_a),
        qa,
        va,
        _packed(cloud_b),
        len(cloud_b),
        qb,
        vb,
        params._astuple(),
        order,
        nthreads,
        *_run_options(isa, dense),
    )
    nv = 3 if dim == 2 else 6
    return Contact(w[:nv], w[nv:], energy, depth, pi, f, x, phi, jac, hess)
