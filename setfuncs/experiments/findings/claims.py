"""The claim model of a findings table: the constants, a :class:`Comparison` paired by seed, a
:class:`Claim` to test, the :class:`Finding` that reports it, and :func:`select` by key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..paired import TESTS, paired_differences

__all__ = ["VERDICTS", "ALPHA", "LEVEL", "POWER", "CLAIM_SHARE", "FAMILIES", "FAILED_RULES", "check_failed", "VARIANT_TITLES", "VARIANT_LABELS", "Comparison",
           "SCORES", "matched", "Claim", "Finding", "select"]

#: Four verdicts from agreement with the paper to disagreement, then "not comparable" for a counted
#: quantity our protocol fixes differently from the paper's (no outcome of ours bears on the claim).
VERDICTS = ("reproduced", "undecided", "not reproduced", "contradicted", "not comparable")
#: The family-wise error rate of a findings table.
ALPHA = 0.05
#: The confidence level of every interval (not corrected for the table).
LEVEL = 0.95
#: The power a "not reproduced" needs against the paper's effect, and at which "detectable" is given.
POWER = 0.8
#: The share of a claim's error budget spent on deciding the claim (the rest on its opposite).
CLAIM_SHARE = 0.8
#: What the two variants of a table are, in a heading.
VARIANT_TITLES = {"paper": "the paper's aggregations (mean, max, LSE)",
                  "lme": "log-mean-exp in place of LSE (not in the paper)"}
#: The families of a findings table, each corrected by Holm's procedure on its own (the paper's claims,
#: and the book's own, the log-mean-exp variant's), so that adding the book's claims never moves the paper's.
FAMILIES = {"paper": "the paper's claims", "book": "the book's own claims (log-mean-exp in place of LSE)"}
#: How a findings table counts a run that failed (diverged, collapsed, or, for attention, counted no better
#: than the most frequent count): against its configuration, the rule of every chapter, or left out, the
#: alternative its sensitivity column shows.
FAILED_RULES = {"against": "a failed run counts against its configuration (its worst outcome)",
                "dropped": "failed runs are left out"}
#: What the two variants are in a findings table's column "with".
VARIANT_LABELS = {"paper": "LSE (paper)", "lme": "log-mean-exp", "both": "both"}


def check_failed(failed: str) -> str:
    """``failed`` if it is one of :data:`FAILED_RULES`, else a ValueError naming the argument and the choices."""
    if failed not in FAILED_RULES:
        raise ValueError(f"failed must be one of {list(FAILED_RULES)} (how a failed run counts), got {failed!r}")
    return failed


@dataclass(frozen=True, eq=False)
class Comparison:
    """One comparison paired by seed: the per-seed differences, positive where the claim holds.

    Attributes:
        label: what is compared, e.g. ``"r-mean/max vs mean/max"``.
        seeds: the seeds both sides have, in order.
        differences: ``d_s``, one per seed (finite).
    """

    label: str
    seeds: tuple[int, ...]
    differences: np.ndarray

    def __post_init__(self) -> None:
        d = np.asarray(self.differences, dtype=float)
        if d.ndim != 1 or len(d) != len(self.seeds) or len(d) == 0 or not np.isfinite(d).all():
            raise ValueError(f"comparison {self.label!r}: differences must be one finite number per seed "
                             f"({len(self.seeds)} seeds), got {self.differences!r}")
        object.__setattr__(self, "differences", d)

    @classmethod
    def paired(cls, label: str, a: Mapping[int, float], b: Mapping[int, float]) -> Comparison:
        """``a[s] - b[s]`` over the seeds both maps (seed -> statistic) hold with finite values; a
        ValueError naming ``label`` if they share none."""
        seeds, d = paired_differences(a, b)
        if not seeds:
            raise ValueError(f"comparison {label!r}: the two sides share no seed with finite values")
        return cls(label, tuple(seeds), d)

    def minus(self, other: Comparison, label: str) -> Comparison:
        """The per-seed differences ``self - other`` over the seeds both have (a ValueError if none)."""
        return Comparison.paired(label, dict(zip(self.seeds, self.differences)), dict(zip(other.seeds, other.differences)))

    def key(self) -> tuple:
        """What makes two comparisons the same test."""
        return self.label, self.seeds, self.differences.tobytes()


#: How :func:`matched` scores a seed's matched pairs (``a`` against ``b``; positive: ``a`` is better).
SCORES = ("log ratio", "wins", "difference")


def _pair_scores(a: np.ndarray, b: np.ndarray, score: str) -> np.ndarray:
    if score == "log ratio":                        # lower is better, +inf a failed run: ln b - ln a
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.log(b) - np.log(a)
        return np.where(np.isinf(a) & np.isinf(b), 0.0, out)
    if score == "wins":                             # lower is better: +1 a win of a, -1 a loss, 0 a tie
        with np.errstate(invalid="ignore"):
            return np.where(np.isinf(a) & np.isinf(b), 0.0, np.sign(b - a))
    return a - b                                    # higher is better; NaN: left out


def matched(label: str, metric: Mapping[tuple[str, int], float], pairs: Sequence[tuple[str, str]],
            score: str) -> Comparison:
    r"""A :class:`Comparison` of configurations matched in ``pairs`` (``(a, b)`` specs), seed by seed.

    ``metric`` maps ``(spec, seed)`` to a run's value. At each seed that every spec of ``pairs``
    has, the pairs' scores are combined into :math:`d_s` (positive where the ``a`` side is better):

    * ``"log ratio"`` (a positive metric, lower is better, a failed run +inf): the median over the
      pairs of :math:`\ln m_b - \ln m_a`, two failed runs a tie (0); a ValueError if the median is
      infinite (most pairs of a seed failed on one side);
    * ``"wins"`` (lower is better, a failed run +inf): the mean over the pairs of
      :math:`\operatorname{sign}(m_b - m_a)`, the net share of pairs that ``a`` wins;
    * ``"difference"`` (higher is better, a failed run NaN): the mean over the pairs with two
      finite values of :math:`m_a - m_b`; a seed with no such pair is left out.

    Under every score a NaN is a run left out: the pairs it is in are left out, and a seed with no pair
    left is left out.
    """
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, got {score!r}")
    if not pairs:
        raise ValueError(f"comparison {label!r} needs at least one pair of configurations")
    specs = {spec for pair in pairs for spec in pair}
    seeds = sorted(set.intersection(*({s for (spec, s) in metric if spec == name} for name in specs)))
    kept, values = [], []
    for seed in seeds:
        a = np.array([metric[(x, seed)] for x, _ in pairs], dtype=float)
        b = np.array([metric[(y, seed)] for _, y in pairs], dtype=float)
        measured = ~(np.isnan(a) | np.isnan(b))            # NaN: a run left out, and its pair with it
        if not measured.any():
            continue
        scores = _pair_scores(a[measured], b[measured], score)
        if score == "difference":
            scores = scores[np.isfinite(scores)]
            if scores.size == 0:
                continue
            value = float(scores.mean())
        else:
            value = float(np.median(scores) if score == "log ratio" else scores.mean())
        if not np.isfinite(value):
            raise ValueError(f"comparison {label!r}: at seed {seed} most pairs have a failed run on one side, so "
                             f"the median log ratio is {value}; compare with score='wins' instead")
        kept.append(seed)
        values.append(value)
    if not kept:
        raise ValueError(f"comparison {label!r}: no seed has runs of every configuration of its pairs {list(pairs)}")
    return Comparison(label, tuple(kept), np.array(values))


@dataclass(frozen=True, eq=False)
class Claim:
    """One claim to test: what :func:`~setfuncs.experiments.findings.judge.judge` needs to make its :class:`Finding`.

    Attributes:
        claim: the paper's claim (its words, or its table's numbers, labelled as the paper's).
        measure: what the differences are, in words (their sign convention included).
        parts: the comparisons; the claim is that each one's mean (median, for a claim :attr:`test`
            tests with the sign test) is above ``-margin``.
        combine: ``"all"``: every part must hold; ``"any"``: one part suffices.
        margin: 0, or how far below zero a claim of "on par or better" allows.
        paper_effect: the paper's effect in the measure's units (the smallest over the parts), or
            None where the paper gives no number; a non-significant claim is *not reproduced* when
            the seeds had :data:`POWER` against it.
        gap: the axes on which our protocol is not known to match the paper's among those the claim
            depends on (:func:`~setfuncs.experiments.differences.gaps`); "" where it matches.
        comparative: False for a claim about one group's level rather than a comparison of
            configurations (a null copy leaves it true, so calibration does not count it).
        note: what else a reader needs.
        key: the claim's identifier in its experiment, the same in both variants (e.g.
            ``"recurrent-aggregations-improve"``, or ``"boost/mean"`` for one part of the paper's
            sentence): what chapters and teaching pages select a claim by, never its words.
        words: the claim's words without the paper's numbers (``claim`` is ``words`` followed by them,
            where the paper gives numbers); ``claim`` where empty.
        part: which part of the paper's sentence the claim tests (e.g. ``"ELBO"``), where the sentence is
            tested in parts; empty otherwise.
    """

    claim: str
    measure: str
    parts: tuple[Comparison, ...]
    combine: str = "all"
    margin: float = 0.0
    paper_effect: float | None = None
    gap: str = ""
    comparative: bool = True
    note: str = ""
    key: str = ""
    words: str = ""
    part: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", tuple(self.parts))
        if not self.words:
            object.__setattr__(self, "words", self.claim)
        if not self.parts:
            raise ValueError(f"claim {self.claim!r} needs at least one comparison")
        if self.combine not in ("all", "any"):
            raise ValueError(f"claim {self.claim!r}: combine must be 'all' or 'any', got {self.combine!r}")

    @property
    def test(self) -> str:
        """``"sign-flip"`` for a comparison of configurations with no margin (symmetric about 0 under the
        null), else ``"sign"`` (:mod:`~setfuncs.experiments.paired`)."""
        return "sign-flip" if self.comparative and self.margin == 0 else "sign"

    def hypothesis(self) -> tuple:
        """What makes two claims the same hypothesis (one row, one p-value, in a table of both variants)."""
        return (self.claim, self.measure, self.combine, self.margin, tuple(p.key() for p in self.parts))


@dataclass(frozen=True)
class Finding:
    """One row of a chapter's findings table.

    Attributes:
        claim, measure: as :class:`Claim`; ``measure`` names the comparison shown when there are several.
        estimate, low, high: the shown comparison's mean difference and its :data:`LEVEL` t interval,
            or, for a claim tested by the sign test, its median and order-statistic interval
            (unbounded with too few seeds for its level: five or fewer at 95 %); NaN bounds with one seed. For a claim of :math:`k`
            parts the shown part is picked by the data (the weakest, or for "any" the strongest), so
            its interval is made at :math:`1 - (1 - \text{LEVEL})/k`: Bonferroni's simultaneous
            intervals, which cover every part at once with at least :data:`LEVEL`.
        seeds: how many seeds it pairs.
        p_value, adjusted: the claim's p-value and its Holm-adjusted value over the table.
        detectable: the smallest effect (in the measure's units) the seeds detect with :data:`POWER`.
        verdict: one of :data:`VERDICTS`.
        variant: ``"paper"``, ``"lme"`` or ``"both"``.
        decided: whether a direction was decided (adjusted p at most :data:`ALPHA`).
        note: what else a reader needs.
        comparative: as :attr:`Claim.comparative`.
        shown: the label of the comparison shown, where the claim has several (``measure`` ends
            with it as ``"(shown: <label>)"``); empty for a claim of one comparison.
        test: :attr:`Claim.test`, the test behind the p-value and the interval (``"sign-flip"``: the mean
            and Student's interval; ``"sign"``: the median and its order-statistic interval).
        key, words, part: as :class:`Claim`.
        family: the family whose Holm correction gave ``adjusted`` (:data:`FAMILIES`).
    """

    claim: str
    measure: str
    estimate: float
    low: float
    high: float
    seeds: int
    p_value: float
    adjusted: float
    detectable: float
    verdict: str
    variant: str = "paper"
    decided: bool = False
    note: str = ""
    comparative: bool = True
    shown: str = ""
    test: str = "sign-flip"
    key: str = ""
    words: str = ""
    part: str = ""
    family: str = "paper"

    def __post_init__(self) -> None:
        if not self.words:
            object.__setattr__(self, "words", self.claim)
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {tuple(FAMILIES)}, got {self.family!r}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.test not in TESTS:
            raise ValueError(f"test must be one of {TESTS}, got {self.test!r}")


def select(findings: Sequence[Finding], key: str) -> list[Finding]:
    """The findings of claim ``key`` and of its parts (keys ``key/...``), in the table's order. A
    ValueError names the table's keys where none matches (a key renamed in its experiment's findings)."""
    chosen = [f for f in findings if f.key == key or f.key.startswith(key + "/")]
    if not chosen:
        raise ValueError(f"no finding has the key {key!r} or a part of it; the keys are "
                         f"{list(dict.fromkeys(f.key for f in findings))}")
    return chosen
