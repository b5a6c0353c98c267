"""Put notebooks that nbmake has executed into the book's jupyter-cache.

``make test`` runs nbmake with ``--overwrite`` on copies of the chapters, then this script, then
``jupyter-book build``: the build (``execute_notebooks: cache``) finds every chapter in the cache
and does not run it again, so each notebook runs once per ``make test``.

A chapter is cached as its *source* notebook with the executed copy's outputs, execution counts
and its ``language_info`` metadata, so it hashes exactly like the source the book build reads (nbmake
adds timing metadata to cells, which would change the hash). The executed copy's widget state is
left out: the HTML book shows no widget view (its explorables draw themselves from their own
``text/html``), and myst-nb would otherwise put the state's JSON, and a widget runtime, on the page.

Usage: ``python scripts/seed_book_cache.py CACHE_DIR SOURCE_DIR EXECUTED.ipynb...``
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

#: Notebook metadata that execution writes and the rendered book uses.
EXECUTION_METADATA = ("language_info",)


def with_outputs(source: nbformat.NotebookNode,
                 executed: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The source notebook carrying the executed notebook's outputs and execution metadata."""
    if [c.source for c in source.cells] != [c.source for c in executed.cells]:
        raise ValueError("the executed notebook's cells differ from its source")
    for cell, done in zip(source.cells, executed.cells):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = done.outputs, done.execution_count
    for key in EXECUTION_METADATA:
        if key in executed.metadata:
            source.metadata[key] = executed.metadata[key]
    return source


def main(cache_dir: str, source_dir: str, *executed_paths: str) -> None:
    """Cache each executed notebook under the path of its source in ``source_dir``."""
    cache = get_cache(cache_dir)
    for executed_path in map(Path, executed_paths):
        source_path = Path(source_dir) / executed_path.name
        notebook = with_outputs(nbformat.read(source_path, as_version=4),
                                nbformat.read(executed_path, as_version=4))
        bundle = CacheBundleIn(notebook, str(source_path.resolve()))
        record = cache.cache_notebook_bundle(bundle, check_validity=True, overwrite=True)
        print(f"cached {source_path} as record {record.pk}")


if __name__ == "__main__":
    main(*sys.argv[1:])
