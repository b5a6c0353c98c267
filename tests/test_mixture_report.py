"""Chapter 9's report (``setfuncs.experiments.mixture.report`` and ``lesson``): each function's rows are
what the results file says, a changed input changes them, and bad input is named."""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from setfuncs.experiments import mixture
from setfuncs.experiments.convergence import late_change
from setfuncs.experiments.findings import VERDICTS
from setfuncs.experiments.mixture import lesson, report
from setfuncs.experiments.mixture.sensitivity import RESULTS_NAME, load_sensitivity
from setfuncs.experiments.mixture.violins import violin_table
from setfuncs.experiments.results import results_file
from setfuncs.experiments.views import Lines, Table

PAPER = results_file("paper-results.json")
TINY = mixture.Budget("tiny", steps=4, batch=4, lr=1e-3, clip=1.0, hidden=8, equivariant_layers=1, recurrent_steps=2,
                      test_size=4, test_population_sizes=(10, 100), bootstraps=4)


@pytest.fixture(scope="module")
def results() -> dict:
    return mixture.load_results(results_file(report.SWEEP))


@pytest.fixture(scope="module")
def found_by(results: dict) -> dict:
    return report.findings_by_summary(results, PAPER)


@pytest.fixture(scope="module")
def spread() -> dict:
    return load_sensitivity(results_file(RESULTS_NAME))


def _collapse(results: dict, spec: str) -> dict:
    """``results`` with every run of ``spec`` collapsed."""
    changed = copy.deepcopy(results)
    for run in changed["runs"]:
        if run["spec"] == spec:
            run["collapsed"] = True
    return changed


def test_the_lead_counts_the_tested_verdicts_and_reads_the_run(results: dict, found_by: dict) -> None:
    found = found_by["median"]
    text = report.lead(results, found)
    tested = Counter(f.verdict for f in found if f.family == "paper" and f.seeds)
    assert text.startswith(f"Of the {sum(tested.values())} tested findings")
    for verdict, n in tested.items():
        assert f"{n} {'is' if n == 1 else 'are'} {verdict}" in text
    lme = sum("lme" in s for s in results["configurations"])
    assert f"{len(results['configurations']) - lme} configurations of the paper's grid and {lme} with" in text
    assert f"{results['runs_per_configuration']} seeds" in text and f"{results['budget_parameters']['steps']:,} steps" in text
    assert f"σ = {results['mixture']['component_std']}" in text
    assert str(report.result_box(results, PAPER)).splitlines()[1] == text
    flipped = [replace(f, verdict="reproduced") if f.family == "paper" and f.seeds else f for f in found]
    assert f"{sum(tested.values())} are reproduced" in report.lead(results, flipped)
    with pytest.raises(ValueError, match="no tested finding"):
        report.lead(results, [f for f in found if f.family != "paper"])


def test_the_format_formats_a_share_of_wins() -> None:
    assert f"{-0.6:{report.FORMAT}}" == "-0.60" and f"{0.8333:{report.FORMAT}}" == "+0.83"


def test_the_sweep_lines_count_the_runs_and_the_violins(results: dict) -> None:
    lines = report.sweep_lines(results).lines
    collapsed = sum(bool(r["collapsed"]) for r in results["runs"])
    assert lines[0].startswith(f"{len(results['runs'])} runs: {len(results['configurations'])} configurations")
    assert f"{collapsed} collapsed" in lines[0]
    rows = violin_table(results)
    drawn = [r for r in rows if r["median_peak"] is not None]
    assert lines[1].startswith(f"{sum(r['median_peak'] < 0 for r in drawn)} of the {len(drawn)} violins drawn")
    assert ("lse (equivariant)" in lines[1]) == any(r["median_peak"] is None for r in rows)
    more = report.sweep_lines(_collapse(results, "mean/mean")).lines[0]
    assert f"{collapsed + sum(r['spec'] == 'mean/mean' and not r['collapsed'] for r in results['runs'])} collapsed" in more


def test_the_violin_tables_are_the_violins_numbers(results: dict) -> None:
    summary, details = report.violin_summary(results), report.violin_details(results)
    rows = violin_table(results)
    assert summary.column("label") == [r["label"] for r in rows] == details.column("label")
    assert summary.column("collapsed") == [r["collapsed"] for r in rows]
    assert details.column("best_spec") == [r["best_spec"] for r in rows]
    assert len(summary.columns) < len(details.columns)
    with pytest.raises(KeyError, match="no column"):
        summary.column("best_spec")
    every = _collapse(_collapse(results, "mean/mean"), "mean/max")
    mean_row = next(r for r in report.violin_summary(every).rows if r["by"] == "equivariant" and r["label"] == "mean")
    assert mean_row["collapsed"] > next(r for r in summary.rows if r["by"] == "equivariant" and r["label"] == "mean")["collapsed"]


def test_the_collapse_lines_count_the_lse_families(results: dict) -> None:
    lines = report.collapse_lines(results).lines
    assert [line.split(" ")[0] for line in lines] == ["lse", "r-lse", "lme", "r-lme"]
    lse = [r for r in results["runs"] if r["equivariant"] == "lse" and r["setting"].startswith("plain")]
    assert f"{sum(r['collapsed'] for r in lse)} of {len(lse)} runs collapsed" in lines[0]
    assert ("no run trained" in lines[0]) == all(r["collapsed"] for r in lse)


def test_the_accuracy_table_sets_em_beside_the_runs(results: dict) -> None:
    shown = report.accuracy_table(results)
    em = float(shown.caption.rsplit(": ", 1)[1].rstrip(")"))
    assert 0 < em < 0.2
    assert all(0 <= share <= 1 for share in shown.column("better"))
    assert "lse" not in shown.column("group")                 # every plain-LSE equivariant run collapsed


def test_the_summary_table_pairs_each_claim_under_both_summaries(found_by: dict) -> None:
    shown = report.summary_table(found_by)
    median, mean = found_by["median"], found_by["mean"]
    assert shown.column("median_verdict") == [f.verdict for f in median]
    by_key = {(f.key, f.variant): f for f in mean}
    assert shown.column("mean_verdict") == [by_key[f.key, f.variant].verdict for f in median]
    differ = sum(f.verdict != by_key[f.key, f.variant].verdict for f in median)
    assert shown.notes[0] == f"verdicts that differ between the summaries: {differ} of {len(median)}"
    assert shown.column("agree").count("no") == differ
    same = report.summary_table({"median": median, "mean": median})
    assert same.notes[0].endswith(f": 0 of {len(median)}") and same.notes[2].endswith(": 0")


def test_readings_group_every_finding_by_its_verdict(found_by: dict) -> None:
    found = found_by["median"]
    lines = report.readings(found).lines
    heads = [line for line in lines if not line.startswith("  ")]
    counts = Counter(f.verdict for f in found)
    assert sorted(heads) == sorted(f"{v} ({n} of {len(found)}):" for v, n in counts.items())
    assert len(lines) == len(found) + len(counts)
    assert all(h.split(" (")[0] in VERDICTS for h in heads)


def test_power_lines_say_what_each_family_can_decide(found_by: dict) -> None:
    lines = report.power_lines(found_by).lines
    assert lines[0].startswith("the paper's claims: ") and "seeds" in lines[0]
    assert [line.split(":")[0] for line in lines[-2:]] == ["median", "mean"]
    few = {s: [replace(f, seeds=3) for f in rows] for s, rows in found_by.items()}
    assert "no outcome can decide a claim" in report.power_lines(few).lines[0]


def test_the_twins_pair_each_paper_finding_with_its_log_mean_exp(found_by: dict) -> None:
    found = found_by["median"]
    shown = report.twin_verdicts(found)
    keys = {f.key for f in found if f.variant == "lme"} & {f.key for f in found if f.variant == "paper" and f.seeds}
    assert len(shown.rows) == len(keys)
    assert all(row["paper"].split(",")[0] in VERDICTS and row["lme"].split(",")[0] in VERDICTS for row in shown.rows)
    assert "boost: lse" in shown.column("claim")


def test_protocol_lines_and_provenance_read_the_file(results: dict) -> None:
    lines = report.protocol_lines(results).lines
    assert any("learnable equivariant layers boost every reduction" in line for line in lines)
    assert all("cannot be called contradicted" in line or "may be called" in line for line in lines)
    shown = report.provenance(results)
    assert shown.column("what")[0] == "budget" and f"{results['budget_parameters']['steps']:,} steps" in shown.rows[0]["value"]
    assert f"{len(results['runs'])} runs" in shown.rows[-1]["value"]


def test_the_size_lines_name_every_setting(results: dict) -> None:
    lines = report.by_size_lines(results).lines
    rows = mixture.by_population_size(results, variant="paper")
    assert [line.split(":")[0] for line in lines[1:-1]] == [r["setting"] for r in rows]
    assert lines[-1].startswith("inside the training range")


def test_the_sigma_probe_tables_and_its_rerun(results: dict, spread: dict) -> None:
    shown = report.sigma_table(spread)
    assert len(shown.rows) == len(spread["sigmas"]) * len(spread["configurations"])
    lines = report.sigma_lines(spread).lines
    assert "no row can be decided" in lines[-1]           # three seeds cannot decide a row
    rerun = report.rerun_lines(spread, results).lines[0]
    shared = [r for r in spread["runs"] if r["sigma"] == mixture.COMPONENT_STD and r["error"] is None]
    assert f"of the probe's {len(shared)} runs" in rerun
    moved = copy.deepcopy(results)
    run = next(r for r in moved["runs"] if (r["spec"], r["seed"]) == (shared[0]["spec"], shared[0]["seed"]))
    run["metric"] += 0.5
    assert "differ by up to 0.5" in report.rerun_lines(spread, moved).lines[0]


def test_the_late_change_and_cost_tables_have_a_row_per_setting(results: dict) -> None:
    shown = report.late_change_table(results)
    rows = late_change(results, "setting", higher_is_better=False)
    assert shown.column("setting") == [r["label"] for r in rows] and shown.column("verdict") == [r["better"] for r in rows]
    improving = sum(r["better"] == "still improving" for r in rows)
    assert f"{improving} of {len(rows)} settings" in shown.notes[0]
    costs = report.cost_table(results)
    plain = [r["train_seconds"] for r in results["runs"] if r["setting"] == "plain/plain"]
    assert costs.rows[0]["train"] == pytest.approx(np.median(plain) / 60)
    slower = copy.deepcopy(results)
    for r in slower["runs"]:
        r["train_seconds"] *= 2
    assert report.cost_table(slower).rows[0]["train"] == pytest.approx(2 * costs.rows[0]["train"])


def test_the_lesson_describes_the_task() -> None:
    constant = lesson.constant_beta(1001)
    a, b = mixture.marginal_beta()
    assert (constant.a, constant.b) == pytest.approx((a, b)) and constant.mean == pytest.approx(a / (a + b))
    assert constant.nll < 0 and "expected loss" in str(constant)
    facts = str(lesson.population_facts())
    assert f"sigma = {mixture.COMPONENT_STD}" in facts and "20..150" in facts
    shown = lesson.first_layer_table(TINY, sizes=(20,))
    shifts = dict(zip(shown.column("aggregation"), shown.column("shift")))
    assert shifts["lse"] < shifts["max"] <= 0 and shifts["mean"] == pytest.approx(0, abs=1e-6)
    assert lesson.live_budget() == mixture.QUICK


def test_a_live_run_trains_and_tabulates_itself() -> None:
    runs = [lesson.train_live(setting, "mean", "mean", TINY) for setting in ("plain/plain", "recurrent/plain")]
    assert [r.spec for r in runs] == ["mean/mean", "r-mean/mean"] and len(runs[0].losses) == TINY.steps
    assert f"{TINY.steps:,} steps" in str(runs[0]) and runs[0].seconds > 0
    curves = lesson.estimator_curves(runs, sizes=(5, 100, 200))
    shown = lesson.curve_table(curves)
    assert shown.column("estimator") == ["mean/mean", "EM", "r-mean/mean", "EM"]
    assert "n = 200" in shown.columns[3][1] and 0 < curves.truth < 0.5
    pair = lesson.train_lse_pair(TINY, populations=8)
    table = lesson.lse_lme_table(pair)
    assert table.column("spec") == ["lse/mean", "lme/mean"] and "8 test populations" in table.caption
    assert pair[0].before.size == 8 * 100 * TINY.hidden


def test_the_figures_draw_what_they_are_given(results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assert len(report.plot_figure4b(results).axes) == 2
    assert len(report.plot_learning_curves(results).axes) == 2
    assert len(lesson.plot_populations(lesson.example_populations(3)).axes) == 3
    assert len(lesson.plot_size_distribution().axes) == 1
    plt.close("all")


def test_the_report_imports_without_matplotlib() -> None:
    import subprocess
    import sys

    code = ("import importlib, sys\n"
            "for name in ('matplotlib', 'sklearn', 'ipywidgets'):\n"
            "    sys.modules[name] = None\n"
            "for module in ('mixture.report', 'mixture.lesson'):\n"
            "    importlib.import_module(f'setfuncs.experiments.{module}')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_views_render(results: dict) -> None:
    assert isinstance(report.sweep_lines(results), Lines) and isinstance(report.violin_summary(results), Table)
    assert "<table" in report.violin_summary(results)._repr_html_()
