"""Chapter 8's pictures of populations and their circles: minimal enclosing circles, the steps of
Welzl's algorithm, and the circles trained models predict.

matplotlib is imported inside each function, so importing the module needs only numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from .welzl import Step

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["DEPTH_COLORS", "draw_population", "draw_welzl_step", "plot_predictions"]

#: The colour of a Welzl step's circle by its recursion depth ``|R|`` (0 to 3).
DEPTH_COLORS = ("tab:gray", "tab:blue", "tab:purple", "tab:orange")


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


def draw_welzl_step(trace: Sequence[Step], population: np.ndarray, k: int, answer: tuple[np.ndarray, float]
                    ) -> Figure:
    """Step ``k`` of a :func:`~setfuncs.experiments.circle.welzl_trace` of ``population`` ``[N, 2]``: the
    current circle and its support (coloured by depth, :data:`DEPTH_COLORS`), the particle tested
    (green inside, red outside) and the final ``answer = (center, radius)`` dotted."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle as CirclePatch

    step = trace[k]
    answer_center, answer_radius = answer
    extent = np.hypot(*(population - answer_center).T).max() * 1.6
    fig, ax = plt.subplots(figsize=(4.6, 4.6), layout="constrained")
    ax.scatter(*population.T, s=14, color="tab:gray", zorder=3)
    if np.isfinite(step.circle.radius):
        ax.add_patch(CirclePatch(step.circle.center, step.circle.radius, fill=False,
                                 color=DEPTH_COLORS[step.depth], lw=1.8))
    support = population[list(step.support)]
    if len(support):
        ax.scatter(*support.T, s=110, facecolor="none", edgecolor=DEPTH_COLORS[step.depth], lw=2, zorder=4)
    ax.scatter(*population[step.point], s=60, zorder=5, color="tab:green" if step.inside else "tab:red")
    ax.add_patch(CirclePatch(answer_center, answer_radius, fill=False, color="black", lw=0.6, ls=":"))
    verdict = "inside" if step.inside else "outside: it joins the support"
    ax.set_title(f"step {k + 1}/{len(trace)}: |R| = {step.depth}, particle {step.point} {verdict}", fontsize=9)
    ax.set(aspect="equal", xticks=[], yticks=[],
           xlim=(answer_center[0] - extent, answer_center[0] + extent),
           ylim=(answer_center[1] - extent, answer_center[1] + extent))
    return fig


def plot_predictions(x: np.ndarray, y: np.ndarray, predictions: Mapping[str, np.ndarray],
                     colors: Mapping[str, str], labels: Mapping[str, str], shown: int = 8) -> Figure:
    """The first ``shown`` test populations ``x`` ``[B, N, 2]`` with their true circles ``y`` ``[B, 3]``
    (centre, radius; black) and every model's predicted circle (dashed, in ``colors[name]``; a
    negative predicted radius is drawn as 0), on a grid of two rows; the legend names each model
    ``"<name>: <labels[name]>"``."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle as CirclePatch

    fig, axes = plt.subplots(2, shown // 2, figsize=(9, 4.6), layout="constrained")
    for i, ax in enumerate(axes.flat):
        draw_population(ax, x[i], y[i, :2], float(y[i, 2]), show_mean=False)
        for name, prediction in predictions.items():
            ax.add_patch(CirclePatch(prediction[i, :2], max(prediction[i, 2], 0.0), fill=False,
                                     color=colors[name], lw=1.5, ls="--"))
    handles = [plt.Line2D([], [], color="black", label="true circle")] + [
        plt.Line2D([], [], color=colors[name], ls="--", label=f"{name}: {labels[name]}") for name in predictions]
    fig.legend(handles=handles, loc="outside lower center", ncols=3)
    return fig
