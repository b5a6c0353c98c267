r"""An explorable: a figure the reader drives, computed in the reader's browser.

One ES module (``js/<module>.js``, anywidget's ``render({model, el})``) draws it from a JSON
``state`` the Python side computes once (a population, a range, a trained model's weights). It runs
in three places from that one module:

* **JupyterLab and Colab**: an :class:`anywidget.AnyWidget` whose front end is the module, inlined
  with the files it imports (:func:`~setfuncs.explorables.esm.module_source`);
* **the static book**: the widget runtime is not on the page. The output's ``text/html`` is a
  ``<figure data-explorable="<module>" data-state="...">`` holding the still frame, and the book's
  ``_static/explorables/loader.js`` imports the same module and renders it there, with a model
  that keeps the state in the page;
* **print and no JavaScript**: the still frame, a PNG at twice its shown size with alt text,
  stands in the HTML until the module has rendered, and is the ``image/png`` the PDF prints.

What the page shows is numbers a test can read: every control is an ``<input data-control=name>``
and every read-out an ``<output data-readout=name data-value=...>``; :meth:`Explorable.readouts`
computes the same read-outs in Python from a state, so ``tests/test_explorables_browser.py`` moves
each control to the values in :attr:`Explorable.probes` (values no still frame holds) and compares.
"""

from __future__ import annotations

import base64
import html
import io
import json
from typing import Any, ClassVar

import anywidget
import matplotlib.pyplot as plt
import traitlets
from matplotlib.figure import Figure

from .esm import module_source

__all__ = ["Explorable", "REGISTRY", "STILL_DPI"]

#: The still frame's resolution, twice the 100 dpi at which its figures are drawn to size on the page.
STILL_DPI = 200
#: The still frame's caption in print (and the text of a frontend without widgets or HTML).
STILL_NOTE = "Still frame: the online book and JupyterLab compute this figure for any setting you choose."
#: Every explorable class by its module's name (filled as classes are defined).
REGISTRY: dict[str, type["Explorable"]] = {}


class Explorable(anywidget.AnyWidget):
    """The base of every explorable; a subclass names its module and draws its still frame.

    Subclasses set :attr:`module`, ``_esm = module_source(module)`` (in the class body, where
    anywidget looks for it), :attr:`probes`, and implement :meth:`still` and
    :meth:`readouts`; their constructor computes the state and passes it with the alt text.

    Attributes:
        state: Everything the front end draws from (synced: in a notebook, what the reader changes
            comes back, e.g. ``widget.state["population"]``).
        alt: The still frame's alt text (what it shows, for a reader who cannot see it).
    """

    #: The front end, ``js/<module>.js``.
    module: ClassVar[str] = ""
    #: Control settings the browser test tries, each ``{control name: value}`` applied in order to
    #: the initial state; each value lies between the values any still frame shows.
    probes: ClassVar[list[dict[str, float]]] = []
    #: Relative and absolute tolerance of the browser test's comparison of read-outs.
    tolerance: ClassVar[float] = 1e-9

    state = traitlets.Dict().tag(sync=True)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "module" in cls.__dict__:  # not the classes traitlets' add_traits derives from it
            if cls.__dict__.get("_esm") != module_source(cls.module):
                raise TypeError(f"{cls.__name__}: set `_esm = module_source(module)` in the class body "
                                "(anywidget reads it when the class is made)")
            REGISTRY[cls.module] = cls

    def __init__(self, state: dict[str, Any], alt: str) -> None:
        if not alt.strip():
            raise ValueError(f"{type(self).__name__}: an explorable needs alt text describing its still frame")
        json.dumps(state, allow_nan=False)  # a state the page can carry, or a clear error here
        super().__init__(state=state)
        self.alt = alt

    @classmethod
    def example(cls) -> "Explorable":
        """An instance for the tests of every explorable on a page of its own (the default one)."""
        return cls()

    def still(self) -> Figure:
        """The figure at the initial state, drawn by matplotlib (print, and before the script runs)."""
        raise NotImplementedError(f"{type(self).__name__} must draw its still frame")

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        """The read-outs the page shows for ``state``, computed in Python (the browser test's truth)."""
        raise NotImplementedError(f"{cls.__name__} must compute its read-outs")

    def still_images(self) -> tuple[bytes, str]:
        """:meth:`still` as PNG bytes at :data:`STILL_DPI` and as SVG text (``make figures`` writes both)."""
        fig = self.still()
        png, svg = io.BytesIO(), io.StringIO()
        fig.savefig(png, format="png", dpi=STILL_DPI, pil_kwargs={"optimize": True})
        with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "setfuncs"}):
            fig.savefig(svg, format="svg", metadata={"Date": None})
        plt.close(fig)
        return png.getvalue(), svg.getvalue()

    def still_png(self) -> bytes:
        """:meth:`still` as PNG bytes at :data:`STILL_DPI`."""
        return self.still_images()[0]

    def static_html(self, png: bytes) -> str:
        """The static book's element: the still frame inside the figure the loader renders into."""
        width = _png_width(png) // 2
        state = html.escape(json.dumps(self.state, allow_nan=False, separators=(",", ":")), quote=True)
        image = base64.b64encode(png).decode("ascii")
        return (f'<figure class="explorable" data-explorable="{self.module}" data-state="{state}">'
                f'<img class="explorable-still" src="data:image/png;base64,{image}" width="{width}" '
                f'alt="{html.escape(self.alt, quote=True)}"></figure>')

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The widget (notebooks), the static element (the HTML book), the still frame (print)."""
        data, metadata = super()._repr_mimebundle_(**kwargs)
        png, svg = self.still_images()
        data["text/html"] = self.static_html(png)
        data["image/png"] = base64.b64encode(png).decode("ascii")
        data["image/svg+xml"] = svg
        data["text/plain"] = STILL_NOTE
        return data, metadata


def _png_width(png: bytes) -> int:
    """The width in pixels of a PNG, from its IHDR chunk."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    return int.from_bytes(png[16:20], "big")
