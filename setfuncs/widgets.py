"""Sliders over precomputed figures that work with and without a Python kernel.

A slider in this book must work in three places: a live Jupyter kernel, the rendered HTML book
(where no Python runs) and headless CI. The helpers here therefore draw every frame *once*, in
Python, as a small PNG, and put the frames into an :class:`ipywidgets.Stack` of
:class:`ipywidgets.Image` widgets. The slider's ``index`` is linked to the stack's
``selected_index`` with :func:`ipywidgets.jslink`, a link that lives in the browser, so moving
the slider switches frames in JupyterLab and in the static HTML page alike (the executed
notebook stores the widget state, and the book serves the widget JavaScript itself).

Given a :class:`LiveRange`, :func:`slider_figure` also lets a running kernel draw any value of a
range, not only the precomputed ones. Whether a kernel is attached is learned from the browser:
a :func:`ipywidgets.jsdlink` copies the slider's position into a probe whose Python value starts
out different, so the browser's first copy reaches Python, and fires the probe's observer, only
when a frontend is connected to the kernel. That observer swaps the slider and the frames for a
continuous slider and one image that Python redraws. A build (nbclient, nbmake) has a kernel but
no browser, so the saved widget state, and with it the static book, keeps the frames.

>>> import matplotlib.pyplot as plt
>>> def draw(a: float) -> plt.Figure:
...     fig, ax = plt.subplots()
...     ax.plot([0, 1], [0, a])
...     return fig
>>> box = slider_figure(draw, [0.5, 1.0, 2.0], label="slope")
>>> box = slider_figure(draw, [0.5, 1.0, 2.0], label="slope", live=LiveRange(0.1, 10, log=True))
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

__all__ = ["LiveRange", "figure_png", "slider_figure", "slider_grid"]

#: Resolution of the precomputed frames: small, so pages with many frames stay light.
DEFAULT_DPI = 80
#: Width of every slider: the full width on a phone, at most 32rem elsewhere.
SLIDER_WIDTH = "min(100%, 32rem)"


@dataclass(frozen=True)
class LiveRange:
    """The range a slider covers when a kernel is running, where each value is drawn on demand.

    Attributes:
        low: The smallest value.
        high: The largest value.
        log: Whether the slider moves on a logarithmic scale (then ``low`` must be positive).
        steps: How many steps the slider has from ``low`` to ``high``.
    """

    low: float
    high: float
    log: bool = False
    steps: int = 300

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"LiveRange needs low < high, got {self.low} and {self.high}")
        if self.log and self.low <= 0:
            raise ValueError(f"a logarithmic LiveRange needs low > 0, got {self.low}")
        if self.steps < 1:
            raise ValueError(f"LiveRange needs at least one step, got {self.steps}")

    def slider(self, label: str, value: float) -> widgets.FloatSlider | widgets.FloatLogSlider:
        """A slider over this range that starts at ``value``."""
        common = dict(value=value, description=label, readout_format=".3g",
                      continuous_update=True, style={"description_width": "initial"},
                      layout=widgets.Layout(width=SLIDER_WIDTH))
        if self.log:  # FloatLogSlider's min, max and step are base-10 exponents
            low, high = math.log10(self.low), math.log10(self.high)
            return widgets.FloatLogSlider(min=low, max=high, step=(high - low) / self.steps,
                                          **common)
        return widgets.FloatSlider(min=self.low, max=self.high,
                                   step=(self.high - self.low) / self.steps, **common)


def figure_png(fig: Figure, dpi: int = DEFAULT_DPI) -> bytes:
    """Render a matplotlib figure to PNG bytes and close it.

    Args:
        fig: The figure to render.
        dpi: Resolution in dots per inch.

    Returns:
        The PNG file's bytes.
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def _slider(label: str, values: Sequence[Any], fmt: Callable[[Any], str]) -> widgets.SelectionSlider:
    """A slider over ``values`` whose synced ``index`` is the position of the selected value."""
    options = [(fmt(value), position) for position, value in enumerate(values)]
    return widgets.SelectionSlider(options=options, index=0, description=label,
                                   continuous_update=True,
                                   style={"description_width": "initial"},
                                   layout=widgets.Layout(width=SLIDER_WIDTH))


def _stack(draw: Callable[..., Figure], axes: list[tuple[Sequence[Any], widgets.SelectionSlider]],
           fixed: tuple[Any, ...], dpi: int) -> widgets.Widget:
    """Nested stacks: one level per slider, an image per combination of values at the leaves.

    Each level's stack is jslinked to its own slider, so a combination of slider positions
    selects one leaf image without any Python.
    """
    if not axes:
        return widgets.Image(value=figure_png(draw(*fixed), dpi=dpi), format="png")
    (values, slider), rest = axes[0], axes[1:]
    stack = widgets.Stack([_stack(draw, rest, (*fixed, value), dpi) for value in values],
                          selected_index=0)
    widgets.jslink((slider, "index"), (stack, "selected_index"))
    return stack


def slider_grid(draw: Callable[..., Figure], axes: Mapping[str, Sequence[Any]],
                fmt: Callable[[Any], str] = str, dpi: int = DEFAULT_DPI) -> widgets.VBox:
    """Sliders over a grid of precomputed figures, one slider per axis.

    ``draw`` is called once per combination of values (the product of all axes, so keep the
    axes short) with the values as positional arguments in the order of ``axes``.

    Args:
        draw: Returns a new matplotlib figure for one combination of values; the helper renders
            it to PNG and closes it.
        axes: Slider label to the sequence of values that slider takes.
        fmt: Turns a value into the text the slider shows.
        dpi: Resolution of the frames.

    Returns:
        A box holding the sliders (top) and the nested stacks of images (bottom).
    """
    if not axes or any(len(values) == 0 for values in axes.values()):
        raise ValueError("slider_grid needs at least one axis, and every axis at least one value")
    linked = [(values, _slider(label, values, fmt)) for label, values in axes.items()]
    frames = _stack(draw, linked, (), dpi)
    return widgets.VBox([*(slider for _, slider in linked), frames])


def slider_figure(draw: Callable[[Any], Figure], values: Sequence[Any], label: str = "",
                  fmt: Callable[[Any], str] = str, dpi: int = DEFAULT_DPI,
                  live: LiveRange | None = None) -> widgets.VBox:
    """One slider over precomputed figures, ``draw(value)`` for each of ``values``.

    Args:
        draw: Returns a new matplotlib figure for one value.
        values: The values the slider takes, in slider order.
        label: Text shown left of the slider.
        fmt: Turns a value into the text the slider shows.
        dpi: Resolution of the frames.
        live: If given, a kernel with a browser attached replaces the slider by one over this
            range and draws each value the reader picks; the static page keeps the frames.

    Returns:
        A box holding the slider and a :class:`ipywidgets.Stack` with one image per value.

    Raises:
        ValueError: If ``values`` is empty, or a value lies outside ``live``.
    """
    if live is not None and not all(live.low <= value <= live.high for value in values):
        raise ValueError(f"every value must lie in [{live.low}, {live.high}], got {list(values)}")
    box = slider_grid(draw, {label: values}, fmt=fmt, dpi=dpi)
    if live is not None:
        _go_live_in_a_kernel(box, draw, values, label, dpi, live)
    return box


def _go_live_in_a_kernel(box: widgets.VBox, draw: Callable[[Any], Figure], values: Sequence[Any],
                         label: str, dpi: int, live: LiveRange) -> None:
    """Swap ``box``'s slider and frames for ``live``'s slider and a redrawn image, in a kernel only.

    The probe starts at -1 in Python; the browser's jsdlink sets it to the slider's index (0 or
    more) as soon as the browser creates the link, and that change reaches Python only when a
    frontend is attached to this kernel.
    """
    slider, stack = box.children
    probe = widgets.IntText(value=-1)
    widgets.jsdlink((slider, "index"), (probe, "value"))

    def swap(change: dict[str, Any]) -> None:
        probe.unobserve(swap, names="value")
        position = slider.index
        image = widgets.Image(value=stack.children[position].value, format="png")

        def redraw(moved: dict[str, Any]) -> None:
            image.value = figure_png(draw(moved["new"]), dpi=dpi)

        continuous = live.slider(label, values[position])
        continuous.observe(redraw, names="value")
        box.children = (continuous, image)

    probe.observe(swap, names="value")
