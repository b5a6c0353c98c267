"""Aggregations by name, in the notation of the paper's Table 2.

``"sum" "mean" "max" "min" "lse" "lme" "median"`` (plus ``"quantile"``, ``"pmean"``, ``"softmax"``,
which take a parameter) are plain (``"lme"``, log-mean-exp, is the book's, not the paper's); ``"q-<reduce>"`` is a query aggregation and ``"r-<reduce>"`` a
recurrent aggregation wrapping the plain ``<reduce>``; ``"rpw"`` is read-process-write.
"""

from __future__ import annotations

from .learnable import REDUCES, QueryAggregation, ReadProcessWrite, RecurrentAggregation
from .plain import (Aggregation, LogMeanExp, LogSumExp, Max, Mean, Median, Min, PowerMean, Quantile,
                    SoftmaxWeightedSum, Sum)

__all__ = ["PLAIN", "aggregation", "spec_names"]

#: Plain aggregations by name; the last three need a parameter (q, p, temperature).
PLAIN: dict[str, type[Aggregation]] = {
    "sum": Sum, "mean": Mean, "max": Max, "min": Min, "lse": LogSumExp, "lme": LogMeanExp, "median": Median,
    "quantile": Quantile, "pmean": PowerMean, "softmax": SoftmaxWeightedSum,
}


def spec_names(learnable: bool = True) -> list[str]:
    """Every spec that needs no extra argument: plain ones, then ``q-*``, ``r-*`` and ``rpw``."""
    names = list(REDUCES)
    if learnable:
        names += [f"{kind}-{r}" for kind in "qr" for r in REDUCES] + ["rpw"]
    return names


def aggregation(spec: str, features: int | None = None, **kwargs) -> Aggregation:
    """Build an aggregation from its spec (case-insensitive), e.g. ``aggregation("r-lse", features=16)``.

    ``kwargs`` go to the class: ``q`` for quantile, ``p`` for pmean, ``temperature``/``learnable``
    for softmax, ``steps``/``normalize``/``readout`` for recurrent, ``normalize`` for query ones.
    Learnable aggregations need ``features`` (the particle dimension ``D``).
    """
    if not isinstance(spec, str):
        raise TypeError(f"an aggregation spec is a string such as 'max' or 'r-lse', got {type(spec).__name__}")
    name = spec.strip().lower()
    if name in PLAIN:
        return PLAIN[name](features=features, **kwargs)
    kind, _, reduce = name.partition("-")
    if name == "rpw" or (kind in ("q", "r") and reduce in REDUCES):
        if features is None:
            raise ValueError(f"the learnable aggregation {spec!r} has parameters of the particle "
                             f"dimension: pass features=D, e.g. aggregation({spec!r}, features=16)")
        if name == "rpw":
            return ReadProcessWrite(features, **kwargs)
        cls = QueryAggregation if kind == "q" else RecurrentAggregation
        return cls(features, reduce=reduce, **kwargs)
    raise ValueError(f"unknown aggregation spec {spec!r}; plain: {', '.join(PLAIN)}; learnable: "
                     f"q-<reduce> or r-<reduce> with reduce in {', '.join(REDUCES)}, or rpw")
