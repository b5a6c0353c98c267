r"""An offline stand-in for ModelNet40: twelve classes of procedurally deformed 3-D shapes.

ModelNet40 cannot be downloaded where the book is built, so the package makes its own data set of
the same form: meshes of a few solid classes, each drawn with random proportions, size and
heading, sampled uniformly from the surface the same area-weighted way
(:func:`~setfuncs.experiments.pointcloud.surface.sample_surface`).

**Classes** (:data:`SHAPE_NAMES`; trimesh primitives, and prisms of star-shaped polygons):
``box``, ``sphere`` (an icosphere), ``cylinder``, ``cone`` (32 sides), ``pyramid`` (a cone with 4
sides), ``capsule``, ``torus``, ``tube`` (a thick-walled annulus), and the prisms ``L``, ``T``,
``cross`` and ``star`` (a five-pointed star). Every base mesh is watertight and centred on the
middle of its bounding box.

**Deformations.** Each mesh's vertices :math:`v` become

.. math:: v' = c\, R_z(\theta)\, \operatorname{diag}(s_x, s_y, s_z)\, v, \qquad
          s_k \sim \mathcal U[\tfrac34, \tfrac43],\quad c \sim \mathcal U[\tfrac12, 2],\quad
          \theta \sim \mathcal U[0, 2\pi),

anisotropic proportions, then a heading about the up axis :math:`z` (ModelNet40's models are
upright, and Deep Sets' augmentation rotates about :math:`z` as well), then an overall size. The
particles are drawn from the deformed mesh, so they stay uniform on its surface.

**Seeds.** The meshes of a split come from ``numpy.random.default_rng([seed, split, 0])`` and
their particles from ``default_rng([seed, split, 1])`` (``split`` 0 for train, 1 for test): the
two splits are disjoint draws, and :func:`shape_meshes` gives back exactly the meshes that
:func:`synthetic_shapes` sampled. Generating 12 x 100 clouds of 1,000 particles takes about 0.6 s
on one core (12 x 50 test clouds of 2,000 particles about 0.4 s), so the data are made anew in
every process rather than cached.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import trimesh
from trimesh import creation

from ..tasks import positive_int
from .modelnet import SPLITS
from .surface import sample_surface

__all__ = ["SHAPE_NAMES", "PROPORTION_RANGE", "SIZE_RANGE", "base_mesh", "random_shape",
           "shape_meshes", "synthetic_shapes", "shapes_description"]

#: The classes, in label order.
SHAPE_NAMES = ("box", "sphere", "cylinder", "cone", "pyramid", "capsule", "torus", "tube",
               "L", "T", "cross", "star")
#: Range of the per-axis scales :math:`s_x, s_y, s_z`.
PROPORTION_RANGE = (0.75, 4 / 3)
#: Range of the overall size :math:`c`.
SIZE_RANGE = (0.5, 2.0)


def _star_polygon() -> np.ndarray:
    """The ten corners of a five-pointed star (outer radius 1, inner 0.45), counter-clockwise."""
    angles = np.pi / 2 + np.arange(10) * np.pi / 5
    radii = np.where(np.arange(10) % 2 == 0, 1.0, 0.45)
    return np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1)


#: Counter-clockwise polygons of the prism classes, a point from which all of the polygon is
#: visible (so a fan of triangles from it covers the polygon exactly) and the prism's height.
_PRISMS = {
    "L": ([(0, 0), (2, 0), (2, 0.7), (0.7, 0.7), (0.7, 2), (0, 2)], (0.35, 0.35), 0.7),
    "T": ([(-0.35, -1.2), (0.35, -1.2), (0.35, 0.7), (1.2, 0.7), (1.2, 1.4), (-1.2, 1.4),
           (-1.2, 0.7), (-0.35, 0.7)], (0.0, 1.0), 0.7),
    "cross": ([(-0.35, -1.2), (0.35, -1.2), (0.35, -0.35), (1.2, -0.35), (1.2, 0.35), (0.35, 0.35),
               (0.35, 1.2), (-0.35, 1.2), (-0.35, 0.35), (-1.2, 0.35), (-1.2, -0.35),
               (-0.35, -0.35)], (0.0, 0.0), 0.6),
    "star": (_star_polygon(), (0.0, 0.0), 0.5),
}


def _prism(polygon, centre, height: float) -> trimesh.Trimesh:
    """A watertight prism over a polygon that is star-shaped around ``centre`` (fan triangulation)."""
    corners = np.asarray(polygon, dtype=float)
    n = len(corners)
    fan = np.array([(n, i, (i + 1) % n) for i in range(n)])
    return creation.extrude_triangulation(np.vstack([corners, centre]), fan, height)


@lru_cache(maxsize=None)
def base_mesh(name: str) -> trimesh.Trimesh:
    """The undeformed mesh of class ``name``, centred on the middle of its bounding box (cached)."""
    primitives = {
        "box": lambda: creation.box(extents=(1.2, 1.2, 1.2)),
        "sphere": lambda: creation.icosphere(subdivisions=2, radius=0.8),
        "cylinder": lambda: creation.cylinder(radius=0.7, height=1.6, sections=32),
        "cone": lambda: creation.cone(radius=0.9, height=1.6, sections=32),
        "pyramid": lambda: creation.cone(radius=1.0, height=1.4, sections=4),
        "capsule": lambda: creation.capsule(height=1.5, radius=0.5, count=(16, 16)),
        "torus": lambda: creation.torus(major_radius=1.0, minor_radius=0.35, major_sections=24,
                                        minor_sections=12),
        "tube": lambda: creation.annulus(r_min=0.6, r_max=1.0, height=1.0, sections=32),
    }
    if name in primitives:
        mesh = primitives[name]()
    elif name in _PRISMS:
        mesh = _prism(*_PRISMS[name])
    else:
        raise ValueError(f"unknown shape {name!r}; choose one of {SHAPE_NAMES}")
    return trimesh.Trimesh(mesh.vertices - mesh.bounds.mean(axis=0), mesh.faces, process=False)


def random_shape(name: str, rng: np.random.Generator) -> trimesh.Trimesh:
    r"""A random deformation :math:`v' = c\,R_z(\theta)\operatorname{diag}(s)\,v` of :func:`base_mesh`."""
    proportions = rng.uniform(*PROPORTION_RANGE, size=3)
    size = rng.uniform(*SIZE_RANGE)
    theta = rng.uniform(0.0, 2 * np.pi)
    cos, sin = np.cos(theta), np.sin(theta)
    rotation = np.array([[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]])
    mesh = base_mesh(name)
    return trimesh.Trimesh(mesh.vertices @ (size * rotation * proportions).T, mesh.faces, process=False)


def _split_index(split: str) -> int:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    return SPLITS.index(split)


def shape_meshes(count_per_class: int, split: str = "train", seed: int = 0
                 ) -> tuple[list[trimesh.Trimesh], np.ndarray]:
    """The deformed meshes of one split, class by class, and their labels ``[M]`` int64."""
    positive_int("count_per_class", count_per_class)
    rng = np.random.default_rng([seed, _split_index(split), 0])
    meshes = [random_shape(name, rng) for name in SHAPE_NAMES for _ in range(count_per_class)]
    labels = np.repeat(np.arange(len(SHAPE_NAMES), dtype=np.int64), count_per_class)
    return meshes, labels


def synthetic_shapes(count_per_class: int, split: str = "train", points: int = 1000, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Point clouds of the offline shapes: ``(clouds [M, points, 3] float32, labels [M] int64, class_names)``.

    ``M = 12 * count_per_class``, ordered class by class (as :func:`load_modelnet40
    <setfuncs.experiments.pointcloud.modelnet.load_modelnet40>` returns ModelNet40).
    """
    positive_int("points", points)
    meshes, labels = shape_meshes(count_per_class, split, seed)
    rng = np.random.default_rng([seed, _split_index(split), 1])
    clouds = np.stack([sample_surface(mesh, points, rng) for mesh in meshes])
    return clouds, labels, list(SHAPE_NAMES)


def shapes_description() -> dict:
    """The data set's parameters, for a results file's provenance."""
    return {"classes": list(SHAPE_NAMES), "proportion_range": list(PROPORTION_RANGE),
            "size_range": list(SIZE_RANGE), "rotation": "uniform heading about z in [0, 2 pi)",
            "meshes": "trimesh.creation primitives and prisms of star-shaped polygons, watertight",
            "sampling": "uniform on the surface, area-weighted (trimesh.sample.sample_surface)",
            "seeds": "meshes numpy default_rng([seed, split, 0]), particles default_rng([seed, split, 1]); "
                     "split 0 train, 1 test"}
