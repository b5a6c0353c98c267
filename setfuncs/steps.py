"""The training loop's machinery: devices, Adam, and a step that runs eagerly or as a CUDA graph.

:class:`StepLoop` runs ``steps`` optimiser steps of a given ``step(x, y, mask) -> loss`` (forward,
backward and clipping; the loop adds ``zero_grad``, Adam's step and the learning-rate schedule).
The losses go into a device tensor and are read every ``read_every`` steps, so the host never
waits for the device inside the loop.

On a GPU the loop captures the step once as a CUDA graph (``torch.cuda.graph``) after a few eager
warm-up steps on a side stream, which create Adam's state and the libraries' workspaces, and then
replays it: the new batch is copied into the captured input tensors, the learning rate lives in a
device tensor read by ``Adam(capturable=True)``. Every step is a real training step, warm-up
included, so graphed and eager training take the same steps on the same batches.
"""

from __future__ import annotations

import threading
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

from .population import SyncRequired, sync_free

__all__ = ["TrainingLog", "StepLoop", "adam", "resolve_device", "device_name", "divergence", "WARMUP_STEPS", "CAPTURE"]

#: Eager steps before a CUDA-graph capture; they train, as the first steps of the run.
WARMUP_STEPS = 3
#: Held during every CUDA-graph capture of this process, so that loops in several threads capture one at a time.
CAPTURE = threading.Lock()

Draw = Callable[[], tuple[Tensor, Tensor, "Tensor | None"]]


class TrainingLog(list):
    """The loss of every step (a list of floats), and how the steps ran.

    Attributes:
        device: the device's name (``"cpu"`` or the GPU's, e.g. ``"NVIDIA H200"``).
        graphed: how many steps replayed a CUDA graph (0 on a CPU).
        fallback: why the step was not (or no longer) graphed on a GPU, or None.
    """

    def __init__(self, losses: Sequence[float] = (), device: str = "cpu", graphed: int = 0,
                 fallback: str | None = None) -> None:
        super().__init__(losses)
        self.device, self.graphed, self.fallback = device, graphed, fallback

    def describe(self) -> dict:
        """``{"device", "graphed_steps", "graph_fallback"}`` for a run's provenance."""
        return {"device": self.device, "graphed_steps": self.graphed, "graph_fallback": self.fallback}


def resolve_device(device: str | torch.device | None, module: nn.Module | None = None) -> torch.device:
    """``device`` as a :class:`torch.device`: ``"auto"`` is the GPU when there is one, else the CPU;
    None is where ``module``'s parameters are (the CPU without any). A CUDA device without CUDA is
    a ValueError that says so."""
    if device is None:
        parameter = None if module is None else next(module.parameters(), None)
        return torch.device("cpu") if parameter is None else parameter.device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}") from err
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r}: this PyTorch sees no CUDA GPU; pass device='cpu' or 'auto'")
        if resolved.index is not None and resolved.index >= torch.cuda.device_count():
            raise ValueError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s) here")
    elif resolved.type != "cpu":
        raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}")
    return resolved


def device_name(device: torch.device) -> str:
    """``"cpu"`` or the GPU's name."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def divergence(losses: Tensor, first: int) -> FloatingPointError | None:
    """The error for the first non-finite value of ``losses`` (the losses of steps ``first, first + 1,
    ...``), naming its step, or None when all are finite."""
    bad = (~torch.isfinite(losses)).nonzero()
    if not len(bad):
        return None
    at = int(bad[0, 0])
    return FloatingPointError(f"the loss became {float(losses[at])} after {first + at} steps; "
                              "lower the learning rate or enable gradient clipping")


def adam(parameters: Sequence[Tensor], lr: float, weight_decay: float, eps: float,
         device: torch.device) -> torch.optim.Adam:
    """Adam as the loop needs it: on a GPU ``capturable`` with the learning rate in a device tensor
    (a graph replays the update; the schedule writes the tensor), on a CPU PyTorch's default."""
    if device.type == "cuda":
        return torch.optim.Adam(parameters, lr=torch.tensor(lr, device=device), weight_decay=weight_decay,
                                eps=eps, capturable=True)
    return torch.optim.Adam(parameters, lr=lr, weight_decay=weight_decay, eps=eps)


@dataclass
class StepLoop:
    """``steps`` optimiser steps of ``step`` on batches from ``draw``, eagerly or as a CUDA graph.

    Args:
        step: forward, backward and clipping on one batch on the device; returns the detached
            loss (a scalar, or one per model of an ensemble).
        draw: the next batch ``(x, y, mask)`` (checked; moved to ``device`` here).
        optimizer: from :func:`adam`.
        steps, lr, milestones, gamma: the number of steps and the schedule
            :math:`\\eta_t = \\eta\\,\\gamma^{|\\{m \\in \\text{milestones}:\\ m \\le t\\}|}`.
        device: where the step runs.
        graph: capture a CUDA graph (None: on a GPU). True on a CPU is a ValueError.
        read_every: steps between reads of the losses.
        sync_free_cpu: run the step :func:`~setfuncs.population.sync_free` on a CPU too (an
            ensemble must: ``torch.vmap`` allows no reads); on a GPU it always is.
        read_at: step counts after which the losses are read as well (a checkpoint's evaluation
            sees the model after exactly that many steps).
    """

    step: Callable[[Tensor, Tensor, "Tensor | None"], Tensor]
    draw: Draw
    optimizer: torch.optim.Optimizer
    steps: int
    lr: float
    milestones: Sequence[int]
    gamma: float
    device: torch.device
    graph: bool | None = None
    read_every: int = 50
    sync_free_cpu: bool = False
    read_at: frozenset[int] = frozenset()
    fallback: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.graph and self.device.type != "cuda":
            raise ValueError(f"graph=True needs a CUDA device, got {self.device}; pass graph=None or False")
        if isinstance(self.read_every, bool) or not isinstance(self.read_every, int) or self.read_every < 1:
            raise ValueError(f"read_every must be a positive int, got {self.read_every!r}")
        self.graph = self.device.type == "cuda" if self.graph is None else self.graph
        self.sync_free = self.device.type == "cuda" or self.sync_free_cpu

    # -- one step -----------------------------------------------------------------------------

    def _set_lr(self, t: int) -> None:
        if t > 0 and t not in self.milestones:   # the rate changes only at a milestone
            return
        value = self.lr
        for _ in range(sum(m <= t for m in self.milestones)):  # once per milestone, as MultiStepLR does
            value *= self.gamma
        for group in self.optimizer.param_groups:
            if isinstance(group["lr"], Tensor):
                group["lr"].fill_(value)
            else:
                group["lr"] = value

    def _batch(self) -> tuple[Tensor, Tensor, Tensor | None]:
        x, y, mask = self.draw()
        move = lambda t: None if t is None else t.to(self.device, non_blocking=True)  # noqa: E731
        return move(x), move(y), move(mask)

    def _eager(self, x: Tensor, y: Tensor, mask: Tensor | None) -> Tensor:
        self.optimizer.zero_grad(set_to_none=True)
        try:
            with sync_free() if self.sync_free else nullcontext():
                value = self.step(x, y, mask)
        except SyncRequired as err:
            if self.sync_free_cpu:   # an ensemble cannot read values at all
                raise
            self.sync_free = False
            self._give_up(f"the model reads tensor values inside the step ({err})")
            self.optimizer.zero_grad(set_to_none=True)
            value = self.step(x, y, mask)
        self.optimizer.step()
        return value

    def _give_up(self, reason: str) -> None:
        if self.graph and self.fallback is None:
            warnings.warn(f"training without a CUDA graph: {reason}", RuntimeWarning, stacklevel=4)
            self.fallback = reason
        self.graph = False

    # -- the graph ----------------------------------------------------------------------------

    def _capture(self, x: Tensor, y: Tensor | None, mask: Tensor | None, stream: torch.cuda.Stream):
        """The captured step on static copies of one batch, or None (with the reason said once).

        The capture runs on the loop's own side ``stream`` in thread-local error mode, holding
        :data:`CAPTURE`, so that loops in other threads (several configurations at once, each on
        its own stream: :mod:`~setfuncs.experiments.concurrent`) go on training meanwhile and never
        capture at the same time (a capture starts by synchronising the device and emptying the
        allocator's cache)."""
        static = tuple(None if t is None else t.clone() for t in (x, y, mask))   # y is None under an objective
        self.optimizer.zero_grad(set_to_none=True)
        graph = torch.cuda.CUDAGraph()
        try:
            with CAPTURE, sync_free(), torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local"):
                loss = self.step(*static)
                self.optimizer.step()
        except Exception as err:  # any capture failure: go on eagerly, saying why
            self._give_up(f"capture failed: {type(err).__name__}: {err}")
            return None
        return graph, static, loss

    @staticmethod
    def _same_shape(batch: tuple, static: tuple) -> bool:
        return all((a is None and b is None) or (a is not None and b is not None and a.shape == b.shape
                                                  and a.dtype == b.dtype) for a, b in zip(batch, static))

    # -- the loop -----------------------------------------------------------------------------

    def run(self, progress: bool, desc: str, on_read: Callable[[Tensor, int], bool]) -> tuple[Tensor, int]:
        """Train; return the losses read back to the CPU (``[steps]`` or ``[steps, models]``) and the
        number of graphed steps. ``on_read(losses, first_step)`` sees every read chunk and returns
        True to stop early (or raises)."""
        losses: Tensor | None = None
        captured, graphed, read_from = None, 0, 0
        warmup = min(WARMUP_STEPS, self.steps) if self.graph else self.steps
        side = torch.cuda.Stream(self.device) if self.graph else None
        bar = tqdm(total=self.steps, desc=desc, disable=not progress, mininterval=0.5)
        stopped = False
        for t in range(self.steps):
            self._set_lr(t)
            batch = self._batch()
            if t < warmup and side is not None:
                side.wait_stream(torch.cuda.current_stream(self.device))
                with torch.cuda.stream(side):
                    value = self._eager(*batch)
                torch.cuda.current_stream(self.device).wait_stream(side)
            elif self.graph and captured is None:
                captured = self._capture(*batch, side)
                value = self._replay(captured, batch) if captured is not None else self._eager(*batch)
                graphed += captured is not None
            elif captured is not None and self.graph and self._same_shape(batch, captured[1]):
                value = self._replay(captured, batch)
                graphed += 1
            else:
                if captured is not None and self.graph:
                    self._give_up(f"the batch's shapes changed at step {t}")
                value = self._eager(*batch)
            if losses is None:
                losses = torch.empty((self.steps, *value.shape), dtype=value.dtype, device=value.device)
            losses[t].copy_(value)
            bar.update()
            if t + 1 - read_from >= self.read_every or t + 1 == self.steps or t + 1 in self.read_at:
                chunk = losses[read_from:t + 1].cpu()
                stopped = on_read(chunk, read_from)
                bar.set_postfix(loss=f"{float(chunk[-min(20, len(chunk)):].float().nanmean()):.4g}")
                read_from = t + 1
                if stopped:
                    break
        bar.close()
        return losses[:read_from].cpu(), graphed

    def _replay(self, captured, batch: tuple) -> Tensor:
        graph, static, loss = captured
        for target, source in zip(static, batch):
            if target is not None:
                target.copy_(source)
        graph.replay()
        return loss
