r"""Findings: the paper's claims, tested on runs paired by seed, one correction per table, and a verdict.

Every experiment chapter ends with a table of :class:`Finding` rows, one per claim of the paper.
A claim is tested on **comparisons paired by seed** (:class:`Comparison`): two configurations
trained with the same seed see the same training stream, so a comparison is the list of per-seed
differences :math:`d_s` of a statistic, oriented so that the claim says their mean is positive
(a claim of "on par or better" adds its ``margin``: :math:`d_s + \text{margin}`). Each comparison
of configurations is tested with the exact **sign-flip test**
(:func:`~setfuncs.experiments.paired.sign_flip_test`) in both directions, and its estimate is the
mean difference with Student's 95 % interval (:func:`~setfuncs.experiments.paired.t_interval`):
under the null the two configurations are exchangeable within a seed, so :math:`d_s` is symmetric
about 0, which is what the sign-flip test needs. A claim about one group's own level
(:attr:`Claim.comparative` False) or with a margin has no such symmetry; it is tested with the
exact **sign test** of the median (:func:`~setfuncs.experiments.paired.sign_test`), and its estimate
is the median with the distribution-free interval from order statistics
(:func:`~setfuncs.experiments.paired.median_interval`); its measure says so.

**Claims made of several comparisons.** "X is the best" is "X beats each of the others": every
part must hold, so its p-value in the claim's direction is the largest of its parts' (an
intersection-union test, valid at the level without a correction, conservative away from the
boundary), and the opposite (some part
fails significantly) is the smallest opposite p-value times the number of parts (Bonferroni). A
claim that holds if *any* part does ("does not improve at every step") swaps the two rules.

**Both directions, one error budget.** The paper states each claim's direction in advance, so
the claim's error budget :math:`\alpha` is split: a share :data:`CLAIM_SHARE` for deciding the
claim, the rest for deciding its opposite. The claim's p-value is
:math:`p = \min(1, p_\text{claim}/w, p_\text{opposite}/(1 - w))` with :math:`w` = :data:`CLAIM_SHARE`,
a valid p-value for "no difference" (a weighted Bonferroni over the two directions). With
:math:`w = 0.8` a single claim has the power of a one-sided test at 4 %: at 10 seeds, 87 % against
an effect of one standard deviation of normal differences (a two-sided test at 5 % has 79 %).

**One correction per table.** The p-values of every claim in a chapter's findings table (both
variants, a claim the two variants share counted once) are adjusted with **Holm's** step-down
procedure (:func:`~setfuncs.experiments.paired.holm`); a claim is *decided* when its adjusted
p-value is at most :data:`ALPHA`, in the direction that gave its p-value. When no claim is true
(a null copy of a results file, :mod:`~setfuncs.experiments.nulls`) the table decides any claim
with probability at most :data:`ALPHA`; ``tests/test_findings_calibration.py`` proves it by
simulation at the seed counts the chapters use. What Holm's procedure does not promise in general
is the rate of deciding a *direction* wrongly when some claims are true and others are not (a
small true effect of the other sign): each claim alone keeps that rate at most
:math:`w\alpha` in the claim's direction and :math:`(1 - w)\alpha` in the opposite one, before the
correction.

**Verdicts** (:data:`VERDICTS`):

* *reproduced*: the claim's direction is decided;
* *contradicted*: the opposite direction is decided, and our protocol matches the paper's on
  every axis the claim depends on (:mod:`~setfuncs.experiments.differences`);
* *not reproduced*: the opposite is decided on a protocol that differs from the paper's on such an
  axis (the note says which), or nothing is decided although the seeds had 80 % power to detect
  the effect the paper reports (:attr:`Claim.paper_effect`, in the measure's units);
* *undecided*: nothing is decided, and the seeds lacked that power. The row gives the smallest
  effect the seeds could detect with 80 % power (:func:`~setfuncs.experiments.paired.detectable_effect`
  of the claim's own test at its worst-case Holm level :math:`w\alpha/m`, times the differences'
  standard deviation): what these seeds cannot tell. A claim whose every part must hold needs
  every part decided: each part is given power :math:`1 - 0.2/k` for its :math:`k` parts, so that
  all of them pass together with probability at least 80 % (a union bound over the parts'
  failures).

With :math:`n` seeds a one-sided sign-flip p-value is at least :math:`2^{-n}`
(:func:`~setfuncs.experiments.paired.smallest_p_value`): three seeds never decide anything, five
only a claim alone in its table.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

import numpy as np

from .paired import (TESTS, detectable_effect, holm, median_interval, paired_differences, sign_flip_test, sign_test,
                     smallest_p_value, t_interval)

__all__ = ["VERDICTS", "ALPHA", "LEVEL", "POWER", "CLAIM_SHARE", "VARIANT_TITLES", "VARIANT_LABELS", "Comparison",
           "Claim", "Finding", "SCORES", "matched", "judge", "select", "compare_pairs", "opposite_floor", "opposite_needs", "decided", "findings_rows", "format_findings",
           "findings_html", "bound_text", "interval_text", "detectable_text", "detectable_phrase"]

#: The four verdicts, from agreement with the paper to disagreement.
VERDICTS = ("reproduced", "undecided", "not reproduced", "contradicted")
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
#: What the two variants are in a findings table's column "with".
VARIANT_LABELS = {"paper": "LSE (paper)", "lme": "log-mean-exp", "both": "both"}


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
        scores = _pair_scores(a, b, score)
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
    """One claim to test: what :func:`judge` needs to make its :class:`Finding`.

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

    def __post_init__(self) -> None:
        if not self.words:
            object.__setattr__(self, "words", self.claim)
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.test not in TESTS:
            raise ValueError(f"test must be one of {TESTS}, got {self.test!r}")


@dataclass(frozen=True)
class _Test:
    """A claim's two-directional test before the table's correction."""

    p_value: float
    claims: bool              # whether the p-value comes from the claim's direction
    shown: Comparison
    detectable: float = field(default=float("nan"))


def _directions(part: Comparison, margin: float, test: str = "sign-flip") -> tuple[float, float]:
    d = part.differences + margin
    one_sided = sign_flip_test if test == "sign-flip" else sign_test
    return one_sided(d, "greater"), one_sided(d, "less")


def _test(claim: Claim, family: int) -> _Test:
    """The claim's p-value (see the module), the direction it comes from, the comparison to show
    and the detectable effect at the worst-case Holm level of a table of ``family`` claims."""
    forward, backward = zip(*(_directions(p, claim.margin, claim.test) for p in claim.parts))
    k = len(claim.parts)
    if claim.combine == "all":
        p_claim, p_opposite = max(forward), min(1.0, k * min(backward))
        shown = claim.parts[int(np.argmax(forward))]
    else:
        p_claim, p_opposite = min(1.0, k * min(forward)), max(backward)
        shown = claim.parts[int(np.argmin(forward))]
    weighted = (p_claim / CLAIM_SHARE, p_opposite / (1 - CLAIM_SHARE))
    level = ALPHA * CLAIM_SHARE / family / (1 if claim.combine == "all" else k)
    # every part must pass for "all": each at power 1 - (1 - POWER)/k, so all pass with at least POWER
    power = 1 - (1 - POWER) / k if claim.combine == "all" else POWER
    effects = [_detectable(p, level, power, claim.test) for p in claim.parts]
    detectable = max(effects) if claim.combine == "all" else min(effects)
    return _Test(min(1.0, *weighted), weighted[0] <= weighted[1], shown, detectable)


def _detectable(part: Comparison, level: float, power: float = POWER, test: str = "sign-flip") -> float:
    """The effect the part's seeds detect with ``power`` at ``level`` by ``test``, in the differences' units."""
    n = len(part.seeds)
    if n < 2 or smallest_p_value(n) > level:
        return float("inf")
    return detectable_effect(n, level, power, test) * float(np.std(part.differences, ddof=1))


def _interval(part: Comparison, test: str = "sign-flip", level: float = LEVEL) -> tuple[float, float, float]:
    """The estimate and its ``level`` interval: the mean and Student's interval for the sign-flip
    test, the median and its order-statistic interval for the sign test (NaN bounds from one seed)."""
    if len(part.seeds) < 2:
        centre = float(part.differences.mean())
        return centre, float("nan"), float("nan")
    return t_interval(part.differences, level) if test == "sign-flip" else median_interval(part.differences, level)


def _verdict(claim: Claim, test: _Test, adjusted: float) -> tuple[str, bool, str]:
    """(verdict, decided, note) of a claim from its test and adjusted p-value."""
    notes = [claim.note] if claim.note else []
    if adjusted <= ALPHA and test.claims:
        return "reproduced", True, "; ".join(notes)
    if adjusted <= ALPHA:
        if not claim.gap:
            return "contradicted", True, "; ".join(notes)
        return "not reproduced", True, "; ".join(notes + [f"the opposite holds on our protocol, which differs "
                                                          f"from the paper's in: {claim.gap}"])
    # a detectable effect of 0 comes from differences that do not vary: no estimate of the power
    if claim.paper_effect is not None and claim.paper_effect > 0 and 0 < test.detectable <= claim.paper_effect:
        return "not reproduced", False, "; ".join(notes + [f"the seeds had {POWER:.0%} power against the "
                                                           f"paper's effect, {claim.paper_effect:.3g}"])
    return "undecided", False, "; ".join(notes)


def judge(claims: Sequence[tuple[str, Claim]]) -> list[Finding]:
    """One :class:`Finding` per ``(variant, claim)``, in order, with one Holm correction over the
    table's distinct claims (a claim both variants share, :meth:`Claim.hypothesis`, is one hypothesis
    and comes back once, as variant ``"both"``, where its first variant stood)."""
    distinct: dict[tuple, tuple[str, Claim]] = {}
    for variant, claim in claims:
        key = claim.hypothesis()
        distinct[key] = ("both", distinct[key][1]) if key in distinct and distinct[key][0] != variant else \
            distinct.get(key, (variant, claim))
    tests = {key: _test(claim, len(distinct)) for key, (_, claim) in distinct.items()}
    adjusted = dict(zip(tests, holm([t.p_value for t in tests.values()])))
    found = []
    for key, (variant, claim) in distinct.items():
        test = tests[key]
        verdict, is_decided, note = _verdict(claim, test, float(adjusted[key]))
        # the part shown is chosen by its p-value: an interval at 1 - (1 - LEVEL)/k for each of the k parts
        # (Bonferroni) covers all of them together, so it keeps LEVEL whichever part the data pick
        estimate, low, high = _interval(test.shown, claim.test, 1 - (1 - LEVEL) / len(claim.parts))
        shown = "" if len(claim.parts) == 1 else test.shown.label
        measure = f"{claim.measure} (shown: {shown})" if shown else claim.measure
        if claim.test == "sign":
            measure = f"{measure}; the median over seeds, sign test"
        found.append(Finding(claim.claim, measure, estimate, low, high, len(test.shown.seeds), test.p_value,
                             float(adjusted[key]), test.detectable, verdict, variant, is_decided, note,
                             claim.comparative, shown, claim.test, claim.key, claim.words, claim.part))
    return found


def select(findings: Sequence[Finding], key: str) -> list[Finding]:
    """The findings of claim ``key`` and of its parts (keys ``key/...``), in the table's order. A
    ValueError names the table's keys where none matches (a key renamed in its experiment's findings)."""
    chosen = [f for f in findings if f.key == key or f.key.startswith(key + "/")]
    if not chosen:
        raise ValueError(f"no finding has the key {key!r} or a part of it; the keys are "
                         f"{list(dict.fromkeys(f.key for f in findings))}")
    return chosen


def opposite_floor(parts: int, seeds: int) -> float:
    r"""The smallest p-value the opposite of a claim that needs all of its ``parts`` comparisons can have
    with ``seeds`` seeds: :math:`\min(1, k\, 2^{-n} / (1 - s))` with :math:`k` = ``parts``, :math:`n` = ``seeds``
    and :math:`s` = :data:`CLAIM_SHARE` (see :func:`opposite_needs`)."""
    return min(1.0, parts * smallest_p_value(seeds) / (1 - CLAIM_SHARE))


def opposite_needs(parts: int, seeds: int, claims: int) -> int | None:
    r"""How many of a table's other claims must be decided before the opposite of a claim that needs all
    of its ``parts`` comparisons can be decided; ``None`` where no outcome of these ``seeds`` decides it.

    The opposite, "some one comparison fails", has the p-value :math:`k \min_i p_i / (1 - s)` (:math:`k`
    parts, :math:`s` = :data:`CLAIM_SHARE`), at least :math:`p_o = k\, 2^{-n} / (1 - s)` with :math:`n`
    seeds (the floor of the exact sign-flip test, :func:`~setfuncs.experiments.paired.smallest_p_value`).
    Holm's step :math:`i` of :math:`m` (``claims``) decides a p-value of at most :math:`\alpha / (m - i + 1)`,
    so the opposite needs at least :math:`m - \lfloor \alpha / p_o \rfloor` claims decided before it, and
    these can be decided only if the table's first step can pass at all: :math:`m\, 2^{-n} / s \le \alpha`,
    no claim's p-value being below :math:`2^{-n} / s`.
    """
    if parts < 1 or claims < 1:
        raise ValueError(f"need parts >= 1 and claims >= 1, got {parts} and {claims}")
    floor = smallest_p_value(seeds)
    opposite = opposite_floor(parts, seeds)
    before = claims - int(ALPHA // opposite)
    if opposite > ALPHA or before >= claims or (before > 0 and claims * floor / CLAIM_SHARE > ALPHA):
        return None
    return max(0, before)


def compare_pairs(pairs: Mapping[str, Comparison], names: tuple[str, str], test: str = "sign-flip") -> list[dict]:
    """Two-sided paired tests of several comparisons (not claims of the paper), Holm-corrected together.

    Each comparison's differences are ``first - second`` of ``names``; a row per comparison, keys
    ``label, seeds, estimate, low, high, p_value, adjusted, better, test``, where ``better`` is the name
    the decided direction favours (adjusted p at most :data:`ALPHA`) or ``"undecided"``, and ``test``
    is ``test`` (for :func:`interval_text`). The
    two-sided p-value is :math:`\\min(1, 2 \\min(p_>, p_<))`. ``test``: ``"sign-flip"`` (the mean
    difference and Student's interval) for two configurations, exchangeable under the null;
    ``"sign"`` (the median and its order-statistic interval) for a quantity against zero, such as a
    change over training, which nothing makes symmetric.
    """
    rows = []
    for label, part in pairs.items():
        greater, less = _directions(part, 0.0, test)
        estimate, low, high = _interval(part, test)
        rows.append({"label": label, "seeds": len(part.seeds), "estimate": estimate, "low": low, "high": high,
                     "p_value": min(1.0, 2 * min(greater, less)), "_first": greater <= less, "test": test})
    for row, adjusted in zip(rows, holm([r["p_value"] for r in rows]) if rows else []):
        row["adjusted"] = float(adjusted)
        first = row.pop("_first")
        row["better"] = (names[0] if first else names[1]) if adjusted <= ALPHA else "undecided"
    return rows


def decided(findings: Sequence[Finding], comparative_only: bool = False) -> bool:
    """Whether the table decided any claim (any comparison of configurations, with ``comparative_only``)."""
    return any(f.decided for f in findings if f.comparative or not comparative_only)


def findings_rows(findings: Sequence[Finding]) -> list[dict]:
    """Plain dicts of the findings, for :func:`setfuncs.tables.html_table` or :func:`~setfuncs.tables.text_table`."""
    return [asdict(f) for f in findings]


def bound_text(value: float, spec: str) -> str:
    """``value`` in the format ``spec``, except that a fixed-point format (``f`` or ``%``) which would
    round a value that is not zero to zero shows its first significant digit instead: an interval's
    bound at :math:`-0.003` reads ``"-0.003"`` in ``".2f"``, not ``"-0.00"``, which could not tell
    whether the interval holds 0. A bound that is 0 is shown as 0 (never as ``-0``)."""
    if value == 0:
        return f"{0.0:{spec}}"
    text = f"{value:{spec}}"
    fixed = re.fullmatch(r"(.*)\.(\d+)([f%])", spec)
    if fixed is None or not math.isfinite(value) or any(c in "123456789" for c in text):
        return text
    magnitude = abs(value) * (100 if fixed.group(3) == "%" else 1)
    decimals = -math.floor(math.log10(magnitude))
    return f"{value:{fixed.group(1)}.{decimals}{fixed.group(3)}}"


def interval_text(low: float, high: float, spec: str = ".3g", test: str = "sign-flip") -> str:
    """``"low to high"`` in the format ``spec`` (each bound through :func:`bound_text`, so that a bound
    that is not 0 never reads as 0); ``"none from one seed"`` where the interval is
    undefined (NaN: Student's interval needs two paired differences, and a comparison of one seed
    has none); ``"unbounded: too few seeds"`` where a bound is infinite (the median's order-statistic
    interval from five seeds or fewer). An interval of no width (``low == high``) depends on the
    ``test`` it comes from: Student's (``"sign-flip"``) has it only where :math:`s_d = 0`, as
    accuracies on one test set can give with a few seeds, and a spread of 0 is no estimate of the
    spread: ``"none: the differences are all equal"``. The median's order-statistic interval
    (``"sign"``) has it wherever the two order statistics at its ends tie, which needs only the
    middle seeds to be equal, and it then keeps its level (the interval covers the median with
    at least its level for any distribution, ties included): ``"low to high (the differences tie)"``."""
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    if np.isnan(low) or np.isnan(high):
        return "none from one seed"
    if np.isinf(low) or np.isinf(high):
        return "unbounded: too few seeds"
    if low == high and test == "sign-flip":
        return "none: the differences are all equal"
    tie = " (the differences tie)" if low == high else ""
    return f"{bound_text(low, spec)} to {bound_text(high, spec)}{tie}"


def _interval_text(f: Finding) -> str:
    return "counted" if f.seeds == 0 else interval_text(f.low, f.high, test=f.test)


def detectable_text(f: Finding, spec: str = ".2g") -> str | None:
    """The smallest effect ``f``'s seeds detect with :data:`POWER`, in the format ``spec``;
    ``"none: too few seeds"`` where they detect no effect of any size (infinite: even every seed on
    the claim's side gives a p-value above the level); ``"unknown: the differences do not vary"``
    where it is 0 (the effect is a multiple of the differences' standard deviation, here 0); None
    for a counted claim (no seeds, NaN)."""
    if np.isnan(f.detectable):
        return None
    if np.isinf(f.detectable):
        return "none: too few seeds"
    return "unknown: the differences do not vary" if f.detectable == 0 else f"{f.detectable:{spec}}"


def detectable_phrase(f: Finding, spec: str = ".2g") -> str:
    """What an undecided claim's seeds could have detected, as a clause: ``"these seeds could detect
    no effect of any size"`` (infinite: too few seeds), ``"these seeds could detect no effect smaller
    than <detectable>"`` in the format ``spec``, or, where it is 0 (differences that do not vary),
    ``"how large an effect these seeds could detect is unknown: the differences do not vary"``; a
    ValueError for a counted claim (NaN), which has no test and no detectable effect."""
    if np.isnan(f.detectable):
        raise ValueError(f"the claim {f.claim!r} is counted, not tested: it has no detectable effect to phrase")
    if np.isinf(f.detectable):
        return "these seeds could detect no effect of any size"
    if f.detectable == 0:
        return "how large an effect these seeds could detect is unknown: the differences do not vary"
    return f"these seeds could detect no effect smaller than {f.detectable:{spec}}"


def _p_text(p: float) -> str:
    """A p-value to three digits, or ``n/a`` for a counted claim (not tested: NaN)."""
    return "n/a" if np.isnan(p) else f"{p:.3g}"


def format_findings(findings: Sequence[Finding]) -> str:
    """The findings as text, one block each: the claim, the measure, the estimate with its interval,
    the p-values and the verdict."""
    blocks = []
    for i, f in enumerate(findings, 1):
        blocks.append(f"{i}. [{f.variant}] {f.claim}\n   {f.measure}: {f.estimate:.4g} ({LEVEL:.0%} interval "
                      f"{_interval_text(f)}, {f.seeds} seeds), p = {_p_text(f.p_value)}, Holm {_p_text(f.adjusted)}, "
                      f"detectable {detectable_text(f, '.3g') or 'n/a (counted)'} -> {f.verdict}"
                      + (f"\n   ({f.note})" if f.note else ""))
    return "\n".join(blocks)


def findings_html(findings: Sequence[Finding], caption: str | None = None) -> str:
    """The findings as an HTML table: the paper's claim, the variant, what we measured (with the
    finding's note), the seeds, the estimate with its interval, the p-value and its Holm-adjusted
    value, the smallest effect the seeds detect with 80 % power, and the verdict. A note that every
    finding shares is said once, after the caption."""
    from setfuncs.tables import html_table

    notes = {f.note for f in findings}
    shared = next(iter(notes)) if len(notes) == 1 else ""
    if shared:
        caption = f"{caption}; {shared}" if caption else shared
    claims = list(dict.fromkeys(f.claim for f in findings))
    ordered = sorted(findings, key=lambda f: claims.index(f.claim))      # stable: a claim's variants side by side
    rows = [{**{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in asdict(f).items()},
             "variant": VARIANT_LABELS[f.variant],
             "measure": f"{f.measure} ({f.note})" if f.note and not shared else f.measure,
             "interval": _interval_text(f), "detectable": detectable_text(f)} for f in ordered]
    return html_table(rows, [("claim", "the paper's claim", "{}"), ("variant", "with", "{}"),
                             ("measure", "our measure", "{}"), ("seeds", "seeds", "{}"),
                             ("estimate", "estimate", "{:.3g}"), ("interval", f"{LEVEL:.0%} interval", "{}"),
                             ("p_value", "p", "{:.2g}"), ("adjusted", "Holm p", "{:.2g}"),
                             ("detectable", "detectable (80 %)", "{}"), ("verdict", "verdict", "{}")],
                      caption=caption, span="claim")
