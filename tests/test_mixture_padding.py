"""The mixture's padded training batches: the same populations as the unpadded ones, the same loss
and gradients for every configuration of the sweep (every aggregation, plain and recurrent), and
seeds trained as one padded ensemble record what they record one by one, test checkpoints included."""

from __future__ import annotations

import pytest
import torch

from setfuncs.experiments.mixture import Budget, make_model, run_ensemble, run_one
from setfuncs.experiments.mixture.data import TRAIN_SIZES, padded_training_sampler, training_sampler
from setfuncs.experiments.mixture.loss import beta_nll
from setfuncs.experiments.mixture.stream import ensemble_stream, stacked_sampler, training_stream
from setfuncs.experiments.sweeps import TRAIN_SEED, all_configurations, spec_of

TINY = Budget("tiny", steps=12, batch=6, lr=1e-2, clip=1.0, hidden=8, equivariant_layers=1,
              recurrent_steps=2, test_size=4, test_population_sizes=(10, 100), bootstraps=20)


def test_padded_batches_hold_the_unpadded_populations() -> None:
    plain = training_sampler(5, torch.Generator().manual_seed(3))
    padded = padded_training_sampler(5, torch.Generator().manual_seed(3))
    sizes = set()
    for _ in range(6):
        (x, y, none), (px, py, mask) = plain(), padded()
        n = x.shape[1]
        sizes.add(n)
        assert none is None and px.shape == (5, TRAIN_SIZES[1], 2) and mask.shape == (5, TRAIN_SIZES[1])
        assert torch.equal(px[:, :n], x) and torch.equal(y, py)
        assert mask[:, :n].all() and not mask[:, n:].any() and not px[:, n:].any()
    assert len(sizes) > 1                      # the size is drawn anew at every step, padded or not


def test_the_stacked_stream_is_every_seeds_padded_sampler_step_by_step() -> None:
    """The ensemble's stream (drawn once, stacked on the device) gives at step t what each seed's own
    padded sampler gives at its t-th call: the same particles, weights and mask."""
    seeds, steps, batch = (2, 0, 5), 9, 3
    x, y, sizes = ensemble_stream(seeds, steps, batch, "cpu")
    assert x.shape == (steps, 3, batch, TRAIN_SIZES[1], 2) and sizes.shape == (steps, 3)
    stacked = stacked_sampler(x, y, sizes)
    samplers = [padded_training_sampler(batch, torch.Generator().manual_seed(TRAIN_SEED + s)) for s in seeds]
    for _ in range(steps):
        sx, sy, smask = stacked()
        for s, sample in enumerate(samplers):
            px, py, mask = sample()
            assert torch.equal(sx[s], px) and torch.equal(sy[s], py) and torch.equal(smask[s], mask)
    assert len(set(sizes.flatten().tolist())) > 1
    with pytest.raises(StopIteration):
        stacked()
    assert training_stream(2, steps, batch)[0].data_ptr() == training_stream(2, steps, batch)[0].data_ptr()


@pytest.mark.parametrize("configuration", all_configurations(), ids=lambda c: spec_of(*c))
def test_padding_changes_neither_the_loss_nor_its_gradients(configuration: tuple[str, str, str]) -> None:
    torch.manual_seed(0)
    model = make_model(*configuration, TINY)
    x, y, _ = training_sampler(4, torch.Generator().manual_seed(1), sizes=(23, 23))()
    px = torch.cat([x, torch.randn(4, 9, 2) * 50], dim=1)          # padding that would show if it leaked
    mask = torch.arange(32)[None, :] < 23
    mask = mask.expand(4, -1)
    losses, grads = [], []
    for inputs in ((x, None), (px, mask)):
        model.zero_grad()
        loss = beta_nll(model(*inputs), y)
        loss.backward()
        losses.append(loss.detach())
        grads.append([p.grad.clone() for p in model.parameters()])
    torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=1e-6)
    for unpadded, padded in zip(*grads):
        torch.testing.assert_close(padded, unpadded, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("configuration", [("recurrent/recurrent", "lse", "mean"), ("plain/plain", "max", "lme")],
                         ids=lambda c: spec_of(*c))
def test_a_padded_ensemble_records_what_its_seeds_record_one_by_one(configuration: tuple[str, str, str]) -> None:
    args = [(*configuration, seed, TINY, False, "cpu") for seed in (0, 1)]
    together = run_ensemble(args)
    for record, task in zip(together, args):
        alone = run_one(*task)
        assert (record["spec"], record["seed"], record["error"]) == (alone["spec"], task[3], None)
        assert record["ensemble"]["size"] == 2
        for key in ("final_train_loss", "test_nll", "test_mae", "metric"):
            assert record[key] == pytest.approx(alone[key], rel=1e-3, abs=1e-4), key
        ours, theirs = record["learning_curve"]["test"], alone["learning_curve"]["test"]
        assert ours["steps"] == theirs["steps"] and len(ours["values"]) == len(theirs["steps"]) > 1
        assert ours["values"] == pytest.approx(theirs["values"], rel=1e-4, abs=1e-5)
    with pytest.raises(ValueError, match="same configuration"):
        run_ensemble([args[0], ("plain/plain", "max", "max", 1, TINY, False, "cpu")])


def test_a_gpu_sweep_trains_the_seeds_of_a_configuration_as_one_ensemble(tmp_path, monkeypatch,
                                                                          in_process_scheduler: str) -> None:
    """What a GPU sweep does, here on the CPU: the missing seeds of each configuration are one task
    (run_ensemble), and a resumed sweep (on one core, one run at a time) adds only the seeds it lacks."""
    import json

    from setfuncs.experiments.engine import Engine
    from setfuncs.experiments.mixture import sweep

    out = tmp_path / "m.json"
    with monkeypatch.context() as patched:
        patched.setattr(Engine, "ensembles", property(lambda self: True))
        sweep(2, TINY, out, ["r-mean/mean"], engine=Engine(scheduler=in_process_scheduler), progress=False)
    first = json.loads(out.read_text())
    assert first["complete"] and [(r["seed"], r["ensemble"]["size"]) for r in first["runs"]] == [(0, 2), (1, 2)]
    assert all(len(r["learning_curve"]["test"]["values"]) > 1 for r in first["runs"])
    sweep(3, TINY, out, ["r-mean/mean"], engine=Engine(scheduler=in_process_scheduler), progress=False)
    second = json.loads(out.read_text())
    assert second["runs"][:2] == first["runs"] and [r["seed"] for r in second["runs"]] == [0, 1, 2]
    assert "ensemble" not in second["runs"][2]
