"""How attention weights enter a learnable reduce: the paper's reduce({w_i m_i}) cannot ignore a
particle (weight 0 gives the value 0, not nothing); reduce({m_i + ln w_i}) (weighting="log") can."""

from __future__ import annotations

import math

import pytest
import torch

import setfuncs as sf
from setfuncs.learnable import log_normalize, normalize

#: m = (-1, -2, -3) in the first feature; the second feature makes the query's logits (-1e4, -1e4, 0).
M = torch.tensor([[[-1.0, -1.0], [-2.0, -1.0], [-3.0, 0.0]]], dtype=torch.float64)
QUERY = torch.tensor([[0.0, 1e4]], dtype=torch.float64)


def read(reduce: str, weighting: str) -> float:
    agg = sf.QueryAggregation(2, reduce=reduce, normalize="sigmoid", weighting=weighting).double()
    agg.scale = 1.0
    return float(agg.read(M, None, QUERY)[0][0, 0])


def test_a_zero_weight_leaves_the_value_zero_in_the_papers_form() -> None:
    """max(w * m) = 0 and LSE(w * m) = ln(1 + 1 + e^(-1.5)) although only the third particle has weight."""
    assert read("max", "multiply") == pytest.approx(0.0, abs=1e-12)
    assert read("lse", "multiply") == pytest.approx(math.log(2 + math.exp(-1.5)))


def test_a_zero_weight_removes_the_particle_in_the_log_form() -> None:
    """max(m + ln w) = -3 + ln 0.5 and LSE(m + ln w) = ln(0.5 e^-3): the weighted particle alone."""
    assert read("max", "log") == pytest.approx(-3 + math.log(0.5))
    assert read("lse", "log") == pytest.approx(-3 + math.log(0.5))
    assert read("lme", "log") == pytest.approx(-3 + math.log(0.5) - math.log(3))


@pytest.mark.parametrize("kind", ["softmax", "softmax-n", "sigmoid"])
def test_log_weights_are_the_log_of_the_weights(kind: str) -> None:
    torch.manual_seed(0)
    logits = torch.randn(3, 6, dtype=torch.float64) * 3
    mask = torch.rand(3, 6) > 0.3
    mask[:, 0] = True
    log_w = log_normalize(logits, mask, kind)
    torch.testing.assert_close(log_w.exp(), normalize(logits, mask, kind))
    assert torch.isneginf(log_w[~mask]).all()


def test_uniform_attention_gives_the_plain_aggregation_in_both_forms() -> None:
    """Equal logits: softmax-n weights are all 1, so both forms read back plain LSE / LME."""
    x = torch.randn(4, 7, 3, dtype=torch.float64)
    for reduce, plain in (("lse", sf.LogSumExp()), ("lme", sf.LogMeanExp())):
        for weighting in ("multiply", "log"):
            agg = sf.QueryAggregation(3, reduce=reduce, weighting=weighting).double()
            with torch.no_grad():
                agg.query.zero_()
            torch.testing.assert_close(agg(x), plain(x))


def test_log_weighting_is_refused_where_it_has_no_meaning() -> None:
    with pytest.raises(ValueError, match="weighting='log'"):
        sf.aggregation("r-sum", features=4, weighting="log")
    with pytest.raises(ValueError, match="weighting='log'"):
        sf.aggregation("q-lse", features=4, weighting="log", normalize="identity")
    with pytest.raises(ValueError, match="unknown weighting"):
        sf.aggregation("q-lse", features=4, weighting="add")


@pytest.mark.parametrize("reduce", sorted(sf.learnable.REDUCES))
@pytest.mark.parametrize("masked", [False, True], ids=["dense", "masked"])
def test_weighted_is_the_reduce_of_the_weighted_particles(reduce: str, masked: bool) -> None:
    """Every reduce's weighted form (a matrix product for sum and mean, an in-place filled product for
    logsumexp) has the value and the gradients of reduce({w_i x_i}); padding holds finite junk."""
    torch.manual_seed(0)
    x = torch.randn(3, 6, 4, dtype=torch.float64) * 3
    mask = torch.tensor([[True] * 6, [True, True, False, True, False, False], [False, True] + [False] * 4])
    mask = mask if masked else None
    weights = torch.rand(3, 6, dtype=torch.float64)
    weights = weights if mask is None else weights * mask
    aggregation = sf.learnable.REDUCES[reduce]()
    results = []
    for compute in (lambda a, w: aggregation.weighted(a, w, mask), lambda a, w: aggregation.reduce(w[..., None] * a, mask)):
        a, w = x.clone().requires_grad_(), weights.clone().requires_grad_()
        out = compute(a, w)
        out.backward(torch.ones_like(out))
        results.append((out.detach(), a.grad, w.grad))
    (out, x_grad, w_grad), (out_ref, x_grad_ref, w_grad_ref) = results
    torch.testing.assert_close(out, out_ref)
    torch.testing.assert_close(x_grad, x_grad_ref)
    # the weights of padded particles are 0 by contract and come from normalize, whose backward pass
    # zeroes their gradient; only the real particles' weights have a gradient to compare
    real = torch.ones_like(weights, dtype=torch.bool) if mask is None else mask
    torch.testing.assert_close(w_grad[real], w_grad_ref[real])
