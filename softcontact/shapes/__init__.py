"""The shapes a :class:`~softcontact.PointCloud` constructor samples, one module per family.

Each solid is a :class:`Shape` subclass registered by name in :data:`SHAPES`, holding its
sampler and its exact mass properties (see :mod:`softcontact.shapes.base`):

- :mod:`~softcontact.shapes.box`: :class:`Box` (rectangle or box);
- :mod:`~softcontact.shapes.ball`: :class:`Disk` (2D) and :class:`Sphere` (3D);
- :mod:`~softcontact.shapes.capsule`: :class:`Capsule` (stadium or capsule);
- :mod:`~softcontact.shapes.polygon`: :class:`Polygon` (2D) and :class:`Prism` (3D);
- :mod:`~softcontact.shapes.t_shape`: the pushing T, a polygon or its prism;
- :mod:`~softcontact.shapes.mesh`: :class:`Mesh`, a closed triangle mesh (3D);
- :mod:`~softcontact.shapes.halfspace`: :class:`HalfSpace`, unbounded.
"""

from .ball import Disk, Sphere
from .base import SHAPES, Sample, Shape, register
from .box import Box
from .capsule import Capsule
from .halfspace import HalfSpace
from .mesh import Mesh
from .polygon import Polygon, Prism
from .t_shape import sample_t_shape, t_shape_vertices

__all__ = [
    "SHAPES",
    "Sample",
    "Shape",
    "register",
    "Box",
    "Disk",
    "Sphere",
    "Capsule",
    "Polygon",
    "Prism",
    "Mesh",
    "HalfSpace",
    "sample_t_shape",
    "t_shape_vertices",
]
