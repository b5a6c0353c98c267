"""What the book's Sphinx extension (scripts/book_pages.py) puts into a page's head: for a page with
explorables, a modulepreload link for each module they need, each once and in import order, and
MathJax's wait for them; nothing on a page without one. (The browser test times the result.)"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("book_pages", ROOT / "scripts" / "book_pages.py")
book_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(book_pages)


def head(body: str, depth: str = "../") -> str:
    context = {"body": body, "pathto": lambda name, resource: depth + name}
    book_pages.explorable_head(None, "book/page", "page.html", context, None)
    return context["explorable_head"]


def figure(name: str) -> str:
    return f'<figure class="explorable" data-explorable="{name}" data-state="{{}}"><img></figure>'


def test_a_page_with_explorables_preloads_every_module_they_import_once() -> None:
    found = head(figure("circle") + figure("attention_reads") + figure("circle"))
    links = re.findall(r'<link rel="modulepreload" href="([^"]+)" />', found)
    assert links == [f"../_static/explorables/{name}.js" for name in
                     ["lib", "deepset", "welzl", "circle_data", "circle", "attention_reads"]]
    assert found.count("defaultPageReady") == 1 and "explorable-settled" in found


def test_a_page_without_explorables_gets_nothing() -> None:
    assert head("<p>Some text, and a <figure><img></figure>.</p>") == ""
