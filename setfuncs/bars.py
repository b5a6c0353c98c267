"""Progress bars: :func:`tqdm.auto.tqdm`, except in the chapters the book shows.

A reader who runs a chapter sees a bar for each training and sweep (a widget in JupyterLab, text
in a terminal). The book's own runs (``make notebooks``, ``make book``, ``make test``) set
``SETFUNCS_PROGRESS=off``: a finished bar tells a reader of the rendered page nothing, and in the
HTML it would need the widget runtime. Any other value, or none, leaves the bars on.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from tqdm.auto import tqdm

__all__ = ["VARIABLE", "bar"]

#: The environment variable that turns every bar off when it is ``off``.
VARIABLE = "SETFUNCS_PROGRESS"


def bar(iterable: Iterable | None = None, *, enabled: bool = True, **kwargs: Any) -> tqdm:
    """A tqdm bar over ``iterable`` (or one updated by hand), shown where ``enabled`` and the
    environment allows (:data:`VARIABLE`); ``kwargs`` go to tqdm (``total``, ``desc``, ``unit``...)."""
    return tqdm(iterable, disable=not enabled or os.environ.get(VARIABLE) == "off", **kwargs)
