"""JupyterLab's numbers and fallbacks (``scripts/lab_numbering.py``): each chapter's first cell gives
jupyterlab-myst the chapter number (``numbering: enumerator: "4.%s"``, so "Exercise 4.1" as in the
HTML book and the PDF), and lists the figure labels and citation keys jupyterlab-myst cannot resolve
with the book's numbers and works; the book leaves the cell out (``remove-cell``). Whether
jupyterlab-myst renders "Exercise 4.1" is checked in JupyterLab itself (``tests/test_browser.py``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("lab_numbering", ROOT / "scripts" / "lab_numbering.py")
lab_numbering = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lab_numbering)


def made_up() -> dict:
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A chapter\n\nAs {cite:p}`soelch_deep_2019,zaheer_deep_2017` show, "
                                      "see {numref}`x-fig-b`."),
        nbformat.v4.new_code_cell("plot()", metadata={"mystnb": {"figure": {"name": "x-fig-a", "caption": "A."}}}),
        nbformat.v4.new_code_cell("plot()", metadata={"mystnb": {"figure": {"name": "x-fig-none"}}}),
        nbformat.v4.new_code_cell("plot()", metadata={"mystnb": {"figure": {"name": "x-fig-b", "caption": "B."}}}),
        nbformat.v4.new_markdown_cell("Again {cite}`soelch_deep_2019`, and {cite:t}`no_such_key`."),
    ])
    return json.loads(nbformat.writes(notebook))


def test_the_cell_comes_first_with_the_chapter_number_and_is_hidden_from_the_book() -> None:
    original = made_up()
    notebook = lab_numbering.with_numbering(original, 4)
    cell = notebook["cells"][0]
    source = "".join(cell["source"])
    assert cell["cell_type"] == "markdown" and cell["metadata"]["tags"] == ["remove-cell", "lab-numbering"]
    frontmatter = source.split("---")[1]
    assert yaml.safe_load(frontmatter) == {"numbering": {"enumerator": "4.%s"}}
    assert source.startswith("---\n") and notebook["cells"][1:] == original["cells"]
    assert lab_numbering.with_numbering(notebook, 4) == notebook, "writing twice changes nothing"
    assert "4.%s" not in "".join(lab_numbering.with_numbering(notebook, 5)["cells"][0]["source"])


def test_the_fallback_names_figures_by_their_book_numbers_and_keys_by_their_works() -> None:
    source = "".join(lab_numbering.with_numbering(made_up(), 4)["cells"][0]["source"])
    assert "`x-fig-a` is Fig. 4.1; `x-fig-b` is Fig. 4.2." in source, "uncaptioned figures are not numbered"
    assert "x-fig-none" not in source
    assert "`soelch_deep_2019` is Soelch et al. (2019), *On Deep Set Learning and the Choice of Aggregations*" in source
    assert "`zaheer_deep_2017` is Zaheer et al. (2017), *Deep Sets*" in source
    assert source.count("soelch_deep_2019") == 1 and "`no_such_key` is not in book/references.bib" in source


def test_chapters_are_numbered_as_the_table_of_contents_counts_them() -> None:
    numbers = lab_numbering.chapter_numbers()
    assert numbers[ROOT / "book" / "01_sets.ipynb"] == 1 and numbers[ROOT / "book" / "04_logsumexp.ipynb"] == 4
    assert sorted(numbers.values()) == list(range(1, len(numbers) + 1))
    assert all(path.parent == ROOT / "book" for path in numbers)


def test_every_chapter_carries_its_cell() -> None:
    assert lab_numbering.main(["--check"]) == 0, "run: .venv/bin/python scripts/lab_numbering.py --write"
