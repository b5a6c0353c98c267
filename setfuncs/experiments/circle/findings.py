r"""The paper's findings on Table 1, tested on a sweep's runs paired by seed (:mod:`setfuncs.experiments.findings`).

Table 1 compares four settings (plain or recurrent equivariant layers / final aggregation), each
pooling nine configurations (three equivariant by three final aggregations). "Setting A beats
setting B" is tested on **matched configurations**: the configuration of A and the one of B with
the same two aggregations, trained with the same seed. At a seed the statistic is the median over
the nine matched pairs of the log ratio of their test MSEs, :math:`d_s = \operatorname{median}
\ln(\text{MSE}_B / \text{MSE}_A)` (positive: A is better; a diverged or collapsed run counts as an
infinite MSE; :func:`~setfuncs.experiments.findings.claims.matched`), and the claim is that its mean over
seeds is positive. So the test is about the typical trained model of a setting, paired by
aggregation and seed. The paper's statistic, the median best MSE of 20-run batches, is a peak over
runs; :mod:`~setfuncs.experiments.circle.peak_test` tests it on the same runs, exactly, by swapping
the two settings' labels within seeds, and chapter 8 sets its verdicts beside these.

The paper's effect (for the power check of *not reproduced*) is the log ratio of its Table 1
median best MSEs, on the same log scale as ours but of another quantity: a ratio of peaks, where
ours is a ratio of typical runs. The power check therefore assumes that the typical run differs
between settings as much as the best runs do, which the paper's numbers cannot check; a *not
reproduced* from it says that these seeds would have seen an effect of the paper's size in the
typical run, not that the paper's peaks are wrong.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from ..differences import claim_gaps, header_field
from ..findings import Claim, Comparison, check_failed, matched
from ..findings import lme_against_lse as twins_against
from ..peaks import finite_metric
from ..results import sorted_runs
from ..schema import finished_runs
from ..sweeps import SETTINGS, TEST_SEED, VARIANTS, in_variant, lme_twins, spec_of
from .differences import CLAIM_AXES, protocol_differences
from .data import POPULATION_SIZE, test_set
from .metric import mse_by_run
from .table import paper_rows

__all__ = ["centre_baseline", "circle_claims", "lme_against_lse"]

PP, PR, RP, RR = SETTINGS


def centre_baseline(results: dict) -> float:
    r"""The log ratio a constant predictor gets: :math:`\ln(\operatorname{Var} c_x + \operatorname{Var} c_y)
    - \ln \operatorname{Var} r` over the sweep's test set (``budget_parameters.test_size`` populations of 20,
    :data:`~setfuncs.experiments.sweeps.TEST_SEED`): the split of the error between centre and radius of a
    model that always answers the mean circle, and the zero of the centre claim's measure."""
    _, y, _ = test_set(header_field(results, "budget_parameters", "test_size"), POPULATION_SIZE, TEST_SEED)
    variance = y.double().var(0, unbiased=False).numpy()
    return float(np.log(variance[0] + variance[1]) - np.log(variance[2]))


def _centre_over_radius(results: dict, variant: str) -> Comparison:
    """Per seed: ln(median centre MSE) - ln(median radius MSE) over the variant's trained runs, minus
    :func:`centre_baseline`."""
    by_seed: dict[int, list[tuple[float, float]]] = {}
    for run in sorted_runs(finished_runs(results)):
        if in_variant(run, variant) and finite_metric(run, "mse") is not None:
            by_seed.setdefault(run["seed"], []).append((run["center_mse"], run["radius_mse"]))
    seeds = sorted(by_seed)
    zero = centre_baseline(results)
    d = [float(np.log(np.median([c for c, _ in by_seed[s]])) - np.log(np.median([r for _, r in by_seed[s]]))) - zero
         for s in seeds]
    return Comparison("all trained runs", tuple(seeds), np.array(d))


def circle_claims(results: dict, paper: str | os.PathLike | None = None, variant: str = "paper",
                  failed: str = "against") -> list[Claim]:
    """The claims of Section 4.1 on ``results`` for ``variant`` (``"paper"`` or ``"lme"``); with
    ``paper`` (``results/paper-results.json``) each claim quotes the paper's Table 1 and carries its
    effect for the power check. ``failed`` (:data:`~setfuncs.experiments.findings.claims.FAILED_RULES`): a run
    that learnt nothing counts as an infinite MSE (``"against"``), or is left out, with its seed's
    matched pairs (``"dropped"``)."""
    theirs = paper_rows(paper) if paper is not None else None
    families = VARIANTS[variant]
    metric = mse_by_run(results)
    if check_failed(failed) == "dropped":           # NaN: left out, with the pairs it is in
        metric = {key: value if np.isfinite(value) else np.nan for key, value in metric.items()}
    gap_of = claim_gaps(results, protocol_differences, CLAIM_AXES)

    def quote(*settings: str) -> str:
        if theirs is None:
            return ""
        return " (the paper's median best MSE: " + ", ".join(
            f"{s} {theirs[s]['median_best_mse']:.2f}" for s in settings) + ")"

    def paper_gain(better: str, worse: str) -> float | None:
        return None if theirs is None else float(np.log(theirs[worse]["median_best_mse"] /
                                                         theirs[better]["median_best_mse"]))

    def beats(better: str, worse: str) -> Comparison:
        pairs = [(spec_of(better, e, f), spec_of(worse, e, f)) for e in families for f in families]
        return matched(f"{better} vs {worse}", metric, pairs, "log ratio")

    def claim(key: str, name: str, text: str, better: str, worse: Sequence[str]) -> Claim:
        effects = [paper_gain(better, w) for w in worse]
        return Claim(text + quote(better, *worse),
                     f"median over matched aggregations of ln MSE({'|'.join(worse)}) - ln MSE({better}), per seed",
                     tuple(beats(better, w) for w in worse),
                     paper_effect=None if theirs is None else min(effects),
                     gap=gap_of[key], key=name, words=text)

    claims = [
        claim("recurrent equivariant layers improve", "recurrent-equivariant-improve",
              "recurrent equivariant layers improve the performance", RP, [PP]),
        claim("recurrent aggregations improve", "recurrent-aggregations-improve",
              "recurrent aggregations improve the performance", PR, [PP]),
        claim("equivariant layers grant the larger boost", "equivariant-larger-boost",
              "equivariant layers grant the larger boost", RP, [PR]),
        claim("recurrent/recurrent is the best row", "recurrent-best-row", "recurrent/recurrent is the best row", RR,
              [PP, PR, RP]),
    ]
    centre_quote = ""
    if theirs is not None:
        centre_quote = " (the paper's best runs: " + ", ".join(
            f"{s} centre {theirs[s]['center_mse']:.2f}, radius {theirs[s]['radius_mse']:.2f}" for s in SETTINGS) + ")"
    claims.append(Claim("the challenge lies mostly in the centre" + centre_quote,
                        "ln median centre MSE - ln median radius MSE over the trained runs, per seed, minus the same "
                        "log ratio of a constant predictor (each error relative to its target's variance)",
                        (_centre_over_radius(results, variant),), paper_effect=None,
                        gap=gap_of["the challenge lies in the centre"], comparative=False, key="centre",
                        note="0: the centre keeps no more of its variance unexplained than the radius; the paper's "
                             "errors are not relative to its targets' variances, so they give no effect to compare",
                        words="the challenge lies mostly in the centre"))
    return claims


def lme_against_lse(results: dict) -> list[dict]:
    r"""Log-mean-exp against the paper's LSE, configuration by configuration (not in the paper).

    Each of the paper's 20 configurations with LSE is paired with the same configuration with every
    LSE replaced by log-mean-exp (:func:`~setfuncs.experiments.sweeps.lme_twins`), seed by seed:
    :math:`d_s = \ln \text{MSE}_\text{LSE} - \ln \text{MSE}_\text{lme}` (positive: log-mean-exp is
    better; a failed run is an infinite MSE). Two-sided sign-flip tests, Holm-corrected over the 20
    pairs and the pooled comparison (:func:`~setfuncs.experiments.findings.twins.lme_against_lse`); the
    pooled row's :math:`d_s` is the median over the 20 pairs.

    One row per pair (keys ``setting, spec, twin`` and those of ``compare_pairs``: ``seeds,
    estimate, low, high, p_value, adjusted, better``), the pooled row last with ``setting`` "all".
    """
    settings = {spec_of(*lse): lse[0] for lse, _ in lme_twins()}
    rows = twins_against({"MSE": mse_by_run(results)}, list(settings), "log ratio", pooled=True)
    return [{**row, "setting": settings.get(row["spec"], "all")} for row in rows]


def lme_against_lse_by_size(results: dict) -> list[dict]:
    r"""Log-mean-exp against the paper's LSE at every test population size, all pairs pooled (not in the paper).

    At each size :math:`n` of the runs' ``mse_by_population_size`` the paper's 20 configurations with LSE
    are paired with their twins (:func:`~setfuncs.experiments.sweeps.lme_twins`), seed by seed:
    :math:`d_s` is the median over the 20 pairs of :math:`\ln \text{MSE}_\text{LSE}(n) - \ln
    \text{MSE}_\text{lme}(n)` (positive: log-mean-exp is better; a run that learnt nothing is an infinite
    MSE at every size, as in :func:`~setfuncs.experiments.circle.metric.mse_by_run`). Two-sided sign-flip
    tests, Holm-corrected over the sizes (:func:`~setfuncs.experiments.findings.judge.compare_pairs`).

    One row per size, smallest first: keys ``n`` and those of ``compare_pairs`` (``label, seeds, estimate,
    low, high, p_value, adjusted, better, test``).
    """
    from ..findings import compare_pairs

    pairs = [(spec_of(*twin), spec_of(*lse)) for lse, twin in lme_twins()]
    runs = sorted_runs(finished_runs(results))
    sizes = sorted({int(n) for run in runs for n in run.get("mse_by_population_size") or {}})

    def at(n: int) -> dict[tuple[str, int], float]:
        values = {(run["spec"], run["seed"]): finite_metric(run, "mse_by_population_size", n) for run in runs}
        return {key: np.inf if value is None else value for key, value in values.items()}

    comparisons = {f"all pairs at N = {n}": matched(f"all pairs at N = {n}", at(n), pairs, "log ratio") for n in sizes}
    return [{"n": n, **row} for n, row in zip(sizes, compare_pairs(comparisons, ("log-mean-exp", "LSE")))]
