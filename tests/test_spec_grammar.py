"""The spec grammar: parameterised aggregations in parentheses, in ``sf.aggregation`` and in model
specs; clear errors for a missing, malformed or misplaced parameter; ``learnable_options`` that no
aggregation of the model would take are refused, not dropped."""

from __future__ import annotations

import pytest
import torch

import setfuncs as sf


@pytest.mark.parametrize("spec, cls, attribute, value", [
    ("quantile(0.3)", sf.Quantile, "q", 0.3),
    ("quantile(0)", sf.Quantile, "q", 0.0),
    ("quantile(1e-1)", sf.Quantile, "q", 0.1),
    (" Quantile( .25 ) ", sf.Quantile, "q", 0.25),
    ("pmean(2)", sf.PowerMean, "p", 2.0),
    ("pmean(-1.5)", sf.PowerMean, "p", -1.5),
    ("pmean(0)", sf.PowerMean, "p", 0.0),
    ("softmax(0.5)", sf.SoftmaxWeightedSum, "temperature", 0.5),
    ("softmax", sf.SoftmaxWeightedSum, "temperature", 1.0),
    ("median", sf.Median, "q", 0.5),
])
def test_a_parameterised_spec_builds_its_aggregation(spec: str, cls: type, attribute: str, value: float) -> None:
    agg = sf.aggregation(spec)
    assert type(agg) is cls and float(getattr(agg, attribute)) == pytest.approx(value)


def test_the_parameter_may_still_be_a_keyword_argument() -> None:
    x = torch.rand(2, 7, 3)
    assert sf.aggregation("quantile", q=0.3).q == 0.3
    torch.testing.assert_close(sf.aggregation("quantile", q=0.3)(x), sf.aggregation("quantile(0.3)")(x))
    torch.testing.assert_close(sf.aggregation("pmean", p=2.0)(x + 0.1), sf.aggregation("pmean(2)")(x + 0.1))
    assert sf.aggregation("softmax(0.5)", learnable=True).learnable_temperature


@pytest.mark.parametrize("spec, kwargs, message", [
    ("quantile", {}, r"'quantile' needs its parameter q: write 'quantile\(q\)', e\.g\. 'quantile\(0\.5\)'"),
    ("pmean", {}, r"'pmean' needs its parameter p: write 'pmean\(p\)', e\.g\. 'pmean\(2\)'"),
    ("quantile(x)", {}, r"write quantile\(q\) with one decimal number q, e\.g\. 'quantile\(0\.5\)'; got 'x'"),
    ("pmean()", {}, r"'pmean\(\)': write pmean\(p\) with one decimal number p.*got ''"),
    ("softmax(0.5, 1)", {}, r"one decimal number temperature"),
    ("pmean(inf)", {}, r"one decimal number p"),
    ("quantile(1.5)", {}, r"quantile q must lie in \[0, 1\], got 1\.5"),
    ("softmax(0)", {}, "temperature must be a positive finite number"),
    ("quantile(0.2)", {"q": 0.3}, r"gives q in the spec and q=0\.3 as an argument; give it once"),
    ("max(2)", {}, r"'max' takes no parameter, got 'max\(2\)'; write 'max'"),
    ("r-lse(2)", {"features": 3}, r"'r-lse' takes no parameter in parentheses"),
    ("quantile(0.5", {}, r"unknown aggregation spec 'quantile\(0\.5'.*quantile\(q\), pmean\(p\), "
                         r"softmax\(temperature\)"),
    ("quantile((0.5))", {}, "unknown aggregation spec"),
    ("nope(1)", {}, "unknown aggregation spec 'nope\\(1\\)'"),
])
def test_a_bad_parameter_is_a_clear_error(spec: str, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sf.aggregation(spec, **kwargs)


@pytest.mark.parametrize("name", sf.spec_names())
def test_every_named_spec_builds_from_its_string(name: str) -> None:
    agg = sf.aggregation(name, features=4)
    assert agg(torch.rand(2, 5, 4)).shape == (2, agg.out_features or 4)
    model = sf.DeepSet(3, 2, spec=f"{name}/{name}", hidden=4, equivariant_layers=1)
    assert model(torch.rand(2, 5, 3)).shape == (2, 2)


def test_a_model_spec_takes_parameterised_aggregations() -> None:
    model = sf.DeepSet(3, 4, spec="max/quantile(0.5)", hidden=8)
    assert isinstance(model.aggregate, sf.Quantile) and model.aggregate.q == 0.5
    out = model(torch.randn(2, 5, 3))
    assert out.shape == (2, 4) and bool(torch.isfinite(out).all())
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    assert model(torch.randn(2, 5, 3), mask).shape == (2, 4)
    pmean = sf.DeepSet(3, 4, spec="pmean(3)/mean", hidden=8)
    assert all(isinstance(layer.aggregate, sf.PowerMean) and layer.aggregate.p == 3.0 for layer in pmean.combine)
    softmax = sf.DeepSet(3, 4, spec="softmax(0.5)/quantile(0.25)", hidden=8, layer="deepsets")
    assert softmax(torch.randn(2, 5, 3)).shape == (2, 4)


@pytest.mark.parametrize("spec, message", [
    ("max/quantile", r"'quantile' needs its parameter q: write 'quantile\(q\)', e\.g\. 'quantile\(0\.5\)' \(in a "
                     r"model spec too, e\.g\. 'max/quantile\(0\.5\)'\)"),
    ("pmean/mean", r"write 'pmean\(p\)'"),
    ("max/quantile(x)", "one decimal number q"),
    ("max/quantile(1.5)", r"q must lie in \[0, 1\]"),
    ("max(1)/max", "takes no parameter"),
])
def test_a_bad_parameter_in_a_model_spec_is_a_clear_error(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sf.DeepSet(3, 2, spec=spec)


@pytest.mark.parametrize("spec, layers", [("max/max", 2), ("mean/quantile(0.5)", 2), ("max/rpw", 2),
                                          ("r-lse/max", 0)])
def test_learnable_options_without_a_learnable_aggregation_are_refused(spec: str, layers: int) -> None:
    with pytest.raises(ValueError) as refused:
        sf.DeepSet(3, 2, spec=spec, equivariant_layers=layers, learnable_options={"normalize": "sigmoid"})
    message = str(refused.value)
    assert "learnable_options {'normalize': 'sigmoid'} go to the query (q-*) and recurrent (r-*)" in message
    assert f"model spec {spec!r}" in message and "drop the options" in message


def test_learnable_options_reach_every_learnable_aggregation() -> None:
    model = sf.DeepSet(3, 2, spec="r-lse/q-sum", learnable_options={"normalize": "sigmoid"})
    assert model.aggregate.normalize_name == "sigmoid"
    assert all(layer.aggregate.normalize_name == "sigmoid" for layer in model.combine)
    assert sf.DeepSet(3, 2, spec="max/max", learnable_options={}).aggregate is not None
