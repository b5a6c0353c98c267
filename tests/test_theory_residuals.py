"""Numbers behind two corrected statements of the book and the package's docstrings.

* ``setfuncs.learnable``: a log-weighted ``lme`` read, :math:`\\operatorname{LME}(\\{m_i + \\ln w_i\\})`,
  is :math:`\\ln \\sum_i \\operatorname{softmax}_i e^{m_i}` with softmax-n weights and the same less
  :math:`\\ln N` with softmax weights (the two differ by exactly :math:`\\ln 7` at ``N = 7``).
* ``setfuncs.plain.LogSumExp``: on small inputs logsumexp is :math:`\\ln N` plus the mean (not a
  shifted sum), up to the second-order term, half the variance of the particles.
"""

from __future__ import annotations

import math

import pytest
import torch

import setfuncs as sf
from setfuncs.learnable import QueryAggregation, RecurrentAggregation

N = 7
D = 5


def _embedded_population() -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(4, N, D, dtype=torch.float64)


def _attention_mean_of_exp(m: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    r""":math:`\ln \sum_i \operatorname{softmax}_i e^{m_i}`, feature by feature, with the logits
    :math:`m_i^\top q / \sqrt{D}` of a query aggregation, computed here without the package."""
    logits = (m @ query) / math.sqrt(m.shape[-1])                       # [B, N]
    softmax = torch.exp(logits - torch.logsumexp(logits, dim=1, keepdim=True))
    return torch.log((softmax.unsqueeze(-1) * m.exp()).sum(dim=1))    # [B, D]


def _query_read(normalize: str, query: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    agg = QueryAggregation(D, reduce="lme", normalize=normalize, weighting="log").double()
    with torch.no_grad():
        agg.query.copy_(query)
        return agg(m)


def test_log_weighted_lme_is_attention_weighted_log_mean_exp_for_softmax_n_only() -> None:
    """softmax-n: ln sum_i softmax_i e^{m_i}; softmax: the same less ln N, exactly ln 7 apart at N = 7."""
    m = _embedded_population()
    query = torch.randn(D, dtype=torch.float64)
    expected = _attention_mean_of_exp(m, query)
    softmax_n = _query_read("softmax-n", query, m)
    softmax = _query_read("softmax", query, m)
    torch.testing.assert_close(softmax_n, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(softmax, expected - math.log(N), rtol=0, atol=1e-12)
    gap = softmax_n - softmax
    torch.testing.assert_close(gap, torch.full_like(gap, math.log(7)), rtol=0, atol=1e-12)
    # the gap is ln N, not a rounding artefact: it is far larger than the tolerance above
    assert gap.min().item() > 1.9


def test_the_same_reads_hold_inside_a_recurrent_aggregation() -> None:
    """A one-step recurrent aggregation with readout "last" reads what the query aggregation reads."""
    m = _embedded_population()
    for normalize, offset in (("softmax-n", 0.0), ("softmax", math.log(N))):
        agg = RecurrentAggregation(D, steps=1, reduce="lme", normalize=normalize, readout="last",
                                   weighting="log").double()
        with torch.no_grad():
            out = agg(m)
            expected = _attention_mean_of_exp(m, agg.query0.detach()) - offset
        torch.testing.assert_close(out, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("scale", [1e-3, 3e-4])
def test_lse_on_small_inputs_is_log_n_plus_the_mean_to_second_order(scale: float) -> None:
    r"""For particles within r of their mean, with V their (population) variance,

    .. math:: \big|\operatorname{L\Sigma E}(x) - \ln N - \bar x - V/2\big| \le r^3 e^r / 6 + (r^2/2 + r^3 e^r/6)^2,

    from :math:`e^y = 1 + y + y^2/2 + R`, :math:`|R| \le |y|^3 e^{|y|} / 6`, averaged over the
    particles, and :math:`|\ln(1 + u) - u| \le u^2` for :math:`|u| \le 1/2`. So ``ln N`` plus the
    mean leaves an error of about ``V/2``, below the variance itself; a shifted *sum* misses by the
    sum of the particles, orders of magnitude more."""
    torch.manual_seed(1)
    x = scale * torch.randn(64, 20, 3, dtype=torch.float64)
    n = x.shape[1]
    lse = sf.LogSumExp()(x)
    mean = sf.Mean()(x)
    centred = x - mean.unsqueeze(1)
    variance = centred.pow(2).mean(dim=1)
    r = centred.abs().amax(dim=1)
    bound = r**3 * r.exp() / 6 + (r**2 / 2 + r**3 * r.exp() / 6) ** 2

    residual = lse - math.log(n) - mean
    assert ((residual - variance / 2).abs() <= bound + 1e-15).all()
    # the residual is the second-order term: positive, below the variance, well above the bound
    assert (residual > 0).all() and (residual < variance).all()
    assert (variance / 2 > 10 * bound).all()
    # "a shifted sum" would be off by the sum of the particles, far more than the variance term
    shifted_sum = math.log(n) + x.sum(dim=1)
    assert ((lse - shifted_sum).abs().median() > 100 * variance.median()).item()
