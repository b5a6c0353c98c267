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
    equivariant aggregation, columns: final), on one shared log10 colour scale over all finite
    cells. Each cell prints its value; an infinite one (at least half the seeds diverged or
    collapsed) prints ∞ and a NaN one stays blank."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(grids), figsize=(11.5, 3.4), layout="constrained", sharey=True)
    finite = np.concatenate([grid[np.isfinite(grid)] for grid in grids.values()])
    low, high = finite.min(), finite.max()
    for ax, (setting, grid) in zip(axes, grids.items()):
        image = ax.imshow(np.log10(np.where(np.isfinite(grid), grid, np.nan)), vmin=np.log10(low),
                          vmax=np.log10(high), cmap="viridis_r")
        for (i, j), value in np.ndenumerate(grid):
            if np.isinf(value):
                ax.text(j, i, "∞", ha="center", va="center", fontsize=9)
            elif np.isfinite(value):
                ax.text(j, i, f"{value:.3f}", ha="center", va="center", fontsize=9,
                        color="white" if np.log10(value) > (np.log10(low) + np.log10(high)) / 2 else "black")
        ax.set(title=setting, xticks=range(len(AGGREGATIONS)), yticks=range(len(AGGREGATIONS)),
               xlabel="final aggregation", xticklabels=AGGREGATIONS, yticklabels=AGGREGATIONS)
    axes[0].set_ylabel("equivariant aggregation")
    fig.colorbar(image, ax=axes, label="log10 median test MSE", shrink=0.8)
    return fig


def plot_by_population_size(curves: Sequence[dict], constant: Sequence[float], training_size: int = 20) -> Figure:
    """The test MSE of each setting's best run against the population size ``N`` (``curves``:
    :func:`~setfuncs.experiments.circle.by_population_size`, all at the same sizes), beside the
    constant predictor's MSE at each size and a line at the training size; both axes logarithmic."""
    import matplotlib.pyplot as plt

    sizes = curves[0]["sizes"]
    fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
    for curve in curves:
        ax.plot(curve["sizes"], curve["mse"], "o-", label=f"{curve['setting']}: {curve['spec']}")
    ax.plot(sizes, constant, "k:", label="constant predictor")
    ax.axvline(training_size, color="gray", ls="--", lw=1, label=f"training size N = {training_size}")
    ax.set(xscale="log", yscale="log", xticks=sizes, xticklabels=[str(n) for n in sizes],
           xlabel="population size N", ylabel="test MSE (radius + centre)",
           title="best run of each setting, evaluated away from its training size")
    ax.legend(fontsize=9)
    return fig
