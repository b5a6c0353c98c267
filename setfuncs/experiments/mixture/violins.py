r"""Figure 4b over both grids: the paper's violins (mean, max, LSE) beside log-mean-exp's.

The paper's grid gives the groups of mean, max and LSE; the grid with log-mean-exp in place of LSE
adds the log-mean-exp groups (its mean and max groups repeat the paper's). Each group's violin is
the distribution of :math:`\text{peak}_b = \min_{j \in \text{batch}_b} m_j` over bootstrap batches
of runs (:func:`~setfuncs.experiments.mixture.peak_performance`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from ..sweeps import AGGREGATIONS
from .figures import plain_symlog_axis
from .table import mixture_table, peak_performance

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["violin_groups", "violin_table", "plot_violins"]

#: How the violins' x-axis names the four aggregation families.
FAMILY_NAMES = ("mean", "max", "LΣE", "log-mean-exp")


def violin_groups(results: dict, by: str, batch_size: int = 5, bootstraps: int = 1000, seed: int = 0
                  ) -> list[dict]:
    """The paper grid's mean, max and LSE groups, then the lme grid's log-mean-exp groups
    (:func:`~setfuncs.experiments.mixture.peak_performance` grouped ``by`` the equivariant or final aggregation)."""
    paper = peak_performance(results, by=by, batch_size=batch_size, bootstraps=bootstraps, seed=seed, variant="paper")
    lme = peak_performance(results, by=by, batch_size=batch_size, bootstraps=bootstraps, seed=seed, variant="lme")
    return paper + [group for group in lme if group["family"] == "lme"]


def violin_table(results: dict, batch_size: int = 5, bootstraps: int = 1000, seed: int = 0) -> list[dict]:
    """The violins' numbers: :func:`~setfuncs.experiments.mixture.mixture_table` of the paper's grid,
    then the lme grid's rows of the log-mean-exp groups."""
    return [row for variant in ("paper", "lme")
            for row in mixture_table(results, batch_size=batch_size, bootstraps=bootstraps, seed=seed, variant=variant)
            if variant == "paper" or row["label"].endswith("lme")]


def plot_violins(groups: Mapping[str, list[dict]], batch_size: int = 5) -> Figure:
    """Figure 4b: one panel per grouping (``groups``: grouping -> :func:`violin_groups`), one above
    the other with one legend under them; for every group a violin of the peaks of batches of
    ``batch_size`` runs with its median, plain in orange and learnable in green, on a symmetric-log
    axis with plain tick labels (:func:`~setfuncs.experiments.mixture.figures.plain_symlog_axis`)
    and a line at 0 (below it the networks beat EM). A group whose every run collapsed or diverged
    is named in its slot instead of drawn."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    fig, axes = plt.subplots(len(groups), 1, figsize=(6.85, 6.4), layout="constrained", sharey=True)
    for ax, (by, grouped) in zip(axes, groups.items()):
        for group in grouped:
            position = 3 * AGGREGATIONS.index(group["family"]) + (1.1 if group["learnable"] else 0)
            color = "tab:green" if group["learnable"] else "tab:orange"
            if group["peaks"].size == 0:
                ax.text(position, 0, f"{group['runs']} of {group['runs']}\ncollapsed", ha="center", va="center",
                        fontsize="medium", color=color)
                continue
            parts = ax.violinplot(group["peaks"], positions=[position], widths=0.9, showmedians=True)
            for body in parts["bodies"]:
                body.set(facecolor=color, alpha=0.6)
            for line in ("cmins", "cmaxes", "cbars", "cmedians"):
                parts[line].set_color(color)
        ax.axhline(0, color="black", lw=0.8)
        ax.set(xticks=[3 * i + 0.55 for i in range(len(AGGREGATIONS))], xticklabels=FAMILY_NAMES,
               title=f"grouped by {by} aggregation")
        plain_symlog_axis(ax, f"peak metric (batches of {batch_size})")
    handles = [Patch(color="tab:orange", alpha=0.6, label="plain"),
               Patch(color="tab:green", alpha=0.6, label="learnable (recurrent)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize="medium")
    return fig
