"""Benchmark tasks built on :class:`softcontact.Scene`.

- :mod:`softcontact.tasks.push_t`: the planar push-T benchmark (push a T-shaped block
  with a kinematic disk until it covers a goal pose), ``push_t.make(seed)``.

The task modules are not imported by ``import softcontact``; import them explicitly
(``from softcontact.tasks import push_t``).  :mod:`~softcontact.tasks.push_t` uses
shapely for its exact coverage measure.
"""

__all__ = ["push_t"]
