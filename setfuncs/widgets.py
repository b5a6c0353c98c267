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
no browser, so the saved widget state, and with it the static book, keeps the frames. The live
slider runs the way the static one does (where the frames go from large to small values, so does
it), and every value it draws is rounded to the three significant digits its readout shows, so a
figure's title reads 0.525, not 0.524807 (:func:`significant`).

Where no widget can show, in the PDF book, the box displays as a still frame instead: the figure
at the values the sliders start at, with a caption that says which values those are
(:class:`SliderBox`).

>>> import matplotlib.pyplot as plt
>>> def draw(a: float) -> plt.Figure:
...     fig, ax = plt.subplots()
...     ax.plot([0, 1], [0, a])
...     return fig
>>> box = slider_figure(draw, [0.5, 1.0, 2.0], label="slope")
>>> box = slider_figure(draw, [0.5, 1.0, 2.0], label="slope", live=LiveRange(0.1, 10, log=True))
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

__all__ = ["LiveRange", "SliderBox", "figure_png", "significant", "slider_figure", "slider_grid"]

#: Resolution of the precomputed frames: small, so pages with many frames stay light.
DEFAULT_DPI = 80
#: Resolution of the one still frame each box carries for print (the PDF book).
STILL_DPI = 150
#: Width of every slider: the full width on a phone, at most 32rem elsewhere.
SLIDER_WIDTH = "min(100%, 32rem)"
#: Significant digits of a live slider's values: what its readout shows and what it draws.
LIVE_DIGITS = 3


def significant(value: float, digits: int = LIVE_DIGITS) -> float:
    """``value`` rounded to ``digits`` significant digits (0.524807 -> 0.525, 52.4807 -> 52.5)."""
    return float(f"{value:.{digits}g}")


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

    def grid(self, include: Sequence[float] = ()) -> list[float]:
        """The slider's values from ``low`` to ``high``, each :func:`significant`, with ``include``.

        ``steps`` equal steps (of the logarithm, for a logarithmic range), rounded, without
        repeats; the values in ``include`` (a static slider's frames) are added as they are.
        """
        if self.log:
            low, high = math.log10(self.low), math.log10(self.high)
            points = [10 ** (low + (high - low) * k / self.steps) for k in range(self.steps + 1)]
        else:
            points = [self.low + (self.high - self.low) * k / self.steps for k in range(self.steps + 1)]
        rounded = {min(max(significant(point), self.low), self.high) for point in points}
        return sorted(rounded | {float(value) for value in include})

    def slider(self, label: str, value: float) -> widgets.FloatSlider | widgets.FloatLogSlider:
        """A slider over this range that starts at ``value``, from ``low`` (left) to ``high``."""
        common = dict(value=value, description=label, readout_format=f".{LIVE_DIGITS}g",
                      continuous_update=True, style={"description_width": "initial"},
                      layout=widgets.Layout(width=SLIDER_WIDTH))
        if self.log:  # FloatLogSlider's min, max and step are base-10 exponents
            low, high = math.log10(self.low), math.log10(self.high)
            return widgets.FloatLogSlider(min=low, max=high, step=(high - low) / self.steps,
                                          **common)
        return widgets.FloatSlider(min=self.low, max=self.high,
                                   step=(self.high - self.low) / self.steps, **common)

    def descending_slider(self, label: str, value: float, include: Sequence[float],
                          fmt: Callable[[Any], str] = str) -> widgets.SelectionSlider:
        """A slider over :meth:`grid` that runs from ``high`` (left) to ``low``, at ``value``.

        ipywidgets' numeric sliders only grow to the right; a static slider whose frames go from
        large to small values (``[100, 30, 10, ...]``) gets this one, with the same ``fmt``.
        """
        options: dict[str, float] = {}
        for point in reversed(self.grid(include)):
            options.setdefault(fmt(point), point)
        slider = widgets.SelectionSlider(options=list(options.items()), description=label,
                                         continuous_update=True,
                                         style={"description_width": "initial"},
                                         layout=widgets.Layout(width=SLIDER_WIDTH))
        slider.value = min(options.values(), key=lambda point: abs(point - value))
        return slider


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


class SliderBox(widgets.VBox):
    """The box of sliders and frames that :func:`slider_grid` and :func:`slider_figure` return.

    A :class:`ipywidgets.VBox` whose display also carries a still frame: next to the widget
    view, a PNG of the figure at the values the sliders start at and, as its plain text, a
    caption that says which values those are. JupyterLab and the HTML book show the widget;
    the PDF book prints the PNG (myst-nb prefers ``image/png`` for LaTeX) with the caption under
    it (``scripts/pdf_book.py``), and a frontend without widgets shows the PNG.

    Attributes:
        still_png: The still frame's PNG bytes.
        still_caption: What the still frame shows.
    """

    def __init__(self, children: Sequence[widgets.Widget], still_png: bytes,
                 still_caption: str) -> None:
        super().__init__(children)
        self.still_png = still_png
        self.still_caption = still_caption

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The widget view, the still frame (``image/png``) and its caption (``text/plain``)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        bundle["image/png"] = base64.b64encode(self.still_png).decode("ascii")
        bundle["text/plain"] = self.still_caption
        return bundle


def _still_caption(axes: Mapping[str, Sequence[Any]], fmt: Callable[[Any], str]) -> str:
    """The caption of the still frame: the first value of every axis, by its slider's label."""
    shown = ", ".join(f"{label} = {fmt(values[0])}" if label else fmt(values[0])
                      for label, values in axes.items())
    others = ("the slider in the online book shows" if len(axes) == 1
              else "the sliders in the online book show")
    return f"Still frame at {shown} ({others} the others)."


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
                fmt: Callable[[Any], str] = str, dpi: int = DEFAULT_DPI) -> SliderBox:
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
        A box holding the sliders (top) and the nested stacks of images (bottom); for print it
        carries the figure at every axis's first value, drawn once more at ``STILL_DPI``.
    """
    if not axes or any(len(values) == 0 for values in axes.values()):
        raise ValueError("slider_grid needs at least one axis, and every axis at least one value")
    linked = [(values, _slider(label, values, fmt)) for label, values in axes.items()]
    frames = _stack(draw, linked, (), dpi)
    still = figure_png(draw(*(values[0] for values in axes.values())), dpi=STILL_DPI)
    return SliderBox([*(slider for _, slider in linked), frames], still, _still_caption(axes, fmt))


def slider_figure(draw: Callable[[Any], Figure], values: Sequence[Any], label: str = "",
                  fmt: Callable[[Any], str] = str, dpi: int = DEFAULT_DPI,
                  live: LiveRange | None = None) -> SliderBox:
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
        A box holding the slider and a :class:`ipywidgets.Stack` with one image per value; for
        print it carries the figure at the first value (:class:`SliderBox`).

    Raises:
        ValueError: If ``values`` is empty, or a value lies outside ``live``.
    """
    if live is not None and not all(live.low <= value <= live.high for value in values):
        raise ValueError(f"every value must lie in [{live.low}, {live.high}], got {list(values)}")
    box = slider_grid(draw, {label: values}, fmt=fmt, dpi=dpi)
    if live is not None:
        _go_live_in_a_kernel(box, draw, values, label, fmt, dpi, live)
    return box


def _go_live_in_a_kernel(box: widgets.VBox, draw: Callable[[Any], Figure], values: Sequence[Any],
                         label: str, fmt: Callable[[Any], str], dpi: int, live: LiveRange) -> None:
    """Swap ``box``'s slider and frames for ``live``'s slider and a redrawn image, in a kernel only.

    The probe starts at -1 in Python; the browser's jsdlink sets it to the slider's index (0 or
    more) as soon as the browser creates the link, and that change reaches Python only when a
    frontend is attached to this kernel. The live slider runs the static one's way: a numeric
    slider (low on the left) where the frames' values grow, :meth:`LiveRange.descending_slider`
    where they shrink. Each value is drawn :func:`significant`.
    """
    slider, stack = box.children
    probe = widgets.IntText(value=-1)
    widgets.jsdlink((slider, "index"), (probe, "value"))

    def swap(change: dict[str, Any]) -> None:
        probe.unobserve(swap, names="value")
        position = slider.index
        image = widgets.Image(value=stack.children[position].value, format="png")

        def redraw(moved: dict[str, Any]) -> None:
            image.value = figure_png(draw(significant(moved["new"])), dpi=dpi)

        if len(values) > 1 and values[0] > values[-1]:
            continuous = live.descending_slider(label, values[position], values, fmt)
        else:
            continuous = live.slider(label, values[position])
        continuous.observe(redraw, names="value")
        box.children = (continuous, image)

    probe.observe(swap, names="value")
