"""Each chapter's run time is the measured one (``setfuncs.runtime`` reading
``results/benchmarks/chapter-times.json``), printed under its introduction; no chapter types one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import setfuncs.runtime as runtime
from setfuncs.experiments.results import results_file

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def cells(chapter: Path) -> list[dict]:
    return json.loads(chapter.read_text())["cells"]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_every_chapter_prints_its_own_measured_time_under_its_introduction(chapter: Path) -> None:
    found = [(i, cell) for i, cell in enumerate(cells(chapter)) if cell.get("id") == "run-time"]
    assert len(found) == 1, "one run-time cell"
    index, cell = found[0]
    before = [c for c in cells(chapter)[:index] if c["cell_type"] == "code"]
    assert [c["metadata"]["tags"] for c in before] == [["remove-cell", "install-setfuncs"]], \
        "the run-time cell comes right after the install cell, before the imports"
    assert cell["metadata"]["tags"] == ["remove-input"]
    assert f"print(run_time_line({chapter.stem!r}))" in "".join(cell["source"])
    line = runtime.run_time_line(chapter.stem)
    assert re.fullmatch(r"Run time: \d+ s on one core at the quick budget \(measured \d+ \w+ \d{4}, commit \w{7}\)\.",
                        line), line


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_no_chapter_types_a_run_time(chapter: Path) -> None:
    prose = "".join("".join(c["source"]) for c in cells(chapter) if c["cell_type"] == "markdown")
    typed = re.findall(r"Run time\.\*\*[^\n]*?\d+\s*(?:to \d+\s*)?(?:s\b|seconds|minutes)", prose)
    assert typed == [], f"{chapter.name} states a run time in its prose: {typed}"


def test_every_chapter_was_measured() -> None:
    times = json.loads(results_file(runtime.TIMES_FILE).read_text())["chapters"]
    # the chapters, and the pages a course session reads besides (the appendix, the teaching pages)
    assert [name for name in sorted(times) if "/" not in name and not name.startswith("appendix")] == [
        path.stem for path in CHAPTERS]
    assert all(entry["status"] == "ok" and entry["seconds"] > 0 for entry in times.values())


@pytest.fixture
def times_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "chapter-times.json"
    monkeypatch.setattr(runtime, "results_file", lambda name: path)
    monkeypatch.delenv("SETFUNCS_BUDGET", raising=False)
    path.write_text(json.dumps({
        "provenance": {"git_commit": "0123456789abcdef", "date": "2026-11-27T13:22:52+00:00", "budget": "quick",
                       "hardware": {"cpu_count": 2, "cpu_model": "AMD EPYC"}},
        "chapters": {"01_sets": {"seconds": 26.2, "status": "ok", "load_before": 1.4},
                     "02_sum_decomposition": {"seconds": 3.0, "status": "failed", "error": "NameError: x"}}}))
    return path


def test_the_line_gives_the_time_budget_date_and_commit(times_file: Path) -> None:
    assert runtime.run_time_line("01_sets") == (
        "Run time: 26 s on one core at the quick budget (measured 27 November 2026, commit 0123456).")


def test_another_budget_is_said_to_take_longer(times_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SETFUNCS_BUDGET", "full")
    assert runtime.run_time_line("01_sets").endswith("This kernel runs the full budget, which takes far longer.")


def test_a_chapter_not_measured_or_failed_says_so(times_file: Path) -> None:
    assert "is not in benchmarks/chapter-times.json yet" in runtime.run_time_line("12_new")
    failed = runtime.run_time_line("02_sum_decomposition")
    assert failed.startswith("Run time: not known") and "NameError: x" in failed and "3" not in failed


@pytest.mark.parametrize("content", ["{", "[]", json.dumps({"chapters": {}}),
                                     json.dumps({"provenance": {"date": "yesterday", "hardware": {}}, "chapters": {}})])
def test_a_broken_file_is_refused_naming_it(times_file: Path, content: str) -> None:
    times_file.write_text(content)
    with pytest.raises(ValueError, match=re.escape(str(times_file)) + ".*scripts/chapter_times.py"):
        runtime.run_time_line("01_sets")
