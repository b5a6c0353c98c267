"""The front page's grid: the paper's conclusions against the four experiments, each cell the settled
verdicts of the paper's claims that bear on it (``setfuncs.experiments.overview``), linked to its chapter."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.conclusions import CHAPTERS, LINKS
from setfuncs.experiments.findings import select
from setfuncs.experiments.overview import NAMES, RESULTS, overview_of
from setfuncs.experiments.report import claims_of, settled
from setfuncs.experiments.results import results_file

ROOT = Path(__file__).resolve().parents[1]
MODULES = {"circle": circle, "mixture": mixture, "pointcloud": pointcloud, "attention": attention}


@pytest.fixture(scope="module")
def found() -> dict:
    paper = results_file("paper-results.json")
    return {name: m.EXPERIMENT.findings(m.EXPERIMENT.load_results(results_file(RESULTS[name])), paper)
            for name, m in MODULES.items()}


def test_every_cell_holds_the_settled_verdicts_of_its_linked_claims(found: dict) -> None:
    grid = overview_of(found)
    assert list(grid.cells) == list(LINKS)
    for conclusion, links in LINKS.items():
        for experiment in NAMES:
            parts = [f for e, key in links if e == experiment for f in select(found[e], key) if f.family == "paper"]
            expected = tuple(settled(p) for p in claims_of(parts).values())
            assert grid.cells[conclusion].get(experiment, ()) == expected, (conclusion, experiment)


def test_the_totals_count_every_claim_of_the_papers_family_once(found: dict) -> None:
    grid = overview_of(found)
    claims = sum(len(claims_of([f for f in table if f.family == "paper"])) for table in found.values())
    assert sum(grid.totals.values()) == claims
    assert f"Of the {claims} claims" in grid.sentence()


def test_a_changed_verdict_moves_the_grid(found: dict) -> None:
    changed = dict(found)
    changed["circle"] = [replace(f, verdict="not reproduced") if f.family == "paper" else f for f in found["circle"]]
    assert overview_of(changed).cells != overview_of(found).cells


def test_the_grid_links_each_cell_to_its_chapters_result_box(found: dict) -> None:
    text = overview_of(found)._repr_html_()
    for experiment, chapter in CHAPTERS.items():
        assert (ROOT / "book" / f"{chapter}.ipynb").exists()
        assert f'href="{chapter}.html"' in text
    assert re.search(r'href="\d\d_\w+\.html#what-we-found"', text)
    assert "|---|" in overview_of(found)._repr_markdown_()


def test_the_introduction_shows_the_grid() -> None:
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    assert "```{code-cell} ipython3" in intro and "overview()" in intro
    assert intro.index("## What the book found") < intro.index("## How to read it")
