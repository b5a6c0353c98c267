"""Seeds trained as one ensemble take the steps they take one by one: for plain and recurrent
aggregations, with masks and without; per-model clipping and divergence; the recurrent cell from
matrix products against PyTorch's LSTM; the circle experiment's shared training streams."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import setfuncs as sf
from setfuncs.ensemble import clip_per_model, fit_ensemble
from setfuncs.experiments import circle
from setfuncs.experiments.circle.data import circle_batch
from setfuncs.experiments.circle.stream import ensemble_stream, stacked_sampler, training_stream
from setfuncs.experiments.sweeps import TRAIN_SEED
from setfuncs.learnable import lstm_cell
from setfuncs.train import fit

import batches  # tests/batches.py

#: Plain and learnable aggregations in every position; the log-semiring reduces use the custom
#: logsumexp backward, which vmap batches through its generated rule.
SPECS = ["max/max", "mean/lse", "lme/r-max", "r-lse/r-lse", "r-mean/sum", "median/rpw"]
STEPS = 12


def sampler(seed: int, masked: bool):
    return batches.sampler(seed, 6, 7, masked)


def build(spec: str, seed: int) -> sf.DeepSet:
    torch.manual_seed(seed)
    return sf.DeepSet(2, 3, spec, hidden=8, steps=2)


@pytest.mark.parametrize("masked", [False, True], ids=["dense", "masked"])
@pytest.mark.parametrize("spec", SPECS)
def test_an_ensemble_takes_the_steps_of_its_seeds_one_by_one(spec: str, masked: bool) -> None:
    seeds = [0, 1, 2]
    alone = []
    for seed in seeds:
        model = build(spec, seed)
        losses = fit(model, sampler(seed, masked), nn.functional.mse_loss, STEPS, lr=3e-3, clip=0.5,
                     milestones=[6], progress=False)
        alone.append((model, losses))
    together = [build(spec, seed) for seed in seeds]
    logs = fit_ensemble(together, [sampler(seed, masked) for seed in seeds], nn.functional.mse_loss, STEPS,
                        lr=3e-3, clip=0.5, milestones=[6], progress=False, read_every=5)
    for (model, losses), joint, log in zip(alone, together, logs):
        assert len(log) == STEPS
        torch.testing.assert_close(torch.tensor(log), torch.tensor(losses), rtol=1e-5, atol=1e-6)
        for a, b in zip(model.parameters(), joint.parameters()):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
        assert not joint.training


def test_a_diverging_seed_leaves_the_others_alone() -> None:
    together = [build("r-lse/max", seed) for seed in range(3)]
    with torch.no_grad():
        together[1].process[-1].bias.fill_(float("nan"))
    logs = fit_ensemble(together, [sampler(s, False) for s in range(3)], nn.functional.mse_loss, STEPS,
                        lr=3e-3, clip=0.5, progress=False, read_every=5)
    assert isinstance(logs[1], FloatingPointError) and "after 0 steps" in str(logs[1])
    for seed in (0, 2):
        model = build("r-lse/max", seed)
        losses = fit(model, sampler(seed, False), nn.functional.mse_loss, STEPS, lr=3e-3, clip=0.5, progress=False)
        torch.testing.assert_close(torch.tensor(logs[seed]), torch.tensor(losses), rtol=1e-5, atol=1e-6)


def test_checkpoints_see_each_seed_after_exactly_that_many_steps() -> None:
    marks = [4, 9, STEPS]
    seen: dict[tuple[int, int], float] = {}
    probe = torch.randn(5, 6, 2, generator=torch.Generator().manual_seed(7))
    together = [build("r-lse/max", seed) for seed in range(3)]
    with torch.no_grad():
        together[1].process[-1].bias.fill_(float("nan"))         # diverges: never evaluated

    def record(s: int, model: nn.Module, step: int) -> None:
        assert not model.training and not torch.is_grad_enabled()
        seen[s, step] = float(model(probe).sum())

    fit_ensemble(together, [sampler(s, True) for s in range(3)], nn.functional.mse_loss, STEPS, lr=3e-3, clip=0.5,
                 progress=False, read_every=5, checkpoints=marks, at_checkpoint=record)
    assert sorted(seen) == [(s, m) for s in (0, 2) for m in marks]
    for seed in (0, 2):
        alone: list[float] = []
        fit(build("r-lse/max", seed), sampler(seed, True), nn.functional.mse_loss, STEPS, lr=3e-3, clip=0.5,
            progress=False, checkpoints=marks, at_checkpoint=lambda model, step: alone.append(float(model(probe).sum())))
        torch.testing.assert_close(torch.tensor([seen[seed, m] for m in marks]), torch.tensor(alone),
                                   rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="checkpoints and at_checkpoint go together"):
        fit_ensemble(together, [sampler(s, True) for s in range(3)], nn.functional.mse_loss, STEPS, checkpoints=marks)
    with pytest.raises(ValueError, match="checkpoints must be step counts"):
        fit_ensemble(together, [sampler(s, True) for s in range(3)], nn.functional.mse_loss, STEPS,
                     checkpoints=[STEPS + 1], at_checkpoint=record)


def test_clipping_is_per_model() -> None:
    torch.manual_seed(0)
    grads = [torch.randn(4, 3, 5) * torch.tensor([0.1, 1.0, 10.0, 100.0]).view(4, 1, 1), torch.randn(4, 7)]
    expected = []
    for s in range(4):
        parts = [nn.Parameter(torch.zeros_like(g[s])) for g in grads]
        for p, g in zip(parts, grads):
            p.grad = g[s].clone()
        nn.utils.clip_grad_norm_(parts, 1.0)
        expected.append([p.grad for p in parts])
    clip_per_model(grads, 1.0)
    for s in range(4):
        for g, e in zip(grads, expected[s]):
            torch.testing.assert_close(g[s], e)


def test_the_ensemble_refuses_mismatched_models_and_samplers() -> None:
    with pytest.raises(ValueError, match="differs from models\\[0\\]"):
        fit_ensemble([build("max/max", 0), sf.DeepSet(2, 3, "max/max", hidden=4)], [sampler(0, False)] * 2,
                     nn.functional.mse_loss, 2, progress=False)
    with pytest.raises(ValueError, match="one sampler per model"):
        fit_ensemble([build("max/max", 0), build("max/max", 1)], [sampler(0, False)], nn.functional.mse_loss, 2,
                     progress=False)
    with pytest.raises(ValueError, match="train each seed with setfuncs.train.fit"):
        fit_ensemble([sf.DeepSet(2, 3, "max/pmean(2)", hidden=4) for _ in range(2)], [sampler(0, False)] * 2,
                     nn.functional.mse_loss, 2, progress=False)
    with pytest.raises(ValueError, match="all give a mask or all give None"):
        fit_ensemble([build("max/max", 0), build("max/max", 1)], [sampler(0, False), sampler(1, True)],
                     nn.functional.mse_loss, 2, progress=False)


def test_the_recurrent_cell_is_pytorchs_lstm() -> None:
    """lstm_cell against nn.LSTMCell, alone and under torch.vmap over an ensemble of cells (where it
    is computed from matrix products: torch.lstm_cell has no batching rule), and the backward
    readout built from it against nn.LSTM."""
    torch.manual_seed(0)
    cell = nn.LSTMCell(5, 5)
    x, h, c = torch.randn(3, 5), torch.randn(3, 5), torch.randn(3, 5)
    for a, b in zip(cell(x, (h, c)), lstm_cell(x, (h, c), cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)):
        torch.testing.assert_close(a, b)
    cells = [nn.LSTMCell(5, 5) for _ in range(4)]
    weights = [torch.stack([getattr(one, name) for one in cells]).detach()
               for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    xs, hs, cs = torch.randn(4, 3, 5), torch.randn(4, 3, 5), torch.randn(4, 3, 5)
    batched = torch.vmap(lstm_cell)(xs, (hs, cs), *weights)
    for k, one in enumerate(cells):
        with torch.no_grad():
            for a, b in zip(batched, one(xs[k], (hs[k], cs[k]))):
                torch.testing.assert_close(a[k], b)
    aggregation = sf.aggregation("r-lse", features=5, steps=3)
    m = torch.randn(4, 6, 5)
    out, _ = aggregation.attend(m)
    # the same reads, with PyTorch's own LSTM modules
    q = aggregation.query0.expand(4, -1)
    state = (q, torch.zeros_like(q))
    results = []
    for t in range(3):
        if t > 0:
            state = aggregation.query(results[-1], state)
        results.append(aggregation.read(m, None, state[0])[0])
    _, (expected, _) = aggregation.backward_rnn(torch.stack(results[::-1], dim=1))
    torch.testing.assert_close(out, expected[-1])


def test_a_circle_stream_is_the_batches_of_its_run() -> None:
    x, y = training_stream(3, 4, 5)
    generator = torch.Generator().manual_seed(TRAIN_SEED + 3)
    for t in range(4):
        bx, by, _ = circle_batch(5, 20, generator)
        assert torch.equal(x[t], bx) and torch.equal(y[t], by)
    sample = stacked_sampler(x, y)
    assert torch.equal(sample()[0], x[0]) and torch.equal(sample()[1], y[1])


def test_an_ensemble_stream_stacks_the_streams_of_its_seeds() -> None:
    x, y = ensemble_stream((2, 0, 5), 3, 4, "cpu")
    assert x.shape == (3, 3, 4, 20, 2) and y.shape == (3, 3, 4, 3)
    for position, seed in enumerate((2, 0, 5)):
        sx, sy = training_stream(seed, 3, 4)
        assert torch.equal(x[:, position], sx) and torch.equal(y[:, position], sy)


def test_run_ensemble_gives_the_records_of_run_one() -> None:
    budget = circle.Budget("tiny", steps=8, batch=4, lr=1e-3, clip=1.0, hidden=4, equivariant_layers=1,
                           recurrent_steps=2, test_size=16, test_population_sizes=(5, 20))
    args = [("recurrent/recurrent", "lse", "max", seed, budget, False, "cpu") for seed in (0, 1)]
    together = circle.run_ensemble(args)
    for record, task in zip(together, args):
        alone = circle.run_one(*task)
        assert (record["spec"], record["seed"]) == (alone["spec"], alone["seed"]) == ("r-lse/r-max", task[3])
        assert record["ensemble"]["size"] == 2 and record["error"] is None
        for key in ("mse", "radius_mse", "center_mse", "final_train_loss"):
            assert record[key] == pytest.approx(alone[key], rel=1e-4)
    with pytest.raises(ValueError, match="same configuration"):
        circle.run_ensemble([args[0], ("plain/plain", "max", "max", 1, budget, False, "cpu")])


def test_the_sweep_engine_trains_each_configuration_as_one_ensemble(tmp_path, monkeypatch,
                                                                    in_process_scheduler: str) -> None:
    """What a GPU sweep does, here on the CPU (a worker thread of this process): the missing seeds
    of each configuration become one task (run_ensemble), every seed is recorded, and a resumed
    sweep runs only the seeds it lacks."""
    import json

    from setfuncs.experiments.engine import Engine

    monkeypatch.setattr(Engine, "ensembles", property(lambda self: True))
    budget = circle.Budget("tiny", steps=6, batch=4, lr=1e-3, clip=1.0, hidden=4, equivariant_layers=1,
                           recurrent_steps=2, test_size=8, test_population_sizes=(20,))
    out = tmp_path / "c.json"
    engine = Engine(scheduler=in_process_scheduler)
    circle.sweep(2, budget, out, ["max/max", "r-lse/r-max"], engine=engine, progress=False)
    first = json.loads(out.read_text())
    assert first["complete"] and sorted((r["spec"], r["seed"]) for r in first["runs"]) == [
        ("max/max", 0), ("max/max", 1), ("r-lse/r-max", 0), ("r-lse/r-max", 1)]
    assert all(r["ensemble"]["size"] == 2 for r in first["runs"])
    circle.sweep(3, budget, out, ["max/max", "r-lse/r-max"], engine=engine, progress=False)
    second = json.loads(out.read_text())
    added = [r for r in second["runs"] if r["seed"] == 2]
    assert len(second["runs"]) == 6 and second["runs"][:4] == first["runs"]
    assert len(added) == 2 and all(r["ensemble"]["size"] == 1 for r in added)
