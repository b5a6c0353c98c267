"""The paper's closing conclusions (chapter 7), each linked to the findings that bear on it.

The paper ends with four conclusions; the experiment chapters test the claims of Section 4 they
rest on. :data:`LINKS` names, for each conclusion, the chapters and the words of the claims that
bear on it; :func:`conclusion_rows` gathers those claims' verdicts from the findings tables, so
chapter 7 states what our runs say about each conclusion from the same tables as chapters 8-11,
never a typed verdict.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

from .findings import VERDICTS, Finding

__all__ = ["CHAPTERS", "LINKS", "conclusion_rows"]

#: The experiment of each chapter that tests claims, by the chapter's file name.
CHAPTERS = {"circle": "08_circle", "mixture": "09_mixture", "pointcloud": "10_point_clouds",
            "attention": "11_attention"}

#: For each conclusion, the (experiment, words a claim contains) pairs — the claims that bear on it. A conclusion
#: with none is a statement about the framework no experiment tests.
LINKS: dict[str, tuple[tuple[str, str], ...]] = {
    "Aggregations are a research axis of their own": (),
    "The right choice depends on the task": (
        ("mixture", "max-type aggregations fall"), ("pointcloud", "max-type equivariant layers")),
    "Learnable aggregations are more robust": (
        ("circle", "recurrent equivariant layers improve"), ("circle", "recurrent aggregations improve"),
        ("mixture", "learnable (recurrent) equivariant layers"), ("pointcloud", "learnable final aggregations"),
        ("attention", "learnable aggregations improve")),
    "Challenge models outside the training scenario": (
        ("pointcloud", "... and at 50 particles"), ("pointcloud", "generalises to 50 particles"),
        ("pointcloud", "loses more accuracy"), ("attention", "learnable aggregations improve")),
}


def conclusion_rows(findings: Mapping[str, Sequence[Finding]]) -> list[dict]:
    """One row per conclusion and chapter (keys ``conclusion, chapter, claims, seeds, verdicts``): how
    many of the chapter's findings bear on the conclusion (a claim the two variants test apart counts
    twice), their seeds and their verdicts counted, e.g. ``"2 reproduced, 4 undecided"``; one row
    saying no experiment tests a conclusion without links. ``findings`` maps each experiment of
    :data:`CHAPTERS` to its findings table. A ValueError names a link that matches no claim (the
    claims' words changed)."""
    rows = []
    for conclusion, links in LINKS.items():
        if not links:
            rows.append({"conclusion": conclusion, "chapter": "", "claims": 0, "seeds": "",
                         "verdicts": "not a claim the experiments test"})
        by_chapter: dict[str, list[Finding]] = {}
        for experiment, words in links:
            matches = [f for f in findings[experiment] if words in f.claim]
            if not matches:
                raise ValueError(f"no {experiment} finding contains {words!r}; update "
                                 f"setfuncs.experiments.conclusions.LINKS")
            found = by_chapter.setdefault(CHAPTERS[experiment], [])
            found += [f for f in matches if f not in found]
        for chapter, found in by_chapter.items():
            counts = Counter(f.verdict for f in found)
            seeds = sorted({f.seeds for f in found})
            rows.append({"conclusion": conclusion, "chapter": chapter, "claims": len(found),
                         "seeds": f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}",
                         "verdicts": ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v])})
    return rows
