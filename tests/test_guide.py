"""The guide "Which aggregation should I use?" (``setfuncs.experiments.guide``, ``book/teaching/choosing.ipynb``):
its rows on small made-up results, and on the committed files that every default it prints is decided the way it
says (or says that no experiment decided it), that log-mean-exp against LSE is the experiments' paired comparisons
and not a count of verdicts, and that every cost names a file that exists."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from setfuncs.experiments import circle, guide, overview, pointcloud
from setfuncs.experiments.attention.findings import lme_against_lse as attention_twins
from setfuncs.experiments.circle.findings import lme_against_lse_by_size
from setfuncs.experiments.findings import Comparison, Finding, compare_pairs
from setfuncs.experiments.mixture.findings import lme_against_lse as mixture_twins
from setfuncs.experiments.results import RESULTS_DIR, results_file
from setfuncs.experiments.sweeps import lme_twin

ROOT = RESULTS_DIR.parent
NOTEBOOK = ROOT / "book" / "teaching" / "choosing.ipynb"


# --- made-up rows ---------------------------------------------------------------------------------------

def _row(d, names=guide.LME) -> dict:
    return compare_pairs({"a vs b": Comparison("a vs b", tuple(range(len(d))), np.asarray(d, float))}, names)[0]


def test_a_pair_favours_the_side_its_estimate_and_test_say() -> None:
    better = guide.from_pair("circle", _row(np.linspace(0.5, 1.5, 10)), "lme vs lse")
    assert better.decided and better.better == better.favours == "log-mean-exp" and better.low > 0
    worse = guide.from_pair("circle", _row(-np.linspace(0.5, 1.5, 10)), "lme vs lse")
    assert worse.better == worse.favours == "LSE" and worse.high < 0
    few = guide.from_pair("circle", _row([1.0, 2.0, 3.0]), "lme vs lse")        # 3 seeds never decide
    assert not few.decided and few.better == guide.UNDECIDED and few.favours == "log-mean-exp"
    assert "undecided" in few.phrase() and "3 seeds" in few.phrase()
    assert better.source.startswith("setfuncs.experiments.circle.findings.lme_against_lse on results/")


def _finding(verdict: str, decided: bool, estimate: float, words: str = "claim", key: str = "max-max-best",
             variant: str = "paper", part: str = "") -> Finding:
    return Finding(words, "m", estimate, estimate - 1, estimate + 1, 10, 0.01, 0.02, 0.5, verdict, variant, decided,
                   key=key, words=words, part=part)


def test_a_finding_is_decided_for_the_claim_its_opposite_or_neither() -> None:
    def of(f: Finding, key: str = "max-max-best") -> guide.Evidence:
        return guide.finding_evidence({"pointcloud": [f]}, "pointcloud", key, f.variant)

    assert of(_finding("reproduced", True, 0.5)).better == "max/max"
    assert of(_finding("not reproduced", True, -0.5)).better == "another column"
    assert of(_finding("not reproduced", False, -0.5)).better == guide.UNDECIDED    # power, not a direction
    lme = _finding("reproduced", True, 0.5, key="max-r-lse-generalises", variant="lme")
    assert of(lme, "max-r-lse-generalises").sides == ("max/r-log-mean-exp", "max/max")
    with pytest.raises(ValueError, match="no finding 'max-max-best' of the variant 'lme'"):
        guide.finding_evidence({"pointcloud": [_finding("reproduced", True, 0.5)]}, "pointcloud", "max-max-best", "lme")


def test_a_part_of_a_claim_is_worded_with_its_claim_and_without_its_second_clause() -> None:
    first = _finding("reproduced", True, 0.1, "final ones win at 100 particles", "learnable-final/100",
                     part="100 particles")
    second = _finding("reproduced", True, 0.1, "... and at 50 particles", "learnable-final/50", part="50 particles")
    row = guide.finding_evidence({"pointcloud": [first, second]}, "pointcloud", "learnable-final/50")
    assert row.compared.startswith("final ones win (at 50 particles) [LSE (paper)]")
    two = _finding("reproduced", True, 0.1, "gains rise; plain ones do not (q-sum, learnable)", "monotonic/q-sum")
    assert guide.finding_evidence({"attention": [two]}, "attention", "monotonic/q-sum").compared.startswith(
        "gains rise (q-sum, learnable)")


def test_a_part_says_its_claim_only_where_its_rows_decided_it() -> None:
    yes = guide.from_pair("circle", _row(np.linspace(0.5, 1.5, 10)), "x")
    open_ = guide.from_pair("circle", _row([1.0, 2.0]), "x")
    no = guide.from_pair("circle", _row(-np.linspace(0.5, 1.5, 10)), "x")
    assert guide.Part("use lme", ((yes, "log-mean-exp"),), "lme or lse").text() == "use lme"
    assert guide.Part("use lme", ((open_, "log-mean-exp"),), "lme or lse").text() == f"lme or lse: {guide.NO_DECISION}"
    assert guide.Part("use lme", ((no, "log-mean-exp"),), "lme or lse").text() == "lme or lse: decided otherwise (LSE)"
    theory = guide.Part("the sum", theory="chapter 2").text()
    assert guide.NO_DECISION in theory and "theory: chapter 2" in theory
    both = guide.Recommendation("task", (guide.Part("use lme", ((yes, "log-mean-exp"),)), guide.Part("sum", theory="t")))
    assert both.default.startswith("use lme; sum (") and both.evidence == (yes,)
    assert both.evidence_text.endswith("theory: t")


def test_the_lme_table_counts_the_paired_comparisons_each_side_won() -> None:
    rows = [guide.from_pair("pointcloud", _row(np.linspace(0.5, 1.5, 10)), "a", at=50),
            guide.from_pair("pointcloud", _row(np.linspace(0.6, 1.6, 10)), "b", at=100),
            guide.from_pair("pointcloud", _row([1.0, 2.0]), "c", at=100)]
    shown = guide.lme_table(rows, ["counted, not tested: x"])
    assert shown.column("lme") == [2] and shown.column("lse") == [0] and shown.column("undecided") == [1]
    assert shown.column("sizes") == ["50, 100"] and shown.notes[-1] == "counted, not tested: x"


PRINTOUT = """command: python benchmarks/training.py
device: Some GPU; torch 9; 100 timed steps

toy FULL: model-steps per second (ms per step of one model), ratio to eager
  max/max      eager     100.0/s ( 10.000 ms) x 1.00 | ensemble    1000.0/s (  1.000 ms) x10.00
  r-max/r-max  eager      25.0/s ( 40.000 ms) x 1.00

projection: not a step
  indented but after a line that ends the section (  9.0/s (  9 ms))
"""


def test_a_benchmark_printout_is_read_with_its_hardware_and_file(tmp_path: Path) -> None:
    path = tmp_path / "bench.txt"
    path.write_text(PRINTOUT, encoding="utf-8")
    times = guide.read_step_times(path)
    assert [(t.configuration, t.measure, t.value) for t in times] == [
        ("max/max", "eager step (ms)", 10.0), ("max/max", "ensemble step (ms)", 1.0), ("r-max/r-max", "eager step (ms)", 40.0)]
    assert {(t.task, t.budget, t.hardware, t.source, t.weights) for t in times} == {("toy", "full", "Some GPU", str(path), None)}
    shown = guide.cost_table(times, "steps")
    assert shown.column("spec") == ["max/max", "r-max/r-max"]
    assert [key for key, _, _ in shown.columns][3:] == ["Some GPU|eager step (ms)", "Some GPU|ensemble step (ms)", "Some GPU|x"]
    assert shown.column("Some GPU|x") == [1.0, 4.0] and shown.column("Some GPU|ensemble step (ms)") == [1.0, None]
    assert shown.notes == (f"Some GPU: {path} (Some GPU)",)
    path.write_text(PRINTOUT.replace("device:", "machine:"), encoding="utf-8")
    with pytest.raises(ValueError, match="no 'device:' line"):
        guide.read_step_times(path)
    path.write_text("device: CPU\nnothing timed\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no '<mode> <rate>/s"):
        guide.read_step_times(path)


# --- made-up results: each experiment's new twin comparison on a copy of the committed sweep -----------

@pytest.fixture(scope="module")
def runs() -> dict:
    return overview.committed_results()


def test_the_circle_by_size_finds_a_twin_with_half_the_error_better_at_every_size(runs: dict) -> None:
    made = copy.deepcopy(runs["circle"])
    by = {(r["spec"], r["seed"]): r for r in made["runs"]}
    for (spec, seed), run in by.items():
        if lme_twin(spec) != spec and (lme_twin(spec), seed) in by:
            twin = by[(lme_twin(spec), seed)]
            run.update(error=None, collapsed=False)
            twin.update(error=None, collapsed=False, mse_by_population_size={
                n: v / 2 for n, v in run["mse_by_population_size"].items()})
    rows = lme_against_lse_by_size(made)
    assert [r["n"] for r in rows] == sorted(int(n) for n in made["runs"][0]["mse_by_population_size"])
    assert all(r["better"] == "log-mean-exp" and math.isclose(r["estimate"], math.log(2)) for r in rows)


def test_the_mixture_twins_count_a_lower_metric_as_a_win(runs: dict) -> None:
    made = copy.deepcopy(runs["mixture"])
    by = {(r["spec"], r["seed"]): r for r in made["runs"]}
    for (spec, seed), run in by.items():
        if lme_twin(spec) != spec and (lme_twin(spec), seed) in by:
            run.update(error=None, collapsed=False, metric=0.0)
            by[(lme_twin(spec), seed)].update(error=None, collapsed=False, metric=-1.0)
    rows = mixture_twins(made)
    assert rows[-1]["spec"] == "all" and len(rows) == 21
    assert all(r["estimate"] == 1.0 and r["better"] == "log-mean-exp" for r in rows)


def test_the_attention_twins_compare_the_elbo_of_every_finished_run(runs: dict) -> None:
    made = copy.deepcopy(runs["attention"])
    by = {(r["spec"], r["seed"]): r for r in made["runs"]}
    for (spec, seed), run in by.items():
        if spec in ("lse", "r-lse"):
            twin = by[(lme_twin(spec), seed)]
            for n, values in twin["evaluation"].items():
                if n in run["evaluation"]:
                    values["elbo"] = run["evaluation"][n]["elbo"] + 2.0
    rows = attention_twins(made)
    sizes = sorted(int(n) for n in made["budget_parameters"]["eval_sizes"])
    assert [(r["spec"], r["n"]) for r in rows] == [(s, n) for s in ("lse", "r-lse") for n in sizes]
    assert all(math.isclose(r["estimate"], 2.0) and r["seeds"] == made["runs_per_configuration"] for r in rows)


# --- the committed files --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def evidence(runs: dict) -> dict:
    found = overview.committed_findings(runs, results_file("paper-results.json"))
    lme, sizes = guide.lme_evidence(runs), guide.size_evidence(runs, found)
    return {"found": found, "lme": lme, "sizes": sizes,
            "recommendations": guide.recommendations(lme, sizes, found, guide.training_sizes(runs))}


def test_every_row_decided_one_of_its_sides(evidence: dict) -> None:
    rows = evidence["lme"] + evidence["sizes"] + [r for rec in evidence["recommendations"] for r in rec.evidence]
    assert all(r.better in (*r.sides, guide.UNDECIDED) and r.seeds > 0 for r in rows)
    assert all(r.favours == r.better for r in rows if r.decided)


def test_every_default_is_decided_the_way_it_says_or_says_nothing_decided_it(evidence: dict) -> None:
    recommendations = evidence["recommendations"]
    assert len(recommendations) == len({r.task for r in recommendations}) >= 5
    for recommendation in recommendations:
        for part in recommendation.parts:
            assert part.claim in recommendation.default
            if not part.support:
                assert part.theory and guide.NO_DECISION in part.text() and "theory" in part.text()
                continue
            assert part.holds, f"{recommendation.task}: {part.claim!r} is not what the committed files decided"
            for row, side in part.support:
                if side == guide.UNDECIDED:
                    assert not row.decided and (guide.NO_DECISION in part.claim or "decided for no other" in part.claim)
                else:
                    assert row.decided and row.favours == side
                    assert row.low > 0 if side == row.sides[0] else row.high < 0   # the interval excludes 0
    counting = next(r for r in recommendations if r.task.startswith("counting"))
    assert not counting.evidence and guide.NO_DECISION in counting.default


def test_the_point_clouds_lme_rows_are_the_chapters_paired_comparisons_not_verdict_counts(runs: dict, evidence: dict) -> None:
    mine = [r for r in evidence["lme"] if r.experiment == "pointcloud"]
    theirs = pointcloud.lme_against_lse(runs["pointcloud"])
    assert len(mine) == len(theirs) > 0
    for row, chapter in zip(mine, theirs):
        assert (row.at, row.seeds, row.estimate, row.low, row.high, row.adjusted, row.better) == (
            chapter["n"], chapter["seeds"], chapter["estimate"], chapter["low"], chapter["high"], chapter["adjusted"],
            chapter["better"])
        assert row.verdict == "" and "pointcloud.findings.lme_against_lse" in row.source
    shown = guide.lme_table(evidence["lme"])
    at = shown.column("experiment").index(overview.NAMES["pointcloud"])
    assert shown.column("lme")[at] == sum(r["better"] == "log-mean-exp" for r in theirs)
    assert shown.column("comparisons")[at] == len(theirs)
    circle_rows = [r for r in evidence["lme"] if r.experiment == "circle"]
    assert [(r.estimate, r.better) for r in circle_rows] == [(r["estimate"], r["better"])
                                                             for r in circle.lme_against_lse(runs["circle"])]


def test_every_decided_comparison_of_log_mean_exp_with_lse_went_to_log_mean_exp(evidence: dict) -> None:
    """What the guide's takeaways say, in words without numbers: in every experiment, at the training size and
    away from it, no comparison was decided for LSE, and some were decided for log-mean-exp."""
    rows = [r for r in evidence["lme"] + evidence["sizes"] if set(r.sides) == set(guide.LME)]
    assert not [r.phrase() for r in rows if r.better == "LSE"]
    assert {r.experiment for r in rows if r.better == "log-mean-exp"} == set(overview.NAMES)
    train = guide.training_sizes(overview.committed_results())
    assert any(r.decided and r.at != train[r.experiment] for r in evidence["sizes"] if set(r.sides) == set(guide.LME))


def test_the_takeaways_on_learnable_aggregations_hold(evidence: dict) -> None:
    found = evidence["found"]
    assert guide.finding_evidence(found, "circle", "recurrent-equivariant-improve").better == "recurrent equivariant layers"
    assert guide.finding_evidence(found, "pointcloud", "learnable-final/50").better == "max/max"


def test_every_cost_names_an_existing_file_and_its_hardware(runs: dict) -> None:
    steps, per_run = guide.step_times(), guide.run_costs(runs)
    for cost in steps + per_run:
        assert (ROOT / cost.source).is_file(), cost.source
        assert cost.hardware and cost.value > 0 and cost.weights > 0
    assert {c.source for c in steps} == {f"results/{name}" for name in guide.STEP_FILES}
    assert any("CPU" in c.hardware for c in steps) and any("NVIDIA" in c.hardware for c in steps)
    assert {c.runs for c in per_run} <= set(range(1, 11)) and all(c.runs for c in per_run)


def test_recurrent_steps_cost_several_times_a_plain_one_and_query_ones_about_the_same(runs: dict) -> None:
    """The takeaways' words on cost: per step (the benchmarks) a recurrent configuration costs at least twice
    its task's plain one on every hardware, per run more; a query aggregation costs within a quarter of it."""
    for costs, least in ((guide.step_times(("eager",)), 2.0), (guide.run_costs(runs), 1.0)):
        first = {}
        for c in costs:
            plain = first.setdefault((c.task, c.budget, c.hardware, c.measure), c)
            ratio = c.value / plain.value
            if c.configuration.startswith("r-"):
                assert ratio > least and c.weights > plain.weights, (c, plain)
            elif "q-" in c.configuration:
                assert 0.8 < ratio < 1.25, (c, plain)


def test_the_page_prints_the_guides_rows_not_counts_of_verdicts() -> None:
    source = "\n".join("".join(cell["source"]) for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
                       if cell["cell_type"] == "code")
    for call in ("guide.lme_table(", "guide.evidence_table(sizes", "guide.cost_table(guide.step_times()",
                 "guide.cost_table(guide.run_costs(", "guide.recommendation_table("):
        assert call in source
    assert "with log-mean-exp in its place: " not in source and "by_variant" not in source
