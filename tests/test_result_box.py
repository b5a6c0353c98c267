"""The result box of an experiment chapter says what its findings say: every verdict of the paper's
claims, with its numbers, read from the committed results (``<experiment>.report.result_box``); and
the compact findings views (``setfuncs.experiments.report``) show every finding, verdict first.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import replace

import pytest

from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.overview import RESULTS
from setfuncs.experiments.findings import VERDICTS, interval_text
from setfuncs.experiments.report import (SETTLES, VERDICT_MARKS, claims_of, family_power, plot_findings, result_box,
                                         settled, verdict_table)
from setfuncs.experiments.results import results_file

#: Every experiment and the results file its chapter reads.
EXPERIMENTS = {name: (module, RESULTS[name]) for name, module in
               {"circle": circle, "mixture": mixture, "pointcloud": pointcloud, "attention": attention}.items()}
PAPER = results_file("paper-results.json")


@pytest.fixture(scope="module", params=list(EXPERIMENTS))
def chapter(request: pytest.FixtureRequest) -> tuple:
    module, name = EXPERIMENTS[request.param]
    results = module.EXPERIMENT.load_results(results_file(name))
    found = module.EXPERIMENT.findings(results, PAPER)
    report = importlib.import_module(f"{module.__name__}.report")
    return report.FORMAT, found, report.result_box(results, PAPER)


def test_the_box_names_every_verdict_of_the_papers_claims_with_its_numbers(chapter: tuple) -> None:
    fmt, found, box = chapter
    text = str(box)
    for parts in claims_of([f for f in found if f.family == "paper"]).values():
        verdict = settled(parts)
        assert re.search(rf"{verdict.capitalize()}, \d+ of the paper's \d+ claims", text), verdict
        for f in parts:
            assert f.verdict in text.lower(), f.key
            if f.seeds:
                assert f"estimate {f.estimate:{fmt}}" in text, f.key
                assert interval_text(f.low, f.high, fmt, f.test) in text, f.key


def test_the_box_renders_as_html_markdown_and_text(chapter: tuple) -> None:
    _, _, box = chapter
    assert box._repr_html_().startswith('<div class="result-box" id="what-we-found"')
    assert box.sentences[0] in box._repr_markdown_()
    assert box.lead in str(box)


def test_the_box_counts_the_books_own_claims_apart(chapter: tuple) -> None:
    _, found, box = chapter
    own = claims_of([f for f in found if f.family == "book"])
    assert str(len(own)) in box.sentences[-1] or not own
    assert box.sentences[-1].startswith(f"The book's own {len(own)} claims") == bool(own)


def test_a_changed_finding_changes_the_box(chapter: tuple) -> None:
    _, found, box = chapter
    first = next(i for i, f in enumerate(found) if f.family == "paper" and f.seeds)
    flipped = "undecided" if found[first].verdict != "undecided" else "reproduced"
    changed = list(found)
    changed[first] = replace(found[first], verdict=flipped)
    assert str(result_box(changed, box.lead, ".3g")) != str(result_box(found, box.lead, ".3g"))


def test_a_part_decided_against_settles_its_claim() -> None:
    results = mixture.EXPERIMENT.load_results(results_file("mixture-medium.json"))
    parts = [f for f in mixture.EXPERIMENT.findings(results, PAPER) if f.key.startswith("boost/") and f.family == "paper"]
    for verdict in SETTLES[:3]:
        mixed = [replace(parts[0], verdict=verdict)] + [replace(p, verdict="reproduced") for p in parts[1:]]
        assert settled(mixed) == verdict
    assert settled([replace(p, verdict="reproduced") for p in parts]) == "reproduced"


def test_the_verdict_table_puts_the_verdict_first_with_a_symbol(chapter: tuple) -> None:
    fmt, found, _ = chapter
    table = verdict_table(found, fmt)
    paper = [f for f in found if f.family == "paper"]
    assert [row["verdict"] for row in table.rows] == [f.verdict for f in paper]
    html = table._repr_html_()
    assert html.index("<th>verdict</th>") < html.index("<th>claim</th>")
    for f in paper:
        assert VERDICT_MARKS[f.verdict]["symbol"] in html


def test_every_verdict_has_its_own_symbol_and_marker() -> None:
    assert set(VERDICT_MARKS) == set(VERDICTS)
    for key in ("symbol", "marker"):
        assert len({mark[key] for mark in VERDICT_MARKS.values()}) == len(VERDICTS)


def test_the_forest_view_has_one_axis_per_tested_finding(chapter: tuple) -> None:
    import matplotlib

    matplotlib.use("Agg")
    _, found, _ = chapter
    fig = plot_findings(found)
    assert len(fig.axes) == sum(f.family == "paper" and f.seeds > 0 for f in found)
    matplotlib.pyplot.close(fig)


def test_family_power_says_when_no_outcome_can_decide(chapter: tuple) -> None:
    _, found, _ = chapter
    for row in family_power(found):
        assert row.decidable == (row.smallest_p <= row.first_step)
        assert row.seeds_needed <= row.seeds or not row.decidable
    few = [replace(f, seeds=3) for f in found]
    assert not any(row.decidable for row in family_power(few))
