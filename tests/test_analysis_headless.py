"""The chapters' analysis and figure modules import on a headless node: without matplotlib,
scikit-learn or miniball, which they import only where a figure or a comparison is made."""

from __future__ import annotations

import subprocess
import sys

MODULES = ["setfuncs.experiments.curves"] + [
    f"setfuncs.experiments.{experiment}.{name}" for experiment, names in {
        "circle": ("baseline", "draw", "figures", "medians", "reference"),
        "mixture": ("accuracy", "figures", "first_layer", "reference", "violins"),
        "pointcloud": ("agreement", "confusion", "costs", "figures"),
        "attention": ("by_size", "describe", "draw", "weights"),
    }.items() for name in names]


def test_analysis_modules_import_without_the_notebook_stack() -> None:
    code = ("import importlib, sys\n"
            "for name in ('matplotlib', 'sklearn', 'miniball'):\n"
            "    sys.modules[name] = None\n"
            f"for module in {MODULES!r}:\n"
            "    importlib.import_module(module)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
