"""Training with a progress bar: the one loop every chapter and experiment uses.

A *sampler* returns a fresh batch ``(x, y, mask)`` on each call (``mask`` may be None), so data
can be drawn anew at every gradient step, as the paper's experiments do.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

__all__ = ["Batch", "fit", "evaluate"]

Batch = tuple[Tensor, Tensor, "Tensor | None"]


def fit(model: nn.Module, sample: Callable[[], Batch], loss: Callable[[Tensor, Tensor], Tensor], steps: int,
        lr: float = 1e-3, weight_decay: float = 0.0, clip: float | None = None, progress: bool = True,
        desc: str = "training", eps: float = 1e-8, milestones: Sequence[int] = (),
        gamma: float = 0.1) -> list[float]:
    r"""Train ``model`` with Adam for ``steps`` gradient steps; return the loss of every step.

    Args:
        model: maps ``(x, mask)`` to predictions.
        sample: draws one training batch ``(x, y, mask)``.
        loss: ``loss(prediction, y)`` -> scalar.
        steps: number of gradient steps.
        lr, weight_decay: Adam's settings.
        clip: gradient-norm clipping threshold (None: no clipping).
        progress: show a tqdm progress bar with the running loss.
        desc: the progress bar's label.
        eps: Adam's :math:`\epsilon` in :math:`\Delta\theta = -\eta\, \hat m / (\sqrt{\hat v} + \epsilon)`
            (PyTorch's default; Deep Sets' point-cloud code uses ``1e-3``).
        milestones, gamma: a step schedule: the learning rate is multiplied by ``gamma`` after
            each step count in ``milestones``, so step ``t`` (from 0) uses
            :math:`\eta\,\gamma^{|\{m \in \text{milestones}:\ m \le t\}|}`.
    """
    if steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps}")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay, eps=eps)
    schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, list(milestones), gamma)
    model.train()
    losses: list[float] = []
    bar = tqdm(range(steps), desc=desc, disable=not progress, mininterval=0.5)
    for _ in bar:
        x, y, mask = sample()
        value = loss(model(x, mask), y)
        if not torch.isfinite(value):
            raise FloatingPointError(f"the loss became {value.item()} after {len(losses)} steps; "
                                     "lower the learning rate or enable gradient clipping")
        optimizer.zero_grad()
        value.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        schedule.step()
        losses.append(value.item())
        if len(losses) % 20 == 0:
            bar.set_postfix(loss=f"{sum(losses[-20:]) / 20:.4g}")
    model.eval()
    return losses


@torch.no_grad()
def evaluate(model: nn.Module, batch: Batch, loss: Callable[[Tensor, Tensor], Tensor]) -> float:
    """The loss of ``model`` on one batch, in eval mode, without gradients."""
    model.eval()
    x, y, mask = batch
    return float(loss(model(x, mask), y))
