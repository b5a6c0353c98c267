r"""Which classes a classifier takes for which: confusion matrices of the test clouds.

Entry :math:`C_{kl}` counts the test clouds of true class :math:`k` predicted as class :math:`l`;
divided by its row sum it is the fraction of class :math:`k` taken for :math:`l`, so the diagonal
holds each class's accuracy and, with equally many clouds per class, its mean is the accuracy.
"""

from __future__ import annotations

import numpy as np
from torch import nn

from ..sweeps import TEST_SEED
from .evaluate import probabilities

__all__ = ["confusion_matrix", "confusion_at_size", "top_confusions"]


def confusion_matrix(true: np.ndarray, predicted: np.ndarray, classes: int) -> np.ndarray:
    """The counts ``[classes, classes]`` (rows: true class, columns: predicted) of the label pairs."""
    true, predicted = np.asarray(true), np.asarray(predicted)
    if true.shape != predicted.shape or true.ndim != 1:
        raise ValueError(f"true and predicted must be label vectors of one length, got {true.shape}, {predicted.shape}")
    matrix = np.zeros((classes, classes))
    np.add.at(matrix, (true, predicted), 1)
    return matrix


def confusion_at_size(model: nn.Module, clouds: np.ndarray, labels: np.ndarray, n: int, classes: int,
                      seed: int = TEST_SEED) -> np.ndarray:
    """The confusion matrix of ``model`` on ``clouds`` at ``n`` particles, the test subsets of
    :func:`~setfuncs.experiments.pointcloud.accuracy` (the same for every model), as fractions of
    each true class (each row sums to 1)."""
    predicted = probabilities(model, clouds, n, seed).argmax(axis=1)
    matrix = confusion_matrix(labels, predicted, classes)
    return matrix / matrix.sum(1, keepdims=True)


def top_confusions(fractions: np.ndarray, names: list[str], count: int = 4) -> list[tuple[float, str, str]]:
    """The ``count`` largest off-diagonal entries of a confusion matrix as ``(fraction, true class,
    predicted class)``, largest first (ties: by the class names, descending)."""
    off = fractions.copy()
    np.fill_diagonal(off, 0)
    pairs = [(off[i, j], names[i], names[j]) for i in range(len(off)) for j in range(len(off))]
    return sorted(pairs, reverse=True)[:count]
