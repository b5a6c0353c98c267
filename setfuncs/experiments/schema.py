r"""The results schema: what a run's record and a sweep's file hold, checked where a file is read.

Every experiment's sweep writes one JSON file (:mod:`~setfuncs.experiments.resultsfile`) whose
``runs`` are records of one (configuration, seed) each. A run ends in one of four states, and
:func:`run_status` is the one place that tells them apart:

=============  =========================================================================
``trained``    trained and evaluated; its metrics are numbers (a table's statistics use it)
``collapsed``  trained and evaluated, but its predictions do not depend on the population
               (``collapsed`` true, :mod:`~setfuncs.experiments.collapse`)
``diverged``   its loss became non-finite (``error`` holds the message; metrics are None)
``failed``     it raised, or its workers kept dying (``failure`` holds the kind and traceback);
               a resumed sweep runs it again
=============  =========================================================================

The first three are *finished* (:func:`finished_runs`): a resumed sweep keeps them and every table
counts them. A :class:`RunSchema` names an experiment's metrics; :func:`check_results` applies it
(and the file's own rules) when a sweep resumes a file and when a chapter reads one, and refuses with
a :class:`SchemaError` that names the file, the run and the field:

- the header's ``configurations`` is a list of specs, ``seeds`` a list of non-negative ints,
  ``sittings`` a list of records, ``runs`` a list;
- every run is a record with a string ``spec`` and a non-negative int ``seed`` (``true``, ``"0"``
  and ``-1`` are refused), one record per (spec, seed);
- a finished run's metric is a number, or ``null`` where the writer put it: in a diverged run, or
  with the ``non_finite`` entry that names the NaN or infinity it stands for
  (:func:`~setfuncs.experiments.strictjson.replace_non_finite`); a metric map (e.g. MSE by
  population size) is a record of such values.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

__all__ = ["STATUSES", "FINISHED", "RunSchema", "SchemaError", "run_status", "is_finished", "finished_runs",
           "trained_runs", "status_counts", "finished_keys", "check_results", "metric_value"]

#: The states of a run, from usable to not run at all.
STATUSES = ("trained", "collapsed", "diverged", "failed")
#: The states of a finished run, which a resumed sweep keeps and every table counts.
FINISHED = ("trained", "collapsed", "diverged")


class SchemaError(ValueError):
    """A results file that breaks the schema; the message names the file, the run and the field."""


@dataclass(frozen=True)
class RunSchema:
    """What a finished run of one experiment records.

    Attributes:
        metrics: scalar metrics (numbers, or ``null`` as the writer puts it; see the module).
        maps: metric maps, e.g. ``mse_by_population_size``: a record of such numbers (or ``null``
            in a diverged run).
        fields: other keys every finished run holds (e.g. ``setting``, ``equivariant``).
        details: other results of a run's evaluation (not checked when read), which a diverged
            run records as ``null`` with the metrics
            (:func:`~setfuncs.experiments.protocol.diverged_record`).
    """

    metrics: tuple[str, ...] = ()
    maps: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    details: tuple[str, ...] = ()

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key a finished run must hold (the fields, ``error``, the metrics and the maps)."""
        return (*self.fields, "error", *self.metrics, *self.maps)


def run_status(run: dict) -> str:
    """The state of a run's record, one of :data:`STATUSES`: ``failed`` (it has ``failure``),
    ``diverged`` (``error`` set), ``collapsed`` (``collapsed`` true) or ``trained``."""
    if "failure" in run:
        return "failed"
    if run.get("error") is not None:
        return "diverged"
    if run.get("collapsed"):
        return "collapsed"
    return "trained"


def is_finished(run: dict) -> bool:
    """Whether the run finished (trained, collapsed or diverged): a resumed sweep keeps it."""
    return run_status(run) != "failed"


def finished_runs(results: dict | Sequence[dict]) -> list[dict]:
    """The finished runs of a results file (or of a list of runs), in their order."""
    runs = results["runs"] if isinstance(results, dict) else results
    return [r for r in runs if is_finished(r)]


def trained_runs(results: dict | Sequence[dict]) -> list[dict]:
    """The runs whose metrics a statistic uses: neither failed, diverged nor collapsed."""
    runs = results["runs"] if isinstance(results, dict) else results
    return [r for r in runs if run_status(r) == "trained"]


def status_counts(runs: Iterable[dict]) -> dict[str, int]:
    """How many runs are in each state, every state of :data:`STATUSES` named (0 if none)."""
    counts = Counter(run_status(r) for r in runs)
    return {status: counts.get(status, 0) for status in STATUSES}


def finished_keys(runs: Iterable[dict]) -> set[tuple[str, int]]:
    """The (spec, seed) pairs of the finished runs: what a resumed sweep does not run again."""
    return {(r["spec"], r["seed"]) for r in runs if is_finished(r)}


def metric_value(run: dict, key: str) -> float:
    """A trained run's metric as a float, NaN for a run that is not trained or a missing value: a
    statistic that orders runs must then leave it out (``numpy.isfinite``) rather than rank it."""
    if run_status(run) != "trained":
        return math.nan
    value = run.get(key)
    return math.nan if value is None else float(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_seed(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _escaped(name: str) -> str:
    """``name`` as one part of a JSON Pointer (RFC 6901: ``~`` is ``~0``, ``/`` is ``~1``)."""
    return name.replace("~", "~0").replace("/", "~1")


def _where(run: Any, index: int) -> str:
    if isinstance(run, dict):
        return f"run {index} ({run.get('spec', '?')!s} seed {run.get('seed', '?')!s})"
    return f"run {index}"


def _check_value(value: Any, pointer: str, run: dict, diverged: bool) -> str | None:
    """Why ``value`` (at ``pointer`` in ``run``) is not a metric the writer could have written, or None."""
    if _is_number(value):
        return None
    if value is None and (diverged or pointer in (run.get("non_finite") or {})):
        return None
    if value is None:
        return (f"{pointer} is null without a non_finite entry (the writer's form of a NaN or "
                f"infinity) in a run that did not diverge")
    return f"{pointer} is {value!r}, not a number"


def _check_run(run: Any, index: int, schema: RunSchema) -> str | None:
    """Why the ``index``-th run breaks the schema, or None."""
    if not isinstance(run, dict):
        return f"run {index} is a {type(run).__name__}, not a run's record"
    where = _where(run, index)
    if not isinstance(run.get("spec"), str):
        return f"{where}: spec is {run.get('spec')!r}, not a model spec such as 'max/max'"
    if not _is_seed(run.get("seed")):
        return f"{where}: seed is {run.get('seed')!r}, not a non-negative int"
    if not is_finished(run):
        return None
    missing = [key for key in schema.keys if key not in run]
    if missing:
        return f"{where} lacks {', '.join(missing)}, which the tables read"
    diverged = run.get("error") is not None
    for key in schema.metrics:
        why = _check_value(run[key], f"/{key}", run, diverged)
        if why:
            return f"{where}: {why}"
    for key in schema.maps:
        values = run[key]
        if values is None and diverged:
            continue
        if not isinstance(values, dict):
            return f"{where}: {key} is {values!r}, not a record of numbers"
        for name, value in values.items():
            why = _check_value(value, f"/{key}/{_escaped(name)}", run, diverged)
            if why:
                return f"{where}: {why}"
    return None


def check_results(results: Any, path: str | os.PathLike, schema: RunSchema = RunSchema(), fix: str = "") -> dict:
    """``results`` (a file's parsed JSON, before its non-finite floats are restored) if it keeps the
    schema; else a :class:`SchemaError` that names ``path``, the run and the field, and says ``fix``
    (e.g. which command writes such a file). See the module for the rules."""
    suffix = f"; {fix}" if fix else ""
    if not isinstance(results, dict) or not isinstance(results.get("runs"), list):
        raise SchemaError(f"{path} is not a sweep results file (no list of 'runs'){suffix}")
    header = {"configurations": lambda v: isinstance(v, list) and all(isinstance(c, str) for c in v),
              "seeds": lambda v: isinstance(v, list) and all(_is_seed(s) for s in v),
              "sittings": lambda v: isinstance(v, list) and all(isinstance(s, dict) for s in v)}
    what = {"configurations": "a list of model specs", "seeds": "a list of non-negative ints",
            "sittings": "a list of sitting records"}
    for key, valid in header.items():
        if key in results and not valid(results[key]):
            raise SchemaError(f"{path}: {key} is {results[key]!r}, not {what[key]}{suffix}")
    seen: dict[tuple[str, int], int] = {}
    for index, run in enumerate(results["runs"]):
        why = _check_run(run, index, schema)
        if why:
            raise SchemaError(f"{path}: {why}{suffix}")
        key = (run["spec"], run["seed"])
        if key in seen:
            raise SchemaError(f"{path}: runs {seen[key]} and {index} are both {key[0]} seed {key[1]}; a file holds "
                              f"one record per configuration and seed (keep the one you trust and delete the "
                              f"other, or write the file again){suffix}")
        seen[key] = index
    return results
