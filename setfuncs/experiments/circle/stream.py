"""A seed's training stream made once, for every configuration that trains on it.

Run ``seed`` of every circle configuration draws its training batches from the same generator,
``torch.Generator().manual_seed(TRAIN_SEED + seed)`` (:func:`~setfuncs.experiments.circle.sweep.train_model`),
so all 56 configurations of a seed see one data stream. On a GPU a graphed step of a whole
ensemble takes a fraction of a millisecond, while the minimal-enclosing-circle labels of one batch
take over a millisecond on a CPU core: made step by step, the labels would set the pace, and the
20 seeds of a FULL sweep need 25.6 million of them. Here the populations of a seed's stream
(``steps`` batches) are drawn once per worker process, in the order the generator gives them, and
cached; the labels of the whole stacked stream are computed on the device by the torch port of the
solver; the ensemble's training then reads batch ``t`` of every seed from one tensor there. The
batches are exactly those of :func:`~setfuncs.experiments.circle.data.circle_batch` called ``steps``
times (``tests/test_ensemble.py`` checks it).
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor

from ..caching import shared_cache
from ..sweeps import TRAIN_SEED
from .batched import min_enclosing_circles
from .batched_torch import min_enclosing_circles_torch
from .data import POPULATION_SIZE, sample_populations

__all__ = ["training_populations", "labels", "training_stream", "ensemble_stream", "stacked_sampler"]


@shared_cache(maxsize=32)
def training_populations(seed: int, steps: int, batch: int) -> Tensor:
    """The populations of the first ``steps`` training batches of run ``seed``, ``[steps, batch, 20, 2]``,
    drawn in the generator's order (cached per process; shared: do not modify)."""
    generator = torch.Generator().manual_seed(TRAIN_SEED + seed)
    return torch.stack([sample_populations(batch, POPULATION_SIZE, generator) for _ in range(steps)])


def labels(x: Tensor) -> Tensor:
    """``(centre_x, centre_y, radius)`` ``[..., 3]`` of populations ``x [..., 20, 2]``: on a GPU by the
    torch solver (:mod:`~setfuncs.experiments.circle.batched_torch`), on a CPU by the numpy one."""
    solve = min_enclosing_circles_torch if x.is_cuda else min_enclosing_circles
    centers, radii = solve(x.flatten(0, -3))
    return torch.cat([centers, radii[:, None]], dim=1).to(x.dtype).view(*x.shape[:-2], 3)


def training_stream(seed: int, steps: int, batch: int) -> tuple[Tensor, Tensor]:
    """The first ``steps`` training batches of run ``seed`` on the CPU: ``x [steps, batch, 20, 2]``,
    ``y [steps, batch, 3]``."""
    x = training_populations(seed, steps, batch)
    return x, labels(x)


@shared_cache(maxsize=1)
def ensemble_stream(seeds: tuple[int, ...], steps: int, batch: int, device: str) -> tuple[Tensor, Tensor]:
    """The streams of ``seeds`` stacked as the ensemble reads them, ``x [steps, S, batch, 20, 2]`` and
    ``y [steps, S, batch, 3]``, on ``device`` (the last one cached: the next configuration reuses it).

    The populations are drawn on the CPU, one seed after another: drawing is a loop of small
    operations that holds the GIL, and on the 16-core GPU machine the 20 seeds' FULL stream made
    with a thread per seed was still unfinished after about 110 s, where one seed took 2.8 s to draw
    and 0.6 s to label (``results/benchmarks/circle-stream-h200.txt``). The labels are computed where the stream
    lives."""
    populations = [training_populations(seed, steps, batch) for seed in seeds]
    x = torch.stack(populations, dim=1).to(device)
    return x, labels(x)


def stacked_sampler(x: Tensor, y: Tensor) -> Callable[[], tuple[Tensor, Tensor, None]]:
    """A sampler for :func:`~setfuncs.ensemble.fit_ensemble` that returns ``(x[t], y[t], None)`` at its ``t``-th call."""
    position = iter(range(len(x)))

    def sample() -> tuple[Tensor, Tensor, None]:
        t = next(position)
        return x[t], y[t], None

    return sample

