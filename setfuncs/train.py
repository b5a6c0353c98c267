"""Training with a progress bar: the one loop every chapter and experiment uses.

A *sampler* returns a fresh batch ``(x, y, mask)`` on each call (``mask`` may be None), so data
can be drawn anew at every gradient step, as the paper's experiments do.

**Devices.** ``fit(..., device="cuda")`` moves the model there once and every batch as it is
drawn. The losses stay on the device and are read every ``read_every`` steps (for the progress bar
and the divergence check), so the host never waits for the GPU inside the loop: a masked batch is
checked once per step, before the model runs (no empty population), and on a GPU the model runs
:func:`~setfuncs.population.sync_free`, reading no values.

**CUDA graphs.** On a GPU the whole step (forward, backward, gradient clipping, Adam with
``capturable=True`` and its learning rate in a device tensor) is captured once as a CUDA graph and
replayed at every later step with the new batch copied into place: one launch instead of a few
hundred small kernels (:mod:`setfuncs.steps` holds the machinery, shared with
:func:`setfuncs.ensemble.fit_ensemble`). When capture is impossible, training goes on eagerly and
says why, once.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import Tensor, nn

from .population import check_population
from .steps import StepLoop, TrainingLog, adam, check_clip, check_steps, device_name, divergence, resolve_device

__all__ = ["Batch", "fit", "evaluate"]

Batch = tuple[Tensor, Tensor, "Tensor | None"]
#: A training objective of the model and one batch ``(x, y, mask)``, for models that are not a map
#: ``(x, mask) -> prediction`` scored by ``loss(prediction, y)`` (e.g. a variational model's
#: negative ELBO, which reads ``y`` as its second input).
Objective = Callable[[nn.Module, Tensor, "Tensor | None", "Tensor | None"], Tensor]


def fit(model: nn.Module, sample: Callable[[], Batch], loss: Callable[[Tensor, Tensor], Tensor] | None, steps: int,
        lr: float = 1e-3, weight_decay: float = 0.0, clip: float | None = None, progress: bool = True,
        desc: str = "training", eps: float = 1e-8, milestones: Sequence[int] = (),
        gamma: float = 0.1, device: str | torch.device | None = None, graph: bool | None = None,
        read_every: int = 50, objective: Objective | None = None, checkpoints: Sequence[int] = (),
        at_checkpoint: Callable[[nn.Module, int], None] | None = None) -> TrainingLog:
    r"""Train ``model`` with Adam for ``steps`` gradient steps; return the loss of every step.

    Args:
        model: maps ``(x, mask)`` to predictions.
        sample: draws one training batch ``(x, y, mask)`` (on any device; it is moved to ``device``).
        loss: ``loss(prediction, y)`` -> scalar, of ``prediction = model(x, mask)``; None with ``objective``.
        steps: number of gradient steps, a positive int.
        lr, weight_decay: Adam's settings.
        clip: gradient-norm clipping threshold :math:`c > 0`, finite (None: no clipping); the gradient
            :math:`g` of the parameters becomes :math:`g \min(1, c / \lVert g \rVert)`.
        progress: show a tqdm progress bar with the running loss.
        desc: the progress bar's label.
        eps: Adam's :math:`\epsilon` in :math:`\Delta\theta = -\eta\, \hat m / (\sqrt{\hat v} + \epsilon)`
            (PyTorch's default; Deep Sets' point-cloud code uses ``1e-3``).
        milestones, gamma: a step schedule: the learning rate is multiplied by ``gamma`` after
            each step count in ``milestones``, so step ``t`` (from 0) uses
            :math:`\eta\,\gamma^{|\{m \in \text{milestones}:\ m \le t\}|}`.
        device: where to train (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"auto"``: a GPU when there is
            one); None: where the model's parameters are (a ValueError on ``"meta"``, which holds no
            values to train). The model is moved there.
        graph: capture the step as a CUDA graph (None: on a GPU, when the batches keep their shapes;
            True on a CPU is an error).
        read_every: steps between two reads of the losses (divergence check, progress bar).
        objective: instead of ``loss``, the scalar to minimise as a function of the model and the
            batch, ``objective(model, x, y, mask)`` (``Objective``); ``y`` may then be None.
        checkpoints, at_checkpoint: after each step count in ``checkpoints`` (from 1 to ``steps``),
            ``at_checkpoint(model, step)`` is called with the model in eval mode and without
            gradients (e.g. to record a test metric: :class:`~setfuncs.experiments.protocol.Checkpoints`);
            training then goes on in train mode.

    Returns the losses, a :class:`~setfuncs.steps.TrainingLog` (a list of floats that also says
    the device, whether the step was graphed, and why not).

    Raises:
        FloatingPointError: the loss became non-finite (found at the next read; the message names
            the first such step, and says whether that step's batch held NaN or inf: the batches since
            the last read are kept for this, :class:`~setfuncs.steps.StepLoop`).
        ValueError: a setting no training can use (``steps`` not a positive int, ``clip`` not a
            positive finite number or None, a device other than the CPU or a GPU of this machine).
    """
    steps = check_steps(steps)
    check_clip(clip)
    if (loss is None) == (objective is None):
        raise ValueError("fit needs exactly one of loss (of the model's prediction) and objective (of the model "
                         "and the batch)")
    marks = frozenset(checkpoints)
    if any(isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= steps for c in marks):
        raise ValueError(f"checkpoints must be step counts from 1 to steps = {steps}, got {sorted(checkpoints)}")
    if bool(marks) != (at_checkpoint is not None):
        raise ValueError("checkpoints and at_checkpoint go together: pass both or neither")
    target = resolve_device(device, model)
    model.to(target)
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = adam(parameters, lr, weight_decay, eps, target)

    def draw() -> Batch:
        x, y, mask = sample()
        if mask is not None:  # the one read of the batch's values: no empty population
            check_population(x, mask)
        return x, y, mask

    def step(x: Tensor, y: Tensor | None, mask: Tensor | None) -> Tensor:
        value = objective(model, x, y, mask) if objective is not None else loss(model(x, mask), y)
        value.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(parameters, clip)
        return value.detach()

    def check(chunk: Tensor, first: int, batches: dict) -> bool:
        error = divergence(chunk, first, batches)
        if error is not None:
            raise error
        if first + len(chunk) in marks:
            model.eval()
            with torch.no_grad():
                at_checkpoint(model, first + len(chunk))
            model.train()
        return False

    model.train()
    loop = StepLoop(step, draw, optimizer, steps, lr, milestones, gamma, target, graph, read_every, read_at=marks)
    losses, graphed = loop.run(progress, desc, check)
    log = TrainingLog(losses.tolist(), device_name(target), graphed, loop.fallback)
    model.eval()
    return log


@torch.no_grad()
def evaluate(model: nn.Module, batch: Batch, loss: Callable[[Tensor, Tensor], Tensor]) -> float:
    """The loss of ``model`` on one batch, in eval mode, without gradients."""
    model.eval()
    x, y, mask = batch
    return float(loss(model(x, mask), y))
