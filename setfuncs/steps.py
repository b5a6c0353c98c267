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

import math
import numbers
import threading
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import torch
from torch import Tensor, nn
from .bars import bar as progress_bar

from .population import SyncRequired, sync_free

__all__ = ["TrainingLog", "StepLoop", "adam", "resolve_device", "device_name", "divergence", "nonfinite_data",
           "check_steps", "check_clip", "WARMUP_STEPS", "CAPTURE"]

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
    None is where ``module``'s parameters are (the CPU without any). A CUDA device without CUDA, or
    ``cuda:N`` with ``N`` not below ``torch.cuda.device_count()``, is a ValueError that names the device
    and the count; so is any device other than the CPU and CUDA GPUs, given or (``device`` None) where
    ``module``'s parameters are, and a ``module`` with tensors on the meta device, which hold shapes but
    no values (nothing to train, and nothing that can be moved)."""
    if module is not None and any(t.is_meta for t in (*module.parameters(), *module.buffers())):
        raise ValueError(f"{type(module).__name__} has tensors on the meta device{_META}; build the model on "
                         "'cpu' or 'cuda' (or materialise it with model.to_empty(device='cpu') and initialise "
                         "its weights) before training it")
    if device is None:
        parameter = None if module is None else next(module.parameters(), None)
        if parameter is None:
            return torch.device("cpu")
        if parameter.device.type not in ("cpu", "cuda"):
            raise ValueError(f"{type(module).__name__}'s parameters are on {parameter.device}; training runs "
                             "on the CPU or a CUDA GPU: pass device='cpu', 'cuda' or 'auto'")
        return parameter.device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}") from err
    if resolved.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"device '{resolved}': this PyTorch sees no CUDA GPU (torch.cuda.device_count() = 0); "
                             "pass device='cpu' or 'auto'")
        if resolved.index is not None and resolved.index >= count:
            raise ValueError(f"device '{resolved}': this machine has {count} CUDA GPU{'s' * (count != 1)} "
                             f"(torch.cuda.device_count() = {count}: cuda:0 to cuda:{count - 1}); pass one of "
                             "them, or 'cuda'")
    elif resolved.type != "cpu":
        raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}"
                         f"{_META if resolved.type == 'meta' else ''}")
    return resolved


#: Why the meta device is refused, for :func:`resolve_device`'s messages.
_META = " (a meta tensor has a shape but no values: there is no data to train on)"


def device_name(device: torch.device) -> str:
    """``"cpu"`` or the GPU's name."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def check_steps(steps: object) -> int:
    """``steps`` as an int if it is a positive whole number of gradient steps (an ``int``, or an integer
    of another type such as ``numpy.int64``), else a ValueError naming ``steps``: a bool is no count,
    and ``2.5`` or ``"3"`` would otherwise fail inside ``range`` or train a step count nobody asked for."""
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1:
        raise ValueError(f"steps must be a positive int (the number of gradient steps), got {steps!r} "
                         f"({type(steps).__name__}); pass a whole number, e.g. steps=int(steps)")
    return int(steps)


def check_clip(clip: object) -> None:
    r"""A ValueError naming ``clip`` unless it is None (no clipping) or a positive finite number.

    Clipping scales the gradient :math:`g` by :math:`\min(1, c / \lVert g \rVert)`: a negative
    :math:`c` flips every gradient (the loss climbs), 0 stops training, NaN makes every weight NaN
    and :math:`\infty` clips nothing, which ``clip=None`` says plainly."""
    if clip is None:
        return
    if isinstance(clip, bool) or not isinstance(clip, numbers.Real) or not (math.isfinite(clip) and clip > 0):
        raise ValueError(f"clip must be a positive finite gradient norm (e.g. clip=1.0), or None for no "
                         f"clipping; got clip={clip!r}")


def nonfinite_data(batch: Sequence[Tensor | None]) -> str | None:
    """What is non-finite in ``batch = (x, y, mask)``, e.g. ``"x holds 2 NaN and 0 inf (the first at
    index [0, 3, 1])"``, or None when its floating-point tensors are finite. With a mask, only the real
    particles of ``x`` count (padding may hold anything, :mod:`~setfuncs.plain`); integer tensors
    (labels) are always finite."""
    x, y, mask = batch
    found = []
    for name, t in (("x", x), ("y", y)):
        if not isinstance(t, Tensor) or not t.is_floating_point():
            continue
        bad = ~torch.isfinite(t)
        real = ""
        if (name == "x" and isinstance(mask, Tensor) and mask.dtype == torch.bool and t.dim() > mask.dim()
                and t.shape[:mask.dim()] == mask.shape):
            bad &= mask.reshape(*mask.shape, *[1] * (t.dim() - mask.dim()))
            real = " among its real particles"
        if bool(bad.any()):
            where = bad.nonzero()[0].tolist()
            nan = int(torch.isnan(t)[bad].sum())
            found.append(f"{name} holds {nan} NaN and {int(bad.sum()) - nan} inf{real} (the first at index {where})")
    return "; ".join(found) or None


def divergence(losses: Tensor, first: int, batches: Mapping[int, Sequence[Tensor | None]] | None = None,
               model: int | None = None) -> FloatingPointError | None:
    r"""The error for the first non-finite value of ``losses`` (the losses of steps ``first, first + 1,
    ...``), naming its step, or None when all are finite.

    ``batches`` are the batches ``(x, y, mask)`` by step, as they were drawn (``model``: the ensemble's
    model whose slice of stacked batches to read). They are read only here, when a loss is
    non-finite: if the batch of the first such step ``t`` holds NaN or inf (:func:`nonfinite_data`), or
    the batch of step ``t - 1`` does (whose gradient made the weights of step ``t``: an ``inf`` that a
    ``tanh`` saturates leaves its loss finite, but not the :math:`0 \cdot \infty` of its gradient), the
    error says so, since the data and not the learning rate is at fault; otherwise it advises a lower
    learning rate or clipping."""
    bad = (~torch.isfinite(losses)).nonzero()
    if not len(bad):
        return None
    at = int(bad[0, 0])
    step, value = first + at, float(losses[at])
    for suspect, which in ((step, "the batch of that step"), (step - 1, "the batch of the step before it")):
        if batches is None or suspect not in batches:
            continue
        batch = batches[suspect]
        if model is not None:
            batch = tuple(t[model] if isinstance(t, Tensor) else t for t in batch)
        data = nonfinite_data(batch)
        if data is not None:
            return FloatingPointError(f"the loss became {value} after {step} steps, and {which} (step {suspect}, "
                                      f"counting from 0) holds non-finite values: {data}; the data is at fault, "
                                      "not the learning rate: make the sampler return finite values (drop or "
                                      "repair them, e.g. with torch.nan_to_num, or mask them out as padding)")
    return FloatingPointError(f"the loss became {value} after {step} steps; "
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
        read_every: steps between reads of the losses. The batches drawn since the last read, and
            the one before it, stay referenced until the next read (at most ``read_every + 1``, as
            ``draw`` returned them, before the move to the device), so that a non-finite loss can be
            traced to non-finite data (:func:`divergence`): no cost for a sampler of views or of one
            tensor, up to ``read_every + 1`` batches of memory for one that makes new tensors at every
            call.
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

    def _batch(self, t: int, drawn: dict[int, tuple]) -> tuple[Tensor, Tensor, Tensor | None]:
        x, y, mask = self.draw()
        drawn[t] = (x, y, mask)
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

    def run(self, progress: bool, desc: str, on_read: Callable[[Tensor, int, dict], bool]
            ) -> tuple[Tensor, int]:
        """Train; return the losses read back to the CPU (``[steps]`` or ``[steps, models]``) and the
        number of graphed steps. ``on_read(losses, first_step, batches)`` sees every read chunk and
        the batches of its steps and of the step before it, as drawn (``{step: (x, y, mask)}``), and
        returns True to stop early (or raises)."""
        losses: Tensor | None = None
        captured, graphed, read_from = None, 0, 0
        warmup = min(WARMUP_STEPS, self.steps) if self.graph else self.steps
        side = torch.cuda.Stream(self.device) if self.graph else None
        bar = progress_bar(total=self.steps, desc=desc, enabled=progress, mininterval=0.5)
        stopped = False
        drawn: dict[int, tuple] = {}   # the batches since the step before the last read, by step
        for t in range(self.steps):
            self._set_lr(t)
            batch = self._batch(t, drawn)
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
                stopped = on_read(chunk, read_from, drawn)
                drawn = {t: drawn[t]}
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
