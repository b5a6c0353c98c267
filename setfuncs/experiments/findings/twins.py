r"""Log-mean-exp against the paper's LSE: every configuration with LSE against its twin, seed by seed.

Not a claim of the paper: the book runs every configuration with LSE again with log-mean-exp
(:math:`\operatorname{LME} = \operatorname{L\Sigma E} - \ln n`) in its place, and asks, configuration by
configuration, which of the two trained better.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..sweeps import lme_twin
from .claims import Comparison, matched
from .judge import compare_pairs

__all__ = ["lme_against_lse"]


def lme_against_lse(metrics: Mapping[Any, Mapping[tuple[str, int], float]], specs: Sequence[str], kind: str,
                    pooled: bool = False) -> list[dict]:
    r"""Log-mean-exp against the paper's LSE, configuration by configuration (not in the paper).

    Each spec of ``specs`` that uses LSE is paired with its twin (:func:`~setfuncs.experiments.sweeps.lme_twin`,
    every LSE replaced by log-mean-exp), seed by seed, on every metric of ``metrics`` (``{at: {(spec, seed):
    value}}``, e.g. one per population size): :math:`d_s` is the ``kind``
    (:func:`~setfuncs.experiments.findings.claims.matched`: ``"log ratio"`` of an error, ``"difference"`` of an
    accuracy) of the twin's run against the spec's. Two-sided tests, Holm-corrected over all rows
    (:func:`~setfuncs.experiments.findings.judge.compare_pairs`); with ``pooled`` (one metric) a last row
    pools every pair, its :math:`d_s` the median over the pairs, and ``spec``, ``twin`` ``"all"``.

    One row per pair and metric, spec by spec (keys ``spec``, ``twin``, ``at`` and those of ``compare_pairs``:
    ``seeds, estimate, low, high, p_value, adjusted, better, test``); a ValueError if no spec and its twin
    both have runs.
    """
    pairs = [(spec, lme_twin(spec)) for spec in specs if lme_twin(spec) != spec]
    present = {spec for metric in metrics.values() for spec, _ in metric}
    pairs = [(spec, twin) for spec, twin in pairs if spec in present and twin in present]
    if not pairs:
        raise ValueError("lme_against_lse needs runs of an LSE configuration and of its log-mean-exp twin; "
                         "run the sweep with its default configurations")
    comparisons: dict[str, Comparison] = {}
    where: dict[str, dict] = {}
    for spec, twin in pairs:
        for at, metric in metrics.items():
            label = f"{twin} vs {spec}" if len(metrics) == 1 else f"{twin} vs {spec} at {at}"
            comparisons[label] = matched(label, metric, [(twin, spec)], kind)
            where[label] = {"spec": spec, "twin": twin, "at": at}
    if pooled:
        (at, metric), = metrics.items()
        comparisons["all"] = matched("all pairs", metric, [(twin, spec) for spec, twin in pairs], kind)
        where["all"] = {"spec": "all", "twin": "all", "at": at}
    return [{**where[row.pop("label")], **row} for row in compare_pairs(comparisons, ("log-mean-exp", "LSE"))]
