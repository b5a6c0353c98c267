"""Build the student edition of the book: the exercises without their solutions, everywhere.

``hide_solutions`` (sphinx-exercise) only leaves solutions off the pages; the ``_sources/`` files,
the ``.ipynb`` downloads and the notebooks behind the launch buttons still hold them. This script
copies the book's sources (``book/``, ``_config.yml``, a table of contents) into
``OUT/src``, removes every ``{solution}`` block from the notebooks' Markdown cells and from the
Markdown pages, and builds that copy with ``jupyter-book build`` into ``OUT/_build/html``: pages,
``_sources`` and downloads all come from the stripped copy.

* **Outputs from the book's cache.** jupyter-cache hashes a notebook by its code cells only, and
  stripping touches Markdown cells only, so the student edition reads the executed chapters from
  the book's own cache (``_build/.jupyter_cache``): after ``make book`` nothing runs again. A
  chapter missing from the cache is executed and cached there, for both editions.
* **No launch buttons, no repository button.** They open the repository's notebooks, which hold
  the solutions; the student edition has neither (download the ``.ipynb`` instead).
* **Checked.** After the build every page, ``_sources`` file and the search index is scanned for
  what a solution leaves behind; any find fails the build and names the files.

Usage: ``python scripts/student_edition.py [--out _build/student] [--toc _toc.yml] [--no-execute]``.
A table of contents other than the book's own builds without ``-W -n``: its pages may refer to
pages it leaves out.
"""

from __future__ import annotations

import argparse
import copy
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
#: The executed chapters of the normal build (``execute.cache`` is unset in ``_config.yml``).
BOOK_CACHE = ROOT / "_build" / ".jupyter_cache"
#: A solution directive opens a fence of 3+ backticks, tildes or colons (MyST ``colon_fence``).
SOLUTION_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,}|:{3,})\{solution\}")
#: What a solution leaves in a source file when it was not removed (incl. the gated syntax).
SOLUTION_SOURCE = re.compile(r"\{solution(-start|-end)?\}|\.\. solution(-start|-end)?::")
#: What a rendered solution leaves in HTML: its admonition and its title in the search index.
SOLUTION_HTML = re.compile(r'class="solution[ "]|Solution to Exercise')
FOOTER_NOTE = "Student edition: the exercises' solutions are left out."


class SolutionError(ValueError):
    """A solution that this script cannot remove, or one that survived the build."""


def strip_solutions(text: str, source: str) -> str:
    """``text`` (MyST Markdown) without its ``{solution}`` blocks; ``source`` names it in errors.

    A block runs from its opening fence to the first line that is only a fence of the same
    character and at least the same length (CommonMark's rule), so code fences nested inside a
    four-backtick solution stay inside it; a fence that never closes runs to the end of ``text``
    (a notebook cell or a page), as MyST renders it. One blank line after a removed block goes too.
    """
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    index = 0
    while index < len(lines):
        opening = SOLUTION_OPEN.match(lines[index])
        if opening is None:
            kept.append(lines[index])
            index += 1
            continue
        fence = opening["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        index = next((j for j in range(index + 1, len(lines)) if closing.match(lines[j])), len(lines)) + 1
        if index < len(lines) and not lines[index].strip() and (not kept or not kept[-1].strip()):
            index += 1
    stripped = "".join(kept)
    left = SOLUTION_SOURCE.search(stripped)
    if left:
        raise SolutionError(f"{source}: {left.group()} cannot be removed by scripts/student_edition.py; "
                            "write each solution as one fenced block, ```{solution} label ... ```")
    if stripped == text:
        return text
    return stripped.rstrip() + ("\n" if text.endswith("\n") else "")


def strip_notebook(notebook: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    """A copy of ``notebook`` without solutions; a Markdown cell left empty is dropped.

    Code cells are kept as they are, so the copy hashes like the original in jupyter-cache.
    """
    notebook = copy.deepcopy(notebook)
    cells = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            cell.source = strip_solutions(cell.source, f"{source}, cell {number}")
            if not cell.source.strip():
                continue
        cells.append(cell)
    notebook.cells = cells
    return notebook


def student_config(config: dict, cache: Path, execute: bool) -> dict:
    """The book's ``_config.yml`` (as a dict) for the student copy built in another folder."""
    config = copy.deepcopy(config)
    config["title"] = f"{config['title']} (student edition)"
    run = config.setdefault("execute", {})
    run["cache"] = str(cache)
    if not execute:
        run["execute_notebooks"] = "off"
    config["launch_buttons"] = {"binderhub_url": "", "colab_url": "", "jupyterhub_url": "", "thebe": False}
    html = config.setdefault("html", {})
    html.update(use_repository_button=False, use_issues_button=False, use_edit_page_button=False)
    html["extra_footer"] = " ".join(filter(None, [FOOTER_NOTE, html.get("extra_footer")]))
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    if "html_static_path" in sphinx:  # relative to the repository, which the copy is not in
        sphinx["html_static_path"] = [str(ROOT / path) for path in sphinx["html_static_path"]]
    return config


def write_sources(src: Path, toc: Path, execute: bool) -> None:
    """The stripped copy of the book in ``src``: ``book/``, ``_config.yml`` and ``toc``."""
    shutil.copytree(ROOT / "book", src / "book",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "_build"))
    for path in sorted((src / "book").rglob("*.ipynb")):
        name = path.relative_to(src).as_posix()
        nbformat.write(strip_notebook(nbformat.read(path, as_version=4), name), path)
    for path in sorted((src / "book").rglob("*.md")):
        name = path.relative_to(src).as_posix()
        path.write_text(strip_solutions(path.read_text(encoding="utf-8"), name), encoding="utf-8")
    shutil.copyfile(toc, src / "_toc.yml")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    (src / "_config.yml").write_text(
        yaml.safe_dump(student_config(config, BOOK_CACHE, execute), sort_keys=False, allow_unicode=True),
        encoding="utf-8")


def check_no_solutions(html: Path) -> None:
    """Fail, naming the files, when anything under ``html`` still shows a solution."""
    found = []
    for path in sorted(html.rglob("*")):
        if path.suffix in {".ipynb", ".md", ".txt"}:
            pattern = SOLUTION_SOURCE
        elif path.suffix == ".html" or path.name == "searchindex.js":
            pattern = SOLUTION_HTML
        else:
            continue
        if pattern.search(path.read_text(encoding="utf-8", errors="replace")):
            found.append(str(path))
    if found:
        raise SolutionError("solutions survived in the student edition: " + ", ".join(found)
                            + "; see how they are written in book/ and extend scripts/student_edition.py")


def build(out: Path, toc: Path = ROOT / "_toc.yml", execute: bool = True) -> Path:
    """Write the stripped sources to ``out/src``, build them, check the result; the HTML folder."""
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    if not jupyter_book.exists():
        raise FileNotFoundError(f"{jupyter_book} is missing: run `make setup` (or "
                                "`pip install -r requirements.txt`) in the environment of this Python")
    if out.resolve() in (ROOT, *ROOT.parents) or any(path.resolve().is_relative_to(out.resolve())
                                                      for path in (BOOK_CACHE, ROOT / "book")):
        raise ValueError(f"--out {out} holds the book's sources or its cache, which the build deletes "
                         "first; give it a folder of its own, such as _build/student")
    shutil.rmtree(out, ignore_errors=True)
    src = out / "src"
    write_sources(src, toc, execute)
    strict = ["-W", "-n"] if toc.resolve() == (ROOT / "_toc.yml").resolve() else []
    subprocess.run([str(jupyter_book), "build", str(src), "--path-output", str(out), "--all",
                    *strict, "--keep-going"], check=True)
    html = out / "_build" / "html"
    check_no_solutions(html)
    return html


def main(argv: list[str] | None = None) -> None:
    """Command line: build the student edition and say where it is."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "student",
                        help="folder for the stripped sources (src/) and the build (_build/html)")
    parser.add_argument("--toc", type=Path, default=ROOT / "_toc.yml",
                        help="table of contents to build (default: the whole book)")
    parser.add_argument("--no-execute", action="store_true",
                        help="render notebooks without outputs instead of reading the cache")
    args = parser.parse_args(argv)
    html = build(args.out.resolve(), args.toc.resolve(), execute=not args.no_execute)
    print(f"student edition, without solutions: {html / 'index.html'}")


if __name__ == "__main__":
    try:
        main()
    except (ValueError, FileNotFoundError) as error:  # SolutionError is a ValueError
        sys.exit(f"error: {error}")
    except subprocess.CalledProcessError as error:
        sys.exit(f"error: jupyter-book build failed (exit status {error.returncode}); its messages are above")
