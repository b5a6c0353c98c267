"""One rule for dtypes and devices, and one for NaN, in every aggregation and every model spec.

Dtype: a module without parameters computes in its input's dtype; a module with parameters must have
the input's dtype and says how to convert otherwise. NaN: a NaN in a real particle makes that
population's aggregate NaN (for a plain aggregation, only in that feature); padded particles and other
populations are unaffected.
"""

from __future__ import annotations

import math

import pytest
import torch

import setfuncs as sf
from conftest import AGGREGATIONS, AggregationCase, MODEL_SPECS, aggregation_ids

D = 3
every_aggregation = pytest.mark.parametrize("case", AGGREGATIONS, ids=aggregation_ids(AGGREGATIONS))
every_spec = pytest.mark.parametrize("spec", MODEL_SPECS)


def _population(dtype: torch.dtype, positive: bool) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    x = torch.randn(3, 6, D, dtype=torch.float64)
    x = (x.abs() + 0.5 if positive else x).to(dtype)
    mask = torch.ones(3, 6, dtype=torch.bool)
    mask[1, 4:] = False
    return x, mask


@every_aggregation
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_output_has_the_input_dtype(case: AggregationCase, dtype: torch.dtype) -> None:
    module = case.build(D).to(dtype)
    x, mask = _population(dtype, case.positive)
    out = module(x, mask)
    assert out.dtype == dtype and torch.isfinite(out).all()


@every_aggregation
def test_float64_agrees_with_float32(case: AggregationCase) -> None:
    module = case.build(D)
    x, mask = _population(torch.float64, case.positive)
    torch.manual_seed(1)
    low = module(x.float(), mask).double()
    high = module.double()(x, mask)
    torch.testing.assert_close(low, high, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", [c for c in AGGREGATIONS if any(True for _ in c.build(D).parameters())],
                         ids=aggregation_ids([c for c in AGGREGATIONS if any(True for _ in c.build(D).parameters())]))
def test_learnable_aggregation_refuses_another_dtype(case: AggregationCase) -> None:
    x, mask = _population(torch.float64, case.positive)
    with pytest.raises(ValueError, match=r"float32 parameters but the input is torch\.float64.*module\.to"):
        case.build(D)(x, mask)


@every_spec
def test_model_refuses_another_dtype_and_follows_a_converted_one(spec: str) -> None:
    model = sf.DeepSet(D, 2, spec=spec, hidden=4)
    x, mask = _population(torch.float64, positive=False)
    with pytest.raises(ValueError, match=r"DeepSet has torch\.float32 parameters.*module\.to\(torch\.float64\)"):
        model(x, mask)
    assert model.double()(x, mask).dtype == torch.float64


def test_equivariant_layer_refuses_another_dtype() -> None:
    layer = sf.Equivariant(D, 4, aggregation="r-max")
    with pytest.raises(ValueError, match=r"Equivariant has torch\.float32 parameters"):
        layer(torch.rand(2, 5, D, dtype=torch.float64))


@every_aggregation
def test_nan_in_a_real_particle_reaches_only_its_population(case: AggregationCase) -> None:
    module = case.build(D)
    x, mask = _population(torch.float32, case.positive)
    clean = module(x, mask)
    x[0, 2, 1] = math.nan
    out = module(x, mask)
    assert torch.isnan(out[0]).any()
    torch.testing.assert_close(out[1:], clean[1:])
    if not any(True for _ in module.parameters()) and out.shape[-1] == D:  # plain: only that feature
        assert torch.isnan(out[0, 1]) and torch.isfinite(out[0, [0, 2]]).all()


@every_aggregation
def test_nan_in_a_padded_particle_changes_nothing(case: AggregationCase) -> None:
    module = case.build(D)
    x, mask = _population(torch.float32, case.positive)
    clean = module(x, mask)
    x[1, 5] = math.nan
    torch.testing.assert_close(module(x, mask), clean)


@pytest.mark.parametrize("p", [2.0, 7.0, -3.0])
def test_power_mean_does_not_overflow(p: float) -> None:
    """M_p(X) = s M_p(X / s): particles of 1e20 squared would overflow float32 (max 3.4e38)."""
    x = torch.tensor([[[1e20], [2e20], [3e20]]])
    expected = (torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64).pow(p).mean().pow(1 / p) * 1e20).float()
    out = sf.PowerMean(p)(x)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, expected.reshape(1, 1), rtol=1e-5, atol=0)


@pytest.mark.parametrize("p", [2.0, -2.0])
def test_power_mean_does_not_underflow(p: float) -> None:
    """Particles of 1e-30: x^2 underflows to 0 in float32 and x^-2 overflows; the scaled form does neither."""
    x = torch.tensor([[[1e-30], [2e-30], [3e-30]]])
    expected = (torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64).pow(p).mean().pow(1 / p) * 1e-30).float()
    torch.testing.assert_close(sf.PowerMean(p)(x), expected.reshape(1, 1), rtol=1e-5, atol=0)
