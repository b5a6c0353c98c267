"""The compute budget every training chapter reads: ``SETFUNCS_BUDGET=quick|full``.

``quick`` (the default; CI and the default book build) runs the same training code with smaller
numbers (each chapter prints the time it took on our machine, :func:`setfuncs.runtime.run_time_line`).
``full`` is the paper's scale.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["BUDGETS", "budget", "pick"]

BUDGETS = ("quick", "full")


def budget() -> str:
    """The budget named by the environment variable ``SETFUNCS_BUDGET`` (default ``quick``)."""
    name = os.environ.get("SETFUNCS_BUDGET", "quick").strip().lower()
    if name not in BUDGETS:
        raise ValueError(f"SETFUNCS_BUDGET must be one of {BUDGETS}, got {name!r}; "
                         "e.g. `SETFUNCS_BUDGET=full jupyter lab`")
    return name


def pick(quick: Any, full: Any) -> Any:
    """``quick`` or ``full``, by the current budget: ``steps = pick(300, 20_000)``."""
    return quick if budget() == "quick" else full
