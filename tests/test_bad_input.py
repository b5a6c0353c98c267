"""Bad input raises an error that says what was wrong and how to fix it; nothing turns into NaN."""

from __future__ import annotations

import pytest
import torch

import setfuncs as sf
from conftest import AGGREGATIONS, AggregationCase, MODEL_SPECS, aggregation_ids

D = 3


def _modules():
    """Every aggregation, an equivariant layer and every model spec, with its input features."""
    for case in AGGREGATIONS:
        yield case.name, case.build(D)
    yield "equivariant", sf.Equivariant(D, 4, aggregation="r-max")
    yield "deepsets-equivariant", sf.DeepSetsEquivariant(D, 4, aggregation="lse")
    for spec in MODEL_SPECS:
        yield f"model:{spec}", sf.DeepSet(D, 2, spec=spec, hidden=4)


MODULES = list(_modules())
every_module = pytest.mark.parametrize("module", [m for _, m in MODULES], ids=[n for n, _ in MODULES])
X = torch.rand(2, 5, D) + 0.5


@every_module
@pytest.mark.parametrize("shape, hint", [((5, D), "unsqueeze"), ((2, 1, 5, D), "[B, N, D]")])
def test_wrong_rank(module, shape, hint) -> None:
    with pytest.raises(ValueError, match=r"shape \[B, N, D\]") as err:
        module(torch.rand(shape) + 0.5)
    assert hint in str(err.value)


@every_module
def test_mask_shape_mismatch(module) -> None:
    with pytest.raises(ValueError, match=r"mask must have shape \[B, N\] = \(2, 5\)"):
        module(X, torch.ones(2, 4, dtype=torch.bool))


@every_module
def test_mask_dtype_mismatch(module) -> None:
    with pytest.raises(ValueError, match=r"torch\.bool.*mask\.bool\(\)"):
        module(X, torch.ones(2, 5))


@every_module
def test_empty_population(module) -> None:
    mask = torch.ones(2, 5, dtype=torch.bool)
    mask[1] = False
    with pytest.raises(ValueError, match=r"batch index \[1\] have no real particle"):
        module(X, mask)
    with pytest.raises(ValueError, match=r"N = 0"):
        module(torch.rand(2, 0, D))


@every_module
def test_integer_input(module) -> None:
    with pytest.raises(ValueError, match=r"floating-point.*x\.float\(\)"):
        module(torch.ones(2, 5, D, dtype=torch.long))


@pytest.mark.parametrize("case", [c for c in AGGREGATIONS if c.name.startswith(("q-", "r-", "rpw"))],
                         ids=aggregation_ids([c for c in AGGREGATIONS if c.name.startswith(("q-", "r-", "rpw"))]))
def test_learnable_feature_mismatch(case: AggregationCase) -> None:
    with pytest.raises(ValueError, match=r"built for 3.*features=4"):
        case.build(3)(torch.rand(2, 5, 4))


@pytest.mark.parametrize("spec, kwargs, message", [
    ("maximum", {}, "unknown aggregation spec 'maximum'"),
    ("r-lse", {}, "pass features=D"),
    ("q-pmean", {"features": 3}, "unknown aggregation spec"),
    ("quantile", {"q": 1.5}, r"q must lie in \[0, 1\]"),
    ("softmax", {"temperature": 0.0}, "positive finite"),
    ("pmean", {"p": float("inf")}, "must be finite"),
    ("r-lse", {"features": 3, "normalize": "tanh"}, "unknown normalize 'tanh'"),
    ("r-lse", {"features": 3, "steps": 0}, "steps must be a positive int"),
])
def test_bad_aggregation_arguments(spec, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        sf.aggregation(spec, **kwargs)


def test_power_mean_rejects_non_positive_particles() -> None:
    with pytest.raises(ValueError, match="positive particles only.*softplus"):
        sf.PowerMean(2.0)(torch.randn(2, 5, 3) - 3)


@pytest.mark.parametrize("spec", ["max", "max/max/max", "/max", "max/nope", 3])
def test_bad_model_spec(spec) -> None:
    with pytest.raises(ValueError, match=r"equivariant aggregation>/<final aggregation>|unknown aggregation spec"):
        sf.DeepSet(2, 2, spec=spec)


@pytest.mark.parametrize("name", ["in_features", "out_features", "hidden"])
@pytest.mark.parametrize("size", [0, -1, 2.5, True, "8"])
def test_model_sizes_are_positive_ints(name: str, size) -> None:
    """A model that reads or writes no feature, or a width of no unit, is refused by the argument's
    name, not built (``in_features=0``) or left to fail inside torch (``hidden=-1``)."""
    sizes = {"in_features": 3, "out_features": 2, "hidden": 8, name: size}
    with pytest.raises(ValueError, match=f"{name} must be a positive int, got {size!r}"):
        sf.DeepSet(sizes.pop("in_features"), sizes.pop("out_features"), **sizes)


@pytest.mark.parametrize("layer", [sf.Equivariant, sf.DeepSetsEquivariant])
@pytest.mark.parametrize("name", ["in_features", "out_features"])
@pytest.mark.parametrize("size", [0, -2, 1.5])
def test_equivariant_layer_sizes_are_positive_ints(layer, name: str, size) -> None:
    sizes = {"in_features": 3, "out_features": 4, name: size}
    with pytest.raises(ValueError, match=f"{name} must be a positive int, got {size!r}"):
        layer(sizes["in_features"], sizes["out_features"], aggregation="max")


def test_equivariant_layer_rejects_wrong_aggregation_width() -> None:
    with pytest.raises(ValueError, match="must return 3 features"):
        sf.Equivariant(3, 4, aggregation=sf.aggregation("r-lse", features=5))
