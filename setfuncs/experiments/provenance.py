"""Where a sweep's numbers came from: the command, the git commit, versions, hardware, budget and seeds.

Every results file begins with :func:`sweep_provenance` (plus the experiment's own descriptions of
its data, model and metric) and carries :func:`sweep_identity`, the fields another sitting of the
same sweep must share before it may add runs to the file.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from dataclasses import asdict
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

__all__ = ["COMMIT_VARIABLE", "git_commit", "cpu_model", "environment", "sweep_provenance", "sweep_identity"]


#: Set to the commit that was sent, where the code runs from a copy whose git metadata may be
#: stale or missing (a lent GPU machine: ``scripts/gpu_sweeps.sh``); :func:`git_commit` returns it.
COMMIT_VARIABLE = "SETFUNCS_GIT_COMMIT"


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The checked-out commit of this package's repository (None outside git), with ``-dirty`` if a
    tracked file outside ``results/`` was changed: the code that ran, not the results files a
    sweep rewrites. Where the environment variable :data:`COMMIT_VARIABLE` is set, its value (a
    commit hash of 7 to 40 hex digits, optionally with ``-dirty``) instead."""
    sent = os.environ.get(COMMIT_VARIABLE)
    if sent is not None:
        if not re.fullmatch(r"[0-9a-f]{7,40}(-dirty)?", sent):
            raise ValueError(f"{COMMIT_VARIABLE}={sent!r} is not a git commit hash (7 to 40 lowercase hex digits, "
                             f"optionally -dirty); set it to the output of `git rev-parse HEAD` or unset it")
        return sent
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=False)
        changed = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                  ".", ":(exclude)results"], capture_output=True, text=True, check=False)
    except FileNotFoundError:  # git is not installed
        return None
    if head.returncode != 0 or changed.returncode != 0:
        return None
    return head.stdout.strip() + ("-dirty" if changed.stdout.strip() else "")


def cpu_model() -> str | None:
    """The CPU's model name from ``/proc/cpuinfo`` (None where there is none)."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return None
    for line in cpuinfo.read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


def environment(**versions: str) -> dict:
    """Command line, working directory, git commit, package versions (plus ``versions``) and hardware."""
    import setfuncs

    return {
        "command": list(sys.argv),
        "cwd": os.getcwd(),
        "git_commit": git_commit(),
        "versions": {"setfuncs": setfuncs.__version__, "torch": torch.__version__,
                     "numpy": np.__version__, **versions, "tqdm": version("tqdm"),
                     "dask": version("dask"), "distributed": version("distributed"),
                     "python": platform.python_version()},
        "hardware": {"machine": platform.machine(), "processor": platform.processor(),
                     "cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
                     "platform": platform.platform(), "torch_threads_per_run": 1},
    }


def sweep_provenance(experiment: str, budget: Any, runs: int, specs: Sequence[str], seed_scheme: str,
                     **versions: str) -> dict:
    """What every sweep's file begins with: the ``experiment``, :func:`environment` (with the extra
    ``versions``), the budget's name and fields, the seeds ``0 .. runs-1`` and how they are used,
    and the configurations."""
    return {"experiment": experiment, **environment(**versions), "budget": budget.name,
            "budget_parameters": asdict(budget), "runs_per_configuration": runs, "seeds": list(range(runs)),
            "seed_scheme": seed_scheme, "configurations": list(specs)}


def sweep_identity(header: dict, **extra: Any) -> dict:
    """What two sittings of one sweep must share to write into the same file: the experiment, the
    budget's name and every one of its parameters (as JSON stores them), and ``extra`` (e.g. the
    data set's name)."""
    return json.loads(json.dumps({"experiment": header["experiment"], "budget": header["budget"],
                                  "budget_parameters": header["budget_parameters"], **extra}))
