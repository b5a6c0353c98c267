"""The scripts in ``scripts/`` as modules, for the tests that call their functions (a script is not a
package's module: it is loaded from its file)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(name: str, path: Path | None = None) -> ModuleType:
    """The script ``scripts/<name>.py`` (or the file ``path``) loaded as the module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path or ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
