"""Device-aware training on the CPU: fit takes the steps the plain Adam loop takes, reads its losses
in chunks without losing the step that diverged, refuses devices it does not have, and the sweeps
record where their runs trained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

import setfuncs as sf
from setfuncs.experiments import circle
from setfuncs.experiments.engine import Engine
from setfuncs.population import SyncRequired, sync_free
from setfuncs.steps import TrainingLog, resolve_device
from setfuncs.train import fit

import batches  # tests/batches.py

SPECS = ["max/max", "lse/r-lse", "r-lme/mean", "sum/quantile(0.5)"]


def reference_fit(model: nn.Module, sample, loss, steps: int, lr: float, clip: float | None,
                  milestones=(), gamma: float = 0.1) -> list[float]:
    """The training loop as it was before devices: Adam, MultiStepLR, a read of the loss every step."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, list(milestones), gamma)
    model.train()
    losses = []
    for _ in range(steps):
        x, y, mask = sample()
        value = loss(model(x, mask), y)
        optimizer.zero_grad()
        value.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        schedule.step()
        losses.append(value.item())
    model.eval()
    return losses


def sampler(seed: int, masked: bool):
    return batches.sampler(seed, 8, 6, masked)


@pytest.mark.parametrize("masked", [False, True], ids=["dense", "masked"])
@pytest.mark.parametrize("spec", SPECS)
def test_fit_on_the_cpu_takes_the_steps_of_the_plain_loop(spec: str, masked: bool) -> None:
    runs = []
    for train in (reference_fit, lambda *a, **k: fit(*a, progress=False, device="cpu", read_every=7, **k)):
        torch.manual_seed(0)
        model = sf.DeepSet(2, 3, spec, hidden=8)
        losses = train(model, sampler(1, masked), nn.functional.mse_loss, 30, lr=3e-3, clip=0.5,
                       milestones=[10, 20])
        runs.append((losses, [p.detach().clone() for p in model.parameters()]))
    assert runs[0][0] == list(runs[1][0])
    for a, b in zip(runs[0][1], runs[1][1]):
        assert torch.equal(a, b)


def test_fit_reports_where_and_how_it_trained() -> None:
    model = sf.DeepSet(2, 3, "max/max", hidden=4)
    log = fit(model, sampler(0, False), nn.functional.mse_loss, 5, progress=False)
    assert isinstance(log, TrainingLog) and len(log) == 5
    assert log.describe() == {"device": "cpu", "graphed_steps": 0, "graph_fallback": None}


def test_divergence_is_found_at_its_step_between_reads() -> None:
    steps = iter(range(100))

    def loss(prediction, y):
        return nn.functional.mse_loss(prediction, y) * (float("nan") if next(steps) == 13 else 1.0)

    model = sf.DeepSet(2, 3, "max/max", hidden=4)
    with pytest.raises(FloatingPointError, match="the loss became nan after 13 steps"):
        fit(model, sampler(0, False), loss, 40, progress=False, read_every=10)


def test_devices_that_are_not_here_are_refused() -> None:
    model = sf.DeepSet(2, 3, "max/max", hidden=4)
    with pytest.raises(ValueError, match="graph=True needs a CUDA device"):
        fit(model, sampler(0, False), nn.functional.mse_loss, 2, progress=False, graph=True)
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda', 'cuda:N' or 'auto'"):
        resolve_device("tpu")
    with pytest.raises(ValueError, match="read_every must be a positive int"):
        fit(model, sampler(0, False), nn.functional.mse_loss, 2, progress=False, read_every=0)
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="sees no CUDA GPU"):
            resolve_device("cuda")


def test_sync_free_reads_no_values() -> None:
    """Inside sync_free a masked batch with an empty population passes the shape checks (the caller
    checked it before), reductions take their safe path, and the power mean refuses to guess."""
    x = torch.randn(2, 3, 4)
    mask = torch.tensor([[True, True, False], [True, False, False]])
    for spec in ["sum", "mean", "lse", "max", "r-lse"]:
        aggregation = sf.aggregation(spec, features=4) if spec.startswith("r-") else sf.aggregation(spec)
        with sync_free():
            inside = aggregation(x, mask)
        torch.testing.assert_close(inside, aggregation(x, mask))
    with pytest.raises(ValueError, match="no real particle"):
        sf.aggregation("sum")(x, torch.zeros(2, 3, dtype=torch.bool))
    with sync_free(), pytest.raises(SyncRequired, match="power mean"):
        sf.aggregation("pmean(2)")(x.abs() + 1, mask)


def test_the_circle_sweep_records_its_device(tmp_path: Path, in_process_scheduler: str) -> None:
    """Where a run trained, in its record; the run is run_one's (that a worker process gets the
    same numbers is tests/test_sweep_engine.py's)."""
    budget = circle.Budget("tiny", steps=6, batch=4, lr=1e-3, clip=1.0, hidden=4, equivariant_layers=1,
                           recurrent_steps=2, test_size=8, test_population_sizes=(20,))
    out = tmp_path / "c.json"
    circle.sweep(1, budget, out, ["max/r-lse"], engine=Engine(scheduler=in_process_scheduler, device="cpu"), progress=False)
    run = json.loads(out.read_text())["runs"][0]
    assert run["training"] == {"device": "cpu", "graphed_steps": 0, "graph_fallback": None}
    assert run["provenance"]["device"] == "cpu"
    alone = circle.run_one("plain/recurrent", "max", "lse", 0, budget)
    assert run["mse"] == alone["mse"] and run["final_train_loss"] == alone["final_train_loss"]
