"""Padding invariance: appending masked particles with any junk (huge, infinite) changes nothing,
for every aggregation, every equivariant layer and every model spec."""

from __future__ import annotations

import math

import torch
from hypothesis import given
from hypothesis import strategies as st

import setfuncs as sf
from conftest import AggregationCase, every_aggregation, every_model_spec, populations, seeded

JUNK = st.sampled_from([1e30, -1e30, 1e6, math.inf, -math.inf])


def _pad(x: torch.Tensor, mask: torch.Tensor | None, extra: int, junk: float):
    b, n, d = x.shape
    mask = torch.ones(b, n, dtype=torch.bool) if mask is None else mask
    filler = torch.full((b, extra, d), junk, dtype=x.dtype)
    return torch.cat([x, filler], 1), torch.cat([mask, torch.zeros(b, extra, dtype=torch.bool)], 1)


@every_aggregation
@given(data=st.data(), extra=st.integers(1, 5), junk=JUNK)
def test_aggregation_ignores_padding(case: AggregationCase, data, extra: int, junk: float) -> None:
    x, mask = data.draw(populations(positive=case.positive))
    agg = seeded(case.build(x.shape[-1]))
    torch.testing.assert_close(agg(*_pad(x, mask, extra, junk)), agg(x, mask), rtol=1e-9, atol=1e-9)


@every_aggregation
@given(data=st.data(), junk=JUNK)
def test_equivariant_layer_ignores_padding(case: AggregationCase, data, junk: float) -> None:
    x, mask = data.draw(populations(positive=case.positive))
    layer = seeded(sf.Equivariant(x.shape[-1], 3, aggregation=case.build(x.shape[-1])))
    padded = layer(*_pad(x, mask, 2, junk))
    torch.testing.assert_close(padded[:, : x.shape[1]], layer(x, mask), rtol=1e-9, atol=1e-9)
    assert torch.equal(padded[:, x.shape[1]:], torch.zeros_like(padded[:, x.shape[1]:]))


@every_model_spec
@given(data=st.data(), junk=JUNK)
def test_model_ignores_padding(spec: str, data, junk: float) -> None:
    x, mask = data.draw(populations(max_d=3))
    model = seeded(sf.DeepSet(x.shape[-1], 2, spec=spec, hidden=6, steps=2), seed=2)
    torch.testing.assert_close(model(*_pad(x, mask, 3, junk)), model(x, mask), rtol=1e-9, atol=1e-9)


def test_ragged_populations_match_one_at_a_time() -> None:
    """pad_populations + mask gives each population the output it gets alone."""
    torch.manual_seed(0)
    pops = [torch.randn(n, 2, dtype=torch.float64) for n in (1, 4, 9)]
    model = seeded(sf.DeepSet(2, 3, spec="r-lse/r-lse", hidden=8))
    x, mask = sf.pad_populations(pops, value=7e9)
    together = model(x, mask)
    alone = torch.cat([model(p.unsqueeze(0)) for p in pops])
    torch.testing.assert_close(together, alone, rtol=1e-9, atol=1e-9)
