r"""Where a point-cloud sweep's protocol differs from the paper's (Section 4.3, Table 2), axis by axis.

The paper fixed every hyper-parameter "as described in" Zaheer et al. (2017), so the protocol to
match is their reference code (``manzilzaheer/DeepSets``, ``PointClouds/run.py``,
``classifier.py`` and ``modelnet.py``): the module constants below, each with its source. They
are protocol settings, not results.

:func:`protocol_differences` reads *ours* from a results file (``budget_parameters``, ``data``,
``model``, ``optimizer``, ``seeds``) and gives one
:class:`~setfuncs.experiments.differences.Difference` per axis (:data:`AXES`), with the status

* ``same``: the file matches the reference on this axis, and so did the earlier medium sweep;
* ``removed``: the file matches the reference, and
  :data:`~setfuncs.experiments.pointcloud.budget.OWN_SCHEDULE_MEDIUM` (the budget of
  the three-seed sweep that the ten-seed rerun replaced) did not (only budget fields
  can be removed: the other axes never changed);
* ``kept``: the file differs, for the reason given;
* ``unknown``: the paper does not say (the number of seeds).

**What the claims depend on** (:data:`CLAIM_AXES`). The paper explains its Table 2 by "the
hyper-parameters being optimized for max-type equivariant layers" (or by the task): a claim
about which column leads is conditional on the whole tuned protocol, and a claim about how a
model trained at 1,000 particles fares at 100 or 50 depends on the same training. So every
point-cloud claim depends on every axis that changes the trained model (:data:`TRAINING_AXES`:
data, particles, steps, width, batch, the optimiser, its :math:`\epsilon`, weight decay and
schedule, clipping, activation, dropout, the equivariant layers and the output layer's start).
The seeds are not among them: the findings' statistics account for them.
"""

from __future__ import annotations

import numpy as np

from typing import Any, Callable

from ..differences import Difference
from .budget import OWN_SCHEDULE_MEDIUM

__all__ = ["MODELNET40_CLASSES", "MODELNET40_TRAIN", "MODELNET40_TEST", "PAPER_POINTS", "REFERENCE_EPOCHS",
           "REFERENCE_BATCH", "REFERENCE_WIDTH", "REFERENCE_OPTIMIZER", "REFERENCE_LR", "REFERENCE_EPS",
           "REFERENCE_WEIGHT_DECAY", "REFERENCE_DECAY_AT", "REFERENCE_DECAY", "REFERENCE_CLIP",
           "REFERENCE_ACTIVATION", "REFERENCE_DROPOUT", "REFERENCE_EQUIVARIANT_LAYERS", "REFERENCE_LAYER",
           "REFERENCE_HEAD", "REFERENCE_REPEATS", "AXES", "TRAINING_AXES", "CLAIM_AXES", "reference_steps",
           "protocol_differences"]

#: ModelNet40's classes and meshes per split (the paper, Section 4.3; Wu et al. 2015's archive).
MODELNET40_CLASSES, MODELNET40_TRAIN, MODELNET40_TEST = 40, 9843, 2468
#: The paper — "The training is performed on 1000 particles" (run.py, ``downsample = 10`` of 10,000).
PAPER_POINTS = 1000
#: run.py — ``num_epochs = 1000`` and ``batch_size = 64``.
REFERENCE_EPOCHS, REFERENCE_BATCH = 1000, 64
#: run.py — ``network_dim = 256`` ("for 1000 points use 256").
REFERENCE_WIDTH = 256
#: run.py — ``optim.Adam(..., lr=1e-3, weight_decay=1e-7, eps=1e-3)``.
REFERENCE_OPTIMIZER, REFERENCE_LR, REFERENCE_WEIGHT_DECAY, REFERENCE_EPS = "Adam", 1e-3, 1e-7, 1e-3
#: run.py — ``MultiStepLR(milestones=range(400, num_epochs, 400), gamma=0.1)``, stepped once an
#: epoch: the learning rate x 0.1 after epochs 400 and 800 of 1,000.
REFERENCE_DECAY_AT, REFERENCE_DECAY = (0.4, 0.8), 0.1
#: run.py — ``classifier.clip_grad(self.D, 5)``, which scales all gradients by
#: ``5 / (norm + 1e-6)`` when below 1, ``norm`` the L2 norm of all of them together: the rule of
#: ``torch.nn.utils.clip_grad_norm_``, which our training applies with the budget's ``clip``.
REFERENCE_CLIP = 5.0
#: classifier.py — ``DTanh``, tanh after every equivariant layer and the classifier's hidden layer.
REFERENCE_ACTIVATION = "tanh"
#: classifier.py — ``DTanh.ro`` has ``nn.Dropout(p=0.5)`` before each of its two linear layers.
REFERENCE_DROPOUT = 0.5
#: classifier.py — ``DTanh(pool='max1')``, three ``PermEqui1_max`` layers, ``Gamma(x - max x)``.
REFERENCE_EQUIVARIANT_LAYERS, REFERENCE_LAYER = 3, "PermEqui1_max"
#: classifier.py — ``nn.Linear``'s own initialisation of the output layer.
REFERENCE_HEAD = "PyTorch's default initialisation"
#: run.py — ``num_repeats = 5`` (the paper does not say how many runs Table 2 reports).
REFERENCE_REPEATS = 5

#: The rows of :func:`protocol_differences`, in order.
AXES = ("data", "augmentation", "training particles", "steps", "width", "batch", "optimiser", "Adam epsilon",
        "weight decay", "schedule", "gradient clipping", "activation", "dropout", "equivariant layers", "output layer",
        "seeds", "test set", "statistic")
#: The axes that change the trained model — all but the seeds, the test set and the statistic.
TRAINING_AXES = tuple(axis for axis in AXES if axis not in ("seeds", "test set", "statistic"))
#: The axes each point-cloud claim depends on (keys as :mod:`~setfuncs.experiments.pointcloud.findings`
#: uses them): every training axis (see the module docstring), the test set and the statistic.
CLAIM_AXES = {"max/max performs best": TRAINING_AXES + ("test set", "statistic"),
              "learnable final aggregations generalise": TRAINING_AXES + ("test set", "statistic"),
              "max equivariant layers are crucial": TRAINING_AXES + ("test set", "statistic")}

_COST = ("cost: a medium sweep (12 columns, several seeds) must fit about half a day on two CPU cores "
         "(setfuncs.experiments.pointcloud.budget)")
_KEPT = {
    "data": "ModelNet40 cannot be downloaded where the sweeps run; the offline shapes "
            "(setfuncs.experiments.pointcloud.shapes) are its stand-in, with fewer classes and clouds",
    "steps": _COST, "width": _COST,
    "batch": _COST + "; a run costs about batch x steps, and the medium budget keeps the earlier sweep's split "
                     "so that today's medium sweep differs from the earlier one only in the optimiser's settings",
    "Adam epsilon": "PyTorch's default keeps every column of a short run off a plateau: with the reference's "
                    "epsilon the probe's learnable final aggregation sat on the constant predictor's loss for "
                    "the first part of a medium run (scripts/probes/pointcloud_schedule.py)",
    "schedule": "late decays: with the reference's decay points the probe's loss stopped falling after the first "
                "decay of a short run (scripts/probes/pointcloud_schedule.py)",
    "output layer": "every column starts at the data's marginal (setfuncs.model.init_head): full-size random "
                    "output weights can drive tanh units into saturation, where a model collapses to a constant",
}
_BUDGET_AXIS = "the budget's own setting (setfuncs.experiments.pointcloud.budget)"


def reference_steps(train_clouds: int, batch: int) -> int:
    """Adam steps of the reference's :data:`REFERENCE_EPOCHS` epochs of ``train_clouds`` at ``batch``
    (an incomplete last batch dropped): ``REFERENCE_EPOCHS * (train_clouds // batch)``."""
    if train_clouds < batch or batch < 1:
        raise ValueError(f"need 1 <= batch <= train_clouds, got batch {batch} and train_clouds {train_clouds}")
    return REFERENCE_EPOCHS * (train_clouds // batch)


def _percent(fractions: Any) -> str:
    return " and ".join(f"{100 * f:g} %" for f in fractions)


def _budget_row(axis: str, paper: str, ours: str, fields: tuple[str, ...], matches: Callable[[dict], bool],
                budget: dict) -> Difference:
    """A row on the budget's ``fields``: ``same``, ``removed`` (the earlier medium budget did not
    match; the reason gives its values) or ``kept``."""
    earlier = vars(OWN_SCHEDULE_MEDIUM)
    if not matches(budget):
        return Difference(axis, paper, ours, "kept", _KEPT.get(axis, _BUDGET_AXIS))
    if matches(earlier):
        return Difference(axis, paper, ours, "same")
    values = ", ".join(f"{field} = {earlier[field]}" for field in fields)
    return Difference(axis, paper, ours, "removed",
                      f"the earlier medium sweep (budget OWN_SCHEDULE_MEDIUM) had {values}; the medium budget now "
                      f"follows the reference")


def _reference_row(axis: str, field: str, reference: float, budget: dict) -> Difference:
    """A :func:`_budget_row` on one field of the budget that Zaheer et al.'s run.py sets to ``reference``."""
    return _budget_row(axis, f"{reference:g} (Zaheer et al.'s run.py)", f"{budget[field]:g}", (field,),
                       lambda p: p[field] == reference, budget)


def _row(axis: str, paper: str, ours: str, matches: bool) -> Difference:
    """A row on what no budget sets: ``same`` or ``kept``."""
    if matches:
        return Difference(axis, paper, ours, "same")
    return Difference(axis, paper, ours, "kept", _KEPT.get(axis, "our model's own choice (the file's model)"))


def protocol_differences(results: dict) -> list[Difference]:
    """One row per axis of :data:`AXES` for the sweep of ``results`` (a point-cloud results file,
    :meth:`~setfuncs.experiments.experiment.Experiment.load_results`); a ValueError names a missing field."""
    missing = [key for key in ("budget_parameters", "data", "model", "optimizer", "seeds") if key not in results]
    if missing:
        raise ValueError(f"protocol_differences needs a point-cloud results file; this one lacks {missing}")
    b, data, model, optimizer = results["budget_parameters"], results["data"], results["model"], results["optimizer"]
    clouds = data["train_clouds"]
    epochs = b["steps"] * b["batch"] / clouds
    return [
        _row("data", f"ModelNet40: {MODELNET40_CLASSES} classes, {MODELNET40_TRAIN:,} training and "
                     f"{MODELNET40_TEST:,} test meshes (the paper)",
             f"{data['name']}: {data['classes']} classes, {clouds:,} training and {data['test_clouds']:,} test "
             f"clouds", data["name"] == "modelnet40" and data["classes"] == MODELNET40_CLASSES),
        Difference("augmentation", "not stated (Zaheer et al.'s code is the paper's reference)",
                   f"none beyond the data's own: every cloud a fresh mesh, rotated ({data['rotation']}), "
                   f"proportions {data['proportion_range'][0]:.2f} to {data['proportion_range'][1]:.2f}, sizes "
                   f"{data['size_range'][0]:g} to {data['size_range'][1]:g}", "unknown"),
        _budget_row("training particles", f"{PAPER_POINTS:,} (the paper)", f"{b['points']:,}",
                    ("points",), lambda p: p["points"] == PAPER_POINTS, b),
        _budget_row("steps", f"{REFERENCE_EPOCHS:,} epochs (Zaheer et al.'s run.py): "
                             f"{reference_steps(MODELNET40_TRAIN, REFERENCE_BATCH):,} Adam steps on ModelNet40",
                    f"{b['steps']:,} Adam steps ({epochs:,.0f} epochs of {clouds:,} clouds; the reference's epochs "
                    f"would be {reference_steps(clouds, b['batch']):,} steps)",
                    ("steps",), lambda p: p["steps"] == reference_steps(clouds, p["batch"]), b),
        _reference_row("width", "hidden", REFERENCE_WIDTH, b),
        _reference_row("batch", "batch", REFERENCE_BATCH, b),
        _budget_row("optimiser", f"{REFERENCE_OPTIMIZER}, learning rate {REFERENCE_LR:g} (Zaheer et al.'s run.py)",
                    f"{optimizer['name']}, learning rate {b['lr']:g}",
                    ("lr",), lambda p: optimizer["name"] == REFERENCE_OPTIMIZER and p["lr"] == REFERENCE_LR, b),
        _reference_row("Adam epsilon", "eps", REFERENCE_EPS, b),
        _reference_row("weight decay", "weight_decay", REFERENCE_WEIGHT_DECAY, b),
        _budget_row("schedule", f"learning rate x {REFERENCE_DECAY:g} after {_percent(REFERENCE_DECAY_AT)} of "
                                f"training (Zaheer et al.'s run.py)",
                    f"learning rate x {b['decay']:g} after {_percent(b['decay_at'])} of the steps (after steps "
                    f"{', '.join(f'{m:,}' for m in optimizer['lr_milestones'])})",
                    ("decay_at", "decay"),
                    lambda p: tuple(p["decay_at"]) == REFERENCE_DECAY_AT and p["decay"] == REFERENCE_DECAY, b),
        _budget_row("gradient clipping", f"total L2 norm of all gradients at most {REFERENCE_CLIP:g} "
                                         f"(Zaheer et al.'s classifier.clip_grad)",
                    f"total L2 norm of all gradients at most {b['clip']:g} (torch.nn.utils.clip_grad_norm_)",
                    ("clip",), lambda p: p["clip"] == REFERENCE_CLIP, b),
        _row("activation", f"{REFERENCE_ACTIVATION} (Zaheer et al.'s classifier.DTanh)", model["activation"],
             model["activation"] == REFERENCE_ACTIVATION),
        _budget_row("dropout", f"{REFERENCE_DROPOUT:g} before each of the classifier's two linear layers "
                               f"(Zaheer et al.'s classifier.DTanh)", f"{b['dropout']:g}: {model['classifier']}",
                    ("dropout",), lambda p: p["dropout"] == REFERENCE_DROPOUT, b),
        _budget_row("equivariant layers", f"{REFERENCE_EQUIVARIANT_LAYERS} x {REFERENCE_LAYER}, Gamma(x - max x) "
                                          f"(Zaheer et al.'s classifier.DTanh)",
                    f"{b['equivariant_layers']} x {model['layer']}",
                    ("equivariant_layers",), lambda p: p["equivariant_layers"] == REFERENCE_EQUIVARIANT_LAYERS
                    and REFERENCE_LAYER in model["layer"], b),
        _row("output layer", f"{REFERENCE_HEAD} (Zaheer et al.'s classifier.py)", model["head"],
             model["head"] == REFERENCE_HEAD),
        Difference("seeds", f"not stated (Zaheer et al.'s run.py repeats {REFERENCE_REPEATS} runs)",
                   f"{len(results['seeds'])}: {', '.join(str(s) for s in results['seeds'])}", "unknown"),
        _test_set(results),
        Difference("statistic", "one accuracy per column and size of Table 2, of the 10 best configurations; whether "
                                f"one run or the best of Zaheer et al.'s {REFERENCE_REPEATS} repeats is not stated",
                   f"Table 2: the mean over the {len(results['seeds'])} seeds; findings: differences of two columns "
                   f"paired by seed", "unknown",
                   "a best of several runs lies above their mean, so a cell of the paper's may be a peak"),
    ]


def _test_set(results: dict) -> Difference:
    """The test set's row: ours is one draw shared by every seed, whose noise the seeds do not average out."""
    from .metric import accuracy_at_training_size

    data = results["data"]
    n = data["test_clouds"]
    accuracy = float(np.median([v for v in accuracy_at_training_size(results).values() if np.isfinite(v)]))
    noise = 100 * np.sqrt(accuracy * (1 - accuracy) / n)
    return Difference("test set", f"ModelNet40's {MODELNET40_TEST:,} test meshes, one cloud each",
                      f"one draw of {n:,} test clouds ({data['seeds']}), the same for every seed",
                      "kept", f"the shared draw's noise is about {noise:.1f} points of accuracy (the binomial standard "
                              f"error at the sweep's median accuracy, {accuracy:.0%}), the same in every seed, so a "
                              f"difference between columns carries it and the seeds do not average it out")
