"""The point-cloud seeds trained as one ensemble (the GPU sweeps): the stream made on the device is the
batches ``training_batches`` draws; an ensemble without dropout trains as its seeds one by one,
checkpoints included; with dropout every seed draws its own masks; every column's step reads no
tensor values; a GPU-like sweep (ensembles forced on, on the CPU) writes resumable, schema-valid
records; and the errors say what to fix."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from setfuncs.experiments.engine import Engine
from setfuncs.experiments.protocol import Checkpoints
from setfuncs.experiments.pointcloud import MEDIUM, Budget, Data, run_one, sweep, train_model
from setfuncs.experiments.pointcloud import train as train_module
from setfuncs.experiments.pointcloud.preprocess import standardize
from setfuncs.experiments.pointcloud.stream import (augment_on_device, batch_draws, device_clouds, ensemble_stream,
                                                    stacked_sampler)
from setfuncs.experiments.pointcloud.sweep import COLUMNS, RUN_SCHEMA, load_data, run_ensemble, train_ensemble
from setfuncs.experiments.pointcloud.train import (optimizer_settings, train_classifier, train_classifier_ensemble,
                                                   training_batches)
from setfuncs.experiments.schema import check_results
from setfuncs.experiments.sweeps import TRAIN_SEED
from setfuncs.steps import TrainingLog

#: 24 training clouds of 30 particles in batches of 8: 3 batches an epoch, so 10 steps cross three
#: epoch boundaries; Adam's epsilon, the decays (after steps 4 and 8) and a clip that binds are all
#: the budget's; dropout 0.5 as the reference.
TINY = Budget("tiny", steps=10, batch=8, lr=1e-2, clip=0.05, hidden=8, equivariant_layers=1, recurrent_steps=2,
              test_size=2, points=30, train_per_class=2, eps=1e-3, curve_sizes=(10,))
NO_DROPOUT = replace(TINY, dropout=0.0)
#: float32's unit roundoff.
UNIT = 2.0 ** -24


def _clouds(count: int, points: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Clouds of different scales and offsets (standardisation matters), one with a stray vertex
    that the clipping catches, and their labels."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, points, 3)) * rng.uniform(0.1, 10, (count, 1, 3)) + 5 * rng.normal(size=(count, 1, 3))
    x[1, 3] = 1e5
    return x.astype(np.float32), rng.integers(0, 4, count)


def test_the_stream_is_what_training_batches_draws_one_by_one() -> None:
    """23 clouds in batches of 5: 4 batches an epoch, 12 steps cross two epoch boundaries. Labels and
    z coordinates are equal (both round s_z * z once); x and y are rotated in float64 and rounded
    once by numpy, in float32 here: cos and sin rounded, two products and a difference, then the
    scale (at most 1.25) and its rounding, at most 10 u (|x| + |y|) apart, u = 2^-24 (the source
    coordinates after standardisation). The measured gap is about 2.4 u max|x|."""
    clouds, labels = _clouds(23, 50)
    seeds, steps, batch = (7, 8), 12, 5
    stream = ensemble_stream(seeds, len(clouds), steps, batch, "cpu")
    standardized = device_clouds(clouds, "cpu")
    sample = stacked_sampler(standardized, torch.from_numpy(labels), stream)
    references = [training_batches(clouds, labels, batch, np.random.default_rng(seed)) for seed in seeds]
    for t in range(steps):
        x, y, mask = sample()
        assert x.shape == (2, batch, 50, 3) and x.dtype == torch.float32 and mask is None
        for s, reference in enumerate(references):
            expected, expected_y, _ = reference()
            source = standardized[stream.indices[t, s]]
            assert torch.equal(y[s], expected_y) and torch.equal(x[s, ..., 2], expected[..., 2])
            bound = 10 * UNIT * (source[..., 0].abs() + source[..., 1].abs())
            assert ((x[s, ..., :2] - expected[..., :2]).abs() <= bound[..., None]).all(), (t, s)
    epochs = np.asarray(stream.indices[:8, 0]).reshape(2, -1)          # two whole epochs of seed 7
    assert all(len(set(epoch)) == len(epoch) == 20 for epoch in epochs) and set(epochs[0]) != set(epochs[1])


def test_a_seeds_draws_are_made_once_small_and_shared() -> None:
    """A MEDIUM seed keeps 40 bytes per cloud of a batch (6.4 MB, not the 1.9 GB of its points),
    read-only, and every column of the seed reads the same cached draws."""
    draws = batch_draws(TRAIN_SEED, 1200, MEDIUM.steps, MEDIUM.batch)
    assert draws.nbytes == MEDIUM.steps * MEDIUM.batch * 40 == 6_400_000
    assert MEDIUM.steps * MEDIUM.batch * MEDIUM.points * 3 * 4 == 300 * draws.nbytes      # its points: 1.92 GB
    assert batch_draws(TRAIN_SEED, 1200, MEDIUM.steps, MEDIUM.batch) is draws
    with pytest.raises(ValueError, match="read-only"):
        draws.angles[0, 0] = 0.0
    before = batch_draws.cache_info().hits
    ensemble_stream((TRAIN_SEED + 90, TRAIN_SEED + 91), 24, 5, 8, "cpu")
    ensemble_stream((TRAIN_SEED + 91, TRAIN_SEED + 92), 24, 5, 8, "cpu")
    assert batch_draws.cache_info().hits == before + 1


def test_one_run_and_an_ensemble_get_the_budgets_optimizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both loops get MEDIUM's Adam (eps 1e-3, weight decay 1e-7), its decays after 40 % and 80 %
    of the steps and its clip."""
    seen = {}
    monkeypatch.setattr(train_module, "fit", lambda *args, **kwargs: seen.setdefault("fit", kwargs))
    monkeypatch.setattr(train_module, "fit_ensemble", lambda *args, **kwargs: seen.setdefault("ensemble", kwargs))
    clouds, labels = _clouds(40, 5)
    model = torch.nn.Linear(1, 1)
    train_classifier(model, clouds, labels, MEDIUM, 0, progress=False)
    train_classifier_ensemble([model, model], clouds, labels, MEDIUM, [0, 1], progress=False)
    expected = {"lr": 1e-3, "weight_decay": 1e-7, "eps": 1e-3, "clip": 5.0, "milestones": [2000, 4000], "gamma": 0.1}
    assert optimizer_settings(MEDIUM) == expected
    for kwargs in seen.values():
        assert {key: kwargs[key] for key in expected} == expected


def _test_loss(clouds) -> Checkpoints:
    """A checkpoint metric that moves with every step: the test clouds' cross-entropy at 30 particles."""
    x = torch.from_numpy(standardize(clouds.test_x[:, :30]))
    y = torch.from_numpy(clouds.test_y)
    return Checkpoints("test_loss", [3, 7, 10], lambda model: torch.nn.functional.cross_entropy(model(x), y))


def test_without_dropout_an_ensemble_trains_as_its_seeds_one_by_one() -> None:
    clouds = load_data(Data(), NO_DROPOUT)
    seeds = [0, 1]
    checkpoints = [_test_loss(clouds) for _ in seeds]
    together = train_ensemble("max/r-lse", seeds, NO_DROPOUT, clouds, progress=False, checkpoints=checkpoints)
    for seed, (model, log), recorded in zip(seeds, together, checkpoints):
        alone_checkpoints = _test_loss(clouds)
        alone, alone_log = train_model("max/r-lse", seed, NO_DROPOUT, clouds, progress=False,
                                       checkpoints=alone_checkpoints)
        assert isinstance(log, TrainingLog) and len(log) == NO_DROPOUT.steps
        np.testing.assert_allclose(log, alone_log, rtol=1e-5, atol=1e-6)
        for ours, theirs in zip(model.state_dict().values(), alone.state_dict().values()):
            torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)
        assert len(recorded.values) == 3
        np.testing.assert_allclose(recorded.values, alone_checkpoints.values, rtol=1e-5)
    assert checkpoints[0].values != checkpoints[1].values and together[0][1] != together[1][1]


def test_an_ensembles_records_are_those_of_run_one() -> None:
    tasks = [("max/max", seed, NO_DROPOUT, Data(), False, "cpu") for seed in (0, 1)]
    together = run_ensemble(tasks)
    for record, task in zip(together, tasks):
        alone = run_one(*task)
        assert set(record) == set(alone) | {"ensemble"} and record["ensemble"]["size"] == 2
        assert {key: record[key] for key in ("spec", "equivariant", "final", "seed", "data", "epochs", "error")} == \
            {key: alone[key] for key in ("spec", "equivariant", "final", "seed", "data", "epochs", "error")}
        assert record["train_seconds"] == pytest.approx(record["ensemble"]["train_seconds"] / 2)
        assert record["clouds_per_second"] == pytest.approx(TINY.steps * TINY.batch / record["train_seconds"])
        assert record["learning_curve"]["loss"] == pytest.approx(alone["learning_curve"]["loss"], rel=1e-5)
        assert record["learning_curve"]["test"] == alone["learning_curve"]["test"]
        assert record["accuracy_by_population_size"] == alone["accuracy_by_population_size"]
        assert record["spread_ratio"] == pytest.approx(alone["spread_ratio"], rel=1e-3)


def test_with_dropout_every_seed_draws_its_own_masks() -> None:
    """Two models of one seed see the same initialisation and batches: only dropout can tell them
    apart. With it, their losses differ from the first step (masks per model); without, they agree."""
    with_dropout = [log for _, log in train_ensemble("max/max", [3, 3], replace(TINY, steps=2),
                                                     load_data(Data(), TINY), progress=False)]
    assert with_dropout[0][0] != with_dropout[1][0]
    without = [log for _, log in train_ensemble("max/max", [3, 3], replace(NO_DROPOUT, steps=2),
                                                load_data(Data(), NO_DROPOUT), progress=False)]
    np.testing.assert_allclose(without[0], without[1], rtol=1e-6)


def test_a_diverged_seed_is_recorded_as_run_one_records_it() -> None:
    """Learning rate 1e30: the loss is NaN after two steps, one by one and in the ensemble (the shared
    sweeps.run_configuration_ensemble, which every experiment's ensemble goes through)."""
    budget = replace(NO_DROPOUT, steps=3, lr=1e30)
    tasks = [("max/max", seed, budget, Data(), False, "cpu") for seed in (0, 1)]
    alone = run_one(*tasks[0])
    together = run_ensemble(tasks)
    assert alone["error"] is not None and alone["clouds_per_second"] is None
    for record in together:
        assert record["error"] == alone["error"] and record["clouds_per_second"] is None
        assert set(record) == set(alone) | {"ensemble"}
    check_results({"runs": together}, "diverged", RUN_SCHEMA)


@pytest.mark.parametrize("spec", COLUMNS)
def test_every_columns_ensemble_step_reads_no_tensor_values(spec: str) -> None:
    """fit_ensemble runs the step sync-free on the CPU too, and refuses a model that reads a value:
    what a CUDA graph of the step needs."""
    budget = replace(TINY, steps=2)
    trained = train_ensemble(spec, [0, 1], budget, load_data(Data(), budget), progress=False)
    assert all(isinstance(log, TrainingLog) and np.isfinite(log).all() for _, log in trained)


def test_a_gpu_sweep_trains_each_columns_seeds_as_one_ensemble(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                              in_process_scheduler: str) -> None:
    """What a GPU sweep does, here on the CPU: each column's seeds are one ensemble; the file keeps
    the schema, and a resumed sweep (run by run) adds only the seed it lacks."""
    out = tmp_path / "p.json"
    columns = ["max/max", "r-lse/r-lse"]
    with monkeypatch.context() as patched:
        patched.setattr(Engine, "ensembles", property(lambda self: True))
        sweep(2, TINY, out, columns, Data(), engine=Engine(scheduler=in_process_scheduler), progress=False)
    first = check_results(json.loads(out.read_text()), out, RUN_SCHEMA)
    assert first["complete"] and len(first["runs"]) == 4
    assert {(r["spec"], r["seed"], r["ensemble"]["size"], r["error"]) for r in first["runs"]} == \
        {(spec, seed, 2, None) for spec in columns for seed in (0, 1)}
    assert all(len(r["learning_curve"]["test"]["values"]) == 5 for r in first["runs"])
    sweep(3, TINY, out, columns, Data(), engine=Engine(scheduler=in_process_scheduler), progress=False)
    second = check_results(json.loads(out.read_text()), out, RUN_SCHEMA)
    assert second["runs"][:4] == first["runs"]
    assert sorted((r["spec"], r["seed"]) for r in second["runs"][4:]) == [(spec, 2) for spec in columns]
    assert not any("ensemble" in r for r in second["runs"][4:])


def test_errors_say_what_to_fix() -> None:
    clouds, labels = _clouds(6, 4)
    with pytest.raises(ValueError, match=r"at least one batch \(8\) of training clouds, got 6"):
        batch_draws(0, 6, 3, 8)
    with pytest.raises(ValueError, match="steps must be a positive int"):
        batch_draws(0, 6, 0, 2)
    with pytest.raises(ValueError, match="at least one seed"):
        ensemble_stream((), 6, 3, 2, "cpu")
    stream = ensemble_stream((0,), 6, 2, 2, "cpu")
    with pytest.raises(ValueError, match="one label per cloud"):
        stacked_sampler(device_clouds(clouds, "cpu"), torch.from_numpy(labels[:5]), stream)
    sample = stacked_sampler(device_clouds(clouds, "cpu"), torch.from_numpy(labels), stream)
    sample(), sample()
    with pytest.raises(ValueError, match="holds 2 batches and all were read"):
        sample()
    assert augment_on_device(device_clouds(clouds, "cpu"), stream.indices[0], stream.cos[0], stream.sin[0],
                             stream.scales[0]).shape == (1, 2, 4, 3)
    model = torch.nn.Linear(1, 1)
    with pytest.raises(ValueError, match="one seed per model: 2 models, 1 seeds"):
        train_classifier_ensemble([model, model], clouds, labels, replace(TINY, batch=2), [0], progress=False)
    with pytest.raises(ValueError, match="one label each"):
        train_classifier_ensemble([model], clouds, labels[:5], replace(TINY, batch=2), [0], progress=False)
    tiny = load_data(Data(), TINY)
    with pytest.raises(ValueError, match="at least one seed"):
        train_ensemble("max/max", [], TINY, tiny, progress=False)
    with pytest.raises(ValueError, match=r"one Checkpoints per seed \(2\)"):
        train_ensemble("max/max", [0, 1], TINY, tiny, progress=False, checkpoints=[_test_loss(tiny)])
    with pytest.raises(ValueError, match="at least one task"):
        run_ensemble([])
    with pytest.raises(ValueError, match="same configuration"):
        run_ensemble([("max/max", 0, TINY, Data(), False, "cpu"), ("max/r-lse", 1, TINY, Data(), False, "cpu")])
