r"""Plain (non-learnable) aggregations: invariant reductions over the particle axis.

Every aggregation maps a batch of populations ``x: [B, N, D]`` with optional ``mask: [B, N]`` to
``[B, D]``, reducing each feature over the real particles of each population:

.. math::  \alpha(\{x_1, \dots, x_N\}) \in \mathbb{R}^D .

Each is invariant to the order of the particles (it is built from commutative, associative
operations or from sorting) and to padding (masked particles never enter the result). The book
derives them in the chapters *Sum isomorphism*, *Logsumexp between max and sum* and *Divide and
conquer*.

**NaN.** One rule for every aggregation: a NaN in a real particle makes the aggregate of that
feature of that population NaN (as IEEE arithmetic does for the sum, the mean and the maximum);
other features and populations, and padded particles whatever they hold, are unaffected.
**Dtype and device** follow the input (:func:`~setfuncs.population.check_parameters` states the
rule for modules with parameters). Half-precision input (float16, bfloat16) is reduced in float32 and
the result rounded once to the input's dtype (:func:`accumulate_in_float32`), wherever a count, a
sum or an interpolation in half precision would be wrong; max and min, which only select, stay in
the input's dtype.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import torch
from torch import Tensor, nn

from .population import SyncRequired, check_parameters, check_population, particle_counts, syncs_allowed

__all__ = [
    "Aggregation", "not_scriptable", "Sum", "Mean", "Max", "Min", "LogSumExp", "LogMeanExp", "Quantile", "Median", "PowerMean",
    "SoftmaxWeightedSum", "HALF_PRECISION", "SMALL_EXPONENT", "accumulate_in_float32", "finite_padding", "masked_sum",
    "weighted_sum", "zero_padding",
]

#: The dtypes that :func:`accumulate_in_float32` widens.
HALF_PRECISION = (torch.float16, torch.bfloat16)
#: Below this ``|p|`` the power mean uses its ``expm1``/``log1p`` form (``PowerMean.reduce``).
SMALL_EXPONENT = 0.01


def accumulate_in_float32(method: Callable[..., Tensor]) -> Callable[..., Tensor]:
    r"""Decorate a reduction ``method(self, x, *args)``: for float16 or bfloat16 ``x`` it runs on
    float32 copies of ``x`` and of the floating-point tensors among ``args`` (weights), and its result
    is rounded to ``x``'s dtype; float32 and float64 input goes through untouched, bit for bit.

    Half precision counts exactly only to 2048 (float16) or 256 (bfloat16), and float16 ends at
    65504: a particle count :math:`n`, a sum :math:`\sum_i x_i` or the index :math:`q(n-1)` of a
    quantile held in it goes wrong past those sizes (a masked mean of 70,000 float16 ones was
    :math:`\infty/\infty`, NaN; a bfloat16 median of 150 zeros and 150 hundreds was 100). Torch's own
    reductions accumulate half precision in float32 for the same reason. The widening costs one
    float32 copy of ``x``; the result is rounded once, so it is the float32 result to half
    precision (``inf`` where it exceeds float16's range, as the true value would).
    """
    @functools.wraps(method)
    def widened(self, x: Tensor, *args):
        if x.dtype not in HALF_PRECISION:
            return method(self, x, *args)
        args = [a.float() if isinstance(a, Tensor) and a.is_floating_point() else a for a in args]
        return method(self, x.float(), *args).to(x.dtype)
    return widened


def zero_padding(x: Tensor, mask: Tensor | None, value: float = 0.0) -> Tensor:
    """Overwrite the padded particles of ``x`` with ``value`` (a no-op when ``mask`` is None).

    Used before any computation whose backward pass would multiply a zero gradient with a padded
    value: ``0 * inf`` is NaN, so junk in padding must never reach a product.
    """
    return x if mask is None else x.masked_fill(~mask.unsqueeze(-1), value)


def finite_padding(x: Tensor, mask: Tensor | None) -> Tensor:
    """``x`` itself when every value is finite, else ``x`` with its padding zeroed.

    Finite padding is harmless wherever padded particles only meet zero weights (``0 * 1e30`` is
    0); only ``inf``/NaN must be removed. The test is ``isfinite(x.sum())``: any ``inf`` or NaN
    makes the sum non-finite, and a sum that overflows only costs the (always safe) copy. It
    reads ``x`` once without writing, 35x cheaper than ``isfinite(x).all()`` on ``[64, 1000, 256]``.
    """
    if mask is None or (syncs_allowed() and bool(torch.isfinite(x.detach().sum()))):
        return x
    return zero_padding(x, mask)


def not_scriptable(module: nn.Module) -> TypeError:
    """The error ``torch.jit.script`` meets on a module of this package (the ``__prepare_scriptable__`` of
    :class:`Aggregation` and :class:`~setfuncs.model.DeepSet`): it checks its input in Python (messages built
    from shapes, :func:`~setfuncs.population.sync_free`'s context variable) and uses custom autograd
    functions, none of which TorchScript compiles, and PyTorch deprecates TorchScript; ``torch.compile``
    compiles it (``tests/test_compiled.py`` trains a model so)."""
    return TypeError(f"torch.jit.script cannot compile {type(module).__name__} (TorchScript does not support "
                     "its Python input checks and custom autograd functions, and PyTorch deprecates it); "
                     "compile it with torch.compile(module) instead, which runs those checks in Python")


class Aggregation(nn.Module):
    """Base class: checks the population batch, then calls :meth:`reduce`.

    Args:
        features: number of features ``D`` per particle; optional for plain aggregations (they
            work for any ``D``), required for learnable ones. When given, inputs are checked
            against it and ``out_features`` equals it.
    """

    def __prepare_scriptable__(self) -> nn.Module:
        """Called by ``torch.jit.script`` before it compiles this aggregation (alone, or inside a layer
        or model): the TypeError of :func:`not_scriptable`, instead of a failure deep inside the compiler."""
        raise not_scriptable(self)

    def __init__(self, features: int | None = None) -> None:
        super().__init__()
        if features is not None and (not isinstance(features, int) or features < 1):
            raise ValueError(f"features must be a positive int or None, got {features!r}")
        self.features = features

    @property
    def out_features(self) -> int | None:
        """Size of the aggregation's output per population (``None``: same as the input's ``D``)."""
        return self.features

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """Aggregate ``x: [B, N, D]`` over its real particles to ``[B, out_features]``."""
        check_population(x, mask, self.features)
        check_parameters(self, x)
        return self.reduce(x, mask)

    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        """The reduction itself, on an already checked input."""
        raise NotImplementedError

    def weighted(self, x: Tensor, weights: Tensor, mask: Tensor | None) -> Tensor:
        r"""Reduce the weighted particles :math:`\{w_i x_i\}` (``weights: [B, N]``, zero on padding).

        Learnable aggregations call this; sum and mean override it with one batched matrix
        product that never materialises :math:`w_i x_i`.
        """
        return self.reduce(weights.unsqueeze(-1) * x, mask)

    def extra_repr(self) -> str:
        return "" if self.features is None else f"features={self.features}"


def _has_nan(x: Tensor, mask: Tensor | None) -> Tensor:
    """``[B, D]``: whether a real particle of the population holds a NaN in that feature."""
    return zero_padding(torch.isnan(x), mask, False).any(dim=1)


def weighted_sum(x: Tensor, weights: Tensor) -> Tensor:
    r""":math:`\sum_i w_i x_i` as one batched matrix product, ``[B, N, D], [B, N] -> [B, D]``
    (``_WeightedSum``: its backward pass broadcasts instead of multiplying matrices)."""
    return _WeightedSum.apply(x, weights)


class _WeightedSum(torch.autograd.Function):
    r""":math:`y = \sum_i w_i x_i` forward as ``torch.bmm``; backward
    :math:`\partial L/\partial x_i = w_i\, g` by broadcasting and
    :math:`\partial L/\partial w_i = x_i \cdot g` as the product autograd makes for ``bmm``.

    Autograd's own backward of the product computes :math:`w_i\, g` as a batched matrix product
    with an inner dimension of 1. Torch runs it on every thread only when the gradient :math:`g`
    is a plain tensor; the gradient of a scalar loss such as ``y.sum()`` is a broadcast one (stride
    0), with which the CPU product falls back to one small product per population, on one thread
    (measured when half precision came: the masked sum at 1.5x the dense ``x.sum(1)`` on two threads, and the mean,
    whose division makes ``g`` plain, at 1.05x). Here ``g`` is made plain (a copy of ``[B, D]``) and
    the gradient of ``x`` is the broadcast product :math:`w_i g_d`, written once on every thread:
    0.14 ms against 0.34 ms for the matrix product on one thread at ``[16, 1000, 64]``. The values
    are the same, each :math:`w_i g_d` being one product either way. Under ``create_graph`` both
    formulas are differentiable, so second derivatives are exact.
    """

    generate_vmap_rule = True  # so that torch.vmap (ensembles of models) batches it like any op

    @staticmethod
    def forward(x: Tensor, weights: Tensor) -> Tensor:
        return torch.bmm(weights.unsqueeze(1), x).squeeze(1)

    @staticmethod
    def setup_context(ctx, inputs: tuple[Tensor, Tensor], output: Tensor) -> None:
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, weights = ctx.saved_tensors
        grad = grad.contiguous().unsqueeze(1)  # [B, 1, D]; a broadcast g would slow the product 5x too
        grad_x = weights.unsqueeze(-1) * grad if ctx.needs_input_grad[0] else None
        grad_weights = torch.bmm(grad, x.transpose(1, 2)).squeeze(1) if ctx.needs_input_grad[1] else None
        return grad_x, grad_weights


def masked_sum(x: Tensor, mask: Tensor | None) -> Tensor:
    r""":math:`\sum_i x_i` over the real particles, ``[B, N, D] -> [B, D]``.

    With a mask this is one batched matrix product, ``mask^T X``, which reads ``x`` once and never
    copies it. A padded value of ``inf`` or NaN would turn ``0 * inf`` into NaN there, so a
    non-finite result is recomputed the safe way (padding overwritten with zeros); the check is on
    the small ``[B, D]`` output only. Inside :func:`~setfuncs.population.sync_free`, which allows
    no such check, the safe way is the only way.
    """
    if mask is None:
        return x.sum(dim=1)
    if not syncs_allowed():
        return zero_padding(x, mask).sum(dim=1)
    total = weighted_sum(x, mask.to(x.dtype))
    if bool(torch.isfinite(total).all()):
        return total
    return zero_padding(x, mask).sum(dim=1)


class Sum(Aggregation):
    r"""Sum over particles, :math:`\alpha(X) = \sum_i x_i` (Theorem 1, Zaheer et al. 2017)."""

    @accumulate_in_float32
    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        return masked_sum(x, mask)

    @accumulate_in_float32
    def weighted(self, x: Tensor, weights: Tensor, mask: Tensor | None) -> Tensor:
        return weighted_sum(x, weights)


class Mean(Aggregation):
    r"""Mean over particles, :math:`\alpha(X) = \frac{1}{N}\sum_i x_i`.

    Sum-isomorphic only in the weak sense of chapter 3: :math:`g^{-1}(x) = (x, 1)`,
    :math:`g(s, n) = s / n` forgets ``n``, so only part 1 of Corollary 1 applies (every mean
    decomposition is a sum decomposition; the converse holds for one fixed population size).
    """

    @accumulate_in_float32
    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        if mask is None:
            return x.mean(dim=1)
        return masked_sum(x, mask) / particle_counts(x, mask)

    @accumulate_in_float32
    def weighted(self, x: Tensor, weights: Tensor, mask: Tensor | None) -> Tensor:
        return weighted_sum(x, weights) / particle_counts(x, mask)


class Max(Aggregation):
    r"""Feature-wise maximum, :math:`\alpha(X)_d = \max_i x_{i,d}` (PointNet, Qi et al. 2017).

    The gradient flows to one maximal particle per feature (a subgradient; among ties, the one
    ``torch.max`` returns), which is three times cheaper on a CPU than splitting it (``amax``).
    """

    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        return zero_padding(x, mask, -math.inf).max(dim=1).values


class Min(Aggregation):
    r"""Feature-wise minimum, :math:`\alpha(X)_d = \min_i x_{i,d}`."""

    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        return zero_padding(x, mask, math.inf).min(dim=1).values


class LogSumExp(Aggregation):
    r"""Logsumexp, :math:`\operatorname{L\Sigma E}(X)_d = \ln \sum_i \exp x_{i,d}`.

    Sum-isomorphic with :math:`g = \ln` (Corollary 1). Acts like ``max`` on large input ranges and
    like :math:`\ln N` plus the mean on small ones (:math:`\ln N + \bar x + O(\lVert x \rVert^2)`; its
    level sets are then close to those of the sum); ``N`` identical particles give :math:`\ln N + x`
    (diminishing returns). Padding is filled with :math:`-\infty`, whose gradient is exactly zero
    as long as each population keeps a real particle (which :func:`~setfuncs.population.check_population` enforces).
    """

    @accumulate_in_float32
    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        return _LogSumExp.apply(x, None if mask is None else mask.unsqueeze(-1))

    @accumulate_in_float32
    def weighted(self, x: Tensor, weights: Tensor, mask: Tensor | None) -> Tensor:
        r""":math:`\operatorname{L\Sigma E}(\{w_i x_i\})` over the real particles.

        The product :math:`w_i x_i` is this call's own temporary, so its padding is set to
        :math:`-\infty` in place and outside autograd: the logsumexp's backward pass gives exactly
        0 there (:math:`e^{-\infty}`), which is the true gradient of a padded particle, so the fill
        needs no backward pass of its own, and no copy in either pass. ``x`` must be finite on
        padding (the learnable reads pass it through :func:`finite_padding`), as ``0 \cdot x``
        enters the weights' gradient.
        """
        z = weights.unsqueeze(-1) * x
        if mask is not None:
            with torch.no_grad():
                z.masked_fill_(~mask.unsqueeze(-1), -math.inf)
        return _LogSumExp.apply(z, None)


class _LogSumExp(torch.autograd.Function):
    r"""Logsumexp over the particles of ``x: [B, N, D]``, padding (``keep`` False) at :math:`-\infty`,
    with a lean backward pass.

    The gradient is :math:`\partial \operatorname{L\Sigma E}/\partial x_i = e^{x_i - \operatorname{L\Sigma E}(X)}`,
    zero on padding. Autograd's own backward of ``logsumexp(x.masked_fill(...))`` makes three
    temporaries of ``x``'s size and a fourth pass for the fill; this one makes one and works in place
    on it, which puts the masked reduction at the cost of the dense one
    (``benchmarks/aggregations.py``). Under ``create_graph`` it stays out of place, so second
    derivatives are exact.
    """

    generate_vmap_rule = True  # so that torch.vmap (ensembles of models) batches it like any op

    @staticmethod
    def forward(x: Tensor, keep: Tensor | None) -> Tensor:
        return torch.logsumexp(x if keep is None else x.masked_fill(~keep, -math.inf), dim=1)

    @staticmethod
    def setup_context(ctx, inputs: tuple[Tensor, Tensor | None], output: Tensor) -> None:
        x, keep = inputs
        ctx.masked = keep is not None
        ctx.save_for_backward(x, output, *([keep] if ctx.masked else []))

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:
        x, out, *keep = ctx.saved_tensors
        filled = x.masked_fill(~keep[0], -math.inf) if ctx.masked else x
        if torch.is_grad_enabled():  # a second derivative is wanted: differentiable, out of place
            return torch.exp(filled - out.unsqueeze(1)) * grad.unsqueeze(1), None
        shifted = filled.sub_(out.unsqueeze(1)) if ctx.masked else filled - out.unsqueeze(1)
        return shifted.exp_().mul_(grad.unsqueeze(1)), None


class LogMeanExp(Aggregation):
    r"""Log-mean-exp, :math:`\operatorname{LME}(X)_d = \ln \frac{1}{n} \sum_i \exp x_{i,d} = \operatorname{L\Sigma E}(X)_d - \ln n`,
    ``n`` the real particles of each population.

    Not in the paper: the book's centred logsumexp (chapter *Logsumexp between max and sum*).
    ``n`` identical particles give that particle back (no :math:`\ln n` offset), and
    :math:`\operatorname{mean}(X) \le \operatorname{LME}(X) \le \max(X)` (Jensen's inequality and
    :math:`\frac{1}{n}\sum_i e^{x_i} \le e^{\max X}`). It is a sum in disguise as the mean is:
    :math:`g^{-1}(x) = (e^x, 1)`, :math:`g(s, n) = \ln(s / n)` for every ``n``
    (:func:`~setfuncs.isomorphic.lme_as_sum`); that ``g`` keeps only :math:`\frac{1}{n}\sum_i e^{x_i}`
    and forgets ``n``. For one fixed ``n`` it is :math:`\operatorname{L\Sigma E} - \ln n`, a fixed
    shift of the sum-isomorphic logsumexp. Inside an equivariant layer
    :math:`x_i - \operatorname{L\Sigma E}(X) = x_i - \operatorname{LME}(X) - \ln n`: logsumexp shifts the
    layer's input by :math:`-\ln n` against log-mean-exp, a shift that changes with ``n``.
    """

    @accumulate_in_float32
    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        return LogSumExp().reduce(x, mask) - particle_counts(x, mask).log()


class Quantile(Aggregation):
    r"""Feature-wise ``q``-quantile with linear interpolation between order statistics.

    Sort the real particles :math:`x_{(0)} \le \dots \le x_{(N-1)}`, let :math:`h = q (N-1)`:
    :math:`\alpha(X) = x_{(\lfloor h \rfloor)} + (h - \lfloor h \rfloor)(x_{(\lceil h \rceil)} - x_{(\lfloor h \rfloor)})`
    (``numpy.quantile``'s default). ``q = 0`` is ``min``, ``q = 1`` is ``max``: there :math:`h` is a
    whole number and the result is the order statistic :math:`x_{(0)}` or :math:`x_{(N-1)}` itself,
    without the interpolation, whose :math:`0 \cdot (\infty - \infty)` would make the maximum of
    :math:`\{1, 2, \infty\}` NaN.
    """

    def __init__(self, q: float, features: int | None = None) -> None:
        super().__init__(features)
        if not 0.0 <= float(q) <= 1.0:
            raise ValueError(f"quantile q must lie in [0, 1], got {q}")
        self.q = float(q)

    @accumulate_in_float32
    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        ordered = zero_padding(x, mask, math.inf).sort(dim=1).values  # padding sorts last
        h = self.q * (particle_counts(x, mask) - 1.0)  # [B, 1]
        lo, hi = h.floor(), h.ceil()
        index = lambda k: k.long().unsqueeze(-1).expand(-1, 1, x.shape[-1])  # noqa: E731
        below = ordered.gather(1, index(lo)).squeeze(1)
        if self.q in (0.0, 1.0):  # min or max: the order statistic itself, infinities included
            value = below
        else:
            above = ordered.gather(1, index(hi)).squeeze(1)
            value = below + (h - lo) * (above - below)
        # sort puts a NaN after every number, so the order statistics would skip it: propagate instead
        return value.masked_fill(_has_nan(x, mask), math.nan)

    def extra_repr(self) -> str:
        return ", ".join(filter(None, [f"q={self.q}", super().extra_repr()]))


class Median(Quantile):
    """Feature-wise median: the 0.5-quantile (mean of the two middle particles when N is even)."""

    def __init__(self, features: int | None = None) -> None:
        super().__init__(0.5, features)


class PowerMean(Aggregation):
    r"""Power mean :math:`M_p(X) = \left(\frac{1}{N}\sum_i x_i^p\right)^{1/p}` of positive particles.

    Sum-isomorphic only in the weak sense of chapter 3, as the mean is: :math:`g^{-1}(x) = (x^p, 1)`,
    :math:`g(s, n) = (s / n)^{1/p}` forgets ``n`` (part 1 of Corollary 1). ``p = 1`` is the mean,
    ``p -> inf`` approaches ``max``, ``p -> -inf`` approaches ``min``, ``p = 0`` is the geometric
    mean :math:`\exp(\frac{1}{N}\sum_i \ln x_i)`, also the limit ``p -> 0``.

    Computed three ways, each where it keeps its digits:

    * ``p = 0``: :math:`\exp(\frac{1}{N}\sum_i \ln x_i)`;
    * :math:`0 < |p| <` :data:`SMALL_EXPONENT`: :math:`x^p = 1 + (e^{p \ln x} - 1)` rounds to 1 as
      ``p -> 0`` (``pmean(1e-7)`` of {1, 4} was 1.0, not 2.0), so the power mean is taken from the
      differences, :math:`M_p(X) = \exp\big(\frac{1}{p} \operatorname{log1p}\big(\frac{1}{N}\sum_i
      \operatorname{expm1}(p \ln x_i)\big)\big)`, exact for every ``p`` and tending to the
      geometric mean; ``expm1`` and ``log1p`` keep the digits that ``x^p`` and ``ln`` lose;
    * otherwise directly, good to about ``eps / |p|`` (the power ``1/p`` multiplies the rounding
      error of the mean by ``1/|p|``: 1e-5 in float32 at ``|p| = 0.01``), unless :math:`x^p` over- or
      underflows (``p = 1000``, particles of 4): then :math:`M_p(X) = s\, M_p(X / s)` with ``s`` the
      largest particle (``p > 0``) or the smallest (``p < 0``), so that every
      :math:`(x_i / s)^p \le 1` and the one at ``s`` is 1.
    """

    def __init__(self, p: float, features: int | None = None) -> None:
        super().__init__(features)
        if not math.isfinite(float(p)):
            raise ValueError(f"power mean exponent p must be finite (use max or min for the limits), got {p}")
        self.p = float(p)

    @accumulate_in_float32
    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        x = zero_padding(x, mask, 1.0)
        if not syncs_allowed():
            raise SyncRequired("the power mean checks that its particles are positive, which reads them; "
                               "train it outside sync_free (fit does so on the CPU, and falls back to an "
                               "eager step on a GPU)")
        if bool((x.detach() <= 0).any()):  # one read; NaN compares False and propagates below
            raise ValueError("the power mean is defined for positive particles only; found values <= 0 "
                             "(shift the input or pass it through softplus/exp first)")
        if self.p == 0.0:
            return torch.exp(Mean().reduce(torch.log(x), mask))
        if abs(self.p) < SMALL_EXPONENT:
            return torch.exp(torch.log1p(Mean().reduce(torch.expm1(self.p * torch.log(x)), mask)) / self.p)
        fast = Mean().reduce(x.pow(self.p), mask).pow(1.0 / self.p)
        if bool((torch.isfinite(fast) & (fast > 0)).all()):  # positive particles have a positive mean
            return fast
        # x^p overflowed or underflowed (or a NaN came in): scale by the largest particle (p > 0) or the
        # smallest (p < 0), so that (x / scale)^p <= 1: M_p(X) = scale * M_p(X / scale) cannot overflow
        scale = (Max() if self.p > 0 else Min()).reduce(x, mask).detach().unsqueeze(1)
        return scale.squeeze(1) * Mean().reduce((x / scale).pow(self.p), mask).pow(1.0 / self.p)

    def extra_repr(self) -> str:
        return ", ".join(filter(None, [f"p={self.p}", super().extra_repr()]))


class SoftmaxWeightedSum(Aggregation):
    r"""Softmax-weighted sum :math:`\alpha(X)_d = \sum_i \operatorname{softmax}_i(x_{\cdot,d}/\tau)\, x_{i,d}`.

    The temperature :math:`\tau > 0` interpolates between ``max`` (:math:`\tau \to 0`) and ``mean``
    (:math:`\tau \to \infty`). With ``learnable=True`` it is a parameter (stored as
    :math:`\ln\tau`).

    A temperature so small that :math:`x_i / \tau` overflows (``softmax(1e-40)`` on particles of
    order 1) would make every logit infinite and the softmax NaN; there the logits are taken
    relative to the largest particle, :math:`(x_i - \max_j x_j) / \tau \le 0` (the softmax does not
    change), which gives the limit: the largest particle, or the mean of those tied for it. A
    temperature that underflowed to 0 counts as the smallest normal number of its dtype.
    """

    def __init__(self, temperature: float = 1.0, learnable: bool = False, features: int | None = None) -> None:
        super().__init__(features)
        if not (math.isfinite(float(temperature)) and float(temperature) > 0):
            raise ValueError(f"temperature must be a positive finite number, got {temperature}")
        log_t = torch.tensor(math.log(float(temperature)))
        if learnable:
            self.log_temperature = nn.Parameter(log_t)
        else:
            self.register_buffer("log_temperature", log_t)
        self.learnable_temperature = learnable

    @property
    def temperature(self) -> Tensor:
        return self.log_temperature.exp()

    @accumulate_in_float32
    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        x = zero_padding(x, mask)
        if syncs_allowed():  # the plain logits x / tau, unless one of them overflowed
            out = _softmax_weighted(x / self.temperature, x, mask)
            if bool(torch.isfinite(out).all()):
                return out
        return _softmax_weighted(self._shifted_logits(x, mask), x, mask)

    def _shifted_logits(self, x: Tensor, mask: Tensor | None) -> Tensor:
        r""":math:`(x_i - \max_j x_j) / \tau`, never above 0 (the maximum over the real particles,
        outside autograd: the softmax does not depend on it)."""
        largest = zero_padding(x, mask, -math.inf).amax(dim=1, keepdim=True).detach()
        temperature = self.temperature
        return (x - largest) / temperature.clamp_min(torch.finfo(temperature.dtype).tiny)

    def extra_repr(self) -> str:
        t = f"temperature={float(self.temperature):.4g}, learnable={self.learnable_temperature}"
        return ", ".join(filter(None, [t, super().extra_repr()]))


def _softmax_weighted(logits: Tensor, x: Tensor, mask: Tensor | None) -> Tensor:
    r""":math:`\sum_i \operatorname{softmax}_i(\ell)\, x_i` over the real particles (padding's logits set to
    :math:`-\infty`)."""
    return (zero_padding(logits, mask, -math.inf).softmax(dim=1) * x).sum(dim=1)
