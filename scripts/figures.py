"""Every numbered figure of the built book as a named SVG and a 2x PNG, for slides and handouts.

``make figures`` (after ``make book``): for each page of the built book (``--html``), every figure
with a number ("Fig. 4.1") is looked up, by its name (the ``id`` the page gives it, which is the
cell's ``mystnb.figure.name``), in the chapter as ``make notebooks`` executed it (``--executed``),
and its image is written as ``fig-<chapter>-<n>.svg`` and ``fig-<chapter>-<n>.png`` into ``--out``
(Fig. 4.1 -> ``fig-4-1.svg``; a figure of a page numbered through the book, a methods page's
"Fig. 2", as ``fig-<page>-<n>``, ``fig-09_mixture_methods-2.svg``). The chapters run with the book's IPython profile (``ipython/``), so
every matplotlib figure is there as SVG and as a PNG at 200 dpi (twice the 100 dpi at which the
book's figures are drawn to size); an explorable's still frame is the same pair. The number comes
from the built page, so it is the number the reader sees. A numbered figure without both images
is an error naming the figure and the page; the folder is written afresh (only ``fig-*.svg`` and
``fig-*.png`` files this script writes are replaced), and an index, ``figures.json``, lists each
file with its number, page and caption.

Usage: ``python scripts/figures.py --html _build/html --executed .nbmake --out _build/figures``
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import re
import sys
from pathlib import Path

FIGURE = re.compile(r'<figure[^>]*\bid="(?P<id>[^"]+)"[^>]*>')
NUMBER = re.compile(r'<span class="caption-number">Fig\. (?P<number>[0-9A-Za-z.]+?)\s*</span>')
CAPTION = re.compile(r'<span class="caption-text">(?P<text>.*?)</span>', re.DOTALL)
TAG = re.compile(r"<[^>]+>")


def numbered_figures(page: Path) -> list[tuple[str, str, str]]:
    """``(number, name, caption)`` of every numbered figure of a built page, in page order."""
    found = []
    text = page.read_text(encoding="utf-8")
    starts = list(FIGURE.finditer(text))
    for match, after in zip(starts, [*starts[1:], None]):
        # up to the next figure with an id: an explorable's own <figure> (no id) nests inside
        body = text[match.end():after.start() if after else len(text)]
        number = NUMBER.search(body)
        if number:
            caption = CAPTION.search(body)
            words = html.unescape(TAG.sub("", caption.group("text"))).strip() if caption else ""
            found.append((number.group("number"), match.group("id"), " ".join(words.split())))
    return found


def cell_images(notebook: Path, name: str) -> dict[str, bytes]:
    """The SVG and PNG of the cell whose figure is ``name`` (its last output that has them)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("name") == name:
            images: dict[str, bytes] = {}
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if "image/svg+xml" in data and "image/png" in data:
                    svg = data["image/svg+xml"]
                    images = {"svg": ("".join(svg) if isinstance(svg, list) else svg).encode("utf-8"),
                              "png": base64.b64decode("".join(data["image/png"]))}
            return images
    return {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, required=True, help="the built book (_build/html)")
    parser.add_argument("--executed", type=Path, required=True, help="the executed chapters (.nbmake)")
    parser.add_argument("--out", type=Path, required=True, help="where the figures go (_build/figures)")
    args = parser.parse_args(argv)
    if not (args.html / "index.html").is_file():
        parser.error(f"--html {args.html}: no built book there (run `make book` first)")
    if not args.executed.is_dir():
        parser.error(f"--executed {args.executed}: no executed chapters there (run `make notebooks` first)")
    args.out.mkdir(parents=True, exist_ok=True)
    for old in [*args.out.glob("fig-*.svg"), *args.out.glob("fig-*.png")]:
        old.unlink()
    index, problems = [], []
    for page in sorted(args.html.glob("book/**/*.html")):
        notebook = args.executed / f"{page.stem}.ipynb"
        for number, name, caption in numbered_figures(page):
            images = cell_images(notebook, name) if notebook.is_file() else {}
            where = f"Fig. {number} ({name}) on {page.relative_to(args.html)}"
            if set(images) != {"svg", "png"}:
                problems.append(f"{where}: no SVG and PNG in {notebook}")
                continue
            # a chapter's figures are numbered by chapter (Fig. 4.1 -> fig-4-1); the methods pages'
            # and the appendix's through the book (Fig. 2), so their page names them
            stem = "fig-" + (number.replace(".", "-") if "." in number else f"{page.stem}-{number}")
            for suffix, data in images.items():
                (args.out / f"{stem}.{suffix}").write_bytes(data)
            index.append({"number": number, "name": name, "page": page.relative_to(args.html).as_posix(),
                          "svg": f"{stem}.svg", "png": f"{stem}.png", "caption": caption})
    (args.out / "figures.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(index)} numbered figures written to {args.out}")
    return 1 if problems or not index else 0


if __name__ == "__main__":
    sys.exit(main())
