r"""Test accuracy at population sizes other than the training size (Table 2's rows).

At size :math:`n` every test cloud is replaced by a uniform random subset of :math:`n` of its
particles (without replacement, the same subsets for every model:
``numpy.random.default_rng([TEST_SEED, n])``), standardised, and classified by the arg-max of the
logits, with dropout off:

.. math:: \operatorname{acc}(n) = \frac{1}{M} \sum_{j=1}^{M}
          \big[\arg\max_k f(\operatorname{standardize}(X_j^{(n)}))_k = y_j\big].

The test clouds are sampled from the meshes with as many particles as the largest size, so a
subset is again a uniform sample of the surface at every size.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import nn

from ..sweeps import TEST_SEED
from .preprocess import standardize, subsample

__all__ = ["PARTICLES_PER_CHUNK", "probabilities", "accuracy", "accuracy_by_population_size"]

#: Particles per forward pass at evaluation (bounds the memory of a pass at large sizes).
PARTICLES_PER_CHUNK = 1 << 17


@torch.no_grad()
def probabilities(model: nn.Module, clouds: np.ndarray, n: int, seed: int = TEST_SEED) -> np.ndarray:
    """The class probabilities ``[M, classes]`` (softmax of the logits, dropout off) of ``clouds``
    (``[M, N, 3]``, ``N >= n``) at ``n`` particles, computed on the model's device."""
    x = standardize(subsample(clouds, n, np.random.default_rng([seed, n])))
    model.eval()
    device = next(model.parameters()).device
    chunk = max(1, PARTICLES_PER_CHUNK // n)
    return np.concatenate([model(torch.from_numpy(x[start:start + chunk]).to(device)).softmax(dim=1).cpu().numpy()
                           for start in range(0, len(x), chunk)])


def accuracy(model: nn.Module, clouds: np.ndarray, labels: np.ndarray, n: int, seed: int = TEST_SEED) -> float:
    """The fraction of ``clouds`` (``[M, N, 3]``, ``N >= n``) that ``model`` classifies correctly at ``n`` particles."""
    return float(np.mean(probabilities(model, clouds, n, seed).argmax(axis=1) == labels))


def accuracy_by_population_size(model: nn.Module, clouds: np.ndarray, labels: np.ndarray,
                                sizes: Sequence[int], seed: int = TEST_SEED) -> dict[str, float]:
    """``{"10": accuracy at 10 particles, ...}`` for every size (JSON keys are strings)."""
    return {str(n): accuracy(model, clouds, labels, n, seed) for n in sizes}
