"""Every verdict of the committed results files that differs between an earlier commit and the working tree.

Checks the earlier commit out into a temporary git worktree, computes every experiment's findings table there
and here (each on its own commit's committed results files), and prints one Markdown table row per
(experiment, claim key, variant) whose verdict differs: what ``results/README.md`` lists, with the reasons
beside.

    python scripts/verdict_changes.py --base 71894b5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Run in a checkout (its path the first argument): every finding's verdict, as JSON on standard output.
VERDICTS = """
import json, sys
from setfuncs.experiments import attention, circle, mixture, pointcloud
root = sys.argv[1]
out = {}
for name, module in (("circle", circle), ("mixture", mixture), ("pointcloud", pointcloud), ("attention", attention)):
    results = module.EXPERIMENT.load_results(f"{root}/results/{name}-medium.json")
    for f in module.EXPERIMENT.findings(results, f"{root}/results/paper-results.json"):
        out[f"{name}|{f.key}|{f.variant}"] = f.verdict
print(json.dumps(out))
"""


def verdicts(checkout: Path) -> dict[str, str]:
    """``{"experiment|key|variant": verdict}`` of the findings tables computed in ``checkout``."""
    done = subprocess.run([sys.executable, "-c", VERDICTS, str(checkout)], cwd=checkout, capture_output=True,
                          text=True, env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"})
    if done.returncode != 0:
        raise SystemExit(f"verdict_changes.py: the findings failed in {checkout}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the earlier commit, e.g. 71894b5")
    base = parser.parse_args().base
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "base"
        subprocess.run(["git", "worktree", "add", "--quiet", "--detach", str(tree), base], cwd=ROOT, check=True)
        try:
            old = verdicts(tree)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    new = verdicts(ROOT)
    print("| experiment | claim | variant | before | after |\n| --- | --- | --- | --- | --- |")
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            experiment, claim, variant = key.split("|")
            print(f"| {experiment} | `{claim}` | {variant} | {old.get(key, 'no row')} | {new.get(key, 'no row')} |")


if __name__ == "__main__":
    main()
