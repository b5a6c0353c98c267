"""The student edition's answers and PDF (``scripts/student_edition.py``, ``make student-pdf``), on a
made-up book of one chapter: the self-check answers go wherever the solutions go (pages,
``_sources``, ``.ipynb`` downloads, search index, the LaTeX source of the PDF), the introduction
speaks to students, and the PDF numbers exercises by chapter as the HTML book does, keeps signed
numbers in tables whole and leaves the API reference out. The PDF is checked on its LaTeX source
(``--builder latex``, a few seconds): XeLaTeX itself runs in ``make student-pdf`` only.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from script_modules import load_script

ROOT = Path(__file__).resolve().parents[1]


student_edition = load_script("student_edition")

CHAPTER_CELLS = [
    "# A chapter\n\nA table where the sign is the result:\n\n| claim | gap |\n| --- | --- |\n"
    "| sum beats mean | −0.1234 |\n| max beats sum | -0.5678 |\n\nThe API: {py:func}`setfuncs.aggregation`.",
    ":::{admonition} Check yourself\n:class: self-check\n1. What is VISIBLE-QUESTION?\n:::\n\n"
    ":::{admonition} Answers to \"Check yourself\"\n:class: dropdown self-check-answers\n"
    "1. SECRET-ANSWER-COLONS\n:::",
    "```{admonition} Answers to \"Check yourself\"\n:class: self-check-answers dropdown\n\nSECRET-ANSWER-TICKS\n```",
    "## Exercises\n\n```{exercise} Doubling — basic\n:label: ex-double\n\nDouble VISIBLE-EXERCISE.\n```\n\n"
    "```{solution} ex-double\n:class: dropdown\n\nSECRET-SOLUTION\n```\n\nSee {numref}`ex-double`.",
]
SECRETS = ["SECRET-ANSWER-COLONS", "SECRET-ANSWER-TICKS", "SECRET-SOLUTION"]
VISIBLE = ["VISIBLE-QUESTION", "VISIBLE-EXERCISE"]


@pytest.fixture
def book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A made-up repository: the book's introduction and configuration, one made-up chapter, and
    the API page; ``student_edition`` reads it instead of the book."""
    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    for name in ("intro.md", "references.bib", "api.md"):
        shutil.copyfile(ROOT / "book" / name, root / "book" / name)
    shutil.copyfile(ROOT / "_config.yml", root / "_config.yml")
    # the configuration's local extensions and templates (scripts/book_pages.py, scripts/phone_figures.py, _templates/)
    (root / "scripts").mkdir()
    for extension in ("book_pages.py", "phone_figures.py"):
        shutil.copyfile(ROOT / "scripts" / extension, root / "scripts" / extension)
    shutil.copytree(ROOT / "_templates", root / "_templates")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(cell) for cell in CHAPTER_CELLS])
    nbformat.write(notebook, root / "book" / "01_chapter.ipynb")
    other = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "# Another chapter\n\nAs in {numref}`ex-double`, double it ({ref}`ex-double`).")])
    nbformat.write(other, root / "book" / "02_other.ipynb")
    toc = ("format: jb-book\nroot: book/intro\nparts:\n  - caption: Theory\n"
           "    numbered: true\n    chapters:\n      - file: book/01_chapter\n      - file: book/02_other\n")
    (root / "toc.yml").write_text(toc, encoding="utf-8")
    (root / "toc-with-api.yml").write_text(toc + "  - caption: Reference\n    chapters:\n      - file: book/api\n",
                                           encoding="utf-8")
    monkeypatch.setattr(student_edition, "ROOT", root)
    monkeypatch.setattr(student_edition, "BOOK_CACHE", tmp_path / "cache")
    return root


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_answers_in_every_fence_and_option_form_are_removed() -> None:
    for cell in CHAPTER_CELLS[1:3]:
        stripped = student_edition.strip_solutions(cell, "cell")
        assert "SECRET" not in stripped
    yaml_options = "```{admonition} Answers\n---\nclass: dropdown self-check-answers\n---\nSECRET\n```\nAfter."
    assert student_edition.strip_solutions(yaml_options, "cell") == "After."
    kept = ":::{admonition} Check yourself\n:class: self-check\nVISIBLE\n:::"
    assert student_edition.strip_solutions(kept, "cell") == kept


def test_an_answer_it_cannot_remove_is_an_error() -> None:
    with pytest.raises(student_edition.SolutionError, match="self-check-answers"):
        student_edition.strip_solutions('<div class="self-check-answers">SECRET</div>', "book/page.md")


def test_the_student_introduction_speaks_of_downloads_not_launch_buttons() -> None:
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    student = student_edition.student_intro(intro)
    assert not re.search(r"launch button|folded", student, re.IGNORECASE)
    assert "download" in student.lower() and "self-check" in student
    with pytest.raises(student_edition.SolutionError, match="STUDENT_INTRO"):
        student_edition.student_intro(intro + "\nUse the launch buttons.\n")
    with pytest.raises(student_edition.SolutionError, match="matched 0 times"):
        student_edition.student_intro("# An introduction that changed its words\n")


def test_the_html_edition_loses_answers_everywhere(book: Path, tmp_path: Path) -> None:
    output = student_edition.build(tmp_path / "student", book / "toc.yml", execute=False)
    files = [path for path in output.rglob("*") if path.suffix in {".html", ".ipynb", ".md", ".js", ".txt"}
             and "_static" not in path.parts]
    leaks = [(str(path.relative_to(output)), secret) for path in files for secret in SECRETS
             if secret.lower() in path.read_text(encoding="utf-8", errors="replace").lower()]
    assert not leaks, f"answers or solutions in the student edition: {leaks}"
    page = (output / "book" / "01_chapter.html").read_text(encoding="utf-8")
    assert all(text in page for text in VISIBLE)
    search = (output / "searchindex.js").read_text(encoding="utf-8").lower()
    assert "doubl" in search and "secret" not in search
    download = json.loads((output / "_sources" / "book" / "01_chapter.ipynb").read_text(encoding="utf-8"))
    assert not any("SECRET" in "".join(cell["source"]) for cell in download["cells"])
    intro = _flat((output / "book" / "intro.html").read_text(encoding="utf-8"))
    assert "launch button" not in intro.lower() and "download button" in intro.lower()


def test_the_student_pdf_source_has_no_answers_and_the_html_numbering(book: Path, tmp_path: Path) -> None:
    latex = student_edition.build(tmp_path / "student", book / "toc-with-api.yml", execute=False, pdf=True,
                                  builder="latex")
    tex = (latex / f"{student_edition.PDF_NAME}.tex").read_text(encoding="utf-8")
    text = tex.replace(r"\sphinxhyphen{}", "-")  # how Sphinx writes "-" in LaTeX
    assert not [secret for secret in SECRETS if secret in text]
    assert all(visible in text for visible in VISIBLE)
    assert "Exercise 1.1 (Doubling" in tex, "numbered by chapter, as the HTML book: not 1.2.1"
    assert not re.search(r"Exercise \d+\.\d+\.\d+", tex)
    # {numref} to the exercise from its chapter and from the next, and {ref} from the next: the
    # number, not \ref ("??"), linked to the exercise's own label.
    assert tex.count(r"\hyperref[exercise:ex-double]{Exercise 1.1}") == 3
    assert not re.search(r"\\ref\{[^}]*ex-double", tex)
    assert not re.search(r"\\hyperref\[\\detokenize\{[^}]*ex-double\}\]", tex), "a dead link"
    assert r"\mbox{−0.1234}" in tex and re.search(r"\\mbox\{\S*0\.5678\}", tex), "signed numbers unbreakable"
    assert "Plain aggregations" not in tex and "automodule" not in tex, "the API reference is left out"
    assert "launch button" not in tex.lower()
