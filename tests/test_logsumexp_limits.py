"""The limits of logsumexp (section 3.1): max on large ranges, near-linear on small ones, and
diminishing returns ln N + x for N identical particles; and log-mean-exp, LSE - ln N, which keeps
N identical particles at x and lies between the mean and the max."""

from __future__ import annotations

import math

import torch
from hypothesis import given
from hypothesis import strategies as st

import setfuncs as sf
from conftest import populations

LSE = sf.aggregation("lse")


@given(data=st.data(), c=st.sampled_from([1.0, 10.0, 100.0, 1e4]))
def test_scaled_lse_tends_to_max(data, c: float) -> None:
    """max(x) <= LSE(c x)/c <= max(x) + ln(N)/c, so LSE(c x)/c -> max(x) as c grows."""
    x, mask = data.draw(populations())
    n = x.shape[1] if mask is None else mask.sum(1, keepdim=True).double()
    gap = LSE(c * x, mask) / c - sf.aggregation("max")(x, mask)
    assert (gap >= -1e-9).all()
    assert (gap <= torch.log(torch.as_tensor(n, dtype=torch.float64)) / c + 1e-9).all()


@given(n=st.integers(1, 10_000), value=st.floats(-50, 50))
def test_identical_particles_give_log_n_plus_x(n: int, value: float) -> None:
    x = torch.full((1, n, 1), value, dtype=torch.float64)
    torch.testing.assert_close(LSE(x), torch.tensor([[math.log(n) + value]], dtype=torch.float64))


@given(data=st.data(), eps=st.sampled_from([1e-1, 1e-2, 1e-3]))
def test_near_linear_on_small_ranges(data, eps: float) -> None:
    """For |x_i| <= eps: 0 <= LSE(x) - ln N - mean(x) <= eps^2 / 2 (Jensen; Hoeffding's lemma)."""
    x, mask = data.draw(populations())
    x = eps * torch.tanh(x)
    n = x.shape[1] if mask is None else mask.sum(1, keepdim=True).double()
    residual = LSE(x, mask) - torch.log(torch.as_tensor(n, dtype=torch.float64)) - sf.Mean()(x, mask)
    assert (residual >= -1e-12).all()
    assert (residual <= eps**2 / 2 + 1e-12).all()


@given(data=st.data())
def test_gradient_is_softmax(data) -> None:
    x, mask = data.draw(populations())
    x = x.clone().requires_grad_(True)
    LSE(x, mask).sum().backward()
    logits = x.detach() if mask is None else x.detach().masked_fill(~mask.unsqueeze(-1), -math.inf)
    torch.testing.assert_close(x.grad, logits.softmax(dim=1))


LME = sf.aggregation("lme")


@given(n=st.integers(1, 10_000), value=st.floats(-50, 50))
def test_lme_of_identical_particles_is_that_particle(n: int, value: float) -> None:
    x = torch.full((1, n, 1), value, dtype=torch.float64)
    torch.testing.assert_close(LME(x), torch.tensor([[value]], dtype=torch.float64))


@given(data=st.data())
def test_lme_lies_between_mean_and_max_and_is_lse_minus_log_n(data) -> None:
    x, mask = data.draw(populations())
    n = x.shape[1] if mask is None else mask.sum(1, keepdim=True).double()
    value = LME(x, mask)
    assert (sf.Mean()(x, mask) <= value + 1e-12).all() and (value <= sf.Max()(x, mask) + 1e-12).all()
    torch.testing.assert_close(value, LSE(x, mask) - torch.log(torch.as_tensor(n, dtype=torch.float64)))
