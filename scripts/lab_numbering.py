"""The first cell of every chapter: its number, for JupyterLab's exercise and theorem numbers.

The HTML book (and the PDF, ``scripts/pdf_book.py``) numbers exercises, theorems and equations by
chapter: "Exercise 4.1". ``jupyterlab-myst`` renders one notebook at a time and numbers them from
1 ("Exercise 1") unless the notebook's frontmatter says otherwise. It reads frontmatter only from
the first Markdown cell (a YAML block between ``---`` lines), and of the numbering options it
understands, ``numbering: enumerator: "4.%s"`` puts the chapter in front of every number
(mystmd's frontmatter; checked in the browser test, ``tests/test_browser.py``).

Jupyter Book (myst-nb) would print such a block as a rule and a heading, so the block has a cell
of its own, tagged ``remove-cell``, which myst-nb leaves out of the HTML book, the PDF and the
student edition, while JupyterLab and the downloaded notebooks keep it. The chapter numbers follow
``_toc.yml``'s numbered parts, counted across parts as the book does (Theory 1–7, Experiments 8–11).

**A text fallback for what jupyterlab-myst cannot resolve.** jupyterlab-myst 2.7 does not read
BibTeX (a citation shows its key, ``soelch_deep_2019``: jupyterlab-myst issue #127), and it does
not see the figures that code cells draw (myst-nb's ``mystnb.figure`` metadata), so a
``{numref}`` to one shows its label. The same cell, below the frontmatter, lists this chapter's
figure labels with the numbers the book gives them ("Fig. 4.2", counted in the order of the
chapter's captioned figures, as Sphinx does) and its citation keys with the works they name
(``book/references.bib``): a reader in JupyterLab looks a key or a label up at the top of the
chapter.

    python scripts/lab_numbering.py --check   # exit status 1, naming each chapter that is out of date
    python scripts/lab_numbering.py --write   # insert or update the cell in every numbered chapter
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
#: Marks the cell (``--write`` replaces the cell with this tag) and names it (the cell id).
TAG = "lab-numbering"
#: Jupyter Book 1 (myst-nb) leaves a cell with this tag out of the book.
HIDE_TAG = "remove-cell"


def chapter_numbers(toc: Path = ROOT / "_toc.yml") -> dict[Path, int]:
    """Each chapter of a numbered part of ``toc``, as a notebook path, with its number."""
    contents = yaml.safe_load(toc.read_text(encoding="utf-8"))
    chapters = [entry["file"] for part in contents.get("parts", []) if part.get("numbered")
                for entry in part["chapters"]]
    return {toc.parent / f"{name}.ipynb": number for number, name in enumerate(chapters, start=1)
            if (toc.parent / f"{name}.ipynb").exists()}


#: A citation role and its keys: {cite}`a`, {cite:p}`a,b`, {cite:t}`a`.
CITATION = re.compile(r"\{cite(?::\w+)?\}`([^`]+)`")
BIBLIOGRAPHY = ROOT / "book" / "references.bib"


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def figure_labels(cells: list[dict]) -> list[str]:
    """The names of the captioned figures the code cells draw (``mystnb.figure``), in order."""
    return [figure["name"] for cell in cells if cell["cell_type"] == "code"
            if (figure := cell.get("metadata", {}).get("mystnb", {}).get("figure", {})).get("name")
            and figure.get("caption")]  # Sphinx numbers captioned figures only


def citation_keys(cells: list[dict]) -> list[str]:
    """The BibTeX keys the Markdown cells cite, in the order of their first citation."""
    keys = [key.strip() for cell in cells if cell["cell_type"] == "markdown"
            for group in CITATION.findall(_source(cell)) for key in group.split(",")]
    return list(dict.fromkeys(key for key in keys if key))


def work(key: str, bibliography: Path = BIBLIOGRAPHY) -> str:
    """``key``'s work as "Soelch et al. (2019), *On Deep Set ...*"."""
    from pybtex.database import parse_file  # sphinxcontrib-bibtex's parser, in requirements.txt

    entries = _entries(bibliography, parse_file)
    if key not in entries:
        return "not in book/references.bib"
    entry = entries[key]
    authors = entry.persons.get("author") or entry.persons.get("editor") or []
    names = " ".join(authors[0].last_names).replace("{", "").replace("}", "") if authors else "Anonymous"
    names += " et al." if len(authors) > 2 else (
        f" and {' '.join(authors[1].last_names)}" if len(authors) == 2 else "")
    title = entry.fields.get("title", "").replace("{", "").replace("}", "")
    return f"{names} ({entry.fields.get('year', 'n.d.')}), *{title}*"


_CACHE: dict[Path, Any] = {}


def _entries(bibliography: Path, parse_file: Any) -> Any:
    if bibliography not in _CACHE:
        _CACHE[bibliography] = parse_file(str(bibliography)).entries
    return _CACHE[bibliography]


def numbering_cell(number: int, cells: list[dict] | None = None) -> dict:
    """The frontmatter cell of chapter ``number``, with the fallback lists for ``cells``."""
    cells = cells or []
    lines = ["---", "numbering:", f'  enumerator: "{number}.%s"', "---", "",
             "*Reading this chapter in JupyterLab* (this cell is not in the book): exercises and "
             f"theorems are numbered as in the book (Exercise {number}.1).",
             ]
    figures, keys = figure_labels(cells), citation_keys(cells)
    if figures:
        lines += ["A reference to a figure shows its label here: "
                  + "; ".join(f"`{label}` is Fig. {number}.{k}" for k, label in enumerate(figures, start=1))
                  + "."]
    if keys:
        lines += ["A citation shows its key here: "
                  + "; ".join(f"`{key}` is {work(key)}" for key in keys) + "."]
    source = "\n\n".join(["\n".join(lines[:5]).rstrip(), *lines[5:]])
    return {"cell_type": "markdown", "id": TAG, "metadata": {"tags": [HIDE_TAG, TAG]},
            "source": source.splitlines(keepends=True)}


def with_numbering(notebook: dict, number: int) -> dict:
    """``notebook`` with the frontmatter cell of chapter ``number`` first (replacing an old one)."""
    cells = [cell for cell in notebook["cells"] if TAG not in cell.get("metadata", {}).get("tags", [])]
    return {**notebook, "cells": [numbering_cell(number, cells), *cells]}


def main(argv: list[str] | None = None) -> int:
    """Check or write the cell in every numbered chapter; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="name the chapters whose cell is missing or stale")
    action.add_argument("--write", action="store_true", help="insert or update the cell in every chapter")
    args = parser.parse_args(argv)
    stale = []
    for path, number in chapter_numbers().items():
        notebook = json.loads(path.read_text(encoding="utf-8"))
        updated = with_numbering(notebook, number)
        if updated == notebook:
            continue
        stale.append(path.relative_to(ROOT).as_posix())
        if args.write:
            path.write_text(json.dumps(updated, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if stale:
        print(("updated: " if args.write else "out of date (run scripts/lab_numbering.py --write): ")
              + ", ".join(stale))
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
