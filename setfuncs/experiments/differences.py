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

from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping, Sequence

__all__ = ["STATUSES", "UNRECORDED", "Difference", "gaps", "claim_gaps", "differences_html"]

#: A difference's status, from agreement to an unknown.
STATUSES = ("same", "removed", "kept", "unknown")


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
