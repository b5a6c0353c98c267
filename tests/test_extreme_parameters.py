"""Power means and the softmax-weighted sum at extreme parameters give their limits, never a silent
wrong number: ``M_p -> `` the geometric mean as ``p -> 0`` and ``max``/``min`` as ``p -> +-inf``;
the softmax-weighted sum ``-> max`` as the temperature ``-> 0``, also where ``x / t`` overflows."""

from __future__ import annotations

import math

import pytest
import torch

import setfuncs as sf
from setfuncs.population import sync_free

DTYPES = pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
POWER_MEANS = pytest.mark.parametrize("build", [sf.PowerMean, sf.power_mean_as_sum], ids=["PowerMean", "as_sum"])


def _one_and_four(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The population {1, 4}, alone and as the real particles of a masked batch with junk padding."""
    x = torch.tensor([[[1.0], [4.0]]], dtype=dtype)
    padded = torch.tensor([[[1.0], [1e30], [4.0]]], dtype=dtype)
    return x, padded


def _power_mean(values: list[float], p: float) -> float:
    """M_p in exact arithmetic's stead: float64 with the terms kept apart (math.fsum)."""
    if p == 0:
        return math.exp(math.fsum(math.log(v) for v in values) / len(values))
    return math.exp(math.log1p(math.fsum(math.expm1(p * math.log(v)) for v in values) / len(values)) / p)


@DTYPES
@POWER_MEANS
@pytest.mark.parametrize("p", [1e-7, -1e-7, 1e-4, -3e-3, 0.0099])
def test_power_mean_near_zero_tends_to_the_geometric_mean(build, dtype: torch.dtype, p: float) -> None:
    """``pmean(1e-7)`` of {1, 4} was 1.0 in float32: x^p rounds to 1. The limit is sqrt(1 * 4) = 2."""
    x, padded = _one_and_four(dtype)
    mask = torch.tensor([[True, False, True]])
    expected = torch.tensor([[_power_mean([1.0, 4.0], p)]], dtype=dtype)
    rtol = 4 * torch.finfo(dtype).eps
    torch.testing.assert_close(build(p)(x), expected, rtol=rtol, atol=0)
    torch.testing.assert_close(build(p)(padded, mask), expected, rtol=rtol, atol=0)


def test_pmean_spec_of_1e_minus_7_is_the_geometric_mean() -> None:
    """The issue's case, through the spec grammar."""
    assert sf.aggregation("pmean(1e-7)")(torch.tensor([[[1.0], [4.0]]])).item() == pytest.approx(2.0, rel=1e-6)


@DTYPES
def test_power_mean_is_continuous_and_nondecreasing_across_zero(dtype: torch.dtype) -> None:
    """Through p = 0 and both sides of the switch to the small-exponent form (|p| < 0.01). From
    |p| = 0.01 on the direct form is kept, bit for bit; raising the mean of x^p to 1/p multiplies its
    rounding error by 1/|p|, so it is good to about eps / |p| (1e-5 in float32 at p = 0.01)."""
    torch.manual_seed(0)
    x = torch.rand(4, 20, 3, dtype=dtype) * 1.9 + 0.1
    exponents = [-0.02, -0.01, -0.0099, -1e-3, -1e-6, 0.0, 1e-6, 1e-3, 0.0099, 0.01, 0.02]
    values = torch.stack([sf.PowerMean(p)(x) for p in exponents])
    assert bool((values.diff(dim=0) >= -8 * torch.finfo(dtype).eps * values[1:]).all())
    expected = torch.tensor([[[_power_mean(x[b, :, d].tolist(), p) for d in range(3)] for b in range(4)]
                             for p in exponents], dtype=dtype)
    eps = torch.finfo(dtype).eps
    for p, value, exact in zip(exponents, values, expected):
        torch.testing.assert_close(value, exact, rtol=8 * eps * max(1.0, 1.0 / abs(p or 1.0)), atol=0)


@DTYPES
@pytest.mark.parametrize("p", [1e3, -1e3, 1e6, -1e6, 1e30, -1e30])
def test_power_mean_at_large_exponents_tends_to_max_and_min(dtype: torch.dtype, p: float) -> None:
    """``4^1000`` overflows float64: the scaled form gives M_p = s (1/2 + (x/s)^p / 2)^(1/p), finite."""
    x, padded = _one_and_four(dtype)
    mask = torch.tensor([[True, False, True]])
    expected = torch.tensor([[4.0 * 0.5 ** (1 / p) if p > 0 else 0.5 ** (1 / p)]], dtype=dtype)
    torch.testing.assert_close(sf.PowerMean(p)(x), expected)
    torch.testing.assert_close(sf.PowerMean(p)(padded, mask), expected)


@DTYPES
@pytest.mark.parametrize("temperature", [1e-40, 1e-46, 1e-300])
def test_softmax_at_a_vanishing_temperature_is_the_maximum(dtype: torch.dtype, temperature: float) -> None:
    """``softmax(1e-40)``: 1 / 1e-40 overflows float32, which made every logit inf and the result NaN;
    1e-46 underflows float32 to 0 (``exp`` of its stored logarithm). The limit is the maximum, 4."""
    x, padded = _one_and_four(dtype)
    mask = torch.tensor([[True, False, True]])
    for module in (sf.SoftmaxWeightedSum(temperature), sf.SoftmaxWeightedSum(temperature).to(dtype)):
        assert module(x).item() == 4.0 and module(padded, mask).item() == 4.0
        with sync_free():
            assert module(x).item() == 4.0 and module(padded, mask).item() == 4.0


def test_softmax_spec_of_1e_minus_40_is_the_maximum_and_ties_share() -> None:
    """The issue's case through the spec grammar; particles tied for the maximum share its weight,
    and a NaN in a real particle still makes that feature NaN (and only that one)."""
    module = sf.aggregation("softmax(1e-40)")
    x = torch.tensor([[[1.0, 2.0], [4.0, 2.0], [-3.0, math.nan]]])
    out = module(x)
    assert out[0, 0].item() == 4.0 and math.isnan(out[0, 1].item())
    assert module(torch.tensor([[[3.0], [3.0], [-1.0]]])).item() == 3.0


def test_softmax_at_a_vanishing_temperature_has_finite_gradients() -> None:
    """All the gradient goes to the largest particle, as the limit's (max's) does."""
    x = torch.tensor([[[1.0], [4.0], [2.0]]], requires_grad=True)
    sf.SoftmaxWeightedSum(1e-40)(x).sum().backward()
    assert x.grad.flatten().tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_extreme_parameters_in_half_precision(dtype: torch.dtype) -> None:
    x = torch.tensor([[[1.0], [4.0]]], dtype=dtype)
    assert sf.PowerMean(1e-7)(x).item() == 2.0 and sf.power_mean_as_sum(1e-7)(x).item() == 2.0
    assert sf.PowerMean(1e3)(x).item() == pytest.approx(4.0, rel=torch.finfo(dtype).eps)
    assert sf.SoftmaxWeightedSum(1e-40)(x).item() == 4.0
