r"""Learnable aggregations: query, recurrent (Definition 3 of the paper) and read-process-write.

A recurrent aggregation reads an embedded population :math:`\{m_i\}` ``T`` times:

.. math::
    q_t &= \operatorname{query}(q_{t-1}, a_{t-1})                     && \text{(LSTM cell; } q_1 \text{ a learned constant)}\\
    \hat w_{i,t} &= \operatorname{attention}(m_i, q_t) = m_i^\top q_t / \sqrt{D} \\
    w_t &= \operatorname{normalize}(\hat w_t)                         && \text{(equivariant: softmax, } N\cdot\text{softmax, sigmoid, identity)}\\
    a_t &= \operatorname{reduce}(\{ w_{i,t}\, m_i \})                  && \text{(any invariant plain aggregation)}\\
    a &= \operatorname{readout}(a_{1:T})                               && \text{(an LSTM over } a_T, \dots, a_1 \text{)}

It is invariant because ``normalize`` is equivariant (permuting particles permutes the weights
with them) and ``reduce`` is invariant; the queries depend on the population only through earlier
invariant results. A *query aggregation* is the case ``T = 1`` with a learned constant query.
*Read-process-write* (Vinyals et al. 2016, "Order Matters") is the model this refines: softmax,
weighted sum, and the last result :math:`a_T` as output. The :math:`1/\sqrt{D}` scale (not in the
paper) keeps initial attention logits of order one; a constant scale leaves the invariance
argument unchanged. The book derives all three in the chapter *Learnable aggregations*. (The paper
calls the readout :math:`g`; the book keeps :math:`g` for the map of a sum-isomorphic aggregation.)

The default ``normalize`` keeps the weighted reduce on the scale of the plain one: ``softmax``
(weights sum to one) for ``sum``, which makes it a weighted average as in the paper, and
``softmax-n`` (``N`` times the softmax: weights average to one) for every other reduce, so that
uniform attention gives back the plain aggregation. With plain softmax weights, ``lse`` would
read :math:`\ln\sum_i e^{w_i m_i} \approx \ln N + \frac{1}{N}\sum_i w_i m_i`: a signal that
shrinks like ``1/N``.

**Weighting.** The paper reduces the weighted particles, :math:`\operatorname{reduce}(\{w_i m_i\})`
(``weighting="multiply"``, the default). A weight of 0 then turns a particle into the value 0, not
into nothing: :math:`\max(\{0 \cdot m_1, \dots\})` is at least 0 however negative the other
particles are, and :math:`\operatorname{L\Sigma E}` still counts :math:`e^0 = 1` for it. For the
log-semiring reduces (``lse``, ``lme``, ``max``), ``weighting="log"`` adds the log-weights instead,
:math:`\operatorname{reduce}(\{m_i + \ln w_i\})`: for ``lse`` this is
:math:`\ln \sum_i w_i e^{m_i}`, for ``lme`` :math:`\ln \frac{1}{N} \sum_i w_i e^{m_i}`: with softmax-n
weights :math:`\ln \sum_i \operatorname{softmax}_i e^{m_i}` (an attention-weighted log-mean-exp), with
softmax weights the same less :math:`\ln N`. A weight of 0 removes the particle
(:math:`\ln 0 = -\infty`). The log-weights are computed directly (``log_softmax``, ``logsigmoid``),
never as the log of a rounded weight.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .plain import Aggregation, LogMeanExp, LogSumExp, Max, Mean, Median, Min, Sum, finite_padding, zero_padding
from .population import particle_counts

__all__ = ["REDUCES", "NORMALIZES", "WEIGHTINGS", "LOG_WEIGHTED", "default_normalize", "normalize", "log_normalize",
           "lstm_cell", "lstm_cell_from_products", "QueryAggregation", "RecurrentAggregation", "ReadProcessWrite"]

#: Plain aggregations a learnable aggregation can wrap as its ``reduce``.
REDUCES: dict[str, type[Aggregation]] = {
    "sum": Sum, "mean": Mean, "max": Max, "min": Min, "lse": LogSumExp, "lme": LogMeanExp, "median": Median,
}
#: Equivariant ``normalize`` maps of the attention logits ``[B, N]``.
NORMALIZES = ("softmax", "softmax-n", "sigmoid", "identity")
#: How the weights enter the reduce, the paper's ``reduce({w_i m_i})`` or ``reduce({m_i + ln w_i})``.
WEIGHTINGS = ("multiply", "log")
#: The reduces for which ``weighting="log"`` is defined.
LOG_WEIGHTED = ("lse", "lme", "max")


def default_normalize(reduce: str) -> str:
    """``softmax`` for ``sum`` (a weighted average), ``softmax-n`` for the other reduces."""
    return "softmax" if reduce == "sum" else "softmax-n"


def normalize(logits: Tensor, mask: Tensor | None, kind: str) -> Tensor:
    """Equivariant map of attention logits ``[B, N]`` to weights; padded particles get weight 0."""
    if kind in ("softmax", "softmax-n"):
        weights = zero_padding(logits.unsqueeze(-1), mask, -math.inf).squeeze(-1).softmax(dim=1)
        return weights if kind == "softmax" else weights * particle_counts(logits.unsqueeze(-1), mask)
    if kind == "sigmoid":
        weights = logits.sigmoid()
    else:
        weights = logits
    return zero_padding(weights.unsqueeze(-1), mask).squeeze(-1)


def log_normalize(logits: Tensor, mask: Tensor | None, kind: str) -> Tensor:
    """The logarithm of the weights of :func:`~setfuncs.learnable.normalize`, computed directly (``-inf`` on padding)."""
    if kind in ("softmax", "softmax-n"):
        log_w = zero_padding(logits.unsqueeze(-1), mask, -math.inf).squeeze(-1).log_softmax(dim=1)
        return log_w if kind == "softmax" else log_w + particle_counts(logits.unsqueeze(-1), mask).log()
    if kind == "sigmoid":
        return zero_padding(nn.functional.logsigmoid(logits).unsqueeze(-1), mask, -math.inf).squeeze(-1)
    raise ValueError(f"weighting='log' needs positive weights: normalize softmax, softmax-n or sigmoid, not {kind!r}")


def lstm_cell(x: Tensor, state: tuple[Tensor, Tensor], weight_ih: Tensor, weight_hh: Tensor, bias_ih: Tensor,
              bias_hh: Tensor) -> tuple[Tensor, Tensor]:
    r"""One LSTM step, the equations of :class:`torch.nn.LSTMCell` (:func:`lstm_cell_from_products`).

    Computed by PyTorch's ``torch.lstm_cell`` (on CUDA, one fused kernel for the elementwise part
    forward and one backward), except under a ``torch.func`` transform (``torch.vmap`` of an
    ensemble, :func:`setfuncs.ensemble.fit_ensemble`), which has no rule for it: there by
    :func:`lstm_cell_from_products`. Returns ``(h', c')``.
    """
    if torch._C._functorch.maybe_current_level() is None:      # no vmap/grad transform is running
        return torch.lstm_cell(x, state, weight_ih, weight_hh, bias_ih, bias_hh)
    return lstm_cell_from_products(x, state, weight_ih, weight_hh, bias_ih, bias_hh)


def lstm_cell_from_products(x: Tensor, state: tuple[Tensor, Tensor], weight_ih: Tensor, weight_hh: Tensor,
                            bias_ih: Tensor, bias_hh: Tensor) -> tuple[Tensor, Tensor]:
    r"""One LSTM step from matrix products and elementwise ops, which ``torch.vmap`` batches:

    .. math::
        (i, f, g, o) &= x W_{ih}^\top + b_{ih} + h W_{hh}^\top + b_{hh} \quad\text{(four blocks of } D\text{)}\\
        c' &= \sigma(f) \odot c + \sigma(i) \odot \tanh(g), \qquad h' = \sigma(o) \odot \tanh(c').

    Returns ``(h', c')``.
    """
    h, c = state
    i, f, g, o = (x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh).chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


#: The largest float16 number: a learnable aggregation refuses more float16 particles than this.
FLOAT16_MAX = float(torch.finfo(torch.float16).max)


class _AttentionRead(Aggregation):
    """Shared plumbing: one read of the population with a query, ``a = reduce({w_i m_i})`` (or
    ``reduce({m_i + ln w_i})`` with ``weighting="log"``)."""

    def __init__(self, features: int, reduce: str, normalize: str | None, weighting: str = "multiply") -> None:
        if not isinstance(features, int) or features < 1:
            raise ValueError(f"a learnable aggregation needs features=<number of features D>, got {features!r}")
        super().__init__(features)
        if reduce not in REDUCES:
            raise ValueError(f"unknown reduce {reduce!r}; choose one of {sorted(REDUCES)}")
        normalize = default_normalize(reduce) if normalize is None else normalize
        if normalize not in NORMALIZES:
            raise ValueError(f"unknown normalize {normalize!r}; choose one of {list(NORMALIZES)}")
        if weighting not in WEIGHTINGS:
            raise ValueError(f"unknown weighting {weighting!r}; choose one of {list(WEIGHTINGS)}")
        if weighting == "log" and (reduce not in LOG_WEIGHTED or normalize == "identity"):
            raise ValueError(f"weighting='log' adds ln w_i to the particles, which suits the reduces "
                             f"{list(LOG_WEIGHTED)} with positive weights (not normalize='identity'); got "
                             f"reduce={reduce!r}, normalize={normalize!r}")
        self.reducer = REDUCES[reduce]()
        self.reduce_name, self.normalize_name, self.weighting = reduce, normalize, weighting
        self.scale = 1.0 / math.sqrt(features)

    def read(self, m: Tensor, mask: Tensor | None, query: Tensor) -> tuple[Tensor, Tensor]:
        """One read: returns the result ``a_t: [B, D]`` and the weights ``w_t: [B, N]``."""
        logits = torch.bmm(m, query.unsqueeze(-1)).squeeze(-1) * self.scale
        if self.weighting == "log":
            log_w = log_normalize(logits, mask, self.normalize_name)
            return self.reducer.reduce(m + log_w.unsqueeze(-1), mask), log_w.exp()
        weights = normalize(logits, mask, self.normalize_name)
        return self.reducer.weighted(m, weights, mask), weights

    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        if x.dtype == torch.float16 and x.shape[1] > FLOAT16_MAX:
            raise ValueError(f"a learnable aggregation of float16 particles holds the particle count (and its "
                             f"softmax-n weights) in float16, whose largest number is {FLOAT16_MAX:.0f}; got "
                             f"{x.shape[1]} particles: pass float32 or bfloat16 input, or fewer particles")
        return self.attend(x, mask)[0]

    def attend(self, x: Tensor, mask: Tensor | None = None, return_reads: bool = False
               ) -> tuple[Tensor, Tensor] | tuple[Tensor, Tensor, tuple[Tensor, ...]]:
        r"""The aggregate ``[B, D]`` and the attention weights of every read ``[B, T, N]``; with
        ``return_reads``, also the reads :math:`a_1, \dots, a_T` (a tuple of ``[B, D]``), the very
        tensors the aggregate is computed from, so that ``torch.autograd.grad(loss, reads)`` gives
        :math:`\partial L / \partial a_t`."""
        raise NotImplementedError

    def extra_repr(self) -> str:
        weighting = "" if self.weighting == "multiply" else f", weighting={self.weighting}"
        return f"features={self.features}, reduce={self.reduce_name}, normalize={self.normalize_name}{weighting}"


class QueryAggregation(_AttentionRead):
    r"""Query aggregation: ``T = 1`` with a learned constant query :math:`q`,
    :math:`a = \operatorname{reduce}(\{\operatorname{normalize}(m_i^\top q/\sqrt{D})_i\, m_i\})`."""

    def __init__(self, features: int, reduce: str = "sum", normalize: str | None = None,
                 weighting: str = "multiply") -> None:
        super().__init__(features, reduce, normalize, weighting)
        self.query = nn.Parameter(torch.randn(features) / math.sqrt(features))

    def attend(self, x: Tensor, mask: Tensor | None = None, return_reads: bool = False
               ) -> tuple[Tensor, Tensor] | tuple[Tensor, Tensor, tuple[Tensor, ...]]:
        """The result ``[B, D]`` and the attention weights ``[B, 1, N]`` (one step); with
        ``return_reads``, also ``(a,)``: the one read is the result."""
        m = finite_padding(x, mask)
        a, w = self.read(m, mask, self.query.expand(x.shape[0], -1))
        return (a, w.unsqueeze(1), (a,)) if return_reads else (a, w.unsqueeze(1))


class RecurrentAggregation(_AttentionRead):
    r"""Recurrent aggregation (Definition 3): ``steps`` reads with queries from an LSTM cell,
    then a readout over the step results.

    Args:
        features: particle features ``D`` (the output has ``D`` features too).
        steps: number of reads ``T``.
        reduce: name of the plain aggregation applied to the weighted particles.
        normalize: ``"softmax"`` (over the particles), ``"softmax-n"`` (``N`` times it), ``"sigmoid"``
            or ``"identity"``; ``None`` picks :func:`default_normalize`.
        readout: ``"backward"`` — an LSTM over :math:`a_T, \dots, a_1`, its last state is the
            output (the paper's choice); ``"last"`` — :math:`a_T` (read-process-write).
        weighting: ``"multiply"`` (the paper's :math:`\operatorname{reduce}(\{w_i m_i\})`) or
            ``"log"`` (:math:`\operatorname{reduce}(\{m_i + \ln w_i\})`, for ``lse``, ``lme``, ``max``).
    """

    def __init__(self, features: int, steps: int = 3, reduce: str = "lse", normalize: str | None = None,
                 readout: str = "backward", weighting: str = "multiply") -> None:
        super().__init__(features, reduce, normalize, weighting)
        if not isinstance(steps, int) or steps < 1:
            raise ValueError(f"steps must be a positive int, got {steps!r}")
        if readout not in ("backward", "last"):
            raise ValueError(f"readout must be 'backward' or 'last', got {readout!r}")
        self.steps, self.readout = steps, readout
        self.query0 = nn.Parameter(torch.randn(features) / math.sqrt(features))
        # nn.LSTMCell / nn.LSTM hold the weights (and draw them as PyTorch does); lstm_cell computes,
        # with PyTorch's cell or, under torch.vmap, from matrix products
        self.query = nn.LSTMCell(features, features)
        self.backward_rnn = nn.LSTM(features, features, batch_first=True) if readout == "backward" else None

    def attend(self, x: Tensor, mask: Tensor | None = None, return_reads: bool = False
               ) -> tuple[Tensor, Tensor] | tuple[Tensor, Tensor, tuple[Tensor, ...]]:
        """The aggregate ``[B, D]`` and the attention weights of every step ``[B, T, N]``; with
        ``return_reads``, also the reads ``(a_1, ..., a_T)``, each ``[B, D]``, from which the
        queries and the aggregate are computed (gradients with respect to them are the gradients
        that reach each read)."""
        m = finite_padding(x, mask)
        q = self.query0.expand(x.shape[0], -1)
        cell = torch.zeros_like(q)
        results, weights = [], []
        cell_weights = (self.query.weight_ih, self.query.weight_hh, self.query.bias_ih, self.query.bias_hh)
        for t in range(self.steps):
            if t > 0:
                q, cell = lstm_cell(results[-1], (q, cell), *cell_weights)
            a, w = self.read(m, mask, q)
            results.append(a)
            weights.append(w)
        if self.backward_rnn is None:
            out = results[-1]
        else:  # the readout: an LSTM over a_T, ..., a_1 from zero state, its last hidden state the output
            rnn = self.backward_rnn
            state = (torch.zeros_like(q), torch.zeros_like(q))
            for a in reversed(results):
                state = lstm_cell(a, state, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0)
            out = state[0]
        attended = (out, torch.stack(weights, dim=1))
        return (*attended, tuple(results)) if return_reads else attended

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, steps={self.steps}, readout={self.readout}"


class ReadProcessWrite(RecurrentAggregation):
    r"""Read-process-write (Vinyals et al. 2016): softmax attention, weighted sum, output :math:`a_T`.

    Eqs. (6)-(10) of the paper; the baseline that recurrent aggregation refines by a general
    ``reduce`` and a backward readout over the step results.
    """

    def __init__(self, features: int, steps: int = 3) -> None:
        super().__init__(features, steps=steps, reduce="sum", normalize="softmax", readout="last")
