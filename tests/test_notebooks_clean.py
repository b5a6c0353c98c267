"""The chapters are committed clean: no outputs, no execution counts, no widget state; and every
cell has the id nbformat 4.5 requires (without one, nbformat warns that it "will become a hard
error", and JupyterLab invents one on every save).

Outputs belong in the build (nbmake and jupyter-book execute the chapters); in git they bloat
the history and go stale. Widget state in the notebook metadata is an output too.
"""

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
#: the chapters, and the chapters that wait in drafts/ for their sweep's rerun
NOTEBOOKS = sorted(BOOK.glob("*.ipynb")) + sorted((ROOT / "drafts").glob("*.ipynb"))


def test_the_book_has_chapters() -> None:
    assert list(BOOK.glob("*.ipynb")), f"no notebooks in {BOOK}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[f"{p.parent.name}/{p.name}" for p in NOTEBOOKS])
def test_notebook_is_clean(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    dirty = [f"cell {i}: {what}"
             for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"
             for what, found in (("outputs", cell.outputs),
                                 ("execution count", cell.execution_count is not None),
                                 ("execution timing metadata", "execution" in cell.metadata))
             if found]
    if "widgets" in notebook.metadata:
        dirty.append("widget state in the notebook metadata")
    assert not dirty, f"{path.name} is not clean: {dirty}; clear outputs before committing"


#: every notebook the book builds or may build: the chapters, the teaching pages, the drafts
ALL_NOTEBOOKS = sorted(BOOK.rglob("*.ipynb")) + sorted((ROOT / "drafts").glob("*.ipynb"))


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=[p.relative_to(ROOT).as_posix() for p in ALL_NOTEBOOKS])
def test_every_cell_has_a_unique_valid_id(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert (notebook["nbformat"], notebook["nbformat_minor"]) >= (4, 5), f"{path.name}: ids need nbformat 4.5"
    ids = [cell.get("id") for cell in notebook["cells"]]
    missing = [i for i, cell_id in enumerate(ids) if cell_id is None]
    assert not missing, f"{path.name}: cells {missing} have no id; give each a short name (letters, digits, - or _)"
    invalid = [cell_id for cell_id in ids if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", cell_id)]
    assert not invalid, f"{path.name}: ids {invalid} are not 1-64 letters, digits, - or _"
    repeated = sorted({cell_id for cell_id in ids if ids.count(cell_id) > 1})
    assert not repeated, f"{path.name}: ids {repeated} name more than one cell"
