"""Random training batches for the training-loop tests (test_devices, test_ensemble, test_cuda)."""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import Tensor


def sampler(seed: int, batch: int, n: int | Sequence[int], masked: bool = False,
            every: int = 20) -> Callable[[], tuple[Tensor, Tensor, Tensor | None]]:
    """Batches ``(x [batch, n, 2], y [batch, 3], mask)`` from ``torch.Generator().manual_seed(seed)``;
    with ``masked``, each population keeps 1 to ``n`` particles. ``n`` a sequence of sizes: the size
    moves to the next one every ``every`` batches (the last one stays)."""
    generator = torch.Generator().manual_seed(seed)
    sizes = [n] if isinstance(n, int) else list(n)
    calls = iter(range(10**9))

    def sample() -> tuple[Tensor, Tensor, Tensor | None]:
        size = sizes[min(next(calls) // every, len(sizes) - 1)]
        x = torch.randn(batch, size, 2, generator=generator)
        mask = None
        if masked:
            mask = torch.arange(size)[None] < torch.randint(1, size + 1, (batch,), generator=generator)[:, None]
        return x, torch.randn(batch, 3, generator=generator), mask
    return sample
