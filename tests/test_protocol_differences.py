"""The protocol-difference tables of the circle and mixture chapters, and their shared row type."""

from __future__ import annotations

from typing import Any

import pytest

from setfuncs.experiments import circle, mixture
from setfuncs.experiments.circle import differences as circle_differences
from setfuncs.experiments.differences import STATUSES, Difference, claim_gaps, differences_html, gaps, seed_range
from setfuncs.experiments.mixture import differences as mixture_differences
from setfuncs.experiments.results import results_file

CIRCLE_CLAIMS = {"recurrent equivariant layers improve", "recurrent aggregations improve",
                 "equivariant layers grant the larger boost", "recurrent/recurrent is the best row",
                 "the challenge lies in the centre"}
MIXTURE_CLAIMS = {"learnable equivariant layers boost every reduction", "LSE benefits most",
                  "max-type aggregations fall behind"}


@pytest.fixture(scope="module")
def circle_results() -> dict:
    return circle.load_results(results_file("circle-medium.json"))


@pytest.fixture(scope="module")
def mixture_results() -> dict:
    return mixture.load_results(results_file("mixture-medium.json"))


@pytest.fixture(params=["circle", "mixture"])
def experiment(request, circle_results, mixture_results) -> tuple[Any, dict]:
    """(the experiment's differences module, its committed results)."""
    if request.param == "circle":
        return circle_differences, circle_results
    return mixture_differences, mixture_results


def changed(results: dict, value: Any, *keys: str) -> dict:
    """A copy of ``results`` with ``results[keys[0]]...[keys[-1]] = value`` (the runs shared, not copied)."""
    if len(keys) == 1:
        return {**results, keys[0]: value}
    return {**results, keys[0]: changed(results[keys[0]], value, *keys[1:])}


def row(rows: list[Difference], axis: str) -> Difference:
    (found,) = [r for r in rows if r.axis == axis]
    return found


# --- the committed files ---------------------------------------------------------------------------------------

def test_every_row_is_valid_and_every_axis_appears_once(experiment):
    module, results = experiment
    rows = module.protocol_differences(results)
    assert rows and all(isinstance(r, Difference) and r.status in STATUSES for r in rows)
    axes = [r.axis for r in rows]
    assert len(axes) == len(set(axes))
    assert all(r.paper and r.ours for r in rows)


def test_unknown_rows_say_not_stated_and_stated_rows_do_not_claim_it(experiment):
    module, results = experiment
    rows = module.protocol_differences(results)
    assert any(r.status == "unknown" for r in rows) and any(r.status == "same" for r in rows)
    for r in rows:
        if r.status == "unknown":
            assert "not stated" in r.paper, r


def test_kept_rows_give_their_reason(experiment):
    module, results = experiment
    assert all(r.reason for r in module.protocol_differences(results) if r.status in ("kept", "removed"))


def test_every_claim_axis_has_a_row(experiment):
    module, results = experiment
    rows = module.protocol_differences(results)
    for claim, axes in module.CLAIM_AXES.items():
        assert axes and len(axes) == len(set(axes))
        gaps(rows, axes)    # raises for an axis without a row
    assert set(claim_gaps(results, module.protocol_differences, module.CLAIM_AXES)) == set(module.CLAIM_AXES)


def test_claims_are_those_of_the_chapters():
    assert set(circle_differences.CLAIM_AXES) == CIRCLE_CLAIMS
    assert set(mixture_differences.CLAIM_AXES) == MIXTURE_CLAIMS


def test_no_claim_can_be_contradicted_while_the_training_budget_is_unstated(experiment):
    module, results = experiment
    for claim, gap in claim_gaps(results, module.protocol_differences, module.CLAIM_AXES).items():
        assert "steps" in gap.split("; ") and "width" in gap.split("; "), claim


def test_a_claim_has_no_gap_once_every_axis_matches(experiment):
    module, results = experiment
    matched = [Difference(r.axis, r.paper, r.ours, "same") for r in module.protocol_differences(results)]
    assert all(gaps(matched, axes) == "" for axes in module.CLAIM_AXES.values())


def test_training_rows_follow_the_budget(experiment):
    module, results = experiment
    budget = results["budget_parameters"]
    edited = changed(results, {**budget, "steps": 12_345, "hidden": 77, "batch": 9, "lr": 0.0123, "clip": 4.5,
                               "equivariant_layers": 5, "recurrent_steps": 7}, "budget_parameters")
    before, after = module.protocol_differences(results), module.protocol_differences(edited)
    for axis, text in [("steps", "12,345"), ("width", "77"), ("batch", "9"), ("optimiser and learning rate", "0.0123"),
                       ("gradient clipping", "4.5"), ("equivariant layers", "5"), ("recurrent steps", "7")]:
        assert text in row(after, axis).ours and row(after, axis).ours != row(before, axis).ours, axis


def test_head_and_seeds_follow_the_file(experiment):
    module, results = experiment
    edited = changed(changed(results, "a new head", "head", "init"), [3, 4, 5], "seeds")
    rows = module.protocol_differences(edited)
    assert row(rows, "head initialisation").ours == "a new head"
    assert "seeds 3..5" in row(rows, "seeds and runs per configuration").ours


def test_a_missing_header_key_is_named(experiment):
    module, results = experiment
    broken = {k: v for k, v in results.items() if k != "mixture"}
    with pytest.raises(ValueError, match="'mixture'"):
        module.protocol_differences(broken)


# --- circle ----------------------------------------------------------------------------------------------------

def test_circle_runs_row_follows_the_file(circle_results):
    rows = circle_differences.protocol_differences(circle_results)
    runs = circle_results["runs_per_configuration"]
    assert runs != circle_differences.PAPER_RUNS_PER_COMBINATION
    assert row(rows, "seeds and runs per configuration").status == "kept"
    assert f"{runs} runs" in row(rows, "seeds and runs per configuration").ours
    paper_runs = changed(circle_results, circle_differences.PAPER_RUNS_PER_COMBINATION, "runs_per_configuration")
    seeds_row = row(circle_differences.protocol_differences(paper_runs), "seeds and runs per configuration")
    assert seeds_row.status == "same" and f"{circle_differences.PAPER_RUNS_PER_COMBINATION} runs" in seeds_row.ours
    statistic = row(circle_differences.protocol_differences(paper_runs), "statistic")
    assert f"best MSE of the {circle_differences.PAPER_RUNS_PER_ROW} runs" in statistic.ours


def test_circle_data_row_follows_the_mixture(circle_results):
    edited = changed(changed(circle_results, 2.5, "mixture", "mean_std"), [0.3, 0.9], "mixture", "std_range")
    data = row(circle_differences.protocol_differences(edited), "data")
    assert "2.5^2" in data.ours and "U[0.3, 0.9]" in data.ours and data.status == "unknown"
    tests = changed(circle_results, [20, 40], "budget_parameters", "test_population_sizes")
    assert "N = 20, 40" in row(circle_differences.protocol_differences(tests), "population size").ours


def test_circle_configurations_row_names_what_is_missing(circle_results):
    rows = circle_differences.protocol_differences(circle_results)
    assert row(rows, "configurations").status == "same"
    fewer = changed(circle_results, [c for c in circle_results["configurations"] if c != "max/max"], "configurations")
    configurations = row(circle_differences.protocol_differences(fewer), "configurations")
    assert configurations.status == "kept" and "max/max" in configurations.reason


def test_convergence_ratios_show_the_medium_runs_unconverged(circle_results):
    full = circle.load_results(results_file("benchmarks/circle-full-gpu-h200.json"))
    ratios = circle_differences.convergence_ratios(circle_results, full)
    assert set(ratios) == set(full["configurations"])
    assert all(r > 1 for r in ratios.values())      # the longer, wider budget's median MSE is lower
    assert circle_differences.convergence_ratios(full, full) == {spec: 1.0 for spec in ratios}


def test_convergence_ratios_refuse_unrelated_files(circle_results, mixture_results):
    with pytest.raises(ValueError, match="one experiment"):
        circle_differences.convergence_ratios(circle_results, mixture_results)
    with pytest.raises(ValueError, match="share no configuration"):
        circle_differences.convergence_ratios(circle_results, {**circle_results, "runs": []})


def test_seed_range():
    assert seed_range([2, 0, 1]) == "0..2"
    assert seed_range([0, 2]) == "[0, 2]"
    with pytest.raises(ValueError, match="seeds"):
        seed_range([])


# --- mixture ---------------------------------------------------------------------------------------------------

def test_mixture_data_rows_follow_the_file(mixture_results):
    rows = mixture_differences.protocol_differences(mixture_results)
    assert [row(rows, a).status for a in ("mixture components", "weights range", "test population size",
                                          "bootstrap estimates")] == ["same"] * 4
    edited = changed(changed(changed(mixture_results, 3, "mixture", "components"), 0.45, "mixture", "component_std"),
                     "uniform in [0.1, 0.5]", "mixture", "smaller_weight")
    rows = mixture_differences.protocol_differences(edited)
    assert row(rows, "mixture components").status == "kept" and row(rows, "mixture components").ours == "3"
    assert "0.45" in row(rows, "component variance").ours
    weights = row(rows, "weights range")
    assert weights.status == "kept" and "[0.1, 0.9]" in weights.ours
    gap = changed(mixture_results, "uniform in [0.05, 0.4]", "mixture", "smaller_weight")
    weights = row(mixture_differences.protocol_differences(gap), "weights range")
    assert weights.status == "kept" and "[0.05, 0.4] and [0.6, 0.95]" in weights.ours


def test_mixture_metric_rows_follow_the_file(mixture_results):
    edited = changed(changed(changed(mixture_results, 50, "budget_parameters", "bootstraps"), 0.01, "em", "tol"),
                     "mean over the test populations", "metric", "per_run")
    rows = mixture_differences.protocol_differences(edited)
    bootstraps = row(rows, "bootstrap estimates")
    assert bootstraps.status == "kept" and "50 subsamples" in bootstraps.ours
    assert "tol 0.01" in row(rows, "EM").ours
    assert "mean over the test populations" in row(rows, "test populations and their summary").ours
    sizes = changed(mixture_results, 200, "mixture", "test_population_size")
    assert row(mixture_differences.protocol_differences(sizes), "test population size").status == "kept"


def test_weight_interval():
    assert mixture_differences.weight_interval("uniform in [0.05, 0.5]") == (0.05, 0.5)
    for bad in ("uniform", "uniform in [0.05]", 0.5):
        with pytest.raises(ValueError, match="smaller_weight"):
            mixture_differences.weight_interval(bad)


# --- the shared row type ---------------------------------------------------------------------------------------

def test_difference_checks_its_status_and_reason():
    with pytest.raises(ValueError, match="status"):
        Difference("steps", "not stated", "2,000", "different")
    for status in ("kept", "removed"):
        with pytest.raises(ValueError, match="reason"):
            Difference("steps", "20", "10", status)
        assert Difference("steps", "20", "10", status, "why").status == status
    assert Difference("steps", "20", "20", "same").matches
    assert Difference("steps", "20", "20", "removed", "an earlier sweep differed").matches
    assert not Difference("steps", "20", "10", "kept", "why").matches
    assert not Difference("steps", "not stated", "10", "unknown").matches


def test_gaps_name_the_unmatched_axes_in_order():
    rows = [Difference("a", "1", "1", "same"), Difference("b", "not stated", "2", "unknown"),
            Difference("c", "3", "4", "kept", "why"), Difference("d", "5", "5", "removed", "fixed")]
    assert gaps(rows, ("c", "a", "b", "d")) == "c; b"
    assert gaps(rows, ("a", "d")) == ""
    assert gaps(rows, ()) == ""
    with pytest.raises(ValueError, match="'e'"):
        gaps(rows, ("a", "e"))


def test_differences_html_renders_every_row(circle_results):
    rows = circle_differences.protocol_differences(circle_results)
    html = differences_html(rows, caption="circle protocol")
    assert html.count("<tr") == len(rows) + 1 and "circle protocol" in html
    for r in rows:
        assert r.axis in html and r.status in html
    escaped = differences_html([Difference("x", "a < b", "c & d", "kept", "e > f")])
    assert "a &lt; b" in escaped and "c &amp; d" in escaped and "e &gt; f" in escaped
