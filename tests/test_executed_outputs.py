"""No executed chapter prints ``nan`` or ``inf`` where it did not mean to.

A table cell or a printed line that reads ``nan``, ``+nan%`` or ``inf`` is a number that went wrong
silently: an interval from one seed, a detectable effect from too few, a ratio over nothing. The
findings code says such things in words (``findings.interval_text``, ``detectable_text``,
``detectable_phrase``); this test reads every output of the chapters as ``make notebooks`` executed
them (the copies in ``.nbmake/``) and fails on any ``nan`` or ``inf`` outside the cells listed in
:data:`MEANT`, where the chapter shows overflow or an undefined value on purpose and its prose says
so. Each cell listed must still print one, so that the list cannot go stale.

``make test`` runs it after the chapters (``EXECUTED_OUTPUTS_REQUIRED=1``), as does CI; ``make unit``
leaves it out, and a run without the executed copies skips it and says how to make them.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXECUTED = ROOT / ".nbmake"
REQUIRED = bool(os.environ.get("CI") or os.environ.get("EXECUTED_OUTPUTS_REQUIRED"))

#: A ``nan`` or ``inf`` as Python and NumPy print them (also ``+nan%``, ``-inf``, ``NaN``), not
#: inside a word (``info``, ``infinite``, ``nano``) or a name (``np.inf``, ``math.nan``).
NON_FINITE = re.compile(r"(?<![\w.])[+-]?(?:nan|inf)(?!\w)", re.IGNORECASE)

#: (chapter, cell id) -> why the cell prints a non-finite number on purpose.
MEANT = {
    ("02_sum_decomposition.ipynb", "sumdec-09"): "the exponential sum decomposition overflows at k = 1000, "
                                                 "the prose's point",
    ("03_sum_isomorphism.ipynb", "82e410d6"): "the naive log-sum-exp overflows, beside the max-shifted one",
    ("03_sum_isomorphism.ipynb", "636ad52e"): "the power mean at p = 0 is undefined as written (0/0); the prose "
                                              "explains the nan",
}


def _executed() -> list[Path]:
    chapters = sorted((ROOT / "book").glob("*.ipynb"))
    executed = [EXECUTED / chapter.name for chapter in chapters]
    missing = [path.name for path in executed if not path.is_file()]
    if missing:
        message = (f"{EXECUTED} lacks the executed chapters {missing}: run `make notebooks` first "
                   f"(make test does, then runs this test)")
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return executed


def _outputs(cell: dict) -> list[str]:
    """The texts a cell shows: streams, plain text, HTML and Markdown of its outputs."""
    texts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            texts.append("".join(output["text"]))
        for kind in ("text/plain", "text/html", "text/markdown"):
            if kind in output.get("data", {}):
                texts.append("".join(output["data"][kind]))
    return texts


def non_finite_cells(path: Path) -> dict[str, str]:
    """Cell id -> the first ``nan``/``inf`` it shows, with some context, for one executed notebook."""
    found = {}
    for cell in json.loads(path.read_text())["cells"]:
        for text in _outputs(cell):
            match = NON_FINITE.search(text)
            if match:
                found[cell.get("id", "?")] = text[max(0, match.start() - 60):match.end() + 30]
                break
    return found


def test_the_pattern_finds_printed_non_finite_numbers_and_nothing_else() -> None:
    for shown in ("p = nan", "+nan%", "-inf", "(NaN)", "ratio inf.", "<td>nan</td>", "interval -1.2 to inf"):
        assert NON_FINITE.search(shown), shown
    for fine in ("info", "infinite", "nanoseconds", "np.inf", "math.nan", "Infinity is a word", "none from one seed"):
        assert not NON_FINITE.search(fine), fine


def test_no_chapter_prints_nan_or_inf_except_where_it_means_to() -> None:
    unexpected = {}
    for path in _executed():
        for cell, context in non_finite_cells(path).items():
            if (path.name, cell) not in MEANT:
                unexpected[f"{path.name} cell {cell}"] = context
    assert not unexpected, ("these outputs show nan or inf; say it in words (findings.interval_text, "
                            f"detectable_text) or list the cell in MEANT with why: {unexpected}")


def test_every_cell_meant_to_print_a_non_finite_number_still_does() -> None:
    executed = {path.name: non_finite_cells(path) for path in _executed()}
    stale = [key for key in MEANT if key[1] not in executed.get(key[0], {})]
    assert not stale, f"these cells no longer print nan or inf: remove them from MEANT: {stale}"


#: The most characters of a printed line: what the text column shows without scrolling or wrapping
#: (about 900 px of the book's monospace at its size).
WIDEST_LINE = 100


def wide_lines(path: Path) -> dict[str, str]:
    """Cell id -> its first printed line (a stream or plain-text output) longer than :data:`WIDEST_LINE`."""
    found = {}
    for cell in json.loads(path.read_text())["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text" not in output and ("text/plain" not in data or "text/html" in data or "image/png" in data):
                continue                                  # a figure or a table shows its rich form, not this text
            text = "".join(output.get("text", data.get("text/plain", "")))
            line = next((line for line in text.splitlines() if len(line) > WIDEST_LINE), None)
            if line is not None:
                found[cell.get("id", "?")] = line[:WIDEST_LINE + 20]
                break
    return found


def test_the_width_check_finds_a_long_printed_line(tmp_path: Path) -> None:
    cell = {"cell_type": "code", "id": "c1", "outputs": [{"name": "stdout", "output_type": "stream",
                                                          "text": ["short\n", "x" * (WIDEST_LINE + 1)]}]}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"cells": [cell]}))
    assert list(wide_lines(path)) == ["c1"]


def test_no_chapter_prints_a_line_wider_than_the_column() -> None:
    wide = {f"{path.name} cell {cell}": line for path in _executed() for cell, line in wide_lines(path).items()}
    assert not wide, f"printed lines over {WIDEST_LINE} characters (a table or shorter sentences fit): {wide}"
