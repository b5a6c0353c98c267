r"""The paper's findings on Figure 4b, tested on a sweep's runs paired by seed (:mod:`setfuncs.experiments.findings`).

A run's metric is the log ratio of EM's score to the model's at :math:`n = 100` (lower is better;
negative: EM is outperformed), summarised over the test populations by their median (the file's
``metric``, ``summary="median"``) or their mean (``summary="mean"``, from
``metric_per_population``); a run that diverged or collapsed counts as :math:`+\infty`, the worst
outcome. Many runs of this experiment collapse, so comparisons count **wins**: configurations
are matched (the same aggregations but the one the claim is about) and trained with the same seed;
at a seed :math:`d_s` is the share of matched pairs the claimed-better side wins minus the share it
loses (:func:`~setfuncs.experiments.findings.claims.matched` with ``score="wins"``).

* *learnable equivariant layers boost every reduction* (one claim per reduction ``f``):
  ``r-f/g`` against ``f/g`` for every final aggregation ``g``;
* *LSE benefits most from learnable inputs*: LSE's boost minus mean's, and minus max's, per seed
  (both must be positive);
* *max-type aggregations fall behind*: mean against max and LSE against max (both must hold), in
  the equivariant layers (the final aggregation matched) and in the final aggregation (the
  equivariant layers matched);
* *a significant amount of peaks is worse than EM*, where the alternatives' are not: per seed, the
  share of 5-run batches of the max-equivariant configurations whose best run is worse than EM
  (metric above 0, or failed), computed exactly over all batches, minus the same share of the mean-
  and of the LSE-equivariant configurations (both must be positive). A share alone cannot be tested
  by sign flips: it is never negative, so any seed with one batch worse than EM would "reproduce"
  it, however small the share; against the alternatives the claim can fail, and under the null
  (outcomes exchangeable across configurations within a seed) the two shares are exchangeable.

The figure gives no numbers, so no claim carries a paper effect: a claim that is not decided is
*undecided*, with the smallest effect these seeds could detect.
"""

from __future__ import annotations

import os
from math import comb
from typing import Sequence

import numpy as np

from ..differences import claim_gaps
from ..findings import Claim, Comparison, check_failed, matched
from ..sweeps import VARIANTS
from .differences import CLAIM_AXES, protocol_differences
from .metric import metric_by_run
from .table import paper_findings

__all__ = ["PEAK_BATCH", "mixture_claims"]

#: Runs per batch of the paper's peak statistic.
PEAK_BATCH = 5


def _finals(families: Sequence[str]) -> list[str]:
    return [*families, *(f"r-{g}" for g in families)]


def _share_of_peaks_worse_than_em(metric: dict[tuple[str, int], float], specs: list[str], seed: int) -> float:
    """The share of all batches of :data:`PEAK_BATCH` of ``specs``' runs at ``seed`` whose best is worse
    than EM (above 0), exactly: C(worse, k) / C(runs, k); a run left out (NaN) is not ranked."""
    values = [metric[(spec, seed)] for spec in specs if (spec, seed) in metric and not np.isnan(metric[(spec, seed)])]
    k = min(PEAK_BATCH, len(values))
    return comb(sum(v > 0 for v in values), k) / comb(len(values), k)


def _more_peaks_worse_than_em(metric: dict[tuple[str, int], float], worse: list[str], other: list[str],
                              label: str) -> Comparison:
    """Per seed at which every configuration of both groups ran: the share of ``worse``'s batches whose
    best is worse than EM minus the share of ``other``'s (:func:`_share_of_peaks_worse_than_em`)."""
    # only seeds with a run of every configuration of both groups: with groups of unequal size at a seed the
    # two shares would not be exchangeable under the null, and d_s not symmetric about 0
    seeds = sorted(set.intersection(*({s for spec_, s in metric if spec_ == spec} for spec in (*worse, *other))))
    return Comparison(label, tuple(seeds), np.array([_share_of_peaks_worse_than_em(metric, worse, s)
                                                     - _share_of_peaks_worse_than_em(metric, other, s) for s in seeds]))


def mixture_claims(results: dict, paper: str | os.PathLike | None = None, variant: str = "paper",
                   summary: str = "median", failed: str = "against") -> list[Claim]:
    r"""The claims of Section 4.2 on ``results`` for ``variant``; with ``paper``
    (``results/paper-results.json``) the claims are the paper's words. ``failed``
    (:data:`~setfuncs.experiments.findings.claims.FAILED_RULES`): a run that did not train counts as
    :math:`+\infty` (``"against"``), or is left out (``"dropped"``)."""
    boost_claim, lse_claim, max_claim = (paper_findings(paper) if paper is not None else
                                         ("learnable equivariant layers boost every reduction",
                                          "LSE benefits most from learnable inputs", "max-type aggregations fall behind"))
    families = VARIANTS[variant]
    plain, maximum, lse = families
    metric = metric_by_run(results, summary)
    if check_failed(failed) == "dropped":           # NaN: left out, with the pairs it is in
        metric = {key: value if np.isfinite(value) else np.nan for key, value in metric.items()}
    gap_of = claim_gaps(results, protocol_differences, CLAIM_AXES)
    finals = _finals(families)

    def boost(f: str) -> Comparison:
        return matched(f"r-{f}/g vs {f}/g", metric, [(f"r-{f}/{g}", f"{f}/{g}") for g in finals], "wins")

    def equivariant_beats_max(f: str) -> Comparison:
        return matched(f"{f}/g vs max/g", metric, [(f"{r}{f}/{g}", f"{r}max/{g}") for r in ("", "r-") for g in finals],
                       "wins")

    def final_beats_max(f: str) -> Comparison:
        equivariants = [*families, *(f"r-{e}" for e in families)]
        return matched(f"e/{f} vs e/max", metric, [(f"{e}/{r}{f}", f"{e}/{r}max") for r in ("", "r-") for e in equivariants],
                       "wins")

    def equivariant_group(e: str) -> list[str]:
        return sorted({spec for spec, _ in metric if spec.split("/")[0] in (e, f"r-{e}") and spec.split("/")[1] in finals})

    note = "per seed: share of matched pairs won minus lost"
    claims = [Claim(f"{boost_claim} ({paper_family})", f"r-{f} against {f} equivariant layers, final matched",
                    (boost(f),), gap=gap_of["learnable equivariant layers boost every reduction"], note=note,
                    key=f"boost/{paper_family}", part=paper_family)
              for paper_family, f in zip(VARIANTS["paper"], families)]
    claims.append(Claim(lse_claim, f"boost of {lse} minus boost of mean and of max (both), per seed",
                        (boost(lse).minus(boost(plain), f"{lse} vs mean"), boost(lse).minus(boost(maximum), f"{lse} vs max")),
                        gap=gap_of["LSE benefits most"], key="lse-benefits-most",
                        note=note + "; a difference of boosts: its test is exact when the configurations are "
                                    "exchangeable, only approximately when the boosts are equal but not zero"))
    claims.append(Claim(f"{max_claim} (equivariant layers)", f"mean and {lse} (both) against max equivariant layers",
                        (equivariant_beats_max(plain), equivariant_beats_max(lse)),
                        gap=gap_of["max-type aggregations fall behind"], note=note, key="max-behind/equivariant",
                        part="equivariant layers"))
    claims.append(Claim(f"{max_claim} (final aggregation)", f"mean and {lse} (both) against max final aggregation",
                        (final_beats_max(plain), final_beats_max(lse)),
                        gap=gap_of["max-type aggregations fall behind"], note=note, key="max-behind/final",
                        part="final aggregation"))
    claims.append(Claim(f"{max_claim} (peaks worse than EM)",
                        f"share of {PEAK_BATCH}-run batches whose best is worse than EM: max equivariant layers minus "
                        f"mean and minus {lse} (both), per seed",
                        tuple(_more_peaks_worse_than_em(metric, equivariant_group(maximum), equivariant_group(e),
                                                        f"max vs {e} equivariant layers") for e in (plain, lse)),
                        gap=gap_of["max-type aggregations fall behind"],
                        note="per seed: max's share of batches worse than EM minus the other's", key="max-behind/peaks",
                        part="peaks worse than EM"))
    return claims


def lme_against_lse(results: dict, summary: str = "median") -> list[dict]:
    r"""Log-mean-exp against the paper's LSE, configuration by configuration (not in the paper).

    Each of the paper's 20 configurations with LSE is paired with its twin, every LSE replaced by
    log-mean-exp (:func:`~setfuncs.experiments.sweeps.lme_twins`), seed by seed, on the run's metric at
    :math:`n = 100` (:func:`~setfuncs.experiments.mixture.metric.metric_by_run` with ``summary``; a run that
    collapsed or diverged counts as :math:`+\infty`): :math:`d_s` is the ``"wins"`` score of
    :func:`~setfuncs.experiments.findings.claims.matched`, +1 where the twin's metric is lower (better), -1
    where it is higher, 0 for two failed runs. Two-sided sign-flip tests, Holm-corrected over the 20 pairs
    and a pooled row (spec ``"all"``: :math:`d_s` the mean over the pairs, the net share of pairs the twin
    wins) (:func:`~setfuncs.experiments.findings.twins.lme_against_lse`).

    One row per pair, the pooled row last (keys ``spec, twin, at`` and those of ``compare_pairs``).
    """
    from ..findings import lme_against_lse as twins_against
    from ..sweeps import lme_twins, spec_of

    specs = [spec_of(*lse) for lse, _ in lme_twins()]
    return twins_against({"metric": metric_by_run(results, summary)}, specs, "wins", pooled=True)
