"""Findings: bootstrap intervals and verdicts, and each experiment's findings on runs whose answer is
known (made here), so that a verdict that could be wrong is checked both ways."""

from __future__ import annotations

import numpy as np
import pytest

import setfuncs as sf
from setfuncs.experiments.attention import IMAGE, attention_findings, variant_specs
from setfuncs.experiments.circle import circle_findings, lme_against_lse
from setfuncs.experiments.findings import (Claim, Finding, bootstrap, bootstrap_findings, combine, findings_html,
                                           format_findings, verdict)
from setfuncs.experiments.mixture import mixture_findings
from setfuncs.experiments.pointcloud import pointcloud_findings, variant_columns
from setfuncs.experiments.pointcloud import lme_against_lse as pointcloud_lme_against_lse
from setfuncs.experiments.results import PAPER_RESULTS, RESULTS_DIR
from setfuncs.experiments.sweeps import SETTINGS, all_configurations, lme_twin, spec_of

PAPER = RESULTS_DIR / PAPER_RESULTS


# --- the machinery ---------------------------------------------------------------------------------------

def test_bootstrap_interval_brackets_the_estimate_and_is_reproducible() -> None:
    rng = np.random.default_rng(1)
    groups = {"a": rng.normal(1.0, 0.1, 20), "b": rng.normal(0.0, 0.1, 20)}
    stat = lambda g: float(g["a"].mean() - g["b"].mean())  # noqa: E731
    estimate, low, high = bootstrap(groups, stat, 400, seed=3)
    assert low < estimate < high and low > 0.8 and high < 1.2
    assert bootstrap(groups, stat, 400, seed=3) == (estimate, low, high)
    sizes = []
    bootstrap(groups, lambda g: sizes.append({k: len(v) for k, v in g.items()}) or 0.0, 5)
    assert all(s == {"a": 20, "b": 20} for s in sizes)
    with pytest.raises(ValueError, match="at least one run"):
        bootstrap({"a": np.array([])}, stat)


@pytest.mark.parametrize("low, high, margin, expected", [
    (0.1, 0.5, None, "reproduced"), (-0.5, -0.1, None, "reversed"), (-0.1, 0.1, None, "undecided"),
    (-0.5, 0.5, 1.0, "reproduced"), (-3.0, -2.0, 1.0, "not reproduced"), (-2.0, 0.5, 1.0, "undecided")])
def test_verdicts(low: float, high: float, margin: float | None, expected: str) -> None:
    assert verdict(low, high, margin) == expected


def test_combined_verdicts_and_text() -> None:
    assert combine(["reproduced", "reproduced"]) == "reproduced"
    assert combine(["reproduced", "undecided"]) == "undecided"
    assert combine(["reproduced", "reversed"]) == "not reproduced"
    with pytest.raises(ValueError, match="verdict"):
        Finding("c", "m", 0.0, 0.0, 0.0, "maybe")
    text = format_findings([Finding("a claim", "a measure", 1.5, 1.0, 2.0, "reproduced", note="n")])
    assert "1. [paper] a claim" in text and "95% interval 1 to 2) -> reproduced" in text


def test_the_lme_twin_replaces_every_lse_and_nothing_else() -> None:
    assert [lme_twin(s) for s in ("lse", "max/r-lse", "r-lse/r-lse", "q-lse/lse", "lme")] == [
        "lme", "max/r-lme", "r-lme/r-lme", "q-lme/lme", "lme"]
    assert [lme_twin(s) for s in ("max/r-sum", "mean", "pmean(2)/max", "image")] == [
        "max/r-sum", "mean", "pmean(2)/max", "image"]
    assert variant_specs("lme") == [lme_twin(s) for s in variant_specs("paper")]
    assert variant_columns("lme") == [lme_twin(s) for s in variant_columns("paper")]
    with pytest.raises(ValueError, match="variant must be one of"):
        variant_columns("centred")


def test_the_findings_table_shows_each_claim_once_and_defines_its_symbols() -> None:
    found = [Finding("claim one", "T(a) - T(b)", 1.5, 1.0, 2.0, "reproduced", note="T: a statistic"),
             Finding("claim two", "x", 0.5, -1.0, 2.0, "undecided"),
             Finding("claim one", "T(a) - T(c)", -1.5, -2.0, -1.0, "reversed", "lme", note="T: a statistic")]
    html = findings_html(found)
    assert html.count("claim one") == 1 and '<td rowspan="2">claim one</td>' in html
    assert "T(a) - T(b) (T: a statistic)" in html and "<td>x</td>" in html     # no empty note
    rows = html.split("<tr>")[2:]                     # after the header: claim one twice, then claim two
    assert "LSE (paper)" in rows[0] and "log-mean-exp" in rows[1] and "reversed" in rows[1]
    assert "claim two" in rows[2]
    same = [Finding("claim", "x", 0.5, -1.0, 2.0, "undecided", variant) for variant in ("paper", "lme")]
    html = findings_html(same + [Finding("claim", "x", 0.5, -1.0, 2.5, "undecided", "lme")])
    assert html.count("<tr>") == 3 and "<td>both</td>" in html and "<td>log-mean-exp</td>" in html
    shared = [Finding(c, "T(a)", 0.5, -1.0, 2.0, "undecided", note="T: a statistic") for c in ("one", "two")]
    html = findings_html(shared, caption="Table 1")
    assert "<caption>Table 1; T: a statistic</caption>" in html and html.count("T: a statistic") == 1


def test_bootstrap_findings_turn_claims_into_rows_with_their_intervals_and_verdicts() -> None:
    rng = np.random.default_rng(2)
    groups = {"a": rng.normal(1.0, 0.1, 15), "b": rng.normal(0.0, 0.1, 15)}
    gap = lambda g: float(g["a"].mean() - g["b"].mean())  # noqa: E731
    claims = [Claim("a beats b", "A - B", groups, gap, note="A: mean of a"),
              Claim("b beats a", "B - A", groups, lambda g: -gap(g)),
              Claim("b is on par with a", "B - A", groups, lambda g: -gap(g), margin=2.0),
              Claim("b is within a tenth of a", "B - A", groups, lambda g: -gap(g), margin=0.1),
              Claim("b does not reliably beat a", "B - A", groups, lambda g: -gap(g), positive=False),
              Claim("a does not reliably beat b", "A - B", groups, gap, positive=False),
              Claim("a and a agree", "A - A'", {"a": groups["a"], "c": groups["a"] + rng.normal(0, 0.1, 15)},
                    lambda g: float(g["a"].mean() - g["c"].mean()), positive=False)]
    found = bootstrap_findings(claims, "lme", resamples=300, seed=4)
    assert [f.claim for f in found] == [c.claim for c in claims]
    assert [f.verdict for f in found] == ["reproduced", "reversed", "reproduced", "not reproduced", "reproduced",
                                          "not reproduced", "undecided"]
    for claim, finding in zip(claims, found):        # every claim's interval is the bootstrap's with the same seed
        assert (finding.estimate, finding.low, finding.high) == bootstrap(claim.groups, claim.statistic, 300, 4)
        assert (finding.measure, finding.variant, finding.note) == (claim.measure, "lme", claim.note)
    assert bootstrap_findings([], resamples=10) == []
    with pytest.raises(ValueError, match="margin"):
        Claim("c", "m", groups, gap, margin=1.0, positive=False)


# --- circle ------------------------------------------------------------------------------------------------

def circle_runs(mse_of_setting: dict[str, float], seeds: int = 6, noise: float = 0.05) -> dict:
    rng = np.random.default_rng(0)
    runs = []
    for setting, e, f in all_configurations():
        for seed in range(seeds):
            mse = mse_of_setting[setting] * float(np.exp(noise * rng.standard_normal()))
            runs.append({"spec": spec_of(setting, e, f), "setting": setting, "equivariant": e, "final": f,
                         "seed": seed, "mse": mse, "center_mse": 0.8 * mse, "radius_mse": 0.2 * mse,
                         "collapsed": False, "error": None})
    return {"runs": runs}


def test_circle_findings_reproduce_and_reverse_with_the_runs() -> None:
    paper_like = dict(zip(SETTINGS, (1.6, 1.3, 0.9, 0.6)))
    found = circle_findings(circle_runs(paper_like), PAPER, resamples=100)
    assert [f.verdict for f in found] == ["reproduced"] * 5
    assert "the paper's median best MSE" in found[0].claim
    reversed_rows = dict(zip(SETTINGS, (0.6, 0.9, 1.3, 1.6)))
    found = circle_findings(circle_runs(reversed_rows), variant="lme", resamples=100)
    assert [f.verdict for f in found[:4]] == ["reversed"] * 4 and {f.variant for f in found} == {"lme"}


def test_circle_findings_leave_out_collapsed_runs() -> None:
    results = circle_runs(dict(zip(SETTINGS, (1.6, 1.3, 0.9, 0.6))))
    for run in results["runs"]:
        if run["setting"] == "plain/plain":
            run.update(mse=1e-6, collapsed=True) if run["seed"] == 0 else None
    assert circle_findings(results, resamples=50)[0].verdict == "reproduced"


def scaled_lme(results: dict, factor: float) -> dict:
    """The runs with every log-mean-exp configuration's MSE multiplied by ``factor``."""
    for run in results["runs"]:
        if "lme" in (run["equivariant"], run["final"]):
            run["mse"] *= factor
    return results


@pytest.mark.parametrize("factor, better", [(0.5, "log-mean-exp"), (2.0, "LSE"), (1.0, "undecided")])
def test_lme_against_lse_pairs_every_lse_configuration_with_its_twin(factor: float, better: str) -> None:
    rows, pooled = lme_against_lse(scaled_lme(circle_runs(dict.fromkeys(SETTINGS, 1.0), noise=0.1), factor),
                                   resamples=200)
    assert len(rows) == pooled["pairs"] == 20
    assert all(row["twin"] == row["spec"].replace("lse", "lme") and "lse" in row["spec"] for row in rows)
    assert pooled["better"] == better and pooled["low"] <= pooled["log_gain"] <= pooled["high"]
    if factor != 1.0:
        assert all(row["better"] == better for row in rows)
        assert pooled["log_gain"] == pytest.approx(-np.log(factor), abs=0.15)


def test_lme_against_lse_counts_a_collapsed_run_as_the_worst() -> None:
    results = circle_runs(dict.fromkeys(SETTINGS, 1.0))
    for run in results["runs"]:
        if run["spec"] == "lme/lme":
            run.update(mse=1e-6, collapsed=True)
    rows, _ = lme_against_lse(results, resamples=50)
    (row,) = [r for r in rows if r["twin"] == "lme/lme"]
    assert row["twin_median_mse"] == np.inf and row["better"] == "LSE"
    with pytest.raises(ValueError, match="twin"):
        lme_against_lse({"runs": [r for r in results["runs"] if "lme" not in r["spec"]]})


# --- mixture -----------------------------------------------------------------------------------------------

def mixture_runs(recurrent_gain: float, max_penalty: float, seeds: int = 5) -> dict:
    rng = np.random.default_rng(0)
    runs = []
    for setting, e, f in all_configurations():
        for seed in range(seeds):
            value = -0.2 - (recurrent_gain if setting.startswith("recurrent") else 0.0)
            value += max_penalty * ((e == "max") + (f == "max")) + 0.01 * rng.standard_normal()
            runs.append({"spec": spec_of(setting, e, f), "setting": setting, "equivariant": e, "final": f,
                         "seed": seed, "metric": value, "collapsed": False, "error": None})
    return {"runs": runs}


def test_mixture_findings_follow_the_runs() -> None:
    found = mixture_findings(mixture_runs(recurrent_gain=0.3, max_penalty=0.5), PAPER, resamples=60)
    assert [f.verdict for f in found[:3]] == ["reproduced"] * 3                     # a boost for every reduction
    assert [f.verdict for f in found[4:7]] == ["reproduced"] * 3                    # max behind, peaks above 0
    found = mixture_findings(mixture_runs(recurrent_gain=-0.3, max_penalty=-0.5), variant="lme", resamples=60)
    assert [f.verdict for f in found[:3]] == ["reversed"] * 3
    assert found[4].verdict == found[5].verdict == "reversed"
    paper = mixture_findings(mixture_runs(recurrent_gain=0.3, max_penalty=0.5), PAPER, resamples=60)
    twin = mixture_findings(mixture_runs(recurrent_gain=0.3, max_penalty=0.5), PAPER, "lme", resamples=60)
    assert [f.claim for f in twin] == [f.claim for f in paper] and "(lse)" in twin[2].claim   # the paper's words
    assert "P(lme equivariant) - P(r-lme equivariant)" in twin[2].measure


# --- point clouds ------------------------------------------------------------------------------------------

def pointcloud_runs(accuracy: dict[str, tuple[float, float, float]], seeds: int = 3) -> dict:
    rng = np.random.default_rng(0)
    runs = []
    for spec, (a1000, a100, a50) in accuracy.items():
        for seed in range(seeds):
            jitter = 0.005 * rng.standard_normal(3)
            runs.append({"spec": spec, "seed": seed, "collapsed": False, "error": None,
                         "accuracy_by_population_size": {"1000": a1000 + jitter[0], "100": a100 + jitter[1],
                                                          "50": a50 + jitter[2]}})
    return {"runs": runs}


def test_pointcloud_findings_follow_the_runs() -> None:
    accuracy = {spec: (0.80 if sf.parse_spec(spec)[0] == "max" else 0.70, 0.70, 0.60)
                for spec in set(variant_columns("paper")) | set(variant_columns("lme"))}
    accuracy["max/max"] = (0.90, 0.50, 0.30)
    found = pointcloud_findings(pointcloud_runs(accuracy), PAPER, resamples=200)
    assert [f.verdict for f in found] == ["reproduced"] * 6
    assert "the paper's Table 2: 87.3 % at 1,000" in found[0].claim
    accuracy["max/max"] = (0.60, 0.80, 0.75)
    found = pointcloud_findings(pointcloud_runs(accuracy), variant="lme", resamples=200)
    assert [f.verdict for f in found[:5]] == ["reversed"] * 5
    with pytest.raises(ValueError, match="no usable run"):
        pointcloud_findings(pointcloud_runs({"max/max": (0.9, 0.5, 0.3)}))


@pytest.mark.parametrize("lme_gain, better", [(0.1, "log-mean-exp"), (-0.1, "LSE")])
def test_pointcloud_lme_against_lse_pairs_each_lse_column_with_its_twin_at_every_size(lme_gain: float,
                                                                                      better: str) -> None:
    accuracy = {"max/r-lse": (0.6, 0.5, 0.4), "r-lse/r-lse": (0.7, 0.6, 0.5)}
    accuracy |= {spec.replace("lse", "lme"): tuple(a + lme_gain for a in values) for spec, values in accuracy.items()}
    rows = pointcloud_lme_against_lse(pointcloud_runs(accuracy), resamples=200)
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
                   seeds: int = 3) -> dict:
    rng = np.random.default_rng(0)
    sizes = [5, 20, 200, 1000]
    runs = [{"spec": IMAGE, "seed": s, "error": None, "failed": False, "localiser_parameters": 50_000,
             "evaluation": {"image": {"elbo": image_elbo}}} for s in range(seeds)]
    for spec in set(variant_specs("paper")) | set(variant_specs("lme")):
        gain = learnable_gain if spec[:2] in ("q-", "r-") else plain_gain
        for seed in range(seeds):
            elbo = {n: 200.0 + gain * k + 0.01 * rng.standard_normal() for k, n in enumerate(sizes)}
            runs.append({"spec": spec, "seed": seed, "error": None, "failed": False, "localiser_parameters": 2_000,
                         "evaluation": {str(n): {"elbo": elbo[n], "box_iou": 0.5 + iou_step * k}
                                        for k, n in enumerate(sizes)},
                         "elbo_gains": {f"{a}->{b}": {"mean": elbo[b] - elbo[a], "se": 0.01}
                                        for a, b in zip(sizes[:-1], sizes[1:])}})
    return {"budget_parameters": {"particles": 200, "eval_sizes": sizes}, "runs": runs}


def test_attention_findings_follow_the_runs() -> None:
    found = attention_findings(attention_runs(learnable_gain=5.0, plain_gain=-5.0), PAPER, resamples=100)
    on_par, weights, *gains, tighter = found
    assert on_par.verdict == "not reproduced" and on_par.estimate == pytest.approx(200 + 2 * 5 - 240, abs=0.1)
    assert weights.verdict == "reproduced" and weights.estimate == 25
    assert all(f.verdict == "reproduced" for f in gains) and len(gains) == len(variant_specs("paper"))
    assert tighter.verdict == "reproduced" and tighter.estimate == pytest.approx(0.03)
    twin = attention_findings(attention_runs(learnable_gain=5.0, plain_gain=-5.0), PAPER, "lme", resamples=100)
    assert [f.claim for f in twin] == [f.claim for f in found]     # the paper's claims, one table row each
    assert "(r-lse, learnable)" in twin[-2].claim and "gain of r-lme " in twin[-2].measure
    found = attention_findings(attention_runs(learnable_gain=-5.0, plain_gain=5.0, image_elbo=205.0, iou_step=-0.01),
                               resamples=100)
    assert found[0].verdict == "reproduced" and found[-1].verdict == "reversed"
    assert all(f.verdict in ("reversed", "not reproduced") for f in found[2:-1])


def test_attention_findings_leave_out_failed_runs() -> None:
    results = attention_runs(learnable_gain=5.0, plain_gain=-5.0)
    for run in results["runs"]:
        if run["spec"] == "r-lse" and run["seed"] == 0:
            run["failed"] = True
            run["elbo_gains"] = {k: {"mean": -100.0, "se": 0.0} for k in run["elbo_gains"]}
    gains = {f.claim.split("(")[-1]: f for f in attention_findings(results, resamples=100)[2:-1]}
    assert gains["r-lse, learnable)"].verdict == "reproduced"
