"""The judge of a findings table: each claim's two-directional test, one Holm correction per family
(the paper's claims, the book's own), the verdict, and what the seeds could never decide."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..paired import (detectable_effect, holm, joint_sign_flip_test, median_interval, sign_flip_test, sign_test,
                      smallest_p_value, t_interval, TESTS)
from .claims import ALPHA, CLAIM_SHARE, LEVEL, POWER, Claim, Comparison, Finding

__all__ = ["Weighed", "weigh", "family_of", "judge", "opposite_floor", "opposite_needs", "seeds_needed", "compare_pairs", "decided"]


@dataclass(frozen=True)
class Weighed:
    """A claim's two-directional test before the table's correction."""

    p_value: float
    claims: bool              # whether the p-value comes from the claim's direction
    shown: Comparison
    detectable: float = field(default=float("nan"))


def _directions(part: Comparison, margin: float, test: str = "sign-flip") -> tuple[float, float]:
    d = part.differences + margin
    one_sided = sign_flip_test if test == "sign-flip" else sign_test
    return one_sided(d, "greater"), one_sided(d, "less")


def _standardised(part: Comparison, margin: float) -> float:
    r"""The part's mean over its root mean square, :math:`\bar d / \sqrt{\overline{d^2}}` (0 where every
    difference is 0): how far it leans, on one scale for every part."""
    d = part.differences + margin
    scale = float(np.sqrt((d ** 2).mean()))
    return 0.0 if scale == 0 else float(d.mean()) / scale


def _some_part(claim: Claim, alternative: str, single: Sequence[float]) -> float:
    r"""The p-value of "some part lies on the side ``alternative``" (``greater``: holds; ``less``: fails).

    A claim tested by the sign-flip test: the joint sign-flip test with the maximum statistic over its
    parts (:func:`~setfuncs.experiments.paired.joint_sign_flip_test`) on the seeds every part has, exact
    whatever the parts' dependence. A claim tested by the sign test (no symmetry to flip) or whose parts
    share fewer than two seeds: Bonferroni over the parts' one-sided p-values ``single``,
    :math:`\min(1, k \min_i p_i)`."""
    common = sorted(set.intersection(*(set(p.seeds) for p in claim.parts)))
    if claim.test != "sign-flip" or len(common) < 2:
        return min(1.0, len(claim.parts) * min(single))
    parts = [[float(d) for s, d in zip(p.seeds, p.differences) if s in set(common)] for p in claim.parts]
    return joint_sign_flip_test(parts, alternative)


def _shown(claim: Claim, forward: Sequence[float], backward: Sequence[float], claims: bool) -> Comparison:
    """The part a row shows: of an all-claim the weakest (the largest p-value for the claim, ties to the
    part leaning most against it), or, where the opposite leads, the part leaning most against; of an
    any-claim the strongest (the smallest p-value for the claim, ties to the part leaning most for it),
    or, where the opposite leads, the part leaning most for it."""
    lean = [_standardised(p, claim.margin) for p in claim.parts]
    if claim.combine == "all":
        order = [(-f, l) for f, l in zip(forward, lean)] if claims else [(l,) for l in lean]
    else:
        order = [(f, -l) for f, l in zip(forward, lean)] if claims else [(-l,) for l in lean]
    return claim.parts[min(range(len(order)), key=order.__getitem__)]


def weigh(claim: Claim, family: int) -> Weighed:
    """The claim's p-value (see the module), the direction it comes from, the comparison to show
    and the detectable effect at the worst-case Holm level of a family of ``family`` claims."""
    forward, backward = zip(*(_directions(p, claim.margin, claim.test) for p in claim.parts))
    k = len(claim.parts)
    if k == 1:
        p_claim, p_opposite = forward[0], backward[0]
    elif claim.combine == "all":      # every part holds (intersection-union); some part fails (joint test)
        p_claim, p_opposite = max(forward), _some_part(claim, "less", backward)
    else:                             # some part holds (joint test); every part fails (intersection-union)
        p_claim, p_opposite = _some_part(claim, "greater", forward), max(backward)
    weighted = (p_claim / CLAIM_SHARE, p_opposite / (1 - CLAIM_SHARE))
    claims = weighted[0] <= weighted[1]
    level = ALPHA * CLAIM_SHARE / family
    # every part must pass for "all": each at power 1 - (1 - POWER)/k, so all pass with at least POWER
    power = 1 - (1 - POWER) / k if claim.combine == "all" else POWER
    effects = [_detectable(p, level, power, claim.test) for p in claim.parts]
    detectable = max(effects) if claim.combine == "all" else min(effects)
    return Weighed(min(1.0, *weighted), claims, _shown(claim, forward, backward, claims), detectable)


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


def _verdict(claim: Claim, test: Weighed, adjusted: float) -> tuple[str, bool, str]:
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


def family_of(variant: str) -> str:
    """The family a claim of ``variant`` is corrected in (:data:`~setfuncs.experiments.findings.claims.FAMILIES`):
    ``"paper"`` for the paper's claims (variant ``"paper"``, or ``"both"`` where both variants share the
    hypothesis), ``"book"`` for the book's own (the log-mean-exp variant's)."""
    return "paper" if variant in ("paper", "both") else "book"


def judge(claims: Sequence[tuple[str, Claim]], pooled: bool = False) -> list[Finding]:
    """One :class:`~setfuncs.experiments.findings.claims.Finding` per ``(variant, claim)``, in order, with one Holm
    correction per family (:func:`family_of`): the paper's claims are corrected among themselves, whatever
    else the call holds, and the book's own among themselves. A claim both variants share
    (:meth:`~setfuncs.experiments.findings.claims.Claim.hypothesis`) is one hypothesis of the paper's family and
    comes back once, as variant ``"both"``, where its first variant stood. ``pooled``: one correction over
    every claim of the call instead (the sensitivity of a verdict to the choice of family; each row keeps
    its family's name)."""
    distinct: dict[tuple, tuple[str, Claim]] = {}
    for variant, claim in claims:
        key = claim.hypothesis()
        distinct[key] = ("both", distinct[key][1]) if key in distinct and distinct[key][0] != variant else \
            distinct.get(key, (variant, claim))
    members: dict[str, list[tuple]] = {}
    for key, (variant, _) in distinct.items():
        members.setdefault("all" if pooled else family_of(variant), []).append(key)
    tests, adjusted = {}, {}
    for keys in members.values():
        tests.update({key: weigh(distinct[key][1], len(keys)) for key in keys})
        adjusted.update(zip(keys, holm([tests[key].p_value for key in keys])))
    found = []
    for key, (variant, claim) in distinct.items():
        test = tests[key]
        verdict, is_decided, note = _verdict(claim, test, float(adjusted[key]))
        # the part shown is chosen by the data: an interval at 1 - (1 - LEVEL)/k for each of the k parts
        # (Bonferroni) covers all of them together, so it keeps LEVEL whichever part the data pick
        estimate, low, high = _interval(test.shown, claim.test, 1 - (1 - LEVEL) / len(claim.parts))
        shown = "" if len(claim.parts) == 1 else test.shown.label
        measure = f"{claim.measure} (shown: {shown})" if shown else claim.measure
        if claim.test == "sign":
            measure = f"{measure}; the median over seeds, sign test"
        found.append(Finding(claim.claim, measure, estimate, low, high, len(test.shown.seeds), test.p_value,
                             float(adjusted[key]), test.detectable, verdict, variant, is_decided, note,
                             claim.comparative, shown, claim.test, claim.key, claim.words, claim.part,
                             family_of(variant)))
    return found


def opposite_floor(parts: int, seeds: int, test: str = "sign-flip") -> float:
    r"""The smallest p-value the opposite of a claim that needs all of its ``parts`` comparisons can have
    with ``seeds`` seeds: :math:`\min(1, 2^{-n} / (1 - s))` for a claim of the sign-flip test (the joint
    test's floor, whatever the number of parts), :math:`\min(1, k\, 2^{-n} / (1 - s))` for one of the sign
    test (Bonferroni over its :math:`k` parts), with :math:`n` = ``seeds`` and :math:`s` =
    :data:`~setfuncs.experiments.findings.claims.CLAIM_SHARE` (see :func:`opposite_needs`)."""
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    return min(1.0, (parts if test == "sign" else 1) * smallest_p_value(seeds) / (1 - CLAIM_SHARE))


def opposite_needs(parts: int, seeds: int, claims: int, test: str = "sign-flip") -> int | None:
    r"""How many of a family's other claims must be decided before the opposite of a claim that needs all
    of its ``parts`` comparisons can be decided; ``None`` where no outcome of these ``seeds`` decides it.

    The opposite, "some one comparison fails", has a p-value of at least :math:`p_o` =
    :func:`opposite_floor` over its :math:`1 - s` share. Holm's step :math:`i` of :math:`m` (``claims``, the
    claim's family) decides a p-value of at most :math:`\alpha / (m - i + 1)`, so the opposite needs at
    least :math:`m - \lfloor \alpha / p_o \rfloor` claims decided before it, and these can be decided only
    if the family's first step can pass at all: :math:`m\, 2^{-n} / s \le \alpha`, no claim's p-value being
    below :math:`2^{-n} / s`.
    """
    if parts < 1 or claims < 1:
        raise ValueError(f"need parts >= 1 and claims >= 1, got {parts} and {claims}")
    floor = smallest_p_value(seeds)
    opposite = opposite_floor(parts, seeds, test)
    before = claims - int(ALPHA // opposite)
    if opposite > ALPHA or before >= claims or (before > 0 and claims * floor / CLAIM_SHARE > ALPHA):
        return None
    return max(0, before)


def seeds_needed(parts: int, claims: int, test: str = "sign-flip", opposite: bool = False) -> int:
    r"""The fewest seeds with which a claim of ``parts`` comparisons, in a family of ``claims``, can be
    decided at Holm's first step, :math:`\alpha / m`, however the seeds fall: its own direction
    (:math:`2^{-n} / s \le \alpha / m`; an any-claim of the sign test pays :math:`k` there) or, with
    ``opposite``, the opposite of an all-claim (:func:`opposite_floor` :math:`\le \alpha / m`). What a row
    says where these seeds can never decide it."""
    if parts < 1 or claims < 1:
        raise ValueError(f"need parts >= 1 and claims >= 1, got {parts} and {claims}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    factor = (parts if test == "sign" else 1) / ((1 - CLAIM_SHARE) if opposite else CLAIM_SHARE)
    return max(1, math.ceil(math.log2(factor * claims / ALPHA) - 1e-12))


def compare_pairs(pairs: Mapping[str, Comparison], names: tuple[str, str], test: str = "sign-flip") -> list[dict]:
    """Two-sided paired tests of several comparisons (not claims of the paper), Holm-corrected together.

    Each comparison's differences are ``first - second`` of ``names``; a row per comparison, keys
    ``label, seeds, estimate, low, high, p_value, adjusted, better, test``, where ``better`` is the name
    the decided direction favours (adjusted p at most :data:`~setfuncs.experiments.findings.claims.ALPHA`) or ``"undecided"``, and ``test``
    is ``test`` (for :func:`~setfuncs.experiments.findings.text.interval_text`). The
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
