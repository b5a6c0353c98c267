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
