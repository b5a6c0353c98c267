"""Chapter 7's conclusions table: every link names a claim of the committed findings tables, and the
verdicts it counts are the tables' own."""

from __future__ import annotations

from collections import Counter

import pytest

from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.conclusions import CHAPTERS, LINKS, conclusion_rows
from setfuncs.experiments.findings import select
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
        keys = [k for e, k in LINKS[row["conclusion"]] if e == experiment]
        found = list({id(f): f for f in tables[experiment]
                      if any(f.key == k or f.key.startswith(k + "/") for k in keys)}.values())
        for family, column in (("paper", "verdicts"), ("book", "own")):
            counts = Counter(f.verdict for f in found if f.family == family)
            if family == "paper":
                assert row["claims"] == sum(counts.values()) > 0
            assert row[column] == ", ".join(f"{n} {v}" for v, n in sorted(counts.items(),
                                                                          key=lambda kv: ("reproduced", "undecided",
                                                                                          "not reproduced",
                                                                                          "contradicted").index(kv[0])))


def test_a_link_that_matches_no_claim_is_named(tables: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(LINKS, "Learnable aggregations are more robust", (("circle", "no-such-claim"),))
    with pytest.raises(ValueError, match="circle: no finding has the key 'no-such-claim'.*'recurrent-best-row'"):
        conclusion_rows(tables)


def test_a_key_selects_its_parts_and_no_other_claim(tables: dict) -> None:
    """``select("max-behind")`` gives the mixture's three parts of the paper's sentence (both variants), and a
    key that is only the start of another ("boost" against "boost/mean") is not confused with a longer word."""
    behind = {f.key for f in select(tables["mixture"], "max-behind")}
    assert behind == {"max-behind/equivariant", "max-behind/final", "max-behind/peaks"}
    assert all(f.key.startswith("boost/") for f in select(tables["mixture"], "boost"))
    with pytest.raises(ValueError, match="no finding has the key 'boos'"):
        select(tables["mixture"], "boos")


@pytest.mark.parametrize("experiment", list(MODULES))
def test_every_claim_has_a_key_shared_by_its_variants(tables: dict, experiment: str) -> None:
    """Every finding carries a key, one (variant, key) per row, and the paper's and the log-mean-exp
    variant test the same keys: chapters select claims by key, never by their words."""
    table = tables[experiment]
    assert all(f.key for f in table)
    rows = [(f.variant, f.key) for f in table]
    assert len(rows) == len(set(rows))
    by_variant = {v: {k for variant, k in rows if variant in (v, "both")} for v in ("paper", "lme")}
    assert by_variant["paper"] == by_variant["lme"]
    assert all(f.claim.startswith(f.words) for f in table)
