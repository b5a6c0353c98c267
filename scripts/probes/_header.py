"""What every probe prints first: its command, the code's git commit, the machine and the time."""

from __future__ import annotations

import platform
import sys
from datetime import datetime, timezone

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
