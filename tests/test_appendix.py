"""The appendix "How this book tests a claim": the sign-flip distribution it draws is the one the test
counts, the simulated null rates it shows are read with their bounds and the simulation's error, and
the families' power rows are the report's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from setfuncs.experiments import appendix, circle
from setfuncs.experiments.paired import sign_flip_test
from setfuncs.experiments.report import family_power
from setfuncs.experiments.results import results_file


@pytest.mark.parametrize("seed", range(5))
def test_the_share_of_sign_patterns_is_the_tests_p_value(seed: int) -> None:
    d = np.random.default_rng(seed).normal(0.3, 1.0, 8)
    means = appendix.sign_flip_means(d)
    assert means.shape == (2 ** 8,) and means[0] == pytest.approx(d.mean())
    assert np.mean(means >= means[0] - 1e-12) == pytest.approx(sign_flip_test(d))
    assert means.sum() == pytest.approx(0.0, abs=1e-9)          # every pattern beside its mirror


@pytest.mark.parametrize("d", [[], np.zeros(21), np.zeros((2, 3))])
def test_too_few_or_too_many_differences_are_refused(d) -> None:
    with pytest.raises(ValueError, match="1 to 20 paired differences"):
        appendix.sign_flip_means(d)


def test_the_committed_null_rates_keep_their_bounds_within_the_simulations_error() -> None:
    rates = appendix.null_rates(results_file("simulations/compound-rule.json"))
    assert rates and all(r.within for r in rates)
    assert all(r.claim_bound > r.opposite_bound > 0 for r in rates)
    assert appendix.null_rates_sentence(rates).startswith(f"{len(rates)} of {len(rates)} ")


def test_a_rate_above_its_bound_and_the_error_is_not_within() -> None:
    rate = appendix.NullRate("all-claim", "normal", 5, 0.02, 0.0, 0.008, 0.002, 4000)
    assert not rate.within
    assert appendix.null_rates_sentence([rate]).startswith("0 of 1 ")


def test_a_file_without_null_scenarios_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "rates.json"
    path.write_text(json.dumps({"command": "python scripts/simulate_findings.py", "reps": 10, "rows": []}))
    with pytest.raises(ValueError, match=f"{path}.*simulate_findings"):
        appendix.null_rates(path)


def test_power_rows_are_the_reports_family_power_by_experiment() -> None:
    results = circle.EXPERIMENT.load_results(results_file("circle-medium.json"))
    found = circle.EXPERIMENT.findings(results, results_file("paper-results.json"))
    rows = appendix.power_rows({"circle": found})
    assert [(r["experiment"], r["family"], r["claims"]) for r in rows] == [
        ("circle", p.family, p.claims) for p in family_power(found)]
