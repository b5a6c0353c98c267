r"""The paper's findings on Table 2, tested on a sweep's runs (:mod:`setfuncs.experiments.findings`).

A column's statistic is its mean test accuracy over seeds at 1,000, 100 or 50 particles
(:math:`A_n`). The intervals resample the runs of every column; runs that diverged or collapsed,
or whose accuracy at a size is not finite, are left out (the table counts them). ``variant="lme"``
reads the two log-mean-exp columns in place of Table 2's two LSE columns.
"""

from __future__ import annotations

import os

import numpy as np

import setfuncs as sf

from ..findings import RESAMPLES, Claim, Finding, bootstrap, bootstrap_findings, favoured
from ..sweeps import lme_twin, variant_spec
from .budget import TABLE_SIZES
from .table import accuracy_at, column_runs, paper_rows

__all__ = ["variant_columns", "pointcloud_findings", "lme_against_lse"]


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


def _accuracy_groups(results: dict, columns: list[str]) -> dict[str, np.ndarray]:
    """``{spec: [runs, 3]}``: the test accuracies at Table 2's sizes of every run of each column that
    neither diverged nor collapsed and has a finite accuracy at every size
    (:func:`~setfuncs.experiments.pointcloud.table.accuracy_at`); a ValueError if a column has none."""
    groups = {}
    for spec in columns:
        rows = [[accuracy_at(r, n) for n in TABLE_SIZES] for r in column_runs(results, spec)]
        rows = [row for row in rows if None not in row]
        if not rows:
            raise ValueError(f"the findings need runs of every column; {spec} has no usable run")
        groups[spec] = np.array(rows, dtype=float)
    return groups


def pointcloud_findings(results: dict, paper: str | os.PathLike | None = None, variant: str = "paper",
                        resamples: int = 1000, seed: int = 0) -> list[Finding]:
    """The findings of Section 4.3 on ``results`` for ``variant`` (``"paper"`` or ``"lme"``); with
    ``paper`` (``results/paper-results.json``) each claim quotes the paper's Table 2 numbers."""
    theirs = paper_rows(paper) if paper is not None else None

    def quote(text: str) -> str:
        return f" (the paper's Table 2: {text.format_map(_Percent(theirs))})" if theirs else ""

    columns = variant_columns(variant)
    groups = _accuracy_groups(results, columns)
    size = {n: j for j, n in enumerate(TABLE_SIZES)}
    lse_column = variant_spec("max/r-lse", variant)
    learnable_final = [s for s in columns if sf.parse_spec(s)[1] != "max"]
    max_equivariant = [s for s in columns if sf.parse_spec(s)[0] == "max"]

    def mean(sample: dict[str, np.ndarray], spec: str, n: int) -> float:
        return float(sample[spec][:, size[n]].mean())

    def beats_all(sample: dict[str, np.ndarray]) -> float:
        return mean(sample, "max/max", 1000) - max(mean(sample, s, 1000) for s in columns if s != "max/max")

    def learnable_beat_max(n: int):
        return lambda s: min(mean(s, c, n) for c in learnable_final) - mean(s, "max/max", n)

    def smaller_drop(sample: dict[str, np.ndarray]) -> float:
        drop = lambda spec: mean(sample, spec, 1000) - mean(sample, spec, 50)  # noqa: E731
        return drop("max/max") - drop(lse_column)

    def max_layers(sample: dict[str, np.ndarray]) -> float:
        others = [s for s in columns if s not in max_equivariant]
        return (np.mean([mean(sample, s, 1000) for s in max_equivariant])
                - np.mean([mean(sample, s, 1000) for s in others]))

    # the claims are the paper's, for both variants (a findings table prints each once); the measures name the columns
    claims = [
        ("the original model (max/max) performs best at the training size" + quote("{max/max 1000} at 1,000"),
         "A1000(max/max) - max over the other columns of A1000", beats_all),
        ("learnable final aggregations outperform all non-learnable aggregations at 100 particles"
         + quote("max/max {max/max 100}; max/r-max {max/r-max 100} and r-max/r-max {r-max/r-max 100} fall below it"),
         "min over learnable-final columns of A100 - A100(max/max)", learnable_beat_max(100)),
        ("... and at 50 particles" + quote("max/max {max/max 50}, max/r-max {max/r-max 50}, r-max/r-max "
                                           "{r-max/r-max 50}"),
         "min over learnable-final columns of A50 - A50(max/max)", learnable_beat_max(50)),
        ("max/r-LSE generalises to 50 particles better than max/max"
         + quote("max/r-LSE {max/r-lse 50} against max/max {max/max 50}"),
         f"A50({lse_column}) - A50(max/max)", lambda s: mean(s, lse_column, 50) - mean(s, "max/max", 50)),
        ("max/max loses more accuracy from 1,000 to 50 particles than max/r-LSE"
         + quote("max/max {max/max 1000} to {max/max 50}, max/r-LSE {max/r-lse 1000} to {max/r-lse 50}"),
         f"(A1000 - A50)(max/max) - (A1000 - A50)({lse_column})", smaller_drop),
        ("max-type equivariant layers seem crucial (the max-equivariant columns lead Table 2 at 1,000)",
         "mean A1000 of the max-equivariant columns - mean A1000 of the others", max_layers),
    ]
    note = "A_n: mean test accuracy over seeds at n particles"
    return bootstrap_findings([Claim(claim, measure, groups, statistic, note=note)
                               for claim, measure, statistic in claims], variant, resamples, seed)


def lme_against_lse(results: dict, resamples: int = RESAMPLES, seed: int = 0) -> list[dict]:
    r"""Log-mean-exp against the paper's LSE, column by column and size by size (not in the paper).

    Each of Table 2's columns with LSE is paired with its twin (:func:`~setfuncs.experiments.sweeps.lme_twin`,
    ``max/r-lse`` with ``max/r-lme``); at each size :math:`n` of Table 2 the statistic is
    :math:`A_n(\text{twin}) - A_n(\text{column})`, the difference of mean test accuracies over seeds,
    with its 95 % interval from resampling both columns' runs
    (:func:`~setfuncs.experiments.findings.bootstrap`, ``seed`` for every pair and size).

    One row per pair and size, keys ``spec, twin, n, estimate, low, high, better``
    (:func:`~setfuncs.experiments.findings.favoured`); a ValueError if a column has no usable run.
    """
    rows = []
    for spec in (s for s in sf.TABLE2_SPECS if lme_twin(s) != s):
        twin = lme_twin(spec)
        groups = _accuracy_groups(results, [spec, twin])
        for j, n in enumerate(TABLE_SIZES):
            estimate, low, high = bootstrap(groups, lambda g: float(g[twin][:, j].mean() - g[spec][:, j].mean()),
                                            resamples, seed)
            rows.append({"spec": spec, "twin": twin, "n": n, "estimate": estimate, "low": low, "high": high,
                         "better": favoured(low, high)})
    return rows
