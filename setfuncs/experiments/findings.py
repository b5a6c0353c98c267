r"""Findings: the paper's claim, our estimate with a bootstrap confidence interval, and a verdict.

Every experiment chapter ends with a table of :class:`Finding` rows. A finding's statistic is a
function of the runs of several configurations; its uncertainty comes from the seeds. The
**bootstrap** (:func:`bootstrap`) resamples the runs of every configuration with replacement,
keeping each configuration's number of runs, recomputes the statistic ``resamples`` times, and
reports the 2.5 % and 97.5 % percentiles: a 95 % percentile interval over what other seeds might
have given (not over other data sets, budgets or code).

**Runs that failed to learn.** Peak statistics (the best of a batch of runs, as in Table 1 and
Figure 3b, :mod:`~setfuncs.experiments.peaks`) count a run that diverged or collapsed to a constant,
or whose metric is not a finite number (:func:`~setfuncs.experiments.peaks.finite_metric`), as the
worst possible outcome (:math:`+\infty`): it never sets a batch's best unless every run of the
batch failed, and a group in which most batches failed has an infinite peak. Differences of two
infinite peaks are undefined (NaN) and give the verdict *undecided*. Means (accuracies, ELBOs)
leave such runs out. Either way the tables count them.

**Verdicts** (:func:`verdict`), for a claim that a statistic is positive (the finding's
``measure`` says what it is; a claim of "smaller" is turned into a positive difference):

* *reproduced*: the whole interval lies above 0 (or above ``-margin`` for a claim of "on par");
* *reversed*: the whole interval lies below 0: the opposite holds;
* *not reproduced*: the interval lies below ``-margin`` for a claim of "on par", or, for a claim
  made of several parts (:func:`combine`), a part is reversed or not reproduced;
* *undecided*: the interval contains 0: these runs cannot tell.

A claim that a statistic is *not* reliably positive (e.g. "plain aggregations do not improve at
every step") turns the first two round: an interval below 0 reproduces it, one above 0 does not.

Every experiment's findings are a list of :class:`Claim` (the claim, its measure, the groups of runs
and the statistic) that :func:`bootstrap_findings` turns into :class:`Finding` rows.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

__all__ = ["VERDICTS", "RESAMPLES", "LEVEL", "VARIANT_TITLES", "Finding", "Claim", "bootstrap", "verdict", "favoured",
           "combine", "bootstrap_findings", "findings_rows", "format_findings", "findings_html"]

#: The four verdicts, from agreement with the paper to disagreement.
VERDICTS = ("reproduced", "undecided", "not reproduced", "reversed")
#: Bootstrap resamples of the runs.
RESAMPLES = 1000
#: The confidence level of every interval.
LEVEL = 0.95
#: What the two variants of a table are, in a heading.
VARIANT_TITLES = {"paper": "the paper's aggregations (mean, max, LSE)",
                  "lme": "log-mean-exp in place of LSE (not in the paper)"}
#: What the two variants are in a findings table's column "with".
VARIANT_LABELS = {"paper": "LSE (paper)", "lme": "log-mean-exp"}


@dataclass(frozen=True)
class Finding:
    """One row of a chapter's findings table.

    Attributes:
        claim: the paper's claim (its words, or its table's numbers, labelled as the paper's).
        measure: what we computed, in words (its sign convention included).
        estimate, low, high: the statistic on all runs, and its 95 % bootstrap interval.
        verdict: one of :data:`VERDICTS`.
        variant: ``"paper"`` (the paper's LSE) or ``"lme"`` (log-mean-exp in its place).
        note: what else a reader needs (e.g. collapsed runs left out).
    """

    claim: str
    measure: str
    estimate: float
    low: float
    high: float
    verdict: str
    variant: str = "paper"
    note: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


@dataclass(frozen=True)
class Claim:
    """One claim to test on the runs: what :func:`bootstrap_findings` needs to make its :class:`Finding`.

    Attributes:
        claim: the paper's claim (as :attr:`Finding.claim`).
        measure: what ``statistic`` computes, in words (as :attr:`Finding.measure`).
        groups: the runs, one array per configuration with a row per run (as :func:`bootstrap` takes them).
        statistic: the number the claim is about, from (resampled) ``groups``.
        margin: None for a claim that the statistic is positive; a claim of "on par or better" holds
            if it is at least ``-margin`` (:func:`verdict`).
        positive: False for a claim that the statistic is not reliably positive (see the module;
            only without a margin).
        note: as :attr:`Finding.note`.
    """

    claim: str
    measure: str
    groups: Mapping[str, np.ndarray]
    statistic: Callable[[Mapping[str, np.ndarray]], float]
    margin: float | None = None
    positive: bool = True
    note: str = ""

    def __post_init__(self) -> None:
        if not self.positive and self.margin is not None:
            raise ValueError(f"a claim that a statistic is not positive takes no margin, got margin={self.margin!r}; "
                             f"state it as a claim that the statistic is positive instead")

    def judge(self, low: float, high: float) -> str:
        """The verdict on this claim from the interval ``[low, high]`` of its statistic."""
        found = verdict(low, high, self.margin)
        return found if self.positive else {"reproduced": "not reproduced", "reversed": "reproduced"}.get(found, found)


def bootstrap(groups: Mapping[str, np.ndarray], statistic: Callable[[Mapping[str, np.ndarray]], float],
              resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float, float]:
    """``(estimate, low, high)``: ``statistic(groups)`` and its :data:`LEVEL` percentile interval when
    the rows of every group (one group per configuration; a row per run, any trailing shape) are
    resampled with replacement, ``resamples`` times with ``numpy.random.default_rng(seed)``."""
    if not groups or any(len(v) == 0 for v in groups.values()):
        raise ValueError(f"every group needs at least one run; sizes {({k: len(v) for k, v in groups.items()})}")
    rng = np.random.default_rng(seed)
    values = np.array([statistic({k: v[rng.integers(0, len(v), len(v))] for k, v in groups.items()})
                       for _ in range(resamples)], dtype=float)
    tail = (1 - LEVEL) / 2
    # order statistics, not interpolation: a statistic may be infinite (see the module docstring)
    low, high = np.quantile(values, tail, method="lower"), np.quantile(values, 1 - tail, method="higher")
    return float(statistic(groups)), float(low), float(high)


def verdict(low: float, high: float, margin: float | None = None) -> str:
    """The verdict on a claim that the statistic is positive (``margin`` None) or at least
    ``-margin`` (a claim of "on par or better"), from its interval ``[low, high]``."""
    if np.isnan(low) or np.isnan(high):
        return "undecided"
    if margin is None:
        return "reproduced" if low > 0 else "reversed" if high < 0 else "undecided"
    if low > -margin:
        return "reproduced"
    return "not reproduced" if high < -margin else "undecided"


def favoured(low: float, high: float) -> str:
    """Which aggregation the interval ``[low, high]`` of a log-mean-exp-minus-LSE advantage (positive:
    log-mean-exp is better) favours: ``"log-mean-exp"``, ``"LSE"``, or ``"undecided"`` when it contains 0."""
    return {"reproduced": "log-mean-exp", "reversed": "LSE"}.get(verdict(low, high), "undecided")


def combine(verdicts: Sequence[str]) -> str:
    """The verdict on a claim made of several parts: reproduced only if every part is; not
    reproduced if any part is reversed or not reproduced; otherwise undecided."""
    if all(v == "reproduced" for v in verdicts):
        return "reproduced"
    if any(v in ("reversed", "not reproduced") for v in verdicts):
        return "not reproduced"
    return "undecided"


def bootstrap_findings(claims: Sequence[Claim], variant: str = "paper", resamples: int = RESAMPLES,
                       seed: int = 0) -> list[Finding]:
    """One :class:`Finding` per claim, in order: its statistic on all runs, its interval from
    :func:`bootstrap` (``resamples`` resamples, every claim's generator seeded with ``seed``) and the
    claim's verdict (:meth:`Claim.judge`), labelled with ``variant``."""
    found = []
    for claim in claims:
        estimate, low, high = bootstrap(claim.groups, claim.statistic, resamples, seed)
        found.append(Finding(claim.claim, claim.measure, estimate, low, high, claim.judge(low, high), variant,
                             claim.note))
    return found


def findings_rows(findings: Sequence[Finding]) -> list[dict]:
    """Plain dicts of the findings, for :func:`setfuncs.tables.html_table` or :func:`~setfuncs.tables.text_table`."""
    return [asdict(f) for f in findings]


def format_findings(findings: Sequence[Finding]) -> str:
    """The findings as text, one block each: the claim, the measure, the estimate with its interval,
    the verdict."""
    blocks = []
    for i, f in enumerate(findings, 1):
        blocks.append(f"{i}. [{f.variant}] {f.claim}\n   {f.measure}: {f.estimate:.4g} "
                      f"({LEVEL:.0%} interval {f.low:.4g} to {f.high:.4g}) -> {f.verdict}"
                      + (f"\n   ({f.note})" if f.note else ""))
    return "\n".join(blocks)


def findings_html(findings: Sequence[Finding], caption: str | None = None) -> str:
    """The findings as an HTML table: the paper's claim, the variant, what we measured (with the
    finding's note, which defines the measure's symbols), the estimate with its interval, and the
    verdict. The findings of one claim are rows next to each other (claims in the order they first
    occur, variants in their order within a claim) under one cell that holds the claim; variants
    that found the same (a measure that involves no LSE) share one row, marked "both". A note that
    every finding shares is said once, after the caption."""
    from setfuncs.tables import html_table

    claims = list(dict.fromkeys(f.claim for f in findings))
    ordered = sorted(findings, key=lambda f: claims.index(f.claim))          # stable: variants keep their order
    notes = {f.note for f in findings}
    shared = next(iter(notes)) if len(notes) == 1 else ""
    if shared:
        caption = f"{caption}; {shared}" if caption else shared
    same = ("claim", "measure", "estimate", "low", "high", "verdict")      # what two variants must share to merge
    rows: list[dict] = []
    for f in ordered:
        row = {**asdict(f), "variant": VARIANT_LABELS[f.variant],
               "measure": f"{f.measure} ({f.note})" if f.note and not shared else f.measure,
               "interval": f"{f.low:.3g} to {f.high:.3g}"}
        if rows and all(rows[-1][key] == row[key] for key in same) and rows[-1]["variant"] != row["variant"]:
            rows[-1]["variant"] = "both"
            continue
        rows.append(row)
    return html_table(rows, [("claim", "the paper's claim", "{}"), ("variant", "with", "{}"),
                             ("measure", "our measure", "{}"), ("estimate", "estimate", "{:.3g}"),
                             ("interval", f"{LEVEL:.0%} interval", "{}"), ("verdict", "verdict", "{}")],
                      caption=caption, span="claim")
