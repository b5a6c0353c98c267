"""Chapter 9's figures: example populations, Figure 4a's estimates against the population size, the
first layer's pre-activations, and the metric of the sweep's runs against the population size.

matplotlib is imported inside each function, so importing the module needs only numpy and torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
from torch import Tensor

from .data import COMPONENT_STD, TRAIN_SIZES, Mixtures
from .first_layer import SATURATION

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_populations", "plot_estimator_curves", "draw_preactivations", "plot_by_population_size",
           "plain_symlog_axis"]


def _plain_number(value: float, _position: int | None = None) -> str:
    """A tick label without powers: ``−100``, ``−1``, ``0``, ``10``, ``1,000``; fractions keep
    two significant digits (``0.5``). Negative numbers use the minus sign, not a hyphen."""
    if value == 0:
        return "0"
    text = f"{abs(value):,.0f}" if abs(value) >= 1 else f"{abs(value):.2g}"
    return ("\N{MINUS SIGN}" if value < 0 else "") + text


def plain_symlog_axis(ax: Axes, label: str, linthresh: float = 1.0) -> None:
    """Make the y-axis of ``ax`` a symmetric-log axis that reads without exponents.

    Linear on ``[-linthresh, linthresh]`` and logarithmic beyond, as matplotlib's ``symlog``; the
    major ticks sit at 0, at ±``linthresh / 2`` and at ±``linthresh`` times the powers of 10 (and at
    2 and 5 times ``linthresh`` when the view reaches less than a decade beyond it), and are
    labelled as plain numbers (``−10, −1, −0.5, 0, 0.5, 1, 10``, not ``−10⁰``); the minor ticks mark
    2 to 9 times each power; the axis label ``label`` gets a second line that names the scale.
    """
    from matplotlib.ticker import FuncFormatter, Locator, SymmetricalLogLocator

    decades = SymmetricalLogLocator(base=10, linthresh=linthresh)

    class _PlainSymlogLocator(Locator):
        def __call__(self) -> list[float]:
            return self.tick_values(*self.axis.get_view_interval())

        def tick_values(self, vmin: float, vmax: float) -> list[float]:
            low, high = min(vmin, vmax), max(vmin, vmax)
            ticks = set(decades.tick_values(low, high)) | {0.0, linthresh / 2, -linthresh / 2}
            reach = max(abs(low), abs(high), linthresh)
            if reach < 10 * linthresh:             # less than a decade beyond: label 2 and 5 as well
                ticks |= {sign * factor * linthresh for sign in (-1, 1) for factor in (2, 5)}
            return sorted(t for t in ticks if low <= t <= high)

    ax.set_yscale("symlog", linthresh=linthresh)
    ax.yaxis.set_major_locator(_PlainSymlogLocator())
    ax.yaxis.set_minor_locator(SymmetricalLogLocator(base=10, linthresh=linthresh, subs=range(2, 10)))
    ax.yaxis.set_major_formatter(FuncFormatter(_plain_number))
    ax.set_ylabel(f"{label}\nlog scale beyond ±{_plain_number(linthresh)}, linear between")


def plot_populations(examples: Mixtures) -> Figure:
    """One panel per population of ``examples``, in rows of up to four across the text column's
    width: its particles, red where nearer the mean of the smaller component than the other's (for
    the picture only), and both means as black crosses."""
    import matplotlib.pyplot as plt

    count = len(examples.x)
    columns = min(count, 4)
    rows = -(-count // columns)
    fig = plt.figure(figsize=(6.85, 1.75 * rows + 0.75), layout="constrained")
    axes = [fig.add_subplot(rows, columns, k + 1) for k in range(count)]
    for ax, x, weights, means in zip(axes, examples.x, examples.weights, examples.means):
        closer = ((x[:, None].double() - means[None]) ** 2).sum(-1).argmin(1)
        ax.scatter(*x.T, s=9, c=np.where(closer.numpy() == weights.argmin().item(), "tab:red", "tab:blue"))
        ax.scatter(*means.T, marker="+", s=120, color="black")
        ax.set(aspect="equal", xlim=(-3, 3), ylim=(-3, 3), xticks=[], yticks=[], title=f"w = {weights.min():.2f}")
    fig.suptitle(f"populations of {examples.x.shape[1]} (σ = {COMPONENT_STD})\n"
                 "red: particles nearer the smaller component's mean (+)")
    return fig


def plot_estimator_curves(population: Tensor, truth: float, curves: Mapping[str, dict], specs: Mapping[str, str],
                          budget_name: str) -> Figure:
    """Figure 4a: the test ``population`` ``[M, 2]`` (whose smaller weight is ``truth``) on the left,
    and on the right, stacked one above the other on a shared size axis, one panel per setting of
    ``curves`` (setting -> :func:`~setfuncs.experiments.mixture.estimator_curve`): the median
    estimate of the model (``specs[setting]``) and of EM against the population size, with their
    50 % and 90 % intervals as bands and the truth dashed."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    fig = plt.figure(figsize=(6.85, 0.6 + 2.4 * len(curves)), layout="constrained")
    grid = fig.add_gridspec(len(curves), 2, width_ratios=[0.55, 1])
    scatter = fig.add_subplot(grid[:, 0])
    scatter.scatter(*population.T, s=9, color="tab:gray")
    scatter.set(aspect="equal", xticks=[], yticks=[], title=f"test population\nw = {truth:.2f}")
    axes: list[Axes] = []
    for row, (setting, curve) in enumerate(curves.items()):
        ax = fig.add_subplot(grid[row, 1], sharex=axes[0] if axes else None)
        axes.append(ax)
        for name, color in (("em", "tab:gray"), ("model", "tab:blue")):
            summary = curve[name]
            ax.fill_between(curve["sizes"], summary["q05"], summary["q95"], color=color, alpha=0.15)
            ax.fill_between(curve["sizes"], summary["q25"], summary["q75"], color=color, alpha=0.3)
            ax.plot(curve["sizes"], summary["median"], color=color, label="EM" if name == "em" else specs[setting])
        ax.axhline(truth, color="black", ls="--", lw=1, label="truth")
        ax.set(xscale="log", ylabel="estimate of w", ylim=(0, 0.6), yticks=[0, 0.2, 0.4, 0.6],
               title=f"{specs[setting]} ({setting}, {budget_name} budget)")
        ax.legend(fontsize="medium", loc="upper right")
        if row < len(curves) - 1:
            ax.tick_params(labelbottom=False)
    sizes = sorted({int(n) for curve in curves.values() for n in curve["sizes"]})
    axes[-1].set_xticks(sizes, [f"{n:,}" for n in sizes])
    axes[-1].xaxis.set_minor_locator(NullLocator())
    axes[-1].set_xlabel("population size n")
    return fig


def draw_preactivations(ax: Axes, before: np.ndarray, after: np.ndarray, title: str, limit: float = 8.0) -> None:
    """Histograms (densities) of a layer's pre-activations ``z`` at initialisation (grey) and after
    training (blue outline) on ``[-limit, limit]``, with the saturated ranges ``|z| > 2`` shaded."""
    bins = np.linspace(-limit, limit, 81)
    ax.hist(before, bins, density=True, color="tab:gray", alpha=0.6, label="at initialisation")
    ax.hist(after, bins, density=True, histtype="step", color="tab:blue", lw=1.5, label="after training")
    ax.axvspan(-limit, -SATURATION, color="tab:red", alpha=0.07)
    ax.axvspan(SATURATION, limit, color="tab:red", alpha=0.07, label=f"|z| > {SATURATION:g}: saturated")
    ax.set(xlabel="first-layer tanh pre-activation z", title=title, yticks=[])
    ax.legend(fontsize="medium")


def plot_by_population_size(rows: Sequence[dict], train_sizes: tuple[int, int] = TRAIN_SIZES) -> Figure:
    """The metric against the population size for every setting (``rows``:
    :func:`~setfuncs.experiments.mixture.by_population_size`): its median run (solid) and its best
    run (dashed), the training sizes shaded; below zero the network beats EM."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    fig, ax = plt.subplots(figsize=(6.8, 5.2), layout="constrained")
    for k, row in enumerate(rows):
        color = f"C{k}"
        ax.plot(row["sizes"], row["median"], "o-", color=color, label=f"{row['setting']} (median run)")
        ax.plot(row["sizes"], row["best"], "s--", color=color, alpha=0.7, label=f"best: {row['best_spec']}")
    ax.axhline(0, color="black", lw=0.8)
    ax.axvspan(*train_sizes, color="gray", alpha=0.12, label="training sizes")
    sizes = sorted({n for row in rows for n in row["sizes"]})
    ax.set(xscale="log", xlabel="population size n", title="below zero the network beats EM")
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    plain_symlog_axis(ax, "metric (log EM density − log model density)")
    ax.set_ylim(-3, None)
    fig.legend(loc="outside lower center", fontsize="medium", ncols=2)
    return fig
