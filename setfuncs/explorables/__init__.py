"""Explorables: figures the reader drives, computed in the browser (:mod:`.base`), one per idea.

Each module here defines :class:`~setfuncs.explorables.base.Explorable` subclasses with their
front ends ``js/<module>.js``; importing this package imports them all, which registers each in
:data:`~setfuncs.explorables.base.REGISTRY` (module name -> class), where the tests find them.
"""

import importlib
import pkgutil

from .base import REGISTRY, STILL_DPI, Explorable

#: Modules of this package that hold no explorable.
INFRASTRUCTURE = {"base", "esm", "rng", "weights", "air_weights"}
for _module in pkgutil.iter_modules(__path__):
    if _module.name not in INFRASTRUCTURE:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Explorable", "REGISTRY", "STILL_DPI"]
