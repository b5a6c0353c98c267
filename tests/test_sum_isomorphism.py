"""Sum isomorphism (Corollary 1): mean, logsumexp and power means are sums in an isomorphic space,
and a sum decomposition can be rewritten through any alpha_g and back."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

import setfuncs as sf
from conftest import populations

PAIRS = [
    ("mean", sf.mean_as_sum, sf.Mean, False),
    ("lse", sf.lse_as_sum, sf.LogSumExp, False),
    ("lme", sf.lme_as_sum, sf.LogMeanExp, False),
    ("pmean-2", lambda: sf.power_mean_as_sum(2.0), lambda: sf.PowerMean(2.0), True),
    ("pmean--1.5", lambda: sf.power_mean_as_sum(-1.5), lambda: sf.PowerMean(-1.5), True),
]


@given(data=st.data(), pair=st.sampled_from(PAIRS))
def test_isomorphic_sum_equals_direct_implementation(data, pair) -> None:
    _, as_sum, direct, positive = pair
    x, mask = data.draw(populations(positive=positive))
    torch.testing.assert_close(as_sum()(x, mask), direct()(x, mask), rtol=1e-10, atol=1e-10)


@given(data=st.data())
def test_sum_decomposition_rewrites_through_alpha_g(data) -> None:
    """rho(sum phi(x)) == (rho o g^-1)(alpha_g((g o phi)(x))) with g = ln (the corollary's proof)."""
    x, mask = data.draw(populations())
    torch.manual_seed(0)
    phi = torch.nn.Sequential(torch.nn.Linear(x.shape[-1], 4), torch.nn.Softplus()).double()
    rho = torch.nn.Linear(4, 2).double()
    m = sf.plain.zero_padding(phi(x), mask)
    direct = rho(m.sum(dim=1))
    alpha_g = sf.SumIsomorphic(g=torch.log, g_inv=torch.exp)
    through_g = rho(torch.exp(alpha_g(torch.log(phi(x)), mask)))
    torch.testing.assert_close(through_g, direct, rtol=1e-9, atol=1e-9)


def test_naive_lse_overflows_where_the_stable_one_does_not() -> None:
    """Why the package's LogSumExp is not the literal ln(sum(exp)): float32 exp overflows."""
    x = torch.tensor([[[100.0], [99.0]]])
    assert torch.isinf(sf.lse_as_sum()(x)).all()
    torch.testing.assert_close(sf.LogSumExp()(x), torch.tensor([[100.0 + torch.log1p(torch.exp(torch.tensor(-1.0))).item()]]))


def test_geometric_mean_is_not_a_power() -> None:
    try:
        sf.power_mean_as_sum(0.0)
    except ValueError as err:
        assert "geometric mean" in str(err)
    else:
        raise AssertionError("power_mean_as_sum(0) must raise")


@given(data=st.data())
def test_lme_across_sizes_is_a_function_of_the_pair_sum_exp_and_count(data) -> None:
    """LME(X u Y) = ln((n_X e^LME(X) + n_Y e^LME(Y)) / (n_X + n_Y)): across population sizes
    log-mean-exp composes through the pair (sum of e^x, n), as the mean does through (sum of x, n)."""
    x, _ = data.draw(populations(masked=False))
    y, _ = data.draw(populations(masked=False, max_d=1))
    y = y[:1].expand(x.shape[0], -1, x.shape[-1]).contiguous()
    nx, ny = x.shape[1], y.shape[1]
    lme = sf.LogMeanExp()
    union = lme(torch.cat([x, y], dim=1))
    composed = torch.log((nx * lme(x).exp() + ny * lme(y).exp()) / (nx + ny))
    torch.testing.assert_close(union, composed, rtol=1e-9, atol=1e-9)


def test_lme_alone_cannot_count_multiplicities() -> None:
    """LME's g(s, n) = ln(s / n) keeps only the ratio: {x} and {x, x} share one value, so no rho can
    recover the count from LME alone (logsumexp tells them apart by ln 2)."""
    one, two = torch.tensor([[[0.7]]], dtype=torch.float64), torch.tensor([[[0.7], [0.7]]], dtype=torch.float64)
    torch.testing.assert_close(sf.LogMeanExp()(one), sf.LogMeanExp()(two), rtol=1e-15, atol=1e-15)
    torch.testing.assert_close(sf.LogSumExp()(two) - sf.LogSumExp()(one),
                               torch.tensor([[torch.log(torch.tensor(2.0, dtype=torch.float64))]]))
