"""``make figures``: every numbered figure of the built book as a named SVG and a PNG at twice its size.

Reads the book ``make test`` built (``_build/html``) and the figures ``scripts/figures.py`` wrote
from it (``_build/figures``): one SVG and one PNG per "Fig." the pages number, named by that number,
the PNG at least 1.8 times as wide as the SVG is drawn (in CSS pixels), so it is sharp on a
projector or a high-density screen. Where the build is missing this fails in CI and skips elsewhere.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
FIGURES = ROOT / "_build" / "figures"
REQUIRED = bool(os.environ.get("CI") or os.environ.get("BOOK_BROWSER_TEST_REQUIRED"))


def _script():
    spec = importlib.util.spec_from_file_location("figures", ROOT / "scripts" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def index() -> list[dict]:
    if not (FIGURES / "figures.json").is_file() or not (HTML / "index.html").is_file():
        message = "no built book or figures: run `make figures` (make test does)"
        pytest.fail(message) if REQUIRED else pytest.skip(message)
    return json.loads((FIGURES / "figures.json").read_text(encoding="utf-8"))


def test_every_numbered_figure_is_written_by_its_number(index: list[dict]) -> None:
    figures = _script()
    numbered = [(page.relative_to(HTML).as_posix(), number) for page in sorted(HTML.glob("book/**/*.html"))
                for number, _, _ in figures.numbered_figures(page)]
    assert [(entry["page"], entry["number"]) for entry in index] == numbered
    chapters = [entry for entry in index if "." in entry["number"]]
    assert all(entry["svg"] == f"fig-{entry['number'].replace('.', '-')}.svg" for entry in chapters)
    assert len({entry["svg"] for entry in index}) == len(index)


def test_each_figure_is_an_svg_and_a_png_at_twice_its_size(index: list[dict]) -> None:
    for entry in index:
        svg = (FIGURES / entry["svg"]).read_text(encoding="utf-8")
        png = (FIGURES / entry["png"]).read_bytes()
        width = re.search(r'<svg[^>]*\bwidth="([0-9.]+)pt"', svg)
        assert width and png[:8] == b"\x89PNG\r\n\x1a\n", entry
        css_pixels = float(width.group(1)) * 4 / 3
        assert struct.unpack(">I", png[16:20])[0] >= 1.8 * css_pixels, entry
