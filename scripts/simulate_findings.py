"""The compound-claim rule's error rates and power at ten seeds, by simulation: the committed artefact.

Runs :func:`setfuncs.experiments.findings.rates.rates` for the smallest and the largest family of the
paper's claims in the four chapters (5 and 9 claims), at ten seeds, and writes
``results/simulations/compound-rule.json`` with the command, the git commit, versions, hardware, wall time
and a digest of the rule's source files. ``tests/test_compound_rule.py`` checks the artefact against its
bounds, and that the digest matches the code as it stands (a changed rule must be simulated again).

    python scripts/simulate_findings.py            # about 3 minutes on one core
"""

from __future__ import annotations

import json
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "simulations" / "compound-rule.json"
SEEDS = 10
FAMILIES = (5, 9)
REPS = 4000


def main() -> None:
    import numpy as np

    from setfuncs.experiments.findings.rates import rates, rule_digest
    from setfuncs.experiments.provenance import cpu_model, git_commit

    began, started = time.perf_counter(), datetime.now(timezone.utc).isoformat(timespec="seconds")
    rows = [{"family": m, **row} for m in FAMILIES for row in rates(SEEDS, m, REPS)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({
        "what": "error rates and power of the compound-claim rule (setfuncs.experiments.findings.rates)",
        "command": f"python {' '.join(sys.argv)}", "git_commit": git_commit(), "started": started,
        "machine": cpu_model(), "python": platform.python_version(), "numpy": np.__version__,
        "wall_seconds": round(time.perf_counter() - began, 1), "seeds": SEEDS, "reps": REPS,
        "rule_digest": rule_digest(), "rows": rows}, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(rows)} rows in {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
