"""Chapter 7's conclusions table: every link names a claim of the committed findings tables, and the
verdicts it counts are the tables' own."""

from __future__ import annotations

from collections import Counter

import pytest

from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.conclusions import CHAPTERS, LINKS, conclusion_rows
from setfuncs.experiments.results import results_file

MODULES = {"circle": circle, "mixture": mixture, "pointcloud": pointcloud, "attention": attention}


@pytest.fixture(scope="module")
def tables() -> dict:
    paper = results_file("paper-results.json")
    return {name: getattr(module, f"{name}_findings")(module.load_results(results_file(f"{name}-medium.json")), paper)
            for name, module in MODULES.items()}


def test_every_conclusion_is_linked_to_the_tables_verdicts(tables: dict) -> None:
    rows = conclusion_rows(tables)
    assert [r["conclusion"] for r in rows if not r["chapter"]] == [c for c, links in LINKS.items() if not links]
    for row in (r for r in rows if r["chapter"]):
        experiment = next(e for e, chapter in CHAPTERS.items() if chapter == row["chapter"])
        words = [w for e, w in LINKS[row["conclusion"]] if e == experiment]
        found = list({id(f): f for f in tables[experiment] if any(w in f.claim for w in words)}.values())
        counts = Counter(f.verdict for f in found)
        assert row["claims"] == len(found) == sum(counts.values())
        assert row["verdicts"] == ", ".join(f"{n} {v}" for v, n in sorted(counts.items(),
                                                                          key=lambda kv: ("reproduced", "undecided",
                                                                                          "not reproduced",
                                                                                          "contradicted").index(kv[0])))


def test_a_link_that_matches_no_claim_is_named(tables: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(LINKS, "Learnable aggregations are more robust", (("circle", "no such claim"),))
    with pytest.raises(ValueError, match="no circle finding contains 'no such claim'"):
        conclusion_rows(tables)
