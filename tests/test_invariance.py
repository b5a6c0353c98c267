"""Permutation invariance (Definition 1): every aggregation and every model of the paper gives the
same output for any order of the particles, with and without a mask."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

import setfuncs as sf
from conftest import AggregationCase, every_aggregation, every_model_spec, populations, seeded


def _permute(x: torch.Tensor, mask: torch.Tensor | None, perm: list[int]):
    index = torch.tensor(perm)
    return x[:, index], (None if mask is None else mask[:, index])


@every_aggregation
@given(data=st.data())
def test_aggregation_is_permutation_invariant(case: AggregationCase, data) -> None:
    x, mask = data.draw(populations(positive=case.positive))
    perm = data.draw(st.permutations(range(x.shape[1])))
    agg = seeded(case.build(x.shape[-1]))
    expected = agg(x, mask)
    torch.testing.assert_close(agg(*_permute(x, mask, perm)), expected, rtol=1e-9, atol=1e-9)


@every_model_spec
@given(data=st.data())
def test_model_is_permutation_invariant(spec: str, data) -> None:
    x, mask = data.draw(populations(max_d=3))
    perm = data.draw(st.permutations(range(x.shape[1])))
    model = seeded(sf.DeepSet(x.shape[-1], 2, spec=spec, hidden=6, steps=2), seed=1)
    torch.testing.assert_close(model(*_permute(x, mask, perm)), model(x, mask), rtol=1e-9, atol=1e-9)


@every_aggregation
@given(data=st.data())
def test_fast_path_equals_full_mask(case: AggregationCase, data) -> None:
    """``mask=None`` (the fast path) and an all-True mask are the same function."""
    x, _ = data.draw(populations(positive=case.positive, masked=False))
    agg = seeded(case.build(x.shape[-1]))
    full = torch.ones(x.shape[:2], dtype=torch.bool)
    torch.testing.assert_close(agg(x, None), agg(x, full), rtol=1e-12, atol=1e-12)
