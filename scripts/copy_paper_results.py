"""Write ``results/paper-results.json``: the paper's numbers, copied verbatim, with their provenance.

    python scripts/copy_paper_results.py ../shared/paper/results.json            # [--replace] [--out FILE]

The file holds ``{"provenance": {...}, "paper": <the source, unchanged>}``; the provenance names
the source, this command, the date and the sha256 of the source's bytes. No code of this
repository computes the paper's numbers; the chapters read them with
:func:`setfuncs.experiments.results.load_paper` and label them as the paper's.

The source must be the paper's transcription (:func:`check_paper`: the tables and findings the
chapters read, in the shape they read them); anything else is refused in one line (exit status 2).
An existing output that already holds the same numbers is left as it is; one that holds other
numbers, or is not a copy of the paper's numbers, is refused unless ``--replace`` is given.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from datetime import date
from pathlib import Path

import setfuncs as sf
from setfuncs.experiments.circle.table import PAPER_ROWS
from setfuncs.experiments.pointcloud.budget import TABLE_SIZES
from setfuncs.experiments.results import PAPER_RESULTS, RESULTS_DIR

#: Where the copy is written, and where the chapters read it.
OUT = RESULTS_DIR / PAPER_RESULTS
#: The paper's tables the chapters read: each one's columns (compared in lower case) and rows.
TABLES = {
    "minimal_enclosing_circle": (("best_mse", "radius_mse", "center_mse", "median_best_mse"),
                                 tuple(PAPER_ROWS.values())),
    "modelnet40": (sf.TABLE2_SPECS, tuple(str(n) for n in TABLE_SIZES)),
}
#: The paper's figures whose findings (a list of sentences) the chapters quote.
FINDINGS = ("gmm_mixture_weights", "spatial_attention")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_paper(data: object) -> list[str]:
    """What keeps ``data`` (a loaded JSON file) from being the paper's transcription; an empty list:
    nothing.

    It must be an object with a ``source`` string, the tables of :data:`TABLES` (``columns``: a list
    of names holding the ones the chapters read; ``rows``: those rows and maybe others, each a list of
    one number per column) and the ``findings`` of :data:`FINDINGS` (a list of sentences).
    """
    if not isinstance(data, dict):
        return [f"a JSON {type(data).__name__}, not an object"]
    if set(data) == {"provenance", "paper"}:
        return [f"it is a copy made by this script (like results/{PAPER_RESULTS}), not the transcription it copies"]
    problems = [] if isinstance(data.get("source"), str) and data["source"] else ["no 'source' naming the paper"]
    for key, (columns, rows) in TABLES.items():
        table = data.get(key)
        if not isinstance(table, dict) or not isinstance(table.get("columns"), list) or not isinstance(
                table.get("rows"), dict):
            problems.append(f"no table {key!r} with 'columns' and 'rows'")
            continue
        names = [str(column).lower() for column in table["columns"]]
        missing = [column for column in columns if column not in names]
        problems += [f"{key}: no column {missing}"] if missing else []
        missing = [row for row in rows if row not in table["rows"]]
        problems += [f"{key}: no row {missing}"] if missing else []
        problems += [f"{key}: row {name!r} is not {len(names)} numbers" for name, row in table["rows"].items()
                     if not (isinstance(row, list) and len(row) == len(names) and all(map(_is_number, row)))]
    for key in FINDINGS:
        findings = (data.get(key) or {}).get("findings") if isinstance(data.get(key), dict) else None
        if not (isinstance(findings, list) and findings and all(isinstance(f, str) and f for f in findings)):
            problems.append(f"no {key!r} with a list of 'findings'")
    return problems


def _held_paper(path: Path) -> tuple[dict | None, str | None]:
    """The ``paper`` part of the copy at ``path`` and the sha256 of its source; ``(None, None)`` where
    ``path`` is not such a copy (or is missing)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return record["paper"], record["provenance"]["source_sha256"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None, None


def main(argv: list[str] | None = None) -> int:
    """Command line: check the source, then write the copy (or leave an identical one); the exit status
    is 0, or 2 for a source that is not the paper's transcription or an output it would overwrite."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the paper's transcription, e.g. ../shared/paper/results.json")
    parser.add_argument("--out", type=Path, default=OUT, help=f"the copy to write (default: results/{PAPER_RESULTS})")
    parser.add_argument("--replace", action="store_true",
                        help="overwrite an output that holds other numbers, or is not a copy of the paper's")
    args = parser.parse_args(argv)
    try:
        raw = args.source.read_bytes()
        paper = json.loads(raw)
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else type(error).__name__
        parser.error(f"{args.source} cannot be read as JSON ({reason}); pass the paper's transcription, "
                     "e.g. ../shared/paper/results.json")
    problems = check_paper(paper)
    if problems:
        parser.error(f"{args.source} is not the paper's transcription ({'; '.join(problems)}); pass the paper's "
                     "results file, e.g. ../shared/paper/results.json")
    if args.out.is_dir():
        parser.error(f"--out {args.out} is a folder; pass the file to write, e.g. --out {args.out / PAPER_RESULTS}")
    sha256 = hashlib.sha256(raw).hexdigest()
    held, held_sha256 = _held_paper(args.out)
    if held == paper and held_sha256 == sha256:
        print(f"{args.out} already holds these numbers (sha256 {sha256[:12]}); left as it is")
        return 0
    if args.out.exists() and not args.replace:
        what = ("something else than a copy of the paper's numbers" if held is None else "other numbers"
                if held != paper else f"these numbers copied from another file (sha256 {str(held_sha256)[:12]})")
        parser.error(f"{args.out} holds {what}, which this would overwrite: pass --replace to overwrite it, "
                     "or --out another file")
    record = {
        "provenance": {
            "what": "The paper's own numbers (Soelch et al. 2019: Table 1, Table 2, Figure 4 findings, "
                    "Section 4.4 findings), copied verbatim under 'paper'; no code of this repository "
                    "computed them. Chapters label them as the paper's. The transcription calls the "
                    "mixture figure 'Figure 3' and the attention figure 'Figure 4'; the paper numbers "
                    "them 4 and 5 (its Figure 3 is the circle example beside Table 1), and so does the book.",
            "source": "shared/paper/results.json, the project's transcription of the paper's tables and "
                      "findings (outside this repository)",
            "command": "python scripts/copy_paper_results.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "copied": date.today().isoformat(),
            "source_sha256": sha256,
        },
        "paper": paper,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_name(args.out.name + ".partial")
    partial.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
