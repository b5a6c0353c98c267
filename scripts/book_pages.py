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

The student edition and the PDF build copy ``_config.yml`` elsewhere; they name this folder by its
absolute path (``scripts/student_edition.py``, ``scripts/pdf_book.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["pdf_book_button", "setup", "without_thebe"]


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


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("book_pdf", "deep-sets-book.pdf", "html")
    app.connect("html-page-context", without_thebe, priority=900)
    app.connect("html-page-context", pdf_book_button, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
