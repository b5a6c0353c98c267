"""The spatial-attention protocol against the paper's: the budgets read out recurrent
aggregations with the paper's backward LSTM, the committed sweep's budget is kept to check its file,
and the table of protocol differences follows the results file it is given."""

from __future__ import annotations

import copy
import json
from dataclasses import fields, replace

import pytest
import torch

from setfuncs.experiments.attention import (SURROGATE, BUDGETS, CLAIM_AXES, LAST_READOUT_MEDIUM, MEDIUM, QUICK, Budget, load_results,
                                            make_air, make_canvases, protocol_differences, train_air)
from setfuncs.experiments.attention.differences import AXES, PAPER_READOUT
from setfuncs.experiments.differences import NOT_STATED
from setfuncs.experiments.differences import gaps
from setfuncs.experiments.results import results_file
from setfuncs.model import parameter_count

READOUT = "readout of recurrent aggregations"
TINY = Budget("tiny", steps=3, batch=4, lr=1e-3, clip=10.0, hidden=8, equivariant_layers=0, recurrent_steps=2,
              test_size=6, particles=20, train_canvases=10, set_hidden=8, glimpse_size=6, what_features=4,
              eval_sizes=(5, 20), eval_batch=4, readout="backward")


@pytest.fixture(scope="module")
def committed() -> dict:
    return load_results(results_file("attention-medium.json"))


def _with_budget(results: dict, budget: Budget) -> dict:
    changed = copy.deepcopy(results)
    changed["budget_parameters"] = json.loads(json.dumps(vars(budget)))
    return changed


def _rows(results: dict) -> dict:
    return {d.axis: d for d in protocol_differences(results)}


def test_the_budgets_read_out_with_the_papers_backward_lstm() -> None:
    assert MEDIUM.name == "medium" and MEDIUM.readout == PAPER_READOUT == "backward"
    assert all(b.readout == "backward" for b in BUDGETS.values())
    # QUICK is MEDIUM with smaller numbers: the model and optimiser are the same
    shared = ("lr", "clip", "batch", "hidden", "set_hidden", "equivariant_layers", "recurrent_steps", "particles",
              "glimpse_size", "what_features", "readout", "eval_sizes")
    assert all(getattr(QUICK, f) == getattr(MEDIUM, f) for f in shared)
    with pytest.raises(ValueError, match="readout"):
        replace(TINY, readout="first")


def test_the_medium_budget_wrote_the_committed_file(committed: dict) -> None:
    """The ten-seed rerun, with the paper's readout; the budget before it differs in the readout only."""
    assert json.loads(json.dumps(vars(MEDIUM))) == committed["budget_parameters"]
    assert {f.name for f in fields(Budget) if getattr(LAST_READOUT_MEDIUM, f.name) != getattr(MEDIUM, f.name)} == {"readout"}
    assert LAST_READOUT_MEDIUM.name == "medium" and LAST_READOUT_MEDIUM.readout == "last" and MEDIUM.readout == "backward"
    assert all(b is not LAST_READOUT_MEDIUM for b in BUDGETS.values())       # no sweep runs it again


def test_the_committed_file_has_removed_the_readout_difference(committed: dict) -> None:
    rows = protocol_differences(committed)
    assert [d.axis for d in rows] == list(AXES)
    readout = _rows(committed)[READOUT]
    assert readout.status == "removed" and readout.matches and readout.ours.startswith("backward")
    assert all(d.paper.startswith(NOT_STATED) for d in rows if d.status == "unknown")
    assert all(READOUT not in gaps(rows, axes) for axes in CLAIM_AXES.values())


def test_a_file_of_the_earlier_medium_budget_keeps_it(committed: dict) -> None:
    """The five-seed sweep's readout "last" (in the repository's history) is a kept difference on every claim."""
    before, after = _rows(_with_budget(committed, LAST_READOUT_MEDIUM)), _rows(committed)
    readout = before[READOUT]
    assert readout.status == "kept" and readout.ours.startswith("last") and readout.paper.startswith("backward")
    assert {axis for axis in AXES if after[axis] != before[axis]} == {READOUT}
    assert all(READOUT in gaps(list(before.values()), axes) for axes in CLAIM_AXES.values())


#: One change of the results file per axis: (the axis whose ``ours`` must change, the key, the new value).
CHANGES = [("data", "data.source", "mnist"), ("data", "data.digits", "MNIST IDX 28x28 / 255"),
           ("canvas size", "data.canvas_size", 50), ("canvas size", "data.max_digits", 3),
           ("canvas size", "data.digit_sizes", [8, 20]), ("steps", "budget_parameters.steps", 9000),
           ("batch", "budget_parameters.batch", 64), ("widths", "budget_parameters.hidden", 128),
           ("widths", "budget_parameters.set_hidden", 16), ("glimpse size", "budget_parameters.glimpse_size", 20),
           ("z_what size", "budget_parameters.what_features", 50),
           ("training particles", "budget_parameters.particles", 100),
           ("test population sizes", "budget_parameters.eval_sizes", [5, 50]),
           ("optimiser and learning rate", "budget_parameters.lr", 1e-4),
           ("optimiser and learning rate", "optimizer.name", "SGD"),
           ("gradient clipping", "budget_parameters.clip", 5.0), (READOUT, "budget_parameters.readout", "last"),
           ("equivariant layers", "budget_parameters.equivariant_layers", 1), ("seeds", "seeds", list(range(5))),
           ("ELBO estimator", "model.presence_estimator", "score function"), ("failed runs", "runs", []),
           ("peak baseline", "evaluation.elbo", "the median over test canvases")]


def test_every_axis_is_changed_by_some_change() -> None:
    assert {axis for axis, _, _ in CHANGES} == set(AXES)


@pytest.mark.parametrize("axis, key, value", CHANGES, ids=[key for _, key, _ in CHANGES])
def test_every_ours_cell_follows_the_file(committed: dict, axis: str, key: str, value: object) -> None:
    changed = copy.deepcopy(committed)
    outer, inner = key.split(".") if "." in key else (None, key)
    (changed[outer] if outer else changed)[inner] = value
    before, after = _rows(committed), _rows(changed)
    assert {a for a in AXES if after[a].ours != before[a].ours} == {axis}
    assert all(after[a].paper == before[a].paper for a in AXES)        # the paper's column is the paper's


def test_sizes_other_than_the_papers_are_kept_differences(committed: dict) -> None:
    rows = _rows(_with_budget(committed, replace(MEDIUM, particles=100, eval_sizes=(5, 50))))
    assert rows["training particles"].status == rows["test population sizes"].status == "kept"
    assert _rows(committed)["training particles"].status == "same"


def test_bad_results_say_what_to_pass(committed: dict) -> None:
    missing = copy.deepcopy(committed)
    del missing["budget_parameters"]["steps"]
    with pytest.raises(ValueError, match="lack 'budget_parameters.steps'.*load_results"):
        protocol_differences(missing)
    odd = copy.deepcopy(committed)
    odd["budget_parameters"]["readout"] = "first"
    with pytest.raises(ValueError, match="readout"):
        protocol_differences(odd)


def test_the_claims_depend_on_rows_of_the_table() -> None:
    assert len(CLAIM_AXES) == 3 and all(set(axes) <= set(AXES) for axes in CLAIM_AXES.values())
    assert all(READOUT in axes and "seeds" not in axes for axes in CLAIM_AXES.values())


def test_a_tiny_run_with_the_backward_readout_trains_its_backward_lstm() -> None:
    """r-lse with readout backward: the localiser holds the backward LSTM over the reads (an
    ``nn.LSTM`` of the Deep Set's width, 4 (2 h^2 + 2 h) weights more than readout last), and a few
    training steps move its weights, so gradients reach it."""
    torch.manual_seed(0)
    model = make_air("r-lse", TINY, SURROGATE)
    width = TINY.set_hidden
    backward = {name: p.detach().clone() for name, p in model.localiser.named_parameters() if "backward_rnn" in name}
    assert backward and sum(p.numel() for p in backward.values()) == 4 * (2 * width ** 2 + 2 * width)
    last = make_air("r-lse", replace(TINY, readout="last"), SURROGATE)
    assert parameter_count(model.localiser) - parameter_count(last.localiser) == 4 * (2 * width ** 2 + 2 * width)
    losses = train_air(model, make_canvases(TINY.train_canvases, 0).images, TINY, seed=1)
    assert len(losses) == TINY.steps and all(torch.isfinite(torch.as_tensor(losses)))
    trained = dict(model.localiser.named_parameters())
    assert all(not torch.equal(trained[name].detach(), before) for name, before in backward.items())
