r"""The paper's findings on Figure 3b, tested on a sweep's runs (:mod:`setfuncs.experiments.findings`).

The statistic of a group of runs (a violin) is its **peak**: the median over bootstrap batches of 5
runs of each batch's best metric (:func:`~setfuncs.experiments.peaks.median_peak`; lower is
better, negative means EM is outperformed). "Group A is better than group B" is
:math:`P_B - P_A > 0`. The intervals resample the runs of every configuration; a run that diverged
or collapsed, or whose metric is not finite, counts as :math:`+\infty`, the worst outcome
(:mod:`setfuncs.experiments.findings`).
"""

from __future__ import annotations

import os

import numpy as np

from ..findings import Claim, Finding, bootstrap_findings
from ..peaks import batch_peaks, finite_metric, median_peak
from ..sweeps import VARIANTS
from .table import paper_findings, variant_runs

__all__ = ["mixture_findings"]


def mixture_findings(results: dict, paper: str | os.PathLike | None = None, variant: str = "paper",
                     batch_size: int = 5, bootstraps: int = 1000, resamples: int = 500, seed: int = 0
                     ) -> list[Finding]:
    """The findings of Section 4.2 on ``results`` for ``variant`` (``"paper"`` or ``"lme"``); with
    ``paper`` (``results/paper-results.json``) the claims are the paper's words."""
    boost_claim, lse_claim, max_claim = (paper_findings(paper) if paper is not None else
                                         ("learnable equivariant layers boost every reduction",
                                          "LSE benefits most from learnable inputs", "max-type aggregations fall behind"))
    families = VARIANTS[variant]
    plain, maximum, lse = "mean", "max", families[2]
    groups: dict[str, list[float]] = {}
    kind: dict[str, tuple[str, bool, str, bool]] = {}
    for run in variant_runs(results, variant):
        value = finite_metric(run, "metric")
        groups.setdefault(run["spec"], []).append(np.inf if value is None else value)
        e_setting, f_setting = run["setting"].split("/")
        kind[run["spec"]] = (run["equivariant"], e_setting == "recurrent", run["final"], f_setting == "recurrent")
    arrays = {spec: np.array(values, dtype=float) for spec, values in groups.items()}

    def peak(sample: dict[str, np.ndarray], by: str, family: str, learnable: bool | None) -> float:
        index = 0 if by == "equivariant" else 2
        pooled = [v for spec, v in sample.items() if kind[spec][index] == family
                  and (learnable is None or kind[spec][index + 1] == learnable)]
        if not pooled:
            raise ValueError(f"no runs with {by} aggregation {'r-' if learnable else ''}{family}")
        return median_peak(np.concatenate(pooled), batch_size, bootstraps, seed)

    def boost(sample: dict[str, np.ndarray], family: str) -> float:
        return peak(sample, "equivariant", family, False) - peak(sample, "equivariant", family, True)

    def behind(by: str):
        return lambda s: peak(s, by, maximum, None) - max(peak(s, by, plain, None), peak(s, by, lse, None))

    def max_peaks_above_zero(sample: dict[str, np.ndarray]) -> float:
        pooled = np.concatenate([v for spec, v in sample.items() if kind[spec][0] == maximum])
        return float(np.mean(batch_peaks(pooled, batch_size, bootstraps, seed) > 0))

    # the claims are the paper's (about lse) in both variants, so a findings table prints each once;
    # the measures name the aggregation measured (lme in the lme variant)
    claims = [(f"{boost_claim} ({paper_family})", f"P({f} equivariant) - P(r-{f} equivariant)",
               lambda s, f=f: boost(s, f)) for paper_family, f in zip(VARIANTS["paper"], families)]
    claims += [
        (lse_claim,
         f"boost({lse}) - max(boost(mean), boost(max)); boost(f) = P(f) - P(r-f), equivariant",
         lambda s: boost(s, lse) - max(boost(s, plain), boost(s, maximum))),
        (f"{max_claim} (equivariant layers)",
         f"P(max) - max(P(mean), P({lse})), equivariant, plain and learnable pooled", behind("equivariant")),
        (f"{max_claim} (final aggregation)",
         f"P(max) - max(P(mean), P({lse})), final, plain and learnable pooled", behind("final")),
        (f"{max_claim} (peaks worse than EM)",
         "share of 5-run peaks with metric > 0, max equivariant layers", max_peaks_above_zero),
    ]
    note = "P: median over 5-run batches of the best metric (lower is better; a failed run counts as +inf)"
    return bootstrap_findings([Claim(claim, measure, arrays, statistic, note=note)
                               for claim, measure, statistic in claims], variant, resamples, seed)
