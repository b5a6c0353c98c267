r"""Sum isomorphism (Corollary 1 of the paper): aggregations :math:`\alpha_g = g \circ \sum \circ g^{-1}`.

If :math:`g` is invertible, a sum decomposition :math:`\rho \circ \sum \circ \phi` can be rewritten as
:math:`(\rho \circ g^{-1}) \circ \alpha_g \circ (g \circ \phi)` and vice versa, so Theorems 1 and 2
hold for :math:`\alpha_g` as well. Examples (derived in the book's chapter *Sum isomorphism*):

* mean: :math:`g^{-1}(x) = (x, 1)`, :math:`g(s, n) = s / n`;
* logsumexp: :math:`g^{-1} = \exp`, :math:`g = \ln`;
* log-mean-exp: :math:`g^{-1}(x) = (e^x, 1)`, :math:`g(s, n) = \ln(s / n)`;
* power mean: :math:`g^{-1}(x) = (x^p, 1)`, :math:`g(s, n) = (s / n)^{1/p}`.

For the mean, log-mean-exp and the power means, ``g`` is only a left inverse of ``g_inv`` (``g(s, n) = s / n``
forgets ``n``): every :math:`\alpha_g`-decomposition is a sum decomposition, but the converse
needs a fixed population size (the mean cannot tell ``{x}`` from ``{x, x}``).

Here ``g`` and ``g_inv`` act on the last (feature) axis; ``g_inv`` may change the number of
features (the mean appends a constant 1 that counts the particles).
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor

from .plain import Aggregation, zero_padding

__all__ = ["SumIsomorphic", "mean_as_sum", "lse_as_sum", "lme_as_sum", "power_mean_as_sum"]


class SumIsomorphic(Aggregation):
    r"""The aggregation :math:`\alpha_g(X) = g\left(\sum_i g^{-1}(x_i)\right)`.

    Args:
        g: maps the summed representation ``[B, D']`` back to ``[B, D_out]``.
        g_inv: maps each particle ``[..., D]`` into the space where it is summed, ``[..., D']``.
        domain_fill: a value inside ``g_inv``'s domain that padded particles are set to before
            ``g_inv`` (their image is then dropped), so junk in padding never reaches ``g_inv``.
    """

    def __init__(self, g: Callable[[Tensor], Tensor], g_inv: Callable[[Tensor], Tensor], features: int | None = None,
                 domain_fill: float = 1.0) -> None:
        super().__init__(features)
        if not (callable(g) and callable(g_inv)):
            raise TypeError("SumIsomorphic(g, g_inv) needs two callables on tensors")
        self.g, self.g_inv, self.domain_fill = g, g_inv, domain_fill

    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        embedded = self.g_inv(zero_padding(x, mask, self.domain_fill))
        return self.g(zero_padding(embedded, mask).sum(dim=1))


def _append_one(x: Tensor) -> Tensor:
    return torch.cat([x, torch.ones_like(x[..., :1])], dim=-1)


def _divide_by_last(s: Tensor) -> Tensor:
    return s[..., :-1] / s[..., -1:]


def mean_as_sum() -> SumIsomorphic:
    r"""Mean as a sum in an isomorphic space: :math:`g^{-1}(x) = (x, 1)`, :math:`g(s, n) = s/n`."""
    return SumIsomorphic(_divide_by_last, _append_one)


def lse_as_sum() -> SumIsomorphic:
    r"""Logsumexp as a sum in an isomorphic space: :math:`g^{-1} = \exp`, :math:`g = \ln`.

    Numerically naive on purpose (``exp`` overflows for inputs above ~88 in float32), which is why
    :class:`setfuncs.plain.LogSumExp` uses the max-shifted form.
    """
    return SumIsomorphic(torch.log, torch.exp)


def lme_as_sum() -> SumIsomorphic:
    r"""Log-mean-exp as a sum: :math:`g^{-1}(x) = (e^x, 1)`, :math:`g(s, n) = \ln(s/n)`.

    The mean's construction with :math:`e^x` for :math:`x`, valid for every ``n``; ``g`` keeps only
    :math:`\frac{1}{n}\sum_i e^{x_i}` and forgets ``n``, as the mean's does. For one fixed ``n``,
    log-mean-exp is :math:`\operatorname{L\Sigma E} - \ln n`, a fixed shift of the sum-isomorphic
    logsumexp. Numerically naive (see :func:`lse_as_sum`).
    """
    return SumIsomorphic(lambda s: torch.log(_divide_by_last(s)), lambda x: _append_one(torch.exp(x)))


def power_mean_as_sum(p: float) -> SumIsomorphic:
    r"""Power mean as a sum: :math:`g^{-1}(x) = (x^p, 1)`, :math:`g(s, n) = (s/n)^{1/p}`, ``p != 0``."""
    if p == 0:
        raise ValueError("p = 0 (the geometric mean) is the limit, not a power: use g_inv = log, "
                         "g = exp of the mean, i.e. SumIsomorphic(lambda s: torch.exp(s[..., :-1] / s[..., -1:]), "
                         "lambda x: torch.cat([torch.log(x), torch.ones_like(x[..., :1])], -1))")
    return SumIsomorphic(lambda s: _divide_by_last(s).pow(1.0 / p), lambda x: _append_one(x.pow(p)))
