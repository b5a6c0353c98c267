r"""The PDF book: the configuration ``make pdf`` builds with, and the Sphinx extension it adds.

``make pdf`` builds the whole book with ``jupyter-book build . --builder pdflatex`` (XeLaTeX, the
``latex:`` section of ``_config.yml``) into ``_build/latex/deep-sets-book.pdf``. It builds with
``_config.yml`` plus this module as a local Sphinx extension, a configuration this script writes
(``python scripts/pdf_book.py _build/pdf_config.yml``): only the PDF build loads the extension,
so the HTML book and the student edition (which copies ``_config.yml`` into another folder, where
a relative ``local_extensions`` path would not resolve) never import it.

For the LaTeX builder only, before myst-nb picks one MIME type of each output, the extension
prints two kinds of output that would otherwise print as their ``text/plain`` stand-ins:

- a widget that carries a still frame (an explorable, ``setfuncs.explorables``: the widget view,
  its still frame as ``image/png`` and a note as ``text/plain``) prints as the image with the note
  under it; any other widget (a progress bar, in a chapter run without ``SETFUNCS_PROGRESS=off``)
  prints nothing, where its ``text/plain`` would show the state it was displayed in (``0/300``);
- an HTML table (``display(HTML(setfuncs.tables.html_table(...)))``, whose ``text/plain`` is
  ``<IPython.core.display.HTML object>``) prints as a table, its ``<caption>`` as the title.

Table cells (these and Markdown tables) keep every number with a minus sign on one line
(``\mbox``): LaTeX may break a line after ``-`` (Sphinx's ``\sphinxhyphen``) or ``−``, which split
``−0.12`` in tables where the sign is the result.

It also braces an operator name used as a bare sub- or superscript (``s_\min`` in docstrings),
which MathJax accepts and TeX does not: ``s_{\min}``.

**Numbering as in the HTML book.** With parts, sphinx-jupyterbook-latex numbers exercises and
theorems by section (``numfig_secnum_depth = 2``: "Exercise 4.7.1", where the HTML book says
"Exercise 4.1"); the extension counts them through each chapter instead (:func:`number_by_chapter`;
figures, tables and equations LaTeX numbers itself, by chapter), and
links references to exercises in other chapters, printing a ``{numref}``'s number, not "??"
(:class:`ExerciseNumbers`).

**The API reference is a document of its own.** The book's PDF leaves ``book/api`` and its pages out
(:data:`LEFT_OUT`; its table of contents is :func:`pdf_toc`), so its references to ``setfuncs``'s
API print as code without a link; ``make api-pdf`` builds the API reference alone
(``python scripts/pdf_book.py --api OUT``: a configuration and a table of contents whose root is
``book/api``, its pages ``book/api/*`` the chapters), into ``_build/api/_build/latex/setfuncs-api.pdf``.

Usage: ``python scripts/pdf_book.py CONFIG [TOC]`` writes the book's PDF configuration (and table
of contents); ``python scripts/pdf_book.py --api FOLDER`` writes FOLDER/_config.yml and
FOLDER/_toc.yml for the API reference.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: Pages of ``_toc.yml`` the book's PDF leaves out: the API reference, a document of its own.
LEFT_OUT = ("book/api",)
#: A token with a digit and a minus sign (``-0.12``, ``−3.5e-4``, ``[-1,``): kept on one line.
SIGNED_NUMBER = re.compile(r"\S*\d\S*")
#: ``_\min``, ``^\log``: a script that is an operator name, which TeX takes only in braces.
BARE_OPERATOR_SCRIPT = re.compile(
    r"([_^])\s*\\(min|max|sup|inf|lim|liminf|limsup|log|ln|exp|arg|det|dim|gcd|Pr)(?![A-Za-z])")


class HtmlTable(HTMLParser):
    """The caption and the rows of cell texts of a plain HTML table (no spans, no nesting)."""

    def __init__(self) -> None:
        super().__init__()
        self.caption = ""
        self.head: list[list[str]] = []
        self.body: list[list[str]] = []
        self._rows = self.body
        self._text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "thead":
            self._rows = self.head
        elif tag == "tbody":
            self._rows = self.body
        elif tag == "tr":
            self._rows.append([])
        elif tag in ("th", "td", "caption"):
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._text is not None:
            self._rows[-1].append("".join(self._text).strip())
            self._text = None
        elif tag == "caption" and self._text is not None:
            self.caption = " ".join("".join(self._text).split())
            self._text = None
        elif tag == "thead":
            self._rows = self.body

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def column_widths(head: list[list[str]], body: list[list[str]]) -> list[int]:
    """Relative column widths: a column's longest body cell, up to 40 characters, or its longest
    word if that is longer, so that numbers stay on one line and headers wrap between words."""
    widths = []
    for column in zip(*head, *body):
        cells, words = column[len(head):], [word for text in column for word in text.split()]
        longest = max(min(max(map(len, cells), default=0), 40), max(map(len, words), default=1))
        widths.append(longest + 2)  # the space between columns, which LaTeX takes from each
    return widths


class unbreakable(nodes.inline):  # noqa: N801 (docutils names its node classes in lower case)
    r"""Inline text LaTeX keeps on one line (``\mbox{...}``)."""


def visit_unbreakable(translator: Any, node: unbreakable) -> None:
    r"""Open the ``\mbox``."""
    translator.body.append(r"\mbox{")


def depart_unbreakable(translator: Any, node: unbreakable) -> None:
    r"""Close the ``\mbox``."""
    translator.body.append("}")


def cell_text(text: str) -> list[nodes.Node]:
    """The nodes of a table cell's ``text``: every token with a digit and a minus sign (``-`` or
    ``−``) :class:`unbreakable`, the rest as text."""
    parts: list[nodes.Node] = []
    position = 0
    for token in SIGNED_NUMBER.finditer(text):
        if "-" not in token.group() and "\u2212" not in token.group():
            continue
        if token.start() > position:
            parts.append(nodes.Text(text[position:token.start()]))
        parts.append(unbreakable("", token.group()))
        position = token.end()
    if position < len(text):
        parts.append(nodes.Text(text[position:]))
    return parts


def table_node(html: str) -> nodes.table | None:
    """A docutils table with the cells of the HTML table in ``html``, or None if it has none.

    Rows with only empty cells (the header of a table of names and values) are left out; the
    columns get :func:`column_widths`.
    """
    parsed = HtmlTable()
    parsed.feed(html)
    parsed.close()
    columns = max(map(len, parsed.head + parsed.body), default=0)
    head, body = ([row + [""] * (columns - len(row)) for row in rows if any(row)]
                  for rows in (parsed.head, parsed.body))
    if not body:
        return None
    table = nodes.table(classes=["colwidths-given"])
    if parsed.caption:
        table += nodes.title(text=parsed.caption)
    group = nodes.tgroup(cols=columns)
    table += group
    group += [nodes.colspec(colwidth=width) for width in column_widths(head, body)]
    for part, rows in ((nodes.thead(), head), (nodes.tbody(), body)):
        part += [nodes.row("", *(nodes.entry("", nodes.paragraph(text=text)) for text in row))
                 for row in rows]
        if rows:
            group += part
    return table


class PrintableOutputs(SphinxPostTransform):
    """Still frames with their captions, HTML tables as tables, and maths TeX accepts, in the
    LaTeX output."""

    builders = ("latex",)
    default_priority = 3  # before myst-nb's SelectMimeType (4) keeps one MIME type per output

    def run(self, **kwargs: Any) -> None:
        """Brace bare operator scripts; replace each mime bundle that holds a still frame or an
        HTML table, and drop other widgets."""
        for math in [*self.document.findall(nodes.math), *self.document.findall(nodes.math_block)]:
            braced = BARE_OPERATOR_SCRIPT.sub(r"\1{\\\2}", math.astext())
            if braced != math.astext():
                math[:] = [nodes.Text(braced)]
        for bundle in list(self.document.findall(nodes.container)):
            if bundle.get("nb_element") != "mime_bundle":
                continue
            data = {child["mime_type"]: child for child in bundle.children}
            if WIDGET_VIEW in data and "image/png" in data and "text/plain" in data:
                caption = nodes.paragraph("", "", nodes.emphasis(text=data["text/plain"].astext()))
                bundle.replace_self([*data["image/png"].children, caption])
            elif WIDGET_VIEW in data:
                bundle.parent.remove(bundle)
            elif "text/html" in data and (table := table_node(data["text/html"].astext())):
                bundle.replace_self(table)
        keep_signed_numbers_whole(self.document)


def keep_signed_numbers_whole(document: nodes.Node) -> None:
    """In every table cell (result tables and Markdown tables alike), make each token with a digit
    and a minus sign :class:`unbreakable`; code, maths and raw text are left as they are."""
    for entry in list(document.findall(nodes.entry)):
        for text in list(entry.findall(nodes.Text)):
            if isinstance(text.parent, (unbreakable, nodes.literal, nodes.math, nodes.raw,
                                        nodes.literal_block, nodes.FixedTextElement)):
                continue
            parts = cell_text(str(text))
            if any(isinstance(part, unbreakable) for part in parts):
                text.parent.replace(text, parts)


class ExerciseNumbers(SphinxPostTransform):
    """A reference to an exercise from another chapter links to it: sphinx-exercise labels an
    exercise ``exercise:<label>`` in LaTeX, where the writer links ``<chapter>:<label>`` (a dead
    link) and prints a ``{numref}``'s number as ``\\ref`` to it ("Exercise ??"). Each such
    reference becomes sphinx-exercise's own, with the text Sphinx resolved ("Exercise 6.1", or the
    ``{ref}``'s title)."""

    builders = ("latex",)
    default_priority = 21  # after the ReferencesResolver (10) resolved the references

    def run(self, **kwargs: Any) -> None:
        """Replace each internal reference to an exercise by sphinx-exercise's LaTeX reference."""
        registry = getattr(self.env, "sphinx_exercise_registry", {})
        if not registry:
            return
        from sphinx_exercise.nodes import exercise_enumerable_node, exercise_latex_number_reference

        for reference in list(self.document.findall(nodes.reference)):
            uri = reference.get("refuri", "")
            if not (reference.get("refid") or uri.startswith(("%", "#"))):
                continue  # a link out of the book
            target = re.split(r"[:#]", reference.get("refid") or uri)[-1]
            if not isinstance(registry.get(target, {}).get("node"), exercise_enumerable_node):
                continue
            replacement = exercise_latex_number_reference(refid=target)
            replacement += nodes.Text(reference.astext())
            reference.replace_self(replacement)


#: Numbered things LaTeX numbers itself (by chapter, under ``numfig_secnum_depth = 2``).
LATEX_NUMBERED = {"figure", "table", "code-block", "section"}


def number_by_chapter(app: Sphinx, env: Any) -> list[str]:
    """Number exercises and theorems by chapter, as the HTML book does: with parts,
    sphinx-jupyterbook-latex sets ``numfig_secnum_depth = 2`` (so that LaTeX's own figure, table and
    equation numbers carry the chapter), which makes Sphinx number the others by section
    ("Exercise 4.7.1"). Each chapter's exercises and theorems are counted again through the
    chapter, in document order: (4, 7, 1) becomes (4, 1). Returns no documents to rewrite (an
    ``env-get-updated`` handler)."""
    if app.builder.format != "latex":
        return []
    for numbers in env.toc_fignumbers.values():
        for figtype, entries in numbers.items():
            if figtype in LATEX_NUMBERED:
                continue
            counts: dict[tuple[int, ...], int] = {}
            for label, number in sorted(entries.items(), key=lambda item: item[1]):
                chapter = tuple(number[:1])
                counts[chapter] = counts.get(chapter, 0) + 1
                entries[label] = (*chapter, counts[chapter])
    return []


def api_in_plain_text(app: Sphinx, env: Any, node: Any, contnode: nodes.Node) -> nodes.Node | None:
    """A reference into the API reference, in a PDF without it: the reference's text, unlinked."""
    if app.builder.format != "latex" or any(name in env.all_docs for name in LEFT_OUT):
        return None
    target = node.get("reftarget", "")
    if node.get("refdomain") == "py" and target.lstrip("~.").startswith("setfuncs"):
        return contnode
    if node.get("reftype") in ("doc", "myst") and Path(target).with_suffix("").name in {
            Path(name).name for name in LEFT_OUT}:
        return contnode
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the transform, the numbering and the unlinked API references (Sphinx extension
    entry point)."""
    app.add_post_transform(PrintableOutputs)
    app.add_post_transform(ExerciseNumbers)
    app.add_node(unbreakable, latex=(visit_unbreakable, depart_unbreakable),
                 html=(lambda translator, node: None, lambda translator, node: None))
    # After Sphinx's toctree collector (priority 500) assigned the numbers on the same event.
    app.connect("env-get-updated", number_by_chapter, priority=900)
    app.connect("missing-reference", api_in_plain_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def pdf_config(config: dict[str, Any] | None = None, target: str | None = None) -> dict[str, Any]:
    """``config`` (``_config.yml`` by default) with this module as a local extension, by absolute
    path; ``target`` names the ``.tex`` file (and so the PDF) where given."""
    if config is None:
        config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    extensions = config.setdefault("sphinx", {}).setdefault("local_extensions", {})
    # the book's own (relative to _config.yml, which this configuration is not beside) and this one
    extensions.update({name: str(ROOT / path) for name, path in extensions.items()})
    extensions[Path(__file__).stem] = str(Path(__file__).resolve().parent)
    # A Markdown link to a page left out ("[API reference](api.md)") prints as its text: myst
    # only warns about it unless nitpick_ignore_regex names it.
    ignored = config["sphinx"].setdefault("config", {}).setdefault("nitpick_ignore_regex", [])
    ignored += [["myst", re.escape(name)] for name in LEFT_OUT]
    if target is not None:
        config.setdefault("latex", {}).setdefault("latex_documents", {})["targetname"] = target
    return config


def pdf_toc(toc: dict[str, Any] | None = None) -> dict[str, Any]:
    """``toc`` (``_toc.yml`` by default) without the pages of :data:`LEFT_OUT`."""
    if toc is None:
        toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))

    def kept(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [entry for entry in entries if entry.get("file") not in LEFT_OUT]

    toc = dict(toc)
    if "chapters" in toc:
        toc["chapters"] = kept(toc["chapters"])
    if "parts" in toc:
        toc["parts"] = [{**part, "chapters": kept(part["chapters"])} for part in toc["parts"]]
        toc["parts"] = [part for part in toc["parts"] if part["chapters"]]
    return toc


def api_sources(folder: Path) -> None:
    """``folder/_config.yml`` and ``folder/_toc.yml``: the API reference as a PDF of its own,
    ``setfuncs-api.pdf``, built from the repository (``jupyter-book build . --config ... --toc ...``):
    its index page, then its pages (``book/api/*``, in the book's order) as chapters."""
    config = pdf_config(target="setfuncs-api.tex")
    config["title"] = "setfuncs: API reference"
    write_yaml(folder / "_config.yml", config)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    entries = [entry for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}]) for entry in part["chapters"]]
    pages = next(entry.get("sections", []) for entry in entries if entry.get("file") == LEFT_OUT[0])
    write_yaml(folder / "_toc.yml", {"format": "jb-book", "root": LEFT_OUT[0],
                                     "chapters": [{"file": page["file"]} for page in pages]})


def write_yaml(path: Path, data: dict[str, Any]) -> None:
    """``data`` as YAML in ``path`` (its folder created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1] == "--api":
        api_sources(Path(sys.argv[2]))
    else:
        write_yaml(Path(sys.argv[1]), pdf_config())
        if len(sys.argv) > 2:
            write_yaml(Path(sys.argv[2]), pdf_toc())
