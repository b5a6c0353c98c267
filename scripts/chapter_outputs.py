"""Digests of what every executed chapter shows, to prove that a change of code left the chapters' output alone.

Reads the chapters as ``make notebooks`` executed them (``.nbmake/``) and writes, per chapter and code
cell, a SHA-256 of the cell's text outputs (streams, ``text/html`` (an explorable's as its name and alt
text), ``text/markdown``, errors, and
``text/plain`` where there is no HTML: an object shown as a table is compared by its table) with what changes from run to run masked: measured seconds, dates, memory addresses, rounding-level
numbers (1e-10 and below)
(:data:`VOLATILE`), the numbers of a line that measures a speed and the spaces that align them ("populations/s", "per second"), the
cells of a table column of times (a header such as "training (s)" or "sec"), and how a stream was cut
into outputs. Images are left out: their bytes depend on the fonts' rasterisation, not on the code.

    python scripts/chapter_outputs.py --write        # after `make notebooks`: tests/data/chapter-outputs.json
    python scripts/chapter_outputs.py --compare DIR  # the chapters in DIR against the committed digests

``tests/test_chapter_outputs.py`` compares ``.nbmake/`` against the committed file after ``make
notebooks``; a change that means to change a chapter's output writes the file again in the same commit.

A trained model's numbers depend on the CPU that trained it, not only on the code: the math libraries
take other code paths on other processors, and a few hundred steps of training carry a last-bit
difference into a printed digit. The file names the machine that wrote it (:func:`machine`); on another
machine the cells of :data:`VARIES_WITH_HARDWARE` are left out of the comparison, and said to be.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXECUTED = ROOT / ".nbmake"
DIGESTS = ROOT / "tests" / "data" / "chapter-outputs.json"
#: What differs between two runs of the same code: measured times, dates and times of day, addresses.
VOLATILE = [
    (re.compile(r"\d+(?:[.,]\d+)?\s*(?:s|ms|seconds?|min|minutes?)\b"), "<time>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z)?"), "<date>"),
    (re.compile(r"0x[0-9a-f]{6,}"), "<address>"),
    # rounding-level differences (1e-10 and below) between two exact algorithms, which vary from run to run
    (re.compile(r"\d(?:\.\d+)?e-(?:1\d|[2-9]\d)\b"), "<rounding>"),
]
#: Cells seen to print other numbers on another CPU from the same code (CI on an "Intel(R) Xeon(R)
#: Processor" against digests written on an "AMD EPYC", both AVX512, torch 2.13.0 CPU wheel, one thread,
#: 2026-12-02): each prints what a trained model or a float reduction computed, to 2-4 digits; and the cells
#: of the rewritten experiment chapters that print what their live models trained here.
VARIES_WITH_HARDWARE: dict[str, frozenset[str]] = {
    "01_sets.ipynb": frozenset({"sets-13"}),
    "02_sum_decomposition.ipynb": frozenset({"sumdec-12"}),
    "03_sum_isomorphism.ipynb": frozenset({"a7b09094"}),
    "05_divide_and_conquer.ipynb": frozenset({"d47f002b", "dac-read"}),
    "06_learnable_aggregations.ipynb": frozenset({"db1db80c", "learn-09"}),
    "07_universal_approximation_and_discussion.ipynb": frozenset({"univ-09", "univ-11", "univ-11b"}),
    "08_circle.ipynb": frozenset({"1f591348", "circle-live-table", "f26ce692"}),
    "09_mixture.ipynb": frozenset({"mixture-lse-lme-table", "cc780ed5", "4ea7d281", "48d9c4f7"}),
    "10_point_clouds.ipynb": frozenset({"pc-live-table", "ed402646", "fff52ade"}),
    "11_attention.ipynb": frozenset({"attention-live-table", "5fb4d6b8"}),
}
TEXT = ("text/plain", "text/html", "text/markdown", "text/latex")
#: An explorable's static element: its module's name and its still frame's alt text.
EXPLORABLE = re.compile(r'<figure class="explorable" data-explorable="(?P<name>[^"]+)".*\balt="(?P<alt>[^"]*)"></figure>$',
                        re.DOTALL)
#: A line that measures a speed: its numbers are masked.
SPEED = re.compile(r"/s\b|per second")
#: A table header of a column of measured times.
TIME_HEADER = re.compile(r"\((?:s|ms|min)\)|^sec|seconds|time", re.IGNORECASE)
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
TABLE = re.compile(r"<table>.*?</table>", re.DOTALL)
ROW = re.compile(r"<tr>(.*?)</tr>", re.DOTALL)
CELL = re.compile(r"<t([hd])([^>]*)>(.*?)</t[hd]>", re.DOTALL)


def _mask_table(match: re.Match) -> str:
    """An HTML table with the cells of its columns of times masked (the header row names the columns)."""
    table = match.group(0)
    rows = ROW.findall(table)
    if not rows:
        return table
    headers = [text for kind, _, text in CELL.findall(rows[0]) if kind == "h"]
    timed = {i for i, header in enumerate(headers) if TIME_HEADER.search(re.sub(r"<[^>]+>", "", header).strip())}

    def row(found: re.Match) -> str:
        cells = CELL.findall(found.group(1))
        if not timed or any(kind == "h" for kind, _, _ in cells):
            return found.group(0)
        return "<tr>" + "".join(f"<t{kind}{attrs}>{'<time>' if i in timed else text}</t{kind}>"
                                for i, (kind, attrs, text) in enumerate(cells)) + "</tr>"

    return ROW.sub(row, table)


def _explorable(html: str) -> str:
    """An explorable's element (``setfuncs.explorables``) as its name and alt text: its still frame is
    an image, and its state holds what a live model trained (weights that vary with the CPU)."""
    found = EXPLORABLE.match(html)
    return f"<explorable {found.group('name')}: {found.group('alt')}>" if found else html


def cell_text(cell: dict) -> str:
    """The text a code cell shows, outputs in order, volatile parts masked."""
    parts = []
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream":
            text = "".join(output["text"])
            if parts and parts[-1].startswith(f"{output['name']}:"):   # a stream cut into several outputs
                parts[-1] += text
            else:
                parts.append(f"{output['name']}:{text}")
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            # a rich output is compared by what the book shows: its HTML, not the text/plain beside it (an
            # object's repr, with unmasked measured seconds)
            shown = [mime for mime in TEXT if mime in data and not (mime == "text/plain" and "text/html" in data)]
            parts += [f"{mime}:{_explorable(''.join(data[mime]))}" for mime in shown]
        elif kind == "error":
            parts.append(f"error:{output['ename']}")
    text = "\n".join(parts)
    text = TABLE.sub(_mask_table, text)
    # a speed's numbers are masked, and the padding that aligns them (its width follows the number's)
    text = "\n".join(NUMBER.sub("<n>", re.sub(r" +", " ", line)) if SPEED.search(line) else line
                     for line in text.split("\n"))
    for pattern, mask in VOLATILE:
        text = pattern.sub(mask, text)
    return text


def digests(folder: Path) -> dict[str, dict[str, str]]:
    """``{chapter: {cell id: sha256}}`` of every executed chapter in ``folder``."""
    found = {}
    for path in sorted(folder.glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        found[path.name] = {cell["id"]: hashlib.sha256(cell_text(cell).encode()).hexdigest()
                            for cell in cells if cell["cell_type"] == "code"}
    return found


def machine() -> str:
    """What a trained model's numbers depend on besides the code: the CPU's model, whether it has
    AVX-512 (the kernels a chapter's kernel picks), and torch's version."""
    import torch

    from setfuncs.experiments.provenance import cpu_model

    cpuinfo = Path("/proc/cpuinfo")
    flags = cpuinfo.read_text() if cpuinfo.exists() else ""
    vector = "AVX-512" if re.search(r"\bavx512f\b", flags) else "no AVX-512"
    return f"{cpu_model() or 'unknown CPU'}, {vector}, torch {torch.__version__}"


def differences(expected: dict, found: dict, leave_out: dict[str, frozenset[str]] | None = None) -> list[str]:
    """The chapters and cells whose digests differ, in words; ``leave_out`` names cells not compared."""
    leave_out = leave_out or {}
    lines = [f"{name}: not executed" for name in expected if name not in found]
    lines += [f"{name}: no committed digests" for name in found if name not in expected]
    for name in sorted(set(expected) & set(found)):
        cells = (set(expected[name]) | set(found[name])) - leave_out.get(name, frozenset())
        lines += [f"{name}, cell {cell}: output changed" for cell in sorted(cells)
                  if expected[name].get(cell) != found[name].get(cell)]
    return lines


def read_digests() -> tuple[str, dict]:
    """The committed digests: the machine that wrote them and ``{chapter: {cell id: sha256}}``."""
    committed = json.loads(DIGESTS.read_text(encoding="utf-8"))
    return committed["written_on"], committed["chapters"]


def comparison(found: dict) -> tuple[list[str], str | None]:
    """The differences of ``found`` from the committed digests, and why cells were left out (None if none)."""
    written_on, expected = read_digests()
    here = machine()
    if here == written_on:
        return differences(expected, found), None
    left = sum(len(VARIES_WITH_HARDWARE.get(name, ())) for name in expected)
    return (differences(expected, found, VARIES_WITH_HARDWARE),
            f"the digests were written on {written_on}; this machine is {here}: the {left} cells whose "
            f"numbers vary with the CPU (VARIES_WITH_HARDWARE) were not compared")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help=f"write {DIGESTS.relative_to(ROOT)} from .nbmake/")
    action.add_argument("--compare", type=Path, metavar="DIR", help="compare the chapters in DIR with the digests")
    args = parser.parse_args(argv)
    folder = EXECUTED if args.write else args.compare
    if not folder.is_dir() or not any(folder.glob("*.ipynb")):
        parser.error(f"{folder} holds no executed chapters; run `make notebooks` first")
    found = digests(folder)
    if args.write:
        DIGESTS.write_text(json.dumps({"written_on": machine(), "chapters": found}, indent=1, sort_keys=True)
                           + "\n", encoding="utf-8")
        print(f"{sum(map(len, found.values()))} cells of {len(found)} chapters -> {DIGESTS.relative_to(ROOT)}")
        return
    changed, left_out = comparison(found)
    print("\n".join(changed) or f"every cell of {len(found)} chapters as committed")
    if left_out:
        print(left_out)
    sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
