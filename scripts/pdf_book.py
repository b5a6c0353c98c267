"""The PDF book: the configuration ``make pdf`` builds with, and the Sphinx extension it adds.

``make pdf`` builds the whole book with ``jupyter-book build . --builder pdflatex`` (XeLaTeX, the
``latex:`` section of ``_config.yml``) into ``_build/latex/deep-sets-book.pdf``. It builds with
``_config.yml`` plus this module as a local Sphinx extension, a configuration this script writes
(``python scripts/pdf_book.py _build/pdf_config.yml``): only the PDF build loads the extension,
so the HTML book and the student edition (which copies ``_config.yml`` into another folder, where
a relative ``local_extensions`` path would not resolve) never import it.

For the LaTeX builder only, before myst-nb picks one MIME type of each output, the extension
prints two kinds of output that would otherwise print as their ``text/plain`` stand-ins:

- a widget that carries a still frame (``setfuncs.widgets.SliderBox``: the widget view, an
  ``image/png`` and its caption as ``text/plain``) prints as the image with the caption under it;
  any other widget (a progress bar) prints nothing, where its ``text/plain`` would show the
  state it was displayed in (``0/300``);
- an HTML table (``display(HTML(setfuncs.tables.html_table(...)))``, whose ``text/plain`` is
  ``<IPython.core.display.HTML object>``) prints as a table, its ``<caption>`` as the title.

It also braces an operator name used as a bare sub- or superscript (``s_\min`` in docstrings),
which MathJax accepts and TeX does not: ``s_{\min}``.
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


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the transform (Sphinx extension entry point)."""
    app.add_post_transform(PrintableOutputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def pdf_config() -> dict[str, Any]:
    """``_config.yml`` with this module as a local extension, by absolute path."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    extensions = config.setdefault("sphinx", {}).setdefault("local_extensions", {})
    extensions[Path(__file__).stem] = str(Path(__file__).resolve().parent)
    return config


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(pdf_config(), sort_keys=False, allow_unicode=True),
                   encoding="utf-8")
