"""Build the student edition of the book: the exercises without their solutions, everywhere.

``hide_solutions`` (sphinx-exercise) only leaves solutions off the pages; the ``_sources/`` files,
the ``.ipynb`` downloads and the notebooks behind the launch buttons still hold them. This script
copies the book's sources (``book/``, ``_config.yml``, a table of contents) into
``OUT/src``, removes every ``{solution}`` block and every answers admonition of the self-check
questions (a directive whose ``:class:`` holds ``self-check-answers``) from the notebooks' Markdown
cells and from the Markdown pages, rewrites the introduction's words on launch buttons, folded
solutions and the course plan for students (:data:`STUDENT_INTRO`), leaves out the teacher-only
pages (:data:`TEACHER_PAGES`, the course plan for lecturers), and builds that copy with ``jupyter-book build``
into ``OUT/_build/html``: pages, ``_sources`` and downloads all come from the stripped copy.
``--pdf`` builds the same copy as a PDF instead (``make student-pdf``: XeLaTeX, as ``make pdf``,
into ``OUT/_build/latex/deep-sets-book-student.pdf``), without the API reference, as the book's PDF.

* **Outputs from the book's cache.** jupyter-cache hashes a notebook by its code cells only, and
  stripping touches Markdown cells only, so the student edition reads the executed chapters from
  the book's own cache (``_build/.jupyter_cache``): after ``make book`` nothing runs again. A
  chapter missing from the cache is executed and cached there, for both editions.
* **No launch buttons, no repository button.** They open the repository's notebooks, which hold
  the solutions; the student edition has neither (download the ``.ipynb`` instead: its first cell
  installs ``setfuncs`` from a wheel that holds no notebook, ``scripts/install_cell.py``).
* **No teacher-only page.** :data:`TEACHER_PAGES` (``book/teaching/course.ipynb``, the module plan
  for lecturers, which says how to teach from the teacher's edition) and the files only they read
  leave the copy and its table of contents; every ``{ref}``, ``{numref}`` or ``{doc}`` role and every
  Markdown link to them or to a label they define becomes its plain text
  (:func:`strip_teacher_references`), so the build still passes with ``-W -n``.
* **Checked.** After the build every page, ``_sources`` file and the search index is scanned for
  what a solution or a self-check answer leaves behind (the LaTeX source, for ``--pdf``), and for
  the teacher-only words of :data:`TEACHER_ONLY_WORDS`; any find fails the build and names the files.
* **It deletes only what it made.** Every argument is checked before anything is written
  (:func:`check_arguments`). ``OUT`` is deleted and rebuilt only when it holds the marker file
  :data:`MARKER`, which the script writes into every ``OUT`` it makes; a new or empty folder is
  used as it is, and any other existing folder is refused (exit status 2), as are the repository,
  its parents and the folders that hold ``book/`` or the book's cache.

Usage: ``python scripts/student_edition.py [--out _build/student] [--toc _toc.yml] [--no-execute]
[--pdf]``.
A table of contents other than the book's own builds without ``-W -n``: its pages may refer to
pages it leaves out.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
#: The executed chapters of the normal build (``execute.cache`` is unset in ``_config.yml``).
BOOK_CACHE = ROOT / "_build" / ".jupyter_cache"
#: A directive opens a fence of 3+ backticks, tildes or colons (MyST ``colon_fence``).
DIRECTIVE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,}|:{3,})\{(?P<name>[\w:-]+)\}")
#: The file that marks an ``--out`` folder as this script's, which a later run may delete and rebuild.
MARKER = ".student-edition"
#: What :data:`MARKER` says.
MARKER_TEXT = ("Made by scripts/student_edition.py, the student edition's build: every run of it deletes and "
               "rebuilds this folder.\n")
#: The student PDF's name (``.tex`` and ``.pdf``).
PDF_NAME = "deep-sets-book-student"
#: The class that marks the answers to a chapter's self-check questions (the book's convention).
ANSWERS_CLASS = "self-check-answers"
#: A directive option in ``:name: value`` form, the first lines of a directive.
OPTION_LINE = re.compile(r"^[ \t]*:(?P<key>[\w-]+):(?P<value>.*)$")
#: What a solution or an answers block leaves in a source file when it was not removed (incl. the
#: gated syntax).
SOLUTION_SOURCE = re.compile(r"\{solution(-start|-end)?\}|\.\. solution(-start|-end)?::|"
                             + re.escape(ANSWERS_CLASS))
#: What a rendered solution or answers block leaves in HTML and in the LaTeX source: its
#: admonition's class, its title (also in the search index).
SOLUTION_HTML = re.compile(r'class="solution[ "]|Solution to Exercise|' + re.escape(ANSWERS_CLASS)
                           + r'|Answers to .Check yourself')
SOLUTION_LATEX = re.compile(r"Solution to|sphinxclass\w*\{solution|" + re.escape(ANSWERS_CLASS)
                            + r"|Answers to .Check yourself")
FOOTER_NOTE = ("Student edition: the exercises' solutions and the answers to the self-check questions "
               "are left out.")
#: The introduction's words for the teacher's edition, each with what students read instead: the
#: student edition has no launch buttons and no solutions. Each pattern must match
#: ``book/intro.md`` once (:func:`student_intro`), so a change to those words fails the build
#: until this list follows it.
STUDENT_INTRO: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^- \*\*Run a chapter\.\*\*.*?(?=^- \*\*|^[ \t]*$)", re.MULTILINE | re.DOTALL),
     "- **Run a chapter.** Download its notebook (the download button at the top of its page,\n"
     "  `.ipynb`) and open it in JupyterLab, or upload it to Colab: its first cell installs\n"
     "  `setfuncs`, the book's package. Every chapter runs on a CPU; its first lines say how long.\n"
     "  Colab runs the code but shows the book's MyST Markdown as raw text: exercises, theorems,\n"
     "  proofs, citations and cross-references appear as `{exercise}` blocks and roles there, so read\n"
     "  those on the rendered page beside it (JupyterLab with jupyterlab-myst renders them). The book\n"
     "  is not tested on Colab itself, only its install cell against a local copy of the site.\n"),
    (re.compile(r"the solutions are folded away until you open them\."),
     "this student edition leaves their solutions and the answers to the self-check questions out."),
    (re.compile(r"^## Teaching with it\n.*?(?=^## )", re.MULTILINE | re.DOTALL),
     "## Choosing an aggregation\n\n"
     "The {doc}`guide to choosing an aggregation <teaching/choosing>`, in the **Teaching** part, turns the\n"
     "book's theorems and the experiments' verdicts into advice.\n\n"),
]
#: Words the student introduction must not say (they describe the teacher's edition).
TEACHER_WORDS = re.compile(r"launch button|folded away|solutions are folded", re.IGNORECASE)
#: The teacher-only pages (as ``_toc.yml`` names them): the module plan for lecturers. The student
#: edition leaves them, and :data:`TEACHER_FILES`, out of its sources and its table of contents.
TEACHER_PAGES = ("book/teaching/course",)
#: Files that only :data:`TEACHER_PAGES` read: the course plan's data and helpers.
TEACHER_FILES = ("book/teaching/course_plan.py",)
#: Words of teacher-only instructions (the course page's title, how to teach from the teacher's
#: edition, with Sphinx's typographic apostrophe too): no page of the student edition may hold them.
TEACHER_ONLY_WORDS = re.compile(r"(?i:teacher(?:'|\u2019|&#8217;|&rsquo;)s edition|four-week module)|Teach from")
#: A MyST role with its text, ``{ref}`label``` or ``{doc}`text <target>```.
ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]*)`")
#: The roles whose target is a label, which a teacher-only page may define.
LABEL_ROLES = ("ref", "numref", "prf:ref", "eq", "any")
#: A Markdown link, ``[text](target)``.
LINK = re.compile(r"\[(?P<text>[^\]\n]*)\]\((?P<target>[^)\s]*)\)")
#: A label a page defines: a target line ``(label)=`` (a section's: the heading after it names it) or
#: a directive's ``:label:`` / ``:name:`` option.
LABEL_TARGET = re.compile(r"^\((?P<label>[\w.:-]+)\)=[ \t]*\n(?:[ \t]*\n)*(?:#+[ \t]+(?P<title>.+))?", re.MULTILINE)
LABEL_OPTION = re.compile(r"^[ \t]*:(?:label|name):[ \t]*(?P<label>[\w.:-]+)[ \t]*$", re.MULTILINE)


class SolutionError(ValueError):
    """A solution that this script cannot remove, or one that survived the build."""


def _removed(name: str, options: list[str]) -> bool:
    """Whether a directive goes: a ``{solution}``, or one whose class holds :data:`ANSWERS_CLASS`."""
    if name == "solution":
        return True
    for line in options:
        option = OPTION_LINE.match(line) or re.match(r"^[ \t]*(?P<key>[\w-]+):(?P<value>.*)$", line)
        if option and option["key"] == "class" and ANSWERS_CLASS in option["value"].split():
            return True
    return False


def _options(lines: list[str], start: int) -> list[str]:
    """The option lines of the directive that opens at ``lines[start - 1]``: ``:key: value`` lines,
    or a YAML block between two ``---`` lines."""
    if start < len(lines) and lines[start].strip() == "---":
        end = next((j for j in range(start + 1, len(lines)) if lines[j].strip() == "---"), len(lines))
        return lines[start + 1:end]
    options = []
    for line in lines[start:]:
        if not OPTION_LINE.match(line) or re.match(r"^[ \t]*:{3,}", line):
            break
        options.append(line)
    return options


def strip_solutions(text: str, source: str) -> str:
    """``text`` (MyST Markdown) without its ``{solution}`` blocks and self-check answers.

    A self-check answers block is any directive whose ``:class:`` holds ``self-check-answers``
    (``:::{admonition} Answers to "Check yourself"`` / ``:class: dropdown self-check-answers``).
    ``source`` names ``text`` in errors. A block runs from its opening fence to the first line
    that is only a fence of the same character and at least the same length (CommonMark's rule),
    so code fences nested inside a four-backtick solution stay inside it; a fence that never
    closes runs to the end of ``text`` (a notebook cell or a page), as MyST renders it. One blank
    line after a removed block goes too.
    """
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    index = 0
    while index < len(lines):
        opening = DIRECTIVE_OPEN.match(lines[index])
        if opening is None or not _removed(opening["name"], _options(lines, index + 1)):
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
                            "write each solution as one fenced block, ```{solution} label ... ```, and "
                            f"each self-check answer as one fenced admonition with :class: ... {ANSWERS_CLASS}")
    if stripped == text:
        return text
    return stripped.rstrip() + ("\n" if text.endswith("\n") else "")


def student_intro(text: str, source: str = "book/intro.md") -> str:
    """The introduction ``text`` with :data:`STUDENT_INTRO`'s words for students.

    Raises:
        SolutionError: If a pattern does not match exactly once, or the result still speaks of
            launch buttons or folded solutions.
    """
    for pattern, replacement in STUDENT_INTRO:
        text, count = pattern.subn(lambda _: replacement, text)
        if count != 1:
            raise SolutionError(f"{source}: {pattern.pattern!r} matched {count} times, not once; "
                                "update STUDENT_INTRO in scripts/student_edition.py to the introduction's words")
    left = TEACHER_WORDS.search(text)
    if left:
        raise SolutionError(f"{source}: the student edition's introduction still says {left.group()!r}; "
                            "add its sentence to STUDENT_INTRO in scripts/student_edition.py")
    return text


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


class TeacherTargets(NamedTuple):
    """What the teacher-only pages define, each with the plain text that replaces a reference to it."""

    #: A label (``(label)=``, ``:label:``, ``:name:``) and its section's title (the label where none).
    labels: dict[str, str]
    #: A page (``book/teaching/course``) and its title.
    pages: dict[str, str]


def _markdown_of(path: Path) -> str:
    """The Markdown of a page: a notebook's Markdown cells, or a ``.md`` file's text."""
    if path.suffix == ".ipynb":
        return "\n\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells
                           if cell.cell_type == "markdown")
    return path.read_text(encoding="utf-8")


def teacher_targets(src: Path, pages: tuple[str, ...] = TEACHER_PAGES) -> TeacherTargets:
    """The labels and titles of the teacher-only ``pages`` found in ``src`` (a copy of the book)."""
    labels: dict[str, str] = {}
    titles: dict[str, str] = {}
    for page in pages:
        for path in (src / f"{page}.ipynb", src / f"{page}.md"):
            if not path.is_file():
                continue
            text = _markdown_of(path)
            title = re.search(r"^#[ \t]+(.+?)[ \t]*$", text, re.MULTILINE)
            titles[page] = title.group(1) if title else posixpath.basename(page)
            labels.update({m["label"]: (m["title"] or m["label"]).strip() for m in LABEL_TARGET.finditer(text)})
            labels.update({m["label"]: m["label"] for m in LABEL_OPTION.finditer(text) if m["label"] not in labels})
    return TeacherTargets(labels, titles)


def _page_of(target: str, page: str) -> str:
    """The page a ``{doc}`` target or a link's target on ``page`` names (paths from the book's root,
    without ``.ipynb`` or ``.md``): relative to ``page``'s folder, or to the root if it starts with ``/``."""
    path = target.split("#", 1)[0]
    folder = "" if path.startswith("/") else posixpath.dirname(page)
    return re.sub(r"\.(ipynb|md)$", "", posixpath.normpath(posixpath.join(folder, path.lstrip("/"))))


def strip_teacher_references(text: str, page: str, teacher: TeacherTargets) -> str:
    """``text`` (MyST Markdown of ``page``, e.g. ``book/intro``) with every reference to a teacher-only
    page or to a label it defines turned into plain text: a role's own text, or else the title of
    the section or page it names. ``{ref}`course's projects <teaching-projects>``` becomes
    ``course's projects``; ``[the plan](course.ipynb)`` becomes ``the plan``."""
    def role(match: re.Match[str]) -> str:
        body = match["body"].strip()
        explicit = re.fullmatch(r"(?s)(?P<text>.*?)\s*<(?P<target>[^<>]+)>", body)
        shown, target = (explicit["text"], explicit["target"].strip()) if explicit else (None, body)
        if match["role"] in LABEL_ROLES and target in teacher.labels:
            return shown or teacher.labels[target]
        if match["role"] == "doc" and (name := _page_of(target, page)) in teacher.pages:
            return shown or teacher.pages[name]
        return match.group()

    def link(match: re.Match[str]) -> str:
        target = match["target"]
        if re.match(r"[a-z][a-z0-9+.-]*:", target):            # https:, mailto:, ...: another site
            return match.group()
        if target.startswith("#"):
            return match["text"] if target[1:] in teacher.labels else match.group()
        return match["text"] if _page_of(target, page) in teacher.pages else match.group()

    return LINK.sub(link, ROLE.sub(role, text))


def student_toc(toc: dict[str, Any], pages: tuple[str, ...] = TEACHER_PAGES) -> dict[str, Any]:
    """``toc`` (a Jupyter Book table of contents) without the entries of ``pages``, at any depth;
    a part left without chapters goes too."""
    def kept(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        result = []
        for entry in entries:
            if re.sub(r"\.(ipynb|md)$", "", str(entry.get("file", ""))) in pages:
                continue
            entry = dict(entry)
            for key in ("chapters", "sections"):
                if key in entry:
                    entry[key] = kept(entry[key])
            result.append(entry)
        return result

    toc = copy.deepcopy(toc)
    for key in ("chapters", "sections"):
        if key in toc:
            toc[key] = kept(toc[key])
    if "parts" in toc:
        toc["parts"] = [part for part in ({**part, "chapters": kept(part.get("chapters", []))}
                                          for part in toc["parts"]) if part["chapters"]]
    return toc


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
    # The teacher's edition's address: no canonical link or sitemap entry of a student page points there.
    html.pop("baseurl", None)
    html["extra_footer"] = " ".join(filter(None, [FOOTER_NOTE, html.get("extra_footer")]))
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    for key in ("html_static_path", "templates_path"):  # relative to the repository, which the copy is not in
        if key in sphinx:
            sphinx[key] = [str(ROOT / path) for path in sphinx[key]]
    sphinx["book_pdf"] = f"{PDF_NAME}.pdf"  # the download menu's "PDF book" (scripts/book_pages.py)
    extensions = config["sphinx"].get("local_extensions") or {}
    config["sphinx"]["local_extensions"] = {name: str(ROOT / path) for name, path in extensions.items()}
    return config


def _pdf_book():
    """``scripts/pdf_book.py``, the PDF's configuration and Sphinx extension, as a module."""
    spec = importlib.util.spec_from_file_location("pdf_book", Path(__file__).with_name("pdf_book.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_sources(src: Path, toc: Path, execute: bool, pdf: bool = False) -> None:
    """The stripped copy of the book in ``src``: ``book/``, ``_config.yml`` and ``toc``; for the
    PDF (``pdf``), with the PDF book's extension and without the API reference."""
    shutil.copytree(ROOT / "book", src / "book",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "_build"))
    teacher = teacher_targets(src, TEACHER_PAGES)
    for name in [f"{page}{suffix}" for page in TEACHER_PAGES for suffix in (".ipynb", ".md")] + list(TEACHER_FILES):
        (src / name).unlink(missing_ok=True)
    for path in sorted((src / "book").rglob("*.ipynb")):
        name = path.relative_to(src).as_posix()
        notebook = strip_notebook(nbformat.read(path, as_version=4), name)
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                cell.source = strip_teacher_references(cell.source, name.removesuffix(".ipynb"), teacher)
        nbformat.write(notebook, path)
    for path in sorted((src / "book").rglob("*.md")):
        name = path.relative_to(src).as_posix()
        text = strip_solutions(path.read_text(encoding="utf-8"), name)
        path.write_text(strip_teacher_references(text, name.removesuffix(".md"), teacher), encoding="utf-8")
    intro = src / "book" / "intro.md"
    if intro.exists():
        intro.write_text(student_intro(intro.read_text(encoding="utf-8")), encoding="utf-8")
    config = student_config(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8")),
                            BOOK_CACHE, execute)
    table_of_contents = student_toc(yaml.safe_load(toc.read_text(encoding="utf-8")), TEACHER_PAGES)
    if pdf:
        pdf_book = _pdf_book()
        config = pdf_book.pdf_config(config, target=f"{PDF_NAME}.tex")
        table_of_contents = pdf_book.pdf_toc(table_of_contents)
    (src / "_toc.yml").write_text(yaml.safe_dump(table_of_contents, sort_keys=False, allow_unicode=True),
                                  encoding="utf-8")
    (src / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
                                     encoding="utf-8")


def check_no_solutions(html: Path) -> None:
    """Fail, naming the files, when anything under ``html`` (a build's output folder: HTML or
    LaTeX) still shows a solution or a self-check answer."""
    found = []
    for path in sorted(html.rglob("*")):
        if path.suffix in {".ipynb", ".md", ".txt"}:
            pattern = SOLUTION_SOURCE
        elif path.suffix == ".html" or path.name == "searchindex.js":
            pattern = SOLUTION_HTML
        elif path.suffix == ".tex":
            pattern = SOLUTION_LATEX
        else:
            continue
        if pattern.search(path.read_text(encoding="utf-8", errors="replace")):
            found.append(str(path))
    if found:
        raise SolutionError("solutions survived in the student edition: " + ", ".join(found)
                            + "; see how they are written in book/ and extend scripts/student_edition.py")


def check_no_teacher_pages(output: Path) -> None:
    """Fail, naming the files, when a page, ``_sources`` file, the search index or the LaTeX source
    under ``output`` holds teacher-only instructions (:data:`TEACHER_ONLY_WORDS`)."""
    found = [f"{path} ({match.group()!r})" for path in sorted(output.rglob("*"))
             if (path.suffix in {".html", ".ipynb", ".md", ".txt", ".tex"} or path.name == "searchindex.js")
             and (match := TEACHER_ONLY_WORDS.search(path.read_text(encoding="utf-8", errors="replace")))]
    if found:
        raise SolutionError("teacher-only instructions survived in the student edition: " + ", ".join(found)
                            + "; leave their page out (TEACHER_PAGES) or rewrite their words for students "
                            "(STUDENT_INTRO) in scripts/student_edition.py")


def check_arguments(out: Path, toc: Path) -> None:
    """Refuse, before anything is written or deleted, an ``out`` the build may not delete and rebuild
    and a ``toc`` it cannot read.

    ``out`` may be missing, an empty folder, or a folder that holds :data:`MARKER` (a student edition
    this script made); never the repository, one of its parents or a folder that holds ``book/`` or
    the book's cache, marker or not. ``toc`` must be a YAML file holding a mapping.

    Raises:
        ValueError: One line naming the argument (``--out``, ``--toc``) and the fix.
    """
    out = out.resolve()
    if out in (ROOT, *ROOT.parents) or any(path.resolve().is_relative_to(out) for path in (BOOK_CACHE, ROOT / "book")):
        raise ValueError(f"--out {out} holds the book's sources or its cache, which the build would delete; "
                         "give it a folder of its own, such as _build/student")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder; choose a new or empty folder, such as _build/student")
    if out.is_dir() and not (out / MARKER).is_file() and any(out.iterdir()):
        raise ValueError(f"--out {out} is a folder this script did not make (it has no {MARKER} file), which the "
                         "build would delete; choose an empty or new folder, such as _build/student, or delete "
                         "it yourself")
    try:
        table_of_contents = yaml.safe_load(toc.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else type(error).__name__
        raise ValueError(f"--toc {toc} cannot be read ({reason}); pass a table of contents such as _toc.yml") from None
    if not isinstance(table_of_contents, dict):
        raise ValueError(f"--toc {toc} holds no table of contents (a YAML mapping with `root:`); pass one such "
                         "as _toc.yml")


def _fresh(out: Path) -> None:
    """Make ``out`` an empty folder that holds :data:`MARKER`, deleting what it held only when it is
    a student edition this script made (:func:`check_arguments` has refused any other)."""
    if (out / MARKER).is_file():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(MARKER_TEXT, encoding="utf-8")


def build(out: Path, toc: Path = ROOT / "_toc.yml", execute: bool = True, pdf: bool = False,
          builder: str = "pdflatex") -> Path:
    """Write the stripped sources to ``out/src``, build them, check the result; the HTML folder.

    With ``pdf``, build the PDF (``builder``: ``pdflatex``, XeLaTeX as ``make pdf``; ``latex``
    writes only the LaTeX source) and return the LaTeX folder, ``out/_build/latex``. Every argument
    is checked (:func:`check_arguments`, a ValueError) before ``out`` is touched; ``out`` is
    replaced only when it holds :data:`MARKER`.
    """
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    if not jupyter_book.exists():
        raise FileNotFoundError(f"{jupyter_book} is missing: run `make setup` (or "
                                "`pip install -r requirements.txt`) in the environment of this Python")
    check_arguments(out, toc)
    _fresh(out)
    src = out / "src"
    write_sources(src, toc, execute, pdf)
    strict = ["-W", "-n"] if toc.resolve() == (ROOT / "_toc.yml").resolve() else []
    command = [str(jupyter_book), "build", str(src), "--path-output", str(out), "--all", *strict, "--keep-going"]
    if pdf:
        command[2:2] = ["--builder", builder]
    subprocess.run(command, check=True)
    output = out / "_build" / ("latex" if pdf else "html")
    check_no_solutions(output)
    check_no_teacher_pages(output)
    return output


def main(argv: list[str] | None = None) -> None:
    """Command line: build the student edition and say where it is."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "student",
                        help="folder for the stripped sources (src/) and the build (_build/html)")
    parser.add_argument("--toc", type=Path, default=ROOT / "_toc.yml",
                        help="table of contents to build (default: the whole book)")
    parser.add_argument("--no-execute", action="store_true",
                        help="render notebooks without outputs instead of reading the cache")
    parser.add_argument("--pdf", action="store_true",
                        help=f"build the PDF ({PDF_NAME}.pdf in OUT/_build/latex) instead of the HTML")
    args = parser.parse_args(argv)
    out, toc = args.out.resolve(), args.toc.resolve()
    try:
        check_arguments(out, toc)
    except ValueError as error:
        parser.error(str(error))
    output = build(out, toc, execute=not args.no_execute, pdf=args.pdf)
    if args.pdf:
        print(f"student edition, without solutions or self-check answers: {output / f'{PDF_NAME}.pdf'}")
    else:
        print(f"student edition, without solutions or self-check answers: {output / 'index.html'}")


if __name__ == "__main__":
    try:
        main()
    except (ValueError, FileNotFoundError) as error:  # SolutionError is a ValueError
        sys.exit(f"error: {error}")
    except subprocess.CalledProcessError as error:
        sys.exit(f"error: jupyter-book build failed (exit status {error.returncode}); its messages are above")
