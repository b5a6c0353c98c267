"""Float16 and bfloat16 populations past the sizes half precision can count: every plain and
sum-isomorphic aggregation gives its float64 value, rounded to the input's dtype.

Float16 holds integers exactly up to 2048 and numbers up to 65504, bfloat16 integers up to 256: a
count, a sum or a quantile's index kept in them goes wrong on populations of 70,000 particles. Each
aggregation is checked against itself in float64 on the same (half-precision) particles and, for
parameterised ones, the same (half-precision) parameters; the tolerance is one unit in the last
place of the output dtype (both sides are rounded once to it).
"""

from __future__ import annotations

import copy

import pytest
import torch

import setfuncs as sf
from conftest import AGGREGATIONS, AggregationCase, aggregation_ids

HALF = (torch.float16, torch.bfloat16)
N = 70_000  # past float16's largest number (65504) and every integer either dtype counts exactly
D = 2
#: Every aggregation that is not learnable: the plain reductions and the sum-isomorphic constructions.
PLAIN = [c for c in AGGREGATIONS if type(c.build(D)).__module__ in ("setfuncs.plain", "setfuncs.isomorphic")]


def _population(dtype: torch.dtype, masked: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``[2, N, D]`` particles in [0.25, 0.75] (a float16 sum of them fits: about 35,000), and a mask
    that pads 10 % of them at random positions, which hold 30,000."""
    gen = torch.Generator().manual_seed(28)
    x = (torch.rand(2, N, D, generator=gen) * 0.5 + 0.25).to(dtype)
    if not masked:
        return x, None
    mask = torch.rand(2, N, generator=gen) > 0.1
    return x.masked_fill(~mask.unsqueeze(-1), 30_000.0), mask


def _in_dtype(case: AggregationCase, dtype: torch.dtype) -> torch.nn.Module:
    """The aggregation as a user holds it: converted to ``dtype`` only when it has parameters
    (the package's rule; a plain aggregation computes in its input's dtype)."""
    module = case.build(D)
    return module.to(dtype) if any(True for _ in module.parameters()) else module


@pytest.mark.parametrize("masked", [False, True], ids=["dense", "masked"])
@pytest.mark.parametrize("dtype", HALF, ids=["float16", "bfloat16"])
@pytest.mark.parametrize("case", PLAIN, ids=aggregation_ids(PLAIN))
def test_half_precision_matches_float64(case: AggregationCase, dtype: torch.dtype, masked: bool) -> None:
    module = _in_dtype(case, dtype)
    x, mask = _population(dtype, masked)
    out = module(x, mask)
    expected = copy.deepcopy(module).double()(x.double(), mask).to(dtype)
    assert out.dtype == dtype
    torch.testing.assert_close(out, expected, rtol=torch.finfo(dtype).eps, atol=0)


@pytest.mark.parametrize("dtype", HALF, ids=["float16", "bfloat16"])
@pytest.mark.parametrize("case", PLAIN, ids=aggregation_ids(PLAIN))
def test_half_precision_gradient_matches_float64(case: AggregationCase, dtype: torch.dtype) -> None:
    """The backward pass goes through the float32 copy and back: the gradient has the input's dtype
    and the float64 gradient's values (to one unit in the last place; gradients of order 1 / N are
    subnormal in float16, where that unit is ``tiny * eps``)."""
    module = _in_dtype(case, dtype)
    x, mask = _population(dtype, masked=True)
    x.requires_grad_(True)
    module(x, mask).sum().backward()
    high = x.detach().double().requires_grad_(True)
    copy.deepcopy(module).double()(high, mask).sum().backward()
    assert x.grad.dtype == dtype
    info = torch.finfo(dtype)
    # a quantile's index h = q (n - 1) is a float32 number, as for float32 input: its fraction, the
    # weight that splits the gradient between two order statistics, is good to n * 2^-24 only
    rtol = max(info.eps, N * 2.0**-24) if isinstance(module, sf.Quantile) else info.eps
    torch.testing.assert_close(x.grad, high.grad.to(dtype), rtol=rtol, atol=info.tiny * info.eps)


@pytest.mark.parametrize("spec", ["mean", "lme", "iso-mean"])
@pytest.mark.parametrize("masked", [False, True], ids=["dense", "all-true mask"])
def test_float16_mean_and_lme_of_70000_ones_are_one(spec: str, masked: bool) -> None:
    """The issue's case: with an all-True mask the mean was inf / inf = NaN and log-mean-exp NaN."""
    module = sf.mean_as_sum() if spec == "iso-mean" else sf.aggregation(spec)
    x = torch.ones(1, N, 1, dtype=torch.float16)
    mask = torch.ones(1, N, dtype=torch.bool) if masked else None
    assert module(x, mask).item() == 1.0


@pytest.mark.parametrize(("dtype", "n"), [(torch.bfloat16, 300), (torch.bfloat16, 1000), (torch.float16, 4098)])
@pytest.mark.parametrize("masked", [False, True], ids=["dense", "masked"])
def test_half_precision_median_of_zeros_and_hundreds_is_fifty(dtype: torch.dtype, n: int, masked: bool) -> None:
    """The issue's case: n/2 zeros and n/2 hundreds; the bfloat16 median was 100, the float16 one 0."""
    x = torch.cat([torch.zeros(n // 2), torch.full((n // 2,), 100.0)])[torch.randperm(n)].to(dtype).reshape(1, n, 1)
    mask = torch.ones(1, n, dtype=torch.bool) if masked else None
    assert sf.aggregation("median")(x, mask).item() == 50.0


@pytest.mark.parametrize("spec", ["sum", "lse", "iso-lse"])
def test_float16_overflow_is_inf_as_the_true_value_rounds(spec: str) -> None:
    """A float16 sum of 70,000 ones is 70,000, past float16's range: ``inf`` is its rounding, while
    the logsumexp, ln(70,000) + 1 = 12.16, fits and must not overflow on the way."""
    module = sf.lse_as_sum() if spec == "iso-lse" else sf.aggregation(spec)
    x = torch.ones(1, N, 1, dtype=torch.float16)
    expected = module(x.double()).to(torch.float16)
    assert torch.equal(module(x), expected) and torch.equal(module(x, torch.ones(1, N, dtype=torch.bool)), expected)


@pytest.mark.parametrize("spec", ["q-sum", "q-mean", "q-max", "r-lse", "r-lme", "r-mean"])
def test_a_learnable_aggregation_refuses_more_float16_particles_than_float16_can_count(spec: str) -> None:
    """Its count (and softmax-n weights) would overflow to inf: refused with the reason and the fix;
    at the limit and in bfloat16 it runs."""
    import setfuncs as sf

    torch.manual_seed(0)
    agg = sf.aggregation(spec, features=2).to(torch.float16)
    with pytest.raises(ValueError, match=r"largest number is 65504; got 65505 particles: pass float32 or bfloat16"):
        agg(torch.zeros(1, 65505, 2, dtype=torch.float16))
    assert agg(torch.zeros(1, 8, 2, dtype=torch.float16)).dtype == torch.float16
