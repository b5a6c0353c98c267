"""What every probe prints first: its command, the code's git commit, the machine and the time."""

from __future__ import annotations

import platform
import sys
from datetime import datetime, timezone
from multiprocessing import get_context
from typing import Callable, Sequence

import torch

from setfuncs.experiments.provenance import cpu_model, git_commit


def print_header() -> None:
    """Print the command line, git commit, CPU, versions and UTC time, and use one torch thread."""
    torch.set_num_threads(1)
    print(f"command: python {' '.join(sys.argv)}")
    print(f"git commit: {git_commit()}")
    print(f"machine: {cpu_model()}, python {platform.python_version()}, torch {torch.__version__}, one thread, "
          f"{torch.backends.cpu.get_cpu_capability()} kernels")
    print(f"started: {datetime.now(timezone.utc).isoformat(timespec='seconds')}")
    print()


def print_rows(title: str, one: Callable[[object], str], jobs: Sequence[object]) -> None:
    """Print the header (:func:`print_header`), the table's ``title`` line, and the line ``one(job)`` of
    every job, in order, two jobs at a time in fresh (spawned) processes."""
    print_header()
    print(title)
    with get_context("spawn").Pool(2) as pool:
        for line in pool.imap(one, jobs):
            print(line, flush=True)
