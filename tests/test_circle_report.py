"""Chapter 8's report (``setfuncs.experiments.circle.report`` and ``lesson``): each function's rows are
what the results file says, a changed input changes them, and bad input is named."""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from setfuncs.experiments import circle
from setfuncs.experiments.circle import lesson, report
from setfuncs.experiments.circle.medians import best_configuration, lowest_counts, median_grids
from setfuncs.experiments.convergence import late_change
from setfuncs.experiments.findings import VERDICTS
from setfuncs.experiments.report import family_power
from setfuncs.experiments.reruns import rerun_agreement
from setfuncs.experiments.results import results_file
from setfuncs.experiments.sweeps import SETTINGS
from setfuncs.experiments.views import Lines, Table
from setfuncs.model import parameter_count

PAPER = results_file("paper-results.json")
TINY = circle.Budget("tiny", steps=3, batch=4, lr=1e-3, clip=1.0, hidden=8, equivariant_layers=1, recurrent_steps=2,
                     test_size=16, test_population_sizes=(20,))


@pytest.fixture(scope="module")
def results() -> dict:
    return circle.load_results(results_file(report.SWEEP))


@pytest.fixture(scope="module")
def found(results: dict) -> list:
    return circle.circle_findings(results, PAPER)


@pytest.fixture(scope="module")
def peaks(results: dict, found: list) -> list:
    return report.peak_rows(results, found)


def _scaled(results: dict, setting: str, factor: float) -> dict:
    """A copy of ``results`` with every MSE of ``setting``'s runs times ``factor``."""
    changed = copy.deepcopy(results)
    for run in changed["runs"]:
        if run["setting"] == setting:
            for key in ("mse", "radius_mse", "center_mse"):
                run[key] *= factor
    return changed


def test_the_lead_counts_the_verdicts_and_the_peak_agreement(results: dict, found: list, peaks: list) -> None:
    text = report.lead(results, found)
    tested = Counter(f.verdict for f in found if f.family == "paper" and f.seeds)
    assert text.startswith(f"Of the {sum(tested.values())} tested findings")
    for verdict, n in tested.items():
        assert f"{n} {'is' if n == 1 else 'are'} {verdict}" in text
    assert f"{results['runs_per_configuration']} seeds each, {results['budget_parameters']['steps']:,} steps" in text
    assert text.endswith(f"for {sum(r['agree'] for r in peaks)} of the {len(peaks)} claims.")
    assert str(report.result_box(results, PAPER)).splitlines()[1] == text
    flipped = [replace(f, verdict="reproduced") if f.family == "paper" and f.seeds else f for f in found]
    assert f"{sum(tested.values())} are reproduced" in report.lead(results, flipped)
    with pytest.raises(ValueError, match="no tested finding"):
        report.lead(results, [f for f in found if f.family != "paper"])


def test_the_format_formats_a_log_ratio() -> None:
    assert f"{0.0511:{report.FORMAT}}" == "+0.051" and f"{-0.0142:{report.FORMAT}}" == "-0.014"


def test_table1_is_the_circle_table_as_ratios(results: dict) -> None:
    shown = report.table1(results, PAPER)
    rows = circle.circle_table(results, paper=PAPER)
    assert shown.column("setting") == list(SETTINGS) and shown.column("best_spec") == [r["best_spec"] for r in rows]
    assert shown.column("best_mse_ratio") == [r["best_mse_ratio"] for r in rows] and shown.rows[0]["best_mse_ratio"] == 1
    assert shown.column("paper_median_best_mse_ratio") == [r["paper_median_best_mse_ratio"] for r in rows]
    lme = circle.circle_table(results, paper=PAPER, variant="lme")
    both = report.table1(results, PAPER, lme=True)
    assert both.column("lme_median") == [r["median_best_mse_ratio"] for r in lme]
    with pytest.raises(KeyError, match="no column"):
        both.column("best_spec")
    better = report.table1(_scaled(results, "recurrent/recurrent", 0.5), PAPER)
    assert better.rows[-1]["best_mse_ratio"] == pytest.approx(shown.rows[-1]["best_mse_ratio"] / 2)
    assert report.table1_full(results, PAPER, "lme").column("median_best_mse") == [r["median_best_mse"] for r in lme]


def test_table1_lines_judge_the_goal_and_the_scale(results: dict) -> None:
    rows = {r["setting"]: r for r in circle.circle_table(results, paper=PAPER)}
    ours, theirs = rows["recurrent/recurrent"]["best_mse_ratio"], rows["recurrent/recurrent"]["paper_best_mse_ratio"]
    text = str(report.table1_lines(results, PAPER))
    assert f"ours {ours:.2f}, the paper's {theirs:.2f}" in text
    assert ("is met" in text) == (ours <= theirs)
    assert "is met" in str(report.table1_lines(_scaled(results, "recurrent/recurrent", 0.01), PAPER))
    scale = [r["paper_best_mse"] / r["best_mse"] for r in rows.values()]
    assert f"{min(scale):.0f} to {max(scale):.0f} times ours" in text


def test_the_rankings_sort_the_settings_by_each_statistic(results: dict) -> None:
    lines = report.rankings(results, PAPER).lines
    rows = circle.circle_table(results, paper=PAPER)
    assert len(lines) == 8
    assert lines[0] == "best MSE, ours: " + " < ".join(r["setting"] for r in sorted(rows, key=lambda r: r["best_mse"]))
    assert lines[-1].startswith("radius MSE, the paper's: ")
    assert all(sorted(line.split(": ")[1].split(" < ")) == sorted(SETTINGS) for line in lines)


def test_the_lowest_lines_count_every_row_and_column(results: dict) -> None:
    final, equivariant = lowest_counts(median_grids(circle.mse_by_spec(results)))
    lines = report.lowest_lines(results).lines
    assert lines[0].endswith(", ".join(f"{a} {n}" for a, n in final.items()))
    assert lines[1].endswith(", ".join(f"{a} {n}" for a, n in equivariant.items()))
    assert f"each of the {sum(final.values())} rows" in lines[0] and sum(final.values()) == 3 * len(SETTINGS)


def test_the_peak_summary_names_every_disagreement(results: dict, found: list, peaks: list) -> None:
    text = " ".join(report.peak_summary(results, found).lines)
    assert f"for {sum(r['agree'] for r in peaks)} of the {len(peaks)} claims" in text
    assert [r["key"] for r in peaks] == [r["key"] for r in circle.peak_findings(results)]
    for row in peaks:
        said = f"{row['words']} (the typical run: {row['verdict']}; the median best: {row['direction']})"
        assert (said in text) == (not row["agree"])


def test_log_mean_exp_against_lse(results: dict) -> None:
    shown = report.lme_table(results)
    rows = [r for r in circle.lme_against_lse(results) if r["setting"] != "all"]
    assert shown.column("spec") == [r["spec"] for r in rows] and len(rows) == len(circle.lme_configurations())
    mse_of = circle.mse_by_spec(results)
    first = shown.rows[0]
    assert first["ratio"] == pytest.approx(np.median(mse_of[first["twin"]]) / np.median(mse_of[first["spec"]]))
    lines = report.lme_lines(results).lines
    sides = Counter(r["better"] for r in rows)
    assert lines[0].startswith(f"log-mean-exp has the lower MSE in {sides['log-mean-exp']} of the {len(rows)} pairs")
    groups = [int(line.split("(")[1].split(" pairs")[0]) for line in lines if line.startswith("LSE ")]
    assert sum(groups) == len(rows)


def test_the_by_size_lines_read_the_best_runs(results: dict) -> None:
    curves = circle.by_population_size(results)
    lines = lesson.by_size_lines(results).lines
    assert len(lines) == 2 + len(curves) + 3 and lines[-1].startswith("sizes at which a setting with recurrent")
    for curve, line in zip(curves, lines[2:]):
        worst = int(np.argmax(curve["mse"]))
        ratio = curve["mse"][worst] / curve["mse"][curve["sizes"].index(20)]
        assert line == (f"{curve['setting']} ({curve['spec']}): largest MSE at N={curve['sizes'][worst]}, "
                        f"{ratio:.2f} times its MSE at N=20")


def test_the_methods_tables_read_their_files(results: dict, found: list) -> None:
    assert report.provenance(results).rows[-1]["value"].endswith(f"{len(results['runs'])} runs")
    protocol = circle.protocol_differences(results)
    lines = report.protocol_lines(results).lines
    assert sum(int(part.split()[-1]) for part in lines[0].split(": ")[1].split(", ")) == len(protocol)
    assert all(claim in " ".join(lines) for claim in circle.CLAIM_AXES)
    full = circle.load_results(results_file(report.FULL_SWEEP))
    ratios = circle.convergence_ratios(results, full)
    assert len(report.convergence_lines(results, full).lines) == 2 + len(ratios) + 1
    probe = circle.load_results(results_file(report.PROBE))
    late = report.late_change_table(probe)
    rows = late_change(probe, "spec", higher_is_better=False)
    assert late.column("verdict") == [r["better"] for r in rows]
    assert f"{sum(r['better'] == 'still improving' for r in rows)} of {len(rows)} configurations" in late.notes[1]
    assert report.rerun_table(probe, results).column("identical") == [
        row["identical"] for row in rerun_agreement(probe, results, "mse").values()]
    detail = report.finding_lines(found).lines
    assert len(detail) == len({f.key for f in found}) + len(found) + 1
    counts = Counter(f.verdict for f in found)
    assert detail[-1] == "verdicts over the table: " + ", ".join(f"{v} {counts[v]}" for v in VERDICTS)
    assert len(report.power_lines(found).lines) == len(family_power(found))


def test_the_cost_table_takes_medians_of_the_runs(results: dict) -> None:
    shown = report.cost_table(results)
    plain = [r["train_seconds"] for r in results["runs"] if r["setting"] == "plain/plain"]
    assert shown.rows[0]["median"] == pytest.approx(np.median(plain)) and sum(shown.column("runs")) == len(results["runs"])
    slower = copy.deepcopy(results)
    for run in slower["runs"]:
        run["train_seconds"] *= 2
    assert report.cost_table(slower).rows[0]["median"] == pytest.approx(2 * shown.rows[0]["median"])


def test_the_lesson_describes_the_task_and_the_models() -> None:
    facts = lesson.task_facts(200)
    x, y, _ = circle.test_set(200, 20, 0)
    assert f"{float(((x.mean(1) - y[:, :2]) ** 2).sum(1).mean()):.3f} on average" in facts.lines[2]
    assert lesson.budget_table().column("name") == list(circle.BUDGETS)
    counts = lesson.parameter_table()
    assert counts.rows[0]["medium"] == parameter_count(circle.make_model("plain/plain", "max", "lse", circle.MEDIUM))
    assert counts.column("quick") == sorted(counts.column("quick"))      # recurrent parts add parameters
    assert "populations/s" in str(lesson.solver_check(50))


def test_a_live_run_trains_and_tabulates_itself(results: dict) -> None:
    run = lesson.train_best(results, "plain/plain", TINY)
    assert run.spec == circle.spec_of(*best_configuration(circle.mse_by_spec(results), "plain/plain"))
    assert len(run.losses) == TINY.steps and run.seconds > 0
    shown = lesson.live_table([run], results)
    assert isinstance(shown, Table) and shown.rows[0]["mse"] == pytest.approx(run.errors()["mse"])
    assert shown.rows[0]["sweep"] == pytest.approx(np.median(circle.mse_by_spec(results)[run.spec]))
    twins = lesson.twin_table(results, budget=TINY)
    assert twins.column("spec") == ["lse/max", "lme/max"] and "setting" not in [k for k, _, _ in twins.columns]


def test_the_report_imports_without_matplotlib() -> None:
    import subprocess
    import sys

    code = ("import importlib, sys\n"
            "for name in ('matplotlib', 'ipywidgets', 'miniball'):\n"
            "    sys.modules[name] = None\n"
            "for module in ('circle.report', 'circle.lesson'):\n"
            "    importlib.import_module(f'setfuncs.experiments.{module}')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_figures_draw_what_they_are_given(results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = report.plot_table1(results, PAPER)
    assert len(fig.axes) == 2 and all(len(ax.patches) == 3 * len(SETTINGS) for ax in fig.axes)
    heights = [p.get_height() for p in fig.axes[0].patches[:len(SETTINGS)]]
    assert heights == pytest.approx(report.table1(results, PAPER).column("best_mse_ratio"))
    assert len(report.plot_grids(results).axes) == len(SETTINGS) + 1          # the panels and the colour bar
    assert len(lesson.plot_by_size(results).axes[0].get_lines()) == len(SETTINGS) + 2
    assert len(report.plot_learning_curves(circle.load_results(results_file(report.PROBE))).axes) == 2
    assert len(lesson.plot_populations(4).axes) == 4
    plt.close("all")


def test_lines_render_as_html_and_text() -> None:
    shown = Lines(("a < b", "c"))
    assert str(shown) == "a < b\nc" and shown._repr_html_() == "<p>a &lt; b</p><p>c</p>"
