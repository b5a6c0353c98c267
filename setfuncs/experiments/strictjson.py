"""Strict JSON for results files: non-finite floats written as ``null`` with a map of what stood
there, put back on reading; and the differences between two JSON values, named by path.

NaN and infinities are not JSON (RFC 8259), and strict readers (JavaScript's
``JSON.parse``, for one) refuse the ``NaN`` and ``Infinity`` that Python writes by default.
:meth:`~setfuncs.experiments.resultsfile.SweepFile.write` writes ``null`` in their place (:func:`replace_non_finite`) and records
what stood there in the *record* that held it: each run (an entry of ``runs``) for the values
anywhere inside it, the file's top level for the rest. The record's ``"non_finite"`` maps the
place of each value, a JSON Pointer (RFC 6901) relative to the record, to ``"nan"``, ``"inf"``
or ``"-inf"``; e.g. a run whose test MSE diverged holds ``"mse": null`` and
``"non_finite": {"/mse": "nan"}``, and one infinite entry of its ``mse_by_population_size`` is
``"/mse_by_population_size/100": "inf"``.
:func:`restore_non_finite` puts the floats back and drops the maps; the readers
(:func:`~setfuncs.experiments.results.load_sweep`, and :class:`~setfuncs.experiments.resultsfile.SweepFile` for an earlier
sitting's runs) call it, so a table sees the NaN it would have seen, never a ``None``.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["NON_FINITE", "replace_non_finite", "restore_record", "restore_runs", "restore_non_finite", "differences",
           "named_differences"]

#: The key of a record's map from JSON Pointers to the non-finite floats written as ``null`` there.
NON_FINITE = "non_finite"
#: The names of the non-finite floats in a ``non_finite`` map.
_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def named_differences(first: Any, second: Any, names: tuple[str, str], where: str = "", root: str = "value"
                      ) -> list[str]:
    """The places where two JSON values differ, each side named by ``names``, e.g.
    ``["budget_parameters.steps: 2000 in the file, 5000 in this sweep"]`` (``root`` names the place of two
    values that are not both objects)."""
    if isinstance(first, dict) and isinstance(second, dict):
        found: list[str] = []
        for key in sorted(set(first) | set(second), key=str):
            here = f"{where}.{key}" if where else str(key)
            if key not in first:
                found.append(f"{here}: missing in {names[0]}, {second[key]!r} in {names[1]}")
            elif key not in second:
                found.append(f"{here}: {first[key]!r} in {names[0]}, missing in {names[1]}")
            else:
                found += named_differences(first[key], second[key], names, here, root)
        return found
    return [] if first == second else [f"{where or root}: {first!r} in {names[0]}, {second!r} in {names[1]}"]


def differences(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """The places where this sweep's JSON value ``ours`` and the file's ``theirs`` differ
    (:func:`named_differences`: ``"... in the file, ... in this sweep"``)."""
    return named_differences(theirs, ours, ("the file", "this sweep"), where)


def _pointer(parts: tuple[str, ...]) -> str:
    """The JSON Pointer (RFC 6901) of a place, e.g. ``("a/b", "0") -> "/a~1b/0"``."""
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in parts)


def _float_name(value: float) -> str:
    """``"nan"``, ``"inf"`` or ``"-inf"``: the name of a non-finite float in a ``non_finite`` map."""
    return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"


def _nulled(value: Any, parts: tuple[str, ...], found: dict[str, str]) -> Any:
    """A copy of ``value`` with every non-finite float replaced by None and recorded in ``found``
    (its pointer, from ``parts``, -> its name)."""
    if isinstance(value, float) and not math.isfinite(value):
        found[_pointer(parts)] = _float_name(value)
        return None
    if isinstance(value, dict):
        return {key: _nulled(item, (*parts, str(key)), found) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nulled(item, (*parts, str(i)), found) for i, item in enumerate(value)]
    return value


def _record(record: dict, top_level: bool) -> dict:
    """A copy of ``record`` in strict JSON with its ``non_finite`` map; at the top level, every run
    (a dict in ``runs``) is a record of its own."""
    found: dict[str, str] = {}
    copy = {}
    for key, value in record.items():
        if key == NON_FINITE:                       # recomputed below: a stale map would mislead
            continue
        if top_level and key == "runs" and isinstance(value, list):
            copy[key] = [_record(run, False) if isinstance(run, dict) else _nulled(run, (key, str(i)), found)
                         for i, run in enumerate(value)]
        else:
            copy[key] = _nulled(value, (str(key),), found)
    if found:
        copy[NON_FINITE] = found
    return copy


def replace_non_finite(results: dict) -> dict:
    """A copy of ``results`` that strict JSON can hold: every NaN, ``inf`` and ``-inf`` is None, and
    the run holding it (or the top level, for a value outside ``runs``) names it in its
    ``non_finite`` map (see the module's docstring). ``results`` itself is left as it is."""
    return _record(results, True)


def _key(container: Any, part: str, pointer: str, where: str) -> str | int:
    """The key (dict) or index (list) ``part`` of a pointer in ``container``; a ValueError if it holds none."""
    if isinstance(container, dict) and part in container:
        return part
    if isinstance(container, list) and part.isdigit() and int(part) < len(container):
        return int(part)
    raise ValueError(f"{where}: {NON_FINITE} names {pointer}, a place it does not hold")


def _resolve(record: dict, pointer: str, where: str) -> tuple[dict | list, str | int]:
    """The container and key (or index) of the place ``pointer`` names in ``record``."""
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        raise ValueError(f"{where}: {NON_FINITE} names {pointer!r}, not a JSON Pointer such as '/mse'")
    *path, last = [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]
    container: Any = record
    for part in path:
        container = container[_key(container, part, pointer, where)]
    return container, _key(container, last, pointer, where)


def restore_record(record: dict, where: str) -> None:
    """Put back the floats that ``record``'s ``non_finite`` map names and remove the map; ``where``
    names the record in a ValueError."""
    marks = record.pop(NON_FINITE, None)
    if marks is None:
        return
    if not isinstance(marks, dict):
        raise ValueError(f"{where}: {NON_FINITE} must map JSON Pointers to 'nan', 'inf' or '-inf', got {marks!r}")
    for pointer, name in marks.items():
        if name not in _FLOATS:
            raise ValueError(f"{where}: {NON_FINITE} gives {pointer} the value {name!r}; expected 'nan', 'inf' "
                             f"or '-inf'")
        container, key = _resolve(record, pointer, where)
        if container[key] is not None:
            raise ValueError(f"{where}: {NON_FINITE} names {pointer}, which holds {container[key]!r}, not null")
        container[key] = _FLOATS[name]


def restore_runs(results: dict) -> None:
    """:func:`restore_record` every run (a dict in ``runs``), named by its index, spec and seed."""
    runs = results.get("runs")
    for i, run in enumerate(runs if isinstance(runs, list) else []):
        if isinstance(run, dict):
            restore_record(run, f"run {i} ({run.get('spec', '?')} seed {run.get('seed', '?')})")


def restore_non_finite(results: dict) -> dict:
    """Undo :func:`replace_non_finite` in place: every place a ``non_finite`` map names (at the top
    level or in a run) gets its float back, and the maps are removed. Returns ``results``; a
    ValueError (naming the run) for a map that names no ``null`` value or an unknown name."""
    restore_record(results, "the top level")
    restore_runs(results)
    return results
