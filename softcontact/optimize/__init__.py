"""Trajectory optimization with exact first and second derivatives through contact.

:class:`TrajectoryProblem` turns a :class:`~softcontact.Model`, an initial state and a
horizon into the objective ``J(U) = sum_t l_t(x_t, u_t) + l_T(x_T)`` of the controls
``U`` (T, nu), with

* ``fun(U)`` and ``jac(U)``: the value and the exact gradient (the adjoint of the step's
  Jacobians, docs/method.md section 7);
* ``hessp(U, p)`` and ``hess(U)``: exact Hessian-vector products and the full Hessian (the
  second-order adjoint, using the step's second derivatives);
* ``residuals(U)`` and ``residual_jac(U)``: every cost here is a sum of squares
  ``l = |r|^2 / 2``, so Gauss-Newton / ``scipy.optimize.least_squares`` can be used too.

All derivatives are with respect to the flattened ``U`` (T * nu), so
``scipy.optimize.minimize(problem.fun, U0, jac=problem.jac, hessp=problem.hessp,
method="trust-ncg")`` and ``method="L-BFGS-B"`` with ``bounds`` work directly.

States live on a manifold (3D rotations); every derivative is taken in the tangent charts of
:meth:`Model.retract`.  The composition is exact: ``x_{t+1}(U + e V) (-) x_{t+1}(U)`` is the
step's chart map applied to ``x_t(U + e V) (-) x_t(U)``, so the chain rule to second order
holds with the step's tensors and each cost's Hessian in its own chart.

The package, by stage:

- :mod:`~softcontact.optimize.residuals`: the stage costs, each a residual ``r(x, u)``
  with its exact first and second derivatives (:class:`PoseResidual`,
  :class:`ControlResidual`, :class:`ApproachResidual`);
- :mod:`~softcontact.optimize.trajectory`: :class:`TrajectoryProblem`, the objective over a
  control sequence and its adjoints;
- :mod:`~softcontact.optimize.sysid`: system identification, the residuals of an observed
  trajectory with their parameter Jacobians (:func:`trajectory_residuals`,
  :func:`fit_parameters`);
- :mod:`~softcontact.optimize.ddp`: iLQR and DDP with box-constrained controls, warm
  starts and a wall-clock deadline (:func:`ilqr`);
- :mod:`~softcontact.optimize.baselines`: the zeroth-order sampling baseline
  (:func:`cross_entropy`).
"""

from .baselines import CrossEntropyResult, cross_entropy
from .ddp import TrajectoryResult, ilqr
from .residuals import ApproachResidual, ControlResidual, PoseResidual
from .sysid import fit_parameters, trajectory_residuals
from .trajectory import TrajectoryProblem

__all__ = [
    "TrajectoryProblem",
    "PoseResidual",
    "ControlResidual",
    "ApproachResidual",
    "trajectory_residuals",
    "fit_parameters",
    "cross_entropy",
    "CrossEntropyResult",
    "ilqr",
    "TrajectoryResult",
]
