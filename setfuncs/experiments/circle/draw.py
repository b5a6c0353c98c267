"""Chapter 8's pictures of populations and their circles: minimal enclosing circles and the circles
trained models predict (the explorable, ``setfuncs.explorables.circle``, draws Welzl's support live).

matplotlib is imported inside each function, so importing the module needs only numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["draw_population", "plot_predictions"]


def draw_population(ax: Axes, points: np.ndarray, center: np.ndarray, radius: float,
                    color: str = "black", show_mean: bool = True) -> None:
    """Particles ``[N, 2]``, their minimal enclosing circle ``|x - center| = radius`` with the particles
    on it ringed, and (optionally) their sample mean as a cross; equal aspect, a margin of 15 %."""
    from matplotlib.patches import Circle as CirclePatch

    ax.scatter(*points.T, s=10, color="tab:gray", zorder=3)
    ax.add_patch(CirclePatch(center, radius, fill=False, color=color, lw=1.5))
    on_circle = np.abs(np.hypot(*(points - center).T) - radius) < 1e-6 * max(radius, 1.0)
    ax.scatter(*points[on_circle].T, s=60, facecolor="none", edgecolor=color, zorder=4)
    if show_mean:
        ax.scatter(*points.mean(0), marker="x", s=60, color="tab:blue", zorder=5)
    ax.set(aspect="equal", xticks=[], yticks=[])
    ax.set_xlim(center[0] - 1.15 * radius, center[0] + 1.15 * radius)
    ax.set_ylim(center[1] - 1.15 * radius, center[1] + 1.15 * radius)


def plot_predictions(x: np.ndarray, y: np.ndarray, predictions: Mapping[str, np.ndarray],
                     colors: Mapping[str, str], labels: Mapping[str, str], shown: int = 8) -> Figure:
    """The first ``shown`` test populations ``x`` ``[B, N, 2]`` with their true circles ``y`` ``[B, 3]``
    (centre, radius; black) and every model's predicted circle (dashed, in ``colors[name]``; a
    negative predicted radius is drawn as 0), on a grid of two rows; the legend names each model
    ``"<name>: <labels[name]>"``."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle as CirclePatch

    fig, axes = plt.subplots(2, shown // 2, figsize=(6.8, 3.9), layout="constrained")
    for i, ax in enumerate(axes.flat):
        draw_population(ax, x[i], y[i, :2], float(y[i, 2]), show_mean=False)
        for name, prediction in predictions.items():
            ax.add_patch(CirclePatch(prediction[i, :2], max(prediction[i, 2], 0.0), fill=False,
                                     color=colors[name], lw=1.5, ls="--"))
    handles = [plt.Line2D([], [], color="black", label="true circle")] + [
        plt.Line2D([], [], color=colors[name], ls="--", label=f"{name}: {labels[name]}") for name in predictions]
    fig.legend(handles=handles, loc="outside lower center", ncols=3)
    return fig
