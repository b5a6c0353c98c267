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

from ..tasks import positive_int

__all__ = ["FLOAT32_OVERFLOW", "sample_surface"]

#: The smallest magnitude that float32, the type of the clouds, rounds to ``inf``: halfway between its
#: largest number, :math:`2^{128} - 2^{104} \approx 3.4 \cdot 10^{38}`, and :math:`2^{128}`.
FLOAT32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103


def sample_surface(mesh: trimesh.Trimesh, count: int, rng: np.random.Generator,
                   name: str = "the mesh") -> np.ndarray:
    """``count`` particles uniformly (area-weighted) from the surface of ``mesh``: float32 ``[count, 3]``.

    ``name`` (e.g. the file it came from) goes into the ValueError raised for a mesh with zero
    surface area (no faces, or only degenerate ones), from which no point can be drawn, and for a
    face with a coordinate that is not finite or that float32 cannot hold (``|x| >= 3.4e38``,
    :data:`FLOAT32_OVERFLOW`): its particles would be ``inf`` or NaN.
    """
    positive_int("count", count)
    largest = float(np.abs(mesh.vertices[mesh.faces]).max(initial=0.0))
    if not largest < FLOAT32_OVERFLOW:                                      # NaN too
        raise ValueError(f"{name} has a face with the vertex coordinate {largest:g}; the point clouds are "
                         f"float32, which holds finite numbers up to {float(np.finfo(np.float32).max):.4g} "
                         f"only: fix the mesh or remove it from the data set (e.g. delete the file)")
    area = float(mesh.area) if len(mesh.faces) else 0.0
    if not area > 0:
        raise ValueError(f"{name} has zero surface area ({len(mesh.faces)} faces, {len(mesh.vertices)} "
                         f"vertices), so no point can be sampled from it; fix the mesh or remove it "
                         f"from the data set (e.g. delete the file)")
    points, _ = trimesh.sample.sample_surface(mesh, count, seed=rng)
    return points.astype(np.float32)
