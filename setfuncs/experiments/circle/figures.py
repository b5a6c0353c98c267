"""Chapter 8's figures of the sweep: median test MSE of every configuration as heat maps, and the best
runs' test MSE against the population size.

matplotlib is imported inside each function, so importing the module needs only numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from ..sweeps import AGGREGATIONS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_median_grids", "plot_by_population_size"]


def plot_median_grids(grids: Mapping[str, np.ndarray]) -> Figure:
    """One heat map per setting of :func:`~setfuncs.experiments.circle.medians.median_grids` (rows:
    equivariant aggregation, columns: final), two to a row (the four settings on a 2 × 2 grid), on one
    shared log10 colour scale over all finite cells, its colour bar on the right. Each cell prints
    its value; an infinite one (at least half the seeds diverged or collapsed) prints ∞ and a NaN one
    stays blank."""
    import matplotlib.pyplot as plt

    columns = min(2, len(grids))
    rows = -(-len(grids) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(6.8, 2.85 * rows), layout="constrained",
                             sharex=True, sharey=True, squeeze=False)
    for ax in axes.flat[len(grids):]:
        fig.delaxes(ax)
    finite = np.concatenate([grid[np.isfinite(grid)] for grid in grids.values()])
    low, high = finite.min(), finite.max()
    for k, (ax, (setting, grid)) in enumerate(zip(axes.flat, grids.items())):
        image = ax.imshow(np.log10(np.where(np.isfinite(grid), grid, np.nan)), vmin=np.log10(low),
                          vmax=np.log10(high), cmap="viridis_r")
        for (i, j), value in np.ndenumerate(grid):
            if np.isinf(value):
                ax.text(j, i, "∞", ha="center", va="center", fontsize=11)
            elif np.isfinite(value):
                ax.text(j, i, f"{value:.3f}", ha="center", va="center", fontsize="medium",
                        color="white" if np.log10(value) > (np.log10(low) + np.log10(high)) / 2 else "black")
        ax.set(title=setting, xticks=range(len(AGGREGATIONS)), yticks=range(len(AGGREGATIONS)),
               xticklabels=AGGREGATIONS, yticklabels=AGGREGATIONS)
        if k % columns == 0:
            ax.set_ylabel("equivariant aggregation")
        if k + columns >= len(grids):                 # the lowest panel of its column
            ax.set_xlabel("final aggregation")
            ax.tick_params(labelbottom=True)
    fig.colorbar(image, ax=list(fig.axes), label="log10 median test MSE", shrink=0.8)
    return fig


def plot_by_population_size(curves: Sequence[dict], constant: Sequence[float], training_size: int = 20) -> Figure:
    """The test MSE of each setting's best run against the population size ``N`` (``curves``:
    :func:`~setfuncs.experiments.circle.by_population_size`, all at the same sizes), beside the
    constant predictor's MSE at each size and a line at the training size; both axes logarithmic, their
    ticks labelled as plain numbers."""
    import matplotlib.pyplot as plt

    from ...plots import plain_log_ticks

    sizes = curves[0]["sizes"]
    fig, ax = plt.subplots(figsize=(6.8, 4.2), layout="constrained")
    for curve in curves:
        ax.plot(curve["sizes"], curve["mse"], "o-", label=f"{curve['setting']}: {curve['spec']}")
    ax.plot(sizes, constant, "k:", label="constant predictor")
    ax.axvline(training_size, color="gray", ls="--", lw=1, label=f"training size N = {training_size}")
    ax.set(xscale="log", yscale="log", xticks=sizes, xticklabels=[str(n) for n in sizes],
           xlabel="population size N", ylabel="test MSE (radius + centre)",
           title="best run of each setting, evaluated away from its training size")
    plain_log_ticks(ax.yaxis)
    ax.xaxis.set_minor_formatter("")                  # the sizes are the x ticks; no labels between them
    ax.legend()
    return fig
