"""Sliders over precomputed figures that work with and without a Python kernel.

A slider in this book must work in three places: a live Jupyter kernel, the rendered HTML book
(where no Python runs) and headless CI. The helpers here therefore draw every frame *once*, in
Python, as a small PNG, and put the frames into an :class:`ipywidgets.Stack` of
:class:`ipywidgets.Image` widgets. The slider's ``index`` is linked to the stack's
``selected_index`` with :func:`ipywidgets.jslink`, a link that lives in the browser, so moving
the slider switches frames in JupyterLab and in the static HTML page alike (the executed
notebook stores the widget state, and the book serves the widget JavaScript itself).

>>> import matplotlib.pyplot as plt
>>> def draw(a: float) -> plt.Figure:
...     fig, ax = plt.subplots()
...     ax.plot([0, 1], [0, a])
...     return fig
>>> box = slider_figure(draw, [0.5, 1.0, 2.0], label="slope")
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

__all__ = ["figure_png", "slider_figure", "slider_grid"]

#: Resolution of the precomputed frames: small, so pages with many frames stay light.
DEFAULT_DPI = 80


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
                                   layout=widgets.Layout(width="min(100%, 32rem)"))


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
                  fmt: Callable[[Any], str] = str, dpi: int = DEFAULT_DPI) -> widgets.VBox:
    """One slider over precomputed figures, ``draw(value)`` for each of ``values``.

    Args:
        draw: Returns a new matplotlib figure for one value.
        values: The values the slider takes, in slider order.
        label: Text shown left of the slider.
        fmt: Turns a value into the text the slider shows.
        dpi: Resolution of the frames.

    Returns:
        A box holding the slider and a :class:`ipywidgets.Stack` with one image per value.
    """
    return slider_grid(draw, {label: values}, fmt=fmt, dpi=dpi)
