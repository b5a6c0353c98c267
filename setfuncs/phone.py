r"""A matplotlib figure re-laid for a phone's column: its panels in one column (or a few, when they
are small pictures), at the phone's width, its text at the same size.

A figure drawn for the book's 7-inch column shows on a phone (a column of about 350 CSS pixels) at
about half its size, so its 11-point text reads as 7 pixels. Scaling cannot help; re-laying can:
:func:`phone_layout` moves every panel of the figure into a grid of :math:`c` columns at the phone's
width :math:`P` (:data:`PHONE_WIDTH`, drawn 1:1 on a phone), where

.. math::
    c = \min\big(n_\text{cols},\ n,\ \max(1, \lfloor P / w_\text{min} \rfloor)\big),

for :math:`n` panels, with :math:`w_\text{min}` the narrowest a panel may be
(:data:`MIN_PLOT_WIDTH`; :data:`MIN_PICTURE_WIDTH` for panels without axes, such as images), and one
column for up to :data:`STACKED` plots, which read best at the full width, and for plots whose y tick
labels are names (longer than :data:`SHORT_LABEL` characters) or with numbers written in them
(:data:`WRITTEN` texts or more, as in a heat map). Each row keeps its panels'
proportions, within :data:`PANEL_HEIGHTS` (a plot at least :data:`MIN_PLOT_HEIGHT` tall); the panels
of a figure that is one column already keep their heights. Titles and
x labels and legends' entries and titles are wrapped to their panel's width, y labels to its height; tick labels hidden only because
a row shared its y axis come back, as each panel now starts a row; a legend takes at most
:data:`LEGEND_COLUMNS` columns (fewer where they would not fit), and the legends placed beside their
panels, or wider than their panel will be, become one legend below the figure; a note written beside
a panel (in axes coordinates right of it, such as a verdict) goes above the panel's right end, and
category names under a panel that would overlap are turned by :data:`TURNED` degrees. A diagram drawn in a single picture is left as it is (its
text is placed for its size), and a variant that still does not fit is not used (:func:`phone_svg`).
The figure is restored afterwards, so the book's own image is unchanged.

:func:`phone_svg` draws that layout as SVG; the book's kernel (the IPython profile in ``ipython/``)
adds it to every figure's output (:func:`register`), and the book's pages show it below a phone's
width (``scripts/phone_figures.py``). A figure the rule cannot re-lay (panels placed by hand, or
nested grids) has no phone variant: :func:`phone_svg` returns None.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.gridspec import GridSpec
from matplotlib.legend import Legend
from matplotlib.offsetbox import VPacker
from matplotlib.text import Text

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["PHONE_MIME", "PHONE_WIDTH", "MIN_PLOT_WIDTH", "STACKED", "SHORT_LABEL", "WRITTEN", "MIN_PICTURE_WIDTH", "PANEL_HEIGHTS",
           "MIN_PLOT_HEIGHT", "ROW_MARGIN", "TITLE_LINE", "AXIS_LABELS", "CHARACTER", "TURNED", "LEGEND_COLUMNS", "LEGEND_ROOM", "FITS", "phone_grid", "phone_layout", "phone_svg", "register"]

#: The key of a figure's phone variant in a notebook output's metadata (see :func:`register`).
PHONE_MIME = "image/vnd.setfuncs.phone+svg+xml"
#: The phone variant's width in inches (336 CSS pixels), shown at full size in a phone's column of 340 to 360 px.
PHONE_WIDTH = 3.5
#: The narrowest a panel with axes (tick labels, a y label) may be, in inches.
MIN_PLOT_WIDTH = 1.7
#: Up to this many panels with axes go in one column, at the phone's full width.
STACKED = 3
#: Plots with a y tick label longer than this (names, not numbers) go in one column.
SHORT_LABEL = 6
#: Plots with this many texts written in a panel (a heat map's numbers) go in one column.
WRITTEN = 4
#: The narrowest a panel without axes (a picture, such as a canvas or a point cloud) may be, in inches.
MIN_PICTURE_WIDTH = 1.1
#: The least and most height of a re-laid panel, in inches (a plot at least MIN_PLOT_HEIGHT).
PANEL_HEIGHTS = (1.0, 2.8)
#: The least height of a re-laid plot (a panel with axes to read), in inches.
MIN_PLOT_HEIGHT = 1.8
#: Height added per row of panels for what lies outside them (tick labels, axis label, title), in
#: inches, for plots (True) and for pictures (False).
ROW_MARGIN = {True: 0.55, False: 0.3}
#: Height added per line of the figure's title, in inches.
TITLE_LINE = 0.3
#: The angle, in degrees, at which category names under a panel are turned where they would overlap.
TURNED = 30
#: About how wide a character is, in ems (the text-width estimates of the wrapping and the legends).
CHARACTER = 0.6
#: About how much of a plot's width its y axis (tick labels and label) takes, in inches.
AXIS_LABELS = 0.7
#: A legend takes at most this many columns on a phone.
LEGEND_COLUMNS = 2
#: A legend's columns, as estimated, take at most this share of the width they have (the estimate is rough).
LEGEND_ROOM = 0.9
#: A phone variant drawn wider than this many times the phone's width is not used.
FITS = 1.12


def _panels(fig: Figure) -> list[Axes] | None:
    """The figure's panels (its axes on the figure's one grid, in reading order), or None where a
    panel is placed by hand, on a nested grid, or where a layout engine other than constrained
    layout would have to place colorbars."""
    panels = [ax for ax in fig.axes if ax.get_visible() and not hasattr(ax, "_colorbar")]
    if not panels or any(ax.get_subplotspec() is None for ax in panels):
        return None
    grids = {id(ax.get_subplotspec().get_gridspec()) for ax in panels}
    if len(grids) != 1 or not isinstance(panels[0].get_subplotspec().get_gridspec(), GridSpec):
        return None
    colorbars = [ax for ax in fig.axes if hasattr(ax, "_colorbar")]
    if colorbars and fig.get_layout_engine().__class__.__name__ != "ConstrainedLayoutEngine":
        return None
    return sorted(panels, key=lambda ax: (ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start))


def phone_grid(fig: Figure, width: float = PHONE_WIDTH) -> tuple[int, list[float]] | None:
    """The phone layout of ``fig``: ``(columns, row heights in inches)``, or None (where its panels are placed by hand or on nested grids)."""
    panels = _panels(fig)
    if panels is None:
        return None
    cols = panels[0].get_subplotspec().get_gridspec().get_geometry()[1]
    fig_w, fig_h = fig.get_size_inches()
    plots = any(_is_plot(ax) for ax in panels)
    if len(panels) == 1 and not plots:
        return None  # a diagram drawn in one picture: its text is placed for its size, and would overlap
    narrowest = MIN_PLOT_WIDTH if plots else MIN_PICTURE_WIDTH
    named = any(len(label.get_text()) > SHORT_LABEL for ax in panels for label in ax.get_yticklabels())
    written = any(len(ax.texts) >= WRITTEN for ax in panels)
    stacked = plots and (len(panels) <= STACKED or named or written)
    columns = 1 if stacked else min(cols, len(panels), max(1, math.floor(width / narrowest)))
    heights = []
    if cols == 1:  # already a column: each panel keeps its height
        return 1, [min(ax.get_position().height * fig_h, PANEL_HEIGHTS[1]) for ax in panels]
    for start in range(0, len(panels), columns):
        # each panel keeps the proportions it was drawn with (its box after the figure's last draw)
        row = [ax.get_position().height * fig_h / (ax.get_position().width * fig_w) * width / columns
               for ax in panels[start:start + columns]]
        least = MIN_PLOT_HEIGHT if plots else PANEL_HEIGHTS[0]
        heights.append(min(max(max(row), least), PANEL_HEIGHTS[1]))
    return columns, heights


def _is_plot(ax: Axes) -> bool:
    """Whether ``ax`` has axes to read (tick labels), unlike a picture: a canvas, a point cloud."""
    return ax.axison and bool(len(ax.get_xticks()) or len(ax.get_yticks()))


def _legend_width(legend: Legend, columns: int) -> float:
    """About how wide ``legend`` is in ``columns`` columns, in inches: per column its longest label
    (a character about 0.6 em) and the handle and padding, about 3 em."""
    labels = [text.get_text() for text in legend.get_texts()]
    em = legend.get_texts()[0].get_fontsize() / 72 if labels else 0
    rows = math.ceil(len(labels) / columns) if labels else 1
    return sum((max((_shown_length(label) for label in labels[k * rows:(k + 1) * rows]), default=0) * CHARACTER + 3) * em
               for k in range(columns))


def _repack(legend: Legend, columns: int) -> None:
    """Lay ``legend``'s entries out in ``columns`` columns, filled column by column as matplotlib
    fills them (its packed entries rearranged; :func:`phone_layout` puts the old columns back)."""
    box = legend._legend_handle_box
    old = box.get_children()
    items = [item for column in old for item in column.get_children()]
    rows = math.ceil(len(items) / columns)
    box._children = [VPacker(pad=0, sep=old[0].sep, align=old[0].align, children=items[k * rows:(k + 1) * rows])
                     for k in range(columns) if items[k * rows:(k + 1) * rows]]


def _names_width(labels: list[Text]) -> float:
    """About how wide tick ``labels`` are side by side, in inches (a character about 0.6 em, a space
    between them); 0 for none."""
    return sum((_shown_length(label.get_text()) + 1) * CHARACTER * label.get_fontsize() / 72 for label in labels)


def _outside(legend: Legend) -> bool:
    """Whether ``legend`` is anchored outside its axes (``bbox_to_anchor`` beyond the axes' box)."""
    if legend._bbox_to_anchor is None:
        return False
    box = legend.get_bbox_to_anchor().transformed(legend.axes.transAxes.inverted())
    return box.x0 >= 1 or box.x1 <= 0 or box.y0 >= 1 or box.y1 <= 0


def _shown_length(word: str) -> int:
    """About how many characters ``word`` shows: a TeX command (``\\Sigma``) as one, ``$`` and braces as none."""
    return len(re.sub(r"[${}^_]", "", re.sub(r"\\[a-zA-Z]+", "x", word)))


def _wrap(text: str, inches: float, points: float) -> str:
    """``text`` wrapped at spaces to lines of about ``inches`` at ``points`` (a character is about 0.6
    em wide); mathematics (``$...$``) is never broken."""
    limit = max(8, int(inches * 72 / (CHARACTER * points)))
    wrapped = []
    for line in text.split("\n"):
        words, current = re.findall(r"\$[^$]*\$\S*|\S+", line), ""
        for word in words:
            if current and _shown_length(current) + 1 + _shown_length(word) > limit:
                wrapped.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        wrapped.append(current)
    return "\n".join(wrapped)


@contextmanager
def phone_layout(fig: Figure, width: float = PHONE_WIDTH) -> Iterator[bool]:
    """Within the block, ``fig`` laid out for a phone (module docstring); yields False (and changes
    nothing) where it cannot be re-laid. Its size, grid positions, texts, tick labels and legends are
    restored on leaving."""
    layout = phone_grid(fig, width)
    if layout is None:
        yield False
        return
    panels = _panels(fig)
    columns, heights = layout
    size, specs, engine = fig.get_size_inches().copy(), [ax.get_subplotspec() for ax in panels], fig.get_layout_engine()
    panel_width = max(width / columns - AXIS_LABELS, 1.0)      # about what is left of a panel for its box
    # notes written beside a panel (axes coordinates, x >= 1), e.g. a verdict: they go above its right end
    notes = [(ax, text, text.get_position(), text.get_horizontalalignment(), text.get_verticalalignment())
             for ax in panels for text in ax.texts
             if text.get_transform() == ax.transAxes and text.get_position()[0] >= 1]
    noted = {id(ax): max(_shown_length(text.get_text()) * CHARACTER * text.get_fontsize() / 72
                         for a, text, *_ in notes if a is ax) for ax, *_ in notes}
    texts = [(panel_width - (noted.get(id(ax), 0) if text is ax._left_title else 0), text, text.get_text())
             for ax in panels for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label) if text.get_text()]
    texts += [(heights[i // columns], ax.yaxis.label, ax.yaxis.label.get_text()) for i, ax in enumerate(panels)
              if ax.yaxis.label.get_text()]
    if fig._suptitle is not None:
        texts.append((width, fig._suptitle, fig._suptitle.get_text()))
    labels = [(ax, ax.yaxis.get_tick_params(which="major").get("labelleft", True)) for ax in panels]
    legends = [(legend, list(legend._legend_handle_box.get_children()), ax)
               for ax, legend in [*((None, legend) for legend in fig.legends), *((ax, ax.get_legend()) for ax in panels)]
               if legend]
    # legend entries wrapped to the width of their figure or panel, less the handle and padding (0.8 in)
    texts += [((width if ax is None else panel_width) - 0.8, text, text.get_text())
              for legend, _, ax in legends for text in [*legend.get_texts(), legend.get_title()] if text.get_text()]
    # legends beside their panel, or wider than it will be (its share of the width less its axis labels)
    beside = [legend for legend, _, ax in legends if ax is not None
              and (_outside(legend) or _legend_width(legend, 1) > width / columns - AXIS_LABELS)]
    margin = ROW_MARGIN[any(_is_plot(ax) for ax in panels)]
    # category names under a panel that would run into each other are turned
    crowded = [(ax, ax.xaxis.get_tick_params(which="major").get("rotation", 0),
                [label.get_horizontalalignment() for label in ax.get_xticklabels()]) for ax in panels
               if _names_width(ax.get_xticklabels()) > panel_width]
    below = None
    try:
        if engine.__class__.__name__ != "ConstrainedLayoutEngine":
            fig.set_layout_engine("constrained")
        grid = GridSpec(len(heights), columns, figure=fig, height_ratios=heights)
        for i, ax in enumerate(panels):
            ax.set_subplotspec(grid[i // columns, i % columns])
            if len(ax.get_shared_y_axes().get_siblings(ax)) > 1 and i % columns == 0:
                ax.yaxis.set_tick_params(which="both", labelleft=True)
        for legend, packed, ax in legends:
            room = width / (1 if ax is None else columns)
            _repack(legend, next((n for n in range(min(len(packed), LEGEND_COLUMNS), 1, -1)
                                  if _legend_width(legend, n) <= LEGEND_ROOM * room), 1))
        below = _legend_below(fig, beside, width)
        for ax, _, _ in crowded:
            ax.xaxis.set_tick_params(which="major", labelrotation=TURNED)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right")
        for _, text, *_ in notes:
            text.set_position((1.0, 1.0))
            text.set_horizontalalignment("right")
            text.set_verticalalignment("bottom")
        for room, text, original in texts:
            text.set_text(_wrap(original, room, text.get_fontsize()))
        # the lines the wrapping added: per row its panels' titles' and x labels', and the figure's title's
        added = sum(max(text.get_text().count("\n") for ax in panels[row * columns:(row + 1) * columns]
                        for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label))
                    for row in range(len(heights)))
        lines = added + (fig._suptitle.get_text().count("\n") + 1 if fig._suptitle is not None else 0)
        rows = sum(heights) + margin * len(heights) + TITLE_LINE * lines
        fig.set_size_inches(width, rows + (0 if below is None else _legend_height(below)))
        yield True
    finally:
        if below is not None:
            below.remove()
        for legend in beside:
            legend.set_visible(True)
        for ax, rotation, alignments in crowded:
            ax.xaxis.set_tick_params(which="major", labelrotation=rotation)
            for label, alignment in zip(ax.get_xticklabels(), alignments):
                label.set_horizontalalignment(alignment)
        for _, text, position, horizontal, vertical in notes:
            text.set_position(position)
            text.set_horizontalalignment(horizontal)
            text.set_verticalalignment(vertical)
        fig.set_size_inches(size)
        for ax, spec in zip(panels, specs):
            ax.set_subplotspec(spec)
        for ax, shown in labels:
            ax.yaxis.set_tick_params(which="both", labelleft=shown)
        for _, text, original in texts:
            text.set_text(original)
        for legend, packed, _ in legends:
            legend._legend_handle_box._children = packed
        fig.set_layout_engine(engine)


def _legend_below(fig: Figure, beside: list[Legend], width: float) -> Legend | None:
    """The legends placed beside their panels (``beside``) hidden and their entries, each label once, in
    one legend below the figure (constrained layout's ``"outside lower center"``) in as many columns as
    fit ``width``; None where there are none."""
    if not beside:
        return None
    entries = {}
    for legend in beside:
        legend.set_visible(False)
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            entries.setdefault(text.get_text(), handle)
    titles = {legend.get_title().get_text() for legend in beside} - {""}
    below = fig.legend(list(entries.values()), list(entries), loc="outside lower center",
                       title=titles.pop() if len(titles) == 1 else None)
    columns = next((n for n in range(min(len(entries), LEGEND_COLUMNS), 1, -1) if _legend_width(below, n) <= LEGEND_ROOM * width), 1)
    _repack(below, columns)
    return below


def _legend_height(legend: Legend) -> float:
    """About how tall ``legend`` is, in inches: a line (1.6 em) per row and one for its title."""
    rows = max(len(column.get_children()) for column in legend._legend_handle_box.get_children())
    lines = rows + (1 if legend.get_title().get_text() else 0)
    return lines * 1.6 * legend.get_texts()[0].get_fontsize() / 72 + 0.2


def phone_svg(fig: Figure, width: float = PHONE_WIDTH, **savefig: object) -> str | None:
    """``fig`` laid out for a phone (:func:`phone_layout`) as SVG text; ``savefig`` as for
    :meth:`Figure.savefig`. None where it is no wider than ``width`` already, where it cannot be
    re-laid, or where the result does not fit: the drawing wider than :data:`FITS` times ``width``
    (a legend or label placed outside its panel at a fixed size), or a panel squeezed below half
    its share of the width."""
    if fig.get_size_inches()[0] <= width:
        return None
    with phone_layout(fig, width) as laid:
        if not laid:
            return None
        buffer = io.StringIO()
        with warnings.catch_warnings():
            # a layout that collapses a panel is judged below, and then not used
            warnings.filterwarnings("ignore", "constrained_layout not applied", UserWarning)
            fig.savefig(buffer, format="svg", **savefig)
        columns = phone_grid(fig, width)[0]
        squeezed = any(ax.get_position().width * width < 0.5 * width / columns for ax in _panels(fig))
    svg = buffer.getvalue()
    drawn = float(re.search(r'<svg[^>]*?width="([0-9.]+)pt"', svg).group(1)) / 72
    return None if squeezed or drawn > FITS * width else svg


def register(shell: InteractiveShell) -> None:
    """Add to the output of every matplotlib figure ``shell`` displays its phone variant, where it has
    one (:func:`phone_svg`, drawn like the book's SVG, ``bbox_inches="tight"``), as the output's
    metadata ``{PHONE_MIME: {"svg": ...}}``: metadata, not data, so that a notebook viewer or MyST-NB
    never tries to show it.
    The book's kernel calls it at start-up (``ipython/profile_default/ipython_kernel_config.py``)."""
    from IPython.core.formatters import BaseFormatter
    from traitlets import Unicode

    class PhoneFormatter(BaseFormatter):
        """Figures only, by type: matplotlib's inline backend drops every formatter's printer for
        ``Figure`` when it starts, so a registered printer would not survive."""

        format_type = Unicode(PHONE_MIME)

        def __call__(self, obj: object) -> tuple[None, dict[str, str]] | None:
            svg = phone_svg(obj, bbox_inches="tight") if self.enabled and isinstance(obj, Figure) else None
            return None if svg is None else (None, {"svg": svg})

    shell.display_formatter.formatters[PHONE_MIME] = PhoneFormatter(parent=shell.display_formatter)
