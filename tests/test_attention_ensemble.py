"""The attention experiment's seeds trained as one ensemble (the GPU sweeps): its stream is the batches of
the runs one by one; ``fit_ensemble`` with an objective takes ``fit``'s steps; the AIR ensemble
trains every seed as its run does (exactly without noise, in distribution with it); its
checkpoints are what its weights give one by one; a sweep that trains as on a GPU writes run_one's
records and resumes; and the errors."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch import Tensor, nn

from setfuncs.ensemble import fit_ensemble
from setfuncs.experiments.attention import SPECS, SURROGATE, Budget, Data, load_results, run_one, sweep
from setfuncs.experiments.attention.particles import sample_particles
from setfuncs.experiments.attention.stream import canvas_stream, stack_streams, stacked_sampler
from setfuncs.experiments.attention.sweep import ensemble_stream, load_data, run_ensemble, seed_stream
from setfuncs.experiments.attention.sweep import test_checkpoints as elbo_checkpoints  # not a test
from setfuncs.experiments.attention.sweep import train_ensemble, train_model
from setfuncs.experiments.attention.train import (canvas_batches, make_air, negative_elbo_per_pixel,
                                                  train_air_ensemble)
from setfuncs.experiments.engine import Engine
from setfuncs.experiments.protocol import Checkpoints
from setfuncs.experiments.sweeps import TRAIN_SEED
from setfuncs.steps import TrainingLog
from setfuncs.train import fit

TINY = Budget("tiny", steps=6, batch=4, lr=3e-3, clip=10.0, hidden=8, equivariant_layers=0, recurrent_steps=2,
              test_size=6, particles=20, train_canvases=10, set_hidden=8, glimpse_size=6, what_features=4,
              eval_sizes=(5, 20), eval_batch=4)
DATA = Data()
#: Not in order, so that a model trained on the wrong position's seed shows.
SEEDS = (2, 0)


def run_sampler(seed: int, particles: bool):
    """The sampler of run ``seed`` one by one (train_model's)."""
    train, _ = load_data(DATA, TINY)
    return canvas_batches(train.images, TINY.batch, TINY.particles if particles else None,
                          torch.Generator().manual_seed(TRAIN_SEED + seed))


# -- the stream ---------------------------------------------------------------------------------

@pytest.mark.parametrize("particles", [True, False], ids=["set", "image"])
def test_a_seed_stream_is_the_batches_of_its_run(particles: bool) -> None:
    """Step after step, the canvases at the stream's indices and its particles are the run's batches,
    drawn from one generator, canvas indices first, then particles; made once per process."""
    train, _ = load_data(DATA, TINY)
    data = torch.as_tensor(train.images)
    stream = seed_stream(DATA, TINY, 3, particles)
    sample, generator = run_sampler(3, particles), torch.Generator().manual_seed(TRAIN_SEED + 3)
    assert stream.indices.shape == (TINY.steps, TINY.batch) and stream.indices.dtype == torch.int64
    for t in range(TINY.steps):
        canvases, drawn, mask = sample()
        chosen = data[torch.randint(len(data), (TINY.batch,), generator=generator)]
        assert torch.equal(data[stream.indices[t]], canvases) and torch.equal(canvases, chosen) and mask is None
        if particles:
            assert torch.equal(stream.particles[t], drawn)
            assert torch.equal(drawn, sample_particles(chosen, TINY.particles, generator))
        else:
            assert drawn is None and stream.particles is None
    assert seed_stream(DATA, TINY, 3, particles) is stream          # shared by every localiser of the seed


@pytest.mark.parametrize("particles", [True, False], ids=["set", "image"])
def test_the_stacked_stream_gives_every_seed_its_runs_batches(particles: bool) -> None:
    canvases, stream = ensemble_stream(DATA, TINY, (2, 0, 5), particles, "cpu")
    sample, runs = stacked_sampler(canvases, stream), [run_sampler(seed, particles) for seed in (2, 0, 5)]
    for _ in range(TINY.steps):
        x, y, mask = sample()
        assert x.shape == (3, TINY.batch, 32, 32) and mask is None
        assert y.shape == ((3, TINY.batch, TINY.particles, 2) if particles else (3, TINY.batch, 0, 2))
        for position, run in enumerate(runs):
            canvases_alone, particles_alone, _ = run()
            assert torch.equal(x[position], canvases_alone)
            assert torch.equal(y[position], particles_alone) if particles else particles_alone is None
    train, _ = load_data(DATA, TINY)
    with pytest.raises(ValueError, match="streams of one budget"):
        stack_streams([seed_stream(DATA, TINY, 0, True),
                       canvas_stream(train.images, TINY.batch, TINY.particles, 2, torch.Generator())], "cpu")


# -- fit_ensemble with an objective -------------------------------------------------------------

class Toy(nn.Module):
    """A recurrent toy scored by a method other than ``forward``: an LSTM cell reads the particles of
    ``x [B, N, 2]`` in turn; its energy :math:`e = w^\\top h_N` is fitted to ``y``, or pushed to 0."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.LSTMCell(2, 5)
        self.out = nn.Linear(5, 1)

    def energy(self, x: Tensor, y: Tensor | None) -> Tensor:
        h = c = x.new_zeros(x.shape[0], 5)
        for i in range(x.shape[1]):
            h, c = self.cell(x[:, i], (h, c))
        e = self.out(h).squeeze(-1)
        return (e if y is None else e - y).pow(2).mean()


def toy_objective(model: Toy, x: Tensor, y: Tensor | None, mask: None) -> Tensor:
    return model.energy(x, y)


def toy(seed: int) -> Toy:
    torch.manual_seed(seed)
    return Toy()


def toy_sampler(seed: int, targets: bool):
    generator = torch.Generator().manual_seed(seed)
    return lambda: (torch.randn(5, 4, 2, generator=generator),
                    torch.randn(5, generator=generator) if targets else None, None)


@pytest.mark.parametrize("targets", [True, False], ids=["samplers, y", "stacked stream, y None"])
def test_fit_ensemble_with_an_objective_takes_fits_steps(targets: bool) -> None:
    """Without randomness, every model's losses, weights and checkpoints are those of fit one by one."""
    seeds, steps, marks = (4, 1, 7), 8, [3, 8]
    alone = []
    for seed in seeds:
        values: list[float] = []
        model = toy(seed)
        log = fit(model, toy_sampler(seed, targets), None, steps, lr=1e-2, clip=0.5, milestones=[5], progress=False,
                  objective=toy_objective, checkpoints=marks,
                  at_checkpoint=lambda m, step, values=values: values.append(float(m.out.bias)))
        alone.append((model, log, values))
    models, seen = [toy(seed) for seed in seeds], {}
    if targets:
        samples = [toy_sampler(seed, True) for seed in seeds]
    else:                                                   # a stream made in advance, stacked: x [S, B, N, 2]
        runs = [toy_sampler(seed, False) for seed in seeds]
        stream = iter([torch.stack([run()[0] for run in runs]) for _ in range(steps)])
        samples = lambda: (next(stream), None, None)        # noqa: E731
    logs = fit_ensemble(models, samples, None, steps, lr=1e-2, clip=0.5, milestones=[5], progress=False,
                        read_every=3, objective=toy_objective, checkpoints=marks,
                        at_checkpoint=lambda s, m, step: seen.setdefault(s, []).append(float(m.out.bias)))
    for s, ((model, log, values), joint, joint_log) in enumerate(zip(alone, models, logs)):
        torch.testing.assert_close(torch.tensor(joint_log), torch.tensor(log), rtol=1e-5, atol=1e-6)
        for a, b in zip(model.parameters(), joint.parameters()):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(torch.tensor(seen[s]), torch.tensor(values), rtol=1e-4, atol=1e-5)
        assert not joint.training and type(joint.cell) is nn.LSTMCell      # the caller's models keep their cells
    assert len({tuple(log) for log in logs}) == len(seeds)


def test_fit_ensemble_needs_exactly_one_of_loss_and_objective() -> None:
    models, samples = [toy(0), toy(1)], [toy_sampler(0, True), toy_sampler(1, True)]
    with pytest.raises(ValueError, match="exactly one of loss .* and objective"):
        fit_ensemble(models, samples, nn.functional.mse_loss, 2, progress=False, objective=toy_objective)
    with pytest.raises(ValueError, match="exactly one of loss .* and objective"):
        fit_ensemble(models, samples, None, 2, progress=False)
    with pytest.raises(ValueError, match="must all give y or all give None"):
        fit_ensemble(models, [toy_sampler(0, True), toy_sampler(1, False)], None, 2, progress=False,
                     objective=toy_objective)
    with pytest.raises(ValueError, match=r"a stacked sampler must return x \[S=2, \.\.\.\]"):
        fit_ensemble(models, lambda: (torch.zeros(3, 5, 4, 2), None, None), None, 2, progress=False,
                     objective=toy_objective)


# -- the AIR ensemble ---------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["r-lse", "image"])
def test_without_noise_the_ensemble_trains_every_seed_as_its_run(spec: str, monkeypatch) -> None:
    """With the latents' noise switched off (their means), AIR is deterministic: each seed of the
    ensemble takes its run's steps (its initialisation, its stream, its objective), test checkpoints
    included; the seeds' runs differ, so a model on another seed's place would show."""
    monkeypatch.setattr(torch, "randn_like", torch.zeros_like)
    train, test = load_data(DATA, TINY)
    recorded = [elbo_checkpoints(TINY, test) for _ in SEEDS]
    together = train_ensemble(spec, SEEDS, TINY, DATA, checkpoints=recorded)
    for (model, log), seed, checkpoints in zip(together, SEEDS, recorded):
        alone_checkpoints = elbo_checkpoints(TINY, test)
        alone, alone_log = train_model(spec, seed, TINY, train, checkpoints=alone_checkpoints)
        torch.testing.assert_close(torch.tensor(log), torch.tensor(alone_log), rtol=1e-5, atol=1e-6)
        for a, b in zip(model.parameters(), alone.parameters()):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
        assert checkpoints.steps == alone_checkpoints.steps and len(checkpoints.values) == len(checkpoints.steps)
        assert checkpoints.values == pytest.approx(alone_checkpoints.values, rel=1e-5)
    assert together[0][1] != together[1][1]


@pytest.mark.parametrize("spec", SPECS)
def test_every_localisers_ensemble_step_reads_no_values(spec: str) -> None:
    """The ensemble's step runs under torch.vmap and sync_free on the CPU too, where any read of a
    tensor value (which would break a CUDA-graph capture) is an error: every localiser trains."""
    logs = [log for _, log in train_ensemble(spec, [0, 1], replace(TINY, steps=2), DATA)]
    assert all(isinstance(log, TrainingLog) and len(log) == 2 and np.isfinite(log).all() for log in logs)


@pytest.mark.parametrize("spec", ["mean", "image"])
def test_a_one_seed_ensemble_draws_the_noise_of_its_run(spec: str) -> None:
    """The latents' noise comes from torch's global generator as the run leaves it after building its
    model: an ensemble of one seed draws the same noise, and takes the same steps."""
    train, _ = load_data(DATA, TINY)
    [(_, log)] = train_ensemble(spec, [3], TINY, DATA)
    _, alone_log = train_model(spec, 3, TINY, train)
    torch.testing.assert_close(torch.tensor(log), torch.tensor(alone_log), rtol=1e-5, atol=1e-6)


def test_every_model_draws_its_own_noise_from_the_runs_distribution() -> None:
    """Eight copies of one seed (one initialisation, one stream) differ only by the latents' noise: each
    copy's first loss is its own draw, and their mean and spread are those of the run's first loss
    over 64 draws of its noise one by one (z = 0.5 here; a copy with another objective or without its
    own noise would fail, and the test without noise pins initialisations and batches exactly)."""
    budget = replace(TINY, steps=1)
    firsts = np.array([log[0] for _, log in train_ensemble("r-lse", [3] * 8, budget, DATA)])
    assert len(set(firsts)) == 8
    torch.manual_seed(3)
    model = make_air("r-lse", budget, SURROGATE).train()
    x, particles, _ = run_sampler(3, True)()
    with torch.no_grad():
        alone = np.array([float(negative_elbo_per_pixel(model, x, particles)) for _ in range(64)])
    z = (firsts.mean() - alone.mean()) / (alone.std(ddof=1) / np.sqrt(len(firsts)))
    assert alone.std() > 0 and abs(z) < 4.5, (firsts, alone.mean(), alone.std())
    assert firsts.std(ddof=1) == pytest.approx(alone.std(ddof=1), rel=0.8)


def test_the_checkpoints_are_what_the_weights_give_one_by_one() -> None:
    """Every test ELBO an ensemble records is the test ELBO of that model's weights at that step,
    evaluated alone; the last is that of the returned model."""
    _, test = load_data(DATA, TINY)
    reference = elbo_checkpoints(TINY, test)
    states: dict[int, list[dict]] = {s: [] for s in range(len(SEEDS))}

    def keeping(s: int) -> Checkpoints:
        def metric(model: nn.Module) -> float:
            states[s].append(copy.deepcopy(model.state_dict()))
            return reference.metric(model)
        return Checkpoints("test_elbo", reference.steps, metric)

    recorded = [keeping(s) for s in range(len(SEEDS))]
    together = train_ensemble("r-lse", SEEDS, TINY, DATA, checkpoints=recorded)
    for s, (model, _) in enumerate(together):
        assert len(states[s]) == len(reference.steps) == len(recorded[s].values)
        for state, value in zip(states[s], recorded[s].values):
            alone = make_air("r-lse", TINY, SURROGATE)
            alone.load_state_dict(state)
            with torch.no_grad():
                assert reference.metric(alone.eval()) == value
        assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), states[s][-1].values()))


# -- the sweep ----------------------------------------------------------------------------------

def test_a_gpu_like_sweep_writes_run_ones_records_and_resumes(tmp_path, monkeypatch,
                                                                in_process_scheduler: str) -> None:
    """What a GPU sweep does, here on the CPU: the missing seeds of each localiser train as one
    ensemble; every record has run_one's keys (and the schema the file is read with); a resumed
    sweep adds only the seeds it lacks."""
    monkeypatch.setattr(Engine, "ensembles", property(lambda self: True))
    out, engine, specs = tmp_path / "attention.json", Engine(scheduler=in_process_scheduler), ["image", "r-lse"]
    sweep(2, TINY, out, specs, DATA, engine=engine, progress=False)
    load_results(out)                                        # the schema the file is read with
    first = json.loads(out.read_text())
    assert first["complete"] and sorted((r["spec"], r["seed"]) for r in first["runs"]) == [
        ("image", 0), ("image", 1), ("r-lse", 0), ("r-lse", 1)]
    keys = set(run_one("image", 0, TINY, DATA))
    for run in first["runs"]:
        # the engine adds "worker" and "provenance" to every run's record, one by one or not
        assert set(run) - {"ensemble", "worker", "provenance"} == keys and run["error"] is None
        assert run["ensemble"]["size"] == 2 and run["learning_curve"]["test"]["steps"] == [1, 2, 4, 5, 6]
        assert run["seconds_per_step"] == pytest.approx(run["train_seconds"] / TINY.steps)
    sweep(3, TINY, out, specs, DATA, engine=engine, progress=False)
    second = json.loads(out.read_text())
    added = [r for r in second["runs"] if r["seed"] == 2]
    assert second["runs"][:4] == first["runs"] and len(second["runs"]) == 6
    assert sorted(r["spec"] for r in added) == specs
    assert all(r["ensemble"]["size"] == 1 for r in added)


def test_the_ensembles_errors() -> None:
    with pytest.raises(ValueError, match="same configuration"):
        run_ensemble([("image", 0, TINY, DATA, False, "cpu"), ("mean", 1, TINY, DATA, False, "cpu")])
    with pytest.raises(ValueError, match="unknown configuration 'max/max'"):
        run_ensemble([("max/max", 0, TINY, DATA, False, "cpu")])
    _, test = load_data(DATA, TINY)
    models = [make_air("mean", TINY, SURROGATE) for _ in range(2)]
    with pytest.raises(ValueError, match="one Checkpoints per model"):
        train_air_ensemble(models, lambda: None, TINY, checkpoints=[elbo_checkpoints(TINY, test)])
