"""The point-cloud protocol: MEDIUM follows Zaheer et al.'s optimiser and schedule,
OWN_SCHEDULE_MEDIUM is the budget before it, and the protocol-difference table reads every cell of ours
from the results file it describes.

The committed file was written at OWN_SCHEDULE_MEDIUM until the ten-seed rerun at MEDIUM (in
``results/pending/``) replaces it; ``tests/test_committed_results.py`` pins which. The table's tests
here rewrite the committed file's budget and optimiser to each budget in turn, so they hold before
and after that replacement.

The frozen losses below are what a twelve-step training returned with QUICK and the medium budget
as it was before the ten-seed rerun (now OWN_SCHEDULE_MEDIUM), on commit b9eb7a2's training code, written with
``float.hex``: the budgets that the committed results and the book's live cells use must keep
training bit for bit as before.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Callable

import pytest
import torch

from setfuncs.experiments.differences import STATUSES, gaps
from setfuncs.experiments.pointcloud import (BUDGETS, OWN_SCHEDULE_MEDIUM, MEDIUM, QUICK, Budget, PointClouds, load_results,
                                             make_model, milestones, synthetic_shapes, train_model)
from setfuncs.experiments.pointcloud import differences as pd
from setfuncs.experiments.pointcloud.differences import AXES, CLAIM_AXES, TRAINING_AXES, protocol_differences
from setfuncs.experiments.results import results_file
from setfuncs.plain import Max

#: Losses of ``_tiny_losses(budget, spec)`` before the ten-seed rerun (``"medium"``: today's OWN_SCHEDULE_MEDIUM).
FROZEN = {
    ("quick", "max/max"): ["0x1.3de8800000000p+1", "0x1.3e43560000000p+1", "0x1.3de91a0000000p+1",
                           "0x1.3de5640000000p+1", "0x1.3d91ce0000000p+1", "0x1.3d302a0000000p+1",
                           "0x1.3da9fa0000000p+1", "0x1.3e4c400000000p+1", "0x1.3da3f60000000p+1",
                           "0x1.3e61ea0000000p+1", "0x1.3dcd2e0000000p+1", "0x1.3dd8f20000000p+1"],
    ("quick", "max/r-lse"): ["0x1.3e66660000000p+1", "0x1.3e27ea0000000p+1", "0x1.3df9020000000p+1",
                             "0x1.3eb06a0000000p+1", "0x1.3f148a0000000p+1", "0x1.3d53e80000000p+1",
                             "0x1.3d32c60000000p+1", "0x1.3ec5240000000p+1", "0x1.3df3f20000000p+1",
                             "0x1.3f01c60000000p+1", "0x1.3f11c00000000p+1", "0x1.3ee0640000000p+1"],
    ("medium", "max/max"): ["0x1.3dbf540000000p+1", "0x1.3dcdfe0000000p+1", "0x1.3e5cae0000000p+1",
                            "0x1.3dbb000000000p+1", "0x1.3dadca0000000p+1", "0x1.3ec0680000000p+1",
                            "0x1.3cf0f80000000p+1", "0x1.3dea680000000p+1", "0x1.3d79560000000p+1",
                            "0x1.3e963e0000000p+1", "0x1.3d4bf20000000p+1", "0x1.3d952a0000000p+1"],
    ("medium", "max/r-lse"): ["0x1.3e968c0000000p+1", "0x1.3e81fe0000000p+1", "0x1.3e84820000000p+1",
                              "0x1.3de7e60000000p+1", "0x1.3eb25e0000000p+1", "0x1.3e54d80000000p+1",
                              "0x1.3d17920000000p+1", "0x1.3e45ec0000000p+1", "0x1.3d4ea80000000p+1",
                              "0x1.3e4eb80000000p+1", "0x1.3d32be0000000p+1", "0x1.3e60480000000p+1"],
}
BEFORE = {"quick": QUICK, "medium": OWN_SCHEDULE_MEDIUM}
#: How far the losses may move from :data:`FROZEN` through the CPU's rounding alone (relative).
ROUNDING = 1e-6


def _tiny_losses(budget: Budget, spec: str) -> list[str]:
    """Twelve steps of ``spec`` with ``budget``'s optimiser, schedule, width and batch (its decay
    fractions of twelve steps) on 3 training clouds per class of 50 particles, seed 0, one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    x, y, names = synthetic_shapes(3, "train", 50, 0)
    _, log = train_model(spec, 0, replace(budget, steps=12), PointClouds(x, y, x[:12], y[:12], names), progress=False)
    torch.set_num_threads(threads)
    return [float(v).hex() for v in log]


@pytest.fixture(scope="module")
def committed() -> dict:
    return load_results(results_file("pointcloud-medium.json"))


def _written_with(results: dict, budget: Budget) -> dict:
    """``results`` as a sweep at ``budget`` would write it: the budget's fields, its Adam epsilon and
    its learning-rate milestones, the rest (data, model, seeds) as in ``results``."""
    out = copy.deepcopy(results)
    out["budget_parameters"] = json.loads(json.dumps(vars(budget)))
    out["optimizer"] = {**out["optimizer"], "eps": budget.eps,
                        "lr_milestones": milestones(budget.steps, budget.decay_at)}
    return out


def _rows(results: dict) -> dict:
    return {d.axis: d for d in protocol_differences(results)}


@pytest.mark.parametrize("name, spec", sorted(FROZEN))
def test_quick_and_earlier_medium_train_as_before(name: str, spec: str) -> None:
    """Bit for bit where this CPU's float32 math rounds as the recording's did (an EPYC); within
    :data:`ROUNDING` elsewhere: torch's float32 ``exp`` and ``log`` go through MKL's vector functions,
    whose last bit depends on the CPU (on an AVX-512 Xeon ``medium max/r-lse`` differs by 1e-7 relative).
    Today's MEDIUM, which changes only Adam's epsilon and the schedule, parts from OWN_SCHEDULE_MEDIUM by 6e-6
    at the second step (:func:`test_medium_trains_differently_from_the_earlier_medium`)."""
    now = [float.fromhex(v) for v in _tiny_losses(BEFORE[name], spec)]
    before = [float.fromhex(v) for v in FROZEN[(name, spec)]]
    assert len(now) == len(before) and now[0] == before[0], f"{name} {spec}: the first loss changed"
    assert all(abs(a - b) <= ROUNDING * abs(b) for a, b in zip(now, before)), \
        f"{name} {spec}: training changed: {now} against {before}"


def test_medium_trains_differently_from_the_earlier_medium() -> None:
    """Epsilon and the decay points reach the optimiser: the losses part after the first step."""
    now = [float.fromhex(v) for v in _tiny_losses(MEDIUM, "max/max")]
    before = [float.fromhex(v) for v in FROZEN[("medium", "max/max")]]
    assert now[0] == before[0] and any(abs(a - b) > 5 * ROUNDING * abs(b) for a, b in zip(now, before))


def test_medium_and_earlier_medium_differ_in_epsilon_and_schedule_only() -> None:
    assert MEDIUM.name == OWN_SCHEDULE_MEDIUM.name == "medium" and BUDGETS["medium"] is MEDIUM
    changed = {f for f in vars(MEDIUM) if getattr(MEDIUM, f) != getattr(OWN_SCHEDULE_MEDIUM, f)}
    assert changed == {"eps", "decay_at"}


def test_medium_has_the_reference_optimiser_and_schedule() -> None:
    assert (MEDIUM.lr, MEDIUM.eps, MEDIUM.weight_decay, MEDIUM.decay_at, MEDIUM.decay, MEDIUM.clip) == \
        (pd.REFERENCE_LR, pd.REFERENCE_EPS, pd.REFERENCE_WEIGHT_DECAY, pd.REFERENCE_DECAY_AT, pd.REFERENCE_DECAY,
         pd.REFERENCE_CLIP)
    assert (MEDIUM.dropout, MEDIUM.equivariant_layers, MEDIUM.points) == \
        (pd.REFERENCE_DROPOUT, pd.REFERENCE_EQUIVARIANT_LAYERS, pd.PAPER_POINTS)


def test_medium_model_is_the_references_up_to_width() -> None:
    """tanh after every equivariant layer and the hidden layer, dropout before each of rho's two
    linear layers, and equivariant layers Gamma(x - max x)."""
    model = make_model("max/max", 12, MEDIUM)
    kinds = [type(m).__name__ for m in model.process]
    assert kinds == ["Dropout", "Linear", "Tanh", "Dropout", "Linear"]
    assert all(m.p == pd.REFERENCE_DROPOUT for m in model.process if isinstance(m, torch.nn.Dropout))
    layers = list(model.combine)
    assert len(layers) == pd.REFERENCE_EQUIVARIANT_LAYERS
    x = torch.randn(2, 9, 3)
    first = layers[0]
    assert isinstance(first.aggregate, Max)
    torch.testing.assert_close(first(x), torch.tanh(first.linear(x - x.max(1, keepdim=True).values)))


def test_clip_grad_norm_is_the_references_clip_grad() -> None:
    """Zaheer et al.'s ``clip_grad(model, 5)``: all gradients times ``5 / (norm + 1e-6)`` when that is below 1."""
    gen = torch.Generator().manual_seed(27)
    for scale in (0.1, 10.0):
        ours = [torch.nn.Parameter(torch.zeros(4, 3)), torch.nn.Parameter(torch.zeros(5))]
        for p in ours:
            p.grad = torch.randn(p.shape, generator=gen) * scale
        grads = [p.grad.clone() for p in ours]
        norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
        coefficient = pd.REFERENCE_CLIP / (norm + 1e-6)
        theirs = [g * coefficient if coefficient < 1 else g for g in grads]
        torch.nn.utils.clip_grad_norm_(ours, MEDIUM.clip)
        for p, g in zip(ours, theirs):
            torch.testing.assert_close(p.grad, g)


def test_committed_file_was_written_at_a_medium_budget(committed: dict) -> None:
    """The rewrites below start from a file of the same data and model: one of the two medium budgets'."""
    budgets = {"OWN_SCHEDULE_MEDIUM": OWN_SCHEDULE_MEDIUM, "MEDIUM": MEDIUM}
    written = [name for name, b in budgets.items() if json.loads(json.dumps(vars(b))) == committed["budget_parameters"]]
    assert len(written) == 1, "results/pointcloud-medium.json was written at neither medium budget"
    budget = budgets[written[0]]
    assert committed["optimizer"]["eps"] == budget.eps
    assert committed["optimizer"]["lr_milestones"] == milestones(budget.steps, budget.decay_at)


def test_earlier_medium_file_keeps_epsilon_schedule_and_data(committed: dict) -> None:
    rows = _rows(_written_with(committed, OWN_SCHEDULE_MEDIUM))
    assert list(rows) == list(AXES) and all(d.status in STATUSES for d in rows.values())
    assert {a: rows[a].status for a in ("Adam epsilon", "schedule", "data")} == dict.fromkeys(
        ("Adam epsilon", "schedule", "data"), "kept")
    assert {a: rows[a].status for a in ("optimiser", "weight decay", "gradient clipping", "activation", "dropout",
                                        "equivariant layers", "training particles")} == dict.fromkeys(
        ("optimiser", "weight decay", "gradient clipping", "activation", "dropout", "equivariant layers",
         "training particles"), "same")
    assert rows["seeds"].status == "unknown"
    for claim, axes in CLAIM_AXES.items():
        assert {"data", "steps", "width", "optimiser", "Adam epsilon", "schedule"} <= set(axes), claim
        assert {"Adam epsilon", "schedule"} <= set(gaps(list(rows.values()), axes).split("; "))


def test_medium_file_has_removed_epsilon_and_schedule(committed: dict) -> None:
    rows = _rows(_written_with(committed, MEDIUM))
    assert rows["Adam epsilon"].status == rows["schedule"].status == "removed"
    assert "1e-08" in rows["Adam epsilon"].reason and "0.8, 0.9" in rows["schedule"].reason
    assert rows["weight decay"].status == rows["gradient clipping"].status == rows["optimiser"].status == "same"
    assert {rows[a].status for a in ("data", "steps", "width", "batch", "output layer")} == {"kept"}
    for axes in CLAIM_AXES.values():
        left = gaps(list(rows.values()), axes).split("; ")
        assert "Adam epsilon" not in left and "schedule" not in left and "data" in left


def test_a_file_on_modelnet40_at_the_reference_sizes_matches_on_those_axes(committed: dict) -> None:
    results = _written_with(committed, MEDIUM)
    results["data"] = {**results["data"], "name": "modelnet40", "classes": pd.MODELNET40_CLASSES,
                       "train_clouds": pd.MODELNET40_TRAIN}
    results["budget_parameters"].update(hidden=pd.REFERENCE_WIDTH, batch=pd.REFERENCE_BATCH,
                                        steps=pd.reference_steps(pd.MODELNET40_TRAIN, pd.REFERENCE_BATCH))
    rows = _rows(results)
    assert rows["data"].status == "same"
    assert {rows[a].status for a in ("steps", "width", "batch")} == {"removed"}


#: For every axis, a change of the results file that its ``ours`` cell must show.
CHANGES: dict[str, Callable[[dict], None]] = {
    "data": lambda r: r["data"].update(name="other", classes=7),
    "training particles": lambda r: r["budget_parameters"].update(points=321),
    "steps": lambda r: r["budget_parameters"].update(steps=4321),
    "width": lambda r: r["budget_parameters"].update(hidden=48),
    "batch": lambda r: r["budget_parameters"].update(batch=24),
    "optimiser": lambda r: r["budget_parameters"].update(lr=7e-4),
    "Adam epsilon": lambda r: r["budget_parameters"].update(eps=3e-5),
    "weight decay": lambda r: r["budget_parameters"].update(weight_decay=2e-6),
    "schedule": lambda r: r["budget_parameters"].update(decay_at=[0.3, 0.7]),
    "gradient clipping": lambda r: r["budget_parameters"].update(clip=2.5),
    "activation": lambda r: r["model"].update(activation="relu"),
    "dropout": lambda r: r["budget_parameters"].update(dropout=0.25),
    "equivariant layers": lambda r: r["budget_parameters"].update(equivariant_layers=2),
    "output layer": lambda r: r["model"].update(head="something else"),
    "seeds": lambda r: r.update(seeds=[0, 1, 2, 3, 4]),
    "augmentation": lambda r: r["data"].update(rotation="none"),
    "test set": lambda r: r["data"].update(test_clouds=300),
    "statistic": lambda r: r.update(seeds=[0, 1, 2]),
}


@pytest.mark.parametrize("axis", AXES)
def test_every_ours_cell_is_read_from_the_file(committed: dict, axis: str) -> None:
    assert set(CHANGES) == set(AXES)
    changed = copy.deepcopy(committed)
    CHANGES[axis](changed)
    before, after = _rows(committed), _rows(changed)
    assert after[axis].ours != before[axis].ours
    assert after[axis].paper == before[axis].paper


def test_claim_axes_are_rows_and_training_leaves_out_the_seeds_the_test_set_and_the_statistic() -> None:
    assert set(TRAINING_AXES) == set(AXES) - {"seeds", "test set", "statistic"}
    assert all(set(axes) <= set(AXES) for axes in CLAIM_AXES.values())


def test_a_file_without_a_protocol_is_refused(committed: dict) -> None:
    broken = {k: v for k, v in committed.items() if k != "model"}
    with pytest.raises(ValueError, match="model"):
        protocol_differences(broken)
    with pytest.raises(ValueError, match="batch"):
        pd.reference_steps(10, 64)
