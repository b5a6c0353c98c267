"""Two findings tables of one experiment side by side: which verdicts moved between two sweeps.

An experiment rerun on other data (chapter 11's sweep on the 32 x 32 surrogate and on AIR's 50 x 50
MNIST canvases) or with another protocol gives a second findings table of the same claims.
:func:`verdict_changes` pairs the two tables claim by claim (a claim and its variant name a row; the
tables must hold the same ones) and says, for each, both verdicts, both estimates with their
intervals and seeds, and whether the verdict moved; :func:`verdict_changes_html` shows them. A moved
verdict is the difference between two tables of the same seeds and tests, not a test of its own: each
verdict keeps its own table's Holm correction.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .findings import LEVEL, VARIANT_LABELS, Finding
from .findings.text import finding_interval_text

__all__ = ["verdict_changes", "verdict_changes_html"]


def _key(finding: Finding) -> tuple[str, str]:
    return finding.claim, finding.variant


def verdict_changes(before: Sequence[Finding], after: Sequence[Finding]) -> list[dict]:
    """One row per claim and variant of ``before`` (in its order): ``claim``, ``variant``, ``measure``,
    and for each table (``before_*``, ``after_*``) ``verdict``, ``estimate``, ``interval`` and ``seeds``,
    then ``moved`` (the verdicts differ). A ValueError names the claims that only one table holds, or a
    claim a table holds twice."""
    tables = {"before": before, "after": after}
    keyed = {}
    for name, table in tables.items():
        keys = [_key(f) for f in table]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ValueError(f"the {name} table holds these claims more than once: {twice}")
        keyed[name] = {_key(f): f for f in table}
    only = {name: sorted(set(keyed[name]) - set(keyed[other])) for name, other in (("before", "after"),
                                                                                    ("after", "before"))}
    if only["before"] or only["after"]:
        raise ValueError(f"the two findings tables must hold the same claims; only before: {only['before']}; "
                         f"only after: {only['after']}")
    rows = []
    for key, first in keyed["before"].items():
        second = keyed["after"][key]
        row = {"claim": first.claim, "variant": first.variant, "measure": first.measure,
               "moved": first.verdict != second.verdict}
        for name, finding in (("before", first), ("after", second)):
            row.update({f"{name}_verdict": finding.verdict, f"{name}_seeds": finding.seeds,
                        f"{name}_estimate": None if np.isnan(finding.estimate) else finding.estimate,
                        f"{name}_interval": finding_interval_text(finding)})
        rows.append(row)
    return rows


def verdict_changes_html(rows: Sequence[dict], names: tuple[str, str], caption: str | None = None) -> str:
    """The rows of :func:`verdict_changes` as an HTML table, the two sweeps named by ``names`` (e.g.
    ``("32×32 surrogate", "MNIST, 50×50")``), a moved verdict marked in the last column."""
    from setfuncs.tables import html_table

    shown = [{**row, "variant": VARIANT_LABELS[row["variant"]], "moved": "moved" if row["moved"] else ""}
             for row in rows]
    columns = [("claim", "the paper's claim", "{}"), ("variant", "with", "{}")]
    for prefix, name in zip(("before", "after"), names):
        columns += [(f"{prefix}_estimate", f"{name}: estimate", "{:.3g}"),
                    (f"{prefix}_interval", f"{name}: {LEVEL:.0%} interval", "{}"),
                    (f"{prefix}_verdict", f"{name}: verdict", "{}")]
    return html_table(shown, columns + [("moved", "", "{}")], caption=caption, span="claim")
