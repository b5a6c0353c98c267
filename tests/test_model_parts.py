"""The parts of a Deep Set a chapter or an experiment takes apart: a model without embedding
(``embed_layers=0``, the point-cloud classifier), its memory :math:`C = \\operatorname{combine}(M)`
and the reads :math:`a_1, \\dots, a_T` of a learnable aggregation. Each part is what the forward
pass computes, and keeps the contract: invariance, equivariance and padding."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

import setfuncs as sf
from conftest import (AGGREGATIONS, MODEL_SPECS, AggregationCase, aggregation_ids, every_model_spec, populations,
                      seeded)
from setfuncs.experiments.pointcloud import PointCloudClassifier
from setfuncs.model import mlp, parameter_count, parse_spec

JUNK = st.sampled_from([1e30, -1e30, math.inf, -math.inf])
LEARNABLE = [c for c in AGGREGATIONS if isinstance(c.build(3), (sf.QueryAggregation, sf.RecurrentAggregation))]
LEARNABLE.append(AggregationCase("r-lse-last", lambda d: sf.aggregation("r-lse", features=d, readout="last")))
every_learnable_aggregation = pytest.mark.parametrize("case", LEARNABLE, ids=aggregation_ids(LEARNABLE))
#: The memory does not depend on the final aggregation: one model per aggregation of the equivariant layers.
every_equivariant_spec = pytest.mark.parametrize("spec", sorted({f"{parse_spec(s)[0]}/max" for s in MODEL_SPECS}))


def _model(d: int, spec: str, embed_layers: int) -> sf.DeepSet:
    return seeded(sf.DeepSet(d, 2, spec=spec, hidden=6, embed_layers=embed_layers, steps=2), seed=3)


def _pad(x: torch.Tensor, mask: torch.Tensor | None, extra: int, junk: float):
    b, n, d = x.shape
    mask = torch.ones(b, n, dtype=torch.bool) if mask is None else mask
    return (torch.cat([x, torch.full((b, extra, d), junk, dtype=x.dtype)], 1),
            torch.cat([mask, torch.zeros(b, extra, dtype=torch.bool)], 1))


# --- no embedding: the first equivariant layer reads the particles ---------------------------------

def test_without_embedding_the_first_layer_reads_the_particles() -> None:
    model = sf.DeepSet(3, 2, "max/r-lse", hidden=8, embed_layers=0, equivariant_layers=2)
    assert list(model.embed.parameters()) == []
    assert [(layer.in_features, layer.out_features) for layer in model.combine] == [(3, 8), (8, 8)]
    x = torch.randn(4, 5, 3)
    expected = model.combine[1](model.combine[0](x))
    torch.testing.assert_close(model.memory(x), expected, rtol=0, atol=0)


def test_without_embedding_or_equivariant_layers_the_aggregation_reads_the_particles() -> None:
    model = sf.DeepSet(3, 2, "max/q-sum", hidden=8, embed_layers=0, equivariant_layers=0)
    assert model.aggregate.features == 3 and model.process[0].in_features == 3
    x, mask = torch.randn(4, 5, 3), torch.tensor([[True] * 5, [True, False] * 2 + [True]] * 2)
    assert torch.equal(model.memory(x, mask), x.masked_fill(~mask.unsqueeze(-1), 0))
    torch.testing.assert_close(model(x, mask), model.process(model.aggregate(x, mask)), rtol=0, atol=0)


@pytest.mark.parametrize("bad", [dict(embed_layers=-1), dict(process_layers=0), dict(equivariant_layers=-1)])
def test_layer_counts_are_checked(bad: dict) -> None:
    with pytest.raises(ValueError, match=f"need .*{next(iter(bad))} >= "):
        sf.DeepSet(3, 2, **bad)


@every_model_spec
@given(data=st.data())
def test_model_without_embedding_is_permutation_invariant(spec: str, data) -> None:
    x, mask = data.draw(populations(max_d=3))
    perm = torch.tensor(data.draw(st.permutations(range(x.shape[1]))))
    model = _model(x.shape[-1], spec, embed_layers=0)
    permuted_mask = None if mask is None else mask[:, perm]
    torch.testing.assert_close(model(x[:, perm], permuted_mask), model(x, mask), rtol=1e-9, atol=1e-9)


@every_model_spec
@given(data=st.data(), junk=JUNK)
def test_model_without_embedding_ignores_padding(spec: str, data, junk: float) -> None:
    x, mask = data.draw(populations(max_d=3))
    model = _model(x.shape[-1], spec, embed_layers=0)
    torch.testing.assert_close(model(*_pad(x, mask, 3, junk)), model(x, mask), rtol=1e-9, atol=1e-9)


# --- the memory: what the final aggregation reads --------------------------------------------------

@every_equivariant_spec
@pytest.mark.parametrize("embed_layers", [0, 1])
@given(data=st.data())
def test_memory_is_permutation_equivariant(spec: str, embed_layers: int, data) -> None:
    x, mask = data.draw(populations(max_d=3))
    perm = torch.tensor(data.draw(st.permutations(range(x.shape[1]))))
    model = _model(x.shape[-1], spec, embed_layers)
    permuted_mask = None if mask is None else mask[:, perm]
    torch.testing.assert_close(model.memory(x[:, perm], permuted_mask), model.memory(x, mask)[:, perm],
                               rtol=1e-9, atol=1e-9)


@every_equivariant_spec
@pytest.mark.parametrize("embed_layers", [0, 1])
@given(data=st.data(), junk=JUNK)
def test_memory_ignores_padding(spec: str, embed_layers: int, data, junk: float) -> None:
    """The real particles' rows do not depend on padding, and padded rows are zeros."""
    x, mask = data.draw(populations(max_d=3))
    model = _model(x.shape[-1], spec, embed_layers)
    padded = model.memory(*_pad(x, mask, 3, junk))
    n = x.shape[1]
    real = torch.ones(x.shape[:2], dtype=torch.bool) if mask is None else mask
    torch.testing.assert_close(padded[:, :n][real], model.memory(x, mask)[real], rtol=1e-9, atol=1e-9)
    assert torch.equal(padded[:, n:], torch.zeros_like(padded[:, n:]))
    assert torch.equal(padded[:, :n][~real], torch.zeros_like(padded[:, :n][~real]))


@every_equivariant_spec
@pytest.mark.parametrize("embed_layers", [0, 1, 2])
def test_memory_continues_from_the_first_layers_pre_activations(spec: str, embed_layers: int) -> None:
    """:meth:`DeepSet.memory_from_first_layer` of :math:`W x + b` (of :math:`x` without embedding) is
    the memory, padded rows included: what the set localiser relies on when it computes
    :math:`W x + b` in parts."""
    x, mask = torch.randn(3, 6, 2, dtype=torch.float64), torch.rand(3, 6) < 0.7
    mask[:, 0] = True
    model = _model(2, spec, embed_layers).double()
    pre = model.embed[0](x.masked_fill(~mask.unsqueeze(-1), 0)) if embed_layers else x
    torch.testing.assert_close(model.memory_from_first_layer(pre, mask), model.memory(x, mask), rtol=0, atol=0)


@pytest.mark.parametrize("spec", ["max/max", "r-lse/r-lse", "q-sum/max", "max/rpw"])
@pytest.mark.parametrize("embed_layers", [0, 2])
def test_forward_aggregates_the_memory(spec: str, embed_layers: int) -> None:
    x, mask = torch.randn(3, 6, 2, dtype=torch.float64), torch.rand(3, 6) < 0.7
    mask[:, 0] = True
    model = _model(2, spec, embed_layers)
    expected = model.process(model.aggregate(model.memory(x, mask), mask))
    torch.testing.assert_close(model(x, mask), expected, rtol=0, atol=0)


# --- the reads of a learnable aggregation ----------------------------------------------------------

@every_learnable_aggregation
@given(data=st.data())
def test_attend_returns_the_reads_the_aggregate_is_made_of(case: AggregationCase, data) -> None:
    x, mask = data.draw(populations())
    agg = seeded(case.build(x.shape[-1]))
    a, w, reads = agg.attend(x, mask, return_reads=True)
    torch.testing.assert_close(a, agg(x, mask), rtol=0, atol=0)
    torch.testing.assert_close(w, agg.attend(x, mask)[1], rtol=0, atol=0)
    assert len(reads) == getattr(agg, "steps", 1) and all(r.shape == a.shape for r in reads)
    m = x if mask is None else x.masked_fill(~mask.unsqueeze(-1), 0)
    for t, read in enumerate(reads):  # a_t = reduce({w_t,i m_i}) (or reduce({m_i + ln w_t,i}))
        if agg.weighting == "log":
            expected = agg.reducer.reduce(m + w[:, t].log().unsqueeze(-1), mask)
        else:
            expected = agg.reducer.weighted(m, w[:, t], mask)
        torch.testing.assert_close(read, expected, rtol=1e-7, atol=1e-7)
    if getattr(agg, "backward_rnn", None) is not None:  # a = g(a_T, ..., a_1)
        _, (h, _) = agg.backward_rnn(torch.stack(reads[::-1], dim=1))
        torch.testing.assert_close(a, h[-1], rtol=1e-9, atol=1e-9)
    else:  # a = a_T
        assert reads[-1] is a


@every_learnable_aggregation
def test_the_gradient_reaches_every_read(case: AggregationCase) -> None:
    """The reads are the tensors the aggregate is computed from: autograd differentiates with respect to them."""
    agg = seeded(case.build(4))
    x = torch.randn(3, 7, 4, dtype=torch.float64)
    a, _, reads = agg.attend(x, return_reads=True)
    gradients = torch.autograd.grad((a**2).sum(), reads)
    assert all(g is not None and g.shape == a.shape and bool(torch.isfinite(g).all()) for g in gradients)
    assert gradients[-1].abs().sum() > 0


# --- the point-cloud classifier is a Deep Set without embedding ------------------------------------

class _ClassifierBeforeDeepSet(nn.Module):
    """Frozen copy of the point-cloud classifier as it was built before it became a DeepSet (commit
    ed98031): the committed quick-budget outputs of chapter 10 depend on its random initialisation."""

    def __init__(self, classes: int, spec: str, hidden: int = 256, equivariant_layers: int = 3,
                 dropout: float = 0.5, steps: int = 3, in_features: int = 3) -> None:
        super().__init__()
        equivariant_spec, final_spec = parse_spec(spec)
        widths = [in_features] + [hidden] * equivariant_layers
        self.combine = nn.ModuleList(
            sf.Equivariant(a, b, equivariant_spec, "tanh", **self._steps(equivariant_spec, steps))
            for a, b in zip(widths[:-1], widths[1:]))
        self.aggregate = sf.aggregation(final_spec, features=hidden, **self._steps(final_spec, steps))
        self.process = mlp([self.aggregate.out_features or hidden, hidden, classes], "tanh", dropout)

    @staticmethod
    def _steps(spec: str, steps: int) -> dict:
        return {"steps": steps} if spec == "rpw" or spec.startswith("r-") else {}

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for layer in self.combine:
            x = layer(x, mask)
        return self.process(self.aggregate(x, mask))


@pytest.mark.parametrize("spec", sorted(set(sf.TABLE2_SPECS) | {"max/r-lme", "r-lme/r-lme", "q-sum/max", "rpw/rpw"}))
def test_classifier_is_unchanged_by_being_a_deep_set(spec: str) -> None:
    """Same seed, same parameters in the same order with the same values, same outputs (dropout too)."""
    torch.manual_seed(0)
    before = _ClassifierBeforeDeepSet(7, spec)
    torch.manual_seed(0)
    model = PointCloudClassifier(7, spec)
    assert isinstance(model, sf.DeepSet) and parameter_count(model) == parameter_count(before)
    named, named_before = list(model.named_parameters()), list(before.named_parameters())
    assert [n for n, _ in named] == [n for n, _ in named_before]
    assert all(torch.equal(p, q) for (_, p), (_, q) in zip(named, named_before))
    assert [type(m) for m in model.process] == [type(m) for m in before.process]
    x, mask = torch.randn(2, 9, 3), torch.rand(2, 9) < 0.7
    mask[:, 0] = True
    for seed in (1, 2):  # training mode: the same dropout masks from the same stream
        torch.manual_seed(seed)
        logits = model(x)
        torch.manual_seed(seed)
        torch.testing.assert_close(logits, before(x), rtol=0, atol=0)
    model.eval()
    before.eval()
    torch.testing.assert_close(model(x, mask), before(x, mask), rtol=0, atol=0)
