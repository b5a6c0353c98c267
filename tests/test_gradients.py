"""Finite gradients under masks (cf. PyTorch's NaN gradients through a masked ``torch.where``): padded particles get exactly zero
gradient, real particles and parameters finite ones, for every aggregation and model spec."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import setfuncs as sf
from conftest import AggregationCase, every_aggregation, every_model_spec, seeded

JUNK = st.sampled_from([1e30, -1e30, math.inf, -math.inf])


def _batch(seed: int, positive: bool, junk: float, d: int = 3):
    """Populations with 1 (the edge case), 2 and 5 real particles padded to 6 with junk."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 6, d, generator=gen, dtype=torch.float64)
    x = x.exp() if positive else x
    mask = torch.arange(6)[None, :] < torch.tensor([[1], [2], [5]])
    x = x.masked_fill(~mask.unsqueeze(-1), junk).requires_grad_(True)
    return x, mask


def _check(module: torch.nn.Module, out: torch.Tensor, x: torch.Tensor, mask: torch.Tensor) -> None:
    (out * torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view_as(out)).sum().backward()
    assert torch.isfinite(x.grad).all()
    assert torch.equal(x.grad[~mask], torch.zeros_like(x.grad[~mask]))
    for name, p in module.named_parameters():
        assert p.grad is None or torch.isfinite(p.grad).all(), name


@every_aggregation
@given(seed=st.integers(0, 2**16), junk=JUNK)
def test_aggregation_gradients_are_finite(case: AggregationCase, seed: int, junk: float) -> None:
    x, mask = _batch(seed, case.positive, junk)
    agg = seeded(case.build(3))
    _check(agg, agg(x, mask), x, mask)


@every_model_spec
@given(seed=st.integers(0, 2**16), junk=JUNK)
def test_model_gradients_are_finite(spec: str, seed: int, junk: float) -> None:
    x, mask = _batch(seed, False, junk, d=2)
    model = seeded(sf.DeepSet(2, 2, spec=spec, hidden=6, steps=2), seed=3)
    _check(model, model(x, mask), x, mask)


@pytest.mark.parametrize("agg", [sf.Max(), sf.Min()], ids=["max", "min"])
def test_ties_pass_a_subgradient(agg) -> None:
    """With tied particles, max/min pass the whole gradient to one of them (a valid subgradient)."""
    x = torch.tensor([[[1.0, 2.0], [3.0, 2.0], [3.0, 2.0], [-1.0, 2.0]]]) * (1 if isinstance(agg, sf.Max) else -1)
    x.requires_grad_(True)
    agg(x).sum().backward()
    torch.testing.assert_close(x.grad.sum(dim=1), torch.ones(1, 2))
    assert set(x.grad[0, :, 0].tolist()) == {0.0, 1.0} and x.grad[0, 1:3, 0].sum() == 1.0


@pytest.mark.parametrize("spec", ["lse", "lme"])
def test_logsumexp_has_exact_second_derivatives(spec: str) -> None:
    """The lean backward pass of logsumexp stays differentiable under create_graph (masked and dense)."""
    torch.manual_seed(0)
    x = torch.randn(2, 4, 3, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, True, False, True], [True, False, False, False]])
    aggregation = sf.aggregation(spec)
    assert torch.autograd.gradgradcheck(lambda t: aggregation(t, mask), (x,))
    assert torch.autograd.gradgradcheck(lambda t: aggregation(t), (x,))
