r"""The paper's findings on Table 1, tested on a sweep's runs (:mod:`setfuncs.experiments.findings`).

The statistic of a setting (a row of Table 1) is the paper's *median best MSE*
(:func:`~setfuncs.experiments.peaks.median_peak`, batches of 20): the typical best MSE of a
study of 20 runs, which, unlike the best of all runs, does not grow better with the number of
runs. Comparisons are log ratios, so "row A is better than row B" is
:math:`\ln T_B - \ln T_A > 0`. The intervals resample the runs of every configuration; a run that
diverged or collapsed, or whose MSE is not finite, counts as an infinite MSE, the worst outcome
(:mod:`setfuncs.experiments.findings`).
"""

from __future__ import annotations

import os

import numpy as np

from ..findings import Claim, Finding, bootstrap, bootstrap_findings, favoured
from ..peaks import finite_metric, median_peak
from ..schema import finished_runs
from ..sweeps import SETTINGS, lme_twins, spec_of
from .table import paper_rows, usable_runs

__all__ = ["circle_findings", "mse_by_spec", "lme_against_lse"]

PP, PR, RP, RR = SETTINGS


def circle_findings(results: dict, paper: str | os.PathLike | None = None, variant: str = "paper",
                    batch_size: int = 20, bootstraps: int = 1000, resamples: int = 500, seed: int = 0
                    ) -> list[Finding]:
    """The findings of Section 4.1 on ``results`` for ``variant`` (``"paper"`` or ``"lme"``); with
    ``paper`` (``results/paper-results.json``) each claim quotes the paper's Table 1."""
    theirs = paper_rows(paper) if paper is not None else None

    def quote(*settings: str) -> str:
        if theirs is None:
            return ""
        values = ", ".join(f"{s} {theirs[s]['median_best_mse']:.2f}" for s in settings)
        return f" (the paper's median best MSE: {values})"

    groups, setting_of = {}, {}
    for setting in SETTINGS:
        for run in usable_runs(results, setting, variant)[1]:
            setting_of[run["spec"]] = setting
            usable = finite_metric(run, "mse") is not None
            groups.setdefault(run["spec"], []).append(
                (run["mse"], run["center_mse"], run["radius_mse"]) if usable else (np.inf, np.nan, np.nan))
    if {setting_of[s] for s in groups} != set(SETTINGS):
        raise ValueError(f"the findings need runs of all four settings; found {sorted(set(setting_of.values()))}")
    groups = {spec: np.array(rows, dtype=float) for spec, rows in groups.items()}

    def log_t(sample: dict[str, np.ndarray]) -> dict[str, float]:
        pooled = {s: np.concatenate([v[:, 0] for spec, v in sample.items() if setting_of[spec] == s]) for s in SETTINGS}
        return {s: np.log(median_peak(mse, batch_size, bootstraps, seed)) for s, mse in pooled.items()}

    def row_gap(better: str, worse: str | tuple[str, ...]):
        others = (worse,) if isinstance(worse, str) else worse
        return lambda sample: (lambda t: min(t[o] for o in others) - t[better])(log_t(sample))

    def centre_over_radius(sample: dict[str, np.ndarray]) -> float:
        rows = np.concatenate(list(sample.values()))
        rows = rows[np.isfinite(rows[:, 0])]
        return float(np.log(np.median(rows[:, 1]) / np.median(rows[:, 2])))

    centre_quote = "" if theirs is None else " (the paper's best runs: " + ", ".join(
        f"{s} centre {theirs[s]['center_mse']:.2f}, radius {theirs[s]['radius_mse']:.2f}" for s in SETTINGS) + ")"
    note = "T: median best MSE of 20-run batches; a failed run counts as +inf"
    claims = [
        ("recurrent equivariant layers improve the performance" + quote(RP, PP),
         "ln T(plain/plain) - ln T(recurrent/plain)", row_gap(RP, PP)),
        ("recurrent aggregations improve the performance" + quote(PR, PP),
         "ln T(plain/plain) - ln T(plain/recurrent)", row_gap(PR, PP)),
        ("equivariant layers grant the larger boost" + quote(RP, PR),
         "ln T(plain/recurrent) - ln T(recurrent/plain)", row_gap(RP, PR)),
        ("recurrent/recurrent is the best row" + quote(*SETTINGS),
         "min over the other rows of ln T - ln T(recurrent/recurrent)", row_gap(RR, (PP, PR, RP))),
        ("the challenge lies mostly in the centre" + centre_quote,
         "ln(median centre MSE / median radius MSE) over all runs", centre_over_radius),
    ]
    return bootstrap_findings([Claim(claim, measure, groups, statistic, note=note)
                               for claim, measure, statistic in claims], variant, resamples, seed)


def mse_by_spec(results: dict) -> dict[str, np.ndarray]:
    """Every configuration's test MSEs, one per finished run; a run that diverged or collapsed, or
    whose MSE is not finite, is +inf."""
    groups: dict[str, list[float]] = {}
    for run in finished_runs(results):
        mse = finite_metric(run, "mse")
        groups.setdefault(run["spec"], []).append(np.inf if mse is None else mse)
    return {spec: np.array(values, dtype=float) for spec, values in groups.items()}


def _log_gain(lse: np.ndarray, lme: np.ndarray) -> float:
    """ln(median of ``lse`` / median of ``lme``): positive when log-mean-exp's runs have the lower median MSE."""
    return float(np.log(np.median(lse)) - np.log(np.median(lme)))


def lme_against_lse(results: dict, resamples: int = 500, seed: int = 0) -> tuple[list[dict], dict]:
    r"""Log-mean-exp against the paper's LSE, configuration by configuration (not in the paper).

    Each of the paper's 20 configurations with LSE is paired with the same configuration with every
    LSE replaced by log-mean-exp (:func:`~setfuncs.experiments.sweeps.lme_twins`). A pair's
    statistic is :math:`g = \ln(\tilde m_{\text{LSE}} / \tilde m_{\text{lme}})`, the log ratio of the two
    median test MSEs over seeds (positive: log-mean-exp is better; a diverged or collapsed run counts
    as +inf); its 95 % interval resamples the runs of both configurations
    (:func:`~setfuncs.experiments.findings.bootstrap`), and ``better`` says which aggregation the
    whole interval favours (``"log-mean-exp"``, ``"LSE"``) or ``"undecided"`` when it contains 0.

    Returns one row per pair with runs of both (keys ``setting, spec, twin, runs, twin_runs,
    median_mse, twin_median_mse, ratio`` (= twin / spec), ``log_gain, low, high, better``) and the
    pooled row (keys ``pairs, log_gain, low, high, better``): the mean of :math:`g` over the pairs,
    its interval resampling every configuration's runs at once.
    """
    groups = mse_by_spec(results)
    pairs = [(lse[0], spec_of(*lse), spec_of(*lme)) for lse, lme in lme_twins()]
    pairs = [(setting, a, b) for setting, a, b in pairs if a in groups and b in groups]
    if not pairs:
        raise ValueError("lme_against_lse needs runs of an LSE configuration and of its log-mean-exp twin; "
                         "run the sweep with its default configurations")
    rows = []
    for index, (setting, spec, twin) in enumerate(pairs):
        estimate, low, high = bootstrap({spec: groups[spec], twin: groups[twin]},
                                        lambda g: _log_gain(g[spec], g[twin]), resamples, seed + index)
        lse_median, lme_median = float(np.median(groups[spec])), float(np.median(groups[twin]))
        rows.append({"setting": setting, "spec": spec, "twin": twin, "runs": len(groups[spec]),
                     "twin_runs": len(groups[twin]), "median_mse": lse_median, "twin_median_mse": lme_median,
                     "ratio": lme_median / lse_median, "log_gain": estimate, "low": low, "high": high,
                     "better": favoured(low, high)})
    used = {name: groups[name] for _, spec, twin in pairs for name in (spec, twin)}
    estimate, low, high = bootstrap(used, lambda g: float(np.mean([_log_gain(g[a], g[b]) for _, a, b in pairs])),
                                    resamples, seed)
    return rows, {"pairs": len(pairs), "log_gain": estimate, "low": low, "high": high, "better": favoured(low, high)}
