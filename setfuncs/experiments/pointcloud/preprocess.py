r"""What Deep Sets' point-cloud code does to a cloud before the model sees it.

Following the reference implementation (Zaheer et al. 2017, ``PointClouds/modelnet.py``):

* **Standardisation** of every cloud :math:`X \in \mathbb R^{N \times 3}` over all its
  :math:`3N` coordinates, after clipping them to :math:`\pm 100` times their mean absolute value
  (a guard against stray vertices that never binds on surface samples):

  .. math:: Z = \operatorname{clip}(X, \pm 100\,\overline{|X|}), \qquad
            \operatorname{standardize}(X) = \frac{Z - \bar Z}{\operatorname{std}(Z)},

  with :math:`\bar Z` and :math:`\operatorname{std}(Z)` the mean and standard deviation of all
  coordinates of the cloud (one number each, not one per axis).
* **Augmentation** of every training cloud after standardisation: a rotation about the up axis
  :math:`z` by :math:`\theta \sim \mathcal U[-0.1\pi, 0.1\pi]`, then a scale per axis
  :math:`s_k \sim \mathcal U[0.8, 1.25)`,

  .. math:: x' = \operatorname{diag}(s_x, s_y, s_z)\, R_z(\theta)\, x.

* **Subsampling** a cloud to ``n`` particles, a uniform random subset without replacement: how we
  evaluate a model trained on 1,000 particles at other population sizes. (The reference keeps a
  fixed tenth of 10,000 samples; a random subset of uniform surface samples is again uniform.)

All functions take and return float32 arrays ``[B, N, 3]``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ROTATION_RANGE", "SCALE_RANGE", "CLIP", "standardize", "rotate_z",
           "augmentation_parameters", "augment", "subsample"]

#: Largest rotation about z of the augmentation, in radians.
ROTATION_RANGE = 0.1 * np.pi
#: Range ``[low, high)`` of the augmentation's per-axis scales.
SCALE_RANGE = (0.8, 1.25)
#: Coordinates are clipped to ``CLIP`` times the cloud's mean absolute coordinate.
CLIP = 100.0


def _clouds(clouds: np.ndarray) -> np.ndarray:
    clouds = np.asarray(clouds, dtype=np.float32)
    if clouds.ndim != 3 or clouds.shape[2] != 3 or clouds.shape[1] < 1:
        raise ValueError(f"expected point clouds of shape [B, N, 3] with N >= 1, got {clouds.shape}")
    return clouds


def standardize(clouds: np.ndarray) -> np.ndarray:
    r"""Every cloud clipped and standardised over all its coordinates: :math:`(Z - \bar Z) / \operatorname{std}(Z)`.

    Raises ValueError for a cloud whose particles all coincide (its standard deviation is 0).
    """
    x = _clouds(clouds)
    clipper = CLIP * np.mean(np.abs(x), axis=(1, 2), keepdims=True)
    z = np.clip(x, -clipper, clipper)
    std = z.std(axis=(1, 2), keepdims=True)
    if np.any(std == 0):
        raise ValueError(f"clouds {np.flatnonzero(std.ravel() == 0).tolist()} have all particles at one "
                         f"point, so they cannot be standardised; remove them from the data")
    return (z - z.mean(axis=(1, 2), keepdims=True)) / std


def rotate_z(clouds: np.ndarray, angles: np.ndarray) -> np.ndarray:
    r"""Cloud ``b`` rotated about the z axis by ``angles[b]`` radians: :math:`(x, y, z) \mapsto
    (x\cos\theta - y\sin\theta,\ x\sin\theta + y\cos\theta,\ z)`."""
    x = _clouds(clouds)
    cos, sin = np.cos(angles)[:, None], np.sin(angles)[:, None]
    return np.stack([cos * x[..., 0] - sin * x[..., 1], sin * x[..., 0] + cos * x[..., 1], x[..., 2]],
                    axis=-1).astype(np.float32)


def augmentation_parameters(count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Angles ``[count]`` in ``[-0.1 pi, 0.1 pi]`` and per-axis scales ``[count, 3]`` in ``[0.8, 1.25)``."""
    angles = rng.uniform(-ROTATION_RANGE, ROTATION_RANGE, size=count)
    scales = rng.uniform(*SCALE_RANGE, size=(count, 3))
    return angles, scales


def augment(clouds: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""Training augmentation: :math:`\operatorname{diag}(s) R_z(\theta) x` with
    :func:`augmentation_parameters` drawn from ``rng`` (angles first, then scales)."""
    x = _clouds(clouds)
    angles, scales = augmentation_parameters(len(x), rng)
    return rotate_z(x, angles) * scales[:, None, :].astype(np.float32)


def subsample(clouds: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniform random subset of ``n`` particles of every cloud, without replacement: ``[B, n, 3]``."""
    x = _clouds(clouds)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= x.shape[1]:
        raise ValueError(f"n must be an int in 1..{x.shape[1]} (the particles of each cloud), got {n!r}; "
                         f"sample the clouds with more particles to evaluate at larger sizes")
    keep = np.argsort(rng.random(x.shape[:2]), axis=1)[:, :n]
    return np.take_along_axis(x, keep[..., None], axis=1)
