"""Two findings tables of one experiment side by side (chapter 11 on the surrogate's canvases
and on MNIST's): every claim paired with itself, a moved verdict flagged, tables of other claims refused."""

from __future__ import annotations

from dataclasses import replace

import pytest

from setfuncs.experiments import attention as at
from setfuncs.experiments.findings import Finding
from setfuncs.experiments.results import results_file
from setfuncs.experiments.side_by_side import verdict_changes, verdict_changes_html

PAPER = results_file("paper-results.json")


def finding(claim: str, verdict: str, variant: str = "paper", estimate: float = 1.0) -> Finding:
    return Finding(claim=claim, measure="m", estimate=estimate, low=estimate - 1, high=estimate + 1, seeds=10,
                   p_value=0.01, adjusted=0.02, detectable=0.5, verdict=verdict, variant=variant)


def test_a_moved_verdict_is_flagged_and_the_rest_are_not() -> None:
    before = [finding("a", "reproduced"), finding("a", "undecided", "lme"), finding("b", "not reproduced")]
    after = [finding("b", "undecided", estimate=2.0), finding("a", "reproduced"), finding("a", "undecided", "lme")]
    rows = verdict_changes(before, after)
    assert [(r["claim"], r["variant"], r["moved"]) for r in rows] == [("a", "paper", False), ("a", "lme", False),
                                                                      ("b", "paper", True)]
    assert (rows[2]["before_verdict"], rows[2]["after_verdict"], rows[2]["after_estimate"]) == (
        "not reproduced", "undecided", 2.0)
    html = verdict_changes_html(rows, ("32×32 surrogate", "MNIST, 50×50"))
    assert html.count(">moved<") == 1 and "32×32 surrogate: verdict" in html and "MNIST, 50×50: estimate" in html


def test_tables_of_other_claims_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"only before: \[\('b', 'paper'\)\]; only after: \[\('c', 'paper'\)\]"):
        verdict_changes([finding("a", "reproduced"), finding("b", "undecided")],
                        [finding("a", "reproduced"), finding("c", "undecided")])
    with pytest.raises(ValueError, match="the after table holds these claims more than once"):
        verdict_changes([finding("a", "reproduced")], [finding("a", "reproduced"), finding("a", "undecided")])


def test_the_committed_attention_findings_beside_themselves_move_nothing() -> None:
    found = at.attention_findings(at.load_results(results_file("attention-medium.json")), PAPER)
    rows = verdict_changes(found, found)
    assert len(rows) == len(found) and not any(r["moved"] for r in rows)
    moved = [replace(f, verdict="undecided" if f.verdict != "undecided" else "reproduced") if i == 0 else f
             for i, f in enumerate(found)]
    assert [r["moved"] for r in verdict_changes(found, moved)] == [True] + [False] * (len(found) - 1)
