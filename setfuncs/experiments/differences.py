r"""Where our protocol differs from the paper's, axis by axis, and which claims that touches.

Every experiment chapter shows a table of :class:`Difference` rows: one per axis of the protocol
(data, steps, width, batch, optimiser and its :math:`\epsilon`, weight decay, schedule, activation,
dropout, architecture details, seeds). Each row says what the paper (or the reference code it
fixed) used, what our sweep used, and its status:

* ``same``: our protocol matches the paper's on this axis;
* ``removed``: an earlier sweep of ours differed here, the current protocol matches;
* ``kept``: we still differ, for the stated reason;
* ``unknown``: the paper does not state it, so no sweep can be said to match.

A finding may be called *contradicted* only where our protocol matches the paper's on every axis
its claim depends on (:mod:`~setfuncs.experiments.findings`); :func:`gaps` names the axes that
break the match, and the findings table says "not reproduced on ..." with them instead.
"""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping, Sequence

from setfuncs.model import DeepSet
from setfuncs.train import fit

__all__ = ["STATUSES", "NOT_STATED", "TRAINING_AXES", "UNRECORDED", "Difference", "gaps", "claim_gaps",
           "differences_html", "header_field", "seed_range", "code_default", "training_differences"]

#: A difference's status, from agreement to an unknown.
STATUSES = ("same", "removed", "kept", "unknown")

#: What the ``paper`` cell of an ``unknown`` row says.
NOT_STATED = "not stated"
#: The axes of training of a Deep Set sweep that Sections 4.1 and 4.2 both leave unstated
#: (:func:`training_differences`, whose rows the circle's and the mixture's tables share).
TRAINING_AXES = ("steps", "batch", "width", "equivariant layers", "recurrent steps", "optimiser and learning rate",
                 "Adam eps", "weight decay", "learning-rate schedule", "gradient clipping", "activation", "dropout",
                 "architecture", "head initialisation")


@dataclass(frozen=True)
class Difference:
    """One axis of the protocol.

    Attributes:
        axis: what the row is about ("optimiser", "steps", ...).
        paper: the paper's protocol on this axis, with its source when it is not the paper itself.
        ours: ours, as the sweep ran it (read from the budget or the results file, never typed).
        status: one of :data:`STATUSES`.
        reason: why a difference is kept (or what removed it); empty for ``same``.
    """

    axis: str
    paper: str
    ours: str
    status: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.status in ("kept", "removed") and not self.reason:
            raise ValueError(f"a {self.status} difference needs its reason (axis {self.axis!r})")

    @property
    def matches(self) -> bool:
        """Whether our protocol is known to match the paper's on this axis."""
        return self.status in ("same", "removed")


def gaps(differences: Sequence[Difference], axes: Sequence[str]) -> str:
    """The axes among ``axes`` on which our protocol is not known to match the paper's, joined
    with "; " ("" when it matches on all of them). A ValueError names an axis that no row has."""
    known = {d.axis: d for d in differences}
    missing = [a for a in axes if a not in known]
    if missing:
        raise ValueError(f"no protocol row for the axes {missing}; the rows are {sorted(known)}")
    return "; ".join(a for a in axes if not known[a].matches)


#: The gap of every claim on runs whose file records no protocol (no ``identity``, as a sweep writes):
#: such runs can reproduce a claim or fail to, never contradict it.
UNRECORDED = "the protocol (the runs record none)"


def claim_gaps(results: Mapping[str, Any], differences: Callable[[Mapping[str, Any]], Sequence[Difference]],
               claim_axes: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """``{claim key: gap}`` for an experiment's ``claim_axes``: :func:`gaps` of ``differences(results)``,
    or :data:`UNRECORDED` for every claim when ``results`` has no ``identity`` (runs made by hand)."""
    if "identity" not in results:
        return dict.fromkeys(claim_axes, UNRECORDED)
    rows = differences(results)
    return {key: gaps(rows, axes) for key, axes in claim_axes.items()}


def differences_html(differences: Sequence[Difference], caption: str | None = None) -> str:
    """The rows as an HTML table: axis, the paper's, ours, status, reason."""
    from setfuncs.tables import html_table

    return html_table([asdict(d) for d in differences],
                      [("axis", "axis", "{}"), ("paper", "the paper", "{}"), ("ours", "ours", "{}"),
                       ("status", "status", "{}"), ("reason", "reason", "{}")], caption=caption)


def header_field(results: Mapping[str, Any], *keys: str) -> Any:
    """``results[keys[0]][keys[1]]...``; a ValueError naming the missing key and how to get it."""
    value: Any = results
    for depth, key in enumerate(keys):
        if not isinstance(value, Mapping) or key not in value:
            path = ".".join(keys[:depth + 1])
            raise ValueError(f"the results lack {path!r}; pass a sweep's results file read by its experiment's "
                             f"load_results (the sweep's provenance writes it), or rerun the sweep")
        value = value[key]
    return value


def seed_range(seeds: list[int]) -> str:
    """``"0..9"`` for consecutive seeds, else the list; a ValueError for no seeds."""
    if not seeds:
        raise ValueError("seeds is empty; a sweep's results file lists the seeds it ran")
    ordered = sorted(seeds)
    return f"{ordered[0]}..{ordered[-1]}" if ordered == list(range(ordered[0], ordered[-1] + 1)) else str(ordered)


def code_default(function: Any, name: str) -> Any:
    """The default of ``function``'s argument ``name`` in the installed code: what a caller that never
    passes it uses (a value a results file does not record)."""
    return inspect.signature(function).parameters[name].default


def training_differences(results: Mapping[str, Any]) -> list[Difference]:
    """The rows of :data:`TRAINING_AXES`, all ``unknown`` (neither section states them).

    Steps, batch, width, layers, recurrent reads, learning rate and clipping are the file's
    ``budget_parameters``, the head's initialisation its ``head``. Adam's eps, weight decay, the
    schedule, the activation, the dropout and the other layer counts are not recorded in a results
    file: the sweeps never pass them, so they are the defaults of :func:`setfuncs.train.fit` and
    :class:`setfuncs.model.DeepSet` in the installed code, and their cells say so.
    """
    budget = header_field(results, "budget_parameters")
    name = header_field(results, "budget")
    head = header_field(results, "head", "init")
    milestones = code_default(fit, "milestones")
    code = "code default, not recorded in the file"
    schedule = (f"x {code_default(fit, 'gamma')} after steps {list(milestones)}" if milestones
                else "constant learning rate")
    rows = [("steps", f"{header_field(budget, 'steps'):,} Adam steps ({name} budget)"),
            ("batch", f"{header_field(budget, 'batch')} populations per step"),
            ("width", f"{header_field(budget, 'hidden')} units in every hidden layer"),
            ("equivariant layers", f"{header_field(budget, 'equivariant_layers')}"),
            ("recurrent steps", f"T = {header_field(budget, 'recurrent_steps')} reads per recurrent aggregation"),
            ("optimiser and learning rate", f"Adam, learning rate {header_field(budget, 'lr'):g}"),
            ("Adam eps", f"{code_default(fit, 'eps'):g} ({code})"),
            ("weight decay", f"{code_default(fit, 'weight_decay'):g} ({code})"),
            ("learning-rate schedule", f"{schedule} ({code})"),
            ("gradient clipping", f"gradient norm clipped at {header_field(budget, 'clip'):g}"),
            ("activation", f"{code_default(DeepSet, 'activation')} everywhere ({code})"),
            ("dropout", f"{code_default(DeepSet, 'dropout'):g} ({code})"),
            ("architecture", f"{code_default(DeepSet, 'embed_layers')} embedding layer(s), "
                             f"'{code_default(DeepSet, 'layer')}' layers, a process MLP of "
                             f"{code_default(DeepSet, 'process_layers')} linear layers ({code})"),
            ("head initialisation", head)]
    reasons = {"steps": "a budget that leaves the models unconverged can change a ranking",
               "width": "as for the steps: a wider model may learn faster or reach a lower loss",
               "head initialisation": "a randomly initialised output layer can drive tanh units into saturation, "
                                      "where a model collapses to a constant"}
    return [Difference(axis, NOT_STATED, ours, "unknown", reasons.get(axis, "")) for axis, ours in rows]
