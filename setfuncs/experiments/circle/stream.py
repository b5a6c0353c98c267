"""A seed's training stream made once, for every configuration that trains on it.

Run ``seed`` of every circle configuration draws its training batches from the same generator,
``torch.Generator().manual_seed(TRAIN_SEED + seed)`` (:func:`~setfuncs.experiments.circle.sweep.train_model`),
so all 56 configurations of a seed see one data stream. On a GPU a graphed step of a whole
ensemble takes a fraction of a millisecond, while the minimal-enclosing-circle labels of one batch
take over a millisecond on a CPU core: made step by step, the labels would set the pace. Here the
stream of a seed (``steps`` batches) is made once per worker process, the populations in the order
the generator gives them and the labels of all of them in large chunks on every core, and cached;
the ensemble's training then reads batch ``t`` of every seed from one tensor on the device. The
batches are exactly those of :func:`~setfuncs.experiments.circle.data.circle_batch` called ``steps``
times (``tests/test_ensemble.py`` checks it).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Callable

import torch
from torch import Tensor

from ..sweeps import TRAIN_SEED
from .batched import min_enclosing_circles
from .data import POPULATION_SIZE, sample_populations

__all__ = ["training_stream", "ensemble_stream", "stacked_sampler", "LABEL_CHUNK"]

#: Populations per call of the vectorised solver when a whole stream is labelled (large numpy
#: operations release the GIL, so the seeds' streams are labelled in parallel threads).
LABEL_CHUNK = 4096


@lru_cache(maxsize=32)
def training_stream(seed: int, steps: int, batch: int) -> tuple[Tensor, Tensor]:
    """The first ``steps`` training batches of run ``seed``: ``x [steps, batch, 20, 2]``, ``y [steps, batch, 3]``.

    Cached per process (shared: do not modify).
    """
    generator = torch.Generator().manual_seed(TRAIN_SEED + seed)
    x = torch.stack([sample_populations(batch, POPULATION_SIZE, generator) for _ in range(steps)])
    centers, radii = min_enclosing_circles(x.flatten(0, 1), chunk=LABEL_CHUNK)
    y = torch.cat([centers, radii[:, None]], dim=1).to(x.dtype)
    return x, y.view(steps, batch, 3)


@lru_cache(maxsize=1)
def ensemble_stream(seeds: tuple[int, ...], steps: int, batch: int, device: str) -> tuple[Tensor, Tensor]:
    """The streams of ``seeds`` stacked as the ensemble reads them, ``x [steps, S, batch, 20, 2]`` and
    ``y [steps, S, batch, 3]``, on ``device`` (the last one cached: the next configuration reuses it)."""
    with ThreadPoolExecutor(max_workers=min(len(seeds), os.cpu_count() or 1)) as pool:
        streams = list(pool.map(lambda seed: training_stream(seed, steps, batch), seeds))
    return (torch.stack([x for x, _ in streams], dim=1).to(device),
            torch.stack([y for _, y in streams], dim=1).to(device))


def stacked_sampler(x: Tensor, y: Tensor) -> Callable[[], tuple[Tensor, Tensor, None]]:
    """A sampler for :func:`~setfuncs.ensemble.fit_ensemble` that returns ``(x[t], y[t], None)`` at its ``t``-th call."""
    position = iter(range(len(x)))

    def sample() -> tuple[Tensor, Tensor, None]:
        t = next(position)
        return x[t], y[t], None

    return sample

