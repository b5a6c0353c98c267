"""Where the mixture rerun's file lies: in ``results/pending/`` while it runs, in ``results/`` once complete."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = (ROOT / "results" / "pending" / "mixture-medium.json", ROOT / "results" / "mixture-medium.json")


def rerun_file() -> Path:
    """The first of :data:`FILES` that exists; SystemExit naming both where neither does."""
    path = next((p for p in FILES if p.exists()), None)
    if path is None:
        raise SystemExit(f"no mixture rerun file at {' or '.join(map(str, FILES))}")
    return path
