"""Chapter 10's figures: clouds in 3-D, a cloud subsampled, preprocessing, accuracy against the
population size (live models; the sweep above the paper's Table 2), the sweep's learning curves and
confusion matrices.

matplotlib is imported inside each function, so importing the module needs only numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from .budget import TABLE_SIZES
from .sweep import COLUMNS, LME_COLUMNS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["scatter3d", "plot_clouds", "plot_preprocessing", "draw_accuracy_by_size",
           "column_style", "plot_learning_curves", "plot_against_paper", "plot_confusions"]


def scatter3d(ax: Axes, cloud: np.ndarray, size: float = 1.0, color: str = "tab:blue") -> None:
    """A cloud ``[N, 3]`` as a 3-D scatter on ``ax`` (a 3-D axes) with true proportions and no ticks.
    The points are a raster inside the SVG (at the saved figure's dpi, 200 in the book: sharp at twice
    the size the book shows), the axes and text vectors: as 12,000 vector dots, chapter 10's clouds
    figure took the browser's main thread about 0.4 s to draw, and its explorable waited for it."""
    ax.scatter(*cloud.T, s=size, color=color, depthshade=False, linewidths=0, rasterized=True)
    ax.set_box_aspect(np.ptp(cloud, axis=0) + 1e-3)
    ax.set(xticks=[], yticks=[], zticks=[])
    ax.view_init(elev=25, azim=-60)


def plot_clouds(clouds: np.ndarray, labels: Sequence[int], names: Sequence[str], columns: int = 4) -> Figure:
    """Every cloud of ``clouds`` ``[B, N, 3]`` as a :func:`scatter3d` panel titled with its class
    name, ``columns`` panels to a row, the rows filling the book's 7-inch column."""
    import matplotlib.pyplot as plt

    rows = -(-len(clouds) // columns)
    side = 7.0 / columns
    fig = plt.figure(figsize=(7.0, 0.97 * side * rows), layout="constrained")
    for k, (cloud, label) in enumerate(zip(clouds, labels)):
        ax = fig.add_subplot(rows, columns, k + 1, projection="3d")
        scatter3d(ax, cloud)
        ax.set_title(names[label], fontsize="medium")
    return fig


def plot_preprocessing(stages: Sequence[tuple[str, Sequence[np.ndarray]]], title: str) -> Figure:
    """One column per stage ``(name, clouds)``, its clouds (one colour each) from above (x–y, top
    row) and from the side (x–z, bottom row); axes shared within a column. The figure is 7 inches
    wide, the book's column: a long stage name wraps onto two lines, and the title wraps too."""
    import textwrap

    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    wrap = max(14, int(72 / len(stages)))                 # characters of a column title's line at 10 pt
    fig, axes = plt.subplots(2, len(stages), figsize=(7.0, 5.6), layout="constrained", sharex="col", sharey="col",
                             squeeze=False)
    for column, (name, clouds) in enumerate(stages):
        for row, (i, j, view) in enumerate(((0, 1, "x–y (from above)"), (0, 2, "x–z (from the side)"))):
            ax = axes[row, column]
            for k, cloud in enumerate(clouds):
                # opaque: the raster of translucent dots was a third larger, gzipped (see scatter3d)
                ax.scatter(cloud[:, i], cloud[:, j], s=1.5, color=f"C{k}", rasterized=True)
            ax.set(aspect="equal")
            ax.set_title(f"{textwrap.fill(name, wrap)}\n{view}" if row == 0 else view, fontsize="medium")
            ax.xaxis.set_major_locator(MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]))    # few ticks, at 10 pt
            ax.yaxis.set_major_locator(MaxNLocator(5, steps=[1, 2, 2.5, 5, 10]))
    fig.suptitle(textwrap.fill(title, 90), fontsize="medium")
    return fig


def draw_accuracy_by_size(ax: Axes, accuracy: Mapping[str, Mapping[str, float]], sizes: Sequence[int],
                          classes: int, training_size: int) -> None:
    """Test accuracy against the population size (log axis) of every model of ``accuracy`` (label ->
    :func:`~setfuncs.experiments.pointcloud.accuracy_by_population_size`), with chance ``1 / classes``
    dotted and the training size dashed."""
    for label, by_size in accuracy.items():
        ax.plot(sizes, [by_size[str(n)] for n in sizes], "o-", label=label)
    ax.axhline(1 / classes, color="gray", ls=":", label=f"chance (1/{classes})")
    ax.axvline(training_size, color="gray", ls="--", lw=1, label=f"training size {training_size}")
    ax.set(xscale="log", xticks=sizes, xticklabels=[str(n) for n in sizes], ylim=(0, 1),
           xlabel="test population size n", ylabel="test accuracy", title="accuracy against population size")
    ax.minorticks_off()
    ax.legend(fontsize="medium")


def column_style(spec: str) -> dict:
    """The line style of a column in every figure of the sweep: solid for a ``max`` equivariant layer
    and dashed otherwise; Table 2's ten columns each in one of matplotlib's ten colours (in the order
    of ``COLUMNS``) with round markers, the log-mean-exp columns in black with squares (an eleventh
    colour of the cycle would repeat the first)."""
    k = COLUMNS.index(spec)
    table2 = k < len(COLUMNS) - len(LME_COLUMNS)
    return dict(color=f"C{k}" if table2 else "black", ls="-" if spec.startswith("max/") else "--",
                marker="o" if table2 else "s", ms=3.5)


def plot_learning_curves(results: dict, title: str) -> Figure:
    """The sweep's learning curves by column: the median training cross-entropy over each column's
    trained runs with its interquartile band (top, log scale, lines without markers), and the median
    test accuracy at 1,000 particles at the checkpoints (bottom), in :func:`column_style`
    (:mod:`~setfuncs.experiments.convergence`), one panel above the other in the book's 7-inch
    column. One legend below both panels names the lines of both (inside a panel it would hide the
    columns whose accuracy stays low)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    from ..convergence import checkpoint_curves, loss_curves, plot_checkpoint_curves, plot_loss_curves

    styles = {spec: column_style(spec) for spec in COLUMNS}
    plain = {spec: {k: v for k, v in style.items() if k in ("color", "ls")} for spec, style in styles.items()}
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.85, 8.4), layout="constrained")
    plot_loss_curves(top, loss_curves(results, "spec"), quantity="training cross-entropy", styles=plain)
    plot_checkpoint_curves(bottom, checkpoint_curves(results, "spec"), f"test accuracy, n = {TABLE_SIZES[0]:,}",
                           styles=styles)
    top.set_title(title, fontsize="medium")
    for ax in (top, bottom):                                   # "... (median, quartiles over runs)" on a line of its own
        ax.set_ylabel(ax.get_ylabel().replace(" (median", "\n(median"))
    # plain numbers ("0.5", "2") at 10 pt rather than "5 × 10⁻¹" with 7-point superscripts; minor ticks
    # labelled at 2, 3 and 5 times a power of ten only
    top.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    top.yaxis.set_minor_formatter(FuncFormatter(
        lambda value, _: f"{value:g}" if round(value / 10 ** np.floor(np.log10(value)), 6) in (2, 3, 5) else ""))
    top.get_legend().remove()
    bottom.get_legend().remove()
    fig.legend(*bottom.get_legend_handles_labels(), fontsize="medium", ncols=3, loc="outside lower center")
    return fig


def plot_against_paper(curves: Sequence[dict], paper: Mapping[str, Mapping[int, float]], results: dict,
                       title: str) -> Figure:
    """Mean accuracy against the population size of every column: ours (top, ``curves``:
    :func:`~setfuncs.experiments.pointcloud.accuracy_curves` of ``results``, titled ``title``) and
    the paper's Table 2 on ModelNet40 (bottom, ``paper``: :func:`~setfuncs.experiments.pointcloud.paper_rows`),
    one above the other on the same axes in the book's 7-inch column.
    A column keeps its colour and style in both: solid for a ``max`` equivariant layer, squares for
    the log-mean-exp columns. Chance is dotted and the training size dashed. One legend below names
    every column drawn in either panel: a mean that leaves runs out says over how many of the column's
    runs it is (:func:`~setfuncs.experiments.pointcloud.table.mean_note`), and a column drawn only for
    the paper, none of whose runs has an accuracy, says so."""
    import matplotlib.pyplot as plt

    from .table import mean_note

    sizes = results["evaluation"]["sizes"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.85, 7.8), layout="constrained", sharex=True, sharey=True)
    legend = []
    for spec in COLUMNS:
        style = column_style(spec)
        curve = next((c for c in curves if c["spec"] == spec), None)
        if curve is not None:
            note = mean_note(curve)
            line, = top.plot(curve["sizes"], curve["mean"], label=f"{spec} ({note})" if note else spec, **style)
            legend.append(line)
        if spec in paper:
            line, = bottom.plot(TABLE_SIZES, [paper[spec][n] for n in TABLE_SIZES], label=spec, **style)
            if curve is None:
                line.set_label(f"{spec} (paper only: no run of ours has an accuracy)")
                legend.append(line)
    panels = ((top, 1 / results["data"]["classes"], results["budget_parameters"]["points"], title),
              (bottom, 1 / 40, 1000, "paper: ModelNet40 (Table 2)"))
    for ax, chance, trained, name in panels:
        ax.axhline(chance, color="gray", ls=":", lw=1)
        ax.axvline(trained, color="gray", ls="--", lw=1)
        ax.set(xscale="log", xlim=(8, 2500), ylim=(0, 1), xlabel="test population size n", ylabel="test accuracy")
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.xaxis.set_tick_params(labelbottom=True)             # both panels keep their sizes (shared axes hide them)
        ax.minorticks_off()
        ax.set_title(name, fontsize="medium")
    labels = [line.get_label() for line in legend]
    fig.legend(legend, labels, fontsize="medium",                     # long labels: fewer columns, within 7 inches
               ncols=4 if all(label in COLUMNS for label in labels) else 3 if max(map(len, labels)) <= 36 else 2,
               loc="outside lower center",
               title="grey dotted: chance; grey dashed: training size", title_fontsize="medium")
    return fig


def plot_confusions(matrices: Mapping[int, np.ndarray], names: Sequence[str], title: str) -> Figure:
    """One panel per population size of ``matrices`` (size -> confusion matrix as fractions of each
    true class, :func:`~setfuncs.experiments.pointcloud.confusion.confusion_at_size`), titled with
    the mean of its diagonal, on one colour scale from 0 to 1. The panels sit side by side in the
    book's 7-inch column and share the rows' class names, which only the first panel prints; the
    colour bar lies below them."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(matrices), figsize=(6.85, 5.15), layout="constrained", sharey=True,
                             squeeze=False)
    axes = axes[0]
    for k, (ax, (n, matrix)) in enumerate(zip(axes, matrices.items())):
        image = ax.imshow(matrix, vmin=0, vmax=1, cmap="Blues")
        ax.set(xticks=range(len(names)), yticks=range(len(names)), xlabel="predicted")
        ax.set_title(f"n = {n}: accuracy {np.mean(np.diag(matrix)):.0%}", fontsize="medium")
        ax.set_xticklabels(names, rotation=90)
        if k == 0:
            ax.set_ylabel("true class")
            ax.set_yticklabels(names)
        else:
            ax.tick_params(labelleft=False)
    fig.colorbar(image, ax=axes, location="bottom", shrink=0.6, aspect=30, label="fraction of the true class")
    fig.suptitle(title, fontsize="medium")
    return fig
