"""The paper's closing conclusions (chapter 7), each linked to the findings that bear on it.

The paper ends with four conclusions; the experiment chapters test the claims of Section 4 they
rest on. :data:`LINKS` names, for each conclusion, the chapters and the keys of the claims that
bear on it; :func:`conclusion_rows` gathers those claims' verdicts from the findings tables, so
chapter 7 states what our runs say about each conclusion from the same tables as chapters 8-11,
never a typed verdict. A conclusion of the paper rests on the paper's claims: their verdicts (the
paper's family, :data:`~setfuncs.experiments.findings.claims.FAMILIES`) are counted apart from the
book's own log-mean-exp variants of them, which are shown beside them and never mixed in.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

from .findings import VERDICTS, Finding, select

__all__ = ["CHAPTERS", "LINKS", "conclusion_rows"]

#: The experiment of each chapter that tests claims, by the chapter's file name.
CHAPTERS = {"circle": "08_circle", "mixture": "09_mixture", "pointcloud": "10_point_clouds",
            "attention": "11_attention"}

#: For each conclusion, the (experiment, claim key) pairs — the claims that bear on it, a key naming the claim
#: with all its parts (:func:`~setfuncs.experiments.findings.claims.select`). A conclusion with none is a statement
#: about the framework no experiment tests.
LINKS: dict[str, tuple[tuple[str, str], ...]] = {
    "Aggregations are a research axis of their own": (),
    "The right choice depends on the task": (("mixture", "max-behind"), ("pointcloud", "max-equivariant-crucial")),
    "Learnable aggregations are more robust": (
        ("circle", "recurrent-equivariant-improve"), ("circle", "recurrent-aggregations-improve"),
        ("mixture", "boost"), ("pointcloud", "learnable-final/100"), ("attention", "monotonic")),
    "Challenge models outside the training scenario": (
        ("pointcloud", "learnable-final/50"), ("pointcloud", "max-r-lse-generalises"),
        ("pointcloud", "max-max-drops-more"), ("attention", "monotonic")),
}


def conclusion_rows(findings: Mapping[str, Sequence[Finding]]) -> list[dict]:
    """One row per conclusion and chapter (keys ``conclusion, chapter, claims, seeds, verdicts, own``): how
    many of the paper's claims in the chapter's findings bear on the conclusion (family ``"paper"``: the
    paper's variant and the claims both variants share), their seeds and their verdicts counted, e.g.
    ``"2 reproduced, 4 undecided"``, and ``own``: the verdicts of the book's log-mean-exp variants of the
    same claims, counted the same way ("" where there are none); one row saying no experiment tests a
    conclusion without links. ``findings`` maps each experiment of :data:`CHAPTERS` to its findings
    table. A ValueError names a link that matches no claim (a claim's key changed)."""
    rows = []
    for conclusion, links in LINKS.items():
        if not links:
            rows.append({"conclusion": conclusion, "chapter": "", "claims": 0, "seeds": "",
                         "verdicts": "not a claim the experiments test", "own": ""})
        by_chapter: dict[str, list[Finding]] = {}
        for experiment, key in links:
            try:
                matches = select(findings[experiment], key)
            except ValueError as err:
                raise ValueError(f"{experiment}: {err}; update setfuncs.experiments.conclusions.LINKS") from err
            found = by_chapter.setdefault(CHAPTERS[experiment], [])
            found += [f for f in matches if f not in found]
        for chapter, found in by_chapter.items():
            paper = [f for f in found if f.family == "paper"]
            seeds = sorted({f.seeds for f in paper})
            rows.append({"conclusion": conclusion, "chapter": chapter, "claims": len(paper),
                         "seeds": f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}",
                         "verdicts": _counted(paper), "own": _counted([f for f in found if f.family != "paper"])})
    return rows


def _counted(found: Sequence[Finding]) -> str:
    counts = Counter(f.verdict for f in found)
    return ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v])
