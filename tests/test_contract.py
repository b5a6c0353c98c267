"""The package's public contract, exactly as the book and outside checks use it."""

from __future__ import annotations

import inspect

import pytest
import torch

import setfuncs as sf
from conftest import AGGREGATIONS, MODEL_SPECS


def test_contract_as_written() -> None:
    x = torch.randn(5, 11, 16)
    mask = torch.rand(5, 11) > 0.3
    mask[:, 0] = True
    agg = sf.aggregation("lse")
    assert agg(x, mask=None).shape == (5, 16)
    for spec in ["sum", "mean", "max", "min", "lse", "median"]:
        assert sf.aggregation(spec)(x, mask=mask).shape == (5, 16)
    for kind in "qr":
        for reduce in ["sum", "mean", "max", "lse"]:
            agg = sf.aggregation(f"{kind}-{reduce}", features=16)
            assert agg(x, mask=None).shape == (5, agg.out_features) == (5, 16)
    assert sf.aggregation("rpw", features=16)(x, mask).shape == (5, 16)
    layer = sf.Equivariant(16, 32, aggregation="r-max")
    assert layer(x).shape == (5, 11, 32)
    model = sf.DeepSet(in_features=2, out_features=3, spec="r-lse/r-lse")
    assert model(torch.randn(5, 11, 2), mask).shape == (5, 3)
    iso = sf.SumIsomorphic(torch.log, torch.exp)
    torch.testing.assert_close(iso(x), sf.aggregation("lse")(x), rtol=1e-5, atol=1e-5)


def test_table2_specs_build() -> None:
    assert len(sf.TABLE2_SPECS) == 10
    for spec in sf.TABLE2_SPECS:
        assert spec in MODEL_SPECS
        sf.DeepSet(3, 40, spec=spec.upper() if "lse" in spec else spec, hidden=8)


def test_every_aggregation_class_is_in_the_property_suites() -> None:
    """Adding an aggregation class without adding it to conftest.AGGREGATIONS fails here."""
    classes = {obj for _, obj in inspect.getmembers(sf) if inspect.isclass(obj)
               and issubclass(obj, sf.Aggregation) and obj is not sf.Aggregation}
    covered = {type(case.build(3)) for case in AGGREGATIONS}
    assert classes <= covered, classes - covered


def test_learnable_aggregations_train() -> None:
    """Gradient steps reduce a loss through a recurrent aggregation (parameters are wired)."""
    torch.manual_seed(0)
    x = torch.randn(64, 10, 1)
    target = x.amax(1)
    model = sf.DeepSet(1, 1, spec="r-lse/r-lse", hidden=16)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(60):
        loss = torch.nn.functional.mse_loss(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]


def test_model_passes_learnable_options() -> None:
    model = sf.DeepSet(2, 1, spec="r-lse/q-sum", hidden=8, steps=4,
                       learnable_options={"normalize": "sigmoid"})
    final, inner = model.aggregate, model.combine[0].aggregate
    assert final.normalize_name == inner.normalize_name == "sigmoid" and inner.steps == 4
    with pytest.raises(ValueError, match="model spec 'max/max' has none"):     # not dropped silently
        sf.DeepSet(2, 1, spec="max/max", learnable_options={"readout": "last"})
