"""On a GPU: the graphed step trains exactly as the eager one, ensembles stay equal to their seeds
one by one, capture failures fall back once and say why, the circle sweep trains ensembles, and the
ensembles of the other reruns (mixture, attention, point clouds) replay one graph from their first
step after the warm-up.

Every test here needs a CUDA GPU and skips on a CPU (CI has none); run ``pytest tests/test_cuda.py``
on a machine with one. The CPU halves of these properties are in ``test_devices.py`` and
``test_ensemble.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

import setfuncs as sf
from setfuncs.ensemble import fit_ensemble
from setfuncs.experiments import circle
from setfuncs.experiments.engine import Engine
from setfuncs.steps import WARMUP_STEPS
from setfuncs.train import fit

import batches  # tests/batches.py

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA GPU (CI has none; run pytest tests/test_cuda.py on a GPU machine)")

SPECS = ["max/max", "r-max/r-max", "r-lse/r-lse", "lme/mean"]
STEPS = 40


def sampler(seed: int, masked: bool = False, sizes: tuple[int, ...] = (20,)):
    return batches.sampler(seed, 16, sizes, masked)


def train(spec: str, seed: int, graph: bool | None, device: str = "cuda", masked: bool = False):
    torch.manual_seed(seed)
    model = sf.DeepSet(2, 3, spec, hidden=32, steps=3)
    log = fit(model, sampler(seed, masked), nn.functional.mse_loss, STEPS, lr=3e-3, clip=1.0, milestones=[25],
              progress=False, device=device, graph=graph)
    return model, log


@pytest.mark.parametrize("masked", [False, True], ids=["dense", "masked"])
@pytest.mark.parametrize("spec", SPECS)
def test_graphed_and_eager_steps_train_alike(spec: str, masked: bool) -> None:
    eager, eager_log = train(spec, 0, graph=False, masked=masked)
    graphed, graphed_log = train(spec, 0, graph=True, masked=masked)
    assert eager_log.graphed == 0 and graphed_log.graphed == STEPS - WARMUP_STEPS and graphed_log.fallback is None
    assert graphed_log.device == torch.cuda.get_device_name()
    torch.testing.assert_close(torch.tensor(graphed_log), torch.tensor(eager_log), rtol=1e-4, atol=1e-5)
    for a, b in zip(eager.parameters(), graphed.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("spec", ["max/max", "r-lse/r-lse"])
def test_gpu_training_follows_cpu_training(spec: str) -> None:
    cpu, cpu_log = train(spec, 1, graph=None, device="cpu")
    gpu, gpu_log = train(spec, 1, graph=None)
    torch.testing.assert_close(torch.tensor(gpu_log), torch.tensor(cpu_log), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("masked", [False, True], ids=["dense", "masked"])
@pytest.mark.parametrize("spec", ["max/max", "r-lse/r-lse"])
def test_a_graphed_ensemble_trains_its_seeds_as_one_by_one(spec: str, masked: bool) -> None:
    seeds = [0, 1, 2, 3]
    models = []
    for seed in seeds:
        torch.manual_seed(seed)
        models.append(sf.DeepSet(2, 3, spec, hidden=32, steps=3))
    logs = fit_ensemble(models, [sampler(s, masked) for s in seeds], nn.functional.mse_loss, STEPS, lr=3e-3,
                        clip=1.0, milestones=[25], progress=False, device="cuda")
    for seed, model, log in zip(seeds, models, logs):
        alone, alone_log = train(spec, seed, graph=False, masked=masked)
        assert log.graphed == STEPS - WARMUP_STEPS
        torch.testing.assert_close(torch.tensor(log), torch.tensor(alone_log), rtol=1e-4, atol=1e-5)
        for a, b in zip(alone.parameters(), model.parameters()):
            torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-4)


class PositiveMean(nn.Module):
    """A model whose power mean must read its particles (to check they are positive)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed, self.out = nn.Linear(2, 8), nn.Linear(8, 3)
        self.aggregate = sf.aggregation("pmean(2)")

    def forward(self, x, mask):
        return self.out(self.aggregate(nn.functional.softplus(self.embed(x)) + 0.1, mask))


def test_a_step_that_reads_values_falls_back_once_and_says_why() -> None:
    torch.manual_seed(0)
    with pytest.warns(RuntimeWarning, match="power mean") as caught:
        log = fit(PositiveMean(), sampler(0), nn.functional.mse_loss, STEPS, progress=False, device="cuda")
    assert len(caught) == 1 and len(log) == STEPS and log.graphed == 0 and "power mean" in log.fallback


def test_batches_that_change_shape_fall_back_once() -> None:
    torch.manual_seed(0)
    with pytest.warns(RuntimeWarning, match="shapes changed at step 20") as caught:
        log = fit(sf.DeepSet(2, 3, "max/r-lse", hidden=8), sampler(0, sizes=(20, 30)), nn.functional.mse_loss,
                  STEPS, progress=False, device="cuda")
    assert len(caught) == 1 and log.graphed == 20 - WARMUP_STEPS and all(map(torch.isfinite, torch.tensor(log)))


def test_the_circle_sweep_trains_ensembles_on_the_gpu(tmp_path: Path) -> None:
    budget = circle.Budget("tiny", steps=30, batch=16, lr=1e-3, clip=1.0, hidden=16, equivariant_layers=1,
                           recurrent_steps=2, test_size=64, test_population_sizes=(20,))
    out = tmp_path / "c.json"
    circle.sweep(3, budget, out, ["max/max", "r-lse/r-lse"], engine=Engine(jobs=1, device="cuda"), progress=False)
    results = json.loads(out.read_text())
    assert results["complete"] and len(results["runs"]) == 6
    for run in results["runs"]:
        assert run["ensemble"]["size"] == 3 and run["provenance"]["device"] == "cuda"
        assert run["training"]["device"] == torch.cuda.get_device_name()
        assert run["training"]["graphed_steps"] == budget.steps - WARMUP_STEPS
        setting = {"max/max": "plain/plain", "r-lse/r-lse": "recurrent/recurrent"}[run["spec"]]
        cpu = circle.run_one(setting, run["equivariant"], run["final"], run["seed"], budget)
        assert run["mse"] == pytest.approx(cpu["mse"], rel=1e-3)


CONCURRENT = [("plain/plain", "max", "max"), ("recurrent/recurrent", "lse", "lse"), ("plain/recurrent", "mean", "max"),
              ("recurrent/plain", "lme", "mean")]


def test_configurations_at_once_on_their_own_streams_train_as_one_after_another() -> None:
    """Four circle configurations at once (:func:`run_concurrently`: a thread and a CUDA stream each,
    one graph each) give the records of the four one after another, and every step after the warm-up
    replays a graph."""
    from setfuncs.experiments.concurrent import run_concurrently
    from setfuncs.experiments.sweeps import spec_of

    budget = circle.Budget("tiny", steps=30, batch=16, lr=1e-3, clip=1.0, hidden=16, equivariant_layers=1,
                           recurrent_steps=2, test_size=64, test_population_sizes=(20,))
    groups = [([(spec_of(*c), s) for s in (0, 1, 2)], [(*c, s, budget, False, "cuda") for s in (0, 1, 2)])
              for c in CONCURRENT]
    at_once = run_concurrently(circle.run_ensemble, groups, "cuda")
    one_by_one = [record for _, args in groups for record in circle.run_ensemble(args)]
    assert len(at_once) == len(one_by_one) == 12
    for a, b in zip(at_once, one_by_one):
        assert (a["spec"], a["seed"]) == (b["spec"], b["seed"]) and a["error"] is None, a["error"]
        assert a["training"]["graphed_steps"] == budget.steps - WARMUP_STEPS and a["training"]["graph_fallback"] is None
        assert a["mse"] == pytest.approx(b["mse"], rel=1e-4)
        assert a["learning_curve"]["test"]["values"] == pytest.approx(b["learning_curve"]["test"]["values"], rel=1e-4)


def test_the_circle_sweep_trains_configurations_at_once_on_the_gpu(tmp_path: Path) -> None:
    budget = circle.Budget("tiny", steps=30, batch=16, lr=1e-3, clip=1.0, hidden=16, equivariant_layers=1,
                           recurrent_steps=2, test_size=64, test_population_sizes=(20,))
    out = tmp_path / "c.json"
    specs = ["max/max", "r-lse/r-lse", "mean/r-max"]
    circle.sweep(2, budget, out, specs, engine=Engine(jobs=1, device="cuda", concurrent=2), progress=False)
    results = json.loads(out.read_text())
    assert results["complete"] and len(results["runs"]) == 6 and results["sittings"][0]["concurrent"] == 2
    assert all(run["training"]["graphed_steps"] == budget.steps - WARMUP_STEPS for run in results["runs"])


def test_a_stream_labelled_on_the_gpu_has_the_cpu_labels() -> None:
    from setfuncs.experiments.circle.stream import labels, training_populations

    x = training_populations(0, 50, 64)
    torch.testing.assert_close(labels(x.cuda()).cpu(), labels(x), rtol=1e-6, atol=1e-6)


# -- the reruns' ensembles: every experiment's GPU path captures its step as one graph --

def _graphed_throughout(trained: list, steps: int) -> None:
    for _, log in trained:
        assert not isinstance(log, FloatingPointError), log
        assert log.fallback is None and log.graphed == steps - WARMUP_STEPS, (log.graphed, log.fallback)


def test_the_mixture_ensemble_replays_one_graph_on_its_device_stream() -> None:
    from dataclasses import replace
    from setfuncs.experiments.mixture import QUICK, train_ensemble
    budget = replace(QUICK, steps=STEPS)
    _graphed_throughout(train_ensemble("plain/plain", "max", "max", [0, 1, 2], budget, progress=False, device="cuda"),
                        STEPS)


@pytest.mark.parametrize("spec", ["mean", "r-lse", "image"])
def test_the_attention_ensemble_replays_one_graph_with_its_noise_inside(spec: str) -> None:
    from dataclasses import replace
    from setfuncs.experiments.attention import QUICK
    from setfuncs.experiments.attention.sweep import Data, train_ensemble
    budget = replace(QUICK, steps=STEPS)
    trained = train_ensemble(spec, [0, 1], budget, Data(), device="cuda")
    _graphed_throughout(trained, STEPS)
    assert trained[0][1][-1] != trained[1][1][-1]                  # two seeds, two trainings


@pytest.mark.parametrize("spec", ["max/max", "r-lse/r-lse"])
def test_the_point_cloud_ensemble_replays_one_graph_with_dropout_inside(spec: str) -> None:
    from dataclasses import replace
    from setfuncs.experiments.pointcloud.budget import QUICK
    from setfuncs.experiments.pointcloud.sweep import Data, load_data, train_ensemble
    budget = replace(QUICK, steps=STEPS)
    _graphed_throughout(train_ensemble(spec, [0, 1], budget, load_data(Data(), budget), progress=False, device="cuda"),
                        STEPS)
