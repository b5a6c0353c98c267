"""Write ``results/paper-results.json``: the paper's numbers, copied verbatim, with their provenance.

    python scripts/copy_paper_results.py ../shared/paper/results.json

The file holds ``{"provenance": {...}, "paper": <the source, unchanged>}``; the provenance names
the source, this command, the date and the sha256 of the source's bytes. No code of this
repository computes the paper's numbers; the chapters read them with
:func:`setfuncs.experiments.results.load_paper` and label them as the paper's.
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import date
from pathlib import Path

from setfuncs.experiments.results import PAPER_RESULTS, RESULTS_DIR


def main(source: Path) -> None:
    raw = source.read_bytes()
    record = {
        "provenance": {
            "what": "The paper's own numbers (Soelch et al. 2019: Table 1, Table 2, Figure 4 findings, "
                    "Section 4.4 findings), copied verbatim under 'paper'; no code of this repository "
                    "computed them. Chapters label them as the paper's. The transcription calls the "
                    "mixture figure 'Figure 3' and the attention figure 'Figure 4'; the paper numbers "
                    "them 4 and 5 (its Figure 3 is the circle example beside Table 1), and so does the book.",
            "source": "shared/paper/results.json, the project's transcription of the paper's tables and "
                      "findings (outside this repository)",
            "command": "python scripts/copy_paper_results.py " + " ".join(sys.argv[1:]),
            "copied": date.today().isoformat(),
            "source_sha256": hashlib.sha256(raw).hexdigest(),
        },
        "paper": json.loads(raw),
    }
    (RESULTS_DIR / PAPER_RESULTS).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/copy_paper_results.py PATH/TO/results.json")
    main(Path(sys.argv[1]))
