"""Findings: paired tests, one Holm correction per table and the verdict words; each experiment's
findings on runs whose answer is known (made here), so that a verdict that could be wrong is checked
both ways. (Error rates and power under simulation: test_findings_calibration.py.)"""

from __future__ import annotations

import re
from math import comb

import numpy as np
import pytest

import setfuncs as sf
from setfuncs.experiments.attention import IMAGE, attention_findings, variant_specs
from setfuncs.experiments.attention.findings import attention_claims
from setfuncs.experiments.circle import circle_findings, lme_against_lse
from setfuncs.experiments.differences import UNRECORDED
from setfuncs.experiments.findings import (ALPHA, CLAIM_SHARE, Claim, Comparison, Finding, compare_pairs,
                                           detectable_phrase, detectable_text, findings_html, format_findings,
                                           bound_text, interval_text, judge, matched, opposite_floor, opposite_needs,
                                           seeds_needed, select)
from setfuncs.experiments.mixture import mixture_findings
from setfuncs.experiments.mixture.findings import mixture_claims
from setfuncs.experiments.paired import holm, joint_sign_flip_test, sign_flip_test, smallest_p_value
from setfuncs.experiments.pointcloud import pointcloud_findings, variant_columns
from setfuncs.experiments.pointcloud.findings import pointcloud_claims
from setfuncs.experiments.pointcloud import lme_against_lse as pointcloud_lme_against_lse
from setfuncs.experiments.results import PAPER_RESULTS, RESULTS_DIR
from setfuncs.experiments.sweeps import SETTINGS, all_configurations, lme_twin, spec_of

PAPER = RESULTS_DIR / PAPER_RESULTS
SEEDS = tuple(range(10))


def part(d, label: str = "a vs b") -> Comparison:
    return Comparison(label, tuple(range(len(d))), np.asarray(d, dtype=float))


def shifted(mean: float, n: int = 10, seed: int = 0) -> np.ndarray:
    return mean + np.random.default_rng(seed).standard_normal(n)


# --- the machinery ---------------------------------------------------------------------------------------

def test_the_lme_twin_replaces_every_lse_and_nothing_else() -> None:
    assert [lme_twin(s) for s in ("lse", "max/r-lse", "r-lse/r-lse", "q-lse/lse", "lme")] == [
        "lme", "max/r-lme", "r-lme/r-lme", "q-lme/lme", "lme"]
    assert [lme_twin(s) for s in ("max/r-sum", "mean", "pmean(2)/max", "image")] == [
        "max/r-sum", "mean", "pmean(2)/max", "image"]
    assert variant_specs("lme") == [lme_twin(s) for s in variant_specs("paper")]
    assert variant_columns("lme") == [lme_twin(s) for s in variant_columns("paper")]
    with pytest.raises(ValueError, match="variant must be one of"):
        variant_columns("centred")


def test_a_comparison_holds_one_finite_difference_per_seed() -> None:
    with pytest.raises(ValueError, match="one finite number per seed"):
        Comparison("x", (0, 1), np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="one finite number per seed"):
        Comparison("x", (0, 1, 2), np.array([1.0, 2.0]))
    paired = Comparison.paired("x", {0: 3.0, 1: 5.0, 2: np.nan, 4: 1.0}, {0: 1.0, 1: 1.0, 2: 0.0, 3: 9.0})
    assert paired.seeds == (0, 1) and paired.differences.tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match="share no seed"):
        Comparison.paired("x", {0: 1.0}, {1: 1.0})
    assert paired.minus(part([1.0, 1.0]), "y").differences.tolist() == [1.0, 3.0]


def test_matched_scores_pair_configurations_seed_by_seed() -> None:
    metric = {("a", 0): 1.0, ("b", 0): np.e, ("c", 0): 2.0, ("d", 0): 1.0,
              ("a", 1): np.inf, ("b", 1): np.inf, ("c", 1): 1.0, ("d", 1): 4.0,
              ("a", 2): 1.0}                                             # seed 2 lacks b, c, d: left out
    logs = matched("x", metric, [("a", "b"), ("c", "d")], "log ratio")
    assert logs.seeds == (0, 1) and logs.differences == pytest.approx([(1 - np.log(2)) / 2, np.log(4) / 2])
    wins = matched("x", metric, [("a", "b"), ("c", "d")], "wins")
    assert wins.differences.tolist() == [0.0, 0.5]                        # two failed runs tie
    accuracy = {("a", 0): 0.9, ("b", 0): 0.7, ("a", 1): np.nan, ("b", 1): 0.5}
    assert matched("x", accuracy, [("a", "b")], "difference").differences == pytest.approx([0.2])
    with pytest.raises(ValueError, match="median log ratio is inf"):
        matched("x", {("a", 0): 1.0, ("b", 0): np.inf}, [("a", "b")], "log ratio")
    with pytest.raises(ValueError, match="score must be one of"):
        matched("x", metric, [("a", "b")], "ratio")
    with pytest.raises(ValueError, match="no seed has runs"):
        matched("x", {("a", 0): 1.0, ("b", 1): 1.0}, [("a", "b")], "wins")


def test_verdicts_follow_the_decided_direction_and_the_protocol() -> None:
    strong, weak = shifted(3.0), shifted(0.0, seed=1)
    found = judge([("paper", Claim("up", "d", (part(strong),))),
                   ("paper", Claim("down, matched protocol", "d", (part(-strong),))),
                   ("paper", Claim("down, surrogate", "d", (part(-strong),), gap="data")),
                   ("paper", Claim("flat, paper's effect large", "d", (part(0.01 * weak),), paper_effect=1.0)),
                   ("paper", Claim("flat", "d", (part(weak),))),
                   ("paper", Claim("three seeds", "d", (part(strong[:3]),)))])
    assert [f.verdict for f in found] == ["reproduced", "contradicted", "not reproduced", "not reproduced",
                                          "undecided", "undecided"]
    assert [f.decided for f in found] == [True, True, True, False, False, False]
    assert "differs from the paper's in: data" in found[2].note and "power against the paper's effect" in found[3].note
    assert found[5].detectable == np.inf and found[3].detectable < 1.0
    assert found[0].low < found[0].estimate < found[0].high and found[0].estimate == pytest.approx(strong.mean())


def test_one_holm_correction_per_family_over_its_distinct_claims() -> None:
    d = shifted(0.7, seed=2)
    claims = [Claim(f"claim {i}", "d", (part(d * (1 + i / 10)),)) for i in range(4)]
    same_in_both = Claim("shared", "d", (part(d),))
    found = judge([("paper", c) for c in claims] + [("paper", same_in_both), ("lme", same_in_both)])
    assert len(found) == 5 and found[-1].variant == "both"                  # one hypothesis, one row
    assert {f.family for f in found} == {"paper"}                          # a shared claim is the paper's
    raw = [min(1.0, sign_flip_test(c.parts[0].differences, "greater") / CLAIM_SHARE,
               sign_flip_test(c.parts[0].differences, "less") / (1 - CLAIM_SHARE)) for c in claims + [same_in_both]]
    assert [f.p_value for f in found] == pytest.approx(raw)
    assert [f.adjusted for f in found] == pytest.approx(holm(raw).tolist())
    assert all(f.decided == (f.adjusted <= ALPHA) for f in found)


def test_the_books_own_claims_never_move_the_papers() -> None:
    """The paper's rows get the same adjusted p-values with and without log-mean-exp claims in the call;
    the log-mean-exp claims are corrected among themselves."""
    paper = [Claim(f"claim {i}", "d", (part(shifted(0.6 + i / 5, seed=i)),)) for i in range(4)]
    own = [Claim(f"own {i}", "d", (part(shifted(0.9, seed=10 + i)),)) for i in range(7)]
    alone = judge([("paper", c) for c in paper])
    together = judge([("paper", c) for c in paper] + [("lme", c) for c in own])
    assert [f.adjusted for f in together[:4]] == [f.adjusted for f in alone]
    assert [f.family for f in together] == ["paper"] * 4 + ["book"] * 7
    book = [f.p_value for f in together[4:]]
    assert [f.adjusted for f in together[4:]] == pytest.approx(holm(book).tolist())


def test_every_part_or_any_part() -> None:
    """An all-claim's opposite and an any-claim's direction are the joint sign-flip test of the parts,
    which is no larger than Bonferroni's k times the smallest part's p-value and no smaller than that
    smallest p-value; the other direction is the largest of the parts' (intersection-union)."""
    good, bad = part(shifted(3.0)), part(shifted(-3.0, seed=3))
    every = judge([("paper", Claim("all", "d", (good, bad)))])[0]
    assert every.verdict == "not reproduced" or every.verdict == "contradicted"
    joint = joint_sign_flip_test([good.differences, bad.differences], "less")
    assert every.p_value == pytest.approx(min(1.0, joint / (1 - CLAIM_SHARE)))
    assert sign_flip_test(bad.differences, "less") <= joint <= 2 * sign_flip_test(bad.differences, "less")
    some = judge([("paper", Claim("any", "d", (good, bad), combine="any"))])[0]
    assert some.verdict == "reproduced" and some.measure.endswith("(shown: a vs b)") and some.shown == "a vs b"
    on_one = judge([("paper", Claim("one", "d", (good,)))])[0]
    assert on_one.shown == "" and on_one.measure == "d"                  # one comparison: nothing to name
    joint = joint_sign_flip_test([good.differences, bad.differences], "greater")
    assert some.p_value == pytest.approx(joint / CLAIM_SHARE)
    on_par = judge([("paper", Claim("on par", "d", (part(shifted(-0.5) * 0.1),), margin=1.0))])[0]
    assert on_par.verdict == "reproduced"                                 # 0.5 below, within the margin of 1
    with pytest.raises(ValueError, match="combine must be"):
        Claim("c", "m", (good,), combine="most")


def test_the_findings_table_shows_each_claim_once_with_its_tests() -> None:
    d = shifted(2.0)
    found = judge([("paper", Claim("claim one", "T(a) - T(b)", (part(d),), note="T: a statistic")),
                   ("paper", Claim("claim two", "x", (part(-d),))),
                   ("lme", Claim("claim one", "T(a) - T(c)", (part(d + 1),), note="T: a statistic"))])
    html = findings_html(found)
    assert html.count("claim one") == 1 and '<td rowspan="2">claim one</td>' in html
    rows = html.split("<tr>")[2:]                     # after the header: claim one twice, then claim two
    assert "LSE (paper)" in rows[0] and "log-mean-exp" in rows[1] and "claim two" in rows[2]
    for header in ("seeds", "Holm p", "detectable (80 %)", "95% interval", "verdict"):
        assert header in html
    text = format_findings(found)
    assert "Holm" in text and "10 seeds" in text and text.count("->") == 3


def test_a_comparison_of_one_seed_is_shown_without_an_interval_never_as_nan() -> None:
    """Student's interval needs two paired differences: a claim left with one seed (the others'
    runs failed) has none, and every text that shows intervals says so instead of printing NaN."""
    found = judge([("paper", Claim("one seed left", "d", (part([2.5]),))),
                   ("paper", Claim("ten seeds", "d", (part(shifted(2.0)),)))])
    assert found[0].seeds == 1 and np.isnan(found[0].low) and np.isnan(found[0].high)
    for text in (findings_html(found), format_findings(found)):
        assert "none from one seed" in text and "nan" not in text.lower()
    assert interval_text(found[1].low, found[1].high) == f"{found[1].low:.3g} to {found[1].high:.3g}"
    assert interval_text(-0.0123, 0.5, "+.1%") == "-1.2% to +50.0%"
    row = compare_pairs({"one": part([1.0])}, ("first", "second"))[0]
    assert interval_text(row["low"], row["high"]) == "none from one seed"


@pytest.mark.parametrize("spec", [".2f", "+.2f", "+.1%", ".1%", ">9.2f"])
@pytest.mark.parametrize("value", [-0.17, -0.0049, -0.003, -0.00096, -1e-9, 0.0, 1e-9, 0.00096, 0.003, 0.0049, 0.17])
def test_a_bound_that_is_not_zero_never_reads_as_zero(value: float, spec: str) -> None:
    """An interval such as -0.17 to -0.003 printed with two decimals read "-0.17 to -0.00", which
    cannot say whether it holds 0. A fixed-point bound that rounds to zero shows its first significant
    digit, with its sign; one that does not round to zero, and 0 itself, read as the format gives them."""
    text = bound_text(value, spec)
    shown = float(text.strip().rstrip("%")) / (100 if "%" in spec else 1)
    if value == 0:
        assert text == f"{value:{spec}}"
    elif float(f"{value:{spec}}".strip().rstrip("%")) != 0:
        assert text == f"{value:{spec}}"
    else:
        assert shown != 0 and np.sign(shown) == np.sign(value) and abs(shown - value) <= abs(value) / 2
    if spec.startswith(">9"):
        assert len(text) >= 9 and text == text.rjust(9)
    if value > -0.17:                               # interval_text shows its bounds so
        assert interval_text(-0.17, value, spec) == f"{bound_text(-0.17, spec)} to {text}"


def test_an_interval_that_just_excludes_zero_says_so() -> None:
    assert interval_text(-0.17, -0.003, "+.2f") == "-0.17 to -0.003"
    assert interval_text(-0.0123, -0.0004, "+.1%") == "-1.2% to -0.04%"
    assert interval_text(0.0, 0.5, "+.2f") == "+0.00 to +0.50"
    assert interval_text(-0.0004, 0.003, ".3g") == "-0.0004 to 0.003"
    assert bound_text(-0.0, "+.2f") == "+0.00" and bound_text(-0.0, ".1%") == "0.0%"      # no "-0"


def test_differences_that_do_not_vary_give_no_interval_and_no_detectable_effect_never_a_zero_width() -> None:
    """Accuracies on one test set are multiples of 1/size, so a few seeds can give the same difference
    each: Student's interval then has width 0 and the detectable effect is 0 (both scale with the
    differences' standard deviation), which would read as certainty; the tables say there is no
    spread to scale them by instead. Equal differences at 0 stay undecided (the test sees no effect)."""
    found = judge([("paper", Claim("equal at two seeds", "d", (part([0.078, 0.078]),))),
                   ("paper", Claim("equal at zero", "d", (part([0.0] * 10),))),
                   ("paper", Claim("ten seeds", "d", (part(shifted(2.0)),)))])
    assert found[0].low == found[0].high and found[1].low == found[1].high and found[2].low < found[2].high
    assert found[1].detectable == 0 and found[1].verdict == "undecided"
    for f in found[:2]:
        assert interval_text(f.low, f.high) == "none: the differences are all equal"
    assert detectable_text(found[1]) == "unknown: the differences do not vary"
    assert detectable_text(found[0]) == "none: too few seeds"
    html, text = findings_html(found), format_findings(found)
    for shown in (html, text):
        assert shown.count("none: the differences are all equal") == 2
        assert "unknown: the differences do not vary" in shown and "0 to 0" not in shown
    assert interval_text(found[2].low, found[2].high) == f"{found[2].low:.3g} to {found[2].high:.3g}"
    # nor do they give the seeds power against the paper's effect: undecided, not "not reproduced"
    flat = judge([("paper", Claim("flat", "d", (part([0.0] * 10),), paper_effect=0.05))])[0]
    assert flat.verdict == "undecided" and "power" not in flat.note
    assert [detectable_phrase(f, ".1%") for f in found] == [
        "these seeds could detect no effect of any size",
        "how large an effect these seeds could detect is unknown: the differences do not vary",
        f"these seeds could detect no effect smaller than {found[2].detectable:.1%}"]
    counted = Finding("weights", "ratio", 5.3, np.nan, np.nan, 0, np.nan, np.nan, np.nan, "not reproduced", "paper",
                      note="counted, no uncertainty", comparative=False)
    with pytest.raises(ValueError, match="'weights' is counted, not tested"):
        detectable_phrase(counted)


def test_a_median_interval_whose_ends_tie_is_shown_as_a_tie_not_as_all_equal() -> None:
    """The sign test's order-statistic interval has no width wherever the differences at its ends tie,
    which needs only the middle seeds to be equal (eight of ten here, with one seed on each side): the
    differences are not all equal, and the interval keeps its level, so it is shown, as a tie."""
    tied = np.array([-0.1] + [0.0] * 8 + [0.1])
    found = judge([("paper", Claim("level", "d", (part(tied),), comparative=False)),
                   ("paper", Claim("comparison", "d", (part(tied),)))])
    level, comparison = found
    assert level.test == "sign" and comparison.test == "sign-flip"
    assert level.low == level.high == 0 and comparison.low < comparison.high
    assert interval_text(level.low, level.high, test=level.test) == "0 to 0 (the differences tie)"
    for shown in (findings_html(found), format_findings(found)):
        assert "0 to 0 (the differences tie)" in shown and "all equal" not in shown
    # Student's interval of no width comes only from differences that are all equal, and is not shown
    assert interval_text(0.078, 0.078) == "none: the differences are all equal"
    with pytest.raises(ValueError, match="test must be one of"):
        interval_text(0.0, 1.0, test="t")


def test_seeds_too_few_to_detect_anything_and_a_counted_claim_are_said_in_words_never_inf_or_nan() -> None:
    """Three seeds give a one-sided p of 1/8 at best, above the level: no effect of any size can be
    detected (infinite), and the tables say so; a counted claim (no seeds, no test) has no p-value
    and no detectable effect, and says that too."""
    found = judge([("paper", Claim("three seeds", "d", (part(shifted(5.0, n=3)),))),
                   ("paper", Claim("ten seeds", "d", (part(shifted(2.0)),)))])
    assert np.isinf(found[0].detectable) and np.isfinite(found[1].detectable)
    counted = Finding("weights", "ratio", 5.3, np.nan, np.nan, 0, np.nan, np.nan, np.nan, "not reproduced", "paper",
                      note="counted, no uncertainty", comparative=False)
    assert detectable_text(found[0]) == "none: too few seeds" and detectable_text(counted) is None
    assert detectable_text(found[1]) == f"{found[1].detectable:.2g}"
    html, text = findings_html([*found, counted]), format_findings([*found, counted])
    assert "none: too few seeds" in html and "none: too few seeds" in text and f"{found[1].detectable:.2g}" in html
    assert "p = n/a, Holm n/a, detectable n/a (counted)" in text
    for shown in (html, text):
        assert not re.search(r"\b(inf|nan)\b", shown.lower()), shown


@pytest.mark.parametrize("parts", [1, 3, 9])
@pytest.mark.parametrize("claims", [1, 5, 12, 20])
def test_opposite_needs_is_the_fewest_decided_claims_after_which_holm_decides_the_opposite(parts: int, claims: int) -> None:
    """Holm's correction itself, on the most favourable p-values these seeds allow (the opposite at its
    floor, the claims before it at theirs, the rest at 1): the opposite is decided with b claims before
    it exactly when b >= opposite_needs, and with none when it says None."""
    for test in ("sign-flip", "sign"):
        for seeds in range(3, 15):
            floor = smallest_p_value(seeds)
            opposite = min(1.0, (parts if test == "sign" else 1) * floor / (1 - CLAIM_SHARE))
            assert opposite_floor(parts, seeds, test) == opposite
            decided_with = [b for b in range(claims)
                            if holm([floor / CLAIM_SHARE] * b + [opposite] + [1.0] * (claims - 1 - b))[b] <= ALPHA]
            needs = opposite_needs(parts, seeds, claims, test)
            assert needs == (min(decided_with) if decided_with else None), (parts, claims, seeds, test)
            assert decided_with == list(range(needs, claims)) if decided_with else True
    # at ten seeds the joint test decides a nine-part claim's opposite first in a family of six; Bonferroni
    # over the parts (the sign test's) only after the five other claims
    assert opposite_needs(9, 10, 6) == 0 and opposite_needs(9, 10, 6, "sign") == 5
    with pytest.raises(ValueError, match="need parts >= 1 and claims >= 1"):
        opposite_needs(0, 10, 12)


@pytest.mark.parametrize("parts", [1, 3, 9])
@pytest.mark.parametrize("claims", [1, 5, 9])
@pytest.mark.parametrize("test", ["sign-flip", "sign"])
@pytest.mark.parametrize("opposite", [False, True])
def test_seeds_needed_is_the_fewest_seeds_whose_best_outcome_passes_holms_first_step(parts: int, claims: int, test: str,
                                                                                    opposite: bool) -> None:
    share = (1 - CLAIM_SHARE) if opposite else CLAIM_SHARE
    factor = parts if test == "sign" else 1

    def passes(n: int) -> bool:
        return factor * smallest_p_value(n) / share <= ALPHA / claims

    n = seeds_needed(parts, claims, test, opposite)
    assert passes(n) and (n == 1 or not passes(n - 1))
    with pytest.raises(ValueError, match="need parts >= 1 and claims >= 1"):
        opposite_needs(0, 10, 12)


def test_compare_pairs_decides_a_direction_after_holm() -> None:
    rows = compare_pairs({"up": part(shifted(3.0)), "down": part(shifted(-3.0)), "flat": part(shifted(0.0))},
                         ("first", "second"))
    assert [r["better"] for r in rows] == ["first", "second", "undecided"]
    assert all(set(r) == {"label", "seeds", "estimate", "low", "high", "p_value", "adjusted", "better", "test"} for r in rows)
    assert [r["adjusted"] for r in rows] == pytest.approx(holm([r["p_value"] for r in rows]).tolist())


# --- circle ------------------------------------------------------------------------------------------------

def circle_runs(mse_of_setting: dict[str, float], seeds: int = 10, noise: float = 0.05) -> dict:
    rng = np.random.default_rng(0)
    runs = []
    for setting, e, f in all_configurations():
        for seed in range(seeds):
            mse = mse_of_setting[setting] * float(np.exp(noise * rng.standard_normal()))
            runs.append({"spec": spec_of(setting, e, f), "setting": setting, "equivariant": e, "final": f,
                         "seed": seed, "mse": mse, "center_mse": 0.95 * mse, "radius_mse": 0.05 * mse,
                         "collapsed": False, "error": None})
    return {"budget_parameters": {"test_size": 200}, "runs": runs}


def test_circle_findings_reproduce_and_oppose_with_the_runs() -> None:
    paper_like = dict(zip(SETTINGS, (1.6, 1.3, 0.9, 0.6)))
    found = circle_findings(circle_runs(paper_like), PAPER)
    # every claim pools configurations with LSE or log-mean-exp, so each variant is its own test
    assert [f.verdict for f in found] == ["reproduced"] * 10 and [f.variant for f in found] == ["paper"] * 5 + ["lme"] * 5
    assert "the paper's median best MSE" in found[0].claim and found[0].seeds == 10
    assert found[0].estimate == pytest.approx(np.log(1.6 / 0.9), abs=0.05)
    opposite = circle_findings(circle_runs(dict(zip(SETTINGS, (0.6, 0.9, 1.3, 1.6)))), variants=("lme",))
    # decided against the claim, on runs that record no protocol: not reproduced, never contradicted
    assert [f.verdict for f in opposite[:4]] == ["not reproduced"] * 4 and all(f.decided for f in opposite[:4])
    assert all(UNRECORDED in f.note for f in opposite[:4])
    few = circle_findings(circle_runs(paper_like, seeds=4), PAPER)
    assert {f.verdict for f in few} == {"undecided"} and all(f.detectable == np.inf for f in few)


def test_circle_findings_count_a_collapsed_run_as_the_worst() -> None:
    results = circle_runs(dict(zip(SETTINGS, (1.6, 1.3, 0.9, 0.6))))
    for run in results["runs"]:
        if run["setting"] == "recurrent/plain" and run["seed"] == 0 and run["equivariant"] == "mean":
            run.update(mse=1e-6, collapsed=True)             # a tiny MSE that must not count as good
    found = circle_findings(results)
    assert found[0].verdict == "reproduced" and found[0].estimate < np.log(1.6 / 0.9) + 0.05


def scaled_lme(results: dict, factor: float) -> dict:
    """The runs with every log-mean-exp configuration's MSE multiplied by ``factor``."""
    for run in results["runs"]:
        if "lme" in (run["equivariant"], run["final"]):
            run["mse"] *= factor
    return results


@pytest.mark.parametrize("factor, better", [(0.5, "log-mean-exp"), (2.0, "LSE"), (1.0, "undecided")])
def test_lme_against_lse_pairs_every_lse_configuration_with_its_twin(factor: float, better: str) -> None:
    rows = lme_against_lse(scaled_lme(circle_runs(dict.fromkeys(SETTINGS, 1.0), noise=0.1), factor))
    pairs, pooled = rows[:-1], rows[-1]
    assert len(pairs) == 20 and pooled["setting"] == "all"
    assert all(row["twin"] == row["spec"].replace("lse", "lme") and "lse" in row["spec"] for row in pairs)
    assert pooled["better"] == better and pooled["low"] <= pooled["estimate"] <= pooled["high"]
    if factor != 1.0:
        assert all(row["better"] == better for row in pairs)
        assert pooled["estimate"] == pytest.approx(-np.log(factor), abs=0.1)


def test_lme_against_lse_refuses_runs_without_twins() -> None:
    results = circle_runs(dict.fromkeys(SETTINGS, 1.0))
    with pytest.raises(ValueError, match="twin"):
        lme_against_lse({"runs": [r for r in results["runs"] if "lme" not in r["spec"]]})


# --- mixture -----------------------------------------------------------------------------------------------

def mixture_runs(recurrent_gain: float, max_penalty: float, seeds: int = 10) -> dict:
    rng = np.random.default_rng(0)
    runs = []
    for setting, e, f in all_configurations():
        for seed in range(seeds):
            value = -0.2 - (recurrent_gain if setting.startswith("recurrent") else 0.0)
            value -= 0.2 * recurrent_gain * (e in ("lse", "lme") and setting.startswith("recurrent"))
            value += max_penalty * ((e == "max") + (f == "max")) + 0.01 * rng.standard_normal()
            runs.append({"spec": spec_of(setting, e, f), "setting": setting, "equivariant": e, "final": f,
                         "seed": seed, "metric": value, "collapsed": False, "error": None})
    return {"runs": runs}


def test_mixture_findings_follow_the_runs() -> None:
    found = mixture_findings(mixture_runs(recurrent_gain=0.3, max_penalty=0.5), PAPER)
    verdicts = {f.claim: f.verdict for f in found}
    assert [f.verdict for f in found[:3]] == ["reproduced"] * 3                     # a boost for every reduction
    assert all(v == "reproduced" for c, v in verdicts.items() if "behind" in c and "EM" not in c)
    found = mixture_findings(mixture_runs(recurrent_gain=-0.3, max_penalty=-0.5), variants=("lme",))
    assert [f.verdict for f in found[:3]] == ["not reproduced"] * 3 and all(f.decided for f in found[:3])
    twin = mixture_findings(mixture_runs(recurrent_gain=0.3, max_penalty=0.5), PAPER, variants=("lme",))
    paper = mixture_findings(mixture_runs(recurrent_gain=0.3, max_penalty=0.5), PAPER, variants=("paper",))
    assert [f.claim for f in twin] == [f.claim for f in paper] and "(lse)" in twin[2].claim   # the paper's words
    assert "r-lme against lme" in twin[2].measure


def peak_share(results: dict, equivariant: str, seed: int) -> float:
    """The share of all batches of 5 of the paper grid's runs with ``equivariant`` or its recurrent form in
    their equivariant layers at ``seed`` whose best run is worse than EM (metric > 0), counted by hand."""
    values = [run["metric"] for run in results["runs"] if run["seed"] == seed and run["equivariant"] == equivariant
              and run["final"] in ("mean", "max", "lse")]
    return comb(sum(v > 0 for v in values), 5) / comb(len(values), 5)


def test_mixture_peaks_worse_than_em_are_counted_over_every_batch_against_the_alternatives() -> None:
    results = mixture_runs(recurrent_gain=0.3, max_penalty=0.5)
    claim = next(c for c in mixture_claims(results, variant="paper") if "worse than EM" in c.claim)
    # per seed: of all batches of 5 of the 12 max-equivariant configurations, the share whose best is above 0,
    # minus the same share of the mean's and of the LSE's 12
    for part, other in zip(claim.parts, ("mean", "lse")):
        expected = [peak_share(results, "max", seed) - peak_share(results, other, seed) for seed in range(10)]
        assert part.differences == pytest.approx(expected) and other in part.label
    assert claim.comparative and claim.combine == "all"


def test_mixture_peaks_leave_out_a_seed_where_a_group_lacks_a_run() -> None:
    """Shares over groups of unequal size are not exchangeable under the null: a seed where one
    max-equivariant configuration has no finished run is left out of the comparison."""
    results = mixture_runs(recurrent_gain=0.3, max_penalty=0.5)
    results["runs"] = [run for run in results["runs"] if not (run["spec"] == "max/max" and run["seed"] == 4)]
    claim = next(c for c in mixture_claims(results, variant="paper") if "worse than EM" in c.claim)
    assert all(part.seeds == tuple(s for s in range(10) if s != 4) for part in claim.parts)


def test_a_small_share_of_peaks_worse_than_em_reproduces_nothing_unless_max_has_more_of_them() -> None:
    """A share is never negative, so a sign-flip test of the share alone decides it whenever every seed
    has one batch worse than EM. Tested against the alternatives, the same share in every group decides
    nothing, and only max's share above both others' reproduces the claim."""
    def peaks_finding(worse: dict[str, bool]) -> Finding:
        results = mixture_runs(recurrent_gain=0.0, max_penalty=0.0)          # every run beats EM (metric < 0)
        for run in results["runs"]:
            # the 6 of a group's 12 configurations with plain e-equivariant layers lose to EM: of all batches of
            # 5, C(6, 5) / C(12, 5), under 1 %, have a best run worse than EM
            if worse.get(run["equivariant"]) and run["spec"].startswith(run["equivariant"]):
                run["metric"] = 1.0
        return next(f for f in mixture_findings(results, variants=("paper",)) if "worse than EM" in f.claim)

    alike = peaks_finding({"max": True, "mean": True, "lse": True})
    assert alike.estimate == 0 and not alike.decided and alike.verdict == "undecided"
    ahead = peaks_finding({"max": True})
    assert ahead.estimate > 0 and ahead.decided and ahead.verdict == "reproduced"


def test_mixture_findings_under_the_mean_summary_read_every_population() -> None:
    results = mixture_runs(recurrent_gain=0.3, max_penalty=0.5)
    for run in results["runs"]:
        run["metric_per_population"] = {"100": [run["metric"] - 1.0, run["metric"] + 3.0]}   # mean: metric + 1
    by_mean = mixture_findings(results, variants=("paper",), summary="mean")
    by_median = mixture_findings(results, variants=("paper",))
    assert [f.verdict for f in by_mean[:3]] == [f.verdict for f in by_median[:3]] == ["reproduced"] * 3
    with pytest.raises(ValueError, match="summary must be one of"):
        mixture_findings(results, summary="mode")


# --- point clouds ------------------------------------------------------------------------------------------

def pointcloud_runs(accuracy: dict[str, tuple[float, float, float]], seeds: int = 10) -> dict:
    """Runs at ``accuracy`` per column and size, jittered by 0.5 points; the columns in sorted order,
    so that each column's jitter does not depend on the order of a set of specs (string hashing)."""
    rng = np.random.default_rng(0)
    runs = []
    for spec, (a1000, a100, a50) in sorted(accuracy.items()):
        for seed in range(seeds):
            jitter = 0.005 * rng.standard_normal(3)
            runs.append({"spec": spec, "seed": seed, "collapsed": False, "error": None,
                         "accuracy_by_population_size": {"1000": a1000 + jitter[0], "100": a100 + jitter[1],
                                                          "50": a50 + jitter[2]}})
    return {"data": {"classes": 12}, "runs": runs}


def test_pointcloud_findings_follow_the_runs() -> None:
    accuracy = {spec: (0.80 if sf.parse_spec(spec)[0] == "max" else 0.70, 0.70, 0.60)
                for spec in set(variant_columns("paper")) | set(variant_columns("lme"))}
    accuracy["max/max"] = (0.90, 0.50, 0.30)
    found = pointcloud_findings(pointcloud_runs(accuracy), PAPER)
    assert [f.verdict for f in found] == ["reproduced"] * 12               # each claim reads an LSE column
    assert "the paper's Table 2: 87.3 % at 1,000" in found[0].claim
    accuracy["max/max"] = (0.60, 0.80, 0.75)
    found = pointcloud_findings(pointcloud_runs(accuracy), variants=("lme",))
    # the claims of 9 parts fail in all 9: the joint test of their parts decides the opposite
    assert [f.verdict for f in found[:5]] == ["not reproduced"] * 5
    assert pointcloud_findings(pointcloud_runs(accuracy, seeds=3), variants=("lme",))[0].verdict == "undecided"
    with pytest.raises(ValueError, match="no usable run"):
        pointcloud_findings(pointcloud_runs({"max/max": (0.9, 0.5, 0.3)}))


def test_pointcloud_findings_count_a_collapsed_run_at_its_accuracy_except_in_the_loss_to_50_points() -> None:
    """Every r-lse/r-lse run collapsed (chance, as a constant prediction measures): the findings still
    run, and the collapse counts against the column, so max/max beats it on all ten seeds. In the
    loss from 1,000 to 50 points, which a constant prediction has none of, a collapsed max/r-lse
    run is left out: the comparison keeps the other nine seeds."""
    accuracy = {spec: (0.80, 0.70, 0.60) for spec in set(variant_columns("paper")) | set(variant_columns("lme"))}
    results = pointcloud_runs(accuracy)
    for run in results["runs"]:
        if run["spec"] == "r-lse/r-lse" or (run["spec"] == "max/r-lse" and run["seed"] == 3):
            run["collapsed"] = True
            run["accuracy_by_population_size"] = {"1000": 1 / 12, "100": 1 / 12, "50": 1 / 12}
    claims = {c.claim.split(" (the paper")[0]: c for c in pointcloud_claims(results, PAPER, "paper")}
    best = claims["the original model (max/max) performs best at the training size"]
    lse_part = next(p for p in best.parts if p.label.endswith("r-lse/r-lse at 1000"))
    assert lse_part.seeds == tuple(range(10)) and (lse_part.differences > 0.8 - 1 / 12 - 0.05).all()
    drop = claims["max/max loses more accuracy from 1,000 to 50 particles than max/r-LSE"].parts[0]
    assert drop.seeds == tuple(s for s in range(10) if s != 3)
    at_50 = claims["max/r-LSE generalises to 50 particles better than max/max"].parts[0]
    assert 3 in at_50.seeds and at_50.differences[at_50.seeds.index(3)] < -0.5
    twins = [row for row in pointcloud_lme_against_lse(results) if row["spec"] == "r-lse/r-lse"]
    assert len(twins) == 3 and all(row["seeds"] == 10 and row["estimate"] > 0.5 for row in twins)


def test_pointcloud_max_equivariant_claim_tests_each_column_that_is_not_max_type_against_its_max_twin() -> None:
    """The claim has one part per column whose equivariant layers are not max-type (r-max is max-type, as in
    chapter 9), each against the max-equivariant column of the same final aggregation, per seed; swapping
    the two runs of a pair negates its d_s, which is what makes it symmetric about 0 under the null."""
    accuracy = {spec: (0.80, 0.70, 0.60) for spec in set(variant_columns("paper")) | set(variant_columns("lme"))}
    results = pointcloud_runs(accuracy)
    at = {(run["spec"], run["seed"]): run["accuracy_by_population_size"]["1000"] for run in results["runs"]}
    crucial = next(c for c in pointcloud_claims(results, PAPER, "paper") if "seem crucial" in c.claim)
    pairs = [("max/r-sum", "r-sum/r-sum"), ("max/r-lse", "r-lse/r-lse"), ("max/q-sum", "q-sum/q-sum")]
    assert [p.label for p in crucial.parts] == [f"{a} vs {b}" for a, b in pairs] and crucial.combine == "all"
    for part, (a, b) in zip(crucial.parts, pairs):
        assert part.differences == pytest.approx([at[(a, s)] - at[(b, s)] for s in range(10)])
    for run in results["runs"]:                                   # swap every pair's outcomes within each seed
        for a, b in pairs:
            if run["spec"] in (a, b):
                run["accuracy_by_population_size"]["1000"] = at[(b if run["spec"] == a else a, run["seed"])]
    swapped = next(c for c in pointcloud_claims(results, PAPER, "paper") if "seem crucial" in c.claim)
    for before, after in zip(crucial.parts, swapped.parts):
        assert after.differences == pytest.approx(-before.differences)


@pytest.mark.parametrize("lme_gain, better", [(0.1, "log-mean-exp"), (-0.1, "LSE")])
def test_pointcloud_lme_against_lse_pairs_each_lse_column_with_its_twin_at_every_size(lme_gain: float,
                                                                                      better: str) -> None:
    accuracy = {"max/r-lse": (0.6, 0.5, 0.4), "r-lse/r-lse": (0.7, 0.6, 0.5)}
    accuracy |= {spec.replace("lse", "lme"): tuple(a + lme_gain for a in values) for spec, values in accuracy.items()}
    rows = pointcloud_lme_against_lse(pointcloud_runs(accuracy))
    assert [(r["spec"], r["twin"], r["n"]) for r in rows] == [
        (spec, spec.replace("lse", "lme"), n) for spec in ("max/r-lse", "r-lse/r-lse") for n in (1000, 100, 50)]
    for row in rows:
        assert row["low"] <= row["estimate"] <= row["high"] and row["estimate"] == pytest.approx(lme_gain, abs=0.02)
        assert row["better"] == better
    with pytest.raises(ValueError, match="r-lme/r-lme has no usable run"):
        pointcloud_lme_against_lse(pointcloud_runs({"max/r-lse": (0.6, 0.5, 0.4), "max/r-lme": (0.7, 0.6, 0.5),
                                                    "r-lse/r-lse": (0.7, 0.6, 0.5)}))


# --- spatial attention -------------------------------------------------------------------------------------

def attention_runs(learnable_gain: float, plain_gain: float, image_elbo: float = 240.0, iou_step: float = 0.01,
                   seeds: int = 10) -> dict:
    rng = np.random.default_rng(0)
    sizes = [5, 20, 200, 1000]
    runs = [{"spec": IMAGE, "seed": s, "error": None, "failed": False, "localiser_parameters": 50_000,
             "evaluation": {"image": {"elbo": image_elbo + rng.standard_normal()}}} for s in range(seeds)]
    for spec in sorted(set(variant_specs("paper")) | set(variant_specs("lme"))):   # not in string-hash order
        gain = learnable_gain if spec[:2] in ("q-", "r-") else plain_gain
        for seed in range(seeds):
            elbo = {n: 200.0 + gain * k + rng.standard_normal() for k, n in enumerate(sizes)}
            runs.append({"spec": spec, "seed": seed, "error": None, "failed": False, "localiser_parameters": 2_000,
                         "evaluation": {str(n): {"elbo": elbo[n], "box_iou": 0.5 + iou_step * k + 0.001 * rng.random()}
                                        for k, n in enumerate(sizes)},
                         "elbo_gains": {f"{a}->{b}": {"mean": elbo[b] - elbo[a], "se": 0.01}
                                        for a, b in zip(sizes[:-1], sizes[1:])}})
    return {"budget_parameters": {"particles": 200, "eval_sizes": sizes}, "data": {"canvas_size": 32}, "runs": runs}


def test_attention_findings_follow_the_runs() -> None:
    results = attention_runs(learnable_gain=5.0, plain_gain=-5.0)
    found = attention_findings(results, PAPER, variants=("paper",))
    on_par, weights, *gains, tighter = found
    assert on_par.verdict != "reproduced" and on_par.decided                 # 30 nats below: the opposite
    assert weights.verdict == "not comparable" and weights.estimate == 25 and weights.seeds == 0   # a 32-pixel canvas
    results["data"]["canvas_size"] = 50
    assert attention_findings(results, variants=("paper",))[1].verdict == "reproduced"           # the paper's canvas
    results["data"]["canvas_size"] = 32
    learnable = [spec for spec in variant_specs("paper") if spec[:2] in ("q-", "r-")]
    assert all(f.verdict == "reproduced" for f in gains) and len(gains) == len(learnable) + 1   # the plain ones: one class
    assert gains[-1].key == "monotonic/plain" and len(select(found, "monotonic/plain")) == 1
    assert tighter.verdict == "reproduced" and tighter.estimate == pytest.approx(0.03, abs=0.002)
    twin = attention_findings(attention_runs(learnable_gain=5.0, plain_gain=-5.0), PAPER, variants=("lme",))
    # the paper's claims, one table row each, naming the localiser the variant put in the paper's place
    assert [f.claim.replace(" as r-lme", "").replace(" as lme", "") for f in twin] == [f.claim for f in found]
    assert "(r-lse as r-lme, learnable)" in twin[-3].claim and "gain of r-lme " in twin[-3].measure
    assert "lme" in twin[-2].measure and "(the plain aggregations, as a class)" in twin[-2].claim
    found = attention_findings(attention_runs(learnable_gain=-5.0, plain_gain=5.0, image_elbo=205.0, iou_step=-0.01),
                               variants=("paper",))
    assert found[0].verdict == "reproduced" and found[-1].verdict == "not reproduced"
    assert all(f.verdict == "not reproduced" and f.decided for f in found[2:-1])
    both = attention_findings(attention_runs(learnable_gain=5.0, plain_gain=-5.0))
    assert both[1].variant == "both" and sum("weights" in f.claim for f in both) == 1


def test_attention_findings_count_a_failed_run_against_its_localiser_or_leave_it_out() -> None:
    """A failed r-lse run (seed 0) counts against r-lse: in its gains it takes the worst gain the comparison saw
    and never a positive one, so the claim that r-lse improves at every step keeps ten seeds, one of them
    against it; left out (``failed="dropped"``), it keeps nine. The boxes claim does the same per localiser."""
    results = attention_runs(learnable_gain=5.0, plain_gain=-5.0)
    for run in results["runs"]:
        if run["spec"] == "r-lse" and run["seed"] == 0:
            run["failed"] = True
            run["elbo_gains"] = {k: {"mean": 100.0, "se": 0.0} for k in run["elbo_gains"]}   # never read
    against = attention_findings(results, variants=("paper",))
    gains = {f.claim.split("(")[-1]: f for f in against[2:-1]}
    counted = gains["r-lse, learnable)"]
    assert counted.seeds == 10
    claims = attention_claims(results, variant="paper")
    r_lse = next(c for c in claims if c.key == "monotonic/r-lse")
    for part in r_lse.parts:
        d = dict(zip(part.seeds, part.differences))
        assert d[0] == min(0.0, min(v for s, v in d.items() if s != 0))
    dropped = attention_findings(results, variants=("paper",), failed="dropped")
    left_out = {f.claim.split("(")[-1]: f for f in dropped[2:-1]}["r-lse, learnable)"]
    assert left_out.verdict == "reproduced" and left_out.seeds == 9
    assert counted.p_value > left_out.p_value                                  # 9 of 10 positive, against 9 of 9
    # boxes, left out: seed 0 is the mean over the other localisers
    tighter = dropped[-1]
    assert tighter.seeds == 10 and tighter.verdict == "reproduced"
    kept = [r for r in results["runs"] if r["spec"] in variant_specs("paper") and r["seed"] == 0 and not r["failed"]]
    seed0 = np.mean([r["evaluation"]["1000"]["box_iou"] - r["evaluation"]["5"]["box_iou"] for r in kept])
    assert len(kept) == len(variant_specs("paper")) - 1
    others = [np.mean([r["evaluation"]["1000"]["box_iou"] - r["evaluation"]["5"]["box_iou"] for r in results["runs"]
                       if r["spec"] in variant_specs("paper") and r["seed"] == s]) for s in range(1, 10)]
    assert tighter.estimate == pytest.approx(np.median([seed0, *others]))   # a level claim: the median, sign test
    with pytest.raises(ValueError, match="failed must be one of"):
        attention_findings(results, failed="ignored")