"""Chapter 10's report (``setfuncs.experiments.pointcloud.report`` and ``lesson``): each function's rows
are what the results file says, a changed input changes them, and bad input is named."""

from __future__ import annotations

import copy
import math
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

import setfuncs as sf
from setfuncs.experiments import pointcloud as pc
from setfuncs.experiments.convergence import late_change
from setfuncs.experiments.findings import VERDICTS
from setfuncs.experiments.pointcloud import lesson, report
from setfuncs.experiments.pointcloud.agreement import rank_agreement
from setfuncs.experiments.pointcloud.costs import cost_table as cost_rows
from setfuncs.experiments.pointcloud.findings import pointcloud_claims
from setfuncs.experiments.results import results_file
from setfuncs.experiments.views import Lines, Table

PAPER = results_file("paper-results.json")
TINY = pc.Budget("tiny", steps=3, batch=4, lr=1e-3, clip=5.0, hidden=8, equivariant_layers=1, recurrent_steps=2,
                 test_size=2, points=20, train_per_class=1, curve_sizes=(10, 20))


@pytest.fixture(scope="module")
def results() -> dict:
    return pc.load_results(results_file(report.SWEEP))


@pytest.fixture(scope="module")
def found(results: dict) -> list:
    return report.findings(results, PAPER)


def _with_run(results: dict, spec: str, seed: int, **changes) -> dict:
    changed = copy.deepcopy(results)
    run = next(r for r in changed["runs"] if r["spec"] == spec and r["seed"] == seed)
    run.update(changes)
    return changed


def test_the_findings_word_each_part_as_the_box_reads_it(results: dict, found: list) -> None:
    raw = pc.pointcloud_findings(results, PAPER)
    assert [(f.key, f.verdict, f.estimate) for f in found] == [(f.key, f.verdict, f.estimate) for f in raw]
    parts = [(f, g) for f, g in zip(raw, found) if "/" in f.key]
    assert parts, "the point-cloud findings have a claim of several parts"
    for f, g in parts:
        assert g.words.endswith(f"(at {f.part})") and g.words.count("(at ") == 1
    first = next(f for f, _ in parts)
    assert first.words.endswith(f" at {first.part}"), "the first part's words end with its part"
    text = str(report.result_box(results, PAPER))
    for f, g in parts:
        if g.family == "paper":
            assert f"at {g.part} (estimate {g.estimate:{report.FORMAT}}" in text
    assert [f for f, g in zip(raw, found) if "/" not in f.key] == [g for f, g in zip(raw, found) if "/" not in f.key]


def test_the_lead_counts_the_tested_verdicts_and_reads_the_run(results: dict, found: list) -> None:
    text = report.lead(results, found)
    tested = Counter(f.verdict for f in found if f.family == "paper" and f.seeds)
    assert text.startswith(f"Of the {sum(tested.values())} tested findings")
    for verdict, n in tested.items():
        assert f"{n} {'is' if n == 1 else 'are'} {verdict}" in text
    assert f"{results['runs_per_configuration']} seeds" in text and f"{results['budget_parameters']['steps']:,} steps" in text
    assert f"its {len(sf.TABLE2_SPECS)} columns of Table 2 and {len(pc.LME_COLUMNS)} with log-mean-exp" in text
    assert "not ModelNet40" in text and "never contradicted" in text
    assert str(report.result_box(results, PAPER)).splitlines()[1] == text
    flipped = [replace(f, verdict="reproduced") if f.family == "paper" and f.seeds else f for f in found]
    assert f"{sum(tested.values())} are reproduced" in report.lead(results, flipped)
    modelnet = copy.deepcopy(results)
    modelnet["data"].update(name="modelnet40", classes=40)
    other = report.lead(modelnet, found)
    assert "ModelNet40 (40 classes)" in other and "never contradicted" not in other
    with pytest.raises(ValueError, match="no tested finding"):
        report.lead(results, [f for f in found if f.family != "paper"])


def test_the_format_formats_an_accuracy_difference() -> None:
    assert f"{-0.0912:{report.FORMAT}}" == "-9.1%" and f"{0.276:{report.FORMAT}}" == "+27.6%"


def test_table2_is_the_pointcloud_table_with_the_runs_used(results: dict) -> None:
    shown = report.table2(results, PAPER)
    rows = pc.pointcloud_table(results, PAPER)
    assert shown.column("spec") == [r["spec"] for r in rows]
    assert shown.column("used") == [r["runs"] - r["collapsed"] - r["diverged"] for r in rows]
    for n in pc.TABLE_SIZES:
        assert shown.column(f"mean_{n}") == [r[f"mean_{n}"] for r in rows]
        assert shown.column(f"paper_{n}")[:len(sf.TABLE2_SPECS)] == [pc.paper_rows(PAPER)[s][n] for s in sf.TABLE2_SPECS]
    assert f"({sum(r['collapsed'] for r in rows)} of {sum(r['runs'] for r in rows)})" in shown.notes[0]
    run = next(r for r in results["runs"] if r["spec"] == "max/max")
    changed = _with_run(results, "max/max", run["seed"], collapsed=True)
    assert report.table2(changed, PAPER).column("used")[0] == shown.column("used")[0] - 1
    assert "max/max 1" in report.table2(changed, PAPER).notes[0]
    with pytest.raises(KeyError, match="no column"):
        shown.column("best_1000")


def test_the_results_lines_name_the_leading_columns(results: dict) -> None:
    rows = {r["spec"]: r for r in pc.pointcloud_table(results)}
    lines = report.results_lines(results, PAPER).lines
    lead = max(rows, key=lambda s: rows[s]["mean_1000"])
    assert f"{lead} leads at the training size of 1,000 points with {rows[lead]['mean_1000']:.1%}" in lines[0]
    assert f"max/max keeps {rows['max/max']['mean_50']:.1%}" in lines[0]
    paper = pc.paper_rows(PAPER)
    best = max(paper, key=lambda s: paper[s][50])
    assert f"max/max {paper['max/max'][1000]:.1%} at 1,000 points" in lines[1] and f"{best} leads" in lines[1]


def test_the_rank_lines_are_spearmans_correlations(results: dict) -> None:
    rows = rank_agreement(pc.pointcloud_table(results), pc.paper_rows(PAPER), pc.TABLE_SIZES)
    lines = report.rank_lines(results, PAPER).lines
    for row in rows:
        assert f"{row['rho']:+.2f} at n = {row['n']:,}" in lines[0]
        assert f"at n = {row['n']:,}, {', '.join(row['order'][:3])}" in lines[1]


def test_generalisation_lines_give_the_loss_between_the_sizes(results: dict) -> None:
    rows = {r["spec"]: r for r in pc.pointcloud_table(results)}
    lines = report.generalisation_lines(results).lines
    assert [line.split(":")[0] for line in lines] == list(lesson.LIVE_SPECS)
    r = rows["max/r-lse"]
    assert f"a loss of {r['mean_1000'] - r['mean_50']:.1%}" in lines[1]
    with pytest.raises(KeyError):
        report.generalisation_lines(results, ["no/such"])


def test_the_lse_offset_is_ln_n(results: dict) -> None:
    text = str(report.lse_offset(results))
    assert f"{math.log(1000):.2f} at n = 1,000" in text and f"{math.log(50 / 1000):+.2f} at n = 50" in text
    smaller = copy.deepcopy(results)
    smaller["budget_parameters"]["points"] = 100
    assert "+0.00 at n = 100" not in str(report.lse_offset(smaller)) and "ln 100" in str(report.lse_offset(smaller))


def test_the_late_change_table_has_a_row_per_column(results: dict) -> None:
    shown = report.late_change_table(results)
    rows = late_change(results, "spec", higher_is_better=True)
    assert shown.column("spec") == [r["label"] for r in rows] and shown.column("verdict") == [r["better"] for r in rows]
    improving = sum(r["better"] == "still improving" for r in rows)
    assert f"{improving} of {len(rows)} columns" in shown.notes[1]


def test_costs_and_sizes_beyond_table2_read_the_cost_rows(results: dict) -> None:
    rows = cost_rows(results)
    costs, beyond = report.cost_table(results), report.beyond_table(results)
    assert costs.column("throughput") == [r["throughput"] for r in rows]
    assert beyond.column("acc_10") == [r["acc_10"] for r in rows]
    fastest, slowest = max(r["throughput"] for r in rows), min(r["throughput"] for r in rows)
    assert f"{fastest / slowest:.1f}× the slowest" in costs.notes[0]
    slower = copy.deepcopy(results)
    for run in slower["runs"]:
        run["train_seconds"] *= 2
    assert report.cost_table(slower).column("seconds")[0] == pytest.approx(2 * costs.column("seconds")[0])


def test_the_twins_pair_each_lse_column_with_its_log_mean_exp(results: dict, found: list) -> None:
    shown = report.twin_table(results)
    assert set(shown.column("pair")) == {"max/r-lme − max/r-lse", "r-lme/r-lme − r-lse/r-lse"}
    assert len(shown.rows) == 2 * len(pc.TABLE_SIZES)
    decided = sum(b != "undecided" for b in shown.column("better"))
    assert shown.notes[0].startswith(f"decided: {decided} of {len(shown.rows)}")
    verdicts = report.twin_verdicts(found)
    keys = {f.key for f in found if f.variant == "lme"} & {f.key for f in found if f.variant == "paper" and f.seeds}
    assert len(verdicts.rows) == len(keys)
    assert all(row["paper"].split(",")[0] in VERDICTS and row["lme"].split(",")[0] in VERDICTS for row in verdicts.rows)


def test_the_claim_table_quotes_the_papers_own_difference(results: dict, found: list) -> None:
    shown = report.claim_table(results, PAPER, found)
    claims = pointcloud_claims(results, PAPER, "paper")
    assert shown.column("paper_effect") == [c.paper_effect for c in claims]
    paper = {f.key: f for f in found if f.variant == "paper"}
    assert [row["paper"].split(",")[0] for row in shown.rows] == [paper[c.key].verdict for c in claims]
    several = [c for c in claims if c.combine == "all" and len(c.parts) > 1]
    lines = report.opposite_lines(results, PAPER, found).lines
    assert len(lines) == 2 * len(several) and all(line.startswith(several[k % len(several)].key)
                                                  for k, line in enumerate(lines))


def test_power_and_protocol_lines_cover_every_family_and_claim(results: dict, found: list) -> None:
    power = report.power_lines(found).lines
    assert len(power) == len({f.family for f in found}) + 1
    assert power[-1].endswith(f"of {sum(bool(f.seeds) for f in found)}")
    protocol = report.protocol_lines(results).lines
    assert [line.split(":")[0] for line in protocol[:len(pc.CLAIM_AXES)]] == list(pc.CLAIM_AXES)
    assert "never 'contradicted'" in protocol[-1]


def test_the_best_and_by_size_tables_read_every_column(results: dict) -> None:
    best = report.best_table(results)
    rows = pc.pointcloud_table(results)
    assert best.column("best_50") == [r["best_50"] for r in rows]
    by_size = report.by_size_table(results)
    curves = pc.accuracy_curves(results)
    assert by_size.column("spec") == [c["spec"] for c in curves]
    assert by_size.rows[0]["10"] == pytest.approx(curves[0]["mean"][0])
    provenance = report.provenance(results)
    assert provenance.column("what")[:2] == ["data", "budget"] and results["seed_scheme"] in provenance.column("value")


def test_the_lesson_counts_parameters_and_describes_the_data() -> None:
    params = lesson.parameter_table()
    assert params.column("spec") == list(pc.COLUMNS)
    assert params.rows[0]["full"] == 1_024 + 2 * 65_792 + 65_792 + 10_280     # the first exercise's count
    ratio = params.rows[1]["medium"] / params.rows[0]["medium"]
    assert f"medium {ratio:.1f}×" in params.notes[0]
    assert lesson.data_table().column("test_points") == [pc.points_per_test_cloud(b) for b in pc.BUDGETS.values()]
    optimiser, sizes = lesson.budget_tables()
    assert optimiser.column("name") == [*pc.BUDGETS, "earlier medium"] and optimiser.column("eps")[-1] == 1e-8
    examples = lesson.example_clouds(points=200)
    assert examples.clouds.shape == (len(pc.SHAPE_NAMES), 200, 3)
    assert "standard deviation 1.000" in str(lesson.standardised_lines(examples))
    with pytest.raises(ValueError, match="no class"):
        examples.of("teapot")


def test_a_live_run_trains_tabulates_and_confuses() -> None:
    clouds = lesson.live_clouds(TINY)
    live = lesson.train_live(clouds, TINY, specs=("max/max", "max/r-lme"))
    assert list(live) == ["max/max", "max/r-lme"]
    run = live["max/max"]
    assert len(run.losses) == TINY.steps and run.seconds > 0 and "3 steps (tiny budget)" in str(run)
    shown = lesson.live_table(live, clouds)
    assert isinstance(shown, Table) and shown.column("spec") == list(live)
    assert shown.column("1000") == [r.accuracy["1000"] for r in live.values()]
    confusions = lesson.live_confusions(run, clouds, small=10)
    assert sorted(confusions.matrices) == [10, TINY.points]
    assert all(np.allclose(m.sum(axis=1), 1) for m in confusions.matrices.values())
    assert isinstance(lesson.confusion_lines(confusions), Lines)
    assert str(lesson.confusion_lines(confusions)).startswith("most frequent confusions at n = 10")


def test_the_report_imports_without_matplotlib() -> None:
    import subprocess
    import sys

    code = ("import importlib, sys\n"
            "for name in ('matplotlib', 'sklearn', 'ipywidgets'):\n"
            "    sys.modules[name] = None\n"
            "for module in ('pointcloud.report', 'pointcloud.lesson'):\n"
            "    importlib.import_module(f'setfuncs.experiments.{module}')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_figures_draw_what_they_are_given(results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = report.plot_against_paper(results, PAPER)
    assert len(fig.axes) == 2 and len(fig.axes[1].get_lines()) >= len(sf.TABLE2_SPECS)
    assert len(report.plot_learning_curves(results).axes) == 2
    examples = lesson.example_clouds(points=100)
    assert len(lesson.plot_examples(examples).axes) == len(pc.SHAPE_NAMES)
    assert len(lesson.plot_preprocessing_demo(examples).axes) == 6
    plt.close("all")
