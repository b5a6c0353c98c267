r"""Point clouds from meshes: particles drawn uniformly from a triangle mesh's surface.

A face :math:`f` with area :math:`A_f` is picked with probability :math:`A_f / \sum_g A_g`, then a
point uniformly inside it,

.. math:: p = v_0 + u\,(v_1 - v_0) + w\,(v_2 - v_0), \qquad (u, w) \sim \mathcal U[0, 1]^2,

reflected as :math:`(u, w) \mapsto (1 - u, 1 - w)` when :math:`u + w > 1`. Every surface patch
then receives particles in proportion to its area, whatever the triangulation, which is how the
paper samples ModelNet40 ("uniformly from the surface"). The sampler is trimesh's
``trimesh.sample.sample_surface``, driven by a numpy ``Generator`` so that every cloud is seeded.
"""

from __future__ import annotations

import numpy as np
import trimesh

from ..sweeps import positive_int

__all__ = ["sample_surface"]


def sample_surface(mesh: trimesh.Trimesh, count: int, rng: np.random.Generator,
                   name: str = "the mesh") -> np.ndarray:
    """``count`` particles uniformly (area-weighted) from the surface of ``mesh``: float32 ``[count, 3]``.

    ``name`` (e.g. the file it came from) goes into the ValueError raised for a mesh with zero
    surface area (no faces, or only degenerate ones), from which no point can be drawn.
    """
    positive_int("count", count)
    area = float(mesh.area) if len(mesh.faces) else 0.0
    if not area > 0:
        raise ValueError(f"{name} has zero surface area ({len(mesh.faces)} faces, {len(mesh.vertices)} "
                         f"vertices), so no point can be sampled from it; fix the mesh or remove it "
                         f"from the data set (e.g. delete the file)")
    points, _ = trimesh.sample.sample_surface(mesh, count, seed=rng)
    return points.astype(np.float32)
