r"""The paper's findings on Table 2, tested on a sweep's runs paired by seed (:mod:`setfuncs.experiments.findings`).

A column's statistic at population size :math:`n` is its test accuracy :math:`A_n`. A run that
collapsed (its predictions nearly constant, :mod:`~setfuncs.experiments.collapse`) counts with the
accuracy it measured, near chance: a failure of the configuration counts against it, as the circle
and mixture findings count a collapsed run as the worst, and is not dropped from the comparisons
(dropping it would credit the column that failed, and leave the seeds where it failed out of every
comparison with it). The one exception is the loss from 1,000 to 50 particles, which a constant
prediction has none of by construction: there collapsed runs are left out. Runs that diverged, or
whose accuracy at a size is not finite, are left out everywhere (Table 2 counts them, and leaves
collapsed runs out of its means). Every comparison is paired by seed: :math:`d_s` is the difference of two columns'
accuracies for the runs trained with seed :math:`s`
(:func:`~setfuncs.experiments.findings.claims.matched`, ``score="difference"``). "max/max performs best"
is "max/max beats each other column" (every part must hold). "max-type equivariant layers seem
crucial" matches each column with learnable equivariant layers, ``e/g``, with the max-equivariant
column of the same final aggregation, ``max/g``, and averages the pairs' differences per seed: the
two runs of a pair are exchangeable under the null, so :math:`d_s` is symmetric about 0, as the
sign-flip test needs (the difference of the mean accuracies of the six max-equivariant columns and
of the other four would not be: the groups differ in size). ``variant="lme"`` reads the two log-mean-exp columns in place of Table 2's two LSE
columns.

The paper's effects (for the power check of *not reproduced*) are the same differences of its
Table 2 accuracies (the LSE columns' numbers for their log-mean-exp twins). Our runs use
:mod:`~setfuncs.experiments.pointcloud.differences`' protocol; where it differs from the paper's on
an axis a claim depends on, a significant opposite is *not reproduced*, never *contradicted*.
"""

from __future__ import annotations

import os
from typing import Callable, Sequence

import numpy as np

import setfuncs as sf

from ..differences import claim_gaps, header_field
from ..findings import Claim, Comparison, check_failed, matched
from ..findings import lme_against_lse as twins_against
from ..sweeps import is_max_type, lme_twin, variant_spec
from .budget import TABLE_SIZES
from .differences import CLAIM_AXES, MODELNET40_CLASSES, protocol_differences
from .metric import accuracy_by_run
from .table import paper_rows

__all__ = ["DROP_MEASURES", "variant_columns", "pointcloud_claims", "lme_against_lse"]


class _Percent(dict):
    """``"{max/max 100}"`` -> the paper's accuracy of that column at that size, in percent."""

    def __init__(self, rows: dict[str, dict[int, float]]) -> None:
        super().__init__()
        self.rows = rows

    def __missing__(self, key: str) -> str:
        spec, n = key.rsplit(" ", 1)
        return f"{100 * self.rows[spec][int(n)]:.1f} %"


def variant_columns(variant: str = "paper") -> list[str]:
    """Table 2's ten columns, with log-mean-exp in place of LSE for ``variant="lme"``."""
    return [variant_spec(spec, variant) for spec in sf.TABLE2_SPECS]


def _check_columns(accuracy: dict[tuple[str, int], float], columns: Sequence[str]) -> None:
    for spec in columns:
        if not any(s == spec and np.isfinite(v) for (s, _), v in accuracy.items()):
            raise ValueError(f"the findings need runs of every column; {spec} has no usable run")


#: The words of three of Section 4.3's claims, before the paper's numbers.
BEST = "the original model (max/max) performs best at the training size"
GENERALISES = "max/r-LSE generalises to 50 particles better than max/max"
DROPS = "max/max loses more accuracy from 1,000 to 50 particles than max/r-LSE"


def _twins(columns: Sequence[str]) -> list[tuple[str, str]]:
    """Each column whose equivariant layers are not max-type
    (:func:`~setfuncs.experiments.sweeps.is_max_type`: r-max is) beside its twin with max ones and the same
    final aggregation, ``(max/g, e/g)``: within a seed the two runs of a pair are exchangeable under the null,
    so d_s is symmetric about 0."""
    return [(f"max/{final}", spec) for spec in columns for equivariant, final in [sf.parse_spec(spec)]
            if not is_max_type(equivariant) and f"max/{final}" in columns]


#: The measures of the drop claim's loss of accuracy, relative to the headroom above chance (the claim) or raw.
DROP_MEASURES = ("relative", "raw")


def pointcloud_claims(results: dict, paper: str | os.PathLike | None = None, variant: str = "paper",
                      failed: str = "against", drop: str = "relative") -> list[Claim]:
    """The claims of Section 4.3 on ``results`` for ``variant`` (``"paper"`` or ``"lme"``); with
    ``paper`` (``results/paper-results.json``) each claim quotes the paper's Table 2 numbers and
    carries its effect. ``failed`` (:data:`~setfuncs.experiments.findings.claims.FAILED_RULES`): a collapsed run
    counts at its measured accuracy, near chance (``"against"``), or is left out (``"dropped"``).
    ``drop`` (:data:`DROP_MEASURES`): the drop claim's loss from 1,000 to 50 points relative to the
    headroom above chance, :math:`(A_{1000} - A_{50}) / (A_{1000} - 1/C)` for :math:`C` classes
    (``"relative"``: a column that starts lower has less to lose), or the raw loss (``"raw"``)."""
    if drop not in DROP_MEASURES:
        raise ValueError(f"drop must be one of {DROP_MEASURES}, got {drop!r}")
    theirs = paper_rows(paper) if paper is not None else None
    columns = variant_columns(variant)
    paper_name = dict(zip(columns, sf.TABLE2_SPECS))
    accuracy = {n: accuracy_by_run(results, n, collapsed=check_failed(failed) == "against") for n in TABLE_SIZES}
    _check_columns(accuracy[1000], columns)
    gap_of = claim_gaps(results, protocol_differences, CLAIM_AXES)
    lse_column = variant_spec("max/r-lse", variant)
    learnable_final = [s for s in columns if sf.parse_spec(s)[1] != "max"]
    twins = _twins(columns)

    def quote(text: str) -> str:
        return f" (the paper's Table 2: {text.format_map(_Percent(theirs))})" if theirs else ""

    def effect(value: Callable[[dict[str, dict[int, float]]], float]) -> float | None:
        return None if theirs is None else float(value({c: theirs[paper_name[c]] for c in columns}))

    def beats(a: str, b: str, n: int) -> Comparison:
        return matched(f"{a} vs {b} at {n}", accuracy[n], [(a, b)], "difference")

    claims = [
        Claim(BEST + quote("{max/max 1000} at 1,000"),
              "A1000(max/max) - A1000(c) for every other column c (all must be positive)",
              tuple(beats("max/max", c, 1000) for c in columns if c != "max/max"),
              paper_effect=effect(lambda p: min(p["max/max"][1000] - p[c][1000] for c in columns if c != "max/max")),
              gap=gap_of["max/max performs best"], key="max-max-best", words=BEST),
    ]
    def below_max(n: int) -> str:
        """The paper's max/max at ``n`` and the learnable-final columns its Table 2 puts below it."""
        if not theirs:
            return ""
        under = [paper_name[c] for c in learnable_final if theirs[paper_name[c]][n] < theirs["max/max"][n]]
        return quote(f"max/max {{max/max {n}}}; " + (", ".join(f"{c} {{{c} {n}}}" for c in under) + " fall below it"
                                                   if under else "no learnable final aggregation falls below it"))

    for n, words in ((100, "learnable final aggregations outperform all non-learnable aggregations at 100 particles"),
                     (50, "... and at 50 particles")):
        claims.append(Claim(words + below_max(n),
                            f"A{n}(c) - A{n}(max/max) for every learnable-final column c (all must be positive)",
                            tuple(beats(c, "max/max", n) for c in learnable_final),
                            paper_effect=effect(lambda p, n=n: min(p[c][n] - p["max/max"][n] for c in learnable_final)),
                            gap=gap_of["learnable final aggregations generalise"], key=f"learnable-final/{n}",
                            words=words, part=f"{n} particles"))
    claims += [
        Claim(GENERALISES + quote("max/r-LSE {max/r-lse 50} against max/max {max/max 50}"),
              f"A50({lse_column}) - A50(max/max)", (beats(lse_column, "max/max", 50),),
              paper_effect=effect(lambda p: p[lse_column][50] - p["max/max"][50]),
              gap=gap_of["learnable final aggregations generalise"], key="max-r-lse-generalises", words=GENERALISES),
        _drop_claim(results, lse_column, drop, quote, effect, gap_of["learnable final aggregations generalise"]),
        Claim("max-type equivariant layers seem crucial (at 1,000 points, each column whose equivariant layers "
              "are not max-type is behind the max-equivariant column with its final aggregation)",
              "A1000(max/g) - A1000(e/g) for each column e/g with equivariant layers other than max and r-max, "
              "the final aggregation g matched (all must be positive)",
              tuple(matched(f"{a} vs {b}", accuracy[1000], [(a, b)], "difference") for a, b in twins),
              paper_effect=effect(lambda p: min(p[a][1000] - p[b][1000] for a, b in twins)),
              gap=gap_of["max equivariant layers are crucial"], key="max-equivariant-crucial"),
    ]
    return claims


def _drop_claim(results: dict, lse_column: str, drop: str, quote: Callable[[str], str],
                effect: Callable[[Callable], float | None], gap: str) -> Claim:
    """The drop claim, its loss from 1,000 to 50 points relative to the headroom above chance or raw
    (``drop``, :func:`pointcloud_claims`)."""
    # a constant prediction loses nothing from 1,000 to 50 particles: collapsed runs are left out here
    trained = {n: accuracy_by_run(results, n, collapsed=False) for n in (1000, 50)}
    chance = 1 / header_field(results, "data", "classes")
    loss = {(spec, s): (trained[1000][(spec, s)] - trained[50][(spec, s)])
            / (trained[1000][(spec, s)] - chance if drop == "relative" else 1.0) for spec, s in trained[1000]}
    measure = ("(A1000 - A50) / (A1000 - chance)" if drop == "relative" else "A1000 - A50")
    return Claim(DROPS + quote("max/max {max/max 1000} to {max/max 50}, max/r-LSE {max/r-lse 1000} to {max/r-lse 50}"),
                 f"{measure} of max/max minus of {lse_column}" + (f", the loss relative to the headroom above chance "
                                                                   f"({chance:.3g})" if drop == "relative" else
                                                                   ", the raw loss"),
                 (matched(f"max/max vs {lse_column}", loss, [("max/max", lse_column)], "difference"),),
                 # the paper's columns are of ModelNet40: its chance is 1/40
                 paper_effect=effect(lambda p: _loss(p["max/max"], drop, 1 / MODELNET40_CLASSES)
                                     - _loss(p[lse_column], drop, 1 / MODELNET40_CLASSES)),
                 gap=gap, key="max-max-drops-more", words=DROPS,
                 note="a difference of two losses: its test is exact when the two columns are exchangeable, only "
                      "approximately when the losses are equal")


def _loss(accuracy: dict[int, float], drop: str, chance: float) -> float:
    """A column's loss from 1,000 to 50 points, relative to its headroom above ``chance`` or raw (``drop``)."""
    return (accuracy[1000] - accuracy[50]) / (accuracy[1000] - chance if drop == "relative" else 1.0)


def lme_against_lse(results: dict) -> list[dict]:
    r"""Log-mean-exp against the paper's LSE, column by column and size by size (not in the paper).

    Each of Table 2's columns with LSE is paired with its twin (:func:`~setfuncs.experiments.sweeps.lme_twin`,
    ``max/r-lse`` with ``max/r-lme``); at each size :math:`n` of Table 2, :math:`d_s = A_n(\text{twin})
    - A_n(\text{column})` for the runs of seed :math:`s`, tested two-sided and Holm-corrected over
    every pair and size (:func:`~setfuncs.experiments.findings.twins.lme_against_lse`).

    One row per pair and size, keys ``spec, twin, n`` and those of ``compare_pairs`` (``seeds,
    estimate, low, high, p_value, adjusted, better``); a ValueError if a column has no usable run.
    """
    accuracy = {n: accuracy_by_run(results, n) for n in TABLE_SIZES}
    columns = [s for s in sf.TABLE2_SPECS if lme_twin(s) != s]
    for n in TABLE_SIZES:
        _check_columns(accuracy[n], [name for spec in columns for name in (spec, lme_twin(spec))])
    rows = twins_against(accuracy, columns, "difference")
    return [{"spec": row.pop("spec"), "twin": row.pop("twin"), "n": row.pop("at"), **row} for row in rows]
