r"""A seed's training stream kept as what was drawn, and made into batches where it is read.

:func:`~setfuncs.experiments.pointcloud.train.training_batches` draws everything of a run's
batches from one numpy generator, in this order: a permutation of the :math:`M` training clouds
at the start of every epoch, then for every batch the angles and the per-axis scales of its
augmentation (:func:`~setfuncs.experiments.pointcloud.preprocess.augmentation_parameters`).
Batch :math:`t` holds, for its :math:`b`-th cloud :math:`i_{t,b}`,

.. math::
    x_{t,b} = \operatorname{diag}(s_{t,b})\, R_z(\theta_{t,b})\, \operatorname{standardize}(X_{i_{t,b}}).

Kept as points, a MEDIUM seed's 5,000 batches of 32 clouds of 1,000 particles are 1.9 GB of
float32; kept as what was drawn (:class:`BatchDraws`: the indices :math:`i_{t,b}`, the angles
:math:`\theta_{t,b}` and the scales :math:`s_{t,b}`) they are :math:`5000 \cdot 32 \cdot (8 + 8 +
24)` bytes = 6.4 MB. A worker process draws a seed's stream once (:func:`batch_draws`, cached) and
every column of the seed reads it.

Standardisation is per cloud and does not depend on the batch, so the training clouds are
standardised once, by the same :func:`~setfuncs.experiments.pointcloud.preprocess.standardize`,
and copied to the device once (:func:`device_clouds`). :func:`stacked_sampler` then gathers the
clouds of batch :math:`t` of every seed there and rotates and scales them in float32
(:func:`augment_on_device`): one ensemble's batch ``[S, B, N, 3]`` per call, outside the graphed
step. The numpy augmentation rotates in float64 and rounds to float32, so the two agree to a few
float32 roundings of the coordinates (``tests/test_pointcloud_ensemble.py`` states the bound).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, NamedTuple

import numpy as np
import torch
from torch import Tensor

from .preprocess import augmentation_parameters, standardize

__all__ = ["BatchDraws", "DeviceStream", "batch_draws", "ensemble_stream", "device_clouds", "augment_on_device",
           "stacked_sampler"]


class BatchDraws(NamedTuple):
    """What one seed's generator draws for ``steps`` batches of ``batch`` clouds, as read-only arrays:
    the clouds of every batch ``indices [steps, batch]`` int64, the rotations about z in radians
    ``angles [steps, batch]`` and the per-axis scales ``scales [steps, batch, 3]``, float64."""

    indices: np.ndarray
    angles: np.ndarray
    scales: np.ndarray

    @property
    def nbytes(self) -> int:
        """The memory the draws hold, in bytes."""
        return sum(array.nbytes for array in self)


class DeviceStream(NamedTuple):
    """The draws of an ensemble's seeds stacked as it reads them, on the device: ``indices [steps, S,
    B]`` int64, ``cos`` and ``sin`` of the angles ``[steps, S, B]`` and ``scales [steps, S, B, 3]``, float32."""

    indices: Tensor
    cos: Tensor
    sin: Tensor
    scales: Tensor


def _check_sizes(clouds: int, steps: int, batch: int) -> None:
    for name, value in (("clouds", clouds), ("steps", steps), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if clouds < batch:
        raise ValueError(f"need at least one batch ({batch}) of training clouds, got {clouds}; lower the "
                         f"budget's batch or train on more clouds")


@lru_cache(maxsize=32)
def batch_draws(seed: int, clouds: int, steps: int, batch: int) -> BatchDraws:
    """The draws of the first ``steps`` batches of :func:`~setfuncs.experiments.pointcloud.train.training_batches`
    over ``clouds`` training clouds with ``numpy.random.default_rng(seed)`` (a run's ``TRAIN_SEED +
    seed``), in its order: a permutation when fewer than ``batch`` clouds of the epoch are left, then
    the batch's angles and scales. They do not depend on the clouds' values; cached per process and
    shared by every column of the seed (the arrays are read-only)."""
    _check_sizes(clouds, steps, batch)
    rng = np.random.default_rng(seed)
    indices = np.empty((steps, batch), dtype=np.int64)
    angles = np.empty((steps, batch))
    scales = np.empty((steps, batch, 3))
    order, position = rng.permutation(clouds), 0
    for t in range(steps):
        if position + batch > clouds:
            order, position = rng.permutation(clouds), 0
        indices[t] = order[position:position + batch]
        position += batch
        angles[t], scales[t] = augmentation_parameters(batch, rng)
    for array in (indices, angles, scales):
        array.setflags(write=False)
    return BatchDraws(indices, angles, scales)


def _stacked(arrays: list[np.ndarray], dtype: torch.dtype, device: str) -> Tensor:
    """Per-seed arrays ``[steps, ...]`` as one tensor ``[steps, S, ...]`` of ``dtype`` on ``device``."""
    return torch.from_numpy(np.stack(arrays, axis=1)).to(device, dtype)


@lru_cache(maxsize=1)
def ensemble_stream(seeds: tuple[int, ...], clouds: int, steps: int, batch: int, device: str) -> DeviceStream:
    """The :func:`batch_draws` of ``seeds`` (generator seeds) stacked along a seed axis and moved to
    ``device``; cosines and sines are taken in float64 and then rounded to float32. The last stream
    is cached: the next column of the same seeds reuses it."""
    if not seeds:
        raise ValueError("ensemble_stream needs at least one seed, got ()")
    draws = [batch_draws(seed, clouds, steps, batch) for seed in seeds]
    return DeviceStream(_stacked([d.indices for d in draws], torch.int64, device),
                        _stacked([np.cos(d.angles) for d in draws], torch.float32, device),
                        _stacked([np.sin(d.angles) for d in draws], torch.float32, device),
                        _stacked([d.scales for d in draws], torch.float32, device))


def device_clouds(clouds: np.ndarray, device: str | torch.device) -> Tensor:
    """The training clouds ``[M, N, 3]`` standardised (:func:`~setfuncs.experiments.pointcloud.preprocess.standardize`)
    on the CPU, float32, on ``device``: the one copy an ensemble's batches are gathered from."""
    return torch.from_numpy(standardize(clouds)).to(device)


def augment_on_device(clouds: Tensor, indices: Tensor, cos: Tensor, sin: Tensor, scales: Tensor) -> Tensor:
    r"""The clouds ``clouds[indices]`` rotated about z and scaled per axis, ``[..., N, 3]`` for
    ``indices [...]``: :math:`(x, y, z) \mapsto (s_x (x\cos\theta - y\sin\theta),\ s_y (x\sin\theta +
    y\cos\theta),\ s_z z)`, elementwise in the clouds' dtype (no matrix product, so no TF32 on a GPU)."""
    x = clouds.index_select(0, indices.reshape(-1)).view(*indices.shape, *clouds.shape[1:])
    first, second, third = x.unbind(-1)
    cos, sin = cos[..., None], sin[..., None]
    rotated = torch.stack((cos * first - sin * second, sin * first + cos * second, third), dim=-1)
    return rotated * scales[..., None, :]


def stacked_sampler(clouds: Tensor, labels: Tensor, stream: DeviceStream
                    ) -> Callable[[], tuple[Tensor, Tensor, None]]:
    """A sampler for :func:`~setfuncs.ensemble.fit_ensemble`: its ``t``-th call returns batch ``t`` of
    every seed, ``(x [S, B, N, 3], y [S, B], None)``, made from ``clouds`` (:func:`device_clouds`)
    and ``labels [M]`` on their device by :func:`augment_on_device`. A call past the stream's steps
    is a ValueError."""
    if labels.shape != clouds.shape[:1]:
        raise ValueError(f"need one label per cloud: {len(clouds)} clouds, labels of shape {tuple(labels.shape)}")
    steps = len(stream.indices)
    position = 0

    def sample() -> tuple[Tensor, Tensor, None]:
        nonlocal position
        if position == steps:
            raise ValueError(f"the stream holds {steps} batches and all were read; make it with as many "
                             f"steps as the training takes")
        t, position = position, position + 1
        indices = stream.indices[t]
        x = augment_on_device(clouds, indices, stream.cos[t], stream.sin[t], stream.scales[t])
        return x, labels[indices], None

    return sample
