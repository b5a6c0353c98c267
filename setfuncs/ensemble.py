r"""Many seeds of one model trained as one batched ensemble.

The models of an ensemble share their architecture and nothing else: model :math:`s` has its own
initialisation :math:`\theta_s` and its own data stream. Their parameters are stacked along a
leading ensemble axis (``torch.func.stack_module_state``), and one step evaluates every model on
its own batch with ``torch.vmap`` over ``torch.func.functional_call``:

.. math::
    L(\theta_1, \dots, \theta_S) = \sum_s \ell_s(\theta_s), \qquad
    \frac{\partial L}{\partial \theta_s} = \frac{\partial \ell_s}{\partial \theta_s},

with :math:`\ell_s(\theta_s) = \operatorname{loss}(f_{\theta_s}(x_s, \text{mask}_s), y_s)` on model
:math:`s`'s batch :math:`(x_s, y_s, \text{mask}_s)`, or, for a model trained on another objective
(a variational model's negative ELBO), :math:`\ell_s(\theta_s) = \operatorname{objective}(f_{\theta_s},
x_s, y_s, \text{mask}_s)`, as :func:`~setfuncs.train.fit` takes either.

Every model's gradient is its own. Gradient clipping is applied per model (the norm over
:math:`\theta_s` alone), and Adam updates every weight separately, so the ensemble takes exactly
the steps the models would take one by one, up to float rounding (``tests/test_ensemble.py``).
A model whose loss diverges is reported as diverged; the others train on unaffected. On a GPU the
ensemble's step is one CUDA graph (:class:`~setfuncs.steps.StepLoop`). ``torch.vmap`` has no rule
for PyTorch's fused LSTM cell, so the ensemble computes every :class:`torch.nn.LSTMCell` of its
models from matrix products (:func:`~setfuncs.learnable.lstm_cell_from_products`, the same
equations).
"""

from __future__ import annotations

import copy
from typing import Callable, Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from .learnable import lstm_cell_from_products
from .population import SyncRequired, check_population, sync_free
from .steps import StepLoop, TrainingLog, adam, check_clip, check_steps, device_name, divergence, resolve_device
from .train import Batch, Objective

__all__ = ["fit_ensemble", "clip_per_model"]


def clip_per_model(grads: Sequence[Tensor], clip: float) -> None:
    r"""Clip the gradient of every model of an ensemble to norm ``clip``, in place.

    ``grads`` are stacked gradients ``[S, ...]``; model :math:`s`'s norm is
    :math:`\lVert g_s \rVert = (\sum_p \lVert g_{p,s} \rVert^2)^{1/2}` over its parameters :math:`p`,
    and its gradients are multiplied by :math:`\min(1, c / (\lVert g_s \rVert + 10^{-6}))`, the
    factor :func:`torch.nn.utils.clip_grad_norm_` applies to a single model.
    """
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads]).norm(dim=0)
    factor = (clip / (norms + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(factor.view(-1, *[1] * (g.dim() - 1)))


def _check_same_architecture(models: Sequence[nn.Module]) -> None:
    if not models:
        raise ValueError("fit_ensemble needs at least one model")
    first = {name: (p.shape, p.dtype) for name, p in models[0].state_dict().items()}
    for i, model in enumerate(models[1:], start=1):
        other = {name: (p.shape, p.dtype) for name, p in model.state_dict().items()}
        if type(model) is not type(models[0]) or other != first:
            raise ValueError(f"models[{i}] differs from models[0] in its type or parameters; an ensemble "
                             "trains copies of one architecture (build every model with the same arguments)")


class _ProductLSTMCell(nn.LSTMCell):
    """:class:`torch.nn.LSTMCell` computed from matrix products, which ``torch.vmap`` batches."""

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        if hx is None:
            zeros = input.new_zeros(*input.shape[:-1], self.hidden_size)
            hx = (zeros, zeros)
        return lstm_cell_from_products(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


def _batchable(template: nn.Module) -> nn.Module:
    """``template`` (the ensemble's copy on the meta device, run only under ``torch.vmap``) with every
    LSTM cell with biases computed by :class:`_ProductLSTMCell` (same parameters, same equations)."""
    for module in template.modules():
        if type(module) is nn.LSTMCell and module.bias:
            module.__class__ = _ProductLSTMCell
    return template


class _Scored(nn.Module):
    """A model with its training objective, ``forward(x, y, mask) = objective(model, x, y, mask)``: the
    module whose parameters ``functional_call`` swaps in for each model of the ensemble."""

    def __init__(self, model: nn.Module, objective: Objective) -> None:
        super().__init__()
        self.model = model
        self.objective = objective

    def forward(self, x: Tensor, y: Tensor | None, mask: Tensor | None) -> Tensor:
        return self.objective(self.model, x, y, mask)


def _objective_of(loss: Callable[[Tensor, Tensor], Tensor] | None, objective: Objective | None) -> Objective:
    """``objective``, or the objective of ``loss``: ``loss(model(x, mask), y)``; a ValueError unless
    exactly one of them is given."""
    if (loss is None) == (objective is None):
        raise ValueError("fit_ensemble needs exactly one of loss (of the model's prediction) and objective (of "
                         "the model and the batch)")
    if objective is not None:
        return objective
    return lambda model, x, y, mask: loss(model(x, mask), y)


def _check_stacked(x: Tensor, y: Tensor | None, size: int, sets: bool) -> None:
    """A ValueError unless ``(x, y)`` stack the batches of ``size`` models: ``x [S, ...]`` (``[S, B, N, D]``
    for a loss's model, which reads populations: ``sets``) and ``y [S, ...]`` (None only with an objective)."""
    x_fits = x.shape[0] == size and (x.dim() == 4 or not sets)
    y_fits = y.shape[0] == size if y is not None else not sets
    if not (x_fits and y_fits):
        expected = f"x [S={size}, B, N, D] and y [S, ...]" if sets else f"x [S={size}, ...] and y [S, ...] or None"
        raise ValueError(f"fit_ensemble: a stacked sampler must return {expected}; got x {tuple(x.shape)}, "
                         f"y {None if y is None else tuple(y.shape)}")


def _stack_optional(tensors: Sequence[Tensor | None], what: str, target: torch.device) -> Tensor | None:
    """The samplers' ``tensors`` stacked on ``target``, or None when all are None (a ValueError when
    only some are)."""
    if all(t is None for t in tensors):
        return None
    if any(t is None for t in tensors):
        raise ValueError(f"fit_ensemble: the samplers must all give {what} or all give None")
    return torch.stack([t.to(target, non_blocking=True) for t in tensors])


@torch.no_grad()
def _copy_back(models: Sequence[nn.Module], params: dict[str, Tensor], buffers: dict[str, Tensor]) -> None:
    """Model ``s`` takes slice ``s`` of the stacked parameters and buffers, and eval mode."""
    for s, model in enumerate(models):
        for name, value in model.named_parameters():
            value.copy_(params[name][s])
        for name, value in model.named_buffers():
            value.copy_(buffers[name][s])
        model.eval()


def fit_ensemble(models: Sequence[nn.Module], samples: Sequence[Callable[[], Batch]] | Callable[[], Batch],
                 loss: Callable[[Tensor, Tensor], Tensor] | None, steps: int, lr: float = 1e-3,
                 weight_decay: float = 0.0, clip: float | None = None, progress: bool = True,
                 desc: str = "ensemble", eps: float = 1e-8, milestones: Sequence[int] = (), gamma: float = 0.1,
                 device: str | torch.device | None = None, graph: bool | None = None,
                 read_every: int = 50, objective: Objective | None = None, checkpoints: Sequence[int] = (),
                 at_checkpoint: Callable[[int, nn.Module, int], None] | None = None
                 ) -> list[TrainingLog | FloatingPointError]:
    """Train ``models`` (one architecture, any initialisations) together, model ``s`` on batches of
    ``samples[s]``: what :func:`~setfuncs.train.fit` does to each, in one batched step.

    Args:
        models: the models, trained in place (moved to ``device``; in eval mode afterwards).
        samples: one sampler per model (their batches must have equal shapes, and all or none a
            mask), or one sampler of the stacked batches ``(x [S, B, N, D], y [S, ...], mask [S, B, N]
            or None)``, model ``s`` training on slice ``s`` (a stream made in advance, on the device:
            on a GPU its masks are checked for their shapes only, so that the host never waits for
            the device; its maker checks once that no population is empty).
            With ``objective``, ``x`` may be any ``[S, ...]`` and ``y`` None (for every model).
        loss: ``loss(prediction, y)`` of ``prediction = model(x, mask)``; None with ``objective``.
        objective: instead of ``loss``, model ``s``'s scalar to minimise,
            ``objective(model, x, y, mask)`` of its own batch, as :func:`~setfuncs.train.fit` takes it
            (e.g. a variational model's negative ELBO, which calls a method other than ``forward``).
            Its random draws (``torch.randn_like``) come from the device's global generator, every
            model its own (``torch.vmap(randomness="different")``): not the draws the models would
            take one by one, but draws of the same distribution.

    The other arguments are those of :func:`~setfuncs.train.fit`; ``clip`` applies per model
    (:func:`clip_per_model`). After each step count in ``checkpoints``, ``at_checkpoint(s, model,
    step)`` is called for every model ``s`` that has not diverged, with ``models[s]`` holding its
    weights after exactly ``step`` steps, in eval mode and without gradients (as ``fit`` calls
    ``at_checkpoint(model, step)``).

    Returns, per model, its losses (a :class:`~setfuncs.steps.TrainingLog`) or, for a model whose
    loss became non-finite, the :class:`FloatingPointError` that :func:`~setfuncs.train.fit` would
    have raised (naming the step, and saying whether the model's slice of that step's batch held
    NaN or inf). ``steps``, ``clip`` and ``device`` are refused as ``fit`` refuses them (a
    ValueError naming the argument). Dropout draws its masks per model
    (``torch.vmap(randomness="different")``), so a model with dropout does not repeat its one-by-one
    training exactly.
    """
    steps = check_steps(steps)
    check_clip(clip)
    scored = _objective_of(loss, objective)
    _check_same_architecture(models)
    marks = frozenset(checkpoints)
    if any(isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= steps for c in marks):
        raise ValueError(f"checkpoints must be step counts from 1 to steps = {steps}, got {sorted(checkpoints)}")
    if bool(marks) != (at_checkpoint is not None):
        raise ValueError("checkpoints and at_checkpoint go together: pass both or neither")
    if not callable(samples) and len(samples) != len(models):
        raise ValueError(f"fit_ensemble needs one sampler per model: {len(models)} models, {len(samples)} samplers")
    target = resolve_device(device, models[0])
    for model in models:
        model.to(target).train()
    wrapped = [_Scored(model, scored) for model in models]
    params, buffers = stack_module_state(wrapped)
    base = _batchable(copy.deepcopy(wrapped[0]).to("meta"))
    parameters = list(params.values())
    optimizer = adam(parameters, lr, weight_decay, eps, target)

    def draw_stacked() -> Batch:
        x, y, mask = samples()
        _check_stacked(x, y, len(models), sets=objective is None)
        if mask is not None:
            if mask.is_cuda:      # a stream made in advance on the GPU: shapes only, no wait for the device
                with sync_free():
                    check_population(x.flatten(0, 1), mask.flatten(0, 1))
            else:
                check_population(x.flatten(0, 1), mask.flatten(0, 1))  # one read: no empty population
        return x, y, mask

    def draw() -> Batch:
        batches = [sample() for sample in samples]
        for x, _, mask in batches:
            if mask is not None:
                check_population(x, mask)
        return (torch.stack([b[0].to(target, non_blocking=True) for b in batches]),
                _stack_optional([b[1] for b in batches], "y", target),
                _stack_optional([b[2] for b in batches], "a mask", target))

    def one(p: dict, b: dict, x: Tensor, y: Tensor | None, mask: Tensor | None) -> Tensor:
        return functional_call(base, (p, b), (x, y, mask))

    def step(x: Tensor, y: Tensor | None, mask: Tensor | None) -> Tensor:
        dims = (0, 0, 0, None if y is None else 0, None if mask is None else 0)
        values = vmap(one, in_dims=dims, randomness="different")(params, buffers, x, y, mask)
        values.sum().backward()
        if clip is not None:
            clip_per_model([p.grad for p in parameters], clip)
        return values.detach()

    errors: dict[int, FloatingPointError] = {}

    def check(chunk: Tensor, first: int, batches: dict) -> bool:
        for s in range(len(models)):
            if s not in errors and (error := divergence(chunk[:, s], first, batches, model=s)) is not None:
                errors[s] = error
        if first + len(chunk) in marks and len(errors) < len(models):
            _copy_back(wrapped, params, buffers)
            with torch.no_grad():
                for s, model in enumerate(models):
                    if s not in errors:
                        at_checkpoint(s, model, first + len(chunk))
        return len(errors) == len(models)

    loop = StepLoop(step, draw_stacked if callable(samples) else draw, optimizer, steps, lr, milestones, gamma, target, graph, read_every,
                    sync_free_cpu=True, read_at=marks)
    try:
        losses, graphed = loop.run(progress, desc, check)
    except SyncRequired as err:
        raise ValueError(f"fit_ensemble cannot train this model: {err}. torch.vmap allows no reads of "
                         "tensor values; train each seed with setfuncs.train.fit instead") from err
    _copy_back(wrapped, params, buffers)
    name = device_name(target)
    return [errors.get(s) or TrainingLog(losses[:, s].tolist(), name, graphed, loop.fallback)
            for s in range(len(models))]
