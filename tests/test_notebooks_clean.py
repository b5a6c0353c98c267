"""The chapters are committed clean: no outputs, no execution counts, no widget state.

Outputs belong in the build (nbmake and jupyter-book execute the chapters); in git they bloat
the history and go stale. Widget state in the notebook metadata is an output too.
"""

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
