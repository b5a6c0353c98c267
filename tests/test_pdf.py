"""The PDF book that ``make pdf`` builds: every chapter and page of ``_toc.yml`` but the API
reference (a PDF of its own, ``make api-pdf``) is in it, explorables print as still frames with their
note, result tables as tables whose signed numbers never break, exercises are numbered as in
the HTML book ("Exercise 4.1"), and the README states its page count.

The tests read ``_build/latex/deep-sets-book.pdf`` (``BOOK_PDF=<file>`` points them at another)
and skip when there is none; with ``BOOK_PDF_TEST_REQUIRED=1`` a missing PDF fails instead.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pypdf
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PDF = Path(os.environ.get("BOOK_PDF", ROOT / "_build" / "latex" / "deep-sets-book.pdf"))
REQUIRED = os.environ.get("BOOK_PDF_TEST_REQUIRED") == "1"
#: The text a widget or an HTML table would print as without scripts/pdf_book.py.
STAND_INS = ("VBox(children=", "HBox(children=", "<IPython.core.display.HTML object>")
#: Pages of ``_toc.yml`` the PDF leaves out (``scripts/pdf_book.py``'s LEFT_OUT).
LEFT_OUT = ("book/api",)


def toc_sources() -> list[Path]:
    """The root page, then every chapter and page of ``_toc.yml``, as source files."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]] + [entry["file"] for part in toc["parts"] for entry in part["chapters"]
                             if entry["file"] not in LEFT_OUT]
    return [next(path for path in (ROOT / f"{name}.ipynb", ROOT / f"{name}.md") if path.exists())
            for name in names]


def markdown_of(path: Path) -> str:
    """A page's Markdown: a notebook's Markdown cells, or the Markdown file."""
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def title_of(path: Path) -> str:
    """A page's first level-1 heading, without Markdown's code marks."""
    heading = re.search(r"^# (.+)$", markdown_of(path), flags=re.MULTILINE)
    assert heading, f"{path} has no level-1 heading"
    return heading.group(1).replace("`", "").strip()


def explorables_shown(path: Path) -> int:
    """How many explorables the chapter shows, as ``make notebooks`` executed it (``.nbmake/``): the
    outputs whose HTML is an explorable's element (``setfuncs.explorables``)."""
    executed = ROOT / ".nbmake" / path.name
    if not executed.is_file():
        pytest.fail(f"{executed} is missing: the PDF test reads the chapters `make notebooks` executed")
    cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    return sum("".join(output.get("data", {}).get("text/html", "")).startswith('<figure class="explorable"')
               for cell in cells for output in cell.get("outputs", []))


@pytest.fixture(scope="module")
def pdf() -> pypdf.PdfReader:
    if not PDF.is_file():
        message = f"no PDF book at {PDF}: run `make pdf`"
        if REQUIRED:
            pytest.fail(f"{message} (BOOK_PDF_TEST_REQUIRED=1)")
        pytest.skip(message)
    return pypdf.PdfReader(PDF)


def squeezed(text: str) -> str:
    """``text`` without whitespace: the PDF's text comes out with some spaces between words lost."""
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def text(pdf: pypdf.PdfReader) -> str:
    """The PDF's text, :func:`squeezed`."""
    return squeezed("".join(page.extract_text() for page in pdf.pages))


def outline_titles(outline: list) -> list[str]:
    """The titles of the PDF's bookmarks, at every depth."""
    return [title for item in outline
            for title in (outline_titles(item) if isinstance(item, list) else [item.title])]


def test_every_chapter_and_page_is_in_the_pdf(pdf: pypdf.PdfReader, text: str) -> None:
    root, *pages = toc_sources()
    assert squeezed(title_of(root)) in text[:200], "the title page lacks the root page's title"
    bookmarks = {" ".join(title.split()) for title in outline_titles(pdf.outline)}
    missing = [f"{path.name}: {title}" for path in pages
               if (title := title_of(path)) not in bookmarks]
    assert not missing, f"chapters missing from the PDF's table of contents: {missing}"


def test_explorables_print_as_still_frames_with_their_note(text: str) -> None:
    from setfuncs.explorables.base import STILL_NOTE

    # the chapters `make notebooks` runs (book/*.ipynb); the teaching pages, which the build runs, show none
    shown = sum(explorables_shown(path) for path in toc_sources()
                if path.suffix == ".ipynb" and path.parent == ROOT / "book")
    assert shown >= 11, "an explorable in every chapter"
    assert text.count(squeezed(STILL_NOTE)) == shown


def test_no_output_prints_as_its_python_stand_in(text: str) -> None:
    assert not [stand_in for stand_in in STAND_INS if squeezed(stand_in) in text]


def test_the_api_reference_is_left_out(pdf: pypdf.PdfReader, text: str) -> None:
    bookmarks = {" ".join(title.split()) for title in outline_titles(pdf.outline)}
    api = title_of(ROOT / "book" / "api.md")
    assert api not in bookmarks and squeezed(api) not in text
    assert not re.search(r"classsetfuncs\.\w+\.\w+\(", text), "an autodoc class signature is in the PDF"


def test_exercises_are_numbered_by_chapter_as_in_the_html_book(text: str) -> None:
    assert re.search(r"Exercise\d+\.\d+\(", text), "no exercise title like 'Exercise 4.1 (...'"
    assert not re.findall(r"Exercise\d+\.\d+\.\d+", text)


def test_signed_numbers_in_tables_are_unbreakable(pdf: pypdf.PdfReader) -> None:
    tex = PDF.with_suffix(".tex")
    if not tex.is_file():
        pytest.fail(f"no LaTeX source next to the PDF: {tex}")
    source = tex.read_text(encoding="utf-8")
    tables = re.findall(r"\\begin\{(tabulary|longtable|tabular)\}(.*?)\\end\{\1\}", source, flags=re.DOTALL)
    assert tables, "no table in the PDF"
    mbox = re.compile(r"\\mbox\{(?:[^{}]|\{[^{}]*\})*\}")
    broken = [found for _, body in tables
              for found in re.findall(r".{0,30}(?:−|\\sphinxhyphen\{\})\d.{0,10}", mbox.sub("", body))]
    assert not broken, f"signed numbers LaTeX may break after the minus: {broken[:5]}"
    assert "\\mbox{" in source


def test_the_readme_states_the_page_count(pdf: pypdf.PdfReader) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"deep-sets-book\.pdf`\s*\((\d+)\s+pages", readme)
    assert stated, "the README no longer says how many pages the PDF has"
    pages, measured = int(stated.group(1)), len(pdf.pages)
    assert abs(pages - measured) <= 0.1 * measured, (
        f"the README says {pages} pages, the PDF has {measured}: update README.md, 'Build and test'")
