"""Every executed chapter shows what it showed when its digests were committed.

``tests/data/chapter-outputs.json`` holds, per chapter and code cell, a digest of the cell's text output
(``scripts/chapter_outputs.py``: measured times, dates and addresses masked, images left out). A change to
the package that should leave the chapters alone (a restructuring, a rename) is proved to by this test;
a change that means to change what a chapter shows writes the digests again (``python
scripts/chapter_outputs.py --write`` after ``make notebooks``) in the same commit.

A trained model's printed numbers also depend on the CPU (the math libraries' code paths): the digests
name the machine that wrote them, and the cells seen to vary with it are compared on that machine only.

``make test`` runs it after the chapters (``EXECUTED_OUTPUTS_REQUIRED=1``); ``make unit`` leaves it out,
and a run without the executed copies skips it and says how to make them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from script_modules import load_script

ROOT = Path(__file__).resolve().parent.parent
chapter_outputs = load_script("chapter_outputs")

REQUIRED = bool(os.environ.get("CI") or os.environ.get("EXECUTED_OUTPUTS_REQUIRED"))


def test_a_changed_output_is_found_and_a_masked_time_is_not() -> None:
    cell = {"outputs": [{"output_type": "stream", "name": "stdout", "text": ["trained in 12.5 s, median 0.71\n"]}]}
    other_time = {"outputs": [{"output_type": "stream", "name": "stdout", "text": ["trained in 3 s, median 0.71\n"]}]}
    other_value = {"outputs": [{"output_type": "stream", "name": "stdout", "text": ["trained in 12.5 s, median 0.72\n"]}]}
    assert chapter_outputs.cell_text(cell) == chapter_outputs.cell_text(other_time)
    assert chapter_outputs.cell_text(cell) != chapter_outputs.cell_text(other_value)
    expected = {"a.ipynb": {"c1": "x", "c2": "y"}}
    assert chapter_outputs.differences(expected, {"a.ipynb": {"c1": "x", "c2": "z"}}) == ["a.ipynb, cell c2: output changed"]
    assert chapter_outputs.differences(expected, {}) == ["a.ipynb: not executed"]


def test_a_rich_output_is_compared_by_its_html_and_its_html_masks_a_time_column() -> None:
    def shown(plain: str, seconds: str) -> dict:
        html = f"<table><tr><th>model</th><th>training (s)</th></tr><tr><td>mean</td><td>{seconds}</td></tr></table>"
        return {"outputs": [{"output_type": "display_data", "data": {"text/plain": plain, "text/html": html}}]}

    assert chapter_outputs.cell_text(shown("Table(seconds=0.93)", "0.9")) == \
        chapter_outputs.cell_text(shown("Table(seconds=0.77)", "0.8"))
    plain_only = {"outputs": [{"output_type": "execute_result", "data": {"text/plain": "0.93"}}]}
    assert chapter_outputs.cell_text(plain_only) == "text/plain:0.93"


def test_a_cell_left_out_is_not_compared_and_every_cell_left_out_exists() -> None:
    expected = {"a.ipynb": {"c1": "x", "c2": "y"}}
    changed = {"a.ipynb": {"c1": "x", "c2": "z"}}
    assert chapter_outputs.differences(expected, changed, {"a.ipynb": frozenset({"c2"})}) == []
    assert chapter_outputs.differences(expected, changed, {"a.ipynb": frozenset({"c1"})}) != []
    for name, cells in chapter_outputs.VARIES_WITH_HARDWARE.items():
        code = {c["id"] for c in json.loads((ROOT / "book" / name).read_text(encoding="utf-8"))["cells"]
                if c["cell_type"] == "code"}
        assert cells <= code, f"VARIES_WITH_HARDWARE names cells {sorted(cells - code)} that {name} lacks"


def executed_digests() -> dict:
    """The digests of the executed chapters in ``.nbmake/`` (failing or skipping, as REQUIRED says, without)."""
    chapters = sorted((ROOT / "book").glob("*.ipynb"))
    missing = [c.name for c in chapters if not (chapter_outputs.EXECUTED / c.name).is_file()]
    if missing:
        message = f"{chapter_outputs.EXECUTED} lacks the executed chapters {missing}: run `make notebooks` first"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    _, expected = chapter_outputs.read_digests()
    assert sorted(expected) == [c.name for c in chapters]
    return chapter_outputs.digests(chapter_outputs.EXECUTED)


def test_every_chapter_shows_what_it_showed() -> None:
    found = executed_digests()
    _, expected = chapter_outputs.read_digests()
    assert chapter_outputs.differences(expected, found, chapter_outputs.VARIES_WITH_HARDWARE) == []


def test_the_cells_that_vary_with_the_cpu_show_what_they_showed_on_its_machine() -> None:
    found = executed_digests()
    written_on, expected = chapter_outputs.read_digests()
    if chapter_outputs.machine() != written_on:
        pytest.skip(chapter_outputs.comparison(found)[1])
    assert chapter_outputs.differences(expected, found) == []
