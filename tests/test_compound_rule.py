"""The compound-claim rule decides what ten of ten seeds show, keeps its error rates (the committed
simulation, current with the code), and the paper's peak statistic is tested exactly."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.findings import ALPHA, Claim, Comparison, judge
from setfuncs.experiments.findings.rates import NOISES, SCENARIOS, rule_digest, simulate
from setfuncs.experiments.paired import joint_sign_flip_test, sign_flip_test
from setfuncs.experiments.peaks import median_peak, median_peaks, swap_test
from setfuncs.experiments.results import PAPER_RESULTS, RESULTS_DIR, results_file

PAPER = RESULTS_DIR / PAPER_RESULTS
ARTEFACT = RESULTS_DIR / "simulations" / "compound-rule.json"
EXPERIMENTS = {"circle": circle, "mixture": mixture, "pointcloud": pointcloud, "attention": attention}


def allowed(rate: float, trials: int) -> float:
    """``rate`` plus three binomial standard errors of ``trials`` draws."""
    return rate + 3 * np.sqrt(rate * (1 - rate) / trials)


def test_the_committed_simulation_is_of_the_rule_as_it_stands() -> None:
    """A change of the rule's code (not of its wording) must be simulated again:
    ``python scripts/simulate_findings.py``."""
    artefact = json.loads(ARTEFACT.read_text())
    assert artefact["rule_digest"] == rule_digest(), "the rule changed: run python scripts/simulate_findings.py"
    assert artefact["seeds"] == 10 and artefact["command"].startswith("python scripts/simulate_findings.py")
    assert {row["family"] for row in artefact["rows"]} == {5, 9}
    assert len(artefact["rows"]) == 2 * len(SCENARIOS) * len(NOISES)


def test_the_committed_simulation_keeps_every_bound_and_reaches_every_power() -> None:
    artefact = json.loads(ARTEFACT.read_text())
    for row in artefact["rows"]:
        for direction, share in row["bounds"].items():
            assert row["rates"][direction] <= allowed(share * row["level"], artefact["reps"]), row
        for direction, power in row["power"].items():
            assert row["rates"][direction] >= power, row


def test_the_paper_families_of_the_committed_files_lie_within_the_simulated_sizes() -> None:
    """The simulation covers families of 5 and 9 claims; every committed file's paper family is as large."""
    for name, experiment in EXPERIMENTS.items():
        found = experiment.EXPERIMENT.findings(experiment.load_results(results_file(f"{name}-medium.json")), PAPER)
        size = sum(f.family == "paper" and f.seeds > 0 for f in found)
        assert 5 <= size <= 9, (name, size)


def test_a_small_simulation_repeats_the_committed_rates() -> None:
    """The global null of a three-part all-claim, 600 draws: the same rule gives rates within Monte Carlo
    error of the artefact's 4,000."""
    artefact = json.loads(ARTEFACT.read_text())
    scenario = SCENARIOS[0]
    row = next(r for r in artefact["rows"] if r["name"] == scenario.name and r["family"] == 5
               and r["noise"] == NOISES[0])
    live = simulate(scenario, NOISES[0], family=5, reps=600, seed=7)
    for direction in ("claim", "opposite"):
        assert abs(live[direction] - row["rates"][direction]) <= 4 * np.sqrt(0.01 / 600) + 1e-9


def _one_sided(part: Comparison, margin: float, sign: int) -> bool:
    """Every seed of ``part`` on the side ``sign`` (+1: the claim's)."""
    return bool(np.all(sign * (part.differences + margin) > 0))


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_no_claim_that_every_seed_settles_is_undecided_on_the_committed_files(name: str) -> None:
    """A claim whose parts lie on one side on every seed, beyond the detectable effect, is decided: an
    all-claim with a part below 0 on all ten seeds (its opposite), an all-claim with every part above 0
    (the claim), and an any-claim the other way round."""
    experiment = EXPERIMENTS[name]
    results = experiment.load_results(results_file(f"{name}-medium.json"))
    found = experiment.EXPERIMENT.findings(results, PAPER)
    checked = 0
    for variant in ("paper", "lme"):
        by_key = {f.key: f for f in found if f.variant in (variant, "both") and f.seeds > 0}
        for claim in experiment.EXPERIMENT.claims(results, PAPER, variant):
            f = by_key[claim.key]
            big = [p for p in claim.parts if len(p.seeds) == 10 and abs(np.mean(p.differences + claim.margin))
                   > f.detectable]
            against = [p for p in big if _one_sided(p, claim.margin, -1)]
            holding = [p for p in big if _one_sided(p, claim.margin, +1)]
            settled = (against if claim.combine == "all" else holding) or \
                (len(holding if claim.combine == "all" else against) == len(claim.parts))
            if settled:
                checked += 1
                assert f.verdict != "undecided", (variant, claim.key, f)
    assert checked


def test_a_part_decided_against_settles_an_all_claim_whatever_the_others() -> None:
    """Eight parts hold strongly, one fails on all ten seeds: the claim is not reproduced, where Bonferroni
    over nine parts could not decide it in a family of six."""
    rng = np.random.default_rng(3)
    seeds = tuple(range(10))
    parts = [Comparison(f"part {i}", seeds, 1.0 + 0.3 * rng.standard_normal(10)) for i in range(8)]
    parts.append(Comparison("failing", seeds, -1.0 - 0.1 * rng.standard_normal(10)))
    others = [Claim(f"other {i}", "d", (Comparison("x", seeds, 0.3 * rng.standard_normal(10)),)) for i in range(5)]
    found = judge([("paper", Claim("best", "d", tuple(parts)))] + [("paper", c) for c in others])
    assert found[0].verdict == "contradicted" and found[0].shown == "failing"


def test_the_joint_test_is_the_sign_flip_test_for_one_part_and_enumerates_the_patterns() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        d = rng.normal(0.3, 1, 8)
        assert joint_sign_flip_test([d]) == sign_flip_test(d)
        assert joint_sign_flip_test([d], "less") == sign_flip_test(d, "less")
    parts = rng.normal(0.2, 1, (3, 6))

    def statistic(x: np.ndarray) -> float:
        return max(row.mean() / (row.std(ddof=1) / np.sqrt(len(row))) for row in x)

    observed = statistic(parts)
    count = sum(statistic(parts * np.array(signs)) >= observed - 1e-9
                for signs in itertools.product((1.0, -1.0), repeat=6))
    assert joint_sign_flip_test(list(parts)) == pytest.approx(count / 2 ** 6)
    with pytest.raises(ValueError, match="alternative must be"):
        joint_sign_flip_test([parts[0]], "two-sided")


def test_the_swap_test_of_a_peak_equals_its_enumeration() -> None:
    """Median best of batches, two settings of four seeds by three matched units: the vectorised test
    against a loop over the 16 swap patterns with :func:`median_peak`."""
    rng = np.random.default_rng(1)
    a, b = rng.exponential(size=(4, 3)), rng.exponential(1.5, size=(4, 3))

    def log_ratio(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.log(median_peaks(y, 5, 200, 0)) - np.log(median_peaks(x, 5, 200, 0))

    values = []
    for signs in itertools.product((True, False), repeat=4):
        keep = np.array(signs)[:, None]
        x, y = np.where(keep, a, b), np.where(keep, b, a)
        values.append(np.log(median_peak(y.T.reshape(-1), 5, 200, 0)) - np.log(median_peak(x.T.reshape(-1), 5, 200, 0)))
    for alternative, extreme in (("greater", np.array(values) >= values[0] - 1e-12),
                                 ("less", np.array(values) <= values[0] + 1e-12)):
        assert swap_test(a, b, log_ratio, alternative) == pytest.approx(extreme.mean())


def test_the_swap_test_keeps_its_level_under_exchangeable_settings() -> None:
    rng = np.random.default_rng(2)
    trials, level = 300, 0.0625                                      # 4/64 at six seeds

    def peak_ratio(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.log(median_peaks(y, 4, 100, 0)) - np.log(median_peaks(x, 4, 100, 0))

    rejections = sum(swap_test(*rng.exponential(size=(2, 6, 3)), peak_ratio) <= level for _ in range(trials))
    assert rejections / trials <= allowed(level, trials)


def test_the_circle_peak_column_tests_the_papers_statistic_on_the_committed_file() -> None:
    """Every circle claim the paper reads from peaks has a tested peak row, and the row of a single
    comparison gives Table 1's own median best ratio as its estimate."""
    results = circle.load_results(results_file("circle-medium.json"))
    found = circle.circle_findings(results, PAPER)
    peaks = circle.peak_agreement(circle.peak_findings(results), found)
    assert [row["key"] for row in peaks] == [f.key for f in found if f.variant in ("paper", "both")]
    table = {row["setting"]: row["median_best_mse"] for row in circle.circle_table(results)}
    first = peaks[0]
    assert first["estimate"] == pytest.approx(np.log(table["plain/plain"] / table["recurrent/plain"]))
    for row in peaks:
        assert 0 < row["p_value"] <= 1 and row["adjusted"] >= row["p_value"]
        assert row["decided"] == (row["adjusted"] <= ALPHA)
        assert row["agree"] == ({"reproduced": "as claimed", "undecided": "undecided"}.get(row["verdict"],
                                                                                        "against the claim")
                                == row["direction"])


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_the_papers_rows_get_the_same_adjusted_p_with_and_without_the_books_claims(name: str) -> None:
    experiment = EXPERIMENTS[name]
    results = experiment.load_results(results_file(f"{name}-medium.json"))
    both = {f.key: f for f in experiment.EXPERIMENT.findings(results, PAPER) if f.family == "paper" and f.seeds}
    alone = {f.key: f for f in experiment.EXPERIMENT.findings(results, PAPER, variants=("paper",)) if f.seeds}
    assert set(both) == set(alone)
    for key, f in alone.items():
        assert (both[key].adjusted, both[key].verdict) == (f.adjusted, f.verdict), key
