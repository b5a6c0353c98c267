"""The experiment chapters are written for a student: the result first, the method once, short code.

Each of chapters 8-11 opens with its result box (a hidden cell whose output is the experiment's
``report.result_box``) before its first section; links to the appendix that explains how a claim is
tested, and to its methods page (protocol, provenance, reruns, convergence, costs, reproduce commands);
keeps its code to short calls (at most 120 lines, 10 of them imports) and its prose to at most 4,000
words, naming Holm's correction at most three times; and asks at most a third of its self-check
questions about statistics rather than about the task and the aggregations.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from script_modules import load_script

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
#: The experiment chapters and their methods pages.
EXPERIMENTS = {"08_circle": "circle", "09_mixture": "mixture", "10_point_clouds": "pointcloud", "11_attention": "attention"}
APPENDIX = "appendix_testing"
MOST_CODE_LINES = 120
MOST_IMPORT_LINES = 10
MOST_WORDS = 4000
MOST_HOLM = 3
#: Words that make a self-check question one about the statistics rather than the science.
STATISTICS = re.compile(r"\b(holm|sign[- ]flip|sign test|p-value|p value|family|families|verdict|undecided|"
                        r"power|paired|pairing|correction|detectable|interval|seeds?|reproduced|contradicted)\b",
                        re.IGNORECASE)

times = load_script("chapter_times")


def _cells(chapter: str) -> list[dict]:
    return json.loads((BOOK / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _code_lines(chapter: str) -> list[str]:
    """The chapter's code lines, comments and blank lines left out, and its install cell (hidden from
    the book, the same in every chapter: ``scripts/install_cell.py``)."""
    return [line for cell in _cells(chapter) if cell["cell_type"] == "code"
            and "install-setfuncs" not in cell.get("metadata", {}).get("tags", [])
            for line in _source(cell).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _markdown(chapter: str) -> str:
    return "\n".join(_source(c) for c in _cells(chapter) if c["cell_type"] == "markdown")


def _self_check_questions(chapter: str) -> list[str]:
    """The numbered questions of the chapter's "Check yourself" boxes (class ``self-check``)."""
    questions = []
    for block in re.findall(r":::\{admonition\} Check yourself\n:class: self-check\n(.*?)\n:::", _markdown(chapter),
                            re.DOTALL):
        questions += [q.strip() for q in re.split(r"\n(?=\d+\. )", block.strip()) if re.match(r"\d+\. ", q.strip())]
    return questions


@pytest.mark.parametrize("chapter", EXPERIMENTS)
def test_the_result_box_comes_before_the_first_section(chapter: str) -> None:
    cells = _cells(chapter)
    first_section = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                         and re.search(r"^## ", _source(c), re.MULTILINE))
    boxes = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "report.result_box(" in _source(c)]
    assert boxes and boxes[0] < first_section, f"{chapter}: no result box before its first section"
    assert "remove-input" in cells[boxes[0]]["metadata"].get("tags", []), f"{chapter}: the box's code is shown"


@pytest.mark.parametrize("chapter", EXPERIMENTS)
def test_the_code_is_short_calls(chapter: str) -> None:
    lines = _code_lines(chapter)
    imports = [line for line in lines if re.match(r"\s*(import|from)\s", line)]
    assert len(lines) <= MOST_CODE_LINES, f"{chapter}: {len(lines)} code lines"
    assert len(imports) <= MOST_IMPORT_LINES, f"{chapter}: {len(imports)} import lines"


@pytest.mark.parametrize("chapter", EXPERIMENTS)
def test_the_prose_is_a_student_length_and_names_the_method_rarely(chapter: str) -> None:
    words = times.prose_words(BOOK / f"{chapter}.ipynb")
    assert words <= MOST_WORDS, f"{chapter}: {words} words of prose"
    holm = _markdown(chapter).count("Holm")
    assert holm <= MOST_HOLM, f"{chapter}: 'Holm' {holm} times"


@pytest.mark.parametrize("chapter", EXPERIMENTS)
def test_the_chapter_links_the_appendix_and_its_methods_page(chapter: str) -> None:
    text = _markdown(chapter)
    assert re.search(rf"\{{doc\}}`[^`]*{APPENDIX}>?`", text), f"{chapter}: no link to the appendix"
    assert re.search(rf"\{{doc\}}`[^`]*{chapter}_methods>?`", text), f"{chapter}: no link to its methods page"
    assert (BOOK / f"{chapter}_methods.ipynb").exists()


@pytest.mark.parametrize("chapter", EXPERIMENTS)
def test_most_self_checks_are_about_the_science(chapter: str) -> None:
    questions = _self_check_questions(chapter)
    assert questions, f"{chapter}: no self-check questions"
    about_statistics = [q for q in questions if STATISTICS.search(q)]
    assert 3 * len(about_statistics) <= len(questions), (chapter, about_statistics)


def test_the_appendix_and_the_methods_pages_are_in_the_table_of_contents() -> None:
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    for name in [APPENDIX] + [f"{chapter}_methods" for chapter in EXPERIMENTS]:
        assert f"book/{name}" in toc, name


def test_the_statistics_pattern_tells_the_method_from_the_science() -> None:
    assert STATISTICS.search("What does the Holm correction control?")
    assert STATISTICS.search("Why are the runs paired by seed?")
    assert not STATISTICS.search("Why does a mean blur the extreme particles that fix the circle?")
