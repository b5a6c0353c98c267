"""What every HTML page of the book loads, tidied: a local Sphinx extension (``_config.yml``).

Jupyter Book 1 always loads sphinx-thebe 0.3.1, which adds its inline configuration
(``const THEBE_JS_URL = ...``) to every page twice, so the second copy throws "Identifier
'THEBE_JS_URL' has already been declared" in the console, and adds ``sphinx-thebe.js``. The book has
no thebe button (``launch_buttons`` names Binder and Colab only), so both copies of the
configuration and the script are left out of every page (:func:`without_thebe`); what remains of a
page's scripts keeps its order.

The theme's download menu offers ".pdf", which prints the one page the reader is on (with its
explorables still and its "show code" toggles): :func:`pdf_book_button` makes that entry a link to
the whole book as a PDF, ``_static/<book_pdf>`` (``make pdf`` copies ``deep-sets-book.pdf`` there;
the student edition links its own, ``deep-sets-book-student.pdf``).

A page with explorables is interactive sooner (``tests/test_browser.py`` prints the time), by two
changes to its head (:func:`explorable_head`, placed by ``_templates/layout.html``):

- a ``<link rel="modulepreload">`` for each module the page's explorables import, directly or not.
  Without them the browser learns of ``lib.js`` only once it has parsed the chapter's module, which
  waits for the main thread: chapter 1 fetched ``lib.js`` 760 ms after ``sets_layer.js``. The URLs
  are the ones the loader imports (``_static/explorables/<name>.js``, no query);
- MathJax typesets the page once its explorables have drawn themselves (or failed, or after 2 s at
  most): its typesetting is one task of 300-400 ms on a chapter of this book, and the dynamic
  import of the explorable waited behind it (chapter 4: ready at 1.1 s, 0.5 s so).

The student edition and the PDF build copy ``_config.yml`` elsewhere; they name this folder by its
absolute path (``scripts/student_edition.py``, ``scripts/pdf_book.py``).
"""

from __future__ import annotations

import re
from typing import Any

from setfuncs.explorables.esm import module_order

__all__ = ["explorable_head", "pdf_book_button", "setup", "without_thebe"]

#: An explorable's figure in a page's body (setfuncs.explorables.base writes them).
EXPLORABLE = re.compile(r'<figure class="explorable" data-explorable="([a-z0-9_]+)"')
#: MathJax's page-ready step, on a page with explorables: wait until each has settled (the loader,
#: setfuncs/explorables/js/loader.js, sends "explorable-settled" once it is drawn or has failed), at
#: most 2 s, then typeset. Placed after the page's MathJax configuration, before MathJax runs.
MATHJAX_AFTER_EXPLORABLES = """
  <script>
    if (window.MathJax) window.MathJax.startup = { ...window.MathJax.startup, pageReady() {
      const settled = [...document.querySelectorAll("figure[data-explorable]:not([data-settled])")]
        .map((figure) => new Promise((done) => figure.addEventListener("explorable-settled", done, { once: true })));
      const atMost = new Promise((done) => setTimeout(done, 2000));
      return Promise.race([Promise.all(settled), atMost]).then(() => MathJax.startup.defaultPageReady());
    } };
  </script>"""


def _is_thebe(script: Any) -> bool:
    """sphinx-thebe's inline configuration or its script."""
    body = getattr(script, "attributes", {}).get("body", "")
    return "THEBE_JS_URL" in body or str(getattr(script, "filename", "")).endswith("sphinx-thebe.js")


def without_thebe(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Drop sphinx-thebe's scripts from the page's ``script_files``."""
    if "script_files" in context:
        context["script_files"] = [script for script in context["script_files"] if not _is_thebe(script)]


def pdf_book_button(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """The download menu's "print this page" entry becomes a link to the book's PDF."""
    for group in context.get("header_buttons", []):
        for k, button in enumerate(group.get("buttons", [])):
            if button.get("javascript") == "window.print()":
                group["buttons"][k] = {
                    "type": "link", "url": context["pathto"](f"_static/{app.config.book_pdf}", 1),
                    "text": "PDF book", "tooltip": "The whole book as one PDF", "icon": "fas fa-file-pdf",
                    "label": "pdf-book-button"}


def explorable_head(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """``context["explorable_head"]``: on a page with explorables, a modulepreload link for every
    module they need, each once, and MathJax's wait for them; empty on any other page."""
    names = list(dict.fromkeys(EXPLORABLE.findall(context.get("body", ""))))
    modules = dict.fromkeys(module for name in names for module in module_order(name))
    context["explorable_head"] = "".join(
        f'\n  <link rel="modulepreload" href="{context["pathto"](f"_static/explorables/{module}.js", 1)}" />'
        for module in modules) + (MATHJAX_AFTER_EXPLORABLES if names else "")


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("book_pdf", "deep-sets-book.pdf", "html")
    app.connect("html-page-context", without_thebe, priority=900)
    app.connect("html-page-context", pdf_book_button, priority=900)
    app.connect("html-page-context", explorable_head, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
