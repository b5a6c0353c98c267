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


def test_an_objective_of_the_model_and_batch_trains_as_the_loss_does() -> None:
    """``fit(objective=...)`` (for models that are no map to a prediction, such as AIR's ELBO) takes
    the same steps as ``loss`` when the objective is the loss of the model's prediction."""
    mse = torch.nn.functional.mse_loss
    runs = []
    for how in ("loss", "objective"):
        torch.manual_seed(0)
        model = sf.DeepSet(1, 1, spec="max/max", hidden=8, equivariant_layers=1)
        kwargs = ({"loss": mse} if how == "loss" else
                  {"loss": None, "objective": lambda m, x, y, mask: mse(m(x, mask), y)})
        runs.append(fit(model, _sampler(), steps=20, lr=1e-2, progress=False, **kwargs))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("both", [True, False])
def test_fit_needs_exactly_one_of_loss_and_objective(both: bool) -> None:
    model = sf.DeepSet(1, 1, spec="max/max", hidden=4)
    objective = (lambda m, x, y, mask: m(x, mask).sum()) if both else None
    loss = torch.nn.functional.mse_loss if both else None
    with pytest.raises(ValueError, match="exactly one of loss"):
        fit(model, _sampler(), loss, steps=3, progress=False, objective=objective)


def test_budget_from_environment(monkeypatch) -> None:
    monkeypatch.delenv("SETFUNCS_BUDGET", raising=False)
    assert budget() == "quick" and pick(1, 2) == 1
    monkeypatch.setenv("SETFUNCS_BUDGET", "FULL")
    assert pick(1, 2) == 2
    monkeypatch.setenv("SETFUNCS_BUDGET", "medium")
    with pytest.raises(ValueError, match="quick.*full"):
        budget()
