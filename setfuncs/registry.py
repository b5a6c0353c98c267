"""Aggregations by name, in the notation of the paper's Table 2.

**Spec grammar** (case-insensitive, spaces around the parts allowed):

- ``"sum" "mean" "max" "min" "lse" "lme" "median"``: plain aggregations (``"lme"``, log-mean-exp,
  is the book's, not the paper's);
- ``"quantile(q)"``, ``"pmean(p)"``, ``"softmax(temperature)"``: plain aggregations with their one
  parameter, a decimal number, in parentheses, e.g. ``"quantile(0.3)"``, ``"pmean(2)"``,
  ``"softmax(0.5)"``. ``quantile`` and ``pmean`` need it; ``"softmax"`` alone has temperature 1.
  The parameter may instead be a keyword argument of :func:`aggregation`
  (``aggregation("quantile", q=0.3)``), but not both;
- ``"q-<reduce>"``: a query aggregation and ``"r-<reduce>"`` a recurrent aggregation wrapping the
  plain ``<reduce>`` (one of :data:`~setfuncs.learnable.REDUCES`); ``"rpw"`` is read-process-write.

A model spec (:class:`~setfuncs.model.DeepSet`) is two of these joined by ``/``, e.g.
``"max/quantile(0.5)"`` or ``"pmean(3)/mean"``.
"""

from __future__ import annotations

import re

from .learnable import REDUCES, QueryAggregation, ReadProcessWrite, RecurrentAggregation
from .plain import (Aggregation, LogMeanExp, LogSumExp, Max, Mean, Median, Min, PowerMean, Quantile,
                    SoftmaxWeightedSum, Sum)

__all__ = ["PLAIN", "PARAMETERS", "aggregation", "spec_names"]

#: Plain aggregations by name; the last three take a parameter (:data:`PARAMETERS`).
PLAIN: dict[str, type[Aggregation]] = {
    "sum": Sum, "mean": Mean, "max": Max, "min": Min, "lse": LogSumExp, "lme": LogMeanExp, "median": Median,
    "quantile": Quantile, "pmean": PowerMean, "softmax": SoftmaxWeightedSum,
}
#: The parameter each parameterised aggregation takes in parentheses, e.g. ``"quantile(0.3)"`` is ``q=0.3``.
PARAMETERS = {"quantile": "q", "pmean": "p", "softmax": "temperature"}
#: How to write each parameterised aggregation, for the messages.
_EXAMPLES = {"quantile": "quantile(0.5)", "pmean": "pmean(2)", "softmax": "softmax(0.5)"}
#: The parameterised aggregations whose parameter has no default.
_NEEDED = ("quantile", "pmean")
#: A name, and what stands in the parentheses after it if there are any.
_SPEC = re.compile(r"\s*(?P<name>[a-z0-9-]*)\s*(?:\((?P<argument>[^()]*)\)\s*)?")
#: A decimal number, e.g. ``0.5``, ``-2``, ``.25``, ``1e-3``.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?")


def spec_names(learnable: bool = True) -> list[str]:
    """Every spec that needs no parameter: plain ones, then ``q-*``, ``r-*`` and ``rpw``."""
    names = list(REDUCES)
    if learnable:
        names += [f"{kind}-{r}" for kind in "qr" for r in REDUCES] + ["rpw"]
    return names


def _unknown(spec: str) -> ValueError:
    plain = [f"{name}({PARAMETERS[name]})" if name in PARAMETERS else name for name in PLAIN]
    return ValueError(f"unknown aggregation spec {spec!r}; plain: {', '.join(plain)} (e.g. 'quantile(0.5)'); "
                      f"learnable: q-<reduce> or r-<reduce> with reduce in {', '.join(REDUCES)}, or rpw")


def _parameters(spec: str, name: str, argument: str | None, kwargs: dict) -> dict[str, float]:
    """The keyword argument that the parentheses of the plain spec ``name(argument)`` give (none
    without parentheses); a ValueError for a missing, malformed, misplaced or doubled parameter."""
    parameter = PARAMETERS.get(name)
    if argument is None:
        if name in _NEEDED and parameter not in kwargs:
            raise ValueError(f"the aggregation {name!r} needs its parameter {parameter}: write "
                             f"'{name}({parameter})', e.g. '{_EXAMPLES[name]}' (in a model spec too, e.g. "
                             f"'max/{_EXAMPLES[name]}'), or pass {parameter}=... to sf.aggregation")
        return {}
    if parameter is None:
        raise ValueError(f"the aggregation {name!r} takes no parameter, got {spec!r}; write {name!r} (only "
                         f"{', '.join(PARAMETERS)} take one, e.g. 'quantile(0.5)')")
    if not _NUMBER.fullmatch(argument.strip()):
        raise ValueError(f"{spec!r}: write {name}({parameter}) with one decimal number {parameter}, e.g. "
                         f"'{_EXAMPLES[name]}'; got {argument!r} between the parentheses")
    if parameter in kwargs:
        raise ValueError(f"{spec!r} gives {parameter} in the spec and {parameter}={kwargs[parameter]!r} as an "
                         f"argument; give it once")
    return {parameter: float(argument)}


def aggregation(spec: str, features: int | None = None, **kwargs) -> Aggregation:
    """Build an aggregation from its spec (case-insensitive; the grammar is in the module's docstring),
    e.g. ``aggregation("r-lse", features=16)`` or ``aggregation("quantile(0.3)")``.

    ``kwargs`` go to the class: ``q`` for quantile, ``p`` for pmean, ``temperature``/``learnable``
    for softmax (when the spec does not give them in parentheses), ``steps``/``normalize``/``readout``
    for recurrent, ``normalize`` for query ones. Learnable aggregations need ``features`` (the
    particle dimension ``D``).
    """
    if not isinstance(spec, str):
        raise TypeError(f"an aggregation spec is a string such as 'max' or 'r-lse', got {type(spec).__name__}")
    match = _SPEC.fullmatch(spec.lower())
    if match is None:
        raise _unknown(spec)
    name, argument = match["name"], match["argument"]
    if name in PLAIN:
        return PLAIN[name](features=features, **_parameters(spec, name, argument, kwargs), **kwargs)
    kind, _, reduce = name.partition("-")
    if name == "rpw" or (kind in ("q", "r") and reduce in REDUCES):
        if argument is not None:
            raise ValueError(f"the learnable aggregation {name!r} takes no parameter in parentheses, got "
                             f"{spec!r}; write {name!r} and pass its options as keyword arguments")
        if features is None:
            raise ValueError(f"the learnable aggregation {spec!r} has parameters of the particle "
                             f"dimension: pass features=D, e.g. aggregation({spec!r}, features=16)")
        if name == "rpw":
            return ReadProcessWrite(features, **kwargs)
        cls = QueryAggregation if kind == "q" else RecurrentAggregation
        return cls(features, reduce=reduce, **kwargs)
    raise _unknown(spec)
