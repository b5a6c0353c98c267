r"""The paper's own statistic tested: Table 1's median best MSE, by swapping setting labels within seeds.

The paper reads its four row claims from Table 1's peaks: the median over bootstrap batches of 20 runs
of each batch's best MSE (:func:`~setfuncs.experiments.circle.table.median_best`). The findings
(:mod:`~setfuncs.experiments.circle.findings`) test the typical trained model; this module tests the
paper's statistic on the same runs. For "setting A beats setting B" the statistic is

.. math:: T = \ln \widetilde{\text{best}}_B - \ln \widetilde{\text{best}}_A,

the log ratio of the two rows' median best MSEs (positive: A is better), each row's runs by
configuration and seed, a failed run counting as an infinite MSE. Under the null that the two settings
are exchangeable within every seed (their nine matched configurations trained on that seed's stream),
swapping the two settings' runs of any set of seeds leaves the distribution of the runs unchanged, so
the :math:`2^n` swap patterns give an exact test of :math:`T` (:func:`~setfuncs.experiments.peaks.swap_test`),
whatever a peak's distribution. A rejection says that the two rows differ, in the direction of the
one-sided p-value; it is a test of the settings, not of the paper's numbers.

Each claim's p-value weighs its two directions as the findings do (:data:`~setfuncs.experiments.findings.claims.CLAIM_SHARE`),
"recurrent/recurrent is the best row" takes the largest of its three parts' p-values (intersection-union)
and, for the opposite, Bonferroni's :math:`3 \min_i p_i` (the swaps of different pairs of rows are not one
group, so no joint test), and the four claims are Holm-corrected together: the peak column is its own
family of the paper's claims. The centre claim compares targets, not settings, and the paper reads it
from the best run of each row: its peak column is the findings' own measure on every seed's best run
(the lowest MSE of the seed's runs), with the sign test over seeds.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..findings import ALPHA, CLAIM_SHARE
from ..paired import holm, sign_test
from ..peaks import median_peaks, swap_test
from ..results import sorted_runs
from ..schema import finished_runs
from ..sweeps import SETTINGS, VARIANTS, in_variant, spec_of
from .findings import centre_baseline
from .metric import mse_by_run

__all__ = ["PEAK_CLAIMS", "setting_metrics", "peak_findings", "peak_agreement", "peak_html", "disagreements"]

PP, PR, RP, RR = SETTINGS
#: The row claims of Section 4.1 by their findings keys, each ``(better, (worse, ...))``.
PEAK_CLAIMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "recurrent-equivariant-improve": (RP, (PP,)),
    "recurrent-aggregations-improve": (PR, (PP,)),
    "equivariant-larger-boost": (RP, (PR,)),
    "recurrent-best-row": (RR, (PP, PR, RP)),
}


def setting_metrics(results: dict, setting: str, variant: str = "paper") -> np.ndarray:
    """``[seeds, configurations]``: every seed's test MSE of each of ``setting``'s configurations in
    ``variant``'s grid (``+inf`` for a failed run), seeds in order, configurations in the order of their
    specs, so that flattened unit by unit the runs stand in Table 1's order
    (:func:`~setfuncs.experiments.results.sorted_runs`) and the observed median best is Table 1's; a
    ValueError where a seed lacks one of them (the swaps need every seed complete)."""
    families = VARIANTS[variant]
    metric = mse_by_run(results)
    specs = sorted(spec_of(setting, e, f) for e in families for f in families)     # Table 1's order of runs
    seeds = sorted({seed for (spec, seed) in metric if spec in specs})
    missing = [(spec, seed) for seed in seeds for spec in specs if (spec, seed) not in metric]
    if not seeds or missing:
        raise ValueError(f"the swap test needs every configuration of {setting!r} at every seed; missing "
                         f"{missing[:4] or 'every run'}")
    return np.array([[metric[(spec, seed)] for spec in specs] for seed in seeds])


def _log_ratio(batch_size: int, bootstraps: int, seed: int):
    def statistic(better: np.ndarray, worse: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (np.log(median_peaks(worse, batch_size, bootstraps, seed))
                    - np.log(median_peaks(better, batch_size, bootstraps, seed)))
    return statistic


def _best_run_centre(results: dict, variant: str) -> tuple[np.ndarray, int]:
    """Per seed, ln centre MSE - ln radius MSE of the seed's best run minus a constant predictor's
    (:func:`~setfuncs.experiments.circle.findings.centre_baseline`), and the seeds."""
    best: dict[int, dict] = {}
    for run in sorted_runs(finished_runs(results)):
        if in_variant(run, variant) and np.isfinite(run.get("mse") or np.nan):
            if run["seed"] not in best or run["mse"] < best[run["seed"]]["mse"]:
                best[run["seed"]] = run
    zero = centre_baseline(results)
    d = np.array([np.log(r["center_mse"]) - np.log(r["radius_mse"]) - zero for _, r in sorted(best.items())])
    return d, len(d)


def peak_findings(results: dict, variant: str = "paper", batch_size: int = 20, bootstraps: int = 1000,
                  seed: int = 0) -> list[dict[str, Any]]:
    """One row per claim of Section 4.1 (the findings' keys), the paper's statistic tested (module
    docstring). Keys: ``key``, ``statistic`` (in words), ``estimate`` (the observed log ratio of median
    bests, for the best-row claim its smallest part; the median over seeds for the centre), ``seeds``,
    ``p_value``, ``adjusted`` (Holm over the rows), ``decided`` and ``direction`` (``"as claimed"``,
    ``"against the claim"`` or ``"undecided"``)."""
    statistic = _log_ratio(batch_size, bootstraps, seed)
    metrics = {s: setting_metrics(results, s, variant) for s in SETTINGS}
    rows: list[dict[str, Any]] = []
    for key, (better, worse) in PEAK_CLAIMS.items():
        forward, backward, estimates = [], [], []
        for other in worse:
            forward.append(swap_test(metrics[better], metrics[other], statistic, "greater"))
            backward.append(swap_test(metrics[better], metrics[other], statistic, "less"))
            estimates.append(float(statistic(metrics[better].T.reshape(1, -1), metrics[other].T.reshape(1, -1))[0]))
        p_claim, p_opposite = max(forward), min(1.0, len(worse) * min(backward))
        rows.append(_row(key, f"ln median best MSE ({'|'.join(worse)}) - ln median best MSE ({better}), "
                              f"batches of {batch_size}", min(estimates), len(metrics[better]), p_claim, p_opposite))
    centre, n = _best_run_centre(results, variant)
    rows.append(_row("centre", "ln centre MSE - ln radius MSE of each seed's best run, minus a constant "
                               "predictor's; the median over seeds, sign test", float(np.median(centre)), n,
                     sign_test(centre, "greater"), sign_test(centre, "less")))
    for row, adjusted in zip(rows, holm([r["p_value"] for r in rows])):
        claims = row.pop("_claims")
        row["adjusted"] = float(adjusted)
        row["decided"] = bool(adjusted <= ALPHA)
        row["direction"] = ("as claimed" if claims else "against the claim") if row["decided"] else "undecided"
    return rows


def _row(key: str, statistic: str, estimate: float, seeds: int, p_claim: float, p_opposite: float) -> dict:
    weighted = (p_claim / CLAIM_SHARE, p_opposite / (1 - CLAIM_SHARE))
    return {"key": key, "statistic": statistic, "estimate": estimate, "seeds": seeds,
            "p_value": min(1.0, *weighted), "_claims": weighted[0] <= weighted[1]}


def peak_agreement(peaks: Sequence[dict], findings: Sequence[Any]) -> list[dict[str, Any]]:
    """The peak rows beside the findings' verdicts of the same keys and variant ``"paper"`` (or ``"both"``):
    each row gains ``words`` (the claim's), ``verdict`` (the typical run's) and ``agree`` (whether the peak test's direction says
    what the verdict says: decided as claimed where reproduced, against where not reproduced or
    contradicted, undecided where undecided)."""
    verdicts = {f.key: f.verdict for f in findings if f.variant in ("paper", "both")}
    words = {f.key: f.words for f in findings if f.variant in ("paper", "both")}
    expected = {"reproduced": "as claimed", "undecided": "undecided", "not reproduced": "against the claim",
                "contradicted": "against the claim"}
    out = []
    for row in peaks:
        verdict = verdicts.get(row["key"])
        if verdict is None:
            raise ValueError(f"no finding has the peak row's key {row['key']!r}; the findings' keys are {sorted(verdicts)}")
        out.append({**row, "words": words[row["key"]], "verdict": verdict, "agree": expected[verdict] == row["direction"]})
    return out


def peak_html(rows: Sequence[dict[str, Any]]) -> str:
    """The rows of :func:`peak_agreement` as an HTML table: the claim, the paper's statistic, its estimate,
    Holm p, what the peaks say, the typical run's verdict and whether they agree."""
    from setfuncs.tables import html_table

    return html_table([{**row, "agree": "yes" if row["agree"] else "no"} for row in rows], [
        ("words", "the paper's claim", "{}"), ("statistic", "the paper's statistic", "{}"),
        ("estimate", "estimate", "{:.3f}"), ("adjusted", "Holm p", "{:.2g}"), ("direction", "peaks", "{}"),
        ("verdict", "typical run", "{}"), ("agree", "agree", "{}")],
        caption="The paper's median best MSE, tested by swapping rows within seeds")


def disagreements(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per row of :func:`peak_agreement` whose peaks and typical run disagree."""
    return [f"{row['key']}: the typical run says {row['verdict']}, the paper's statistic {row['direction']} "
            f"(estimate {row['estimate']:.3f}, Holm p {row['adjusted']:.2f})" for row in rows if not row["agree"]]
