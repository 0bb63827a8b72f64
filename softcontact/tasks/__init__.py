"""Benchmark tasks built on :class:`softcontact.Scene`.

- :mod:`softcontact.tasks.push_t`: the planar push-T benchmark (push a T-shaped block
  with a kinematic disk until it covers a goal pose), ``push_t.make(seed)``, with

  - :mod:`~softcontact.tasks.push_t.mpc`: the receding-horizon controller that solves it
    (push selection by batched rollouts, L-BFGS-B refinement with exact gradients),
    ``run_episode`` and the 50-seed ``evaluate``; the CEM baseline lives in
    :func:`softcontact.optimize.cross_entropy`;
  - :mod:`~softcontact.tasks.push_t.compare`: CEM, L-BFGS and trust-region Newton on
    fixed push-T problems, cost against wall time and dynamics evaluations;
  - :mod:`~softcontact.tasks.push_t.sysid`: recovering the T's mass, support friction and
    the pusher friction from a noisy observed push with ``scipy.optimize.least_squares``;
  - :mod:`~softcontact.tasks.push_t.viz`: trajectory figures and GIF animations.

The task modules are not imported by ``import softcontact``; import them explicitly
(``from softcontact.tasks import push_t``, ``from softcontact.tasks.push_t import mpc``).
:mod:`~softcontact.tasks.push_t` uses shapely for its exact coverage measure; the figures
use matplotlib.
"""

__all__ = ["push_t"]
