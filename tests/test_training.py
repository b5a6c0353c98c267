"""The training loop learns, reports every step, refuses bad settings; the budget is read from
one environment variable."""

from __future__ import annotations

import pytest
import torch

import setfuncs as sf
from setfuncs.budget import budget, pick
from setfuncs.train import evaluate, fit


def _sampler(seed: int = 0):
    gen = torch.Generator().manual_seed(seed)

    def sample():
        x = torch.randn(32, 8, 1, generator=gen)
        return x, x.sum(1), None
    return sample


def test_fit_reduces_the_loss() -> None:
    torch.manual_seed(0)
    model = sf.DeepSet(1, 1, spec="sum/sum", hidden=16, equivariant_layers=1)
    mse = torch.nn.functional.mse_loss
    before = evaluate(model, _sampler(1)(), mse)
    losses = fit(model, _sampler(), mse, steps=150, lr=1e-2, progress=False)
    assert len(losses) == 150
    assert evaluate(model, _sampler(1)(), mse) < 0.2 * before


def test_fit_stops_on_a_diverging_loss() -> None:
    model = sf.DeepSet(1, 1, spec="max/max", hidden=4)
    with pytest.raises(FloatingPointError, match="lower the learning rate"):
        fit(model, _sampler(), lambda p, y: (p - y).sum() * float("inf"), steps=3, progress=False)


def test_budget_from_environment(monkeypatch) -> None:
    monkeypatch.delenv("SETFUNCS_BUDGET", raising=False)
    assert budget() == "quick" and pick(1, 2) == 1
    monkeypatch.setenv("SETFUNCS_BUDGET", "FULL")
    assert pick(1, 2) == 2
    monkeypatch.setenv("SETFUNCS_BUDGET", "medium")
    with pytest.raises(ValueError, match="quick.*full"):
        budget()
