"""Permutation equivariance (Definition 2): equivariant layers permute their output with their
input, for every aggregation inside them and for both layer forms."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

import setfuncs as sf
from conftest import AggregationCase, every_aggregation, populations, seeded


@every_aggregation
@given(data=st.data())
def test_equivariant_layer_commutes_with_permutations(case: AggregationCase, data) -> None:
    x, mask = data.draw(populations(positive=case.positive))
    perm = torch.tensor(data.draw(st.permutations(range(x.shape[1]))))
    d = x.shape[-1]
    for layer_cls in (sf.Equivariant, sf.DeepSetsEquivariant):
        layer = seeded(layer_cls(d, 5, aggregation=case.build(d)))
        y = layer(x, mask)
        permuted_mask = None if mask is None else mask[:, perm]
        torch.testing.assert_close(layer(x[:, perm], permuted_mask), y[:, perm], rtol=1e-9, atol=1e-9)
        assert y.shape == (x.shape[0], x.shape[1], 5)


@given(data=st.data())
def test_non_equivariant_map_is_caught(data) -> None:
    """The check above can fail: a layer that mixes particles by position is not equivariant."""
    x, _ = data.draw(populations(masked=False))
    if x.shape[1] < 2:
        return
    perm = torch.roll(torch.arange(x.shape[1]), 1)
    positional = lambda t: t.cumsum(dim=1)  # noqa: E731
    assert not torch.allclose(positional(x[:, perm]), positional(x)[:, perm])
